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
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "tf/batch.h"
#include "tf/dataset.h"
#include "tf/example.h"
#include "tf/file.h"
#include "tf/image.h"
#include "tf/record.h"
#include "tf/rng.h"
#include "tf/schema.h"

#include "dataset_private.h"

static int read_once(const struct tf_dataset *ds, const char *path);
static int claim_pre(struct tf_dataset *ds, const char *path);

struct tf_dataset *
tf_dataset_new_on(struct tf_columns *cols)
{
	struct tf_dataset *ds = cols ? calloc(1, sizeof *ds) : NULL;
	if (ds != NULL) {
		ds->cols = cols;
	}
	return ds;
}

struct tf_dataset *
tf_dataset_new(void)
{
	struct tf_columns *cols = tf_columns_new();
	struct tf_dataset *ds = tf_dataset_new_on(cols);
	if (ds == NULL) {
		tf_columns_free(cols);
		return NULL;
	}
	ds->own_cols = 1;
	return ds;
}

struct tf_columns *
tf_dataset_columns(struct tf_dataset *ds)
{
	return ds->cols;
}

/* Forget the files of the last tf_dataset_open(). */
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
	if (ds->own_cols) {
		tf_columns_free(ds->cols);
	}
	free(ds->by_name);
	free(ds->spos);
	free(ds->ftpl);
	free(ds->ftoff);
	free(ds->ftlen);
	free(ds->itoff);
	free(ds->rtpl);
	free(ds->rmask);
	free(ds->roff);
	free(ds->rcol);
	free(ds->rmu);
	free(ds->ris);
	free(ds->fnlen);
	free(ds->fseen);
	free(ds->fslot);
	tf_reader_free(ds->pre);
	free(ds->pre_path);
	tfi_buf_free(&ds->replay);
	free(ds->key);
	free(ds->kbuf);
	free(ds->keys);
	free(ds->spans);
	free(ds->buf);
	free(ds->ibuf);
	close_files(ds);
	tf_reader_free(ds->r);
	tf_example_free(ds->ex);
	tf_image_free(ds->img);
	free(ds);
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
	double row = (double)(ds->cols->width + 1) * sizeof(float) +
	             (double)ds->cols->nids * sizeof(int64_t) +
	             sizeof *ds->spos + (ds->key ? KEYLEN : 0);
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
	    ds->shuffle, (long long)ds->cols->width,
	    ds->cols->nids > 0 ? " and their ids" : "", need / 1e9, have / 1e9,
	    fit);
}

