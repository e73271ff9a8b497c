/*
 * shuffle.c - the external-memory shuffle of tf/shuffle.h.
 *
 * Level 0 holds records in a pool until the budget is exceeded, then
 * deals every record (those in the pool, and each one after) to one of
 * BUCKETS temporary files chosen at random.  Finishing a level that
 * spilled reads each bucket back through the next level, which does the
 * same with the same budget; a record's place is thus uniform: its
 * bucket is uniform, and within a bucket so is its place.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tf/rng.h"
#include "tf/shuffle.h"

#define BUCKETS   64
#define MAX_DEPTH 3

/* Records back to back: record i spans off[i]..off[i+1]. */
struct pool {
	uint8_t *data;
	size_t len, cap;
	size_t *off;
	size_t n, ncap;
};

struct level {
	struct pool pool;
	size_t memory; /* SIZE_MAX: never spill */
	int spilled;
	FILE *bucket[BUCKETS];
	struct tf_writer *bw[BUCKETS];
	struct tf_reader *r; /* reads the buckets back */
};

struct tf_shuffle {
	struct tfi_handle err;
	struct tf_rng rng;
	struct level levels[MAX_DEPTH + 1];
};

struct tf_shuffle *
tf_shuffle_new(uint64_t seed, size_t memory)
{
	struct tf_shuffle *s = calloc(1, sizeof *s);
	if (s != NULL) {
		tf_rng_seed(&s->rng, seed);
		for (int d = 0; d <= MAX_DEPTH; d++) {
			s->levels[d].memory =
			    d < MAX_DEPTH && memory > 0 ? memory : SIZE_MAX;
		}
	}
	return s;
}

void
tf_shuffle_free(struct tf_shuffle *s)
{
	if (s == NULL) {
		return;
	}
	for (int d = 0; d <= MAX_DEPTH; d++) {
		struct level *l = &s->levels[d];
		free(l->pool.data);
		free(l->pool.off);
		tf_reader_free(l->r);
		for (int b = 0; b < BUCKETS; b++) {
			tf_writer_free(l->bw[b]);
			if (l->bucket[b] != NULL) {
				fclose(l->bucket[b]);
			}
		}
	}
	free(s);
}

static int
pool_add(struct pool *p, const uint8_t *d, size_t n)
{
	if (p->cap - p->len < n) {
		size_t cap = p->cap ? p->cap : 1 << 20;
		while (cap - p->len < n) {
			cap *= 2;
		}
		uint8_t *data = realloc(p->data, cap);
		if (data == NULL) {
			return -1;
		}
		p->data = data;
		p->cap = cap;
	}
	if (p->n + 2 > p->ncap) {
		size_t ncap = p->ncap ? p->ncap * 2 : 1024;
		size_t *off = realloc(p->off, ncap * sizeof *off);
		if (off == NULL) {
			return -1;
		}
		p->off = off;
		p->ncap = ncap;
	}
	if (p->n == 0) {
		p->off[0] = 0;
	}
	memcpy(p->data + p->len, d, n);
	p->len += n;
	p->off[++p->n] = p->len;
	return 0;
}

