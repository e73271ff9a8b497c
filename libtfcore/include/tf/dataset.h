/*
 * dataset.h - batches of (features, label) rows from TFRecord files, for
 * training and evaluation.
 *
 * What to read comes from the schema tf-csv2record writes (columns or
 * packed layout, label, classes, per-column mean and standard deviation)
 * or is given feature by feature.  Each Example becomes one row of
 * `width` floats, features in schema order (a packed list contributes all
 * its values), standardised with the schema's mean and standard deviation
 * unless told not to; a missing feature becomes 0 after standardisation
 * (its mean).  Categorical features, when asked for, become int64 ids
 * beside the floats (tf_dataset_set_categorical).  The label becomes a
 * float: a class index (0..K-1, whatever values or strings the data
 * uses for its classes: tf_dataset_class_name), or a value.
 *
 * Reading is deterministic for a given seed: each epoch reads the files
 * in order through a shuffle buffer seeded from (seed, epoch), so a run
 * can be resumed at (epoch, examples read in that epoch) exactly.
 */
#ifndef TF_DATASET_H
#define TF_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "tf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tf_task {
	TF_TASK_BINARY = 0,     /* label 0/1: sigmoid cross-entropy */
	TF_TASK_MULTICLASS = 1, /* label 0..K-1: softmax cross-entropy */
	TF_TASK_REGRESSION = 2  /* float label: mean squared error */
};
TF_API const char *tf_task_name(int task);
/* "binary", "multiclass", "regression"; -1 when unknown. */
TF_API int tf_task_parse(const char *name);

struct tf_dataset;

TF_API struct tf_dataset *tf_dataset_new(void);
TF_API void tf_dataset_free(struct tf_dataset *ds);

/* Take features, label, task, classes and statistics from a schema file.
 * TF_ENOENT if missing, TF_EFORMAT if it is not a tfkit schema. */
TF_API int tf_dataset_load_schema(struct tf_dataset *ds, const char *path);
/* The schema text as loaded (for checkpoints), or "". */
TF_API const char *tf_dataset_schema_text(const struct tf_dataset *ds);
/*
 * Train on some of the schema's features: only those of features (a
 * comma list; NULL: all), less those of exclude.  Set before the schema
 * is loaded; TF_EINVAL then names a feature the schema lacks.  The
 * schema's text becomes that of the selection.
 */
TF_API int tf_dataset_select(struct tf_dataset *ds, const char *features,
                             const char *exclude);
/*
 * No schema at hand (records written by TensorFlow or another tool, or
 * standard input): infer one from the first max_records records of
 * files, the label called label (NULL: "label"), with tf_survey_schema()
 * (whose skipped features are named in skipped), and use it as
 * tf_dataset_load_schema() would.  Records of standard input are kept
 * and read again by tf_dataset_open().  *records: how many were read.
 */
TF_API int tf_dataset_infer_schema(struct tf_dataset *ds,
                                   const char *const *files, size_t nfiles,
                                   const char *label, size_t max_records,
                                   uint64_t *records, char *skipped,
                                   size_t size);
/* The schema loaded (tf/schema.h), or NULL before one is. */
struct tf_schema;
TF_API const struct tf_schema *tf_dataset_schema(const struct tf_dataset *ds);
/* Load a schema from its text (a checkpoint's copy). */
TF_API int tf_dataset_parse_schema(struct tf_dataset *ds, const char *json,
                                   const char *origin);

/* Without a schema: a float feature of width values, and the label. */
TF_API int tf_dataset_add_feature(struct tf_dataset *ds, const char *name,
                                  int64_t width);
TF_API int tf_dataset_set_label(struct tf_dataset *ds, const char *name,
                                int task, int64_t classes);
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
/* A record that lacks a feature of the model is a data error naming it
 * (TF_EFORMAT); with this on, the feature counts as its training mean
 * (0 after standardisation). */
TF_API void tf_dataset_set_allow_missing(struct tf_dataset *ds, int on);
/* Standardise features with the schema statistics (default on). */
TF_API void tf_dataset_set_normalize(struct tf_dataset *ds, int on);

