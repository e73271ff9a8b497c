/*
 * test_dataset.c - the packed layout's fast path reads exactly what the
 * general Example parser reads: rows, labels, errors, for the usual
 * records and for unusual encodings it must hand over; categorical ids
 * and crosses as int64.
 */
#include <unistd.h>

#include "test.h"

static const char *schema =
    "{\"format\":\"tfkit-schema\",\"version\":1,\"layout\":\"packed\","
    "\"packed\":{\"name\":\"features\",\"size\":3},"
    "\"label\":{\"name\":\"label\",\"type\":\"int64\",\"classes\":[0,1]},"
    "\"features\":[{\"name\":\"a\",\"type\":\"float\",\"mean\":1,\"std\":2,"
    "\"packed_index\":0},{\"name\":\"b\",\"type\":\"float\",\"mean\":0,"
    "\"std\":1,\"packed_index\":1},{\"name\":\"c\",\"type\":\"float\","
    "\"mean\":-1,\"std\":0.5,\"packed_index\":2}]}";

/* Append an encoded Example to the file. */
static void
put(struct tf_writer *w, struct tf_example *ex)
{
	const uint8_t *p;
	size_t n;
	REQUIRE(tf_example_serialize(ex, &p, &n) == TF_OK);
	REQUIRE(tf_writer_write(w, p, n) == TF_OK);
}

/* A writer on a new temporary file named into path (a mkstemp
 * template). */
static struct tf_writer *
temp_writer(char *path)
{
	int fd = mkstemp(path);
	if (fd < 0) {
		return NULL;
	}
	close(fd);
	struct tf_writer *w = tf_writer_new();
	if (w != NULL &&
	    tf_writer_open(w, path, TF_COMPRESS_NONE, 0) != TF_OK) {
		tf_writer_free(w);
		w = NULL;
	}
	return w;
}

/* Read path with the fast path on or off: rows and labels, and the
 * status at the end. */
static uint64_t fast_hits;  /* records the last read_with() read fast */
static uint64_t whole_hits; /* ... of them as a whole (one comparison) */

static int read_rows(const char *sch, const char *path, int fast, size_t width,
                     float *x, float *y, size_t *rows, char *msg,
                     size_t msglen);

static int
read_with(const char *sch, const char *path, int fast, float *x, float *y,
          size_t *rows, char *msg, size_t msglen)
{
	return read_rows(sch, path, fast, 3, x, y, rows, msg, msglen);
}

/* The same for rows of width floats. */
static int
read_rows(const char *sch, const char *path, int fast, size_t width, float *x,
          float *y, size_t *rows, char *msg, size_t msglen)
{
	struct tf_dataset *ds = tf_dataset_new();
	int rc = tf_columns_parse_schema(tf_dataset_columns(ds), sch, "schema");
	int schema_rc = rc;
	if (!fast) {
		tfi_dataset_no_fast(ds);
	}
	tf_dataset_set_label_optional(ds, 1);
	const char *files[] = {path};
	rc = rc ? rc : tf_dataset_open(ds, files, 1, 1, 1, 0);
	size_t got;
	*rows = 0;
	while (rc == TF_OK &&
	       (rc = tf_dataset_next(ds, x + *rows * width, NULL, y + *rows, 4,
	                             &got)) == TF_OK) {
		*rows += got;
	}
	snprintf(msg, msglen, "%s",
	         schema_rc ? tf_errmsg(tf_dataset_columns(ds)) : tf_errmsg(ds));
	fast_hits = tfi_dataset_fast_hits(ds);
	whole_hits = tfi_dataset_whole_hits(ds);
	tf_dataset_free(ds);
	return rc;
}

static int
read_all(const char *path, int fast, float *x, float *y, size_t *rows,
         char *msg, size_t msglen)
{
	return read_with(schema, path, fast, x, y, rows, msg, msglen);
}

TEST(fast_path_reads_what_the_parser_reads)
{
	char path[] = "/tmp/tfkit-test-dataset-XXXXXX";
	struct tf_writer *w = temp_writer(path);
	struct tf_example *ex = tf_example_new();
	REQUIRE(w != NULL && ex != NULL);
	srand(3);
	for (int i = 0; i < 200; i++) {
		tf_example_clear(ex);
		float f[4] = {(float)rand() / RAND_MAX, (float)(i % 7) - 3,
		              1e6f * (float)i, 0.5f};
		int64_t l = i % 2, big = (int64_t)1 << 40;
		float fl = (float)(i % 2);
		int shape = i % 10;
		/* The usual record, and variants: float label, extra
		 * feature, no label, a label of two values, four floats,
		 * int64 features, a large label, no features. */
		tf_example_add_floats(ex, "features", f, shape == 4 ? 4 : 3);
		if (shape == 1) {
			tf_example_add_floats(ex, "label", &fl, 1);
		} else if (shape == 2) {
			tf_example_add_int64s(ex, "label", &l, 1);
			tf_example_add_floats(ex, "zz", f, 1);
		} else if (shape == 3) {
			/* no label */
		} else if (shape == 5) {
			int64_t two[2] = {1, 0};
			tf_example_add_int64s(ex, "label", two, 2);
		} else if (shape == 6) {
			tf_example_add_int64s(ex, "label", &big, 1);
		} else {
			tf_example_add_int64s(ex, "label", &l, 1);
		}
		if (shape == 5 || shape == 4) {
			continue; /* errors: tested below, one at a time */
		}
		put(w, ex);
	}
	/* Hand-made encodings: unpacked floats (field 1 wire 5 each), an
	 * unpacked int64 label, and the entries in the other order. */
	static const uint8_t unpacked[] = {
	    0x0a, 0x2e, 0x0a, 0x1d, 0x0a, 0x08, 'f',  'e',  'a',  't',
	    'u',  'r',  'e',  's',  0x12, 0x11, 0x12, 0x0f, 0x0d, 0,
	    0,    0x80, 0x3f, 0x0d, 0,    0,    0,    0x40, 0x0d, 0,
	    0,    0x40, 0x40, 0x0a, 0x0d, 0x0a, 0x05, 'l',  'a',  'b',
	    'e',  'l',  0x12, 0x04, 0x1a, 0x02, 0x08, 0x01};
	static const uint8_t reversed[] = {
	    0x0a, 0x2e, 0x0a, 0x0e, 0x0a, 0x05, 'l',  'a',  'b',  'e',
	    'l',  0x12, 0x05, 0x1a, 0x03, 0x0a, 0x01, 0x01, 0x0a, 0x1c,
	    0x0a, 0x08, 'f',  'e',  'a',  't',  'u',  'r',  'e',  's',
	    0x12, 0x10, 0x12, 0x0e, 0x0a, 0x0c, 0,    0,    0x80, 0x3f,
	    0,    0,    0,    0x40, 0,    0,    0x40, 0x40};
	REQUIRE(tf_writer_write(w, unpacked, sizeof unpacked) == TF_OK);
	REQUIRE(tf_writer_write(w, reversed, sizeof reversed) == TF_OK);
	REQUIRE(tf_writer_close(w) == TF_OK);
	float xa[1024], ya[400], xb[1024], yb[400];
	size_t ra, rb;
	char ma[512], mb[512];
	int a = read_all(path, 1, xa, ya, &ra, ma, sizeof ma);
	CHECK(fast_hits >= 100);
	int b = read_all(path, 0, xb, yb, &rb, mb, sizeof mb);
	CHECK_EQ_INT(a, TF_EOF);
	CHECK_EQ_INT(b, TF_EOF);
	CHECK_EQ_INT(ra, 162);
	CHECK_EQ_INT(ra, rb);
	CHECK_MEM(xa, xb, ra * 3 * sizeof(float));
	for (size_t i = 0; i < ra; i++) {
		CHECK(ya[i] == yb[i] || (isnan(ya[i]) && isnan(yb[i])));
	}
	/* The hand-made ones: standardised (1, 2, 3), label 1. */
	float want[3] = {0.0f, 2.0f, 8.0f};
	CHECK_MEM(xa + (ra - 2) * 3, want, sizeof want);
	CHECK_MEM(xa + (ra - 1) * 3, want, sizeof want);
	CHECK(ya[ra - 1] == 1.0f && ya[ra - 2] == 1.0f);

	/* Errors name the same record either way. */
	for (int bad = 0; bad < 3; bad++) {
		REQUIRE(tf_writer_open(w, path, TF_COMPRESS_NONE, 0) == TF_OK);
		tf_example_clear(ex);
		float f[4] = {1, 2, 3, 4};
		int64_t two[2] = {1, 0}, one = 1;
		tf_example_add_floats(ex, "features", f, bad == 0 ? 4 : 3);
		if (bad == 1) {
			tf_example_add_int64s(ex, "label", two, 2);
		} else {
			tf_example_add_int64s(ex, "label", &one, 1);
		}
		put(w, ex);
		if (bad == 2) {
			static const uint8_t cut[] = {0x0a, 0x2d, 0x0a, 0x1d};
			REQUIRE(tf_writer_write(w, cut, sizeof cut) == TF_OK);
		}
		REQUIRE(tf_writer_close(w) == TF_OK);
		a = read_all(path, 1, xa, ya, &ra, ma, sizeof ma);
		b = read_all(path, 0, xb, yb, &rb, mb, sizeof mb);
		CHECK_EQ_INT(a, TF_EFORMAT);
		CHECK_EQ_INT(a, b);
		CHECK(strcmp(ma, mb) == 0);
	}
	unlink(path);
	tf_example_free(ex);
	tf_writer_free(w);
}

