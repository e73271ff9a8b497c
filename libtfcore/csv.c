/*
 * csv.c - CSV / libsvm text to tf.train.Example records, in parallel.
 *
 * Flow for each stream of a tf_input:
 *   1. the header row (CSV) names the columns;
 *   2. on the first stream, the first infer_rows rows are parsed once to
 *      infer column types, then the plan (which column becomes which
 *      feature) is fixed;
 *   3. the main thread cuts the bytes into chunks at row boundaries
 *      (outside quotes) and queues them; worker threads parse each chunk
 *      with their own libcsv parser and encode framed records; the main
 *      thread hands finished chunks to the sink in input order.  With
 *      one thread the main thread parses each chunk itself, through the
 *      same code (process_chunk), with no worker started.
 * Line numbers in messages are physical lines of the stream (1-based).
 */
#include <csv.h>
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "dataset_private.h" /* tfi_entry_head() */
#include "internal.h"
#include "tf/crc32c.h"
#include "tf/csv.h"
#include "tf/example.h"
#include "tf/record.h"
#include "tf/schema.h"

#define CHUNK        ((size_t)4 << 20)
#define MAX_ROW      ((size_t)64 << 20)
#define VOCAB_MAX    1000
#define SKIP_LOG_MAX 20

enum role { ROLE_FEATURE = 0, ROLE_LABEL = 1, ROLE_DROP = 2 };

/* ---- a small string set (vocabularies) ---------------------------------- */

struct strset {
	struct tfi_buf chars;
	uint32_t *slots; /* 1 + index into offs, 0 = empty */
	size_t *offs;    /* start of each string in chars (NUL-terminated) */
	size_t n, nslots;
	int over; /* more than VOCAB_MAX distinct values seen */
};

static uint64_t
hash_bytes(const void *p, size_t n)
{
	return tfi_fnv1a(TFI_FNV1A_BASIS, p, n);
}

static void
strset_free(struct strset *s)
{
	tfi_buf_free(&s->chars);
	free(s->slots);
	free(s->offs);
	memset(s, 0, sizeof *s);
}

static int
strset_add(struct strset *s, const char *p, size_t n)
{
	if (s->over) {
		return TF_OK;
	}
	if (s->slots == NULL) {
		s->nslots = 2048; /* > 2 * VOCAB_MAX */
		s->slots = calloc(s->nslots, sizeof *s->slots);
		s->offs = malloc((VOCAB_MAX + 1) * sizeof *s->offs);
		if (s->slots == NULL || s->offs == NULL) {
			return TF_ENOMEM;
		}
	}
	size_t i = hash_bytes(p, n) & (s->nslots - 1);
	while (s->slots[i] != 0) {
		const char *q =
		    (const char *)s->chars.data + s->offs[s->slots[i] - 1];
		if (strlen(q) == n && memcmp(q, p, n) == 0) {
			return TF_OK;
		}
		i = (i + 1) & (s->nslots - 1);
	}
	if (s->n == VOCAB_MAX || memchr(p, 0, n) != NULL) {
		s->over = 1;
		return TF_OK;
	}
	s->offs[s->n] = s->chars.len;
	if (tfi_buf_append(&s->chars, p, n) ||
	    tfi_buf_append(&s->chars, "", 1)) {
		return TF_ENOMEM;
	}
	s->slots[i] = (uint32_t)++s->n;
	return TF_OK;
}

static const char *
strset_at(const struct strset *s, size_t i)
{
	return (const char *)s->chars.data + s->offs[i];
}

/* ---- plan --------------------------------------------------------------- */

struct colstats {
	uint64_t present, missing;
	uint64_t nonfinite; /* of present: NaN or infinite (not in sums) */
	double min, max;
	double sum, sumsq;   /* for the mean and standard deviation */
	struct strset vocab; /* bytes columns, and int64 labels */
	int64_t seen[16];    /* int64 labels already in vocab (a fast check) */
	int nseen;
	uint64_t max_steps; /* a sequence's longest */
};

struct col {
	char *name;
	int role;
	int type;  /* resolved TF_COL_* */
	int given; /* type given by --types */
	int pack;  /* index in the packed list, -1 if not packed */
	int seq;   /* a sequence: a list of steps in each cell */
	/* inference */
	uint64_t inf_seen;
	int inf_int, inf_num;
	struct colstats st;
};

/* One output feature, in encoding (name) order. */
struct outfeat {
	const char *name;
	int col; /* source column, or -1 for the packed list */
	/* For float columns and the packed list, every byte of the map
	 * entry but the float values is fixed: prefix holds them. */
	uint8_t *prefix;
	size_t prefix_len;
};

struct row {
	float *f;
	int64_t *i;
	size_t *boff, *blen;
	unsigned char *present;
	struct tfi_buf chars;
	float *packed;
};

struct chunk {
	uint64_t seq;
	int state; /* 0 free, 1 ready, 2 working, 3 done */
	const char *stream;
	uint64_t first_line;
	int has_quotes;
	char *data;
	size_t len, cap;
	struct tfi_buf out;
	size_t *ends;
	size_t nrec, ends_cap;
	uint64_t rows, skipped;
	int err;
	char msg[TFI_MSG_MAX];
	struct tfi_buf skiplog;
	struct colstats *st;
	uint64_t max_index, max_ids; /* libsvm: largest id, most a row */
	/* ... its ids as read, then sorted, each once (sort_ids()) */
	uint64_t *ids, *ids_tmp;
	size_t nids, ids_cap;
	int ids_lost; /* ... not counted (out of memory, or no longer) */
};

struct worker {
	struct tf_csv *c;
	pthread_t thread;
	struct csv_parser p;
	struct tf_example *ex;
	struct row row;
	struct chunk *ch;
	size_t nfields;
	uint64_t line, row_line, row_newlines;
	int row_bad, stop;
	char msg[TFI_MSG_MAX];
	int64_t *ids;
	float *vals;
	size_t ids_cap;
};

struct tf_csv {
	struct tfi_handle err;
	struct tf_csv_options o;
	char *s_names, *s_label, *s_columns, *s_drop, *s_types, *s_pack;
	char *s_sequence;
	int has_seq; /* rows are written through a tf_example */
	int planned;
	struct col *cols;
	size_t ncols;
	struct outfeat *outs;
	size_t nouts;
	size_t npack;
	int label_col;
	char **sources;
	size_t nsources;
	uint64_t rows, skipped, bytes_in, max_index, max_ids;
	/* libsvm: the distinct ids, increasing, the chunks' merged as they
	 * retire, until they are too many for an id vocabulary (ids_over:
	 * then the chunks count none) */
	uint64_t *ids, *ids_tmp;
	size_t nids, ids_cap;
	int ids_over;
	struct tfi_buf skiplog;
	unsigned skiplog_n;
	/* pipeline */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct chunk *slots;
	size_t nslots;
	struct worker *workers;
	int nworkers;
	int shutdown;
};

void
tf_csv_options_init(struct tf_csv_options *o)
{
	memset(o, 0, sizeof *o);
	o->delimiter = ',';
	o->infer_rows = 1000;
	o->empty = TF_EMPTY_OMIT;
	o->seq_delimiter = ' ';
}

struct tf_csv *
tf_csv_new(void)
{
	struct tf_csv *c = calloc(1, sizeof *c);
	if (c != NULL) {
		tf_csv_options_init(&c->o);
		c->label_col = -1;
	}
	return c;
}

static void
stats_free(struct colstats *s)
{
	strset_free(&s->vocab);
}

void
tf_csv_free(struct tf_csv *c)
{
	if (c == NULL) {
		return;
	}
	for (size_t i = 0; i < c->ncols; i++) {
		free(c->cols[i].name);
		stats_free(&c->cols[i].st);
	}
	free(c->cols);
	for (size_t i = 0; i < c->nouts; i++) {
		free(c->outs[i].prefix);
	}
	free(c->outs);
	for (size_t i = 0; i < c->nsources; i++) {
		free(c->sources[i]);
	}
	free(c->sources);
	free(c->s_names);
	free(c->s_label);
	free(c->s_columns);
	free(c->s_drop);
	free(c->s_types);
	free(c->s_pack);
	free(c->s_sequence);
	tfi_buf_free(&c->skiplog);
	free(c->ids);
	free(c->ids_tmp);
	free(c);
}

uint64_t
tf_csv_rows(const struct tf_csv *c)
{
	return c->rows;
}

uint64_t
tf_csv_skipped(const struct tf_csv *c)
{
	return c->skipped;
}

const char *
tf_csv_skip_log(const struct tf_csv *c)
{
	return c->skiplog.len ? (const char *)c->skiplog.data : "";
}

