/* tf.train.Example: the vectors of FORMATS.md 2.4, packed and unpacked
 * lists, and agreement of the fast decoder and encoder with protobuf-c. */
#include "test.h"

static const char *EX53 =
    "0a 33 0a 0e 0a 05 6c 61 62 65 6c 12 05 1a 03 0a 01 01 0a 0e 0a 04 6e "
    "61 6d 65 12 06 0a 04 0a 02 61 62 0a 11 0a 01 78 12 0c 12 0a 0a 08 00 "
    "00 80 3f 00 00 20 c0";
static const char *EX52_UNPACKED =
    "0a 32 0a 0d 0a 05 6c 61 62 65 6c 12 04 1a 02 08 01 0a 0e 0a 04 6e 61 "
    "6d 65 12 06 0a 04 0a 02 61 62 0a 11 0a 01 78 12 0c 12 0a 0d 00 00 80 "
    "3f 0d 00 00 20 c0";
static const char *EX_NEG = "0a 15 0a 13 0a 01 6e 12 0e 1a 0c 0a 0a ff ff ff "
                            "ff ff ff ff ff ff 01";

typedef int (*parse_fn)(struct tf_example *, const void *, size_t);

static void
check_53_values(struct tf_example *ex)
{
	struct tf_feature f;
	REQUIRE(tf_example_count(ex) == 3);
	CHECK_STATUS(tf_example_find(ex, "label", &f), TF_OK, ex);
	CHECK(f.kind == TF_KIND_INT64 && f.count == 1 && f.ints[0] == 1);
	CHECK_STATUS(tf_example_find(ex, "name", &f), TF_OK, ex);
	CHECK(f.kind == TF_KIND_BYTES && f.count == 1 && f.bytes[0].len == 2 &&
	      memcmp(f.bytes[0].data, "ab", 2) == 0);
	CHECK_STATUS(tf_example_find(ex, "x", &f), TF_OK, ex);
	CHECK(f.kind == TF_KIND_FLOAT && f.count == 2 && f.floats[0] == 1.0f &&
	      f.floats[1] == -2.5f);
	CHECK_STATUS(tf_example_find(ex, "nope", &f), TF_ENOENT, ex);
}

TEST(encode_vector)
{
	struct tf_example *ex = tf_example_new();
	float x[] = {1.0f, -2.5f};
	int64_t one = 1;
	struct tf_bytes ab = {(const uint8_t *)"ab", 2};
	/* Added out of order: the encoding sorts by key. */
	tf_example_add_floats(ex, "x", x, 2);
	tf_example_add_bytes(ex, "name", &ab, 1);
	tf_example_add_int64s(ex, "label", &one, 1);
	unsigned char want[64];
	size_t n = unhex(EX53, want);
	const uint8_t *got;
	size_t len;
	CHECK_STATUS(tf_example_serialize(ex, &got, &len), TF_OK, ex);
	CHECK_EQ_INT(len, n);
	CHECK_MEM(got, want, n);
	/* protobuf-c produces the very same bytes. */
	uint8_t *pb;
	size_t pn;
	CHECK_STATUS(tf_example_serialize_pb(ex, &pb, &pn), TF_OK, ex);
	CHECK_EQ_INT(pn, n);
	CHECK_MEM(pb, want, n);
	free(pb);
	CHECK_STATUS(tf_example_add_floats(ex, "x", x, 1), TF_EINVAL, ex);
	tf_example_free(ex);
}

TEST(decode_vectors_both_decoders)
{
	parse_fn fns[] = {tf_example_parse, tf_example_parse_pb};
	unsigned char b[64];
	for (int i = 0; i < 2; i++) {
		struct tf_example *ex = tf_example_new();
		size_t n = unhex(EX53, b);
		CHECK_STATUS(fns[i](ex, b, n), TF_OK, ex);
		check_53_values(ex);
		n = unhex(EX52_UNPACKED, b);
		CHECK_STATUS(fns[i](ex, b, n), TF_OK, ex);
		check_53_values(ex);
		n = unhex(EX_NEG, b);
		CHECK_STATUS(fns[i](ex, b, n), TF_OK, ex);
		struct tf_feature f;
		CHECK_STATUS(tf_example_find(ex, "n", &f), TF_OK, ex);
		CHECK(f.count == 1 && f.ints[0] == -1);
		/* And the -1 re-encodes to the 10-byte varint. */
		const uint8_t *e;
		size_t en;
		CHECK_STATUS(tf_example_serialize(ex, &e, &en), TF_OK, ex);
		CHECK_EQ_INT(en, n);
		CHECK_MEM(e, b, n);
		CHECK_STATUS(fns[i](ex, "", 0), TF_OK, ex);
		CHECK_EQ_INT(tf_example_count(ex), 0);
		tf_example_free(ex);
	}
}

