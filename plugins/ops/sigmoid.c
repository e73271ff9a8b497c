/*
 * sigmoid.c - the sigmoid activation: 1 / (1 + exp(-x)), elementwise.
 *
 *	node a sigmoid x
 */
#include "tf/plugin.h"

static int
build(struct tf_node *n)
{
	if (tf_node_ninputs(n) != 1) {
		return tf_node_error(n, "takes one input");
	}
	tf_node_set_width(n, tf_node_input_width(n, 0));
	return TF_OK;
}

/* x, y: (B, C) */
static int
forward(struct tf_node *n, int training)
{
	(void)training;
	const struct tf_tensor *x = tf_node_input(n, 0);
	struct tf_tensor *y = tf_node_output(n);
	tf_sigmoid(tf_node_device(n), tf_tensor_f32(x), tf_tensor_f32(y),
	           tf_tensor_size(x));
	return TF_OK;
}

/* dx += f'(x) dy, from the saved output y */
static int
backward(struct tf_node *n)
{
	struct tf_tensor *dx = tf_node_input_grad(n, 0);
	if (dx != NULL) {
		const struct tf_tensor *y = tf_node_output(n);
		tf_sigmoid_grad(tf_node_device(n), tf_tensor_f32(y),
		                tf_tensor_f32(tf_node_output_grad(n)),
		                tf_tensor_f32(dx), tf_tensor_size(y));
	}
	return TF_OK;
}

static const struct tf_op ops[] = {
    {"sigmoid", "1 / (1 + exp(-x))", build, forward, backward},
    {0},
};

static const struct tf_plugin plugin = {
    TF_PLUGIN_ABI, sizeof(struct tf_plugin), "sigmoid", "1.0", ops, NULL, NULL};

TF_PLUGIN_EXPORT const struct tf_plugin *tf_plugin_entry(void);

const struct tf_plugin *
tf_plugin_entry(void)
{
	return &plugin;
}
