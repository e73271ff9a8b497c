/*
 * test_gemm.c - the AVX-512 matrix products against a double-precision
 * reference: every transposition, alpha and beta, ragged edges, and C
 * not read when beta is 0.
 */
#include "kernels/kernels.h"
#include "test.h"

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

TEST(avx512_products_match_the_reference)
{
	if (!gemm_avx512_usable()) {
		printf("# no AVX-512 here: the CBLAS path is used\n");
		return;
	}
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
		CHECK(gemm_avx512(ta, tb, m, n, k, alpha, a, b, beta, c2) == 0);
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

int
main(void)
{
	RUN(avx512_products_match_the_reference);
	DONE();
}
