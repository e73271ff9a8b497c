/*
 * gemm_avx2.c - single-precision matrix products with AVX2 and FMA, for
 * CPUs without AVX-512 (chosen at run time, one thread; CBLAS otherwise).
 *
 * C (m x n) = alpha * op(A) op(B) + beta * C, row-major.  As in
 * gemm_avx512.c each element of C is one sum over k in order (a fused
 * multiply-add a step), whatever m is: a row's product does not depend
 * on the rows beside it, so a model predicts a row alike in a batch of
 * one (tf-serve) and of many (tf-eval), which OpenBLAS's kernels, that
 * pick their path by shape, do not promise.  Tiles of up to 6 rows and 16
 * columns stay in registers while k runs (gemm_avx512.c's layout with
 * vectors of 8), the last columns masked.  Beyond one tile of rows the
 * product is blocked for the caches, as GotoBLAS blocks it: k by blocks of
 * KC, the columns by groups of panels of op(B) (B or B^T) packed into the
 * thread's scratch, each tile of rows run over a whole group; a narrow
 * weight gradient X^T dY is computed as its transpose.  The blocks change
 * no sum: a row's product is the same alone and in a batch of any size.
 */
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

/* Columns 0..cols-1 of a vector of 8 (a mask for maskload/maskstore). */
static AVX2 inline __m256i
edge(int64_t cols)
{
	__m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	int c = cols > 8 ? 8 : cols < 0 ? 0 : (int)cols;
	return _mm256_cmpgt_epi32(_mm256_set1_epi32(c), lane);
}

/*
 * One tile: MR rows of C from row a of A (a(i, kk) = a[i * sam + kk *
 * sak]), NV vectors of 8 columns, the last masked to nr columns in all,
 * over kc steps of k.  6 rows by 2 vectors is 12 accumulators, two rows of
 * B and a broadcast: 15 of the 16 vector registers.  The accumulators are
 * named variables (an array of them would live in memory) and MR, NV and
 * E are constants, so each instance keeps only its own.
 *
 * k in blocks: a block after the first starts from the sums so far, kept
 * as they are in w (ldw a row), and a block before the last leaves them
 * there; only the last scales them into C.  A float kept and read back is
 * the same float, so each element of C is still one chain of fused
 * multiply-adds over k in order.
 */
#define ROW(I)                                                                 \
	do {                                                                   \
		if (mr_ > I) {                                                 \
			__m256 av =                                            \
			    _mm256_broadcast_ss(a + I * sam + kk * sak);       \
			c##I##0 = _mm256_fmadd_ps(av, b0, c##I##0);            \
			if (nv_ > 1)                                           \
				c##I##1 = _mm256_fmadd_ps(av, b1, c##I##1);    \
		}                                                              \
	} while (0)
/* Vector J of a row at p (the edge's masked). */
#define LOAD(p, J)                                                             \
	(e_ && J == nv_ - 1 ? _mm256_maskload_ps(p, edge(nr - 8 * J))          \
	                    : _mm256_loadu_ps(p))
#define STORE(p, J, v)                                                         \
	do {                                                                   \
		if (e_ && J == nv_ - 1)                                        \
			_mm256_maskstore_ps(p, edge(nr - 8 * J), v);           \
		else                                                           \
			_mm256_storeu_ps(p, v);                                \
	} while (0)
#define START(I, J)                                                            \
	do {                                                                   \
		if (mr_ > I && nv_ > J && !first)                              \
			c##I##J = LOAD(w + I * ldw + 8 * J, J);                \
	} while (0)
