/*
 * serving.c - TensorFlow Serving REST bodies: requests parsed (jansson)
 * into standardised rows, responses and metadata written in TF Serving's
 * shapes.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "tf/batch.h"
#include "tf/export.h"
#include "tf/image.h"
#include "tf/serving.h"

#include "columns_private.h"

uint64_t
tfi_request_quick_hits(const struct tf_request *q)
{
	return q->quick_hits;
}

void
tfi_request_no_quick(struct tf_request *q, int on)
{
	q->no_quick = on;
}

struct tf_request *
tf_request_new(void)
{
	return calloc(1, sizeof(struct tf_request));
}

void
tf_request_free(struct tf_request *q)
{
	if (q != NULL) {
		tf_batch_release(&q->in);
		free(q->pred);
		free(q->seen);
		tfi_buf_free(&q->out);
		tfi_buf_free(&q->raw);
		tfi_buf_free(&q->train);
		tf_image_free(q->img);
		/* the gRPC parts, through the hook serving_pb.c set when it
		 * decoded (this file calls nothing of that one's) */
		if (q->release_pb != NULL) {
			q->release_pb(q);
		}
		free(q);
	}
}

size_t
tf_request_rows(const struct tf_request *q)
{
	return q->in.rows;
}

const struct tf_batch *
tf_request_batch(const struct tf_request *q)
{
	return &q->in;
}

float *
tf_request_outputs(struct tf_request *q)
{
	return q->pred;
}

int
tf_request_predict(struct tf_request *q, struct tf_model *m)
{
	int rc = tf_model_predict(m, &q->in, q->pred);
	return rc == TF_OK ? TF_OK : tfi_set_error(q, rc, "%s", tf_errmsg(m));
}

int
tf_format_serving_float(char *buf, size_t size, float v)
{
	if (isnan(v)) {
		return snprintf(buf, size, "NaN");
	}
	if (isinf(v)) {
		return snprintf(buf, size, v > 0 ? "Infinity" : "-Infinity");
	}
	int n = snprintf(buf, size, "%.6g", (double)v);
	if (strtof(buf, NULL) != v) {
		n = snprintf(buf, size, "%.9g", (double)v);
	}
	if (n > 0 && (size_t)n + 2 < size && strpbrk(buf, ".e") == NULL) {
		memcpy(buf + n, ".0", 3);
		n += 2;
	}
	return n;
}

/* ---- parsing --------------------------------------------------------------
 */

int
tfi_request_bad(struct tf_request *q, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tfi_set_errorv(q, TF_EINVAL, fmt, ap);
	va_end(ap);
	return TF_EINVAL;
}

int
tfi_request_grow(struct tf_request *q, size_t rows)
{
	if (rows <= q->in.capacity && q->pred != NULL) {
		return TF_OK;
	}
	size_t cap = q->in.capacity ? q->in.capacity : 16;
	while (cap < rows) {
		cap *= 2;
	}
	float *pred = realloc(q->pred, cap * (size_t)q->nout * sizeof *pred);
	if (pred != NULL) {
		q->pred = pred;
	}
	if (pred == NULL || tf_batch_reserve(&q->in, cap) != TF_OK) {
		return tfi_set_error(q, TF_ENOMEM, "out of memory");
	}
	return TF_OK;
}

int
tfi_request_room(struct tf_request *q, size_t n, size_t max_rows,
                 const char *what)
{
	if (max_rows && n > max_rows) {
		return tfi_request_bad(q, "%zu %s, more than the limit of %zu",
		                       n, what, max_rows);
	}
	return tfi_request_grow(q, n);
}

/* The column of a signature input, or -1. */
int64_t
tfi_serving_column(const struct tf_model *m, const char *name)
{
	struct tf_columns *cols = tf_model_columns((struct tf_model *)m);
	int64_t c = tf_columns_find_column(cols, name);
	return c >= 0 && tf_columns_column_kind(cols, c) != TF_COLUMN_DERIVED
	           ? c
	           : -1;
}

/* Inputs of the signature: the row's columns but the derived ones (the
 * last). */
int64_t
tfi_serving_ninputs(const struct tf_model *m)
{
	struct tf_layout l;
	tf_columns_layout(tf_model_columns((struct tf_model *)m), &l);
	return l.numeric + l.categorical;
}

/* Whether the signature is one dense input "x" (libsvm rows). */
static int
dense_input(const struct tf_model *m)
{
	int is_int;
	float mean, inv;
	return tf_columns_column(tf_model_columns((struct tf_model *)m), 0,
	                         &is_int, &mean, &inv) == NULL;
}

/* A JSON value as one float: a number, true/false (examples only), or a
 * list holding one number. */
static int
number(struct tf_request *q, json_t *v, int bools, const char *what, float *out)
{
	if (json_is_array(v) && json_array_size(v) == 1) {
		v = json_array_get(v, 0);
	}
	if (json_is_number(v)) {
		*out = (float)json_number_value(v);
		return TF_OK;
	}
	if (bools && json_is_boolean(v)) {
		*out = json_is_true(v) ? 1.0f : 0.0f;
		return TF_OK;
	}
	return tfi_request_bad(q, "%s: expected a number, got %s", what,
	                       json_is_string(v)   ? "a string"
	                       : json_is_array(v)  ? "a list"
	                       : json_is_object(v) ? "an object"
	                       : json_is_null(v)   ? "null"
	                                           : "a boolean");
}

/* The value of input column c of row r: a number, or for a categorical
 * column a string (its id). */
static int
value(struct tf_request *q, const struct tf_model *m, int64_t c, json_t *v,
      int bools, const char *what, size_t r)
{
	struct tf_columns *cols = tf_model_columns((struct tf_model *)m);
	if (tf_columns_column_kind(cols, c) != TF_COLUMN_CATEGORICAL) {
		return number(q, v, bools, what,
		              &q->in.x[r * (size_t)q->in.width + (size_t)c]);
	}
	if (json_is_array(v) && json_array_size(v) == 1) {
		v = json_array_get(v, 0);
	}
	if (!json_is_string(v)) {
		return tfi_request_bad(
		    q, "%s: expected a string (a categorical feature)", what);
	}
	q->in.ids[r * (size_t)q->in.id_width + (size_t)(c - q->in.width)] =
	    tf_columns_category(cols, c, json_string_value(v),
	                        json_string_length(v));
	return TF_OK;
}

/* value()'s usual case, with no message to prepare: a number for a
 * numeric column.  0 when it is not that (value() then says what). */
static inline int
quick_value(struct tf_request *q, const struct tf_model *m, int64_t c,
            json_t *v, size_t r)
{
	if (!json_is_number(v) ||
	    tf_columns_column_kind(tf_model_columns((struct tf_model *)m), c) ==
	        TF_COLUMN_CATEGORICAL) {
		return 0;
	}
	q->in.x[r * (size_t)q->in.width + (size_t)c] =
	    (float)json_number_value(v);
	return 1;
}

/* Whether key names an input that is a list of several columns (the
 * packed features of a model trained on tf-csv2record --pack-features
 * records); it into *in. */
static int
list_named(const struct tf_model *m, const char *key, struct tfi_input *in)
{
	return tfi_columns_input(tf_model_columns((struct tf_model *)m), key,
	                         in) &&
	       in->list;
}

/* Such an input's list of numbers, v, into row r. */
static int
list_values(struct tf_request *q, const struct tfi_input *in, const char *key,
            json_t *v, const char *what, size_t r)
{
	if (!json_is_array(v) || json_array_size(v) != (size_t)in->width) {
		return tfi_request_bad(q,
		                       "%s: input '%s' takes a list of %lld "
		                       "numbers",
		                       what, key, (long long)in->width);
	}
	float *x = q->in.x + r * (size_t)q->in.width + (size_t)in->col;
	for (int64_t k = 0; k < in->width; k++) {
		json_t *e = json_array_get(v, (size_t)k);
		if (!json_is_number(e)) {
			return tfi_request_bad(
			    q, "%s: input '%s' element %lld is not a number",
			    what, key, (long long)k);
		}
		x[k] = (float)json_number_value(e);
	}
	return TF_OK;
}

