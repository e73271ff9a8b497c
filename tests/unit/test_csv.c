/* CSV and libsvm conversion: inference, quoting, errors with line numbers,
 * empty fields, packing, chunking across threads, and number parsing. */
#include <csv.h>

#include "test.h"

struct collected {
	struct tfi_buf bytes;
	size_t records;
};

static int
collect(void *ctx, const uint8_t *b, size_t n, const size_t *ends, size_t count)
{
	struct collected *c = ctx;
	(void)ends;
	c->records += count;
	return tfi_buf_append(&c->bytes, b, n);
}

struct result {
	int rc;
	char msg[512];
	struct collected out;
	char *schema;
	uint64_t skipped;
};

static void
convert(const char *text, size_t n, const struct tf_csv_options *o,
        struct result *r)
{
	memset(r, 0, sizeof *r);
	struct tf_csv *c = tf_csv_new();
	struct tf_input *in = tf_input_new();
	struct tf_csv_sink sink = {&r->out, collect, NULL};
	r->rc = tf_csv_set_options(c, o);
	if (r->rc == TF_OK) {
		tf_input_open_mem(in, text, n, "t.csv");
		r->rc = tf_csv_convert(c, in, &sink);
	}
	snprintf(r->msg, sizeof r->msg, "%s", tf_errmsg(c));
	if (r->rc == TF_OK) {
		tf_csv_schema_json(c, &r->schema);
	}
	r->skipped = tf_csv_skipped(c);
	tf_input_free(in);
	tf_csv_free(c);
}

static void
result_free(struct result *r)
{
	tfi_buf_free(&r->out.bytes);
	free(r->schema);
}

/* Decode record i of a result into ex. */
static int
record(struct result *r, size_t i, struct tf_example *ex)
{
	struct tf_reader *rd = tf_reader_new();
	tf_reader_open_mem(rd, r->out.bytes.data, r->out.bytes.len, "out", 0);
	const uint8_t *d;
	size_t n;
	int rc = TF_EOF;
	for (size_t k = 0; k <= i; k++) {
		rc = tf_reader_next(rd, &d, &n);
		if (rc != TF_OK) {
			break;
		}
	}
	if (rc == TF_OK) {
		rc = tf_example_parse(ex, d, n);
	}
	tf_reader_free(rd);
	return rc;
}

#define CONVERT(text, o, r) convert((text), strlen(text), (o), (r))

TEST(types_inferred_and_label_last)
{
	struct tf_csv_options o;
	tf_csv_options_init(&o);
	struct result r;
	CONVERT("a,b,name,y\n1,2.5,x,0\n2,3,y z,1\n", &o, &r);
	CHECK_STATUS(r.rc, TF_OK, NULL);
	CHECK_EQ_INT(r.out.records, 2);
	struct tf_example *ex = tf_example_new();
	struct tf_feature f;
	REQUIRE(record(&r, 1, ex) == TF_OK);
	CHECK_EQ_INT(tf_example_count(ex), 4);
	CHECK(tf_example_find(ex, "a", &f) == TF_OK &&
	      f.kind == TF_KIND_INT64 && f.ints[0] == 2);
	CHECK(tf_example_find(ex, "b", &f) == TF_OK &&
	      f.kind == TF_KIND_FLOAT && f.floats[0] == 3.0f);
	CHECK(tf_example_find(ex, "name", &f) == TF_OK &&
	      f.kind == TF_KIND_BYTES && f.bytes[0].len == 3);
	CHECK(tf_example_find(ex, "y", &f) == TF_OK &&
	      f.kind == TF_KIND_INT64 && f.ints[0] == 1);
	CHECK_CONTAINS(r.schema,
	               "\"label\":{\"name\":\"y\",\"type\":\"int64\"");
	CHECK_CONTAINS(r.schema, "\"classes\":[0,1]");
	CHECK_CONTAINS(r.schema, "\"name\":[\"x\",\"y z\"]");
	CHECK_CONTAINS(r.schema, "\"rows\":2");
	result_free(&r);
	/* The same with numeric-as-float, a label by index, a dropped
	 * column and a given type. */
	o.numeric_as_float = 1;
	o.label = "1";
	o.drop = "name";
	o.types = "y:float";
	CONVERT("a,b,name,y\n1,2.5,x,0\n2,3,y z,1\n", &o, &r);
	CHECK_STATUS(r.rc, TF_OK, NULL);
	REQUIRE(record(&r, 0, ex) == TF_OK);
	CHECK_EQ_INT(tf_example_count(ex), 3);
	CHECK(tf_example_find(ex, "a", &f) == TF_OK && f.kind == TF_KIND_INT64);
	CHECK(tf_example_find(ex, "y", &f) == TF_OK && f.kind == TF_KIND_FLOAT);
	CHECK(tf_example_find(ex, "name", &f) == TF_ENOENT);
	result_free(&r);
	tf_example_free(ex);
}

