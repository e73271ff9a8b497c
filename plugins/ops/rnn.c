/*
 * rnn.c - recurrent layers over a sequence: each row of the input is T
 * steps of F features (an input shape T x F, step by step).
 *
 *	node r lstm x units=64 [sequences=1] [reverse=1] [forget_bias=1]
 *	node r gru x units=64 [sequences=1] [reverse=1]
 *
 * The output is the last step's h (units values), or with sequences=1
 * every step's (T x units, in step order); reverse=1 reads the steps
 * last to first (a bidirectional layer is a forward and a reverse one
 * joined by concat).  The gate layouts are Keras' (kernels/cpu/rnn.c):
 * kernel F x (4 or 3) units, recurrent_kernel units x (4 or 3) units,
 * both Glorot uniform (Keras starts the recurrent one orthogonal);
 * lstm's bias 1 x 4 units (i, f, c, o) with forget_bias (default 1)
 * added to the forget gate as TensorFlow's LSTMCell does; gru's bias
 * 2 x 3 units (input's, recurrent's: reset_after, as Keras' and cuDNN's
 * GRU).  Every step is one matrix product of h by the recurrent kernel
 * and a cell kernel; the input's products are one for all the steps.
 */
#include "tf/plugin.h"

struct dims {
	int64_t t, f, u, g; /* steps, features, units, gates */
	int seq, rev;
};

static int
dims(struct tf_node *n, int gates, struct dims *d)
{
	struct tf_shape s;
	int rank = tf_node_input_shape(n, 0, &s);
	if (rank != 2) {
		return tf_node_error(n,
		                     "needs a sequence input (T x F: steps of "
		                     "features), not one of %d dimension%s",
		                     rank, rank == 1 ? "" : "s");
	}
	d->t = s.dim[0];
	d->f = s.dim[1];
	d->u = tf_node_attr_int(n, "units", 0);
	d->g = gates;
	d->seq = tf_node_attr_int(n, "sequences", 0) != 0;
	d->rev = tf_node_attr_int(n, "reverse", 0) != 0;
	if (d->u < 1) {
		return tf_node_error(n, "needs units=N with N >= 1");
	}
	return TF_OK;
}

static int
build(struct tf_node *n, int gates)
{
	if (tf_node_ninputs(n) != 1) {
		return tf_node_error(n, "takes one input");
	}
	struct dims d;
	if (dims(n, gates, &d) != TF_OK) {
		return TF_EINVAL;
	}
	tf_node_add_param(n, "kernel", d.f, gates * d.u,
	                  TF_INIT_GLOROT_UNIFORM);
	tf_node_add_param(n, "recurrent_kernel", d.u, gates * d.u,
	                  TF_INIT_GLOROT_UNIFORM);
	if (tf_node_attr_int(n, "bias", 1)) {
		tf_node_add_param(n, "bias", gates == 4 ? 1 : 2, gates * d.u,
		                  TF_INIT_ZEROS);
	}
	struct tf_shape s = {d.seq ? 2 : 1, {d.seq ? d.t : d.u, d.u}};
	return tf_node_set_shape(n, &s);
}

static int
build_lstm(struct tf_node *n)
{
	return build(n, 4);
}

static int
build_gru(struct tf_node *n)
{
	return build(n, 3);
}

/* Saved from forward to backward: every step's h (h[0] zeros), the
 * activated gates, and lstm's cell states (c[0] zeros) or gru's
 * recurrent preactivations. */
enum { SAVED_H, SAVED_ACT, SAVED_CELL };