/* A list of every input in signature order into row r. */
static int
dense_row(struct tf_request *q, const struct tf_model *m, json_t *v,
          const char *what, size_t r)
{
	int64_t n = tfi_serving_ninputs(m);
	if (!json_is_array(v) || (int64_t)json_array_size(v) != n) {
		return tfi_request_bad(
		    q,
		    "%s: expected a list of %lld numbers (every feature "
		    "in signature order)",
		    what, (long long)n);
	}
	for (int64_t c = 0; c < n; c++) {
		json_t *e = json_array_get(v, (size_t)c);
		if (quick_value(q, m, c, e, r)) {
			continue;
		}
		char w2[96];
		snprintf(w2, sizeof w2, "%s: element %lld", what, (long long)c);
		if (json_is_array(e) || value(q, m, c, e, 0, w2, r) != TF_OK) {
			return json_is_array(e)
			           ? tfi_request_bad(q, "%s is not a number",
			                             w2)
			           : TF_EINVAL;
		}
	}
	return TF_OK;
}

int
tfi_request_image(struct tf_request *q, const struct tf_image_view *v,
                  const void *data, size_t n, const char *what, size_t r)
{
	if (q->img == NULL && (q->img = tf_image_new()) == NULL) {
		return tfi_set_error(q, TF_ENOMEM, "out of memory");
	}
	int rc = tf_image_decode(q->img, data, n);
	if (rc == TF_ENOMEM) {
		return tfi_set_error(q, rc, "out of memory");
	}
	if (rc != TF_OK) {
		return tfi_request_bad(q, "%s: %s", what, tf_errmsg(q->img));
	}
	tf_image_floats(q->img, v, q->in.x + r * (size_t)q->in.width);
	return TF_OK;
}

/* A nested list of numbers ([H][W][C], or flat) into x, up to width of
 * them; the count read, or -1 when an element is not a number. */
static int64_t
tensor_values(json_t *v, float *x, int64_t width, int depth)
{
	if (json_is_number(v)) {
		if (width > 0) {
			*x = (float)json_number_value(v);
		}
		return 1;
	}
	if (!json_is_array(v) || depth > 3) {
		return -1;
	}
	int64_t k = 0;
	for (size_t i = 0; i < json_array_size(v); i++) {
		int64_t got =
		    tensor_values(json_array_get(v, i), x + k,
		                  width - k > 0 ? width - k : 0, depth + 1);
		if (got < 0) {
			return -1;
		}
		k += got;
	}
	return k;
}

/* An image model's instance: {"b64": encoded image}, a float tensor
 * [H][W][C] (scaled as the model reads images), or either under the
 * input's name, as TensorFlow Serving's clients send them. */
static int
image_instance(struct tf_request *q, const struct tf_model *m, json_t *v,
               const struct tf_image_view *iv, const char *what, size_t i)
{
	struct tf_columns *cols = tf_model_columns((struct tf_model *)m);
	const char *input = cols->in[0].name;
	if (json_is_object(v) && json_object_get(v, "b64") == NULL) {
		json_t *named = json_object_get(v, input);
		if (named == NULL || json_object_size(v) != 1) {
			return tfi_request_bad(
			    q,
			    "%s: expected {\"b64\": an encoded image}, "
			    "[%d][%d][%d] numbers, or either as the input "
			    "'%s'",
			    what, iv->height, iv->width, iv->channels, input);
		}
		v = named;
	}
	json_t *b64 = json_object_get(v, "b64");
	if (json_is_object(v)) {
		q->raw.len = 0;
		int bad =
		    !json_is_string(b64) || json_object_size(v) != 1
		        ? 1
		        : tfi_base64_decode(&q->raw, json_string_value(b64),
		                            json_string_length(b64));
		if (bad < 0) {
			return tfi_set_error(q, TF_ENOMEM, "out of memory");
		}
		if (bad) {
			return tfi_request_bad(
			    q, "%s: \"b64\" is not base64 text", what);
		}
		return tfi_request_image(q, iv, q->raw.data, q->raw.len, what,
		                         i);
	}
	int64_t width = q->in.width;
	int64_t got = tensor_values(v, q->in.x + i * (size_t)width, width, 0);
	if (got != width) {
		return tfi_request_bad(q,
		                       "%s: expected an encoded image "
		                       "({\"b64\": ...}) or %lld numbers "
		                       "([%d][%d][%d])",
		                       what, (long long)width, iv->height,
		                       iv->width, iv->channels);
	}
	return TF_OK;
}

int
tfi_request_seq_kind(const struct tf_model *m)
{
	const struct seqf *sq = tf_model_columns((struct tf_model *)m)->seq;
	return sq == NULL                 ? -1
	       : !sq->tokens              ? TFI_SEQ_NUMBERS
	       : sq->type == TF_COL_BYTES ? TFI_SEQ_STRINGS
	                                  : TFI_SEQ_INTEGERS;
}

/* Row r's sequence (input in) emptied: no step, no token. */
static void
seq_clear(struct tf_request *q, const struct seqf *sq,
          const struct tfi_input *in, size_t r)
{
	int64_t *ids = q->in.ids + r * (size_t)q->in.id_width;
	float *x = q->in.x + r * (size_t)q->in.width + (size_t)in->col;
	for (int64_t j = 0; j < in->width && !sq->tokens; j++) {
		x[j] = 0.0f;
	}
	for (int64_t j = 0; j < in->steps && sq->tokens; j++) {
		ids[sq->col + j] = -1;
	}
}

void
tfi_request_seq_row(struct tf_request *q, const struct tf_model *m,
                    const struct tfi_input *in, size_t r, int64_t len,
                    const void *const *tok, const size_t *tok_len,
                    const int64_t *itok, const float *vals)
{
	const struct seqf *sq = tf_model_columns((struct tf_model *)m)->seq;
	int64_t fw = in->width / in->steps;
	seq_clear(q, sq, in, r);
	len = len < in->steps ? len : in->steps;
	int64_t *ids = q->in.ids + r * (size_t)q->in.id_width;
	float *x = q->in.x + r * (size_t)q->in.width + (size_t)in->col;
	for (int64_t j = 0; j < len; j++) {
		if (!sq->tokens) {
			memcpy(x + j * fw, vals + j * fw,
			       (size_t)fw * sizeof *x);
		} else if (sq->type == TF_COL_BYTES) {
			ids[sq->col + j] = tfi_columns_category_id(
			    &sq->tok, tok[j], tok_len[j]);
		} else {
			ids[sq->col + j] =
			    tfi_columns_int_token_id(&sq->tok, itok[j]);
		}
	}
	ids[sq->len_col] = len;
}

/* A sequence input's value in row r: a list of its steps (ragged: as
 * many as the row has; past the model's max_length cut, as training
 * reads them), each a token (a string, or an integer for int64 tokens)
 * or step_width numbers (a number, or a list of them). */
static int
sequence_value(struct tf_request *q, const struct tf_model *m,
               const struct tfi_input *in, json_t *v, const char *what,
               size_t r)
{
	struct tf_columns *cols = tf_model_columns((struct tf_model *)m);
	const struct seqf *sq = cols->seq;
	int64_t fw = in->width / in->steps;
	if (!json_is_array(v)) {
		return tfi_request_bad(q,
		                       "%s: input '%s' is a sequence: a list "
		                       "of its steps",
		                       what, in->name);
	}
	int64_t len = (int64_t)json_array_size(v);
	len = len < in->steps ? len : in->steps;
	int64_t *ids = q->in.ids + r * (size_t)q->in.id_width;
	float *x = q->in.x + r * (size_t)q->in.width + (size_t)in->col;
	seq_clear(q, sq, in, r);
	for (int64_t j = 0; j < len; j++) {
		json_t *e = json_array_get(v, (size_t)j);
		if (sq->tokens && sq->type == TF_COL_BYTES &&
		    json_is_string(e)) {
			ids[sq->col + j] = tfi_columns_category_id(
			    &sq->tok, json_string_value(e),
			    json_string_length(e));
		} else if (sq->tokens && sq->type == TF_COL_INT64 &&
		           json_is_integer(e)) {
			ids[sq->col + j] = tfi_columns_int_token_id(
			    &sq->tok, (int64_t)json_integer_value(e));
		} else if (!sq->tokens &&
		           (json_is_number(e) || json_is_array(e)) &&
		           tensor_values(e, x + j * fw, fw, 2) == fw) {
			continue;
		} else {
			return tfi_request_bad(
			    q, "%s: input '%s' step %lld: expected %s", what,
			    in->name, (long long)j,
			    sq->tokens ? (sq->type == TF_COL_BYTES
			                      ? "a string (a token)"
			                      : "an integer (a token)")
			    : fw == 1  ? "a number"
			               : "a list of the step's numbers");
		}
	}
	ids[sq->len_col] = len;
	return TF_OK;
}

