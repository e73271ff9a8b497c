/*
 * dataset.c - TFRecord Examples to dense training rows.
 *
 * The schema (jansson) gives the inputs: a list of features, each of a
 * width (1 for a CSV column, N for a packed list), in row order.  Decoding
 * walks the Example's features (sorted by name) against the inputs sorted
 * by name, so a row costs one pass over both.  Each epoch streams the
 * files through a shuffle buffer whose random generator is seeded from
 * (seed, epoch), so reading is reproducible and resumable.  Records
 * laid out as tf-csv2record writes them are read without decoding the
 * Example by the fast reader (fastread.c); the dataset's insides are
 * dataset_private.h's.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "internal.h"
#include "tf/batch.h"
#include "tf/dataset.h"
#include "tf/example.h"
#include "tf/file.h"
#include "tf/record.h"
#include "tf/rng.h"
#include "tf/schema.h"

#include "dataset_private.h"

static int cat_index(const struct tf_dataset *ds, const char *name);
static int64_t category_id(const struct cat *c, const void *s, size_t n);

const char *
tf_task_name(int task)
{
	switch (task) {
	case TF_TASK_BINARY:
		return "binary";
	case TF_TASK_MULTICLASS:
		return "multiclass";
	default:
		return "regression";
	}
}

int
tf_task_parse(const char *name)
{
	if (strcmp(name, "binary") == 0) {
		return TF_TASK_BINARY;
	}
	if (strcmp(name, "multiclass") == 0) {
		return TF_TASK_MULTICLASS;
	}
	if (strcmp(name, "regression") == 0) {
		return TF_TASK_REGRESSION;
	}
	return -1;
}

struct tf_dataset *
tf_dataset_new(void)
{
	struct tf_dataset *ds = calloc(1, sizeof *ds);
	if (ds != NULL) {
		ds->normalize = 1;
		ds->task = TF_TASK_BINARY;
		ds->classes = 2;
	}
	return ds;
}

static void
close_files(struct tf_dataset *ds)
{
	for (size_t i = 0; i < ds->nfiles; i++) {
		free(ds->files[i]);
	}
	free(ds->files);
	ds->files = NULL;
	ds->nfiles = 0;
}

void
tf_dataset_free(struct tf_dataset *ds)
{
	if (ds == NULL) {
		return;
	}
	for (size_t i = 0; i < ds->nin; i++) {
		free(ds->in[i].name);
		free(ds->in[i].mean);
		free(ds->in[i].inv_std);
	}
	for (int64_t c = 0; ds->colname != NULL && c < ds->width + ds->nids;
	     c++) {
		free(ds->colname[c]);
	}
	free(ds->colname);
	free(ds->colint);
	free(ds->colorder);
	for (size_t i = 0; i < ds->ncat; i++) {
		for (int64_t k = 0; k < ds->cats[i].n; k++) {
			free(ds->cats[i].vocab[k]);
		}
		free(ds->cats[i].vocab);
		free(ds->cats[i].vlen);
		free(ds->cats[i].name);
	}
	free(ds->cats);
	free(ds->crosses);
	free(ds->in);
	free(ds->by_name);
	free(ds->spos);
	free(ds->ftpl);
	free(ds->ftoff);
	free(ds->ftlen);
	free(ds->rtpl);
	free(ds->rmask);
	free(ds->roff);
	free(ds->rcol);
	free(ds->rmu);
	free(ds->ris);
	free(ds->fnlen);
	free(ds->fseen);
	free(ds->fslot);
	free(ds->label);
	tf_schema_free(ds->schema);
	tf_reader_free(ds->pre);
	tfi_buf_free(&ds->replay);
	free(ds->select);
	free(ds->exclude);
	free(ds->key);
	free(ds->kbuf);
	free(ds->keys);
	free(ds->buf);
	free(ds->ibuf);
	close_files(ds);
	tf_reader_free(ds->r);
	tf_example_free(ds->ex);
	free(ds);
}

static int
add_input(struct tf_dataset *ds, const char *name, int64_t width)
{
	if (width < 1 || width > (1 << 24)) {
		return tfi_set_error(ds, TF_EINVAL, "feature '%s': bad width",
		                     name);
	}
	for (size_t i = 0; i < ds->nin; i++) {
		if (strcmp(ds->in[i].name, name) == 0) {
			return tfi_set_error(ds, TF_EINVAL,
			                     "feature '%s' given twice", name);
		}
	}
	struct input *in = realloc(ds->in, (ds->nin + 1) * sizeof *in);
	if (in == NULL) {
		return tfi_set_error(ds, TF_ENOMEM, "out of memory");
	}
	ds->in = in;
	struct input *p = &ds->in[ds->nin];
	memset(p, 0, sizeof *p);
	p->name = strdup(name);
	p->width = width;
	p->col = ds->width;
	if (p->name == NULL) {
		return tfi_set_error(ds, TF_ENOMEM, "out of memory");
	}
	ds->nin++;
	ds->width += width;
	return TF_OK;
}

int
tf_dataset_add_feature(struct tf_dataset *ds, const char *name, int64_t width)
{
	return add_input(ds, name, width);
}

/*
 * How labels become classes.  A string label (the schema's vocabulary)
 * is its place in the vocabulary.  An int64 label whose schema classes
 * fit 0..K-1 is its own class; otherwise (1..K, -1/+1, 0/5/9) class i is
 * the i-th of the sorted values, when the model has as many classes as
 * the schema has values.  A model trained with a class per value up to
 * the largest (before this map; its unused classes are never predicted)
 * keeps reading its labels as they stand.
 */
static void
decide_label_map(struct tf_dataset *ds)
{
	const struct tf_schema *sc = ds->schema;
	ds->lmap = LMAP_NONE;
	ds->lvals = NULL;
	ds->nlvals = 0;
	ds->lvocab = NULL;
	if (sc == NULL || !sc->has_label || ds->label == NULL ||
	    ds->task == TF_TASK_REGRESSION ||
	    strcmp(ds->label, sc->label.name) != 0) {
		return;
	}
	if (sc->label.type == TF_COL_BYTES) {
		const struct tfi_vocab *v = tfi_schema_vocab(sc, ds->label);
		if (v != NULL && !v->over && v->n > 0) {
			ds->lmap = LMAP_VOCAB;
			ds->lvocab = v;
		}
		return;
	}
	if (sc->label.type != TF_COL_INT64 || sc->nclasses == 0) {
		return;
	}
	int64_t mn = sc->classes[0], mx = sc->classes[sc->nclasses - 1];
	if ((mn < 0 || mx >= ds->classes) &&
	    (int64_t)sc->nclasses <= ds->classes) {
		ds->lmap = LMAP_INTS;
		ds->lvals = sc->classes;
		ds->nlvals = sc->nclasses;
	}
}

/* A label value's class under the map, or -1 when it is none. */
static int64_t
mapped_class(const struct tf_dataset *ds, int64_t v)
{
	size_t lo = 0, hi = ds->nlvals;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ds->lvals[mid] == v) {
			return (int64_t)mid;
		}
		if (ds->lvals[mid] < v) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return -1;
}

static int64_t
vocab_class(const struct tf_dataset *ds, const void *s, size_t n)
{
	for (size_t i = 0; i < ds->lvocab->n; i++) {
		const char *w = ds->lvocab->values[i];
		if (strlen(w) == n && memcmp(w, s, n) == 0) {
			return (int64_t)i;
		}
	}
	return -1;
}

int
tf_dataset_class_name(const struct tf_dataset *ds, int64_t k, char *buf,
                      size_t size)
{
	if (k < 0 || k >= ds->classes || ds->task == TF_TASK_REGRESSION) {
		return tfi_set_error((struct tf_dataset *)ds, TF_EINVAL,
		                     "no class %lld", (long long)k);
	}
	int n;
	if (ds->lmap == LMAP_VOCAB && (size_t)k < ds->lvocab->n) {
		n = snprintf(buf, size, "%s", ds->lvocab->values[k]);
	} else if (ds->lmap == LMAP_INTS && (size_t)k < ds->nlvals) {
		n = snprintf(buf, size, "%lld", (long long)ds->lvals[k]);
	} else {
		n = snprintf(buf, size, "%lld", (long long)k);
	}
	if (n < 0 || (size_t)n >= size) {
		return tfi_set_error((struct tf_dataset *)ds, TF_EINVAL,
		                     "class %lld: name too long", (long long)k);
	}
	return TF_OK;
}

int
tf_dataset_set_label(struct tf_dataset *ds, const char *name, int task,
                     int64_t classes)
{
	char *copy = name ? strdup(name) : NULL; /* name may be ds->label */
	if (name != NULL && copy == NULL) {
		return tfi_set_error(ds, TF_ENOMEM, "out of memory");
	}
	free(ds->label);
	ds->label = copy;
	ds->ylen = copy ? strlen(copy) : 0;
	ds->task = task;
	ds->classes = task == TF_TASK_REGRESSION ? 1
	              : task == TF_TASK_BINARY   ? 2
	                                         : classes;
	decide_label_map(ds);
	return TF_OK;
}

int
tf_dataset_set_key(struct tf_dataset *ds, const char *name)
{
	free(ds->key);
	ds->key = name ? strdup(name) : NULL;
	if (name != NULL && ds->key == NULL) {
		return tfi_set_error(ds, TF_ENOMEM, "out of memory");
	}
	return TF_OK;
}

