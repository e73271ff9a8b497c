/*
 * embedding.c - embedding lookups over sparse ids:
 *
 *	node e embedding ids[,weights] vocab=V dim=D
 *	                 [combiner=sum|mean|concat] [init=normal|zeros]
 *	                 [begin=B size=N] [sequence=1] [bias=1]
 *
 * ids is an int64 input (`input ids W int64`), W ids a row; this node
 * reads its columns B..B+N-1 (all of them by default).  An id outside
 * 0..V-1 (e.g. -1) is no id.  The table is V x D (N(0, 0.05^2), or zeros
 * for the linear part of a wide model: dim=1, combiner=sum is a linear
 * model over categorical ids).  sum and mean combine a row's vectors into
 * D values; concat gives each id slot its own D values (N x D: with
 * sequence=1 N steps of D, a recurrent layer's input).
 *
 * With weights (a float input as wide as the ids: a sparse feature's
 * values, read at the same columns) sum and mean weigh each id's vector,
 * as TensorFlow's embedding_lookup_sparse: an embedding bag, and with
 * dim=1 init=zeros bias=1 a sparse linear model.  The weights are data:
 * they get no gradient.  bias=1 adds a trained bias of D values.
 */
#include <string.h>

#include "tf/plugin.h"

static int
combiner(struct tf_node *n)
{
	const char *c = tf_node_attr_str(n, "combiner", "sum");
	return strcmp(c, "sum") == 0      ? TF_COMBINE_SUM
	       : strcmp(c, "mean") == 0   ? TF_COMBINE_MEAN
	       : strcmp(c, "concat") == 0 ? TF_COMBINE_CONCAT
	                                  : -1;
}

/* The columns of the ids this node reads. */
static void
span(struct tf_node *n, int64_t *begin, int64_t *size)
{
	int64_t w = tf_node_input_width(n, 0);
	*begin = tf_node_attr_int(n, "begin", 0);
	*size = tf_node_attr_int(n, "size", w - *begin);
}

static int
build(struct tf_node *n)
{
	int nin = tf_node_ninputs(n);
	if (nin != 1 && nin != 2) {
		return tf_node_error(n, "takes the ids, and optionally their "
		                        "weights");
	}
	if (tf_node_input_dtype(n, 0) != TF_INT64) {
		return tf_node_error(n, "its input must hold int64 ids "
		                        "('input NAME WIDTH int64')");
	}
	int64_t vocab = tf_node_attr_int(n, "vocab", 0);
	int64_t dim = tf_node_attr_int(n, "dim", 0);
	if (vocab < 1 || dim < 1) {
		return tf_node_error(n, "needs vocab=V and dim=D, both >= 1");
	}
	int comb = combiner(n);
	if (comb < 0) {
		return tf_node_error(n,
		                     "combiner=%s is not sum, mean or concat",
		                     tf_node_attr_str(n, "combiner", ""));
	}
	const char *init = tf_node_attr_str(n, "init", "normal");
	if (strcmp(init, "normal") != 0 && strcmp(init, "zeros") != 0) {
		return tf_node_error(n, "init=%s is not normal or zeros", init);
	}
	int64_t begin, size, w = tf_node_input_width(n, 0);
	span(n, &begin, &size);
	if (begin < 0 || size < 1 || begin + size > w) {
		return tf_node_error(n,
		                     "begin=%lld size=%lld do not fit in %lld "
		                     "ids",
		                     (long long)begin, (long long)size,
		                     (long long)w);
	}
	if (nin == 2 && (tf_node_input_dtype(n, 1) != TF_FLOAT32 ||
	                 tf_node_input_width(n, 1) < w)) {
		return tf_node_error(n,
		                     "its weights must be %lld floats, the "
		                     "first of an input as wide as its ids or "
		                     "wider",
		                     (long long)w);
	}
	if (nin == 2 && comb == TF_COMBINE_CONCAT) {
		return tf_node_error(n, "weights need combiner=sum or mean");
	}
	tf_node_add_param(n, "table", vocab, dim,
	                  strcmp(init, "zeros") == 0 ? TF_INIT_ZEROS
	                                             : TF_INIT_NORMAL);
	if (tf_node_attr_int(n, "bias", 0)) {
		tf_node_add_param(n, "bias", 1, dim, TF_INIT_ZEROS);
	}
	if (comb == TF_COMBINE_CONCAT && tf_node_attr_int(n, "sequence", 0)) {
		struct tf_shape s = {2, {size, dim}};
		return tf_node_set_shape(n, &s);
	}
	tf_node_set_width(n, comb == TF_COMBINE_CONCAT ? size * dim : dim);
	return TF_OK;
}