/* A sparse id as JSON gives it: an integer (int64's bits, as TensorFlow
 * keeps uint64 ids), or a string of digits for one past 2^63-1. */
int
tfi_json_id(json_t *e, uint64_t *out)
{
	if (json_is_integer(e)) {
		*out = (uint64_t)json_integer_value(e);
		return 1;
	}
	const char *t = json_string_value(e);
	size_t n = t ? json_string_length(e) : 0;
	uint64_t u = 0;
	for (size_t k = 0; k < n; k++) {
		unsigned d = (unsigned)(unsigned char)t[k] - '0';
		if (d > 9 || u > (UINT64_MAX - d) / 10) {
			return 0;
		}
		u = u * 10 + d;
	}
	*out = u;
	return n > 0;
}

int
tfi_request_bag_row(struct tf_request *q, const struct tf_model *m,
                    const char *what, size_t r, size_t n, size_t nv)
{
	int64_t width, vocab;
	tf_columns_bag(tf_model_columns((struct tf_model *)m), &width, &vocab);
	if (n > (size_t)width) {
		return tfi_request_bad(q,
		                       "%s: %zu ids; the model reads at most "
		                       "%lld a row (its training data's most)",
		                       what, n, (long long)width);
	}
	if (nv != 0 && nv != n) {
		return tfi_request_bad(q, "%s: %zu ids but %zu values", what, n,
		                       nv);
	}
	float *x = q->in.x + r * (size_t)q->in.width;
	int64_t *row = q->in.ids + r * (size_t)q->in.id_width;
	for (int64_t k = 0; k < width; k++) {
		row[k] = -1; /* no id */
		x[k] = 0.0f;
	}
	return TF_OK;
}

int
tfi_request_bag_id(struct tf_request *q, const struct tf_model *m,
                   const char *what, size_t r, size_t k, uint64_t id,
                   float value)
{
	struct tf_columns *cols = tf_model_columns((struct tf_model *)m);
	int64_t width, vocab;
	tf_columns_bag(cols, &width, &vocab);
	int64_t t;
	int take = tfi_bag_take(cols, id, q->training, &t);
	if (take == 0) {
		return TF_OK; /* an id the model never saw: nothing */
	}
	if (take < 0) {
		return tf_columns_bag_vocabulary(cols)
		           ? tfi_request_bad(q,
		                             "%s: id %llu is not one of "
		                             "the model's %lld ids (its "
		                             "id vocabulary, without "
		                             "out-of-vocabulary buckets): "
		                             "it cannot learn it",
		                             what, (unsigned long long)id,
		                             (long long)vocab)
		           : tfi_request_bad(
		                 q,
		                 "%s: id %llu is beyond the model's (0 "
		                 "to %lld)",
		                 what, (unsigned long long)id,
		                 (long long)vocab - 1);
	}
	q->in.ids[r * (size_t)q->in.id_width + k] = t;
	q->in.x[r * (size_t)q->in.width + k] = value;
	return TF_OK;
}

/* A row of a sparse model (its ids as a bag): {"ids": [...], "values":
 * [...]}, the values optional (1 each), as TF Serving's clients send a
 * VarLenFeature's; as many ids as training's rows held at most. */
static int
bag_row(struct tf_request *q, const struct tf_model *m, json_t *v,
        const char *what, size_t r)
{
	json_t *ids = json_is_object(v) ? json_object_get(v, "ids") : NULL;
	json_t *vals = json_is_object(v) ? json_object_get(v, "values") : NULL;
	/* numeric features beside the ids: their columns after the bag's */
	int64_t bw, bv, width = q->in.width;
	tf_columns_bag(tf_model_columns((struct tf_model *)m), &bw, &bv);
	if (!json_is_array(ids) || (vals != NULL && !json_is_array(vals)) ||
	    json_object_size(v) != 1 + (vals != NULL) + (size_t)(width - bw)) {
		return tfi_request_bad(
		    q,
		    "%s: expected {\"ids\": [...], \"values\": [...]%s} (a "
		    "model of sparse ids%s; the values are optional)",
		    what, width > bw ? ", NAME: number, ..." : "",
		    width > bw ? " and numeric features, each named" : "");
	}
	const char *key;
	json_t *val;
	json_object_foreach(v, key, val)
	{
		if (strcmp(key, "ids") == 0 || strcmp(key, "values") == 0) {
			continue;
		}
		int64_t c = tfi_serving_column(m, key);
		if (c < bw || c >= width || !json_is_number(val)) {
			return tfi_request_bad(
			    q,
			    "%s: '%s' is not one of the model's "
			    "numeric features, a number",
			    what, key);
		}
		q->in.x[r * (size_t)width + (size_t)c] =
		    (float)json_number_value(val);
	}
	size_t n = json_array_size(ids);
	if (tfi_request_bag_row(q, m, what, r, n,
	                        vals ? json_array_size(vals) : 0) != TF_OK) {
		return TF_EINVAL;
	}
	for (size_t k = 0; k < n; k++) {
		uint64_t u;
		json_t *e = vals ? json_array_get(vals, k) : NULL;
		if (!tfi_json_id(json_array_get(ids, k), &u)) {
			return tfi_request_bad(
			    q,
			    "%s: id %zu: expected an integer (a string of "
			    "digits past 2^63-1)",
			    what, k);
		}
		if (e != NULL && !json_is_number(e)) {
			return tfi_request_bad(
			    q, "%s: value %zu: expected a number", what, k);
		}
		if (tfi_request_bag_id(q, m, what, r, k, u,
		                       e ? (float)json_number_value(e)
		                         : 1.0f) != TF_OK) {
			return TF_EINVAL;
		}
	}
	return TF_OK;
}

/* One predict instance: {input: value} with every input, a dense list,
 * or a bare number for a one-feature model. */
