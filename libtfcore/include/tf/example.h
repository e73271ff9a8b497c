/*
 * example.h - tf.train.Example: build, encode, decode (FORMATS.md section 2).
 *
 * A struct tf_example holds one Example's features in memory.  It is meant
 * to be reused record after record: tf_example_clear() keeps its storage.
 *
 * Encoding follows the writer rules of FORMATS.md 2.3 (entries sorted by
 * key, key then value, one packed run per numeric list), so TensorFlow's
 * fast parser accepts it.  tf_example_parse() is a hand-written decoder for
 * the hot path; tf_example_parse_pb() decodes with protobuf-c and serves as
 * its reference (the tests and fuzz_example check that both give the same
 * features or both an error).  Both accept packed and unpacked lists,
 * fields in any order and unknown fields; a key repeated in one Example
 * keeps its last entry.  Two inputs tf_example_parse() refuses that
 * protobuf-c takes: a feature name holding a NUL byte (protobuf-c hands
 * the name over cut short at the NUL), and a map entry giving its value
 * twice or a feature its list twice (C++ protobuf merges the two,
 * protobuf-c keeps the last or fails).
 *
 * Both read a tf.train.SequenceExample too: its context's features are
 * the features, and each feature list is one more whose values are its
 * steps' in order (struct tf_feature's steps says how many); the steps
 * of a list must be lists of one kind with as many values each.
 */
#ifndef TF_EXAMPLE_H
#define TF_EXAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "tf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tf_kind {
	TF_KIND_NONE = 0, /* a Feature with no list: "absent" to TensorFlow */
	TF_KIND_BYTES = 1,
	TF_KIND_FLOAT = 2,
	TF_KIND_INT64 = 3
};

/* "bytes", "float", "int64" or "none". */
TF_API const char *tf_kind_name(int kind);

struct tf_bytes {
	const uint8_t *data;
	size_t len;
};

/* A view of one feature, owned by the example, valid until it changes. */
struct tf_feature {
	const char *name; /* NUL-terminated; name_len excludes the NUL */
	size_t name_len;
	int kind;
	size_t count;
	const float *floats;          /* TF_KIND_FLOAT */
	const int64_t *ints;          /* TF_KIND_INT64 */
	const struct tf_bytes *bytes; /* TF_KIND_BYTES */
	/* A SequenceExample's feature list: its steps (each count / steps
	 * values, in step order); 0 for a feature of an Example or of a
	 * SequenceExample's context. */
	size_t steps;
};

struct tf_example;

TF_API struct tf_example *tf_example_new(void);
TF_API void tf_example_free(struct tf_example *ex);
/* Remove all features, keeping the storage. */
TF_API void tf_example_clear(struct tf_example *ex);

/*
 * Add a feature; the values are copied.  TF_EINVAL if the name is already
 * present.  n may be 0 (an empty list).
 */
TF_API int tf_example_add_floats(struct tf_example *ex, const char *name,
                                 const float *v, size_t n);
TF_API int tf_example_add_int64s(struct tf_example *ex, const char *name,
                                 const int64_t *v, size_t n);
TF_API int tf_example_add_bytes(struct tf_example *ex, const char *name,
                                const struct tf_bytes *v, size_t n);

/* Number of features; after a parse they are sorted by name. */
TF_API size_t tf_example_count(const struct tf_example *ex);
/* The i-th feature (0-based) into *f; TF_EINVAL if out of range. */
TF_API int tf_example_get(struct tf_example *ex, size_t i,
                          struct tf_feature *f);
/* The feature called name; TF_ENOENT if absent. */
TF_API int tf_example_find(struct tf_example *ex, const char *name,
                           struct tf_feature *f);

/* Size of the encoding, and the encoding itself into out (that size). */
TF_API size_t tf_example_encoded_size(struct tf_example *ex);
TF_API size_t tf_example_encode(struct tf_example *ex, uint8_t *out);
/* Encode into a buffer owned by ex, valid until ex changes. */
TF_API int tf_example_serialize(struct tf_example *ex, const uint8_t **out,
                                size_t *n);

/* Decode (fast path).  TF_EFORMAT with a message on malformed input. */
TF_API int tf_example_parse(struct tf_example *ex, const void *data, size_t n);
/* Decode through protobuf-c. */
TF_API int tf_example_parse_pb(struct tf_example *ex, const void *data,
                               size_t n);
/* Encode through protobuf-c (sorted entries); *out is malloc'd. */
TF_API int tf_example_serialize_pb(struct tf_example *ex, uint8_t **out,
                                   size_t *n);

/*
 * The example as one JSON object, {"name": [values], ...}, appended to a
 * malloc'd NUL-terminated string *out (which may start NULL) of length *len.
 * Floats use the shortest form that reads back exactly; NaN and infinities
 * are written NaN, Infinity, -Infinity as TensorFlow Serving does; bytes
 * that are not UTF-8 become {"b64": "..."}.
 */
TF_API int tf_example_to_json(struct tf_example *ex, char **out, size_t *len,
                              size_t *cap);

/*
 * Examples as CSV (tf-records cat --csv): the first Example's feature
 * names make the header, each Example a row of one field per header
 * feature (empty where it has none; several values space-separated;
 * RFC 4180 quoting).  tf_csv_rows_add() gives the text to write for one
 * Example (the header before the first row), valid until the next call.
 * TF_EFORMAT when an Example has a feature the header lacks.
 */
struct tf_csv_rows;
TF_API struct tf_csv_rows *tf_csv_rows_new(void);
TF_API void tf_csv_rows_free(struct tf_csv_rows *c);
TF_API int tf_csv_rows_add(struct tf_csv_rows *c, struct tf_example *ex,
                           const char **text, size_t *len);
/* The header's columns, in this order, rather than the first Example's
 * (a schema's order, the label last).  Before the first row. */
TF_API int tf_csv_rows_columns(struct tf_csv_rows *c, const char *const *names,
                               size_t n);

/* Shortest "%g" text that reads back to f (at most 9 digits). */
TF_API int tf_format_float(char *buf, size_t size, float f);

#ifdef __cplusplus
}
#endif
#endif
