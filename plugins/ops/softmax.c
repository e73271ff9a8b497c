/*
 * softmax.c - row-wise softmax: y[r][c] = exp(x[r][c]) / sum_k exp(x[r][k]).
 * For class probabilities; training uses softmax_xent on the logits.
 *
 *	node p softmax logits
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
	tf_softmax(tf_node_device(n), tf_tensor_f32(x),
	           tf_tensor_f32(tf_node_output(n)), x->rows, x->cols);
	return TF_OK;
}

static int
backward(struct tf_node *n)
{
	struct tf_tensor *dx = tf_node_input_grad(n, 0);
	if (dx != NULL) {
		const struct tf_tensor *y = tf_node_output(n);
		tf_softmax_grad(tf_node_device(n), tf_tensor_f32(y),
		                tf_tensor_f32(tf_node_output_grad(n)),
		                tf_tensor_f32(dx), y->rows, y->cols);
	}
	return TF_OK;
}

static const struct tf_op ops[] = {
    {"softmax", "row-wise softmax (class probabilities)", build, forward,
     backward},
    {0},
};

TF_PLUGIN_DEFINE("softmax", "1.0", ops, NULL)
