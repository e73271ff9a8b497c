/*
 * test_schema.c - the schema: parsed once, encoded back the same, named
 * for shards, carried to outputs; what is not a schema is refused.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

/* What tf-csv2record writes for a three-column file with a label. */
static const char *const csv_schema =
    "{\"format\":\"tfkit-schema\",\"version\":1,\"layout\":\"columns\","
    "\"rows\":3,\"skipped\":0,\"sources\":[\"s.csv\"],\"label\":{\"name\":"
    "\"y\",\"type\":\"int64\",\"column\":3,\"present\":3,\"missing\":0,"
    "\"min\":0,\"max\":1,\"mean\":0.666666667,\"std\":0.471404521,"
    "\"classes\":[0,1]},\"features\":[{\"name\":\"a\",\"type\":\"int64\","
    "\"column\":0,\"present\":3,\"missing\":0,\"min\":1,\"max\":3,\"mean\":2,"
    "\"std\":0.816496581},{\"name\":\"b\",\"type\":\"float\",\"column\":1,"
    "\"present\":3,\"missing\":0,\"min\":-1.25,\"max\":3,\"mean\":1.41666667,"
    "\"std\":1.89922207},{\"name\":\"name\",\"type\":\"bytes\",\"column\":2,"
    "\"present\":3,\"missing\":0}],\"vocabularies\":{\"name\":[\"w\",\"x\","
    "\"y, z\"]}}\n";

TEST(parsed_once_and_encoded_back_the_same)
{
	struct tf_schema *s = tf_schema_new();
	CHECK_STATUS(tf_schema_parse(s, csv_schema, "s.json"), TF_OK, s);
	CHECK_EQ_INT(tf_schema_rows(s), 3);
	CHECK(strcmp(tf_schema_label(s), "y") == 0);
	CHECK_EQ_INT(tf_schema_nfeatures(s), 3);
	int type;
	CHECK(strcmp(tf_schema_feature(s, 2, &type), "name") == 0);
	CHECK_EQ_INT(type, TF_COL_BYTES);
	CHECK(tf_schema_feature(s, 3, &type) == NULL);
	const struct tfi_vocab *v = tfi_schema_vocab(s, "name");
	REQUIRE(v != NULL);
	CHECK(v->n == 3 && strcmp(v->values[2], "y, z") == 0);
	CHECK_STATUS(tf_schema_write(s, NULL), TF_OK, s);
	CHECK(strcmp(tf_schema_text(s), csv_schema) == 0);
	/* a part of the rows says how many */
	tf_schema_set_rows(s, 1);
	CHECK_STATUS(tf_schema_write(s, at("one.json")), TF_OK, s);
	CHECK_CONTAINS(tf_schema_text(s), "\"rows\":1,");
	struct tf_schema *t = tf_schema_new();
	CHECK_STATUS(tf_schema_load(t, at("one.json")), TF_OK, t);
	CHECK_EQ_INT(tf_schema_rows(t), 1);
	tf_schema_free(t);
	tf_schema_free(s);
}

TEST(what_is_not_a_schema_is_refused_naming_its_origin)
{
	struct tf_schema *s = tf_schema_new();
	CHECK_STATUS(tf_schema_parse(s, "{\"format\": ", "a.json"), TF_EFORMAT,
	             s);
	CHECK_CONTAINS(tf_errmsg(s), "a.json:1:");
	tf_errclear(s);
	CHECK_STATUS(tf_schema_parse(s, "{\"format\":\"other\"}", "b.json"),
	             TF_EFORMAT, s);
	CHECK_CONTAINS(tf_errmsg(s), "b.json: not a tfkit schema");
	tf_errclear(s);
	CHECK_STATUS(tf_schema_parse(s,
	                             "{\"format\":\"tfkit-schema\",\"layout\":"
	                             "\"columns\",\"features\":[{\"type\":"
	                             "\"float\"}]}",
	                             "c.json"),
	             TF_EFORMAT, s);
	CHECK_CONTAINS(tf_errmsg(s), "c.json: feature 0 has no name or type");
	tf_errclear(s);
	/* a layout misspelt: not columns by default */
	CHECK_STATUS(tf_schema_parse(s,
	                             "{\"format\":\"tfkit-schema\",\"layout\":"
	                             "\"lIbsvm\",\"features\":[]}",
	                             "d.json"),
	             TF_EFORMAT, s);
	CHECK_CONTAINS(tf_errmsg(s), "d.json: layout 'lIbsvm' is none of "
	                             "columns, packed, libsvm and image");
	tf_errclear(s);
	CHECK_STATUS(tf_schema_load(s, at("missing.json")), TF_ENOENT, s);
	CHECK_CONTAINS(tf_errmsg(s), "cannot open schema");
	CHECK(strcmp(tf_schema_text(s), "") == 0);
	tf_schema_free(s);
}

