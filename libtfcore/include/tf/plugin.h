/*
 * plugin.h - the plugin ABI: ops and optimizers in shared objects.
 *
 * A plugin is a shared object that exports exactly one symbol,
 * tf_plugin_entry(), returning a struct tf_plugin that describes it.  The
 * loader checks `abi` against TF_PLUGIN_ABI and `size` against the
 * smallest descriptor it knows, and refuses a mismatch naming the file and
 * both versions.  Fields are only ever appended; TF_PLUGIN_ABI changes
 * when a meaning changes.  The built-in ops and optimizers are plugins of
 * exactly this kind (plugins/ops/, plugins/optimizers/).
 *
 * A minimal optimizer plugin:
 *
 *	static void apply(void *st, float *w, const float *g,
 *	                  float *const *slots, size_t n, uint64_t step,
 *	                  float lr) { for (size_t i = 0; i < n; i++)
 *	                  w[i] -= lr * g[i]; }
 *	static const struct tf_optimizer opts[] = {
 *		{.name = "plain", .apply = apply}, {0}};
 *	static const struct tf_plugin plugin = {
 *		TF_PLUGIN_ABI, sizeof(struct tf_plugin), "plain", "1.0",
 *		NULL, opts, NULL};
 *	TF_PLUGIN_EXPORT const struct tf_plugin *tf_plugin_entry(void)
 *	{ return &plugin; }
 *
 * See tf-plugin(7).
 */
#ifndef TF_PLUGIN_H
#define TF_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "tf/device.h"
#include "tf/error.h"
#include "tf/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TF_PLUGIN_ABI    1
#define TF_PLUGIN_EXPORT __attribute__((visibility("default")))

/* ---- ops ----------------------------------------------------------------- */

/*
 * A node of a model graph, as an op sees it: its inputs (outputs of earlier
 * nodes), its output, their gradients, its parameters and its attributes
 * (key=value pairs from the model spec).  Owned by the graph.
 */
struct tf_node;

struct tf_op {
	const char *name;        /* as written in a model spec: "dense" */
	const char *description; /* one line for --list-plugins */
	/*
	 * Called once when the graph is built: check the inputs' widths,
	 * read attributes, declare parameters and state, and set the
	 * output width.  Report problems with tf_node_error().
	 */
	int (*build)(struct tf_node *n);
	/* Compute the output from the inputs; training is 1 in training. */
	int (*forward)(struct tf_node *n, int training);
	/* Add the gradients of inputs and parameters from the output's. */
	int (*backward)(struct tf_node *n);
};

/* Inputs, output and gradients (gradient tensors may be NULL when no
 * gradient is needed: an input fed from data). */
TF_API int tf_node_ninputs(const struct tf_node *n);
TF_API struct tf_tensor *tf_node_input(struct tf_node *n, int i);
TF_API struct tf_tensor *tf_node_input_grad(struct tf_node *n, int i);
TF_API struct tf_tensor *tf_node_output(struct tf_node *n);
TF_API struct tf_tensor *tf_node_output_grad(struct tf_node *n);
/* Input i as the host has it: the data fed, when input i is one of the
 * graph's inputs (labels), so an op may check it on the host without
 * waiting for the device; NULL for any other input. */
TF_API const float *tf_node_input_host(struct tf_node *n, int i);
/* The width (columns) of input i, known when the graph is built. */
TF_API int64_t tf_node_input_width(const struct tf_node *n, int i);
/*
 * The dtype of input i (TF_FLOAT32, or TF_INT64 for fed ids).  An op
 * that takes ids asks this at build time; the graph refuses to build
 * when an int64 input reaches an op that did not ask.  Ids get no
 * gradient (tf_node_input_grad() is NULL for them).
 */
TF_API int tf_node_input_dtype(struct tf_node *n, int i);
/* Set the output width (build time): rows of that shape (cols).  Loss
 * ops output one column. */
TF_API void tf_node_set_width(struct tf_node *n, int64_t cols);
/*
 * Shapes (added after ABI 1's first release; a plugin that never calls
 * them sees flat widths, as before).  tf_node_input_shape() fills s with
 * the shape of input i's rows: what the spec gave an input ("input x
 * 28x28x1") or the op before set, else rank 1, the width; it returns the
 * rank.  tf_node_set_shape() sets the output's (build time): its width
 * is the product of the dimensions; TF_EINVAL (and the node's error) for
 * a rank outside 1 to TF_SHAPE_MAX or a dimension under 1.
 */
TF_API int tf_node_input_shape(const struct tf_node *n, int i,
                               struct tf_shape *s);
TF_API int tf_node_set_shape(struct tf_node *n, const struct tf_shape *s);
TF_API const char *tf_node_name(const struct tf_node *n);
TF_API struct tf_device *tf_node_device(struct tf_node *n);

/* Attributes; the default when absent.  A malformed value is an error
 * reported by tf_node_attr_check(). */