static int
dup_opt(struct tf_csv *c, char **dst, const char *src)
{
	free(*dst);
	*dst = NULL;
	if (src != NULL && (*dst = strdup(src)) == NULL) {
		return tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	return TF_OK;
}

int
tf_csv_set_options(struct tf_csv *c, const struct tf_csv_options *o)
{
	if (c->planned) {
		return tfi_set_error(c, TF_EINVAL,
		                     "options cannot change after conversion "
		                     "started");
	}
	if (o->format != TF_FORMAT_CSV && o->format != TF_FORMAT_LIBSVM) {
		return tfi_set_error(c, TF_EINVAL, "unknown input format");
	}
	if (o->delimiter == '"' || o->delimiter == '\n' ||
	    o->delimiter == '\r' || o->delimiter == '\0') {
		return tfi_set_error(c, TF_EINVAL, "bad delimiter");
	}
	if (o->label_type != TF_COL_AUTO && o->label_type != TF_COL_INT64 &&
	    o->label_type != TF_COL_FLOAT) {
		return tfi_set_error(c, TF_EINVAL,
		                     "label type must be int or float");
	}
	if (o->empty < TF_EMPTY_OMIT || o->empty > TF_EMPTY_ERROR) {
		return tfi_set_error(c, TF_EINVAL, "bad empty-field policy");
	}
	if (o->seq_delimiter == '"' || o->seq_delimiter == '\n' ||
	    o->seq_delimiter == '\r' || o->seq_delimiter == '\0' ||
	    (o->sequence != NULL && o->seq_delimiter == o->delimiter)) {
		return tfi_set_error(c, TF_EINVAL,
		                     "bad sequence delimiter (not the field "
		                     "delimiter, a quote or a line end)");
	}
	if (o->pack != NULL && o->pack[0] == '\0') {
		return tfi_set_error(c, TF_EINVAL,
		                     "the packed feature needs a name");
	}
	if ((o->hash_features || o->hash_buckets) &&
	    (o->format == TF_FORMAT_LIBSVM || o->pack != NULL ||
	     o->sequence != NULL)) {
		return tfi_set_error(c, TF_EINVAL,
		                     "hashed features are CSV columns, not "
		                     "libsvm, packed or sequences");
	}
	c->o = *o;
	c->o.hash_features = o->hash_features || o->hash_buckets > 0;
	if (dup_opt(c, &c->s_names, o->names) ||
	    dup_opt(c, &c->s_label, o->label) ||
	    dup_opt(c, &c->s_columns, o->columns) ||
	    dup_opt(c, &c->s_drop, o->drop) ||
	    dup_opt(c, &c->s_types, o->types) ||
	    dup_opt(c, &c->s_pack, o->pack) ||
	    dup_opt(c, &c->s_sequence, o->sequence)) {
		return TF_ENOMEM;
	}
	c->o.sequence = c->s_sequence;
	c->o.names = c->s_names;
	c->o.label = c->s_label;
	c->o.columns = c->s_columns;
	c->o.drop = c->s_drop;
	c->o.types = c->s_types;
	c->o.pack = c->s_pack;
	if (c->o.threads <= 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		c->o.threads = n < 1 ? 1 : n > 16 ? 16 : (int)n;
	}
	if (c->o.stream) {
		c->o.threads = 1; /* each row out as soon as it is in */
	}
	return TF_OK;
}

/* Is name in a comma-separated list? */
static int
in_list(const char *list, const char *name)
{
	if (list == NULL) {
		return 0;
	}
	size_t n = strlen(name);
	const char *p = list;
	for (;;) {
		const char *e = strchr(p, ',');
		size_t k = e ? (size_t)(e - p) : strlen(p);
		if (k == n && memcmp(p, name, n) == 0) {
			return 1;
		}
		if (e == NULL) {
			return 0;
		}
		p = e + 1;
	}
}

static int
find_col(const struct tf_csv *c, const char *name, size_t n)
{
	for (size_t i = 0; i < c->ncols; i++) {
		if (strlen(c->cols[i].name) == n &&
		    memcmp(c->cols[i].name, name, n) == 0) {
			return (int)i;
		}
	}
	return -1;
}

/* Every name in a list must be a column. */
static int
check_list(struct tf_csv *c, const char *list, const char *what)
{
	if (list == NULL) {
		return TF_OK;
	}
	const char *p = list;
	for (;;) {
		const char *e = strchr(p, ',');
		size_t k = e ? (size_t)(e - p) : strlen(p);
		if (find_col(c, p, k) < 0) {
			return tfi_set_error(c, TF_EINVAL,
			                     "%s: no column named '%.*s'", what,
			                     (int)k, p);
		}
		if (e == NULL) {
			return TF_OK;
		}
		p = e + 1;
	}
}

/* Set up columns from names (header row or --names: where says which,
 * for messages). */
static int
set_columns(struct tf_csv *c, char **names, size_t n, const char *where)
{
	c->cols = calloc(n ? n : 1, sizeof *c->cols);
	if (c->cols == NULL) {
		return tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	c->ncols = n;
	for (size_t i = 0; i < n; i++) {
		c->cols[i].name = names[i];
		names[i] = NULL;
		c->cols[i].pack = -1;
		c->cols[i].inf_int = c->cols[i].inf_num = 1;
		c->cols[i].st.min = INFINITY;
		c->cols[i].st.max = -INFINITY;
		if (c->cols[i].name[0] == '\0') {
			/* it would become a feature named "" */
			return tfi_set_error(
			    c, TF_EFORMAT,
			    "%s: column %zu has no name (--names "
			    "names every column)",
			    where, i + 1);
		}
		for (size_t j = 0; j < i; j++) {
			if (strcmp(c->cols[j].name, c->cols[i].name) == 0) {
				return tfi_set_error(
				    c, TF_EFORMAT,
				    "%s: column name '%s' appears twice "
				    "(columns %zu and %zu)",
				    where, c->cols[i].name, j + 1, i + 1);
			}
		}
	}
	if (check_list(c, c->o.columns, "--columns") ||
	    check_list(c, c->o.drop, "--drop") ||
	    check_list(c, c->o.sequence, "--sequence")) {
		return TF_EINVAL;
	}
	/* Label column. */
	c->label_col = -1;
	if (!c->o.no_label) {
		if (c->o.label == NULL) {
			c->label_col = (int)n - 1;
		} else {
			c->label_col =
			    find_col(c, c->o.label, strlen(c->o.label));
			int64_t idx;
			if (c->label_col < 0 &&
			    tf_parse_int64(c->o.label, strlen(c->o.label),
			                   &idx) == 0 &&
			    idx >= 1 && (uint64_t)idx <= n) {
				c->label_col = (int)idx - 1;
			}
			if (c->label_col < 0) {
				return tfi_set_error(c, TF_EINVAL,
				                     "--label: no column '%s'",
				                     c->o.label);
			}
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct col *k = &c->cols[i];
		k->seq = in_list(c->o.sequence, k->name);
		if ((int)i == c->label_col && k->seq) {
			return tfi_set_error(c, TF_EINVAL,
			                     "--sequence: '%s' is the label",
			                     k->name);
		}
		if ((int)i == c->label_col && c->o.hash_features &&
		    (strcmp(k->name, "ids") == 0 ||
		     strcmp(k->name, "values") == 0)) {
			return tfi_set_error(c, TF_EINVAL,
			                     "the label '%s' is taken by the "
			                     "hashed features (--label, or "
			                     "--names)",
			                     k->name);
		}
		if ((int)i == c->label_col) {
			k->role = ROLE_LABEL;
		} else if ((c->o.columns && !in_list(c->o.columns, k->name)) ||
		           in_list(c->o.drop, k->name)) {
			k->role = ROLE_DROP;
		}
	}
	/* Given types. */
	const char *p = c->o.types;
	while (p != NULL && *p != '\0') {
		const char *e = strchr(p, ',');
		size_t k = e ? (size_t)(e - p) : strlen(p);
		const char *colon = memchr(p, ':', k);
		if (colon == NULL) {
			return tfi_set_error(c, TF_EINVAL,
			                     "--types: expected NAME:TYPE, got "
			                     "'%.*s'",
			                     (int)k, p);
		}
		int ci = find_col(c, p, (size_t)(colon - p));
		char tname[16] = "";
		size_t tl = k - (size_t)(colon - p) - 1;
		if (tl < sizeof tname) {
			memcpy(tname, colon + 1, tl);
			tname[tl] = '\0';
		}
		int t = tf_coltype_parse(tname);
		if (ci < 0) {
			return tfi_set_error(c, TF_EINVAL,
			                     "--types: no column named '%.*s'",
			                     (int)(colon - p), p);
		}
		if (t < 0) {
			return tfi_set_error(c, TF_EINVAL,
			                     "--types: unknown type '%.*s' "
			                     "(int64, float or bytes)",
			                     (int)tl, colon + 1);
		}
		c->cols[ci].type = t;
		c->cols[ci].given = t != TF_COL_AUTO;
		p = e ? e + 1 : NULL;
	}
	if (c->label_col >= 0 && c->o.label_type != TF_COL_AUTO) {
		c->cols[c->label_col].type = c->o.label_type;
		c->cols[c->label_col].given = 1;
	}
	return TF_OK;
}

static int make_prefixes(struct tf_csv *c);

static int
outfeat_cmp(const void *a, const void *b)
{
	return strcmp(((const struct outfeat *)a)->name,
	              ((const struct outfeat *)b)->name);
}

/* Resolve types from inference and fix the output features. */
static int
make_plan(struct tf_csv *c)
{
	c->outs = calloc(c->ncols + 1, sizeof *c->outs);
	if (c->outs == NULL) {
		return tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	c->npack = 0;
	int have_pack = 0;
	for (size_t i = 0; i < c->ncols; i++) {
		struct col *k = &c->cols[i];
		if (k->role == ROLE_DROP) {
			continue;
		}
		if (!k->given) {
			k->type = k->inf_seen == 0 ? TF_COL_FLOAT
			          : k->inf_int     ? TF_COL_INT64
			          : k->inf_num     ? TF_COL_FLOAT
			                           : TF_COL_BYTES;
			if (k->role == ROLE_FEATURE && c->o.numeric_as_float &&
			    k->type == TF_COL_INT64 && !k->seq) {
				k->type = TF_COL_FLOAT;
			}
		}
		c->has_seq |= k->seq;
		if (k->role == ROLE_FEATURE && c->o.pack != NULL &&
		    k->type != TF_COL_BYTES && !k->seq) {
			k->pack = (int)c->npack++;
			if (!have_pack) {
				c->outs[c->nouts].name = c->o.pack;
				c->outs[c->nouts++].col = -1;
				have_pack = 1;
			}
			continue;
		}
		c->outs[c->nouts].name = k->name;
		c->outs[c->nouts++].col = (int)i;
	}
	qsort(c->outs, c->nouts, sizeof *c->outs, outfeat_cmp);
	for (size_t i = 1; i < c->nouts; i++) {
		if (strcmp(c->outs[i - 1].name, c->outs[i].name) == 0) {
			return tfi_set_error(c, TF_EINVAL,
			                     "feature name '%s' used twice "
			                     "(--pack-features clashes with a "
			                     "column)",
			                     c->outs[i].name);
		}
	}
	if (c->nouts == 0) {
		return tfi_set_error(c, TF_EINVAL, "no columns left to write");
	}
	c->planned = 1;
	return make_prefixes(c);
}

/* ---- header and inference (main thread, serial) ------------------------- */

struct fields {
	char **v;
	size_t n, cap;
	int done;
	uint64_t rows;
	struct tf_csv *c;
	size_t nf; /* fields in the current row (inference) */
	size_t want;
};

static void
hdr_field(void *s, size_t len, void *data)
{
	struct fields *f = data;
	if (f->done) {
		return;
	}
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 64;
		char **v = realloc(f->v, cap * sizeof *v);
		if (v == NULL) {
			return;
		}
		f->v = v;
		f->cap = cap;
	}
	char *p = malloc(len + 1);
	if (p == NULL) {
		return;
	}
	if (len > 0) {
		memcpy(p, s, len);
	}
	p[len] = '\0';
	f->v[f->n++] = p;
}

static void
hdr_row(int ch, void *data)
{
	(void)ch;
	struct fields *f = data;
	if (f->n > 0) {
		f->done = 1;
	}
}

static void
free_fields(struct fields *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i]);
	}
	free(f->v);
	memset(f, 0, sizeof *f);
}

/* The next step of a sequence cell at *p (before end): its text; runs
 * of the delimiter are one.  0 when there is none. */
static int
next_step(const char **p, const char *end, char delim, const char **t,
          size_t *n)
{
	const char *q = *p;
	while (q < end && *q == delim) {
		q++;
	}
	if (q == end) {
		*p = q;
		return 0;
	}
	const char *e = memchr(q, delim, (size_t)(end - q));
	e = e ? e : end;
	*t = q;
	*n = (size_t)(e - q);
	*p = e;
	return 1;
}

static void infer_value(struct col *k, const char *s, size_t len);