TEST(sidecar_names_a_set_of_shards_once)
{
	char out[256];
	tf_schema_sidecar("data.tfrecord", out, sizeof out);
	CHECK(strcmp(out, "data.tfrecord.schema.json") == 0);
	tf_schema_sidecar("d/train-00003-of-00004", out, sizeof out);
	CHECK(strcmp(out, "d/train.schema.json") == 0);
	tf_schema_sidecar("t-00000-of-00002", out, sizeof out);
	CHECK(strcmp(out, "t.schema.json") == 0);
	tf_schema_sidecar("x-of-y", out, sizeof out);
	CHECK(strcmp(out, "x-of-y.schema.json") == 0);
}

TEST(carried_to_an_output_of_the_same_data)
{
	struct tf_schema *s = tf_schema_new();
	REQUIRE(tf_schema_parse(s, csv_schema, "s") == TF_OK);
	/* the sidecar of the set in-*-of-00002 */
	CHECK_STATUS(tf_schema_write(s, at("in.schema.json")), TF_OK, s);
	const char *set[] = {at("in-00000-of-00002"), at("in-00001-of-00002")};
	CHECK_STATUS(tf_schema_carry(s, set, 2, at("out"), 2), TF_OK, s);
	struct tf_schema *t = tf_schema_new();
	CHECK_STATUS(tf_schema_load(t, at("out.schema.json")), TF_OK, t);
	CHECK_EQ_INT(tf_schema_rows(t), 2);
	/* all the rows: the same text */
	CHECK_STATUS(tf_schema_carry(s, set, 2, at("all"), -1), TF_OK, s);
	CHECK_STATUS(tf_schema_load(t, at("all.schema.json")), TF_OK, t);
	CHECK(strcmp(tf_schema_text(t), csv_schema) == 0);
	/* inputs of two sets, or without a sidecar: nothing */
	const char *two[] = {at("in-00000-of-00002"), at("other")};
	CHECK_STATUS(tf_schema_carry(s, two, 2, at("mixed"), -1), TF_OK, s);
	CHECK(access(at("mixed.schema.json"), F_OK) != 0);
	const char *none[] = {at("lonely")};
	CHECK_STATUS(tf_schema_carry(s, none, 1, at("o2"), -1), TF_OK, s);
	CHECK(access(at("o2.schema.json"), F_OK) != 0);
	/* a damaged sidecar is a data error */
	FILE *f = fopen(at("bad.schema.json"), "w");
	REQUIRE(f != NULL);
	fputs("{\"format\": 1}", f);
	fclose(f);
	const char *bad[] = {at("bad")};
	CHECK_STATUS(tf_schema_carry(s, bad, 1, at("o3"), -1), TF_EFORMAT, s);
	tf_schema_free(t);
	tf_schema_free(s);
}

/* A libsvm schema with an id vocabulary (text: the ids' differences as
 * varints, in base64) of count ids. */
static int
sparse_schema(struct tf_schema *s, const char *count, const char *text)
{
	char buf[1024];
	snprintf(buf, sizeof buf,
	         "{\"format\":\"tfkit-schema\",\"version\":1,\"layout\":"
	         "\"libsvm\",\"features\":[],\"sparse\":{\"ids\":\"ids\","
	         "\"values\":\"values\",\"max_index\":9223372036854775807,"
	         "\"max_ids\":3,\"id_count\":%s,\"id_vocab\":\"%s\"}}",
	         count, text);
	tf_errclear(s);
	return tf_schema_parse(s, buf, "v.json");
}

