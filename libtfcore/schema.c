/*
 * schema.c - the schema between the stages: parsed once into struct
 * tf_schema (internal.h), encoded from it, named, carried (tf/schema.h).
 */
#include <errno.h>
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "tf/example.h"
#include "tf/file.h"
#include "tf/image.h"
#include "tf/schema.h"

struct tf_schema *
tf_schema_new(void)
{
	return calloc(1, sizeof(struct tf_schema));
}

static void
free_strs(char **v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++) {
		free(v[i]);
	}
	free(v);
}

void
tfi_schema_clear(struct tf_schema *s)
{
	free(s->text);
	free_strs(s->sources, s->nsources);
	free(s->label.name);
	free(s->classes);
	free_strs(s->class_names, s->nclass_names);
	for (size_t i = 0; i < s->nfeatures; i++) {
		free(s->features[i].name);
	}
	free(s->features);
	free(s->packed_name);
	free_strs(s->packed_columns, s->npacked);
	for (size_t i = 0; i < s->nvocabs; i++) {
		free(s->vocabs[i].name);
		free_strs(s->vocabs[i].values, s->vocabs[i].n);
	}
	free(s->vocabs);
	free(s->image_feature);
	free(s->id_vocab);
	struct tfi_handle err = s->err;
	memset(s, 0, sizeof *s);
	s->err = err;
	s->label.packed_index = -1;
}

void
tf_schema_free(struct tf_schema *s)
{
	if (s != NULL) {
		tfi_schema_clear(s);
		free(s);
	}
}

/* ---- parsing --------------------------------------------------------------
 */

/* ---- column types ------------------------------------------------------ */

int
tf_coltype_parse(const char *name)
{
	if (strcmp(name, "int64") == 0 || strcmp(name, "int") == 0) {
		return TF_COL_INT64;
	}
	if (strcmp(name, "float") == 0) {
		return TF_COL_FLOAT;
	}
	if (strcmp(name, "bytes") == 0 || strcmp(name, "string") == 0) {
		return TF_COL_BYTES;
	}
	if (strcmp(name, "auto") == 0) {
		return TF_COL_AUTO;
	}
	return -1;
}

const char *
tf_coltype_name(int t)
{
	switch (t) {
	case TF_COL_INT64:
		return "int64";
	case TF_COL_FLOAT:
		return "float";
	case TF_COL_BYTES:
		return "bytes";
	default:
		return "auto";
	}
}

static int
col_type(const char *t)
{
	return t == NULL                 ? -1
	       : strcmp(t, "int64") == 0 ? TF_COL_INT64
	       : strcmp(t, "float") == 0 ? TF_COL_FLOAT
	       : strcmp(t, "bytes") == 0 ? TF_COL_BYTES
	                                 : -1;
}

/* A count: absent (0) or a whole number >= 0; -1 otherwise (a negative
 * one would be written back as a number no reader takes: fuzz_schema). */
