/*
 * combine.c - reshaping columns: a block of columns, several inputs side
 * by side, several inputs summed.
 *
 *	node n columns x begin=0 size=10     columns begin..begin+size-1
 *	                 [steps=T]           ... as T steps of size/T (a
 *	                                     sequence for a recurrent layer)
 *	node c concat a,b,c                  a, b and c side by side (images
 *	                                     of one H x W: their channels)
 *	node s add a,b                       a + b (same widths)
 */
#include "tf/plugin.h"

static int
build_columns(struct tf_node *n)
{
	if (tf_node_ninputs(n) != 1) {
		return tf_node_error(n, "takes one input");
	}
	int64_t begin = tf_node_attr_int(n, "begin", 0);
	int64_t size = tf_node_attr_int(n, "size", 0);
	int64_t w = tf_node_input_width(n, 0);
	if (begin < 0 || size < 1 || begin + size > w) {
		return tf_node_error(n,
		                     "begin=%lld size=%lld do not fit in %lld "
		                     "columns",
		                     (long long)begin, (long long)size,
		                     (long long)w);
	}
	int64_t steps = tf_node_attr_int(n, "steps", 0);
	if (steps > 0) {
		if (size % steps != 0) {
			return tf_node_error(n,
			                     "size=%lld is not steps=%lld of "
			                     "whole values",
			                     (long long)size, (long long)steps);
		}
		struct tf_shape s = {2, {steps, size / steps}};
		return tf_node_set_shape(n, &s);
	}
	tf_node_set_width(n, size);
	return TF_OK;
}

static int
forward_columns(struct tf_node *n, int training)
{
	(void)training;
	const struct tf_tensor *x = tf_node_input(n, 0);
	struct tf_tensor *y = tf_node_output(n);
	int64_t begin = tf_node_attr_int(n, "begin", 0);
	tf_copy_cols(tf_node_device(n), tf_tensor_f32(x) + begin, x->cols,
	             tf_tensor_f32(y), y->cols, y->rows, y->cols);
	return TF_OK;
}

static int
backward_columns(struct tf_node *n)
{
	struct tf_tensor *dx = tf_node_input_grad(n, 0);
	if (dx == NULL) {
		return TF_OK;
	}
	const struct tf_tensor *dy = tf_node_output_grad(n);
	int64_t begin = tf_node_attr_int(n, "begin", 0);
	tf_add_cols(tf_node_device(n), tf_tensor_f32(dy), dy->cols,
	            tf_tensor_f32(dx) + begin, dx->cols, dy->rows, dy->cols);
	return TF_OK;
}

/* Whether concat joins images along their channels: every input an
 * H x W x C image of one H and W.  Then *pixels is H * W. */
static int
by_channels(const struct tf_node *n, int64_t *pixels)
{
	struct tf_shape s0, s;
	if (tf_node_input_shape(n, 0, &s0) != 3) {
		return 0;
	}
	for (int i = 1; i < tf_node_ninputs(n); i++) {
		if (tf_node_input_shape(n, i, &s) != 3 ||
		    s.dim[0] != s0.dim[0] || s.dim[1] != s0.dim[1]) {
			return 0;
		}
	}
	*pixels = s0.dim[0] * s0.dim[1];
	return 1;
}

static int
build_concat(struct tf_node *n)
{
	if (tf_node_ninputs(n) < 1) {
		return tf_node_error(n, "takes one or more inputs");
	}
	int64_t w = 0, pixels;
	for (int i = 0; i < tf_node_ninputs(n); i++) {
		w += tf_node_input_width(n, i);
	}
	if (by_channels(n, &pixels)) {
		struct tf_shape s;
		tf_node_input_shape(n, 0, &s);
		s.dim[2] = w / pixels;
		return tf_node_set_shape(n, &s);
	}
	tf_node_set_width(n, w);
	return TF_OK;
}

/* Rows side by side; images channel by channel (each pixel a row of
 * its channels). */
static int
forward_concat(struct tf_node *n, int training)
{
	(void)training;
	struct tf_tensor *y = tf_node_output(n);
	int64_t px = 1, at = 0;
	by_channels(n, &px);
	for (int i = 0; i < tf_node_ninputs(n); i++) {
		const struct tf_tensor *x = tf_node_input(n, i);
		int64_t c = x->cols / px;
		tf_copy_cols(tf_node_device(n), tf_tensor_f32(x), c,
		             tf_tensor_f32(y) + at, y->cols / px, y->rows * px,
		             c);
		at += c;
	}
	return TF_OK;
}

static int
backward_concat(struct tf_node *n)
{
	const struct tf_tensor *dy = tf_node_output_grad(n);
	int64_t px = 1, at = 0;
	by_channels(n, &px);
	for (int i = 0; i < tf_node_ninputs(n); i++) {
		struct tf_tensor *dx = tf_node_input_grad(n, i);
		int64_t c = tf_node_input_width(n, i) / px;
		if (dx != NULL) {
			tf_add_cols(tf_node_device(n), tf_tensor_f32(dy) + at,
			            dy->cols / px, tf_tensor_f32(dx), c,
			            dy->rows * px, c);
		}
		at += c;
	}
	return TF_OK;
}

static int
build_add(struct tf_node *n)
{
	if (tf_node_ninputs(n) < 1) {
		return tf_node_error(n, "takes one or more inputs");
	}
	int64_t w = tf_node_input_width(n, 0);
	for (int i = 1; i < tf_node_ninputs(n); i++) {
		if (tf_node_input_width(n, i) != w) {
			return tf_node_error(
			    n, "inputs of widths %lld and %lld", (long long)w,
			    (long long)tf_node_input_width(n, i));
		}
	}
	struct tf_shape s; /* elementwise: the first input's shape */
	tf_node_input_shape(n, 0, &s);
	return tf_node_set_shape(n, &s);
}

static int
forward_add(struct tf_node *n, int training)
{
	(void)training;
	struct tf_tensor *y = tf_node_output(n);
	struct tf_device *d = tf_node_device(n);
	tf_copy(d, tf_tensor_f32(tf_node_input(n, 0)), tf_tensor_f32(y),
	        tf_tensor_size(y));
	for (int i = 1; i < tf_node_ninputs(n); i++) {
		tf_add(d, tf_tensor_f32(tf_node_input(n, i)), tf_tensor_f32(y),
		       tf_tensor_size(y));
	}
	return TF_OK;
}

static int
backward_add(struct tf_node *n)
{
	const struct tf_tensor *dy = tf_node_output_grad(n);
	for (int i = 0; i < tf_node_ninputs(n); i++) {
		struct tf_tensor *dx = tf_node_input_grad(n, i);
		if (dx != NULL) {
			tf_add(tf_node_device(n), tf_tensor_f32(dy),
			       tf_tensor_f32(dx), tf_tensor_size(dy));
		}
	}
	return TF_OK;
}

static const struct tf_op ops[] = {
    {"columns", "a block of columns (begin=I, size=N, steps=T)", build_columns,
     forward_columns, backward_columns},
    {"concat", "inputs side by side (images: along the channels)", build_concat,
     forward_concat, backward_concat},
    {"add", "the sum of inputs of one width", build_add, forward_add,
     backward_add},
    {0},
};

TF_PLUGIN_DEFINE("combine", "1.0", ops, NULL)
