/*
 * test_gemm.c - the AVX-512 and AVX2 matrix products against a
 * double-precision reference: every transposition, alpha and beta, ragged
 * edges, and C not read when beta is 0 (each where this CPU has them);
 * the AVX2 products' rows the same bit for bit alone and in a batch;
 * long products, blocked or not, each element one chain over k in order;
 * B packed once for many products giving the same floats;
 * bias gradients' column sums, short and long.
 */
#include "kernels/kernels.h"
#include "test.h"
#include "tf/device.h"

static void
reference(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
          const float *a, const float *b, float beta, float *c)
{
	for (int64_t i = 0; i < m; i++) {
		for (int64_t j = 0; j < n; j++) {
			double s = 0;
			for (int64_t q = 0; q < k; q++) {
				double x = ta ? a[q * m + i] : a[i * k + q];
				double y = tb ? b[j * k + q] : b[q * n + j];
				s += x * y;
			}
			c[i * n + j] =
			    (float)(alpha * s +
			            (beta != 0 ? beta * c[i * n + j] : 0));
		}
	}
}

static float
frand(void)
{
	return (float)rand() / (float)RAND_MAX - 0.5f;
}

typedef int (*gemm_fn)(int ta, int tb, int64_t m, int64_t n, int64_t k,
                       float alpha, const float *a, const float *b, float beta,
                       float *c);

static void
against_reference(gemm_fn gemm)
{
	srand(7);
	int bad = 0;
	for (int t = 0; t < 600 && bad < 3; t++) {
		int ta = t & 1, tb = (t >> 1) & 1;
		int64_t m = 1 + rand() % 70, n = 1 + rand() % 150,
		        k = 1 + rand() % 90;
		float alpha = t % 3 ? 1.0f : 0.5f;
		float beta = t % 5 == 0 ? 0.0f : t % 5 == 1 ? 1.0f : 0.3f;
		float *a = malloc(sizeof(float) * (size_t)(m * k));
		float *b = malloc(sizeof(float) * (size_t)(k * n));
		float *c1 = malloc(sizeof(float) * (size_t)(m * n));
		float *c2 = malloc(sizeof(float) * (size_t)(m * n));
		for (int64_t i = 0; i < m * k; i++) {
			a[i] = frand();
		}
		for (int64_t i = 0; i < k * n; i++) {
			b[i] = frand();
		}
		for (int64_t i = 0; i < m * n; i++) {
			c1[i] = c2[i] = beta == 0 ? NAN : frand();
		}
		reference(ta, tb, m, n, k, alpha, a, b, beta, c1);
		CHECK(gemm(ta, tb, m, n, k, alpha, a, b, beta, c2) == 0);
		for (int64_t i = 0; i < m * n; i++) {
			if (!(fabsf(c1[i] - c2[i]) <=
			      1e-4f * (1 + fabsf(c1[i])))) {
				FAILF(
				    "ta=%d tb=%d m=%lld n=%lld k=%lld: C[%lld] "
				    "%g, expected %g",
				    ta, tb, (long long)m, (long long)n,
				    (long long)k, (long long)i, c2[i], c1[i]);
				bad++;
				break;
			}
		}
		free(a);
		free(b);
		free(c1);
		free(c2);
	}
}

TEST(avx512_products_match_the_reference)
{
	if (!gemm_avx512_usable()) {
		printf("# no AVX-512 here: the CBLAS path is used\n");
		return;
	}
	against_reference(gemm_avx512);
}

TEST(avx2_products_match_the_reference)
{
	if (!gemm_avx2_usable()) {
		printf("# no AVX2 and FMA here\n");
		return;
	}
	against_reference(gemm_avx2);
}

/*
 * Longer products, as a convolution's weight gradient (k a batch's places,
 * thousands) and a recurrent layer's steps make, through every path (a
 * row or two read in place, tiles over packed panels of B, k in blocks,
 * A read transposed and copied, the narrow transposed product): with
 * alpha 1 and beta 0 each element is the one chain of fused multiply-adds
 * over k in order, bit for bit (blocks of k keep the sums between them as
 * they are); with beta, within rounding of the double sums.
 */