static int
count(json_t *v, uint64_t *out)
{
	*out = 0;
	if (v == NULL) {
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		return -1;
	}
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

/* A feature or label description; non-zero when it has no name or a
 * type tfkit does not know. */
static int
parse_col(json_t *o, struct tfi_schema_col *c)
{
	const char *name = json_string_value(json_object_get(o, "name"));
	c->type = col_type(json_string_value(json_object_get(o, "type")));
	c->packed_index = -1;
	c->column = -1;
	if (name == NULL || c->type < 0) {
		return -1;
	}
	if ((c->name = strdup(name)) == NULL) {
		return -1;
	}
	json_t *v;
	if (json_is_integer(v = json_object_get(o, "column"))) {
		c->column = json_integer_value(v);
	}
	if (json_is_integer(v = json_object_get(o, "packed_index"))) {
		c->packed_index = json_integer_value(v);
	}
	c->max_length = c->step_width = 0;
	if ((v = json_object_get(o, "max_length")) != NULL) {
		/* a sequence: a row of max_length steps of step_width values
		 * (at most 2^24 in all: the row is allocated from them) */
		json_t *sw = json_object_get(o, "step_width");
		c->max_length = json_integer_value(v);
		c->step_width = sw == NULL ? 1 : json_integer_value(sw);
		if (!json_is_integer(v) || (sw && !json_is_integer(sw)) ||
		    c->max_length < 1 || c->step_width < 1 ||
		    c->max_length > (1 << 24) ||
		    c->step_width > (1 << 24) / c->max_length ||
		    (c->type != TF_COL_FLOAT && c->step_width != 1)) {
			return -1;
		}
		json_t *hb = json_object_get(o, "hash_buckets");
		c->hash_buckets = json_integer_value(hb);
		if (hb != NULL &&
		    (!json_is_integer(hb) || c->hash_buckets < 1 ||
		     c->hash_buckets > INT32_MAX)) {
			return -1;
		}
	}
	if (count(json_object_get(o, "present"), &c->present) != 0 ||
	    count(json_object_get(o, "missing"), &c->missing) != 0 ||
	    count(json_object_get(o, "nonfinite"), &c->nonfinite) != 0) {
		return -1;
	}
	c->binary = json_is_true(json_object_get(o, "binary"));
	c->unique = json_is_true(json_object_get(o, "unique"));
	json_t *mean = json_object_get(o, "mean"),
	       *sd = json_object_get(o, "std");
	if (json_is_number(mean) && json_is_number(sd)) {
		c->has_stats = 1;
		c->mean = json_number_value(mean);
		c->std = json_number_value(sd);
		c->min = json_number_value(json_object_get(o, "min"));
		c->max = json_number_value(json_object_get(o, "max"));
		/* statistics of float32 data are float32 numbers: one out of
		 * that range would be written back as Infinity, which no JSON
		 * reader takes (fuzz_schema found it) */
		double st[] = {c->mean, c->std, c->min, c->max};
		for (size_t k = 0; k < 4; k++) {
			if (!(fabs(st[k]) <= FLT_MAX)) {
				return -1;
			}
		}
	}
	return 0;
}

/* A JSON list of strings into a new array; -1 when one is not a string. */
static int
parse_strs(json_t *a, char ***out, size_t *n)
{
	*n = json_array_size(a);
	*out = calloc(*n + 1, sizeof **out);
	if (*out == NULL) {
		return -1;
	}
	for (size_t i = 0; i < *n; i++) {
		const char *t = json_string_value(json_array_get(a, i));
		if (t == NULL || ((*out)[i] = strdup(t)) == NULL) {
			return -1;
		}
	}
	return 0;
}

/* The "image" entry of an image schema. */
static int
parse_image(struct tf_schema *s, json_t *im)
{
	const char *feat = json_string_value(json_object_get(im, "feature"));
	json_t *h = json_object_get(im, "height"),
	       *w = json_object_get(im, "width");
	json_t *c = json_object_get(im, "channels");
	const char *scale = json_string_value(json_object_get(im, "scale"));
	if (feat == NULL || !json_is_integer(h) || !json_is_integer(w) ||
	    !json_is_integer(c)) {
		return -1;
	}
	s->image_height = json_integer_value(h);
	s->image_width = json_integer_value(w);
	s->image_channels = json_integer_value(c);
	s->image_scale = scale ? tf_image_scale_parse(scale) : 0;
	int sized = s->image_height > 0 && s->image_width > 0;
	if (s->image_scale < 0 || s->image_height < 0 || s->image_width < 0 ||
	    s->image_height > 65535 || s->image_width > 65535 ||
	    (!sized && (s->image_height | s->image_width) != 0) ||
	    (s->image_channels != 1 && s->image_channels != 3)) {
		return -1;
	}
	return (s->image_feature = strdup(feat)) == NULL ? -1 : 0;
}

static int
parse_root(struct tf_schema *s, json_t *root, const char *origin)
{
	json_t *fmt = json_object_get(root, "format");
	json_t *feats = json_object_get(root, "features");
	json_t *label = json_object_get(root, "label");
	json_t *packed = json_object_get(root, "packed");
	json_t *sparse = json_object_get(root, "sparse");
	const char *layout = json_string_value(json_object_get(root, "layout"));
	if (!json_is_string(fmt) ||
	    strcmp(json_string_value(fmt), "tfkit-schema") != 0 ||
	    !json_is_array(feats) || layout == NULL) {
		return tfi_set_error(s, TF_EFORMAT,
		                     "%s: not a tfkit schema (see tfrecord(5))",
		                     origin);
	}
	s->layout = strcmp(layout, "libsvm") == 0    ? TFI_LAYOUT_LIBSVM
	            : strcmp(layout, "packed") == 0  ? TFI_LAYOUT_PACKED
	            : strcmp(layout, "image") == 0   ? TFI_LAYOUT_IMAGE
	            : strcmp(layout, "columns") == 0 ? TFI_LAYOUT_COLUMNS
	                                             : -1;
	if (s->layout < 0) {
		return tfi_set_error(
		    s, TF_EFORMAT,
		    "%s: layout '%.40s' is none of columns, "
		    "packed, libsvm and image (see tfrecord(5))",
		    origin, layout);
	}
	if (s->layout == TFI_LAYOUT_IMAGE &&
	    parse_image(s, json_object_get(root, "image")) != 0) {
		return tfi_set_error(
		    s, TF_EFORMAT,
		    "%s: an image schema's \"image\" needs a feature, "
		    "height and width (0, or 1 to 65535, both or neither), "
		    "channels 1 or 3 and a scale (unit, symmetric or "
		    "standardize)",
		    origin);
	}
	if (count(json_object_get(root, "rows"), &s->rows) != 0 ||
	    count(json_object_get(root, "skipped"), &s->skipped) != 0) {
		return tfi_set_error(s, TF_EFORMAT,
		                     "%s: rows and skipped are counts (whole "
		                     "numbers >= 0)",
		                     origin);
	}
	json_t *src = json_object_get(root, "sources");
	if (json_is_array(src) &&
	    parse_strs(src, &s->sources, &s->nsources) != 0) {
		return tfi_set_error(s, TF_EFORMAT, "%s: bad sources", origin);
	}
	if (json_is_object(label)) {
		if (parse_col(label, &s->label) != 0) {
			return tfi_set_error(
			    s, TF_EFORMAT, "%s: the label has no name or type",
			    origin);
		}
		s->has_label = 1;
		json_t *cl = json_object_get(label, "classes");
		s->classes_over =
		    s->label.type == TF_COL_INT64 && json_is_null(cl);
		if (json_is_array(cl)) {
			s->nclasses = json_array_size(cl);
			s->classes =
			    calloc(s->nclasses + 1, sizeof *s->classes);
			if (s->classes == NULL) {
				return tfi_set_error(s, TF_ENOMEM,
				                     "out of memory");
			}
			for (size_t i = 0; i < s->nclasses; i++) {
				s->classes[i] =
				    json_integer_value(json_array_get(cl, i));
			}
		}
		json_t *names = json_object_get(label, "names");
		if (json_is_array(names) &&
		    (json_array_size(names) != s->nclasses ||
		     parse_strs(names, &s->class_names, &s->nclass_names) !=
		         0)) {
			return tfi_set_error(s, TF_EFORMAT,
			                     "%s: the label's names are not a "
			                     "string for each of its classes",
			                     origin);
		}
	}
	s->nfeatures = json_array_size(feats);
	s->features = calloc(s->nfeatures + 1, sizeof *s->features);
	if (s->features == NULL) {
		return tfi_set_error(s, TF_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < s->nfeatures; i++) {
		if (parse_col(json_array_get(feats, i), &s->features[i]) != 0) {
			return tfi_set_error(
			    s, TF_EFORMAT,
			    "%s: feature %zu has no name or type, or a "
			    "statistic out of float32 range",
			    origin, i);
		}
	}
	if (json_is_object(sparse)) {
		json_int_t mx =
		    json_integer_value(json_object_get(sparse, "max_index"));
		s->max_index = mx > 0 ? (uint64_t)mx : 0;
		json_int_t k =
		    json_integer_value(json_object_get(sparse, "max_ids"));
		s->max_ids = k > 0 ? (uint64_t)k : 0;
		json_int_t hb =
		    json_integer_value(json_object_get(sparse, "hash_buckets"));
		s->id_buckets = hb > 0 ? (uint64_t)hb : 0;
		json_t *oj = json_object_get(sparse, "oov_buckets");
		json_int_t ob = json_integer_value(oj);
		if (oj != NULL &&
		    (!json_is_integer(oj) || ob < 1 || ob > INT32_MAX)) {
			return tfi_set_error(s, TF_EFORMAT,
			                     "%s: sparse oov_buckets is not an "
			                     "integer from 1 to 2^31-1",
			                     origin);
		}
		s->oov_buckets = oj != NULL ? (uint64_t)ob : 0;
		s->sparse_bag = json_is_true(json_object_get(sparse, "bag"));
		json_t *iv = json_object_get(sparse, "id_vocab");
		json_int_t ic =
		    json_integer_value(json_object_get(sparse, "id_count"));
		const char *why = "is not a string";
		int rc;
		if (iv != NULL &&
		    (rc = json_is_string(iv)
		              ? tfi_id_vocab_get(json_string_value(iv),
		                                 json_string_length(iv),
		                                 ic > 0 ? (size_t)ic : 0,
		                                 &s->id_vocab, &why)
		              : TF_EFORMAT) != TF_OK) {
			return rc == TF_ENOMEM
			           ? tfi_set_error(s, rc, "out of memory")
			           : tfi_set_error(s, rc,
			                           "%s: sparse id_vocab %s",
			                           origin, why);
		}
		s->id_count = s->id_vocab != NULL ? (size_t)ic : 0;
	}
	if (json_is_object(packed)) {
		const char *pn =
		    json_string_value(json_object_get(packed, "name"));
		json_int_t size =
		    json_integer_value(json_object_get(packed, "size"));
		json_t *cols = json_object_get(packed, "columns");
		if (pn == NULL || size < 1 ||
		    (s->packed_name = strdup(pn)) == NULL ||
		    (json_is_array(cols) &&
		     parse_strs(cols, &s->packed_columns, &s->npacked) != 0)) {
			return tfi_set_error(s, TF_EFORMAT,
			                     "%s: bad packed entry", origin);
		}
		s->packed_size = (size_t)size;
	}
	json_t *vocabs = json_object_get(root, "vocabularies");
	const char *key;
	json_t *v;
	s->vocabs = calloc(json_object_size(vocabs) + 1, sizeof *s->vocabs);
	if (s->vocabs == NULL) {
		return tfi_set_error(s, TF_ENOMEM, "out of memory");
	}
	json_object_foreach(vocabs, key, v)
	{
		struct tfi_vocab *t = &s->vocabs[s->nvocabs++];
		t->over = !json_is_array(v);
		if ((t->name = strdup(key)) == NULL ||
		    (!t->over && parse_strs(v, &t->values, &t->n) != 0)) {
			return tfi_set_error(s, TF_EFORMAT,
			                     "%s: bad vocabulary of '%s'",
			                     origin, key);
		}
	}
	return TF_OK;
}

/* A running 64-bit key of words and bytes (tfi_model_key()). */
static uint64_t
key_word(uint64_t k, uint64_t w)
{
	return tfi_mix64(k ^ w) + 0x9e3779b97f4a7c15ull;
}

static uint64_t
key_text(uint64_t k, const char *t)
{
	size_t n = t != NULL ? strlen(t) : 0;
	k = key_word(k, n);
	for (size_t i = 0; i < n; i += 8) {
		uint64_t w = 0;
		memcpy(&w, t + i, n - i < 8 ? n - i : 8);
		k = key_word(k, w);
	}
	return k;
}

int
tfi_model_key(const char *schema, uint64_t *key)
{
	struct tf_schema *s = tf_schema_new();
	if (s == NULL) {
		return TF_ENOMEM;
	}
	int rc = tf_schema_parse(s, schema, "model");
	uint64_t k = 1;
	/* the inputs in their order, and what each row of a table is */
	k = key_word(k, (uint64_t)s->layout);
	for (size_t i = 0; rc == TF_OK && i < s->nfeatures; i++) {
		k = key_text(k, s->features[i].name);
		k = key_word(k, (uint64_t)s->features[i].type);
		k = key_word(k, (uint64_t)s->features[i].hash_buckets);
	}
	k = key_text(k, s->packed_name);
	for (size_t i = 0; rc == TF_OK && i < s->npacked; i++) {
		k = key_text(k, s->packed_columns[i]);
	}
	int sparse = rc == TF_OK && s->layout == TFI_LAYOUT_LIBSVM;
	k = key_word(k, sparse ? s->id_buckets : 0);
	k = key_word(k, sparse ? s->oov_buckets : 0);
	k = key_word(k, sparse ? s->id_count : 0);
	for (size_t i = 0; sparse && i < s->id_count; i++) {
		k = key_word(k, s->id_vocab[i]);
	}
	for (size_t i = 0; rc == TF_OK && i < s->nvocabs; i++) {
		const struct tfi_vocab *v = &s->vocabs[i];
		k = key_text(k, v->name);
		k = key_word(k, (uint64_t)v->over * 2 + 1);
		for (size_t j = 0; j < v->n; j++) {
			k = key_text(k, v->values[j]);
		}
	}
	/* the outputs: the label's classes (an int64 label's, as written),
	 * and their names */
	int classes = rc == TF_OK && s->has_label &&
	              s->label.type == TF_COL_INT64 && !s->classes_over;
	k = key_text(k, s->has_label ? s->label.name : NULL);
	for (size_t i = 0; classes && i < s->nclasses; i++) {
		k = key_word(k, (uint64_t)s->classes[i]);
	}
	for (size_t i = 0; classes && i < s->nclass_names; i++) {
		k = key_text(k, s->class_names[i]);
	}
	tf_schema_free(s);
	*key = k != 0 ? k : 1;
	return rc;
}

int
tf_schema_parse(struct tf_schema *s, const char *text, const char *origin)
{
	tfi_schema_clear(s);
	json_error_t je;
	json_t *root = json_loads(text, 0, &je);
	if (root == NULL) {
		return tfi_set_error(s, TF_EFORMAT, "%s:%d: %s", origin,
		                     je.line, je.text);
	}
	int rc = parse_root(s, root, origin);
	json_decref(root);
	if (rc == TF_OK && (s->text = strdup(text)) == NULL) {
		rc = tfi_set_error(s, TF_ENOMEM, "out of memory");
	}
	if (rc != TF_OK) {
		tfi_schema_clear(s);
	}
	return rc;
}

int
tf_schema_load(struct tf_schema *s, const char *path)
{
	size_t n;
	char *text = tf_file_read(path, &n);
	if (text == NULL) {
		tfi_schema_clear(s);
		return tfi_set_errno(s, TF_ENOENT, errno,
		                     "cannot open schema '%s'", path);
	}
	int rc = tf_schema_parse(s, text, path);
	free(text);
	return rc;
}

/* ---- encoding --------------------------------------------------------------
 */

/* A statistic: floats in their shortest exact form, integers whole. */
static int
jnum(struct tfi_buf *b, double v, int type)
{
	char t[48];
	if (!isfinite(v)) {
		return tfi_json_put(b, "null", 4);
	}
	v = v == 0 ? 0.0 : v; /* -0 reads back as the integer 0 */
	int n = type == TF_COL_FLOAT ? tf_format_float(t, sizeof t, (float)v)
	                             : snprintf(t, sizeof t, "%.17g", v);
	return tfi_json_put(b, t, (size_t)n);
}

static int
jkey(struct tfi_buf *b, const char *k)
{
	return tfi_json_string(b, (const uint8_t *)k, strlen(k)) ||
	       tfi_json_put(b, ":", 1);
}

static int
jstr(struct tfi_buf *b, const char *s)
{
	return tfi_json_string(b, (const uint8_t *)s, strlen(s));
}

static int
jstrs(struct tfi_buf *b, char *const *v, size_t n)
{
	int rc = tfi_json_put(b, "[", 1);
	for (size_t i = 0; i < n && !rc; i++) {
		rc = (i > 0 && tfi_json_put(b, ",", 1)) || jstr(b, v[i]);
	}
	return rc || tfi_json_put(b, "]", 1);
}

/* A column's description, its object left open for more members. */
static int
jcol(struct tfi_buf *b, const struct tfi_schema_col *k)
{
	char t[96];
	int rc = tfi_json_put(b, "{", 1) || jkey(b, "name") ||
	         jstr(b, k->name) || tfi_json_put(b, ",", 1) ||
	         jkey(b, "type") || jstr(b, tf_coltype_name(k->type));
	if (k->column >= 0) {
		snprintf(t, sizeof t, ",\"column\":%lld", (long long)k->column);
		rc = rc || tfi_json_put(b, t, strlen(t));
	}
	snprintf(t, sizeof t, ",\"present\":%llu,\"missing\":%llu",
	         (unsigned long long)k->present,
	         (unsigned long long)k->missing);
	rc = rc || tfi_json_put(b, t, strlen(t));
	if (k->nonfinite > 0) {
		/* NaN and infinities: present, but not in the statistics */
		snprintf(t, sizeof t, ",\"nonfinite\":%llu",
		         (unsigned long long)k->nonfinite);
		rc = rc || tfi_json_put(b, t, strlen(t));
	}
	/* bytes that are no category: binary (images), or all different */
	if (k->binary) {
		rc = rc || tfi_json_put(b, ",\"binary\":true", 14);
	}
	if (k->unique) {
		rc = rc || tfi_json_put(b, ",\"unique\":true", 14);
	}
	if (k->type != TF_COL_BYTES && k->has_stats) {
		rc = rc || tfi_json_put(b, ",\"min\":", 7) ||
		     jnum(b, k->min, k->type) ||
		     tfi_json_put(b, ",\"max\":", 7) ||
		     jnum(b, k->max, k->type);
		/* Mean and (population) standard deviation, for feature
		 * standardisation by the training stage. */
		snprintf(t, sizeof t, ",\"mean\":%.9g,\"std\":%.9g",
		         k->mean == 0 ? 0.0 : k->mean,
		         k->std == 0 ? 0.0 : k->std);
		rc = rc || tfi_json_put(b, t, strlen(t));
	}
	if (k->packed_index >= 0) {
		snprintf(t, sizeof t, ",\"packed_index\":%lld",
		         (long long)k->packed_index);
		rc = rc || tfi_json_put(b, t, strlen(t));
	}
	if (k->max_length > 0) {
		snprintf(t, sizeof t,
		         ",\"max_length\":%lld,\"step_width\":%lld",
		         (long long)k->max_length, (long long)k->step_width);
		rc = rc || tfi_json_put(b, t, strlen(t));
	}
	if (k->max_length > 0 && k->hash_buckets > 0) {
		snprintf(t, sizeof t, ",\"hash_buckets\":%lld",
		         (long long)k->hash_buckets);
		rc = rc || tfi_json_put(b, t, strlen(t));
	}
	return rc;
}

static const char *const layout_name[] = {"columns", "packed", "libsvm",
                                          "image"};

int
tf_schema_write(struct tf_schema *s, const char *path)
{
	struct tfi_buf b = {0};
	char t[160];
	int rc =
	    tfi_json_put(&b, "{\"format\":\"tfkit-schema\",\"version\":1,", 37);
	rc = rc || jkey(&b, "layout") || jstr(&b, layout_name[s->layout]);
	snprintf(t, sizeof t, ",\"rows\":%llu,\"skipped\":%llu,",
	         (unsigned long long)s->rows, (unsigned long long)s->skipped);
	rc = rc || tfi_json_put(&b, t, strlen(t)) || jkey(&b, "sources") ||
	     jstrs(&b, s->sources, s->nsources) || tfi_json_put(&b, ",", 1) ||
	     jkey(&b, "label");
	if (!s->has_label) {
		rc = rc || tfi_json_put(&b, "null", 4);
	} else {
		rc = rc || jcol(&b, &s->label);
		if (s->label.type == TF_COL_INT64) {
			rc = rc || tfi_json_put(&b, ",\"classes\":", 11);
			if (s->classes_over || s->classes == NULL) {
				rc = rc || tfi_json_put(&b, "null", 4);
			} else {
				rc = rc || tfi_json_put(&b, "[", 1);
				for (size_t i = 0; i < s->nclasses && !rc;
				     i++) {
					snprintf(t, sizeof t, "%s%lld",
					         i ? "," : "",
					         (long long)s->classes[i]);
					rc = tfi_json_put(&b, t, strlen(t));
				}
				rc = rc || tfi_json_put(&b, "]", 1);
			}
			if (s->nclass_names > 0) {
				rc = rc || tfi_json_put(&b, ",", 1) ||
				     jkey(&b, "names") ||
				     jstrs(&b, s->class_names, s->nclass_names);
			}
		}
		rc = rc || tfi_json_put(&b, "}", 1);
	}
	rc = rc || tfi_json_put(&b, ",", 1) || jkey(&b, "features") ||
	     tfi_json_put(&b, "[", 1);
	for (size_t i = 0; i < s->nfeatures && !rc; i++) {
		rc = (i > 0 && tfi_json_put(&b, ",", 1)) ||
		     jcol(&b, &s->features[i]) || tfi_json_put(&b, "}", 1);
	}
	rc = rc || tfi_json_put(&b, "]", 1);
	if (s->layout == TFI_LAYOUT_LIBSVM) {
		/* JSON's integers (jansson's) stop at 2^63-1 */
		snprintf(t, sizeof t,
		         ",\"sparse\":{\"ids\":\"ids\",\"values\":\"values\","
		         "\"max_index\":%llu,\"max_ids\":%llu",
		         (unsigned long long)(s->max_index > INT64_MAX
		                                  ? INT64_MAX
		                                  : s->max_index),
		         (unsigned long long)s->max_ids);
		rc = rc || tfi_json_put(&b, t, strlen(t));
		if (s->id_vocab != NULL) {
			snprintf(t, sizeof t,
			         ",\"id_count\":%zu,\"id_vocab\":\"",
			         s->id_count);
			rc = rc || tfi_json_put(&b, t, strlen(t)) ||
			     tfi_id_vocab_put(&b, s->id_vocab, s->id_count) ||
			     tfi_json_put(&b, "\"", 1);
		}
		snprintf(t, sizeof t, "%s,\"hash_buckets\":%llu",
		         s->sparse_bag ? ",\"bag\":true" : "",
		         (unsigned long long)s->id_buckets);
		if (s->id_buckets == 0) {
			snprintf(t, sizeof t, "%s",
			         s->sparse_bag ? ",\"bag\":true" : "");
		}
		rc = rc || tfi_json_put(&b, t, strlen(t));
		if (s->oov_buckets > 0) {
			snprintf(t, sizeof t, ",\"oov_buckets\":%llu",
			         (unsigned long long)s->oov_buckets);
			rc = rc || tfi_json_put(&b, t, strlen(t));
		}
		rc = rc || tfi_json_put(&b, "}", 1);
	}
	if (s->layout == TFI_LAYOUT_IMAGE) {
		rc = rc || tfi_json_put(&b, ",", 1) || jkey(&b, "image") ||
		     tfi_json_put(&b, "{", 1) || jkey(&b, "feature") ||
		     jstr(&b, s->image_feature);
		snprintf(t, sizeof t,
		         ",\"height\":%lld,\"width\":%lld,\"channels\":%lld,"
		         "\"scale\":\"%s\"}",
		         (long long)s->image_height, (long long)s->image_width,
		         (long long)s->image_channels,
		         tf_image_scale_name(s->image_scale));
		rc = rc || tfi_json_put(&b, t, strlen(t));
	}
	if (s->packed_name != NULL) {
		rc = rc || tfi_json_put(&b, ",", 1) || jkey(&b, "packed") ||
		     tfi_json_put(&b, "{", 1) || jkey(&b, "name") ||
		     jstr(&b, s->packed_name);
		snprintf(t, sizeof t,
		         ",\"size\":%zu,\"columns\":", s->packed_size);
		rc = rc || tfi_json_put(&b, t, strlen(t)) ||
		     jstrs(&b, s->packed_columns, s->npacked) ||
		     tfi_json_put(&b, "}", 1);
	}
	rc = rc || tfi_json_put(&b, ",", 1) || jkey(&b, "vocabularies") ||
	     tfi_json_put(&b, "{", 1);
	for (size_t i = 0; i < s->nvocabs && !rc; i++) {
		const struct tfi_vocab *v = &s->vocabs[i];
		rc = (i > 0 && tfi_json_put(&b, ",", 1)) || jkey(&b, v->name) ||
		     (v->over ? tfi_json_put(&b, "null", 4)
		              : jstrs(&b, v->values, v->n));
	}
	rc = rc || tfi_json_put(&b, "}}\n", 3);
	if (rc) {
		tfi_buf_free(&b);
		return tfi_set_error(s, TF_ENOMEM, "out of memory");
	}
	free(s->text);
	s->text = (char *)b.data;
	if (path == NULL) {
		return TF_OK;
	}
	char msg[TFI_MSG_MAX];
	rc = tf_file_replace(path, s->text, b.len, TF_FILE_SYNC, msg,
	                     sizeof msg);
	return rc == TF_OK ? TF_OK : tfi_set_error(s, rc, "%s", msg);
}

int
tf_schema_set_class_names(struct tf_schema *s, const char *const *names,
                          size_t n)
{
	if (n != s->nclasses || s->label.type != TF_COL_INT64) {
		return tfi_set_error(s, TF_EINVAL,
		                     "%zu class names for %zu classes", n,
		                     s->nclasses);
	}
	char **v = calloc(n + 1, sizeof *v);
	for (size_t i = 0; v != NULL && i < n; i++) {
		if ((v[i] = strdup(names[i])) == NULL) {
			free_strs(v, i);
			v = NULL;
		}
	}
	if (v == NULL) {
		return tfi_set_error(s, TF_ENOMEM, "out of memory");
	}
	free_strs(s->class_names, s->nclass_names);
	s->class_names = v;
	s->nclass_names = n;
	return TF_OK;
}

/* ---- what the rest of the library asks --------------------------------------
 */

const char *
tf_schema_text(const struct tf_schema *s)
{
	return s->text ? s->text : "";
}

uint64_t
tf_schema_rows(const struct tf_schema *s)
{
	return s->rows;
}

void
tf_schema_set_rows(struct tf_schema *s, uint64_t rows)
{
	s->rows = rows;
}

const char *
tf_schema_label(const struct tf_schema *s)
{
	return s->has_label ? s->label.name : NULL;
}

const char *
tf_schema_packed(const struct tf_schema *s)
{
	return s->packed_name;
}

size_t
tf_schema_nfeatures(const struct tf_schema *s)
{
	return s->nfeatures;
}

const char *
tf_schema_feature(const struct tf_schema *s, size_t i, int *type)
{
	if (i >= s->nfeatures) {
		return NULL;
	}
	*type = s->features[i].type;
	return s->features[i].name;
}

const struct tfi_vocab *
tfi_schema_vocab(const struct tf_schema *s, const char *name)
{
	for (size_t i = 0; i < s->nvocabs; i++) {
		if (strcmp(s->vocabs[i].name, name) == 0) {
			return &s->vocabs[i];
		}
	}
	return NULL;
}

/* ---- naming and carrying
 * ------------------------------------------------------ */

void
tf_schema_sidecar(const char *records, char *out, size_t size)
{
	size_t n = strlen(records);
	/* BASE-00000-of-00004: the set's name, so shards share one. */
	const char *of = strstr(records, "-of-");
	if (n >= 16 && of != NULL && of - records >= 7 && of[-6] == '-') {
		n = (size_t)(of - records) - 6;
	}
	snprintf(out, size, "%.*s.schema.json", (int)n, records);
}

void
tf_shard_name(const char *base, long long i, long long n, char *out,
              size_t size)
{
	snprintf(out, size, "%s-%05lld-of-%05lld", base, i, n);
}

int
tf_schema_carry(struct tf_schema *s, const char *const *inputs, size_t ninputs,
                const char *output, int64_t rows)
{
	char in[4096], other[4096], dst[4096];
	/* Standard output, a device or a FIFO gets no sidecar. */
	if (ninputs == 0 || strcmp(inputs[0], "-") == 0 ||
	    tf_path_kind(output) == TF_PATH_SPECIAL) {
		return TF_OK;
	}
	tf_schema_sidecar(inputs[0], in, sizeof in);
	for (size_t i = 1; i < ninputs; i++) {
		tf_schema_sidecar(inputs[i], other, sizeof other);
		if (strcmp(other, in) != 0) {
			return TF_OK; /* several sets: no one schema fits */
		}
	}
	tf_schema_sidecar(output, dst, sizeof dst);
	if (strcmp(dst, in) == 0) {
		return TF_OK; /* already there */
	}
	if (access(in, F_OK) != 0 && errno == ENOENT) {
		return TF_OK; /* no sidecar: nothing to carry */
	}
	int rc = tf_schema_load(s, in);
	if (rc != TF_OK) {
		return rc;
	}
	if (rows >= 0) {
		s->rows = (uint64_t)rows;
		return tf_schema_write(s, dst);
	}
	/* All the rows: the same text. */
	char msg[TFI_MSG_MAX];
	rc = tf_file_replace(dst, s->text, strlen(s->text), TF_FILE_SYNC, msg,
	                     sizeof msg);
	return rc == TF_OK ? TF_OK : tfi_set_error(s, rc, "%s", msg);
}

/* ---- surveying records
 * ------------------------------------------------------- */

#define VOCAB_MAX 1000  /* distinct values kept, as tf-csv2record's */
#define POS_MAX   65536 /* values of a list with statistics */

struct survey_entry {
	char *name;
	int kind;
	uint64_t records;
	size_t min_len, max_len;
	/* Numbers by position in the list: for the schema's statistics. */
	double *sum, *sumsq, *min, *max;
	double *nonfinite; /* values left out of the statistics: NaN, inf */
	size_t npos;
	/* The distinct values of a one-value bytes or int64 feature, sorted
	 * (vocabularies, label classes); over: more than VOCAB_MAX. */
	char **vals;
	size_t nvals;
	int over;
	int binary;       /* a bytes value that is not text */
	uint64_t repeats; /* values met again before over */
	/* a SequenceExample's feature list in some record: the values of
	 * a step (-1: they differ), the most steps */
	int list;
	int64_t step_width;
	size_t max_steps;
	/* sparse "ids": the distinct ids, until there are too many for an
	 * id vocabulary (ids_over) */
	struct tfi_idset ids;
	int ids_over;
};

struct tf_survey {
	struct tfi_handle err;
	struct survey_entry *f;
	size_t n, cap;
	uint64_t records;
	int sorted;
};

struct tf_survey *
tf_survey_new(void)
{
	return calloc(1, sizeof(struct tf_survey));
}

void
tf_survey_free(struct tf_survey *s)
{
	if (s == NULL) {
		return;
	}
	for (size_t i = 0; i < s->n; i++) {
		struct survey_entry *e = &s->f[i];
		free(e->name);
		free(e->sum);
		free(e->sumsq);
		free(e->min);
		free(e->max);
		free(e->nonfinite);
		free_strs(e->vals, e->nvals);
		tfi_idset_free(&e->ids);
	}
	free(s->f);
	free(s);
}

/* Numbers of a feature into its per-position statistics. */
static int
add_numbers(struct survey_entry *t, const struct tf_feature *f)
{
	size_t n = f->count < POS_MAX ? f->count : POS_MAX;
	if (n > t->npos) {
		double **a[] = {&t->sum, &t->sumsq, &t->min, &t->max,
		                &t->nonfinite};
		for (size_t k = 0; k < 5; k++) {
			double *p = realloc(*a[k], n * sizeof *p);
			if (p == NULL) {
				return -1;
			}
			*a[k] = p;
		}
		for (size_t i = t->npos; i < n; i++) {
			t->sum[i] = t->sumsq[i] = t->nonfinite[i] = 0;
			t->min[i] = INFINITY;
			t->max[i] = -INFINITY;
		}
		t->npos = n;
	}
	for (size_t i = 0; i < n; i++) {
		double v = f->kind == TF_KIND_FLOAT ? (double)f->floats[i]
		                                    : (double)f->ints[i];
		if (!isfinite(v)) {
			/* counted, kept out of the statistics, which stay
			 * finite (and the schema JSON) */
			t->nonfinite[i]++;
			continue;
		}
		t->sum[i] += v;
		t->sumsq[i] += v * v;
		t->min[i] = v < t->min[i] ? v : t->min[i];
		t->max[i] = v > t->max[i] ? v : t->max[i];
	}
	return 0;
}

/* Order of a kept value against n bytes at v. */
static int
value_cmp(const char *kept, const char *v, size_t n)
{
	size_t k = strlen(kept);
	int c = memcmp(kept, v, k < n ? k : n);
	return c != 0 ? c : k < n ? -1 : k > n;
}

/* Whether n bytes read as text: UTF-8 without NUL or other control
 * characters but tab, newline and carriage return (an encoded image
 * is none). */
static int
is_text(const uint8_t *p, size_t n)
{
	size_t i = 0;
	while (i < n) {
		uint8_t c = p[i];
		if (c < 0x80) {
			if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
				return 0;
			}
			i++;
			continue;
		}
		/* a lead byte and its continuation bytes */
		size_t k = c >= 0xc2 && c <= 0xdf   ? 1
		           : c >= 0xe0 && c <= 0xef ? 2
		           : c >= 0xf0 && c <= 0xf4 ? 3
		                                    : 0;
		if (k == 0 || i + k >= n) {
			return 0;
		}
		for (size_t j = 1; j <= k; j++) {
			if ((p[i + j] & 0xc0) != 0x80) {
				return 0;
			}
		}
		i += k + 1;
	}
	return 1;
}

/* A one-value feature's value into its sorted distinct values. */
static int
add_value(struct survey_entry *t, const char *v, size_t n)
{
	if (t->over) {
		return 0;
	}
	size_t lo = 0, hi = t->nvals;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = value_cmp(t->vals[mid], v, n);
		if (c == 0) {
			t->repeats++;
			return 0;
		}
		if (c < 0) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	if (t->nvals == VOCAB_MAX || memchr(v, 0, n) != NULL) {
		t->over = 1;
		return 0;
	}
	char **p = realloc(t->vals, (t->nvals + 1) * sizeof *p);
	if (p == NULL) {
		return -1;
	}
	t->vals = p;
	memmove(&p[lo + 1], &p[lo], (t->nvals - lo) * sizeof *p);
	if ((p[lo] = strndup(v, n)) == NULL) {
		return -1;
	}
	t->nvals++;
	return 0;
}

int
tf_survey_add(struct tf_survey *s, struct tf_example *ex)
{
	s->records++;
	size_t k = tf_example_count(ex);
	for (size_t i = 0; i < k; i++) {
		struct tf_feature f;
		tf_example_get(ex, i, &f);
		struct survey_entry *t = NULL;
		for (size_t j = 0; j < s->n && t == NULL; j++) {
			t = strcmp(s->f[j].name, f.name) == 0 ? &s->f[j] : NULL;
		}
		if (t == NULL) {
			if (s->n == s->cap) {
				size_t cap = s->cap ? s->cap * 2 : 32;
				struct survey_entry *e =
				    realloc(s->f, cap * sizeof *e);
				if (e == NULL) {
					return tfi_set_error(s, TF_ENOMEM,
					                     "out of memory");
				}
				s->f = e;
				s->cap = cap;
			}
			t = &s->f[s->n];
			memset(t, 0, sizeof *t);
			if ((t->name = strdup(f.name)) == NULL) {
				return tfi_set_error(s, TF_ENOMEM,
				                     "out of memory");
			}
			s->n++;
			s->sorted = 0;
			t->kind = f.kind;
			t->min_len = t->max_len = f.count;
		}
		if (t->kind != f.kind) {
			t->kind = -1; /* mixed */
		}
		t->records++;
		t->min_len = f.count < t->min_len ? f.count : t->min_len;
		t->max_len = f.count > t->max_len ? f.count : t->max_len;
		int bad = 0;
		char num[32];
		if (t->kind == TF_KIND_FLOAT || t->kind == TF_KIND_INT64) {
			bad = add_numbers(t, &f);
		}
		/* each step's values (one a step but in feature lists) */
		size_t steps = f.steps > 0 ? f.steps : f.count;
		int64_t width = steps > 0 ? (int64_t)(f.count / steps) : 1;
		if (f.steps > 0) {
			t->step_width =
			    t->list && t->step_width != width ? -1 : width;
			t->list = 1;
		} else if (t->list && width != t->step_width) {
			t->step_width = -1;
		}
		t->max_steps = steps > t->max_steps ? steps : t->max_steps;
		/* distinct values: of one-value features (vocabularies,
		 * classes) and of lists of tokens (a sequence's) */
		for (size_t v = 0;
		     t->kind == TF_KIND_INT64 && !bad && v < f.count; v++) {
			int m = snprintf(num, sizeof num, "%lld",
			                 (long long)f.ints[v]);
			bad = add_value(t, num, (size_t)m);
		}
		for (size_t v = 0;
		     t->kind == TF_KIND_BYTES && !bad && v < f.count; v++) {
			bad = add_value(t, (const char *)f.bytes[v].data,
			                f.bytes[v].len);
		}
		for (size_t v = 0;
		     t->kind == TF_KIND_BYTES && !t->binary && v < f.count;
		     v++) {
			t->binary = !is_text(f.bytes[v].data, f.bytes[v].len);
		}
		for (size_t v = 0; t->kind == TF_KIND_INT64 && !t->ids_over &&
		                   v < f.count && strcmp(t->name, "ids") == 0;
		     v++) {
			/* (memory short or too many: no vocabulary) */
			if (tfi_idset_add(&t->ids, (uint64_t)f.ints[v]) < 0 ||
			    t->ids.n > TFI_ID_VOCAB_MAX) {
				tfi_idset_free(&t->ids);
				t->ids_over = 1;
			}
		}
		if (bad) {
			return tfi_set_error(s, TF_ENOMEM, "out of memory");
		}
	}
	return TF_OK;
}

uint64_t
tf_survey_records(const struct tf_survey *s)
{
	return s->records;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(((const struct survey_entry *)a)->name,
	              ((const struct survey_entry *)b)->name);
}

size_t
tf_survey_count(struct tf_survey *s)
{
	return s->n;
}

int
tf_survey_get(struct tf_survey *s, size_t i, struct tf_survey_feature *f)
{
	if (!s->sorted && s->n > 0) { /* (no features: no array to sort) */
		qsort(s->f, s->n, sizeof *s->f, by_name);
		s->sorted = 1;
	}
	if (i >= s->n) {
		return TF_EINVAL;
	}
	*f = (struct tf_survey_feature){s->f[i].name, s->f[i].kind,
	                                s->f[i].records, s->f[i].min_len,
	                                s->f[i].max_len};
	return TF_OK;
}

char *
tf_survey_json(struct tf_survey *s)
{
	json_t *feats = json_array();
	struct tf_survey_feature f;
	for (size_t i = 0; feats && tf_survey_get(s, i, &f) == TF_OK; i++) {
		json_array_append_new(
		    feats,
		    json_pack("{s:s,s:s,s:I,s:I,s:I}", "name", f.name, "kind",
		              f.kind < 0 ? "mixed" : tf_kind_name(f.kind),
		              "records", (json_int_t)f.records, "min_len",
		              (json_int_t)f.min_len, "max_len",
		              (json_int_t)f.max_len));
	}
	json_t *o = json_pack("{s:I,s:o}", "records", (json_int_t)s->records,
	                      "features", feats);
	char *text =
	    o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	json_decref(o);
	return text;
}

/* ---- inferring a schema
 * ------------------------------------------------------ */

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Statistics of position i of a surveyed feature, as a column. */
static int
survey_col(const struct survey_entry *t, size_t i, const char *name, int type,
           struct tfi_schema_col *c)
{
	memset(c, 0, sizeof *c);
	c->packed_index = -1;
	c->column = -1;
	c->type = type;
	c->present = t->records;
	if ((c->name = strdup(name)) == NULL) {
		return -1;
	}
	if (type == TF_COL_BYTES) {
		c->binary = t->binary;
		c->unique = t->repeats == 0 && t->records >= UNIQUE_MIN;
	}
	if (type != TF_COL_BYTES && i < t->npos) {
		c->nonfinite = (uint64_t)t->nonfinite[i];
	}
	if (type != TF_COL_BYTES && i < t->npos &&
	    (double)t->records > t->nonfinite[i]) {
		double n = (double)t->records - t->nonfinite[i],
		       mean = t->sum[i] / n;
		double var = t->sumsq[i] / n - mean * mean;
		c->has_stats = 1;
		c->mean = mean;
		c->std = var > 0 ? sqrt(var) : 0;
		c->min = t->min[i];
		c->max = t->max[i];
	}
	return 0;
}

static int
push_col(struct tf_schema *s, const struct tfi_schema_col *c)
{
	struct tfi_schema_col *f =
	    realloc(s->features, (s->nfeatures + 1) * sizeof *f);
	if (f == NULL) {
		free(c->name);
		return -1;
	}
	s->features = f;
	f[s->nfeatures++] = *c;
	return 0;
}

/* A bytes feature's vocabulary from its distinct values. */
static int
push_vocab(struct tf_schema *s, const struct survey_entry *t)
{
	struct tfi_vocab *v = realloc(s->vocabs, (s->nvocabs + 1) * sizeof *v);
	if (v == NULL) {
		return -1;
	}
	s->vocabs = v;
	v = &v[s->nvocabs++];
	memset(v, 0, sizeof *v);
	v->name = strdup(t->name);
	v->over = t->over;
	v->n = t->over ? 0 : t->nvals;
	v->values = calloc(v->n + 1, sizeof *v->values);
	if (v->name == NULL || v->values == NULL) {
		return -1;
	}
	for (size_t k = 0; k < v->n; k++) {
		if ((v->values[k] = strdup(t->vals[k])) == NULL) {
			return -1;
		}
	}
	return 0;
}

static void
note_skip(char *skipped, size_t size, const char *name)
{
	size_t n = strlen(skipped);
	if (n + strlen(name) + 3 < size) {
		snprintf(skipped + n, size - n, "%s%s", n ? ", " : "", name);
	}
}

/* The surveyed feature called name, or NULL. */
static const struct survey_entry *
survey_find(const struct tf_survey *sv, const char *name)
{
	for (size_t i = 0; i < sv->n; i++) {
		if (strcmp(sv->f[i].name, name) == 0) {
			return &sv->f[i];
		}
	}
	return NULL;
}

/* A whole number every record has once, the same in each: its value,
 * or 0. */
static int64_t
survey_constant(const struct tf_survey *sv, const char *name)
{
	const struct survey_entry *t = survey_find(sv, name);
	if (t == NULL || t->kind != TF_KIND_INT64 ||
	    t->records != sv->records || t->min_len != 1 || t->max_len != 1 ||
	    t->npos < 1 || t->min[0] != t->max[0] || t->min[0] < 1 ||
	    t->min[0] > 65535) {
		return 0;
	}
	return (int64_t)t->min[0];
}

/* Records as TensorFlow's Inception data writes them (build_image_data.py:
 * one encoded image in "image/encoded" in every record): the image
 * layout, sized when every image has the same "image/height" and
 * "image/width", grey when every "image/channels" is 1.  Returns
 * nonzero when out of memory. */
static int
survey_image(const struct tf_survey *sv, struct tf_schema *s)
{
	const struct survey_entry *t = survey_find(sv, "image/encoded");
	if (t == NULL || t->kind != TF_KIND_BYTES ||
	    t->records != sv->records || t->min_len != 1 || t->max_len != 1) {
		return 0;
	}
	s->layout = TFI_LAYOUT_IMAGE;
	s->image_height = survey_constant(sv, "image/height");
	s->image_width = survey_constant(sv, "image/width");
	if (s->image_height == 0 || s->image_width == 0) {
		s->image_height = s->image_width = 0;
	}
	s->image_channels = survey_constant(sv, "image/channels") == 1 ? 1 : 3;
	s->image_scale = TF_IMAGE_SCALE_UNIT;
	return (s->image_feature = strdup(t->name)) == NULL;
}

static int
cmp_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Sparse features, as tf-csv2record's libsvm layout and TensorFlow's
 * VarLenFeature pair: an int64 list "ids" and, when there is one, a float
 * list "values" as long in every record: the libsvm layout, its largest
 * id (2^63-1, any, when one is past that or past the positions the
 * survey counts), the most ids a record holds and, when the ids are
 * sparse in their space, their id vocabulary; -1 when out of memory. */
static int
survey_sparse(const struct tf_survey *sv, struct tf_schema *s)
{
	const struct survey_entry *t = survey_find(sv, "ids");
	const struct survey_entry *v = survey_find(sv, "values");
	if (t == NULL || t->kind != TF_KIND_INT64 || t->max_len == 0 ||
	    (v != NULL &&
	     (v->kind != TF_KIND_FLOAT || v->max_len != t->max_len ||
	      v->records != t->records))) {
		return 0;
	}
	double mx = 0;
	int any = t->max_len > t->npos;
	for (size_t k = 0; k < t->npos; k++) {
		any |= t->min[k] < 0; /* a uint64 id past 2^63-1 */
		mx = t->max[k] > mx ? t->max[k] : mx;
	}
	s->layout = TFI_LAYOUT_LIBSVM;
	s->max_ids = t->max_len;
	s->max_index = any || mx >= 0x1p63 ? (uint64_t)INT64_MAX : (uint64_t)mx;
	/* the id vocabulary, as tf-csv2record's (an id the survey cannot
	 * place made max_index 2^63-1: any) */
	size_t n = t->ids_over ? 0 : t->ids.n;
	if (tfi_id_vocab_wanted(s->max_index, n)) {
		if ((s->id_vocab = malloc(n * sizeof *s->id_vocab)) == NULL) {
			return -1;
		}
		tfi_idset_ids(&t->ids, s->id_vocab);
		qsort(s->id_vocab, n, sizeof *s->id_vocab, cmp_id);
		s->id_count = n;
	}
	return 1;
}

/* The label: one value in every record, a number or a string (its
 * classes then the vocabulary of its strings). */
static int
survey_label(struct tf_survey *sv, struct tf_schema *s,
             const struct survey_entry *t, int type)
{
	if (type == TF_COL_BYTES && t->over) {
		return tfi_set_error(sv, TF_EFORMAT,
		                     "the label '%s' has more distinct "
		                     "strings than a vocabulary holds",
		                     t->name);
	}
	if (t->records != sv->records || t->min_len != 1 || t->max_len != 1) {
		return tfi_set_error(
		    sv, TF_EFORMAT,
		    "the label '%s' is not one number in every "
		    "record",
		    t->name);
	}
	s->has_label = 1;
	int bad = survey_col(t, 0, t->name, type, &s->label);
	if (type == TF_COL_BYTES && !bad) {
		bad = push_vocab(s, t);
	}
	s->classes_over = type == TF_COL_INT64 && t->over;
	if (type == TF_COL_INT64 && !t->over && !bad) {
		s->nclasses = t->nvals;
		s->classes = calloc(t->nvals + 1, sizeof *s->classes);
		bad = s->classes == NULL;
		for (size_t k = 0; !bad && k < t->nvals; k++) {
			s->classes[k] = strtoll(t->vals[k], NULL, 10);
		}
		if (!bad) {
			qsort(s->classes, s->nclasses, sizeof *s->classes,
			      cmp_i64);
		}
	}
	return bad ? tfi_set_error(sv, TF_ENOMEM, "out of memory") : TF_OK;
}

int
tf_survey_schema(struct tf_survey *sv, const char *label, struct tf_schema *s,
                 char *skipped, size_t size)
{
	tfi_schema_clear(s);
	skipped[0] = '\0';
	int bad = survey_image(sv, s);
	int sparse = s->layout != TFI_LAYOUT_IMAGE ? survey_sparse(sv, s) : 0;
	if (sparse < 0) {
		return tfi_set_error(sv, TF_ENOMEM, "out of memory");
	}
	if (label == NULL) {
		label = s->layout == TFI_LAYOUT_IMAGE &&
		                survey_find(sv, "image/class/label") != NULL
		            ? "image/class/label"
		            : "label";
	}
	struct tf_survey_feature f;
	int rc = TF_OK, seq = 0;
	/* In name order (tf_survey_get() sorts), as TensorFlow parses. */
	for (size_t i = 0;
	     !bad && rc == TF_OK && tf_survey_get(sv, i, &f) == TF_OK; i++) {
		const struct survey_entry *t = &sv->f[i];
		int type = f.kind == TF_KIND_FLOAT   ? TF_COL_FLOAT
		           : f.kind == TF_KIND_INT64 ? TF_COL_INT64
		           : f.kind == TF_KIND_BYTES ? TF_COL_BYTES
		                                     : -1;
		if (strcmp(f.name, label) == 0) {
			rc = survey_label(sv, s, t, type);
			continue;
		}
		if (sparse && (strcmp(f.name, "ids") == 0 ||
		               strcmp(f.name, "values") == 0)) {
			continue; /* the ids and their values: the bag */
		}
		if (sparse &&
		    !((type == TF_COL_FLOAT || type == TF_COL_INT64) &&
		      f.min_len == 1 && f.max_len == 1 &&
		      t->records == sv->records)) {
			/* beside the ids, numeric columns alone */
			note_skip(skipped, size, f.name);
			continue;
		}
		if (s->layout == TFI_LAYOUT_IMAGE) {
			/* The image is the input; its size, class text and
			 * file name are not columns. */
			if (strncmp(f.name, "image/", 6) != 0) {
				note_skip(skipped, size, f.name);
			} else if (strcmp(f.name, "image/class/text") == 0 &&
			           type == TF_COL_BYTES) {
				bad = push_vocab(s, t);
			}
			continue;
		}
		int fixed = f.min_len == f.max_len && f.min_len > 0 &&
		            t->records == sv->records;
		/* A sequence: a feature list, or a list whose length varies,
		 * in every record; numbers, or a token a step. */
		int64_t sw = t->list ? t->step_width : 1;
		if (!seq && type >= 0 && t->records == sv->records &&
		    (t->list || f.min_len != f.max_len) && t->max_steps > 0 &&
		    (sw == 1 || (sw > 1 && type == TF_COL_FLOAT))) {
			struct tfi_schema_col c;
			memset(&c, 0, sizeof c);
			c.packed_index = -1;
			c.column = -1;
			c.type = type;
			c.present = t->records;
			c.max_length = (int64_t)t->max_steps;
			c.step_width = sw;
			bad = (c.name = strdup(f.name)) == NULL ||
			      push_col(s, &c) ||
			      (type != TF_COL_FLOAT && push_vocab(s, t));
			seq = 1;
			continue;
		}
		if (type < 0 || !fixed ||
		    (f.min_len > 1 &&
		     (type != TF_COL_FLOAT || s->packed_name != NULL))) {
			/* Mixed kinds, missing in some records, varying in
			 * length, or a second list: not a column. */
			note_skip(skipped, size, f.name);
			continue;
		}
		struct tfi_schema_col c;
		if (f.min_len == 1) {
			bad = survey_col(t, 0, f.name, type, &c) ||
			      push_col(s, &c) ||
			      (type == TF_COL_BYTES && push_vocab(s, t));
			continue;
		}
		/* One list of floats: the packed layout, a column of
		 * statistics per position. */
		s->layout = TFI_LAYOUT_PACKED;
		s->packed_size = f.min_len;
		bad = (s->packed_name = strdup(f.name)) == NULL;
		for (size_t k = 0; !bad && k < f.min_len; k++) {
			char name[320];
			snprintf(name, sizeof name, "%.280s[%zu]", f.name, k);
			bad = survey_col(t, k, name, TF_COL_FLOAT, &c) ||
			      push_col(s, &c);
			if (!bad) {
				s->features[s->nfeatures - 1].packed_index =
				    (int64_t)k;
			}
		}
	}
	if (bad) {
		rc = tfi_set_error(sv, TF_ENOMEM, "out of memory");
	} else if (rc == TF_OK && !s->has_label) {
		rc = tfi_set_error(sv, TF_EFORMAT,
		                   "the records have no feature '%s' (name the "
		                   "label with --label)",
		                   label);
	}
	if (rc == TF_OK) {
		s->rows = sv->records;
		rc = tf_schema_write(s, NULL) == TF_OK
		         ? TF_OK
		         : tfi_set_error(sv, TF_ENOMEM, "out of memory");
	}
	if (rc != TF_OK) {
		tfi_schema_clear(s);
	}
	return rc;
}