/* SequenceExamples as Python's protobuf writes them: the context's
 * features, each feature list one feature of its steps' values in order
 * (with its steps), both decoders alike; steps that disagree in kind or
 * width, and a name both a context feature and a list, refused. */
TEST(sequence_examples_both_decoders)
{
	static const char *seq =
	    "0a 0f 0a 0d 0a 04 75 73 65 72 12 05 1a 03 0a 01 07 12 42 0a 1d "
	    "0a 03 74 6f 6b 12 16 0a 05 0a 03 0a 01 61 0a 06 0a 04 0a 02 62 "
	    "63 0a 05 0a 03 0a 01 61 0a 21 0a 01 76 12 1c 0a 0c 12 0a 0a 08 "
	    "00 00 80 3f 00 00 00 40 0a 0c 12 0a 0a 08 00 00 40 40 00 00 80 "
	    "40";
	static const char *const bad[] = {
	    /* steps of 2 and 1 floats */
	    "12 1f 0a 1d 0a 01 76 12 18 0a 0c 12 0a 0a 08 00 00 80 3f 00 00 "
	    "00 40 0a 08 12 06 0a 04 00 00 40 40",
	    /* a float step, then an int64 one */
	    "12 18 0a 16 0a 01 76 12 11 0a 08 12 06 0a 04 00 00 80 3f 0a 05 "
	    "1a 03 0a 01 03",
	    /* v in the context and as a list */
	    "0a 0c 0a 0a 0a 01 76 12 05 1a 03 0a 01 01 12 11 0a 0f 0a 01 76 "
	    "12 0a 0a 08 12 06 0a 04 00 00 80 3f",
	};
	parse_fn fns[] = {tf_example_parse, tf_example_parse_pb};
	unsigned char b[128];
	for (int i = 0; i < 2; i++) {
		struct tf_example *ex = tf_example_new();
		size_t n = unhex(seq, b);
		CHECK_STATUS(fns[i](ex, b, n), TF_OK, ex);
		REQUIRE(tf_example_count(ex) == 3);
		struct tf_feature f;
		CHECK_STATUS(tf_example_find(ex, "user", &f), TF_OK, ex);
		CHECK(f.kind == TF_KIND_INT64 && f.count == 1 && f.steps == 0 &&
		      f.ints[0] == 7);
		CHECK_STATUS(tf_example_find(ex, "tok", &f), TF_OK, ex);
		CHECK(f.kind == TF_KIND_BYTES && f.count == 3 && f.steps == 3);
		CHECK(f.bytes[1].len == 2 &&
		      memcmp(f.bytes[1].data, "bc", 2) == 0);
		CHECK_STATUS(tf_example_find(ex, "v", &f), TF_OK, ex);
		CHECK(f.kind == TF_KIND_FLOAT && f.count == 4 && f.steps == 2 &&
		      f.floats[0] == 1.0f && f.floats[3] == 4.0f);
		for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
			n = unhex(bad[k], b);
			CHECK_STATUS(fns[i](ex, b, n), TF_EFORMAT, ex);
		}
		tf_example_free(ex);
	}
}

