/*
 * Fuzz target: the schema between stages (RECORDS.schema.json, and the
 * copy a checkpoint holds).  Parsing never crashes; a schema that parses
 * is written back and that text parses to the same text again, and to
 * the same model key (what the ps compares).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tf/tf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* (the library's own: schema.c) */
int tfi_model_key(const char *schema, uint64_t *key);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct tf_schema *s = tf_schema_new(), *t = tf_schema_new();
	if (text == NULL || s == NULL || t == NULL) {
		abort();
	}
	memcpy(text, data, size);
	text[size] = '\0';
	int rc = tf_schema_parse(s, text, "fuzz.schema.json");
	if (rc != TF_OK && rc != TF_EFORMAT) {
		abort();
	}
	if (rc == TF_OK) {
		if (tf_schema_write(s, NULL) != TF_OK) {
			abort();
		}
		char *once = strdup(tf_schema_text(s));
		if (once == NULL ||
		    tf_schema_parse(t, once, "again") != TF_OK ||
		    tf_schema_write(t, NULL) != TF_OK ||
		    strcmp(tf_schema_text(t), once) != 0) {
			abort();
		}
		/* what a model's parameters stand for: the same from the
		 * text read back */
		uint64_t k1, k2;
		if (tfi_model_key(text, &k1) != TF_OK ||
		    tfi_model_key(once, &k2) != TF_OK || k1 != k2 || k1 == 0) {
			abort();
		}
		free(once);
	}
	tf_schema_free(s);
	tf_schema_free(t);
	free(text);
	return 0;
}