#define PUT(I, J)                                                              \
	do {                                                                   \
		if (mr_ > I && nv_ > J) {                                      \
			if (!last) {                                           \
				STORE(w + I * ldw + 8 * J, J, c##I##J);        \
				break;                                         \
			}                                                      \
			float *cp = c + I * ldc + 8 * J;                       \
			__m256 v = _mm256_mul_ps(va, c##I##J);                 \
			if (beta != 0.0f) {                                    \
				v = _mm256_fmadd_ps(vb, LOAD(cp, J), v);       \
			}                                                      \
			STORE(cp, J, v);                                       \
		}                                                              \
	} while (0)
#define EACH(F)                                                                \
	F(0, 0);                                                               \
	F(0, 1);                                                               \
	F(1, 0);                                                               \
	F(1, 1);                                                               \
	F(2, 0);                                                               \
	F(2, 1);                                                               \
	F(3, 0);                                                               \
	F(3, 1);                                                               \
	F(4, 0);                                                               \
	F(4, 1);                                                               \
	F(5, 0);                                                               \
	F(5, 1)

struct tile_args {
	int64_t kc, sam, sak, ldb, ldc, ldw, nr;
	float alpha, beta;
	int first, last;
};

#define TILE(MR, NV, E)                                                        \
	static AVX2 void tile_##MR##_##NV##_##E(                               \
	    const struct tile_args *t, const float *a, const float *b,         \
	    float *c, float *w)                                                \
	{                                                                      \
		enum { mr_ = MR, nv_ = NV, e_ = E };                           \
		const int64_t kc = t->kc, sam = t->sam, sak = t->sak;          \
		const int64_t ldb = t->ldb, ldc = t->ldc, ldw = t->ldw;        \
		const int64_t nr = t->nr;                                      \
		const float alpha = t->alpha, beta = t->beta;                  \
		const int first = t->first, last = t->last;                    \
		__m256 z = _mm256_setzero_ps();                                \
		__m256 c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z;   \
		__m256 c30 = z, c31 = z, c40 = z, c41 = z, c50 = z, c51 = z;   \
		EACH(START);                                                   \
		for (int64_t kk = 0; kk < kc; kk++) {                          \
			const float *br = b + kk * ldb;                        \
			__m256 b0 = LOAD(br, 0);                               \
			__m256 b1 = NV > 1 ? LOAD(br + 8, 1) : z;              \
			ROW(0);                                                \
			ROW(1);                                                \
			ROW(2);                                                \
			ROW(3);                                                \
			ROW(4);                                                \
			ROW(5);                                                \
		}                                                              \
		__m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);  \
		(void)va, (void)vb, (void)ldc, (void)ldw, (void)nr;            \
		EACH(PUT);                                                     \
	}

#define TILES(MR) TILE(MR, 1, 0) TILE(MR, 2, 0) TILE(MR, 1, 1) TILE(MR, 2, 1)
TILES(1)
TILES(2)
TILES(3)
TILES(4)
TILES(5)
TILES(6)

typedef void (*tile_fn)(const struct tile_args *, const float *, const float *,
                        float *, float *);