TF_API int64_t tf_node_attr_int(struct tf_node *n, const char *key,
                                int64_t dflt);
TF_API double tf_node_attr_float(struct tf_node *n, const char *key,
                                 double dflt);
TF_API const char *tf_node_attr_str(struct tf_node *n, const char *key,
                                    const char *dflt);

/* Parameter initialisers. */
enum tf_init {
	TF_INIT_ZEROS = 0,
	TF_INIT_ONES = 1,
	TF_INIT_GLOROT_UNIFORM = 2, /* Keras's Dense default */
	TF_INIT_NORMAL = 3          /* N(0, 0.05^2) */
};

/*
 * Declare a trained parameter of rows x cols (build time); returns its
 * index for tf_node_param().  State is saved and restored with the
 * parameters but not trained (moving averages).
 */
TF_API int tf_node_add_param(struct tf_node *n, const char *name, int64_t rows,
                             int64_t cols, int init);
TF_API int tf_node_add_state(struct tf_node *n, const char *name, int64_t rows,
                             int64_t cols, int init);
TF_API int tf_node_nparams(const struct tf_node *n);
TF_API struct tf_tensor *tf_node_param(struct tf_node *n, int i);
TF_API struct tf_tensor *tf_node_param_grad(struct tf_node *n, int i);
TF_API struct tf_tensor *tf_node_state(struct tf_node *n, int i);

/* Scratch memory for this step (freed when the step ends). */
TF_API float *tf_node_scratch(struct tf_node *n, size_t floats);
/* Keep up to 4 pointers from forward to backward (scratch memory). */
TF_API void tf_node_set_saved(struct tf_node *n, int slot, float *p);
TF_API float *tf_node_saved(struct tf_node *n, int slot);
/* 64 random bits from the graph's seeded generator (its state is saved
 * in checkpoints, so a resumed run draws the same numbers). */
TF_API uint64_t tf_node_random(struct tf_node *n);

/* Scalar result of a loss op, for the graph's loss (forward). */
TF_API void tf_node_set_loss(struct tf_node *n, double loss);

/* Record an error ("node NAME: ..."); returns TF_EINVAL. */
TF_API int tf_node_error(struct tf_node *n, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- optimizers -------------------------------------------------------- */

/* Hyperparameters by name: learning_rate, beta1, epsilon, l1, ... */
struct tf_hparams;
/* The value of key, or dflt when it was not given. */
TF_API double tf_hparam(const struct tf_hparams *h, const char *key,
                        double dflt);

struct tf_optimizer {
	const char *name;
	const char *description;
	/* Per-parameter slots (Adam: m and v). */
	unsigned nslots;
	/* Read hyperparameters into private state; *state may stay NULL.
	 * Write a message into err for a bad value and return non-zero (a
	 * state already set is then passed to destroy). */
	int (*create)(const struct tf_hparams *h, void **state, char *err,
	              size_t errlen);
	void (*destroy)(void *state);
	/* Initial slot values (all zero when NULL). */
	void (*init_slots)(void *state, float *const *slots, size_t n);
	/* One update of n parameters w from gradients g; step counts from
	 * 1; lr is the (possibly decayed) learning rate. */
	void (*apply)(void *state, float *w, const float *g,
	              float *const *slots, size_t n, uint64_t step, float lr);
};

/* ---- the descriptor -------------------------------------------------- */

/* An optimizer's update as a device runs it (optimizer_updates below). */
typedef int (*tf_update_fn)(const void *state, uint64_t step, float lr,
                            struct tf_update *u);
/* Define an optimizer's apply as its update run on the CPU, so the one
 * formula is the kernel's:  TF_APPLY_BY_UPDATE(apply, describe) */
#define TF_APPLY_BY_UPDATE(APPLY, DESCRIBE)                                    \
	static void APPLY(void *state, float *w, const float *g,               \
	                  float *const *slots, size_t n, uint64_t step,        \
	                  float lr)                                            \
	{                                                                      \
		struct tf_update u;                                            \
		DESCRIBE(state, step, lr, &u);                                 \
		tf_update(tf_device_cpu(), &u, w, g, slots, n);                \
	}

struct tf_plugin {
	uint32_t abi;  /* TF_PLUGIN_ABI when built */
	uint32_t size; /* sizeof(struct tf_plugin) when built */
	const char *name;
	const char *version;
	const struct tf_op *ops;               /* ends with {0}, or NULL */
	const struct tf_optimizer *optimizers; /* ends with {0}, or NULL */
	int (*probe)(void); /* optional; 0 = unusable on this machine */
	/*
	 * Appended after the first descriptor (read only from descriptors
	 * whose size covers it): the settings (--opt KEY=VALUE) each
	 * optimizer reads, parallel to optimizers: optimizer_keys[i] is a
	 * NULL-terminated list of optimizers[i]'s keys.  An unknown key is
	 * then a usage error naming the keys.  NULL, or a NULL entry: the
	 * plugin does not say, and every key is passed on to create().
	 */
	const char *const *const *optimizer_keys;
	/*
	 * Appended after optimizer_keys: how each optimizer's update is
	 * run on any device, parallel to optimizers.  optimizer_updates[i]
	 * fills u with the fused update (tf_update() in tf/device.h) that
	 * optimizers[i] does at this step and learning rate, and returns 0;
	 * tfkit then runs it on the device the parameters live on (a GPU
	 * keeps them there).  NULL, a NULL entry, or non-zero returned: the
	 * optimizer's apply runs on the host (on a GPU, after waiting for
	 * it, and named in tf_device_fallbacks()).
	 */
	const tf_update_fn *optimizer_updates;
};

/*
 * Define the descriptor and the entry point in one line, at the end of a
 * plugin's source:  TF_PLUGIN_DEFINE("adam", "1.0", NULL, optimizers)
 * or, naming each optimizer's settings (optimizer_keys):
 * TF_PLUGIN_DEFINE_KEYS("adam", "1.1", NULL, optimizers, keys)
 */
#define TF_PLUGIN_DEFINE_UPDATES(NAME, VERSION, OPS, OPTIMIZERS, KEYS,         \
                                 UPDATES)                                      \
	static const struct tf_plugin tf_plugin_descriptor_ = {                \
	    TF_PLUGIN_ABI, sizeof(struct tf_plugin),                           \
	    NAME,          VERSION,                                            \
	    OPS,           OPTIMIZERS,                                         \
	    NULL,          KEYS,                                               \
	    UPDATES};                                                          \
	TF_PLUGIN_EXPORT const struct tf_plugin *tf_plugin_entry(void);        \
	const struct tf_plugin *tf_plugin_entry(void)                          \
	{                                                                      \
		return &tf_plugin_descriptor_;                                 \
	}
