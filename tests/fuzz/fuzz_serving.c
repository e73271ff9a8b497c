/*
 * Fuzz target: TF Serving REST bodies (predict, classify, regress, one
 * instance) against a small export, tests/fuzz/model (or
 * $TFKIT_FUZZ_MODEL).  Parsing never crashes; a body that parses is
 * predicted and answered with a JSON object or value, never an error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tf/tf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct tf_registry *reg;
static struct tf_model *model;
static struct tf_request *req;

static void
init(void)
{
	const char *path = getenv("TFKIT_FUZZ_MODEL");
	reg = tf_registry_new();
	model = tf_model_new();
	req = tf_request_new();
	if (reg == NULL || model == NULL || req == NULL ||
	    tf_registry_load(reg) != TF_OK) {
		abort();
	}
	if (tf_model_load(model, reg, path ? path : "tests/fuzz/model") !=
	    TF_OK) {
		fprintf(stderr, "fuzz_serving: %s\n", tf_errmsg(model));
		abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (model == NULL) {
		init();
	}
	for (int method = TF_METHOD_PREDICT; method <= TF_METHOD_INSTANCE;
	     method++) {
		int rc = tf_request_parse(req, model, method,
		                          (const char *)data, size, 64);
		if (rc == TF_EINVAL) {
			continue;
		}
		if (rc != TF_OK) {
			abort();
		}
		size_t rows = tf_request_rows(req);
		if (rows == 0 || rows > 64) {
			abort();
		}
		if (tf_model_predict(model, tf_request_batch(req),
		                     tf_request_outputs(req)) != TF_OK) {
			abort();
		}
		const char *body;
		size_t len;
		rc = tf_request_respond(req, model, &body, &len);
		if (rc == TF_EINVAL) {
			continue; /* the model has no such signature */
		}
		if (rc != TF_OK || len == 0 ||
		    (body[0] != '{' && body[0] != '[' && method != 3)) {
			abort();
		}
	}
	return 0;
}
