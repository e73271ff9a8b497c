/*
 * scratch.c - scratch memory of each thread for the CPU's matrix
 * products (gemm_avx512.c, gemm_avx2.c): a transposed operand or a
 * product, kept between calls (a training step calls them many times
 * with the same shapes) and freed when the thread ends (training's
 * towers are threads).
 */
#include <pthread.h>
#include <stdlib.h>

#include "kernels/kernels.h"

struct scratch {
	float *buf;
	size_t cap;
};

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void
scratch_free(void *p)
{
	struct scratch *s = p;
	free(s->buf);
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
scratch_cpu(size_t floats)
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
	if (floats > s->cap) {
		float *p = realloc(s->buf, floats * sizeof *p);
		if (p == NULL) {
			return NULL;
		}
		s->buf = p;
		s->cap = floats;
	}
	return s->buf;
}

const float *
transposed_cpu(const float *b, int64_t n, int64_t k)
{
	float *buf = scratch_cpu((size_t)(n * k));
	if (buf == NULL) {
		return NULL;
	}
	for (int64_t i = 0; i < n; i++) {
		for (int64_t j = 0; j < k; j++) {
			buf[j * n + i] = b[i * k + j];
		}
	}
	return buf;
}
