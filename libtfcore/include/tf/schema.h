/*
 * schema.h - the schema: the contract between the stages.
 *
 * tf-csv2record writes one next to its records (the sidecar,
 * RECORDS.schema.json): the layout (columns, packed or libsvm), the
 * features in row order with their types and statistics, the label and
 * its classes, the vocabularies of bytes features, the row count.
 * Training, evaluation, export and serving read it; split and shuffle
 * carry it to their outputs.  Its JSON is described in tfrecord(5).
 *
 * A schema is parsed once into a struct (the library's, internal.h);
 * the handle carries errors, and the text it was read from, which
 * checkpoints keep as it is.
 */
#ifndef TF_SCHEMA_H
#define TF_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "tf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A column's (a feature's) type. */
enum tf_coltype {
	TF_COL_AUTO = 0,
	TF_COL_INT64 = 1,
	TF_COL_FLOAT = 2,
	TF_COL_BYTES = 3
};

/* "int64", "float", "bytes" ("int" and "string" are accepted); -1 if bad. */
TF_API int tf_coltype_parse(const char *name);
TF_API const char *tf_coltype_name(int type);

struct tf_schema;

TF_API struct tf_schema *tf_schema_new(void);
TF_API void tf_schema_free(struct tf_schema *s);

/*
 * Parse schema JSON (what it held before is dropped).  TF_EFORMAT naming
 * origin (a file, or a checkpoint holding a copy) for anything that is
 * not a tfkit schema.
 */
TF_API int tf_schema_parse(struct tf_schema *s, const char *text,
                           const char *origin);
/* The same from a file; TF_ENOENT naming it when it cannot be read. */
TF_API int tf_schema_load(struct tf_schema *s, const char *path);
/* The text parsed (or last encoded), or "". */
TF_API const char *tf_schema_text(const struct tf_schema *s);
/*
 * Encode the schema as JSON (one line and a newline), keep it as its
 * text, and write it to path when path is not NULL (published as every
 * output is: tf/file.h).  TF_ENOMEM, or the write's TF_ECREATE/TF_EIO.
 */
TF_API int tf_schema_write(struct tf_schema *s, const char *path);

TF_API uint64_t tf_schema_rows(const struct tf_schema *s);
/* A name for each class of an int64 label, in the order of its sorted
 * values (tf-img2record: the class folders' names); models trained on
 * the data answer with them. */
TF_API int tf_schema_set_class_names(struct tf_schema *s,
                                     const char *const *names, size_t n);
/* A part of the rows (a shard, a split): how many it has. */
TF_API void tf_schema_set_rows(struct tf_schema *s, uint64_t rows);
/* The label's name, or NULL when the data has none. */
TF_API const char *tf_schema_label(const struct tf_schema *s);
TF_API size_t tf_schema_nfeatures(const struct tf_schema *s);
/* The packed list's name, or NULL for the columns layout. */
TF_API const char *tf_schema_packed(const struct tf_schema *s);
/* Feature i's name and type (TF_COL_INT64, TF_COL_FLOAT, TF_COL_BYTES). */
TF_API const char *tf_schema_feature(const struct tf_schema *s, size_t i,
                                     int *type);

/*
 * The sidecar of a records file: RECORDS.schema.json, or BASE.schema.json
 * for a shard BASE-00000-of-00004, so every shard of a set shares one.
 */
TF_API void tf_schema_sidecar(const char *records, char *out, size_t size);
/* Shard i of n of a set: BASE-0000i-of-0000N (as tf-csv2record --shards
 * and tf-records split write them, TensorFlow's naming), the name
 * tf_schema_sidecar() takes back to BASE.schema.json. */
TF_API void tf_shard_name(const char *base, long long i, long long n, char *out,
                          size_t size);

/*
 * Carry the inputs' sidecar to the sidecar of output, a file of the same
 * data: when every input shares one (one file, or the shards of one
 * set), output gets a copy; rows >= 0 (a part of the records) replaces
 * its row count.  Nothing is written for standard input or output, a
 * device or FIFO output, inputs of several sets, or inputs without a
 * sidecar.  TF_EFORMAT for a sidecar that is not a schema; write errors.
 */
TF_API int tf_schema_carry(struct tf_schema *s, const char *const *inputs,
                           size_t ninputs, const char *output, int64_t rows);

/*
 * A survey of what records hold (tf-records schema): per feature, its
 * kind (TF_KIND_*, or -1 when records disagree), how many records have
 * it, and the fewest and most values it has.  Features in name order.
 */
struct tf_example;
struct tf_survey;
struct tf_survey_feature {
	const char *name;
	int kind;
	uint64_t records;
	size_t min_len, max_len;
};
TF_API struct tf_survey *tf_survey_new(void);
TF_API void tf_survey_free(struct tf_survey *s);
TF_API int tf_survey_add(struct tf_survey *s, struct tf_example *ex);
TF_API uint64_t tf_survey_records(const struct tf_survey *s);
TF_API size_t tf_survey_count(struct tf_survey *s);
/* Feature i (name order); TF_EINVAL past the end. */
TF_API int tf_survey_get(struct tf_survey *s, size_t i,
                         struct tf_survey_feature *f);
/* {"records":N,"features":[{"name","kind","records","min_len",
 * "max_len"}...]} (the caller frees it). */
TF_API char *tf_survey_json(struct tf_survey *s);
/*
 * Infer a schema from a survey, as TFDV's schema inference does: the
 * label (NULL: "label") must be one number in every record (int64: its
 * classes are the values seen; float: regression); each other feature
 * present in every record with one value is a column (float or int64,
 * with the statistics of the records surveyed; bytes, a categorical
 * feature with its vocabulary), one float list of a fixed length is
 * the packed layout, and the first feature list (a SequenceExample's)
 * or list of varying length in every record is a sequence (its longest
 * its max_length; tokens with their vocabulary).  The features left out
 * (mixed kinds, missing in some records, a second list or sequence) are
 * named in skipped (size bytes).  TF_EFORMAT on sv when the label is
 * missing or not a number.
 */
TF_API int tf_survey_schema(struct tf_survey *sv, const char *label,
                            struct tf_schema *s, char *skipped, size_t size);

#ifdef __cplusplus
}
#endif
#endif
