/*
 * gemm_avx2.c - single-precision matrix products with AVX2 and FMA, for
 * CPUs without AVX-512 (chosen at run time, one thread; CBLAS otherwise).
 *
 * C (m x n) = alpha * op(A) op(B) + beta * C, row-major.  As in
 * gemm_avx512.c each element of C is one sum over k in order (a fused
 * multiply-add a step), whatever m is: a row's product does not depend
 * on the rows beside it, so a model predicts a row alike in a batch of
 * one (tf-serve) and of many (tf-eval), which OpenBLAS's kernels, that
 * pick their path by shape, do not promise.  Tiles of up to 4 rows and 16
 * columns stay in registers while k runs; the last columns of a row (n
 * not a multiple of 8) are summed by fmaf() in the same order.  op(B) =
 * B^T is transposed once into a scratch buffer.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,fma")))

int
gemm_avx2_usable(void)
{
	static int usable = -1;
	if (usable < 0) {
		__builtin_cpu_init();
		usable = __builtin_cpu_supports("avx2") &&
		         __builtin_cpu_supports("fma") &&
		         getenv("TFKIT_NO_AVX2") == NULL;
	}
	return usable;
}

/* Rows i0..i0+mr of C, columns j..j+8v (v vectors of 8). */
static AVX2 void
tile(int64_t k, const float *a, int64_t sam, int64_t sak, const float *b,
     int64_t ldb, float *c, int64_t ldc, int mr, int v, float alpha, float beta)
{
	__m256 acc[4][2];
	for (int i = 0; i < 4; i++) {
		acc[i][0] = acc[i][1] = _mm256_setzero_ps();
	}
	for (int64_t kk = 0; kk < k; kk++) {
		const float *br = b + kk * ldb;
		__m256 b0 = _mm256_loadu_ps(br);
		__m256 b1 = v > 1 ? _mm256_loadu_ps(br + 8) : b0;
		for (int i = 0; i < mr; i++) {
			__m256 av = _mm256_set1_ps(a[i * sam + kk * sak]);
			acc[i][0] = _mm256_fmadd_ps(av, b0, acc[i][0]);
			if (v > 1) {
				acc[i][1] = _mm256_fmadd_ps(av, b1, acc[i][1]);
			}
		}
	}
	__m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
	for (int i = 0; i < mr; i++) {
		for (int j = 0; j < v; j++) {
			float *cp = c + i * ldc + 8 * j;
			__m256 r = _mm256_mul_ps(va, acc[i][j]);
			if (beta != 0.0f) {
				r = _mm256_fmadd_ps(vb, _mm256_loadu_ps(cp), r);
			}
			_mm256_storeu_ps(cp, r);
		}
	}
}

int
gemm_avx2(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
          const float *a, const float *b, float beta, float *c)
{
	if (tb && (b = transposed_cpu(b, n, k)) == NULL) {
		return -1; /* B^T: (n x k) into k x n, the thread's scratch */
	}
	/* a(i, kk) = a[i * sam + kk * sak] */
	int64_t sam = ta ? 1 : k, sak = ta ? m : 1;
	int64_t nv = n / 8 * 8;
	for (int64_t i0 = 0; i0 < m; i0 += 4) {
		int mr = m - i0 < 4 ? (int)(m - i0) : 4;
		const float *ai = a + i0 * sam;
		for (int64_t j = 0; j < nv; j += 16) {
			int v = nv - j >= 16 ? 2 : 1;
			tile(k, ai, sam, sak, b + j, n, c + i0 * n + j, n, mr,
			     v, alpha, beta);
		}
		for (int i = 0; i < mr; i++) {
			for (int64_t j = nv; j < n; j++) {
				float s = 0.0f;
				for (int64_t kk = 0; kk < k; kk++) {
					s = fmaf(ai[i * sam + kk * sak],
					         b[kk * n + j], s);
				}
				float *cp = c + (i0 + i) * n + j;
				*cp = beta != 0.0f ? fmaf(beta, *cp, alpha * s)
				                   : alpha * s;
			}
		}
	}
	return 0;
}

#else

int
gemm_avx2_usable(void)
{
	return 0;
}

int
gemm_avx2(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
          const float *a, const float *b, float beta, float *c)
{
	(void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)a;
	(void)b, (void)beta, (void)c;
	return -1;
}

#endif
