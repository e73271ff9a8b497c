/*
 * rng.c - xoshiro256** (Blackman and Vigna) seeded through splitmix64.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tf/rng.h"

static uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void
tf_rng_seed(struct tf_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++) {
		r->s[i] = tfi_mix64(seed += 0x9e3779b97f4a7c15ull);
	}
}

uint64_t
tf_rng_next(struct tf_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

uint64_t
tf_rng_below(struct tf_rng *r, uint64_t n)
{
	uint64_t lim = UINT64_MAX - UINT64_MAX % n;
	uint64_t v;
	do {
		v = tf_rng_next(r);
	} while (v >= lim);
	return v % n;
}

double
tf_rng_uniform(struct tf_rng *r)
{
	return (double)(tf_rng_next(r) >> 11) * 0x1.0p-53;
}

double
tf_rng_normal(struct tf_rng *r)
{
	double u = tf_rng_uniform(r), v = tf_rng_uniform(r);
	return sqrt(-2.0 * log(1.0 - u)) * cos(2.0 * M_PI * v);
}

/* A generator's state as text (checkpoints): 64 hex digits, and back. */
void
tfi_rng_text(const uint64_t s[4], char out[65])
{
	snprintf(out, 65, "%016llx%016llx%016llx%016llx",
	         (unsigned long long)s[0], (unsigned long long)s[1],
	         (unsigned long long)s[2], (unsigned long long)s[3]);
}

int
tfi_rng_parse(const char *text, uint64_t s[4])
{
	if (text == NULL || strlen(text) != 64 ||
	    strspn(text, "0123456789abcdefABCDEF") != 64) {
		return -1;
	}
	for (int i = 0; i < 4; i++) {
		char part[17];
		memcpy(part, text + 16 * i, 16);
		part[16] = '\0';
		s[i] = strtoull(part, NULL, 16);
	}
	return 0;
}
