/*
 * Fuzz target: TF Serving's gRPC request messages (serving_pb.c) against
 * three small exports, tests/fuzz/model (or $TFKIT_FUZZ_MODEL),
 * tests/fuzz/model-sparse (a model of sparse ids) and tests/fuzz/model-seq
 * (a sequence of tokens and a number).  The first
 * byte picks the method (Predict, Classify, Regress, GetModelMetadata,
 * GetModelStatus), the rest is the message.  Decoding and reading never
 * crash; a request that reads is predicted and answered with a response
 * message, or refused as TF Serving would (TF_EINVAL), nothing else.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

static struct tf_request *req;

/* The decoded request read for a model, predicted and answered. */
static void
answer(struct tf_model *model, int method)
{
	int rc = tf_request_parse_pb(req, model, 64);
	if (rc == TF_EINVAL) {
		return;
	}
	if (rc != TF_OK) {
		abort();
	}
	size_t rows = tf_request_rows(req);
	if (method != TF_METHOD_METADATA &&
	    (rows == 0 || rows > 64 || tf_request_predict(req, model))) {
		abort();
	}
	const void *out;
	size_t len;
	rc = tf_request_respond_pb(req, model, "m", 1, &out, &len);
	if (rc != TF_OK && rc != TF_EINVAL) {
		abort();
	}
	if (rc == TF_OK && len == 0) {
		abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int methods[] = {TF_METHOD_PREDICT, TF_METHOD_CLASSIFY,
	                              TF_METHOD_REGRESS, TF_METHOD_METADATA,
	                              TF_METHOD_STATUS};
	struct tf_model *model = fuzz_model();
	if (req == NULL && (req = tf_request_new()) == NULL) {
		abort();
	}
	if (size == 0) {
		return 0;
	}
	int method = methods[data[0] % 5];
	struct tf_model_spec spec;
	int rc = tf_request_decode_pb(req, method, data + 1, size - 1, &spec);
	if (rc == TF_EINVAL) {
		return 0;
	}
	if (rc != TF_OK || spec.name == NULL || spec.signature == NULL ||
	    spec.version < -1) {
		abort();
	}
	if (method == TF_METHOD_STATUS) {
		struct tf_version_state v = {1, "AVAILABLE", "OK", spec.name};
		const void *out;
		size_t len;
		if (tf_serving_status_pb(req, &v, 1, &out, &len) != TF_OK) {
			abort();
		}
		return 0;
	}
	answer(model, method);
	answer(fuzz_sparse_model(), method);
	answer(fuzz_seq_model(), method);
	return 0;
}
