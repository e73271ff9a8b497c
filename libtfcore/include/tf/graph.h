/*
 * graph.h - models as small graphs of ops.
 *
 * A model spec is text, one declaration a line ('#' starts a comment):
 *
 *	input x 30                 a fed input: name, width
 *	input ids 3 int64          fed ids (whole numbers, for embedding)
 *	node h dense x units=128   name, op, inputs (comma-separated), attrs
 *	node a relu h
 *	node logits dense a units=1
 *	node loss sigmoid_xent logits,y
 *	loss loss                  which node is the loss (default "loss")
 *
 * Nodes may only use inputs declared above them, so the file order is a
 * topological order: forward runs top to bottom, backward bottom to top,
 * over the nodes the loss depends on.  Parameters of all nodes live in one
 * block (and their gradients in another), in declaration order, so an
 * optimizer updates the whole model in one call and a checkpoint saves it
 * in one write.  Step tensors come from an arena reset at each forward.
 */
#ifndef TF_GRAPH_H
#define TF_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "tf/device.h"
#include "tf/error.h"
#include "tf/plugin.h"
#include "tf/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tf_graph;

TF_API struct tf_graph *tf_graph_new(void);
TF_API void tf_graph_free(struct tf_graph *g);

/* Parse a spec (may be called once).  TF_EINVAL naming the line. */
TF_API int tf_graph_parse(struct tf_graph *g, const char *spec);
/* The spec as parsed, normalised (for checkpoints). */
TF_API const char *tf_graph_spec(const struct tf_graph *g);

/*
 * Resolve ops in the registry, build every node, allocate and initialise
 * the parameters from seed.  TF_EINVAL for an unknown op, a bad
 * attribute or mismatched widths, naming the node.
 */
TF_API int tf_graph_build(struct tf_graph *g, const struct tf_registry *r,
                          struct tf_device *dev, uint64_t seed);

/* Ask for the gradient of an input too (gradient checks). */
TF_API int tf_graph_want_input_grad(struct tf_graph *g, const char *input);

/* Feed rows x width floats to an input for the next forward.  The CPU
 * device reads them in place: keep them unchanged until the step's
 * backward is done. */
TF_API int tf_graph_feed(struct tf_graph *g, const char *input,
                         const float *data, int64_t rows);
/* Feed rows x width ids to an int64 input (same rules). */
TF_API int tf_graph_feed_ids(struct tf_graph *g, const char *input,
                             const int64_t *ids, int64_t rows);
/*
 * Feed a batch under the built-in models' input names: "x" the floats,
 * "ids" the ids when the graph has that input, and "label" the labels
 * when b->y is not NULL and the graph has that input.
 */
struct tf_batch;
TF_API int tf_graph_feed_batch(struct tf_graph *g, const struct tf_batch *b);
/*
 * On a GPU, start copying the batch after the current one while the
 * current one computes (on a copy stream); when that batch is then fed,
 * its forward pass uses the copy instead of uploading it.  b's memory
 * must not change until then (the reader's batches do not).  A no-op on
 * the CPU, which reads batches in place.
 */
TF_API int tf_graph_stage_batch(struct tf_graph *g, const struct tf_batch *b);
/* Width of the int64 input "ids" tf_graph_feed_batch() feeds; 0 when
 * the graph has none. */
TF_API int64_t tf_graph_ids_width(const struct tf_graph *g);
/* An input's dtype (TF_FLOAT32, TF_INT64); -1 when there is none. */
TF_API int tf_graph_input_dtype(const struct tf_graph *g, const char *input);
/* Run the nodes; with training, ops such as dropout behave so. */
TF_API int tf_graph_forward(struct tf_graph *g, int training);
/* Gradients of the loss for every parameter (and wanted input). */
TF_API int tf_graph_backward(struct tf_graph *g);
/* The loss of the last forward. */
TF_API double tf_graph_loss(const struct tf_graph *g);

/* A node's output (or gradient, after backward); NULL if unknown. */
TF_API const struct tf_tensor *tf_graph_value(struct tf_graph *g,
                                              const char *node);
TF_API const struct tf_tensor *tf_graph_grad(struct tf_graph *g,
                                             const char *node);
/* Width of a node or input; -1 if unknown. */
TF_API int64_t tf_graph_width(const struct tf_graph *g, const char *node);
/* The shape of a node's rows (rank 1, its width, unless the spec or its
 * op gave it more: input x 28x28x1); the rank, or 0 for no such node. */
TF_API int tf_graph_shape(const struct tf_graph *g, const char *node,
                          struct tf_shape *s);
/* A node's float values after a forward pass, where the host can read
 * them: the tensor itself on the CPU, a copy (valid until the next call)
 * off a GPU.  NULL for no such value (or out of memory). */
TF_API const float *tf_graph_fetch(struct tf_graph *g, const char *node);

/* The generator ops draw from (dropout masks); seeded by build. */
struct tf_rng;
TF_API struct tf_rng *tf_graph_rng(struct tf_graph *g);

/* All trained parameters and their gradients, one block each. */
TF_API size_t tf_graph_nparams(const struct tf_graph *g);
TF_API float *tf_graph_params(struct tf_graph *g);
TF_API float *tf_graph_grads(struct tf_graph *g);
/* Saved but untrained state (batch-norm moving averages). */
TF_API size_t tf_graph_nstate(const struct tf_graph *g);
TF_API float *tf_graph_state(struct tf_graph *g);

/*
 * Looking at a built graph (exports): nodes in spec order, by index;
 * their op (NULL for an input), inputs, attributes as written, and
 * parameters (trained, or state when *state is set) with their names
 * ("kernel", "bias", "gamma", "moving_mean", ...) and shapes.
 */
TF_API int tf_graph_nnodes(const struct tf_graph *g);
TF_API int tf_graph_find(const struct tf_graph *g, const char *name);
TF_API const char *tf_graph_node_name(const struct tf_graph *g, int i);
TF_API const char *tf_graph_node_op(const struct tf_graph *g, int i);
TF_API int tf_graph_node_ninputs(const struct tf_graph *g, int i);
TF_API const char *tf_graph_node_input(const struct tf_graph *g, int i, int k);
TF_API const char *tf_graph_node_attr(const struct tf_graph *g, int i,
                                      const char *key);
/* Attribute a of node i: its key, and its value in *value. */
TF_API int tf_graph_node_nattrs(const struct tf_graph *g, int i);
TF_API const char *tf_graph_node_attr_at(const struct tf_graph *g, int i, int a,
                                         const char **value);
TF_API int tf_graph_node_nparams(const struct tf_graph *g, int i);
TF_API float *tf_graph_node_param(struct tf_graph *g, int i, int k,
                                  const char **name, int64_t *rows,
                                  int64_t *cols, int *state);
/* A node's parameter by name, or NULL. */
TF_API float *tf_graph_param_by_name(struct tf_graph *g, const char *node,
                                     const char *param, int64_t *rows,
                                     int64_t *cols);

#ifdef __cplusplus
}
#endif
#endif
