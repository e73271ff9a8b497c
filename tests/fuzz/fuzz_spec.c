/*
 * Fuzz target: model specs (the graph text tf-train --model-file takes
 * and checkpoints hold), parsed and built against the op plugins (every
 * node's widths checked, parameters initialised).  Nothing crashes;
 * what is refused says which line or node.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tf_registry *reg = fuzz_registry();
	if (size > 4096) {
		return 0; /* specs are short; long ones only cost time */
	}
	char *spec = malloc(size + 1);
	struct tf_graph *g = tf_graph_new();
	if (spec == NULL || g == NULL) {
		abort();
	}
	memcpy(spec, data, size);
	spec[size] = '\0';
	int rc = tf_graph_parse(g, spec);
	if (rc == TF_OK) {
		rc = tf_graph_build(g, reg, tf_device_cpu(), 1);
	}
	if (rc != TF_OK && (rc != TF_EINVAL || *tf_errmsg(g) == '\0') &&
	    rc != TF_ENOMEM && rc != TF_ETOOBIG) {
		abort();
	}
	tf_graph_free(g);
	free(spec);
	return 0;
}
