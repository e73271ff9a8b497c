/* Fuzz target: the archive loader (tf_input over libarchive: tar, zip,
 * cpio, 7z ... and gzip, bzip2, xz, zstd streams, recognised by content).
 * Every member is read to its end (at most 8 MB an input, against
 * compression bombs); a refusal says why. */
#include <stdint.h>
#include <stdlib.h>

#include "tf/tf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tf_input *in = tf_input_new();
	if (in == NULL) {
		abort();
	}
	/* Every member, not only the text ones: more of the loader runs. */
	if (size > 0 && (data[0] & 1) && tf_input_add_member_glob(in, "*")) {
		abort();
	}
	static char buf[65536];
	size_t total = 0;
	int rc = tf_input_open_mem(in, data, size, "fuzz.bin");
	const char *name;
	while (rc == TF_OK && (rc = tf_input_next(in, &name)) == TF_OK) {
		size_t got = 1;
		while (got > 0 && total < ((size_t)8 << 20) &&
		       (rc = tf_input_read(in, buf, sizeof buf, &got)) ==
		           TF_OK) {
			total += got;
		}
		if (name == NULL || *name == '\0') {
			abort(); /* every stream is named in messages */
		}
	}
	if (rc != TF_OK && rc != TF_EOF && *tf_errmsg(in) == '\0') {
		abort(); /* refused without saying why */
	}
	tf_input_free(in);
	return 0;
}
