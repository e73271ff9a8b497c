/*
 * embedding.c - embedding lookups over sparse ids:
 *
 *	node e embedding ids vocab=V dim=D [combiner=sum|mean|concat]
 *	                 [init=normal|zeros]
 *
 * ids holds whole numbers (floats), width of them a row; one outside
 * 0..V-1 (e.g. -1) is no id.  The table is V x D (N(0, 0.05^2), or zeros
 * for the linear part of a wide model: dim=1, combiner=sum is a linear
 * model over categorical ids).  sum and mean combine a row's vectors into
 * D values; concat gives each id slot its own D values (width x D).
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

static int
build(struct tf_node *n)
{
	if (tf_node_ninputs(n) != 1) {
		return tf_node_error(n, "takes one input (the ids)");
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
	tf_node_add_param(n, "table", vocab, dim,
	                  strcmp(init, "zeros") == 0 ? TF_INIT_ZEROS
	                                             : TF_INIT_NORMAL);
	int64_t width = tf_node_input_width(n, 0);
	tf_node_set_width(n, comb == TF_COMBINE_CONCAT ? width * dim : dim);
	return TF_OK;
}

static int
forward(struct tf_node *n, int training)
{
	(void)training;
	const struct tf_tensor *ids = tf_node_input(n, 0);
	const struct tf_tensor *t = tf_node_param(n, 0);
	tf_gather(tf_node_device(n), tf_tensor_f32(t), t->rows, t->cols,
	          tf_tensor_f32(ids), ids->rows, ids->cols, combiner(n),
	          tf_tensor_f32(tf_node_output(n)));
	return TF_OK;
}

/* The ids get no gradient: they are data. */
static int
backward(struct tf_node *n)
{
	const struct tf_tensor *ids = tf_node_input(n, 0);
	const struct tf_tensor *t = tf_node_param(n, 0);
	tf_scatter(tf_node_device(n), tf_tensor_f32(tf_node_output_grad(n)),
	           t->rows, t->cols, tf_tensor_f32(ids), ids->rows, ids->cols,
	           combiner(n), tf_tensor_f32(tf_node_param_grad(n, 0)));
	return TF_OK;
}

static const struct tf_op ops[] = {
    {"embedding",
     "embedding lookup over sparse ids (vocab=V, dim=D, "
     "combiner=sum|mean|concat, init=normal|zeros)",
     build, forward, backward},
    {0},
};

TF_PLUGIN_DEFINE("embedding", "1.0", ops, NULL)
