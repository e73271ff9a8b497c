/*
 * dense.c - the fully connected layer: y = x W + b.
 *
 *	node h dense x units=128 [bias=0] [init=glorot|zeros]
 *
 * W is [in, units] (Glorot uniform, as Keras's Dense, or zeros: a linear
 * model as TensorFlow's LinearClassifier starts), b is [units] (zeros).
 */
#include <string.h>

#include "tf/plugin.h"

static int
build(struct tf_node *n)
{
	if (tf_node_ninputs(n) != 1) {
		return tf_node_error(n, "takes one input");
	}
	int64_t units = tf_node_attr_int(n, "units", 0);
	if (units < 1) {
		return tf_node_error(n, "needs units=N with N >= 1");
	}
	const char *init = tf_node_attr_str(n, "init", "glorot");
	int zeros = strcmp(init, "zeros") == 0;
	if (!zeros && strcmp(init, "glorot") != 0) {
		return tf_node_error(n, "init=%s is not glorot or zeros", init);
	}
	int64_t in = tf_node_input_width(n, 0);
	tf_node_add_param(n, "kernel", in, units,
	                  zeros ? TF_INIT_ZEROS : TF_INIT_GLOROT_UNIFORM);
	if (tf_node_attr_int(n, "bias", 1)) {
		tf_node_add_param(n, "bias", 1, units, TF_INIT_ZEROS);
	}
	tf_node_set_width(n, units);
	return TF_OK;
}

/* x: (B, in)  W: (in, units)  y: (B, units) */
static int
forward(struct tf_node *n, int training)
{
	(void)training;
	struct tf_device *d = tf_node_device(n);
	const struct tf_tensor *x = tf_node_input(n, 0);
	struct tf_tensor *w = tf_node_param(n, 0), *y = tf_node_output(n);
	tf_gemm(d, 0, 0, x->rows, w->cols, x->cols, 1.0f, tf_tensor_f32(x),
	        tf_tensor_f32(w), 0.0f, tf_tensor_f32(y));
	if (tf_node_nparams(n) > 1) {
		tf_add_bias(d, tf_tensor_f32(y),
		            tf_tensor_f32(tf_node_param(n, 1)), y->rows,
		            y->cols);
	}
	return TF_OK;
}

/* dW += x^T dy;  db += sum_rows dy;  dx += dy W^T */
static int
backward(struct tf_node *n)
{
	struct tf_device *d = tf_node_device(n);
	const struct tf_tensor *x = tf_node_input(n, 0);
	const struct tf_tensor *dy = tf_node_output_grad(n);
	struct tf_tensor *w = tf_node_param(n, 0);
	struct tf_tensor *dw = tf_node_param_grad(n, 0);
	tf_gemm(d, 1, 0, w->rows, w->cols, x->rows, 1.0f, tf_tensor_f32(x),
	        tf_tensor_f32(dy), 1.0f, tf_tensor_f32(dw));
	if (tf_node_nparams(n) > 1) {
		tf_bias_grad(d, tf_tensor_f32(dy),
		             tf_tensor_f32(tf_node_param_grad(n, 1)), dy->rows,
		             dy->cols);
	}
	struct tf_tensor *dx = tf_node_input_grad(n, 0);
	if (dx != NULL) {
		tf_gemm(d, 0, 1, x->rows, x->cols, w->cols, 1.0f,
		        tf_tensor_f32(dy), tf_tensor_f32(w), 1.0f,
		        tf_tensor_f32(dx));
	}
	return TF_OK;
}

static const struct tf_op ops[] = {
    {"dense",
     "fully connected layer: y = x W + b (units=N, bias=0|1, "
     "init=glorot|zeros)",
     build, forward, backward},
    {0},
};

TF_PLUGIN_DEFINE("dense", "1.1", ops, NULL)