/* One feature per column (tf-csv2record's default layout): a, b, c,
 * standardised, and a label y. */
static const char *col_schema =
    "{\"format\":\"tfkit-schema\",\"version\":1,\"layout\":\"columns\","
    "\"label\":{\"name\":\"y\",\"type\":\"int64\",\"classes\":[0,1]},"
    "\"features\":[{\"name\":\"a\",\"type\":\"float\",\"mean\":1,"
    "\"std\":2},{\"name\":\"bb\",\"type\":\"int64\",\"mean\":0,"
    "\"std\":1},{\"name\":\"c\",\"type\":\"float\",\"mean\":-1,"
    "\"std\":0.5}]}";

/* The same fast path on one feature per column: rows, labels and errors
 * as the general parser reads them, whatever the features' order, their
 * encodings (floats or int64s, packed or not), extra, missing or
 * repeated features and damaged records. */
TEST(fast_path_reads_columns_as_the_parser_does)
{
	char path[] = "/tmp/tfkit-test-dataset-XXXXXX";
	struct tf_writer *w = temp_writer(path);
	struct tf_example *ex = tf_example_new();
	REQUIRE(w != NULL && ex != NULL);
	srand(5);
	for (int i = 0; i < 300; i++) {
		tf_example_clear(ex);
		float a = (float)rand() / RAND_MAX, c = (float)(i % 9) - 4;
		int64_t bb = (int64_t)(i % 13) - 6, l = i % 2;
		float fb = (float)bb, two[2] = {1, 2};
		int shape = i % 12;
		/* Variants: bb as floats, an extra feature, a float label,
		 * no label; and errors: c missing, two values of a, a label
		 * of 7 (no class). */
		tf_example_add_floats(ex, "a", shape == 5 ? two : &a,
		                      shape == 5 ? 2 : 1);
		if (shape == 1) {
			tf_example_add_floats(ex, "bb", &fb, 1);
		} else {
			tf_example_add_int64s(ex, "bb", &bb, 1);
		}
		if (shape != 4) {
			tf_example_add_floats(ex, "c", &c, 1);
		}
		if (shape == 2) {
			tf_example_add_floats(ex, "zz", &c, 1);
		}
		if (shape == 3) {
			float fl = (float)l;
			tf_example_add_floats(ex, "y", &fl, 1);
		} else if (shape == 6) {
			/* no label */
		} else if (shape == 7) {
			int64_t seven = 7;
			tf_example_add_int64s(ex, "y", &seven, 1);
		} else {
			tf_example_add_int64s(ex, "y", &l, 1);
		}
		if (shape == 4 || shape == 5 || shape == 7) {
			continue; /* errors: below, one at a time */
		}
		put(w, ex);
	}
	/* Hand-made: the entries in reverse order, c unpacked, bb an
	 * unpacked int64, y a packed int64 (values a 3, bb 2, c 1, y 1). */
	static const uint8_t odd[] = {
	    0x0a, 0x35, 0x0a, 0x0a, 0x0a, 0x01, 'y',  0x12, 0x05, 0x1a, 0x03,
	    0x0a, 0x01, 0x01, 0x0a, 0x0c, 0x0a, 0x01, 'c',  0x12, 0x07, 0x12,
	    0x05, 0x0d, 0x00, 0x00, 0x80, 0x3f, 0x0a, 0x0a, 0x0a, 0x02, 'b',
	    'b',  0x12, 0x04, 0x1a, 0x02, 0x08, 0x02, 0x0a, 0x0d, 0x0a, 0x01,
	    'a',  0x12, 0x08, 0x12, 0x06, 0x0a, 0x04, 0x00, 0x00, 0x40, 0x40};
	REQUIRE(tf_writer_write(w, odd, sizeof odd) == TF_OK);
	REQUIRE(tf_writer_close(w) == TF_OK);
	float xa[1024], ya[400], xb[1024], yb[400];
	size_t ra, rb;
	char ma[512], mb[512];
	int ka = read_with(col_schema, path, 1, xa, ya, &ra, ma, sizeof ma);
	CHECK(fast_hits >= 150); /* the usual records, and the hand-made */
	int kb = read_with(col_schema, path, 0, xb, yb, &rb, mb, sizeof mb);
	CHECK_EQ_INT(ka, TF_EOF);
	CHECK_EQ_INT(kb, TF_EOF);
	if (ka != TF_EOF) {
		printf("# %s\n", ma);
	}
	CHECK_EQ_INT(ra, 226);
	CHECK_EQ_INT(ra, rb);
	CHECK_MEM(xa, xb, ra * 3 * sizeof(float));
	for (size_t i = 0; i < ra; i++) {
		CHECK(ya[i] == yb[i] || (isnan(ya[i]) && isnan(yb[i])));
	}
	float want[3] = {1.0f, 2.0f, 4.0f}; /* (3-1)/2, 2, (1+1)/0.5 */
	CHECK_MEM(xa + (ra - 1) * 3, want, sizeof want);
	CHECK(ya[ra - 1] == 1.0f);

	/* Errors name the same record either way: two values of a, a
	 * label that is no class, a missing feature (the label required),
	 * a damaged record after a good one. */
	for (int bad = 0; bad < 4; bad++) {
		REQUIRE(tf_writer_open(w, path, TF_COMPRESS_NONE, 0) == TF_OK);
		tf_example_clear(ex);
		float a[2] = {1, 2}, c = 3;
		int64_t bb = 1, y = bad == 1 ? 7 : 1;
		tf_example_add_floats(ex, "a", a, bad == 0 ? 2 : 1);
		tf_example_add_int64s(ex, "bb", &bb, 1);
		if (bad != 2) {
			tf_example_add_floats(ex, "c", &c, 1);
		}
		tf_example_add_int64s(ex, "y", &y, 1);
		put(w, ex);
		if (bad == 3) {
			static const uint8_t cut[] = {0x0a, 0x2d, 0x0a, 0x1d};
			REQUIRE(tf_writer_write(w, cut, sizeof cut) == TF_OK);
		}
		REQUIRE(tf_writer_close(w) == TF_OK);
		struct tf_dataset *ds[2];
		int rc[2];
		for (int k = 0; k < 2; k++) {
			ds[k] = tf_dataset_new();
			REQUIRE(tf_columns_parse_schema(
			            tf_dataset_columns(ds[k]), col_schema,
			            "schema") == TF_OK);
			if (k == 1) {
				tfi_dataset_no_fast(ds[k]);
			}
			const char *files[] = {path};
			REQUIRE(tf_dataset_open(ds[k], files, 1, 1, 1, 0) ==
			        TF_OK);
			size_t got;
			while ((rc[k] = tf_dataset_next(ds[k], xa, NULL, ya, 4,
			                                &got)) == TF_OK) {
			}
		}
		CHECK_EQ_INT(rc[0], TF_EFORMAT);
		CHECK_EQ_INT(rc[0], rc[1]);
		CHECK(strcmp(tf_errmsg(ds[0]), tf_errmsg(ds[1])) == 0);
		CHECK(strstr(tf_errmsg(ds[0]), "record") != NULL);
		tf_dataset_free(ds[0]);
		tf_dataset_free(ds[1]);
	}
	unlink(path);
	tf_example_free(ex);
	tf_writer_free(w);
}