int
tf_dataset_open(struct tf_dataset *ds, const char *const *files, size_t nfiles,
                uint64_t epochs, size_t shuffle, uint64_t seed)
{
	if (ds->cols->nin == 0 && !ds->cols->sparse && ds->cols->seq == NULL) {
		return tfi_set_error(ds, TF_EINVAL, "no features to read");
	}
	int64_t covered = 0; /* the inputs fill every column of a row */
	for (size_t i = 0; i < ds->cols->nin; i++) {
		covered += ds->cols->in[i].width;
	}
	ds->fast = !ds->no_fast && !ds->cols->sparse && !ds->cols->image &&
	           ds->cols->ncat == 0 && ds->cols->seq == NULL &&
	           ds->key == NULL && ds->cols->lmap == LMAP_NONE &&
	           covered == ds->cols->width;
	ds->fast_bag = !ds->no_fast && ds->cols->sparse == TFI_SPARSE_BAG &&
	               ds->cols->nin == 0 && ds->cols->ncat == 0 &&
	               ds->cols->seq == NULL && !ds->cols->image &&
	               ds->key == NULL && ds->cols->lmap == LMAP_NONE;
	ds->ylen = ds->cols->label ? strlen(ds->cols->label) : 0;
	free(ds->fnlen);
	free(ds->fseen);
	free(ds->fslot);
	ds->fnlen = malloc((ds->cols->nin + 1) * sizeof *ds->fnlen);
	ds->fseen = calloc(ds->cols->nin + 1, sizeof *ds->fseen);
	ds->fslot = malloc((ds->cols->nin + 1) * sizeof *ds->fslot);
	if (!ds->fnlen || !ds->fseen || !ds->fslot) {
		return tfi_set_error(ds, TF_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < ds->cols->nin; i++) {
		ds->fnlen[i] = strlen(ds->cols->in[i].name);
		ds->fslot[i] = -2;
	}
	ds->fslot[ds->cols->nin] = -2;
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
		if (read_once(ds, files[i])) {
			if (claim_pre(ds, files[i]) != TF_OK) {
				return ds->err.code;
			}
			ds->stdin_used = 1;
		}
	}
	ds->epochs = epochs;
	ds->shuffle = shuffle > 1 && !ds->follow ? shuffle : 1;
	ds->seed = seed;
	if (check_buffer_memory(ds) != TF_OK) {
		return TF_EINVAL;
	}
	free(ds->by_name);
	free(ds->buf);
	ds->by_name = malloc((ds->cols->nin + 1) * sizeof *ds->by_name);
	ds->buf =
	    malloc(ds->shuffle * (size_t)(ds->cols->width + 1) * sizeof(float));
	free(ds->ibuf);
	ds->ibuf =
	    malloc(ds->shuffle * (size_t)ds->cols->nids * sizeof(int64_t) + 1);
	ds->pend_ids = NULL;
	ds->prefaulted = 0;
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
	if (ds->r != NULL) {
		tf_reader_set_follow(ds->r, ds->follow);
	}
	if (ds->ex == NULL) {
		ds->ex = tf_example_new();
	}
	if (!ds->by_name || !ds->buf || !ds->ibuf || !ds->r || !ds->ex) {
		return tfi_set_error(ds, TF_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < ds->cols->nin; i++) {
		ds->by_name[i] = i;
	}
	qsort_r(ds->by_name, ds->cols->nin, sizeof *ds->by_name, cmp_input_name,
	        ds->cols->in);
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
	ds->pend_ids = NULL; /* (a row no longer held) */
	ds->at_end = 0;
	tf_rng_seed(&ds->rng, ds->seed * 0x9e3779b97f4a7c15ull + epoch);
}

/* A feature's value as text (a key to pass through): TF_OK, or a data
 * error naming the record when it has more than one value or one longer
 * than a key holds (a key is never cut short). */
static int
key_text(struct tf_dataset *ds, const struct tf_feature *f, char *out,
         const char *file, uint64_t rec)
{
	out[0] = '\0';
	if (f->count == 0) {
		return TF_OK;
	}
	if (f->count > 1 ||
	    (f->kind == TF_KIND_BYTES && f->bytes[0].len > KEYLEN - 1)) {
		return tfi_set_error(
		    ds, TF_EFORMAT,
		    "%s: record %llu: feature '%s' %s %zu %s: --key passes one "
		    "value of up to %d bytes through",
		    file, (unsigned long long)rec, f->name,
		    f->count > 1 ? "has" : "is",
		    f->count > 1 ? f->count : f->bytes[0].len,
		    f->count > 1 ? "values" : "bytes long", KEYLEN - 1);
	}
	if (f->kind == TF_KIND_INT64) {
		snprintf(out, KEYLEN, "%lld", (long long)f->ints[0]);
	} else if (f->kind == TF_KIND_FLOAT) {
		tf_format_float(out, KEYLEN, f->floats[0]);
	} else if (f->kind == TF_KIND_BYTES) { /* (it fits: checked above) */
		memcpy(out, f->bytes[0].data, f->bytes[0].len);
		out[f->bytes[0].len] = '\0';
	}
	return TF_OK;
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
	    (f->kind == TF_KIND_BYTES && ds->cols->lmap != LMAP_VOCAB)) {
		return tfi_set_error(ds, TF_EFORMAT,
		                     "%s: record %llu: label '%s' is not one "
		                     "number",
		                     file, r, ds->cols->label);
	}
	int64_t k;
	if (ds->cols->lmap == LMAP_VOCAB) {
		if (f->kind != TF_KIND_BYTES) {
			return tfi_set_error(
			    ds, TF_EFORMAT,
			    "%s: record %llu: label '%s' is a number; the "
			    "model's classes are strings",
			    file, r, ds->cols->label);
		}
		k = tfi_columns_vocab_class(ds->cols, f->bytes[0].data,
		                            f->bytes[0].len);
		if (k < 0 && !ds->label_optional) {
			int n =
			    f->bytes[0].len > 64 ? 64 : (int)f->bytes[0].len;
			return tfi_set_error(
			    ds, TF_EFORMAT,
			    "%s: record %llu: label '%s' is '%.*s', not one "
			    "of the model's %zu classes",
			    file, r, ds->cols->label, n,
			    (const char *)f->bytes[0].data,
			    ds->cols->lvocab->n);
		}
		*label = k < 0 ? NAN : (float)k;
		return TF_OK;
	}
	double v = f->kind == TF_KIND_INT64 ? (double)f->ints[0] : f->floats[0];
	if (ds->cols->lmap == LMAP_INTS) {
		k = v == floor(v)
		        ? tfi_columns_mapped_class(ds->cols, (int64_t)v)
		        : -1;
		if (k < 0 && !ds->label_optional) {
			return tfi_set_error(
			    ds, TF_EFORMAT,
			    "%s: record %llu: label '%s' is %g, not one of "
			    "the model's classes (%lld to %lld)",
			    file, r, ds->cols->label, v,
			    (long long)ds->cols->lvals[0],
			    (long long)ds->cols->lvals[ds->cols->nlvals - 1]);
		}
		*label = k < 0 ? NAN : (float)k;
		return TF_OK;
	}
	*label = (float)v;
	if (!is_class(ds, *label)) {
		return tfi_set_error(ds, TF_EFORMAT,
		                     "%s: record %llu: label '%s' is %g, not a "
		                     "class from 0 to %lld",
		                     file, r, ds->cols->label, v,
		                     (long long)ds->cols->classes - 1);
	}
	return TF_OK;
}

/* Decode a record into row (width floats), ids (nids) and *label. */
static int missing(struct tf_dataset *ds, const char *file, uint64_t rec);

void
tf_dataset_set_augment(struct tf_dataset *ds, int flip, int shift)
{
	ds->flip = flip;
	ds->shift = shift > 0 ? shift : 0;
}

/* An image feature into its row: decoded, then as the columns' view
 * says, with the record's augmentation drawn from the seed, epoch, file
 * and record. */
