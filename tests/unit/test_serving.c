/*
 * test_serving.c - numbers as TF Serving prints them, the SHA-256 that
 * export manifests hold, and :predict bodies read without jansson exactly
 * as jansson reads them, and gRPC's messages (serving_pb.c) answered as
 * the REST bodies of the same rows are.
 */
#include <math.h>
#include <string.h>

#include "tensorflow_serving/apis/get_model_status.pb-c.h"
#include "tensorflow_serving/apis/predict.pb-c.h"
#include "test.h"

#define CHECK_STR(a, b) CHECK_CONTAINS_EXACT(a, b)
#define CHECK_CONTAINS_EXACT(a, b)                                             \
	do {                                                                   \
		if (strcmp((a), (b)) != 0) {                                   \
			FAILF("'%s', expected '%s'", (a), (b));                \
		}                                                              \
	} while (0)

static const char *
fmt(float v)
{
	static char buf[64];
	tf_format_serving_float(buf, sizeof buf, v);
	return buf;
}

TEST(floats_print_like_tf_serving)
{
	/* 6 significant digits when they read back the same, else 9; ".0"
	 * on whole numbers; exponents left alone. */
	CHECK_STR(fmt(3.0f), "3.0");
	CHECK_STR(fmt(-2.0f), "-2.0");
	CHECK_STR(fmt(0.5f), "0.5");
	CHECK_STR(fmt(0.1f), "0.1");
	CHECK_STR(fmt(9e6f), "9e+06");
	CHECK_STR(fmt(1e-7f), "1e-07");
	CHECK_STR(fmt(0.123456789f), "0.123456791");
	CHECK_STR(fmt(NAN), "NaN");
	CHECK_STR(fmt(INFINITY), "Infinity");
	CHECK_STR(fmt(-INFINITY), "-Infinity");
	/* every printed value reads back to the same float */
	float v = 1.0f;
	for (int i = 0; i < 2000; i++) {
		v = nextafterf(v * 1.37f, 0.0f);
		CHECK(strtof(fmt(v), NULL) == v);
		CHECK(strtof(fmt(-1.0f / v), NULL) == -1.0f / v);
	}
}

