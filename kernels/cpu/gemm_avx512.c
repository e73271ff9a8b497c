/*
 * gemm_avx512.c - single-precision matrix products for the shapes of
 * small dense layers, with AVX-512 (chosen at run time; CBLAS otherwise).
 *
 * C (m x n) = alpha * op(A) op(B) + beta * C, row-major.  Each tile of up
 * to 6 rows and 64 columns of C lives in registers while k runs (24 of
 * the 32 vector registers): one row of B (4 vectors, masked at the edge)
 * and one broadcast element of A per row and step.  op(A) = A^T is read with
 * strides (the weight gradient X^T dY streams X and dY row by row); op(B) = B^T
 * is transposed once into a scratch buffer (B is a weight matrix, small).  For
 * these shapes (k and n up to a few hundred, m a batch) this runs well ahead of
 * OpenBLAS's generic kernels, which is what it picks on CPUs it does not
 * know.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f")))

static AVX512 inline __mmask16
edge(int64_t cols)
{
	return cols >= 16  ? (__mmask16)0xFFFF
	       : cols <= 0 ? (__mmask16)0
	                   : (__mmask16)((1u << cols) - 1);
}

/*
 * One tile: MR rows of C from row a of A (a(i, kk) = a[i * sam + kk *
 * sak]), NV vectors of columns, the last masked to nr columns in all.
 * The accumulators are named variables (an array would live in memory);
 * the conditions on MR and NV are constants, so each instance keeps
 * only its own.
 */
#define ROW(I)                                                                 \
	do {                                                                   \
		if (mr_ > I) {                                                 \
			__m512 av = _mm512_set1_ps(a[I * sam + kk * sak]);     \
			c##I##0 = _mm512_fmadd_ps(av, b0, c##I##0);            \
			if (nv_ > 1)                                           \
				c##I##1 = _mm512_fmadd_ps(av, b1, c##I##1);    \
			if (nv_ > 2)                                           \
				c##I##2 = _mm512_fmadd_ps(av, b2, c##I##2);    \
			if (nv_ > 3)                                           \
				c##I##3 = _mm512_fmadd_ps(av, b3, c##I##3);    \
		}                                                              \
	} while (0)