TEST(quoting_crlf_and_line_numbers)
{
	struct tf_csv_options o;
	tf_csv_options_init(&o);
	struct result r;
	const char *t = "id,text,y\r\n1,\"a, \"\"quoted\"\"\nline\",0\r\n\r\n"
	                "2,plain,1\r\n3,oops\r\n";
	CONVERT(t, &o, &r);
	CHECK_STATUS(r.rc, TF_EFORMAT, NULL);
	/* Line 1 header, 2-3 the quoted row, 4 blank, 5 row 2, 6 bad. */
	CHECK_CONTAINS(r.msg, "t.csv:6: expected 3 fields, found 2");
	CHECK_EQ_INT(r.out.records, 0); /* nothing handed out after an error */
	result_free(&r);
	o.skip_bad = 1;
	CONVERT(t, &o, &r);
	CHECK_STATUS(r.rc, TF_OK, NULL);
	CHECK_EQ_INT(r.out.records, 2);
	CHECK_EQ_INT(r.skipped, 1);
	struct tf_example *ex = tf_example_new();
	struct tf_feature f;
	REQUIRE(record(&r, 0, ex) == TF_OK);
	REQUIRE(tf_example_find(ex, "text", &f) == TF_OK);
	CHECK(f.bytes[0].len == 16 &&
	      memcmp(f.bytes[0].data, "a, \"quoted\"\nline", 16) == 0);
	result_free(&r);
	tf_example_free(ex);
}

TEST(bad_values_and_empty_policy)
{
	struct tf_csv_options o;
	tf_csv_options_init(&o);
	struct result r;
	o.infer_rows = 2;
	CONVERT("x,y\n1.5,0\n2.5,1\nabc,0\n", &o, &r);
	CHECK_STATUS(r.rc, TF_EFORMAT, NULL);
	CHECK_CONTAINS(r.msg, "t.csv:4: column 'x': 'abc' is not a number");
	result_free(&r);
	/* Inferred int64 from the first rows, then a float. */
	o.infer_rows = 1;
	CONVERT("x,y\n1,0\n2.5,1\n", &o, &r);
	CHECK_STATUS(r.rc, TF_EFORMAT, NULL);
	CHECK_CONTAINS(r.msg, "t.csv:3: column 'x': '2.5' is not an integer");
	result_free(&r);
	o.infer_rows = 1000;
	/* Empty fields: omitted, zero, or an error; an empty label always
	 * is one. */
	struct tf_example *ex = tf_example_new();
	struct tf_feature f;
	CONVERT("x,z,y\n,1,0\n", &o, &r);
	CHECK_STATUS(r.rc, TF_OK, NULL);
	REQUIRE(record(&r, 0, ex) == TF_OK);
	CHECK(tf_example_find(ex, "x", &f) == TF_ENOENT);
	CHECK_CONTAINS(r.schema, "\"missing\":1");
	result_free(&r);
	o.empty = TF_EMPTY_ZERO;
	CONVERT("x,z,y\n,1,0\n", &o, &r);
	REQUIRE(record(&r, 0, ex) == TF_OK);
	CHECK(tf_example_find(ex, "x", &f) == TF_OK && f.floats[0] == 0.0f);
	result_free(&r);
	o.empty = TF_EMPTY_ERROR;
	CONVERT("x,z,y\n,1,0\n", &o, &r);
	CHECK_CONTAINS(r.msg, "t.csv:2: column 'x' is empty");
	result_free(&r);
	o.empty = TF_EMPTY_OMIT;
	CONVERT("x,y\n1,\n", &o, &r);
	CHECK_CONTAINS(r.msg, "t.csv:2: the label 'y' is empty");
	result_free(&r);
	/* Option errors name the column. */
	o.label = "nope";
	CONVERT("x,y\n1,0\n", &o, &r);
	CHECK_STATUS(r.rc, TF_EINVAL, NULL);
	CHECK_CONTAINS(r.msg, "--label: no column 'nope'");
	result_free(&r);
	o.label = NULL;
	o.types = "x:complex";
	CONVERT("x,y\n1,0\n", &o, &r);
	CHECK_CONTAINS(r.msg, "unknown type 'complex'");
	result_free(&r);
	tf_example_free(ex);
}

