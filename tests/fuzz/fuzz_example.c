/* Fuzz target: the fast Example decoder and the protobuf-c reference must
 * give the same result or both an error, and whatever the fast decoder
 * accepts must re-encode to the same features, and survey into a schema
 * (tf-train's inference: columns, sequences, sparse ids). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tf/tf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Both hold the same features, names and values, in the same order (as
 * their JSON shows them). */
static void
same_features(struct tf_example *a, struct tf_example *b)
{
	char *ja = NULL, *jb = NULL;
	size_t la = 0, ca = 0, lb = 0, cb = 0;
	tf_example_to_json(a, &ja, &la, &ca);
	tf_example_to_json(b, &jb, &lb, &cb);
	if (la != lb || memcmp(ja, jb, la) != 0) {
		abort();
	}
	free(ja);
	free(jb);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tf_example *a = tf_example_new(), *b = tf_example_new();
	if (a == NULL || b == NULL) {
		return 0;
	}
	int ra = tf_example_parse(a, data, size);
	int rb = tf_example_parse_pb(b, data, size);
	if (ra == TF_OK) {
		/* Whatever the fast decoder accepts must encode and decode
		 * back to the same features. */
		const uint8_t *e;
		size_t n;
		if (tf_example_serialize(a, &e, &n) != TF_OK) {
			abort();
		}
		uint8_t *copy = malloc(n ? n : 1);
		memcpy(copy, e, n);
		if (tf_example_parse(b, copy, n) != TF_OK ||
		    tf_example_count(b) != tf_example_count(a)) {
			abort();
		}
		same_features(a, b);
		free(copy);
	}
	/* One decoder accepts what the other refuses: a failure, but for
	 * the two inputs the fast decoder refuses on purpose (tf/example.h). */
	if ((ra == TF_OK) != (rb == TF_OK) &&
	    !(rb == TF_OK && (strstr(tf_errmsg(a), "NUL byte") != NULL ||
	                      strstr(tf_errmsg(a), " twice") != NULL))) {
		abort();
	}
	if (ra == TF_OK) {
		tf_example_parse(a, data, size);
		tf_example_parse_pb(b, data, size);
		same_features(a, b);
		/* a schema inferred from it (twice: a second record) never
		 * fails but for data (a label that is not one) */
		struct tf_survey *sv = tf_survey_new();
		struct tf_schema *sc = tf_schema_new();
		char skipped[256];
		if (sv == NULL || sc == NULL || tf_survey_add(sv, a) != TF_OK ||
		    tf_survey_add(sv, a) != TF_OK) {
			abort();
		}
		int rc =
		    tf_survey_schema(sv, NULL, sc, skipped, sizeof skipped);
		if (rc != TF_OK && rc != TF_EFORMAT) {
			abort();
		}
		tf_survey_free(sv);
		tf_schema_free(sc);
	}
	tf_example_free(a);
	tf_example_free(b);
	return 0;
}
