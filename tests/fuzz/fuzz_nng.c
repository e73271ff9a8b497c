/* Fuzz target: tf-serve's nng request framing (tf_serving_frame():
 * "METHOD PATH\n" then the body), then the URL grammar on what it gives.
 * The line and body stay inside their buffers; a refusal is only for a
 * line with no space or too long. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tf/tf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The message in a buffer of its own size, as nng hands it over. */
	uint8_t *msg = malloc(size ? size : 1);
	if (msg == NULL) {
		return 0;
	}
	memcpy(msg, data, size);
	char line[64];
	struct tf_frame f;
	int rc = tf_serving_frame(msg, size, line, sizeof line, &f);
	const uint8_t *nl = size ? memchr(msg, '\n', size) : NULL;
	size_t ll = nl ? (size_t)(nl - msg) : size;
	int ok = ll < sizeof line && memchr(msg, ' ', ll) != NULL;
	if ((rc == TF_OK) != ok) {
		abort();
	}
	if (rc == TF_OK) {
		if (f.method != line || f.path <= line || f.path > line + ll ||
		    (f.body_len > 0 &&
		     ((const uint8_t *)f.body < msg ||
		      (const uint8_t *)f.body + f.body_len != msg + size))) {
			abort();
		}
		struct tf_route r;
		tf_serving_route(f.method, f.path, &r);
		if (r.kind < TF_ROUTE_HEALTH || r.kind > TF_ROUTE_ERROR) {
			abort();
		}
	}
	free(msg);
	return 0;
}