TEST(pack_features_and_no_header)
{
	struct tf_csv_options o;
	tf_csv_options_init(&o);
	o.pack = "features";
	o.no_header = 1;
	o.names = "a,b,s,y";
	struct result r;
	CONVERT("1,2.5,str,1\n3,,t,0\n", &o, &r);
	CHECK_STATUS(r.rc, TF_OK, NULL);
	struct tf_example *ex = tf_example_new();
	struct tf_feature f;
	REQUIRE(record(&r, 1, ex) == TF_OK);
	CHECK_EQ_INT(tf_example_count(ex), 3); /* features, s, y */
	REQUIRE(tf_example_find(ex, "features", &f) == TF_OK);
	CHECK(f.count == 2 && f.floats[0] == 3.0f && isnan(f.floats[1]));
	CHECK_CONTAINS(r.schema, "\"packed\":{\"name\":\"features\",\"size\":2,"
	                         "\"columns\":[\"a\",\"b\"]}");
	result_free(&r);
	/* No --names: col1..colN. */
	o.names = NULL;
	o.pack = NULL;
	CONVERT("1,2\n3,4\n", &o, &r);
	CHECK_EQ_INT(r.out.records, 2);
	REQUIRE(record(&r, 0, ex) == TF_OK);
	CHECK(tf_example_find(ex, "col2", &f) == TF_OK && f.ints[0] == 2);
	result_free(&r);
	tf_example_free(ex);
}

TEST(libsvm)
{
	struct tf_csv_options o;
	tf_csv_options_init(&o);
	o.format = TF_FORMAT_LIBSVM;
	struct result r;
	CONVERT("+1 1:0.5 3:-1 # comment\n-1 2:1e-3\n\n0 qid:4 7:2\n", &o, &r);
	CHECK_STATUS(r.rc, TF_OK, NULL);
	CHECK_EQ_INT(r.out.records, 3);
	struct tf_example *ex = tf_example_new();
	struct tf_feature f;
	REQUIRE(record(&r, 0, ex) == TF_OK);
	CHECK(tf_example_find(ex, "label", &f) == TF_OK && f.ints[0] == 1);
	CHECK(tf_example_find(ex, "ids", &f) == TF_OK && f.count == 2 &&
	      f.ints[1] == 3);
	CHECK(tf_example_find(ex, "values", &f) == TF_OK &&
	      f.floats[1] == -1.0f);
	CHECK_CONTAINS(r.schema, "\"max_index\":7");
	result_free(&r);
	CONVERT("1 1:0.5\n1 2-3\n", &o, &r);
	CHECK_STATUS(r.rc, TF_EFORMAT, NULL);
	CHECK_CONTAINS(r.msg, "t.csv:2: expected INDEX:VALUE, found '2-3'");
	result_free(&r);
	tf_example_free(ex);
}

/* Many chunks, quoted newlines across chunk boundaries: the records are
 * the same with 1 and 4 threads, and the fast row encoder agrees with
 * tf_example_encode. */