static int
forward(struct tf_node *n, int gates)
{
	struct dims d;
	if (dims(n, gates, &d) != TF_OK) {
		return TF_EINVAL;
	}
	struct tf_device *dev = tf_node_device(n);
	const struct tf_tensor *x = tf_node_input(n, 0);
	struct tf_tensor *y = tf_node_output(n);
	const float *w = tf_tensor_f32(tf_node_param(n, 0));
	const float *uk = tf_tensor_f32(tf_node_param(n, 1));
	const float *b =
	    tf_node_nparams(n) > 2 ? tf_tensor_f32(tf_node_param(n, 2)) : NULL;
	int64_t B = x->rows, T = d.t, U = d.u, GU = gates * d.u;
	size_t bu = (size_t)(B * U);
	/* every step's input product at once: x as (B*T) x F */
	float *xw = tf_node_scratch(n, (size_t)(B * T * GU));
	float *hs = tf_node_scratch(n, (size_t)(T + 1) * bu);
	float *acts = tf_node_scratch(n, (size_t)(T * B * GU));
	float *cell = tf_node_scratch(n, gates == 4 ? (size_t)(T + 1) * bu
	                                            : (size_t)(T * B * GU));
	float *step = tf_node_scratch(n, (size_t)(B * GU));
	if (xw == NULL || hs == NULL || acts == NULL || cell == NULL ||
	    step == NULL) {
		return tf_node_error(n, "out of memory");
	}
	tf_gemm(dev, 0, 0, B * T, GU, d.f, 1.0f, tf_tensor_f32(x), w, 0.0f, xw);
	if (b != NULL) {
		tf_add_bias(dev, xw, b, B * T, GU);
	}
	if (gates == 4) {
		float fb = (float)tf_node_attr_float(n, "forget_bias", 1.0);
		float *v = tf_node_scratch(n, (size_t)GU);
		if (v == NULL) {
			return tf_node_error(n, "out of memory");
		}
		tf_zero(dev, v, (size_t)GU);
		tf_fill(dev, v + U, (size_t)U, fb);
		tf_add_bias(dev, xw, v, B * T, GU);
		tf_zero(dev, cell, bu);
	}
	tf_zero(dev, hs, bu);
	for (int64_t s = 0; s < T; s++) {
		int64_t t = d.rev ? T - 1 - s : s;
		const float *hp = hs + (size_t)s * bu;
		float *h = hs + (size_t)(s + 1) * bu;
		float *act = acts + (size_t)(s * B * GU);
		if (gates == 4) {
			tf_gemm(dev, 0, 0, B, GU, U, 1.0f, hp, uk, 0.0f, step);
			tf_add_cols(dev, xw + t * GU, T * GU, step, GU, B, GU);
			tf_lstm_cell(dev, step, cell + (size_t)s * bu, act,
			             cell + (size_t)(s + 1) * bu, h, B, U);
		} else {
			float *gh = cell + (size_t)(s * B * GU);
			tf_gemm(dev, 0, 0, B, GU, U, 1.0f, hp, uk, 0.0f, gh);
			if (b != NULL) {
				tf_add_bias(dev, gh, b + GU, B, GU);
			}
			tf_copy_cols(dev, xw + t * GU, T * GU, step, GU, B, GU);
			tf_gru_cell(dev, step, gh, hp, act, h, B, U);
		}
		if (d.seq) {
			tf_copy_cols(dev, h, U, tf_tensor_f32(y) + t * U, T * U,
			             B, U);
		}
	}
	if (!d.seq) {
		tf_copy(dev, hs + (size_t)T * bu, tf_tensor_f32(y), bu);
	}
	tf_node_set_saved(n, SAVED_H, hs);
	tf_node_set_saved(n, SAVED_ACT, acts);
	tf_node_set_saved(n, SAVED_CELL, cell);
	return TF_OK;
}

static int
forward_lstm(struct tf_node *n, int training)
{
	(void)training;
	return forward(n, 4);
}

static int
forward_gru(struct tf_node *n, int training)
{
	(void)training;
	return forward(n, 3);
}

/* Back through time: each step's gradient reaching h (its output's and
 * the next step's through the recurrent kernel), the cell's gradient,
 * the recurrent kernel's; then the input's products for every step at
 * once. */
