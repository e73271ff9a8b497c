/*
 * gemm-ceiling - the examples/s a training step could reach if it did
 * nothing but its matrix products: the forward and backward products of a
 * dense network (default 28-128-32-8-1, batch 1024) through tf_gemm, the
 * same kernels tf-train uses.  bench/train prints tf-train's speed as a
 * fraction of it.
 *
 *   gemm-ceiling [THREADS [STEPS]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tf/tf.h"

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	int steps = argc > 2 ? atoi(argv[2]) : 500;
	const int64_t b = 1024, w[] = {28, 128, 32, 8, 1};
	const int layers = 4;
	tf_set_threads(threads);
	struct tf_device *d = tf_device_cpu();
	float *a[5], *da[5], *W[4], *dW[4];
	for (int l = 0; l <= layers; l++) {
		a[l] = calloc((size_t)(b * w[l]), sizeof(float));
		da[l] = calloc((size_t)(b * w[l]), sizeof(float));
	}
	for (int l = 0; l < layers; l++) {
		W[l] = calloc((size_t)(w[l] * w[l + 1]), sizeof(float));
		dW[l] = calloc((size_t)(w[l] * w[l + 1]), sizeof(float));
	}
	double t0 = 0;
	for (int s = -20; s < steps; s++) {
		if (s == 0) {
			t0 = now(); /* after a warm-up */
		}
		for (int l = 0; l < layers; l++) {
			tf_gemm(d, 0, 0, b, w[l + 1], w[l], 1, a[l], W[l], 0,
			        a[l + 1]);
		}
		for (int l = layers - 1; l >= 0; l--) {
			tf_gemm(d, 1, 0, w[l], w[l + 1], b, 1, a[l], da[l + 1],
			        0, dW[l]);
			if (l > 0) {
				tf_gemm(d, 0, 1, b, w[l], w[l + 1], 1,
				        da[l + 1], W[l], 0, da[l]);
			}
		}
	}
	double dt = now() - t0;
	printf("%.0f\n", (double)steps * (double)b / dt);
	return 0;
}