static int
instance(struct tf_request *q, const struct tf_model *m, json_t *v, size_t i)
{
	char what[64];
	snprintf(what, sizeof what, "instance %zu", i);
	int64_t bw, bv;
	if (tf_columns_bag(tf_model_columns((struct tf_model *)m), &bw, &bv)) {
		return bag_row(q, m, v, what, i);
	}
	struct tf_image_view iv;
	if (tf_columns_image(tf_model_columns((struct tf_model *)m), &iv)) {
		return image_instance(q, m, v, &iv, what, i);
	}
	int64_t n = tfi_serving_ninputs(m);
	if (json_is_array(v) && (n > 1 || json_array_size(v) != 1 ||
	                         json_is_number(json_array_get(v, 0)))) {
		return dense_row(q, m, v, what, i);
	}
	if (json_is_number(v) && n == 1) {
		q->in.x[i * (size_t)q->in.width] = (float)json_number_value(v);
		return TF_OK;
	}
	if (!json_is_object(v)) {
		return tfi_request_bad(
		    q,
		    "%s: expected an object of named inputs or a list "
		    "of %lld values",
		    what, (long long)n);
	}
	if (dense_input(m)) {
		json_t *x = json_object_get(v, "x");
		if (x == NULL || json_object_size(v) != 1) {
			return tfi_request_bad(
			    q, "%s: expected the one input 'x'", what);
		}
		return dense_row(q, m, x, what, i);
	}
	const char *key;
	json_t *val;
	size_t seen = 0;
	int seq_seen = 0;
	json_object_foreach(v, key, val)
	{
		int64_t c = tfi_serving_column(m, key);
		struct tfi_input li;
		if (c < 0 &&
		    tfi_columns_input(tf_model_columns((struct tf_model *)m),
		                      key, &li) &&
		    li.sequence) {
			int rc = sequence_value(q, m, &li, val, what, i);
			if (rc != TF_OK) {
				return rc;
			}
			seen +=
			    li.categorical || li.is_int ? 0 : (size_t)li.width;
			seq_seen = 1;
			continue;
		}
		if (c < 0 && list_named(m, key, &li)) {
			int rc = list_values(q, &li, key, val, what, i);
			if (rc != TF_OK) {
				return rc;
			}
			seen += (size_t)li.width;
			continue;
		}
		if (c < 0) {
			return tfi_request_bad(q, "%s: unknown input '%s'",
			                       what, key);
		}
		if (!quick_value(q, m, c, val, i)) {
			char w2[160];
			snprintf(w2, sizeof w2, "%s: input '%s'", what, key);
			if (value(q, m, c, val, 0, w2, i) != TF_OK) {
				return TF_EINVAL;
			}
		}
		seen++;
	}
	const struct seqf *sq = tf_model_columns((struct tf_model *)m)->seq;
	if (sq != NULL && !seq_seen) {
		return tfi_request_bad(q, "%s: missing input '%s' (a sequence)",
		                       what, sq->name);
	}
	if ((int64_t)seen != tfi_serving_ninputs(m)) {
		/* Name the first missing input. */
		struct tf_columns *cols =
		    tf_model_columns((struct tf_model *)m);
		for (int64_t c = 0; c < tfi_serving_ninputs(m); c++) {
			int is_int;
			float mean, inv;
			const char *cn =
			    tf_columns_column(cols, c, &is_int, &mean, &inv);
			if (json_object_get(v, cn) == NULL) {
				return tfi_request_bad(
				    q,
				    "%s: missing input '%s' (the "
				    "signature has %lld)",
				    what, cn,
				    (long long)tfi_serving_ninputs(m));
			}
		}
	}
	return TF_OK;
}

/* Columnar "inputs" of a sparse model: {"ids": [[...], ...], "values":
 * [[...], ...]}, a list a row, and any numeric feature's list of a value
 * a row: each row as bag_row() takes it. */
static int
bag_columns(struct tf_request *q, const struct tf_model *m, json_t *in,
            size_t max_rows)
{
	json_t *ids = json_is_object(in) ? json_object_get(in, "ids") : NULL;
	size_t n = json_array_size(ids);
	const char *key;
	json_t *val;
	int same = json_is_array(ids) && n > 0;
	json_object_foreach(in, key, val)
	{
		same = same && json_is_array(val) && json_array_size(val) == n;
	}
	if (!same) {
		return tfi_request_bad(q,
		                       "'inputs': expected {\"ids\": [[...], "
		                       "...], \"values\": [[...], ...]}, a "
		                       "list a row (the values optional), and "
		                       "any numeric feature's list as long");
	}
	int rc = tfi_request_room(q, n, max_rows, "rows");
	for (size_t r = 0; r < n && rc == TF_OK; r++) {
		char what[48];
		snprintf(what, sizeof what, "inputs row %zu", r);
		json_t *row = json_object();
		int oom = row == NULL;
		json_object_foreach(in, key, val)
		{
			oom = oom || json_object_set(
			                 row, key, json_array_get(val, r)) != 0;
		}
		rc = oom ? tfi_set_error(q, TF_ENOMEM, "out of memory")
		         : bag_row(q, m, row, what, r);
		json_decref(row);
	}
	q->in.rows = rc == TF_OK ? n : 0;
	return rc;
}

/* Columnar "inputs": {input: [row values]} or a list of dense rows. */
static int
columnar(struct tf_request *q, const struct tf_model *m, json_t *in,
         size_t max_rows)
{
	int64_t bw, bv;
	if (tf_columns_bag(tf_model_columns((struct tf_model *)m), &bw, &bv)) {
		return bag_columns(q, m, in, max_rows);
	}
	struct tf_image_view iv;
	if (tf_columns_image(tf_model_columns((struct tf_model *)m), &iv)) {
		/* images: a list of them, or the list as the input */
		const char *name =
		    tf_model_columns((struct tf_model *)m)->in[0].name;
		json_t *rows = json_is_object(in) && json_object_size(in) == 1
		                   ? json_object_get(in, name)
		                   : in;
		size_t n = json_array_size(rows);
		if (!json_is_array(rows) || n == 0) {
			return tfi_request_bad(
			    q,
			    "'inputs': expected a list of images (or of them "
			    "as the input '%s')",
			    name);
		}
		int rc = tfi_request_room(q, n, max_rows, "rows");
		for (size_t r = 0; r < n && rc == TF_OK; r++) {
			char what[48];
			snprintf(what, sizeof what, "inputs row %zu", r);
			rc = image_instance(q, m, json_array_get(rows, r), &iv,
			                    what, r);
		}
		q->in.rows = rc == TF_OK ? n : 0;
		return rc;
	}
	if (json_is_array(in) || dense_input(m)) {
		json_t *rows =
		    json_is_object(in) ? json_object_get(in, "x") : in;
		if (!json_is_array(rows) ||
		    (json_is_object(in) && json_object_size(in) != 1)) {
			return tfi_request_bad(
			    q, "'inputs': expected a list of rows");
		}
		size_t n = json_array_size(rows);
		if (n == 0) {
			return tfi_request_bad(q, "'inputs' holds no rows");
		}
		int rc = tfi_request_room(q, n, max_rows, "rows");
		if (rc != TF_OK) {
			return rc;
		}
		for (size_t r = 0; r < n; r++) {
			char what[48];
			snprintf(what, sizeof what, "inputs row %zu", r);
			if (dense_row(q, m, json_array_get(rows, r), what, r) !=
			    TF_OK) {
				return TF_EINVAL;
			}
		}
		q->in.rows = n;
		return TF_OK;
	}
	if (!json_is_object(in)) {
		return tfi_request_bad(
		    q, "'inputs': expected an object of named inputs");
	}
	const char *key;
	json_t *val;
	size_t n = 0, seen = 0;
	json_object_foreach(in, key, val)
	{
		int64_t c = tfi_serving_column(m, key);
		size_t k = json_is_array(val) ? json_array_size(val) : 1;
		if (seen == 0) {
			n = k;
			int rc = tfi_request_room(q, n, max_rows, "rows");
			if (rc != TF_OK) {
				return rc;
			}
		} else if (k != n) {
			return tfi_request_bad(
			    q,
			    "'inputs': input '%s' has %zu values, others "
			    "%zu (all inputs must share the batch size)",
			    key, k, n);
		}
		struct tfi_input li;
		if (c < 0 && list_named(m, key, &li)) {
			if (!json_is_array(val)) {
				return tfi_request_bad(
				    q,
				    "'inputs': input '%s' takes a list of rows",
				    key);
			}
			for (size_t r = 0; r < n; r++) {
				char what[48];
				snprintf(what, sizeof what, "'inputs' row %zu",
				         r);
				int rc = list_values(q, &li, key,
				                     json_array_get(val, r),
				                     what, r);
				if (rc != TF_OK) {
					return rc;
				}
			}
			seen += (size_t)li.width;
			continue;
		}
		if (c < 0) {
			return tfi_request_bad(
			    q, "'inputs': unknown input '%s'", key);
		}
		for (size_t r = 0; r < n; r++) {
			json_t *e =
			    json_is_array(val) ? json_array_get(val, r) : val;
			if (quick_value(q, m, c, e, r)) {
				continue;
			}
			char what[160];
			snprintf(what, sizeof what,
			         "'inputs': input '%s' row %zu", key, r);
			if (value(q, m, c, e, 0, what, r) != TF_OK) {
				return TF_EINVAL;
			}
		}
		seen++;
	}
	if ((int64_t)seen != tfi_serving_ninputs(m)) {
		return tfi_request_bad(
		    q, "'inputs': %zu of the signature's %lld inputs given",
		    seen, (long long)tfi_serving_ninputs(m));
	}
	if (n == 0) {
		return tfi_request_bad(q, "'inputs' holds no rows");
	}
	q->in.rows = n;
	return TF_OK;
}

