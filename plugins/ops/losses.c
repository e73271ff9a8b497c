/*
 * losses.c - the training losses, each the mean over the batch:
 *
 *	node loss sigmoid_xent logits,label   binary: logits (B, 1), label 0/1
 *	node loss softmax_xent logits,label   classes: logits (B, K), label
 *index node loss mse pred,target              regression: mean squared error
 *
 * A loss node's output is (B, 1) holding the mean loss; its gradient (1
 * when it is the graph's loss) scales the gradient of the first input.
 * The second input (labels, targets) gets no gradient.
 */
#include <math.h>
#include <stdlib.h>

#include "tf/plugin.h"

static int
build_two(struct tf_node *n, int64_t label_width)
{
	if (tf_node_ninputs(n) != 2) {
		return tf_node_error(n, "takes two inputs: prediction, label");
	}
	int64_t lw = tf_node_input_width(n, 1);
	if (label_width > 0 && lw != label_width) {
		return tf_node_error(n,
		                     "the label input has width %lld, not "
		                     "%lld",
		                     (long long)lw, (long long)label_width);
	}
	tf_node_set_width(n, 1);
	return TF_OK;
}

static int
build_sigmoid(struct tf_node *n)
{
	if (tf_node_ninputs(n) == 2 && tf_node_input_width(n, 0) != 1) {
		return tf_node_error(n, "logits must have width 1");
	}
	return build_two(n, 1);
}

static int
build_softmax(struct tf_node *n)
{
	if (tf_node_ninputs(n) == 2 && tf_node_input_width(n, 0) < 2) {
		return tf_node_error(n, "logits need width >= 2 (classes)");
	}
	return build_two(n, 1);
}

static int
build_mse(struct tf_node *n)
{
	if (tf_node_ninputs(n) != 2) {
		return build_two(n, 0);
	}
	return build_two(n, tf_node_input_width(n, 0));
}

/* Write the mean loss in every row of the output. */
static int
set_loss(struct tf_node *n, double loss)
{
	struct tf_tensor *y = tf_node_output(n);
	tf_fill(tf_node_device(n), tf_tensor_f32(y), (size_t)y->rows,
	        (float)loss);
	tf_node_set_loss(n, loss);
	return 0;
}

/* Labels must be whole numbers from 0 to max (classes, or 0/1).  The
 * host reads them as they were fed (labels computed by another node: a
 * copy downloaded off the device, whose memory is out of its reach). */
static int
check_labels(struct tf_node *n, int64_t max)
{
	const struct tf_tensor *y = tf_node_input(n, 1);
	const float *v = tf_node_input_host(n, 1);
	float *copy = NULL;
	if (v == NULL) {
		copy = malloc((size_t)y->rows * sizeof *copy + 1);
		if (copy == NULL) {
			return tf_node_error(n, "out of memory");
		}
		tf_device_download(tf_node_device(n), copy, tf_tensor_f32(y),
		                   (size_t)y->rows * sizeof *copy);
		v = copy;
	}
	int rc = 0;
	for (int64_t r = 0; r < y->rows && rc == 0; r++) {
		if (!(v[r] >= 0 && v[r] <= (float)max &&
		      v[r] == floorf(v[r]))) {
			rc = tf_node_error(n,
			                   "label %g is not a class from 0 to "
			                   "%lld",
			                   v[r], (long long)max);
		}
	}
	free(copy);
	return rc;
}

/* The gradient the loss's output carries (1 unless another node uses
 * the loss), read off the device. */
static float
scale(struct tf_node *n)
{
	float s;
	tf_device_download(tf_node_device(n), &s,
	                   tf_tensor_f32(tf_node_output_grad(n)), sizeof s);
	return s;
}

static int
fwd_sigmoid(struct tf_node *n, int training)
{
	(void)training;
	const struct tf_tensor *x = tf_node_input(n, 0);
	if (check_labels(n, 1) != 0) {
		return TF_EINVAL;
	}
	return set_loss(n, tf_sigmoid_xent(tf_node_device(n), tf_tensor_f32(x),
	                                   tf_tensor_f32(tf_node_input(n, 1)),
	                                   NULL, 0, x->rows));
}

static int
bwd_sigmoid(struct tf_node *n)
{
	struct tf_tensor *dx = tf_node_input_grad(n, 0);
	if (dx != NULL) {
		const struct tf_tensor *x = tf_node_input(n, 0);
		tf_sigmoid_xent(tf_node_device(n), tf_tensor_f32(x),
		                tf_tensor_f32(tf_node_input(n, 1)),
		                tf_tensor_f32(dx), scale(n), x->rows);
	}
	return 0;
}

static int
fwd_softmax(struct tf_node *n, int training)
{
	(void)training;
	const struct tf_tensor *x = tf_node_input(n, 0);
	if (check_labels(n, x->cols - 1) != 0) {
		return TF_EINVAL;
	}
	return set_loss(n, tf_softmax_xent(tf_node_device(n), tf_tensor_f32(x),
	                                   tf_tensor_f32(tf_node_input(n, 1)),
	                                   NULL, 0, x->rows, x->cols));
}

static int
bwd_softmax(struct tf_node *n)
{
	struct tf_tensor *dx = tf_node_input_grad(n, 0);
	if (dx != NULL) {
		const struct tf_tensor *x = tf_node_input(n, 0);
		tf_softmax_xent(tf_node_device(n), tf_tensor_f32(x),
		                tf_tensor_f32(tf_node_input(n, 1)),
		                tf_tensor_f32(dx), scale(n), x->rows, x->cols);
	}
	return 0;
}

static int
fwd_mse(struct tf_node *n, int training)
{
	(void)training;
	const struct tf_tensor *x = tf_node_input(n, 0);
	return set_loss(n, tf_mse(tf_node_device(n), tf_tensor_f32(x),
	                          tf_tensor_f32(tf_node_input(n, 1)), NULL, 0,
	                          x->rows, x->cols));
}

static int
bwd_mse(struct tf_node *n)
{
	struct tf_tensor *dx = tf_node_input_grad(n, 0);
	if (dx != NULL) {
		const struct tf_tensor *x = tf_node_input(n, 0);
		tf_mse(tf_node_device(n), tf_tensor_f32(x),
		       tf_tensor_f32(tf_node_input(n, 1)), tf_tensor_f32(dx),
		       scale(n), x->rows, x->cols);
	}
	return 0;
}

static const struct tf_op ops[] = {
    {"sigmoid_xent", "binary cross-entropy on logits (mean)", build_sigmoid,
     fwd_sigmoid, bwd_sigmoid},
    {"softmax_xent",
     "softmax cross-entropy on logits, label = class "
     "index (mean)",
     build_softmax, fwd_softmax, bwd_softmax},
    {"mse", "mean squared error", build_mse, fwd_mse, bwd_mse},
    {0},
};

TF_PLUGIN_DEFINE("losses", "1.0", ops, NULL)
