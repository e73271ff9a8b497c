/*
 * conv.c - convolutional layers over images (NHWC, as TensorFlow: a
 * row of an input is an H x W x C image, its shape given by the spec's
 * "input x 28x28x1" or the op before).
 *
 *	node c conv2d x filters=32 [kernel=3] [stride=1] [padding=same]
 *	        [bias=0]
 *	node p max_pool c [size=2] [stride=size] [padding=valid]
 *	node a avg_pool c [size=2] [stride=size] [padding=valid]
 *	node g global_avg_pool c             one value a channel
 *	node f flatten p                      the image as one flat row
 *
 * Padding as TensorFlow's: same gives ceil(in / stride) outputs, the
 * padding split with the odd one after; valid only whole windows,
 * ceil((in - k + 1) / stride).  Pooling counts only the places inside
 * the image (TensorFlow's avg_pool with SAME likewise).
 *
 * conv2d is one matrix product of the patches (tf_im2col()) by its
 * kernel, [k*k*C, filters] (Glorot uniform over those), plus a bias
 * [filters] (zeros); a 1x1 kernel of stride 1 multiplies the image
 * itself.
 */
#include <string.h>

#include "tf/plugin.h"

/* The geometry of a window of k x k moved by stride over input i's
 * image, with padding same or valid; TF_EINVAL (the node's error, naming
 * the shapes) when the input is not an image or the window does not fit.
 */
static int
geometry(struct tf_node *n, int64_t k, int64_t stride, const char *padding,
         struct tf_conv *g)
{
	struct tf_shape s;
	int rank = tf_node_input_shape(n, 0, &s);
	if (rank != 3) {
		return tf_node_error(n,
		                     "needs an image input (H x W x C), not "
		                     "one of %d dimension%s",
		                     rank, rank == 1 ? "" : "s");
	}
	int same = strcmp(padding, "same") == 0;
	if (!same && strcmp(padding, "valid") != 0) {
		return tf_node_error(n, "padding=%s: expected same or valid",
		                     padding);
	}
	if (k < 1 || stride < 1) {
		return tf_node_error(n,
		                     "needs a window and stride of 1 or more");
	}
	if (tf_conv_geometry(s.dim[0], s.dim[1], s.dim[2], k, stride, same,
	                     g) != 0) {
		return tf_node_error(n,
		                     "a %lldx%lld window does not fit its "
		                     "%lldx%lldx%lld input (padding=valid)",
		                     (long long)k, (long long)k,
		                     (long long)s.dim[0], (long long)s.dim[1],
		                     (long long)s.dim[2]);
	}
	return TF_OK;
}

/* conv2d's geometry from its attributes. */
static int
conv_geometry(struct tf_node *n, struct tf_conv *g)
{
	return geometry(n, tf_node_attr_int(n, "kernel", 3),
	                tf_node_attr_int(n, "stride", 1),
	                tf_node_attr_str(n, "padding", "same"), g);
}

/* Whether the patches are the image itself (1x1, stride 1). */
static int
direct(const struct tf_conv *g)
{
	return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1;
}

static int
build_conv(struct tf_node *n)
{
	if (tf_node_ninputs(n) != 1) {
		return tf_node_error(n, "takes one input");
	}
	int64_t filters = tf_node_attr_int(n, "filters", 0);
	if (filters < 1) {
		return tf_node_error(n, "needs filters=N with N >= 1");
	}
	struct tf_conv g;
	if (conv_geometry(n, &g) != TF_OK) {
		return TF_EINVAL;
	}
	tf_node_add_param(n, "kernel", g.kh * g.kw * g.c, filters,
	                  TF_INIT_GLOROT_UNIFORM);
	if (tf_node_attr_int(n, "bias", 1)) {
		tf_node_add_param(n, "bias", 1, filters, TF_INIT_ZEROS);
	}
	struct tf_shape s = {3, {g.oh, g.ow, filters}};
	return tf_node_set_shape(n, &s);
}