TEST(an_id_vocabulary_is_its_ids_differences_in_base64)
{
	/* (the text from Python's base64 of the varints) */
	const uint64_t ids[] = {0, 1, 127, 128, (uint64_t)1 << 63, UINT64_MAX};
	const char *text = "AAF+AYD/////////f///////////fw==";
	struct tfi_buf b = {0};
	REQUIRE(tfi_id_vocab_put(&b, ids, 6) == TF_OK);
	CHECK(strcmp((const char *)b.data, text) == 0);
	tfi_buf_free(&b);
	struct tf_schema *s = tf_schema_new();
	CHECK_STATUS(sparse_schema(s, "6", text), TF_OK, s);
	REQUIRE(s->id_count == 6);
	CHECK(memcmp(s->id_vocab, ids, sizeof ids) == 0);
	CHECK_STATUS(tf_schema_write(s, NULL), TF_OK, s);
	CHECK_CONTAINS(tf_schema_text(s),
	               "\"id_count\":6,\"id_vocab\":\"AAF+AYD/////////"
	               "f///////////fw==\"");
	/* what is not a vocabulary, and sizes the text does not hold */
	const struct {
		const char *count, *text, *why;
	} bad[] = {
	    {"6", "AAF+AYD*", "not base64 text"},
	    {"7", text, "fewer ids than id_count says"},
	    {"5", text, "more ids than id_count says"},
	    {"1099511627776", text, "does not hold as many ids"},
	    {"0", text, "does not hold as many ids"},
	    {"2", "BQA=", "not of ids in increasing order"},
	    {"2", "////////////AQE=", "not of ids in increasing order"},
	    {"2", "BYA=", "malformed varint"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct tf_schema *t = tf_schema_new();
		CHECK_STATUS(sparse_schema(t, bad[i].count, bad[i].text),
		             TF_EFORMAT, t);
		CHECK_CONTAINS(tf_errmsg(t), "v.json: sparse id_vocab ");
		CHECK_CONTAINS(tf_errmsg(t), bad[i].why);
		tf_schema_free(t);
	}
	tf_schema_free(s);
}

/* A table's out-of-vocabulary buckets: the vocabulary's ids keep their
 * rows, any other id hashes into the rows after them (all of them used,
 * the same each time), the model's schema says so and its copy maps ids
 * the same; not with hashed ids; a bad count is refused. */
TEST(ids_without_a_row_hash_into_out_of_vocabulary_buckets)
{
	const uint64_t ids[] = {0, 1, 127, 128, (uint64_t)1 << 63, UINT64_MAX};
	char buf[1024];
	snprintf(buf, sizeof buf,
	         "{\"format\":\"tfkit-schema\",\"version\":1,\"layout\":"
	         "\"libsvm\",\"label\":{\"name\":\"y\",\"type\":\"int64\","
	         "\"classes\":[0,1]},\"features\":[],\"sparse\":{\"ids\":"
	         "\"ids\",\"values\":\"values\",\"max_index\":"
	         "9223372036854775807,\"max_ids\":3,\"id_count\":6,"
	         "\"id_vocab\":\"AAF+AYD/////////f///////////fw==\"}}");
	struct tf_columns *c = tf_columns_new();
	CHECK_STATUS(tf_columns_set_oov(c, 3), TF_OK, c);
	CHECK_STATUS(tf_columns_parse_schema(c, buf, "m.json"), TF_OK, c);
	int64_t width, vocab;
	REQUIRE(tf_columns_bag(c, &width, &vocab));
	CHECK_EQ_INT(vocab, 9);
	CHECK_EQ_INT(tf_columns_bag_oov(c), 3);
	for (size_t i = 0; i < 6; i++) {
		CHECK_EQ_INT(tf_columns_bag_id(c, (int64_t)ids[i]), (int64_t)i);
	}
	long long per[3] = {0, 0, 0};
	for (int64_t id = 2; id < 3002; id++) { /* (none of the six) */
		int64_t r = tf_columns_bag_id(c, id * 1000003);
		REQUIRE(r >= 6 && r < 9);
		CHECK_EQ_INT(tf_columns_bag_id(c, id * 1000003), r);
		per[r - 6]++;
	}
	CHECK(per[0] > 800 && per[1] > 800 && per[2] > 800);
	const char *text = tf_columns_schema_text(c);
	CHECK_CONTAINS(text, "\"oov_buckets\":3}");
	/* the model's copy, read back: the same rows */
	struct tf_columns *m = tf_columns_new();
	CHECK_STATUS(tf_columns_parse_schema(m, text, "ck"), TF_OK, m);
	CHECK_EQ_INT(tf_columns_bag_oov(m), 3);
	for (int64_t id = 1000; id < 1100; id++) {
		CHECK_EQ_INT(tf_columns_bag_id(m, id),
		             tf_columns_bag_id(c, id));
	}
	tf_columns_free(m);
	tf_columns_free(c);
	/* hashed ids: every id has a row */
	c = tf_columns_new();
	CHECK_STATUS(tf_columns_set_sparse(c, 1, 1024), TF_OK, c);
	CHECK_STATUS(tf_columns_set_oov(c, 3), TF_OK, c);
	CHECK_STATUS(tf_columns_parse_schema(c, buf, "m.json"), TF_EINVAL, c);
	CHECK_CONTAINS(tf_errmsg(c), "m.json: out-of-vocabulary buckets and "
	                             "hash buckets");
	tf_columns_free(c);
	/* a count that is none */
	const char *bad[] = {"0", "-3", "2147483648", "\"3\"", "1.5"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char t[1200];
		snprintf(t, sizeof t, "%.*s,\"oov_buckets\":%s}}",
		         (int)(strlen(buf) - 2), buf, bad[i]);
		struct tf_schema *s = tf_schema_new();
		CHECK_STATUS(tf_schema_parse(s, t, "b.json"), TF_EFORMAT, s);
		CHECK_CONTAINS(tf_errmsg(s), "b.json: sparse oov_buckets is "
		                             "not an integer from 1 to");
		tf_schema_free(s);
	}
}

/* What a model's parameters stand for (the key the ps compares): the
 * same for schemas of other statistics, another for another id
 * vocabulary, other buckets, other features or classes. */
TEST(a_model_key_follows_what_its_parameters_stand_for)
{
	uint64_t a, b;
	struct tf_schema *s = tf_schema_new();
	CHECK_STATUS(sparse_schema(s, "6", "AAF+AYD/////////f///////////fw=="),
	             TF_OK, s);
	CHECK_STATUS(tf_schema_write(s, NULL), TF_OK, s);
	char *text = strdup(tf_schema_text(s));
	REQUIRE(text != NULL);
	tf_schema_free(s);
	REQUIRE(tfi_model_key(text, &a) == TF_OK);
	CHECK(a != 0);
	const struct {
		const char *from, *to;
		int same;
	} edits[] = {
	    {"\"rows\":0", "\"rows\":99", 1},
	    /* 0, 1, 127, 128, ... against 0, 2, 127, 128, ... */
	    {"AAF+AYD", "AAJ9AYD", 0},
	    {"\"max_ids\":3", "\"max_ids\":3,\"hash_buckets\":64", 0},
	    {"\"max_ids\":3", "\"max_ids\":3,\"oov_buckets\":4", 0},
	};
	for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
		const char *at = strstr(text, edits[i].from);
		REQUIRE(at != NULL);
		char t[2048];
		snprintf(t, sizeof t, "%.*s%s%s", (int)(at - text), text,
		         edits[i].to, at + strlen(edits[i].from));
		REQUIRE(tfi_model_key(t, &b) == TF_OK);
		CHECK_EQ_INT(a == b, edits[i].same);
	}
	/* features and classes: csv_schema's, its stats or its order */
	REQUIRE(tfi_model_key(csv_schema, &a) == TF_OK);
	char t[2048];
	snprintf(t, sizeof t, "%s", csv_schema);
	char *m = strstr(t, "\"mean\":2,");
	REQUIRE(m != NULL);
	m[7] = '3'; /* feature a's mean */
	REQUIRE(tfi_model_key(t, &b) == TF_OK);
	CHECK(a == b);
	snprintf(t, sizeof t, "%s", csv_schema);
	m = strstr(t, "\"classes\":[0,1]");
	REQUIRE(m != NULL);
	m[13] = '2'; /* classes 0 and 2 */
	REQUIRE(tfi_model_key(t, &b) == TF_OK);
	CHECK(a != b);
	snprintf(t, sizeof t, "%s", csv_schema);
	m = strstr(t, "{\"name\":\"a\"");
	REQUIRE(m != NULL);
	m[9] = 'c'; /* feature a is called c */
	REQUIRE(tfi_model_key(t, &b) == TF_OK);
	CHECK(a != b);
	CHECK(tfi_model_key("{", &b) == TF_EFORMAT);
	free(text);
}