/* The vectors of D values a row of the output holds: concat's one an id
 * slot, the others' one. */
static int64_t
slots(struct tf_node *n, int64_t size)
{
	return combiner(n) == TF_COMBINE_CONCAT ? size : 1;
}

static int
forward(struct tf_node *n, int training)
{
	(void)training;
	const struct tf_tensor *ids = tf_node_input(n, 0);
	const struct tf_tensor *t = tf_node_param(n, 0);
	int64_t begin, size;
	span(n, &begin, &size);
	struct tf_device *d = tf_node_device(n);
	float *y = tf_tensor_f32(tf_node_output(n));
	if (tf_node_ninputs(n) == 2) {
		const struct tf_tensor *w = tf_node_input(n, 1);
		tf_gather_weighted(d, tf_tensor_f32(t), t->rows, t->cols,
		                   tf_tensor_i64(ids) + begin, ids->cols,
		                   tf_tensor_f32(w) + begin, w->cols, ids->rows,
		                   size, combiner(n), y);
	} else {
		tf_gather(d, tf_tensor_f32(t), t->rows, t->cols,
		          tf_tensor_i64(ids) + begin, ids->cols, ids->rows,
		          size, combiner(n), y);
	}
	if (tf_node_nparams(n) == 2) {
		/* to every id slot's D values: concat's N of them a row */
		tf_add_bias(d, y, tf_tensor_f32(tf_node_param(n, 1)),
		            ids->rows * slots(n, size), t->cols);
	}
	return TF_OK;
}

/* The ids get no gradient: they are data; so are the weights. */
static int
backward(struct tf_node *n)
{
	const struct tf_tensor *ids = tf_node_input(n, 0);
	const struct tf_tensor *t = tf_node_param(n, 0);
	int64_t begin, size;
	span(n, &begin, &size);
	struct tf_device *d = tf_node_device(n);
	const float *dy = tf_tensor_f32(tf_node_output_grad(n));
	if (tf_node_ninputs(n) == 2) {
		if (tf_node_input_grad(n, 1) != NULL) {
			return tf_node_error(n, "its weights must be data (an "
			                        "input), not a node trained "
			                        "through");
		}
		const struct tf_tensor *w = tf_node_input(n, 1);
		tf_scatter_weighted(
		    d, dy, t->rows, t->cols, tf_tensor_i64(ids) + begin,
		    ids->cols, tf_tensor_f32(w) + begin, w->cols, ids->rows,
		    size, combiner(n), tf_tensor_f32(tf_node_param_grad(n, 0)));
	} else {
		tf_scatter(d, dy, t->rows, t->cols, tf_tensor_i64(ids) + begin,
		           ids->cols, ids->rows, size, combiner(n),
		           tf_tensor_f32(tf_node_param_grad(n, 0)));
	}
	if (tf_node_nparams(n) == 2) {
		tf_bias_grad(d, dy, tf_tensor_f32(tf_node_param_grad(n, 1)),
		             ids->rows * slots(n, size), t->cols);
	}
	return TF_OK;
}

static const struct tf_op ops[] = {
    {"embedding",
     "embedding lookup over int64 ids (vocab=V, dim=D, "
     "combiner=sum|mean|concat, init=normal|zeros, begin=B, size=N, "
     "sequence=1, bias=1; ids,weights: a weighted bag)",
     build, forward, backward},
    {0},
};

TF_PLUGIN_DEFINE("embedding", "1.2", ops, NULL)