const char *
tf_dataset_key(const struct tf_dataset *ds, size_t i)
{
	return ds->keys != NULL && i < ds->keys_cap ? ds->keys[i] : "";
}

void
tf_dataset_set_label_optional(struct tf_dataset *ds, int on)
{
	ds->label_optional = on;
}

void
tf_dataset_set_normalize(struct tf_dataset *ds, int on)
{
	ds->normalize = on;
}

int64_t
tf_dataset_width(const struct tf_dataset *ds)
{
	return ds->width;
}

int64_t
tf_dataset_id_width(const struct tf_dataset *ds)
{
	return ds->nids;
}

int64_t
tf_dataset_columns(const struct tf_dataset *ds)
{
	return ds->width + ds->nids;
}

int
tf_dataset_task(const struct tf_dataset *ds)
{
	return ds->task;
}

int64_t
tf_dataset_classes(const struct tf_dataset *ds)
{
	return ds->classes;
}

const char *
tf_dataset_label_name(const struct tf_dataset *ds)
{
	return ds->label ? ds->label : "";
}

const struct tf_schema *
tf_dataset_schema(const struct tf_dataset *ds)
{
	return ds->schema;
}

const char *
tf_dataset_schema_text(const struct tf_dataset *ds)
{
	return ds->schema ? tf_schema_text(ds->schema) : "";
}

/* Mean and 1/std of a numeric column description; 0 and 1 otherwise. */
static void
col_stats(const struct tfi_schema_col *col, float *mean, float *inv_std)
{
	*mean = col->has_stats ? (float)col->mean : 0.0f;
	double sd = col->has_stats ? col->std : 1.0;
	*inv_std = sd > 1e-12 ? (float)(1.0 / sd) : 1.0f;
}

static int
by_column_name(const void *a, const void *b)
{
	return strcmp(((const struct colref *)a)->name,
	              ((const struct colref *)b)->name);
}

/* The name index of the columns, once they are named. */
static int
index_columns(struct tf_dataset *ds)
{
	size_t n = (size_t)(ds->width + ds->nids);
	struct colref *o = realloc(ds->colorder, n * sizeof *o);
	if (o == NULL) {
		return tfi_set_error(ds, TF_ENOMEM, "out of memory");
	}
	ds->colorder = o;
	for (size_t c = 0; c < n; c++) {
		o[c] = (struct colref){ds->colname[c], (int64_t)c};
	}
	qsort(o, n, sizeof *o, by_column_name);
	return TF_OK;
}

/* Name each column of a row after the schema feature it holds. */
static int
name_columns(struct tf_dataset *ds, const char *origin)
{
	ds->colname = calloc((size_t)ds->width, sizeof *ds->colname);
	ds->colint = calloc((size_t)ds->width, 1);
	if (ds->colname == NULL || ds->colint == NULL) {
		return tfi_set_error(ds, TF_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < ds->schema->nfeatures; i++) {
		const struct tfi_schema_col *f = &ds->schema->features[i];
		int64_t col = -1;
		if (f->packed_index >= 0) {
			col = ds->in[0].col + f->packed_index;
		} else {
			for (size_t k = 0; k < ds->nin; k++) {
				if (strcmp(ds->in[k].name, f->name) == 0 &&
				    ds->in[k].width == 1) {
					col = ds->in[k].col;
				}
			}
		}
		if (col < 0 || col >= ds->width) {
			continue; /* bytes: not a row column */
		}
		if (ds->colname[col] != NULL) {
			return tfi_set_error(ds, TF_EFORMAT,
			                     "%s: two features at column %lld",
			                     origin, (long long)col);
		}
		ds->colname[col] = strdup(f->name);
		ds->colint[col] = f->type == TF_COL_INT64;
		if (ds->colname[col] == NULL) {
			return tfi_set_error(ds, TF_ENOMEM, "out of memory");
		}
	}
	for (int64_t c = 0; c < ds->width; c++) {
		if (ds->colname[c] == NULL) {
			return tfi_set_error(ds, TF_EFORMAT,
			                     "%s: no feature describes column "
			                     "%lld of a row",
			                     origin, (long long)c);
		}
	}
	return index_columns(ds);
}

/* The input holding row column c (inputs lie in column order). */
static const struct input *
column_input(const struct tf_dataset *ds, int64_t c)
{
	size_t lo = 0, hi = ds->nin;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct input *in = &ds->in[mid];
		if (c < in->col) {
			hi = mid;
		} else if (c >= in->col + in->width) {
			lo = mid + 1;
		} else {
			return in;
		}
	}
	return NULL;
}

int64_t
tf_dataset_find_column(const struct tf_dataset *ds, const char *name)
{
	size_t lo = 0, hi = ds->colorder ? (size_t)(ds->width + ds->nids) : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int cmp = strcmp(ds->colorder[mid].name, name);
		if (cmp == 0) {
			return ds->colorder[mid].col;
		}
		if (cmp < 0) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return -1;
}

const char *
tf_dataset_column(const struct tf_dataset *ds, int64_t c, int *is_int,
                  float *mean, float *inv_std)
{
	const struct input *in = column_input(ds, c);
	int known = ds->colname != NULL && c >= 0 && c < ds->width + ds->nids;
	*is_int = known ? ds->colint[c] : 0;
	*mean = 0.0f;
	*inv_std = 1.0f;
	if (in != NULL && ds->normalize && in->mean != NULL) {
		*mean = in->mean[c - in->col];
		*inv_std = in->inv_std[c - in->col];
	}
	return known ? ds->colname[c] : NULL;
}

/* A cross's id from its two columns' ids: a hash into buckets, or -1
 * when either is missing. */
static int64_t
cross_id(const struct tf_dataset *ds, const struct cross *x, const int64_t *ids)
{
	int64_t a = ids[x->a], b = ids[x->b];
	if (a < 0 || b < 0) {
		return -1;
	}
	uint64_t h = (uint64_t)a * 0x9e3779b97f4a7c15ULL ^ (uint64_t)b;
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 29;
	return (int64_t)(h % (uint64_t)ds->buckets);
}

/* A row's ids: the categorical ones, then the crosses computed. */
static void
fill_crosses(const struct tf_dataset *ds, int64_t *ids)
{
	for (size_t i = 0; i < ds->ncross; i++) {
		ids[ds->ncat + i] = cross_id(ds, &ds->crosses[i], ids);
	}
}

void
tf_dataset_standardize(const struct tf_dataset *ds, float *x, int64_t *ids,
                       size_t rows)
{
	for (size_t r = 0; ds->ncross > 0 && r < rows; r++) {
		fill_crosses(ds, ids + r * (size_t)ds->nids);
	}
	if (!ds->normalize) {
		return;
	}
	for (size_t k = 0; k < ds->nin; k++) {
		const struct input *in = &ds->in[k];
		if (in->mean == NULL) {
			continue;
		}
		for (size_t r = 0; r < rows; r++) {
			float *v = x + r * (size_t)ds->width + in->col;
			for (int64_t j = 0; j < in->width; j++) {
				v[j] = (v[j] - in->mean[j]) * in->inv_std[j];
			}
		}
	}
}

static int
set_stats(struct tf_dataset *ds, struct input *in)
{
	in->mean = calloc((size_t)in->width, sizeof(float));
	in->inv_std = malloc((size_t)in->width * sizeof(float));
	if (in->mean == NULL || in->inv_std == NULL) {
		return tfi_set_error(ds, TF_ENOMEM, "out of memory");
	}
	for (int64_t i = 0; i < in->width; i++) {
		in->inv_std[i] = 1.0f;
	}
	return TF_OK;
}

int
tf_dataset_select(struct tf_dataset *ds, const char *features,
                  const char *exclude)
{
	free(ds->select);
	free(ds->exclude);
	ds->select = features && *features ? strdup(features) : NULL;
	ds->exclude = exclude && *exclude ? strdup(exclude) : NULL;
	return (features && *features && !ds->select) ||
	               (exclude && *exclude && !ds->exclude)
	           ? tfi_set_error(ds, TF_ENOMEM, "out of memory")
	           : TF_OK;
}

/* Whether name is an item of the comma list. */
static int
listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p != NULL && *p;) {
		size_t k = strcspn(p, ",");
		if (k == n && strncmp(p, name, n) == 0) {
			return 1;
		}
		p += k + (p[k] == ',');
	}
	return 0;
}

/* Every item of a comma list names a feature of the schema (or the
 * label, for --features). */
static int
check_list(struct tf_dataset *ds, const char *flag, const char *list)
{
	const struct tf_schema *sc = ds->schema;
	for (const char *p = list; p != NULL && *p;) {
		size_t k = strcspn(p, ",");
		int found = 0;
		for (size_t i = 0; i < sc->nfeatures && !found; i++) {
			found = strlen(sc->features[i].name) == k &&
			        strncmp(sc->features[i].name, p, k) == 0;
		}
		if (!found) {
			return tfi_set_error(
			    ds, TF_EINVAL,
			    "%s: no feature '%.*s' in the schema", flag,
			    (int)(k < 200 ? k : 200), p);
		}
		p += k + (p[k] == ',');
	}
	return TF_OK;
}

/* Keep only the features --features names, less those --exclude names;
 * the schema's text is then the selection's (what checkpoints keep). */
