/*
 * gpu-sgemm.c - bench/gpu's ceiling: the matrix products of one training
 * step of a dnn through cuBLAS alone (FP32, no other kernel, no data
 * movement), the same shapes tf-train --device cuda multiplies, as
 * examples/s and GFLOP/s.
 *	gpu-sgemm BATCH INPUTS "HIDDEN ..." STEPS
 * Exit 2 with a message when there is no GPU.
 */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double
now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int
main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: gpu-sgemm BATCH INPUTS \"HIDDEN ...\" "
		                "STEPS\n");
		return 64;
	}
	int batch = atoi(argv[1]), steps = atoi(argv[4]);
	int w[64], nl = 0;
	w[nl++] = atoi(argv[2]);
	for (char *s = strtok(argv[3], " ,"); s && nl < 63;
	     s = strtok(NULL, " ,")) {
		w[nl++] = atoi(s);
	}
	w[nl++] = 1; /* the logit */
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
		fprintf(stderr, "gpu-sgemm: no CUDA GPU\n");
		return 2;
	}
	cublasHandle_t h;
	if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
		fprintf(stderr, "gpu-sgemm: cuBLAS does not start\n");
		return 2;
	}
	cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH);
	/* Activations and their gradients a layer, weights and theirs. */
	float *act[64], *dact[64], *wt[64], *dwt[64];
	double flops = 0;
	for (int l = 0; l < nl; l++) {
		cudaMalloc((void **)&act[l], (size_t)batch * w[l] * 4);
		cudaMalloc((void **)&dact[l], (size_t)batch * w[l] * 4);
		cudaMemset(act[l], 0, (size_t)batch * w[l] * 4);
		cudaMemset(dact[l], 0, (size_t)batch * w[l] * 4);
		if (l + 1 < nl) {
			size_t sz = (size_t)w[l] * w[l + 1] * 4;
			cudaMalloc((void **)&wt[l], sz);
			cudaMalloc((void **)&dwt[l], sz);
			cudaMemset(wt[l], 0, sz);
			/* forward, dW, dX (none into the input) */
			flops += 2.0 * batch * w[l] * w[l + 1] * (l ? 3 : 2);
		}
	}
	const float one = 1, zero = 0;
	double best = 1e30;
	for (int rep = 0; rep < 3; rep++) {
		cudaDeviceSynchronize();
		double t0 = now();
		for (int s = 0; s < steps; s++) {
			/* row-major Y[b][o] = X[b][i] W[i][o], as column-major
			 * Y^T = W^T X^T */
			for (int l = 0; l + 1 < nl; l++) {
				cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N,
				            w[l + 1], batch, w[l], &one, wt[l],
				            w[l + 1], act[l], w[l], &zero,
				            act[l + 1], w[l + 1]);
			}
			for (int l = nl - 2; l >= 0; l--) {
				/* dW = X^T dY; dX = dY W^T */
				cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T,
				            w[l + 1], w[l], batch, &one,
				            dact[l + 1], w[l + 1], act[l], w[l],
				            &zero, dwt[l], w[l + 1]);
				if (l > 0) {
					cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N,
					            w[l], batch, w[l + 1], &one,
					            wt[l], w[l + 1],
					            dact[l + 1], w[l + 1],
					            &zero, dact[l], w[l]);
				}
			}
		}
		cudaDeviceSynchronize();
		double t = now() - t0;
		best = t < best ? t : best;
	}
	printf("%.0f %.1f\n", (double)batch * steps / best,
	       flops * steps / best * 1e-9);
	cublasDestroy(h);
	return 0;
}