#define TF_PLUGIN_DEFINE_KEYS(NAME, VERSION, OPS, OPTIMIZERS, KEYS)            \
	TF_PLUGIN_DEFINE_UPDATES(NAME, VERSION, OPS, OPTIMIZERS, KEYS, NULL)
#define TF_PLUGIN_DEFINE(NAME, VERSION, OPS, OPTIMIZERS)                       \
	TF_PLUGIN_DEFINE_KEYS(NAME, VERSION, OPS, OPTIMIZERS, NULL)

/* The one symbol a plugin exports. */
typedef const struct tf_plugin *(*tf_plugin_entry_fn)(void);
#define TF_PLUGIN_ENTRY "tf_plugin_entry"

/* ---- the registry ------------------------------------------------------ */

/*
 * The plugins a process found.  Search order: the directories given with
 * tf_registry_add_dir() (a command's --plugin-dir), then each directory
 * of TF_PLUGIN_PATH (colon-separated), then lib/tfkit/plugins next to the
 * running program, then the installed plugin directory.  Never the current
 * directory.  The first plugin to define a name wins.
 */
struct tf_registry;

TF_API struct tf_registry *tf_registry_new(void);
/* Unloads nothing (no dlclose while ops may run); frees the registry. */
TF_API void tf_registry_free(struct tf_registry *r);
TF_API int tf_registry_add_dir(struct tf_registry *r, const char *dir);
/* Load every *.so of the search path.  TF_EFORMAT names a plugin with
 * the wrong ABI; TF_OK even when a directory is missing. */
TF_API int tf_registry_load(struct tf_registry *r);
/* Load one shared object by path. */
TF_API int tf_registry_load_file(struct tf_registry *r, const char *path);
/* Register a descriptor directly (tests, static builds). */
TF_API int tf_registry_add(struct tf_registry *r, const struct tf_plugin *p,
                           const char *origin);

TF_API const struct tf_op *tf_registry_op(const struct tf_registry *r,
                                          const char *name);
TF_API const struct tf_optimizer *
tf_registry_optimizer(const struct tf_registry *r, const char *name);
/* The settings an optimizer takes (NULL-terminated), or NULL when its
 * plugin does not say (or there is no such optimizer). */
TF_API const char *const *
tf_registry_optimizer_keys(const struct tf_registry *r, const char *name);
/* How an optimizer's update runs on a device (optimizer_updates), or
 * NULL when its plugin does not say. */
TF_API tf_update_fn tf_registry_optimizer_update(const struct tf_registry *r,
                                                 const char *name);

/* What was found, for --list-plugins. */
struct tf_plugin_info {
	const char *kind; /* "op" or "optimizer" */
	const char *name;
	const char *description;
	const char *plugin;  /* the plugin's name */
	const char *version; /* the plugin's version */
	const char *path;    /* the file it came from */
};
TF_API size_t tf_registry_count(const struct tf_registry *r);
TF_API int tf_registry_info(const struct tf_registry *r, size_t i,
                            struct tf_plugin_info *info);
/* The directories searched, in order, one per line. */
TF_API const char *tf_registry_search_path(const struct tf_registry *r);

#ifdef __cplusplus
}
#endif
#endif