/* Integer columns (int64 features, as tf-csv2record writes integer
 * columns) of every varint size, under a short name and under one of
 * 120 bytes, read fast as the general parser reads them. */
TEST(fast_path_reads_int64_columns)
{
	char name[121];
	memset(name, 'n', 120);
	name[120] = '\0';
	char sch[1024];
	snprintf(sch, sizeof sch,
	         "{\"format\":\"tfkit-schema\",\"version\":1,"
	         "\"layout\":\"columns\",\"label\":{\"name\":\"y\","
	         "\"type\":\"int64\",\"classes\":[0,1]},\"features\":["
	         "{\"name\":\"p7\",\"type\":\"int64\",\"mean\":3,"
	         "\"std\":2},{\"name\":\"%s\",\"type\":\"int64\"},"
	         "{\"name\":\"q\",\"type\":\"int64\",\"mean\":-1,"
	         "\"std\":0.5}]}",
	         name);
	static const int64_t vals[] = {0,
	                               1,
	                               127,
	                               128,
	                               255,
	                               16383,
	                               16384,
	                               (int64_t)1 << 21,
	                               (int64_t)1 << 40,
	                               -1,
	                               INT64_MIN,
	                               INT64_MAX};
	size_t nv = sizeof vals / sizeof *vals;
	char path[] = "/tmp/tfkit-test-dataset-XXXXXX";
	struct tf_writer *w = temp_writer(path);
	struct tf_example *ex = tf_example_new();
	REQUIRE(w != NULL && ex != NULL);
	for (size_t i = 0; i < 3 * nv; i++) {
		int64_t p = vals[i % nv], n = vals[(i / 3) % nv],
		        q = vals[(i * 7) % nv], y = (int64_t)(i % 2);
		tf_example_clear(ex);
		tf_example_add_int64s(ex, name, &n, 1);
		tf_example_add_int64s(ex, "p7", &p, 1);
		tf_example_add_int64s(ex, "q", &q, 1);
		tf_example_add_int64s(ex, "y", &y, 1);
		put(w, ex);
	}
	REQUIRE(tf_writer_close(w) == TF_OK);
	float xa[256], ya[64], xb[256], yb[64];
	size_t ra, rb;
	char ma[512], mb[512];
	int ka = read_with(sch, path, 1, xa, ya, &ra, ma, sizeof ma);
	CHECK_EQ_INT(fast_hits, 3 * nv); /* every record */
	int kb = read_with(sch, path, 0, xb, yb, &rb, mb, sizeof mb);
	CHECK_EQ_INT(ka, TF_EOF);
	CHECK_EQ_INT(kb, TF_EOF);
	CHECK_EQ_INT(ra, 3 * nv);
	CHECK_EQ_INT(ra, rb);
	CHECK_MEM(xa, xb, ra * 3 * sizeof(float));
	CHECK_MEM(ya, yb, ra * sizeof(float));
	/* record 4: p7 255, standardised (255 - 3) / 2; q vals[28 % 12] */
	CHECK(xa[4 * 3 + 0] == 126.0f);
	CHECK(xa[4 * 3 + 2] == (float)(((double)vals[28 % nv] + 1) * 2));
	unlink(path);
	tf_example_free(ex);
	tf_writer_free(w);
}

