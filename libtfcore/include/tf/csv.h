/*
 * csv.h - converting CSV and libsvm text to tf.train.Example records.
 *
 * CSV is parsed with libcsv (RFC 4180 quoting).  The first row names the
 * columns unless told otherwise; the label is the last column unless told
 * otherwise.  Column types are inferred from the first rows (int64, float or
 * bytes) or given.  Each row becomes one Example: one feature per column, or
 * all numeric features packed into one float list.  The libsvm format
 * ("label idx:val ...") becomes int64 "ids", float "values" and the label.
 *
 * Conversion runs on worker threads over chunks of the input cut at row
 * boundaries; records come out in input order.  A malformed row stops the
 * conversion with "FILE:LINE: reason" (TF_EFORMAT), or is skipped and
 * counted when skip_bad is set.
 */
#ifndef TF_CSV_H
#define TF_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "tf/error.h"
#include "tf/input.h"
#include "tf/number.h" /* tf_parse_float(), tf_parse_int64() */
#include "tf/schema.h" /* the column types */

#ifdef __cplusplus
extern "C" {
#endif

/* What an empty field becomes. */
enum tf_empty {
	TF_EMPTY_OMIT = 0, /* feature left out (NaN inside a packed list) */
	TF_EMPTY_ZERO = 1, /* 0, or "" for bytes */
	TF_EMPTY_ERROR = 2 /* the row is malformed */
};

enum tf_text_format { TF_FORMAT_CSV = 0, TF_FORMAT_LIBSVM = 1 };

struct tf_csv_options {
	int format;           /* TF_FORMAT_* */
	char delimiter;       /* ',' by default */
	int no_header;        /* the first row is data */
	const char *names;    /* comma-separated column names */
	const char *label;    /* column name or 1-based index; NULL: last */
	int no_label;         /* no label column at all */
	int label_type;       /* TF_COL_AUTO, TF_COL_INT64 or TF_COL_FLOAT */
	const char *columns;  /* comma-separated: keep only these */
	const char *drop;     /* comma-separated: leave these out */
	const char *types;    /* "name:type,..." */
	int empty;            /* TF_EMPTY_* */
	const char *pack;     /* pack numeric features into this float list */
	size_t infer_rows;    /* rows used to infer types; 0: all */
	int numeric_as_float; /* write integer feature columns as floats */
	int skip_bad;         /* skip malformed rows instead of failing */
	int threads;          /* worker threads; 0: one per CPU */
	int allow_nonfinite;  /* keep NaN, inf and out-of-range floats
	                         (otherwise a bad row, as skip_bad says) */
	/* comma list of columns whose cells each hold a sequence, steps
	 * split by seq_delimiter (' ' by default; runs of it are one):
	 * written as a list feature (bytes tokens, int64 tokens, or float
	 * numbers as the steps are inferred or --types says), an empty
	 * cell as no steps; the schema gives each its max_length */
	const char *sequence;
	char seq_delimiter;
	/* the hashing trick (Vowpal Wabbit's): every feature column becomes
	 * sparse ids (the libsvm layout's ids and values): a number x as the
	 * id of its column's name, value x (none when 0); any other cell as
	 * the id of name=cell, value 1.  Ids are 64-bit hashes, or that
	 * modulo hash_buckets when it is not 0 (which sets hash_features). */
	int hash_features;
	uint64_t hash_buckets;
	/* rows converted as they come (a pipe, tail -F): no inference (a
	 * CSV's every column needs its type in types), one thread, and the
	 * sink handed each row read so far without waiting for more */
	int stream;
};

/* Defaults: CSV, ',', header, last column is the label, 1000 rows. */
TF_API void tf_csv_options_init(struct tf_csv_options *o);

/* Where converted records go. */
struct tf_csv_sink {
	void *ctx;
	/*
	 * n bytes of framed TFRecords; ends[i] is the end offset of record i
	 * within bytes, for count records.  Non-zero stops the conversion.
	 */
	int (*write)(void *ctx, const uint8_t *bytes, size_t n,
	             const size_t *ends, size_t count);
	/* Optional: called after each chunk with running totals. */
	void (*progress)(void *ctx, uint64_t rows, uint64_t bytes);
};

struct tf_csv;

TF_API struct tf_csv *tf_csv_new(void);
TF_API void tf_csv_free(struct tf_csv *c);
/* Check and take options (strings are copied).  TF_EINVAL if bad. */
TF_API int tf_csv_set_options(struct tf_csv *c, const struct tf_csv_options *o);
/*
 * Convert every stream of in.  May be called again with further inputs;
 * their header must name the same columns.
 */
TF_API int tf_csv_convert(struct tf_csv *c, struct tf_input *in,
                          const struct tf_csv_sink *sink);

/* Rows written and rows skipped so far. */
TF_API uint64_t tf_csv_rows(const struct tf_csv *c);
TF_API uint64_t tf_csv_skipped(const struct tf_csv *c);
/* Messages of the first skipped rows, one per line. */
TF_API const char *tf_csv_skip_log(const struct tf_csv *c);

/*
 * The schema of what was written, as a JSON document (malloc'd, caller
 * frees): columns with types and statistics, the label, the layout, row
 * count and the vocabularies of bytes columns.  See tf-csv2record(1).
 */
TF_API int tf_csv_schema_json(struct tf_csv *c, char **out);
/* The same into a schema (tf/schema.h), to write with tf_schema_write(). */
struct tf_schema;
TF_API int tf_csv_schema(struct tf_csv *c, struct tf_schema *s);

#ifdef __cplusplus
}
#endif
#endif
