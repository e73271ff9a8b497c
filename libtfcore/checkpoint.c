/*
 * checkpoint.c - checkpoints as TFRecord files, with TensorFlow's
 * "checkpoint" pointer file.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "internal.h"
#include "tf/checkpoint.h"
#include "tf/file.h"
#include "tf/optim.h"
#include "tf/record.h"

/* Version 2 stores its blocks as runs; version 1 (read still) as values. */
#define MAGIC         "tfkit-checkpoint 2\n"
#define MAGIC1        "tfkit-checkpoint 1\n"
#define MAX_KEEP_LIST 1000
/* Equal values in a row stored once, value and count, from this many on:
 * a table's rows no id touched (zero weights, slots at their first value)
 * take a few bytes. */
#define MIN_RUN 8
/* The most values a block may decode to (64 GB of floats): more is a
 * damaged file, whatever its runs say. */
#define MAX_VALUES ((uint64_t)1 << 34)

struct block {
	char *name;
	const float *ref; /* saving */
	float *own;       /* loaded, decoded by tf_ckpt_get() */
	uint8_t *raw;     /* loaded: the record's bytes after the name */
	size_t rawlen;
	int runs; /* raw holds runs (version 2), else values */
	size_t n;
};

struct tf_ckpt {
	struct tfi_handle err;
	char *header;
	struct block *b;
	size_t nb, cap;
	char path[PATH_MAX];
};

struct tf_ckpt *
tf_ckpt_new(void)
{
	return calloc(1, sizeof(struct tf_ckpt));
}

void
tf_ckpt_clear(struct tf_ckpt *c)
{
	for (size_t i = 0; i < c->nb; i++) {
		free(c->b[i].name);
		free(c->b[i].own);
		free(c->b[i].raw);
	}
	c->nb = 0;
}

void
tf_ckpt_free(struct tf_ckpt *c)
{
	if (c != NULL) {
		tf_ckpt_clear(c);
		free(c->b);
		free(c->header);
		free(c);
	}
}

int
tf_ckpt_set_header(struct tf_ckpt *c, const char *json)
{
	free(c->header);
	c->header = strdup(json);
	return c->header ? TF_OK : tfi_set_error(c, TF_ENOMEM, "out of memory");
}

/* ---- the header ---------------------------------------------------------- */

void
tf_ckpt_header_init(struct tf_ckpt_header *h)
{
	memset(h, 0, sizeof *h);
	h->normalize = 1;
}

void
tf_ckpt_header_release(struct tf_ckpt_header *h)
{
	char *strs[] = {h->model_spec, h->optimizer,   h->task,
	                h->prediction, h->schema,      h->crosses,
	                h->validation, h->config,      h->library,
	                h->run_inputs, h->input_state, h->pool};
	for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
		free(strs[i]);
	}
	tf_hparams_free(h->hparams);
	free(h->trainers);
	tf_ckpt_header_init(h);
}

/* A JSON object from its text, or NULL for NULL text (or bad text, which
 * the writer of the text would have caught). */
static json_t *
object_of(const char *text)
{
	return text != NULL ? json_loads(text, 0, NULL) : NULL;
}