/* The pool's records in a Fisher-Yates order, then the pool is empty. */
static int
pool_flush(struct tf_shuffle *s, struct pool *p, struct tf_writer *w)
{
	size_t *idx = malloc((p->n + 1) * sizeof *idx);
	if (idx == NULL) {
		return tfi_set_error(s, TF_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < p->n; i++) {
		idx[i] = i;
	}
	for (size_t i = p->n; i > 1; i--) {
		size_t j = (size_t)tf_rng_below(&s->rng, i);
		size_t t = idx[i - 1];
		idx[i - 1] = idx[j];
		idx[j] = t;
	}
	int rc = TF_OK;
	for (size_t i = 0; i < p->n && rc == TF_OK; i++) {
		size_t k = idx[i];
		rc = tf_writer_write(w, p->data + p->off[k],
		                     p->off[k + 1] - p->off[k]);
	}
	free(idx);
	p->len = p->n = 0;
	return rc == TF_OK ? TF_OK : tfi_set_error(s, rc, "%s", tf_errmsg(w));
}

static int
spill(struct tf_shuffle *s, struct level *l, const uint8_t *d, size_t n)
{
	int b = (int)tf_rng_below(&s->rng, BUCKETS);
	int rc = tf_writer_write(l->bw[b], d, n);
	return rc == TF_OK ? TF_OK
	                   : tfi_set_error(s, TF_EIO,
	                                   "a temporary file: %s (see TMPDIR)",
	                                   tf_errmsg(l->bw[b]));
}

/* Too much for memory: deal the pool's records into buckets, as every
 * later record will be. */
static int
start_spilling(struct tf_shuffle *s, struct level *l)
{
	for (int b = 0; b < BUCKETS; b++) {
		if (l->bw[b] == NULL && (l->bw[b] = tf_writer_new()) == NULL) {
			return tfi_set_error(s, TF_ENOMEM, "out of memory");
		}
		l->bucket[b] = tmpfile();
		if (l->bucket[b] == NULL ||
		    tf_writer_open_fd(l->bw[b], fileno(l->bucket[b]),
		                      "(temporary file)",
		                      TF_COMPRESS_NONE) != TF_OK) {
			return tfi_set_error(s, TF_ECREATE,
			                     "cannot create a temporary file "
			                     "(see TMPDIR)");
		}
	}
	l->spilled = 1;
	int rc = TF_OK;
	for (size_t i = 0; i < l->pool.n && rc == TF_OK; i++) {
		rc = spill(s, l, l->pool.data + l->pool.off[i],
		           l->pool.off[i + 1] - l->pool.off[i]);
	}
	l->pool.len = l->pool.n = 0;
	return rc;
}

static int
level_add(struct tf_shuffle *s, struct level *l, const uint8_t *d, size_t n)
{
	if (l->spilled) {
		return spill(s, l, d, n);
	}
	if (pool_add(&l->pool, d, n) != 0) {
		return tfi_set_error(s, TF_ENOMEM, "out of memory");
	}
	/* A record costs its bytes and about 16 of bookkeeping. */
	if (l->memory != SIZE_MAX && l->pool.len + l->pool.n * 16 > l->memory) {
		return start_spilling(s, l);
	}
	return TF_OK;
}

int
tf_shuffle_add(struct tf_shuffle *s, const void *data, size_t n)
{
	return level_add(s, &s->levels[0], data, n);
}

static int finish(struct tf_shuffle *s, int depth, struct tf_writer *out);

/* A bucket of level depth, read back through level depth + 1. */
static int
reshuffle(struct tf_shuffle *s, int depth, int b, struct tf_writer *out)
{
	struct level *l = &s->levels[depth], *next = &s->levels[depth + 1];
	if (tf_writer_close(l->bw[b]) != TF_OK) {
		return tfi_set_error(s, TF_EIO, "a temporary file: %s",
		                     tf_errmsg(l->bw[b]));
	}
	rewind(l->bucket[b]);
	if (tf_reader_open_fd(l->r, fileno(l->bucket[b]), "(temporary file)",
	                      TF_COMPRESS_NONE) != TF_OK) {
		return tfi_set_error(s, TF_EIO, "cannot read a temporary file");
	}
	next->spilled = 0;
	next->pool.len = next->pool.n = 0;
	const uint8_t *d;
	size_t n;
	int rc;
	while ((rc = tf_reader_next(l->r, &d, &n)) == TF_OK) {
		if ((rc = level_add(s, next, d, n)) != TF_OK) {
			return rc;
		}
	}
	if (rc != TF_EOF) {
		return tfi_set_error(s, TF_EIO, "a temporary file: %s",
		                     tf_errmsg(l->r));
	}
	rc = finish(s, depth + 1, out);
	fclose(l->bucket[b]);
	l->bucket[b] = NULL;
	return rc;
}

/* Write a level's records shuffled: from memory, or bucket by bucket
 * through the next level. */
static int
finish(struct tf_shuffle *s, int depth, struct tf_writer *out)
{
	struct level *l = &s->levels[depth];
	if (!l->spilled) {
		return pool_flush(s, &l->pool, out);
	}
	if (l->r == NULL && (l->r = tf_reader_new()) == NULL) {
		return tfi_set_error(s, TF_ENOMEM, "out of memory");
	}
	int rc = TF_OK;
	for (int b = 0; b < BUCKETS && rc == TF_OK; b++) {
		rc = reshuffle(s, depth, b, out);
	}
	l->spilled = 0;
	return rc;
}

int
tf_shuffle_finish(struct tf_shuffle *s, struct tf_writer *w)
{
	return finish(s, 0, w);
}