#define MR_MAX 6
/* [rows - 1][vectors - 1][whether the last is masked] */
#define TILE_FNS(MR)                                                           \
	{                                                                      \
		{tile_##MR##_1_0, tile_##MR##_1_1},                            \
		    {tile_##MR##_2_0, tile_##MR##_2_1},                        \
	}
static const tile_fn tiles[MR_MAX][2][2] = {TILE_FNS(1), TILE_FNS(2),
                                            TILE_FNS(3), TILE_FNS(4),
                                            TILE_FNS(5), TILE_FNS(6)};

/* The blocks: KC steps of k at a time (longer k is split), and as many
 * packed panels of B (KC x 16 each) at a time as fill PACK_BYTES, which
 * the second-level cache keeps while every tile of rows runs over them
 * (a tile of A, up to 6 x KC, stays in the first level meanwhile). */
#define KC         256
#define PACK_BYTES (192 * 1024)

/* Panels j0/16 .. of rows k0..k0+kc of op(B) into d, panel after panel
 * (kc x 16 each, the edge's columns zero): B (k x n) read by blocks of 8
 * rows, in order, each written 512 bytes at a time; B^T (B n x k) a row of
 * B (a column of the panel) at a time. */
static AVX2 void
pack(float *d, const float *b, int tb, int64_t n, int64_t k, int64_t k0,
     int64_t kc, int64_t j0, int64_t j1)
{
	if (tb) {
		for (int64_t j = j0; j < j1; j += 16) {
			float *dp = d + (j - j0) * kc;
			for (int64_t jj = 0; jj < 16; jj++) {
				if (j + jj >= n) {
					for (int64_t kk = 0; kk < kc; kk++) {
						dp[kk * 16 + jj] = 0.0f;
					}
					continue;
				}
				const float *br = b + (j + jj) * k + k0;
				for (int64_t kk = 0; kk < kc; kk++) {
					dp[kk * 16 + jj] = br[kk];
				}
			}
		}
		return;
	}
	for (int64_t q0 = 0; q0 < kc; q0 += 8) {
		int64_t q1 = kc - q0 < 8 ? kc : q0 + 8;
		for (int64_t j = j0; j < j1; j += 16) {
			float *dp = d + (j - j0) * kc;
			__m256i m0 = edge(n - j), m1 = edge(n - j - 8);
			for (int64_t q = q0; q < q1; q++) {
				const float *br = b + (k0 + q) * n + j;
				__m256 v0 = n - j >= 16
				                ? _mm256_loadu_ps(br)
				                : _mm256_maskload_ps(br, m0);
				__m256 v1 =
				    n - j >= 16
				        ? _mm256_loadu_ps(br + 8)
				        : _mm256_maskload_ps(br + 8, m1);
				_mm256_storeu_ps(dp + q * 16, v0);
				_mm256_storeu_ps(dp + q * 16 + 8, v1);
			}
		}
	}
}

/* Tiles of up to MR_MAX rows over panels j0..j1 (16 columns each) of B as
 * laid out at bp (panel p at bp + p * pstride, row kk at + kk * ldb);
 * A as a(i, kk) = a[i * sam + kk * sak], or when ac is not NULL as
 * copied by copy_a(). */
static void
run(const struct tile_args *t0, int64_t m, int64_t n, const float *a,
    const float *ac, const float *bp, int64_t pstride, float *c, float *w,
    int64_t j0, int64_t j1)
{
	struct tile_args t = *t0;
	if (ac != NULL) {
		t.sam = 1, t.sak = MR_MAX;
	}
	int64_t nt = (m + MR_MAX - 1) / MR_MAX;
	for (int64_t q = 0; q < nt; q++) {
		int64_t i0;
		int mr = gemm_tile_rows(m, MR_MAX, q, &i0);
		const float *ai =
		    ac ? ac + q * MR_MAX * t.kc : a + i0 * t0->sam;
		for (int64_t j = j0; j < j1; j += 16) {
			t.nr = n - j < 16 ? n - j : 16;
			int nv = (int)((t.nr + 7) / 8);
			tiles[mr - 1][nv - 1][t.nr % 8 != 0](
			    &t, ai, bp + (j - j0) / 16 * pstride,
			    c + i0 * t.ldc + j, w + i0 * t.ldw + j);
		}
	}
}

/* A read transposed (its steps a row of A apart), a block of kc steps,
 * over 8 panels or more: each tile's rows side by side first, once for
 * every panel, in slot 3 (tile q at ac + q * MR_MAX * kc, step kk's rows
 * at + kk * MR_MAX); NULL where that is not worth it (A in place then)
 * or no memory. */
static const float *
copy_a(const float *a, int64_t m, int64_t n, int64_t sam, int64_t sak,
       int64_t kc)
{
	if (sak == 1 || n < 128) {
		return NULL;
	}
	int64_t nt = (m + MR_MAX - 1) / MR_MAX;
	float *ac = scratch_cpu(3, (size_t)(nt * MR_MAX * kc));
	for (int64_t q = 0; ac != NULL && q < nt; q++) {
		int64_t i0;
		int mr = gemm_tile_rows(m, MR_MAX, q, &i0);
		const float *ai = a + i0 * sam;
		float *ap = ac + q * MR_MAX * kc;
		if (mr == MR_MAX && sam == 1) {
			/* A^T: a whole tile's rows are side by side at each
			 * step, one fixed-size copy (inlined, not a call) */
			for (int64_t kk = 0; kk < kc; kk++) {
				memcpy(ap + kk * MR_MAX, ai + kk * sak,
				       MR_MAX * sizeof *ap);
			}
			continue;
		}
		for (int64_t kk = 0; kk < kc; kk++) {
			for (int i = 0; i < mr; i++) {
				ap[kk * MR_MAX + i] = ai[i * sam + kk * sak];
			}
		}
	}
	return ac;
}

/*
 * C = alpha op(A) op(B) + beta C, A read as a(i, kk) = a[i * sam + kk *
 * sak].  A few rows (one tile: a request served alone) read B in place
 * (B^T transposed first); more are blocked as above, over packed panels.
 */
static int
blocked(int64_t m, int64_t n, int64_t k, const float *a, int64_t sam,
        int64_t sak, const float *b, int tb, const float *held, float *c,
        float alpha, float beta)
{
	struct tile_args t = {.sam = sam,
	                      .sak = sak,
	                      .ldc = n,
	                      .ldw = n,
	                      .alpha = alpha,
	                      .beta = beta};
	if (m <= MR_MAX && held == NULL) {
		if (tb && (b = transposed_cpu(b, n, k)) == NULL) {
			return -1; /* B^T: (n x k) into k x n, slot 0 */
		}
		t.kc = k, t.ldb = n, t.first = t.last = 1;
		run(&t, m, n, a, NULL, b, 16, c, c, 0, n);
		return 0;
	}
	int64_t np = (n + 15) / 16;
	int64_t kc0 = k < KC ? k : KC;
	int64_t group = PACK_BYTES / (kc0 * 16 * (int64_t)sizeof(float));
	group = group < 1 ? 1 : group > np ? np : group;
	float *p = held ? NULL : scratch_cpu(1, (size_t)(group * kc0 * 16));
	/* the sums between blocks of k: in C, unless C's own values are
	 * still to be scaled by beta */
	float *w = c;
	if (k > KC && beta != 0.0f &&
	    (w = scratch_cpu(2, (size_t)(m * n))) == NULL) {
		return -1;
	}
	if (held == NULL && p == NULL) {
		return -1;
	}
	for (int64_t k0 = 0; k0 < k; k0 += KC) {
		t.kc = k - k0 < KC ? k - k0 : KC;
		t.first = k0 == 0, t.last = k0 + t.kc == k, t.ldb = 16;
		const float *ac = copy_a(a + k0 * sak, m, n, sam, sak, t.kc);
		for (int64_t j0 = 0; j0 < n; j0 += group * 16) {
			int64_t j1 = j0 + group * 16 < n ? j0 + group * 16 : n;
			/* the group's panels: packed ahead, or now */
			const float *bp =
			    held ? held + k0 * np * 16 + j0 * t.kc : p;
			if (held == NULL) {
				pack(p, b, tb, n, k, k0, t.kc, j0, j1);
			}
			run(&t, m, n, a + k0 * sak, ac, bp, t.kc * 16, c, w, j0,
			    j1);
		}
	}
	return 0;
}

/* A weight gradient X^T dY with few columns (n < 16) and more rows:
 * gemm_avx2() computes it as its transpose dY^T X, whose rows are long,
 * so each broadcast feeds more FMAs, then transposes it into C. */
static int
narrow_transposed(int ta, int tb, int64_t m, int64_t n)
{
	return ta && !tb && n < 16 && m > n;
}

/*
 * op(B) packed whole, for products by the same B again and again (a
 * recurrent layer's kernel, step after step): the panels of each block
 * of KC rows of k in turn, block k0's panel j/16 at (k0 * np + j / 16 *
 * kc) * 16, as blocked() packs them one block and group at a time.
 */
int64_t
gemm_avx2_packed_floats(int64_t n, int64_t k)
{
	return (n + 15) / 16 * 16 * k;
}

void
gemm_avx2_pack(int tb, int64_t n, int64_t k, const float *b, float *p)
{
	int64_t np = (n + 15) / 16;
	for (int64_t k0 = 0; k0 < k; k0 += KC) {
		int64_t kc = k - k0 < KC ? k - k0 : KC;
		pack(p + k0 * np * 16, b, tb, n, k, k0, kc, 0, np * 16);
	}
}

/* blocked()'s product over B packed by gemm_avx2_pack() (tb: as b was
 * packed): the same blocks, groups and chain for each element of C; -1
 * also for the narrow transposed product, which gemm_avx2() computes
 * another way. */
int
gemm_avx2_packed(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                 const float *a, const float *p, float beta, float *c)
{
	if (narrow_transposed(ta, tb, m, n)) {
		return -1;
	}
	return blocked(m, n, k, a, ta ? 1 : k, ta ? m : 1, NULL, 0, p, c, alpha,
	               beta);
}

int
gemm_avx2(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
          const float *a, const float *b, float beta, float *c)
{
	if (narrow_transposed(ta, tb, m, n)) {
		float *t = scratch_cpu(0, (size_t)(n * m));
		if (t == NULL) {
			return -1;
		}
		/* T (n x m) = B^T A: a'(i, kk) = B[kk][i], rows of A. */
		if (blocked(n, m, k, b, 1, n, a, 0, NULL, t, 1.0f, 0.0f) != 0) {
			return -1;
		}
		untransposed_cpu(t, m, n, alpha, beta, c);
		return 0;
	}
	/* a(i, kk) = a[i * sam + kk * sak]: A is m x k, or k x m read
	 * transposed */
	return blocked(m, n, k, a, ta ? 1 : k, ta ? m : 1, b, tb, NULL, c,
	               alpha, beta);
}

#else

int
gemm_avx2_usable(void)
{
	return 0;
}

int64_t
gemm_avx2_packed_floats(int64_t n, int64_t k)
{
	(void)n, (void)k;
	return 0;
}

void
gemm_avx2_pack(int tb, int64_t n, int64_t k, const float *b, float *p)
{
	(void)tb, (void)n, (void)k, (void)b, (void)p;
}

int
gemm_avx2_packed(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                 const float *a, const float *p, float beta, float *c)
{
	(void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)a;
	(void)p, (void)beta, (void)c;
	return -1;
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