/* Damaged records (bytes changed, cut or repeated at random) read the
 * same through the fast path and the general parser: the same rows and
 * labels, or the same error. */
TEST(fast_path_agrees_on_damaged_records)
{
	struct tf_example *ex = tf_example_new();
	REQUIRE(ex != NULL);
	float a = 0.25f, c = -3.0f, f3[3] = {1, 2, 3};
	/* int64s of 1, 2, 3 and 10 varint bytes */
	int64_t bbs[4] = {5, 300, 20000, -2}, bb, y = 1;
	srand(11);
	int fast = 0;
	for (int i = 0; i < 800; i++) {
		int packed = i % 2;
		bb = bbs[(i / 2) % 4];
		tf_example_clear(ex);
		if (packed) {
			tf_example_add_floats(ex, "features", f3, 3);
		} else {
			tf_example_add_floats(ex, "a", &a, 1);
			tf_example_add_int64s(ex, "bb", &bb, 1);
			tf_example_add_floats(ex, "c", &c, 1);
		}
		tf_example_add_int64s(ex, packed ? "label" : "y", &y, 1);
		const uint8_t *p;
		size_t n;
		REQUIRE(tf_example_serialize(ex, &p, &n) == TF_OK);
		uint8_t rec[256];
		REQUIRE(n + 16 < sizeof rec);
		memcpy(rec, p, n);
		int how = rand() % 4;
		if (how == 0) { /* a byte changed */
			rec[rand() % n] ^= (uint8_t)(1 + rand() % 255);
		} else if (how == 1) { /* cut short */
			n = (size_t)rand() % n;
		} else if (how == 2) { /* a run repeated */
			size_t at = (size_t)rand() % n,
			       k = 1 + (size_t)rand() % 8;
			k = at + k > n ? n - at : k;
			memmove(rec + at + k, rec + at, n - at);
			n += k;
		} else { /* a length byte off by one */
			for (size_t j = 0; j < n; j++) {
				if (rec[j] == 0x0a && j + 1 < n) {
					rec[j + 1] +=
					    (uint8_t)(rand() % 2 ? 1 : -1);
					break;
				}
			}
		}
		char path[] = "/tmp/tfkit-test-dataset-XXXXXX";
		struct tf_writer *w = temp_writer(path);
		REQUIRE(w != NULL);
		REQUIRE(tf_writer_write(w, rec, n) == TF_OK);
		REQUIRE(tf_writer_close(w) == TF_OK);
		tf_writer_free(w);
		const char *sch = packed ? schema : col_schema;
		float xa[8], ya[2], xb[8], yb[2];
		size_t ra, rb;
		char ma[512], mb[512];
		int ka = read_with(sch, path, 1, xa, ya, &ra, ma, sizeof ma);
		fast += (int)fast_hits;
		int kb = read_with(sch, path, 0, xb, yb, &rb, mb, sizeof mb);
		unlink(path);
		CHECK_EQ_INT(ka, kb);
		CHECK_EQ_INT(ra, rb);
		if (ka != TF_EOF || ra != rb) {
			CHECK(strcmp(ma, mb) == 0);
			continue;
		}
		CHECK_MEM(xa, xb, ra * 3 * sizeof(float));
		CHECK(ra == 0 || ya[0] == yb[0] ||
		      (isnan(ya[0]) && isnan(yb[0])));
	}
	/* some damage (in a value) leaves a record the fast path reads */
	CHECK(fast >= 20);
	tf_example_free(ex);
}

/* Three float columns standardised, an int64 label: the layout
 * tf-csv2record writes by default. */
static const char *float_cols =
    "{\"format\":\"tfkit-schema\",\"version\":1,\"layout\":\"columns\","
    "\"label\":{\"name\":\"y\",\"type\":\"int64\",\"classes\":[0,1]},"
    "\"features\":[{\"name\":\"a\",\"type\":\"float\",\"mean\":1,\"std\":2},"
    "{\"name\":\"bb\",\"type\":\"float\",\"mean\":0.5,\"std\":3},"
    "{\"name\":\"c\",\"type\":\"float\",\"mean\":-1,\"std\":0.5}]}";

/* Six packed floats standardised: the SSE path of a packed row. */
static const char *packed6 =
    "{\"format\":\"tfkit-schema\",\"version\":1,\"layout\":\"packed\","
    "\"packed\":{\"name\":\"features\",\"size\":6},"
    "\"label\":{\"name\":\"y\",\"type\":\"int64\",\"classes\":[0,1]},"
    "\"features\":["
    "{\"name\":\"a\",\"type\":\"float\",\"mean\":1,\"std\":2,\"packed_index\":"
    "0},"
    "{\"name\":\"b\",\"type\":\"float\",\"mean\":-2,\"std\":3,\"packed_index\":"
    "1},"
    "{\"name\":\"c\",\"type\":\"float\",\"mean\":0.5,\"std\":0.25,\"packed_"
    "index\":2},"
    "{\"name\":\"d\",\"type\":\"float\",\"mean\":4,\"std\":1,\"packed_index\":"
    "3},"
    "{\"name\":\"e\",\"type\":\"float\",\"mean\":-1,\"std\":5,\"packed_index\":"
    "4},"
    "{\"name\":\"f\",\"type\":\"float\",\"mean\":7,\"std\":0.5,\"packed_"
    "index\":5}]}";

/*
 * A file of records laid out alike is read by comparing each with the
 * last one read entry by entry (the whole-record template): values that
 * change, labels 0 and 1, and among them damaged records (a byte
 * changed anywhere, a float label, a label of 200, a feature missing),
 * each read as the general parser reads it, with the same error where
 * it gives one; per column and packed.
 */