static int
decode_image(struct tf_dataset *ds, const struct tf_feature *f,
             const char *file, uint64_t rec, float *dst)
{
	if (f->kind != TF_KIND_BYTES || f->count != 1) {
		return tfi_set_error(ds, TF_EFORMAT,
		                     "%s: record %llu: feature '%s' holds %zu "
		                     "%s values, not one encoded image",
		                     file, (unsigned long long)rec, f->name,
		                     f->count, tf_kind_name(f->kind));
	}
	if (ds->img == NULL && (ds->img = tf_image_new()) == NULL) {
		return tfi_set_error(ds, TF_ENOMEM, "out of memory");
	}
	int rc = tf_image_decode(ds->img, f->bytes[0].data, f->bytes[0].len);
	if (rc != TF_OK) {
		return tfi_set_error(ds, rc == TF_ENOMEM ? rc : TF_EFORMAT,
		                     "%s: record %llu: feature '%s': %s", file,
		                     (unsigned long long)rec, f->name,
		                     tf_errmsg(ds->img));
	}
	struct tf_image_view v;
	tf_columns_image(ds->cols, &v);
	if (ds->flip || ds->shift > 0) {
		struct tf_rng r;
		tf_rng_seed(&r, ds->seed ^ (ds->epoch * 0x9E3779B97F4A7C15ULL) ^
		                    ((uint64_t)ds->file << 40) ^ rec);
		uint64_t span = 2 * (uint64_t)ds->shift + 1;
		v.flip = ds->flip && (tf_rng_next(&r) >> 63);
		v.dy = (int)tf_rng_below(&r, span) - ds->shift;
		v.dx = (int)tf_rng_below(&r, span) - ds->shift;
	}
	tf_image_floats(ds->img, &v, dst);
	return TF_OK;
}

/* An id of no row of a bag's table, as a data error naming it. */
static int
unknown_id(struct tf_dataset *ds, const char *file, uint64_t rec, uint64_t id)
{
	int64_t width, vocab;
	tf_columns_bag(ds->cols, &width, &vocab);
	int in_vocab = tf_columns_bag_vocabulary(ds->cols);
	return tfi_set_error(
	    ds, TF_EFORMAT,
	    in_vocab ? "%s: record %llu: id %llu is not one of the model's "
	               "%lld ids (its id vocabulary, the schema's of the "
	               "data it was first trained on; in a model trained "
	               "afresh, --oov-buckets N hashes such ids into N rows "
	               "more, --hash-buckets N hashes all)"
	             : "%s: record %llu: id %llu is beyond the schema's "
	               "max_index %lld",
	    file, (unsigned long long)rec, (unsigned long long)id,
	    (long long)vocab - (in_vocab ? 0 : 1));
}

/* n ids (raw) and their values (vals; NULL: 1 each) as a bag's row: the
 * ids' table rows in ids, their values in row, then no id (-1) and 0 to
 * the schema's max_ids.  An id of none of an id vocabulary's rows adds
 * nothing when evaluating and is a data error naming the record when
 * training (tf_dataset_set_strict_ids()); any other id past the table
 * is one.  In place too (raw ids, vals row): the rows only move down. */
static int
bag_row(struct tf_dataset *ds, const char *file, uint64_t rec,
        const int64_t *raw, const float *vals, int64_t n, float *row,
        int64_t *ids)
{
	const struct tf_columns *cols = ds->cols;
	int64_t width, vocab, j = 0;
	tf_columns_bag(cols, &width, &vocab);
	for (int64_t k = 0; k < n; k++) {
		uint64_t u = (uint64_t)raw[k];
		float v = vals != NULL ? vals[k] : 1.0f;
		int64_t id;
		int take = tfi_bag_take(cols, u, ds->strict_ids, &id);
		if (take < 0) {
			return unknown_id(ds, file, rec, u);
		}
		if (take > 0) {
			ids[j] = id;
			row[j++] = v;
		}
	}
	for (; j < width; j++) {
		ids[j] = -1;
		row[j] = 0.0f;
	}
	return TF_OK;
}

/* A record's sparse ids and values as a bag (bag_row()), at most the
 * schema's max_ids. */
static int
decode_bag(struct tf_dataset *ds, const struct tf_feature *sids,
           const struct tf_feature *vals, const char *file, uint64_t rec,
           float *row, int64_t *ids)
{
	int64_t width, vocab;
	tf_columns_bag(ds->cols, &width, &vocab);
	if (sids->count > (size_t)width) {
		return tfi_set_error(ds, TF_EFORMAT,
		                     "%s: record %llu: %zu ids, more than the "
		                     "%lld a row the schema says (max_ids)",
		                     file, (unsigned long long)rec, sids->count,
		                     (long long)width);
	}
	if (vals->count > 0 && vals->count != sids->count) {
		return tfi_set_error(
		    ds, TF_EFORMAT, "%s: record %llu: %zu ids but %zu values",
		    file, (unsigned long long)rec, sids->count, vals->count);
	}
	return bag_row(ds, file, rec, sids->ints,
	               vals->count > 0 ? vals->floats : NULL,
	               (int64_t)sids->count, row, ids);
}

int
tfi_ds_settle(struct tf_dataset *ds)
{
	int64_t *ids = ds->pend_ids;
	if (ids == NULL) {
		return TF_OK;
	}
	ds->pend_ids = NULL;
	return bag_row(ds, ds->files[ds->pend_file], ds->pend_rec, ids,
	               ds->pend_row, ds->pend_n, ds->pend_row, ids);
}

uint64_t
tfi_ds_record(const struct tf_dataset *ds)
{
	return (ds->on_pre ? ds->stdin_rec : tf_reader_count(ds->r)) - 1;
}

/* A sequence feature into a row: its first steps (numbers into the
 * row's columns, tokens into ids), and how many there are; a record's
 * longer sequence is cut, and counted. */
