/*
 * columns.c - what a row of a model holds (tf/columns.h): task names,
 * the float inputs and their standardisation, the label and its
 * classes, categorical ids and their crosses, taken from a schema
 * (schema.c parses it) or given one by one.  The dataset reader fills
 * rows of these columns; a model keeps them for serving and export.
 * The insides are columns_private.h's.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tf/columns.h"
#include "tf/image.h"
#include "tf/schema.h"

#include "columns_private.h"

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

struct tf_columns *
tf_columns_new(void)
{
	struct tf_columns *cols = calloc(1, sizeof *cols);
	if (cols != NULL) {
		cols->normalize = 1;
		cols->img_scale = -1;
		cols->task = TF_TASK_BINARY;
		cols->classes = 2;
	}
	return cols;
}

static void
free_cat(struct cat *c)
{
	for (int64_t k = 0; k < c->n; k++) {
		free(c->vocab[k]);
	}
	free(c->vocab);
	free(c->vlen);
	free(c->name);
}

void
tf_columns_free(struct tf_columns *cols)
{
	if (cols == NULL) {
		return;
	}
	for (size_t i = 0; i < cols->nin; i++) {
		free(cols->in[i].name);
		free(cols->in[i].mean);
		free(cols->in[i].inv_std);
	}
	for (int64_t c = 0;
	     cols->colname != NULL && c < cols->width + cols->nids; c++) {
		free(cols->colname[c]);
	}
	free(cols->colname);
	tfi_idset_free(&cols->bag_ids);
	free(cols->colint);
	free(cols->colorder);
	for (size_t i = 0; i < cols->ncat; i++) {
		free_cat(&cols->cats[i]);
	}
	free(cols->cats);
	free(cols->crosses);
	if (cols->seq != NULL) {
		free_cat(&cols->seq->tok);
		free(cols->seq->name);
		free(cols->seq);
	}
	free(cols->in);
	free(cols->label);
	tf_schema_free(cols->schema);
	free(cols->select);
	free(cols->exclude);
	free(cols);
}

/* A float input of width columns after those there are (a feature given
 * twice, or of no width or over 2^24, is refused). */
static int
add_input(struct tf_columns *cols, const char *name, int64_t width)
{
	if (width < 1 || width > (1 << 24)) {
		return tfi_set_error(cols, TF_EINVAL, "feature '%s': bad width",
		                     name);
	}
	for (size_t i = 0; i < cols->nin; i++) {
		if (strcmp(cols->in[i].name, name) == 0) {
			return tfi_set_error(cols, TF_EINVAL,
			                     "feature '%s' given twice", name);
		}
	}
	struct input *in = realloc(cols->in, (cols->nin + 1) * sizeof *in);
	if (in == NULL) {
		return tfi_set_error(cols, TF_ENOMEM, "out of memory");
	}
	cols->in = in;
	struct input *p = &cols->in[cols->nin];
	memset(p, 0, sizeof *p);
	p->name = strdup(name);
	p->width = width;
	p->col = cols->width;
	if (p->name == NULL) {
		return tfi_set_error(cols, TF_ENOMEM, "out of memory");
	}
	cols->nin++;
	cols->width += width;
	return TF_OK;
}

int
tf_columns_add_feature(struct tf_columns *cols, const char *name, int64_t width)
{
	return add_input(cols, name, width);
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
decide_label_map(struct tf_columns *cols)
{
	const struct tf_schema *sc = cols->schema;
	cols->lmap = LMAP_NONE;
	cols->lvals = NULL;
	cols->nlvals = 0;
	cols->lvocab = NULL;
	if (sc == NULL || !sc->has_label || cols->label == NULL ||
	    cols->task == TF_TASK_REGRESSION ||
	    strcmp(cols->label, sc->label.name) != 0) {
		return;
	}
	if (sc->label.type == TF_COL_BYTES) {
		const struct tfi_vocab *v = tfi_schema_vocab(sc, cols->label);
		if (v != NULL && !v->over && v->n > 0) {
			cols->lmap = LMAP_VOCAB;
			cols->lvocab = v;
		}
		return;
	}
	if (sc->label.type != TF_COL_INT64 || sc->nclasses == 0) {
		return;
	}
	int64_t mn = sc->classes[0], mx = sc->classes[sc->nclasses - 1];
	if ((mn < 0 || mx >= cols->classes) &&
	    (int64_t)sc->nclasses <= cols->classes) {
		cols->lmap = LMAP_INTS;
		cols->lvals = sc->classes;
		cols->nlvals = sc->nclasses;
	}
}

/* A label value's class under the map, or -1 when it is none. */
int64_t
tfi_columns_mapped_class(const struct tf_columns *cols, int64_t v)
{
	size_t lo = 0, hi = cols->nlvals;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cols->lvals[mid] == v) {
			return (int64_t)mid;
		}
		if (cols->lvals[mid] < v) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return -1;
}

int64_t
tfi_columns_vocab_class(const struct tf_columns *cols, const void *s, size_t n)
{
	for (size_t i = 0; i < cols->lvocab->n; i++) {
		const char *w = cols->lvocab->values[i];
		if (strlen(w) == n && memcmp(w, s, n) == 0) {
			return (int64_t)i;
		}
	}
	return -1;
}

int
tf_columns_class_name(const struct tf_columns *cols, int64_t k, char *buf,
                      size_t size)
{
	if (k < 0 || k >= cols->classes || cols->task == TF_TASK_REGRESSION) {
		return tfi_set_error((struct tf_columns *)cols, TF_EINVAL,
		                     "no class %lld", (long long)k);
	}
	int n;
	if (cols->lmap == LMAP_VOCAB && (size_t)k < cols->lvocab->n) {
		n = snprintf(buf, size, "%s", cols->lvocab->values[k]);
	} else if (cols->lmap == LMAP_INTS && (size_t)k < cols->nlvals &&
	           cols->schema->nclass_names == cols->nlvals) {
		n = snprintf(buf, size, "%s", cols->schema->class_names[k]);
	} else if (cols->lmap == LMAP_INTS && (size_t)k < cols->nlvals) {
		n = snprintf(buf, size, "%lld", (long long)cols->lvals[k]);
	} else {
		n = snprintf(buf, size, "%lld", (long long)k);
	}
	if (n < 0 || (size_t)n >= size) {
		return tfi_set_error((struct tf_columns *)cols, TF_EINVAL,
		                     "class %lld: name too long", (long long)k);
	}
	return TF_OK;
}

