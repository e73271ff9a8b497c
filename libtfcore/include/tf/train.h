/*
 * train.h - the training loop behind tf-train, and the built-in models.
 *
 * tf_trainer_run() reads batches from TFRecord files (tf/dataset.h), runs
 * a model graph (tf/graph.h) built from the settings or restored from
 * the latest checkpoint, updates it with an optimizer plugin, validates
 * (tf_model_evaluate()'s loop), reports JSON lines through a callback,
 * and checkpoints (tf/checkpoint.h).  A run that resumes from a
 * checkpoint made after N steps and trains M more ends with the same
 * weights as one run of N + M steps.  --epochs counts the passes of one
 * run: a run over other inputs than the one that saved (new data, in a
 * cron job) trains that many passes over them, while a run that was
 * stopped and is started again on the same inputs goes on to finish as
 * the stopped one would have.  The configuration comes resolved
 * from tf/settings.h (tf_settings_config()); loading a trained model
 * for evaluation is tf/model.h's.
 */
#ifndef TF_TRAIN_H
#define TF_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "tf/dataset.h"
#include "tf/error.h"
#include "tf/graph.h"
#include "tf/model.h"
#include "tf/optim.h"
#include "tf/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tf_train_config {
	const char *model; /* "lr", "dnn", "cnn", "wide_and_deep" or "custom" */
	const char *hidden;      /* dnn: "128 32 8" */
	const char *input_shape; /* cnn: "28x28x1", or NULL */
	const char *conv;        /* cnn: "32 64" */
	int64_t rnn_units;       /* lstm, bidirectional_lstm, gru */
	int gru_reset_after;     /* gru: 1 Keras' default, 0 the reset before
	                          * (TensorFlow.js's GRU) */
	int64_t max_length;      /* a sequence's steps kept (0: the schema's) */
	int enable_bn; /* dnn, cnn: batch normalisation after each dense (and
	                * cnn's convolutions) */
	double bn_epsilon;
	double keep_prob; /* dnn: dropout keep probability (1: none) */
	/* image records (tf/image.h): the size ("HxW"), channels (1 or 3)
	 * and scale rows are read at (NULL, 0: the schema's), and the
	 * training reads' augmentation: a mirror image half the time, a
	 * shift of up to random_crop pixels each way */
	const char *image_size;
	int image_channels;
	const char *image_scale;
	int random_flip, random_crop;
	const char *optimizer; /* a plugin's optimizer name */
	double learning_rate;
	const struct tf_hparams *hparams; /* optimizer settings */
	const char *task;                 /* NULL: from the schema */
	const char *schema;               /* NULL: INPUT.schema.json */
	const char *label;                /* NULL: the schema's label */
	const char *features; /* comma list to train on (NULL: all) */
	const char *exclude;  /* comma list to leave out (NULL: none) */
	int allow_missing;    /* records may lack features (their mean) */
	int normalize;        /* standardise features (schema statistics) */
	size_t batch_size;
	uint64_t epochs;    /* 0: until max_steps */
	uint64_t max_steps; /* stop when the global step reaches it */
	size_t shuffle_buffer;
	uint64_t seed;
	double lr_decay_rate;
	uint64_t lr_decay_steps;
	int lr_staircase;
	double l1, l2;              /* regularisation added to the gradients */
	uint64_t steps_to_validate; /* 0: only at the end */
	const char *validate;       /* validation file, or NULL */
	const char *logdir;         /* TensorBoard event files, or NULL */
	const char *checkpoint_dir; /* NULL: no checkpoints */
	uint64_t save_every;        /* steps; 0: at the end only */
	double save_every_secs;
	int keep;
	int from_scratch;
	int take_previous; /* --if-damaged previous: a damaged latest
	                    * checkpoint is set aside, the one before taken */
	const char *const *inputs;
	size_t ninputs;
	const char *settings; /* JSON object of the run's flags, or NULL:
	                 kept in checkpoints as provenance */
	/* wide_and_deep */
	const char *crosses;   /* "a*b,c*d": crossed categorical columns */
	int64_t hash_buckets;  /* ids of the crosses (default 1000) */
	int64_t embedding_dim; /* values per categorical column (default 8) */
	/* sparse ids (tf_columns_set_sparse()): kept sparse however few;
	 * hashed into buckets (0: not unless they must be; --hash-buckets
	 * given) */
	int sparse;
	int64_t sparse_buckets;
	/* ids the table has no row for hashed into this many rows after
	 * the others' (tf_columns_set_oov(); 0: refused or left out) */
	int64_t oov_buckets;
	/* model "custom": a spec file of the user's (tf_model_spec_custom) */
	const char *model_file;
	/* Distributed (tf/cluster.h, tf/ps.h): NULL for one process.  A
	 * trainer reads its shard of the inputs, pushes each step's
	 * gradient to the ps tasks and takes their values back; the chief
	 * alone reports, validates and checkpoints. */
	const struct tf_cluster *cluster;
	int sync;                       /* --sync-mode sync */
	unsigned replicas_to_aggregate; /* sync: gradients a step (0: all) */
	unsigned total_replicas;        /* trainers (0: the cluster's) */
	unsigned staleness;             /* async: the bound */
	double peer_timeout;            /* seconds a peer may be silent */
	/* Records a chunk (0: static shares, record i to trainer i mod N):
	 * the chief cuts the inputs into chunks and ps 0 hands them out,
	 * a lost trainer's going back to the others (pool.h). */
	uint64_t chunk_size;
	double startup_timeout; /* seconds to wait for the ps tasks at the
	                           start (and a ps for its trainers) */
	const char *auth_token; /* in every request, or NULL */
	const char *tls_ca; /* TLS to the ps tasks: their CAs (PEM), or NULL */
	/* Towers: each step's batch split across this many threads, one
	 * copy of the graph each, their gradients summed in order (1 or 0:
	 * one thread; the kernels then run single-threaded). */
	int threads;
	/* Where the model trains: "cpu" (NULL), "cuda" or "cuda:N", and
	 * how a GPU multiplies ("fp32", NULL, or "tf32"): tf_device_open().
	 * Checkpoints are the same files whichever device wrote them. */
	const char *device;
	const char *gpu_math;
	/* A stream (tf_dataset_set_stream()): one input read as it comes,
	 * records trained in their order and never kept; the rows a batch
	 * has train when none came for 200 ms; the run ends when a pipe's
	 * writer closes it (a followed file: never, until stopped).  With
	 * publish_every seconds, a checkpoint that often (validated first
	 * when there is a validation file) handed to the sink's published(),
	 * and the last one as the run ends. */
	int stream;
	double publish_every;
};

