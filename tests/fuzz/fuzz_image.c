/*
 * Fuzz target: encoded images (JPEG, PNG), as image records, tf-serve's
 * b64 instances and tf-img2record's files give them.  Probing and
 * decoding never crash; an image that decodes has the size its header
 * said, and turns into a model's floats (resized, grey and colour,
 * flipped and shifted) that are all finite.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "tf/tf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tf_image *im = tf_image_new();
	if (im == NULL) {
		abort();
	}
	/* a small limit: a header's claim of a huge image is refused
	 * before its pixels are allocated */
	tf_image_set_max_pixels(im, (uint64_t)1 << 20);
	int fmt, h, w, c;
	int probed = tf_image_probe(im, data, size, &fmt, &h, &w, &c);
	int rc = tf_image_decode(im, data, size);
	if (rc != TF_OK && rc != TF_EFORMAT && rc != TF_ETOOBIG) {
		abort();
	}
	if (rc == TF_OK) {
		int h2, w2, c2;
		tf_image_size(im, &h2, &w2, &c2);
		if (probed != TF_OK || h2 != h || w2 != w || c2 != c ||
		    (c != 1 && c != 3) || h < 1 || w < 1) {
			abort();
		}
		static float out[7 * 5 * 3];
		for (int k = 0; k < 4; k++) {
			struct tf_image_view v = {
			    7, 5, k % 2 ? 3 : 1, k % 3, k >= 2, k - 2, 1 - k};
			tf_image_floats(im, &v, out);
			for (int i = 0; i < 7 * 5 * v.channels; i++) {
				if (!isfinite(out[i])) {
					abort();
				}
			}
		}
	}
	tf_image_free(im);
	return 0;
}
