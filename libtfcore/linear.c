/*
 * linear.c - a sparse linear model's step without the graph's passes
 * (train.c uses it): tf-train --model lr over sparse ids, binary, on the
 * CPU, in one process, with an optimizer that updates only the rows a
 * batch touched (sgd, adagrad, ftrl, lazy_adam).
 *
 * The graph's way: the embedding node's weighted lookup and bias, the
 * loss, the lookup's gradient scattered into the table's gradient (a
 * vector as long as the table), the rows listed as ranges, and the
 * optimizer's packed update of the weights and of each slot, arrays of
 * their own: an id's weight, gradient and slots are four cache misses.
 * Here an id's weight and slots lie together in one row of 16 bytes:
 * one miss.  Each row the batch touches takes a place in a short list
 * as it is first met, and the row keeps its place in its fourth word:
 * a row's mark is its place when the list holds the row there (a
 * sparse set: nothing to clear between batches, no map to search).
 * One pass over the ids gives each its place and sums the logits, the
 * rows of the ids two examples on asked for meanwhile; the gradient is
 * summed in the list, which is packed for the optimizer's update and
 * put back.  The same kernels compute the logits, loss and predictions
 * and the same sums run in the same order: the same model bit for bit
 * (tests/unit/test_train.c compares the two).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tf/device.h"
#include "tf/graph.h"
#include "tf/metrics.h"
#include "tf/optim.h"

/* A row of the table: its weight, up to 2 optimizer slots and its place
 * in the batch's list (when at[mark] is this row), 16 bytes (a quarter
 * of a cache line). */
struct lrow {
	float w, s[2];
	uint32_t mark;
};

struct tfi_linear {
	uint64_t table, bias; /* offsets in the graph's parameters */
	int64_t vocab, width, begin, size;
	unsigned ns;       /* the optimizer's slots */
	struct lrow *rows; /* the table's, between steps when live */
	int live;
	uint64_t *at; /* the rows the batch touched, as first met */
	float *grad;  /* ... their gradient */
	size_t n;     /* ... how many (a pass's) */
	int32_t *of;  /* each id's place in them, or -1 */
	size_t ids_room;
	float *buf; /* logits, predictions, their gradient */
	size_t rows_room;
	float *pack; /* the update's packed values, gradient, slots */
	size_t pack_room;
};

void
tfi_linear_free(struct tfi_linear *l)
{
	if (l == NULL) {
		return;
	}
	tf_device_free(tf_device_cpu(), (float *)l->rows);
	free(l->at);
	free(l->grad);
	free(l->of);
	free(l->buf);
	free(l->pack);
	free(l);
}

/* Node i's input k is node name. */
static int
input_is(struct tf_graph *g, int i, int k, const char *name)
{
	const char *in = tf_graph_node_input(g, i, k);
	return in != NULL && strcmp(in, name) == 0;
}

static int
op_is(struct tf_graph *g, int i, const char *op)
{
	const char *o = tf_graph_node_op(g, i);
	return o != NULL && strcmp(o, op) == 0;
}

struct tfi_linear *
tfi_linear_plan(struct tf_graph *g, const struct tf_optim *o)
{
	/* input x W, input ids W int64, input label 1; node logits
	 * embedding ids,x dim=1 bias=1 (a sum); prob sigmoid logits; loss
	 * sigmoid_xent logits,label: nothing else */
	int e = tf_graph_find(g, "logits"), p = tf_graph_find(g, "prob");
	int ls = tf_graph_find(g, "loss");
	/* (an input's dtype is -1 for a node that is not an input) */
	if (tf_graph_nnodes(g) != 6 || e < 0 || p < 0 || ls < 0 ||
	    tf_optim_nslots(o) > 2 ||
	    tf_graph_input_dtype(g, "x") != TF_FLOAT32 ||
	    tf_graph_input_dtype(g, "ids") != TF_INT64 ||
	    tf_graph_input_dtype(g, "label") != TF_FLOAT32 ||
	    !op_is(g, e, "embedding") || tf_graph_node_ninputs(g, e) != 2 ||
	    !input_is(g, e, 0, "ids") || !input_is(g, e, 1, "x") ||
	    tf_graph_node_nparams(g, e) != 2 || !op_is(g, p, "sigmoid") ||
	    tf_graph_node_ninputs(g, p) != 1 || !input_is(g, p, 0, "logits") ||
	    !op_is(g, ls, "sigmoid_xent") ||
	    tf_graph_node_ninputs(g, ls) != 2 ||
	    !input_is(g, ls, 0, "logits") || !input_is(g, ls, 1, "label")) {
		return NULL;
	}
	const char *c = tf_graph_node_attr(g, e, "combiner");
	if (c != NULL && strcmp(c, "sum") != 0) {
		return NULL;
	}
	const char *name;
	int64_t vocab, dim, br, bc;
	int state;
	float *params = tf_graph_params(g);
	float *t = tf_graph_node_param(g, e, 0, &name, &vocab, &dim, &state);
	float *b = tf_graph_node_param(g, e, 1, &name, &br, &bc, &state);
	int64_t w = tf_graph_ids_width(g);
	const char *bs = tf_graph_node_attr(g, e, "begin");
	const char *ss = tf_graph_node_attr(g, e, "size");
	int64_t begin = bs != NULL ? strtoll(bs, NULL, 10) : 0;
	int64_t size = ss != NULL ? strtoll(ss, NULL, 10) : w - begin;
	if (t == NULL || b == NULL || dim != 1 || br != 1 || bc != 1 ||
	    begin < 0 || size < 1 || begin + size > w) {
		return NULL;
	}
	struct tfi_linear *l = calloc(1, sizeof *l);
	if (l == NULL) {
		return NULL;
	}
	l->table = (uint64_t)(t - params);
	l->bias = (uint64_t)(b - params);
	l->vocab = vocab;
	l->width = w;
	l->begin = begin;
	l->size = size;
	l->ns = tf_optim_nslots(o);
	return l;
}

