/*
 * activation.c - elementwise activations and their gradients.  The
 * gradients use the saved output y, and add into dx.
 */
#include <math.h>

#include "kernels/kernels.h"

/* Branch-free loops over restrict pointers, so the compiler vectorizes
 * them (signs are random: a branch would be mispredicted half the time). */
TF_VECTOR_CLONES void
relu_forward_cpu(const float *restrict x, float *restrict y, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		y[i] = x[i] > 0.0f ? x[i] : 0.0f;
	}
}

TF_VECTOR_CLONES void
relu_backward_cpu(const float *restrict y, const float *restrict dy,
                  float *restrict dx, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		dx[i] += (float)(y[i] > 0.0f) * dy[i];
	}
}

void
sigmoid_forward_cpu(const float *x, float *y, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		y[i] = 1.0f / (1.0f + expf(-x[i]));
	}
}

void
sigmoid_backward_cpu(const float *y, const float *dy, float *dx, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		dx[i] += dy[i] * y[i] * (1.0f - y[i]);
	}
}

void
tanh_forward_cpu(const float *x, float *y, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		y[i] = tanhf(x[i]);
	}
}

void
tanh_backward_cpu(const float *y, const float *dy, float *dx, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		dx[i] += dy[i] * (1.0f - y[i] * y[i]);
	}
}