/* col: (B*oh*ow, k*k*C) patches;  y = col W + b: (B*oh*ow, filters) */
static int
forward_conv(struct tf_node *n, int training)
{
	(void)training;
	struct tf_conv g;
	if (conv_geometry(n, &g) != TF_OK) {
		return TF_EINVAL;
	}
	struct tf_device *d = tf_node_device(n);
	const struct tf_tensor *x = tf_node_input(n, 0);
	struct tf_tensor *w = tf_node_param(n, 0), *y = tf_node_output(n);
	int64_t m = x->rows * g.oh * g.ow, patch = g.kh * g.kw * g.c;
	float *col = tf_tensor_f32(x);
	if (!direct(&g)) {
		col = tf_node_scratch(n, (size_t)(m * patch));
		if (col == NULL) {
			return TF_ENOMEM;
		}
		tf_im2col(d, tf_tensor_f32(x), x->rows, &g, col);
	}
	tf_node_set_saved(n, 0, col);
	tf_gemm(d, 0, 0, m, w->cols, patch, 1.0f, col, tf_tensor_f32(w), 0.0f,
	        tf_tensor_f32(y));
	if (tf_node_nparams(n) > 1) {
		tf_add_bias(d, tf_tensor_f32(y),
		            tf_tensor_f32(tf_node_param(n, 1)), m, w->cols);
	}
	return TF_OK;
}

/* dW += col^T dy;  db += sum dy;  dx += col2im(dy W^T) */
static int
backward_conv(struct tf_node *n)
{
	struct tf_conv g;
	if (conv_geometry(n, &g) != TF_OK) {
		return TF_EINVAL;
	}
	struct tf_device *d = tf_node_device(n);
	const struct tf_tensor *x = tf_node_input(n, 0);
	const struct tf_tensor *dy = tf_node_output_grad(n);
	struct tf_tensor *w = tf_node_param(n, 0);
	int64_t m = x->rows * g.oh * g.ow, patch = g.kh * g.kw * g.c;
	const float *col = tf_node_saved(n, 0);
	tf_gemm(d, 1, 0, patch, w->cols, m, 1.0f, col, tf_tensor_f32(dy), 1.0f,
	        tf_tensor_f32(tf_node_param_grad(n, 0)));
	if (tf_node_nparams(n) > 1) {
		tf_bias_grad(d, tf_tensor_f32(dy),
		             tf_tensor_f32(tf_node_param_grad(n, 1)), m,
		             w->cols);
	}
	struct tf_tensor *dx = tf_node_input_grad(n, 0);
	if (dx == NULL) {
		return TF_OK;
	}
	if (direct(&g)) {
		tf_gemm(d, 0, 1, m, patch, w->cols, 1.0f, tf_tensor_f32(dy),
		        tf_tensor_f32(w), 1.0f, tf_tensor_f32(dx));
		return TF_OK;
	}
	float *dcol = tf_node_scratch(n, (size_t)(m * patch));
	if (dcol == NULL) {
		return TF_ENOMEM;
	}
	tf_gemm(d, 0, 1, m, patch, w->cols, 1.0f, tf_tensor_f32(dy),
	        tf_tensor_f32(w), 0.0f, dcol);
	tf_col2im(d, dcol, x->rows, &g, tf_tensor_f32(dx));
	return TF_OK;
}

/* A pooling node's geometry: size=K, stride=K, padding=valid unless
 * said. */
static int
pool_geometry(struct tf_node *n, struct tf_conv *g)
{
	int64_t k = tf_node_attr_int(n, "size", 2);
	return geometry(n, k, tf_node_attr_int(n, "stride", k),
	                tf_node_attr_str(n, "padding", "valid"), g);
}

static int
build_pool(struct tf_node *n)
{
	if (tf_node_ninputs(n) != 1) {
		return tf_node_error(n, "takes one input");
	}
	struct tf_conv g;
	if (pool_geometry(n, &g) != TF_OK) {
		return TF_EINVAL;
	}
	struct tf_shape s = {3, {g.oh, g.ow, g.c}};
	return tf_node_set_shape(n, &s);
}

/* y: (B, oh*ow*C), the windows' largest values or means, over the
 * windows geom gives (pool_geometry, or global_geometry's one). */
static int
forward_pool(struct tf_node *n, int max,
             int (*geom)(struct tf_node *, struct tf_conv *))
{
	struct tf_conv g;
	if (geom(n, &g) != TF_OK) {
		return TF_EINVAL;
	}
	const struct tf_tensor *x = tf_node_input(n, 0);
	tf_pool(tf_node_device(n), tf_tensor_f32(x), x->rows, &g, max,
	        tf_tensor_f32(tf_node_output(n)));
	return TF_OK;
}