static void
one_chain_each(gemm_fn gemm)
{
	static const int64_t shapes[][3] = {
	    {1, 40, 700},  {5, 17, 300},  {64, 512, 128}, {64, 128, 512},
	    {37, 33, 257}, {130, 7, 600}, {9, 200, 1000}, {288, 64, 513},
	    {7, 150, 256}, {20, 3, 2000},
	};
	srand(11);
	for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
		int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
		float *a = malloc(sizeof(float) * (size_t)(m * k));
		float *b = malloc(sizeof(float) * (size_t)(k * n));
		float *c = malloc(sizeof(float) * (size_t)(m * n));
		float *r = malloc(sizeof(float) * (size_t)(m * n));
		REQUIRE(a != NULL && b != NULL && c != NULL && r != NULL);
		for (int64_t i = 0; i < m * k; i++) {
			a[i] = frand();
		}
		for (int64_t i = 0; i < k * n; i++) {
			b[i] = frand();
		}
		for (int t = 0; t < 4; t++) {
			int ta = t & 1, tb = t >> 1, bad = 0;
			CHECK(gemm(ta, tb, m, n, k, 1.0f, a, b, 0.0f, c) == 0);
			for (int64_t i = 0; i < m && !bad; i++) {
				for (int64_t j = 0; j < n && !bad; j++) {
					float acc = 0.0f;
					for (int64_t q = 0; q < k; q++) {
						acc = fmaf(ta ? a[q * m + i]
						              : a[i * k + q],
						           tb ? b[j * k + q]
						              : b[q * n + j],
						           acc);
					}
					if (memcmp(&acc, &c[i * n + j],
					           sizeof acc) != 0) {
						FAILF(
						    "ta=%d tb=%d "
						    "%lldx%lldx%lld: "
						    "C[%lld][%lld] %a, the "
						    "chain %a",
						    ta, tb, (long long)m,
						    (long long)n, (long long)k,
						    (long long)i, (long long)j,
						    c[i * n + j], acc);
						bad = 1;
					}
				}
			}
			for (int64_t i = 0; i < m * n; i++) {
				c[i] = r[i] = frand();
			}
			reference(ta, tb, m, n, k, 0.5f, a, b, 0.3f, r);
			CHECK(gemm(ta, tb, m, n, k, 0.5f, a, b, 0.3f, c) == 0);
			for (int64_t i = 0; i < m * n; i++) {
				if (!(fabsf(r[i] - c[i]) <=
				      1e-4f * (1 + fabsf(r[i])))) {
					FAILF("ta=%d tb=%d %lldx%lldx%lld, "
					      "beta 0.3: C[%lld] %g, expected "
					      "%g",
					      ta, tb, (long long)m,
					      (long long)n, (long long)k,
					      (long long)i, c[i], r[i]);
					break;
				}
			}
		}
		free(a);
		free(b);
		free(c);
		free(r);
	}
}

TEST(avx2_long_products_one_chain_each)
{
	if (!gemm_avx2_usable()) {
		printf("# no AVX2 and FMA here\n");
		return;
	}
	one_chain_each(gemm_avx2);
}

TEST(avx512_long_products_one_chain_each)
{
	if (!gemm_avx512_usable()) {
		printf("# no AVX-512 here\n");
		return;
	}
	one_chain_each(gemm_avx512);
}

/* X W^T (a dense layer's forward with W stored n x k, as tb reads it):
 * each row of a batch of 37 is the row computed alone, bit for bit. */
TEST(avx2_rows_alone_as_in_a_batch)
{
	if (!gemm_avx2_usable()) {
		printf("# no AVX2 and FMA here\n");
		return;
	}
	enum { M = 37, N = 29, K = 53 };
	static float x[M * K], w[N * K], batch[M * N], one[N];
	srand(3);
	for (int i = 0; i < M * K; i++) {
		x[i] = frand();
	}
	for (int i = 0; i < N * K; i++) {
		w[i] = frand();
	}
	REQUIRE(gemm_avx2(0, 1, M, N, K, 1.0f, x, w, 0.0f, batch) == 0);
	for (int r = 0; r < M; r++) {
		REQUIRE(gemm_avx2(0, 1, 1, N, K, 1.0f, x + r * K, w, 0.0f,
		                  one) == 0);
		CHECK(memcmp(one, batch + r * N, sizeof one) == 0);
	}
}

/* B packed once (a recurrent layer's kernel, step after step): every
 * product over the packed panels gives gemm_avx2()'s floats, bit for bit:
 * one tile of rows and more, k within one block and past it, ragged
 * columns, both transpositions of each, beta 0 and not; and the device's
 * tf_gemm_packed() gives tf_gemm()'s, packed or not. */