TEST(chunks_and_threads)
{
	struct tfi_buf t = {0};
	const char *h = "k,note,v,y\n";
	tfi_buf_append(&t, h, strlen(h));
	for (int i = 0; i < 150000; i++) {
		char row[128];
		int n = snprintf(row, sizeof row,
		                 i % 7 ? "%d,plain %d,%d.25,%d\n"
		                       : "%d,\"q,\"\"%d\"\"\n\",%d.25,%d\n",
		                 i, i, i % 100, i % 3);
		tfi_buf_append(&t, row, (size_t)n);
	}
	struct tf_csv_options o;
	tf_csv_options_init(&o);
	struct result r1, r4;
	o.threads = 1;
	convert((const char *)t.data, t.len, &o, &r1);
	o.threads = 4;
	convert((const char *)t.data, t.len, &o, &r4);
	CHECK_STATUS(r1.rc, TF_OK, NULL);
	CHECK_STATUS(r4.rc, TF_OK, NULL);
	CHECK_EQ_INT(r1.out.records, 150000);
	CHECK_EQ_INT(r4.out.bytes.len, r1.out.bytes.len);
	CHECK(r1.out.bytes.len == r4.out.bytes.len &&
	      memcmp(r1.out.bytes.data, r4.out.bytes.data, r1.out.bytes.len) ==
	          0);
	/* Every record re-encodes to itself through tf_example. */
	struct tf_reader *rd = tf_reader_new();
	struct tf_example *ex = tf_example_new();
	tf_reader_open_mem(rd, r4.out.bytes.data, r4.out.bytes.len, "o", 0);
	const uint8_t *d;
	size_t n;
	size_t k = 0;
	while (tf_reader_next(rd, &d, &n) == TF_OK) {
		const uint8_t *e;
		size_t en;
		if (tf_example_parse(ex, d, n) != TF_OK ||
		    tf_example_serialize(ex, &e, &en) != TF_OK || en != n ||
		    memcmp(e, d, n) != 0) {
			FAILF("record %zu does not re-encode to itself", k);
			break;
		}
		k++;
	}
	CHECK_EQ_INT(k, 150000);
	/* A bad row deep inside: its physical line (rows with a quoted
	 * newline take two lines). */
	size_t cut = t.len;
	tfi_buf_append(&t, "x,y,z,w\n", 8);
	result_free(&r1);
	convert((const char *)t.data, t.len, &o, &r1);
	CHECK_STATUS(r1.rc, TF_EFORMAT, NULL);
	char want[64];
	snprintf(want, sizeof want, "t.csv:%d: column 'k'",
	         1 + 150000 + 150000 / 7 + 1 + 1);
	CHECK_CONTAINS(r1.msg, want);
	(void)cut;
	result_free(&r1);
	result_free(&r4);
	tf_reader_free(rd);
	tf_example_free(ex);
	tfi_buf_free(&t);
}

/* Callback trace for comparing the plain splitter with libcsv. */
struct trace {
	struct tfi_buf b;
};

static void
tr_field(void *s, size_t n, void *data)
{
	struct trace *t = data;
	char h[32];
	int k = snprintf(h, sizeof h, "F%s%zu:", s ? "" : "null", n);
	tfi_buf_append(&t->b, h, (size_t)k);
	if (s != NULL) {
		tfi_buf_append(&t->b, s, n);
	}
}

static void
tr_row(int c, void *data)
{
	struct trace *t = data;
	char h[16];
	int k = snprintf(h, sizeof h, "R%d;", c);
	tfi_buf_append(&t->b, h, (size_t)k);
}