/* Room for a batch of rows rows (ids ids). */
static int
room(struct tfi_linear *l, size_t rows, size_t ids)
{
	if (rows > l->rows_room) {
		float *f = realloc(l->buf, 3 * rows * sizeof *f);
		if (f == NULL) {
			return -1;
		}
		l->buf = f;
		l->rows_room = rows;
	}
	if (ids > l->ids_room) {
		uint64_t *at = realloc(l->at, ids * sizeof *at);
		if (at == NULL) {
			return -1;
		}
		l->at = at;
		float *grad = realloc(l->grad, ids * sizeof *grad);
		if (grad == NULL) {
			return -1;
		}
		l->grad = grad;
		int32_t *of = realloc(l->of, ids * sizeof *of);
		if (of == NULL) {
			return -1;
		}
		l->of = of;
		l->ids_room = ids;
	}
	size_t pack = (ids + 1) * (l->ns + 2);
	if (pack > l->pack_room) {
		float *p = realloc(l->pack, pack * sizeof *p);
		if (p == NULL) {
			return -1;
		}
		l->pack = p;
		l->pack_room = pack;
	}
	return 0;
}

/* The table's weights and slots into rows: -1 out of memory. */
static int
load(struct tfi_linear *l, struct tf_graph *g, struct tf_optim *o)
{
	if (l->rows == NULL) {
		l->rows = (struct lrow *)tf_device_alloc(tf_device_cpu(),
		                                         (size_t)l->vocab * 4);
		if (l->rows == NULL) {
			return -1;
		}
	}
	const float *t = tf_graph_params(g) + l->table;
	const float *sl[2] = {NULL, NULL};
	for (unsigned k = 0; k < l->ns; k++) {
		sl[k] = tf_optim_slot(o, k) + l->table;
	}
	for (int64_t i = 0; i < l->vocab; i++) {
		struct lrow *q = &l->rows[i];
		q->w = t[i];
		q->s[0] = l->ns > 0 ? sl[0][i] : 0.0f;
		q->s[1] = l->ns > 1 ? sl[1][i] : 0.0f;
		q->mark = 0;
	}
	l->live = 1;
	return 0;
}

void
tfi_linear_flush(struct tfi_linear *l, struct tf_graph *g, struct tf_optim *o)
{
	if (l == NULL || !l->live) {
		return;
	}
	float *t = tf_graph_params(g) + l->table;
	float *sl[2] = {NULL, NULL};
	for (unsigned k = 0; k < l->ns; k++) {
		sl[k] = tf_optim_slot(o, k) + l->table;
	}
	for (int64_t i = 0; i < l->vocab; i++) {
		const struct lrow *q = &l->rows[i];
		t[i] = q->w;
		for (unsigned k = 0; k < l->ns; k++) {
			sl[k][i] = q->s[k];
		}
	}
}

void
tfi_linear_drop(struct tfi_linear *l)
{
	if (l != NULL) {
		l->live = 0;
	}
}

int
tfi_linear_takes(const struct tfi_linear *l, const struct tf_batch *b)
{
	if (b->width != l->width || b->id_width != l->width || b->x == NULL ||
	    b->ids == NULL || b->y == NULL || b->rows == 0 ||
	    b->rows > (size_t)(INT32_MAX / l->size)) {
		return 0; /* (a batch's ids have places of 31 bits) */
	}
	/* labels 0 and 1 only: the graph's loss node says what is wrong
	 * with another */
	for (size_t r = 0; r < b->rows; r++) {
		float v = b->y[r];
		if (!(v == 0.0f || v == 1.0f)) {
			return 0;
		}
	}
	return 1;
}

