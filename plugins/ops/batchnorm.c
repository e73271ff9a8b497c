/*
 * batchnorm.c - batch normalisation, as Keras's BatchNormalization:
 *
 *	node b batchnorm h [epsilon=0.001] [momentum=0.99]
 *
 * In training, each column is normalised with the batch's mean and
 * variance, then scaled by gamma and shifted by beta (trained); on an
 * image (H x W x C) each channel is, over the batch and every place of
 * the image, as TensorFlow's over the last axis of NHWC.  Running
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
	struct tf_shape s;
	int64_t c = tf_node_input_width(n, 0);
	int image = tf_node_input_shape(n, 0, &s) == 3;
	if (image) {
		c = s.dim[2];
	}
	tf_node_add_param(n, "gamma", 1, c, TF_INIT_ONES);
	tf_node_add_param(n, "beta", 1, c, TF_INIT_ZEROS);
	tf_node_add_state(n, "moving_mean", 1, c, TF_INIT_ZEROS);
	tf_node_add_state(n, "moving_variance", 1, c, TF_INIT_ONES);
	if (image) {
		return tf_node_set_shape(n, &s);
	}
	tf_node_set_width(n, c);
	return TF_OK;
}

/* The rows and columns the kernels see: a row an image's place and a
 * column a channel for images (NHWC keeps channels innermost), the
 * tensor's own otherwise. */
static void
extent(const struct tf_node *n, const struct tf_tensor *x, int64_t *rows,
       int64_t *cols)
{
	struct tf_shape s;
	*rows = x->rows;
	*cols = x->cols;
	if (tf_node_input_shape(n, 0, &s) == 3) {
		*rows = x->rows * s.dim[0] * s.dim[1];
		*cols = s.dim[2];
	}
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
	int64_t rows, cols;
	extent(n, x, &rows, &cols);
	if (!training) {
		tf_batchnorm_infer(d, f(x), f(y), f(tf_node_param(n, 0)),
		                   f(tf_node_param(n, 1)),
		                   f(tf_node_state(n, 2)),
		                   f(tf_node_state(n, 3)), rows, cols, eps);
		return TF_OK;
	}
	float *xhat = tf_node_scratch(n, tf_tensor_size(x));
	float *inv_std = tf_node_scratch(n, (size_t)cols);
	if (xhat == NULL || inv_std == NULL) {
		return TF_ENOMEM;
	}
	tf_batchnorm_train(d, f(x), f(y), xhat, inv_std, f(tf_node_param(n, 0)),
	                   f(tf_node_param(n, 1)), f(tf_node_state(n, 2)),
	                   f(tf_node_state(n, 3)), rows, cols, eps,
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
	int64_t rows, cols;
	extent(n, dy, &rows, &cols);
	tf_batchnorm_grad(tf_node_device(n), f(dy), tf_node_saved(n, 0),
	                  tf_node_saved(n, 1), f(tf_node_param(n, 0)),
	                  dx ? f(dx) : NULL, f(tf_node_param_grad(n, 0)),
	                  f(tf_node_param_grad(n, 1)), rows, cols);
	return TF_OK;
}

static const struct tf_op ops[] = {
    {"batchnorm",
     "batch normalisation (epsilon=0.001, momentum=0.99), of each "
     "channel on images; running averages at inference",
     build, forward, backward},
    {0},
};

TF_PLUGIN_DEFINE("batchnorm", "1.0", ops, NULL)