int
tf_columns_set_label(struct tf_columns *cols, const char *name, int task,
                     int64_t classes)
{
	char *copy = name ? strdup(name) : NULL; /* name may be cols->label */
	if (name != NULL && copy == NULL) {
		return tfi_set_error(cols, TF_ENOMEM, "out of memory");
	}
	free(cols->label);
	cols->label = copy;
	cols->task = task;
	cols->classes = task == TF_TASK_REGRESSION ? 1
	                : task == TF_TASK_BINARY   ? 2
	                                           : classes;
	decide_label_map(cols);
	return TF_OK;
}

void
tf_columns_set_normalize(struct tf_columns *cols, int on)
{
	cols->normalize = on;
}

int64_t
tf_columns_width(const struct tf_columns *cols)
{
	return cols->width;
}

int64_t
tf_columns_id_width(const struct tf_columns *cols)
{
	return cols->nids;
}

int64_t
tf_columns_count(const struct tf_columns *cols)
{
	return cols->width + cols->nids;
}

int
tf_columns_task(const struct tf_columns *cols)
{
	return cols->task;
}

int64_t
tf_columns_classes(const struct tf_columns *cols)
{
	return cols->classes;
}

const char *
tf_columns_label_name(const struct tf_columns *cols)
{
	return cols->label ? cols->label : "";
}

const struct tf_schema *
tf_columns_schema(const struct tf_columns *cols)
{
	return cols->schema;
}

const char *
tf_columns_schema_text(const struct tf_columns *cols)
{
	return cols->schema ? tf_schema_text(cols->schema) : "";
}

/* Mean and 1/std of a numeric column description; 0 and 1 otherwise. */
static void
col_stats(const struct tfi_schema_col *col, float *mean, float *inv_std)
{
	*mean = col->has_stats ? (float)col->mean : 0.0f;
	double sd = col->has_stats ? col->std : 1.0;
	*inv_std = sd > 1e-12 ? (float)(1.0 / sd) : 1.0f;
}

/* A list input that is the sequence says so. */
static void
seq_input(const struct tf_columns *cols, struct tfi_input *e)
{
	const struct seqf *q = cols->seq;
	if (q != NULL && !q->tokens && strcmp(q->name, e->name) == 0) {
		e->sequence = 1;
		e->steps = q->steps;
	}
}

/* A sequence of tokens as a signature input (its ids, not row
 * columns) into *e; 0 when there is none. */
static int
token_input(const struct tf_columns *cols, struct tfi_input *e)
{
	const struct seqf *q = cols->seq;
	if (q == NULL || !q->tokens) {
		return 0;
	}
	*e = (struct tfi_input){q->name,
	                        cols->width + q->col,
	                        q->steps,
	                        q->type == TF_COL_BYTES,
	                        q->type == TF_COL_INT64,
	                        1,
	                        1,
	                        q->steps,
	                        0};
	return 1;
}

/* qsort: columns by name, for tf_columns_find_column()'s search. */
static int
by_column_name(const void *a, const void *b)
{
	return strcmp(((const struct colref *)a)->name,
	              ((const struct colref *)b)->name);
}

/* The name index of the columns, once they are named. */
static int
index_columns(struct tf_columns *cols)
{
	size_t n = (size_t)(cols->width + cols->nids);
	struct colref *o = realloc(cols->colorder, n * sizeof *o);
	if (o == NULL) {
		return tfi_set_error(cols, TF_ENOMEM, "out of memory");
	}
	cols->colorder = o;
	for (size_t c = 0; c < n; c++) {
		o[c] = (struct colref){cols->colname[c], (int64_t)c};
	}
	qsort(o, n, sizeof *o, by_column_name);
	return TF_OK;
}

/* By name, then by place. */
static int
by_name_then_place(const void *a, const void *b)
{
	const struct colref *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c != 0 ? c : (x->col > y->col) - (x->col < y->col);
}

/* The last of the n sorted inputs named name (its place in cols->in),
 * or -1. */
static int64_t
last_named(const struct colref *by, size_t n, const char *name)
{
	size_t lo = 0, hi = n; /* the first past every name <= name */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(by[mid].name, name) <= 0) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo > 0 && strcmp(by[lo - 1].name, name) == 0 ? by[lo - 1].col
	                                                    : -1;
}

static int name_features(struct tf_columns *cols, const struct colref *by,
                         size_t nby, const char *origin);
static int name_column(struct tf_columns *cols, int64_t c, const char *name);

/* Name each column of a row after the schema feature it holds (the
 * inputs of one value looked up by name in a sorted copy: a schema of
 * thousands of columns is not matched pair by pair). */
static int
name_columns(struct tf_columns *cols, const char *origin)
{
	/* (a bag's ids are named too: index_columns() takes them) */
	int64_t bag_ids = cols->sparse == TFI_SPARSE_BAG ? cols->nids : 0;
	cols->colname =
	    calloc((size_t)(cols->width + bag_ids), sizeof *cols->colname);
	cols->colint = calloc((size_t)(cols->width + bag_ids), 1);
	struct colref *by = malloc((cols->nin + 1) * sizeof *by);
	if (cols->colname == NULL || cols->colint == NULL || by == NULL) {
		free(by);
		return tfi_set_error(cols, TF_ENOMEM, "out of memory");
	}
	size_t nby = 0;
	for (size_t k = 0; k < cols->nin; k++) {
		if (cols->in[k].width == 1) {
			by[nby++] =
			    (struct colref){cols->in[k].name, (int64_t)k};
		}
	}
	qsort(by, nby, sizeof *by, by_name_then_place);
	int rc = name_features(cols, by, nby, origin);
	free(by);
	return rc;
}