static int
select_features(struct tf_dataset *ds)
{
	struct tf_schema *sc = ds->schema;
	int rc = check_list(ds, "--features", ds->select);
	rc = rc ? rc : check_list(ds, "--exclude", ds->exclude);
	if (rc != TF_OK) {
		return rc;
	}
	size_t k = 0;
	for (size_t i = 0; i < sc->nfeatures; i++) {
		struct tfi_schema_col *f = &sc->features[i];
		int keep =
		    (ds->select == NULL || listed(ds->select, f->name)) &&
		    !listed(ds->exclude, f->name);
		if (!keep && f->packed_index >= 0) {
			return tfi_set_error(
			    ds, TF_EINVAL,
			    "'%s' is inside the packed list '%s': "
			    "select packed features when "
			    "converting (tf-csv2record --columns)",
			    f->name, sc->packed_name);
		}
		if (keep) {
			sc->features[k++] = *f;
		} else {
			free(f->name);
		}
	}
	sc->nfeatures = k;
	return tf_schema_write(sc, NULL) == TF_OK
	           ? TF_OK
	           : tfi_set_error(ds, TF_ENOMEM, "out of memory");
}

/* Take inputs, label and statistics from the parsed schema. */
static int
use_schema(struct tf_dataset *ds, const char *origin)
{
	const struct tf_schema *sc = ds->schema;
	int rc;
	if ((ds->select != NULL || ds->exclude != NULL) &&
	    (rc = select_features(ds)) != TF_OK) {
		return rc;
	}
	if (sc->layout == TFI_LAYOUT_LIBSVM) {
		/* Sparse ids/values, scattered into a dense row of
		 * max_index + 1 columns (unstandardised). */
		if (sc->max_index >= (1 << 20)) {
			return tfi_set_error(
			    ds, TF_EFORMAT,
			    "%s: sparse max_index %llu is out of "
			    "range for a dense model (at most %d)",
			    origin, (unsigned long long)sc->max_index,
			    (1 << 20) - 1);
		}
		ds->sparse = 1;
		ds->width = (int64_t)sc->max_index + 1;
	}
	/* Inputs: the packed list, then any separate numeric columns. */
	if (sc->packed_name != NULL) {
		if ((rc = add_input(ds, sc->packed_name,
		                    (int64_t)sc->packed_size)) != TF_OK ||
		    (rc = set_stats(ds, &ds->in[ds->nin - 1])) != TF_OK) {
			return rc;
		}
	}
	for (size_t i = 0; i < sc->nfeatures; i++) {
		const struct tfi_schema_col *f = &sc->features[i];
		if (f->packed_index >= 0 && ds->nin > 0) {
			struct input *p = &ds->in[0];
			if (f->packed_index < p->width) {
				col_stats(f, &p->mean[f->packed_index],
				          &p->inv_std[f->packed_index]);
			}
			continue;
		}
		if (f->type == TF_COL_BYTES) {
			continue; /* categorical: for embedding models */
		}
		if ((rc = add_input(ds, f->name, 1)) != TF_OK ||
		    (rc = set_stats(ds, &ds->in[ds->nin - 1])) != TF_OK) {
			return rc;
		}
		col_stats(f, ds->in[ds->nin - 1].mean,
		          ds->in[ds->nin - 1].inv_std);
	}
	if (ds->nin == 0 && !ds->sparse) {
		return tfi_set_error(ds, TF_EFORMAT, "%s: no numeric features",
		                     origin);
	}
	if (sc->has_label) {
		int task = TF_TASK_REGRESSION;
		int64_t k = 1;
		const struct tfi_vocab *v =
		    sc->label.type == TF_COL_BYTES
		        ? tfi_schema_vocab(sc, sc->label.name)
		        : NULL;
		if (v != NULL && !v->over && v->n > 0) {
			k = (int64_t)v->n; /* string labels: the vocabulary */
			task = k <= 2 ? TF_TASK_BINARY : TF_TASK_MULTICLASS;
		} else if (sc->label.type == TF_COL_INT64 && sc->nclasses > 0) {
			/* 0..K-1 as they stand; other values (1..K, -1/+1)
			 * a class each, in order (decide_label_map). */
			int64_t mn = sc->classes[0];
			int64_t mx = sc->classes[sc->nclasses - 1];
			k = mn >= 0 && mx < (int64_t)sc->nclasses
			        ? mx + 1
			        : (int64_t)sc->nclasses;
			k = k < 2 && mn >= 0 && mx <= 1 ? 2 : k;
			task = k <= 2 ? TF_TASK_BINARY : TF_TASK_MULTICLASS;
		}
		tf_dataset_set_label(ds, sc->label.name, task, k);
	}
	return ds->sparse ? TF_OK : name_columns(ds, origin);
}

int
tf_dataset_parse_schema(struct tf_dataset *ds, const char *text,
                        const char *origin)
{
	if (ds->schema == NULL && (ds->schema = tf_schema_new()) == NULL) {
		return tfi_set_error(ds, TF_ENOMEM, "out of memory");
	}
	int rc = tf_schema_parse(ds->schema, text, origin);
	if (rc != TF_OK) {
		return tfi_set_error(ds, rc, "%s", tf_errmsg(ds->schema));
	}
	return use_schema(ds, origin);
}

int
tf_dataset_load_schema(struct tf_dataset *ds, const char *path)
{
	if (ds->schema == NULL && (ds->schema = tf_schema_new()) == NULL) {
		return tfi_set_error(ds, TF_ENOMEM, "out of memory");
	}
	int rc = tf_schema_load(ds->schema, path);
	if (rc != TF_OK) {
		return tfi_set_error(ds, rc, "%s", tf_errmsg(ds->schema));
	}
	return use_schema(ds, path);
}

/* ---- reading ---------------------------------------------------------- */

static int
cmp_input_name(const void *a, const void *b, void *ctx)
{
	const struct input *in = ctx;
	return strcmp(in[*(const size_t *)a].name, in[*(const size_t *)b].name);
}

/* The memory a process may have: physical memory, or less under a
 * limit on its address space. */
static double
memory_limit(void)
{
	double phys =
	    (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
	struct rlimit rl;
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (double)rl.rlim_cur < phys) {
		return (double)rl.rlim_cur;
	}
	return phys > 0 ? phys : 1e18;
}

/* The shuffle buffer's bytes, known before it is allocated: a buffer that
 * cannot fit (wide rows with the default size) is refused, naming its
 * size and the flag that lowers it, instead of failing as "out of memory"
 * once asked for. */
static int
check_buffer_memory(struct tf_dataset *ds)
{
	double row = (double)(ds->width + 1) * sizeof(float) +
	             (double)ds->nids * sizeof(int64_t) + sizeof *ds->spos +
	             (ds->key ? KEYLEN : 0);
	double need = row * (double)ds->shuffle, have = memory_limit();
	if (need <= have / 2) {
		return TF_OK;
	}
	double fit = floor(have / 2 / row);
	return tfi_set_error(
	    ds, TF_EINVAL,
	    "a shuffle buffer of %zu rows of %lld features%s needs %.1f GB, "
	    "more than half of the %.1f GB this process may use: lower "
	    "--shuffle-buffer (at most %.0f rows fit)",
	    ds->shuffle, (long long)ds->width,
	    ds->nids > 0 ? " and their ids" : "", need / 1e9, have / 1e9, fit);
}

