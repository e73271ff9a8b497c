/*
 * normalize.c - dropout and batch normalisation.
 *
 * The dropout mask comes from a counter-based hash of (seed, index)
 * (splitmix64's finaliser), so the mask does not depend on the order work
 * is done in, and a CUDA kernel draws the same one.
 */
#include <math.h>

#include "kernels/kernels.h"

static uint64_t
mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* x, y, mask: (n) */
void
dropout_forward_cpu(const float *x, float *y, float *mask, size_t n, float keep,
                    uint64_t seed)
{
	float scale = 1.0f / keep;
	for (size_t i = 0; i < n; i++) {
		double u =
		    (double)(mix(seed + 0x9e3779b97f4a7c15ull * (i + 1)) >>
		             11) *
		    0x1.0p-53;
		mask[i] = u < keep ? scale : 0.0f;
		y[i] = x[i] * mask[i];
	}
}

void
dropout_backward_cpu(const float *mask, const float *dy, float *dx, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		dx[i] += dy[i] * mask[i];
	}
}

/* x, y, xhat: (B, C); inv_std, gamma, beta, averages: (C) */
void
batchnorm_train_cpu(const float *x, float *y, float *xhat, float *inv_std,
                    const float *gamma, const float *beta, float *mean_avg,
                    float *var_avg, int64_t rows, int64_t cols, float eps,
                    float momentum)
{
	for (int64_t c = 0; c < cols; c++) {
		double sum = 0, sq = 0;
		for (int64_t r = 0; r < rows; r++) {
			double v = x[r * cols + c];
			sum += v;
			sq += v * v;
		}
		double mean = sum / (double)rows;
		double var = sq / (double)rows - mean * mean;
		var = var > 0 ? var : 0;
		float is = (float)(1.0 / sqrt(var + eps));
		inv_std[c] = is;
		for (int64_t r = 0; r < rows; r++) {
			float h = (x[r * cols + c] - (float)mean) * is;
			xhat[r * cols + c] = h;
			y[r * cols + c] = gamma[c] * h + beta[c];
		}
		mean_avg[c] =
		    momentum * mean_avg[c] + (1 - momentum) * (float)mean;
		var_avg[c] =
		    momentum * var_avg[c] + (1 - momentum) * (float)var;
	}
}

void
batchnorm_infer_cpu(const float *x, float *y, const float *gamma,
                    const float *beta, const float *mean_avg,
                    const float *var_avg, int64_t rows, int64_t cols, float eps)
{
	for (int64_t c = 0; c < cols; c++) {
		float a = gamma[c] / sqrtf(var_avg[c] + eps);
		float b = beta[c] - a * mean_avg[c];
		for (int64_t r = 0; r < rows; r++) {
			y[r * cols + c] = a * x[r * cols + c] + b;
		}
	}
}

/* dx += gamma inv_std (dy - mean(dy) - xhat mean(dy xhat)), per column */
void
batchnorm_backward_cpu(const float *dy, const float *xhat, const float *inv_std,
                       const float *gamma, float *dx, float *dgamma,
                       float *dbeta, int64_t rows, int64_t cols)
{
	for (int64_t c = 0; c < cols; c++) {
		double sdy = 0, sdyx = 0;
		for (int64_t r = 0; r < rows; r++) {
			sdy += dy[r * cols + c];
			sdyx += (double)dy[r * cols + c] * xhat[r * cols + c];
		}
		dgamma[c] += (float)sdyx;
		dbeta[c] += (float)sdy;
		if (dx == NULL) {
			continue;
		}
		float k = gamma[c] * inv_std[c];
		float m1 = (float)(sdy / (double)rows);
		float m2 = (float)(sdyx / (double)rows);
		for (int64_t r = 0; r < rows; r++) {
			dx[r * cols + c] += k * (dy[r * cols + c] - m1 -
			                         xhat[r * cols + c] * m2);
		}
	}
}
