/*
 * Fuzz target: TF Serving REST bodies (predict, classify, regress, one
 * instance) against three small exports, tests/fuzz/model (or
 * $TFKIT_FUZZ_MODEL: numeric features), tests/fuzz/model-sparse (a
 * model of sparse ids: {"ids": [...], "values": [...]}) and
 * tests/fuzz/model-seq (a sequence of tokens, ragged lists).  Parsing never
 * crashes; a body that parses is predicted and answered with a JSON
 * object or value, never an error.  The same body as a :train body
 * (tf/queue.h): refused as the client's error, or records that read back
 * as Examples, one a row.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

static struct tf_request *req;

/* A :train body: its records are whole Examples, count of them. */
static void
train(struct tf_model *model, const uint8_t *data, size_t size)
{
	const uint8_t *rec;
	size_t bytes, n;
	int rc = tf_request_train(req, model, (const char *)data, size, 64,
	                          &rec, &bytes, &n);
	if (rc == TF_EINVAL) {
		return;
	}
	if (rc != TF_OK || n == 0 || n > 64) {
		abort();
	}
	struct tf_reader *r = tf_reader_new();
	struct tf_example *ex = tf_example_new();
	if (r == NULL || ex == NULL ||
	    tf_reader_open_mem(r, rec, bytes, "train", TF_COMPRESS_NONE) !=
	        TF_OK) {
		abort();
	}
	const uint8_t *d;
	size_t len, k = 0;
	while ((rc = tf_reader_next(r, &d, &len)) == TF_OK) {
		if (tf_example_parse(ex, d, len) != TF_OK) {
			abort();
		}
		k++;
	}
	if (rc != TF_EOF || k != n) {
		abort();
	}
	tf_example_free(ex);
	tf_reader_free(r);
}

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
	against(fuzz_seq_model(), data, size);
	train(fuzz_model(), data, size);
	train(fuzz_sparse_model(), data, size);
	return 0;
}