static void
inf_field(void *s, size_t len, void *data)
{
	struct fields *f = data;
	struct tf_csv *c = f->c;
	size_t i = f->nf++;
	if (f->done || i >= c->ncols || s == NULL || len == 0) {
		return;
	}
	struct col *k = &c->cols[i];
	const char *p = s, *end = p + len, *t;
	size_t tl;
	if (!k->seq) {
		infer_value(k, s, len);
		return;
	}
	/* a sequence's type is its steps' */
	while (next_step(&p, end, c->o.seq_delimiter, &t, &tl)) {
		infer_value(k, t, tl);
	}
}

/* Column k's type with value s of n bytes seen. */
static void
infer_value(struct col *k, const char *s, size_t len)
{
	float fv;
	int64_t iv;
	k->inf_seen++;
	if (k->inf_int && tf_parse_int64(s, len, &iv) != 0) {
		k->inf_int = 0;
	}
	if (k->inf_num && !k->inf_int && tf_parse_float(s, len, &fv) != 0) {
		k->inf_num = 0;
	}
}

static void
inf_row(int ch, void *data)
{
	(void)ch;
	struct fields *f = data;
	if (f->nf > 0 && ++f->rows >= f->want && f->want > 0) {
		f->done = 1;
	}
	f->nf = 0;
}

/* ---- reading a stream into a growable buffer --------------------------- */

struct pending {
	char *data;
	size_t len, cap;
	int eof;
};

static int
pend_read(struct tf_csv *c, struct tf_input *in, struct pending *pb,
          size_t want)
{
	if (pb->eof || want == 0) {
		return TF_OK;
	}
	/* Read up to want bytes into the room there is.  The buffer starts
	 * small (most streams are) and doubles when the room is less than
	 * half of it and than want: growing copies what it holds. */
	if (pb->cap - pb->len < want && pb->cap - pb->len < pb->cap / 2 + 1) {
		size_t cap = pb->cap ? pb->cap : 65536;
		while (cap - pb->len < want && cap - pb->len < cap / 2 + 1) {
			cap *= 2;
		}
		char *d = realloc(pb->data, cap);
		if (d == NULL) {
			return tfi_set_error(c, TF_ENOMEM, "out of memory");
		}
		pb->data = d;
		pb->cap = cap;
	}
	if (want > pb->cap - pb->len) {
		want = pb->cap - pb->len;
	}
	size_t got;
	if (tf_input_read(in, pb->data + pb->len, want, &got) != TF_OK) {
		return tfi_set_error(c, tf_errcode(in), "%s", tf_errmsg(in));
	}
	if (got == 0) {
		pb->eof = 1;
	}
	pb->len += got;
	c->bytes_in += got;
	return TF_OK;
}

static uint64_t
count_newlines(const char *p, size_t n)
{
	uint64_t k = 0;
	const char *end = p + n;
	while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		k++;
		p++;
	}
	return k;
}

/*
 * The first row of pb: parse byte by byte until libcsv ends it.  With
 * consume, drop its bytes from pb and add the newlines it held to *line.
 * TF_EOF for an empty stream.
 */
static int
first_row(struct tf_csv *c, struct tf_input *in, struct pending *pb,
          struct fields *hf, int consume, uint64_t *line)
{
	struct csv_parser p;
	csv_init(&p, 0);
	csv_set_delim(&p, (unsigned char)c->o.delimiter);
	size_t used = 0;
	while (!hf->done) {
		if (used == pb->len) {
			if (pb->eof || used > MAX_ROW) {
				break;
			}
			if (pend_read(c, in, pb, 1 << 16) != TF_OK) {
				csv_free(&p);
				return c->err.code;
			}
			continue;
		}
		if (csv_parse(&p, pb->data + used, 1, hdr_field, hdr_row, hf) !=
		    1) {
			break;
		}
		used++;
	}
	if (!hf->done) {
		csv_fini(&p, hdr_field, hdr_row, hf);
	}
	csv_free(&p);
	if (hf->n == 0) {
		return TF_EOF;
	}
	if (consume) {
		*line += count_newlines(pb->data, used);
		memmove(pb->data, pb->data + used, pb->len - used);
		pb->len -= used;
	}
	return TF_OK;
}

