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

/* n floats from s to d.  The short runs of small images and kernels (5
 * floats: a 5x5 kernel over one channel) as two copies of a fixed size
 * that overlap, each a vector move: a call of memcpy, or a loop, costs
 * more than such a copy. */
static inline void
copy_run(float *restrict d, const float *restrict s, int64_t n)
{
	if (n >= 16) {
		memcpy(d, s, (size_t)n * sizeof *d);
	} else if (n >= 8) {
		memcpy(d, s, 8 * sizeof *d);
		memcpy(d + n - 8, s + n - 8, 8 * sizeof *d);
	} else if (n >= 4) {
		memcpy(d, s, 4 * sizeof *d);
		memcpy(d + n - 4, s + n - 4, 4 * sizeof *d);
	} else {
		for (int64_t k = 0; k < n; k++) {
			d[k] = s[k];
		}
	}
}

/* Row (r, oy, ox) of col: kh runs of kw x c values, each the input's
 * contiguous values along a row of the image (its channels innermost)
 * with zeros where the window leaves the image (padding). */
void
im2col_cpu(const float *x, int64_t rows, const struct tf_conv *g, float *col)
{
	const int64_t c = g->c, run = g->kw * g->c, patch = g->kh * run;
	for (int64_t r = 0; r < rows; r++) {
		const float *img = x + r * g->h * g->w * c;
		for (int64_t oy = 0; oy < g->oh; oy++) {
			for (int64_t ox = 0; ox < g->ow; ox++) {
				float *dst =
				    col +
				    ((r * g->oh + oy) * g->ow + ox) * patch;
				int64_t x0 = ox * g->sw - g->pw;
				/* the kernel's columns inside: [k0, k1) */
				int64_t k0 = x0 < 0 ? -x0 : 0;
				int64_t k1 =
				    g->w - x0 < g->kw ? g->w - x0 : g->kw;
				for (int64_t ky = 0; ky < g->kh; ky++) {
					int64_t iy = oy * g->sh - g->ph + ky;
					float *d = dst + ky * run;
					if (iy < 0 || iy >= g->h || k1 <= k0) {
						memset(d, 0,
						       (size_t)run * sizeof *d);
						continue;
					}
					for (int64_t k = 0; k < k0 * c; k++) {
						d[k] = 0.0f;
					}
					copy_run(d + k0 * c,
					         img +
					             (iy * g->w + x0 + k0) * c,
					         (k1 - k0) * c);
					for (int64_t k = k1 * c; k < run; k++) {
						d[k] = 0.0f;
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

/* Channels are taken BLOCK at a time, each place of a window once, so
 * the innermost loop runs along an image's contiguous channels. */
#define BLOCK 64

/* Each channel of each window: its largest value or its mean. */
void
pool_cpu(const float *x, int64_t rows, const struct tf_conv *g, int max,
         float *y)
{
	float v[BLOCK];
	for (int64_t r = 0; r < rows; r++) {
		const float *img = x + r * g->h * g->w * g->c;
		for (int64_t oy = 0; oy < g->oh; oy++) {
			for (int64_t ox = 0; ox < g->ow; ox++) {
				float *out =
				    y + ((r * g->oh + oy) * g->ow + ox) * g->c;
				int64_t y0, y1, x0, x1;
				window(g, oy, ox, &y0, &y1, &x0, &x1);
				float n = (float)((y1 - y0) * (x1 - x0));
				for (int64_t c0 = 0; c0 < g->c; c0 += BLOCK) {
					int64_t nb = g->c - c0 < BLOCK
					                 ? g->c - c0
					                 : BLOCK;
					for (int64_t k = 0; k < nb; k++) {
						v[k] = max ? -INFINITY : 0.0f;
					}
					for (int64_t iy = y0; iy < y1; iy++) {
						for (int64_t ix = x0; ix < x1;
						     ix++) {
							const float *u =
							    img +
							    (iy * g->w + ix) *
							        g->c +
							    c0;
							if (max) {
								for (int64_t k =
								         0;
								     k < nb;
								     k++) {
									v[k] =
									    u[k] > v[k]
									        ? u[k]
									        : v[k];
								}
							} else {
								for (int64_t k =
								         0;
								     k < nb;
								     k++) {
									v[k] +=
									    u[k];
								}
							}
						}
					}
					for (int64_t k = 0; k < nb; k++) {
						out[c0 + k] =
						    max ? v[k] : v[k] / n;
					}
				}
			}
		}
	}
}

/*
 * One window's gradient d (its c channels) to its first largest value
 * in img, dimg the image's gradient: BLOCK channels at a time, the
 * window's largest found as the forward pass finds it (first place
 * first, each later one that is larger), then each place in order takes
 * d where it holds that value and no place before it did.  Where none
 * does (the first place a NaN), the first place takes it.  No branch
 * and no scatter: a random image's comparisons are unpredictable, and
 * the channels' loops are vector code.
 */
static TF_VECTOR_CLONES void
max_window_grad(const float *restrict img, const float *restrict d,
                const struct tf_conv *g, int64_t y0, int64_t y1, int64_t x0,
                int64_t x1, float *restrict dimg)
{
	float v[BLOCK];
	int32_t done[BLOCK];
	for (int64_t c0 = 0; c0 < g->c; c0 += BLOCK) {
		int64_t nb = g->c - c0 < BLOCK ? g->c - c0 : BLOCK;
		int64_t first = (y0 * g->w + x0) * g->c + c0;
		for (int64_t k = 0; k < nb; k++) {
			v[k] = img[first + k];
			done[k] = 0;
		}
		for (int64_t iy = y0; iy < y1; iy++) {
			for (int64_t ix = x0; ix < x1; ix++) {
				const float *u =
				    img + (iy * g->w + ix) * g->c + c0;
				for (int64_t k = 0; k < nb; k++) {
					v[k] = u[k] > v[k] ? u[k] : v[k];
				}
			}
		}
		for (int64_t iy = y0; iy < y1; iy++) {
			for (int64_t ix = x0; ix < x1; ix++) {
				int64_t i = (iy * g->w + ix) * g->c + c0;
				const float *u = img + i;
				float *p = dimg + i;
				for (int64_t k = 0; k < nb; k++) {
					int32_t hit = (u[k] == v[k]) & !done[k];
					p[k] = hit ? p[k] + d[c0 + k] : p[k];
					done[k] |= hit;
				}
			}
		}
		float *p = dimg + first;
		for (int64_t k = 0; k < nb; k++) {
			p[k] = done[k] ? p[k] : p[k] + d[c0 + k];
		}
	}
}

/* The same for fewer than 16 channels (LeNet's 6 and 16 less one), too
 * few for vectors: each channel's first largest place, then the
 * gradient to it. */
static void
max_window_grad_narrow(const float *restrict img, const float *restrict d,
                       const struct tf_conv *g, int64_t y0, int64_t y1,
                       int64_t x0, int64_t x1, float *restrict dimg)
{
	for (int64_t k = 0; k < g->c; k++) {
		int64_t at = (y0 * g->w + x0) * g->c + k;
		float v = img[at];
		for (int64_t iy = y0; iy < y1; iy++) {
			for (int64_t ix = x0; ix < x1; ix++) {
				int64_t i = (iy * g->w + ix) * g->c + k;
				float u = img[i];
				int gt = u > v;
				at = gt ? i : at;
				v = gt ? u : v;
			}
		}
		dimg[at] += d[k];
	}
}

/* Each output's gradient to its window: all of it to the first largest
 * value (max), an equal share to each place (mean). */
TF_VECTOR_CLONES void
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
				if (y1 <= y0 || x1 <= x0) {
					continue; /* no place of the image */
				}
				if (max && g->c >= 16) {
					max_window_grad(img, d, g, y0, y1, x0,
					                x1, dimg);
					continue;
				}
				if (max) {
					max_window_grad_narrow(
					    img, d, g, y0, y1, x0, x1, dimg);
					continue;
				}
				for (int64_t iy = y0; iy < y1; iy++) {
					for (int64_t ix = x0; ix < x1; ix++) {
						float *p =
						    dimg +
						    (iy * g->w + ix) * g->c;
						for (int64_t k = 0; k < g->c;
						     k++) {
							p[k] += d[k] / n;
						}
					}
				}
			}
		}
	}
}
