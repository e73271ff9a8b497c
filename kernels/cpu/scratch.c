/*
 * scratch.c - scratch memory of each thread for the CPU's matrix
 * products (gemm_avx512.c, gemm_avx2.c): a transposed operand or a
 * product in slot 0, packed panels of B in slot 1, partial sums in slot
 * 2, a block of A^T's tiles in slot 3 (gemm_avx2.c), kept between calls (a
 * training step calls them many times with the same shapes) and freed when the
 * thread ends (training's towers are threads).
 */
#include <pthread.h>
#include <stdlib.h>

#include "kernels/kernels.h"

struct scratch {
	float *buf[SCRATCH_SLOTS];
	size_t cap[SCRATCH_SLOTS];
};

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void
scratch_free(void *p)
{
	struct scratch *s = p;
	for (int i = 0; i < SCRATCH_SLOTS; i++) {
		free(s->buf[i]);
	}
	free(s);
}

static void
scratch_init(void)
{
	if (pthread_key_create(&scratch_key, scratch_free) != 0) {
		scratch_key = (pthread_key_t)-1;
	}
}

float *
scratch_cpu(int slot, size_t floats)
{
	pthread_once(&scratch_once, scratch_init);
	if (scratch_key == (pthread_key_t)-1) {
		return NULL; /* the caller falls back on CBLAS */
	}
	struct scratch *s = pthread_getspecific(scratch_key);
	if (s == NULL) {
		s = calloc(1, sizeof *s);
		if (s == NULL || pthread_setspecific(scratch_key, s) != 0) {
			free(s);
			return NULL;
		}
	}
	if (floats > s->cap[slot]) {
		float *p = realloc(s->buf[slot], floats * sizeof *p);
		if (p == NULL) {
			return NULL;
		}
		s->buf[slot] = p;
		s->cap[slot] = floats;
	}
	return s->buf[slot];
}

/* Transposes go by blocks of TILE x TILE, so that each block's reads
 * and writes stay in as many cache lines (a row-by-row transpose of a
 * wide matrix misses the cache at every write). */
#define TILE 16

static int64_t
tile_end(int64_t i0, int64_t n)
{
	return i0 + TILE < n ? i0 + TILE : n;
}

const float *
transposed_cpu(const float *b, int64_t n, int64_t k)
{
	float *buf = scratch_cpu(0, (size_t)(n * k));
	if (buf == NULL) {
		return NULL;
	}
	for (int64_t i0 = 0; i0 < n; i0 += TILE) {
		for (int64_t j0 = 0; j0 < k; j0 += TILE) {
			for (int64_t j = j0; j < tile_end(j0, k); j++) {
				for (int64_t i = i0; i < tile_end(i0, n); i++) {
					buf[j * n + i] = b[i * k + j];
				}
			}
		}
	}
	return buf;
}

void
untransposed_cpu(const float *t, int64_t m, int64_t n, float alpha, float beta,
                 float *c)
{
	for (int64_t i0 = 0; i0 < m; i0 += TILE) {
		for (int64_t j0 = 0; j0 < n; j0 += TILE) {
			for (int64_t i = i0; i < tile_end(i0, m); i++) {
				for (int64_t j = j0; j < tile_end(j0, n); j++) {
					float v = alpha * t[j * m + i];
					c[i * n + j] =
					    beta != 0.0f
					        ? v + beta * c[i * n + j]
					        : v;
				}
			}
		}
	}
}
