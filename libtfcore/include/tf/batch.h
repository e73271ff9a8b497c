/*
 * batch.h - rows as the graph is fed them: features, ids and labels.
 *
 * One struct for every reader and every consumer: the dataset fills it
 * (tf_dataset_read()), the trainer's reader thread hands it over,
 * evaluation and prediction feed it (tf_graph_feed_batch(),
 * tf_model_predict()), and a serving request holds its rows in one.
 */
#ifndef TF_BATCH_H
#define TF_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "tf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tf_batch {
	float *x;         /* rows x width features */
	int64_t *ids;     /* rows x id_width ids (categorical, crossed) */
	float *y;         /* rows labels (NaN where a row has none) */
	size_t rows;      /* rows held */
	size_t capacity;  /* rows there is room for */
	int64_t width;    /* floats a row */
	int64_t id_width; /* ids a row (0: none) */
};

/* Room for capacity rows of width floats and id_width ids; rows 0.
 * TF_ENOMEM (the batch then holds nothing). */
TF_API int tf_batch_init(struct tf_batch *b, size_t capacity, int64_t width,
                         int64_t id_width);
/* Room for at least capacity rows, keeping those held. */
TF_API int tf_batch_reserve(struct tf_batch *b, size_t capacity);
/* Append rows of another batch of the same widths (growing as needed). */
TF_API int tf_batch_append(struct tf_batch *b, const struct tf_batch *from);
TF_API void tf_batch_release(struct tf_batch *b);

#ifdef __cplusplus
}
#endif
#endif
