/*
 * columns.h - what a row of a model holds: its columns.
 *
 * The schema tf-csv2record writes (or one inferred, or features given
 * one by one) says what a row is: the float inputs in schema order (a
 * packed list contributing all its values), each standardised with the
 * schema's mean and standard deviation unless told not to; categorical
 * (bytes) features as int64 ids after the floats, with their crosses
 * (tf_columns_set_categorical); and the label: a class index (0..K-1,
 * whatever values or strings the data uses for its classes:
 * tf_columns_class_name) or a value.  The dataset reader (tf/dataset.h)
 * fills rows of these columns; a model (tf/model.h) keeps them to
 * answer requests and to export, so what a column means is decided
 * here once for training, evaluation, serving and export.
 */
#ifndef TF_COLUMNS_H
#define TF_COLUMNS_H

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

struct tf_columns;
TF_API struct tf_columns *tf_columns_new(void);
TF_API void tf_columns_free(struct tf_columns *cols);

/* Take features, label, task, classes and statistics from a schema file.
 * TF_ENOENT if missing, TF_EFORMAT if it is not a tfkit schema. */
TF_API int tf_columns_load_schema(struct tf_columns *cols, const char *path);
/* The schema text as loaded (for checkpoints), or "". */
TF_API const char *tf_columns_schema_text(const struct tf_columns *cols);
/*
 * Train on some of the schema's features: only those of features (a
 * comma list; NULL: all), less those of exclude.  Set before the schema
 * is loaded; TF_EINVAL then names a feature the schema lacks.  The
 * schema's text becomes that of the selection.
 */
TF_API int tf_columns_select(struct tf_columns *cols, const char *features,
                             const char *exclude);

/*
 * Images (a schema of the image layout: records of encoded images, as
 * TensorFlow's Inception data): each row is the image decoded, resized
 * to height x width, with channels 1 (grey) or 3 (RGB), scaled
 * (TF_IMAGE_SCALE_*, tf/image.h).  Set before the schema is loaded;
 * 0 (or -1 for the scale) keeps what the schema says.  The schema's text
 * becomes that of the images as the model reads them.
 */
TF_API int tf_columns_set_image(struct tf_columns *cols, int height, int width,
                                int channels, int scale);
/* Whether rows are images, and if so their view (tf/image.h: size,
 * channels, scale; no flip or shift). */
struct tf_image_view;
TF_API int tf_columns_image(const struct tf_columns *cols,
                            struct tf_image_view *v);

/*
 * Sequences (a schema feature with a max_length: a list whose length
 * varies by record, an Example's list or a SequenceExample's feature
 * list): a row holds its first max_length steps, padded, and how many
 * there were.  Float steps of step_width numbers are row columns
 * (unstandardised); int64 and bytes steps are tokens, ids through the
 * schema's vocabulary of the feature (the next id for one not in it) or
 * hashed into buckets when it has none.  The ids come after those of
 * the categorical columns and crosses: the tokens' (no id: -1 past the
 * length), then the length.  Set before the schema is loaded:
 * max_length > 0 replaces the schema's (longer sequences are cut, their
 * first steps kept), buckets > 0 hashes tokens without a vocabulary
 * (default 1000); the schema's text then says so.  One sequence
 * feature a model.
 */
TF_API int tf_columns_set_sequence(struct tf_columns *cols, int64_t max_length,
                                   int64_t buckets);
struct tf_sequence_view {
	const char *name;
	int64_t steps;      /* max_length */
	int64_t step_width; /* numbers a step; 1 for tokens */
	int tokens;         /* 1: tokens, as ids */
	int64_t vocab;      /* tokens: ids (vocabulary and one, or buckets) */
	int64_t first;      /* numbers: first row column; tokens: first id */
	int64_t length;     /* the id holding each row's steps */
};
/* Whether rows hold a sequence, and if so its view. */
TF_API int tf_columns_sequence(const struct tf_columns *cols,
                               struct tf_sequence_view *v);

/*
 * Sparse features (the libsvm layout: ids, as TensorFlow's uint64 ids,
 * and their values).  A row holds them as they are, as many as the
 * schema's max_ids (a bag: values among the floats, ids among the ids;
 * the model looks each id up), never as a dense row, when bag is 1,
 * buckets > 0, or the ids number more than TF_DENSE_IDS_MAX; otherwise
 * (bag 0) a row is max_index + 1 floats.  Ids index a table of
 * max_index + 1 rows, or are hashed into buckets (given, or 2^20 when
 * ids go past 2^24), or, when the schema has an id vocabulary (the
 * data's distinct ids, tf-csv2record's when they are sparse in their
 * space) and no buckets are given, the table has a row for each of its
 * ids.  Set before the schema is loaded; the schema's text then says
 * so.
 */
#define TF_DENSE_IDS_MAX 4096
TF_API int tf_columns_set_sparse(struct tf_columns *cols, int bag,
                                 int64_t buckets);
/*
 * Out-of-vocabulary buckets (TensorFlow's num_oov_buckets): a bag's
 * table gains buckets rows after the ids' own (an id vocabulary's, or
 * max_index + 1), and an id it has no row for is hashed into them
 * instead of being refused (training) or left out (evaluation,
 * serving); ids beyond the conversion's then train.  0: none.  Not with
 * hashed ids (every one has a row).  Reads the ids as a bag
 * (tf_columns_set_sparse()'s bag).  Set before the schema is loaded; the
 * schema's text then says so ("oov_buckets").
 */
