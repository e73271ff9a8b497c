/*
 * rng.h - a small, fast, seedable random number generator (xoshiro256**
 * seeded through splitmix64).  The state is a plain value so it can be
 * copied and saved; the same seed gives the same sequence everywhere.
 */
#ifndef TF_RNG_H
#define TF_RNG_H

#include <stdint.h>

#include "tf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tf_rng {
	uint64_t s[4];
};

/* Seed the generator; every seed (0 too) gives a good state. */
TF_API void tf_rng_seed(struct tf_rng *r, uint64_t seed);
/* The next 64 random bits. */
TF_API uint64_t tf_rng_next(struct tf_rng *r);
/* Uniform in [0, n), without modulo bias; n > 0. */
TF_API uint64_t tf_rng_below(struct tf_rng *r, uint64_t n);
/* Uniform double in [0, 1). */
TF_API double tf_rng_uniform(struct tf_rng *r);
/* Standard normal (Box-Muller, one value per call). */
TF_API double tf_rng_normal(struct tf_rng *r);

#ifdef __cplusplus
}
#endif
#endif