/* ... each feature's, through the sorted inputs of one value. */
static int
name_features(struct tf_columns *cols, const struct colref *by, size_t nby,
              const char *origin)
{
	for (size_t i = 0; i < cols->schema->nfeatures; i++) {
		const struct tfi_schema_col *f = &cols->schema->features[i];
		int64_t col = -1;
		if (f->packed_index >= 0) {
			col = cols->in[0].col + f->packed_index;
		} else {
			int64_t k = last_named(by, nby, f->name);
			col = k >= 0 ? cols->in[k].col : -1;
		}
		if (col < 0 || col >= cols->width) {
			continue; /* bytes: not a row column */
		}
		if (cols->colname[col] != NULL) {
			return tfi_set_error(cols, TF_EFORMAT,
			                     "%s: two features at column %lld",
			                     origin, (long long)col);
		}
		cols->colname[col] = strdup(f->name);
		cols->colint[col] = f->type == TF_COL_INT64;
		if (cols->colname[col] == NULL) {
			return tfi_set_error(cols, TF_ENOMEM, "out of memory");
		}
	}
	if (cols->seq != NULL && !cols->seq->tokens) {
		/* a sequence's columns: NAME.STEP or NAME.STEP.VALUE */
		const struct seqf *q = cols->seq;
		const struct input *in = &cols->in[q->in];
		for (int64_t k = 0; k < in->width; k++) {
			char name[300];
			if (q->step_width == 1) {
				snprintf(name, sizeof name, "%s.%lld", q->name,
				         (long long)k);
			} else {
				snprintf(name, sizeof name, "%s.%lld.%lld",
				         q->name,
				         (long long)(k / q->step_width),
				         (long long)(k % q->step_width));
			}
			if ((cols->colname[in->col + k] = strdup(name)) ==
			    NULL) {
				return tfi_set_error(cols, TF_ENOMEM,
				                     "out of memory");
			}
		}
	}
	/* sparse ids beside numeric features: the ids' columns first (a
	 * bag's values, values.K, and its ids, ids.K, after the row; a
	 * dense row's, ids.ID) */
	int bag = cols->sparse == TFI_SPARSE_BAG;
	int64_t ids = cols->sparse ? tfi_columns_id_width(cols) : 0;
	char name[64];
	for (int64_t c = 0; c < ids; c++) {
		snprintf(name, sizeof name, "%s.%lld", bag ? "values" : "ids",
		         (long long)c);
		if (name_column(cols, c, name) != TF_OK) {
			return TF_ENOMEM;
		}
	}
	for (int64_t k = 0; bag && k < cols->nids; k++) {
		snprintf(name, sizeof name, "ids.%lld", (long long)k);
		if (name_column(cols, cols->width + k, name) != TF_OK) {
			return TF_ENOMEM;
		}
	}
	for (int64_t c = 0; c < cols->width; c++) {
		if (cols->colname[c] == NULL) {
			return tfi_set_error(cols, TF_EFORMAT,
			                     "%s: no feature describes column "
			                     "%lld of a row",
			                     origin, (long long)c);
		}
	}
	return index_columns(cols);
}

