/*
 * relu.c - the relu activation: max(x, 0), elementwise.
 *
 *	node a relu x
 */
#include "unary.h"

static int
forward(struct tf_node *n, int training)
{
	(void)training;
	return unary_forward(n, tf_relu);
}

static int
backward(struct tf_node *n)
{
	return unary_backward(n, tf_relu_grad);
}

static const struct tf_op ops[] = {
    {"relu", "max(x, 0)", unary_build, forward, backward},
    {0},
};

TF_PLUGIN_DEFINE("relu", "1.0", ops, NULL)