/* Names from --names, or col1..colN for the first row's width. */
static int
names_from_option(struct tf_csv *c, struct fields *hf, size_t width)
{
	if (c->o.names != NULL) {
		const char *p = c->o.names;
		for (;;) {
			const char *e = strchr(p, ',');
			size_t k = e ? (size_t)(e - p) : strlen(p);
			hdr_field((void *)p, k, hf);
			if (e == NULL) {
				break;
			}
			p = e + 1;
		}
	} else {
		for (size_t i = 0; i < width; i++) {
			char b[32];
			int k = snprintf(b, sizeof b, "col%zu", i + 1);
			hdr_field(b, (size_t)k, hf);
		}
	}
	if (hf->n == 0) {
		return tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	hf->done = 1;
	return TF_OK;
}

/* ---- workers ------------------------------------------------------------ */

static void
row_reset(struct worker *w)
{
	w->nfields = 0;
	w->row_bad = 0;
	w->row.chars.len = 0;
	memset(w->row.present, 0, w->c->ncols);
}

/* Why a parsed value that is not finite is refused (the message is
 * static: the caller prints it). */
static const char *
nonfinite_why(const char *s, size_t len, float v)
{
	static _Thread_local char why[120];
	int digits = 0;
	for (size_t j = 0; j < len && !digits; j++) {
		digits = s[j] >= '0' && s[j] <= '9';
	}
	snprintf(why, sizeof why,
	         "'%.*s' is %s (--allow-nonfinite keeps such values)",
	         (int)(len > 40 ? 40 : len), s,
	         isnan(v) ? "not a number (NaN)"
	         : digits ? "out of the range of a 32-bit float"
	                  : "infinite");
	return why;
}

static void row_error(struct worker *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
row_error(struct worker *w, const char *fmt, ...)
{
	if (w->row_bad) {
		return;
	}
	w->row_bad = 1;
	int k = snprintf(w->msg, sizeof w->msg, "%s:%llu: ", w->ch->stream,
	                 (unsigned long long)w->row_line);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->msg + k, sizeof w->msg - (size_t)k, fmt, ap);
	va_end(ap);
}

/* Note an int64 label value in the column's class list. */
static void
add_class(struct colstats *st, int64_t v)
{
	for (int i = 0; i < st->nseen; i++) {
		if (st->seen[i] == v) {
			return;
		}
	}
	if (st->nseen < 16) {
		st->seen[st->nseen++] = v;
	}
	char b[24];
	int n = snprintf(b, sizeof b, "%lld", (long long)v);
	strset_add(&st->vocab, b, (size_t)n);
}

static void
stat_num(struct colstats *s, double v)
{
	s->present++;
	if (!isfinite(v)) {
		/* kept (--allow-nonfinite) and counted, but out of the
		 * statistics, so that they and the schema stay finite */
		s->nonfinite++;
		return;
	}
	s->sum += v;
	s->sumsq += v * v;
	if (v < s->min) {
		s->min = v;
	}
	if (v > s->max) {
		s->max = v;
	}
}

static void
w_field(void *sp, size_t len, void *data)
{
	struct worker *w = data;
	const char *s = sp;
	size_t i = w->nfields++;
	if (w->stop || w->row_bad || i >= w->c->ncols) {
		return;
	}
	if (w->ch->has_quotes && s != NULL && len > 0) {
		w->row_newlines += count_newlines(s, len);
	}
	const struct col *k = &w->c->cols[i];
	if (k->role == ROLE_DROP || s == NULL || len == 0) {
		return;
	}
	switch (k->seq ? TF_COL_BYTES : k->type) {
	case TF_COL_FLOAT:
		if (tf_parse_float(s, len, &w->row.f[i]) != 0) {
			row_error(w, "column '%s': '%.*s' is not a number",
			          k->name, (int)(len > 40 ? 40 : len), s);
			return;
		}
		if (!isfinite(w->row.f[i]) && !w->c->o.allow_nonfinite) {
			row_error(w, "column '%s' (field %zu): %s", k->name,
			          i + 1, nonfinite_why(s, len, w->row.f[i]));
			return;
		}
		break;
	case TF_COL_INT64:
		if (tf_parse_int64(s, len, &w->row.i[i]) != 0) {
			row_error(w,
			          "column '%s': '%.*s' is not an integer (the "
			          "type was inferred from the first rows; see "
			          "--types and --infer-rows)",
			          k->name, (int)(len > 40 ? 40 : len), s);
			return;
		}
		break;
	default:
		w->row.boff[i] = w->row.chars.len;
		w->row.blen[i] = len;
		if (tfi_buf_append(&w->row.chars, s, len) != TF_OK) {
			row_error(w, "out of memory");
			return;
		}
	}
	w->row.present[i] = 1;
}

/* The current row's bytes value of column i ("" before any was held). */
static const char *
row_chars(const struct worker *w, size_t i)
{
	return w->row.chars.data
	           ? (const char *)w->row.chars.data + w->row.boff[i]
	           : "";
}

/* The steps of sequence column i in the current row: numbers must be
 * numbers (each step a value of the column's type). */
static void
check_steps(struct worker *w, size_t i)
{
	const struct col *k = &w->c->cols[i];
	const char *p = row_chars(w, i), *end = p + w->row.blen[i], *t;
	size_t n, step = 0;
	while (k->type != TF_COL_BYTES && !w->row_bad &&
	       next_step(&p, end, w->c->o.seq_delimiter, &t, &n)) {
		float f;
		int64_t v;
		step++;
		if (k->type == TF_COL_FLOAT
		        ? tf_parse_float(t, n, &f) != 0 ||
		              (!isfinite(f) && !w->c->o.allow_nonfinite)
		        : tf_parse_int64(t, n, &v) != 0) {
			row_error(
			    w,
			    "column '%s', step %zu: '%.*s' is not %s (the "
			    "type was inferred from the first rows; see "
			    "--types)",
			    k->name, step, (int)(n > 40 ? 40 : n), t,
			    k->type == TF_COL_FLOAT ? "a finite number"
			                            : "an integer");
		}
	}
}

/* Fill a missing value by the empty-field policy; 0 if the row is bad. */
static int
fill_missing(struct worker *w, size_t i)
{
	const struct tf_csv *c = w->c;
	const struct col *k = &c->cols[i];
	if (k->role == ROLE_LABEL) {
		row_error(w, "the label '%s' is empty", k->name);
		return 0;
	}
	if (c->o.empty == TF_EMPTY_ERROR) {
		row_error(w, "column '%s' is empty", k->name);
		return 0;
	}
	if (c->o.empty == TF_EMPTY_ZERO) {
		w->row.f[i] = 0;
		w->row.i[i] = 0;
		w->row.blen[i] = 0;
		w->row.boff[i] = 0;
		w->row.present[i] = 1;
	} else if (k->pack >= 0) {
		w->row.packed[k->pack] = NAN;
	}
	return 1;
}

/* Update a column's statistics with the current row's value. */
static void
col_stats(struct worker *w, size_t i)
{
	const struct col *k = &w->c->cols[i];
	struct colstats *st = &w->ch->st[i];
	if (!w->row.present[i]) {
		st->missing++;
		return;
	}
	if (k->seq) {
		/* its longest, and its tokens' vocabulary */
		const char *p = row_chars(w, i), *end = p + w->row.blen[i], *t;
		size_t n;
		uint64_t steps = 0;
		char num[24];
		st->present++;
		while (next_step(&p, end, w->c->o.seq_delimiter, &t, &n)) {
			int64_t v;
			steps++;
			if (k->type == TF_COL_INT64 &&
			    tf_parse_int64(t, n, &v) == 0) {
				/* as a reader prints the int64 */
				int m = snprintf(num, sizeof num, "%lld",
				                 (long long)v);
				strset_add(&st->vocab, num, (size_t)m);
			} else if (k->type != TF_COL_FLOAT) {
				strset_add(&st->vocab, t, n);
			}
		}
		st->max_steps = steps > st->max_steps ? steps : st->max_steps;
		return;
	}
	switch (k->type) {
	case TF_COL_FLOAT:
		stat_num(st, w->row.f[i]);
		break;
	case TF_COL_INT64:
		stat_num(st, (double)w->row.i[i]);
		if (k->role == ROLE_LABEL) {
			add_class(st, w->row.i[i]);
		}
		break;
	default:
		st->present++;
		strset_add(&st->vocab, row_chars(w, i), w->row.blen[i]);
	}
}

static int
make_prefixes(struct tf_csv *c)
{
	for (size_t j = 0; j < c->nouts; j++) {
		struct outfeat *o = &c->outs[j];
		if (o->col >= 0 && c->cols[o->col].type != TF_COL_FLOAT) {
			continue;
		}
		size_t n = o->col < 0 ? 4 * c->npack : 4;
		size_t klen = strlen(o->name);
		o->prefix = malloc(klen + 64);
		if (o->prefix == NULL) {
			return tfi_set_error(c, TF_ENOMEM, "out of memory");
		}
		o->prefix_len = (size_t)(tfi_entry_head(o->prefix, o->name,
		                                        klen, TF_COL_FLOAT, n) -
		                         o->prefix);
	}
	return TF_OK;
}

/* Room for one record of n data bytes at the end of the chunk's output;
 * the data goes at the returned pointer + 12.  NULL when out of memory. */
static uint8_t *
chunk_record(struct chunk *ch, size_t n)
{
	if (tfi_buf_reserve(&ch->out, n + TF_RECORD_OVERHEAD) != TF_OK) {
		return NULL;
	}
	if (ch->nrec == ch->ends_cap) {
		size_t cap = ch->ends_cap ? ch->ends_cap * 2 : 4096;
		size_t *e = realloc(ch->ends, cap * sizeof *e);
		if (e == NULL) {
			return NULL;
		}
		ch->ends = e;
		ch->ends_cap = cap;
	}
	return ch->out.data + ch->out.len;
}

/* Frame the record whose data was written in place, and count it. */
static void
chunk_commit(struct chunk *ch, uint8_t *rec, size_t n)
{
	tfi_record_frame_inplace(rec, n);
	ch->out.len += n + TF_RECORD_OVERHEAD;
	ch->ends[ch->nrec++] = ch->out.len;
	ch->rows++;
}

static int emit_example(struct worker *w);

/* A sequence cell's steps as a list feature of the example. */
static int
add_steps(struct worker *w, size_t i)
{
	const struct col *k = &w->c->cols[i];
	const char *start = row_chars(w, i), *end = start + w->row.blen[i];
	const char *p = start, *t;
	size_t n, m = 0;
	while (next_step(&p, end, w->c->o.seq_delimiter, &t, &n)) {
		m++;
	}
	/* room for m values of the widest kind */
	void *mem = malloc((m + 1) * sizeof(struct tf_bytes));
	if (mem == NULL) {
		return TF_ENOMEM;
	}
	float *fv = mem;
	int64_t *iv = mem;
	struct tf_bytes *bv = mem;
	p = start;
	for (size_t j = 0; next_step(&p, end, w->c->o.seq_delimiter, &t, &n);
	     j++) {
		if (k->type == TF_COL_FLOAT) {
			tf_parse_float(t, n, &fv[j]);
		} else if (k->type == TF_COL_INT64) {
			tf_parse_int64(t, n, &iv[j]);
		} else {
			bv[j] = (struct tf_bytes){(const uint8_t *)t, n};
		}
	}
	int rc = k->type == TF_COL_FLOAT
	             ? tf_example_add_floats(w->ex, k->name, fv, m)
	         : k->type == TF_COL_INT64
	             ? tf_example_add_int64s(w->ex, k->name, iv, m)
	             : tf_example_add_bytes(w->ex, k->name, bv, m);
	free(mem);
	return rc;
}

/* Cell i of the row, its one value, as a feature of the worker's
 * Example. */
static int
add_cell(struct worker *w, size_t i)
{
	const struct col *k = &w->c->cols[i];
	struct tf_bytes b = {(const uint8_t *)row_chars(w, i), w->row.blen[i]};
	return k->type == TF_COL_FLOAT
	           ? tf_example_add_floats(w->ex, k->name, &w->row.f[i], 1)
	       : k->type == TF_COL_INT64
	           ? tf_example_add_int64s(w->ex, k->name, &w->row.i[i], 1)
	           : tf_example_add_bytes(w->ex, k->name, &b, 1);
}

/* The current row through a tf_example: a row with sequences. */
static int
emit_row_example(struct worker *w)
{
	const struct tf_csv *c = w->c;
	tf_example_clear(w->ex);
	int rc = TF_OK;
	for (size_t j = 0; j < c->nouts && rc == TF_OK; j++) {
		const struct outfeat *o = &c->outs[j];
		if (o->col < 0) {
			rc = tf_example_add_floats(w->ex, o->name,
			                           w->row.packed, c->npack);
			continue;
		}
		size_t i = (size_t)o->col;
		const struct col *k = &c->cols[i];
		if (!w->row.present[i]) {
			continue;
		}
		rc = k->seq ? add_steps(w, i) : add_cell(w, i);
	}
	return rc == TF_OK ? emit_example(w) : TF_ENOMEM;
}

/* Id k of the row (its uint64 bits kept as int64's, as TensorFlow keeps
 * uint64 ids) and its value, in the worker's arrays (room for k made),
 * counted in the chunk's largest id and its distinct ids. */
static void
put_id(struct worker *w, size_t k, uint64_t id, float v)
{
	struct chunk *ch = w->ch;
	w->ids[k] = (int64_t)id;
	w->vals[k] = v;
	if (id > ch->max_index) {
		ch->max_index = id;
	}
	if (ch->ids_lost) {
		return;
	}
	if (ch->nids == ch->ids_cap) {
		size_t cap = ch->ids_cap ? ch->ids_cap * 2 : 4096;
		uint64_t *p = realloc(ch->ids, cap * sizeof *p);
		if (p == NULL) {
			ch->ids_lost = 1;
			return;
		}
		ch->ids = p;
		ch->ids_cap = cap;
	}
	ch->ids[ch->nids++] = id;
}

/* The row's n ids and values as the worker's Example (cleared first),
 * counted in the chunk's most ids a row; the label comes after. */
static int
sparse_example(struct worker *w, size_t n)
{
	if (n > w->ch->max_ids) {
		w->ch->max_ids = n;
	}
	tf_example_clear(w->ex);
	int rc = tf_example_add_int64s(w->ex, "ids", w->ids, n);
	return rc ? rc : tf_example_add_floats(w->ex, "values", w->vals, n);
}

/* A hashed feature's id (the hashing trick): FNV-1a of the column's name
 * and, for a cell that is not a number, '=' and the cell, mixed by
 * splitmix64's finaliser; modulo the buckets when there are some. */
static uint64_t
feature_id(const struct tf_csv *c, const char *name, const char *v, size_t n)
{
	uint64_t h = tfi_fnv1a(TFI_FNV1A_BASIS, name, strlen(name));
	if (v != NULL) {
		h = tfi_fnv1a(tfi_fnv1a(h, "=", 1), v, n);
	}
	h = tfi_mix64(h);
	return c->o.hash_buckets ? h % c->o.hash_buckets : h;
}

/* The current row as hashed features: ids, values and the label. */
static int
emit_hashed_row(struct worker *w)
{
	const struct tf_csv *c = w->c;
	if (w->ids_cap < c->ncols) {
		int64_t *a = realloc(w->ids, c->ncols * sizeof *a);
		float *b = a ? realloc(w->vals, c->ncols * sizeof *b) : NULL;
		if (a != NULL) {
			w->ids = a;
		}
		if (b == NULL) {
			return TF_ENOMEM;
		}
		w->vals = b;
		w->ids_cap = c->ncols;
	}
	size_t k = 0;
	for (size_t i = 0; i < c->ncols; i++) {
		const struct col *col = &c->cols[i];
		if (col->role != ROLE_FEATURE || !w->row.present[i]) {
			continue;
		}
		float v = col->type == TF_COL_FLOAT   ? w->row.f[i]
		          : col->type == TF_COL_INT64 ? (float)w->row.i[i]
		                                      : 1.0f;
		if (v == 0.0f) {
			continue; /* sparse: a zero is no feature */
		}
		put_id(w, k++,
		       feature_id(c, col->name,
		                  col->type == TF_COL_BYTES ? row_chars(w, i)
		                                            : NULL,
		                  w->row.blen[i]),
		       v);
	}
	int rc = sparse_example(w, k);
	if (rc == TF_OK && c->label_col >= 0 && w->row.present[c->label_col]) {
		rc = add_cell(w, (size_t)c->label_col);
	}
	return rc == TF_OK ? emit_example(w) : TF_ENOMEM;
}

/* Encode the current row as a framed Example onto the chunk's output. */
static int
emit_row(struct worker *w)
{
	const struct tf_csv *c = w->c;
	struct chunk *ch = w->ch;
	if (c->o.hash_features) {
		return emit_hashed_row(w);
	}
	if (c->has_seq) {
		return emit_row_example(w);
	}
	size_t total = 0;
	for (size_t j = 0; j < c->nouts; j++) {
		const struct outfeat *o = &c->outs[j];
		size_t es, fs, ls;
		if (o->col < 0) {
			total += o->prefix_len + 4 * c->npack;
			continue;
		}
		size_t i = (size_t)o->col;
		if (!w->row.present[i]) {
			continue;
		}
		const struct col *k = &c->cols[i];
		if (k->type == TF_COL_FLOAT) {
			total += o->prefix_len + 4;
		} else {
			size_t pl = k->type == TF_COL_INT64
			                ? tfi_varint_size((uint64_t)w->row.i[i])
			                : w->row.blen[i];
			total += tfi_entry_bytes(strlen(k->name), k->type, pl,
			                         &es, &fs, &ls);
		}
	}
	size_t n = 1 + tfi_varint_size(total) + total;
	uint8_t *rec = chunk_record(ch, n);
	if (rec == NULL) {
		return TF_ENOMEM;
	}
	uint8_t *p = rec + 12;
	*p++ = 0x0a;
	p = tfi_put_varint(p, total);
	for (size_t j = 0; j < c->nouts; j++) {
		const struct outfeat *o = &c->outs[j];
		if (o->col < 0) {
			memcpy(p, o->prefix, o->prefix_len);
			p = tfi_put_le_floats(p + o->prefix_len, w->row.packed,
			                      c->npack);
			continue;
		}
		size_t i = (size_t)o->col;
		if (!w->row.present[i]) {
			continue;
		}
		const struct col *k = &c->cols[i];
		if (k->type == TF_COL_FLOAT) {
			memcpy(p, o->prefix, o->prefix_len);
			p = tfi_put_le_floats(p + o->prefix_len, &w->row.f[i],
			                      1);
		} else if (k->type == TF_COL_INT64) {
			uint64_t v = (uint64_t)w->row.i[i];
			p = tfi_entry_head(p, k->name, strlen(k->name),
			                   TF_COL_INT64, tfi_varint_size(v));
			p = tfi_put_varint(p, v);
		} else {
			size_t bl = w->row.blen[i];
			p = tfi_entry_head(p, k->name, strlen(k->name),
			                   TF_COL_BYTES, bl);
			memcpy(p, row_chars(w, i), bl);
			p += bl;
		}
	}
	if ((size_t)(p - rec - 12) != n) {
		return TF_EINTERNAL;
	}
	chunk_commit(ch, rec, n);
	return TF_OK;
}

/* Frame the worker's tf_example onto the chunk's output (libsvm). */
static int
emit_example(struct worker *w)
{
	size_t n = tf_example_encoded_size(w->ex);
	uint8_t *rec = chunk_record(w->ch, n);
	if (rec == NULL) {
		return TF_ENOMEM;
	}
	tf_example_encode(w->ex, rec + 12);
	chunk_commit(w->ch, rec, n);
	return TF_OK;
}

static void
row_failed(struct worker *w)
{
	struct chunk *ch = w->ch;
	if (!w->c->o.skip_bad) {
		ch->err = TF_EFORMAT;
		snprintf(ch->msg, sizeof ch->msg, "%s", w->msg);
		w->stop = 1;
		return;
	}
	ch->skipped++;
	if (ch->skipped <= SKIP_LOG_MAX) {
		tfi_buf_append(&ch->skiplog, w->msg, strlen(w->msg));
		tfi_buf_append(&ch->skiplog, "\n", 1);
	}
}

static void
w_row(int term, void *data)
{
	struct worker *w = data;
	const struct tf_csv *c = w->c;
	if (w->stop) {
		return;
	}
	if (w->nfields == 0) {
		goto next; /* a blank line */
	}
	if (!w->row_bad && w->nfields != c->ncols) {
		row_error(w, "expected %zu fields, found %zu", c->ncols,
		          w->nfields);
	}
	for (size_t i = 0; i < c->ncols && !w->row_bad; i++) {
		const struct col *k = &c->cols[i];
		if (k->role == ROLE_DROP) {
			continue;
		}
		if (k->seq) {
			if (!w->row.present[i]) {
				/* an empty cell: no steps */
				w->row.present[i] = 1;
				w->row.blen[i] = 0;
				w->row.boff[i] = 0;
			}
			check_steps(w, i);
			continue;
		}
		if (!w->row.present[i] && !fill_missing(w, i)) {
			break;
		}
		if (k->pack >= 0 && w->row.present[i]) {
			w->row.packed[k->pack] = k->type == TF_COL_INT64
			                             ? (float)w->row.i[i]
			                             : w->row.f[i];
		}
	}
	if (w->row_bad) {
		row_failed(w);
		goto next;
	}
	for (size_t i = 0; i < c->ncols; i++) {
		if (c->cols[i].role != ROLE_DROP) {
			col_stats(w, i);
		}
	}
	int rc = emit_row(w);
	if (rc != TF_OK) {
		w->ch->err = rc;
		snprintf(w->ch->msg, sizeof w->ch->msg, "%s:%llu: %s",
		         w->ch->stream, (unsigned long long)w->row_line,
		         tf_strerror(rc));
		w->stop = 1;
	}
next:
	w->line += w->row_newlines + (term == '\n');
	w->row_newlines = 0;
	w->row_line = w->line;
	row_reset(w);
}

/* libsvm: "label idx:val idx:val ... [# comment]" per line. */

/* A libsvm index: decimal digits, 0 to 2^64-1 (ids as TensorFlow's
 * uint64 features); *bad is set for digits that are not one. */
static int
parse_index(const char *s, size_t n, uint64_t *out, int *bad)
{
	uint64_t v = 0;
	if (n == 0) {
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(unsigned char)s[i] - '0';
		if (d > 9 || v > (UINT64_MAX - d) / 10) {
			*bad = d <= 9 || s[0] == '-';
			return -1;
		}
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

static void
libsvm_line(struct worker *w, const char *s, size_t n)
{
	const struct tf_csv *c = w->c;
	const char *p = s, *end = s + n;
	const char *hash = memchr(s, '#', n);
	if (hash != NULL) {
		end = hash;
	}
	while (end > p &&
	       (end[-1] == '\r' || isspace((unsigned char)end[-1]))) {
		end--;
	}
	while (p < end && isspace((unsigned char)*p)) {
		p++;
	}
	if (p == end) {
		return;
	}
	const char *t = p;
	while (p < end && !isspace((unsigned char)*p)) {
		p++;
	}
	size_t tl = (size_t)(p - t);
	float lf = 0;
	int64_t li = 0;
	int ltype = c->cols[0].type;
	if ((ltype == TF_COL_INT64 && tf_parse_int64(t, tl, &li) != 0) ||
	    (ltype != TF_COL_INT64 && tf_parse_float(t, tl, &lf) != 0)) {
		/* a number that is no integer: regression data */
		int num =
		    ltype == TF_COL_INT64 && tf_parse_float(t, tl, &lf) == 0;
		row_error(w, "label '%.*s' is not %s%s",
		          (int)(tl > 40 ? 40 : tl), t,
		          ltype == TF_COL_INT64 ? "an integer" : "a number",
		          num ? " (the labels of regression data: --label-type "
		                "float)"
		              : "");
		row_failed(w);
		return;
	}
	if (ltype != TF_COL_INT64 && !isfinite(lf) && !c->o.allow_nonfinite) {
		row_error(w, "label: %s", nonfinite_why(t, tl, lf));
		row_failed(w);
		return;
	}
	size_t k = 0;
	int bad = 0;
	while (p < end) {
		while (p < end && isspace((unsigned char)*p)) {
			p++;
		}
		if (p == end) {
			break;
		}
		t = p;
		while (p < end && !isspace((unsigned char)*p)) {
			p++;
		}
		const char *colon = memchr(t, ':', (size_t)(p - t));
		uint64_t idx;
		float v;
		if (colon == NULL ||
		    parse_index(t, (size_t)(colon - t), &idx, &bad) ||
		    tf_parse_float(colon + 1, (size_t)(p - colon - 1), &v)) {
			if (colon != NULL && colon - t == 3 &&
			    memcmp(t, "qid", 3) == 0) {
				continue; /* ranking query id: ignored */
			}
			row_error(w,
			          bad ? "index '%.*s' is not an integer from 0 "
			                "to 2^64-1"
			              : "expected INDEX:VALUE, found '%.*s'",
			          (int)(p - t > 40 ? 40 : p - t), t);
			row_failed(w);
			return;
		}
		if (!isfinite(v) && !c->o.allow_nonfinite) {
			row_error(w, "index %llu: %s", (unsigned long long)idx,
			          nonfinite_why(colon + 1,
			                        (size_t)(p - colon - 1), v));
			row_failed(w);
			return;
		}
		if (k == w->ids_cap) {
			size_t cap = w->ids_cap ? w->ids_cap * 2 : 256;
			int64_t *a = realloc(w->ids, cap * sizeof *a);
			float *b = a ? realloc(w->vals, cap * sizeof *b) : NULL;
			if (a != NULL) {
				w->ids = a;
			}
			if (b == NULL) {
				row_error(w, "out of memory");
				row_failed(w);
				return;
			}
			w->vals = b;
			w->ids_cap = cap;
		}
		put_id(w, k++, idx, v);
	}
	const char *label = c->cols[0].name;
	int rc = sparse_example(w, k);
	struct colstats *st = &w->ch->st[0];
	if (rc == TF_OK && ltype == TF_COL_INT64) {
		add_class(st, li);
		stat_num(st, (double)li);
		rc = tf_example_add_int64s(w->ex, label, &li, 1);
	} else if (rc == TF_OK) {
		stat_num(st, lf);
		rc = tf_example_add_floats(w->ex, label, &lf, 1);
	}
	if (rc == TF_OK) {
		rc = emit_example(w);
	}
	if (rc != TF_OK) {
		/* Not the data's fault (out of memory): stop. */
		w->ch->err = rc;
		snprintf(w->ch->msg, sizeof w->ch->msg, "%s:%llu: %s",
		         w->ch->stream, (unsigned long long)w->row_line,
		         tf_errmsg(w->ex));
		w->stop = 1;
	}
}

static int
is_space(char c, char delim)
{
	return (c == ' ' || c == '\t') && c != delim;
}

/* One row of quote-free text (no terminator inside). */
static void
split_row(const char *p, const char *end, char delim, int term,
          void (*field)(void *, size_t, void *), void (*row)(int, void *),
          void *data)
{
	const char *q = p;
	while (q < end && is_space(*q, delim)) {
		q++;
	}
	if (q == end) {
		if (term >= 0) {
			row(term, data); /* a blank line, as CSV_REPALL_NL */
		}
		return;
	}
	for (;;) {
		const char *e = memchr(p, delim, (size_t)(end - p));
		const char *fe = e ? e : end;
		const char *fs = p;
		while (fs < fe && is_space(*fs, delim)) {
			fs++;
		}
		const char *t = fe;
		while (t > fs && is_space(t[-1], delim)) {
			t--;
		}
		field(t > fs ? (void *)fs : NULL, (size_t)(t - fs), data);
		if (e == NULL) {
			break;
		}
		p = e + 1;
	}
	row(term, data);
}

/*
 * Split text that holds no quote character into fields and rows, calling
 * the callbacks exactly as libcsv does with CSV_REPALL_NL and
 * CSV_EMPTY_IS_NULL (spaces and tabs around a field dropped, an empty
 * field as NULL, "\r" and "\n" both ending a row, the last row ended by
 * -1).  The common unquoted case runs several times faster this way; the
 * tests check that both agree.
 */
void
tfi_csv_split_plain(const char *p, size_t n, char delim,
                    void (*field)(void *, size_t, void *),
                    void (*row)(int, void *), void *data)
{
	const char *end = p + n;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *cr;
		while ((cr = memchr(p, '\r', (size_t)(le - p))) != NULL) {
			split_row(p, cr, delim, '\r', field, row, data);
			p = cr + 1;
		}
		split_row(p, le, delim, nl ? '\n' : -1, field, row, data);
		p = nl ? nl + 1 : end;
	}
}

/* A chunk's ids sorted (least significant byte first, a pass for each
 * byte in which they differ), each kept once. */
static void
sort_ids(struct chunk *ch)
{
	size_t n = ch->nids;
	if (ch->ids_lost || n == 0) {
		return;
	}
	uint64_t *a = ch->ids, *b = realloc(ch->ids_tmp, n * sizeof *b);
	if (b == NULL) {
		ch->ids_lost = 1;
		return;
	}
	ch->ids_tmp = b;
	uint64_t any = 0, all = ~(uint64_t)0;
	for (size_t i = 0; i < n; i++) {
		any |= a[i];
		all &= a[i];
	}
	for (int shift = 0; shift < 64; shift += 8) {
		if ((((any ^ all) >> shift) & 0xff) == 0) {
			continue; /* the same byte in every id */
		}
		size_t count[257] = {0};
		for (size_t i = 0; i < n; i++) {
			count[((a[i] >> shift) & 0xff) + 1]++;
		}
		for (int d = 0; d < 256; d++) {
			count[d + 1] += count[d];
		}
		for (size_t i = 0; i < n; i++) {
			b[count[(a[i] >> shift) & 0xff]++] = a[i];
		}
		uint64_t *t = a;
		a = b;
		b = t;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k == 0 || a[i] != a[k - 1]) {
			a[k++] = a[i];
		}
	}
	ch->ids = a;
	ch->ids_tmp = b;
	ch->nids = k;
}

static void
process_chunk(struct worker *w, struct chunk *ch)
{
	const struct tf_csv *c = w->c;
	w->ch = ch;
	w->stop = 0;
	w->line = w->row_line = ch->first_line;
	w->row_newlines = 0;
	ch->out.len = 0;
	ch->nrec = 0;
	ch->rows = ch->skipped = 0;
	ch->err = TF_OK;
	ch->msg[0] = '\0';
	ch->skiplog.len = 0;
	ch->max_index = ch->max_ids = 0;
	ch->nids = 0;
	ch->ids_lost = __atomic_load_n(&c->ids_over, __ATOMIC_RELAXED);
	if (ch->ids_lost) { /* (counted no longer) */
		free(ch->ids);
		free(ch->ids_tmp);
		ch->ids = ch->ids_tmp = NULL;
		ch->ids_cap = 0;
	}
	for (size_t i = 0; i < c->ncols; i++) {
		strset_free(&ch->st[i].vocab);
		memset(&ch->st[i], 0, sizeof ch->st[i]);
		ch->st[i].min = INFINITY;
		ch->st[i].max = -INFINITY;
	}
	if (c->o.format == TF_FORMAT_LIBSVM) {
		const char *p = ch->data, *end = ch->data + ch->len;
		while (p < end && !w->stop) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			const char *e = nl ? nl : end;
			w->row_line = w->line;
			w->row_bad = 0;
			libsvm_line(w, p, (size_t)(e - p));
			w->line++;
			p = nl ? nl + 1 : end;
		}
		return;
	}
	row_reset(w);
	if (ch->has_quotes) {
		csv_parse(&w->p, ch->data, ch->len, w_field, w_row, w);
		/* Still inside a quoted field at the end (libcsv's state
		 * FIELD_BEGUN, 2): its quote is never closed, and the rest
		 * of the input went into it. */
		if (w->p.quoted && w->p.pstate == 2 && !w->stop) {
			w->row_bad = 0;
			row_error(w, "a quoted field that starts in this row "
			             "is never closed");
			row_failed(w);
			csv_fini(&w->p, NULL, NULL,
			         NULL); /* the row: dropped */
		} else {
			csv_fini(&w->p, w_field, w_row, w);
		}
	} else {
		tfi_csv_split_plain(ch->data, ch->len, c->o.delimiter, w_field,
		                    w_row, w);
	}
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct tf_csv *c = w->c;
	pthread_mutex_lock(&c->mu);
	for (;;) {
		struct chunk *next = NULL;
		for (size_t i = 0; i < c->nslots; i++) {
			struct chunk *s = &c->slots[i];
			if (s->state == 1 &&
			    (next == NULL || s->seq < next->seq)) {
				next = s;
			}
		}
		if (next == NULL) {
			if (c->shutdown) {
				break;
			}
			pthread_cond_wait(&c->cv, &c->mu);
			continue;
		}
		next->state = 2;
		pthread_mutex_unlock(&c->mu);
		process_chunk(w, next);
		sort_ids(next);
		pthread_mutex_lock(&c->mu);
		next->state = 3;
		pthread_cond_broadcast(&c->cv);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

static int
worker_init(struct tf_csv *c, struct worker *w)
{
	memset(w, 0, sizeof *w);
	w->c = c;
	size_t n = c->ncols ? c->ncols : 1;
	w->ex = tf_example_new();
	w->row.f = calloc(n, sizeof(float));
	w->row.i = calloc(n, sizeof(int64_t));
	w->row.boff = calloc(n, sizeof(size_t));
	w->row.blen = calloc(n, sizeof(size_t));
	w->row.present = calloc(n, 1);
	w->row.packed = calloc(c->npack + 1, sizeof(float));
	if (csv_init(&w->p, CSV_REPALL_NL | CSV_EMPTY_IS_NULL) != 0 || !w->ex ||
	    !w->row.f || !w->row.i || !w->row.boff || !w->row.blen ||
	    !w->row.present || !w->row.packed) {
		return TF_ENOMEM;
	}
	csv_set_delim(&w->p, (unsigned char)c->o.delimiter);
	return TF_OK;
}

static void
worker_fini(struct worker *w)
{
	csv_free(&w->p);
	tf_example_free(w->ex);
	free(w->row.f);
	free(w->row.i);
	free(w->row.boff);
	free(w->row.blen);
	free(w->row.present);
	free(w->row.packed);
	tfi_buf_free(&w->row.chars);
	free(w->ids);
	free(w->vals);
}

/* ---- the pipeline (main thread) ----------------------------------------- */

static void
merge_stats(struct colstats *dst, const struct colstats *src)
{
	dst->present += src->present;
	dst->missing += src->missing;
	dst->nonfinite += src->nonfinite;
	dst->sum += src->sum;
	dst->sumsq += src->sumsq;
	dst->max_steps =
	    src->max_steps > dst->max_steps ? src->max_steps : dst->max_steps;
	if (src->min < dst->min) {
		dst->min = src->min;
	}
	if (src->max > dst->max) {
		dst->max = src->max;
	}
	if (src->vocab.over) {
		dst->vocab.over = 1;
	}
	for (size_t i = 0; i < src->vocab.n && !dst->vocab.over; i++) {
		const char *s = strset_at(&src->vocab, i);
		strset_add(&dst->vocab, s, strlen(s));
	}
}

/* A chunk's distinct ids into the run's: the two increasing lists
 * merged, each id once.  They stop, for good, at an id vocabulary's most
 * or once they are more than a quarter of the largest id yet
 * (c->max_index counts the chunk's already): ids dense in their space
 * have no vocabulary, and are counted no further (nor when memory runs
 * out: the ids then index the table themselves). */
static void
merge_ids(struct tf_csv *c, const struct chunk *ch)
{
	int over = c->ids_over || ch->ids_lost;
	uint64_t *out = NULL;
	size_t want = c->nids + ch->nids;
	if (!over && ch->nids > 0 && want > c->ids_cap) {
		/* the two lists' room, each time it runs out: doubled */
		size_t cap = want > 2 * c->ids_cap ? want : 2 * c->ids_cap;
		free(c->ids_tmp);
		if ((c->ids_tmp = malloc(cap * sizeof *out)) == NULL ||
		    (out = realloc(c->ids, cap * sizeof *out)) == NULL) {
			over = 1;
		} else {
			c->ids = out;
			c->ids_cap = cap;
		}
	}
	if (!over && ch->nids > 0) {
		out = c->ids_tmp;
		size_t i = 0, j = 0, n = 0;
		while (i < c->nids || j < ch->nids) {
			uint64_t a = i < c->nids ? c->ids[i] : UINT64_MAX;
			uint64_t b = j < ch->nids ? ch->ids[j] : UINT64_MAX;
			int take_a = j == ch->nids || (i < c->nids && a <= b);
			out[n++] = take_a ? a : b;
			i += take_a || (i < c->nids && a == b);
			j += !take_a || (j < ch->nids && a == b);
		}
		c->ids_tmp = c->ids;
		c->ids = out;
		c->nids = n;
	}
	over = over || c->nids > TFI_ID_VOCAB_MAX || c->nids > c->max_index / 4;
	if (over && !c->ids_over) {
		free(c->ids);
		free(c->ids_tmp);
		c->ids = c->ids_tmp = NULL;
		c->nids = c->ids_cap = 0;
		__atomic_store_n(&c->ids_over, 1, __ATOMIC_RELAXED);
	}
}

/* Hand a finished chunk to the sink; returns non-OK to stop. */
static int
retire(struct tf_csv *c, struct chunk *ch, const struct tf_csv_sink *sink)
{
	int rc = TF_OK;
	if (ch->nrec > 0 && c->err.code == TF_OK && ch->err == TF_OK &&
	    sink->write(sink->ctx, ch->out.data, ch->out.len, ch->ends,
	                ch->nrec) != 0) {
		rc = tfi_set_error(c, TF_EIO, "writing records failed");
	}
	c->rows += ch->rows;
	c->skipped += ch->skipped;
	if (ch->max_index > c->max_index) {
		c->max_index = ch->max_index;
	}
	if (ch->max_ids > c->max_ids) {
		c->max_ids = ch->max_ids;
	}
	merge_ids(c, ch);
	if (ch->skiplog.len > 0 && c->skiplog_n < SKIP_LOG_MAX) {
		tfi_json_put(&c->skiplog, (const char *)ch->skiplog.data,
		             ch->skiplog.len);
		c->skiplog_n +=
		    (unsigned)(ch->skipped < SKIP_LOG_MAX ? ch->skipped
		                                          : SKIP_LOG_MAX);
	}
	for (size_t i = 0; i < c->ncols; i++) {
		merge_stats(&c->cols[i].st, &ch->st[i]);
	}
	if (ch->err != TF_OK) {
		rc = tfi_set_error(c, ch->err, "%s", ch->msg);
	}
	if (sink->progress != NULL) {
		sink->progress(sink->ctx, c->rows, c->bytes_in);
	}
	ch->state = 0;
	return rc;
}

/*
 * Where to cut: just after the last newline that is outside quotes, or 0
 * if there is none yet.  A quote opens a quoted field only at the start
 * of a field; inside one, "" is an escaped quote.
 */
static size_t
find_cut(const char *p, size_t n, char delim, int *has_quotes)
{
	if (memchr(p, '"', n) == NULL) {
		const char *nl = memrchr(p, '\n', n);
		return nl ? (size_t)(nl - p) + 1 : 0;
	}
	*has_quotes = 1;
	size_t cut = 0, i = 0;
	int inq = 0;
	while (i < n) {
		if (!inq) {
			const char *q = memchr(p + i, '"', n - i);
			size_t qe = q ? (size_t)(q - p) : n;
			const char *nl =
			    qe > i ? memrchr(p + i, '\n', qe - i) : NULL;
			if (nl != NULL) {
				cut = (size_t)(nl - p) + 1;
			}
			if (q == NULL) {
				break;
			}
			size_t j = qe;
			while (j > 0 && (p[j - 1] == ' ' || p[j - 1] == '\t')) {
				j--;
			}
			if (j == 0 || p[j - 1] == delim || p[j - 1] == '\n' ||
			    p[j - 1] == '\r') {
				inq = 1;
			}
			i = qe + 1;
		} else {
			const char *q = memchr(p + i, '"', n - i);
			if (q == NULL) {
				break;
			}
			size_t qe = (size_t)(q - p);
			if (qe + 1 >= n) {
				break; /* cannot tell yet */
			}
			if (p[qe + 1] == '"') {
				i = qe + 2;
			} else {
				inq = 0;
				i = qe + 1;
			}
		}
	}
	return cut;
}

/* Retire finished chunks in input order (mu held).  After an error the
 * rest are dropped. */
static void
retire_ready(struct tf_csv *c, const struct tf_csv_sink *sink,
             uint64_t *next_out, int *rc)
{
	for (;;) {
		struct chunk *s = NULL;
		for (size_t i = 0; i < c->nslots; i++) {
			if (c->slots[i].state == 3 &&
			    c->slots[i].seq == *next_out) {
				s = &c->slots[i];
			}
		}
		if (s == NULL) {
			return;
		}
		if (*rc == TF_OK) {
			pthread_mutex_unlock(&c->mu);
			int r = retire(c, s, sink);
			pthread_mutex_lock(&c->mu);
			*rc = r;
		}
		s->state = 0;
		(*next_out)++;
	}
}

/* A free slot to fill, retiring finished chunks meanwhile (mu held). */
static struct chunk *
free_slot(struct tf_csv *c, const struct tf_csv_sink *sink, uint64_t *next_out,
          int *rc)
{
	for (;;) {
		retire_ready(c, sink, next_out, rc);
		if (*rc != TF_OK) {
			return NULL;
		}
		for (size_t i = 0; i < c->nslots; i++) {
			if (c->slots[i].state == 0) {
				return &c->slots[i];
			}
		}
		pthread_cond_wait(&c->cv, &c->mu);
	}
}

/* Wait for every queued chunk (mu held). */
static void
drain(struct tf_csv *c, const struct tf_csv_sink *sink, uint64_t *next_out,
      int *rc)
{
	for (;;) {
		retire_ready(c, sink, next_out, rc);
		int busy = 0;
		for (size_t i = 0; i < c->nslots; i++) {
			struct chunk *s = &c->slots[i];
			if (*rc != TF_OK && s->state != 2) {
				s->state = 0; /* not started or not wanted */
			}
			busy |= s->state != 0;
		}
		if (!busy) {
			return;
		}
		pthread_cond_wait(&c->cv, &c->mu);
	}
}

static int
pipeline_start(struct tf_csv *c)
{
	/* One thread: the calling thread parses each chunk itself (no
	 * worker, no hand-off); more: that many workers. */
	int n = c->o.threads;
	c->nworkers = n == 1 ? 0 : n;
	c->nslots = (size_t)c->nworkers * 2 + 2;
	c->slots = calloc(c->nslots, sizeof *c->slots);
	c->workers = calloc((size_t)n, sizeof *c->workers);
	if (c->slots == NULL || c->workers == NULL) {
		return tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < c->nslots; i++) {
		c->slots[i].st = calloc(c->ncols + 1, sizeof(struct colstats));
		if (c->slots[i].st == NULL) {
			return tfi_set_error(c, TF_ENOMEM, "out of memory");
		}
	}
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	c->shutdown = 0;
	for (int i = 0; i < n; i++) {
		if (worker_init(c, &c->workers[i]) != TF_OK) {
			return tfi_set_error(c, TF_ENOMEM, "out of memory");
		}
	}
	for (int i = 0; i < c->nworkers; i++) {
		if (pthread_create(&c->workers[i].thread, NULL, worker_main,
		                   &c->workers[i]) != 0) {
			c->nworkers = i;
			return tfi_set_error(c, TF_EINTERNAL,
			                     "cannot start a worker thread");
		}
	}
	return TF_OK;
}

static void
pipeline_stop(struct tf_csv *c)
{
	if (c->slots == NULL) {
		return;
	}
	if (c->workers != NULL) {
		pthread_mutex_lock(&c->mu);
		c->shutdown = 1;
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
		for (int i = 0; i < c->nworkers; i++) {
			pthread_join(c->workers[i].thread, NULL);
		}
		for (int i = 0; i < c->o.threads; i++) {
			worker_fini(&c->workers[i]);
		}
		pthread_mutex_destroy(&c->mu);
		pthread_cond_destroy(&c->cv);
	}
	for (size_t i = 0; i < c->nslots; i++) {
		struct chunk *s = &c->slots[i];
		free(s->data);
		tfi_buf_free(&s->out);
		tfi_buf_free(&s->skiplog);
		free(s->ids);
		free(s->ids_tmp);
		free(s->ends);
		for (size_t k = 0; s->st && k < c->ncols; k++) {
			strset_free(&s->st[k].vocab);
		}
		free(s->st);
	}
	free(c->slots);
	free(c->workers);
	c->slots = NULL;
	c->workers = NULL;
}

/* Feed the rest of one stream through the workers. */
static int
run_stream(struct tf_csv *c, struct tf_input *in, struct pending *pb,
           const char *name, uint64_t line, const struct tf_csv_sink *sink)
{
	uint64_t seq = 0, next_out = 0;
	int rc = TF_OK;
	int quotes = 0;
	pthread_mutex_lock(&c->mu);
	for (;;) {
		pthread_mutex_unlock(&c->mu);
		/* A stream goes on with the whole rows it has: one read, and
		 * more only while it holds no line end. */
		while (!pb->eof && pb->len < CHUNK && rc == TF_OK &&
		       (!c->o.stream || pb->len == 0 ||
		        memchr(pb->data, '\n', pb->len) == NULL)) {
			rc = pend_read(c, in, pb, CHUNK);
		}
		size_t cut = 0;
		if (rc == TF_OK) {
			if (pb->eof) {
				cut = pb->len;
				quotes = memchr(pb->data, '"', cut) != NULL;
			} else {
				cut = find_cut(pb->data, pb->len,
				               c->o.delimiter, &quotes);
			}
			if (cut == 0 && !pb->eof) {
				if (pb->len > MAX_ROW) {
					rc = tfi_set_error(
					    c, TF_ETOOBIG,
					    "%s:%llu: a row longer than "
					    "%zu bytes",
					    name, (unsigned long long)line,
					    MAX_ROW);
				} else {
					rc = pend_read(c, in, pb, pb->len);
					pthread_mutex_lock(&c->mu);
					continue;
				}
			}
		}
		pthread_mutex_lock(&c->mu);
		if (rc != TF_OK || cut == 0) {
			break;
		}
		struct chunk *ch = free_slot(c, sink, &next_out, &rc);
		if (ch == NULL) {
			break;
		}
		pthread_mutex_unlock(&c->mu);
		if (ch->cap < cut) {
			char *d = realloc(ch->data, cut);
			if (d == NULL) {
				pthread_mutex_lock(&c->mu);
				rc = tfi_set_error(c, TF_ENOMEM,
				                   "out of memory");
				break;
			}
			ch->data = d;
			ch->cap = cut;
		}
		memcpy(ch->data, pb->data, cut);
		ch->len = cut;
		ch->stream = name;
		ch->first_line = line;
		ch->has_quotes = quotes;
		quotes = 0;
		line += count_newlines(pb->data, cut);
		memmove(pb->data, pb->data + cut, pb->len - cut);
		pb->len -= cut;
		pthread_mutex_lock(&c->mu);
		ch->seq = seq++;
		if (c->nworkers == 0) {
			pthread_mutex_unlock(&c->mu);
			process_chunk(&c->workers[0], ch);
			sort_ids(ch);
			pthread_mutex_lock(&c->mu);
			ch->state = 3;
		} else {
			ch->state = 1;
			pthread_cond_broadcast(&c->cv);
		}
		/* Hand on what is finished now, not only when slots run out,
		 * so output and progress keep pace with slow input. */
		retire_ready(c, sink, &next_out, &rc);
		if (rc != TF_OK) {
			break;
		}
	}
	drain(c, sink, &next_out, &rc);
	pthread_mutex_unlock(&c->mu);
	return rc != TF_OK ? rc : c->err.code;
}

/* Type inference over the first rows of the pending buffer. */
static int
infer(struct tf_csv *c, struct tf_input *in, struct pending *pb)
{
	struct fields f = {0};
	f.c = c;
	f.want = c->o.infer_rows;
	struct csv_parser p;
	csv_init(&p, CSV_EMPTY_IS_NULL);
	csv_set_delim(&p, (unsigned char)c->o.delimiter);
	size_t used = 0;
	int rc = TF_OK;
	while (!f.done) {
		if (used < pb->len) {
			size_t step = pb->len - used;
			step = step > 65536 ? 65536 : step;
			csv_parse(&p, pb->data + used, step, inf_field, inf_row,
			          &f);
			used += step;
			continue;
		}
		if (pb->eof) {
			csv_fini(&p, inf_field, inf_row, &f);
			break;
		}
		if ((rc = pend_read(c, in, pb, CHUNK)) != TF_OK) {
			break;
		}
	}
	csv_free(&p);
	return rc;
}

/* A stream infers nothing: every column it writes has its type given. */
static int
typed(struct tf_csv *c, const char *name)
{
	for (size_t i = 0; i < c->ncols; i++) {
		const struct col *k = &c->cols[i];
		if (k->role != ROLE_DROP && !k->given) {
			return tfi_set_error(
			    c, TF_EINVAL,
			    "%s: a stream's rows are converted as they come, "
			    "with no rows to infer types from: column '%s' "
			    "needs its type (--types, or --types-from a "
			    "schema)",
			    name, k->name);
		}
	}
	return TF_OK;
}

static int
infer_libsvm(struct tf_csv *c)
{
	if (c->o.label != NULL && (strcmp(c->o.label, "ids") == 0 ||
	                           strcmp(c->o.label, "values") == 0)) {
		return tfi_set_error(c, TF_EINVAL,
		                     "--label: '%s' is taken by the sparse "
		                     "features",
		                     c->o.label);
	}
	char *name = strdup(c->o.label ? c->o.label : "label");
	if (name == NULL) {
		return tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	int rc = set_columns(c, &name, 1, "libsvm");
	if (rc != TF_OK) {
		return rc;
	}
	c->cols[0].role = ROLE_LABEL;
	c->cols[0].type =
	    c->o.label_type == TF_COL_FLOAT ? TF_COL_FLOAT : TF_COL_INT64;
	c->cols[0].given = 1;
	c->planned = 1;
	return TF_OK;
}

static int
add_source(struct tf_csv *c, const char *name)
{
	char **s = realloc(c->sources, (c->nsources + 1) * sizeof *s);
	if (s == NULL) {
		return TF_ENOMEM;
	}
	c->sources = s;
	if ((s[c->nsources] = strdup(name)) == NULL) {
		return TF_ENOMEM;
	}
	c->nsources++;
	return TF_OK;
}

static int
convert_stream(struct tf_csv *c, struct tf_input *in, const char *name,
               const struct tf_csv_sink *sink)
{
	struct pending pb = {0};
	struct fields hf = {0};
	uint64_t line = 1;
	int rc = TF_OK;
	if (add_source(c, name) != TF_OK) {
		return tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	if (c->o.format == TF_FORMAT_CSV) {
		/* The header row names the columns (or is replaced by
		 * --names); without one, --names or col1..colN do. */
		struct fields first = {0};
		rc = first_row(c, in, &pb, &first, !c->o.no_header, &line);
		if (rc == TF_EOF) {
			free_fields(&first);
			/* An empty stream after others is nothing to add; with
			 * no header seen at all there is nothing to convert. */
			rc = c->ncols > 0
			         ? TF_OK
			         : tfi_set_error(c, TF_EFORMAT,
			                         "%s: empty: no header and no "
			                         "rows to convert",
			                         name);
			goto out;
		}
		if (rc == TF_OK && (c->o.names != NULL || c->o.no_header)) {
			rc = names_from_option(c, &hf, first.n);
			free_fields(&first);
		} else {
			hf = first;
		}
		if (rc != TF_OK) {
			goto out;
		}
		if (hf.n > 0 && hf.v[0] &&
		    strncmp(hf.v[0], "\xef\xbb\xbf", 3) == 0) {
			memmove(hf.v[0], hf.v[0] + 3, strlen(hf.v[0]) - 2);
		}
		if (!c->planned) {
			char where[300];
			snprintf(where, sizeof where, "%s%s",
			         c->o.names != NULL ? "--names" : name,
			         c->o.names != NULL ? "" : ":1");
			if ((rc = set_columns(c, hf.v, hf.n, where)) != TF_OK) {
				goto out;
			}
			if ((rc = c->o.stream ? typed(c, name)
			                      : infer(c, in, &pb)) != TF_OK ||
			    (rc = make_plan(c)) != TF_OK) {
				goto out;
			}
		} else {
			int same = hf.n == c->ncols;
			for (size_t i = 0; same && i < hf.n; i++) {
				same = strcmp(hf.v[i], c->cols[i].name) == 0;
			}
			if (!same) {
				rc = tfi_set_error(c, TF_EFORMAT,
				                   "%s:1: the header differs "
				                   "from the first input's",
				                   name);
				goto out;
			}
		}
	} else if (!c->planned && (rc = infer_libsvm(c)) != TF_OK) {
		goto out;
	}
	if (c->slots == NULL && (rc = pipeline_start(c)) != TF_OK) {
		goto out;
	}
	rc = run_stream(c, in, &pb, name, line, sink);
out:
	free_fields(&hf);
	free(pb.data);
	return rc;
}

int
tf_csv_convert(struct tf_csv *c, struct tf_input *in,
               const struct tf_csv_sink *sink)
{
	if (c->err.code != TF_OK) {
		return c->err.code;
	}
	if (c->o.threads <= 0) {
		struct tf_csv_options o = c->o;
		if (tf_csv_set_options(c, &o) != TF_OK) {
			return c->err.code;
		}
	}
	int rc;
	const char *name;
	while ((rc = tf_input_next(in, &name)) == TF_OK) {
		rc = convert_stream(c, in, name, sink);
		if (rc != TF_OK) {
			break;
		}
	}
	if (rc == TF_EOF) {
		rc = TF_OK;
	} else if (rc != TF_OK && c->err.code == TF_OK) {
		tfi_set_error(c, tf_errcode(in), "%s", tf_errmsg(in));
	}
	pipeline_stop(c);
	return rc == TF_OK ? TF_OK : c->err.code;
}

/* ---- schema ------------------------------------------------------------- */

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* A column as the schema describes it. */
static int
schema_col(const struct col *k, size_t index, struct tfi_schema_col *out)
{
	memset(out, 0, sizeof *out);
	out->name = strdup(k->name);
	out->type = k->type;
	out->column = (int64_t)index;
	out->present = k->st.present;
	out->missing = k->st.missing;
	out->packed_index = k->pack;
	out->nonfinite = k->st.nonfinite;
	/* a different string in every row: no category (the vocabulary
	 * stops counting at its limit, past which nothing is known) */
	if (k->seq) {
		/* a sequence: its steps, not statistics */
		out->max_length =
		    k->st.max_steps > 0 ? (int64_t)k->st.max_steps : 1;
		out->step_width = 1;
		return out->name == NULL;
	}
	out->unique = k->type == TF_COL_BYTES && !k->st.vocab.over &&
	              k->st.vocab.n == k->st.present &&
	              k->st.present >= UNIQUE_MIN;
	if (k->type != TF_COL_BYTES && k->st.present > k->st.nonfinite) {
		double n = (double)(k->st.present - k->st.nonfinite),
		       mean = k->st.sum / n;
		double var = k->st.sumsq / n - mean * mean;
		out->has_stats = 1;
		out->min = k->st.min;
		out->max = k->st.max;
		out->mean = mean;
		out->std = var > 0 ? sqrt(var) : 0.0;
	}
	return out->name == NULL;
}

/* A bytes column's values, sorted. */
static int
schema_vocab(const struct col *k, struct tfi_vocab *v)
{
	v->name = strdup(k->name);
	v->over = k->st.vocab.over;
	v->n = v->over ? 0 : k->st.vocab.n;
	v->values = calloc(v->n + 1, sizeof *v->values);
	if (v->name == NULL || v->values == NULL) {
		return -1;
	}
	for (size_t i = 0; i < v->n; i++) {
		if ((v->values[i] = strdup(strset_at(&k->st.vocab, i))) ==
		    NULL) {
			return -1;
		}
	}
	qsort(v->values, v->n, sizeof *v->values, cmp_str);
	return 0;
}

int
tf_csv_schema(struct tf_csv *c, struct tf_schema *s)
{
	tfi_schema_clear(s);
	s->layout = c->o.format == TF_FORMAT_LIBSVM || c->o.hash_features
	                ? TFI_LAYOUT_LIBSVM
	            : c->o.pack != NULL ? TFI_LAYOUT_PACKED
	                                : TFI_LAYOUT_COLUMNS;
	s->rows = c->rows;
	s->skipped = c->skipped;
	s->max_index = c->max_index;
	s->max_ids = c->max_ids;
	size_t n = c->ids_over ? 0 : c->nids;
	if (tfi_id_vocab_wanted(c->max_index, n)) {
		if ((s->id_vocab = malloc(n * sizeof *s->id_vocab)) == NULL) {
			return tfi_set_error(c, TF_ENOMEM, "out of memory");
		}
		memcpy(s->id_vocab, c->ids, n * sizeof *s->id_vocab);
		s->id_count = n;
	}
	s->sources = calloc(c->nsources + 1, sizeof *s->sources);
	s->features = calloc(c->ncols + 1, sizeof *s->features);
	s->vocabs = calloc(c->ncols + 1, sizeof *s->vocabs);
	int bad = !s->sources || !s->features || !s->vocabs;
	for (size_t i = 0; i < c->nsources && !bad; i++) {
		bad =
		    (s->sources[s->nsources++] = strdup(c->sources[i])) == NULL;
	}
	if (c->label_col >= 0 && !bad) {
		const struct col *k = &c->cols[c->label_col];
		s->has_label = 1;
		bad = schema_col(k, (size_t)c->label_col, &s->label);
		s->classes_over = k->type == TF_COL_INT64 && k->st.vocab.over;
		if (k->type == TF_COL_INT64 && !k->st.vocab.over && !bad) {
			s->nclasses = k->st.vocab.n;
			s->classes =
			    calloc(s->nclasses + 1, sizeof *s->classes);
			bad = s->classes == NULL;
			for (size_t i = 0; i < s->nclasses && !bad; i++) {
				s->classes[i] = strtoll(
				    strset_at(&k->st.vocab, i), NULL, 10);
			}
			if (!bad) {
				qsort(s->classes, s->nclasses,
				      sizeof *s->classes, cmp_i64);
			}
		}
	}
	for (size_t i = 0; i < c->ncols && !bad; i++) {
		const struct col *k = &c->cols[i];
		if (c->o.hash_features && k->role == ROLE_FEATURE) {
			continue; /* in the ids */
		}
		if (k->role == ROLE_FEATURE) {
			bad = schema_col(k, i, &s->features[s->nfeatures++]);
		}
		if (!bad && k->role != ROLE_DROP &&
		    (k->type == TF_COL_BYTES ||
		     (k->seq && k->type == TF_COL_INT64))) {
			bad = schema_vocab(k, &s->vocabs[s->nvocabs++]);
		}
	}
	if (c->o.pack != NULL && !bad) {
		s->packed_name = strdup(c->o.pack);
		s->packed_size = c->npack;
		s->packed_columns = calloc(c->ncols + 1, sizeof(char *));
		bad = s->packed_name == NULL || s->packed_columns == NULL;
		for (size_t i = 0; i < c->ncols && !bad; i++) {
			if (c->cols[i].pack >= 0) {
				bad = (s->packed_columns[s->npacked++] =
				           strdup(c->cols[i].name)) == NULL;
			}
		}
	}
	if (bad) {
		tfi_schema_clear(s);
		return tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	return TF_OK;
}

int
tf_csv_schema_json(struct tf_csv *c, char **out)
{
	struct tf_schema *s = tf_schema_new();
	int rc = s == NULL ? tfi_set_error(c, TF_ENOMEM, "out of memory")
	                   : tf_csv_schema(c, s);
	if (rc == TF_OK && tf_schema_write(s, NULL) != TF_OK) {
		rc = tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	if (rc == TF_OK && (*out = strdup(tf_schema_text(s))) == NULL) {
		rc = tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	tf_schema_free(s);
	return rc;
}
