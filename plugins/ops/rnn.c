/*
 * rnn.c - recurrent layers over a sequence: each row of the input is T
 * steps of F features (an input shape T x F, step by step).
 *
 *	node r lstm x[,ids] units=64 [sequences=1] [reverse=1]
 *	                       [forget_bias=1] [length=K]
 *	node r gru x[,ids] units=64 [sequences=1] [reverse=1] [length=K]
 *	                      [reset_after=0]
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
 * GRU), or with reset_after=0 (Keras' reset_after=False, the only GRU
 * of TensorFlow.js) the reset gate applied to h before its product by
 * the new gate's kernel, and one bias, 1 x 3 units.  Every step is one
 * matrix product of h by the recurrent kernel and a cell kernel (two
 * with reset_after=0: the gates' columns, then the new gate's of r * h);
 * the input's products are one for all the steps.
 *
 * Sequences of varying length: a second input, int64 (the row's ids),
 * holds each row's steps in its column K (length=K); the steps past a
 * row's length are padding that changes nothing, as TensorFlow's
 * sequence_length: the state is carried through them unchanged (the
 * last output is the one of the row's last step), their outputs are
 * zero, and reverse=1 reads each row from its own last step (as
 * tf.reverse_sequence).  Without it every row has T steps.
 */
#include "tf/plugin.h"

struct dims {
	int64_t t, f, u, g; /* steps, features, units, gates */
	int seq, rev;
	int before;         /* gru's reset_after=0 */
	const int64_t *len; /* each row's steps, or NULL: all T */
	int64_t lstride;
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
	d->before = gates == 3 && tf_node_attr_int(n, "reset_after", 1) == 0;
	if (d->u < 1) {
		return tf_node_error(n, "needs units=N with N >= 1");
	}
	d->len = NULL;
	d->lstride = 0;
	if (tf_node_ninputs(n) == 2) {
		int64_t k = tf_node_attr_int(n, "length", -1);
		int64_t w = tf_node_input_width(n, 1);
		if (tf_node_input_dtype(n, 1) != TF_INT64 || k < 0 || k >= w) {
			return tf_node_error(
			    n,
			    "a second input is the rows' int64 "
			    "ids, with length=K naming the "
			    "column of each row's steps (0..%lld)",
			    (long long)w - 1);
		}
		const struct tf_tensor *ids = tf_node_input(n, 1);
		if (ids != NULL) {
			d->len = tf_tensor_i64(ids) + k;
			d->lstride = ids->cols;
		}
	}
	return TF_OK;
}

