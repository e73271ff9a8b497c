/*
 * tanh.c - the tanh activation: tanh(x), elementwise.
 *
 *	node a tanh x
 */
#include "unary.h"

static int
forward(struct tf_node *n, int training)
{
	(void)training;
	return unary_forward(n, tf_tanh);
}

static int
backward(struct tf_node *n)
{
	return unary_backward(n, tf_tanh_grad);
}

static const struct tf_op ops[] = {
    {"tanh", "tanh(x)", unary_build, forward, backward},
    {0},
};

TF_PLUGIN_DEFINE("tanh", "1.0", ops, NULL)