TEST(whole_record_template_reads_what_the_parser_reads)
{
	struct tf_example *ex = tf_example_new();
	REQUIRE(ex != NULL);
	srand(17);
	int hits = 0, whole = 0;
	for (int round = 0; round < 300; round++) {
		char path[] = "/tmp/tfkit-test-dataset-XXXXXX";
		struct tf_writer *w = temp_writer(path);
		REQUIRE(w != NULL);
		int odd = rand() % 12; /* the record that differs */
		int packed = round % 2;
		for (int i = 0; i < 12; i++) {
			tf_example_clear(ex);
			float a = (float)rand() / RAND_MAX - 0.5f,
			      b = (float)(rand() % 1000), c = -2.5f * (float)i;
			int64_t y = rand() % 2;
			float fy = (float)y;
			int kind = i == odd ? round / 2 % 5 : -1;
			if (packed) {
				float six[6] = {a, b, c, a * b, -c, 1e-3f * b};
				tf_example_add_floats(ex, "features", six,
				                      kind == 3 ? 5 : 6);
			} else {
				tf_example_add_floats(ex, "a", &a, 1);
				if (kind != 3) {
					tf_example_add_floats(ex, "bb", &b, 1);
				}
				tf_example_add_floats(ex, "c", &c, 1);
			}
			if (kind == 1) {
				tf_example_add_floats(ex, "y", &fy, 1);
			} else {
				if (kind == 2) {
					y = 200;
				}
				tf_example_add_int64s(ex, "y", &y, 1);
			}
			const uint8_t *p;
			size_t n;
			REQUIRE(tf_example_serialize(ex, &p, &n) == TF_OK);
			uint8_t rec[256];
			REQUIRE(n <= sizeof rec);
			memcpy(rec, p, n);
			if (kind == 0 || kind == 4) { /* any byte */
				rec[rand() % n] ^= (uint8_t)(1 + rand() % 255);
			}
			REQUIRE(tf_writer_write(w, rec, n) == TF_OK);
		}
		REQUIRE(tf_writer_close(w) == TF_OK);
		tf_writer_free(w);
		float xa[128], ya[16], xb[128], yb[16];
		size_t ra, rb, width = packed ? 6 : 3;
		char ma[512], mb[512];
		const char *sch = packed ? packed6 : float_cols;
		int ka =
		    read_rows(sch, path, 1, width, xa, ya, &ra, ma, sizeof ma);
		hits += (int)fast_hits;
		whole += (int)whole_hits;
		int kb =
		    read_rows(sch, path, 0, width, xb, yb, &rb, mb, sizeof mb);
		unlink(path);
		CHECK_EQ_INT(ka, kb);
		CHECK_EQ_INT(ra, rb);
		CHECK(strcmp(ma, mb) == 0);
		CHECK_MEM(xa, xb, ra * width * sizeof(float));
		for (size_t i = 0; i < ra; i++) {
			CHECK(ya[i] == yb[i] || (isnan(ya[i]) && isnan(yb[i])));
		}
	}
	CHECK(hits >= 300 * 8);
	CHECK(whole >= 300 * 6); /* after the first, most records */
	tf_example_free(ex);
}

/* A columns schema with two categorical features (vocabularies of 3 and
 * 2 values) and one numeric. */
static const char *cat_schema =
    "{\"format\":\"tfkit-schema\",\"version\":1,\"layout\":\"columns\","
    "\"label\":{\"name\":\"y\",\"type\":\"int64\",\"classes\":[0,1]},"
    "\"features\":[{\"name\":\"colour\",\"type\":\"bytes\"},"
    "{\"name\":\"shape\",\"type\":\"bytes\"},"
    "{\"name\":\"size\",\"type\":\"float\",\"mean\":0,\"std\":1}],"
    "\"vocabularies\":{\"colour\":[\"blue\",\"green\",\"red\"],"
    "\"shape\":[\"circle\",\"square\"]}}";

/* Categorical features and their crosses arrive as int64 ids beside the
 * floats: exact far past 2^24 (float32's whole numbers), the same ids
 * when rows come from records or from values (serving), -1 for a
 * missing value. */
TEST(categorical_ids_are_int64)
{
	static const char *colours[] = {"red", "blue", "green", "mauve"};
	static const char *shapes[] = {"square", "circle"};
	const char *path = "test_dataset_cat.tfrecord";
	struct tf_writer *w = tf_writer_new();
	struct tf_example *ex = tf_example_new();
	REQUIRE(tf_writer_open(w, path, TF_COMPRESS_NONE, 0) == TF_OK);
	for (int i = 0; i < 9; i++) {
		tf_example_clear(ex);
		struct tf_bytes c = {(const uint8_t *)colours[i % 4],
		                     strlen(colours[i % 4])};
		struct tf_bytes s = {(const uint8_t *)shapes[i % 2],
		                     strlen(shapes[i % 2])};
		float size = (float)i;
		int64_t y = i % 2;
		if (i != 8) { /* the last has no colour */
			tf_example_add_bytes(ex, "colour", &c, 1);
		}
		tf_example_add_bytes(ex, "shape", &s, 1);
		tf_example_add_floats(ex, "size", &size, 1);
		tf_example_add_int64s(ex, "y", &y, 1);
		put(w, ex);
	}
	REQUIRE(tf_writer_close(w) == TF_OK);
	struct tf_dataset *ds = tf_dataset_new();
	REQUIRE(tf_columns_parse_schema(tf_dataset_columns(ds), cat_schema,
	                                "schema") == TF_OK);
	int64_t buckets = INT32_MAX;
	REQUIRE(tf_columns_set_categorical(tf_dataset_columns(ds),
	                                   "colour*shape", buckets) == TF_OK);
	CHECK_EQ_INT(tf_columns_width(tf_dataset_columns(ds)), 1);
	CHECK_EQ_INT(tf_columns_id_width(tf_dataset_columns(ds)), 3);
	CHECK_EQ_INT(tf_columns_count(tf_dataset_columns(ds)), 4);
	CHECK_EQ_INT(tf_columns_column_kind(tf_dataset_columns(ds), 1),
	             TF_COLUMN_CATEGORICAL);
	CHECK_EQ_INT(tf_columns_column_kind(tf_dataset_columns(ds), 3),
	             TF_COLUMN_DERIVED);
	CHECK_EQ_INT(tf_columns_find_column(tf_dataset_columns(ds), "shape"),
	             2);
	const char *files[] = {path};
	REQUIRE(tf_dataset_open(ds, files, 1, 1, 1, 0) == TF_OK);
	float x[9], y[9];
	int64_t ids[27];
	size_t rows;
	CHECK(tf_dataset_next(ds, x, NULL, y, 9, &rows) == TF_EINVAL);
	CHECK_CONTAINS(tf_errmsg(ds), "no room for them");
	REQUIRE(tf_dataset_next(ds, x, ids, y, 9, &rows) == TF_OK);
	REQUIRE(rows == 9);
	/* One id space: colour 0..2 and 3 (out of vocabulary), shape 4..5
	 * and 6. */
	int64_t want_colour[] = {2, 0, 1, 3}, want_shape[] = {5, 4};
	int inexact = 0;
	for (size_t r = 0; r < rows; r++) {
		CHECK(x[r] == (float)r);
		CHECK_EQ_INT(ids[r * 3], r == 8 ? -1 : want_colour[r % 4]);
		CHECK_EQ_INT(ids[r * 3 + 1], want_shape[r % 2]);
		int64_t cross = ids[r * 3 + 2];
		if (r == 8) {
			CHECK_EQ_INT(cross, -1);
			continue;
		}
		CHECK(cross >= 0 && cross < buckets);
		inexact += (int64_t)(float)cross != cross;
		/* Rows built from values compute the same cross. */
		float xv = (float)r;
		int64_t v[3] = {
		    tf_columns_category(tf_dataset_columns(ds), 1,
		                        colours[r % 4], strlen(colours[r % 4])),
		    tf_columns_category(tf_dataset_columns(ds), 2,
		                        shapes[r % 2], strlen(shapes[r % 2])),
		    0};
		tf_columns_standardize(tf_dataset_columns(ds), &xv, v, 1);
		CHECK_EQ_INT(v[0], ids[r * 3]);
		CHECK_EQ_INT(v[2], cross);
		/* Different pairs, different crosses (rows 0..3 are the four
		 * colour-shape pairs seen). */
		for (size_t k = 0; k < r && r < 4; k++) {
			CHECK(ids[k * 3 + 2] != cross);
		}
	}
	/* Most of 2^31 buckets are past what a float holds exactly. */
	CHECK(inexact > 0);
	CHECK_EQ_INT(tf_columns_category(tf_dataset_columns(ds), 0, "red", 3),
	             -1);
	tf_dataset_free(ds);
	unlink(path);
	tf_example_free(ex);
	tf_writer_free(w);
}