static int
build(struct tf_node *n, int gates)
{
	if (tf_node_ninputs(n) != 1 && tf_node_ninputs(n) != 2) {
		return tf_node_error(n, "takes a sequence input and, for "
		                        "sequences of varying length, the "
		                        "rows' ids");
	}
	struct dims d;
	if (dims(n, gates, &d) != TF_OK) {
		return TF_EINVAL;
	}
	if (gates == 4) {
		(void)tf_node_attr_float(n, "forget_bias", 1.0); /* lstm's */
	}
	tf_node_add_param(n, "kernel", d.f, gates * d.u,
	                  TF_INIT_GLOROT_UNIFORM);
	tf_node_add_param(n, "recurrent_kernel", d.u, gates * d.u,
	                  TF_INIT_GLOROT_UNIFORM);
	if (tf_node_attr_int(n, "bias", 1)) {
		tf_node_add_param(n, "bias", gates == 4 || d.before ? 1 : 2,
		                  gates * d.u, TF_INIT_ZEROS);
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
 * activated gates, lstm's cell states (c[0] zeros) or gru's recurrent
 * preactivations, and the input (T x B x F), all in the order the steps
 * were read. */
enum { SAVED_H, SAVED_ACT, SAVED_CELL, SAVED_X };

/* Where processing step s of a row is in the input: reverse=1 without
 * lengths reads T-1..0; with lengths the input was reversed row by row
 * first (tf_reverse_steps), so step s is column s. */
static int64_t
at(const struct dims *d, int64_t s)
{
	return d->rev && d->len == NULL ? d->t - 1 - s : s;
}

/* The steps worth running: past the batch's longest sequence every row
 * only carries its state (the lengths are read where the host can read
 * them, the CPU's memory; elsewhere all T run, to the same result). */
static int64_t
steps_run(const struct dims *d, struct tf_device *dev, int64_t rows)
{
	if (d->len == NULL || tf_device_kind(dev) != TF_DEVICE_CPU) {
		return d->t;
	}
	int64_t most = 0;
	for (int64_t r = 0; r < rows && most < d->t; r++) {
		int64_t l = d->len[r * d->lstride];
		most = l > most ? l : most;
	}
	return most < d->t ? most : d->t;
}

/* op(B) (k x cols) packed once in scratch for the products that follow,
 * where the device packs ahead: NULL where it does not (or no memory),
 * and tf_gemm_packed() then reads b itself, to the same floats. */
static float *
pack_ahead(struct tf_node *n, int tb, int64_t cols, int64_t k, const float *b)
{
	struct tf_device *dev = tf_node_device(n);
	size_t floats = tf_gemm_pack_floats(dev, cols, k);
	float *p = floats > 0 ? tf_node_scratch(n, floats) : NULL;
	if (p != NULL) {
		tf_gemm_pack(dev, tb, cols, k, b, p);
	}
	return p;
}

/* reset_after=0: the recurrent kernel's gates' columns (U x 2U, z and
 * r) and the new gate's (U x U), each a matrix of its own for the
 * products; NULL when out of memory. */
static int
split_kernel(struct tf_node *n, const float *uk, int64_t U, float **zr,
             float **nk)
{
	struct tf_device *dev = tf_node_device(n);
	*zr = tf_node_scratch(n, (size_t)(U * 2 * U));
	*nk = tf_node_scratch(n, (size_t)(U * U));
	if (*zr == NULL || *nk == NULL) {
		return tf_node_error(n, "out of memory");
	}
	tf_copy_cols(dev, uk, 3 * U, *zr, 2 * U, U, 2 * U);
	tf_copy_cols(dev, uk + 2 * U, 3 * U, *nk, U, U, U);
	return TF_OK;
}

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
	int64_t B = x->rows, T = d.t, F = d.f, U = d.u, GU = gates * d.u;
	size_t bu = (size_t)(B * U);
	int flip = d.rev && d.len != NULL; /* rows reversed first */
	/* the input in step order, a block of every row's step at a time
	 * (T x B x F): every step's input product at once, each step's a
	 * block of rows that its recurrent product adds to in place */
	float *xs = tf_node_scratch(n, (size_t)(T * B * F));
	float *xf = flip ? tf_node_scratch(n, (size_t)(B * T * F)) : NULL;
	float *xw = tf_node_scratch(n, (size_t)(T * B * GU));
	float *hs = tf_node_scratch(n, (size_t)(T + 1) * bu);
	float *acts = tf_node_scratch(n, (size_t)(T * B * GU));
	/* lstm's cell states, gru's recurrent preactivations or, with
	 * reset_after=0, each step's r * h_prev */
	float *cell = tf_node_scratch(n, gates == 4 ? (size_t)(T + 1) * bu
	                                 : d.before ? (size_t)T * bu
	                                            : (size_t)(T * B * GU));
	float *ys = flip && d.seq ? tf_node_scratch(n, (size_t)(B * T * U))
	                          : tf_tensor_f32(y);
	if (xs == NULL || (flip && xf == NULL) || xw == NULL || hs == NULL ||
	    acts == NULL || cell == NULL || ys == NULL) {
		return tf_node_error(n, "out of memory");
	}
	const float *src = tf_tensor_f32(x);
	if (flip) {
		tf_reverse_steps(dev, d.len, d.lstride, src, xf, B, T, F);
		src = xf;
	}
	for (int64_t s = 0; s < T; s++) {
		tf_copy_cols(dev, src + at(&d, s) * F, T * F,
		             xs + (size_t)(s * B * F), F, B, F);
	}
	tf_gemm(dev, 0, 0, T * B, GU, F, 1.0f, xs, w, 0.0f, xw);
	if (gates == 4) {
		/* the bias with the forget bias added to its forget gate's,
		 * as ONNX's export folds it: one pass over the products */
		float fb = (float)tf_node_attr_float(n, "forget_bias", 1.0);
		float *v = tf_node_scratch(n, (size_t)GU);
		if (v == NULL) {
			return tf_node_error(n, "out of memory");
		}
		tf_zero(dev, v, (size_t)GU);
		tf_fill(dev, v + U, (size_t)U, fb);
		if (b != NULL) {
			tf_add(dev, b, v, (size_t)GU);
		}
		tf_add_bias(dev, xw, v, T * B, GU);
		tf_zero(dev, cell, bu);
	} else if (b != NULL) {
		tf_add_bias(dev, xw, b, T * B, GU);
	}
	tf_zero(dev, hs, bu);
	/* reset_after=0: the kernel's two parts, a step's products of them
	 * (the gates', rows x 2U; the new gate's, rows x U) */
	float *zrk = NULL, *nk = NULL, *gzr = NULL, *gn = NULL;
	const float *zrpk = NULL, *npk = NULL;
	if (d.before) {
		if (split_kernel(n, uk, U, &zrk, &nk) != TF_OK) {
			return TF_ENOMEM;
		}
		gzr = tf_node_scratch(n, 2 * bu);
		gn = tf_node_scratch(n, bu);
		if (gzr == NULL || gn == NULL) {
			return tf_node_error(n, "out of memory");
		}
		zrpk = pack_ahead(n, 0, 2 * U, U, zrk);
		npk = pack_ahead(n, 0, U, U, nk);
	}
	/* the recurrent kernel packed once for every step's product */
	const float *upk = d.before ? NULL : pack_ahead(n, 0, GU, U, uk);
	int64_t run = steps_run(&d, dev, B);
	if (run < T) {
		/* the steps skipped: h zero (a product of zero gradients
		 * later), every output zero */
		tf_zero(dev, hs + (size_t)(run + 1) * bu,
		        (size_t)(T - run) * bu);
		if (d.before) {
			tf_zero(dev, cell + (size_t)run * bu,
			        (size_t)(T - run) * bu);
		}
		if (d.seq) {
			tf_zero(dev, ys, (size_t)(B * T * U));
		}
	}
	for (int64_t s = 0; s < run; s++) {
		int64_t t = at(&d, s);
		const float *hp = hs + (size_t)s * bu;
		float *h = hs + (size_t)(s + 1) * bu;
		float *act = acts + (size_t)(s * B * GU);
		float *g = xw + (size_t)(s * B * GU); /* the step's input's */
		/* (the first step's h before it is zeros: no product) */
		if (gates == 4) {
			/* its preactivations: the input's plus h's, in place */
			if (s > 0) {
				tf_gemm_packed(dev, 0, 0, B, GU, U, 1.0f, hp,
				               uk, upk, 1.0f, g);
			}
			tf_lstm_cell(dev, g, cell + (size_t)s * bu, act,
			             cell + (size_t)(s + 1) * bu, h, B, U);
		} else if (d.before) {
			/* the gates, then the new gate of r * h_prev */
			float *rh = cell + (size_t)s * bu;
			if (s > 0) {
				tf_gemm_packed(dev, 0, 0, B, 2 * U, U, 1.0f, hp,
				               zrk, zrpk, 0.0f, gzr);
			} else {
				tf_zero(dev, gzr, 2 * bu);
			}
			tf_gru_gates(dev, g, gzr, hp, act, rh, B, U);
			if (s > 0) {
				tf_gemm_packed(dev, 0, 0, B, U, U, 1.0f, rh, nk,
				               npk, 0.0f, gn);
			} else {
				tf_zero(dev, gn, bu);
			}
			tf_gru_new(dev, g, gn, hp, act, h, B, U);
		} else {
			float *gh = cell + (size_t)(s * B * GU);
			if (s > 0) {
				tf_gemm_packed(dev, 0, 0, B, GU, U, 1.0f, hp,
				               uk, upk, 0.0f, gh);
			} else {
				tf_zero(dev, gh, (size_t)(B * GU));
			}
			if (b != NULL) {
				tf_add_bias(dev, gh, b + GU, B, GU);
			}
			tf_gru_cell(dev, g, gh, hp, act, h, B, U);
		}
		if (d.len != NULL) {
			/* rows past their length keep their state */
			tf_mask_steps(dev, d.len, d.lstride, s, hp, U, h, U, B,
			              U, 0);
			if (gates == 4) {
				tf_mask_steps(dev, d.len, d.lstride, s,
				              cell + (size_t)s * bu, U,
				              cell + (size_t)(s + 1) * bu, U, B,
				              U, 0);
			}
		}
		if (d.seq) {
			tf_copy_cols(dev, h, U, ys + t * U, T * U, B, U);
			if (d.len != NULL) {
				tf_mask_steps(dev, d.len, d.lstride, s, h, U,
				              ys + t * U, T * U, B, U, 1);
			}
		}
	}
	if (!d.seq) {
		tf_copy(dev, hs + (size_t)run * bu, tf_tensor_f32(y), bu);
	} else if (flip) {
		tf_reverse_steps(dev, d.len, d.lstride, ys, tf_tensor_f32(y), B,
		                 T, U);
	}
	tf_node_set_saved(n, SAVED_H, hs);
	tf_node_set_saved(n, SAVED_ACT, acts);
	tf_node_set_saved(n, SAVED_CELL, cell);
	tf_node_set_saved(n, SAVED_X, xs);
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
 * once, in step order as the input was saved.  A row's padded steps
 * pass the gradient through untouched and add nothing to the kernels'. */
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
	const float *xs = tf_node_saved(n, SAVED_X);
	int64_t B = x->rows, T = d.t, F = d.f, U = d.u, GU = gates * d.u;
	size_t bu = (size_t)(B * U);
	int flip = d.rev && d.len != NULL;
	float *dh = tf_node_scratch(n, bu), *dc = tf_node_scratch(n, bu);
	/* every step's gradient of the recurrent product, in step order as
	 * the h before each is: one matrix product for the recurrent
	 * kernel's gradient after the loop, not one a step */
	float *dgs = tf_node_scratch(n, (size_t)(T * B * GU));
	/* and of the input's product, in step order as xs: lstm's are the
	 * same, gru's its own */
	float *dxs =
	    gates == 4 ? dgs : tf_node_scratch(n, (size_t)(T * B * GU));
	/* reset_after=0: dgs holds each step's gradient of the gates'
	 * product (B x 2U), dns the new gate's (B x U); drh a step's of
	 * r * h_prev */
	float *dns = NULL, *drh = NULL, *zrk = NULL, *nk = NULL;
	if (d.before) {
		dns = tf_node_scratch(n, (size_t)T * bu);
		drh = tf_node_scratch(n, bu);
		if (dns == NULL || drh == NULL ||
		    split_kernel(n, uk, U, &zrk, &nk) != TF_OK) {
			return tf_node_error(n, "out of memory");
		}
	}
	/* with lengths: dh and dc before a step, for the rows it skips;
	 * reversed rows: dy in the order read */
	float *dhk = d.len ? tf_node_scratch(n, bu) : dh;
	float *dck = d.len ? tf_node_scratch(n, bu) : dc;
	float *dys = flip && d.seq ? tf_node_scratch(n, (size_t)(B * T * U))
	                           : (float *)dy;
	if (dh == NULL || dc == NULL || dgs == NULL || dxs == NULL ||
	    dhk == NULL || dck == NULL || dys == NULL) {
		return tf_node_error(n, "out of memory");
	}
	if (flip && d.seq) {
		tf_reverse_steps(dev, d.len, d.lstride, dy, dys, B, T, U);
	}
	/* each step's product by the recurrent kernel transposed: packed
	 * once where the device packs, else on the CPU transposed once
	 * here, not by every step's product (the same products, in the
	 * same order) */
	const float *ukt = uk;
	int tb = 1;
	const float *upk = d.before ? NULL : pack_ahead(n, 1, U, GU, uk);
	/* reset_after=0: its two kernels transposed, packed once likewise */
	const float *npk = d.before ? pack_ahead(n, 1, U, U, nk) : NULL;
	const float *zrpk = d.before ? pack_ahead(n, 1, U, 2 * U, zrk) : NULL;
	if (!d.before && upk == NULL && tf_device_kind(dev) == TF_DEVICE_CPU) {
		float *t = tf_node_scratch(n, (size_t)(U * GU));
		if (t == NULL) {
			return tf_node_error(n, "out of memory");
		}
		for (int64_t i = 0; i < U; i++) {
			for (int64_t j = 0; j < GU; j++) {
				t[j * U + i] = uk[i * GU + j];
			}
		}
		ukt = t;
		tb = 0;
	}
	tf_zero(dev, dh, bu);
	tf_zero(dev, dc, bu);
	int64_t run = steps_run(&d, dev, B);
	if (run < T) {
		/* the steps not run add nothing */
		size_t rest = (size_t)((T - run) * B * GU);
		tf_zero(dev, dgs + (size_t)(run * B * GU), rest);
		if (dxs != dgs) {
			tf_zero(dev, dxs + (size_t)(run * B * GU), rest);
		}
		if (d.before) {
			tf_zero(dev, dns + (size_t)run * bu,
			        (size_t)(T - run) * bu);
		}
	}
	for (int64_t s = run - 1; s >= 0; s--) {
		int64_t t = at(&d, s);
		const float *hp = hs + (size_t)s * bu;
		const float *act = acts + (size_t)(s * B * GU);
		float *dgr = dgs + (size_t)(s * B * GU);
		if (!d.seq && s == run - 1) {
			tf_add(dev, dy, dh, bu);
		}
		if (d.len != NULL) {
			/* a padded step's output is a constant zero: its
			 * gradient goes nowhere, so dh is kept before it */
			tf_copy(dev, dh, dhk, bu);
			tf_copy(dev, dc, dck, bu);
		}
		if (d.seq) {
			tf_add_cols(dev, dys + t * U, T * U, dh, U, B, U);
		}
		if (gates == 4) {
			/* the input's and the recurrent product's gradients
			 * are one, dgr */
			tf_lstm_cell_grad(dev, act, cell + (size_t)s * bu,
			                  cell + (size_t)(s + 1) * bu, dh, dc,
			                  dgr, B, U);
			if (s > 0) { /* (the first step's goes nowhere) */
				tf_gemm_packed(dev, 0, tb, B, U, GU, 1.0f, dgr,
				               ukt, upk, 0.0f, dh);
			}
			if (d.len != NULL) {
				tf_mask_steps(dev, d.len, d.lstride, s, dgr, GU,
				              dgr, GU, B, GU, 1);
			}
		} else if (d.before) {
			float *dg = dxs + (size_t)(s * B * GU);
			float *dzr = dgs + (size_t)s * 2 * bu;
			float *dn = dns + (size_t)s * bu;
			/* the new gate's gradient, back through its product
			 * to r * h_prev, then the gates' */
			tf_gru_new_grad(dev, act, hp, dh, dg, dzr, dn, dc, B,
			                U);
			tf_gemm_packed(dev, 0, 1, B, U, U, 1.0f, dn, nk, npk,
			               0.0f, drh);
			tf_gru_gates_grad(dev, act, hp, drh, dg, dzr, dc, B, U);
			if (s > 0) { /* (the first step's goes nowhere) */
				tf_copy(dev, dc, dh, bu);
				tf_gemm_packed(dev, 0, 1, B, U, 2 * U, 1.0f,
				               dzr, zrk, zrpk, 1.0f, dh);
			}
			if (d.len != NULL) {
				tf_mask_steps(dev, d.len, d.lstride, s, dzr,
				              2 * U, dzr, 2 * U, B, 2 * U, 1);
				tf_mask_steps(dev, d.len, d.lstride, s, dn, U,
				              dn, U, B, U, 1);
				tf_mask_steps(dev, d.len, d.lstride, s, dg, GU,
				              dg, GU, B, GU, 1);
			}
		} else {
			const float *gh = cell + (size_t)(s * B * GU);
			float *dg = dxs + (size_t)(s * B * GU);
			tf_gru_cell_grad(dev, act, gh, hp, dh, dg, dgr, dc, B,
			                 U);
			/* dh_prev: the share past the gates, plus the
			 * recurrent product's */
			if (s > 0) { /* (the first step's goes nowhere) */
				tf_copy(dev, dc, dh, bu);
				tf_gemm_packed(dev, 0, tb, B, U, GU, 1.0f, dgr,
				               ukt, upk, 1.0f, dh);
			}
			if (d.len != NULL) {
				tf_mask_steps(dev, d.len, d.lstride, s, dgr, GU,
				              dgr, GU, B, GU, 1);
				tf_mask_steps(dev, d.len, d.lstride, s, dg, GU,
				              dg, GU, B, GU, 1);
			}
		}
		if (d.len != NULL) {
			tf_mask_steps(dev, d.len, d.lstride, s, dhk, U, dh, U,
			              B, U, 0);
			tf_mask_steps(dev, d.len, d.lstride, s, dck, U, dc, U,
			              B, U, 0);
		}
	}
	/* the recurrent kernel's gradient: each step's h before it by the
	 * step's gradient, (T*B x U)^T (T*B x GU); the kernel's, the
	 * input's by its gradient (lstm's the same gradients: packed once
	 * for both products where the device packs) */
	const float *gpk = gates == 4 ? pack_ahead(n, 0, GU, T * B, dgs) : NULL;
	if (d.before) {
		/* the gates' columns of the kernel by h_prev, the new
		 * gate's by r * h_prev, each into its columns */
		float *dk = tf_node_scratch(n, (size_t)(U * 2 * U));
		if (dk == NULL) {
			return tf_node_error(n, "out of memory");
		}
		tf_gemm(dev, 1, 0, U, 2 * U, T * B, 1.0f, hs, dgs, 0.0f, dk);
		tf_add_cols(dev, dk, 2 * U, du, GU, U, 2 * U);
		tf_gemm(dev, 1, 0, U, U, T * B, 1.0f, cell, dns, 0.0f, dk);
		tf_add_cols(dev, dk, U, du + 2 * U, GU, U, U);
	} else {
		tf_gemm_packed(dev, 1, 0, U, GU, T * B, 1.0f, hs, dgs, gpk,
		               1.0f, du);
	}
	if (gates == 3 && !d.before && db != NULL) {
		tf_bias_grad(dev, dgs, db + GU, T * B, GU);
	}
	tf_gemm_packed(dev, 1, 0, F, GU, T * B, 1.0f, xs, dxs, gpk, 1.0f, dw);
	if (db != NULL) {
		tf_bias_grad(dev, dxs, db, T * B, GU);
	}
	struct tf_tensor *dx = tf_node_input_grad(n, 0);
	if (dx != NULL) {
		/* in step order, then each step's block back to its columns
		 * (and reversed rows back) */
		float *dxt = tf_node_scratch(n, (size_t)(T * B * F));
		float *dxr =
		    flip ? tf_node_scratch(n, (size_t)(2 * B * T * F)) : NULL;
		if (dxt == NULL || (flip && dxr == NULL)) {
			return tf_node_error(n, "out of memory");
		}
		tf_gemm(dev, 0, 1, T * B, F, GU, 1.0f, dxs, w, 0.0f, dxt);
		float *to = flip ? dxr : tf_tensor_f32(dx);
		for (int64_t s = 0; s < T; s++) {
			const float *blk = dxt + (size_t)(s * B * F);
			if (flip) {
				tf_copy_cols(dev, blk, F, to + s * F, T * F, B,
				             F);
			} else {
				tf_add_cols(dev, blk, F, to + at(&d, s) * F,
				            T * F, B, F);
			}
		}
		if (flip) {
			float *back = dxr + (size_t)(B * T * F);
			tf_reverse_steps(dev, d.len, d.lstride, dxr, back, B, T,
			                 F);
			tf_add(dev, back, tf_tensor_f32(dx),
			       (size_t)(B * T * F));
		}
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
     "sequences=0|1, reverse=0|1, bias=0|1, reset_after=0|1)",
     build_gru, forward_gru, backward_gru},
    {0},
};

TF_PLUGIN_DEFINE("rnn", "1.0", ops, NULL)
