/*
 * Fuzz target: the TF Serving URL grammar (tf_serving_route()).  The
 * input is "METHOD PATH" (split at the first space; NULs end the path
 * early).  Every path gets an answer: a kind, a model inside the path
 * for the model routes, an HTTP status and a message for an error, and
 * an error body that is valid JSON text.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tf/tf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = malloc(size + 1);
	if (in == NULL) {
		return 0;
	}
	memcpy(in, data, size);
	in[size] = '\0';
	char *sp = strchr(in, ' ');
	const char *method = sp ? in : "GET";
	const char *path = sp ? sp + 1 : in;
	if (sp != NULL) {
		*sp = '\0';
	}
	struct tf_route r;
	tf_serving_route(method, path, &r);
	if (r.kind < TF_ROUTE_HEALTH || r.kind > TF_ROUTE_ERROR) {
		abort();
	}
	if (r.kind >= TF_ROUTE_STATUS && r.kind <= TF_ROUTE_REGRESS) {
		size_t plen = strlen(path);
		if (r.model < path || r.model + r.model_len > path + plen ||
		    memchr(r.model, '/', r.model_len) != NULL ||
		    memchr(r.model, ':', r.model_len) != NULL ||
		    r.version < -1) {
			abort();
		}
	}
	if (r.kind == TF_ROUTE_ERROR) {
		if ((r.status != 400 && r.status != 404) ||
		    r.message[0] == '\0') {
			abort();
		}
		char *body = tf_serving_error_body(r.message);
		if (body == NULL || strncmp(body, "{ \"error\": \"", 12) != 0) {
			abort();
		}
		free(body);
		char nf[512];
		tf_serving_not_found(nf, sizeof nf, path, strlen(path),
		                     r.version);
	}
	free(in);
	return 0;
}