void
tf_request_set_allow_missing(struct tf_request *q, int on)
{
	q->allow_missing = on;
}

int
tfi_request_seen(struct tf_request *q)
{
	size_t ncols = (size_t)(q->in.width + q->in.id_width) + 1;
	if (q->nseen < ncols) {
		unsigned char *s = realloc(q->seen, ncols);
		if (s == NULL) {
			return tfi_set_error(q, TF_ENOMEM, "out of memory");
		}
		q->seen = s;
		q->nseen = ncols;
	}
	memset(q->seen, 0, ncols);
	return TF_OK;
}

/* The first numeric feature an example did not set, or -1. */
static int64_t
first_unset(const struct tf_request *q)
{
	for (int64_t c = 0; c < q->in.width; c++) {
		if (!q->seen[c]) {
			return c;
		}
	}
	return -1;
}

/* classify / regress "examples" (with "context"): features by name;
 * one the model has that an example lacks is an error (or, asked,
 * counts as its training mean); unknown ones are ignored, as
 * TensorFlow's parsing of Examples does. */
static int
examples(struct tf_request *q, const struct tf_model *m, json_t *root,
         size_t max_rows)
{
	json_t *ex = json_object_get(root, "examples");
	json_t *ctx = json_object_get(root, "context");
	if (!json_is_array(ex) || json_array_size(ex) == 0) {
		return tfi_request_bad(q,
		                       "'examples' must be a non-empty list");
	}
	if (ctx != NULL && !json_is_object(ctx)) {
		return tfi_request_bad(
		    q, "'context' must be an object of features");
	}
	size_t n = json_array_size(ex);
	int rc = tfi_request_room(q, n, max_rows, "examples");
	if (rc != TF_OK) {
		return rc;
	}
	struct tf_columns *cols = tf_model_columns((struct tf_model *)m);
	int dense = dense_input(m);
	size_t ncols = (size_t)(q->in.width + q->in.id_width) + 1;
	int64_t bw, bv;
	int bag = tf_columns_bag(cols, &bw, &bv);
	for (size_t r = 0; bag && r < n; r++) {
		char what[48];
		snprintf(what, sizeof what, "example %zu", r);
		if (bag_row(q, m, json_array_get(ex, r), what, r) != TF_OK) {
			return TF_EINVAL;
		}
		q->in.rows = r + 1;
	}
	for (size_t r = 0; !bag && r < n; r++) {
		json_t *e = json_array_get(ex, r);
		if (tfi_request_seen(q) != TF_OK) {
			return TF_ENOMEM;
		}
		float *row = q->in.x + r * (size_t)q->in.width;
		int64_t *ids = q->in.ids + r * (size_t)q->in.id_width;
		if (!json_is_object(e)) {
			return tfi_request_bad(
			    q,
			    "example %zu: expected an object of "
			    "features",
			    r);
		}
		for (int64_t c = 0; c < q->in.width; c++) {
			int is_int;
			float inv;
			tf_columns_column(cols, c, &is_int, &row[c], &inv);
		}
		for (int64_t k = 0; k < q->in.id_width; k++) {
			ids[k] = -1; /* missing: no id */
		}
		for (int pass = 0; pass < 2; pass++) {
			json_t *src = pass == 0 ? ctx : e;
			const char *key;
			json_t *val;
			json_object_foreach(src, key, val)
			{
				char what[160];
				snprintf(what, sizeof what,
				         "example %zu: feature '%s'", r, key);
				if (dense && strcmp(key, "x") == 0) {
					if (dense_row(q, m, val, what, r) !=
					    TF_OK) {
						return TF_EINVAL;
					}
					memset(q->seen, 1, ncols);
					continue;
				}
				struct tfi_input li;
				if (!dense && list_named(m, key, &li)) {
					if ((rc = list_values(q, &li, key, val,
					                      what, r)) !=
					    TF_OK) {
						return rc;
					}
					memset(q->seen + li.col, 1,
					       (size_t)li.width);
					continue;
				}
				int64_t c =
				    dense ? -1 : tfi_serving_column(m, key);
				if (c >= 0 &&
				    value(q, m, c, val, 1, what, r) != TF_OK) {
					return TF_EINVAL;
				}
				if (c >= 0) {
					q->seen[c] = 1;
				}
			}
		}
		int64_t c = q->allow_missing ? -1 : first_unset(q);
		if (c >= 0) {
			int is_int;
			float mean, inv;
			return tfi_request_bad(
			    q,
			    "example %zu: no feature '%s' (tf-serve "
			    "--allow-missing counts a missing feature "
			    "as its training mean)",
			    r,
			    tf_columns_column(cols, c, &is_int, &mean, &inv));
		}
	}
	q->in.rows = n;
	return TF_OK;
}

/* Start a request for model m: buffers of its shape. */
void
tfi_request_start(struct tf_request *q, const struct tf_model *m, int method)
{
	struct tf_columns *cols = tf_model_columns((struct tf_model *)m);
	tf_errclear(q);
	q->method = method;
	q->columnar = 0;
	q->in.rows = 0;
	q->out.len = 0;
	if (q->in.width != tf_columns_width(cols) ||
	    q->in.id_width != tf_columns_id_width(cols) ||
	    q->nout != tf_model_outputs(m)) {
		/* Another model's rows: start over at its widths. */
		tf_batch_release(&q->in);
		free(q->pred);
		q->pred = NULL;
		q->in.width = tf_columns_width(cols);
		q->in.id_width = tf_columns_id_width(cols);
		q->nout = tf_model_outputs(m);
	}
}

int
tf_request_set_rows(struct tf_request *q, const struct tf_model *m,
                    const struct tf_batch *b)
{
	tfi_request_start(q, m, TF_METHOD_LINES);
	if (tfi_request_grow(q, b->rows) != TF_OK) {
		return TF_ENOMEM;
	}
	if (tf_batch_append(&q->in, b) != TF_OK) {
		return tfi_set_error(q, TF_EINVAL,
		                     "rows of other widths than the model's");
	}
	return TF_OK;
}

/* ---- the usual :predict body, read without building a JSON tree --------
 *
 * {"instances": [[n, n, ...], ...]} with every row a list of the model's
 * numeric inputs: most requests are this, and jansson spends most of a
 * one-row request's time allocating the tree.  The scan accepts only
 * that shape in strict JSON (RFC 8259 numbers, whitespace anywhere
 * between tokens) and reads each number as jansson does (strtod, then to
 * float); anything else, including every error, goes to jansson.
 */
void
tfi_scan_ws(struct tfi_scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' ||
	                         *s->p == '\n' || *s->p == '\r')) {
		s->p++;
	}
}

int
tfi_scan_take(struct tfi_scan *s, char c)
{
	tfi_scan_ws(s);
	if (s->p < s->end && *s->p == c) {
		s->p++;
		return 1;
	}
	return 0;
}

static int
is_digit(const struct tfi_scan *s, const char *p)
{
	return p < s->end && *p >= '0' && *p <= '9';
}

