/*
 * dropout.c - dropout in training, the identity otherwise:
 *
 *	node d dropout a keep=0.8
 *
 * Each value is kept with probability keep and scaled by 1/keep (inverted
 * dropout, as tf.nn.dropout), so nothing changes at evaluation and serving
 * time.  The mask comes from the graph's seeded generator.
 */
#include "tf/plugin.h"

static int
build(struct tf_node *n)
{
	if (tf_node_ninputs(n) != 1) {
		return tf_node_error(n, "takes one input");
	}
	double keep = tf_node_attr_float(n, "keep", 0.5);
	if (!(keep > 0 && keep <= 1)) {
		return tf_node_error(n, "keep=%g is not in (0, 1]", keep);
	}
	struct tf_shape s; /* elementwise: the input's shape */
	tf_node_input_shape(n, 0, &s);
	if (tf_node_set_shape(n, &s) != TF_OK) {
		return TF_EINVAL;
	}
	return TF_OK;
}

/* x, y: (B, C); mask saved for backward */
static int
forward(struct tf_node *n, int training)
{
	const struct tf_tensor *x = tf_node_input(n, 0);
	struct tf_tensor *y = tf_node_output(n);
	size_t size = tf_tensor_size(x);
	float keep = (float)tf_node_attr_float(n, "keep", 0.5);
	if (!training || keep >= 1.0f) {
		tf_copy(tf_node_device(n), tf_tensor_f32(x), tf_tensor_f32(y),
		        size);
		tf_node_set_saved(n, 0, NULL);
		return TF_OK;
	}
	float *mask = tf_node_scratch(n, size);
	if (mask == NULL) {
		return TF_ENOMEM;
	}
	tf_dropout(tf_node_device(n), tf_tensor_f32(x), tf_tensor_f32(y), mask,
	           size, keep, tf_node_random(n));
	tf_node_set_saved(n, 0, mask);
	return TF_OK;
}

static int
backward(struct tf_node *n)
{
	struct tf_tensor *dx = tf_node_input_grad(n, 0);
	if (dx == NULL) {
		return TF_OK;
	}
	const struct tf_tensor *dy = tf_node_output_grad(n);
	float *mask = tf_node_saved(n, 0);
	if (mask == NULL) {
		tf_add(tf_node_device(n), tf_tensor_f32(dy), tf_tensor_f32(dx),
		       tf_tensor_size(dy));
	} else {
		tf_dropout_grad(tf_node_device(n), mask, tf_tensor_f32(dy),
		                tf_tensor_f32(dx), tf_tensor_size(dy));
	}
	return TF_OK;
}

static const struct tf_op ops[] = {
    {"dropout", "inverted dropout in training (keep=P)", build, forward,
     backward},
    {0},
};

TF_PLUGIN_DEFINE("dropout", "1.0", ops, NULL)
