/*
 * test_serving.c - numbers as TF Serving prints them, and the SHA-256
 * that export manifests hold.
 */
#include <math.h>
#include <string.h>

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

int
main(void)
{
	RUN(floats_print_like_tf_serving);
	RUN(sha256_of_the_standard_vectors);
	RUN(urls_route_as_tf_serving_reads_them);
	DONE();
}
