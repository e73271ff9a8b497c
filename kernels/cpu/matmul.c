/*
 * matmul.c - matrix products through CBLAS (OpenBLAS), and the bias
 * kernels that go with a dense layer.
 */
#include <cblas.h>
#include <string.h>

#include "kernels/kernels.h"

static int threads = 1;

/*
 * OpenBLAS starts a worker per core when it loads, and an idle worker
 * spins (sched_yield) for a while before it sleeps; on a small machine
 * that spinning takes a core from the reader thread.  With one thread
 * asked for, stop the workers (OpenBLAS's own shutdown, exported for its
 * fork handling; they are started again if a parallel call comes).  Weak:
 * another BLAS simply lacks it.
 */
extern int blas_thread_shutdown_(void) __attribute__((weak));

void
threads_cpu(int n)
{
	threads = n;
	openblas_set_num_threads(n);
	if (n == 1 && blas_thread_shutdown_ != NULL) {
		blas_thread_shutdown_();
	}
}

/* C (m x n) = alpha * op(A) op(B) + beta * C, all row-major.  One thread
 * on an AVX-512 CPU: gemm_avx512.c; on one with AVX2 and FMA only:
 * gemm_avx2.c; otherwise, or for either to fall back on, CBLAS. */
void
gemm_cpu(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
         const float *a, const float *b, float beta, float *c)
{
	if (threads == 1 && gemm_avx512_usable() &&
	    gemm_avx512(ta, tb, m, n, k, alpha, a, b, beta, c) == 0) {
		return;
	}
	if (threads == 1 && !gemm_avx512_usable() && gemm_avx2_usable() &&
	    gemm_avx2(ta, tb, m, n, k, alpha, a, b, beta, c) == 0) {
		return;
	}
	cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
	            tb ? CblasTrans : CblasNoTrans, (blasint)m, (blasint)n,
	            (blasint)k, alpha, a, (blasint)(ta ? m : k), b,
	            (blasint)(tb ? k : n), beta, c, (blasint)n);
}

/* B packed once for many products: where gemm_cpu() would call
 * gemm_avx2() (one thread, AVX2 and no AVX-512); elsewhere nothing is
 * packed and the products are gemm_cpu()'s. */
size_t
gemm_pack_floats_cpu(int64_t n, int64_t k)
{
	return threads == 1 && !gemm_avx512_usable() && gemm_avx2_usable()
	           ? (size_t)gemm_avx2_packed_floats(n, k)
	           : 0;
}

void
gemm_pack_cpu(int tb, int64_t n, int64_t k, const float *b, float *p)
{
	if (gemm_pack_floats_cpu(n, k) > 0) {
		gemm_avx2_pack(tb, n, k, b, p);
	}
}

void
gemm_packed_cpu(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                const float *a, const float *b, const float *p, float beta,
                float *c)
{
	if (p != NULL && gemm_pack_floats_cpu(n, k) > 0 &&
	    gemm_avx2_packed(ta, tb, m, n, k, alpha, a, p, beta, c) == 0) {
		return;
	}
	gemm_cpu(ta, tb, m, n, k, alpha, a, b, beta, c);
}

/* y: (rows, cols) += b: (cols) */
TF_VECTOR_CLONES void
add_bias_cpu(float *restrict y, const float *restrict b, int64_t rows,
             int64_t cols)
{
	for (int64_t r = 0; r < rows; r++) {
		float *row = y + r * cols;
		for (int64_t c = 0; c < cols; c++) {
			row[c] += b[c];
		}
	}
}

/* db: (cols) += column sums of dy: (rows, cols), in the order of
 * BIAS_GRAD_DIRECT and BIAS_GRAD_CHUNK (kernels.h) */
TF_VECTOR_CLONES void
bias_grad_cpu(const float *restrict dy, float *restrict db, int64_t rows,
              int64_t cols)
{
	if (rows <= BIAS_GRAD_DIRECT) {
		for (int64_t r = 0; r < rows; r++) {
			const float *row = dy + r * cols;
			for (int64_t c = 0; c < cols; c++) {
				db[c] += row[c];
			}
		}
		return;
	}
	/* columns 256 at a time: each chunk's sums, then into db */
	float part[256];
	for (int64_t c0 = 0; c0 < cols; c0 += 256) {
		int64_t nc = cols - c0 < 256 ? cols - c0 : 256;
		for (int64_t r0 = 0; r0 < rows; r0 += BIAS_GRAD_CHUNK) {
			int64_t r1 = r0 + BIAS_GRAD_CHUNK < rows
			                 ? r0 + BIAS_GRAD_CHUNK
			                 : rows;
			for (int64_t c = 0; c < nc; c++) {
				part[c] = 0.0f;
			}
			for (int64_t r = r0; r < r1; r++) {
				const float *row = dy + r * cols + c0;
				for (int64_t c = 0; c < nc; c++) {
					part[c] += row[c];
				}
			}
			for (int64_t c = 0; c < nc; c++) {
				db[c0 + c] += part[c];
			}
		}
	}
}

void
copy_cpu(const float *x, float *y, size_t n)
{
	memmove(y, x, n * sizeof *y);
}

void
zero_cpu(float *y, size_t n)
{
	memset(y, 0, n * sizeof *y);
}

void
fill_cpu(float *y, size_t n, float v)
{
	for (size_t i = 0; i < n; i++) {
		y[i] = v;
	}
}

TF_VECTOR_CLONES void
add_cpu(const float *restrict x, float *restrict y, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		y[i] += x[i];
	}
}