static int
decode_sequence(struct tf_dataset *ds, const struct tf_feature *f,
                const char *file, uint64_t rec, float *row, int64_t *ids)
{
	const struct seqf *q = ds->cols->seq;
	int64_t fw = q->tokens ? 1 : q->step_width;
	int kind_ok =
	    q->tokens ? f->kind == (q->type == TF_COL_BYTES ? TF_KIND_BYTES
	                                                    : TF_KIND_INT64)
	              : f->kind == TF_KIND_FLOAT || f->kind == TF_KIND_INT64;
	if (!kind_ok && f->count > 0) {
		return tfi_set_error(
		    ds, TF_EFORMAT,
		    "%s: record %llu: sequence '%s' holds %s values, the "
		    "model reads %s",
		    file, (unsigned long long)rec, f->name,
		    tf_kind_name(f->kind),
		    q->tokens ? (q->type == TF_COL_BYTES ? "bytes tokens"
		                                         : "int64 tokens")
		              : "numbers");
	}
	size_t steps = f->steps > 0 ? f->steps : f->count / (size_t)fw;
	if (steps * (size_t)fw != f->count) {
		return tfi_set_error(ds, TF_EFORMAT,
		                     "%s: record %llu: sequence '%s' has %zu "
		                     "values in %zu steps, the model reads "
		                     "steps of %lld",
		                     file, (unsigned long long)rec, f->name,
		                     f->count, steps, (long long)fw);
	}
	int64_t len = (int64_t)steps;
	if (len > q->steps) {
		len = q->steps;
		ds->truncated++;
	}
	if (!q->tokens) {
		const struct input *in = &ds->cols->in[q->in];
		float *dst = row + in->col;
		for (int64_t j = 0; j < len * fw; j++) {
			dst[j] = f->kind == TF_KIND_FLOAT ? f->floats[j]
			                                  : (float)f->ints[j];
		}
	} else {
		for (int64_t j = 0; j < len; j++) {
			ids[q->col + j] =
			    f->kind == TF_KIND_BYTES
			        ? tfi_columns_category_id(&q->tok,
			                                  f->bytes[j].data,
			                                  f->bytes[j].len)
			        : tfi_columns_int_token_id(&q->tok, f->ints[j]);
		}
	}
	ids[q->len_col] = len;
	return TF_OK;
}

/* One record into a row (the fast reader first, when it may), its ids,
 * its label and its key; a data error names the file and record. */
static int
decode(struct tf_dataset *ds, const uint8_t *d, size_t n, float *row,
       int64_t *ids, float *label, char *key)
{
	if (ds->pend_ids != NULL && tfi_ds_settle(ds) != TF_OK) {
		return ds->err.code;
	}
	if (ds->fast && key == NULL &&
	    tfi_ds_fast_record(ds, d, n, row, label)) {
		ds->fast_hits++;
		return TF_OK;
	}
	if (ds->fast_bag && key == NULL &&
	    tfi_ds_fast_bag(ds, d, n, row, ids, label)) {
		ds->fast_hits++;
		return TF_OK;
	}
	const char *file = ds->files[ds->file];
	uint64_t rec = tfi_ds_record(ds);
	if (tf_example_parse(ds->ex, d, n) != TF_OK) {
		return tfi_set_error(ds, TF_EFORMAT, "%s: record %llu: %s",
		                     file, (unsigned long long)rec,
		                     tf_errmsg(ds->ex));
	}
	for (int64_t c = 0; c < ds->cols->width; c++) {
		row[c] = 0.0f;
	}
	for (size_t k = 0; k < ds->cols->ncat; k++) {
		ids[k] = -1; /* missing: no id */
	}
	const struct seqf *seq = ds->cols->seq;
	int have_seq = seq == NULL;
	if (seq != NULL) {
		for (int64_t k = seq->col; k < seq->len_col; k++) {
			ids[k] = -1; /* padding: no token */
		}
		ids[seq->len_col] = 0;
	}
	int have_label = ds->cols->label == NULL;
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
			int rc = key_text(ds, &f, key, file, rec);
			if (rc != TF_OK) {
				return rc;
			}
			key_found = 1;
		}
		if (!have_label && strcmp(f.name, ds->cols->label) == 0) {
			int rc = read_label(ds, &f, file, rec, label);
			if (rc != TF_OK) {
				return rc;
			}
			have_label = 1;
			continue;
		}
		if (!have_seq && strcmp(f.name, seq->name) == 0) {
			int rc = decode_sequence(ds, &f, file, rec, row, ids);
			if (rc != TF_OK) {
				return rc;
			}
			have_seq = 1;
			found += !seq->tokens; /* numbers are an input */
			continue;
		}
		if (ds->cols->ncat > 0 && f.kind == TF_KIND_BYTES) {
			int ci = tfi_columns_cat_index(ds->cols, f.name);
			if (ci >= 0 && f.count > 0) {
				ids[ci] = tfi_columns_category_id(
				    &ds->cols->cats[ci], f.bytes[0].data,
				    f.bytes[0].len);
			}
			continue;
		}
		if (ds->cols->sparse) {
			if (strcmp(f.name, "ids") == 0 &&
			    f.kind == TF_KIND_INT64) {
				sids = f;
				continue;
			} else if (strcmp(f.name, "values") == 0 &&
			           f.kind == TF_KIND_FLOAT) {
				vals = f;
				continue;
			}
			/* else a numeric input beside the ids, or none */
		}
		/* Inputs are sorted by name, like the Example's features. */
		int c = 1;
		while (k < ds->cols->nin &&
		       (c = strcmp(ds->cols->in[ds->by_name[k]].name, f.name)) <
		           0) {
			k++;
		}
		if (k == ds->cols->nin || c != 0) {
			continue; /* a feature the model does not use */
		}
		const struct input *in = &ds->cols->in[ds->by_name[k]];
		found++;
		if (ds->cols->image) {
			int rc = decode_image(ds, &f, file, rec, row + in->col);
			if (rc != TF_OK) {
				return rc;
			}
			continue;
		}
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
			if (ds->cols->normalize && in->mean != NULL) {
				v = (v - in->mean[j]) * in->inv_std[j];
			}
			dst[j] = v;
		}
	}
	if (ds->cols->sparse == TFI_SPARSE_BAG) {
		int rc = decode_bag(ds, &sids, &vals, file, rec, row, ids);
		if (rc != TF_OK) {
			return rc;
		}
	} else if (ds->cols->sparse) {
		if (sids.count != vals.count) {
			return tfi_set_error(ds, TF_EFORMAT,
			                     "%s: record %llu: %zu ids but %zu "
			                     "values",
			                     file, (unsigned long long)rec,
			                     sids.count, vals.count);
		}
		/* the ids' columns, then any numeric inputs' */
		int64_t space = tfi_columns_id_width(ds->cols);
		for (size_t k2 = 0; k2 < sids.count; k2++) {
			int64_t id = sids.ints[k2];
			if (id < 0 || id >= space) {
				return tfi_set_error(
				    ds, TF_EFORMAT,
				    "%s: record %llu: index %lld is beyond the "
				    "schema's max_index %lld",
				    file, (unsigned long long)rec,
				    (long long)id, (long long)space - 1);
			}
			row[id] += vals.floats[k2]; /* an id twice: summed,
			                               as a bag sums it */
		}
	}
	if (!have_label && !ds->label_optional) {
		return tfi_set_error(ds, TF_EFORMAT,
		                     "%s: record %llu: no label '%s'", file,
		                     (unsigned long long)rec, ds->cols->label);
	}
	/* (a record of no ids holds an empty list: one without any is of
	 * other data, or of a writer that leaves an empty list out) */
	int no_ids = ds->cols->sparse && sids.name == NULL;
	if ((found < ds->cols->nin || !have_seq || no_ids) &&
	    !ds->allow_missing) {
		return missing(ds, file, rec);
	}
	if (!key_found) {
		return tfi_set_error(ds, TF_EFORMAT,
		                     "%s: record %llu: no feature '%s' to pass "
		                     "through (--key)",
		                     file, (unsigned long long)rec, ds->key);
	}
	tfi_columns_fill_crosses(ds->cols, ids);
	return TF_OK;
}