TEST(decoder_edge_cases)
{
	struct tf_example *ex = tf_example_new();
	unsigned char b[128];
	struct tf_feature f;
	/* Value before key, an unknown field (99 varint) in the entry. */
	size_t n =
	    unhex("0a 0f 0a 0d 12 05 1a 03 0a 01 07 98 06 05 0a 01 6b", b);
	CHECK_STATUS(tf_example_parse(ex, b, n), TF_OK, ex);
	CHECK_STATUS(tf_example_find(ex, "k", &f), TF_OK, ex);
	CHECK(f.kind == TF_KIND_INT64 && f.ints[0] == 7);
	/* A repeated key keeps the last entry. */
	n = unhex("0a 1d 0a 0d 0a 01 6b 12 08 12 06 0a 04 00 00 00 00 "
	          "0a 0c 0a 01 6b 12 07 1a 05 0a 03 05 06 07",
	          b);
	CHECK_STATUS(tf_example_parse(ex, b, n), TF_OK, ex);
	CHECK_EQ_INT(tf_example_count(ex), 1);
	CHECK_STATUS(tf_example_find(ex, "k", &f), TF_OK, ex);
	CHECK(f.kind == TF_KIND_INT64 && f.count == 3 && f.ints[2] == 7);
	/* Missing value: a Feature with no kind. */
	n = unhex("0a 05 0a 03 0a 01 6b", b);
	CHECK_STATUS(tf_example_parse(ex, b, n), TF_OK, ex);
	CHECK_STATUS(tf_example_find(ex, "k", &f), TF_OK, ex);
	CHECK_EQ_INT(f.kind, TF_KIND_NONE);
	/* Malformed: lengths past the end, packed floats of 3 bytes,
	 * truncated varint.  Both decoders refuse each. */
	const char *bad[] = {"0a 33 0a", "0a 09 0a 07 0a 01 6b 12 02 12 09",
	                     "0a 0b 0a 09 0a 01 6b 12 04 12 02 0a 03",
	                     "0a 08 0a 06 0a 01 6b 12 01 1a", "08 ff ff"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		n = unhex(bad[i], b);
		if (tf_example_parse(ex, b, n) != TF_EFORMAT) {
			FAILF("fast decoder accepted bad input %zu", i);
		}
		CHECK_CONTAINS(tf_errmsg(ex), "malformed Example");
		if (tf_example_parse_pb(ex, b, n) != TF_EFORMAT) {
			FAILF("protobuf-c accepted bad input %zu", i);
		}
	}
	/* Packed int64 lists: varints of 1, 2, 6 and 10 bytes (1, 300,
	 * 2^35, -1); two packed runs in one list joined; a packed run
	 * ending in a varint cut short refused.  Both decoders agree. */
	const char *packed[] = {
	    "0a 1e 0a 1c 0a 01 6b 12 17 1a 15 0a 13 01 ac 02 80 80 80 80 80 "
	    "01 ff ff ff ff ff ff ff ff ff 01",
	    "0a 10 0a 0e 0a 01 6b 12 09 1a 07 0a 01 07 0a 02 ac 02"};
	const int64_t want_packed[2][4] = {{1, 300, INT64_C(1) << 35, -1},
	                                   {7, 300}};
	for (int i = 0; i < 2; i++) {
		for (int pb = 0; pb < 2; pb++) {
			n = unhex(packed[i], b);
			CHECK_STATUS(pb ? tf_example_parse_pb(ex, b, n)
			                : tf_example_parse(ex, b, n),
			             TF_OK, ex);
			CHECK_STATUS(tf_example_find(ex, "k", &f), TF_OK, ex);
			CHECK(f.kind == TF_KIND_INT64 &&
			      f.count == (i == 0 ? 4u : 2u));
			for (size_t j = 0; j < f.count; j++) {
				CHECK(f.ints[j] == want_packed[i][j]);
			}
		}
	}
	n = unhex("0a 0e 0a 0c 0a 01 6b 12 07 1a 05 0a 03 05 86 80", b);
	CHECK_STATUS(tf_example_parse(ex, b, n), TF_EFORMAT, ex);
	CHECK_CONTAINS(tf_errmsg(ex), "truncated packed varint");
	CHECK_STATUS(tf_example_parse_pb(ex, b, n), TF_EFORMAT, ex);
	/* Found by fuzz_example's cross-check: a tenth varint byte above 1
	 * (its bits past 64 dropped, as protobuf-c and C++ drop them), and
	 * a tag read as protobuf-c reads one (a 6-byte tag refused, field
	 * number 0 refused).  Both decoders agree on each. */
	n = unhex("0a 15 0a 13 0a 01 6e 12 0e 1a 0c 0a 0a ff ff ff ff ff ff "
	          "ff ff ff 3e",
	          b);
	CHECK_STATUS(tf_example_parse(ex, b, n), TF_OK, ex);
	CHECK_STATUS(tf_example_find(ex, "n", &f), TF_OK, ex);
	CHECK(f.kind == TF_KIND_INT64 && f.count == 1 &&
	      f.ints[0] == INT64_MAX);
	CHECK_STATUS(tf_example_parse_pb(ex, b, n), TF_OK, ex);
	const char *tags[] = {"88 80 80 80 80 00 01", "07 01"};
	for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++) {
		n = unhex(tags[i], b);
		CHECK_STATUS(tf_example_parse(ex, b, n), TF_EFORMAT, ex);
		CHECK_STATUS(tf_example_parse_pb(ex, b, n), TF_EFORMAT, ex);
	}
	/* A value twice in one entry, a list twice in one feature: C++
	 * protobuf merges them, protobuf-c does not, so the fast decoder
	 * refuses both rather than pick one. */
	n = unhex("0a 13 0a 11 0a 01 78 12 06 12 04 0a 02 00 00 12 04 12 02 "
	          "0a 00",
	          b);
	CHECK_STATUS(tf_example_parse(ex, b, n), TF_EFORMAT, ex);
	CHECK_CONTAINS(tf_errmsg(ex), "gives its value twice");
	n = unhex("0a 0f 0a 0d 0a 01 78 12 08 1a 02 0a 00 1a 02 0a 00", b);
	CHECK_STATUS(tf_example_parse(ex, b, n), TF_EFORMAT, ex);
	CHECK_CONTAINS(tf_errmsg(ex), "gives its list twice");
	/* Another kind replaces the list, in both. */
	n = unhex("0a 11 0a 0f 0a 01 78 12 0a 1a 03 0a 01 05 0a 03 0a 01 61",
	          b);
	CHECK_STATUS(tf_example_parse(ex, b, n), TF_OK, ex);
	CHECK_STATUS(tf_example_find(ex, "x", &f), TF_OK, ex);
	CHECK(f.kind == TF_KIND_BYTES && f.count == 1);
	CHECK_STATUS(tf_example_parse_pb(ex, b, n), TF_OK, ex);
	CHECK_STATUS(tf_example_find(ex, "x", &f), TF_OK, ex);
	CHECK(f.kind == TF_KIND_BYTES && f.count == 1);
	tf_example_free(ex);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Two examples hold the same features and values. */
