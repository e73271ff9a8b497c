/* Fuzz target: --config files (tf_settings_load: a JSON object of
 * settings), read from a memory file.  A file that loads gives its
 * settings back as JSON; one refused says why. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	struct tf_settings *s = tf_settings_new();
	if (s == NULL) {
		abort();
	}
	/* Resolved as tf-train resolves it, but never reading a
	 * checkpoint directory the input names. */
	int rc = tf_settings_load(s, path);
	if (rc == TF_OK) {
		rc = tf_settings_set(s, "from-scratch", "true");
		rc = rc ? rc : tf_settings_resolve(s);
	}
	if (rc == TF_OK) {
		char *j = tf_settings_json(s, 0);
		struct tf_train_config cfg;
		tf_train_config_init(&cfg);
		if (j == NULL) {
			abort();
		}
		free(j);
		tf_settings_config(s, &cfg);
	} else if (*tf_errmsg(s) == '\0') {
		abort(); /* refused without saying why */
	}
	tf_settings_free(s);
	return 0;
}
