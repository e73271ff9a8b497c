/*
 * columns_private.h - the insides of a tf_columns (columns.c): what a
 * row holds, as the dataset reader (dataset.c, fastread.c) fills it and
 * serving and export read it.  Not installed; nothing outside libtfcore
 * includes it.
 *
 * A row is width floats (the inputs in schema order, a packed list
 * contributing all its values) followed by nids int64 ids (categorical
 * columns, then crosses): column c < width is a float, column width + k
 * is id k.
 */
#ifndef TF_COLUMNS_PRIVATE_H
#define TF_COLUMNS_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "tf/columns.h"
#include "tf/schema.h"

/* A float input: a feature of width columns from col on, and the
 * schema's standardisation of each. */
struct input {
	char *name;
	int64_t width;
	int64_t col;    /* first column in the row */
	float *mean;    /* per column, or NULL */
	float *inv_std; /* per column, or NULL */
};

/* A bytes feature: one id column of a row.  With a vocabulary, a value
 * is its place in it; without one (too many values), a hash bucket. */
struct cat {
	char *name;
	char **vocab; /* sorted, as the schema lists it */
	size_t *vlen;
	int64_t n;      /* vocabulary size; id n is out of vocabulary */
	int64_t hashed; /* no vocabulary: this many hash buckets */
	int64_t offset; /* its first id in the shared id space */
	int64_t col;    /* its column: width + its place among the ids */
};

/* A row column by name, for lookups. */
struct colref {
	const char *name;
	int64_t col;
};

/* A cross of two categorical columns, hashed into buckets. */
struct cross {
	size_t a, b; /* indexes into cats */
	int64_t col;
};

/* A sequence feature: its first steps steps in the row (numbers: the
 * floats of input in; tokens: ids through tok, from id column col), the
 * row's length in id column len_col. */
struct seqf {
	char *name;
	int64_t steps, step_width;
	int tokens;
	size_t in;
	struct cat tok;
	int64_t col, len_col;
	int type; /* TF_COL_* */
};

enum { LMAP_NONE, LMAP_INTS, LMAP_VOCAB };
enum { TFI_SPARSE_NONE, TFI_SPARSE_DENSE, TFI_SPARSE_BAG };

struct tf_columns {
	struct tfi_handle err;
	struct input *in;
	size_t nin;
	int64_t width; /* floats a row */
	char *label;
	int task;
	int64_t classes;
	int normalize;
	/* libsvm layout: TFI_SPARSE_DENSE, ids/values scattered into a row
	 * of max_index + 1 floats; TFI_SPARSE_BAG, a row's ids and values
	 * as they are (at most bag of each: values in the floats, ids in
	 * the ids), ids in 0..bag_known+bag_oov-1 (hashed when bag_hash, the
	 * rows of the schema's id vocabulary when bag_ids holds it); the
	 * table's first bag_known rows are the ids', its last bag_oov the
	 * buckets of the ids it has no row for (tf_columns_set_oov()) */
	int sparse;
	int64_t bag, bag_known, bag_oov;
	int bag_hash;
	struct tfi_idset bag_ids;
	int want_bag;         /* tf_columns_set_sparse() */
	int64_t want_buckets; /* ... */
	int64_t want_oov;     /* tf_columns_set_oov() */
	int image;            /* image layout: in[0] is the image, decoded */
	int img_h, img_w, img_c, img_scale; /* tf_columns_set_image() */
	/* The label's classes when they are not 0..K-1 as they stand:
	 * the schema's int64 values (sorted: value i is class i, so 1..K
	 * or -1/+1 get no phantom class) or its string vocabulary. */
	int lmap; /* LMAP_* */
	const int64_t *lvals;
	size_t nlvals;
	const struct tfi_vocab *lvocab;
	struct tf_schema *schema; /* parsed once (schema.c) */
	char *select, *exclude;   /* --features, --exclude: comma lists */
	/* per row column, from the schema (not for libsvm rows) */
	char **colname;
	unsigned char *colint;
	struct colref *colorder; /* the columns sorted by name */
	/* categorical columns and their crosses: a row's ids, numbered as
	 * columns after the floats */
	struct cat *cats;
	size_t ncat;
	struct cross *crosses;
	size_t ncross;
	int64_t nids; /* ncat + ncross */
	int64_t
	    cat_ids; /* ids of all vocabularies, out-of-vocabulary included */
	int64_t buckets;              /* hash buckets of the crosses */
	struct seqf *seq;             /* the sequence feature, or NULL */
	int64_t seq_max, seq_buckets; /* tf_columns_set_sequence() */
};

