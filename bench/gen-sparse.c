/*
 * gen-sparse - deterministic click-like libsvm data for benchmarks.
 *
 *   gen-sparse ROWS [DIM [NNZ [SEED [SPREAD]]]] > data.libsvm
 *
 * ROWS rows of NNZ (default 20) distinct feature ids out of DIM (default
 * 1,000,000), drawn with a Zipf-like skew (id = DIM^u for uniform u, so
 * low ids are common, as in click logs), each with value 1, and a 0/1
 * label: 1[sum of the ids' hidden weights + N(0, 1) > 0], the hidden
 * weight of id i N(0, 1)-like from a hash of i (the same for every SEED,
 * so rows of two seeds come from one model).  SPREAD (default 1) spreads
 * the ids over the 64-bit space: id i is written as i * SPREAD (mod
 * 2^64), so SPREAD 2^43 + 1 gives ids up to 2^63 and beyond.  The same
 * arguments give the same bytes on every machine.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tf/rng.h"

/* The hidden weight of id i: a sum of uniforms from its hash, about
 * N(0, 1). */
static double
weight(uint64_t i)
{
	double s = 0;
	uint64_t h = i * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
	for (int k = 0; k < 4; k++) {
		h ^= h >> 31;
		h *= 0xbf58476d1ce4e5b9ull;
		h ^= h >> 29;
		s += (double)(h >> 11) * 0x1.0p-53 - 0.5;
	}
	return s * 1.7320508;
}

int
main(int argc, char **argv)
{
	if (argc < 2 || argc > 6) {
		fprintf(stderr,
		        "usage: gen-sparse ROWS [DIM [NNZ [SEED [SPREAD]]]]\n");
		return 64;
	}
	uint64_t rows = strtoull(argv[1], NULL, 10);
	uint64_t dim = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
	int nnz = argc > 3 ? atoi(argv[3]) : 20;
	uint64_t seed = argc > 4 ? strtoull(argv[4], NULL, 10) : 1;
	uint64_t spread = argc > 5 ? strtoull(argv[5], NULL, 10) : 1;
	if (dim < 2 || nnz < 1 || nnz > 1000 || (uint64_t)nnz > dim / 2) {
		fprintf(stderr, "gen-sparse: need DIM >= 2 NNZ and NNZ from "
		                "1 to 1000\n");
		return 64;
	}
	struct tf_rng rng;
	tf_rng_seed(&rng, seed);
	uint64_t ids[1000];
	double ldim = log((double)dim);
	for (uint64_t r = 0; r < rows; r++) {
		int n = 0;
		double z = 0;
		while (n < nnz) {
			uint64_t id =
			    (uint64_t)exp(tf_rng_uniform(&rng) * ldim);
			id = id >= dim ? dim - 1 : id;
			int dup = 0;
			for (int k = 0; k < n && !dup; k++) {
				dup = ids[k] == id;
			}
			if (!dup) {
				ids[n++] = id;
			}
		}
		/* ascending, as libsvm writes them */
		for (int a = 1; a < n; a++) {
			uint64_t v = ids[a];
			int b = a;
			for (; b > 0 && ids[b - 1] > v; b--) {
				ids[b] = ids[b - 1];
			}
			ids[b] = v;
		}
		for (int k = 0; k < n; k++) {
			z += weight(ids[k]);
		}
		double u1 = tf_rng_uniform(&rng), u2 = tf_rng_uniform(&rng);
		double noise = sqrt(-2 * log(u1 > 0 ? u1 : 1e-300)) *
		               cos(6.283185307179586 * u2);
		printf("%d", z / sqrt((double)nnz) * 2 + noise > 0);
		for (int k = 0; k < n; k++) {
			printf(" %llu:1",
			       (unsigned long long)(ids[k] * spread));
		}
		putchar('\n');
	}
	return fflush(stdout) == 0 ? 0 : 74;
}