/* A bytes feature without a vocabulary (over 1000 values when the
 * schema was written) is hashed into buckets of its own. */
TEST(features_without_vocabulary_are_hashed)
{
	static const char *hschema =
	    "{\"format\":\"tfkit-schema\",\"version\":1,"
	    "\"layout\":\"columns\",\"label\":{\"name\":\"y\","
	    "\"type\":\"int64\",\"classes\":[0,1]},\"features\":["
	    "{\"name\":\"city\",\"type\":\"bytes\"},"
	    "{\"name\":\"shape\",\"type\":\"bytes\"},"
	    "{\"name\":\"size\",\"type\":\"float\"}],"
	    "\"vocabularies\":{\"city\":null,"
	    "\"shape\":[\"circle\",\"square\"]}}";
	struct tf_dataset *ds = tf_dataset_new();
	REQUIRE(tf_columns_parse_schema(tf_dataset_columns(ds), hschema,
	                                "schema") == TF_OK);
	REQUIRE(tf_columns_set_categorical(tf_dataset_columns(ds), "city*shape",
	                                   50) == TF_OK);
	struct tf_layout l;
	tf_columns_layout(tf_dataset_columns(ds), &l);
	/* city: ids 0..49; shape: 50, 51 and 52 (out of vocabulary). */
	CHECK_EQ_INT(l.categorical, 2);
	CHECK_EQ_INT(l.ids, 53);
	CHECK_EQ_INT(
	    tf_columns_category(tf_dataset_columns(ds), 2, "square", 6), 51);
	int64_t seen[50] = {0}, distinct = 0;
	for (int i = 0; i < 200; i++) {
		char city[32];
		int n = snprintf(city, sizeof city, "city %d", i);
		int64_t id = tf_columns_category(tf_dataset_columns(ds), 1,
		                                 city, (size_t)n);
		CHECK(id >= 0 && id < 50);
		CHECK_EQ_INT(tf_columns_category(tf_dataset_columns(ds), 1,
		                                 city, (size_t)n),
		             id);
		if (id >= 0 && id < 50 && !seen[id]++) {
			distinct++;
		}
	}
	/* 200 values spread over most of the 50 buckets. */
	CHECK(distinct > 40);
	tf_dataset_free(ds);
	ds = tf_dataset_new();
	REQUIRE(tf_columns_parse_schema(tf_dataset_columns(ds), hschema,
	                                "schema") == TF_OK);
	CHECK(tf_columns_set_categorical(tf_dataset_columns(ds), NULL, 0) ==
	      TF_EINVAL);
	CHECK_CONTAINS(tf_errmsg(tf_dataset_columns(ds)),
	               "feature 'city' has no vocabulary");
	tf_dataset_free(ds);
}

/* Labels become classes 0..K-1 whatever the data calls them: 1..K and
 * -1/+1 in order (no unused class), strings by the vocabulary; a model
 * with a class per value up to the largest (trained before the map)
 * reads labels as they stand. */
static void
labels_of(const char *schema_text, int64_t classes, const int64_t *v, size_t n,
          float *out, int64_t *kout)
{
	const char *path = "test_dataset_labels.tfrecord";
	struct tf_writer *w = tf_writer_new();
	struct tf_example *ex = tf_example_new();
	REQUIRE(tf_writer_open(w, path, TF_COMPRESS_NONE, 0) == TF_OK);
	for (size_t i = 0; i < n; i++) {
		float x = (float)i;
		tf_example_clear(ex);
		tf_example_add_floats(ex, "x", &x, 1);
		tf_example_add_int64s(ex, "y", &v[i], 1);
		put(w, ex);
	}
	REQUIRE(tf_writer_close(w) == TF_OK);
	struct tf_dataset *ds = tf_dataset_new();
	REQUIRE(tf_columns_parse_schema(tf_dataset_columns(ds), schema_text,
	                                "schema") == TF_OK);
	if (classes > 0) { /* as a checkpoint says */
		tf_columns_set_label(tf_dataset_columns(ds), "y",
		                     TF_TASK_MULTICLASS, classes);
	}
	int64_t k = tf_columns_classes(tf_dataset_columns(ds));
	const char *files[] = {path};
	REQUIRE(tf_dataset_open(ds, files, 1, 1, 1, 0) == TF_OK);
	float x[8];
	size_t rows = 0;
	int rc = tf_dataset_next(ds, x, NULL, out, n, &rows);
	if (rc != TF_OK) {
		CHECK_CONTAINS(tf_errmsg(ds),
		               "test_dataset_labels.tfrecord: record 1: "
		               "label 'y' is 7, not one of the model's classes "
		               "(1 to 3)");
		k = -rc;
	} else {
		CHECK_EQ_INT(rows, n);
	}
	if (k > 0) {
		char name[16];
		CHECK(tf_columns_class_name(tf_dataset_columns(ds), 0, name,
		                            sizeof name) == TF_OK);
		CHECK(strcmp(name, classes == 4 ? "0" : "1") == 0);
	}
	tf_dataset_free(ds);
	tf_example_free(ex);
	tf_writer_free(w);
	unlink(path);
	*kout = k;
}

