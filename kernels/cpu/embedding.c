/*
 * embedding.c - column blocks and embedding lookups (gather and its
 * gradient, scatter) on the CPU.
 */
#include <string.h>

#include "kernels/kernels.h"
#include "tf/device.h"

void
copy_cols_cpu(const float *x, int64_t xstride, float *y, int64_t ystride,
              int64_t rows, int64_t cols)
{
	for (int64_t r = 0; r < rows; r++) {
		memcpy(y + r * ystride, x + r * xstride,
		       (size_t)cols * sizeof *x);
	}
}

void
add_cols_cpu(const float *x, int64_t xstride, float *y, int64_t ystride,
             int64_t rows, int64_t cols)
{
	for (int64_t r = 0; r < rows; r++) {
		const float *a = x + r * xstride;
		float *b = y + r * ystride;
		for (int64_t c = 0; c < cols; c++) {
			b[c] += a[c];
		}
	}
}

/* The id at ids[i] as an index, or -1 when it is none. */
static int64_t
id_at(const int64_t *ids, int64_t i, int64_t vocab)
{
	int64_t v = ids[i];
	return v >= 0 && v < vocab ? v : -1;
}

/* Rows AHEAD rows on of a lookup: their table rows asked for now, as
 * ids scattered over a large table miss the cache one by one. */
#define AHEAD 2

static void
ask_ahead(const float *table, int64_t vocab, int64_t dim, const int64_t *ids,
          int64_t stride, int64_t r, int64_t rows, int64_t width)
{
	if (r + AHEAD >= rows || vocab * dim < 65536) {
		return;
	}
	const int64_t *row = ids + (r + AHEAD) * stride;
	for (int64_t k = 0; k < width; k++) {
		int64_t id = id_at(row, k, vocab);
		if (id >= 0) {
			__builtin_prefetch(table + id * dim);
		}
	}
}

/* Ids of a row present, for the mean. */
static int64_t
present(const int64_t *ids, int64_t width, int64_t vocab)
{
	int64_t n = 0;
	for (int64_t k = 0; k < width; k++) {
		n += id_at(ids, k, vocab) >= 0;
	}
	return n;
}

void
gather_cpu(const float *table, int64_t vocab, int64_t dim, const int64_t *ids,
           int64_t stride, int64_t rows, int64_t width, int combiner, float *y)
{
	int64_t out = combiner == TF_COMBINE_CONCAT ? width * dim : dim;
	memset(y, 0, (size_t)(rows * out) * sizeof *y);
	for (int64_t r = 0; r < rows; r++) {
		const int64_t *row = ids + r * stride;
		float *yr = y + r * out;
		ask_ahead(table, vocab, dim, ids, stride, r, rows, width);
		for (int64_t k = 0; k < width; k++) {
			int64_t id = id_at(row, k, vocab);
			if (id < 0) {
				continue;
			}
			const float *v = table + id * dim;
			float *dst =
			    combiner == TF_COMBINE_CONCAT ? yr + k * dim : yr;
			for (int64_t j = 0; j < dim; j++) {
				dst[j] += v[j];
			}
		}
		if (combiner == TF_COMBINE_MEAN) {
			int64_t n = present(row, width, vocab);
			for (int64_t j = 0; n > 1 && j < dim; j++) {
				yr[j] /= (float)n;
			}
		}
	}
}