TEST(avx2_packed_b_as_unpacked)
{
	if (!gemm_avx2_usable()) {
		printf("# no AVX2 and FMA here\n");
		return;
	}
	static const int64_t shapes[][3] = {{64, 512, 128}, {64, 128, 512},
	                                    {5, 37, 300},   {1, 16, 16},
	                                    {13, 9, 1},     {7, 100, 600}};
	enum { MAX = 128 * 600 }; /* the most of A, B, C and B packed */
	static float a[MAX], b[MAX], c0[MAX], c1[MAX], p[MAX];
	srand(11);
	for (int i = 0; i < MAX; i++) {
		a[i] = frand();
		b[i] = frand();
	}
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
		int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
		REQUIRE(gemm_avx2_packed_floats(n, k) <= MAX);
		for (int t = 0; t < 8; t++) {
			int ta = t & 1, tb = (t >> 1) & 1;
			float beta = t & 4 ? 0.3f : 0.0f;
			for (int64_t i = 0; i < m * n; i++) {
				c0[i] = c1[i] = frand();
			}
			gemm_avx2_pack(tb, n, k, b, p);
			REQUIRE(gemm_avx2(ta, tb, m, n, k, 0.7f, a, b, beta,
			                  c0) == 0);
			/* a narrow weight gradient: gemm_avx2() computes its
			 * transpose, and gemm_packed_cpu() leaves it to it */
			if (ta && !tb && n < 16 && m > n) {
				gemm_packed_cpu(ta, tb, m, n, k, 0.7f, a, b, p,
				                beta, c1);
			} else {
				REQUIRE(gemm_avx2_packed(ta, tb, m, n, k, 0.7f,
				                         a, p, beta, c1) == 0);
			}
			CHECK(memcmp(c0, c1, (size_t)(m * n) * sizeof *c0) ==
			      0);
		}
	}
	/* through the device: packed where it packs, tf_gemm() else */
	struct tf_device *d = tf_device_cpu();
	size_t pn = tf_gemm_pack_floats(d, 512, 128);
	CHECK(pn == 0 || pn == 512 * 128);
	tf_gemm_pack(d, 1, 512, 128, b, p);
	tf_gemm(d, 0, 1, 64, 512, 128, 1.0f, a, b, 0.0f, c0);
	tf_gemm_packed(d, 0, 1, 64, 512, 128, 1.0f, a, b, pn ? p : NULL, 0.0f,
	               c1);
	CHECK(memcmp(c0, c1, 64 * 512 * sizeof *c0) == 0);
}

/* bias_grad_cpu: short columns added in order into db (the floats of a
 * plain loop); long ones (a convolution's rows) by chunks, within float
 * rounding of the exact sums. */
TEST(bias_grad_short_and_long_columns)
{
	enum { COLS = 37, LONG = 10007 };
	static float dy[LONG * COLS];
	float db[COLS], want[COLS];
	srand(5);
	for (int i = 0; i < LONG * COLS; i++) {
		dy[i] = frand();
	}
	for (int c = 0; c < COLS; c++) {
		db[c] = want[c] = frand();
	}
	for (int r = 0; r < 100; r++) {
		for (int c = 0; c < COLS; c++) {
			want[c] += dy[r * COLS + c];
		}
	}
	bias_grad_cpu(dy, db, 100, COLS);
	CHECK(memcmp(db, want, sizeof db) == 0);
	double exact[COLS];
	for (int c = 0; c < COLS; c++) {
		exact[c] = db[c];
		for (int r = 0; r < LONG; r++) {
			exact[c] += dy[r * COLS + c];
		}
	}
	bias_grad_cpu(dy, db, LONG, COLS);
	for (int c = 0; c < COLS; c++) {
		CHECK(fabs(db[c] - exact[c]) <= 1e-3);
	}
}

int
main(void)
{
	RUN(avx512_products_match_the_reference);
	RUN(avx2_products_match_the_reference);
	RUN(avx2_rows_alone_as_in_a_batch);
	RUN(avx2_long_products_one_chain_each);
	RUN(avx2_packed_b_as_unpacked);
	RUN(avx512_long_products_one_chain_each);
	RUN(bias_grad_short_and_long_columns);
	DONE();
}
