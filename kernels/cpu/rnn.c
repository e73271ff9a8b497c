/*
 * rnn.c - the recurrent cells' elementwise steps (the matrix products
 * around them are the ops', plugins/ops/rnn.c), in Keras' conventions:
 *
 * LSTM: the preactivations g of a row are four blocks of units, in the
 * order i, f, c, o (input, forget, cell, output gates); i, f and o go
 * through the sigmoid, the cell candidate through tanh;
 *   c = f * c_prev + i * cand,  h = o * tanh(c).
 * act keeps the four activated blocks for the gradient.
 *
 * GRU (reset_after, Keras' and cuDNN's): gx = x Wx + bx and
 * gh = h_prev Wh + bh, each three blocks z, r, n (update, reset, new);
 *   z = sigmoid(gx_z + gh_z), r = sigmoid(gx_r + gh_r),
 *   n = tanh(gx_n + r * gh_n),  h = z * h_prev + (1 - z) * n.
 * act keeps z, r and n.
 *
 * GRU with the reset before (reset_after=0, Keras' reset_after=False,
 * TensorFlow.js's only GRU, ONNX's linear_before_reset=0): the reset
 * gate scales h_prev before its product by the new gate's kernel,
 *   z = sigmoid(gx_z + gzr_z), r = sigmoid(gx_r + gzr_r),
 *   n = tanh(gx_n + (r * h_prev) Wh_n),  h = z * h_prev + (1 - z) * n,
 * where gzr = h_prev Wh_zr: two products a step, between them the
 * gates (gru_gates: z, r and rh = r * h_prev) and after them the new
 * gate (gru_new); the gradient likewise in two halves, the new gate's
 * (gru_new_grad) and, after the product of dn back through Wh_n, the
 * gates' (gru_gates_grad).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/kernels.h"

/* e^x in float, as Cephes' expf (2^k by the exponent's bits times a
 * polynomial of the rest, within 2 ulp), written so that the compiler
 * vectorizes the loops calling it: the cells' sigmoids and tanh are most
 * of a step's time with libm's scalar expf and tanhf.  Its clamp is a
 * select only under -fno-trapping-math (the Makefile's, for kernels/):
 * without it AVX2 (no AVX-512 masks) leaves the cells' loops scalar. */
static inline float
fexp(float x)
{
	x = x < -87.0f ? -87.0f : x > 88.0f ? 88.0f : x;
	/* k = x / ln 2 rounded to nearest: 1.5 * 2^23 added and taken
	 * away leaves no fraction (and vectorizes, unlike floorf) */
	float k = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
	float r = x - k * 0.693359375f + k * 2.12194440e-4f;
	float p = 1.9875691500e-4f;
	p = p * r + 1.3981999507e-3f;
	p = p * r + 8.3334519073e-3f;
	p = p * r + 4.1665795894e-2f;
	p = p * r + 1.6666665459e-1f;
	p = p * r + 5.0000001201e-1f;
	p = p * r * r + r + 1.0f;
	int32_t bits = ((int32_t)k + 127) << 23;
	float two_k;
	memcpy(&two_k, &bits, sizeof two_k);
	return p * two_k;
}

static inline float
sigm(float x)
{
	return 1.0f / (1.0f + fexp(-x));
}

static inline float
ftanh(float x)
{
	return 1.0f - 2.0f / (1.0f + fexp(2.0f * x));
}

TF_VECTOR_CLONES void
lstm_cell_cpu(const float *restrict g, const float *restrict c_prev,
              float *restrict act, float *restrict c, float *restrict h,
              int64_t rows, int64_t units)
{
	for (int64_t r = 0; r < rows; r++) {
		const float *gr = g + r * 4 * units;
		float *ar = act + r * 4 * units;
		for (int64_t u = 0; u < units; u++) {
			float i = sigm(gr[u]), f = sigm(gr[units + u]);
			float cand = ftanh(gr[2 * units + u]);
			float o = sigm(gr[3 * units + u]);
			float cc = f * c_prev[r * units + u] + i * cand;
			ar[u] = i;
			ar[units + u] = f;
			ar[2 * units + u] = cand;
			ar[3 * units + u] = o;
			c[r * units + u] = cc;
			h[r * units + u] = o * ftanh(cc);
		}
	}
}

