/*
 * linear.c - a sparse linear model's step in one pass (train.c's
 * linear_step()): tf-train --model lr over sparse ids, binary, on the
 * CPU, in one process, with an optimizer that updates only the rows a
 * batch touched (sgd, adagrad, ftrl).
 *
 * The graph's way: the embedding node's weighted lookup and bias, the
 * loss, the lookup's gradient scattered into the table's gradient (a
 * vector as long as the table), the rows listed as ranges, and the
 * optimizer's packed update over them.  Here the same kernels compute
 * the logits, loss and predictions, but each of the batch's rows gets a
 * place in a short list as its id is first met (an open-addressed map
 * of a batch's ids, which stays in the cache), the gradient is summed
 * there, and the optimizer updates the list's values
 * (tfi_optim_step_values()): the table's gradient is never touched.
 * The sums are the same, in the same order: the same model bit for bit
 * (tests/unit/test_linear.c compares the two).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tf/device.h"
#include "tf/graph.h"
#include "tf/metrics.h"
#include "tf/optim.h"

/* A place in the map: the parameter's offset, the batch it was met in,
 * its place in the list. */
struct place {
	uint64_t key;
	uint32_t gen, j;
};

struct tfi_linear {
	uint64_t table, bias; /* offsets in the graph's parameters */
	int64_t vocab, width, begin, size;
	struct tfi_ranges dense; /* the bias, updated with the rows */
	struct place *map;       /* a power of two of places */
	size_t cap;
	int bits;
	uint32_t gen;
	uint64_t *at; /* the batch's rows, as first met */
	float *grad;  /* ... their gradient */
	size_t n;     /* ... how many (a pass's) */
	int32_t *of;  /* each id's place in them, or -1 */
	size_t ids_room;
	float *buf; /* logits, predictions, their gradient */
	size_t rows_room;
};

void
tfi_linear_free(struct tfi_linear *l)
{
	if (l == NULL) {
		return;
	}
	free(l->dense.v);
	free(l->map);
	free(l->at);
	free(l->grad);
	free(l->of);
	free(l->buf);
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
tfi_linear_plan(struct tf_graph *g)
{
	/* input x W, input ids W int64, input label 1; node logits
	 * embedding ids,x dim=1 bias=1 (a sum); prob sigmoid logits; loss
	 * sigmoid_xent logits,label: nothing else */
	int e = tf_graph_find(g, "logits"), p = tf_graph_find(g, "prob");
	int ls = tf_graph_find(g, "loss"), x = tf_graph_find(g, "x");
	int ids = tf_graph_find(g, "ids"), y = tf_graph_find(g, "label");
	if (tf_graph_nnodes(g) != 6 || e < 0 || p < 0 || ls < 0 || x < 0 ||
	    ids < 0 || y < 0 || tf_graph_node_op(g, x) != NULL ||
	    tf_graph_node_op(g, ids) != NULL ||
	    tf_graph_node_op(g, y) != NULL ||
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
	if (tfi_ranges_add(&l->dense, l->bias, 1) != 0) {
		tfi_linear_free(l);
		return NULL;
	}
	return l;
}

/* Room for a batch of rows rows (ids ids); a new, empty map. */
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
	size_t cap = 1024;
	int bits = 10;
	while (cap < 2 * ids) {
		cap *= 2;
		bits++;
	}
	if (cap > l->cap) {
		struct place *m = calloc(cap, sizeof *m);
		if (m == NULL) {
			return -1;
		}
		free(l->map);
		l->map = m;
		l->cap = cap;
		l->bits = bits;
		l->gen = 0;
	}
	if (++l->gen == 0) {
		memset(l->map, 0, l->cap * sizeof *l->map);
		l->gen = 1;
	}
	return 0;
}

/* The place of the row at offset key in the batch's list, made when it
 * is first met (its slots then asked for); *n the list's length. */
static int32_t
place_of(struct tfi_linear *l, uint64_t key, size_t *n, float *const *slots,
         unsigned ns)
{
	size_t mask = l->cap - 1;
	size_t h =
	    (size_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> (64 - l->bits));
	for (;; h = (h + 1) & mask) {
		struct place *p = &l->map[h];
		if (p->gen != l->gen) {
			p->gen = l->gen;
			p->key = key;
			p->j = (uint32_t)*n;
			l->at[*n] = key;
			l->grad[*n] = 0.0f;
			for (unsigned k = 0; k < ns; k++) {
				__builtin_prefetch(slots[k] + key);
			}
			return (int32_t)(*n)++;
		}
		if (p->key == key) {
			return (int32_t)p->j;
		}
	}
}

int
tfi_linear_takes(const struct tfi_linear *l, const struct tf_batch *b)
{
	if (b->width != l->width || b->id_width != l->width || b->x == NULL ||
	    b->ids == NULL || b->y == NULL || b->rows == 0) {
		return 0;
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
	struct tf_device *dev = tf_device_cpu();
	float *params = tf_graph_params(g), *grads = tf_graph_grads(g);
	unsigned ns = tf_optim_nslots(o);
	float *slots[8];
	ns = ns < 8 ? ns : 8;
	for (unsigned k = 0; k < ns; k++) {
		slots[k] = tf_optim_slot(o, k);
	}
	/* The rows first, so their slots come while the rest runs. */
	size_t n = 0;
	const int64_t *ids = b->ids + l->begin;
	const float *x = b->x + l->begin;
	for (size_t r = 0; r < rows; r++) {
		const int64_t *row = ids + r * (size_t)l->width;
		int32_t *of = l->of + r * per;
		for (size_t k = 0; k < per; k++) {
			int64_t id = row[k];
			of[k] = id >= 0 && id < l->vocab
			            ? place_of(l, l->table + (uint64_t)id, &n,
			                       slots, ns)
			            : -1;
		}
	}
	float *logits = l->buf, *prob = logits + rows, *dl = prob + rows;
	const float *table = params + l->table;
	tf_gather_weighted(dev, table, l->vocab, 1, ids, l->width, x, l->width,
	                   (int64_t)rows, l->size, TF_COMBINE_SUM, logits);
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
		const float *xr = x + r * (size_t)l->width;
		for (size_t k = 0; k < per; k++) {
			if (of[k] >= 0) {
				l->grad[of[k]] += xr[k] * inv * dl[r];
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
	size_t n = l->n;
	l->n = 0;
	return tfi_optim_step_values(o, tf_graph_params(g), tf_graph_grads(g),
	                             lr, l->at, l->grad, n, &l->dense);
}
