/*
 * batchnorm.c - batch normalisation, as Keras's BatchNormalization:
 *
 *	node b batchnorm h [epsilon=0.001] [momentum=0.99]
 *
 * In training, each column is normalised with the batch's mean and
 * variance, then scaled by gamma and shifted by beta (trained); running
 * averages of mean and variance (state, saved in checkpoints) move with
 * momentum.  At evaluation and serving time the running averages are used,
 * so training and serving compute the same function.
 */
#include "tf/plugin.h"

static int
build(struct tf_node *n)
{
	if (tf_node_ninputs(n) != 1) {
		return tf_node_error(n, "takes one input");
	}
	double eps = tf_node_attr_float(n, "epsilon", 0.001);
	double mom = tf_node_attr_float(n, "momentum", 0.99);
	if (!(eps > 0) || !(mom >= 0 && mom < 1)) {
		return tf_node_error(n, "needs epsilon > 0 and 0 <= momentum "
		                        "< 1");
	}
	int64_t c = tf_node_input_width(n, 0);
	tf_node_add_param(n, "gamma", 1, c, TF_INIT_ONES);
	tf_node_add_param(n, "beta", 1, c, TF_INIT_ZEROS);
	tf_node_add_state(n, "moving_mean", 1, c, TF_INIT_ZEROS);
	tf_node_add_state(n, "moving_variance", 1, c, TF_INIT_ONES);
	tf_node_set_width(n, c);
	return TF_OK;
}

static float *
f(struct tf_tensor *t)
{
	return tf_tensor_f32(t);
}

/* x, y: (B, C); gamma, beta, moving averages: (C) */
static int
forward(struct tf_node *n, int training)
{
	struct tf_device *d = tf_node_device(n);
	struct tf_tensor *x = tf_node_input(n, 0), *y = tf_node_output(n);
	float eps = (float)tf_node_attr_float(n, "epsilon", 0.001);
	if (!training) {
		tf_batchnorm_infer(
		    d, f(x), f(y), f(tf_node_param(n, 0)),
		    f(tf_node_param(n, 1)), f(tf_node_state(n, 2)),
		    f(tf_node_state(n, 3)), x->rows, x->cols, eps);
		return TF_OK;
	}
	float *xhat = tf_node_scratch(n, tf_tensor_size(x));
	float *inv_std = tf_node_scratch(n, (size_t)x->cols);
	if (xhat == NULL || inv_std == NULL) {
		return TF_ENOMEM;
	}
	tf_batchnorm_train(d, f(x), f(y), xhat, inv_std, f(tf_node_param(n, 0)),
	                   f(tf_node_param(n, 1)), f(tf_node_state(n, 2)),
	                   f(tf_node_state(n, 3)), x->rows, x->cols, eps,
	                   (float)tf_node_attr_float(n, "momentum", 0.99));
	tf_node_set_saved(n, 0, xhat);
	tf_node_set_saved(n, 1, inv_std);
	return TF_OK;
}

static int
backward(struct tf_node *n)
{
	struct tf_tensor *dy = tf_node_output_grad(n);
	struct tf_tensor *dx = tf_node_input_grad(n, 0);
	if (tf_node_saved(n, 0) == NULL) {
		return tf_node_error(n, "backward without a training forward");
	}
	tf_batchnorm_grad(tf_node_device(n), f(dy), tf_node_saved(n, 0),
	                  tf_node_saved(n, 1), f(tf_node_param(n, 0)),
	                  dx ? f(dx) : NULL, f(tf_node_param_grad(n, 0)),
	                  f(tf_node_param_grad(n, 1)), dy->rows, dy->cols);
	return TF_OK;
}

static const struct tf_op ops[] = {
    {"batchnorm",
     "batch normalisation (epsilon=0.001, momentum=0.99); running "
     "averages at inference",
     build, forward, backward},
    {0},
};

TF_PLUGIN_DEFINE("batchnorm", "1.0", ops, NULL)