TEST(sha256_of_the_standard_vectors)
{
	char hex[65];
	tf_sha256_hex("", 0, hex);
	CHECK_STR(
	    hex,
	    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	tf_sha256_hex("abc", 3, hex);
	CHECK_STR(
	    hex,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *two =
	    "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	tf_sha256_hex(two, strlen(two), hex);
	CHECK_STR(
	    hex,
	    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(urls_route_as_tf_serving_reads_them)
{
	struct tf_route r;
	tf_serving_route("GET", "/healthz", &r);
	CHECK_EQ_INT(r.kind, TF_ROUTE_HEALTH);
	tf_serving_route("POST", "/healthz", &r);
	CHECK(r.kind == TF_ROUTE_ERROR && r.status == 404 && r.plain);
	tf_serving_route("GET", "/v1/models/cancer", &r);
	CHECK(r.kind == TF_ROUTE_STATUS && r.version == -1);
	CHECK(r.model_len == 6 && strncmp(r.model, "cancer", 6) == 0);
	tf_serving_route("POST", "/v1/models/cancer/versions/007:predict", &r);
	CHECK(r.kind == TF_ROUTE_PREDICT && r.version == 7);
	tf_serving_route("GET", "/v1/models/c/versions/2/METADATA", &r);
	CHECK(r.kind == TF_ROUTE_METADATA && r.version == 2);
	tf_serving_route("POST", "/v1/models/c:regress", &r);
	CHECK_EQ_INT(r.kind, TF_ROUTE_REGRESS);
	tf_serving_route("GET", "/v1/models/c:predict", &r);
	CHECK(r.kind == TF_ROUTE_ERROR && r.status == 400 && !r.plain);
	CHECK_STR(r.message, "Malformed request: GET /v1/models/c:predict");
	tf_serving_route("GET", "/v1/models/", &r);
	CHECK_STR(r.message, "Missing model name in request.");
	tf_serving_route("GET", "/v1/models/c/versions/x", &r);
	CHECK(r.kind == TF_ROUTE_ERROR && r.status == 400);
	tf_serving_route("GET", "/v1/models/c/labels/stable", &r);
	CHECK(r.kind == TF_ROUTE_ERROR && r.status == 404);
	CHECK_CONTAINS(r.message, "Unrecognized servable version label: "
	                          "stable");
	char nf[128];
	tf_serving_not_found(nf, sizeof nf, "cancer", 6, -1);
	CHECK_STR(nf, "Servable not found for request: Latest(cancer)");
	tf_serving_not_found(nf, sizeof nf, "cancer", 6, 3);
	CHECK_STR(nf, "Servable not found for request: Specific(cancer, 3)");
	char *body = tf_serving_error_body("a \"quoted\" \xff word");
	CHECK_STR(body, "{ \"error\": \"a \\\"quoted\\\" ? word\" }");
	free(body);
}

/* The usual body's scan and jansson agree: the same rows, bit for bit,
 * or the same error, whatever the numbers, spacing and shape. */
/* tests/fuzz/model's export, and a request that scans beside one that
 * reads every body through jansson: 1 when all is set up. */
static int
scan_and_jansson(struct tf_registry *reg, struct tf_model *m,
                 struct tf_request *q[2])
{
	if (!reg || !m || !q[0] || !q[1] || tf_registry_load(reg) != TF_OK ||
	    tf_model_load(m, reg, "tests/fuzz/model") != TF_OK) {
		return 0;
	}
	tfi_request_no_quick(q[1], 1);
	return 1;
}

TEST(predict_bodies_read_as_jansson_reads_them)
{
	static const char *bodies[] = {
	    "{\"instances\":[[1,2,3]]}",
	    " {\n\t\"instances\" : [ [ 1.5 , -2 , 3e2 ] ,[0,-0,0.0] ] }\r\n",
	    "{\"instances\":[[1e-3,-0.5E-2,1E+2],[123456789,3.4028235e38,"
	    "1e-320]]}",
	    "{\"instances\":[[0.1,0.2,0.30000000000000004]]}",
	    "{\"instances\":[[1.17549435e-38,1.4e-45,3.5e38]]}",
	    "{\"instances\":[[123.456,-9007199254740993,1e22]]}",
	    "{\"instances\":[[1e23,0.000001234,-1234567890.12345]]}",
	    "{\"instances\":[[2.2250738585072014e-308,9007199254740992,"
	    "0.1e1]]}",
	    "{\"instances\":[[12345678901234567890,2,3]]}",
	    "{\"instances\":[[123456789012345678,2,3]]}",
	    "{\"instances\":[[1e400,2,3]]}",
	    "{\"instances\":[[01,2,3]]}",
	    "{\"instances\":[[1.,2,3]]}",
	    "{\"instances\":[[.5,2,3]]}",
	    "{\"instances\":[[+1,2,3]]}",
	    "{\"instances\":[[1,2]]}",
	    "{\"instances\":[[1,2,3,4]]}",
	    "{\"instances\":[[1,2,3],]}",
	    "{\"instances\":[[1,2,3]],}",
	    "{\"instances\":[]}",
	    "{\"instances\":[[1,2,3]]} x",
	    "{\"instances\":[[1,2,3]]",
	    "{\"instances\":[[true,2,3]]}",
	    "{\"instances\":[[\"1\",2,3]]}",
	    "{\"instances\":[[[1],2,3]]}",
	    "{\"instances\":[[NaN,2,3]]}",
	    "{\"instances\":[[1,2,3]],\"signature_name\":\"serving_default\"}",
	    "{\"signature_name\":\"x\",\"instances\":[[1,2,3]]}",
	    "{\"instances\":[{\"a\":1,\"b\":2,\"c\":3}]}",
	    "{\"instances\":[[1,2,3]],\"instances\":[[4,5,6]]}",
	    "{\"instances\":[[1,2,3],[4,5,6],[7,8,9],[1,1,1],[2,2,2]]}",
	    "{\"instances\":[[1,2,3]\u00a0]}",
	    "{\"instances\":[[1,2,3e]]}",
	    "{\"instances\":[[1,2,-]]}",
	    "",
	};
	struct tf_registry *reg = tf_registry_new();
	struct tf_model *m = tf_model_new();
	struct tf_request *q[2] = {tf_request_new(), tf_request_new()};
	REQUIRE(scan_and_jansson(reg, m, q));
	int ok = 0;
	for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
		int rc[2];
		for (int k = 0; k < 2; k++) {
			rc[k] =
			    tf_request_parse(q[k], m, TF_METHOD_PREDICT,
			                     bodies[i], strlen(bodies[i]), 4);
		}
		if (rc[0] != rc[1]) {
			FAILF("body %zu: %d against jansson's %d (%s)", i,
			      rc[0], rc[1], tf_errmsg(q[1]));
			continue;
		}
		if (rc[0] != TF_OK) {
			CHECK(strcmp(tf_errmsg(q[0]), tf_errmsg(q[1])) == 0);
			continue;
		}
		ok++;
		const struct tf_batch *a = tf_request_batch(q[0]);
		const struct tf_batch *b = tf_request_batch(q[1]);
		CHECK_EQ_INT(a->rows, b->rows);
		CHECK_MEM(a->x, b->x,
		          a->rows * (size_t)a->width * sizeof(float));
	}
	CHECK_EQ_INT(ok, 12); /* the valid ones; the rest, errors */
	/* the scan read the plain ones (0, 1, 3-7, 9), jansson the others
	 * (2 holds an underflow, which strtod flags and jansson takes) */
	CHECK_EQ_INT(tfi_request_quick_hits(q[0]), 8);
	CHECK_EQ_INT(tfi_request_quick_hits(q[1]), 0);
	tf_request_free(q[0]);
	tf_request_free(q[1]);
	tf_model_free(m);
	tf_registry_free(reg);
}

/* A PredictRequest of the fixture model (inputs a, b, c) for rows. */
static size_t
predict_request(uint8_t *buf, const float (*rows)[3], size_t n, int content,
                const char *signature)
{
	static const char *const names[] = {"a", "b", "c"};
	Tensorflow__TensorProto t[3];
	Tensorflow__TensorShapeProto sh[3];
	Tensorflow__TensorShapeProto__Dim dim[3], *dp[3];
	Tensorflow__Serving__PredictRequest__InputsEntry e[3], *ep[3];
	float col[3][8];
	for (int k = 0; k < 3; k++) {
		for (size_t r = 0; r < n; r++) {
			col[k][r] = rows[r][k];
		}
		tensorflow__tensor_proto__init(&t[k]);
		tensorflow__tensor_shape_proto__init(&sh[k]);
		tensorflow__tensor_shape_proto__dim__init(&dim[k]);
		dim[k].size = (int64_t)n;
		dp[k] = &dim[k];
		sh[k].n_dim = 1;
		sh[k].dim = &dp[k];
		t[k].tensor_shape = &sh[k];
		t[k].dtype = TENSORFLOW__DATA_TYPE__DT_FLOAT;
		if (content) {
			t[k].tensor_content.data = (uint8_t *)col[k];
			t[k].tensor_content.len = n * sizeof(float);
		} else {
			t[k].n_float_val = n;
			t[k].float_val = col[k];
		}
		tensorflow__serving__predict_request__inputs_entry__init(&e[k]);
		e[k].key = (char *)names[k];
		e[k].value = &t[k];
		ep[k] = &e[k];
	}
	Tensorflow__Serving__ModelSpec spec =
	    TENSORFLOW__SERVING__MODEL_SPEC__INIT;
	spec.name = "m";
	spec.signature_name = (char *)signature;
	Tensorflow__Serving__PredictRequest req =
	    TENSORFLOW__SERVING__PREDICT_REQUEST__INIT;
	req.model_spec = &spec;
	req.n_inputs = 3;
	req.inputs = ep;
	return tensorflow__serving__predict_request__pack(&req, buf);
}

TEST(grpc_predict_answers_as_rest_does)
{
	struct tf_registry *reg = tf_registry_new();
	struct tf_model *m = tf_model_new();
	REQUIRE(reg && m && tf_registry_load(reg) == TF_OK);
	REQUIRE(tf_model_load(m, reg, "tests/fuzz/model") == TF_OK);
	struct tf_request *q = tf_request_new(), *j = tf_request_new();
	REQUIRE(q && j);
	static const float rows[2][3] = {{0.5f, -1.25f, 3}, {2, 0.125f, -7}};
	const char *body = "{\"instances\":[[0.5,-1.25,3],[2,0.125,-7]]}";
	REQUIRE(tf_request_parse(j, m, TF_METHOD_PREDICT, body, strlen(body),
	                         0) == TF_OK);
	REQUIRE(tf_request_predict(j, m) == TF_OK);
	const float *want = tf_request_outputs(j);
	uint8_t buf[1024];
	for (int content = 0; content < 2; content++) {
		size_t len = predict_request(buf, rows, 2, content, "");
		struct tf_model_spec spec;
		uint64_t h = tfi_request_quick_hits(q);
		CHECK_EQ_INT(
		    tf_request_decode_pb(q, TF_METHOD_PREDICT, buf, len, &spec),
		    TF_OK);
		CHECK_EQ_INT(tfi_request_quick_hits(q), h + 1);
		CHECK(strcmp(spec.name, "m") == 0 && spec.version == -1);
		CHECK_EQ_INT(tf_request_parse_pb(q, m, 0), TF_OK);
		CHECK_EQ_INT(tf_request_rows(q), 2);
		CHECK_MEM(tf_request_batch(q)->x, tf_request_batch(j)->x,
		          6 * sizeof(float));
		REQUIRE(tf_request_predict(q, m) == TF_OK);
		const void *out;
		size_t olen;
		REQUIRE(tf_request_respond_pb(q, m, "m", 3, &out, &olen) ==
		        TF_OK);
		Tensorflow__Serving__PredictResponse *r =
		    tensorflow__serving__predict_response__unpack(NULL, olen,
		                                                  out);
		REQUIRE(r != NULL);
		CHECK(r->model_spec && r->model_spec->version &&
		      r->model_spec->version->value == 3);
		int seen = 0;
		for (size_t i = 0; i < r->n_outputs; i++) {
			const Tensorflow__TensorProto *t = r->outputs[i]->value;
			if (strcmp(r->outputs[i]->key, "probabilities") == 0) {
				CHECK_EQ_INT(t->n_float_val, 4);
				CHECK_MEM(t->float_val, want,
				          4 * sizeof(float));
				CHECK(t->tensor_shape->n_dim == 2 &&
				      t->tensor_shape->dim[1]->size == 2);
				seen++;
			} else if (strcmp(r->outputs[i]->key, "class_ids") ==
			           0) {
				CHECK_EQ_INT(t->n_int64_val, 2);
				CHECK_EQ_INT(t->int64_val[0],
				             want[1] > want[0]);
				seen++;
			} else if (strcmp(r->outputs[i]->key, "classes") == 0) {
				CHECK_EQ_INT(t->n_string_val, 2);
				seen++;
			}
		}
		CHECK_EQ_INT(seen, 3);
		tensorflow__serving__predict_response__free_unpacked(r, NULL);
	}
	/* the quick reader and protobuf-c agree on every prefix and on
	 * thousands of mutations of a request: the same rows, or the same
	 * error */
	struct tf_request *slow = tf_request_new();
	REQUIRE(slow != NULL);
	tfi_request_no_quick(slow, 1);
	size_t full = predict_request(buf, rows, 2, 0, "serving_default");
	uint64_t hits0 = tfi_request_quick_hits(q);
	unsigned seed = 7;
	for (int trial = 0; trial < 4000; trial++) {
		uint8_t mut[1024];
		size_t n = full;
		memcpy(mut, buf, full);
		if (trial < (int)full) {
			n = (size_t)trial;
		} else {
			for (int k = 0; k < 1 + trial % 3; k++) {
				seed = seed * 1103515245u + 12345u;
				mut[(seed >> 8) % full] = (uint8_t)(seed >> 20);
			}
		}
		struct tf_model_spec s1, s2;
		int r1 =
		    tf_request_decode_pb(q, TF_METHOD_PREDICT, mut, n, &s1);
		int r2 =
		    tf_request_decode_pb(slow, TF_METHOD_PREDICT, mut, n, &s2);
		r1 = r1 ? r1 : tf_request_parse_pb(q, m, 0);
		r2 = r2 ? r2 : tf_request_parse_pb(slow, m, 0);
		if (r1 != r2 || (r1 && strcmp(tf_errmsg(q), tf_errmsg(slow)))) {
			FAILF("trial %d: %d '%s' against protobuf-c's %d '%s'",
			      trial, r1, tf_errmsg(q), r2, tf_errmsg(slow));
			break;
		}
		if (r1 == TF_OK) {
			CHECK(strcmp(s1.name, s2.name) == 0 &&
			      s1.version == s2.version);
			CHECK_EQ_INT(tf_request_rows(q), tf_request_rows(slow));
			CHECK(memcmp(tf_request_batch(q)->x,
			             tf_request_batch(slow)->x,
			             tf_request_rows(q) * 3 * sizeof(float)) ==
			      0);
		}
	}
	/* the well-formed ones went the quick way (a few hundred: most
	 * mutations break the framing, and both readers refuse them) */
	CHECK(tfi_request_quick_hits(q) - hits0 > 100);
	CHECK_EQ_INT(tfi_request_quick_hits(slow), 0);
	tf_request_free(slow);
	/* every prefix of a request: decoded and read, or refused with a
	 * message; never anything else */
	size_t len = predict_request(buf, rows, 2, 1, "serving_default");
	int refused = 0;
	for (size_t n = 0; n < len; n++) {
		struct tf_model_spec spec;
		int rc =
		    tf_request_decode_pb(q, TF_METHOD_PREDICT, buf, n, &spec);
		rc = rc ? rc : tf_request_parse_pb(q, m, 0);
		CHECK(rc == TF_OK || (rc == TF_EINVAL && *tf_errmsg(q)));
		refused += rc != TF_OK;
	}
	CHECK(refused == (int)len); /* a prefix lacks an input or a value */
	/* another signature is TF Serving's error */
	len = predict_request(buf, rows, 2, 0, "classify_x");
	struct tf_model_spec spec;
	REQUIRE(tf_request_decode_pb(q, TF_METHOD_PREDICT, buf, len, &spec) ==
	        TF_OK);
	CHECK_EQ_INT(tf_request_parse_pb(q, m, 0), TF_EINVAL);
	CHECK(strstr(tf_errmsg(q), "\"classify_x\" not found") != NULL);
	/* more rows than the limit */
	len = predict_request(buf, rows, 2, 0, "");
	REQUIRE(tf_request_decode_pb(q, TF_METHOD_PREDICT, buf, len, &spec) ==
	        TF_OK);
	CHECK_EQ_INT(tf_request_parse_pb(q, m, 1), TF_EINVAL);
	tf_request_free(q);
	tf_request_free(j);
	tf_model_free(m);
	tf_registry_free(reg);
}

TEST(grpc_model_status_names_states_and_codes)
{
	struct tf_request *q = tf_request_new();
	REQUIRE(q != NULL);
	const struct tf_version_state v[] = {
	    {3, "AVAILABLE", "OK", ""},
	    {2, "END", "DATA_LOSS", "variables.bin: sha256 mismatch"},
	};
	const void *out;
	size_t len;
	REQUIRE(tf_serving_status_pb(q, v, 2, &out, &len) == TF_OK);
	Tensorflow__Serving__GetModelStatusResponse *r =
	    tensorflow__serving__get_model_status_response__unpack(NULL, len,
	                                                           out);
	REQUIRE(r != NULL && r->n_model_version_status == 2);
	CHECK_EQ_INT(r->model_version_status[0]->version, 3);
	CHECK_EQ_INT(r->model_version_status[0]->state, 30);
	CHECK_EQ_INT(r->model_version_status[1]->state, 50);
	CHECK_EQ_INT(r->model_version_status[1]->status->error_code, 15);
	CHECK(strcmp(r->model_version_status[1]->status->error_message,
	             "variables.bin: sha256 mismatch") == 0);
	tensorflow__serving__get_model_status_response__free_unpacked(r, NULL);
	CHECK_EQ_INT(tf_serving_code("NOT_FOUND"), 5);
	CHECK_EQ_INT(tf_serving_code("no such code"), 13);
	tf_request_free(q);
}

/* The records of a :train body: the Examples by name, one JSON text a
 * record, "" when refused. */
static void
train_records(struct tf_request *q, struct tf_model *m, const char *body,
              char *out, size_t size)
{
	const uint8_t *rec;
	size_t bytes, n;
	out[0] = '\0';
	if (tf_request_train(q, m, body, strlen(body), 64, &rec, &bytes, &n) !=
	    TF_OK) {
		return;
	}
	struct tf_reader *r = tf_reader_new();
	struct tf_example *ex = tf_example_new();
	const uint8_t *d;
	size_t len, at = 0;
	tf_reader_open_mem(r, rec, bytes, "train", TF_COMPRESS_NONE);
	while (tf_reader_next(r, &d, &len) == TF_OK &&
	       tf_example_parse(ex, d, len) == TF_OK) {
		char *j = NULL;
		size_t jl = 0, cap = 0;
		if (tf_example_to_json(ex, &j, &jl, &cap) == TF_OK) {
			at += (size_t)snprintf(out + at, size - at, "%s\n", j);
			free(j);
		}
	}
	tf_example_free(ex);
	tf_reader_free(r);
}

TEST(train_bodies_scanned_as_jansson_reads_them)
{
	static const char *bodies[] = {
	    "{\"examples\":[{\"a\":1,\"b\":2.5,\"c\":-1,\"y\":1}]}",
	    " {\"examples\" : [ {\"c\": 3e2, \"y\": 0, \"a\": 0.1, \"b\": -0} ,"
	    "{\"a\":1e-3,\"b\":123456789,\"c\":-7,\"y\":1}]} \n",
	    "{\"examples\":[{\"a\":-0.5,\"b\":0,\"c\":12,\"y\":0},\n"
	    "  {\"y\":1, \"c\":0, \"b\":1e10, \"a\":3.25}]}",
	    "{\"examples\":[{\"a\":1,\"b\":2,\"c\":3,\"y\":2}]}",
	    "{\"examples\":[{\"a\":1,\"b\":2,\"c\":3,\"y\":1.0}]}",
	    "{\"examples\":[{\"a\":1,\"b\":2,\"c\":3}]}",
	    "{\"examples\":[{\"a\":1,\"b\":2,\"c\":3,\"y\":1,\"d\":4}]}",
	    "{\"examples\":[{\"a\":1,\"a\":2,\"c\":3,\"y\":1}]}",
	    "{\"examples\":[{\"a\":\"1\",\"b\":2,\"c\":3,\"y\":1}]}",
	    "{\"examples\":[{\"a\":1e400,\"b\":2,\"c\":3,\"y\":1}]}",
	    "{\"examples\":[{\"a\":1,\"b\":2,\"c\":3,\"y\":1}],}",
	    "{\"examples\":[{\"a\":1,\"b\":2,\"c\":3,\"y\":1}]} x",
	    "{\"examples\":[{\"\\u0061\":1,\"b\":2,\"c\":3,\"y\":1}]}",
	    "{\"examples\":[]}",
	    "{\"instances\":[{\"a\":1,\"b\":2,\"c\":3}],\"labels\":[1]}",
	};
	struct tf_registry *reg = tf_registry_new();
	struct tf_model *m = tf_model_new();
	struct tf_request *q[2] = {tf_request_new(), tf_request_new()};
	REQUIRE(scan_and_jansson(reg, m, q));
	static char a[8192], b[8192];
	int ok = 0;
	for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
		train_records(q[0], m, bodies[i], a, sizeof a);
		train_records(q[1], m, bodies[i], b, sizeof b);
		if (strcmp(a, b) != 0) {
			FAILF("body %zu: scanned\n%s\nand through jansson\n%s",
			      i, a, b);
		}
		ok += a[0] != '\0';
	}
	CHECK_EQ_INT(ok, 6);
	/* the scan took the first and the third (the second has an int64
	 * written 3e2; the others a label 1.0, an escape, instances:
	 * jansson's) */
	CHECK_EQ_INT(tfi_request_quick_hits(q[0]), 2);
	CHECK_EQ_INT(tfi_request_quick_hits(q[1]), 0);
	tf_request_free(q[0]);
	tf_request_free(q[1]);
	tf_model_free(m);
	tf_registry_free(reg);
}

int
main(void)
{
	RUN(floats_print_like_tf_serving);
	RUN(sha256_of_the_standard_vectors);
	RUN(urls_route_as_tf_serving_reads_them);
	RUN(predict_bodies_read_as_jansson_reads_them);
	RUN(grpc_predict_answers_as_rest_does);
	RUN(grpc_model_status_names_states_and_codes);
	RUN(train_bodies_scanned_as_jansson_reads_them);
	DONE();
}
