/*
 * Fuzz target: TF Serving REST bodies (predict, classify, regress, one
 * instance) against two small exports, tests/fuzz/model (or
 * $TFKIT_FUZZ_MODEL: numeric features) and tests/fuzz/model-sparse (a
 * model of sparse ids: {"ids": [...], "values": [...]}).  Parsing never
 * crashes; a body that parses is predicted and answered with a JSON
 * object or value, never an error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

static struct tf_request *req;

/* Every method's body against one model. */
static void
against(struct tf_model *model, const uint8_t *data, size_t size)
{
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
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (req == NULL && (req = tf_request_new()) == NULL) {
		abort();
	}
	against(fuzz_model(), data, size);
	against(fuzz_sparse_model(), data, size);
	return 0;
}
