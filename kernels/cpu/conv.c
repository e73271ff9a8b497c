/*
 * conv.c - convolution's data movement on the CPU: im2col (tf_im2col()
 * in tf/device.h), each output pixel's patch of an NHWC image as a row
 * for the matrix product.
 */
#include <string.h>

#include "kernels/kernels.h"
#include "tf/device.h"

/* Row (r, oy, ox) of col: kh x kw runs of c channels, each run a copy of
 * c contiguous input values or zeros (padding). */
void
im2col_cpu(const float *x, int64_t rows, const struct tf_conv *g, float *col)
{
	const int64_t run = g->c, patch = g->kh * g->kw * g->c;
	for (int64_t r = 0; r < rows; r++) {
		const float *img = x + r * g->h * g->w * g->c;
		for (int64_t oy = 0; oy < g->oh; oy++) {
			for (int64_t ox = 0; ox < g->ow; ox++) {
				float *dst =
				    col +
				    ((r * g->oh + oy) * g->ow + ox) * patch;
				for (int64_t ky = 0; ky < g->kh; ky++) {
					int64_t iy = oy * g->sh - g->ph + ky;
					for (int64_t kx = 0; kx < g->kw; kx++) {
						int64_t ix =
						    ox * g->sw - g->pw + kx;
						float *d =
						    dst +
						    (ky * g->kw + kx) * run;
						if (iy < 0 || iy >= g->h ||
						    ix < 0 || ix >= g->w) {
							memset(d, 0,
							       (size_t)run *
							           sizeof *d);
						} else {
							memcpy(d,
							       img +
							           (iy * g->w +
							            ix) *
							               g->c,
							       (size_t)run *
							           sizeof *d);
						}
					}
				}
			}
		}
	}
}