void
scatter_cpu(const float *dy, int64_t vocab, int64_t dim, const int64_t *ids,
            int64_t stride, int64_t rows, int64_t width, int combiner,
            float *dtable)
{
	int64_t out = combiner == TF_COMBINE_CONCAT ? width * dim : dim;
	for (int64_t r = 0; r < rows; r++) {
		const int64_t *row = ids + r * stride;
		const float *g = dy + r * out;
		int64_t n = combiner == TF_COMBINE_MEAN
		                ? present(row, width, vocab)
		                : 1;
		float s = n > 1 ? 1.0f / (float)n : 1.0f;
		ask_ahead(dtable, vocab, dim, ids, stride, r, rows, width);
		for (int64_t k = 0; k < width; k++) {
			int64_t id = id_at(row, k, vocab);
			if (id < 0) {
				continue;
			}
			const float *src =
			    combiner == TF_COMBINE_CONCAT ? g + k * dim : g;
			float *dst = dtable + id * dim;
			for (int64_t j = 0; j < dim; j++) {
				dst[j] += s * src[j];
			}
		}
	}
}

/*
 * Weighted lookups (TensorFlow's embedding_lookup_sparse): a row's ids
 * and as many weights, wstride apart a row.  sum: the weights' sum of
 * the ids' vectors; mean: that over the sum of their weights (zeros
 * when it is 0).  scatter_w adds the gradient into dtable.
 */
static float
weight_sum(const int64_t *ids, const float *w, int64_t width, int64_t vocab)
{
	float s = 0.0f;
	for (int64_t k = 0; k < width; k++) {
		s += id_at(ids, k, vocab) >= 0 ? w[k] : 0.0f;
	}
	return s;
}

void
gather_w_cpu(const float *table, int64_t vocab, int64_t dim, const int64_t *ids,
             int64_t stride, const float *w, int64_t wstride, int64_t rows,
             int64_t width, int combiner, float *y)
{
	memset(y, 0, (size_t)(rows * dim) * sizeof *y);
	for (int64_t r = 0; r < rows; r++) {
		const int64_t *row = ids + r * stride;
		const float *wr = w + r * wstride;
		float *yr = y + r * dim;
		ask_ahead(table, vocab, dim, ids, stride, r, rows, width);
		if (dim == 1) { /* a linear model's weights: one a row */
			float acc = 0.0f;
			for (int64_t k = 0; k < width; k++) {
				int64_t id = id_at(row, k, vocab);
				acc += id >= 0 ? wr[k] * table[id] : 0.0f;
			}
			yr[0] = acc;
		}
		for (int64_t k = 0; dim > 1 && k < width; k++) {
			int64_t id = id_at(row, k, vocab);
			if (id < 0) {
				continue;
			}
			const float *v = table + id * dim;
			float c = wr[k];
			for (int64_t j = 0; j < dim; j++) {
				yr[j] += c * v[j];
			}
		}
		if (combiner == TF_COMBINE_MEAN) {
			float s = weight_sum(row, wr, width, vocab);
			for (int64_t j = 0; s != 0.0f && j < dim; j++) {
				yr[j] /= s;
			}
		}
	}
}

void
scatter_w_cpu(const float *dy, int64_t vocab, int64_t dim, const int64_t *ids,
              int64_t stride, const float *w, int64_t wstride, int64_t rows,
              int64_t width, int combiner, float *dtable)
{
	for (int64_t r = 0; r < rows; r++) {
		const int64_t *row = ids + r * stride;
		const float *wr = w + r * wstride;
		const float *g = dy + r * dim;
		float s = combiner == TF_COMBINE_MEAN
		              ? weight_sum(row, wr, width, vocab)
		              : 1.0f;
		float inv = s != 0.0f ? 1.0f / s : 0.0f;
		ask_ahead(dtable, vocab, dim, ids, stride, r, rows, width);
		for (int64_t k = 0; dim == 1 && k < width; k++) {
			int64_t id = id_at(row, k, vocab);
			if (id >= 0) {
				dtable[id] += wr[k] * inv * g[0];
			}
		}
		for (int64_t k = 0; dim > 1 && k < width; k++) {
			int64_t id = id_at(row, k, vocab);
			if (id < 0) {
				continue;
			}
			float c = wr[k] * inv;
			float *dst = dtable + id * dim;
			for (int64_t j = 0; j < dim; j++) {
				dst[j] += c * g[j];
			}
		}
	}
}
