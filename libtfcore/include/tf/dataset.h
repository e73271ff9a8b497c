/*
 * dataset.h - batches of (features, label) rows from TFRecord files, for
 * training and evaluation.
 *
 * What a row holds is the dataset's columns (tf/columns.h): from the
 * schema tf-csv2record writes, one inferred from the records
 * (tf_dataset_infer_schema), or features given one by one.  Each
 * Example becomes one row of the columns' width floats and id width
 * ids, standardised as the columns say; a missing feature is a data
 * error unless allowed, then 0 after standardisation (its mean).  The
 * label becomes a float: a class index or a value.
 *
 * Reading is deterministic for a given seed: each epoch reads the files
 * in order through a shuffle buffer seeded from (seed, epoch), so a run
 * can be resumed at (epoch, examples read in that epoch) exactly.
 */
#ifndef TF_DATASET_H
#define TF_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "tf/columns.h"
#include "tf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tf_dataset;

/* A dataset with columns of its own, set up through
 * tf_dataset_columns() (a schema, or features one by one). */
TF_API struct tf_dataset *tf_dataset_new(void);
/* A dataset reading rows of cols, which it does not own: they must
 * outlive it and not change while it reads (a model's, for evaluation). */
TF_API struct tf_dataset *tf_dataset_new_on(struct tf_columns *cols);
TF_API void tf_dataset_free(struct tf_dataset *ds);
/* Its columns.  Errors of tf_columns_*() calls are the columns' own
 * (tf_errmsg(cols)). */
TF_API struct tf_columns *tf_dataset_columns(struct tf_dataset *ds);

/*
 * No schema at hand (records written by TensorFlow or another tool, or
 * standard input): infer one from the first max_records records of
 * files, the label called label (NULL: "label"), with tf_survey_schema()
 * (whose skipped features are named in skipped), and use it as
 * tf_columns_load_schema() would.  Records of standard input are kept
 * and read again by tf_dataset_open().  *records: how many were read.
 */
TF_API int tf_dataset_infer_schema(struct tf_dataset *ds,
                                   const char *const *files, size_t nfiles,
                                   const char *label, size_t max_records,
                                   uint64_t *records, char *skipped,
                                   size_t size);

/* Carry this feature's value along as text, for tf_dataset_key(). */
TF_API int tf_dataset_set_key(struct tf_dataset *ds, const char *name);
/* Row i's key of the last tf_dataset_next() ("" if absent; at most 127
 * bytes). */
TF_API const char *tf_dataset_key(const struct tf_dataset *ds, size_t i);
/* Read only this share of every epoch: the records whose place in it
 * (over all files, in order) is shard modulo shards; the trainers of a
 * distributed run read disjoint shares that cover each epoch.  Call
 * before tf_dataset_open(). */
TF_API int tf_dataset_set_shard(struct tf_dataset *ds, uint64_t shard,
                                uint64_t shards);
/* Records without the label are fine (its value is NaN): prediction. */
TF_API void tf_dataset_set_label_optional(struct tf_dataset *ds, int on);
/*
 * Image rows (tf_columns_image()) for training: each image mirrored left
 * to right with probability 1/2 (flip), shifted by up to shift pixels
 * each way (zeros coming in).  Drawn from the seed, the epoch and the
 * record's place in its file, so a resumed run draws the same.
 */
TF_API void tf_dataset_set_augment(struct tf_dataset *ds, int flip, int shift);
/* A record that lacks a feature of the model is a data error naming it
 * (TF_EFORMAT); with this on, the feature counts as its training mean
 * (0 after standardisation). */
TF_API void tf_dataset_set_allow_missing(struct tf_dataset *ds, int on);
/* Sparse ids looked up in the model's id vocabulary
 * (tf_columns_bag_vocabulary()): an id outside it adds nothing to its
 * row (TensorFlow's vocabulary columns' default, -1), as for predicting
 * and evaluating; with this on (training), it is a data error naming the
 * record. */
TF_API void tf_dataset_set_strict_ids(struct tf_dataset *ds, int on);
/*
 * Read the input as a stream (before tf_dataset_open()): records in the
 * order they come (no shuffle buffer), none kept for a later epoch, the
 * input followed as it grows (tf_reader_set_follow(): a file as tail -F
 * reads it, a pipe until its writer closes it).  tf_dataset_next() then
 * returns the rows it has when no record came for wait_ms (TF_EAGAIN
 * when none: ask again).
 */
TF_API void tf_dataset_set_stream(struct tf_dataset *ds, int wait_ms);
/*
 * Read these files ("-" = standard input) for epochs passes (0 = for
 * ever; standard input is always one pass), through a shuffle buffer of
 * shuffle records (0 or 1 = in order), seeded with seed.
 */
TF_API int tf_dataset_open(struct tf_dataset *ds, const char *const *files,
                           size_t nfiles, uint64_t epochs, size_t shuffle,
                           uint64_t seed);
/* Skip ahead to (epoch, examples already read in it), for a resume. */
TF_API int tf_dataset_seek(struct tf_dataset *ds, uint64_t epoch,
                           uint64_t done);
/*
 * Up to max rows into x (max * width floats), ids (max * id width; may
 * be NULL when there are none) and y (max floats; may be NULL when there
 * is no label to read).  TF_EOF when the last epoch is
 * done and nothing was read; a batch may be short at the end of an epoch.
 * TF_EFORMAT names the file and record of a damaged record or one whose
 * features do not fit.
 */
TF_API int tf_dataset_next(struct tf_dataset *ds, float *x, int64_t *ids,
                           float *y, size_t max, size_t *rows);
/* How many records' sequences were longer than the columns' steps and
 * cut (tf_columns_set_sequence()), so far. */
TF_API uint64_t tf_dataset_truncated(const struct tf_dataset *ds);

/* A batch of room for capacity rows of this dataset's widths. */
struct tf_batch;
TF_API int tf_dataset_batch(struct tf_dataset *ds, struct tf_batch *b,
                            size_t capacity);
/* The next rows into b, up to its capacity, as tf_dataset_next(). */
TF_API int tf_dataset_read(struct tf_dataset *ds, struct tf_batch *b);
/* Standard input, or one input that is a pipe or FIFO, is read once;
 * its records are kept (up to 256 MiB) so that later epochs read them
 * again.  Non-zero when it held more: it was then read for one pass
 * only. */
TF_API int tf_dataset_stdin_once(const struct tf_dataset *ds);
/* Where reading stands. */
TF_API uint64_t tf_dataset_epoch(const struct tf_dataset *ds);
TF_API uint64_t tf_dataset_done(const struct tf_dataset *ds);

#ifdef __cplusplus
}
#endif
#endif