/* dh: the gradient reaching h (from the output and the next step); dc:
 * on entry the gradient reaching c from the next step, on return the
 * one reaching c_prev; dg: the preactivations' gradient (written). */
TF_VECTOR_CLONES void
lstm_cell_grad_cpu(const float *restrict act, const float *restrict c_prev,
                   const float *restrict c, const float *restrict dh,
                   float *restrict dc, float *restrict dg, int64_t rows,
                   int64_t units)
{
	for (int64_t r = 0; r < rows; r++) {
		const float *ar = act + r * 4 * units;
		float *dr = dg + r * 4 * units;
		for (int64_t u = 0; u < units; u++) {
			int64_t k = r * units + u;
			float i = ar[u], f = ar[units + u];
			float cand = ar[2 * units + u], o = ar[3 * units + u];
			float tc = ftanh(c[k]);
			float dct = dc[k] + dh[k] * o * (1.0f - tc * tc);
			dr[u] = dct * cand * i * (1.0f - i);
			dr[units + u] = dct * c_prev[k] * f * (1.0f - f);
			dr[2 * units + u] = dct * i * (1.0f - cand * cand);
			dr[3 * units + u] = dh[k] * tc * o * (1.0f - o);
			dc[k] = dct * f;
		}
	}
}

TF_VECTOR_CLONES void
gru_cell_cpu(const float *restrict gx, const float *restrict gh,
             const float *restrict h_prev, float *restrict act,
             float *restrict h, int64_t rows, int64_t units)
{
	for (int64_t r = 0; r < rows; r++) {
		const float *xr = gx + r * 3 * units, *hr = gh + r * 3 * units;
		float *ar = act + r * 3 * units;
		for (int64_t u = 0; u < units; u++) {
			float z = sigm(xr[u] + hr[u]);
			float rr = sigm(xr[units + u] + hr[units + u]);
			float nn =
			    ftanh(xr[2 * units + u] + rr * hr[2 * units + u]);
			ar[u] = z;
			ar[units + u] = rr;
			ar[2 * units + u] = nn;
			h[r * units + u] =
			    z * h_prev[r * units + u] + (1.0f - z) * nn;
		}
	}
}

/* dh: the gradient reaching h; dgx and dgh: the two preactivations'
 * gradients (written); dh_prev: h_prev's share that skips the matrix
 * product, dh * z (written). */
TF_VECTOR_CLONES void
gru_cell_grad_cpu(const float *restrict act, const float *restrict gh,
                  const float *restrict h_prev, const float *restrict dh,
                  float *restrict dgx, float *restrict dgh,
                  float *restrict dh_prev, int64_t rows, int64_t units)
{
	for (int64_t r = 0; r < rows; r++) {
		const float *ar = act + r * 3 * units, *hr = gh + r * 3 * units;
		float *dx = dgx + r * 3 * units, *dhh = dgh + r * 3 * units;
		for (int64_t u = 0; u < units; u++) {
			int64_t k = r * units + u;
			float z = ar[u], rr = ar[units + u],
			      nn = ar[2 * units + u];
			float dz = dh[k] * (h_prev[k] - nn) * z * (1.0f - z);
			float dn = dh[k] * (1.0f - z) * (1.0f - nn * nn);
			float dr = dn * hr[2 * units + u] * rr * (1.0f - rr);
			dx[u] = dz;
			dx[units + u] = dr;
			dx[2 * units + u] = dn;
			dhh[u] = dz;
			dhh[units + u] = dr;
			dhh[2 * units + u] = dn * rr;
			dh_prev[k] = dh[k] * z;
		}
	}
}

/* gzr: h_prev Wh_zr (rows x 2 units); writes act's z and r and
 * rh = r * h_prev. */
TF_VECTOR_CLONES void
gru_gates_cpu(const float *restrict gx, const float *restrict gzr,
              const float *restrict h_prev, float *restrict act,
              float *restrict rh, int64_t rows, int64_t units)
{
	for (int64_t r = 0; r < rows; r++) {
		const float *xr = gx + r * 3 * units, *hr = gzr + r * 2 * units;
		float *ar = act + r * 3 * units;
		for (int64_t u = 0; u < units; u++) {
			float z = sigm(xr[u] + hr[u]);
			float rr = sigm(xr[units + u] + hr[units + u]);
			ar[u] = z;
			ar[units + u] = rr;
			rh[r * units + u] = rr * h_prev[r * units + u];
		}
	}
}