static int
same(struct tf_example *a, struct tf_example *b)
{
	if (tf_example_count(a) != tf_example_count(b)) {
		return 0;
	}
	for (size_t i = 0; i < tf_example_count(a); i++) {
		struct tf_feature x, y;
		tf_example_get(a, i, &x);
		tf_example_get(b, i, &y);
		if (strcmp(x.name, y.name) != 0 || x.kind != y.kind ||
		    x.count != y.count) {
			return 0;
		}
		for (size_t k = 0; k < x.count; k++) {
			if ((x.kind == TF_KIND_FLOAT &&
			     memcmp(&x.floats[k], &y.floats[k], 4) != 0) ||
			    (x.kind == TF_KIND_INT64 &&
			     x.ints[k] != y.ints[k]) ||
			    (x.kind == TF_KIND_BYTES &&
			     (x.bytes[k].len != y.bytes[k].len ||
			      memcmp(x.bytes[k].data, y.bytes[k].data,
			             x.bytes[k].len) != 0))) {
				return 0;
			}
		}
	}
	return 1;
}

TEST(random_examples_agree_with_protobuf_c)
{
	struct tf_example *ex = tf_example_new(), *a = tf_example_new(),
	                  *b = tf_example_new();
	for (int it = 0; it < 2000; it++) {
		tf_example_clear(ex);
		int nf = (int)(rnd() % 12);
		for (int i = 0; i < nf; i++) {
			char name[32];
			snprintf(name, sizeof name, "f%d_%d", i,
			         (int)(rnd() % 1000));
			size_t n = rnd() % 40;
			float fv[40];
			int64_t iv[40];
			struct tf_bytes bv[40];
			char text[40][8];
			for (size_t k = 0; k < n; k++) {
				uint32_t u = (uint32_t)rnd();
				memcpy(&fv[k], &u, 4);
				iv[k] = (int64_t)rnd() >> (rnd() % 64);
				snprintf(text[k], 8, "%x", (unsigned)rnd());
				bv[k].data = (const uint8_t *)text[k];
				bv[k].len = strlen(text[k]);
			}
			switch (rnd() % 3) {
			case 0:
				tf_example_add_floats(ex, name, fv, n);
				break;
			case 1:
				tf_example_add_int64s(ex, name, iv, n);
				break;
			default:
				tf_example_add_bytes(ex, name, bv, n);
			}
		}
		const uint8_t *enc;
		size_t en;
		uint8_t *pb;
		size_t pn;
		REQUIRE(tf_example_serialize(ex, &enc, &en) == TF_OK);
		REQUIRE(tf_example_serialize_pb(ex, &pb, &pn) == TF_OK);
		if (en != pn || memcmp(enc, pb, en) != 0) {
			FAILF("iteration %d: encoders differ (%zu, %zu bytes)",
			      it, en, pn);
			for (size_t k = 0; k < en && k < pn; k++) {
				if (enc[k] != pb[k]) {
					FAILF("first difference at %zu: %02x "
					      "%02x",
					      k, enc[k], pb[k]);
					break;
				}
			}
			free(pb);
			break;
		}
		CHECK_STATUS(tf_example_parse(a, enc, en), TF_OK, a);
		CHECK_STATUS(tf_example_parse_pb(b, enc, en), TF_OK, b);
		free(pb);
		if (!same(a, b)) {
			FAILF("iteration %d: decoders differ", it);
			break;
		}
	}
	tf_example_free(ex);
	tf_example_free(a);
	tf_example_free(b);
}

