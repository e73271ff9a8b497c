/*
 * Fuzz target: an export archive (tf-export --archive; tf-serve
 * --model-base FILE.tar.gz): tf_export_read_archive() on the input as a
 * file, then each version it finds loaded from its files in memory, as
 * tf-serve loads them.  Nothing crashes; a refusal says why.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	struct tf_export_member_version *v = NULL;
	size_t n = 0;
	char err[512] = "";
	if (tf_export_read_archive(path, &v, &n, err, sizeof err) != 0) {
		if (err[0] == '\0') {
			abort(); /* refused without saying why */
		}
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (v[i].nfiles > TF_EXPORT_MAX_FILES) {
			abort();
		}
		struct tf_model *m = tf_model_new();
		if (m == NULL) {
			abort();
		}
		if (tf_model_load_files(m, fuzz_registry(), v[i].files,
		                        v[i].nfiles, "fuzz.tar.gz") != TF_OK &&
		    *tf_errmsg(m) == '\0') {
			abort();
		}
		tf_model_free(m);
	}
	tf_export_archive_free(v, n);
	return 0;
}