int
tfi_linear_pass(struct tfi_linear *l, struct tf_graph *g, struct tf_optim *o,
                const struct tf_batch *b, struct tf_metrics *m, double *loss)
{
	size_t rows = b->rows;
	size_t per = (size_t)l->size;
	if (room(l, rows, rows * per) != 0) {
		return TF_ENOMEM;
	}
	if (!l->live && load(l, g, o) != 0) {
		return TF_ENOMEM;
	}
	struct tf_device *dev = tf_device_cpu();
	float *params = tf_graph_params(g), *grads = tf_graph_grads(g);
	struct lrow *lr = l->rows;
	uint64_t *at = l->at;
	float *grad = l->grad;
	/* Each id's place, its row's place in the list or a new one, and
	 * gather_w_cpu's sums in its order (the bias added after). */
	size_t n = 0;
	const int64_t *ids = b->ids + l->begin;
	const float *x = b->x + l->begin;
	size_t stride = (size_t)l->width;
	float *logits = l->buf, *prob = logits + rows, *dl = prob + rows;
	const uint64_t vocab = (uint64_t)l->vocab;
	for (size_t r = 0; r < rows && r < 2; r++) {
		for (size_t k = 0; k < per; k++) {
			uint64_t id = (uint64_t)ids[r * stride + k];
			if (id < vocab) {
				__builtin_prefetch(&lr[id], 1);
			}
		}
	}
	for (size_t r = 0; r < rows; r++) {
		const int64_t *row = ids + r * stride;
		const float *wr = x + r * stride;
		int32_t *of = l->of + r * per;
		if (r + 2 < rows) {
			const int64_t *ahead = row + 2 * stride;
			for (size_t k = 0; k < per; k++) {
				uint64_t id = (uint64_t)ahead[k];
				if (id < vocab) {
					__builtin_prefetch(&lr[id], 1);
				}
			}
		}
		float acc = 0.0f;
		for (size_t k = 0; k < per; k++) {
			/* (a negative id, no id, is beyond the table too) */
			uint64_t id = (uint64_t)row[k];
			float t = 0.0f;
			of[k] = -1;
			if (id < vocab) {
				struct lrow *q = &lr[id];
				uint32_t j = q->mark;
				if (j >= n || at[j] != id) {
					j = (uint32_t)n++;
					at[j] = id;
					grad[j] = 0.0f;
					q->mark = j;
				}
				of[k] = (int32_t)j;
				t = wr[k] * q->w;
			}
			acc += t;
		}
		logits[r] = acc;
	}
	tf_add_bias(dev, logits, params + l->bias, (int64_t)rows, 1);
	tf_sigmoid(dev, logits, prob, rows);
	memset(dl, 0, rows * sizeof *dl);
	*loss = tf_sigmoid_xent(dev, logits, b->y, dl, 1.0f, (int64_t)rows);
	if (tf_metrics_add(m, prob, b->y, rows, *loss) != TF_OK) {
		return TF_ENOMEM;
	}
	tf_bias_grad(dev, dl, grads + l->bias, (int64_t)rows, 1);
	/* the weighted lookup's gradient (scatter_w_cpu's sum, in its
	 * order) into the rows' places */
	const float inv = 1.0f;
	for (size_t r = 0; r < rows; r++) {
		const int32_t *of = l->of + r * per;
		const float *xr = x + r * stride;
		for (size_t k = 0; k < per; k++) {
			if (of[k] >= 0) {
				grad[of[k]] += xr[k] * inv * dl[r];
			}
		}
	}
	l->n = n;
	return TF_OK;
}

int
tfi_linear_apply(struct tfi_linear *l, struct tf_graph *g, struct tf_optim *o,
                 float lr)
{
	struct tf_update u;
	if (tfi_optim_next_update(o, lr, &u) != TF_OK) {
		return TF_EINVAL;
	}
	/* the rows' places, then the bias, packed */
	size_t n = l->n, m = n + 1;
	float *pw = l->pack, *pg = pw + m, *ps[2] = {pg + m, pg + 2 * m};
	float *params = tf_graph_params(g), *grads = tf_graph_grads(g);
	for (size_t j = 0; j < n; j++) {
		const struct lrow *q = &l->rows[l->at[j]];
		pw[j] = q->w;
		pg[j] = l->grad[j];
		for (unsigned k = 0; k < l->ns; k++) {
			ps[k][j] = q->s[k];
		}
	}
	pw[n] = params[l->bias];
	pg[n] = grads[l->bias];
	grads[l->bias] = 0.0f;
	for (unsigned k = 0; k < l->ns; k++) {
		ps[k][n] = tf_optim_slot(o, k)[l->bias];
	}
	tf_update(tf_device_cpu(), &u, pw, pg, ps, m);
	for (size_t j = 0; j < n; j++) {
		struct lrow *q = &l->rows[l->at[j]];
		q->w = pw[j];
		for (unsigned k = 0; k < l->ns; k++) {
			q->s[k] = ps[k][j];
		}
	}
	params[l->bias] = pw[n];
	for (unsigned k = 0; k < l->ns; k++) {
		tf_optim_slot(o, k)[l->bias] = ps[k][n];
	}
	l->n = 0;
	return TF_OK;
}