TEST(labels_are_classes_in_order)
{
	static const char *one_to_three =
	    "{\"format\":\"tfkit-schema\",\"version\":1,\"layout\":\"columns\","
	    "\"label\":{\"name\":\"y\",\"type\":\"int64\",\"classes\":[1,2,3]},"
	    "\"features\":[{\"name\":\"x\",\"type\":\"float\",\"mean\":0,"
	    "\"std\":1}]}";
	int64_t v[] = {3, 1, 2, 1};
	float y[4];
	int64_t k;
	labels_of(one_to_three, 0, v, 4, y, &k);
	CHECK_EQ_INT(k, 3);
	CHECK(y[0] == 2 && y[1] == 0 && y[2] == 1 && y[3] == 0);
	/* A checkpoint of four classes (0 never seen): labels as they are. */
	labels_of(one_to_three, 4, v, 4, y, &k);
	CHECK_EQ_INT(k, 4);
	CHECK(y[0] == 3 && y[1] == 1 && y[2] == 2 && y[3] == 1);
	/* A value that is not a class: a data error naming the record. */
	int64_t bad[] = {1, 7};
	labels_of(one_to_three, 0, bad, 2, y, &k);
	CHECK_EQ_INT(k, -TF_EFORMAT);
	/* -1/+1: two classes, -1 first. */
	static const char *pm =
	    "{\"format\":\"tfkit-schema\",\"version\":1,\"layout\":\"columns\","
	    "\"label\":{\"name\":\"y\",\"type\":\"int64\",\"classes\":[-1,1]},"
	    "\"features\":[{\"name\":\"x\",\"type\":\"float\",\"mean\":0,"
	    "\"std\":1}]}";
	struct tf_dataset *ds = tf_dataset_new();
	REQUIRE(tf_columns_parse_schema(tf_dataset_columns(ds), pm, "schema") ==
	        TF_OK);
	CHECK_EQ_INT(tf_columns_task(tf_dataset_columns(ds)), TF_TASK_BINARY);
	char name[8];
	CHECK(tf_columns_class_name(tf_dataset_columns(ds), 0, name,
	                            sizeof name) == TF_OK);
	CHECK(strcmp(name, "-1") == 0);
	CHECK(tf_columns_class_name(tf_dataset_columns(ds), 2, name,
	                            sizeof name) == TF_EINVAL);
	tf_dataset_free(ds);
}

/* What a row holds is the columns' alone: made from a schema with no
 * dataset, they name, standardise and cross a row, spell the classes,
 * and two datasets reading rows of them (as evaluation reads a model's)
 * read the same rows, which outlive neither. */
TEST(columns_stand_alone_and_are_shared)
{
	struct tf_columns *cols = tf_columns_new();
	REQUIRE(cols != NULL);
	REQUIRE(tf_columns_parse_schema(cols, col_schema, "schema") == TF_OK);
	CHECK_EQ_INT(tf_columns_width(cols), 3);
	CHECK_EQ_INT(tf_columns_id_width(cols), 0);
	CHECK_EQ_INT(tf_columns_find_column(cols, "c"), 2);
	CHECK_EQ_INT(tf_columns_find_column(cols, "y"), -1);
	int is_int;
	float mean, inv;
	const char *nm = tf_columns_column(cols, 1, &is_int, &mean, &inv);
	CHECK(nm != NULL && strcmp(nm, "bb") == 0);
	CHECK(is_int == 1 && mean == 0 && inv == 1);
	float x[3] = {3, 5, 0};
	tf_columns_standardize(cols, x, NULL, 1);
	CHECK(x[0] == 1 && x[1] == 5 && x[2] == 2); /* (v - mean) / std */
	char name[16];
	CHECK(tf_columns_class_name(cols, 1, name, sizeof name) == TF_OK);
	CHECK(strcmp(name, "1") == 0);
	CHECK(tf_columns_class_name(cols, 2, name, sizeof name) == TF_EINVAL);
	tf_errclear(cols);
	CHECK(tf_columns_set_categorical(cols, "a*b", 8) == TF_EINVAL);
	CHECK_CONTAINS(tf_errmsg(cols), "a*b");

	const char *path = "test_dataset_shared.tfrecord";
	struct tf_writer *w = tf_writer_new();
	struct tf_example *ex = tf_example_new();
	REQUIRE(tf_writer_open(w, path, TF_COMPRESS_NONE, 0) == TF_OK);
	for (int i = 0; i < 5; i++) {
		float a = (float)i, c = -1;
		int64_t bb = i * 10, y = i % 2;
		tf_example_clear(ex);
		tf_example_add_floats(ex, "a", &a, 1);
		tf_example_add_int64s(ex, "bb", &bb, 1);
		tf_example_add_floats(ex, "c", &c, 1);
		tf_example_add_int64s(ex, "y", &y, 1);
		put(w, ex);
	}
	REQUIRE(tf_writer_close(w) == TF_OK);
	tf_writer_free(w);
	tf_example_free(ex);
	struct tf_dataset *ds[2] = {tf_dataset_new_on(cols),
	                            tf_dataset_new_on(cols)};
	float rx[2][15], ry[2][5];
	for (int k = 0; k < 2; k++) {
		REQUIRE(ds[k] != NULL && tf_dataset_columns(ds[k]) == cols);
		const char *files[] = {path};
		REQUIRE(tf_dataset_open(ds[k], files, 1, 1, 1, 0) == TF_OK);
		size_t rows;
		REQUIRE(tf_dataset_next(ds[k], rx[k], NULL, ry[k], 5, &rows) ==
		        TF_OK);
		CHECK_EQ_INT(rows, 5);
	}
	CHECK(memcmp(rx[0], rx[1], sizeof rx[0]) == 0);
	CHECK(memcmp(ry[0], ry[1], sizeof ry[0]) == 0);
	CHECK(rx[0][3 * 4] == 1.5f && rx[0][3 * 4 + 1] == 40 && ry[0][4] == 0);
	tf_dataset_free(ds[0]); /* the columns are not theirs to free */
	tf_dataset_free(ds[1]);
	CHECK_EQ_INT(tf_columns_width(cols), 3);
	tf_columns_free(cols);
	remove(path);
}

/* A sparse schema of the bag layout: ids below 1000 (or any, hashed),
 * four a row at most. */
static const char *bag_schema =
    "{\"format\":\"tfkit-schema\",\"version\":1,\"layout\":\"libsvm\","
    "\"label\":{\"name\":\"label\",\"type\":\"int64\",\"classes\":[0,1]},"
    "\"features\":[],\"sparse\":{\"ids\":\"ids\",\"values\":\"values\","
    "\"max_index\":999,\"max_ids\":4}}";

/* Every row of path through the bag (hashed into buckets when not 0):
 * its ids, values and labels, the status at the end and the message. */
