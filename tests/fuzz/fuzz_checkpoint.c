/*
 * Fuzz target: the checkpoint loader (a TFRecord file of a header record
 * and named float blocks, FORMATS.md).  The input is the file, read from
 * a memory file.  Loading never crashes; a checkpoint that loads has a
 * header that decodes or is refused with a message, and blocks that
 * decode (runs checked when loaded) to the count they say.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	struct tf_ckpt *c = tf_ckpt_new();
	if (c == NULL) {
		abort();
	}
	for (int header_only = 0; header_only < 2; header_only++) {
		int rc = header_only ? tf_ckpt_load_header(c, path)
		                     : tf_ckpt_load(c, path);
		if (rc == TF_OK) {
			struct tf_ckpt_header h;
			tf_ckpt_header_init(&h);
			rc = tf_ckpt_get_header(c, &h);
			if (rc != TF_OK && rc != TF_EFORMAT) {
				abort();
			}
			tf_ckpt_header_release(&h);
			const char *names[] = {"params", "state", "slot0"};
			for (size_t i = 0; !header_only && i < 3; i++) {
				size_t n = 0;
				/* a block's size is checked (2^34 values at
				 * most) but may be more than the fuzzer's
				 * memory */
				if (tf_ckpt_size(c, names[i], &n) != TF_OK ||
				    n > (1 << 20)) {
					continue;
				}
				const float *v = tf_ckpt_get(c, names[i], &n);
				float *w = malloc(2 * n * sizeof *w + 1);
				if (v == NULL || w == NULL ||
				    tf_ckpt_read(c, names[i], w, n) != TF_OK ||
				    (n > 0 &&
				     memcmp(v, w, n * sizeof *w) != 0)) {
					abort();
				}
				/* a part, decoded from the runs on its own
				 * (loaded again: nothing decoded), is the
				 * same */
				if (tf_ckpt_load(c, path) != TF_OK ||
				    tf_ckpt_read_part(c, names[i], n / 3, w + n,
				                      n / 3) != TF_OK ||
				    (n >= 3 &&
				     memcmp(w + n / 3, w + n,
				            n / 3 * sizeof *w) != 0)) {
					abort();
				}
				free(w);
			}
		} else if (*tf_errmsg(c) == '\0') {
			abort(); /* refused without saying why */
		}
	}
	tf_ckpt_free(c);
	return 0;
}