/* The defaults (settings.c's table); optimizer NULL and learning_rate 0
 * mean "the checkpoint's, else the default". */
TF_API void tf_train_config_init(struct tf_train_config *cfg);

/* Where a run stands, after each step. */
struct tf_train_progress {
	uint64_t step;     /* global step */
	uint64_t examples; /* examples this run has trained on */
	uint64_t epoch;    /* this run's pass, from 0 */
	uint64_t epochs;   /* its passes to make (0: until --max-steps) */
	double loss;       /* of the step */
};

/* Where a run's JSON lines and progress go. */
struct tf_train_sink {
	void *ctx;
	void (*line)(void *ctx, const char *json); /* stdout; optional */
	void (*progress)(void *ctx,
	                 const struct tf_train_progress *p); /* optional */
	/* Something the user should know (stderr), optional: a resume with
	 * another --seed, --batch-size or --shuffle-buffer than the run that
	 * saved, an inferred schema, no checkpoint directory. */
	void (*note)(void *ctx, const char *msg);
	/* Asked after each step, optional: non-zero stops the run, which
	 * then checkpoints where it stands (a signal, in tf-train). */
	int (*stop)(void *ctx);
	/* A checkpoint to publish (publish_every), at the global step and
	 * examples_total it holds, optional: non-zero (a
	 * tf_status, the message in why) stops the run. */
	int (*published)(void *ctx, const char *checkpoint, uint64_t step,
	                 uint64_t examples, char *why, size_t size);
	/* Asked after each step (and while a stream waits), optional:
	 * non-zero checkpoints now, and publishes when the run publishes
	 * (a signal, in tf-train). */
	int (*save_now)(void *ctx);
};

struct tf_trainer;

TF_API struct tf_trainer *tf_trainer_new(void);
TF_API void tf_trainer_free(struct tf_trainer *t);
/*
 * Train.  TF_EINVAL for a bad setting, TF_EFORMAT for bad data or a
 * checkpoint of another model, TF_EINTERNAL when the loss stops being
 * finite (the last good checkpoint is kept).
 */
TF_API int tf_trainer_run(struct tf_trainer *t, const struct tf_registry *r,
                          const struct tf_train_config *cfg,
                          const struct tf_train_sink *sink);