#define STDIN_KEEP ((size_t)256 << 20)

/* Whether path can be read only once: standard input ("-") or, unless
 * the input is a followed stream (read once anyway), a pipe or FIFO (a
 * shell's <(...) included), a socket or a character device.  Such an
 * input is read through ds->pre and its records kept, as standard
 * input's are, for later epochs and evaluations to read again. */
static int
read_once(const struct tf_dataset *ds, const char *path)
{
	return strcmp(path, "-") == 0 ||
	       (!ds->follow && tfi_is_pipe(path, NULL));
}

int
tfi_is_pipe(const char *path, struct stat *st)
{
	struct stat own;
	int once = stat(path, &own) == 0 &&
	           (S_ISFIFO(own.st_mode) || S_ISCHR(own.st_mode) ||
	            S_ISSOCK(own.st_mode));
	if (once && st != NULL) {
		*st = own;
	}
	return once;
}

/* path, read once, is ds->pre's input: there is one such input. */
static int
claim_pre(struct tf_dataset *ds, const char *path)
{
	if (ds->pre_path != NULL) {
		return strcmp(ds->pre_path, path) == 0
		           ? TF_OK
		           : tfi_set_error(
		                 ds, TF_EINVAL,
		                 "%s and %s: only one input can be standard "
		                 "input or a pipe (its records are kept to be "
		                 "read again); give files",
		                 strcmp(ds->pre_path, "-") == 0
		                     ? "standard input"
		                     : ds->pre_path,
		                 strcmp(path, "-") == 0 ? "standard input"
		                                        : path);
	}
	ds->pre_path = strdup(path);
	return ds->pre_path != NULL
	           ? TF_OK
	           : tfi_set_error(ds, TF_ENOMEM, "out of memory");
}