/* A JSON number: its value as jansson gives it, as a float. */
int
tfi_scan_number(struct tfi_scan *s, float *out)
{
	tfi_scan_ws(s);
	const char *p = s->p;
	if (p < s->end && *p == '-') {
		p++;
	}
	if (!is_digit(s, p)) {
		return 0;
	}
	const char *digits = p;
	if (*p == '0') {
		p++;
	} else {
		while (is_digit(s, p)) {
			p++;
		}
	}
	int real = 0;
	if (p < s->end && *p == '.') {
		real = 1;
		if (!is_digit(s, ++p)) {
			return 0;
		}
		while (is_digit(s, p)) {
			p++;
		}
	}
	if (p < s->end && (*p == 'e' || *p == 'E')) {
		real = 1;
		p++;
		if (p < s->end && (*p == '+' || *p == '-')) {
			p++;
		}
		if (!is_digit(s, p)) {
			return 0;
		}
		while (is_digit(s, p)) {
			p++;
		}
	}
	/* a number ends before a delimiter the scan checks next; strtod
	 * stops there too */
	if (p >= s->end || (*p != ',' && *p != ']' && *p != '}' && *p != ' ' &&
	                    *p != '\t' && *p != '\n' && *p != '\r')) {
		return 0;
	}
	if (!real && p - digits > 18) {
		return 0; /* jansson's integers are int64: let it decide */
	}
	/* Clinger's fast path: a mantissa under 2^53 times or over a
	 * power of ten up to 1e22 is one correctly rounded operation, so
	 * exactly what strtod gives; other numbers go to strtod. */
	static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,
	                               1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
	                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17,
	                               1e18, 1e19, 1e20, 1e21, 1e22};
	uint64_t mant = 0;
	int nd = 0, e10 = 0, ok = 1;
	const char *q = digits;
	for (; q < p && *q >= '0' && *q <= '9'; q++) {
		if (nd > 0 || *q != '0') {
			nd++;
		}
		mant = mant * 10 + (uint64_t)(*q - '0');
	}
	if (q < p && *q == '.') {
		for (q++; q < p && *q >= '0' && *q <= '9'; q++) {
			if (nd > 0 || *q != '0') {
				nd++;
			}
			mant = mant * 10 + (uint64_t)(*q - '0');
			e10--;
		}
	}
	if (q < p) { /* the exponent */
		q++;
		int neg = *q == '-';
		q += *q == '-' || *q == '+';
		int x = 0;
		for (; q < p; q++) {
			x = x < 10000 ? x * 10 + (*q - '0') : x;
		}
		e10 += neg ? -x : x;
	}
	ok = nd <= 15 && mant < ((uint64_t)1 << 53) && e10 >= -22 && e10 <= 22;
	if (ok) {
		double v = (double)mant;
		v = e10 >= 0 ? v * pow10[e10] : v / pow10[-e10];
		*out = (float)(*s->p == '-' ? -v : v);
		s->p = p;
		return 1;
	}
	char *e;
	errno = 0;
	double v = strtod(s->p, &e);
	if (e != p || errno == ERANGE || !isfinite(v)) {
		return 0;
	}
	*out = (float)v;
	s->p = p;
	return 1;
}

/* Rows of the usual body into q; 0 when the body is anything else. */
static int
quick_instances(struct tf_request *q, const struct tf_model *m,
                const char *body, size_t len, size_t max_rows)
{
	static const char key[] = "\"instances\"";
	struct tf_columns *cols = tf_model_columns((struct tf_model *)m);
	int64_t n = tfi_serving_ninputs(m), bw, bv;
	for (int64_t c = 0; c < n; c++) {
		if (tf_columns_column_kind(cols, c) == TF_COLUMN_CATEGORICAL) {
			return 0;
		}
	}
	if (tf_columns_bag(cols, &bw, &bv)) {
		return 0; /* ids and values: bag_row() */
	}
	struct tfi_scan s = {body, body + len};
	if (!tfi_scan_take(&s, '{')) {
		return 0;
	}
	tfi_scan_ws(&s);
	if ((size_t)(s.end - s.p) < sizeof key - 1 ||
	    memcmp(s.p, key, sizeof key - 1) != 0) {
		return 0;
	}
	s.p += sizeof key - 1;
	if (!tfi_scan_take(&s, ':') || !tfi_scan_take(&s, '[')) {
		return 0;
	}
	size_t r = 0;
	do {
		if ((max_rows && r >= max_rows) ||
		    tfi_request_grow(q, r + 1) != TF_OK ||
		    !tfi_scan_take(&s, '[')) {
			return 0;
		}
		float *x = q->in.x + r * (size_t)q->in.width;
		for (int64_t c = 0; c < n; c++) {
			if ((c > 0 && !tfi_scan_take(&s, ',')) ||
			    !tfi_scan_number(&s, &x[c])) {
				return 0;
			}
		}
		if (!tfi_scan_take(&s, ']')) {
			return 0;
		}
		r++;
	} while (tfi_scan_take(&s, ','));
	if (!tfi_scan_take(&s, ']') || !tfi_scan_take(&s, '}')) {
		return 0;
	}
	tfi_scan_ws(&s);
	if (s.p != s.end) {
		return 0;
	}
	q->in.rows = r;
	return 1;
}

int
tfi_request_instances(struct tf_request *q, const struct tf_model *m,
                      struct json_t *inst, size_t max_rows)
{
	tfi_request_start(q, m, TF_METHOD_PREDICT);
	int rc =
	    tfi_request_room(q, json_array_size(inst), max_rows, "instances");
	size_t i;
	json_t *v;
	json_array_foreach(rc == TF_OK ? inst : NULL, i, v)
	{
		if ((rc = instance(q, m, v, i)) != TF_OK) {
			break;
		}
	}
	q->in.rows = rc == TF_OK ? json_array_size(inst) : 0;
	return rc;
}

/* A JSON parser's integers are int64s: a uint64 id past them is
 * refused before the ids are read, so the error says how one is sent. */
const char *
tfi_request_json_hint(const struct tf_model *m, const char *err)
{
	int64_t bw, bv;
	if (tf_columns_bag(tf_model_columns((struct tf_model *)m), &bw, &bv) &&
	    strstr(err, "too big integer") != NULL) {
		return "; an id past 2^63-1 is sent as a string of its digits "
		       "(\"18446744073709551615\") or as the int64 of the same "
		       "bits (-1)";
	}
	return "";
}

int
tf_request_parse(struct tf_request *q, const struct tf_model *m, int method,
                 const char *body, size_t len, size_t max_rows)
{
	struct tf_columns *cols = tf_model_columns((struct tf_model *)m);
	tfi_request_start(q, m, method);
	if (method == TF_METHOD_PREDICT && !q->no_quick &&
	    quick_instances(q, m, body, len, max_rows)) {
		q->quick_hits++;
		tf_columns_standardize(cols, q->in.x, q->in.ids, q->in.rows);
		return TF_OK;
	}
	q->in.rows = 0;
	json_error_t je;
	json_t *root = json_loadb(body, len, 0, &je);
	if (root == NULL) {
		return tfi_request_bad(
		    q, "JSON Parse error: %s (line %d, column %d)%s", je.text,
		    je.line, je.column, tfi_request_json_hint(m, je.text));
	}
	int rc = TF_OK;
	if (method == TF_METHOD_INSTANCE) {
		rc = tfi_request_grow(q, 1);
		rc = rc ? rc : instance(q, m, root, 0);
		q->in.rows = rc == TF_OK ? 1 : 0;
		goto out;
	}
	if (!json_is_object(root)) {
		rc = tfi_request_bad(q,
		                     "the request body must be a JSON object");
		goto out;
	}
	json_t *sig = json_object_get(root, "signature_name");
	const char *sn = json_string_value(sig);
	if (sig != NULL &&
	    (sn == NULL ||
	     (strcmp(sn, "serving_default") != 0 && strcmp(sn, "") != 0 &&
	      strcmp(sn, method == TF_METHOD_REGRESS
	                     ? "regression"
	                     : "classification") != 0))) {
		rc = tfi_request_bad(
		    q,
		    "Serving signature name: \"%s\" not found in signature "
		    "def",
		    sn ? sn : "(not a string)");
		goto out;
	}
	if (method != TF_METHOD_PREDICT) {
		rc = examples(q, m, root, max_rows);
		goto out;
	}
	json_t *inst = json_object_get(root, "instances");
	json_t *in = json_object_get(root, "inputs");
	if (inst != NULL && in != NULL) {
		rc = tfi_request_bad(
		    q, "Only one of 'instances' or 'inputs' may be "
		       "specified");
	} else if (inst == NULL && in == NULL) {
		rc = tfi_request_bad(q, "Missing 'inputs' or 'instances' key");
	} else if (in != NULL) {
		q->columnar = 1;
		rc = columnar(q, m, in, max_rows);
	} else if (!json_is_array(inst) || json_array_size(inst) == 0) {
		rc = tfi_request_bad(q, "'instances' must be a non-empty list");
	} else if ((rc = tfi_request_room(q, json_array_size(inst), max_rows,
	                                  "instances")) == TF_OK) {
		size_t i;
		json_t *v;
		json_array_foreach(inst, i, v)
		{
			rc = instance(q, m, v, i);
			if (rc != TF_OK) {
				break;
			}
		}
		q->in.rows = rc == TF_OK ? json_array_size(inst) : 0;
	}
out:
	json_decref(root);
	if (rc == TF_OK) {
		tf_columns_standardize(cols, q->in.x, q->in.ids, q->in.rows);
	} else {
		q->in.rows = 0;
	}
	return rc;
}