/* The set a model looks its vocabulary's ids up in: every id of 2^64 a
 * member (0 and 2^64-1 too), numbered as added, through its growths. */
TEST(an_id_set_numbers_its_ids_as_added)
{
	struct tfi_idset s = {0};
	CHECK(tfi_idset_row(&s, 0) == -1);
	const uint64_t edge[] = {0, UINT64_MAX, (uint64_t)1 << 63, 1};
	for (size_t i = 0; i < 4; i++) {
		CHECK_EQ_INT(tfi_idset_add(&s, edge[i]), 1);
	}
	/* 100,000 more (the set grows from 1,024 slots), each once */
	for (uint64_t i = 0; i < 100000; i++) {
		CHECK_EQ_INT(tfi_idset_add(&s, i * 0x9e3779b97f4a7c15ull + 7),
		             1);
	}
	CHECK_EQ_INT(tfi_idset_add(&s, UINT64_MAX), 0);
	CHECK_EQ_INT(s.n, 100004);
	CHECK(3 * (uint64_t)s.n <= 2 * s.cap);
	CHECK_EQ_INT(tfi_idset_row(&s, UINT64_MAX), 1);
	CHECK_EQ_INT(tfi_idset_row(&s, 0), 0);
	CHECK_EQ_INT(tfi_idset_row(&s, 99999 * 0x9e3779b97f4a7c15ull + 7),
	             100003);
	CHECK(tfi_idset_row(&s, 2) == -1);
	uint64_t *ids = malloc(s.n * sizeof *ids);
	REQUIRE(ids != NULL);
	tfi_idset_ids(&s, ids);
	CHECK(ids[1] == UINT64_MAX && ids[4] == 7);
	free(ids);
	tfi_idset_free(&s);
	/* room made first: no growth, two thirds full at most */
	struct tfi_idset t = {0};
	CHECK_EQ_INT(tfi_idset_reserve(&t, 3000), 0);
	uint64_t cap = t.cap;
	for (uint64_t i = 0; i < 3000; i++) {
		tfi_idset_add(&t, i << 40);
	}
	CHECK(t.cap == cap && 3 * 3000 <= 2 * cap);
	CHECK_EQ_INT(tfi_idset_row(&t, (uint64_t)2999 << 40), 2999);
	tfi_idset_free(&t);
}

int
main(void)
{
	if (test_dir_make("tfkit-schema") != 0) {
		return 1;
	}
	RUN(parsed_once_and_encoded_back_the_same);
	RUN(what_is_not_a_schema_is_refused_naming_its_origin);
	RUN(sidecar_names_a_set_of_shards_once);
	RUN(carried_to_an_output_of_the_same_data);
	RUN(an_id_vocabulary_is_its_ids_differences_in_base64);
	RUN(an_id_set_numbers_its_ids_as_added);
	RUN(ids_without_a_row_hash_into_out_of_vocabulary_buckets);
	RUN(a_model_key_follows_what_its_parameters_stand_for);
	DONE();
}