/* A label value's class under the label map, or -1 when it is none; a
 * string label's class (its place in the vocabulary), or -1. */
int64_t tfi_columns_mapped_class(const struct tf_columns *cols, int64_t v);
int64_t tfi_columns_vocab_class(const struct tf_columns *cols, const void *s,
                                size_t n);
/* A row's crossed ids from its categorical ones (ids: the row's nids). */
void tfi_columns_fill_crosses(const struct tf_columns *cols, int64_t *ids);
/* The categorical column called name: its index into cats, or -1. */
int tfi_columns_cat_index(const struct tf_columns *cols, const char *name);
/* The id of value s (n bytes) of a categorical column. */
int64_t tfi_columns_category_id(const struct cat *c, const void *s, size_t n);
/* The id of an int64 token: its decimal text's (the vocabulary's form). */
int64_t tfi_columns_int_token_id(const struct cat *c, int64_t v);
/* The row columns a libsvm layout's ids take (a bag's values, a dense
 * row's ids) before any numeric inputs beside them. */
static inline int64_t
tfi_columns_id_width(const struct tf_columns *cols)
{
	return cols->nin > 0 ? cols->in[0].col : cols->width;
}

/* The out-of-vocabulary bucket of id u, an id a bag's table has no row
 * of its own for: one of the rows after the ids' own, by u's hash; -1
 * when the table has no such buckets. */
static inline int64_t
tfi_bag_oov(const struct tf_columns *cols, uint64_t u)
{
	uint64_t n = (uint64_t)cols->bag_oov;
	return n == 0 ? -1 : cols->bag_known + (int64_t)(tfi_mix64(u) % n);
}

/* A bag's table row of id u (tf_columns_bag_id()'s rule, inline for the
 * fast reader's loop): u below the rows, or hashed into them (by a mask
 * when they are a power of two), or u's row in the id vocabulary; an id
 * past them unhashed or not in the vocabulary, its out-of-vocabulary
 * bucket (tfi_bag_oov()), or -1 when there are none. */
static inline int64_t
tfi_bag_row(const struct tf_columns *cols, uint64_t u)
{
	uint64_t v = (uint64_t)cols->bag_known;
	if (cols->bag_hash) {
		return (int64_t)((v & (v - 1)) == 0 ? tfi_mix64(u) & (v - 1)
		                                    : tfi_mix64(u) % v);
	}
	int64_t r = cols->bag_ids.slot != NULL
	                ? tfi_idset_row(&cols->bag_ids, u)
	            : u < v ? (int64_t)u
	                    : -1;
	return r >= 0 ? r : tfi_bag_oov(cols, u);
}

/* A bag's id u read (a record's, a request's): 1 with its table row in
 * *row; 0 for an id of none of an id vocabulary's rows outside training
 * (it adds nothing, as in TensorFlow's vocabulary columns); -1 for an id
 * the table has no row for that is an error (any, when training), which
 * the caller names. */
static inline int
tfi_bag_take(const struct tf_columns *cols, uint64_t u, int training,
             int64_t *row)
{
	*row = tfi_bag_row(cols, u);
	if (*row >= 0) {
		return 1;
	}
	return tf_columns_bag_vocabulary(cols) && !training ? 0 : -1;
}

#endif