TF_API int tf_columns_set_oov(struct tf_columns *cols, int64_t buckets);
/* A bag's out-of-vocabulary buckets (the last rows of its table), or 0. */
TF_API int64_t tf_columns_bag_oov(const struct tf_columns *cols);
/* Whether rows hold a bag of ids; if so, how many a row and the rows of
 * the table they index (out-of-vocabulary buckets included). */
TF_API int tf_columns_bag(const struct tf_columns *cols, int64_t *width,
                          int64_t *vocab);
/* Whether a bag's ids are hashed into its table's rows. */
TF_API int tf_columns_bag_hashed(const struct tf_columns *cols);
/* Whether a bag's table has a row for each id of an id vocabulary. */
TF_API int tf_columns_bag_vocabulary(const struct tf_columns *cols);
/* How many ids of data's id vocabulary model has no row for (*first the
 * first of them); -1 when data has no id vocabulary or either reads no
 * bag. */
TF_API int64_t tf_columns_bag_unknown(const struct tf_columns *model,
                                      const struct tf_columns *data,
                                      uint64_t *first);
/* The table row of sparse id id (its uint64 bits), or -1 for an id
 * outside the table that is not hashed (not in an id vocabulary) when
 * the table has no out-of-vocabulary buckets. */
TF_API int64_t tf_columns_bag_id(const struct tf_columns *cols, int64_t id);

/* The schema loaded (tf/schema.h), or NULL before one is. */
struct tf_schema;
TF_API const struct tf_schema *tf_columns_schema(const struct tf_columns *cols);
/* Load a schema from its text (a checkpoint's copy). */
TF_API int tf_columns_parse_schema(struct tf_columns *cols, const char *json,
                                   const char *origin);

/* Without a schema: a float feature of width values, and the label. */
TF_API int tf_columns_add_feature(struct tf_columns *cols, const char *name,
                                  int64_t width);
TF_API int tf_columns_set_label(struct tf_columns *cols, const char *name,
                                int task, int64_t classes);

/* Standardise features with the schema statistics (default on). */
TF_API void tf_columns_set_normalize(struct tf_columns *cols, int on);

/*
 * Column c of a row: the schema feature it holds (NULL for libsvm rows or
 * without a schema), whether that feature holds whole numbers, and its
 * standardisation, (v - mean) * inv_std (0 and 1 when not standardised).
 */
TF_API const char *tf_columns_column(const struct tf_columns *cols, int64_t c,
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
TF_API int tf_columns_set_categorical(struct tf_columns *cols,
                                      const char *crosses, int64_t buckets);
struct tf_layout {
	int64_t numeric;     /* float columns (the width) */
	int64_t categorical; /* categorical ids, first of the ids */
	int64_t ids;         /* their shared id space */
	int64_t crosses;     /* crossed ids, last */
	int64_t buckets;     /* the crosses' id space */
	int64_t sequence;    /* a sequence's ids (tokens, length), after */
	int64_t bag;         /* sparse ids a row (numeric: their values) */
	int64_t bag_vocab;   /* the table they index */
};
TF_API void tf_columns_layout(const struct tf_columns *cols,
                              struct tf_layout *l);
enum {
	TF_COLUMN_NUMERIC = 0,
	TF_COLUMN_CATEGORICAL = 1,
	TF_COLUMN_DERIVED = 2 /* a cross: computed, not an input */
};
TF_API int tf_columns_column_kind(const struct tf_columns *cols, int64_t c);
/* The id of value s (n bytes) of categorical column col; -1 when col is
 * not categorical. */
TF_API int64_t tf_columns_category(const struct tf_columns *cols, int64_t col,
                                   const char *s, size_t n);

/* The row column of the feature called name, or -1. */
TF_API int64_t tf_columns_find_column(const struct tf_columns *cols,
                                      const char *name);

/* Prepare raw rows in place, as tf_dataset_next() does: standardise the
 * floats, compute the crossed ids from the categorical ones. */
TF_API void tf_columns_standardize(const struct tf_columns *cols, float *x,
                                   int64_t *ids, size_t rows);

/* Floats a row (the width), its ids (categorical and crossed: 0 unless
 * tf_columns_set_categorical()), and the columns of both. */
TF_API int64_t tf_columns_width(const struct tf_columns *cols);
TF_API int64_t tf_columns_id_width(const struct tf_columns *cols);
TF_API int64_t tf_columns_count(const struct tf_columns *cols);
/* Task and number of classes (2 for binary, 1 regression). */
TF_API int tf_columns_task(const struct tf_columns *cols);
TF_API int64_t tf_columns_classes(const struct tf_columns *cols);
TF_API const char *tf_columns_label_name(const struct tf_columns *cols);
/* Class k's label as the data spells it: the vocabulary's string for a
 * string label, the value for an int64 one (1..K and -1/+1 labels are
 * classes 0..K-1 in order), into buf.  TF_EINVAL for no such class. */
TF_API int tf_columns_class_name(const struct tf_columns *cols, int64_t k,
                                 char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
