/*
 * Fuzz target: the export loader (model.json, variables.bin and the
 * manifest that checks them), against the op plugins.  The input is
 * model.json, a NUL, then variables.bin; the manifest is made for them
 * here (a random one would only ever fail its SHA-256), unless the
 * first byte is '!', when the rest up to the next NUL is the manifest
 * itself.  Loading never crashes; a model that loads predicts a row.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tf_registry *reg = fuzz_registry();
	const uint8_t *p = data, *end = data + size;
	const char *given = NULL;
	size_t given_len = 0;
	if (p < end && *p == '!') {
		const uint8_t *z = memchr(p, 0, (size_t)(end - p));
		given = (const char *)p + 1;
		given_len = (size_t)((z ? z : end) - p) - 1;
		p = z ? z + 1 : end;
	}
	const uint8_t *z = memchr(p, 0, (size_t)(end - p));
	size_t mlen = (size_t)((z ? z : end) - p);
	const uint8_t *vars = z ? z + 1 : end;
	size_t vlen = (size_t)(end - vars);
	char manifest[512];
	if (given == NULL) {
		char h1[65], h2[65];
		tf_sha256_hex(p, mlen, h1);
		tf_sha256_hex(vars, vlen, h2);
		snprintf(
		    manifest, sizeof manifest,
		    "{\"format\":\"tfkit-manifest\",\"version\":1,\"files\":["
		    "{\"name\":\"model.json\",\"size\":%zu,\"sha256\":\"%s\"},"
		    "{\"name\":\"variables.bin\",\"size\":%zu,\"sha256\":"
		    "\"%s\"}]}",
		    mlen, h1, vlen, h2);
		given = manifest;
		given_len = strlen(manifest);
	}
	struct tf_export_file files[] = {
	    {"model.json", p, mlen},
	    {"variables.bin", vars, vlen},
	    {"manifest.json", given, given_len},
	};
	struct tf_model *m = tf_model_new();
	if (m == NULL) {
		abort();
	}
	int rc = tf_model_load_files(m, reg, files, 3, "fuzz");
	if (rc == TF_OK) {
		struct tf_batch b = {0};
		int64_t w = tf_columns_width(tf_model_columns(m));
		int64_t iw = tf_columns_id_width(tf_model_columns(m));
		if (tf_batch_init(&b, 1, w, iw) != TF_OK) {
			abort();
		}
		b.rows = 1;
		memset(b.x, 0, (size_t)w * sizeof *b.x);
		for (int64_t k = 0; k < iw; k++) {
			b.ids[k] = -1;
		}
		float *out =
		    calloc((size_t)tf_model_outputs(m) + 1, sizeof *out);
		if (out == NULL) {
			abort();
		}
		/* a model that loads may still refuse a row (a bad graph is
		 * caught when built); it must never crash */
		tf_model_predict(m, &b, out);
		free(out);
		tf_batch_release(&b);
	} else if (rc != TF_EFORMAT && rc != TF_EINVAL && rc != TF_ENOENT &&
	           rc != TF_ETOOBIG && rc != TF_ENOMEM) {
		abort();
	}
	tf_model_free(m);
	return 0;
}