/* ---- responses ----------------------------------------------------------- */

static int
put(struct tfi_buf *b, const char *s)
{
	return tfi_buf_append(b, s, strlen(s));
}

static int
put_float(struct tfi_buf *b, float v)
{
	char num[48];
	tf_format_serving_float(num, sizeof num, v);
	return put(b, num);
}

int64_t
tfi_serving_argmax(const float *p, int64_t n)
{
	int64_t k = 0;
	for (int64_t c = 1; c < n; c++) {
		k = p[c] > p[k] ? c : k;
	}
	return k;
}

static int
put_probs(struct tfi_buf *b, const float *p, int64_t n)
{
	int rc = put(b, "[");
	for (int64_t c = 0; c < n && rc == 0; c++) {
		rc = (c ? put(b, ",") : 0) || put_float(b, p[c]);
	}
	return rc || put(b, "]");
}

/* A class's label as a JSON string (escaped once, by the model). */
static int
put_label(struct tfi_buf *b, const struct tf_model *m, int64_t k)
{
	return put(b, tfi_model_label_json(m, k));
}

/* One row's prediction in row format: the value of a regression; the
 * probabilities, the most probable class's index (class_ids) and its
 * label as the data spells it (classes) for a classifier. */
static int
put_row(struct tfi_buf *b, const struct tf_model *m, const float *p,
        int64_t nout, int regression)
{
	if (regression) {
		return put_float(b, p[0]);
	}
	char k[32];
	int64_t c = tfi_serving_argmax(p, nout);
	snprintf(k, sizeof k, "%lld", (long long)c);
	return put(b, "{\"probabilities\":") || put_probs(b, p, nout) ||
	       put(b, ",\"class_ids\":") || put(b, k) ||
	       put(b, ",\"classes\":") || put_label(b, m, c) || put(b, "}");
}

int
tf_prediction_row(struct tf_request *q, const struct tf_model *m,
                  const float *p, const char **text, size_t *len)
{
	struct tfi_buf *b = &q->out;
	b->len = 0;
	int task = tf_columns_task(tf_model_columns((struct tf_model *)m));
	if (put_row(b, m, p, tf_model_outputs(m), task == TF_TASK_REGRESSION) !=
	    0) {
		return tfi_set_error(q, TF_ENOMEM, "out of memory");
	}
	*text = (const char *)b->data;
	*len = b->len;
	return TF_OK;
}

int
tf_request_respond(struct tf_request *q, const struct tf_model *m,
                   const char **body, size_t *len)
{
	struct tfi_buf *b = &q->out;
	b->len = 0;
	int task = tf_columns_task(tf_model_columns((struct tf_model *)m));
	int reg = task == TF_TASK_REGRESSION;
	int64_t n = q->nout;
	int rc = 0;
	if (q->method == TF_METHOD_INSTANCE) {
		rc = put_row(b, m, q->pred, n, reg);
	} else if (q->method == TF_METHOD_LINES) {
		for (size_t r = 0; r < q->in.rows && rc == 0; r++) {
			rc = put_row(b, m, q->pred + r * (size_t)n, n, reg) ||
			     put(b, "\n");
		}
	} else if (q->method == TF_METHOD_CLASSIFY) {
		if (reg) {
			return tfi_request_bad(
			    q, "this model is a regression: it has no "
			       "classification signature (use "
			       ":regress or :predict)");
		}
		rc = put(b, "{\"results\":[");
		for (size_t r = 0; r < q->in.rows && rc == 0; r++) {
			rc = put(b, r ? ",[" : "[");
			for (int64_t c = 0; c < n && rc == 0; c++) {
				rc = put(b, c ? ",[" : "[") ||
				     put_label(b, m, c) || put(b, ",") ||
				     put_float(b, q->pred[r * (size_t)n + c]) ||
				     put(b, "]");
			}
			rc = rc || put(b, "]");
		}
		rc = rc || put(b, "]}");
	} else if (q->method == TF_METHOD_REGRESS) {
		if (task == TF_TASK_MULTICLASS) {
			return tfi_request_bad(
			    q, "this model is a multiclass classifier: it "
			       "has no regression signature (use "
			       ":classify or :predict)");
		}
		rc = put(b, "{\"results\":[");
		for (size_t r = 0; r < q->in.rows && rc == 0; r++) {
			/* Binary: the probability of class 1. */
			rc = (r ? put(b, ",") : 0) ||
			     put_float(b,
			               q->pred[r * (size_t)n + (reg ? 0 : 1)]);
		}
		rc = rc || put(b, "]}");
	} else if (!q->columnar) {
		rc = put(b, "{\"predictions\":[");
		for (size_t r = 0; r < q->in.rows && rc == 0; r++) {
			rc = (r ? put(b, ",") : 0) ||
			     put_row(b, m, q->pred + r * (size_t)n, n, reg);
		}
		rc = rc || put(b, "]}");
	} else if (reg) {
		rc = put(b, "{\"outputs\":[");
		for (size_t r = 0; r < q->in.rows && rc == 0; r++) {
			rc = (r ? put(b, ",") : 0) || put_float(b, q->pred[r]);
		}
		rc = rc || put(b, "]}");
	} else {
		rc = put(b, "{\"outputs\":{\"probabilities\":[");
		for (size_t r = 0; r < q->in.rows && rc == 0; r++) {
			rc = (r ? put(b, ",") : 0) ||
			     put_probs(b, q->pred + r * (size_t)n, n);
		}
		rc = rc || put(b, "],\"class_ids\":[");
		for (size_t r = 0; r < q->in.rows && rc == 0; r++) {
			char k[32];
			snprintf(k, sizeof k, "%s%lld", r ? "," : "",
			         (long long)tfi_serving_argmax(
			             q->pred + r * (size_t)n, n));
			rc = put(b, k);
		}
		rc = rc || put(b, "],\"classes\":[");
		for (size_t r = 0; r < q->in.rows && rc == 0; r++) {
			rc = (r ? put(b, ",") : 0) ||
			     put_label(b, m,
			               tfi_serving_argmax(
			                   q->pred + r * (size_t)n, n));
		}
		rc = rc || put(b, "]}}");
	}
	if (rc != 0) {
		return tfi_set_error(q, TF_ENOMEM, "out of memory");
	}
	*body = (const char *)b->data;
	*len = b->len;
	return TF_OK;
}

/* ---- metadata ------------------------------------------------------------ */

static json_t *
tensor_info(const char *name, const char *dtype, int64_t width)
{
	char tn[160];
	snprintf(tn, sizeof tn, "%s:0", name);
	json_t *dims = json_pack("[{s:s,s:s}]", "size", "-1", "name", "");
	if (width != 0) { /* -1: a sequence's steps, ragged */
		char w[32];
		snprintf(w, sizeof w, "%lld", (long long)width);
		json_array_append_new(
		    dims, json_pack("{s:s,s:s}", "size", w, "name", ""));
	}
	return json_pack("{s:s,s:{s:o,s:b},s:s}", "dtype", dtype,
	                 "tensor_shape", "dim", dims, "unknown_rank", 0, "name",
	                 tn);
}

