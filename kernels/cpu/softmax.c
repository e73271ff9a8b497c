/*
 * softmax.c - row-wise softmax and the losses, numerically stable:
 * log-sum-exp with the row maximum taken out; sigmoid cross-entropy as
 * max(x, 0) - x z + log(1 + exp(-|x|)), as TensorFlow computes it.
 */
#include <math.h>

#include "kernels/kernels.h"

/* x, y: (rows, cols) */
void
softmax_forward_cpu(const float *x, float *y, int64_t rows, int64_t cols)
{
	if (cols < 1) {
		return;
	}
	for (int64_t r = 0; r < rows; r++) {
		const float *xr = x + r * cols;
		float *yr = y + r * cols;
		float mx = xr[0];
		for (int64_t c = 1; c < cols; c++) {
			mx = xr[c] > mx ? xr[c] : mx;
		}
		double sum = 0;
		for (int64_t c = 0; c < cols; c++) {
			yr[c] = expf(xr[c] - mx);
			sum += yr[c];
		}
		float inv = (float)(1.0 / sum);
		for (int64_t c = 0; c < cols; c++) {
			yr[c] *= inv;
		}
	}
}

/* dx += y * (dy - sum(dy * y)) per row */
void
softmax_backward_cpu(const float *y, const float *dy, float *dx, int64_t rows,
                     int64_t cols)
{
	for (int64_t r = 0; r < rows; r++) {
		const float *yr = y + r * cols, *gr = dy + r * cols;
		float *dr = dx + r * cols;
		double dot = 0;
		for (int64_t c = 0; c < cols; c++) {
			dot += (double)yr[c] * gr[c];
		}
		for (int64_t c = 0; c < cols; c++) {
			dr[c] += yr[c] * (gr[c] - (float)dot);
		}
	}
}

/* logits: (rows, cols), labels: (rows) class indices */
double
softmax_xent_cpu(const float *logits, const float *labels, float *dlogits,
                 float scale, int64_t rows, int64_t cols)
{
	if (cols < 1 || rows < 1) {
		return NAN;
	}
	double total = 0;
	for (int64_t r = 0; r < rows; r++) {
		const float *xr = logits + r * cols;
		float mx = xr[0];
		for (int64_t c = 1; c < cols; c++) {
			mx = xr[c] > mx ? xr[c] : mx;
		}
		double sum = exp((double)(xr[0] - mx)); /* >= exp(0) overall */
		for (int64_t c = 1; c < cols; c++) {
			sum += exp((double)(xr[c] - mx));
		}
		double lse = log(sum) + mx;
		float lf = labels[r];
		int64_t k = (int64_t)lf;
		if (!(lf >= 0) || (float)k != lf || k >= cols) {
			return NAN; /* not a class index */
		}
		total += lse - xr[k];
		if (dlogits != NULL) {
			float *dr = dlogits + r * cols;
			float s = scale / (float)rows;
			for (int64_t c = 0; c < cols; c++) {
				float p = (float)exp((double)xr[c] - lse);
				dr[c] += s * (p - (c == k ? 1.0f : 0.0f));
			}
		}
	}
	return total / (double)rows;
}

/* logits, labels: (rows, 1) */
double
sigmoid_xent_cpu(const float *logits, const float *labels, float *dlogits,
                 float scale, int64_t rows)
{
	double total = 0;
	float s = scale / (float)rows;
	for (int64_t r = 0; r < rows; r++) {
		/* One exponential serves the loss and the sigmoid, with no
		 * overflow on either side: e = exp(-|x|) is in (0, 1]. */
		float x = logits[r], z = labels[r];
		float e = expf(-fabsf(x));
		total += (double)((x > 0 ? x : 0) - x * z) + (double)log1pf(e);
		if (dlogits != NULL) {
			float p = x >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e);
			dlogits[r] += s * (p - z);
		}
	}
	return total / (double)rows;
}

/* pred, target: (rows, cols); mean of squared errors */
double
mse_cpu(const float *pred, const float *target, float *dpred, float scale,
        int64_t rows, int64_t cols)
{
	double total = 0;
	size_t n = (size_t)(rows * cols);
	float s = 2.0f * scale / (float)n;
	for (size_t i = 0; i < n; i++) {
		float d = pred[i] - target[i];
		total += (double)d * d;
		if (dpred != NULL) {
			dpred[i] += s * d;
		}
	}
	return total / (double)n;
}