int
tf_dataset_open(struct tf_dataset *ds, const char *const *files, size_t nfiles,
                uint64_t epochs, size_t shuffle, uint64_t seed)
{
	if (ds->nin == 0 && !ds->sparse) {
		return tfi_set_error(ds, TF_EINVAL, "no features to read");
	}
	int64_t covered = 0; /* the inputs fill every column of a row */
	for (size_t i = 0; i < ds->nin; i++) {
		covered += ds->in[i].width;
	}
	ds->fast = !ds->no_fast && !ds->sparse && ds->ncat == 0 &&
	           ds->key == NULL && ds->lmap == LMAP_NONE &&
	           covered == ds->width;
	ds->ylen = ds->label ? strlen(ds->label) : 0;
	free(ds->fnlen);
	free(ds->fseen);
	free(ds->fslot);
	ds->fnlen = malloc((ds->nin + 1) * sizeof *ds->fnlen);
	ds->fseen = calloc(ds->nin + 1, sizeof *ds->fseen);
	ds->fslot = malloc((ds->nin + 1) * sizeof *ds->fslot);
	if (!ds->fnlen || !ds->fseen || !ds->fslot) {
		return tfi_set_error(ds, TF_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < ds->nin; i++) {
		ds->fnlen[i] = strlen(ds->in[i].name);
		ds->fslot[i] = -2;
	}
	ds->fslot[ds->nin] = -2;
	if (tfi_ds_templates(ds) != TF_OK) {
		return tfi_set_error(ds, TF_ENOMEM, "out of memory");
	}
	close_files(ds);
	ds->files = calloc(nfiles + 1, sizeof *ds->files);
	if (ds->files == NULL) {
		return tfi_set_error(ds, TF_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < nfiles; i++) {
		if ((ds->files[i] = strdup(files[i])) == NULL) {
			return tfi_set_error(ds, TF_ENOMEM, "out of memory");
		}
		ds->nfiles++;
		if (strcmp(files[i], "-") == 0) {
			ds->stdin_used = 1;
		}
	}
	ds->epochs = epochs;
	ds->shuffle = shuffle > 1 ? shuffle : 1;
	ds->seed = seed;
	if (check_buffer_memory(ds) != TF_OK) {
		return TF_EINVAL;
	}
	free(ds->by_name);
	free(ds->buf);
	ds->by_name = malloc((ds->nin + 1) * sizeof *ds->by_name);
	ds->buf = malloc(ds->shuffle * (size_t)(ds->width + 1) * sizeof(float));
	free(ds->ibuf);
	ds->ibuf = malloc(ds->shuffle * (size_t)ds->nids * sizeof(int64_t) + 1);
	free(ds->spos);
	ds->spos = calloc(ds->shuffle, sizeof *ds->spos);
	if (ds->spos == NULL) {
		return tfi_set_error(ds, TF_ENOMEM, "out of memory");
	}
	ds->unseekable = 0;
	free(ds->kbuf);
	ds->kbuf = ds->key ? calloc(ds->shuffle, KEYLEN) : NULL;
	if (ds->key != NULL && ds->kbuf == NULL) {
		return tfi_set_error(ds, TF_ENOMEM, "out of memory");
	}
	if (ds->r == NULL) {
		ds->r = tf_reader_new();
	}
	if (ds->ex == NULL) {
		ds->ex = tf_example_new();
	}
	if (!ds->by_name || !ds->buf || !ds->ibuf || !ds->r || !ds->ex) {
		return tfi_set_error(ds, TF_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < ds->nin; i++) {
		ds->by_name[i] = i;
	}
	qsort_r(ds->by_name, ds->nin, sizeof *ds->by_name, cmp_input_name,
	        ds->in);
	return tf_dataset_seek(ds, 0, 0);
}

uint64_t
tf_dataset_epoch(const struct tf_dataset *ds)
{
	return ds->epoch;
}

int
tf_dataset_set_shard(struct tf_dataset *ds, uint64_t shard, uint64_t shards)
{
	if (shards == 0 || shard >= shards) {
		return tfi_set_error(ds, TF_EINVAL, "shard %llu of %llu",
		                     (unsigned long long)shard,
		                     (unsigned long long)shards);
	}
	ds->shard = shard;
	ds->shards = shards;
	return TF_OK;
}

uint64_t
tf_dataset_done(const struct tf_dataset *ds)
{
	return ds->done;
}

/* Start reading an epoch from its first file. */
static void
epoch_start(struct tf_dataset *ds, uint64_t epoch)
{
	ds->epoch = epoch;
	ds->done = 0;
	ds->seen = 0;
	ds->file = 0;
	ds->reading = 0;
	ds->nbuf = 0;
	ds->at_end = 0;
	tf_rng_seed(&ds->rng, ds->seed * 0x9e3779b97f4a7c15ull + epoch);
}

/* A feature's first value as text (a key to pass through). */
static void
key_text(const struct tf_feature *f, char *out)
{
	out[0] = '\0';
	if (f->count == 0) {
		return;
	}
	if (f->kind == TF_KIND_INT64) {
		snprintf(out, KEYLEN, "%lld", (long long)f->ints[0]);
	} else if (f->kind == TF_KIND_FLOAT) {
		tf_format_float(out, KEYLEN, f->floats[0]);
	} else if (f->kind == TF_KIND_BYTES) {
		size_t k =
		    f->bytes[0].len < KEYLEN - 1 ? f->bytes[0].len : KEYLEN - 1;
		memcpy(out, f->bytes[0].data, k);
		out[k] = '\0';
	}
}

/* A record's label feature as the model's class (or value) in *label;
 * a label that is not one of the model's classes is a data error naming
 * the record (when the label matters: not for predictions). */
static int
read_label(struct tf_dataset *ds, const struct tf_feature *f, const char *file,
           uint64_t rec, float *label)
{
	unsigned long long r = (unsigned long long)rec;
	if (f->count != 1 ||
	    (f->kind == TF_KIND_BYTES && ds->lmap != LMAP_VOCAB)) {
		return tfi_set_error(ds, TF_EFORMAT,
		                     "%s: record %llu: label '%s' is not one "
		                     "number",
		                     file, r, ds->label);
	}
	int64_t k;
	if (ds->lmap == LMAP_VOCAB) {
		if (f->kind != TF_KIND_BYTES) {
			return tfi_set_error(
			    ds, TF_EFORMAT,
			    "%s: record %llu: label '%s' is a number; the "
			    "model's classes are strings",
			    file, r, ds->label);
		}
		k = vocab_class(ds, f->bytes[0].data, f->bytes[0].len);
		if (k < 0 && !ds->label_optional) {
			int n =
			    f->bytes[0].len > 64 ? 64 : (int)f->bytes[0].len;
			return tfi_set_error(
			    ds, TF_EFORMAT,
			    "%s: record %llu: label '%s' is '%.*s', not one "
			    "of the model's %zu classes",
			    file, r, ds->label, n,
			    (const char *)f->bytes[0].data, ds->lvocab->n);
		}
		*label = k < 0 ? NAN : (float)k;
		return TF_OK;
	}
	double v = f->kind == TF_KIND_INT64 ? (double)f->ints[0] : f->floats[0];
	if (ds->lmap == LMAP_INTS) {
		k = v == floor(v) ? mapped_class(ds, (int64_t)v) : -1;
		if (k < 0 && !ds->label_optional) {
			return tfi_set_error(
			    ds, TF_EFORMAT,
			    "%s: record %llu: label '%s' is %g, not one of "
			    "the model's classes (%lld to %lld)",
			    file, r, ds->label, v, (long long)ds->lvals[0],
			    (long long)ds->lvals[ds->nlvals - 1]);
		}
		*label = k < 0 ? NAN : (float)k;
		return TF_OK;
	}
	*label = (float)v;
	if (!is_class(ds, *label)) {
		return tfi_set_error(ds, TF_EFORMAT,
		                     "%s: record %llu: label '%s' is %g, not a "
		                     "class from 0 to %lld",
		                     file, r, ds->label, v,
		                     (long long)ds->classes - 1);
	}
	return TF_OK;
}

/* Decode a record into row (width floats), ids (nids) and *label. */
static int missing(struct tf_dataset *ds, const char *file, uint64_t rec);

static int
decode(struct tf_dataset *ds, const uint8_t *d, size_t n, float *row,
       int64_t *ids, float *label, char *key)
{
	if (ds->fast && key == NULL &&
	    tfi_ds_fast_record(ds, d, n, row, label)) {
		ds->fast_hits++;
		return TF_OK;
	}
	const char *file = ds->files[ds->file];
	/* the record's index in its file (standard input's: as given) */
	uint64_t rec =
	    (ds->on_pre ? ds->stdin_rec : tf_reader_count(ds->r)) - 1;
	if (tf_example_parse(ds->ex, d, n) != TF_OK) {
		return tfi_set_error(ds, TF_EFORMAT, "%s: record %llu: %s",
		                     file, (unsigned long long)rec,
		                     tf_errmsg(ds->ex));
	}
	for (int64_t c = 0; c < ds->width; c++) {
		row[c] = 0.0f;
	}
	for (size_t k = 0; k < ds->ncat; k++) {
		ids[k] = -1; /* missing: no id */
	}
	int have_label = ds->label == NULL;
	size_t found = 0; /* inputs the record holds */
	int key_found = key == NULL;
	struct tf_feature sids = {0}, vals = {0}; /* sparse layout */
	*label = NAN;
	size_t nf = tf_example_count(ds->ex), k = 0;
	if (key != NULL) {
		key[0] = '\0';
	}
	for (size_t i = 0; i < nf; i++) {
		struct tf_feature f;
		tf_example_get(ds->ex, i, &f);
		if (key != NULL && strcmp(f.name, ds->key) == 0) {
			key_text(&f, key);
			key_found = 1;
		}
		if (!have_label && strcmp(f.name, ds->label) == 0) {
			int rc = read_label(ds, &f, file, rec, label);
			if (rc != TF_OK) {
				return rc;
			}
			have_label = 1;
			continue;
		}
		if (ds->ncat > 0 && f.kind == TF_KIND_BYTES) {
			int ci = cat_index(ds, f.name);
			if (ci >= 0 && f.count > 0) {
				ids[ci] =
				    category_id(&ds->cats[ci], f.bytes[0].data,
				                f.bytes[0].len);
			}
			continue;
		}
		if (ds->sparse) {
			if (strcmp(f.name, "ids") == 0 &&
			    f.kind == TF_KIND_INT64) {
				sids = f;
			} else if (strcmp(f.name, "values") == 0 &&
			           f.kind == TF_KIND_FLOAT) {
				vals = f;
			}
			continue;
		}
		/* Inputs are sorted by name, like the Example's features. */
		int c = 1;
		while (k < ds->nin &&
		       (c = strcmp(ds->in[ds->by_name[k]].name, f.name)) < 0) {
			k++;
		}
		if (k == ds->nin || c != 0) {
			continue; /* a feature the model does not use */
		}
		const struct input *in = &ds->in[ds->by_name[k]];
		found++;
		if ((int64_t)f.count != in->width ||
		    (f.kind != TF_KIND_FLOAT && f.kind != TF_KIND_INT64)) {
			return tfi_set_error(
			    ds, TF_EFORMAT,
			    "%s: record %llu: feature '%s' has "
			    "%zu %s values, the model expects "
			    "%lld numbers",
			    file, (unsigned long long)rec, f.name, f.count,
			    tf_kind_name(f.kind), (long long)in->width);
		}
		float *dst = row + in->col;
		for (int64_t j = 0; j < in->width; j++) {
			float v = f.kind == TF_KIND_FLOAT ? f.floats[j]
			                                  : (float)f.ints[j];
			if (ds->normalize && in->mean != NULL) {
				v = (v - in->mean[j]) * in->inv_std[j];
			}
			dst[j] = v;
		}
	}
	if (ds->sparse) {
		if (sids.count != vals.count) {
			return tfi_set_error(ds, TF_EFORMAT,
			                     "%s: record %llu: %zu ids but %zu "
			                     "values",
			                     file, (unsigned long long)rec,
			                     sids.count, vals.count);
		}
		for (size_t k2 = 0; k2 < sids.count; k2++) {
			int64_t id = sids.ints[k2];
			if (id < 0 || id >= ds->width) {
				return tfi_set_error(
				    ds, TF_EFORMAT,
				    "%s: record %llu: index %lld is beyond the "
				    "schema's max_index %lld",
				    file, (unsigned long long)rec,
				    (long long)id, (long long)ds->width - 1);
			}
			row[id] = vals.floats[k2];
		}
	}
	if (!have_label && !ds->label_optional) {
		return tfi_set_error(ds, TF_EFORMAT,
		                     "%s: record %llu: no label '%s'", file,
		                     (unsigned long long)rec, ds->label);
	}
	if (found < ds->nin && !ds->sparse && !ds->allow_missing) {
		return missing(ds, file, rec);
	}
	if (!key_found) {
		return tfi_set_error(ds, TF_EFORMAT,
		                     "%s: record %llu: no feature '%s' to pass "
		                     "through (--key)",
		                     file, (unsigned long long)rec, ds->key);
	}
	fill_crosses(ds, ids);
	return TF_OK;
}

#define STDIN_KEEP ((size_t)256 << 20)

/* Standard input's reader, opened on its first read. */
static int
open_stdin(struct tf_dataset *ds)
{
	if (ds->pre != NULL) {
		return TF_OK;
	}
	ds->pre = tf_reader_new();
	if (ds->pre == NULL) {
		return tfi_set_error(ds, TF_ENOMEM, "out of memory");
	}
	ds->stdin_kept = 1;
	if (tf_reader_open(ds->pre, "-", TF_COMPRESS_AUTO) != TF_OK) {
		return tfi_set_error(ds, tf_errcode(ds->pre), "%s",
		                     tf_errmsg(ds->pre));
	}
	return TF_OK;
}

/* Keep a record of standard input for later epochs, while they fit. */
static int
keep_stdin(struct tf_dataset *ds, const uint8_t *d, size_t n)
{
	if (!ds->stdin_kept) {
		return TF_OK;
	}
	if (ds->replay.len + 8 + n > STDIN_KEEP) {
		ds->stdin_kept = 0; /* one pass only */
		return TF_OK;
	}
	uint8_t len[8];
	tfi_put_le64(len, n);
	return tfi_buf_append(&ds->replay, len, 8) ||
	               tfi_buf_append(&ds->replay, d, n)
	           ? tfi_set_error(ds, TF_ENOMEM, "out of memory")
	           : TF_OK;
}

/* The next record of standard input: those kept, then the rest of the
 * stream.  A later epoch reads it again only when all of it was kept. */
static int
next_stdin(struct tf_dataset *ds, const uint8_t **d, size_t *n)
{
	if (ds->epoch > 0 && !ds->stdin_kept) {
		return TF_EOF;
	}
	if (ds->replay_pos < ds->replay.len) {
		ds->stdin_rec++;
		*n = (size_t)tfi_get_le64(ds->replay.data + ds->replay_pos);
		*d = ds->replay.data + ds->replay_pos + 8;
		ds->replay_pos += 8 + *n;
		return TF_OK;
	}
	if (ds->pre_eof) {
		return TF_EOF;
	}
	int rc = tf_reader_next(ds->pre, d, n);
	if (rc == TF_EOF) {
		ds->pre_eof = 1;
	}
	ds->stdin_rec += rc == TF_OK;
	if (rc == TF_OK && (rc = keep_stdin(ds, *d, *n)) == TF_OK) {
		ds->replay_pos = ds->replay.len;
	}
	return rc;
}

int
tf_dataset_stdin_once(const struct tf_dataset *ds)
{
	return ds->pre != NULL && !ds->stdin_kept;
}

/* The first input of the model the record in ds->ex lacks, named. */
static int
missing(struct tf_dataset *ds, const char *file, uint64_t rec)
{
	for (size_t k = 0; k < ds->nin; k++) {
		const char *name = ds->in[ds->by_name[k]].name;
		struct tf_feature f;
		if (tf_example_find(ds->ex, name, &f) != TF_OK) {
			return tfi_set_error(
			    ds, TF_EFORMAT,
			    "%s: record %llu: no feature '%s', one of the "
			    "model's %zu (records of other data?  "
			    "--allow-missing fills what a record lacks with "
			    "the training mean)",
			    file, (unsigned long long)rec, name, ds->nin);
		}
	}
	return TF_OK;
}

void
tf_dataset_set_allow_missing(struct tf_dataset *ds, int on)
{
	ds->allow_missing = on;
}

/* The next record of the epoch, decoded into shuffle buffer slot i;
 * TF_EOF at its end. */
static int
read_one(struct tf_dataset *ds, size_t i)
{
	float *row = ds->buf + i * (size_t)(ds->width + 1);
	int64_t *ids = ds->ibuf + i * (size_t)ds->nids;
	char *key = ds->kbuf ? ds->kbuf[i] : NULL;
	for (;;) {
		if (ds->file >= ds->nfiles) {
			return TF_EOF;
		}
		if (!ds->reading) {
			ds->on_pre = strcmp(ds->files[ds->file], "-") == 0;
			ds->replay_pos = 0;
			ds->stdin_rec = 0;
			if (ds->on_pre && open_stdin(ds) != TF_OK) {
				return ds->err.code;
			}
			if (!ds->on_pre &&
			    tf_reader_open(ds->r, ds->files[ds->file],
			                   TF_COMPRESS_AUTO) != TF_OK) {
				return tfi_set_error(ds, tf_errcode(ds->r),
				                     "%s", tf_errmsg(ds->r));
			}
			ds->reading = 1;
		}
		const uint8_t *d;
		size_t n;
		struct tf_reader *r = ds->on_pre ? ds->pre : ds->r;
		int rc;
		if (ds->on_pre) {
			rc = next_stdin(ds, &d, &n);
		} else {
			rc = tf_reader_next(r, &d, &n);
		}
		if (rc == TF_OK && ds->shards > 1 &&
		    ds->seen++ % ds->shards != ds->shard) {
			continue; /* another trainer's record */
		}
		if (rc == TF_OK) {
			if (ds->on_pre ||
			    tf_reader_compression(r) != TF_COMPRESS_NONE) {
				ds->unseekable = 1;
			} else {
				ds->spos[i] = (struct tfi_ds_pos){
				    tf_reader_offset(r), tf_reader_count(r) - 1,
				    (uint32_t)ds->file, 0, 0};
			}
			return decode(ds, d, n, row, ids, row + ds->width, key);
		}
		if (rc != TF_EOF) {
			return tfi_set_error(ds, rc, "%s", tf_errmsg(r));
		}
		ds->reading = 0;
		ds->file++;
	}
}

/* One example of the epoch through the shuffle buffer. */
static int
next_example(struct tf_dataset *ds, float *x, int64_t *ids, float *label,
             char *key)
{
	size_t w = (size_t)ds->width + 1, ni = (size_t)ds->nids;
	while (!ds->at_end && ds->nbuf < ds->shuffle) {
		int rc = read_one(ds, ds->nbuf);
		if (rc == TF_EOF) {
			ds->at_end = 1;
			break;
		}
		if (rc != TF_OK) {
			return rc;
		}
		ds->nbuf++;
	}
	if (ds->nbuf == 0) {
		return TF_EOF;
	}
	size_t i =
	    ds->shuffle > 1 ? (size_t)tf_rng_below(&ds->rng, ds->nbuf) : 0;
	/* Straight into the caller's row (NULL: skipping, for a seek). */
	if (x != NULL) {
		memcpy(x, ds->buf + i * w, (w - 1) * sizeof(float));
	}
	if (ids != NULL && ni > 0) {
		memcpy(ids, ds->ibuf + i * ni, ni * sizeof *ids);
	}
	if (label != NULL) {
		*label = ds->buf[i * w + w - 1];
	}
	if (key != NULL && ds->kbuf != NULL) {
		memcpy(key, ds->kbuf[i], KEYLEN);
	}
	ds->done++;
	struct tfi_ds_pos *lg = NULL;
	if (ds->log != NULL && ds->nlog < ds->log_cap) {
		lg = &ds->log[ds->nlog++];
		*lg = ds->spos[i];
		lg->slot = (uint32_t)i;
		lg->refilled = 0;
	}
	/* The next record takes the freed place, as TensorFlow's shuffle
	 * buffer does; at the end of the input the last row does. */
	if (!ds->at_end && ds->shuffle > 1) {
		int rc = read_one(ds, i);
		if (rc == TF_OK) {
			if (lg != NULL) {
				lg->refilled = 1;
			}
			return TF_OK;
		}
		if (rc != TF_EOF) {
			return rc;
		}
		ds->at_end = 1;
	}
	ds->nbuf--;
	if (i != ds->nbuf) {
		ds->spos[i] = ds->spos[ds->nbuf];
		memcpy(ds->buf + i * w, ds->buf + ds->nbuf * w,
		       w * sizeof(float));
		if (ni > 0) {
			memcpy(ds->ibuf + i * ni, ds->ibuf + ds->nbuf * ni,
			       ni * sizeof *ds->ibuf);
		}
		if (ds->kbuf != NULL) {
			memcpy(ds->kbuf[i], ds->kbuf[ds->nbuf], KEYLEN);
		}
	}
	return TF_OK;
}

void
tfi_dataset_log(struct tf_dataset *ds, struct tfi_ds_pos *log, size_t cap)
{
	ds->log = log;
	ds->log_cap = cap;
	ds->nlog = 0;
}

size_t
tfi_dataset_logged(const struct tf_dataset *ds)
{
	return ds->nlog;
}

void
tfi_dataset_mark(const struct tf_dataset *ds, struct tfi_ds_mark *m)
{
	memset(m, 0, sizeof *m);
	memcpy(m->s, ds->rng.s, sizeof m->s);
	m->epoch = ds->epoch;
	m->done = ds->done;
	m->seen = ds->seen;
	m->file = ds->file;
	m->nbuf = ds->nbuf;
	m->at_end = ds->at_end;
	m->reading = ds->reading && !ds->on_pre;
	m->seekable = !ds->unseekable && !ds->stdin_used;
	if (m->reading) {
		m->off = tf_reader_tell(ds->r);
		m->count = tf_reader_count(ds->r);
	}
}

int
tfi_dataset_state(struct tf_dataset *ds, const struct tfi_ds_mark *m,
                  const struct tfi_ds_pos *const *logs, const size_t *nlogs,
                  const uint64_t *epochs, size_t n, char **json)
{
	*json = NULL;
	if (!m->seekable || ds->unseekable || m->done == 0) {
		return TF_OK; /* replayed, or nothing to replay */
	}
	/* The live buffer, or an empty one where the reader has gone on to
	 * the next epoch (an epoch ends with its buffer empty).  Without a
	 * shuffle (a buffer of one) rows go straight through: none held. */
	size_t nbuf = ds->epoch == m->epoch ? ds->nbuf : 0;
	if (ds->shuffle == 1) {
		nbuf = 0;
		n = 0;
	}
	struct tfi_ds_pos *slot = malloc((ds->shuffle + 1) * sizeof *slot);
	if (slot == NULL) {
		return tfi_set_error(ds, TF_ENOMEM, "out of memory");
	}
	memcpy(slot, ds->spos, nbuf * sizeof *slot);
	for (size_t b = n; b-- > 0;) {
		if (epochs[b] != m->epoch) {
			continue; /* the next epoch's */
		}
		for (size_t k = nlogs[b]; k-- > 0;) {
			const struct tfi_ds_pos *e = &logs[b][k];
			size_t i = e->slot;
			if (!e->refilled) { /* the last row had moved to i */
				if (nbuf >= ds->shuffle || i > nbuf) {
					nbuf = SIZE_MAX;
					break;
				}
				slot[nbuf] = slot[i];
				nbuf++;
			}
			if (i >= nbuf) {
				nbuf = SIZE_MAX;
				break;
			}
			slot[i] = *e;
		}
		if (nbuf == SIZE_MAX) {
			break;
		}
	}
	if (nbuf != m->nbuf) {
		free(slot);
		return TF_OK; /* not what the mark says: replay instead */
	}
	json_t *o = json_object(), *a = json_array();
	char rs[65];
	tfi_rng_text(m->s, rs);
	int bad =
	    o == NULL || a == NULL ||
	    json_object_set_new(o, "shuffle",
	                        json_integer((json_int_t)ds->shuffle)) ||
	    json_object_set_new(o, "rng", json_string(rs)) ||
	    json_object_set_new(o, "file", json_integer((json_int_t)m->file)) ||
	    json_object_set_new(o, "reading", json_boolean(m->reading)) ||
	    json_object_set_new(o, "offset",
	                        json_integer((json_int_t)m->off)) ||
	    json_object_set_new(o, "record",
	                        json_integer((json_int_t)m->count)) ||
	    json_object_set_new(o, "seen", json_integer((json_int_t)m->seen)) ||
	    json_object_set_new(o, "at_end", json_boolean(m->at_end));
	for (size_t j = 0; !bad && j < nbuf; j++) {
		bad = json_array_append_new(a, json_integer(slot[j].file)) ||
		      json_array_append_new(
		          a, json_integer((json_int_t)slot[j].off)) ||
		      json_array_append_new(
		          a, json_integer((json_int_t)slot[j].rec));
	}
	free(slot);
	if (!bad) {
		bad = json_object_set(o, "buffer", a);
	}
	*json = bad ? NULL : json_dumps(o, JSON_COMPACT);
	json_decref(a);
	json_decref(o);
	return *json != NULL ? TF_OK
	                     : tfi_set_error(ds, TF_ENOMEM, "out of memory");
}

/* Open file f of the epoch on ds->r (the one open stays). */
static int
open_file(struct tf_dataset *ds, size_t f, size_t *open)
{
	if (*open == f) {
		return TF_OK;
	}
	if (tf_reader_open(ds->r, ds->files[f], TF_COMPRESS_AUTO) != TF_OK) {
		return tfi_set_error(ds, tf_errcode(ds->r), "%s",
		                     tf_errmsg(ds->r));
	}
	*open = f;
	return TF_OK;
}

static int
by_place(const void *a, const void *b, void *ctx)
{
	const struct tfi_ds_pos *s = ctx;
	const struct tfi_ds_pos *x = &s[*(const size_t *)a];
	const struct tfi_ds_pos *y = &s[*(const size_t *)b];
	if (x->file != y->file) {
		return x->file < y->file ? -1 : 1;
	}
	return x->off < y->off ? -1 : x->off > y->off;
}

static int
get_u64(json_t *o, const char *key, uint64_t *v)
{
	json_t *j = json_object_get(o, key);
	if (!json_is_integer(j) || json_integer_value(j) < 0) {
		return -1;
	}
	*v = (uint64_t)json_integer_value(j);
	return 0;
}

int
tfi_dataset_restore(struct tf_dataset *ds, uint64_t epoch, uint64_t done,
                    const char *json)
{
	json_error_t je;
	json_t *o = json_loads(json, 0, &je);
	json_t *a = json_object_get(o, "buffer");
	const char *rs = json_string_value(json_object_get(o, "rng"));
	uint64_t file, off, rec, seen, shuffle, rng[4];
	size_t nbuf = json_array_size(a) / 3;
	if (o == NULL || !json_is_array(a) || json_array_size(a) % 3 != 0 ||
	    nbuf > ds->shuffle || tfi_rng_parse(rs, rng) != 0 ||
	    get_u64(o, "file", &file) || get_u64(o, "offset", &off) ||
	    get_u64(o, "record", &rec) || get_u64(o, "seen", &seen) ||
	    get_u64(o, "shuffle", &shuffle) || shuffle != ds->shuffle ||
	    file > ds->nfiles || ds->stdin_used || done == 0) {
		json_decref(o);
		return tfi_set_error(ds, TF_EINVAL,
		                     "the checkpoint's input position is not "
		                     "for these inputs and buffer");
	}
	epoch_start(ds, epoch);
	size_t *order = malloc(nbuf * sizeof *order);
	int rc = order ? TF_OK : tfi_set_error(ds, TF_ENOMEM, "out of memory");
	for (size_t j = 0; rc == TF_OK && j < nbuf; j++) {
		json_int_t f = json_integer_value(json_array_get(a, 3 * j));
		json_int_t p = json_integer_value(json_array_get(a, 3 * j + 1));
		json_int_t k = json_integer_value(json_array_get(a, 3 * j + 2));
		if (f < 0 || (uint64_t)f >= ds->nfiles || p < 0 || k < 0) {
			rc = tfi_set_error(ds, TF_EFORMAT,
			                   "not a dataset state");
			break;
		}
		ds->spos[j] = (struct tfi_ds_pos){(uint64_t)p, (uint64_t)k,
		                                  (uint32_t)f, 0, 0};
		order[j] = j;
	}
	/* The buffer's records in file order: mostly near one another,
	 * read through one window with small reads between. */
	size_t open = SIZE_MAX;
	if (rc == TF_OK) {
		qsort_r(order, nbuf, sizeof *order, by_place, ds->spos);
		tfi_reader_set_readahead(ds->r, 64 << 10);
	}
	for (size_t k = 0; rc == TF_OK && k < nbuf; k++) {
		size_t j = order[k];
		const struct tfi_ds_pos *p = &ds->spos[j];
		const uint8_t *d;
		size_t n;
		ds->file = p->file; /* decode()'s messages name it */
		if ((rc = open_file(ds, p->file, &open)) != TF_OK) {
			break;
		}
		if (tf_reader_seek(ds->r, p->off, p->rec) != TF_OK ||
		    tf_reader_next(ds->r, &d, &n) != TF_OK ||
		    tf_reader_compression(ds->r) != TF_COMPRESS_NONE) {
			rc = tfi_set_error(ds, TF_EFORMAT, "%s",
			                   tf_errmsg(ds->r)[0]
			                       ? tf_errmsg(ds->r)
			                       : "the input changed");
			break;
		}
		float *row = ds->buf + j * (size_t)(ds->width + 1);
		rc = decode(ds, d, n, row, ds->ibuf + j * (size_t)ds->nids,
		            row + ds->width, ds->kbuf ? ds->kbuf[j] : NULL);
	}
	tfi_reader_set_readahead(ds->r, 0);
	free(order);
	ds->reading = 0;
	if (rc == TF_OK) {
		ds->file = (size_t)file;
		if (json_is_true(json_object_get(o, "reading")) &&
		    file < ds->nfiles) {
			if ((rc = open_file(ds, file, &open)) == TF_OK &&
			    tf_reader_seek(ds->r, off, rec) != TF_OK) {
				rc = tfi_set_error(ds, TF_EFORMAT, "%s",
				                   tf_errmsg(ds->r));
			}
			ds->reading = rc == TF_OK;
		}
	}
	if (rc != TF_OK) {
		epoch_start(ds, epoch);
	} else {
		memcpy(ds->rng.s, rng, sizeof rng);
		ds->nbuf = nbuf;
		ds->at_end = json_is_true(json_object_get(o, "at_end"));
		ds->seen = seen;
		ds->epoch = epoch;
		ds->done = done;
	}
	json_decref(o);
	return rc;
}

int
tf_dataset_seek(struct tf_dataset *ds, uint64_t epoch, uint64_t done)
{
	if (ds->stdin_used && (epoch > 0 || done > 0)) {
		/* Standard input cannot be read again: continue on new data. */
		epoch_start(ds, 0);
		return TF_OK;
	}
	epoch_start(ds, epoch);
	int rc = TF_OK;
	while (ds->done < done && rc == TF_OK) {
		rc = next_example(ds, NULL, NULL, NULL, NULL);
	}
	return rc == TF_EOF ? TF_OK : rc;
}

int
tf_dataset_next(struct tf_dataset *ds, float *x, int64_t *ids, float *y,
                size_t max, size_t *rows)
{
	size_t w = (size_t)ds->width, ni = (size_t)ds->nids;
	*rows = 0;
	if (ds->buf == NULL) {
		return tfi_set_error(ds, TF_EINVAL, "dataset not open");
	}
	if (ni > 0 && ids == NULL) {
		return tfi_set_error(ds, TF_EINVAL,
		                     "rows have %zu ids and no room for them",
		                     ni);
	}
	if (ds->key != NULL && ds->keys_cap < max) {
		free(ds->keys);
		ds->keys = calloc(max, KEYLEN);
		ds->keys_cap = ds->keys ? max : 0;
		if (ds->keys == NULL) {
			return tfi_set_error(ds, TF_ENOMEM, "out of memory");
		}
	}
	int rc = TF_OK;
	while (*rows < max) {
		rc = next_example(
		    ds, x + *rows * w, ni > 0 ? ids + *rows * ni : NULL,
		    y ? &y[*rows] : NULL, ds->keys ? ds->keys[*rows] : NULL);
		if (rc == TF_EOF) {
			if (ds->epochs != 0 && ds->epoch + 1 >= ds->epochs) {
				break;
			}
			epoch_start(ds, ds->epoch + 1);
			if (*rows > 0) {
				rc = TF_OK;
				break; /* a batch does not cross epochs */
			}
			continue;
		}
		if (rc != TF_OK) {
			break;
		}
		(*rows)++;
	}
	if (rc == TF_EOF && *rows > 0) {
		rc = TF_OK;
	}
	return rc;
}

/* ---- categorical columns ------------------------------------------------ */

static int
cat_index(const struct tf_dataset *ds, const char *name)
{
	for (size_t i = 0; i < ds->ncat; i++) {
		if (strcmp(ds->cats[i].name, name) == 0) {
			return (int)i;
		}
	}
	return -1;
}

/* Name row column c (categorical or cross). */
static int
name_column(struct tf_dataset *ds, int64_t c, const char *name)
{
	free(ds->colname[c]);
	ds->colname[c] = strdup(name);
	ds->colint[c] = 0;
	return ds->colname[c] ? TF_OK
	                      : tfi_set_error(ds, TF_ENOMEM, "out of memory");
}

int
tf_dataset_set_categorical(struct tf_dataset *ds, const char *crosses,
                           int64_t buckets)
{
	if (ds->ncat > 0 || ds->sparse || ds->colname == NULL ||
	    ds->schema == NULL) {
		return tfi_set_error(ds, TF_EINVAL,
		                     "categorical columns: set once, after a "
		                     "columns or packed schema");
	}
	int rc = TF_OK;
	for (size_t i = 0; i < ds->schema->nfeatures; i++) {
		const struct tfi_schema_col *f = &ds->schema->features[i];
		if (f->type != TF_COL_BYTES || f->packed_index >= 0) {
			continue;
		}
		if (f->binary || f->unique) {
			/* Hashing them would train on noise. */
			rc = tfi_set_error(
			    ds, TF_EFORMAT,
			    "feature '%s' %s: it is not a category (--exclude "
			    "%s leaves it out)",
			    f->name,
			    f->binary ? "holds binary data (an encoded image?)"
			              : "has a different value in every record "
			                "(an identifier or free text?)",
			    f->name);
			break;
		}
		const struct tfi_vocab *v =
		    tfi_schema_vocab(ds->schema, f->name);
		int listed = v != NULL && !v->over;
		if (!listed && (buckets < 1 || buckets > INT32_MAX)) {
			rc =
			    tfi_set_error(ds, TF_EINVAL,
			                  "feature '%s' has no vocabulary: its "
			                  "values need 1 to %d hash buckets",
			                  f->name, INT32_MAX);
			break;
		}
		struct cat *cs = realloc(ds->cats, (ds->ncat + 1) * sizeof *cs);
		if (cs == NULL) {
			rc = tfi_set_error(ds, TF_ENOMEM, "out of memory");
			break;
		}
		ds->cats = cs;
		struct cat *c = &ds->cats[ds->ncat++];
		memset(c, 0, sizeof *c);
		c->name = strdup(f->name);
		size_t n = listed ? v->n : 0;
		c->vocab = calloc(n + 1, sizeof *c->vocab);
		c->vlen = calloc(n + 1, sizeof *c->vlen);
		if (c->name == NULL || c->vocab == NULL || c->vlen == NULL) {
			rc = tfi_set_error(ds, TF_ENOMEM, "out of memory");
			break;
		}
		for (size_t k = 0; k < n; k++) {
			c->vocab[k] = strdup(v->values[k]);
			c->vlen[k] = strlen(v->values[k]);
			c->n = (int64_t)k + 1;
			if (c->vocab[k] == NULL) {
				rc = tfi_set_error(ds, TF_ENOMEM,
				                   "out of memory");
				break;
			}
		}
		c->offset = ds->cat_ids;
		if (!listed) {
			c->hashed = buckets;
		}
		ds->cat_ids += c->hashed ? c->hashed : c->n + 1;
	}
	if (rc == TF_OK && ds->cat_ids > INT32_MAX) {
		/* One embedding table's rows. */
		rc =
		    tfi_set_error(ds, TF_EINVAL,
		                  "the categorical vocabularies hold %lld ids, "
		                  "more than %d",
		                  (long long)ds->cat_ids, INT32_MAX);
	}
	if (rc != TF_OK) {
		return rc;
	}
	/* Crosses: "a*b,c*d". */
	const char *p = crosses ? crosses : "";
	while (*p != '\0') {
		size_t len = strcspn(p, ",");
		char spec[256];
		snprintf(spec, sizeof spec, "%.*s", (int)len, p);
		char *star = strchr(spec, '*');
		int a = -1, b = -1;
		if (star != NULL) {
			*star = '\0';
			a = cat_index(ds, spec);
			b = cat_index(ds, star + 1);
		}
		if (a < 0 || b < 0) {
			if (star != NULL) {
				*star = '*';
			}
			return tfi_set_error(
			    ds, TF_EINVAL,
			    "cross '%s': expected A*B of two "
			    "categorical (bytes) features with a "
			    "vocabulary in the schema",
			    spec);
		}
		struct cross *xs =
		    realloc(ds->crosses, (ds->ncross + 1) * sizeof *xs);
		if (xs == NULL) {
			return tfi_set_error(ds, TF_ENOMEM, "out of memory");
		}
		ds->crosses = xs;
		ds->crosses[ds->ncross++] =
		    (struct cross){(size_t)a, (size_t)b, 0};
		p += len;
		p += *p == ',';
	}
	if (ds->ncross > 0 && (buckets < 1 || buckets > INT32_MAX)) {
		return tfi_set_error(ds, TF_EINVAL,
		                     "crosses need 1 to %d hash buckets",
		                     INT32_MAX);
	}
	ds->buckets = buckets;
	int64_t w = ds->width + (int64_t)ds->ncat + (int64_t)ds->ncross;
	char **names = realloc(ds->colname, (size_t)w * sizeof *names);
	if (names != NULL) {
		ds->colname = names;
	}
	unsigned char *ints = realloc(ds->colint, (size_t)w);
	if (ints != NULL) {
		ds->colint = ints;
	}
	if (names == NULL || ints == NULL) {
		return tfi_set_error(ds, TF_ENOMEM, "out of memory");
	}
	for (int64_t c = ds->width; c < w; c++) {
		ds->colname[c] = NULL;
	}
	for (size_t k = 0; k < ds->ncat; k++) {
		ds->cats[k].col = ds->width + (int64_t)k;
		if ((rc = name_column(ds, ds->cats[k].col, ds->cats[k].name)) !=
		    TF_OK) {
			return rc;
		}
	}
	for (size_t k = 0; k < ds->ncross; k++) {
		char name[300];
		ds->crosses[k].col = ds->width + (int64_t)ds->ncat + (int64_t)k;
		snprintf(name, sizeof name, "%s_X_%s",
		         ds->cats[ds->crosses[k].a].name,
		         ds->cats[ds->crosses[k].b].name);
		if ((rc = name_column(ds, ds->crosses[k].col, name)) != TF_OK) {
			return rc;
		}
	}
	ds->nids = w - ds->width;
	return index_columns(ds);
}

void
tf_dataset_layout(const struct tf_dataset *ds, struct tf_layout *l)
{
	l->numeric = ds->width;
	l->categorical = (int64_t)ds->ncat;
	l->ids = ds->cat_ids;
	l->crosses = (int64_t)ds->ncross;
	l->buckets = ds->buckets;
}

size_t
tfi_dataset_inputs(const struct tf_dataset *ds, struct tfi_input *out,
                   size_t cap)
{
	int is_int;
	float mean, inv;
	if (ds->width > 0 && tf_dataset_column(ds, 0, &is_int, &mean, &inv) ==
	                         NULL) { /* libsvm rows: one dense input */
		if (cap > 0) {
			out[0] = (struct tfi_input){"x", 0, ds->width, 0, 0, 1};
		}
		return 1;
	}
	size_t n = 0;
	int64_t inputs = ds->width + (int64_t)ds->ncat;
	for (int64_t c = 0; c < inputs; c++) {
		const struct input *in =
		    c < ds->width ? column_input(ds, c) : NULL;
		struct tfi_input e = {0};
		if (in != NULL && in->width > 1) {
			e = (struct tfi_input){in->name, in->col, in->width,
			                       0,        0,       1};
			c = in->col + in->width - 1;
		} else {
			e.name =
			    tf_dataset_column(ds, c, &e.is_int, &mean, &inv);
			e.col = c;
			e.width = 1;
			e.categorical = c >= ds->width;
		}
		if (n < cap) {
			out[n] = e;
		}
		n++;
	}
	return n;
}

int
tfi_dataset_input(const struct tf_dataset *ds, const char *name,
                  struct tfi_input *in)
{
	for (size_t k = 0; k < ds->nin; k++) {
		if (ds->in[k].width > 1 && strcmp(ds->in[k].name, name) == 0) {
			*in = (struct tfi_input){ds->in[k].name,
			                         ds->in[k].col,
			                         ds->in[k].width,
			                         0,
			                         0,
			                         1};
			return 1;
		}
	}
	int64_t c = tf_dataset_find_column(ds, name);
	if (c < 0 || c >= ds->width + (int64_t)ds->ncat) {
		return 0;
	}
	int is_int;
	float mean, inv;
	tf_dataset_column(ds, c, &is_int, &mean, &inv);
	*in = (struct tfi_input){name, c, 1, c >= ds->width, is_int, 0};
	return 1;
}

int
tf_dataset_column_kind(const struct tf_dataset *ds, int64_t c)
{
	int64_t num = ds->width;
	return c < num                       ? TF_COLUMN_NUMERIC
	       : c < num + (int64_t)ds->ncat ? TF_COLUMN_CATEGORICAL
	                                     : TF_COLUMN_DERIVED;
}

/* The id of a value of categorical column k: its place in the shared id
 * space, or the column's out-of-vocabulary id. */
static int64_t
category_id(const struct cat *c, const void *s, size_t n)
{
	if (c->hashed) {
		/* FNV-1a, then a 64-bit finaliser for the low bits. */
		uint64_t h = 0xcbf29ce484222325ULL;
		for (size_t k = 0; k < n; k++) {
			h = (h ^ ((const uint8_t *)s)[k]) * 0x100000001b3ULL;
		}
		h ^= h >> 33;
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 33;
		return c->offset + (int64_t)(h % (uint64_t)c->hashed);
	}
	int64_t lo = 0, hi = c->n;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		size_t m = c->vlen[mid] < n ? c->vlen[mid] : n;
		int cmp = memcmp(c->vocab[mid], s, m);
		cmp = cmp ? cmp : (c->vlen[mid] > n) - (c->vlen[mid] < n);
		if (cmp == 0) {
			return c->offset + mid;
		}
		if (cmp < 0) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	/* Not found by bisection (a vocabulary not in byte order): scan. */
	for (int64_t k = 0; k < c->n; k++) {
		if (c->vlen[k] == n && memcmp(c->vocab[k], s, n) == 0) {
			return c->offset + k;
		}
	}
	return c->offset + c->n;
}

int64_t
tf_dataset_category(const struct tf_dataset *ds, int64_t col, const char *s,
                    size_t n)
{
	int64_t k = col - ds->width;
	return k >= 0 && k < (int64_t)ds->ncat ? category_id(&ds->cats[k], s, n)
	                                       : -1;
}

uint64_t
tfi_dataset_fast_hits(const struct tf_dataset *ds)
{
	return ds->fast_hits;
}

uint64_t
tfi_dataset_whole_hits(const struct tf_dataset *ds)
{
	return ds->whole_hits;
}

void
tfi_dataset_no_fast(struct tf_dataset *ds)
{
	ds->no_fast = 1;
}

int
tf_dataset_batch(struct tf_dataset *ds, struct tf_batch *b, size_t capacity)
{
	return tf_batch_init(b, capacity, ds->width, ds->nids) == TF_OK
	           ? TF_OK
	           : tfi_set_error(ds, TF_ENOMEM, "out of memory");
}

int
tf_dataset_read(struct tf_dataset *ds, struct tf_batch *b)
{
	b->rows = 0;
	if (b->width != ds->width || b->id_width != ds->nids) {
		return tfi_set_error(ds, TF_EINVAL,
		                     "a batch of other widths than the data's");
	}
	return tf_dataset_next(ds, b->x, b->ids, b->y, b->capacity, &b->rows);
}

int
tf_dataset_infer_schema(struct tf_dataset *ds, const char *const *files,
                        size_t nfiles, const char *label, size_t max_records,
                        uint64_t *records, char *skipped, size_t size)
{
	struct tf_survey *sv = tf_survey_new();
	struct tf_example *ex = tf_example_new();
	struct tf_reader *r = tf_reader_new();
	struct tf_schema *s = tf_schema_new();
	int rc = sv && ex && r && s
	             ? TF_OK
	             : tfi_set_error(ds, TF_ENOMEM, "out of memory");
	for (size_t i = 0;
	     rc == TF_OK && i < nfiles && tf_survey_records(sv) < max_records;
	     i++) {
		int in = strcmp(files[i], "-") == 0;
		if (in && ds->pre != NULL) {
			continue; /* standard input is read once */
		}
		if (in) {
			/* Its records are kept for the dataset to read. */
			if (open_stdin(ds) != TF_OK) {
				rc = ds->err.code;
				break;
			}
			tf_reader_free(r);
			r = ds->pre;
		} else if (tf_reader_open(r, files[i], TF_COMPRESS_AUTO) !=
		           TF_OK) {
			rc = tfi_set_error(ds, tf_errcode(r), "%s",
			                   tf_errmsg(r));
			break;
		}
		const uint8_t *d;
		size_t n;
		while (rc == TF_OK && tf_survey_records(sv) < max_records &&
		       (rc = in ? next_stdin(ds, &d, &n)
		                : tf_reader_next(r, &d, &n)) == TF_OK) {
			if (tf_example_parse(ex, d, n) != TF_OK) {
				rc = tfi_set_error(
				    ds, TF_EFORMAT, "%s: record %llu: %s",
				    files[i],
				    (unsigned long long)tf_reader_count(r) - 1,
				    tf_errmsg(ex));
			} else if (tf_survey_add(sv, ex) != TF_OK) {
				rc = tfi_set_error(ds, TF_ENOMEM,
				                   "out of memory");
			}
		}
		if (rc != TF_OK && rc != TF_EOF && ds->err.code == TF_OK) {
			rc = tfi_set_error(ds, rc, "%s", tf_errmsg(r));
		}
		rc = rc == TF_EOF ? TF_OK : rc;
		if (in) {
			/* Read again from the start by the dataset. */
			ds->replay_pos = 0;
			ds->stdin_rec = 0;
			r = tf_reader_new();
			if (r == NULL && rc == TF_OK) {
				rc = tfi_set_error(ds, TF_ENOMEM,
				                   "out of memory");
			}
		}
	}
	if (rc == TF_OK && tf_survey_records(sv) == 0) {
		rc = tfi_set_error(ds, TF_EFORMAT,
		                   "no records to infer a schema from");
	}
	if (rc == TF_OK &&
	    tf_survey_schema(sv, label, s, skipped, size) != TF_OK) {
		rc = tfi_set_error(ds, tf_errcode(sv), "%s", tf_errmsg(sv));
	}
	*records = sv ? tf_survey_records(sv) : 0;
	if (rc == TF_OK) {
		rc = tf_dataset_parse_schema(ds, tf_schema_text(s),
		                             "(inferred schema)");
	}
	tf_schema_free(s);
	tf_reader_free(r);
	tf_example_free(ex);
	tf_survey_free(sv);
	return rc;
}