char *
tf_model_metadata(const struct tf_model *m, const char *name, int64_t version)
{
	char *st = tf_model_signature(m);
	json_t *sig = st ? json_loads(st, 0, NULL) : NULL;
	free(st);
	if (sig == NULL) {
		return NULL;
	}
	json_t *inputs = json_object();
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(sig, "inputs"), i, e)
	{
		json_t *w = json_object_get(e, "width");
		int seq = json_is_true(json_object_get(e, "sequence")) ||
		          json_is_true(json_object_get(e, "sparse"));
		json_object_set_new(
		    inputs, json_string_value(json_object_get(e, "name")),
		    tensor_info(json_string_value(json_object_get(e, "name")),
		                json_string_value(json_object_get(e, "dtype")),
		                w     ? (int64_t)json_integer_value(w)
		                : seq ? -1
		                      : 0));
	}
	json_t *outputs = json_object();
	json_array_foreach(json_object_get(sig, "outputs"), i, e)
	{
		json_t *shape = json_object_get(e, "shape");
		const char *on = json_string_value(json_object_get(e, "name"));
		json_object_set_new(
		    outputs, on,
		    tensor_info(on,
		                json_string_value(json_object_get(e, "dtype")),
		                json_array_size(shape) > 1
		                    ? (int64_t)json_integer_value(
		                          json_array_get(shape, 1))
		                    : 0));
	}
	int task = tf_columns_task(tf_model_columns((struct tf_model *)m));
	json_t *defs = json_object();
	json_object_set_new(defs, "serving_default",
	                    json_pack("{s:O,s:O,s:s,s:{}}", "inputs", inputs,
	                              "outputs", outputs, "method_name",
	                              "tensorflow/serving/predict",
	                              "defaults"));
	if (task != TF_TASK_REGRESSION) {
		json_object_set_new(
		    defs, "classification",
		    json_pack(
		        "{s:{s:o},s:{s:o,s:o},s:s,s:{}}", "inputs", "inputs",
		        tensor_info("input_example", "DT_STRING", 0), "outputs",
		        "classes",
		        tensor_info("classes", "DT_STRING",
		                    tf_model_outputs(m)),
		        "scores",
		        tensor_info("scores", "DT_FLOAT", tf_model_outputs(m)),
		        "method_name", "tensorflow/serving/classify",
		        "defaults"));
	}
	if (task != TF_TASK_MULTICLASS) {
		json_object_set_new(
		    defs, "regression",
		    json_pack("{s:{s:o},s:{s:o},s:s,s:{}}", "inputs", "inputs",
		              tensor_info("input_example", "DT_STRING", 0),
		              "outputs", "outputs",
		              tensor_info("outputs", "DT_FLOAT", 0),
		              "method_name", "tensorflow/serving/regress",
		              "defaults"));
	}
	json_decref(inputs);
	json_decref(outputs);
	char v[32];
	snprintf(v, sizeof v, "%lld", (long long)version);
	char *prov = tf_model_provenance(m);
	/* TF Serving's metadata is a map; "tfkit" adds the feature
	 * signature and the provenance next to "signature_def". */
	json_t *o = json_pack(
	    "{s:{s:s,s:s,s:s},s:{s:{s:o},s:{s:o,s:o?}}}", "model_spec", "name",
	    name, "signature_name", "", "version", v, "metadata",
	    "signature_def", "signature_def", defs, "tfkit", "signature", sig,
	    "provenance", prov ? json_loads(prov, 0, NULL) : NULL);
	free(prov);
	char *text = o ? json_dumps(o, JSON_INDENT(1) | JSON_PRESERVE_ORDER |
	                                   JSON_REAL_PRECISION(9))
	               : NULL;
	json_decref(o);
	return text;
}

/* ---- the URL grammar ------------------------------------------------------
 */

static int
starts(const char *s, const char *p)
{
	return strncasecmp(s, p, strlen(p)) == 0;
}

static void route_error(struct tf_route *r, int status, int plain,
                        const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
route_error(struct tf_route *r, int status, int plain, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->message, sizeof r->message, fmt, ap);
	va_end(ap);
	r->kind = TF_ROUTE_ERROR;
	r->status = status;
	r->plain = plain;
}

int
tf_serving_frame(const void *msg, size_t n, char *line, size_t cap,
                 struct tf_frame *f)
{
	const char *p = msg;
	const char *nl = n ? memchr(p, '\n', n) : NULL;
	size_t ll = nl ? (size_t)(nl - p) : n;
	const char *sp = ll < cap ? memchr(p, ' ', ll) : NULL;
	if (sp == NULL) {
		return TF_EFORMAT;
	}
	memcpy(line, p, ll);
	line[ll] = '\0';
	line[sp - p] = '\0';
	f->method = line;
	f->path = line + (sp - p) + 1;
	f->body = nl ? nl + 1 : "";
	f->body_len = nl ? n - ll - 1 : 0;
	return TF_OK;
}

void
tf_serving_route(const char *method, const char *path, struct tf_route *r)
{
	memset(r, 0, sizeof *r);
	r->version = -1;
	int get = strcmp(method, "GET") == 0;
	int post = strcmp(method, "POST") == 0;
	const struct {
		const char *path;
		int kind;
	} pages[] = {{"/healthz", TF_ROUTE_HEALTH},
	             {"/readyz", TF_ROUTE_READY},
	             {"/monitoring/prometheus/metrics", TF_ROUTE_METRICS}};
	for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) {
		if (get && strcasecmp(path, pages[i].path) == 0) {
			r->kind = pages[i].kind;
			return;
		}
	}
	if (!starts(path, "/v1/")) {
		route_error(r, 404, 1, "404 Not Found");
		return;
	}
	if (!starts(path, "/v1/models/") || path[11] == '\0') {
		route_error(r, 400, 0, "Missing model name in request.");
		return;
	}
	r->model = path + 11;
	r->model_len = strcspn(r->model, "/:");
	const char *rest = r->model + r->model_len;
	if (starts(rest, "/versions/")) {
		const char *num = rest + 10;
		size_t dl = strspn(num, "0123456789");
		if (!tf_export_version(num, dl, &r->version)) {
			route_error(r, 400, 0, "Malformed request: %.8s %.400s",
			            method, path);
			return;
		}
		rest = num + dl;
	} else if (starts(rest, "/labels/")) {
		const char *l = rest + 8;
		route_error(
		    r, 404, 0,
		    "Unrecognized servable version label: %.*s (this "
		    "server assigns no labels)",
		    (int)(strcspn(l, "/:") < 400 ? strcspn(l, "/:") : 400), l);
		return;
	}
	if (*rest == '\0' && get) {
		r->kind = TF_ROUTE_STATUS;
	} else if (strcasecmp(rest, "/metadata") == 0 && get) {
		r->kind = TF_ROUTE_METADATA;
	} else if (strcasecmp(rest, ":predict") == 0 && post) {
		r->kind = TF_ROUTE_PREDICT;
	} else if (strcasecmp(rest, ":classify") == 0 && post) {
		r->kind = TF_ROUTE_CLASSIFY;
	} else if (strcasecmp(rest, ":regress") == 0 && post) {
		r->kind = TF_ROUTE_REGRESS;
	} else if (strcasecmp(rest, ":train") == 0 && post && r->version < 0) {
		r->kind = TF_ROUTE_TRAIN;
	} else {
		route_error(r, 400, 0, "Malformed request: %.8s %.400s", method,
		            path);
	}
}

void
tf_serving_not_found(char *buf, size_t size, const char *model, size_t len,
                     int64_t version)
{
	int n = len < 400 ? (int)len : 400;
	if (version >= 0) {
		snprintf(buf, size,
		         "Servable not found for request: Specific(%.*s, %lld)",
		         n, model, (long long)version);
	} else {
		snprintf(buf, size,
		         "Servable not found for request: Latest(%.*s)", n,
		         model);
	}
}

char *
tf_serving_error_body(const char *message)
{
	json_t *s = json_string(message);
	if (s == NULL) {
		/* Not UTF-8 (a path as sent): its other bytes as '?'. */
		char *c = strdup(message);
		for (char *p = c; p != NULL && *p; p++) {
			*p = (unsigned char)*p >= 0x80 ? '?' : *p;
		}
		s = c ? json_string(c) : NULL;
		free(c);
	}
	char *t = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
	json_decref(s);
	if (t == NULL) {
		return NULL;
	}
	char *body = malloc(strlen(t) + 16);
	if (body != NULL) {
		sprintf(body, "{ \"error\": %s }", t);
	}
	free(t);
	return body;
}