/*
 * Column c of a row: the schema feature it holds (NULL for libsvm rows or
 * without a schema), whether that feature holds whole numbers, and its
 * standardisation, (v - mean) * inv_std (0 and 1 when not standardised).
 */
TF_API const char *tf_dataset_column(const struct tf_dataset *ds, int64_t c,
                                     int *is_int, float *mean, float *inv_std);
/*
 * Categorical features: every bytes feature becomes an id of the row
 * (int64, beside its floats), in one id space shared by all of them:
 * each vocabulary gets its size + 1 ids, the last for values outside
 * it; a feature the schema has no vocabulary for (too many values) gets
 * buckets ids, its values hashed; -1 is a missing value.  crosses
 * ("a*b,c*d", or NULL) adds an id per pair, the hash of the two ids into
 * buckets (-1 when either is missing).  A row's ids are numbered as
 * columns after its floats: column width + k is id k.  Call after
 * loading the schema and before opening files.
 */
TF_API int tf_dataset_set_categorical(struct tf_dataset *ds,
                                      const char *crosses, int64_t buckets);
struct tf_layout {
	int64_t numeric;     /* float columns (the width) */
	int64_t categorical; /* categorical ids, first of the ids */
	int64_t ids;         /* their shared id space */
	int64_t crosses;     /* crossed ids, last */
	int64_t buckets;     /* the crosses' id space */
};
TF_API void tf_dataset_layout(const struct tf_dataset *ds, struct tf_layout *l);
enum {
	TF_COLUMN_NUMERIC = 0,
	TF_COLUMN_CATEGORICAL = 1,
	TF_COLUMN_DERIVED = 2 /* a cross: computed, not an input */
};
TF_API int tf_dataset_column_kind(const struct tf_dataset *ds, int64_t c);
/* The id of value s (n bytes) of categorical column col; -1 when col is
 * not categorical. */
TF_API int64_t tf_dataset_category(const struct tf_dataset *ds, int64_t col,
                                   const char *s, size_t n);

/* The row column of the feature called name, or -1. */
TF_API int64_t tf_dataset_find_column(const struct tf_dataset *ds,
                                      const char *name);

/* Prepare raw rows in place, as tf_dataset_next() does: standardise the
 * floats, compute the crossed ids from the categorical ones. */
TF_API void tf_dataset_standardize(const struct tf_dataset *ds, float *x,
                                   int64_t *ids, size_t rows);

/* Floats a row (the width), its ids (categorical and crossed: 0 unless
 * tf_dataset_set_categorical()), and the columns of both. */
TF_API int64_t tf_dataset_width(const struct tf_dataset *ds);
TF_API int64_t tf_dataset_id_width(const struct tf_dataset *ds);
TF_API int64_t tf_dataset_columns(const struct tf_dataset *ds);
/* Task and number of classes (2 for binary, 1 regression). */
TF_API int tf_dataset_task(const struct tf_dataset *ds);
TF_API int64_t tf_dataset_classes(const struct tf_dataset *ds);
TF_API const char *tf_dataset_label_name(const struct tf_dataset *ds);
/* Class k's label as the data spells it: the vocabulary's string for a
 * string label, the value for an int64 one (1..K and -1/+1 labels are
 * classes 0..K-1 in order), into buf.  TF_EINVAL for no such class. */
TF_API int tf_dataset_class_name(const struct tf_dataset *ds, int64_t k,
                                 char *buf, size_t size);

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
/* A batch of room for capacity rows of this dataset's widths. */
struct tf_batch;
TF_API int tf_dataset_batch(struct tf_dataset *ds, struct tf_batch *b,
                            size_t capacity);
/* The next rows into b, up to its capacity, as tf_dataset_next(). */
TF_API int tf_dataset_read(struct tf_dataset *ds, struct tf_batch *b);
/* Standard input is read once; its records are kept (up to 256 MiB) so
 * that later epochs read them again.  Non-zero when it held more: it
 * was then read for one pass only. */
TF_API int tf_dataset_stdin_once(const struct tf_dataset *ds);
/* Where reading stands. */
TF_API uint64_t tf_dataset_epoch(const struct tf_dataset *ds);
TF_API uint64_t tf_dataset_done(const struct tf_dataset *ds);

#ifdef __cplusplus
}
#endif
#endif
