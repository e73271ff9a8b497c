/* tf_rng: the xoshiro256** sequence, reproducibility and distributions. */
#include "test.h"

TEST(known_sequence)
{
	/* From an independent implementation of splitmix64 + xoshiro256**. */
	struct tf_rng r;
	tf_rng_seed(&r, 42);
	CHECK(tf_rng_next(&r) == 0x15780b2e0c2ec716ull);
	CHECK(tf_rng_next(&r) == 0x6104d9866d113a7eull);
	CHECK(tf_rng_next(&r) == 0xae17533239e499a1ull);
	struct tf_rng a, b;
	tf_rng_seed(&a, 7);
	b = a; /* the state is a value: copies continue identically */
	for (int i = 0; i < 100; i++) {
		CHECK(tf_rng_next(&a) == tf_rng_next(&b));
	}
}

TEST(distributions)
{
	struct tf_rng r;
	tf_rng_seed(&r, 1);
	int counts[10] = {0};
	double sum = 0, sum2 = 0, umin = 1, umax = 0;
	int n = 200000;
	for (int i = 0; i < n; i++) {
		uint64_t k = tf_rng_below(&r, 10);
		REQUIRE(k < 10);
		counts[k]++;
		double u = tf_rng_uniform(&r);
		umin = u < umin ? u : umin;
		umax = u > umax ? u : umax;
		double z = tf_rng_normal(&r);
		sum += z;
		sum2 += z * z;
	}
	for (int k = 0; k < 10; k++) {
		/* 20000 expected; 5 sigma is about 670. */
		CHECK(counts[k] > 19300 && counts[k] < 20700);
	}
	CHECK(umin >= 0 && umax < 1 && umin < 0.001 && umax > 0.999);
	double mean = sum / n, var = sum2 / n - mean * mean;
	CHECK(fabs(mean) < 0.015);
	CHECK(fabs(var - 1) < 0.02);
}

int
main(void)
{
	RUN(known_sequence);
	RUN(distributions);
	DONE();
}