/*
 * The spec of a built-in model: lr, or dnn with hidden layers (dense, then
 * batchnorm when bn_epsilon > 0, then relu, then dropout when keep < 1).
 */
TF_API int tf_model_spec(const char *model, const char *hidden, int64_t inputs,
                         int task, int64_t classes, double bn_epsilon,
                         double keep, char **spec, char *err, size_t errlen);

/*
 * The spec of a cnn (deep_recommend_system's): each row read as an image
 * of input_shape ("HxWxC"; NULL or "": a square of one channel when the
 * width is one), blocks of a 3x3 conv2d (SAME) of each of conv's filter
 * counts ("32 64"), relu and a 2x2 max_pool (SAME), flattened into the
 * hidden layers of a dnn.
 */
TF_API int tf_model_spec_cnn(const char *input_shape, const char *conv,
                             const char *hidden, int64_t inputs, int task,
                             int64_t classes, double bn_epsilon, double keep,
                             char **spec, char *err, size_t errlen);

/*
 * The spec of a recurrent model, model "lstm", "bidirectional_lstm" or
 * "gru": each row of inputs values read as a sequence of input_shape
 * ("TxF": T steps of F features), one recurrent layer of units (its
 * last output; bidirectional_lstm joins a forward and a reversed
 * layer's), then the hidden layers of a dnn.  reset_after: gru's (1,
 * Keras' default; 0, the reset gate before the recurrent product).
 */
TF_API int tf_model_spec_rnn(const char *model, const char *input_shape,
                             int64_t units, int reset_after, const char *hidden,
                             int64_t inputs, int task, int64_t classes,
                             double bn_epsilon, double keep, char **spec,
                             char *err, size_t errlen);

/*
 * The same over the sequence of rows of tf_columns_sequence(): its
 * steps (numbers, or tokens through an embedding of embedding_dim
 * values) to the recurrent layer, which reads each row's length (fed as
 * "ids" with the categorical ids: tf_columns_layout()); the other
 * numeric features joined to its output before the hidden layers.
 */
struct tf_layout;
struct tf_sequence_view;
TF_API int tf_model_spec_sequence(const char *model, const struct tf_layout *l,
                                  const struct tf_sequence_view *v,
                                  int64_t units, int reset_after,
                                  int64_t embedding_dim, const char *hidden,
                                  int task, int64_t classes, double bn_epsilon,
                                  double keep, char **spec, char *err,
                                  size_t errlen);

/*
 * The spec of a wide_and_deep model over a row of tf_columns_layout(),
 * fed as "x" (the numeric features) and "ids" (int64: the categorical
 * ids, then the crossed ones): deep, the numeric features and an
 * embedding of dim values per categorical id through the hidden layers;
 * wide, a linear model of the numeric features, the categorical ids and
 * their crosses; the two summed into the logits.
 */
/*
 * A model of sparse ids (a layout with a bag, tf_columns_set_sparse()):
 * lr, a sparse linear model (a weight per id and output, the ids'
 * values weighing them, and a bias); dnn, an embedding bag of dim values
 * (the ids' vectors summed, weighted by their values, as TensorFlow's
 * embedding_lookup_sparse) under the hidden layers; wide_and_deep, the
 * two summed.
 */
TF_API int tf_model_spec_sparse(const char *model, const struct tf_layout *l,
                                const char *hidden, int task, int64_t classes,
                                double bn_epsilon, double keep, int64_t dim,
                                char **spec, char *err, size_t errlen);
TF_API int tf_model_spec_wide_deep(const struct tf_layout *l,
                                   const char *hidden, int task,
                                   int64_t classes, double bn_epsilon,
                                   double keep, int64_t dim, char **spec,
                                   char *err, size_t errlen);

/*
 * A spec of the user's (--model-file), as tf-plugin(7) writes them, made
 * whole for a row of tf_columns_layout(): "input x" gets the numeric
 * width, "input ids" (int64) the categorical and crossed ids, "input
 * label" one column (added when absent); every attribute value
 * "outputs" becomes the model's output count (1, or the classes of a
 * multiclass model); the prediction and the loss for the task are added
 * on the spec's node "logits".  Lines keep their numbers, so the graph's
 * "model line N" errors point into the file; errors here name origin and
 * the line.  *wants_ids says whether it reads ids (NULL: not asked).
 */
TF_API int tf_model_spec_custom(const char *text, const char *origin,
                                const struct tf_layout *l, int task,
                                int64_t classes, char **spec, int *wants_ids,
                                char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
