/*
 * leaky_relu.c - an op plugin of your own: the leaky ReLU, x where x > 0
 * and alpha * x elsewhere (attribute alpha, default 0.2), for model
 * specs (tf-train --model-file; tf-plugin(7)).
 *
 * Build it against the installed headers and give its directory to the
 * commands that load the model:
 *
 *   cc -std=c11 -shared -fPIC -fvisibility=hidden \
 *       $(pkg-config --cflags libtfcore) leaky_relu.c -o ops/leaky_relu.so
 *   tf-train --plugin-dir ops --model-file leaky.spec --checkpoint-dir ck
 * data.tfrecord tf-eval --plugin-dir ops -d ck data.tfrecord tf-serve
 * --plugin-dir ops --model-base models
 *
 * (or put ops/ in TF_PLUGIN_PATH once).
 */
#include <tf/plugin.h>

static double
alpha(struct tf_node *n)
{
	return tf_node_attr_float(n, "alpha", 0.2);
}

/* Once, when the graph is built: one input, an output as wide. */
static int
build(struct tf_node *n)
{
	if (tf_node_ninputs(n) != 1) {
		return tf_node_error(n, "takes one input");
	}
	double a = alpha(n);
	if (!(a >= 0 && a < 1)) {
		return tf_node_error(n, "alpha=%g: it must be from 0 to 1", a);
	}
	tf_node_set_width(n, tf_node_input_width(n, 0));
	return TF_OK;
}

static int
forward(struct tf_node *n, int training)
{
	(void)training;
	const struct tf_tensor *x = tf_node_input(n, 0);
	const float *xv = tf_tensor_f32(x);
	float *y = tf_tensor_f32(tf_node_output(n));
	float a = (float)alpha(n);
	for (size_t i = 0; i < tf_tensor_size(x); i++) {
		y[i] = xv[i] > 0 ? xv[i] : a * xv[i];
	}
	return TF_OK;
}

/* dx += dy where the output is positive, alpha * dy elsewhere (the
 * output has the input's sign). */
static int
backward(struct tf_node *n)
{
	struct tf_tensor *dx = tf_node_input_grad(n, 0);
	if (dx == NULL) {
		return TF_OK; /* fed from data: no gradient wanted */
	}
	const float *y = tf_tensor_f32(tf_node_output(n));
	const float *dy = tf_tensor_f32(tf_node_output_grad(n));
	float *g = tf_tensor_f32(dx);
	float a = (float)alpha(n);
	for (size_t i = 0; i < tf_tensor_size(dx); i++) {
		g[i] += y[i] > 0 ? dy[i] : a * dy[i];
	}
	return TF_OK;
}

static const struct tf_op ops[] = {
    {"leaky_relu", "max(x, alpha * x) (alpha=0.2)", build, forward, backward},
    {0},
};

TF_PLUGIN_DEFINE("leaky_relu", "1.0", ops, NULL)
