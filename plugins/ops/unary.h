/*
 * unary.h - what the elementwise op plugins share: one input, an output
 * of the same width, a kernel forward and a gradient kernel that reads the
 * saved output.  Each plugin stays its own shared object.
 */
#ifndef TF_PLUGINS_UNARY_H
#define TF_PLUGINS_UNARY_H

#include "tf/plugin.h"

typedef void (*unary_fn)(struct tf_device *d, const float *x, float *y,
                         size_t n);
typedef void (*unary_grad_fn)(struct tf_device *d, const float *y,
                              const float *dy, float *dx, size_t n);

static int
unary_build(struct tf_node *n)
{
	if (tf_node_ninputs(n) != 1) {
		return tf_node_error(n, "takes one input");
	}
	/* elementwise: the input's shape (an image stays an image) */
	struct tf_shape s;
	tf_node_input_shape(n, 0, &s);
	return tf_node_set_shape(n, &s);
}

/* x, y: (B, C) */
static inline int
unary_forward(struct tf_node *n, unary_fn f)
{
	const struct tf_tensor *x = tf_node_input(n, 0);
	f(tf_node_device(n), tf_tensor_f32(x), tf_tensor_f32(tf_node_output(n)),
	  tf_tensor_size(x));
	return TF_OK;
}

/* dx += f'(x) dy, from the saved output y */
static inline int
unary_backward(struct tf_node *n, unary_grad_fn g)
{
	struct tf_tensor *dx = tf_node_input_grad(n, 0);
	if (dx != NULL) {
		const struct tf_tensor *y = tf_node_output(n);
		g(tf_node_device(n), tf_tensor_f32(y),
		  tf_tensor_f32(tf_node_output_grad(n)), tf_tensor_f32(dx),
		  tf_tensor_size(y));
	}
	return TF_OK;
}

#endif