static int
backward_pool(struct tf_node *n, int max,
              int (*geom)(struct tf_node *, struct tf_conv *))
{
	struct tf_tensor *dx = tf_node_input_grad(n, 0);
	struct tf_conv g;
	if (dx == NULL) {
		return TF_OK;
	}
	if (geom(n, &g) != TF_OK) {
		return TF_EINVAL;
	}
	const struct tf_tensor *x = tf_node_input(n, 0);
	tf_pool_grad(tf_node_device(n), tf_tensor_f32(x),
	             tf_tensor_f32(tf_node_output_grad(n)), x->rows, &g, max,
	             tf_tensor_f32(dx));
	return TF_OK;
}

static int
forward_max(struct tf_node *n, int training)
{
	(void)training;
	return forward_pool(n, 1, pool_geometry);
}

static int
backward_max(struct tf_node *n)
{
	return backward_pool(n, 1, pool_geometry);
}

static int
forward_avg(struct tf_node *n, int training)
{
	(void)training;
	return forward_pool(n, 0, pool_geometry);
}

static int
backward_avg(struct tf_node *n)
{
	return backward_pool(n, 0, pool_geometry);
}

/* The whole image one window: a mean a channel. */
static int
global_geometry(struct tf_node *n, struct tf_conv *g)
{
	struct tf_shape s;
	if (tf_node_input_shape(n, 0, &s) != 3) {
		return tf_node_error(n, "needs an image input (H x W x C)");
	}
	*g = (struct tf_conv){
	    s.dim[0], s.dim[1], s.dim[2], s.dim[0], s.dim[1], 1, 1, 0, 0, 1, 1};
	return TF_OK;
}

static int
build_global(struct tf_node *n)
{
	struct tf_conv g;
	if (tf_node_ninputs(n) != 1) {
		return tf_node_error(n, "takes one input");
	}
	if (global_geometry(n, &g) != TF_OK) {
		return TF_EINVAL;
	}
	tf_node_set_width(n, g.c);
	return TF_OK;
}

static int
forward_global(struct tf_node *n, int training)
{
	(void)training;
	return forward_pool(n, 0, global_geometry);
}

static int
backward_global(struct tf_node *n)
{
	return backward_pool(n, 0, global_geometry);
}

/* The image as one flat row: the same values (a row is already laid
 * out H, W, C), its shape forgotten. */
static int
build_flatten(struct tf_node *n)
{
	if (tf_node_ninputs(n) != 1) {
		return tf_node_error(n, "takes one input");
	}
	tf_node_set_width(n, tf_node_input_width(n, 0));
	return TF_OK;
}

static int
forward_flatten(struct tf_node *n, int training)
{
	(void)training;
	const struct tf_tensor *x = tf_node_input(n, 0);
	tf_copy(tf_node_device(n), tf_tensor_f32(x),
	        tf_tensor_f32(tf_node_output(n)), tf_tensor_size(x));
	return TF_OK;
}

static int
backward_flatten(struct tf_node *n)
{
	struct tf_tensor *dx = tf_node_input_grad(n, 0);
	if (dx != NULL) {
		tf_add(tf_node_device(n), tf_tensor_f32(tf_node_output_grad(n)),
		       tf_tensor_f32(dx), tf_tensor_size(dx));
	}
	return TF_OK;
}

static const struct tf_op ops[] = {
    {"conv2d",
     "2-D convolution of an H x W x C image (filters=N, kernel=K, "
     "stride=S, padding=same|valid, bias=0|1)",
     build_conv, forward_conv, backward_conv},
    {"max_pool",
     "the largest value of each window (size=K, stride=S, "
     "padding=valid|same)",
     build_pool, forward_max, backward_max},
    {"avg_pool",
     "the mean of each window (size=K, stride=S, padding=valid|same)",
     build_pool, forward_avg, backward_avg},
    {"global_avg_pool", "the mean of each channel over the image", build_global,
     forward_global, backward_global},
    {"flatten", "an image as one flat row", build_flatten, forward_flatten,
     backward_flatten},
    {0},
};

TF_PLUGIN_DEFINE("conv", "1.0", ops, NULL)