static int
backward(struct tf_node *n, int gates)
{
	struct dims d;
	if (dims(n, gates, &d) != TF_OK) {
		return TF_EINVAL;
	}
	struct tf_device *dev = tf_node_device(n);
	const struct tf_tensor *x = tf_node_input(n, 0);
	const float *dy = tf_tensor_f32(tf_node_output_grad(n));
	const float *w = tf_tensor_f32(tf_node_param(n, 0));
	const float *uk = tf_tensor_f32(tf_node_param(n, 1));
	float *dw = tf_tensor_f32(tf_node_param_grad(n, 0));
	float *du = tf_tensor_f32(tf_node_param_grad(n, 1));
	float *db = tf_node_nparams(n) > 2
	                ? tf_tensor_f32(tf_node_param_grad(n, 2))
	                : NULL;
	const float *hs = tf_node_saved(n, SAVED_H);
	const float *acts = tf_node_saved(n, SAVED_ACT);
	const float *cell = tf_node_saved(n, SAVED_CELL);
	int64_t B = x->rows, T = d.t, U = d.u, GU = gates * d.u;
	size_t bu = (size_t)(B * U);
	float *dxw = tf_node_scratch(n, (size_t)(B * T * GU));
	float *dh = tf_node_scratch(n, bu), *dc = tf_node_scratch(n, bu);
	float *dg = tf_node_scratch(n, (size_t)(B * GU));
	/* every step's gradient of the recurrent product, in step order as
	 * the h before each is: one matrix product for the recurrent
	 * kernel's gradient after the loop, not one a step */
	float *dgs = tf_node_scratch(n, (size_t)(T * B * GU));
	if (dxw == NULL || dh == NULL || dc == NULL || dg == NULL ||
	    dgs == NULL) {
		return tf_node_error(n, "out of memory");
	}
	tf_zero(dev, dh, bu);
	tf_zero(dev, dc, bu);
	for (int64_t s = T - 1; s >= 0; s--) {
		int64_t t = d.rev ? T - 1 - s : s;
		const float *hp = hs + (size_t)s * bu;
		const float *act = acts + (size_t)(s * B * GU);
		float *dgr = dgs + (size_t)(s * B * GU);
		if (d.seq) {
			tf_add_cols(dev, dy + t * U, T * U, dh, U, B, U);
		} else if (s == T - 1) {
			tf_add(dev, dy, dh, bu);
		}
		if (gates == 4) {
			/* the input's and the recurrent product's gradients
			 * are one, dgr */
			tf_lstm_cell_grad(dev, act, cell + (size_t)s * bu,
			                  cell + (size_t)(s + 1) * bu, dh, dc,
			                  dgr, B, U);
			tf_gemm(dev, 0, 1, B, U, GU, 1.0f, dgr, uk, 0.0f, dh);
			tf_copy_cols(dev, dgr, GU, dxw + t * GU, T * GU, B, GU);
		} else {
			const float *gh = cell + (size_t)(s * B * GU);
			tf_gru_cell_grad(dev, act, gh, hp, dh, dg, dgr, dc, B,
			                 U);
			/* dh_prev: the share past the gates, plus the
			 * recurrent product's */
			tf_copy(dev, dc, dh, bu);
			tf_gemm(dev, 0, 1, B, U, GU, 1.0f, dgr, uk, 1.0f, dh);
			tf_copy_cols(dev, dg, GU, dxw + t * GU, T * GU, B, GU);
		}
	}
	/* the recurrent kernel's gradient: each step's h before it by the
	 * step's gradient, (T*B x U)^T (T*B x GU) */
	tf_gemm(dev, 1, 0, U, GU, T * B, 1.0f, hs, dgs, 1.0f, du);
	if (gates == 3 && db != NULL) {
		tf_bias_grad(dev, dgs, db + GU, T * B, GU);
	}
	tf_gemm(dev, 1, 0, d.f, GU, B * T, 1.0f, tf_tensor_f32(x), dxw, 1.0f,
	        dw);
	if (db != NULL) {
		tf_bias_grad(dev, dxw, db, B * T, GU);
	}
	struct tf_tensor *dx = tf_node_input_grad(n, 0);
	if (dx != NULL) {
		tf_gemm(dev, 0, 1, B * T, d.f, GU, 1.0f, dxw, w, 1.0f,
		        tf_tensor_f32(dx));
	}
	return TF_OK;
}

static int
backward_lstm(struct tf_node *n)
{
	return backward(n, 4);
}

static int
backward_gru(struct tf_node *n)
{
	return backward(n, 3);
}

static const struct tf_op ops[] = {
    {"lstm",
     "LSTM over a T x F sequence, Keras' gates (units=N, sequences=0|1, "
     "reverse=0|1, forget_bias=X, bias=0|1)",
     build_lstm, forward_lstm, backward_lstm},
    {"gru",
     "GRU over a T x F sequence, reset after as Keras' (units=N, "
     "sequences=0|1, reverse=0|1, bias=0|1)",
     build_gru, forward_gru, backward_gru},
    {0},
};

TF_PLUGIN_DEFINE("rnn", "1.0", ops, NULL)