int
tf_ckpt_put_header(struct tf_ckpt *c, const struct tf_ckpt_header *h)
{
	json_t *hp = json_object();
	double v;
	for (size_t i = 0; hp != NULL && i < tf_hparams_count(h->hparams);
	     i++) {
		const char *k = tf_hparams_get(h->hparams, i, &v);
		json_object_set_new(hp, k, json_real(v));
	}
	/* The key names are the file format: FORMATS.md, checkpoints. */
	json_t *o = json_pack(
	    "{s:i,s:s,s:s,s:o,s:f,s:I,s:I,s:I,s:I,s:I,s:s,s:s,s:I,s:s,s:s,"
	    "s:i}",
	    "version", 1, "model_spec", h->model_spec ? h->model_spec : "",
	    "optimizer", h->optimizer ? h->optimizer : "", "hparams", hp,
	    "learning_rate", h->learning_rate, "step", (json_int_t)h->step,
	    "examples", (json_int_t)h->examples, "epoch", (json_int_t)h->epoch,
	    "done", (json_int_t)h->done, "seed", (json_int_t)h->seed, "task",
	    h->task ? h->task : "", "prediction",
	    h->prediction ? h->prediction : "", "classes",
	    (json_int_t)h->classes, "schema", h->schema ? h->schema : "{}",
	    "library", h->library ? h->library : tf_version(), "normalize",
	    h->normalize);
	if (o != NULL && h->has_rng) {
		char rs[65];
		tfi_rng_text(h->rng, rs);
		json_object_set_new(o, "rng", json_string(rs));
	}
	json_t *val = object_of(h->validation), *cfg = object_of(h->config);
	if (o != NULL && val != NULL) {
		json_object_set(o, "validation", val);
	}
	if (o != NULL && h->crosses != NULL) {
		json_object_set_new(o, "categorical",
		                    json_pack("{s:s,s:I}", "crosses",
		                              h->crosses, "buckets",
		                              (json_int_t)h->buckets));
	}
	if (o != NULL && cfg != NULL) {
		json_object_set(o, "config", cfg);
	}
	json_t *inputs = object_of(h->run_inputs);
	if (o != NULL && h->has_run) {
		json_object_set_new(o, "run",
		                    json_pack("{s:O?,s:I,s:b}", "inputs",
		                              inputs, "first_epoch",
		                              (json_int_t)h->run_first_epoch,
		                              "finished", h->run_finished));
	}
	if (o != NULL && h->trainers != NULL) {
		json_t *a = json_array();
		for (size_t i = 0; a != NULL && i < h->ntrainers; i++) {
			json_array_append_new(
			    a,
			    json_pack("[I,I]", (json_int_t)h->trainers[2 * i],
			              (json_int_t)h->trainers[2 * i + 1]));
		}
		json_object_set_new(o, "trainers", a);
	}
	json_t *ist = object_of(h->input_state);
	if (o != NULL && ist != NULL) {
		json_object_set_new(o, "input_state", ist);
	}
	json_t *pool = object_of(h->pool);
	if (o != NULL && pool != NULL) {
		json_object_set_new(o, "pool", pool);
	}
	json_decref(inputs);
	json_decref(val);
	json_decref(cfg);
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (text == NULL) {
		return tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	free(c->header);
	c->header = text;
	return TF_OK;
}

/* A member as text: a string's copy, an object's JSON; NULL when absent. */
static int
take_text(json_t *o, const char *key, char **out)
{
	json_t *v = json_object_get(o, key);
	*out = NULL;
	if (v == NULL || json_is_null(v)) {
		return 0;
	}
	*out = json_is_string(v)   ? strdup(json_string_value(v))
	       : json_is_object(v) ? json_dumps(v, JSON_COMPACT)
	                           : NULL;
	return *out == NULL ? -1 : 0;
}

int
tf_ckpt_get_header(struct tf_ckpt *c, struct tf_ckpt_header *h)
{
	tf_ckpt_header_release(h);
	json_error_t je;
	json_t *o = json_loads(tf_ckpt_header(c), 0, &je);
	json_int_t step = 0, ex = 0, ep = 0, done = 0, seed = 0, classes = 0;
	double lr = 0;
	const char *str; /* taken again below, as copies */
	json_t *hp = NULL, *cat;
	/* What a checkpoint cannot be read without; the rest may be absent
	 * in checkpoints of earlier versions. */
	if (o == NULL ||
	    json_unpack(o, "{s:s,s:s,s:F,s:I,s:I,s:I,s:I,s:s,s:s,s:s,s:I}",
	                "model_spec", &str, "optimizer", &str, "learning_rate",
	                &lr, "step", &step, "examples", &ex, "epoch", &ep,
	                "done", &done, "schema", &str, "task", &str,
	                "prediction", &str, "classes", &classes) != 0) {
		json_decref(o);
		return tfi_set_error(c, TF_EFORMAT, "%s: bad checkpoint header",
		                     c->path);
	}
	json_unpack(o, "{s?I,s?o}", "seed", &seed, "hparams", &hp);
	json_t *norm = json_object_get(o, "normalize"); /* 0 or 1 */
	h->normalize = norm == NULL || json_is_true(norm) ||
	               (json_is_integer(norm) && json_integer_value(norm));
	h->learning_rate = lr;
	h->step = (uint64_t)step;
	h->examples = (uint64_t)ex;
	h->epoch = (uint64_t)ep;
	h->done = (uint64_t)done;
	h->seed = (uint64_t)seed;
	h->classes = (int64_t)classes;
	int bad = take_text(o, "model_spec", &h->model_spec) ||
	          take_text(o, "optimizer", &h->optimizer) ||
	          take_text(o, "schema", &h->schema) ||
	          take_text(o, "task", &h->task) ||
	          take_text(o, "prediction", &h->prediction) ||
	          take_text(o, "validation", &h->validation) ||
	          take_text(o, "config", &h->config) ||
	          take_text(o, "library", &h->library);
	h->hparams = tf_hparams_new();
	const char *key;
	json_t *v;
	json_object_foreach(hp, key, v)
	{
		bad = bad || h->hparams == NULL ||
		      tf_hparams_set(h->hparams, key, json_number_value(v));
	}
	cat = json_object_get(o, "categorical");
	if (json_is_object(cat)) {
		bad = bad || take_text(cat, "crosses", &h->crosses);
		h->buckets =
		    json_integer_value(json_object_get(cat, "buckets"));
		if (h->crosses == NULL && !bad) {
			bad = (h->crosses = strdup("")) == NULL;
		}
	}
	json_t *run = json_object_get(o, "run");
	if (json_is_object(run)) {
		h->has_run = 1;
		json_t *in = json_object_get(run, "inputs");
		h->run_inputs =
		    in ? json_dumps(in, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
		h->run_first_epoch = (uint64_t)json_integer_value(
		    json_object_get(run, "first_epoch"));
		h->run_finished =
		    json_is_true(json_object_get(run, "finished"));
	}
	json_t *ist = json_object_get(o, "input_state");
	if (json_is_object(ist) && !bad) {
		h->input_state = json_dumps(ist, JSON_COMPACT);
		bad = h->input_state == NULL;
	}
	json_t *pl = json_object_get(o, "pool");
	if (json_is_object(pl) && !bad) {
		h->pool = json_dumps(pl, JSON_COMPACT);
		bad = h->pool == NULL;
	}
	json_t *tr = json_object_get(o, "trainers");
	if (json_is_array(tr) && json_array_size(tr) > 0 && !bad) {
		h->ntrainers = json_array_size(tr);
		h->trainers = calloc(2 * h->ntrainers, sizeof *h->trainers);
		bad = h->trainers == NULL;
		for (size_t i = 0; !bad && i < h->ntrainers; i++) {
			json_t *e = json_array_get(tr, i);
			h->trainers[2 * i] =
			    (uint64_t)json_integer_value(json_array_get(e, 0));
			h->trainers[2 * i + 1] =
			    (uint64_t)json_integer_value(json_array_get(e, 1));
		}
	}
	h->has_rng = tfi_rng_parse(json_string_value(json_object_get(o, "rng")),
	                           h->rng) == 0;
	json_decref(o);
	if (bad) {
		tf_ckpt_header_release(h);
		return tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	return TF_OK;
}

/* ---- blocks -------------------------------------------------------------- */

static struct block *
push(struct tf_ckpt *c, const char *name)
{
	if (c->nb == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		struct block *b = realloc(c->b, cap * sizeof *b);
		if (b == NULL) {
			return NULL;
		}
		c->b = b;
		c->cap = cap;
	}
	struct block *b = &c->b[c->nb];
	memset(b, 0, sizeof *b);
	if ((b->name = strdup(name)) == NULL) {
		return NULL;
	}
	c->nb++;
	return b;
}

/* A value's bits, which runs compare (a -0 or a NaN is kept as it is). */
static inline uint32_t
bits(const float *v, size_t i)
{
	uint32_t u;
	memcpy(&u, &v[i], 4);
	return u;
}

/*
 * A block's values as runs (tfrecord(5), Checkpoints): the count, then
 * pairs of L literal values and a run of R copies of one value, as
 * varint L, L float32s, varint R and, when R > 0, the value.
 */
int
tfi_runs_put(struct tfi_buf *rec, const float *v, size_t n)
{
	/* at most n / MIN_RUN + 1 pairs, each with two varints and a value
	 * beyond the literals */
	if (n > SIZE_MAX / 8 ||
	    tfi_buf_reserve(rec, 10 + n * 4 + (n / MIN_RUN + 1) * 24) !=
	        TF_OK) {
		return TF_ENOMEM;
	}
	uint8_t *p = tfi_put_varint(rec->data + rec->len, n);
	size_t i = 0;
	while (i < n) {
		size_t run = n, len = 0;
		for (size_t j = i; j < n;) {
			size_t k = j + 1;
			while (k < n && bits(v, k) == bits(v, j)) {
				k++;
			}
			if (k - j >= MIN_RUN) {
				run = j;
				len = k - j;
				break;
			}
			j = k;
		}
		p = tfi_put_varint(p, run - i);
		p = tfi_put_le_floats(p, v + i, run - i);
		p = tfi_put_varint(p, len);
		if (len > 0) {
			tfi_put_le32(p, bits(v, run));
			p += 4;
		}
		i = run + len;
	}
	rec->len = (size_t)(p - rec->data);
	return TF_OK;
}

/* Values as runs (tfi_runs_put()'s): their count, at most max, into
 * *n, and values from..from+count-1 of them (as far as there are) into
 * dst[0..] when dst is not NULL; -1 when the runs do not add up to the
 * count and end with the bytes. */
static int
runs_walk(const uint8_t *p, size_t len, uint64_t max, uint64_t *n, float *dst,
          uint64_t from, uint64_t count)
{
	const uint8_t *end = p + len;
	uint64_t at = 0, lit, rep;
	if (!tfi_get_varint(&p, end, n) || *n > max) {
		return -1;
	}
	uint64_t to = from >= *n ? from : count < *n - from ? from + count : *n;
	while (at < *n) {
		if (!tfi_get_varint(&p, end, &lit) || lit > *n - at ||
		    lit > (uint64_t)(end - p) / 4) {
			return -1;
		}
		uint64_t k = at > from ? at : from;
		uint64_t e = at + lit < to ? at + lit : to;
		if (dst != NULL && k < e) {
			tfi_get_le_floats(dst + (k - from), p + 4 * (k - at),
			                  (size_t)(e - k));
		}
		p += 4 * lit;
		at += lit;
		if (!tfi_get_varint(&p, end, &rep) || rep > *n - at ||
		    (rep == 0 && lit == 0) || (rep > 0 && end - p < 4)) {
			return -1;
		}
		if (rep > 0) {
			uint32_t b = tfi_get_le32(p);
			float f;
			memcpy(&f, &b, 4);
			k = at > from ? at : from;
			for (; dst != NULL && k < at + rep && k < to; k++) {
				dst[k - from] = f;
			}
			p += 4;
			at += rep;
		}
	}
	return p == end ? 0 : -1;
}

int
tfi_runs_read(const uint8_t *p, size_t len, uint64_t max, uint64_t *n,
              float *dst)
{
	return runs_walk(p, len, max, n, dst, 0, UINT64_MAX);
}

/* Values from..from+n-1 of a loaded block into dst. */
static void
decode(const struct block *b, size_t from, float *dst, size_t n)
{
	uint64_t all;
	if (b->runs) {
		runs_walk(b->raw, b->rawlen, b->n, &all, dst, from, n);
		return; /* checked when loaded */
	}
	tfi_get_le_floats(dst, b->raw + 4 * from, n);
}

/* A loaded record's block: its name, and its values checked (their
 * count, which the runs must give exactly, and no more than MAX_VALUES). */
static int
take_block(struct tf_ckpt *c, const uint8_t *d, size_t n, int runs)
{
	const uint8_t *nul = memchr(d, 0, n);
	if (nul == NULL) {
		return TF_EFORMAT;
	}
	size_t len = n - (size_t)(nul - d) - 1;
	uint64_t vals = len / 4;
	if (runs) {
		if (tfi_runs_read(nul + 1, len, MAX_VALUES, &vals, NULL) != 0) {
			return TF_EFORMAT;
		}
	} else if (len % 4 != 0) {
		return TF_EFORMAT;
	}
	struct block *b = push(c, (const char *)d);
	if (b == NULL || (b->raw = malloc(len ? len : 1)) == NULL) {
		return TF_ENOMEM;
	}
	memcpy(b->raw, nul + 1, len);
	b->rawlen = len;
	b->runs = runs;
	b->n = (size_t)vals;
	return TF_OK;
}

int
tf_ckpt_add(struct tf_ckpt *c, const char *name, const float *data, size_t n)
{
	struct block *b = push(c, name);
	if (b == NULL) {
		return tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	b->ref = data;
	b->n = n;
	return TF_OK;
}

/* The checkpoint names the pointer file lists, oldest first. */
static size_t
read_pointer(const char *dir, char names[][64], size_t max, char *latest)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/checkpoint", dir);
	FILE *f = fopen(p, "r");
	size_t n = 0;
	latest[0] = '\0';
	if (f == NULL) {
		return 0;
	}
	char line[512];
	while (fgets(line, sizeof line, f) != NULL) {
		char name[64];
		if (sscanf(line, "model_checkpoint_path: \"%63[^\"]\"", name) ==
		    1) {
			snprintf(latest, 64, "%s", name);
		} else if (names != NULL && n < max &&
		           sscanf(line,
		                  "all_model_checkpoint_paths: \"%63[^\"]\"",
		                  name) == 1) {
			snprintf(names[n++], 64, "%s", name);
		}
	}
	fclose(f);
	return n;
}

int
tf_ckpt_save(struct tf_ckpt *c, const char *dir, uint64_t step, int keep)
{
	char name[64];
	snprintf(name, sizeof name, "model.ckpt-%llu",
	         (unsigned long long)step);
	snprintf(c->path, sizeof c->path, "%s/%s", dir, name);
	/* The directory of a first save (its parent must exist). */
	mkdir(dir, 0777);
	struct tf_writer *w = tf_writer_new();
	if (w == NULL) {
		return tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	struct tfi_buf rec = {0};
	int rc = tf_writer_open(w, c->path, TF_COMPRESS_NONE, TF_WRITER_SYNC);
	if (rc == TF_OK) {
		rc =
		    tfi_buf_append(&rec, MAGIC, strlen(MAGIC)) ||
		            tfi_buf_append(&rec, c->header ? c->header : "{}",
		                           strlen(c->header ? c->header : "{}"))
		        ? TF_ENOMEM
		        : tf_writer_write(w, rec.data, rec.len);
	}
	for (size_t i = 0; i < c->nb && rc == TF_OK; i++) {
		rec.len = 0;
		rc =
		    tfi_buf_append(&rec, c->b[i].name, strlen(c->b[i].name) + 1)
		        ? TF_ENOMEM
		        : tfi_runs_put(&rec, c->b[i].ref, c->b[i].n);
		if (rc == TF_OK) {
			rc = tf_writer_write(w, rec.data, rec.len);
		}
	}
	if (rc == TF_OK) {
		rc = tf_writer_close(w);
	}
	tfi_buf_free(&rec);
	if (rc != TF_OK) {
		rc = tfi_set_error(
		    c, rc == TF_ENOMEM ? TF_ENOMEM : tf_errcode(w), "%s",
		    rc == TF_ENOMEM ? "out of memory" : tf_errmsg(w));
		tf_writer_free(w); /* removes the temporary file */
		return rc;
	}
	tf_writer_free(w); /* published and its directory synced */
	/* The pointer file: the newest `keep`, this one last. */
	char(*names)[64] = malloc(MAX_KEEP_LIST * sizeof *names);
	char latest[64];
	if (names == NULL) {
		return tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	size_t n = read_pointer(dir, names, MAX_KEEP_LIST - 1, latest);
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(names[i], name) != 0) {
			memmove(names[j++], names[i], 64);
		}
	}
	n = j;
	memcpy(names[n++], name, sizeof name);
	size_t first = keep > 0 && n > (size_t)keep ? n - (size_t)keep : 0;
	struct tfi_buf text = {0};
	char line[128];
	snprintf(line, sizeof line, "model_checkpoint_path: \"%s\"\n", name);
	rc = tfi_json_put(&text, line, strlen(line));
	for (size_t i = first; i < n && rc == TF_OK; i++) {
		snprintf(line, sizeof line,
		         "all_model_checkpoint_paths: \"%s\"\n", names[i]);
		rc = tfi_json_put(&text, line, strlen(line));
	}
	if (rc == TF_OK) {
		char p[PATH_MAX], msg[TFI_MSG_MAX];
		snprintf(p, sizeof p, "%s/checkpoint", dir);
		rc = tf_file_replace(p, text.data, text.len, TF_FILE_SYNC, msg,
		                     sizeof msg);
		if (rc != TF_OK) {
			tfi_set_error(c, rc, "%s", msg);
		}
	}
	tfi_buf_free(&text);
	if (rc == TF_OK) {
		tfi_sync_dir(dir);
		for (size_t i = 0; i < first; i++) {
			char old[PATH_MAX];
			snprintf(old, sizeof old, "%s/%s", dir, names[i]);
			unlink(old);
		}
	}
	free(names);
	if (rc != TF_OK) {
		return rc == TF_ENOMEM
		           ? tfi_set_error(c, TF_ENOMEM, "out of memory")
		           : rc;
	}
	return TF_OK;
}

int
tf_ckpt_latest(const char *dir, char *path, size_t size)
{
	char latest[64];
	read_pointer(dir, NULL, 0, latest);
	if (latest[0] == '\0') {
		return TF_ENOENT;
	}
	snprintf(path, size, "%s/%s", dir, latest);
	return TF_OK;
}

int
tf_ckpt_previous(const char *dir, char *path, size_t size)
{
	char(*names)[64] = malloc(MAX_KEEP_LIST * sizeof *names);
	char latest[64];
	struct tf_ckpt *c = tf_ckpt_new();
	int rc = TF_ENOENT;
	if (names == NULL || c == NULL) {
		free(names);
		tf_ckpt_free(c);
		return TF_ENOMEM;
	}
	size_t n = read_pointer(dir, names, MAX_KEEP_LIST, latest);
	for (size_t i = n; i-- > 0 && rc == TF_ENOENT;) {
		if (strcmp(names[i], latest) == 0) {
			continue;
		}
		snprintf(path, size, "%s/%s", dir, names[i]);
		if (tf_ckpt_load(c, path) == TF_OK) {
			rc = TF_OK;
		}
	}
	tf_ckpt_free(c);
	free(names);
	return rc;
}

int
tfi_ckpt_damaged(void *h, int code, const char *dir, const char *why)
{
	char prev[PATH_MAX];
	if (tf_ckpt_previous(dir, prev, sizeof prev) == TF_OK) {
		return tfi_set_error(h, code,
		                     "%s (%s, the one before, is whole: "
		                     "--if-damaged previous sets the damaged "
		                     "one aside and resumes from it; or "
		                     "--from-scratch)",
		                     why, prev);
	}
	return tfi_set_error(h, code, "%s (remove it or use --from-scratch)",
	                     why);
}

int
tf_ckpt_set_aside(const char *dir, const char *prev, char *msg, size_t msize)
{
	char(*names)[64] = malloc(MAX_KEEP_LIST * sizeof *names);
	char latest[64];
	if (names == NULL) {
		snprintf(msg, msize, "out of memory");
		return TF_ENOMEM;
	}
	size_t n = read_pointer(dir, names, MAX_KEEP_LIST, latest);
	const char *pn = strrchr(prev, '/') ? strrchr(prev, '/') + 1 : prev;
	/* The pointer first: a crash between the two leaves the damaged
	 * file in place but named by nothing. */
	struct tfi_buf text = {0};
	char line[128];
	snprintf(line, sizeof line, "model_checkpoint_path: \"%s\"\n", pn);
	int rc = tfi_json_put(&text, line, strlen(line)) ? TF_ENOMEM : TF_OK;
	for (size_t i = 0; i < n && rc == TF_OK; i++) {
		if (strcmp(names[i], latest) != 0) {
			snprintf(line, sizeof line,
			         "all_model_checkpoint_paths: \"%s\"\n",
			         names[i]);
			rc = tfi_json_put(&text, line, strlen(line)) ? TF_ENOMEM
			                                             : TF_OK;
		}
	}
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/checkpoint", dir);
	if (rc == TF_OK) {
		rc = tf_file_replace(p, text.data, text.len, TF_FILE_SYNC, msg,
		                     msize);
	} else {
		snprintf(msg, msize, "out of memory");
	}
	tfi_buf_free(&text);
	if (rc == TF_OK && latest[0] != '\0') {
		char from[PATH_MAX], to[PATH_MAX + 16];
		snprintf(from, sizeof from, "%s/%s", dir, latest);
		snprintf(to, sizeof to, "%s.damaged", from);
		if (rename(from, to) != 0 && errno != ENOENT) {
			snprintf(msg, msize, "%s: cannot rename to %s: %s",
			         from, to, strerror(errno));
			rc = TF_EIO;
		}
		tfi_sync_dir(dir);
	}
	free(names);
	return rc;
}

static int
load(struct tf_ckpt *c, const char *path, int header_only)
{
	tf_ckpt_clear(c);
	char p[PATH_MAX];
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		if (tf_ckpt_latest(path, p, sizeof p) != TF_OK) {
			return tfi_set_error(
			    c, TF_ENOENT,
			    "%s: no checkpoint (no 'checkpoint' "
			    "file naming one)",
			    path);
		}
	} else {
		snprintf(p, sizeof p, "%s", path);
	}
	snprintf(c->path, sizeof c->path, "%s", p);
	struct tf_reader *r = tf_reader_new();
	if (r == NULL) {
		return tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	int rc = tf_reader_open(r, p, TF_COMPRESS_NONE);
	const uint8_t *d;
	size_t n;
	int runs = 0;
	if (rc == TF_OK && (rc = tf_reader_next(r, &d, &n)) == TF_OK) {
		size_t ml = strlen(MAGIC);
		runs = n >= ml && memcmp(d, MAGIC, ml) == 0;
		if (n < ml || (!runs && memcmp(d, MAGIC1, ml) != 0)) {
			int later = n >= ml && memcmp(d, MAGIC, ml - 2) == 0 &&
			            d[ml - 2] > '2' && d[ml - 2] <= '9';
			rc =
			    tfi_set_error(c, TF_EFORMAT,
			                  later ? "%s: a checkpoint of a later "
			                          "tfkit (format %c)"
			                        : "%s: not a tfkit checkpoint",
			                  p, later ? d[ml - 2] : '?');
		} else {
			free(c->header);
			c->header = malloc(n - ml + 1);
			if (c->header == NULL) {
				rc = TF_ENOMEM;
			} else {
				memcpy(c->header, d + ml, n - ml);
				c->header[n - ml] = '\0';
			}
		}
	}
	while (rc == TF_OK && !header_only &&
	       (rc = tf_reader_next(r, &d, &n)) == TF_OK) {
		rc = take_block(c, d, n, runs);
		if (rc == TF_EFORMAT) {
			rc = tfi_set_error(
			    c, TF_EFORMAT, "%s: record %llu is not a block", p,
			    (unsigned long long)tf_reader_count(r) - 1);
		}
	}
	if (rc == TF_EOF || (rc == TF_OK && header_only)) {
		rc = c->header ? TF_OK
		               : tfi_set_error(c, TF_EFORMAT, "%s: empty", p);
	} else if (rc == TF_ENOMEM) {
		rc = tfi_set_error(c, TF_ENOMEM, "out of memory");
	} else if (c->err.code == TF_OK) {
		rc = tfi_set_error(c, tf_errcode(r), "checkpoint %s",
		                   tf_errmsg(r));
	}
	tf_reader_free(r);
	return rc;
}

int
tf_ckpt_load(struct tf_ckpt *c, const char *path)
{
	return load(c, path, 0);
}

int
tf_ckpt_load_header(struct tf_ckpt *c, const char *path)
{
	return load(c, path, 1);
}

const char *
tf_ckpt_header(const struct tf_ckpt *c)
{
	return c->header ? c->header : "";
}

static struct block *
find(const struct tf_ckpt *c, const char *name)
{
	for (size_t i = 0; i < c->nb; i++) {
		if (strcmp(c->b[i].name, name) == 0) {
			return &c->b[i];
		}
	}
	return NULL;
}

int
tf_ckpt_size(const struct tf_ckpt *c, const char *name, size_t *n)
{
	const struct block *b = find(c, name);
	*n = b ? b->n : 0;
	return b ? TF_OK : TF_ENOENT;
}

const float *
tf_ckpt_get(struct tf_ckpt *c, const char *name, size_t *n)
{
	struct block *b = find(c, name);
	if (b == NULL) {
		return NULL;
	}
	*n = b->n;
	if (b->raw != NULL && b->own == NULL) {
		if ((b->own = malloc(b->n ? b->n * sizeof(float) : 1)) ==
		    NULL) {
			tfi_set_error(c, TF_ENOMEM, "out of memory");
			return NULL;
		}
		decode(b, 0, b->own, b->n);
	}
	return b->own ? b->own : b->ref;
}

/* Values from..from+n-1 of block b (which has them) into dst. */
static void
copy_out(const struct block *b, size_t from, float *dst, size_t n)
{
	if (b->own != NULL || b->ref != NULL) {
		memcpy(dst, (b->own ? b->own : b->ref) + from,
		       n * sizeof(float));
	} else {
		decode(b, from, dst, n);
	}
}

int
tf_ckpt_read(struct tf_ckpt *c, const char *name, float *dst, size_t n)
{
	const struct block *b = find(c, name);
	if (b == NULL || b->n != n) {
		return tfi_set_error(c, TF_EFORMAT,
		                     "%s: block '%s' is missing or of another "
		                     "size: a checkpoint of another model",
		                     c->path, name);
	}
	copy_out(b, 0, dst, n);
	return TF_OK;
}

int
tf_ckpt_read_part(struct tf_ckpt *c, const char *name, size_t from, float *dst,
                  size_t n)
{
	const struct block *b = find(c, name);
	if (b == NULL || from > b->n || n > b->n - from) {
		return tfi_set_error(c, TF_EFORMAT,
		                     "%s: block '%s' is missing or has no "
		                     "values %zu to %zu",
		                     c->path, name, from, from + n);
	}
	copy_out(b, from, dst, n);
	return TF_OK;
}

const char *
tf_ckpt_path(const struct tf_ckpt *c)
{
	return c->path;
}
