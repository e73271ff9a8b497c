/*
 * checkpoint.h - saving and restoring training state.
 *
 * A checkpoint is a TFRecord file DIR/model.ckpt-STEP: the first record
 * holds a JSON header (model spec, optimizer and its settings, step, RNG
 * state, input position, schema), each further record one named block of
 * float32 values (parameters, state, optimizer slots), so every byte is
 * covered by a CRC.  It is written under a temporary name, flushed to
 * disk and renamed; then the text file DIR/checkpoint, in TensorFlow's
 * CheckpointState format, is replaced the same way to name it as the
 * latest.  Older checkpoints beyond `keep` are removed.
 */
#ifndef TF_CHECKPOINT_H
#define TF_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "tf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tf_ckpt;
struct tf_hparams;

/*
 * The header: everything needed to continue a run exactly, or to load
 * its model.  Written as the first record's JSON by tf_ckpt_put_header()
 * and read back by tf_ckpt_get_header(); the strings and hparams belong
 * to the struct (tf_ckpt_header_release() frees them).
 */
struct tf_ckpt_header {
	char *model_spec;           /* tf-plugin(7) model spec */
	char *optimizer;            /* the optimizer plugin's name */
	struct tf_hparams *hparams; /* its settings (--opt) */
	double learning_rate;       /* before decay */
	uint64_t step;              /* global step */
	uint64_t examples;          /* examples trained on, all runs */
	uint64_t epoch, done;       /* input position: epoch, rows in it */
	uint64_t seed;              /* weights, shuffling, dropout */
	char *task;                 /* "binary", "multiclass", "regression" */
	char *prediction;           /* the node predictions are read from */
	int64_t classes;
	char *schema;  /* the data's schema (JSON text) */
	int normalize; /* features standardised */
	int has_rng;   /* rng holds the graph's generator */
	uint64_t rng[4];
	char *crosses;    /* wide_and_deep: its crosses, or NULL */
	int64_t buckets;  /* ... and their hash buckets */
	char *validation; /* last validation metrics (JSON
	                     object text), or NULL */
	char *config;     /* the run's resolved settings (JSON
	                     object text, tf/settings.h), or NULL */
	char *library;    /* the libtfcore version that saved */
	/* The run that saved (one invocation of tf-train): its inputs
	 * (JSON list of "name size mtime"), the epoch it began at, whether
	 * it read all its epochs.  has_run 0 in earlier checkpoints. */
	int has_run;
	char *run_inputs;
	uint64_t run_first_epoch;
	int run_finished;
	/* A distributed run: each trainer's input position in its share
	 * (epoch, rows in it), in trainer order; NULL for one process. */
	uint64_t *trainers; /* 2 * ntrainers values */
	size_t ntrainers;
	/* Where the input stands (JSON object text, or NULL): the records
	 * in the shuffle buffer and the reader's place, so a resume seeks
	 * instead of replaying the epoch (plain files only). */
	char *input_state;
	/* A distributed run that hands out chunks (--chunk-size): its pool
	 * (JSON object text: the chunks, the epochs trained, how far each
	 * chunk of the open epochs is), or NULL. */
	char *pool;
};

TF_API void tf_ckpt_header_init(struct tf_ckpt_header *h);
TF_API void tf_ckpt_header_release(struct tf_ckpt_header *h);

TF_API struct tf_ckpt *tf_ckpt_new(void);
TF_API void tf_ckpt_free(struct tf_ckpt *c);

/* For saving: the header (encoded now) and blocks (referenced until
 * saved).  tf_ckpt_set_header() takes header JSON as it is. */
TF_API int tf_ckpt_put_header(struct tf_ckpt *c,
                              const struct tf_ckpt_header *h);
TF_API int tf_ckpt_set_header(struct tf_ckpt *c, const char *json);
TF_API int tf_ckpt_add(struct tf_ckpt *c, const char *name, const float *data,
                       size_t n);
/* Forget the blocks added (before the next save). */
TF_API void tf_ckpt_clear(struct tf_ckpt *c);
/*
 * Write DIR/model.ckpt-STEP (DIR made when missing), make it the
 * latest, and keep the newest `keep` (0 = all).  TF_ECREATE or TF_EIO naming
 * the file on failure; the previous latest checkpoint is then untouched.
 */
TF_API int tf_ckpt_save(struct tf_ckpt *c, const char *dir, uint64_t step,
                        int keep);

/*
 * Load a checkpoint file, or the latest of a directory.  TF_ENOENT when
 * there is none; TF_EFORMAT for a damaged one.
 */
TF_API int tf_ckpt_load(struct tf_ckpt *c, const char *path);
/* The same, reading only the header record (settings of a resume). */
TF_API int tf_ckpt_load_header(struct tf_ckpt *c, const char *path);
/*
 * The loaded header, decoded into h (released first).  TF_EFORMAT naming
 * the file for one without the fields a checkpoint must have.
 */
TF_API int tf_ckpt_get_header(struct tf_ckpt *c, struct tf_ckpt_header *h);
/* The latest checkpoint of dir into path; TF_ENOENT if none. */
TF_API int tf_ckpt_latest(const char *dir, char *path, size_t size);
/*
 * When the latest checkpoint of dir does not load: the newest one the
 * pointer file lists before it that loads whole (every record's CRC, the
 * header), its path into path.  TF_ENOENT when none does.
 */
TF_API int tf_ckpt_previous(const char *dir, char *path, size_t size);
/*
 * Set the damaged latest checkpoint aside for good: renamed
 * NAME.damaged (kept, for a look), and the pointer file rewritten to name
 * prev (from tf_ckpt_previous()) as the latest.  The message, on error,
 * goes to msg.
 */
TF_API int tf_ckpt_set_aside(const char *dir, const char *prev, char *msg,
                             size_t msize);
/* The header's JSON text as stored. */
TF_API const char *tf_ckpt_header(const struct tf_ckpt *c);
/* A block's number of values; TF_ENOENT (not set on the handle) when
 * there is no such block. */
TF_API int tf_ckpt_size(const struct tf_ckpt *c, const char *name, size_t *n);
/*
 * A block, or NULL (also when out of memory: the handle says so).  A
 * loaded block is decoded at its first call and kept with the handle.
 */
TF_API const float *tf_ckpt_get(struct tf_ckpt *c, const char *name, size_t *n);
/*
 * A block's n values into dst, decoded there: TF_EFORMAT naming the file
 * when there is no such block or it holds another number of values.
 */
TF_API int tf_ckpt_read(struct tf_ckpt *c, const char *name, float *dst,
                        size_t n);
/* Values from..from+n-1 of a block into dst (a ps's shard): TF_EFORMAT
 * naming the file when the block has no such values. */
TF_API int tf_ckpt_read_part(struct tf_ckpt *c, const char *name, size_t from,
                             float *dst, size_t n);
/* The file last saved or loaded. */
TF_API const char *tf_ckpt_path(const struct tf_ckpt *c);

#ifdef __cplusplus
}
#endif
#endif
