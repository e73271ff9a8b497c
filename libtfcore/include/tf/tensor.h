/*
 * tensor.h - the data ops compute on: a batch of rows on a device.
 *
 * Every activation, parameter and gradient in a tfkit model is a 2-D
 * row-major tensor: rows (the batch, or 1 for a bias) by cols; a node's
 * rows may have a shape (struct tf_shape: an image's H x W x C) whose
 * product is cols.  A tensor
 * is a plain view: the graph owns the memory (step-lifetime tensors come
 * from an arena reset each step, parameters from one block), and an op
 * reads and writes it through the kernels of the device it lives on.
 */
#ifndef TF_TENSOR_H
#define TF_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "tf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tf_dtype { TF_FLOAT32 = 0, TF_INT64 = 1 };

struct tf_device;

/*
 * The shape of one example, a row of a tensor: rank 1 to TF_SHAPE_MAX,
 * NHWC for images (H, W, C, as TensorFlow lays them out), (T, F) for
 * sequences, (F) for flat rows.  The row's width is the product of the
 * dimensions; the data stays one row-major block per example.
 */
#define TF_SHAPE_MAX 4
struct tf_shape {
	int rank;
	int64_t dim[TF_SHAPE_MAX];
};

struct tf_tensor {
	void *data; /* rows * cols elements of dtype, row-major */
	int dtype;
	int64_t rows, cols;
	struct tf_device *dev;
};

static inline float *
tf_tensor_f32(const struct tf_tensor *t)
{
	return (float *)t->data;
}

static inline const int64_t *
tf_tensor_i64(const struct tf_tensor *t)
{
	return (const int64_t *)t->data;
}

static inline size_t
tf_tensor_size(const struct tf_tensor *t)
{
	return (size_t)(t->rows * t->cols);
}

#ifdef __cplusplus
}
#endif
#endif