TEST(json)
{
	struct tf_example *ex = tf_example_new();
	float x[] = {0.1f, 3.0f, NAN, -INFINITY};
	int64_t i = -5;
	struct tf_bytes s[] = {{(const uint8_t *)"a\"b\n", 4},
	                       {(const uint8_t *)"\xff\x00", 2}};
	tf_example_add_floats(ex, "x", x, 4);
	tf_example_add_int64s(ex, "i", &i, 1);
	tf_example_add_bytes(ex, "s", s, 2);
	char *out = NULL;
	size_t len = 0, cap = 0;
	CHECK_STATUS(tf_example_to_json(ex, &out, &len, &cap), TF_OK, ex);
	/* Insertion order here (a parsed example is sorted). */
	CHECK(strcmp(out, "{\"x\":[0.1,3,NaN,-Infinity],\"i\":[-5],"
	                  "\"s\":[\"a\\\"b\\n\",{\"b64\":\"/wA=\"}]}") == 0);
	if (strcmp(out, "{\"x\":[0.1,3,NaN,-Infinity],\"i\":[-5],"
	                "\"s\":[\"a\\\"b\\n\",{\"b64\":\"/wA=\"}]}") != 0) {
		printf("# got %s\n", out);
	}
	free(out);
	char buf[32];
	tf_format_float(buf, sizeof buf, 16777217.0f);
	CHECK(strtof(buf, NULL) == 16777217.0f);
	tf_format_float(buf, sizeof buf, 0.3f);
	CHECK(strcmp(buf, "0.3") == 0);
	tf_example_free(ex);
}

/* Empty lists (a float list of no values, packed or not; an empty int64
 * and bytes list) parse, read back as no values, and encode again: the
 * buffers behind them are still empty, which once meant arithmetic on a
 * null pointer (clang's UBSan in the fuzz target found it; its input is
 * tests/fuzz/corpus/example/empty-float-list-ubsan). */
TEST(empty_lists)
{
	/* "a": float_list {} packed, "b": int64_list {}, "c": bytes_list {},
	 * "d": float_list with an empty packed field */
	static const uint8_t rec[] = {
	    0x0a, 0x26, 0x0a, 0x07, 0x0a, 0x01, 'a',  0x12, 0x02, 0x12,
	    0x00, 0x0a, 0x07, 0x0a, 0x01, 'b',  0x12, 0x02, 0x1a, 0x00,
	    0x0a, 0x07, 0x0a, 0x01, 'c',  0x12, 0x02, 0x0a, 0x00, 0x0a,
	    0x09, 0x0a, 0x01, 'd',  0x12, 0x04, 0x12, 0x02, 0x0a, 0x00};
	struct tf_example *ex = tf_example_new();
	REQUIRE(ex != NULL);
	REQUIRE(tf_example_parse(ex, rec, sizeof rec) == TF_OK);
	CHECK_EQ_INT(tf_example_count(ex), 4);
	for (size_t i = 0; i < tf_example_count(ex); i++) {
		struct tf_feature f;
		CHECK(tf_example_get(ex, i, &f) == TF_OK);
		CHECK_EQ_INT(f.count, 0);
	}
	const uint8_t *out;
	size_t n;
	CHECK(tf_example_serialize(ex, &out, &n) == TF_OK);
	struct tf_example *back = tf_example_new();
	REQUIRE(back != NULL);
	CHECK(tf_example_parse(back, out, n) == TF_OK);
	CHECK_EQ_INT(tf_example_count(back), 4);
	tf_example_free(back);
	tf_example_free(ex);
}

int
main(void)
{
	RUN(encode_vector);
	RUN(decode_vectors_both_decoders);
	RUN(sequence_examples_both_decoders);
	RUN(decoder_edge_cases);
	RUN(random_examples_agree_with_protobuf_c);
	RUN(json);
	RUN(empty_lists);
	DONE();
}