/* The reader of the input read once (ds->pre_path), opened on its
 * first read. */
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
	ds->stdin_kept = !ds->follow; /* a stream is read once */
	tf_reader_set_follow(ds->pre, ds->follow);
	if (tf_reader_open(ds->pre, ds->pre_path ? ds->pre_path : "-",
	                   TF_COMPRESS_AUTO) != TF_OK) {
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

const char *
tfi_dataset_once_name(const struct tf_dataset *ds)
{
	return ds->pre_path == NULL || strcmp(ds->pre_path, "-") == 0
	           ? "standard input"
	           : ds->pre_path;
}

/* The first input of the model the record in ds->ex lacks, named. */
static int
missing(struct tf_dataset *ds, const char *file, uint64_t rec)
{
	for (size_t k = 0; k < ds->cols->nin; k++) {
		const char *name = ds->cols->in[ds->by_name[k]].name;
		struct tf_feature f;
		if (tf_example_find(ds->ex, name, &f) != TF_OK) {
			return tfi_set_error(
			    ds, TF_EFORMAT,
			    "%s: record %llu: no feature '%s', one of the "
			    "model's %zu (records of other data?  "
			    "--allow-missing fills what a record lacks with "
			    "the training mean)",
			    file, (unsigned long long)rec, name, ds->cols->nin);
		}
	}
	struct tf_feature f;
	if (ds->cols->sparse && (tf_example_find(ds->ex, "ids", &f) != TF_OK ||
	                         f.kind != TF_KIND_INT64)) {
		return tfi_set_error(
		    ds, TF_EFORMAT,
		    "%s: record %llu: no int64 feature 'ids', the model's "
		    "sparse ids (records of other data?  a record of no ids "
		    "holds an empty list; --allow-missing reads one without "
		    "as none)",
		    file, (unsigned long long)rec);
	}
	const struct seqf *q = ds->cols->seq;
	if (q != NULL && tf_example_find(ds->ex, q->name, &f) != TF_OK) {
		return tfi_set_error(ds, TF_EFORMAT,
		                     "%s: record %llu: no sequence '%s' "
		                     "(--allow-missing reads none as no steps)",
		                     file, (unsigned long long)rec, q->name);
	}
	return TF_OK;
}

void
tf_dataset_set_allow_missing(struct tf_dataset *ds, int on)
{
	ds->allow_missing = on;
}

void
tf_dataset_set_strict_ids(struct tf_dataset *ds, int on)
{
	ds->strict_ids = on;
}

void
tf_dataset_set_stream(struct tf_dataset *ds, int wait_ms)
{
	ds->follow = wait_ms > 0 ? wait_ms : 0;
}

/* ---- chunks handed out ------------------------------------------------- */

static int next_example(struct tf_dataset *ds, float *x, int64_t *ids,
                        float *label, char *key);

void
tfi_dataset_set_chunks(struct tf_dataset *ds, tfi_chunk_fn next, void *ctx)
{
	ds->chunk_next = next;
	ds->chunk_ctx = ctx;
	ds->in_chunk = ds->has_held = 0;
}

const uint64_t *
tfi_dataset_spans(const struct tf_dataset *ds, size_t *n)
{
	*n = ds->nspans;
	return ds->spans;
}

/* The next record of the chunk read, decoded; TF_EOF at its end. */
static int
chunk_record(struct tf_dataset *ds, float *row, int64_t *ids, char *key)
{
	if (!ds->in_chunk || ds->chunk_left == 0) {
		return TF_EOF;
	}
	const uint8_t *d;
	size_t n;
	int rc = tf_reader_next(ds->r, &d, &n);
	if (rc == TF_EOF) {
		return tfi_set_error(
		    ds, TF_EFORMAT,
		    "%s: ends %llu records into chunk %llu, which the chief "
		    "cut to hold %llu: the file changed since",
		    ds->files[ds->chunk.file],
		    (unsigned long long)(ds->chunk.count - ds->chunk_left),
		    (unsigned long long)ds->chunk.index,
		    (unsigned long long)ds->chunk.count);
	}
	if (rc != TF_OK) {
		return tfi_set_error(ds, rc, "%s", tf_errmsg(ds->r));
	}
	ds->chunk_left--;
	return decode(ds, d, n, row, ids, row + ds->cols->width, key);
}

/* Start reading chunk c: its file at its first record (a compressed
 * file read from its start up to it), its shuffle drawn, the records of
 * it trained already passed over. */
static int
chunk_start(struct tf_dataset *ds, const struct tfi_chunk *c)
{
	struct stat st;
	if (c->file >= ds->nfiles) {
		return tfi_set_error(
		    ds, TF_EINVAL,
		    "the chief's input %llu: this trainer was given %zu "
		    "inputs (every trainer needs the same files, in the same "
		    "order)",
		    (unsigned long long)c->file + 1, ds->nfiles);
	}
	const char *path = ds->files[c->file];
	if (stat(path, &st) != 0 || (uint64_t)st.st_size != c->bytes) {
		return tfi_set_error(
		    ds, TF_EINVAL,
		    "%s: %lld bytes here, %llu where the chief cut its input "
		    "%llu into chunks (every trainer needs the same files, in "
		    "the same order)",
		    path, (long long)(stat(path, &st) == 0 ? st.st_size : -1),
		    (unsigned long long)c->bytes,
		    (unsigned long long)c->file + 1);
	}
	ds->file = (size_t)c->file; /* decode()'s messages name it */
	ds->reading = 0;
	if (tf_reader_open(ds->r, path, TF_COMPRESS_AUTO) != TF_OK) {
		return tfi_set_error(ds, tf_errcode(ds->r), "%s",
		                     tf_errmsg(ds->r));
	}
	ds->unseekable = 1; /* the pool is the position */
	if (c->rec > 0 && tf_reader_seek(ds->r, c->off, c->rec) != TF_OK) {
		/* compressed: read from the start up to the chunk */
		const uint8_t *d;
		size_t n;
		if (tf_reader_open(ds->r, path, TF_COMPRESS_AUTO) != TF_OK) {
			return tfi_set_error(ds, tf_errcode(ds->r), "%s",
			                     tf_errmsg(ds->r));
		}
		for (uint64_t k = 0; k < c->rec; k++) {
			int rc = tf_reader_next(ds->r, &d, &n);
			if (rc != TF_OK) {
				return tfi_set_error(
				    ds, rc == TF_EOF ? TF_EFORMAT : rc,
				    "%s: %s", path,
				    rc == TF_EOF ? "fewer records than the "
				                   "chief counted"
				                 : tf_errmsg(ds->r));
			}
		}
	}
	if (c->epoch != ds->epoch) {
		ds->done = 0;
	}
	ds->epoch = c->epoch;
	tf_rng_seed(&ds->rng, ds->seed * 0x9e3779b97f4a7c15ull +
	                          c->epoch * 0xbf58476d1ce4e5b9ull + c->index +
	                          1);
	ds->chunk = *c;
	ds->in_chunk = 1;
	ds->chunk_left = c->count;
	ds->at_end = 0;
	ds->nbuf = 0;
	ds->pend_ids = NULL;
	/* the rows trained already: their place in the chunk's order */
	for (uint64_t k = 0; k < c->skip; k++) {
		int rc = next_example(ds, NULL, NULL, NULL, NULL);
		if (rc != TF_OK) {
			return rc == TF_EOF
			           ? tfi_set_error(ds, TF_EFORMAT,
			                           "chunk %llu has fewer "
			                           "than %llu records",
			                           (unsigned long long)c->index,
			                           (unsigned long long)c->skip)
			           : rc;
		}
	}
	return TF_OK;
}

/* The next chunk, started: TF_OK; TF_EAGAIN, TF_EOF, an error; or
 * NEXT_EPOCH, held, when a batch of rows rows has begun in another. */
#define NEXT_EPOCH (-1)
static int
next_chunk(struct tf_dataset *ds, size_t rows)
{
	struct tfi_chunk c;
	ds->in_chunk = 0;
	if (ds->has_held) {
		c = ds->held;
		ds->has_held = 0;
	} else {
		char msg[TFI_MSG_MAX];
		int rc = ds->chunk_next(ds->chunk_ctx, &c, msg, sizeof msg);
		if (rc == TF_EAGAIN || rc == TF_EOF) {
			return rc;
		}
		if (rc != TF_OK) {
			return tfi_set_error(ds, rc, "%s", msg);
		}
	}
	if (rows > 0 && c.epoch != ds->epoch) {
		ds->held = c;
		ds->has_held = 1;
		return NEXT_EPOCH;
	}
	return chunk_start(ds, &c);
}

/* A row of the chunk read, counted in the read's rows by chunk. */
static int
add_span(struct tf_dataset *ds)
{
	uint64_t *t = ds->nspans ? ds->spans + ds->nspans - 3 : NULL;
	if (t != NULL && t[0] == ds->chunk.epoch && t[1] == ds->chunk.index) {
		t[2]++;
		return TF_OK;
	}
	if (ds->nspans + 3 > ds->capspans) {
		size_t cap = ds->capspans ? ds->capspans * 2 : 48;
		uint64_t *p = realloc(ds->spans, cap * sizeof *p);
		if (p == NULL) {
			return tfi_set_error(ds, TF_ENOMEM, "out of memory");
		}
		ds->spans = p;
		ds->capspans = cap;
	}
	ds->spans[ds->nspans++] = ds->chunk.epoch;
	ds->spans[ds->nspans++] = ds->chunk.index;
	ds->spans[ds->nspans++] = 1;
	return TF_OK;
}

/* The next record of the epoch, decoded into shuffle buffer slot i;
 * TF_EOF at its end. */
static int
read_one(struct tf_dataset *ds, size_t i)
{
	float *row = ds->buf + i * (size_t)(ds->cols->width + 1);
	int64_t *ids = ds->ibuf + i * (size_t)ds->cols->nids;
	char *key = ds->kbuf ? ds->kbuf[i] : NULL;
	if (ds->chunk_next != NULL) {
		return chunk_record(ds, row, ids, key);
	}
	for (;;) {
		if (ds->file >= ds->nfiles) {
			return TF_EOF;
		}
		if (!ds->reading) {
			ds->on_pre =
			    ds->pre_path != NULL &&
			    strcmp(ds->files[ds->file], ds->pre_path) == 0;
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
			return decode(ds, d, n, row, ids, row + ds->cols->width,
			              key);
		}
		if (rc == TF_EAGAIN) {
			return rc; /* a stream: no record yet */
		}
		if (rc != TF_EOF) {
			return tfi_set_error(ds, rc, "%s", tf_errmsg(r));
		}
		ds->reading = 0;
		ds->file++;
	}
}

/* Bytes of the shuffle buffer made present at a time (prefault()). */
#define PREFAULT_BYTES ((size_t)2 << 20)

/*
 * Ahead of the shuffle buffer's first fill, which writes slot after slot
 * of fresh memory, the pages of the slots from i on, a few MiB at a
 * time: one madvise() instead of a page fault for each page, which in a
 * virtual machine costs several microseconds (a tenth of the time to
 * fill a buffer of rows of 784 columns).  The rows' values are unchanged.
 */
static void
prefault(struct tf_dataset *ds, size_t i)
{
	size_t w = ((size_t)ds->cols->width + 1) * sizeof(float);
	size_t ni = (size_t)ds->cols->nids * sizeof(int64_t);
	size_t need = (i + 1) * w, all = ds->shuffle * w;
	if (need <= ds->prefaulted) {
		return;
	}
	size_t to = ds->prefaulted + PREFAULT_BYTES;
	to = to < need ? need : to > all ? all : to;
	tfi_populate(ds->buf, ds->prefaulted, to);
	if (ni > 0) { /* the ids of the same rows */
		tfi_populate(ds->ibuf, ds->prefaulted / w * ni, to / w * ni);
	}
	ds->prefaulted = to;
}

/* The first n bytes from p on asked for, up to 512 (the hardware's
 * prefetcher follows a longer row's copy). */
static void
ask_bytes(const void *p, size_t n)
{
	n = n < 512 ? n : 512;
	for (size_t o = 0; o < n; o += 64) {
		__builtin_prefetch((const char *)p + o);
	}
	__builtin_prefetch((const char *)p + n - 1);
}

/* One pick more ahead, in place k: the copy's state before it kept. */
static void
ask_pick(struct tf_dataset *ds, unsigned k, size_t w, size_t ni)
{
	ds->picks_at[k] = ds->picks_rng;
	size_t i = (size_t)tf_rng_below(&ds->picks_rng, ds->nbuf);
	__builtin_prefetch(&ds->spos[i]); /* its place, for the batch's log */
	ask_bytes(ds->buf + i * w, w * sizeof *ds->buf);
	if (ni > 0) {
		ask_bytes(ds->ibuf + i * ni, ni * sizeof *ds->ibuf);
	}
}

/* The rows of the shuffle buffer the next picks will take, asked for
 * PICKS_AHEAD picks ahead: a pick is a random row of megabytes, read
 * at once.  A copy of the generator runs ahead of it, so its draws stay
 * the epoch's; the copy starts again from it when they part (a new
 * epoch, a restore). */
static void
ask_picks(struct tf_dataset *ds, size_t w, size_t ni)
{
	unsigned h = ds->picks_head;
	if (ds->picks_on &&
	    memcmp(ds->picks_at[h].s, ds->rng.s, sizeof ds->rng.s) == 0) {
		/* this pick was asked for: its place, the next one ahead */
		ask_pick(ds, h, w, ni);
		ds->picks_head = (h + 1) % PICKS_AHEAD;
		return;
	}
	ds->picks_rng = ds->rng;
	for (unsigned k = 0; k < PICKS_AHEAD; k++) {
		ask_pick(ds, k, w, ni);
	}
	ds->picks_head = 0;
	ds->picks_on = 1;
}

/* One example of the epoch through the shuffle buffer. */
static int
next_example(struct tf_dataset *ds, float *x, int64_t *ids, float *label,
             char *key)
{
	size_t w = (size_t)ds->cols->width + 1, ni = (size_t)ds->cols->nids;
	while (!ds->at_end && ds->nbuf < ds->shuffle) {
		prefault(ds, ds->nbuf);
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
	if (ds->shuffle > 1 && !ds->at_end && ds->nbuf == ds->shuffle) {
		ask_picks(ds, w, ni);
	}
	/* (the last record read may be the one taken) */
	if (ds->pend_ids != NULL && tfi_ds_settle(ds) != TF_OK) {
		return ds->err.code;
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

uint64_t
tfi_dataset_rows_epoch(const struct tf_dataset *ds)
{
	return ds->rows_epoch;
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

/* qsort_r: buffered rows by their place in the files (file, offset). */
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

/* A non-negative integer member of a JSON object (a checkpoint's input
 * state, its pool): 0, or -1 when it is not one. */
int
tfi_json_u64(json_t *o, const char *key, uint64_t *v)
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
	    tfi_json_u64(o, "file", &file) || tfi_json_u64(o, "offset", &off) ||
	    tfi_json_u64(o, "record", &rec) || tfi_json_u64(o, "seen", &seen) ||
	    tfi_json_u64(o, "shuffle", &shuffle) || shuffle != ds->shuffle ||
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
		float *row = ds->buf + j * (size_t)(ds->cols->width + 1);
		rc = decode(
		    ds, d, n, row, ds->ibuf + j * (size_t)ds->cols->nids,
		    row + ds->cols->width, ds->kbuf ? ds->kbuf[j] : NULL);
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
	size_t w = (size_t)ds->cols->width, ni = (size_t)ds->cols->nids;
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
	ds->nspans = 0;
	while (*rows < max) {
		rc = next_example(
		    ds, x + *rows * w, ni > 0 ? ids + *rows * ni : NULL,
		    y ? &y[*rows] : NULL, ds->keys ? ds->keys[*rows] : NULL);
		if (rc == TF_EOF && ds->chunk_next != NULL) {
			rc = next_chunk(ds, *rows);
			if (rc == TF_OK) {
				continue;
			}
			if (rc == NEXT_EPOCH) {
				rc = TF_OK; /* a batch does not cross epochs */
			}
			break;
		}
		if (rc == TF_OK && ds->chunk_next != NULL &&
		    (rc = add_span(ds)) != TF_OK) {
			break;
		}
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
		ds->rows_epoch = ds->epoch;
		(*rows)++;
	}
	if ((rc == TF_EOF || rc == TF_EAGAIN) && *rows > 0) {
		rc = TF_OK; /* the rows there are (a stream waits no more) */
	}
	return rc;
}

/* ---- categorical columns ------------------------------------------------ */

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

uint64_t
tf_dataset_truncated(const struct tf_dataset *ds)
{
	return ds->truncated;
}

int
tf_dataset_batch(struct tf_dataset *ds, struct tf_batch *b, size_t capacity)
{
	return tf_batch_init(b, capacity, ds->cols->width, ds->cols->nids) ==
	               TF_OK
	           ? TF_OK
	           : tfi_set_error(ds, TF_ENOMEM, "out of memory");
}

int
tf_dataset_read(struct tf_dataset *ds, struct tf_batch *b)
{
	b->rows = 0;
	if (b->width != ds->cols->width || b->id_width != ds->cols->nids) {
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
		int in = read_once(ds, files[i]);
		if (in && claim_pre(ds, files[i]) != TF_OK) {
			rc = ds->err.code;
			break;
		}
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
		rc = tf_columns_parse_schema(ds->cols, tf_schema_text(s),
		                             "(inferred schema)");
		if (rc != TF_OK) {
			tfi_set_error(ds, rc, "%s", tf_errmsg(ds->cols));
		}
	}
	tf_schema_free(s);
	tf_reader_free(r);
	tf_example_free(ex);
	tf_survey_free(sv);
	return rc;
}
