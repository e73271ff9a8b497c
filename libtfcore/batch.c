/*
 * batch.c - the rows a graph is fed (tf/batch.h).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tf/batch.h"

int
tf_batch_init(struct tf_batch *b, size_t capacity, int64_t width,
              int64_t id_width)
{
	memset(b, 0, sizeof *b);
	b->width = width;
	b->id_width = id_width;
	return tf_batch_reserve(b, capacity);
}

int
tf_batch_reserve(struct tf_batch *b, size_t capacity)
{
	if (capacity <= b->capacity && b->x != NULL) {
		return TF_OK;
	}
	size_t cap = capacity > 0 ? capacity : 1;
	/* One spare element each, so a batch of no columns still has an
	 * address to hand to the graph. */
	float *x = realloc(b->x, (cap * (size_t)b->width + 1) * sizeof *x);
	if (x != NULL) {
		b->x = x;
	}
	float *y = realloc(b->y, (cap + 1) * sizeof *y);
	if (y != NULL) {
		b->y = y;
	}
	int64_t *ids =
	    realloc(b->ids, (cap * (size_t)b->id_width + 1) * sizeof *ids);
	if (ids != NULL) {
		b->ids = ids;
	}
	if (x == NULL || y == NULL || ids == NULL) {
		return TF_ENOMEM;
	}
	b->capacity = cap;
	return TF_OK;
}

int
tf_batch_append(struct tf_batch *b, const struct tf_batch *from)
{
	if (from->width != b->width || from->id_width != b->id_width) {
		return TF_EINVAL;
	}
	size_t need = b->rows + from->rows;
	if (need > b->capacity &&
	    tf_batch_reserve(
	        b, need > 2 * b->capacity ? need : 2 * b->capacity) != TF_OK) {
		return TF_ENOMEM;
	}
	memcpy(b->x + b->rows * (size_t)b->width, from->x,
	       from->rows * (size_t)b->width * sizeof *b->x);
	memcpy(b->ids + b->rows * (size_t)b->id_width, from->ids,
	       from->rows * (size_t)b->id_width * sizeof *b->ids);
	memcpy(b->y + b->rows, from->y, from->rows * sizeof *b->y);
	b->rows = need;
	return TF_OK;
}

void
tf_batch_release(struct tf_batch *b)
{
	free(b->x);
	free(b->y);
	free(b->ids);
	memset(b, 0, sizeof *b);
}