static int
read_bag(const char *path, int64_t buckets, int fast, float *x, int64_t *ids,
         float *y, size_t *rows, char *msg, size_t msglen)
{
	struct tf_dataset *ds = tf_dataset_new();
	struct tf_columns *cols = tf_dataset_columns(ds);
	int rc = tf_columns_set_sparse(cols, 1, buckets);
	rc = rc ? rc : tf_columns_parse_schema(cols, bag_schema, "schema");
	if (!fast) {
		tfi_dataset_no_fast(ds);
	}
	const char *files[] = {path};
	rc = rc ? rc : tf_dataset_open(ds, files, 1, 1, 1, 0);
	size_t got;
	*rows = 0;
	while (rc == TF_OK &&
	       (rc = tf_dataset_next(ds, x + *rows * 4, ids + *rows * 4,
	                             y + *rows, 4, &got)) == TF_OK) {
		*rows += got;
	}
	snprintf(msg, msglen, "%s", tf_errmsg(ds));
	fast_hits = tfi_dataset_fast_hits(ds);
	tf_dataset_free(ds);
	return rc;
}

/*
 * Sparse records as tf-csv2record -f libsvm writes them (ids, label,
 * values) and otherwise (no values, no ids, the features in another
 * order, unpacked ids, a float label, ids of 9 and 10 varint bytes),
 * and among them damaged ones (too many ids, an id beyond the table,
 * counts that differ, a label of 2, a byte changed, cut short): the
 * fast reader's ids, values and labels are the general parser's, plain,
 * hashed into 1024 buckets (a mask) and into 1000 (a division), with
 * the same error where it gives one.
 */
TEST(fast_bag_reads_what_the_parser_reads)
{
	for (uint64_t u = 1; u < (UINT64_C(1) << 63); u = u * 7 + 3) {
		struct tf_columns *c = tf_columns_new();
		REQUIRE(tf_columns_set_sparse(c, 1, 1024) == TF_OK);
		REQUIRE(tf_columns_parse_schema(c, bag_schema, "s") == TF_OK);
		CHECK_EQ_INT(tf_columns_bag_id(c, (int64_t)u),
		             (int64_t)(tfi_mix64(u) % 1024));
		tf_columns_free(c);
	}
	struct tf_example *ex = tf_example_new();
	REQUIRE(ex != NULL);
	srand(29);
	int fast = 0, same = 0, long_fast = 0;
	for (int i = 0; i < 1200; i++) {
		int64_t idv[6], yv = i % 2;
		float vv[6], yf = 1.0f;
		int nid = rand() % 5, nv = nid, how = rand() % 13;
		for (int k = 0; k < 6; k++) {
			idv[k] = rand() % 1000;
			vv[k] = (float)(rand() % 100) / 8.0f;
		}
		if (how == 1) {
			nid = 6; /* more than max_ids */
		} else if (how == 2 && nid > 0) {
			idv[0] = 1000 + rand() % 5; /* beyond the table */
		} else if (how == 3) {
			nv = nid + 1; /* counts differ */
		} else if (how == 4) {
			nv = 0; /* no values: each 1 */
		} else if (how == 5) {
			yv = 2; /* not a class */
		} else if (how == 6 && nid > 0) {
			idv[0] = rand() % 2 ? INT64_C(0x7fffffffffffff01) : -5;
		} else if (how == 12) { /* varints of every length, 1 to 10 */
			for (int k = 0; k < 6; k++) {
				uint64_t u = (uint64_t)rand() << 42 ^
				             (uint64_t)rand() << 21 ^
				             (uint64_t)rand() ^
				             (uint64_t)(rand() % 2) << 63;
				idv[k] = (int64_t)(u >> (rand() % 64));
			}
		}
		tf_example_clear(ex);
		if (how == 7) { /* the values first, the label a float */
			tf_example_add_floats(ex, "values", vv, (size_t)nv);
			tf_example_add_floats(ex, "label", &yf, 1);
			tf_example_add_int64s(ex, "ids", idv, (size_t)nid);
		} else {
			if (how != 8) { /* (8: no ids at all) */
				tf_example_add_int64s(ex, "ids", idv,
				                      (size_t)nid);
			}
			tf_example_add_int64s(ex, "label", &yv, 1);
			if (nv > 0 || how == 9) {
				tf_example_add_floats(ex, "values", vv,
				                      (size_t)nv);
			}
		}
		const uint8_t *p;
		size_t n;
		REQUIRE(tf_example_serialize(ex, &p, &n) == TF_OK);
		uint8_t rec[512];
		REQUIRE(n + 16 < sizeof rec);
		memcpy(rec, p, n);
		if (how == 10) { /* a byte changed */
			rec[rand() % n] ^= (uint8_t)(1 + rand() % 255);
		} else if (how == 11) { /* cut short */
			n = (size_t)rand() % n;
		}
		char path[] = "/tmp/tfkit-test-dataset-XXXXXX";
		struct tf_writer *w = temp_writer(path);
		REQUIRE(w != NULL);
		REQUIRE(tf_writer_write(w, rec, n) == TF_OK);
		REQUIRE(tf_writer_close(w) == TF_OK);
		tf_writer_free(w);
		int64_t buckets = i % 3 == 0 ? 0 : i % 3 == 1 ? 1024 : 1000;
		float xa[8], ya[2], xb[8], yb[2];
		int64_t ia[8], ib[8];
		size_t ra, rb;
		char ma[512], mb[512];
		int ka =
		    read_bag(path, buckets, 1, xa, ia, ya, &ra, ma, sizeof ma);
		fast += (int)fast_hits;
		long_fast += how == 12 ? (int)fast_hits : 0;
		int kb =
		    read_bag(path, buckets, 0, xb, ib, yb, &rb, mb, sizeof mb);
		unlink(path);
		CHECK_EQ_INT(ka, kb);
		CHECK_EQ_INT(ra, rb);
		if (ka != TF_EOF || ra != rb) {
			CHECK(strcmp(ma, mb) == 0);
			continue;
		}
		same++;
		CHECK_MEM(xa, xb, ra * 4 * sizeof(float));
		CHECK_MEM(ia, ib, ra * 4 * sizeof(int64_t));
		CHECK(ra == 0 || ya[0] == yb[0]);
	}
	printf("# %d read the fast way (%d of long ids), %d alike\n", fast,
	       long_fast, same);
	/* the usual records went the fast way, ids of 1 to 10 bytes too;
	 * the parser refused some */
	CHECK(fast >= 450 && long_fast >= 30);
	CHECK(same < 1200 && same >= fast);
	tf_example_free(ex);
}

int
main(void)
{
	RUN(fast_path_reads_what_the_parser_reads);
	RUN(fast_path_reads_columns_as_the_parser_does);
	RUN(fast_path_reads_int64_columns);
	RUN(fast_path_agrees_on_damaged_records);
	RUN(whole_record_template_reads_what_the_parser_reads);
	RUN(fast_bag_reads_what_the_parser_reads);
	RUN(categorical_ids_are_int64);
	RUN(features_without_vocabulary_are_hashed);
	RUN(labels_are_classes_in_order);
	RUN(columns_stand_alone_and_are_shared);
	DONE();
}