/* gn: (r * h_prev) Wh_n (rows x units); act's z in, its n out, and h. */
TF_VECTOR_CLONES void
gru_new_cpu(const float *restrict gx, const float *restrict gn,
            const float *restrict h_prev, float *restrict act,
            float *restrict h, int64_t rows, int64_t units)
{
	for (int64_t r = 0; r < rows; r++) {
		const float *xr = gx + r * 3 * units;
		float *ar = act + r * 3 * units;
		for (int64_t u = 0; u < units; u++) {
			int64_t k = r * units + u;
			float z = ar[u];
			float nn = ftanh(xr[2 * units + u] + gn[k]);
			ar[2 * units + u] = nn;
			h[k] = z * h_prev[k] + (1.0f - z) * nn;
		}
	}
}

/* From dh: the new gate's gradient dn (into dgx's third block and dn,
 * rows x units), the update gate's (into dgx's and dzr's first), and
 * dh_prev = dh * z (written). */
TF_VECTOR_CLONES void
gru_new_grad_cpu(const float *restrict act, const float *restrict h_prev,
                 const float *restrict dh, float *restrict dgx,
                 float *restrict dzr, float *restrict dn,
                 float *restrict dh_prev, int64_t rows, int64_t units)
{
	for (int64_t r = 0; r < rows; r++) {
		const float *ar = act + r * 3 * units;
		float *dx = dgx + r * 3 * units, *dg = dzr + r * 2 * units;
		for (int64_t u = 0; u < units; u++) {
			int64_t k = r * units + u;
			float z = ar[u], nn = ar[2 * units + u];
			float dz = dh[k] * (h_prev[k] - nn) * z * (1.0f - z);
			float d = dh[k] * (1.0f - z) * (1.0f - nn * nn);
			dx[u] = dz;
			dx[2 * units + u] = d;
			dg[u] = dz;
			dn[k] = d;
			dh_prev[k] = dh[k] * z;
		}
	}
}

/* From drh, the gradient reaching rh = r * h_prev: the reset gate's
 * (into dgx's and dzr's second block), and rh's share of dh_prev
 * (added). */
TF_VECTOR_CLONES void
gru_gates_grad_cpu(const float *restrict act, const float *restrict h_prev,
                   const float *restrict drh, float *restrict dgx,
                   float *restrict dzr, float *restrict dh_prev, int64_t rows,
                   int64_t units)
{
	for (int64_t r = 0; r < rows; r++) {
		const float *ar = act + r * 3 * units;
		float *dx = dgx + r * 3 * units, *dg = dzr + r * 2 * units;
		for (int64_t u = 0; u < units; u++) {
			int64_t k = r * units + u;
			float rr = ar[units + u];
			float d = drh[k] * h_prev[k] * rr * (1.0f - rr);
			dx[units + u] = d;
			dg[units + u] = d;
			dh_prev[k] += drh[k] * rr;
		}
	}
}

/* A sequence's steps: its length, clamped to 0..steps. */
static int64_t
steps_of(const int64_t *len, int64_t lstride, int64_t r, int64_t steps)
{
	int64_t l = len[r * lstride];
	return l < 0 ? 0 : l > steps ? steps : l;
}

void
mask_steps_cpu(const int64_t *len, int64_t lstride, int64_t step,
               const float *src, int64_t sstride, float *dst, int64_t dstride,
               int64_t rows, int64_t cols, int zero)
{
	for (int64_t r = 0; r < rows; r++) {
		if (len[r * lstride] > step) {
			continue;
		}
		float *d = dst + r * dstride;
		if (zero) {
			memset(d, 0, (size_t)cols * sizeof *d);
		} else {
			memcpy(d, src + r * sstride, (size_t)cols * sizeof *d);
		}
	}
}

void
reverse_steps_cpu(const int64_t *len, int64_t lstride, const float *x, float *y,
                  int64_t rows, int64_t steps, int64_t width)
{
	size_t w = (size_t)width * sizeof *y;
	for (int64_t r = 0; r < rows; r++) {
		int64_t l = steps_of(len, lstride, r, steps);
		const float *xr = x + r * steps * width;
		float *yr = y + r * steps * width;
		for (int64_t s = 0; s < steps; s++) {
			int64_t from = s < l ? l - 1 - s : s;
			memcpy(yr + s * width, xr + from * width, w);
		}
	}
}
