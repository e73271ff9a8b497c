/* Fuzz target: the TFRecord reader (plain, GZIP, ZLIB; stopping and
 * skipping), with a small record ceiling. */
#include <stdint.h>
#include <stdlib.h>

#include "tf/tf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tf_reader *r = tf_reader_new();
	if (r == NULL) {
		return 0;
	}
	for (int skip = 0; skip < 2; skip++) {
		tf_reader_set_skip_corrupt(r, skip);
		tf_reader_set_max_record(r, 1 << 16);
		if (tf_reader_open_mem(r, data, size, "fuzz",
		                       TF_COMPRESS_AUTO) != TF_OK) {
			continue;
		}
		const uint8_t *d;
		size_t n;
		uint64_t sum = 0;
		while (tf_reader_next(r, &d, &n) == TF_OK) {
			for (size_t i = 0; i < n; i++) {
				sum += d[i]; /* touch every byte */
			}
		}
		if (sum == 1) {
			abort(); /* never: keeps the loop from being elided */
		}
	}
	tf_reader_free(r);
	return 0;
}
