/*
 * conv.c - convolution's data movement on the CPU: im2col (tf_im2col()
 * in tf/device.h), each output pixel's patch of an NHWC image as a row
 * for the matrix product, and col2im, its way back; pooling (max and
 * mean) and its gradient, over the same geometry (struct tf_conv).
 */
#include <math.h>
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

/* The other way: each value of col added back where im2col took it. */
void
col2im_cpu(const float *col, int64_t rows, const struct tf_conv *g, float *dx)
{
	const int64_t run = g->c, patch = g->kh * g->kw * g->c;
	for (int64_t r = 0; r < rows; r++) {
		float *img = dx + r * g->h * g->w * g->c;
		for (int64_t oy = 0; oy < g->oh; oy++) {
			for (int64_t ox = 0; ox < g->ow; ox++) {
				const float *src =
				    col +
				    ((r * g->oh + oy) * g->ow + ox) * patch;
				for (int64_t ky = 0; ky < g->kh; ky++) {
					int64_t iy = oy * g->sh - g->ph + ky;
					if (iy < 0 || iy >= g->h) {
						continue;
					}
					for (int64_t kx = 0; kx < g->kw; kx++) {
						int64_t ix =
						    ox * g->sw - g->pw + kx;
						if (ix < 0 || ix >= g->w) {
							continue;
						}
						const float *s =
						    src +
						    (ky * g->kw + kx) * run;
						float *d =
						    img +
						    (iy * g->w + ix) * run;
						for (int64_t k = 0; k < run;
						     k++) {
							d[k] += s[k];
						}
					}
				}
			}
		}
	}
}

/* The window of output pixel (oy, ox) clipped to the image:
 * [*y0, *y1) x [*x0, *x1). */
static void
window(const struct tf_conv *g, int64_t oy, int64_t ox, int64_t *y0,
       int64_t *y1, int64_t *x0, int64_t *x1)
{
	*y0 = oy * g->sh - g->ph;
	*x0 = ox * g->sw - g->pw;
	*y1 = *y0 + g->kh < g->h ? *y0 + g->kh : g->h;
	*x1 = *x0 + g->kw < g->w ? *x0 + g->kw : g->w;
	*y0 = *y0 > 0 ? *y0 : 0;
	*x0 = *x0 > 0 ? *x0 : 0;
}

/* Each channel of each window: its largest value or its mean. */
void
pool_cpu(const float *x, int64_t rows, const struct tf_conv *g, int max,
         float *y)
{
	for (int64_t r = 0; r < rows; r++) {
		const float *img = x + r * g->h * g->w * g->c;
		for (int64_t oy = 0; oy < g->oh; oy++) {
			for (int64_t ox = 0; ox < g->ow; ox++) {
				float *out =
				    y + ((r * g->oh + oy) * g->ow + ox) * g->c;
				int64_t y0, y1, x0, x1;
				window(g, oy, ox, &y0, &y1, &x0, &x1);
				float n = (float)((y1 - y0) * (x1 - x0));
				for (int64_t ch = 0; ch < g->c; ch++) {
					float v = max ? -INFINITY : 0.0f;
					for (int64_t iy = y0; iy < y1; iy++) {
						for (int64_t ix = x0; ix < x1;
						     ix++) {
							float u =
							    img[(iy * g->w +
							         ix) *
							            g->c +
							        ch];
							v = max ? (u > v ? u
							                 : v)
							        : v + u;
						}
					}
					out[ch] = max ? v : v / n;
				}
			}
		}
	}
}

/* Each output's gradient to its window: all of it to the first largest
 * value (max), an equal share to each place (mean). */
void
pool_grad_cpu(const float *x, const float *dy, int64_t rows,
              const struct tf_conv *g, int max, float *dx)
{
	for (int64_t r = 0; r < rows; r++) {
		const float *img = x + r * g->h * g->w * g->c;
		float *dimg = dx + r * g->h * g->w * g->c;
		for (int64_t oy = 0; oy < g->oh; oy++) {
			for (int64_t ox = 0; ox < g->ow; ox++) {
				const float *d =
				    dy + ((r * g->oh + oy) * g->ow + ox) * g->c;
				int64_t y0, y1, x0, x1;
				window(g, oy, ox, &y0, &y1, &x0, &x1);
				float n = (float)((y1 - y0) * (x1 - x0));
				for (int64_t ch = 0; ch < g->c; ch++) {
					int64_t at = -1;
					float v = -INFINITY;
					for (int64_t iy = y0; iy < y1; iy++) {
						for (int64_t ix = x0; ix < x1;
						     ix++) {
							int64_t i =
							    (iy * g->w + ix) *
							        g->c +
							    ch;
							if (!max) {
								dimg[i] +=
								    d[ch] / n;
							} else if (at < 0 ||
							           img[i] > v) {
								at = i;
								v = img[i];
							}
						}
					}
					if (max && at >= 0) {
						dimg[at] += d[ch];
					}
				}
			}
		}
	}
}