#define PUT(I, J)                                                              \
	do {                                                                   \
		if (mr_ > I && nv_ > J) {                                      \
			float *cp = c + I * ldc + 16 * J;                      \
			if (!last) {                                           \
				_mm512_mask_storeu_ps(w + I * ldc + 16 * J,    \
				                      m##J, c##I##J);          \
				break;                                         \
			}                                                      \
			__m512 v = _mm512_mul_ps(va, c##I##J);                 \
			if (beta != 0.0f) {                                    \
				v = _mm512_fmadd_ps(                           \
				    vb, _mm512_maskz_loadu_ps(m##J, cp), v);   \
			}                                                      \
			_mm512_mask_storeu_ps(cp, m##J, v);                    \
		}                                                              \
	} while (0)
/* a block of k after the first goes on from the sums the one before
 * left in w: the same chain of FMAs, so the same floats, as one block */
#define GET(I, J)                                                              \
	do {                                                                   \
		if (mr_ > I && nv_ > J && !first) {                            \
			c##I##J =                                              \
			    _mm512_maskz_loadu_ps(m##J, w + I * ldc + 16 * J); \
		}                                                              \
	} while (0)
#define GETROW(I)                                                              \
	do {                                                                   \
		GET(I, 0);                                                     \
		GET(I, 1);                                                     \
		GET(I, 2);                                                     \
		GET(I, 3);                                                     \
	} while (0)
#define PUTROW(I)                                                              \
	do {                                                                   \
		PUT(I, 0);                                                     \
		PUT(I, 1);                                                     \
		PUT(I, 2);                                                     \
		PUT(I, 3);                                                     \
	} while (0)
#define TILE(MR, NV)                                                           \
	static AVX512 void tile_##MR##_##NV(                                   \
	    int64_t k, const float *a, int64_t sam, int64_t sak,               \
	    const float *b, int64_t ldb, float *c, float *w, int64_t ldc,      \
	    int64_t nr, float alpha, float beta, int first, int last)          \
	{                                                                      \
		enum { mr_ = MR, nv_ = NV };                                   \
		__m512 z = _mm512_setzero_ps();                                \
		__m512 c00 = z, c01 = z, c02 = z, c03 = z, c10 = z, c11 = z;   \
		__m512 c12 = z, c13 = z, c20 = z, c21 = z, c22 = z, c23 = z;   \
		__m512 c30 = z, c31 = z, c32 = z, c33 = z, c40 = z, c41 = z;   \
		__m512 c42 = z, c43 = z, c50 = z, c51 = z, c52 = z, c53 = z;   \
		__mmask16 m0 = edge(nr), m1 = edge(nr - 16);                   \
		__mmask16 m2 = edge(nr - 32), m3 = edge(nr - 48);              \
		GETROW(0);                                                     \
		GETROW(1);                                                     \
		GETROW(2);                                                     \
		GETROW(3);                                                     \
		GETROW(4);                                                     \
		GETROW(5);                                                     \
		for (int64_t kk = 0; kk < k; kk++) {                           \
			const float *br = b + kk * ldb;                        \
			__m512 b0 = _mm512_maskz_loadu_ps(m0, br);             \
			__m512 b1 =                                            \
			    NV > 1 ? _mm512_maskz_loadu_ps(m1, br + 16) : z;   \
			__m512 b2 =                                            \
			    NV > 2 ? _mm512_maskz_loadu_ps(m2, br + 32) : z;   \
			__m512 b3 =                                            \
			    NV > 3 ? _mm512_maskz_loadu_ps(m3, br + 48) : z;   \
			ROW(0);                                                \
			ROW(1);                                                \
			ROW(2);                                                \
			ROW(3);                                                \
			ROW(4);                                                \
			ROW(5);                                                \
		}                                                              \
		__m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);  \
		PUTROW(0);                                                     \
		PUTROW(1);                                                     \
		PUTROW(2);                                                     \
		PUTROW(3);                                                     \
		PUTROW(4);                                                     \
		PUTROW(5);                                                     \
	}

#define TILES(MR) TILE(MR, 1) TILE(MR, 2) TILE(MR, 3) TILE(MR, 4)
TILES(1)
TILES(2)
TILES(3)
TILES(4)
TILES(5)
TILES(6)

typedef void (*tile_fn)(int64_t, const float *, int64_t, int64_t, const float *,
                        int64_t, float *, float *, int64_t, int64_t, float,
                        float, int, int);
#define MR_MAX 6
static const tile_fn tiles[MR_MAX][4] = {
    {tile_1_1, tile_1_2, tile_1_3, tile_1_4},
    {tile_2_1, tile_2_2, tile_2_3, tile_2_4},
    {tile_3_1, tile_3_2, tile_3_3, tile_3_4},
    {tile_4_1, tile_4_2, tile_4_3, tile_4_4},
    {tile_5_1, tile_5_2, tile_5_3, tile_5_4},
    {tile_6_1, tile_6_2, tile_6_3, tile_6_4},
};

int
gemm_avx512_usable(void)
{
	static int usable = -1;
	if (usable < 0) {
		__builtin_cpu_init();
		usable = __builtin_cpu_supports("avx512f") &&
		         getenv("TFKIT_NO_AVX512") == NULL;
	}
	return usable;
}

/*
 * C (m x n) = alpha op(A) B + beta C, A read as a(i, kk) = a[i * sam +
 * kk * sak], B k x n in place: blocks of KC steps of k, and in each,
 * blocks of 64 columns, over which every tile of rows runs (the block of
 * B, KC x 64, stays in the first-level cache meanwhile, the block of A
 * in the second: a long k read whole for each tile would stream both
 * from farther).  Between blocks of k the sums wait in C, or where C's
 * own values are still to be scaled by beta, in slot 2.  The rows are
 * cut by gemm_tile_rows() (64 rows are 6 x 9 and 5 x 2, not 6 x 10
 * and 4).
 */
#define KC 256

static int
blocked(int64_t m, int64_t n, int64_t k, const float *a, int64_t sam,
        int64_t sak, const float *b, float *c, float alpha, float beta)
{
	float *w = c;
	if (k > KC && beta != 0.0f &&
	    (w = scratch_cpu(2, (size_t)(m * n))) == NULL) {
		return -1;
	}
	int64_t nt = (m + MR_MAX - 1) / MR_MAX;
	for (int64_t k0 = 0; k0 < k; k0 += KC) {
		int64_t kc = k - k0 < KC ? k - k0 : KC;
		int first = k0 == 0, last = k0 + kc == k;
		for (int64_t j0 = 0; j0 < n; j0 += 64) {
			int64_t nr = n - j0 < 64 ? n - j0 : 64;
			int nv = (int)((nr + 15) / 16);
			for (int64_t q = 0; q < nt; q++) {
				int64_t i0;
				int mr = gemm_tile_rows(m, MR_MAX, q, &i0);
				tiles[mr - 1][nv - 1](
				    kc, a + i0 * sam + k0 * sak, sam, sak,
				    b + k0 * n + j0, n, c + i0 * n + j0,
				    w + i0 * n + j0, n, nr, alpha, beta, first,
				    last);
			}
		}
	}
	return 0;
}

int
gemm_avx512(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
            const float *a, const float *b, float beta, float *c)
{
	/*
	 * A weight gradient X^T dY with few columns (n < 48) and more rows:
	 * computed as its transpose dY^T X, whose rows are long, so each
	 * broadcast feeds more FMAs; then transposed into C.
	 */
	if (ta && !tb && n < 48 && m > n) {
		float *t = scratch_cpu(0, (size_t)(n * m));
		/* T (n x m) = B^T A: a'(i, kk) = B[kk][i], rows of A. */
		if (t == NULL ||
		    blocked(n, m, k, b, 1, n, a, t, 1.0f, 0.0f) != 0) {
			return -1;
		}
		untransposed_cpu(t, m, n, alpha, beta, c);
		return 0;
	}
	if (tb) {
		if ((b = transposed_cpu(b, n, k)) == NULL) {
			return -1;
		}
	}
	/* a(i, kk): A is m x k, or k x m read transposed. */
	return blocked(m, n, k, a, ta ? 1 : k, ta ? m : 1, b, c, alpha, beta);
}

#else

int
gemm_avx512_usable(void)
{
	return 0;
}

int
gemm_avx512(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
            const float *a, const float *b, float beta, float *c)
{
	(void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)a;
	(void)b, (void)beta, (void)c;
	return -1;
}

#endif