/* The input holding row column c (inputs lie in column order). */
static const struct input *
column_input(const struct tf_columns *cols, int64_t c)
{
	size_t lo = 0, hi = cols->nin;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct input *in = &cols->in[mid];
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
tf_columns_find_column(const struct tf_columns *cols, const char *name)
{
	size_t lo = 0,
	       hi = cols->colorder ? (size_t)(cols->width + cols->nids) : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int cmp = strcmp(cols->colorder[mid].name, name);
		if (cmp == 0) {
			return cols->colorder[mid].col;
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
tf_columns_column(const struct tf_columns *cols, int64_t c, int *is_int,
                  float *mean, float *inv_std)
{
	const struct input *in = column_input(cols, c);
	int known =
	    cols->colname != NULL && c >= 0 && c < cols->width + cols->nids;
	*is_int = known ? cols->colint[c] : 0;
	*mean = 0.0f;
	*inv_std = 1.0f;
	if (in != NULL && cols->normalize && in->mean != NULL) {
		*mean = in->mean[c - in->col];
		*inv_std = in->inv_std[c - in->col];
	}
	return known ? cols->colname[c] : NULL;
}

/* A cross's id from its two columns' ids: a hash into buckets, or -1
 * when either is missing. */
static int64_t
cross_id(const struct tf_columns *cols, const struct cross *x,
         const int64_t *ids)
{
	int64_t a = ids[x->a], b = ids[x->b];
	if (a < 0 || b < 0) {
		return -1;
	}
	uint64_t h = (uint64_t)a * 0x9e3779b97f4a7c15ULL ^ (uint64_t)b;
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 29;
	return (int64_t)(h % (uint64_t)cols->buckets);
}

/* A row's ids: the categorical ones, then the crosses computed. */
void
tfi_columns_fill_crosses(const struct tf_columns *cols, int64_t *ids)
{
	for (size_t i = 0; i < cols->ncross; i++) {
		ids[cols->ncat + i] = cross_id(cols, &cols->crosses[i], ids);
	}
}

void
tf_columns_standardize(const struct tf_columns *cols, float *x, int64_t *ids,
                       size_t rows)
{
	for (size_t r = 0; cols->ncross > 0 && r < rows; r++) {
		tfi_columns_fill_crosses(cols, ids + r * (size_t)cols->nids);
	}
	if (!cols->normalize) {
		return;
	}
	for (size_t k = 0; k < cols->nin; k++) {
		const struct input *in = &cols->in[k];
		if (in->mean == NULL) {
			continue;
		}
		for (size_t r = 0; r < rows; r++) {
			float *v = x + r * (size_t)cols->width + in->col;
			for (int64_t j = 0; j < in->width; j++) {
				v[j] = (v[j] - in->mean[j]) * in->inv_std[j];
			}
		}
	}
}

/* Room for an input's statistics: mean 0 and scale 1 until the schema
 * says. */
static int
set_stats(struct tf_columns *cols, struct input *in)
{
	in->mean = calloc((size_t)in->width, sizeof(float));
	in->inv_std = malloc((size_t)in->width * sizeof(float));
	if (in->mean == NULL || in->inv_std == NULL) {
		return tfi_set_error(cols, TF_ENOMEM, "out of memory");
	}
	for (int64_t i = 0; i < in->width; i++) {
		in->inv_std[i] = 1.0f;
	}
	return TF_OK;
}

int
tf_columns_select(struct tf_columns *cols, const char *features,
                  const char *exclude)
{
	free(cols->select);
	free(cols->exclude);
	cols->select = features && *features ? strdup(features) : NULL;
	cols->exclude = exclude && *exclude ? strdup(exclude) : NULL;
	return (features && *features && !cols->select) ||
	               (exclude && *exclude && !cols->exclude)
	           ? tfi_set_error(cols, TF_ENOMEM, "out of memory")
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
check_list(struct tf_columns *cols, const char *flag, const char *list)
{
	const struct tf_schema *sc = cols->schema;
	for (const char *p = list; p != NULL && *p;) {
		size_t k = strcspn(p, ",");
		int found = 0;
		for (size_t i = 0; i < sc->nfeatures && !found; i++) {
			found = strlen(sc->features[i].name) == k &&
			        strncmp(sc->features[i].name, p, k) == 0;
		}
		if (!found) {
			return tfi_set_error(
			    cols, TF_EINVAL,
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
select_features(struct tf_columns *cols)
{
	struct tf_schema *sc = cols->schema;
	int rc = check_list(cols, "--features", cols->select);
	rc = rc ? rc : check_list(cols, "--exclude", cols->exclude);
	if (rc != TF_OK) {
		return rc;
	}
	size_t k = 0;
	for (size_t i = 0; i < sc->nfeatures; i++) {
		struct tfi_schema_col *f = &sc->features[i];
		int keep =
		    (cols->select == NULL || listed(cols->select, f->name)) &&
		    !listed(cols->exclude, f->name);
		if (!keep && f->packed_index >= 0) {
			return tfi_set_error(
			    cols, TF_EINVAL,
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
	           : tfi_set_error(cols, TF_ENOMEM, "out of memory");
}

int
tf_columns_set_image(struct tf_columns *cols, int height, int width,
                     int channels, int scale)
{
	if (height < 0 || width < 0 || height > 65535 || width > 65535 ||
	    (height == 0) != (width == 0) ||
	    (channels != 0 && channels != 1 && channels != 3) || scale > 2) {
		return tfi_set_error(cols, TF_EINVAL,
		                     "an image is 1 to 65535 pixels a side, "
		                     "with 1 or 3 channels");
	}
	cols->img_h = height;
	cols->img_w = width;
	cols->img_c = channels;
	cols->img_scale = scale;
	return TF_OK;
}

int
tf_columns_image(const struct tf_columns *cols, struct tf_image_view *v)
{
	if (!cols->image) {
		return 0;
	}
	const struct tf_schema *sc = cols->schema;
	memset(v, 0, sizeof *v);
	v->height = (int)sc->image_height;
	v->width = (int)sc->image_width;
	v->channels = (int)sc->image_channels;
	v->scale = sc->image_scale;
	return 1;
}

/* A categorical column's name and vocabulary (v; NULL: none). */
static int
fill_cat(struct tf_columns *cols, struct cat *c, const char *name,
         const struct tfi_vocab *v)
{
	memset(c, 0, sizeof *c);
	c->name = strdup(name);
	size_t n = v != NULL ? v->n : 0;
	c->vocab = calloc(n + 1, sizeof *c->vocab);
	c->vlen = calloc(n + 1, sizeof *c->vlen);
	if (c->name == NULL || c->vocab == NULL || c->vlen == NULL) {
		return tfi_set_error(cols, TF_ENOMEM, "out of memory");
	}
	for (size_t k = 0; k < n; k++) {
		c->vocab[k] = strdup(v->values[k]);
		c->vlen[k] = strlen(v->values[k]);
		c->n = (int64_t)k + 1;
		if (c->vocab[k] == NULL) {
			return tfi_set_error(cols, TF_ENOMEM, "out of memory");
		}
	}
	return TF_OK;
}

/* The ids a sequence adds to a row: its tokens', then its length. */
static int64_t
seq_ids(const struct tf_columns *cols)
{
	return cols->seq == NULL   ? 0
	       : cols->seq->tokens ? cols->seq->steps + 1
	                           : 1;
}

/* Place the sequence's ids after the categorical ones and crosses, and
 * name every id column past the first (those of the categorical columns
 * and crosses: names[c], or NULL) of ids columns. */
static int
place_ids(struct tf_columns *cols, int64_t cats)
{
	int64_t w = cols->width + cats + seq_ids(cols);
	int64_t had = cols->colname ? cols->width + cols->nids : 0;
	for (int64_t c = cols->width + cats; c < had; c++) {
		free(cols->colname[c]);
	}
	char **names = realloc(cols->colname, (size_t)w * sizeof *names);
	if (names != NULL) {
		cols->colname = names;
	}
	unsigned char *ints = realloc(cols->colint, (size_t)w);
	if (ints != NULL) {
		cols->colint = ints;
	}
	if (names == NULL || ints == NULL) {
		return tfi_set_error(cols, TF_ENOMEM, "out of memory");
	}
	/* new columns, and those just freed */
	for (int64_t c = had < cols->width + cats ? had : cols->width + cats;
	     c < w; c++) {
		cols->colname[c] = NULL;
		cols->colint[c] = 0;
	}
	cols->nids = w - cols->width;
	struct seqf *q = cols->seq;
	if (q == NULL) {
		return TF_OK;
	}
	char name[300];
	q->col = cats;
	q->len_col = cats + (q->tokens ? q->steps : 0);
	for (int64_t k = 0; k <= q->len_col - q->col; k++) {
		if (k < q->len_col - q->col) {
			snprintf(name, sizeof name, "%s.%lld", q->name,
			         (long long)k);
		} else {
			snprintf(name, sizeof name, "%s.length", q->name);
		}
		int64_t c = cols->width + q->col + k;
		if ((cols->colname[c] = strdup(name)) == NULL) {
			return tfi_set_error(cols, TF_ENOMEM, "out of memory");
		}
		cols->colint[c] = 1;
	}
	return TF_OK;
}

int
tf_columns_set_sequence(struct tf_columns *cols, int64_t max_length,
                        int64_t buckets)
{
	if (max_length < 0 || max_length > (1 << 24) || buckets < 0 ||
	    buckets > INT32_MAX) {
		return tfi_set_error(cols, TF_EINVAL,
		                     "a sequence keeps 1 to 2^24 steps, its "
		                     "tokens hashed into 1 to %d buckets",
		                     INT32_MAX);
	}
	cols->seq_max = max_length;
	cols->seq_buckets = buckets;
	return TF_OK;
}

int
tf_columns_sequence(const struct tf_columns *cols, struct tf_sequence_view *v)
{
	const struct seqf *q = cols->seq;
	if (q == NULL) {
		return 0;
	}
	memset(v, 0, sizeof *v);
	v->name = q->name;
	v->steps = q->steps;
	v->step_width = q->step_width;
	v->tokens = q->tokens;
	v->vocab =
	    q->tokens ? (q->tok.hashed ? q->tok.hashed : q->tok.n + 1) : 0;
	v->first = q->tokens ? q->col : cols->in[q->in].col;
	v->length = q->len_col;
	return 1;
}

/* A sequence feature of the schema (f, written back when the settings
 * change it): numbers a row input of steps x step_width columns, tokens
 * a vocabulary or hash buckets. */
static int
use_sequence(struct tf_columns *cols, struct tfi_schema_col *f,
             const char *origin)
{
	if (cols->seq != NULL) {
		return tfi_set_error(cols, TF_EINVAL,
		                     "%s: '%s' and '%s' are both sequences; a "
		                     "model reads one (--features or --exclude "
		                     "chooses)",
		                     origin, cols->seq->name, f->name);
	}
	if (f->type == TF_COL_FLOAT &&
	    cols->seq_max > (1 << 24) / f->step_width) {
		return tfi_set_error(cols, TF_EINVAL,
		                     "--max-length %lld: steps of %lld values "
		                     "are more than 2^24 a row",
		                     (long long)cols->seq_max,
		                     (long long)f->step_width);
	}
	struct seqf *q = calloc(1, sizeof *q);
	if (q == NULL || (q->name = strdup(f->name)) == NULL) {
		free(q);
		return tfi_set_error(cols, TF_ENOMEM, "out of memory");
	}
	cols->seq = q;
	if (cols->seq_max > 0) {
		f->max_length = cols->seq_max;
	}
	q->steps = f->max_length;
	q->step_width = f->step_width;
	q->type = f->type;
	q->tokens = f->type != TF_COL_FLOAT;
	if (!q->tokens) {
		q->in = cols->nin;
		return add_input(cols, f->name, q->steps * q->step_width);
	}
	const struct tfi_vocab *v = tfi_schema_vocab(cols->schema, f->name);
	int listed = v != NULL && !v->over && v->n > 0;
	int rc = fill_cat(cols, &q->tok, f->name, listed ? v : NULL);
	if (rc == TF_OK && !listed) {
		if (cols->seq_buckets > 0) {
			f->hash_buckets = cols->seq_buckets;
		}
		q->tok.hashed = f->hash_buckets > 0 ? f->hash_buckets : 1000;
		f->hash_buckets = q->tok.hashed;
	}
	return rc;
}

/* An image schema: the image is the one input, of the size, channels and
 * scale set (tf_columns_set_image) or the schema's, which the schema's
 * text then says. */
static int
use_image(struct tf_columns *cols, const char *origin)
{
	struct tf_schema *sc = cols->schema;
	if (cols->img_h > 0) {
		sc->image_height = cols->img_h;
		sc->image_width = cols->img_w;
	}
	sc->image_channels = cols->img_c ? cols->img_c : sc->image_channels;
	sc->image_scale =
	    cols->img_scale >= 0 ? cols->img_scale : sc->image_scale;
	if (sc->image_height == 0) {
		return tfi_set_error(cols, TF_EINVAL,
		                     "%s: the images are not all one size; "
		                     "give the size the model reads them at "
		                     "(--image-size HxW)",
		                     origin);
	}
	int64_t w = sc->image_height * sc->image_width * sc->image_channels;
	if (w > (1 << 24)) {
		return tfi_set_error(cols, TF_EINVAL,
		                     "%s: images of %lldx%lldx%lld are more "
		                     "than 2^24 inputs",
		                     origin, (long long)sc->image_height,
		                     (long long)sc->image_width,
		                     (long long)sc->image_channels);
	}
	cols->image = 1;
	int rc = add_input(cols, sc->image_feature, w);
	if (rc == TF_OK && tf_schema_write(sc, NULL) != TF_OK) {
		rc = tfi_set_error(cols, TF_ENOMEM, "out of memory");
	}
	return rc;
}

/* The libsvm layout: a dense row of max_index + 1 floats, or a bag. */
static int
use_sparse(struct tf_columns *cols, const char *origin)
{
	struct tf_schema *sc = cols->schema;
	uint64_t space = sc->max_index >= (uint64_t)INT64_MAX
	                     ? UINT64_MAX
	                     : sc->max_index + 1;
	int64_t buckets = cols->want_buckets > 0 ? cols->want_buckets
	                                         : (int64_t)sc->id_buckets;
	int64_t oov =
	    cols->want_oov > 0 ? cols->want_oov : (int64_t)sc->oov_buckets;
	/* (a schema from before max_ids: dense rows as then, up to 2^20) */
	if (!cols->want_bag && buckets == 0 && oov == 0 && !sc->sparse_bag &&
	    (space <= TF_DENSE_IDS_MAX ||
	     (sc->max_ids == 0 && space <= ((uint64_t)1 << 20)))) {
		cols->sparse = TFI_SPARSE_DENSE;
		cols->width = (int64_t)space;
		return TF_OK;
	}
	if (sc->max_ids == 0 || sc->max_ids > (1 << 20)) {
		return tfi_set_error(
		    cols, TF_EFORMAT,
		    "%s: the schema does not say how many ids a row holds "
		    "(sparse max_ids, 1 to 2^20); convert the data again "
		    "with tf-csv2record",
		    origin);
	}
	/* the schema's id vocabulary: a row for each of its ids (hashed
	 * ids have no use for it: the model's copy drops it) */
	tfi_idset_free(&cols->bag_ids);
	if (buckets > 0) {
		free(sc->id_vocab);
		sc->id_vocab = NULL;
		sc->id_count = 0;
	}
	if (buckets == 0 && sc->id_count > 0 &&
	    tfi_idset_reserve(&cols->bag_ids, sc->id_count) != 0) {
		return tfi_set_error(cols, TF_ENOMEM, "out of memory");
	}
	for (size_t i = 0; buckets == 0 && i < sc->id_count; i++) {
		if (tfi_idset_add(&cols->bag_ids, sc->id_vocab[i]) < 0) {
			return tfi_set_error(cols, TF_ENOMEM, "out of memory");
		}
	}
	if (buckets == 0 && sc->id_count == 0 && space > ((uint64_t)1 << 24)) {
		buckets = (int64_t)1 << 20;
		if (oov > 0) {
			return tfi_set_error(
			    cols, TF_EINVAL,
			    "%s: out-of-vocabulary buckets are for a table of "
			    "ids (an id vocabulary, or ids below max_index + 1 "
			    "<= 2^24); these ids go up to %llu and are hashed "
			    "into 2^20 buckets, where every id has a row",
			    origin, (unsigned long long)sc->max_index);
		}
	}
	if (buckets > 0 && oov > 0) {
		return tfi_set_error(cols, TF_EINVAL,
		                     "%s: out-of-vocabulary buckets and hash "
		                     "buckets: hashed ids all have a row; give "
		                     "one or the other",
		                     origin);
	}
	cols->sparse = TFI_SPARSE_BAG;
	cols->bag = (int64_t)sc->max_ids;
	cols->bag_hash = buckets > 0;
	cols->bag_known = buckets > 0        ? buckets
	                  : sc->id_count > 0 ? (int64_t)sc->id_count
	                                     : (int64_t)space;
	cols->bag_oov = oov;
	cols->width = cols->bag;
	cols->nids = cols->bag;
	sc->sparse_bag = 1;
	sc->id_buckets = (uint64_t)buckets;
	sc->oov_buckets = (uint64_t)oov;
	if (tf_schema_write(sc, NULL) != TF_OK) {
		return tfi_set_error(cols, TF_ENOMEM, "out of memory");
	}
	return TF_OK;
}

/* Take inputs, label and statistics from the parsed schema. */
static int
use_schema(struct tf_columns *cols, const char *origin)
{
	const struct tf_schema *sc = cols->schema;
	int rc;
	if (sc->layout == TFI_LAYOUT_IMAGE &&
	    (rc = use_image(cols, origin)) != TF_OK) {
		return rc;
	}
	if ((cols->select != NULL || cols->exclude != NULL) &&
	    (rc = select_features(cols)) != TF_OK) {
		return rc;
	}
	if (sc->layout == TFI_LAYOUT_LIBSVM &&
	    (rc = use_sparse(cols, origin)) != TF_OK) {
		return rc;
	}
	/* Inputs: the packed list, then any separate numeric columns. */
	if (sc->packed_name != NULL) {
		if ((rc = add_input(cols, sc->packed_name,
		                    (int64_t)sc->packed_size)) != TF_OK ||
		    (rc = set_stats(cols, &cols->in[cols->nin - 1])) != TF_OK) {
			return rc;
		}
	}
	for (size_t i = 0; i < sc->nfeatures; i++) {
		const struct tfi_schema_col *f = &sc->features[i];
		if (f->packed_index >= 0 && cols->nin > 0) {
			struct input *p = &cols->in[0];
			if (f->packed_index < p->width) {
				col_stats(f, &p->mean[f->packed_index],
				          &p->inv_std[f->packed_index]);
			}
			continue;
		}
		if (f->max_length > 0) {
			if ((rc = use_sequence(cols, &cols->schema->features[i],
			                       origin)) != TF_OK) {
				return rc;
			}
			continue;
		}
		if (f->type == TF_COL_BYTES) {
			continue; /* categorical: for embedding models */
		}
		if ((rc = add_input(cols, f->name, 1)) != TF_OK ||
		    (rc = set_stats(cols, &cols->in[cols->nin - 1])) != TF_OK) {
			return rc;
		}
		col_stats(f, cols->in[cols->nin - 1].mean,
		          cols->in[cols->nin - 1].inv_std);
	}
	if (cols->nin == 0 && !cols->sparse && cols->seq == NULL) {
		return tfi_set_error(cols, TF_EFORMAT,
		                     "%s: no numeric features", origin);
	}
	if (cols->seq != NULL && (cols->seq_max > 0 || cols->seq->tokens) &&
	    tf_schema_write(cols->schema, NULL) != TF_OK) {
		return tfi_set_error(cols, TF_ENOMEM, "out of memory");
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
		tf_columns_set_label(cols, sc->label.name, task, k);
	}
	if ((cols->sparse && cols->nin == 0) || cols->image) {
		return TF_OK;
	}
	return (rc = name_columns(cols, origin)) != TF_OK ? rc
	       : cols->seq == NULL                        ? TF_OK
	       : (rc = place_ids(cols, 0)) != TF_OK       ? rc
	                                                  : index_columns(cols);
}

int
tf_columns_parse_schema(struct tf_columns *cols, const char *text,
                        const char *origin)
{
	if (cols->schema == NULL && (cols->schema = tf_schema_new()) == NULL) {
		return tfi_set_error(cols, TF_ENOMEM, "out of memory");
	}
	int rc = tf_schema_parse(cols->schema, text, origin);
	if (rc != TF_OK) {
		return tfi_set_error(cols, rc, "%s", tf_errmsg(cols->schema));
	}
	return use_schema(cols, origin);
}

int
tf_columns_load_schema(struct tf_columns *cols, const char *path)
{
	if (cols->schema == NULL && (cols->schema = tf_schema_new()) == NULL) {
		return tfi_set_error(cols, TF_ENOMEM, "out of memory");
	}
	int rc = tf_schema_load(cols->schema, path);
	if (rc != TF_OK) {
		return tfi_set_error(cols, rc, "%s", tf_errmsg(cols->schema));
	}
	return use_schema(cols, path);
}

int
tfi_columns_cat_index(const struct tf_columns *cols, const char *name)
{
	for (size_t i = 0; i < cols->ncat; i++) {
		if (strcmp(cols->cats[i].name, name) == 0) {
			return (int)i;
		}
	}
	return -1;
}

/* Name row column c (categorical or cross). */
static int
name_column(struct tf_columns *cols, int64_t c, const char *name)
{
	free(cols->colname[c]);
	cols->colname[c] = strdup(name);
	cols->colint[c] = 0;
	return cols->colname[c]
	           ? TF_OK
	           : tfi_set_error(cols, TF_ENOMEM, "out of memory");
}

int
tf_columns_set_categorical(struct tf_columns *cols, const char *crosses,
                           int64_t buckets)
{
	if (cols->ncat > 0 || cols->sparse || cols->colname == NULL ||
	    cols->schema == NULL) {
		return tfi_set_error(cols, TF_EINVAL,
		                     "categorical columns: set once, after a "
		                     "columns or packed schema");
	}
	int rc = TF_OK;
	for (size_t i = 0; i < cols->schema->nfeatures; i++) {
		const struct tfi_schema_col *f = &cols->schema->features[i];
		if (f->type != TF_COL_BYTES || f->packed_index >= 0 ||
		    f->max_length > 0) {
			continue;
		}
		if (f->binary || f->unique) {
			/* Hashing them would train on noise. */
			rc = tfi_set_error(
			    cols, TF_EFORMAT,
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
		    tfi_schema_vocab(cols->schema, f->name);
		int listed = v != NULL && !v->over;
		if (!listed && (buckets < 1 || buckets > INT32_MAX)) {
			rc =
			    tfi_set_error(cols, TF_EINVAL,
			                  "feature '%s' has no vocabulary: its "
			                  "values need 1 to %d hash buckets",
			                  f->name, INT32_MAX);
			break;
		}
		struct cat *cs =
		    realloc(cols->cats, (cols->ncat + 1) * sizeof *cs);
		if (cs == NULL) {
			rc = tfi_set_error(cols, TF_ENOMEM, "out of memory");
			break;
		}
		cols->cats = cs;
		struct cat *c = &cols->cats[cols->ncat++];
		if ((rc = fill_cat(cols, c, f->name, listed ? v : NULL)) !=
		    TF_OK) {
			break;
		}
		c->offset = cols->cat_ids;
		if (!listed) {
			c->hashed = buckets;
		}
		cols->cat_ids += c->hashed ? c->hashed : c->n + 1;
	}
	if (rc == TF_OK && cols->cat_ids > INT32_MAX) {
		/* One embedding table's rows. */
		rc =
		    tfi_set_error(cols, TF_EINVAL,
		                  "the categorical vocabularies hold %lld ids, "
		                  "more than %d",
		                  (long long)cols->cat_ids, INT32_MAX);
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
			a = tfi_columns_cat_index(cols, spec);
			b = tfi_columns_cat_index(cols, star + 1);
		}
		if (a < 0 || b < 0) {
			if (star != NULL) {
				*star = '*';
			}
			return tfi_set_error(
			    cols, TF_EINVAL,
			    "cross '%s': expected A*B of two "
			    "categorical (bytes) features with a "
			    "vocabulary in the schema",
			    spec);
		}
		struct cross *xs =
		    realloc(cols->crosses, (cols->ncross + 1) * sizeof *xs);
		if (xs == NULL) {
			return tfi_set_error(cols, TF_ENOMEM, "out of memory");
		}
		cols->crosses = xs;
		cols->crosses[cols->ncross++] =
		    (struct cross){(size_t)a, (size_t)b, 0};
		p += len;
		p += *p == ',';
	}
	if (cols->ncross > 0 && (buckets < 1 || buckets > INT32_MAX)) {
		return tfi_set_error(cols, TF_EINVAL,
		                     "crosses need 1 to %d hash buckets",
		                     INT32_MAX);
	}
	cols->buckets = buckets;
	if ((rc = place_ids(cols, (int64_t)cols->ncat +
	                              (int64_t)cols->ncross)) != TF_OK) {
		return rc;
	}
	for (size_t k = 0; k < cols->ncat; k++) {
		cols->cats[k].col = cols->width + (int64_t)k;
		if ((rc = name_column(cols, cols->cats[k].col,
		                      cols->cats[k].name)) != TF_OK) {
			return rc;
		}
	}
	for (size_t k = 0; k < cols->ncross; k++) {
		char name[300];
		cols->crosses[k].col =
		    cols->width + (int64_t)cols->ncat + (int64_t)k;
		snprintf(name, sizeof name, "%s_X_%s",
		         cols->cats[cols->crosses[k].a].name,
		         cols->cats[cols->crosses[k].b].name);
		if ((rc = name_column(cols, cols->crosses[k].col, name)) !=
		    TF_OK) {
			return rc;
		}
	}
	return index_columns(cols);
}

void
tf_columns_layout(const struct tf_columns *cols, struct tf_layout *l)
{
	l->numeric = cols->width;
	l->categorical = (int64_t)cols->ncat;
	l->ids = cols->cat_ids;
	l->crosses = (int64_t)cols->ncross;
	l->buckets = cols->buckets;
	l->sequence = seq_ids(cols);
	l->bag = cols->sparse == TFI_SPARSE_BAG ? cols->bag : 0;
	l->bag_vocab = cols->sparse == TFI_SPARSE_BAG
	                   ? cols->bag_known + cols->bag_oov
	                   : 0;
}

int
tf_columns_set_sparse(struct tf_columns *cols, int bag, int64_t buckets)
{
	if (buckets < 0 || buckets > ((int64_t)1 << 32)) {
		return tfi_set_error(cols, TF_EINVAL,
		                     "sparse ids are hashed into 1 to 2^32 "
		                     "buckets");
	}
	cols->want_bag = bag != 0;
	cols->want_buckets = buckets;
	return TF_OK;
}

int
tf_columns_set_oov(struct tf_columns *cols, int64_t buckets)
{
	if (buckets < 0 || buckets > INT32_MAX) {
		return tfi_set_error(cols, TF_EINVAL,
		                     "out-of-vocabulary ids are hashed into 1 "
		                     "to 2^31-1 buckets");
	}
	cols->want_oov = buckets;
	cols->want_bag = cols->want_bag || buckets > 0;
	return TF_OK;
}

int
tf_columns_bag(const struct tf_columns *cols, int64_t *width, int64_t *vocab)
{
	if (cols->sparse != TFI_SPARSE_BAG) {
		return 0;
	}
	*width = cols->bag;
	*vocab = cols->bag_known + cols->bag_oov;
	return 1;
}

int
tf_columns_bag_hashed(const struct tf_columns *cols)
{
	return cols->sparse == TFI_SPARSE_BAG && cols->bag_hash;
}

int
tf_columns_bag_vocabulary(const struct tf_columns *cols)
{
	return cols->sparse == TFI_SPARSE_BAG && cols->bag_ids.n > 0;
}

const uint64_t *
tfi_columns_id_vocab(const struct tf_columns *cols, size_t *n)
{
	int v = tf_columns_bag_vocabulary(cols) && cols->schema != NULL &&
	        cols->schema->id_vocab != NULL;
	*n = v ? cols->schema->id_count : 0;
	return v ? cols->schema->id_vocab : NULL;
}

int64_t
tf_columns_bag_oov(const struct tf_columns *cols)
{
	return cols->sparse == TFI_SPARSE_BAG ? cols->bag_oov : 0;
}

int64_t
tf_columns_bag_unknown(const struct tf_columns *model,
                       const struct tf_columns *data, uint64_t *first)
{
	const struct tf_schema *sc = data->schema;
	if (model->sparse != TFI_SPARSE_BAG || data->sparse != TFI_SPARSE_BAG ||
	    !tf_columns_bag_vocabulary(data)) {
		return -1;
	}
	int64_t n = 0;
	for (size_t i = 0; i < sc->id_count; i++) {
		if (tfi_bag_row(model, sc->id_vocab[i]) < 0 && n++ == 0) {
			*first = sc->id_vocab[i];
		}
	}
	return n;
}

int64_t
tf_columns_bag_id(const struct tf_columns *cols, int64_t id)
{
	return tfi_bag_row(cols, (uint64_t)id);
}

/* A bag's two signature inputs: its ids and their values. */
static int
bag_inputs(const struct tf_columns *cols, struct tfi_input out[2])
{
	if (cols->sparse != TFI_SPARSE_BAG) {
		return 0;
	}
	out[0] = (struct tfi_input){.name = "ids",
	                            .width = cols->bag,
	                            .is_int = 1,
	                            .list = 1,
	                            .sparse = 1};
	out[1] = (struct tfi_input){
	    .name = "values", .width = cols->bag, .list = 1, .sparse = 1};
	return 1;
}

size_t
tfi_columns_inputs(const struct tf_columns *cols, struct tfi_input *out,
                   size_t cap)
{
	int is_int;
	float mean, inv;
	struct tfi_input bag[2];
	if (bag_inputs(cols, bag)) {
		for (size_t k = 0; k < 2 && k < cap; k++) {
			out[k] = bag[k];
		}
		return 2;
	}
	if (cols->width > 0 &&
	    tf_columns_column(cols, 0, &is_int, &mean, &inv) ==
	        NULL) { /* libsvm rows: one dense input */
		if (cap > 0) {
			out[0] = (struct tfi_input){"x", 0, cols->width, 0, 0,
			                            1,   0, 0,           0};
		}
		return 1;
	}
	size_t n = 0;
	int64_t inputs = cols->width + (int64_t)cols->ncat;
	for (int64_t c = 0; c < inputs; c++) {
		const struct input *in =
		    c < cols->width ? column_input(cols, c) : NULL;
		struct tfi_input e = {0};
		if (in != NULL && in->width > 1) {
			e = (struct tfi_input){
			    in->name, in->col, in->width, 0, 0, 1, 0, 0, 0};
			c = in->col + in->width - 1;
			seq_input(cols, &e);
		} else {
			e.name =
			    tf_columns_column(cols, c, &e.is_int, &mean, &inv);
			e.col = c;
			e.width = 1;
			e.categorical = c >= cols->width;
		}
		if (n < cap) {
			out[n] = e;
		}
		n++;
	}
	struct tfi_input e;
	if (token_input(cols, &e)) {
		if (n < cap) {
			out[n] = e;
		}
		n++;
	}
	return n;
}

int
tfi_columns_input(const struct tf_columns *cols, const char *name,
                  struct tfi_input *in)
{
	struct tfi_input t, bag[2];
	if (token_input(cols, &t) && strcmp(t.name, name) == 0) {
		*in = t;
		return 1;
	}
	for (int k = 0; bag_inputs(cols, bag) && k < 2; k++) {
		if (strcmp(bag[k].name, name) == 0) {
			*in = bag[k];
			return 1;
		}
	}
	for (size_t k = 0; k < cols->nin; k++) {
		if (cols->in[k].width > 1 &&
		    strcmp(cols->in[k].name, name) == 0) {
			*in = (struct tfi_input){cols->in[k].name,
			                         cols->in[k].col,
			                         cols->in[k].width,
			                         0,
			                         0,
			                         1,
			                         0,
			                         0,
			                         0};
			seq_input(cols, in);
			return 1;
		}
	}
	int64_t c = tf_columns_find_column(cols, name);
	if (c < 0 || c >= cols->width + (int64_t)cols->ncat) {
		return 0;
	}
	int is_int;
	float mean, inv;
	tf_columns_column(cols, c, &is_int, &mean, &inv);
	*in = (struct tfi_input){name, c, 1, c >= cols->width, is_int, 0,
	                         0,    0, 0};
	return 1;
}

int
tf_columns_column_kind(const struct tf_columns *cols, int64_t c)
{
	int64_t num = cols->width;
	return c < num                         ? TF_COLUMN_NUMERIC
	       : c < num + (int64_t)cols->ncat ? TF_COLUMN_CATEGORICAL
	                                       : TF_COLUMN_DERIVED;
}

/* The id of a value of categorical column k: its place in the shared id
 * space, or the column's out-of-vocabulary id. */
int64_t
tfi_columns_int_token_id(const struct cat *c, int64_t v)
{
	char num[24];
	int n = snprintf(num, sizeof num, "%lld", (long long)v);
	return tfi_columns_category_id(c, num, (size_t)n);
}

int64_t
tfi_columns_category_id(const struct cat *c, const void *s, size_t n)
{
	if (c->hashed) {
		/* FNV-1a, then a 64-bit finaliser for the low bits. */
		uint64_t h = tfi_fnv1a(TFI_FNV1A_BASIS, s, n);
		h ^= h >> 33;
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 33;
		return c->offset + (int64_t)(h % (uint64_t)c->hashed);
	}
	int64_t lo = 0, hi = c->n;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		size_t m = c->vlen[mid] < n ? c->vlen[mid] : n;
		int cmp = m ? memcmp(c->vocab[mid], s, m) : 0; /* s: NULL, 0 */
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
tf_columns_category(const struct tf_columns *cols, int64_t col, const char *s,
                    size_t n)
{
	int64_t k = col - cols->width;
	return k >= 0 && k < (int64_t)cols->ncat
	           ? tfi_columns_category_id(&cols->cats[k], s, n)
	           : -1;
}
