/*
 * sigmoid.c - the sigmoid activation: 1 / (1 + exp(-x)), elementwise.
 *
 *	node a sigmoid x
 */
#include "unary.h"

static int
forward(struct tf_node *n, int training)
{
	(void)training;
	return unary_forward(n, tf_sigmoid);
}

static int
backward(struct tf_node *n)
{
	return unary_backward(n, tf_sigmoid_grad);
}

static const struct tf_op ops[] = {
    {"sigmoid", "1 / (1 + exp(-x))", unary_build, forward, backward},
    {0},
};

TF_PLUGIN_DEFINE("sigmoid", "1.0", ops, NULL)