/* The quote-free fast path calls back exactly as libcsv does. */
TEST(plain_splitter_agrees_with_libcsv)
{
	static const char alpha[] = "a1 \t,;\r\n.";
	uint64_t s = 12345;
	char text[64];
	for (int it = 0; it < 100000; it++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		size_t n = s % 24;
		for (size_t i = 0; i < n; i++) {
			text[i] =
			    alpha[(s >> (i * 2 + 5)) % (sizeof alpha - 1) ^
			          (i & 1)];
		}
		char delim = (it & 3) == 3 ? '\t' : (it & 3) == 2 ? ';' : ',';
		struct trace a = {{0}}, b = {{0}};
		struct csv_parser p;
		csv_init(&p, CSV_REPALL_NL | CSV_EMPTY_IS_NULL);
		csv_set_delim(&p, (unsigned char)delim);
		csv_parse(&p, text, n, tr_field, tr_row, &a);
		csv_fini(&p, tr_field, tr_row, &a);
		csv_free(&p);
		tfi_csv_split_plain(text, n, delim, tr_field, tr_row, &b);
		if (a.b.len != b.b.len ||
		    (a.b.len > 0 && memcmp(a.b.data, b.b.data, a.b.len))) {
			FAILF(
			    "input %d differs (delimiter %d): '%.*s'\n# libcsv "
			    "%.*s\n# plain  %.*s",
			    it, delim, (int)n, text, (int)a.b.len,
			    (char *)a.b.data, (int)b.b.len, (char *)b.b.data);
			tfi_buf_free(&a.b);
			tfi_buf_free(&b.b);
			break;
		}
		tfi_buf_free(&a.b);
		tfi_buf_free(&b.b);
	}
}

/* tf_parse_float rounds exactly like strtof. */
TEST(float_parsing_exact)
{
	uint64_t s = 0x9e3779b97f4a7c15ull;
	char buf[64];
	int bad = 0;
	for (int i = 0; i < 300000 && bad < 5; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		int digits = 1 + (int)(s % 17);
		int point = (int)((s >> 8) % 12);
		int e = (int)((s >> 16) % 61) - 30;
		switch (i % 4) {
		case 0:
			snprintf(buf, sizeof buf, "%.*f", point,
			         (double)(s >> 20) / 1e6 * ((s & 1) ? -1 : 1));
			break;
		case 1:
			snprintf(buf, sizeof buf, "%.*e", digits,
			         (double)(s >> 11) * 1e-10);
			break;
		case 2:
			snprintf(buf, sizeof buf, "%llue%d",
			         (unsigned long long)(s >> (s % 40)), e);
			break;
		default: {
			/* Floats printed with 9 digits: near midpoints. */
			uint32_t u = (uint32_t)s & 0x7f7fffffu;
			float f;
			memcpy(&f, &u, 4);
			snprintf(buf, sizeof buf, "%.*g", 6 + (int)(s % 12),
			         (double)f);
		}
		}
		float a, b = strtof(buf, NULL);
		if (tf_parse_float(buf, strlen(buf), &a) != 0 ||
		    memcmp(&a, &b, 4) != 0) {
			FAILF("'%s': %.9g, strtof gives %.9g", buf, a, b);
			bad++;
		}
	}
	float f;
	const char *no[] = {"",   "-",  "1e",  "1.2.3", "0x10",
	                    " 1", "1 ", "abc", "1,5"};
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
		if (tf_parse_float(no[i], strlen(no[i]), &f) == 0) {
			FAILF("'%s' accepted as a number", no[i]);
		}
	}
	CHECK(tf_parse_float("nan", 3, &f) == 0 && isnan(f));
	CHECK(tf_parse_float("-inf", 4, &f) == 0 && isinf(f) && f < 0);
	int64_t v;
	CHECK(tf_parse_int64("-9223372036854775808", 20, &v) == 0 &&
	      v == INT64_MIN);
	CHECK(tf_parse_int64("9223372036854775808", 19, &v) != 0);
	CHECK(tf_parse_int64("+12", 3, &v) == 0 && v == 12);
	CHECK(tf_parse_int64("1.0", 3, &v) != 0);
}

int
main(void)
{
	RUN(types_inferred_and_label_last);
	RUN(quoting_crlf_and_line_numbers);
	RUN(bad_values_and_empty_policy);
	RUN(pack_features_and_no_header);
	RUN(libsvm);
	RUN(chunks_and_threads);
	RUN(plain_splitter_agrees_with_libcsv);
	RUN(float_parsing_exact);
	DONE();
}
