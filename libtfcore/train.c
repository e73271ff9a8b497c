/*
 * train.c - the training loop (the model specs it trains are spec.c's).
 *
 * A run (struct run) starts from its settings (tf/settings.h) and either
 * a new model or the latest checkpoint, whose header (tf/checkpoint.h)
 * then is the run's state: it is updated step by step and written as is
 * by save().  A reader thread decodes batches ahead of the step; the
 * dataset is deterministic per (seed, epoch), so a resume seeks to the
 * saved position and reads what one uninterrupted run would have read.
 * The reader thread is prefetch.c's, the towers of --threads towers.c's
 * (train_private.h).
 * Loading a trained model for evaluation or serving is model.c's.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "kernels/kernels.h"
#include "pool.h"
#include "tf/batch.h"
#include "tf/checkpoint.h"
#include "tf/cluster.h"
#include "tf/events.h"
#include "tf/file.h"
#include "tf/image.h"
#include "tf/metrics.h"
#include "tf/ps.h"
#include "tf/queue.h"
#include "tf/rng.h"
#include "tf/schema.h"
#include "tf/train.h"
#include "train_private.h"

/* ---- the trainer ----------------------------------------------------------
 */

struct tf_trainer {
	struct tfi_handle err;
};

struct tf_trainer *
tf_trainer_new(void)
{
	return calloc(1, sizeof(struct tf_trainer));
}

void
tf_trainer_free(struct tf_trainer *t)
{
	free(t);
}

struct run {
	int continued; /* a run resumed to go on, not a new one */
	struct tf_trainer *t;
	const struct tf_train_config *cfg;
	const struct tf_train_sink *sink;
	struct tf_dataset *ds;
	struct tf_columns *cols; /* ds's: what a row holds */
	struct tf_graph *g;
	struct tf_optim *o;
	struct tf_ckpt *ck;
	/* The run's state as its checkpoints record it: model, optimizer,
	 * step, input position, validation metrics (tf/checkpoint.h). */
	struct tf_ckpt_header h;
	int task;
	int64_t classes;
	struct tf_metrics *vm; /* validation */
	struct tf_dataset *vd;
	struct tf_batch vb;   /* ... its rows */
	struct tf_events *ev; /* TensorBoard, with --logdir */
	char *sig;            /* the inputs' signature (inputs_signature) */
	char *val_text;       /* the last validation metrics as members */
	char *user_spec;      /* --model-file's text (model custom) */
	/* distributed: the ps tasks, this trainer's rank, the chief */
	struct tf_ps_client *cl;
	uint32_t rank, trainers;
	int chief;
	uint64_t val_step; /* the step they were measured at */
	/* the reader thread and the batch trained last (input_state()) */
	struct prefetch *pf;
	struct batch *cur;
	const char *queue; /* a stream of a queue directory (tf/queue.h) */
	struct sparse *sp; /* row-sparse exchange or steps, or NULL */
	int row_steps;     /* the optimizer here updates the rows touched */
	struct tfi_linear *lin; /* a sparse lr's steps without the graph */
	struct tf_device *dev;  /* where the model trains (--device) */
	char *fallbacks_said;   /* the kernels said to run on the CPU */
	/* chunks handed out (--chunk-size): whether, whether this trainer
	 * has said it waits for one (counted as done meanwhile), and
	 * whether ps 0 told the reader it went on without this process */
	int chunked, idle;
	atomic_int pool_lost;
};

static int input_state(struct run *r);

static int fail(struct run *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The trainer's error, set on its handle; returns code. */
static int
fail(struct run *r, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tfi_set_errorv(r->t, code, fmt, ap);
	va_end(ap);
	return code;
}

/* Whether this process reports, validates and checkpoints: the chief of
 * a distributed run, or the one process. */
static int
leads(const struct run *r)
{
	return r->cl == NULL || r->chief;
}

/* A block of the graph as the host may read and write it (a device's
 * copied; NULL out of memory). */
static float *
host_block(struct run *r, int which, int fetch)
{
	return tfi_graph_host(r->g, which, fetch);
}

static int write_checkpoint(struct run *r);

/* A checkpoint of the step: header, parameters, state and the
 * optimizer's slots, written atomically (the leader only). */
static int
save(struct run *r)
{
	if (r->cfg->checkpoint_dir == NULL || !leads(r)) {
		return TF_OK;
	}
	tfi_linear_flush(r->lin, r->g, r->o); /* a sparse lr's rows */
	/* A distributed run's chief: every shard's values and slots at one
	 * step. */
	if (r->cl != NULL &&
	    (tfi_ps_snapshot(r->cl, host_block(r, TFI_PARAMS, 1), r->o,
	                     &r->h.step, &r->h.trainers,
	                     &r->h.ntrainers) != TF_OK ||
	     tfi_graph_commit(r->g, TFI_PARAMS) != TF_OK)) {
		return fail(
		    r, tf_errcode(r->cl) ? tf_errcode(r->cl) : TF_EINTERNAL,
		    "%s",
		    tf_errcode(r->cl) ? tf_errmsg(r->cl) : tf_errmsg(r->g));
	}
	if (r->cl != NULL && r->chunked) { /* the pool at that step */
		free(r->h.pool);
		r->h.pool = tfi_ps_snapshot_pool(r->cl);
	}
	/* The generator of dropout masks, to continue where it stood. */
	memcpy(r->h.rng, tf_graph_rng(r->g)->s, sizeof r->h.rng);
	r->h.has_rng = 1;
	int rc0 = input_state(r);
	if (rc0 != TF_OK) {
		return rc0;
	}
	tfi_ps_aside(r->cl, 1); /* writing it: the ps tasks need not wait */
	rc0 = write_checkpoint(r);
	tfi_ps_aside(r->cl, 0);
	if (rc0 != TF_OK) {
		return rc0;
	}
	/* A queue's segments before the checkpoint's place are trained:
	 * they go. */
	uint64_t gone;
	if (r->queue != NULL && r->cur != NULL && r->cur->mark.reading &&
	    tf_queue_release(r->queue, r->cur->mark.off, &gone) != TF_OK &&
	    r->sink->note != NULL) {
		r->sink->note(r->sink->ctx, "the queue's trained segments "
		                            "could not be removed");
	}
	return TF_OK;
}

/* The checkpoint's blocks, as the host reads them, written atomically. */
static int
write_checkpoint(struct run *r)
{
	/* The blocks as the host reads them: a device's downloaded. */
	const float *params = host_block(r, TFI_PARAMS, 1);
	const float *state = host_block(r, TFI_STATE, 1);
	float *const *slots = tfi_optim_host_slots(r->o, 1);
	if (params == NULL || state == NULL || slots == NULL) {
		return fail(r, TF_ENOMEM, "out of memory");
	}
	tf_ckpt_clear(r->ck);
	int rc = tf_ckpt_put_header(r->ck, &r->h);
	rc = rc ? rc
	        : tf_ckpt_add(r->ck, "params", params, tf_graph_nparams(r->g));
	rc =
	    rc ? rc : tf_ckpt_add(r->ck, "state", state, tf_graph_nstate(r->g));
	for (unsigned i = 0; rc == TF_OK && i < tf_optim_nslots(r->o); i++) {
		char name[32];
		snprintf(name, sizeof name, "slot%u", i);
		rc = tf_ckpt_add(r->ck, name, slots[i], tf_graph_nparams(r->g));
	}
	if (rc == TF_OK) {
		rc = tf_ckpt_save(r->ck, r->cfg->checkpoint_dir, r->h.step,
		                  r->cfg->keep);
	}
	if (rc != TF_OK) {
		return fail(r, tf_errcode(r->ck), "%s", tf_errmsg(r->ck));
	}
	return TF_OK;
}

/* Copy a checkpoint block into place; its size must match. */
static int
restore(struct run *r, const char *name, float *dst, size_t n)
{
	if (tf_ckpt_read(r->ck, name, dst, n) != TF_OK) {
		return fail(r, TF_EFORMAT, "%s", tf_errmsg(r->ck));
	}
	return TF_OK;
}

/*
 * Row-sparse exchange: in a distributed run of a model with embedding
 * tables (and no L1/L2, which touches every row), a step sends the
 * gradient of the dense parameters and of the table rows its batch's
 * ids name, and asks back the dense parameters and the rows the next
 * batch names: bytes follow the rows touched, not the tables' size.  A
 * trainer's copy of the other rows is stale, and never read: the chief
 * takes every value from the ps tasks before it validates or saves.
 */
struct table {
	uint64_t off;                    /* its first value in the parameters */
	int64_t vocab, dim, begin, size; /* the ids' columns it reads */
};

struct sparse {
	struct table *t;
	size_t nt;
	struct tfi_ranges dense; /* the parameters outside the tables */
	struct tfi_ranges grad, want;
	struct tfi_ranges rows; /* a pass's ranges before sorting */
	struct tfi_rowmap seen; /* the rows a pass took (rowmap.c) */
	int64_t idw;            /* ids a row */
	/* the optimizer's slots (a one-process step): a new row's are
	 * asked for as it is met (sparse_ranges()) */
	float *slots[8];
	unsigned nslots;
};

/* The row-sparse exchange's buffers (embedding tables over tf-ps). */
static void
sparse_free(struct sparse *sp)
{
	if (sp == NULL) {
		return;
	}
	free(sp->t);
	tfi_rowmap_release(&sp->seen);
	free(sp->dense.v);
	free(sp->grad.v);
	free(sp->want.v);
	free(sp->rows.v);
	free(sp);
}

/* The embedding tables of g, or NULL (none, or no memory: dense). */
static struct sparse *
sparse_plan(struct tf_graph *g)
{
	struct sparse *sp = calloc(1, sizeof *sp);
	if (sp == NULL) {
		return NULL;
	}
	float *params = tf_graph_params(g);
	sp->idw = tf_graph_ids_width(g);
	for (int i = 0; i < tf_graph_nnodes(g); i++) {
		const char *op = tf_graph_node_op(g, i);
		if (op == NULL || strcmp(op, "embedding") != 0) {
			continue;
		}
		const char *name, *b = tf_graph_node_attr(g, i, "begin"),
		                  *z = tf_graph_node_attr(g, i, "size");
		int64_t rows, cols;
		int state;
		float *w =
		    tf_graph_node_param(g, i, 0, &name, &rows, &cols, &state);
		struct table *t =
		    w ? realloc(sp->t, (sp->nt + 1) * sizeof *t) : NULL;
		if (t == NULL) {
			sparse_free(sp);
			return NULL;
		}
		sp->t = t;
		t = &sp->t[sp->nt];
		t->off = (uint64_t)(w - params);
		t->vocab = rows;
		t->dim = cols;
		t->begin = b ? strtoll(b, NULL, 10) : 0;
		t->size = z ? strtoll(z, NULL, 10) : sp->idw - t->begin;
		sp->nt++;
	}
	if (sp->nt == 0) {
		sparse_free(sp);
		return NULL;
	}
	/* the dense parameters: everything between the tables */
	uint64_t at = 0, n = tf_graph_nparams(g);
	for (;;) {
		uint64_t next = n, end = n;
		for (size_t k = 0; k < sp->nt; k++) {
			if (sp->t[k].off >= at && sp->t[k].off < next) {
				next = sp->t[k].off;
				end = next +
				      (uint64_t)(sp->t[k].vocab * sp->t[k].dim);
			}
		}
		if (next > at &&
		    tfi_ranges_add(&sp->dense, at, next - at) != 0) {
			sparse_free(sp);
			return NULL;
		}
		if (next == n) {
			break;
		}
		at = end;
	}
	return sp;
}

static int
by_start(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The ranges of a batch: the dense parameters and the rows its ids
 * name, ascending, adjoining ones joined (when sorted is set: in the
 * order met otherwise, for the optimizer here). */
static int
sparse_ranges(struct sparse *sp, const struct tf_batch *b,
              struct tfi_ranges *out, int sorted)
{
	size_t ids = b != NULL && b->ids != NULL
	                 ? b->rows * (size_t)b->id_width * sp->nt
	                 : 0;
	if (tfi_rowmap_start(&sp->seen, ids) != 0) {
		return TF_ENOMEM;
	}
	int fresh;
	sp->rows.n = 0;
	for (size_t k = 0; k < sp->nt; k++) {
		struct table *t = &sp->t[k];
		int64_t end = t->begin + t->size;
		for (size_t r = 0; b != NULL && b->ids != NULL && r < b->rows;
		     r++) {
			const int64_t *row = b->ids + r * (size_t)b->id_width;
			for (int64_t c = t->begin; c < end && c < b->id_width;
			     c++) {
				int64_t id = row[c];
				if (id < 0 || id >= t->vocab) {
					continue;
				}
				uint64_t at = t->off + (uint64_t)(id * t->dim);
				(void)tfi_rowmap_place(&sp->seen, at, 0,
				                       &fresh);
				if (!fresh) {
					continue;
				}
				for (unsigned j = 0; j < sp->nslots; j++) {
					__builtin_prefetch(sp->slots[j] + at);
				}
				if (tfi_ranges_add(&sp->rows, at,
				                   (uint64_t)t->dim) != 0) {
					return TF_ENOMEM;
				}
			}
		}
	}
	for (size_t i = 0; i < sp->dense.n; i += 2) {
		if (tfi_ranges_add(&sp->rows, sp->dense.v[i],
		                   sp->dense.v[i + 1]) != 0) {
			return TF_ENOMEM;
		}
	}
	if (!sorted) {
		struct tfi_ranges t = *out;
		*out = sp->rows;
		sp->rows = t;
		return TF_OK;
	}
	qsort(sp->rows.v, sp->rows.n / 2, 2 * sizeof *sp->rows.v, by_start);
	out->n = 0;
	for (size_t i = 0; i < sp->rows.n; i += 2) {
		if (tfi_ranges_add(out, sp->rows.v[i], sp->rows.v[i + 1]) !=
		    0) {
			return TF_ENOMEM;
		}
	}
	return TF_OK;
}

/* Embedding tables of this many values or more are large: a step that
 * updates (or hands over) every row of them costs more than its own
 * work, and a note says so. */
#define LARGE_TABLES 100000

/* The values of g's embedding tables. */
static uint64_t
table_values(struct tf_graph *g)
{
	uint64_t n = 0;
	for (int i = 0; i < tf_graph_nnodes(g); i++) {
		const char *op = tf_graph_node_op(g, i), *name;
		int64_t rows, cols;
		int state;
		if (op != NULL && strcmp(op, "embedding") == 0 &&
		    tf_graph_node_param(g, i, 0, &name, &rows, &cols, &state)) {
			n += (uint64_t)(rows * cols);
		}
	}
	return n;
}

/* Whether every embedding table of g starts at zeros (FTRL leaves an
 * untouched row of one as it is). */
static int
tables_start_zero(struct tf_graph *g)
{
	for (int i = 0; i < tf_graph_nnodes(g); i++) {
		const char *op = tf_graph_node_op(g, i);
		const char *init = tf_graph_node_attr(g, i, "init");
		if (op != NULL && strcmp(op, "embedding") == 0 &&
		    (init == NULL || strcmp(init, "zeros") != 0)) {
			return 0;
		}
	}
	return 1;
}

/* A row-sparse step here: the optimizer over the dense parameters and
 * the rows the batch touched (sparse_ranges() listed them before the
 * graph ran), whose gradient it zeroes again (the graph leaves the rest
 * at zero). */
static int
row_step(struct run *r, float *params, float *grads, double lr)
{
	struct sparse *sp = r->sp;
	if (tfi_optim_step_ranges(r->o, params, grads, (float)lr, &sp->grad) !=
	    TF_OK) {
		return fail(r, tf_errcode(r->o), "%s", tf_errmsg(r->o));
	}
	return TF_OK;
}

/* The reader of evaluation files (set up once, the training schema's),
 * opened on file. */
static int
open_evaluation(struct run *r, const char *file)
{
	if (r->vd == NULL) {
		/* Set up once; each evaluation reopens the file. */
		r->vd = tf_dataset_new();
		if (r->vd == NULL) {
			return fail(r, TF_ENOMEM, "out of memory");
		}
		struct tf_columns *vc = tf_dataset_columns(r->vd);
		tf_columns_set_normalize(vc, r->cfg->normalize);
		tf_dataset_set_allow_missing(r->vd, r->cfg->allow_missing);
		int rc = tf_columns_parse_schema(
		    vc, tf_columns_schema_text(r->cols), "schema");
		if (rc == TF_OK && r->h.crosses != NULL) {
			rc = tf_columns_set_categorical(vc, r->h.crosses,
			                                r->h.buckets);
		}
		if (rc != TF_OK) {
			return fail(r, rc, "%s", tf_errmsg(vc));
		}
		rc = tf_dataset_batch(r->vd, &r->vb, r->cfg->batch_size);
		if (rc != TF_OK) {
			return fail(r, rc, "%s", tf_errmsg(r->vd));
		}
		if (r->cfg->label != NULL) {
			tf_columns_set_label(vc, r->cfg->label, r->task,
			                     r->classes);
		}
	}
	const char *files[] = {file};
	int rc = tf_dataset_open(r->vd, files, 1, 1, 1, 0);
	return rc == TF_OK ? TF_OK : fail(r, rc, "%s", tf_errmsg(r->vd));
}

/* Evaluate the graph on a file into m (the evaluation loop of
 * tf_model_evaluate(), over this run's graph). */
static int
evaluate(struct run *r, const char *file, struct tf_metrics *m)
{
	int rc = open_evaluation(r, file);
	return rc != TF_OK ? rc
	                   : tfi_evaluate(r->g, tfi_prediction_node(r->task),
	                                  r->vd, &r->vb, m, r->t);
}

/* --validate's file, opened and its first batch read against the
 * schema before the first step: a missing or mismatched file found only
 * when the run ends would cost the whole run. */
static int
check_validation(struct run *r)
{
	const char *file = r->cfg->validate;
	if (file == NULL || !leads(r) || strcmp(file, "-") == 0) {
		return TF_OK; /* standard input: read once, at the end */
	}
	int rc = open_evaluation(r, file);
	if (rc == TF_OK) {
		rc = tf_dataset_read(r->vd, &r->vb);
		rc = rc == TF_EOF ? TF_OK
		     : rc != TF_OK
		         ? fail(r, rc, "--validate: %s", tf_errmsg(r->vd))
		         : TF_OK;
	}
	return rc;
}

/* --validate apart from the training inputs where one reads what the
 * other does once: standard input, or the same pipe, would be split
 * between them (the validation seeing none of it, or half records).
 * Said before anything is opened (a FIFO's open waits for a writer). */
static int
validation_apart(struct run *r)
{
	const struct tf_train_config *cfg = r->cfg;
	const char *v = cfg->validate;
	struct stat vs;
	if (v == NULL) {
		return TF_OK;
	}
	int in = strcmp(v, "-") == 0;
	if (!in && !tfi_is_pipe(v, &vs)) {
		return TF_OK;
	}
	size_t n = cfg->ninputs ? cfg->ninputs : 1;
	for (size_t i = 0; i < n; i++) {
		const char *f = cfg->ninputs ? cfg->inputs[i] : "-";
		struct stat st;
		if (in ? strcmp(f, "-") == 0
		       : strcmp(f, "-") != 0 && stat(f, &st) == 0 &&
		             st.st_dev == vs.st_dev && st.st_ino == vs.st_ino) {
			return fail(r, TF_EINVAL,
			            "--validate %s: %s is also the training "
			            "input, and it can be read once only: give "
			            "a file for one of them",
			            v, in ? "standard input" : "this pipe");
		}
	}
	return TF_OK;
}

/* Add L1/L2 penalties to the gradients. */
static void
regularize(float *g, const float *w, size_t n, double l1, double l2)
{
	if (l1 == 0 && l2 == 0) {
		return;
	}
	float a = (float)l1, b = (float)l2;
	for (size_t i = 0; i < n; i++) {
		g[i] += b * w[i] + (w[i] > 0 ? a : w[i] < 0 ? -a : 0);
	}
}

/* The penalties on the weights (dense kernels, embedding tables), not on
 * biases or batch-norm scales, as Keras's kernel regularisers and
 * scikit-learn do. */
static int
regularize_weights(struct tf_graph *g, double l1, double l2)
{
	if (l1 == 0 && l2 == 0) {
		return TF_OK;
	}
	/* on the host: a device's parameters and gradients copied, the
	 * gradients put back */
	float *params = tf_graph_params(g);
	float *hp = tfi_graph_host(g, TFI_PARAMS, 1);
	float *hg = tfi_graph_host(g, TFI_GRADS, 1);
	if (hp == NULL || hg == NULL) {
		return TF_ENOMEM;
	}
	for (int i = 0; i < tf_graph_nnodes(g); i++) {
		for (int k = 0; k < tf_graph_node_nparams(g, i); k++) {
			const char *name;
			int64_t rows, cols;
			int state;
			float *w = tf_graph_node_param(g, i, k, &name, &rows,
			                               &cols, &state);
			if (w == NULL || state ||
			    (strcmp(name, "kernel") != 0 &&
			     strcmp(name, "table") != 0)) {
				continue;
			}
			regularize(hg + (w - params), hp + (w - params),
			           (size_t)(rows * cols), l1, l2);
		}
	}
	return tfi_graph_commit(g, TFI_GRADS);
}

/* Validation metrics at this step (measured once a step); kept for the
 * checkpoint header (tf-export --if-better). */
static int
validate(struct run *r)
{
	if (r->val_text != NULL && r->val_step == r->h.step) {
		return TF_OK;
	}
	tfi_linear_flush(r->lin, r->g, r->o); /* a sparse lr's rows */
	/* Row-sparse over ps tasks: this trainer's copy of the rows it did
	 * not touch lately is stale; take every value first.  (In one
	 * process, row_steps, the rows are the model's own.) */
	uint64_t at;
	if (r->sp != NULL && r->cl != NULL &&
	    (tfi_ps_pull(r->cl, host_block(r, TFI_PARAMS, 1), &at,
	                 r->cfg->peer_timeout > 0 ? r->cfg->peer_timeout
	                                          : 60) != TF_OK ||
	     tfi_graph_commit(r->g, TFI_PARAMS) != TF_OK)) {
		return fail(r, TF_EUNAVAIL, "%s", tf_errmsg(r->cl));
	}
	if (r->vd != NULL && tf_dataset_stdin_once(r->vd)) {
		/* kept in part: a second pass would be a part, silently */
		return fail(r, TF_EINVAL,
		            "--validate: %s held more than 256 MiB of records "
		            "and can be read once only: give a file",
		            tfi_dataset_once_name(r->vd));
	}
	tfi_ps_aside(r->cl, 1); /* the ps tasks need not wait */
	int rc = evaluate(r, r->cfg->validate, r->vm);
	tfi_ps_aside(r->cl, 0);
	free(r->val_text);
	r->val_text = NULL;
	if (rc == TF_OK) {
		rc = tf_metrics_json(r->vm, 0, &r->val_text);
	}
	if (rc != TF_OK) {
		return rc;
	}
	r->val_step = r->h.step;
	free(r->h.validation);
	r->h.validation = malloc(strlen(r->val_text) + 3);
	if (r->h.validation == NULL) {
		return fail(r, TF_ENOMEM, "out of memory");
	}
	sprintf(r->h.validation, "{%s}", r->val_text);
	return TF_OK;
}

/* A checkpoint just written handed to the sink to publish (a stream's
 * exports); its failure stops the run. */
static int
published(struct run *r)
{
	if (r->sink->published == NULL || r->cfg->checkpoint_dir == NULL ||
	    !leads(r)) {
		return TF_OK;
	}
	char why[TFI_MSG_MAX];
	why[0] = 0;
	int rc = r->sink->published(r->sink->ctx, tf_ckpt_path(r->ck),
	                            r->h.step, r->h.examples, why, sizeof why);
	return rc == TF_OK ? TF_OK : fail(r, rc, "%s", why);
}

/* When the run checkpoints next. */
struct schedule {
	uint64_t next_save;  /* --save-every's step (0: none) */
	uint64_t saved_step; /* of the last checkpoint */
	double last_save;    /* its time */
	double last_publish; /* a stream's last publish */
	uint64_t published;  /* its step */
};

/*
 * A checkpoint when one is due: --save-every steps, --save-every-secs,
 * when the sink asks for one now, or, for a run that publishes, each
 * publish_every seconds (and when asked), validated
 * first when there is a validation file (the checkpoint carries the
 * metrics) and handed to the sink's published().
 */
static int
save_on_schedule(struct run *r, struct schedule *s)
{
	const struct tf_train_config *cfg = r->cfg;
	double now = tfi_now();
	int asked =
	    r->sink->save_now != NULL && r->sink->save_now(r->sink->ctx);
	int publish = cfg->publish_every > 0 &&
	              (asked || now - s->last_publish >= cfg->publish_every) &&
	              r->h.step != s->published;
	int due = (cfg->save_every > 0 && r->h.step >= s->next_save) ||
	          (cfg->save_every_secs > 0 &&
	           now - s->last_save >= cfg->save_every_secs);
	if (!publish && (!(due || asked) || r->h.step == s->saved_step)) {
		return TF_OK;
	}
	int rc = publish && cfg->validate != NULL ? validate(r) : TF_OK;
	if (rc != TF_OK || (rc = save(r)) != TF_OK) {
		return rc;
	}
	s->saved_step = r->h.step;
	s->last_save = tfi_now();
	s->next_save = cfg->save_every > 0
	                   ? (r->h.step / cfg->save_every + 1) * cfg->save_every
	                   : 0;
	if (publish) {
		s->last_publish = s->last_save;
		s->published = r->h.step;
		return published(r);
	}
	return TF_OK;
}

/* One JSON line of metrics (and validation, when asked) to the sink,
 * the same figures to TensorBoard's event file; final: the run's last. */
static int
report(struct run *r, struct tf_metrics *m, double lr, double eps, int final)
{
	char *train = NULL;
	const char *val = NULL;
	int rc = tf_metrics_json(m, 0, &train);
	if (rc == TF_OK && r->cfg->validate != NULL) {
		rc = validate(r);
		val = r->val_text;
	}
	if (rc == TF_OK && r->ev != NULL && tf_metrics_count(m) > 0) {
		const char *tags[] = {"train/loss", "train/accuracy",
		                      "train/auc", "learning_rate",
		                      "examples_per_sec"};
		double v[] = {tf_metrics_loss(m), tf_metrics_accuracy(m),
		              tf_metrics_auc(m), lr, eps};
		rc = tf_events_scalars(r->ev, (int64_t)r->h.step, tags, v, 5);
	}
	if (rc == TF_OK && r->ev != NULL && val != NULL) {
		const char *tags[] = {"validation/loss", "validation/accuracy",
		                      "validation/auc"};
		double v[] = {tf_metrics_loss(r->vm),
		              tf_metrics_accuracy(r->vm),
		              tf_metrics_auc(r->vm)};
		rc = tf_events_scalars(r->ev, (int64_t)r->h.step, tags, v, 3);
	}
	if (rc != TF_OK && r->ev != NULL && tf_errcode(r->ev) != TF_OK) {
		free(train);
		return fail(r, tf_errcode(r->ev), "%s", tf_errmsg(r->ev));
	}
	if (rc != TF_OK) {
		free(train);
		return rc == TF_ENOMEM ? fail(r, rc, "out of memory") : rc;
	}
	char head[256];
	snprintf(head, sizeof head,
	         "{%s\"step\":%llu,\"epoch\":%llu,\"examples_total\":%llu,",
	         final ? "\"final\":true," : "", (unsigned long long)r->h.step,
	         (unsigned long long)r->h.epoch + 1, /* from 1, as said */
	         (unsigned long long)r->h.examples);
	char tail[160];
	snprintf(tail, sizeof tail,
	         ",\"learning_rate\":%.9g,\"examples_per_sec\":%.1f", lr, eps);
	struct tfi_buf b = {0};
	rc = tfi_json_put(&b, head, strlen(head)) ||
	     tfi_json_put(&b, train, strlen(train)) ||
	     tfi_json_put(&b, tail, strlen(tail));
	if (val != NULL) {
		rc = rc || tfi_json_put(&b, ",\"validation\":{", 15) ||
		     tfi_json_put(&b, val, strlen(val)) ||
		     tfi_json_put(&b, "}", 1);
	}
	if (final && r->cfg->checkpoint_dir != NULL) {
		json_t *p = json_string(tf_ckpt_path(r->ck));
		char *ps = p ? json_dumps(p, JSON_ENCODE_ANY) : NULL;
		json_decref(p);
		rc = rc || ps == NULL ||
		     tfi_json_put(&b, ",\"checkpoint\":", 14) ||
		     tfi_json_put(&b, ps, strlen(ps));
		free(ps);
	}
	/* A distributed run's chief: what the exchange cost it. */
	if (final && r->cl != NULL) {
		char *x = tfi_ps_stats(r->cl);
		char who[96];
		snprintf(who, sizeof who,
		         ",\"cluster\":{\"trainers\":%u,\"ps\":%zu},"
		         "\"exchange\":",
		         r->trainers, tf_cluster_count(r->cfg->cluster, "ps"));
		rc = rc || x == NULL || tfi_json_put(&b, who, strlen(who)) ||
		     tfi_json_put(&b, x, strlen(x));
		free(x);
		/* chunks: each trainer's records handed out, applied,
		 * given back; each epoch's records trained */
		char *pool = r->chunked ? tfi_ps_pool_status(r->cl) : NULL;
		rc = rc ||
		     (pool != NULL && (tfi_json_put(&b, ",\"pool\":", 8) ||
		                       tfi_json_put(&b, pool, strlen(pool))));
		free(pool);
	}
	/* The final line says which settings made it (sweeps tell their
	 * runs apart by it). */
	if (final && r->cfg->settings != NULL) {
		rc = rc || tfi_json_put(&b, ",\"settings\":", 12) ||
		     tfi_json_put(&b, r->cfg->settings,
		                  strlen(r->cfg->settings));
	}
	rc = rc || tfi_json_put(&b, "}", 1);
	free(train);
	if (rc) {
		tfi_buf_free(&b);
		return fail(r, TF_ENOMEM, "out of memory");
	}
	if (r->sink->line != NULL) {
		r->sink->line(r->sink->ctx, (char *)b.data);
	}
	tfi_buf_free(&b);
	return TF_OK;
}

/* A stream's one input when it is a queue directory (tf/queue.h). */
static const char *
queue_input(const struct tf_train_config *cfg)
{
	struct stat st;
	return cfg->stream && cfg->ninputs == 1 &&
	               stat(cfg->inputs[0], &st) == 0 && S_ISDIR(st.st_mode)
	           ? cfg->inputs[0]
	           : NULL;
}

/* The schema of the data to read: --schema, or the first input's sidecar
 * when it has one (NULL: none, as for standard input or records written
 * by another tool). */
static const char *
data_schema(const struct tf_train_config *cfg, char *buf, size_t size)
{
	if (cfg->schema != NULL) {
		return cfg->schema;
	}
	if (queue_input(cfg) != NULL) {
		/* a queue: tf-serve writes the model's schema into it */
		snprintf(buf, size, "%s/schema.json", cfg->inputs[0]);
		return access(buf, F_OK) == 0 ? buf : NULL;
	}
	if (cfg->ninputs > 0 && strcmp(cfg->inputs[0], "-") != 0) {
		tf_schema_sidecar(cfg->inputs[0], buf, size);
		return access(buf, F_OK) == 0 ? buf : NULL;
	}
	return NULL;
}

/* A stream trains the rows it has when no record came for this long. */
#define STREAM_WAIT_MS 200

/* Records read from this many at the most to infer a schema. */
#define INFER_RECORDS 10000

/* No schema for the data: one inferred from its first records, said in
 * one note, and kept in the checkpoints like any schema. */
static int
infer(struct run *r)
{
	const struct tf_train_config *cfg = r->cfg;
	uint64_t n = 0;
	char skipped[512];
	int rc = tf_dataset_infer_schema(r->ds, cfg->inputs, cfg->ninputs,
	                                 cfg->label, INFER_RECORDS, &n, skipped,
	                                 sizeof skipped);
	if (rc != TF_OK) {
		return fail(r, rc,
		            "%s has no schema, and none could be inferred: "
		            "%s",
		            cfg->ninputs ? cfg->inputs[0] : "-",
		            tf_errmsg(r->ds));
	}
	if (r->sink->note != NULL) {
		char msg[1400], what[160];
		const char *label = tf_columns_label_name(r->cols);
		struct tf_image_view v;
		struct tf_sequence_view sv;
		int64_t bw, bv;
		if (tf_columns_image(r->cols, &v)) {
			snprintf(what, sizeof what, "images read as %dx%dx%d",
			         v.height, v.width, v.channels);
		} else if (tf_columns_sequence(r->cols, &sv)) {
			int64_t w = tf_columns_width(r->cols) -
			            (sv.tokens ? 0 : sv.steps * sv.step_width);
			snprintf(
			    what, sizeof what,
			    "%lld feature%s and a sequence '%.40s' of up to "
			    "%lld %s",
			    (long long)w, w == 1 ? "" : "s", sv.name,
			    (long long)sv.steps,
			    sv.tokens ? "tokens" : "steps");
		} else if (tf_columns_bag(r->cols, &bw, &bv)) {
			int64_t oov = tf_columns_bag_oov(r->cols);
			char more[64] = "";
			if (oov > 0) {
				snprintf(more, sizeof more,
				         ", %lld out-of-vocabulary buckets",
				         (long long)oov);
			}
			snprintf(what, sizeof what,
			         "sparse ids, up to %lld a row, %s %lld%s%s",
			         (long long)bw,
			         tf_columns_bag_hashed(r->cols) ? "hashed into"
			         : tf_columns_bag_vocabulary(r->cols) ? "the"
			                                              : "below",
			         (long long)(bv - oov),
			         tf_columns_bag_vocabulary(r->cols)
			             ? " ids seen in them"
			             : "",
			         more);
		} else {
			snprintf(what, sizeof what, "%lld features",
			         (long long)tf_columns_width(r->cols));
		}
		snprintf(msg, sizeof msg,
		         "%.512s has no schema: inferred from its first %llu "
		         "records (%s, label '%s', %s)%s%.400s%s",
		         cfg->ninputs && strcmp(cfg->inputs[0], "-") != 0
		             ? cfg->inputs[0]
		             : "standard input",
		         (unsigned long long)n, what, label,
		         tf_task_name(tf_columns_task(r->cols)),
		         skipped[0] ? "; left out: " : "", skipped,
		         strcmp(cfg->inputs[0], "-") != 0
		             ? "; tf-records schema --write makes one from all "
		               "the records"
		             : "");
		r->sink->note(r->sink->ctx, msg);
	}
	return TF_OK;
}

/*
 * A resume replays the input exactly when it reads with the seed, batch
 * size and shuffle buffer of the run that saved; say so when they
 * differ (the run goes on: changing them is allowed).
 */
static void
note_changes(struct run *r, const char *ckpt)
{
	const struct tf_train_config *cfg = r->cfg;
	json_t *was = r->h.config ? json_loads(r->h.config, 0, NULL) : NULL;
	json_t *seed = json_integer((json_int_t)r->h.seed);
	const struct {
		const char *flag;
		uint64_t now;
		json_t *then;
	} k[] = {
	    {"--seed", cfg->seed, seed},
	    {"--batch-size", cfg->batch_size,
	     json_object_get(was, "batch-size")},
	    {"--shuffle-buffer", cfg->shuffle_buffer,
	     json_object_get(was, "shuffle-buffer")},
	};
	char msg[1024], *p = msg;
	size_t left = sizeof msg;
	for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
		if (!json_is_integer(k[i].then) ||
		    (uint64_t)json_integer_value(k[i].then) == k[i].now) {
			continue;
		}
		int n = snprintf(p, left, "%s%s %lld (now %llu)",
		                 p == msg ? "" : ", ", k[i].flag,
		                 (long long)json_integer_value(k[i].then),
		                 (unsigned long long)k[i].now);
		if (n < 0 || (size_t)n >= left) {
			break;
		}
		p += n;
		left -= (size_t)n;
	}
	json_decref(seed);
	json_decref(was);
	if (p != msg && r->sink->note != NULL) {
		char line[5400];
		snprintf(line, sizeof line,
		         "%.4096s was trained with %s: this run reads the data "
		         "in another order than one uninterrupted run would",
		         ckpt, msg);
		r->sink->note(r->sink->ctx, line);
	}
}

/* A checkpoint's inputs must be the data's: same width and features. */
static int
same_features(struct run *r, const char *schema, const char *ckpt)
{
	struct tf_columns *now = tf_columns_new();
	struct tf_image_view v;
	struct tf_sequence_view sv;
	if (now != NULL && tf_columns_image(r->cols, &v)) {
		/* the images as the model reads them */
		tf_columns_set_image(now, v.height, v.width, v.channels,
		                     v.scale);
	}
	if (now != NULL && tf_columns_sequence(r->cols, &sv)) {
		/* its sequence cut as the model cuts it */
		tf_columns_set_sequence(now, sv.steps, 0);
	}
	int64_t bw, bv, nw, nv;
	int bag = tf_columns_bag(r->cols, &bw, &bv);
	if (now != NULL && bag) {
		/* its ids as the model reads them */
		tf_columns_set_sparse(now, 1,
		                      tf_columns_bag_hashed(r->cols) ? bv : 0);
	}
	if (now == NULL) {
		return fail(r, TF_ENOMEM, "out of memory");
	}
	int rc = tf_columns_select(now, r->cfg->features, r->cfg->exclude);
	rc = rc ? rc : tf_columns_load_schema(now, schema);
	/* the data's id vocabulary against the model's rows (-1: the data
	 * lists none; a model of a vocabulary then checks each id read) */
	uint64_t first = 0;
	int64_t unknown = rc == TF_OK && bag
	                      ? tf_columns_bag_unknown(r->cols, now, &first)
	                      : -1;
	if (rc != TF_OK) {
		rc = fail(r, rc, "%s", tf_errmsg(now));
	} else if (unknown > 0) {
		rc = fail(r, TF_EFORMAT,
		          "%s has no row for %lld of the ids of the data (%s), "
		          "id %llu the first: its table has %s (use "
		          "--from-scratch or another --checkpoint-dir; one "
		          "trained with --oov-buckets N takes such ids)",
		          ckpt, (long long)unknown, schema,
		          (unsigned long long)first,
		          tf_columns_bag_vocabulary(r->cols)
		              ? "a row for each id of the data it was first "
		                "trained on"
		              : "a row for each id below its max_index + 1");
	} else if (bag && tf_columns_bag(now, &nw, &nv) &&
	           (nw > bw ||
	            (unknown < 0 && !tf_columns_bag_vocabulary(r->cols) &&
	             tf_columns_bag_oov(r->cols) == 0 && nv > bv))) {
		rc = fail(r, TF_EFORMAT,
		          "%s reads up to %lld sparse ids a row, ids below "
		          "%lld; the data (%s) has up to %lld a row, ids below "
		          "%lld (use --from-scratch or another "
		          "--checkpoint-dir%s)",
		          ckpt, (long long)bw, (long long)bv, schema,
		          (long long)nw, (long long)nv,
		          nv > bv && !tf_columns_bag_hashed(r->cols)
		              ? "; --hash-buckets N bounds the ids, "
		                "--oov-buckets N takes ids past the table"
		              : "");
	} else if (bag && tf_columns_bag(now, &nw, &nv) &&
	           tf_columns_width(now) - nw !=
	               tf_columns_width(r->cols) - bw) {
		rc = fail(r, TF_EFORMAT,
		          "%s reads %lld numeric features beside its sparse "
		          "ids; the data (%s) has %lld (use --from-scratch or "
		          "another --checkpoint-dir)",
		          ckpt, (long long)(tf_columns_width(r->cols) - bw),
		          schema, (long long)(tf_columns_width(now) - nw));
	} else if (bag && tf_columns_bag(now, &nw, &nv)) {
		rc =
		    strcmp(tf_columns_label_name(now),
		           tf_columns_label_name(r->cols)) == 0
		        ? TF_OK
		        : fail(r, TF_EFORMAT,
		               "%s is a checkpoint of another model: its label "
		               "is '%s', the data's (%s) '%s'",
		               ckpt, tf_columns_label_name(r->cols), schema,
		               tf_columns_label_name(now));
	} else if (tf_columns_width(now) != tf_columns_width(r->cols) ||
	           strcmp(tf_columns_label_name(now),
	                  tf_columns_label_name(r->cols)) != 0) {
		rc = fail(r, TF_EFORMAT,
		          "%s is a checkpoint of another model: it takes %lld "
		          "features and label '%s', the data (%s) has %lld and "
		          "'%s' (use --from-scratch or another "
		          "--checkpoint-dir)",
		          ckpt, (long long)tf_columns_width(r->cols),
		          tf_columns_label_name(r->cols), schema,
		          (long long)tf_columns_width(now),
		          tf_columns_label_name(now));
	}
	tf_columns_free(now);
	return rc;
}

/* A copy of s into *dst (freeing what was there); non-zero when out of
 * memory. */
static int
set_text(char **dst, const char *s)
{
	free(*dst);
	*dst = s != NULL ? strdup(s) : NULL;
	return s != NULL && *dst == NULL;
}

static char *inputs_signature(const struct tf_train_config *cfg);

/* Whether this run goes on with the run that saved the header: one
 * that stopped before reading all its epochs, on the same inputs. */
static int
same_run(const struct run *r, const char *sig)
{
	return r->h.has_run && !r->h.run_finished && sig != NULL &&
	       r->h.run_inputs != NULL && strcmp(sig, r->h.run_inputs) == 0;
}

/* --image-size, --image-channels and --image-scale as numbers (0, or -1
 * for the scale, where not given); TF_EINVAL with why on h. */
static int
image_flags(const struct tf_train_config *cfg, void *h, int v[4])
{
	struct tf_shape sh = {0};
	v[0] = v[1] = v[2] = 0;
	v[3] = -1;
	if (cfg->image_size != NULL &&
	    (tfi_shape_parse(cfg->image_size, strlen(cfg->image_size), &sh) !=
	         0 ||
	     sh.rank != 2 || sh.dim[0] > 65535 || sh.dim[1] > 65535)) {
		return tfi_set_error(h, TF_EINVAL,
		                     "--image-size: '%s' is not HxW (e.g. "
		                     "224x224)",
		                     cfg->image_size);
	}
	if (cfg->image_scale != NULL &&
	    (v[3] = tf_image_scale_parse(cfg->image_scale)) < 0) {
		return tfi_set_error(h, TF_EINVAL,
		                     "--image-scale: '%s' is not unit, "
		                     "symmetric or standardize",
		                     cfg->image_scale);
	}
	if (cfg->image_channels == 2) {
		return tfi_set_error(h, TF_EINVAL,
		                     "--image-channels: 1 (grey) or 3 (RGB)");
	}
	v[0] = (int)sh.dim[0];
	v[1] = (int)sh.dim[1];
	v[2] = cfg->image_channels;
	return TF_OK;
}

/* How image records' rows are made (the schema then says so, for every
 * later reader). */
static int
image_settings(struct run *r)
{
	int v[4];
	int rc = image_flags(r->cfg, r->cols, v);
	return rc == TF_OK
	           ? tf_columns_set_image(r->cols, v[0], v[1], v[2], v[3])
	           : rc;
}

/* A resumed run's --image-size, --image-channels and --image-scale:
 * the checkpoint's model reads images one way; another is an error. */
static int
same_images(struct run *r, const char *ckpt)
{
	const struct tf_train_config *cfg = r->cfg;
	if (cfg->image_size == NULL && cfg->image_channels == 0 &&
	    cfg->image_scale == NULL) {
		return TF_OK;
	}
	struct tf_image_view iv;
	int v[4];
	if (!tf_columns_image(r->cols, &iv)) {
		return fail(r, TF_EINVAL,
		            "%s was not trained on image records; "
		            "--image-size, --image-channels and --image-scale "
		            "are for them",
		            ckpt);
	}
	if (image_flags(cfg, r->cols, v) != TF_OK) {
		return fail(r, TF_EINVAL, "%s", tf_errmsg(r->cols));
	}
	if ((v[0] > 0 && (v[0] != iv.height || v[1] != iv.width)) ||
	    (v[2] > 0 && v[2] != iv.channels) ||
	    (v[3] >= 0 && v[3] != iv.scale)) {
		return fail(r, TF_EINVAL,
		            "%s reads images as %dx%dx%d, scaled %s; "
		            "--image-size, --image-channels or --image-scale "
		            "differs (use --from-scratch to start over)",
		            ckpt, iv.height, iv.width, iv.channels,
		            tf_image_scale_name(iv.scale));
	}
	return TF_OK;
}

/*
 * Continue from the checkpoint at path: its header is the run's state,
 * its schema the data's.  What this run changes (learning rate, the
 * optimizer's settings given, seed, settings) goes over it.
 */
static int
resume(struct run *r, const char *path)
{
	const struct tf_train_config *cfg = r->cfg;
	int rc = tf_ckpt_load(r->ck, path);
	if (rc == TF_OK) {
		rc = tf_ckpt_get_header(r->ck, &r->h);
	}
	char prev[4096], msg[TFI_MSG_MAX];
	if (rc != TF_OK && cfg->take_previous &&
	    tf_ckpt_previous(cfg->checkpoint_dir, prev, sizeof prev) == TF_OK) {
		/* --if-damaged previous: set it aside, say so, go on */
		char why[TFI_MSG_MAX];
		snprintf(why, sizeof why, "%s", tf_errmsg(r->ck));
		if (tf_ckpt_set_aside(cfg->checkpoint_dir, prev, msg,
		                      sizeof msg) != TF_OK) {
			return fail(r, TF_EIO, "%s", msg);
		}
		if (r->sink->note != NULL) {
			snprintf(
			    msg, sizeof msg,
			    "%.200s; set aside as %.100s.damaged, resuming "
			    "from %.100s (--if-damaged previous)",
			    why, path, prev);
			r->sink->note(r->sink->ctx, msg);
		}
		return resume(r, prev);
	}
	if (rc != TF_OK) {
		return tfi_ckpt_damaged(r->t, rc, cfg->checkpoint_dir,
		                        tf_errmsg(r->ck));
	}
	if (cfg->optimizer != NULL &&
	    strcmp(cfg->optimizer, r->h.optimizer) != 0) {
		return fail(r, TF_EINVAL,
		            "%s was trained with --optimizer %s, not %s "
		            "(use --from-scratch to start over)",
		            path, r->h.optimizer, cfg->optimizer);
	}
	if ((rc = tf_columns_parse_schema(r->cols, r->h.schema, path)) !=
	    TF_OK) {
		return fail(r, rc, "%s", tf_errmsg(r->cols));
	}
	if ((rc = same_images(r, path)) != TF_OK) {
		return rc;
	}
	/* The data at hand must have the features it was trained on. */
	char side[4096];
	const char *now_schema = data_schema(cfg, side, sizeof side);
	if (now_schema != NULL &&
	    (rc = same_features(r, now_schema, path)) != TF_OK) {
		return rc;
	}
	if (r->h.crosses != NULL &&
	    (rc = tf_columns_set_categorical(r->cols, r->h.crosses,
	                                     r->h.buckets)) != TF_OK) {
		return fail(r, rc, "%s: %s", path, tf_errmsg(r->cols));
	}
	/* Before the header takes this run's settings: what they change
	 * of reading, for a run that goes on as one. */
	if (!r->h.has_run || same_run(r, r->sig)) {
		note_changes(r, path);
	}
	if (cfg->learning_rate > 0) {
		r->h.learning_rate = cfg->learning_rate;
	}
	double v;
	for (size_t i = 0; i < tf_hparams_count(cfg->hparams); i++) {
		const char *key = tf_hparams_get(cfg->hparams, i, &v);
		if (tf_hparams_set(r->h.hparams, key, v) != TF_OK) {
			return fail(r, TF_ENOMEM, "out of memory");
		}
	}
	r->h.seed = cfg->seed;
	r->h.normalize = cfg->normalize;
	/* Metrics of an earlier step say nothing of the next checkpoint. */
	free(r->h.validation);
	r->h.validation = NULL;
	free(r->h.library);
	r->h.library = NULL;
	if (set_text(&r->h.config, cfg->settings)) {
		return fail(r, TF_ENOMEM, "out of memory");
	}
	return TF_OK;
}

/* A new run: the data's schema, the optimizer and its settings. */
/* --model-file's text, once a run. */
static int
read_user_spec(struct run *r)
{
	const char *path = r->cfg->model_file;
	if (path == NULL) {
		return fail(r, TF_EINVAL,
		            "--model custom needs --model-file SPEC");
	}
	if (r->user_spec != NULL) {
		return TF_OK;
	}
	size_t n;
	r->user_spec = tf_file_read(path, &n);
	if (r->user_spec == NULL) {
		return fail(r, errno == ENOMEM ? TF_ENOMEM : TF_ENOENT,
		            "cannot open %s: %s", path, strerror(errno));
	}
	if (strlen(r->user_spec) != n) {
		return fail(r, TF_EFORMAT, "%s: not a text file", path);
	}
	return TF_OK;
}

/* Whether a spec declares the ids input (the categorical features). */
static int
spec_reads_ids(const char *text)
{
	for (const char *p = text; p != NULL && *p;) {
		char kw[8], name[8];
		if (sscanf(p, " %7s %7s", kw, name) == 2 &&
		    strcmp(kw, "input") == 0 && strcmp(name, "ids") == 0) {
			return 1;
		}
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return 0;
}

/* Say which features a model without categorical inputs leaves out:
 * bytes features (strings, encoded images) are read only by embeddings
 * (wide_and_deep, a spec with an ids input). */
static void
note_unused(struct run *r)
{
	const struct tf_schema *sc = tf_columns_schema(r->cols);
	if (sc == NULL || r->sink->note == NULL) {
		return;
	}
	char names[600] = "";
	size_t n = 0, len = 0;
	for (size_t i = 0; i < sc->nfeatures; i++) {
		const struct tfi_schema_col *f = &sc->features[i];
		if (f->type != TF_COL_BYTES || f->packed_index >= 0 ||
		    f->max_length > 0) {
			continue;
		}
		if (len + strlen(f->name) + 8 < sizeof names) {
			len +=
			    (size_t)snprintf(names + len, sizeof names - len,
			                     "%s'%s'", n ? ", " : "", f->name);
		} else if (len + 6 < sizeof names && names[len - 1] != '.') {
			len += (size_t)snprintf(names + len, sizeof names - len,
			                        ", ...");
		}
		n++;
	}
	if (n == 0) {
		return;
	}
	char msg[900];
	snprintf(msg, sizeof msg,
	         "--model %s does not use %zu bytes feature%s: %s (categories "
	         "train with --model wide_and_deep, or a --model-file spec "
	         "with an ids input; --exclude leaves a feature out without "
	         "this note)",
	         r->cfg->model, n, n == 1 ? "" : "s", names);
	r->sink->note(r->sink->ctx, msg);
}

/* A new run: the columns from the schema (or inferred), the header's
 * settings and model, categorical ids when the model reads them. */
static int
start(struct run *r)
{
	const struct tf_train_config *cfg = r->cfg;
	char side[4096];
	const char *schema = data_schema(cfg, side, sizeof side);
	int rc = tf_columns_select(r->cols, cfg->features, cfg->exclude);
	if (rc == TF_OK) {
		rc = image_settings(r);
	}
	if (rc == TF_OK) {
		rc = tf_columns_set_sequence(r->cols, cfg->max_length,
		                             cfg->hash_buckets);
	}
	if (rc == TF_OK) {
		/* wide_and_deep reads libsvm ids as a bag, however few */
		rc = tf_columns_set_sparse(
		    r->cols,
		    cfg->sparse || strcmp(cfg->model, "wide_and_deep") == 0,
		    cfg->sparse_buckets);
	}
	if (rc == TF_OK) {
		rc = tf_columns_set_oov(r->cols, cfg->oov_buckets);
	}
	if (rc != TF_OK) {
		return fail(r, rc, "%s", tf_errmsg(r->cols));
	}
	if (schema == NULL && cfg->stream) {
		return fail(r, TF_EINVAL,
		            "--stream trains on records as they come: name "
		            "their schema with --schema FILE (a followed "
		            "file's FILE.schema.json sidecar does too)");
	}
	rc =
	    schema != NULL ? tf_columns_load_schema(r->cols, schema) : infer(r);
	if (rc != TF_OK) {
		return schema != NULL ? fail(r, rc, "%s", tf_errmsg(r->cols))
		                      : rc;
	}
	r->h.learning_rate =
	    cfg->learning_rate > 0
	        ? cfg->learning_rate
	        : strtod(tfi_settings_default("learning-rate"), NULL);
	r->h.hparams = tf_hparams_copy(cfg->hparams);
	r->h.seed = cfg->seed;
	r->h.normalize = cfg->normalize;
	int oom =
	    set_text(&r->h.optimizer,
	             cfg->optimizer ? cfg->optimizer
	                            : tfi_settings_default("optimizer")) ||
	    set_text(&r->h.schema, tf_columns_schema_text(r->cols)) ||
	    set_text(&r->h.config, cfg->settings) || r->h.hparams == NULL;
	int custom = strcmp(cfg->model, "custom") == 0;
	if (!oom && custom && (rc = read_user_spec(r)) != TF_OK) {
		return rc;
	}
	int64_t bw, bv;
	int wide = strcmp(cfg->model, "wide_and_deep") == 0;
	int bag = tf_columns_bag(r->cols, &bw, &bv); /* ids: its own */
	int categorical =
	    (wide || (custom && spec_reads_ids(r->user_spec))) && !bag;
	if (!oom && !categorical && cfg->crosses != NULL &&
	    cfg->crosses[0] != '\0') {
		/* crosses the model would not read: said, not dropped */
		return fail(
		    r, TF_EINVAL, "--crosses '%s': %s", cfg->crosses,
		    !wide && !custom ? "crosses go with --model wide_and_deep"
		    : bag
		        ? "the data is sparse ids, with no categorical "
		          "features to cross (wide_and_deep's wide part is a "
		          "linear model of the ids)"
		        : "the --model-file spec reads no ids (no categorical "
		          "features)");
	}
	if (!oom && !categorical) {
		note_unused(r);
	}
	if (!oom && categorical) {
		const char *x = cfg->crosses ? cfg->crosses : "";
		oom = set_text(&r->h.crosses, x);
		r->h.buckets = cfg->hash_buckets;
		if (!oom && (rc = tf_columns_set_categorical(
		                 r->cols, x, cfg->hash_buckets)) != TF_OK) {
			return fail(r, rc, "%s", tf_errmsg(r->cols));
		}
	}
	return oom ? fail(r, TF_ENOMEM, "out of memory") : TF_OK;
}

/* What this run reads, to know a run started again on the same inputs:
 * a JSON list of "NAME SIZE MTIME" (NULL for standard input, which is
 * never the same twice). */
static char *
inputs_signature(const struct tf_train_config *cfg)
{
	if (cfg->ninputs == 0) {
		return NULL;
	}
	json_t *a = json_array();
	for (size_t i = 0; a != NULL && i < cfg->ninputs; i++) {
		struct stat st;
		char item[4400];
		if (strcmp(cfg->inputs[i], "-") == 0) {
			json_decref(a);
			return NULL;
		}
		if (stat(cfg->inputs[i], &st) != 0 || cfg->stream) {
			memset(&st, 0, sizeof st); /* a stream grows */
		}
		snprintf(item, sizeof item, "%.4096s %lld %lld.%09ld",
		         cfg->inputs[i], (long long)st.st_size,
		         (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
		json_array_append_new(a, json_string(item));
	}
	char *text = a ? json_dumps(a, JSON_COMPACT) : NULL;
	json_decref(a);
	return text;
}

/*
 * Where this run reads from.  A new model: epoch 0.  A checkpoint of a
 * run that stopped before reading all its epochs, on the same inputs:
 * where it stood, to finish as it would have.  Any other resume (new
 * data, or a finished run): a new run of --epochs passes, numbered on
 * from the epochs before it (so each shuffles anew).  Checkpoints of
 * before runs were recorded count epochs over all runs.
 */
/* The run's epochs: the first, where it stands (epoch, rows done in it)
 * and the end (0: none), from the checkpoint ckpt resumed (NULL: none);
 * whether the run goes on (continued) rather than starts anew. */
static void
run_epochs(struct run *r, const char *ckpt, uint64_t *first, uint64_t *epoch,
           uint64_t *done, uint64_t *epochs)
{
	const struct tf_train_config *cfg = r->cfg;
	*first = *epoch = *done = 0;
	if (ckpt != NULL && !r->h.has_run) {
		*epoch = r->h.epoch; /* as the checkpoint's version counted */
		*done = r->h.done;
	} else if (ckpt != NULL && same_run(r, r->sig)) {
		*first = r->h.run_first_epoch;
		*epoch = r->h.epoch;
		*done = r->h.done;
		r->continued = 1;
	} else if (ckpt != NULL) {
		*first = *epoch = r->h.epoch + 1;
	}
	*epochs = ckpt != NULL && !r->h.has_run ? cfg->epochs
	          : cfg->epochs == 0            ? 0
	                                        : *first + cfg->epochs;
}

/* The reader's next chunk from ps 0 (tfi_dataset_set_chunks()), or
 * TF_EAGAIN (none yet), TF_EOF (the run's end). */
static int
take_chunk(void *ctx, struct tfi_chunk *c, char *msg, size_t len)
{
	struct run *r = ctx;
	int lost;
	/* WAIT comes after ps 0 held the request a while (TAKE_HOLD in
	 * ps.c) with no chunk coming free: asked again at once */
	int rc = tfi_ps_take(r->cl, c, &lost, msg, len);
	if (lost) {
		atomic_store(&r->pool_lost, 1);
	}
	return rc;
}

static int
start_reading(struct run *r, const char *ckpt)
{
	const struct tf_train_config *cfg = r->cfg;
	uint64_t first, epoch, done, epochs;
	run_epochs(r, ckpt, &first, &epoch, &done, &epochs);
	free(r->h.run_inputs);
	r->h.run_inputs = r->sig; /* the header's now */
	r->sig = NULL;
	r->h.has_run = 1;
	r->h.run_first_epoch = first;
	r->h.run_finished = 0;
	r->h.epoch = epoch;
	r->h.done = done;
	int rc = tf_dataset_open(r->ds, cfg->inputs, cfg->ninputs, epochs,
	                         cfg->shuffle_buffer, cfg->seed);
	if (rc == TF_OK && r->chunked) {
		/* ps 0's pool says where each chunk stands */
		tfi_dataset_set_chunks(r->ds, take_chunk, r);
		return TF_OK;
	}
	/* Seek to the checkpoint's place where it says what the shuffle
	 * buffer held; else (pipes, compressed files, older checkpoints)
	 * read the epoch again up to it. */
	if (rc == TF_OK &&
	    !(done > 0 && r->h.input_state != NULL && cfg->cluster == NULL &&
	      tfi_dataset_restore(r->ds, epoch, done, r->h.input_state) ==
	          TF_OK)) {
		rc = tf_dataset_seek(r->ds, epoch, done);
	}
	return rc == TF_OK ? TF_OK : fail(r, rc, "%s", tf_errmsg(r->ds));
}

/*
 * A trainer of a distributed run: its shard of the inputs (rank of
 * trainers), and the model's values from the ps tasks; the chief gives
 * them theirs first (its own, from the seed or the checkpoint), the
 * others wait for them.
 */
/* The kernels a device lacks, which ran on the CPU: said after the
 * first step (every kernel a step needs has run by then: each later
 * step pays the bus both ways for them), and at the end if more came. */
static void
note_fallbacks(struct run *r, int first)
{
	const char *f = r->dev ? tf_device_fallbacks(r->dev) : "";
	if (f[0] == '\0' || r->sink->note == NULL ||
	    (!first && r->fallbacks_said != NULL &&
	     strcmp(r->fallbacks_said, f) == 0)) {
		return;
	}
	char note[800];
	snprintf(note, sizeof note,
	         first ? "warning: %s: from the first step these run on the "
	                 "CPU (no kernel on the device), their tensors "
	                 "crossing the bus each step: %s"
	               : "%s: these ran on the CPU (no kernel on the "
	                 "device): %s",
	         tf_device_name(r->dev), f);
	r->sink->note(r->sink->ctx, note);
	free(r->fallbacks_said);
	r->fallbacks_said = strdup(f);
}

/* Sequences cut to the model's steps, said once at the end. */
static void
note_truncated(struct run *r)
{
	struct tf_sequence_view v;
	uint64_t n = r->ds ? tf_dataset_truncated(r->ds) : 0;
	if (n == 0 || r->sink->note == NULL ||
	    !tf_columns_sequence(r->cols, &v)) {
		return;
	}
	char note[400];
	snprintf(note, sizeof note,
	         "%llu sequence%s of '%.200s' read had more than %lld steps: "
	         "the first %lld of each were kept (--max-length)",
	         (unsigned long long)n, n == 1 ? "" : "s", v.name,
	         (long long)v.steps, (long long)v.steps);
	r->sink->note(r->sink->ctx, note);
}

/* A note of the run's (the library's callbacks take a context). */
static void
say_note(void *ctx, const char *msg)
{
	struct run *r = ctx;
	if (r->sink->note != NULL) {
		r->sink->note(r->sink->ctx, msg);
	}
}

/* The chief says when the ps tasks go on without trainers (or take one
 * back): which, at which step, and how many remain. */
static void
note_lost(struct run *r)
{
	uint64_t lost;
	if (!r->chief || !tfi_ps_lost(r->cl, &lost)) {
		return;
	}
	char who[400] = "";
	size_t len = 0;
	unsigned n = 0;
	for (unsigned k = 0; k < 64 && k < r->trainers; k++) {
		if (lost >> k & 1) {
			n++;
			if (len + 12 < sizeof who) {
				len += (size_t)snprintf(
				    who + len, sizeof who - len, "%s%u",
				    len ? ", " : "", k);
			}
		}
	}
	/* what becomes of their records: [chunked][more than one] */
	static const char *const fate[2][2] = {
	    {"its share of the data is not trained until it is back",
	     "their share of the data is not trained until they are back"},
	    {"the chunks it held go back to the pool",
	     "the chunks they held go back to the pool"}};
	char msg[600];
	if (n == 0) {
		snprintf(msg, sizeof msg, "step %llu: every trainer is back",
		         (unsigned long long)r->h.step);
	} else {
		snprintf(msg, sizeof msg,
		         "step %llu: the ps tasks go on without trainer%s %s "
		         "(silent longer than --peer-timeout): %u of %u "
		         "trainers remain; %s",
		         (unsigned long long)r->h.step, n == 1 ? "" : "s", who,
		         r->trainers - n, r->trainers,
		         fate[r->chunked != 0][n > 1]);
	}
	say_note(r, msg);
}

/* Chunks are ranges of files every trainer reads: not of a pipe, a
 * stream that grows, or a queue. */
static int
chunkable(struct run *r)
{
	const struct tf_train_config *cfg = r->cfg;
	const char *piped = cfg->ninputs == 0 ? "standard input" : NULL;
	for (size_t i = 0; i < cfg->ninputs && piped == NULL; i++) {
		if (strcmp(cfg->inputs[i], "-") == 0) {
			piped = "standard input";
		} else if (tfi_is_pipe(cfg->inputs[i], NULL)) {
			piped = cfg->inputs[i];
		}
	}
	if (piped || cfg->stream || r->queue != NULL) {
		return fail(r, TF_EINVAL,
		            "--chunk-size cuts files into chunks that any "
		            "trainer may read: %s cannot be (name the files, "
		            "the same on every trainer)",
		            piped ? piped : "a followed stream");
	}
	return TF_OK;
}

/* The chief: the pool of chunks ps 0 hands out (JSON in *json), the
 * inputs cut anew; the checkpoint's, where the run goes on over the
 * same inputs cut the same way (what was trained stays trained). */
static int
plan_pool(struct run *r, const char *ckpt, char **json)
{
	const struct tf_train_config *cfg = r->cfg;
	uint64_t first, epoch, done, epochs;
	int continued = r->continued;
	run_epochs(r, ckpt, &first, &epoch, &done, &epochs);
	int goes_on = r->continued;
	r->continued = continued; /* start_reading() decides it */
	char err[600];
	if (tfi_pool_plan(cfg->inputs, cfg->ninputs, cfg->chunk_size,
	                  goes_on ? epoch : first, epochs, cfg->seed,
	                  cfg->shuffle_buffer > 1, json, err,
	                  sizeof err) != 0) {
		return fail(r, TF_EINVAL, "--chunk-size: %s", err);
	}
	if (!goes_on || r->h.pool == NULL) {
		if (goes_on && r->sink->note != NULL) {
			say_note(r, "the checkpoint holds no pool of chunks: "
			            "its epoch is handed out whole");
		}
		return TF_OK;
	}
	struct tfi_pool *now =
	    tfi_pool_parse(*json, r->trainers, err, sizeof err);
	struct tfi_pool *then =
	    now ? tfi_pool_parse(r->h.pool, r->trainers, err, sizeof err)
	        : NULL;
	if (then != NULL && tfi_pool_same_plan(now, then)) {
		free(*json);
		*json = strdup(r->h.pool);
	} else {
		say_note(r, "the checkpoint's pool of chunks is of other "
		            "inputs or another --chunk-size: the epoch it "
		            "stood in is handed out whole");
	}
	tfi_pool_free(now);
	tfi_pool_free(then);
	return *json != NULL ? TF_OK : fail(r, TF_ENOMEM, "out of memory");
}

/* One trainer of a cluster: its rank and share of the records, the ps
 * tasks reached (waiting up to --startup-timeout), then the model: the
 * chief's given to them, pulled from them by the others. */
static int
join_cluster(struct run *r, const char *ckpt)
{
	const struct tf_train_config *cfg = r->cfg;
	const struct tf_cluster *c = cfg->cluster;
	if (strcmp(tf_cluster_job(c), "ps") == 0) {
		return fail(r, TF_EINVAL, "a ps task does not train (tf-ps)");
	}
	r->rank = (uint32_t)tf_cluster_rank(c);
	r->trainers = cfg->total_replicas ? cfg->total_replicas
	                                  : (uint32_t)tf_cluster_trainers(c);
	r->chief = tf_cluster_is_chief(c);
	if (r->rank >= r->trainers) {
		return fail(r, TF_EINVAL,
		            "trainer %u of --total-replicas %u: the cluster "
		            "has more trainers",
		            r->rank, r->trainers);
	}
	/* chunks handed out, or a static share of the records */
	r->chunked = cfg->chunk_size > 0;
	int rc = r->chunked ? TF_OK
	                    : tf_dataset_set_shard(r->ds, r->rank, r->trainers);
	if (rc != TF_OK) {
		return fail(r, rc, "%s", tf_errmsg(r->ds));
	}
	/* Resumed with as many trainers: each where it stood in its share
	 * (with another count the shares differ: the chief's position). */
	if (r->h.trainers != NULL && r->h.ntrainers == r->trainers) {
		r->h.epoch = r->h.trainers[2 * r->rank];
		r->h.done = r->h.trainers[2 * r->rank + 1];
	}
	size_t nps = tf_cluster_count(c, "ps");
	const char **addrs = calloc(nps, sizeof *addrs);
	r->cl = tf_ps_client_new();
	if (addrs == NULL || r->cl == NULL) {
		free(addrs);
		return fail(r, TF_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < nps; i++) {
		addrs[i] = tf_cluster_host(c, "ps", i);
	}
	double pt = cfg->peer_timeout > 0 ? cfg->peer_timeout : 60;
	rc = tf_ps_client_set_tls(r->cl, cfg->tls_ca);
	rc = rc ? rc
	        : tf_ps_client_connect(r->cl, addrs, nps, cfg->auth_token,
	                               pt + 5);
	free(addrs);
	if (rc != TF_OK) {
		return fail(r, rc, "%s", tf_errmsg(r->cl));
	}
	/* ALIVE to the ps tasks while a round waits on one of them or a
	 * local phase lasts (tfi_ps_aside()): a few times within the peer
	 * timeout (their clock), at least each second */
	/* what the parameters stand for: a trainer of other tables' rows
	 * (another id vocabulary) is refused by the ps */
	uint64_t key = 0;
	if (r->h.schema != NULL && tfi_model_key(r->h.schema, &key) != TF_OK) {
		return fail(r, TF_EINTERNAL,
		            "the model's schema cannot be read");
	}
	rc = tfi_ps_client_setup(r->cl, r->rank, tf_graph_nparams(r->g), key,
	                         pt / 4 < 1 ? pt / 4 : 1);
	if (rc != TF_OK) {
		return fail(r, rc, "%s", tf_errmsg(r->cl));
	}
	/* The tasks of a cluster start in any order: wait for the ps. */
	double st = cfg->startup_timeout > 0 ? cfg->startup_timeout : 300;
	if ((rc = tfi_ps_ready(r->cl, st, say_note, r)) != TF_OK) {
		return fail(r, rc, "%s", tf_errmsg(r->cl));
	}
	if (r->chief) {
		char *pool = NULL;
		if (r->chunked && (rc = plan_pool(r, ckpt, &pool)) != TF_OK) {
			return rc;
		}
		struct tfi_ps_mode mode = {
		    cfg->sync,   cfg->replicas_to_aggregate,
		    r->trainers, cfg->staleness,
		    pt,          pool};
		char *hp = tfi_hparams_text(r->h.hparams);
		rc =
		    hp == NULL
		        ? TF_ENOMEM
		        : tfi_ps_init(r->cl, host_block(r, TFI_PARAMS, 1), r->o,
		                      &r->h.step, r->h.optimizer, hp, &mode);
		free(hp);
		free(pool);
	} else {
		rc = tfi_ps_pull(r->cl, host_block(r, TFI_PARAMS, 0),
		                 &r->h.step, pt + 60);
	}
	/* the values the ps tasks hold, up to a device */
	if (rc == TF_OK && tfi_graph_commit(r->g, TFI_PARAMS) != TF_OK) {
		return fail(r, TF_EINTERNAL, "%s", tf_errmsg(r->g));
	}
	return rc == TF_OK ? TF_OK
	                   : fail(r, tf_errcode(r->cl), "%s", tf_errmsg(r->cl));
}

/* Set up the dataset, the graph and the optimizer, from a checkpoint
 * when there is one. */
/* Data with a sequence goes with the recurrent models (or a spec of
 * one's own), which read it with its lengths and not as --input-shape
 * says. */
static int
sequence_model(struct run *r, const struct tf_sequence_view *v)
{
	const struct tf_train_config *cfg = r->cfg;
	if (v == NULL) {
		return cfg->max_length > 0
		           ? fail(r, TF_EINVAL,
		                  "--max-length: the data has no sequence (a "
		                  "list feature of varying length)")
		           : TF_OK;
	}
	if (strcmp(cfg->model, "custom") == 0) {
		return TF_OK;
	}
	if (!tfi_model_recurrent(cfg->model)) {
		return fail(r, TF_EINVAL,
		            "'%s' is a sequence (up to %lld steps): --model "
		            "lstm, bidirectional_lstm or gru reads it, or a "
		            "--model-file spec; --exclude %s leaves it out",
		            v->name, (long long)v->steps, v->name);
	}
	if (cfg->input_shape != NULL && cfg->input_shape[0] != '\0') {
		return fail(r, TF_EINVAL,
		            "--input-shape: the data's sequence '%s' has its "
		            "own steps (%lld of %lld value%s, --max-length "
		            "sets how many a row keeps)",
		            v->name, (long long)v->steps,
		            (long long)v->step_width,
		            v->step_width == 1 ? "" : "s");
	}
	return TF_OK;
}

/* The cnn's input: --input-shape, else the image rows' own shape, else
 * NULL (a square of one channel). */
static const char *
input_shape(const struct run *r, char *buf, size_t size)
{
	struct tf_image_view v;
	if (r->cfg->input_shape != NULL || !tf_columns_image(r->cols, &v)) {
		return r->cfg->input_shape;
	}
	snprintf(buf, size, "%dx%dx%d", v.height, v.width, v.channels);
	return buf;
}

static int
setup(struct run *r, const struct tf_registry *reg, int *resumed)
{
	const struct tf_train_config *cfg = r->cfg;
	char path[4096];
	int rc;
	r->sig = inputs_signature(cfg); /* NULL: standard input */
	*resumed =
	    cfg->checkpoint_dir != NULL && !cfg->from_scratch &&
	    tf_ckpt_latest(cfg->checkpoint_dir, path, sizeof path) == TF_OK;
	rc = *resumed ? resume(r, path) : start(r);
	if (rc != TF_OK) {
		return rc;
	}
	if (cfg->label != NULL) {
		int task = tf_columns_task(r->cols);
		tf_columns_set_label(r->cols, cfg->label, task,
		                     tf_columns_classes(r->cols));
	}
	if (cfg->task != NULL && !*resumed) {
		int task = tf_task_parse(cfg->task);
		if (task < 0) {
			return fail(r, TF_EINVAL, "unknown task '%s'",
			            cfg->task);
		}
		tf_columns_set_label(r->cols, tf_columns_label_name(r->cols),
		                     task, tf_columns_classes(r->cols));
	}
	if (tf_columns_label_name(r->cols)[0] == '\0') {
		return fail(r, TF_EINVAL,
		            "the schema names no label; use "
		            "--label NAME");
	}
	r->task = tf_columns_task(r->cols);
	r->classes = tf_columns_classes(r->cols);
	if (*resumed && r->h.task != NULL && r->h.task[0] != '\0') {
		/* The task and classes it was trained for. */
		r->task = tf_task_parse(r->h.task);
		r->classes = r->h.classes;
		tf_columns_set_label(r->cols, tf_columns_label_name(r->cols),
		                     r->task, r->classes);
	}
	if (!*resumed) {
		char err[256], shape[64];
		struct tf_layout l;
		tf_columns_layout(r->cols, &l);
		struct tf_sequence_view sv;
		int seq = tf_columns_sequence(r->cols, &sv);
		if ((rc = sequence_model(r, seq ? &sv : NULL)) != TF_OK) {
			return rc;
		}
		rc =
		    strcmp(cfg->model, "custom") == 0
		        ? tf_model_spec_custom(r->user_spec, cfg->model_file,
		                               &l, r->task, r->classes,
		                               &r->h.model_spec, NULL, err,
		                               sizeof err)
		    : l.bag > 0
		        ? tf_model_spec_sparse(
		              cfg->model, &l, cfg->hidden, r->task, r->classes,
		              cfg->enable_bn ? cfg->bn_epsilon : 0,
		              cfg->keep_prob, cfg->embedding_dim,
		              &r->h.model_spec, err, sizeof err)
		    : strcmp(cfg->model, "cnn") == 0
		        ? tf_model_spec_cnn(
		              input_shape(r, shape, sizeof shape), cfg->conv,
		              cfg->hidden, tf_columns_width(r->cols), r->task,
		              r->classes, cfg->enable_bn ? cfg->bn_epsilon : 0,
		              cfg->keep_prob, &r->h.model_spec, err, sizeof err)
		    : tfi_model_recurrent(cfg->model) && seq
		        ? tf_model_spec_sequence(
		              cfg->model, &l, &sv, cfg->rnn_units,
		              cfg->gru_reset_after, cfg->embedding_dim,
		              cfg->hidden, r->task, r->classes,
		              cfg->enable_bn ? cfg->bn_epsilon : 0,
		              cfg->keep_prob, &r->h.model_spec, err, sizeof err)
		    : tfi_model_recurrent(cfg->model)
		        ? tf_model_spec_rnn(
		              cfg->model, cfg->input_shape, cfg->rnn_units,
		              cfg->gru_reset_after, cfg->hidden,
		              tf_columns_width(r->cols), r->task, r->classes,
		              cfg->enable_bn ? cfg->bn_epsilon : 0,
		              cfg->keep_prob, &r->h.model_spec, err, sizeof err)
		    : strcmp(cfg->model, "wide_and_deep") == 0
		        ? tf_model_spec_wide_deep(
		              &l, cfg->hidden, r->task, r->classes,
		              cfg->enable_bn ? cfg->bn_epsilon : 0,
		              cfg->keep_prob, cfg->embedding_dim,
		              &r->h.model_spec, err, sizeof err)
		        : tf_model_spec(cfg->model, cfg->hidden,
		                        tf_columns_width(r->cols), r->task,
		                        r->classes,
		                        cfg->enable_bn ? cfg->bn_epsilon : 0,
		                        cfg->keep_prob, &r->h.model_spec, err,
		                        sizeof err);
		if (rc != TF_OK) {
			return fail(r, rc, "%s", err);
		}
	} else if (cfg->model_file != NULL) {
		/* Resuming with a spec: the one the checkpoint was made of. */
		char err[512], *spec = NULL;
		struct tf_layout l;
		tf_columns_layout(r->cols, &l);
		if ((rc = read_user_spec(r)) != TF_OK) {
			return rc;
		}
		rc = tf_model_spec_custom(r->user_spec, cfg->model_file, &l,
		                          r->task, r->classes, &spec, NULL, err,
		                          sizeof err);
		if (rc != TF_OK) {
			return fail(r, rc, "%s", err);
		}
		int same = strcmp(spec, r->h.model_spec) == 0;
		free(spec);
		if (!same) {
			return fail(r, TF_EINVAL,
			            "%s was trained with another model than %s "
			            "(use --from-scratch to start over)",
			            path, cfg->model_file);
		}
	}
	r->h.classes = r->classes;
	if (set_text(&r->h.task, tf_task_name(r->task)) ||
	    set_text(&r->h.prediction, tfi_prediction_node(r->task))) {
		return fail(r, TF_ENOMEM, "out of memory");
	}
	int64_t want = r->task == TF_TASK_MULTICLASS ? r->classes : 1;
	if ((rc = tf_graph_parse(r->g, r->h.model_spec)) != TF_OK ||
	    (rc = tf_graph_build(r->g, reg, r->dev, cfg->seed)) != TF_OK) {
		int64_t lw = tf_graph_width(r->g, "logits");
		if (cfg->model_file != NULL && lw > 0 && lw != want) {
			goto logits; /* the loss on it refused to build */
		}
		/* A checkpoint's model that no longer builds is bad data. */
		return *resumed && rc == TF_EINVAL
		           ? fail(r, TF_EFORMAT, "%s: %s", path,
		                  tf_errmsg(r->g))
		       : cfg->model_file != NULL
		           ? fail(r, rc == TF_EINVAL ? TF_EFORMAT : rc,
		                  "%s: %s", cfg->model_file, tf_errmsg(r->g))
		           : fail(r, rc, "%s", tf_errmsg(r->g));
	}
	if (tf_graph_width(r->g, "logits") != want) {
	logits:
		return fail(r, TF_EFORMAT,
		            "%s: node 'logits' has %lld outputs; the %s task "
		            "needs %lld (units=outputs)",
		            cfg->model_file ? cfg->model_file : path,
		            (long long)tf_graph_width(r->g, "logits"),
		            tf_task_name(r->task), (long long)want);
	}
	int64_t gi = tf_graph_ids_width(r->g);
	if (tfi_graph_x_width(r->g) != tf_columns_width(r->cols) ||
	    gi != tf_columns_id_width(r->cols)) {
		return fail(r, TF_EFORMAT,
		            "the model takes %lld features and %lld ids, the "
		            "data has %lld and %lld",
		            (long long)tfi_graph_x_width(r->g), (long long)gi,
		            (long long)tf_columns_width(r->cols),
		            (long long)tf_columns_id_width(r->cols));
	}
	const struct tf_optimizer *opt =
	    tf_registry_optimizer(reg, r->h.optimizer);
	if (opt == NULL) {
		return fail(r, TF_EINVAL,
		            "unknown optimizer '%s' (see --list-plugins)",
		            r->h.optimizer);
	}
	/* Every setting reaches the optimizer; one it does not take is an
	 * error, when its plugin says which it takes. */
	if ((rc = tf_hparams_check(
	         r->h.hparams, r->h.optimizer,
	         tf_registry_optimizer_keys(reg, r->h.optimizer))) != TF_OK ||
	    (rc = tf_optim_place(
	         r->o, r->dev,
	         tf_registry_optimizer_update(reg, r->h.optimizer))) != TF_OK ||
	    (rc = tf_optim_init(r->o, opt, r->h.hparams,
	                        tf_graph_nparams(r->g))) != TF_OK) {
		return fail(r, rc, "%s",
		            tf_errcode(r->h.hparams) ? tf_errmsg(r->h.hparams)
		                                     : tf_errmsg(r->o));
	}
	if (*resumed) {
		/* into the host's view of the blocks, then up */
		float *hp = host_block(r, TFI_PARAMS, 0);
		float *hs = host_block(r, TFI_STATE, 0);
		float *const *slots = tfi_optim_host_slots(r->o, 0);
		if (hp == NULL || hs == NULL || slots == NULL) {
			return fail(r, TF_ENOMEM, "out of memory");
		}
		rc = restore(r, "params", hp, tf_graph_nparams(r->g));
		rc = rc ? rc : restore(r, "state", hs, tf_graph_nstate(r->g));
		for (unsigned i = 0; rc == TF_OK && i < tf_optim_nslots(r->o);
		     i++) {
			char name[32];
			snprintf(name, sizeof name, "slot%u", i);
			rc = restore(r, name, slots[i], tf_graph_nparams(r->g));
		}
		if (rc != TF_OK) {
			return rc;
		}
		if (tfi_graph_commit(r->g, TFI_PARAMS) != TF_OK ||
		    tfi_graph_commit(r->g, TFI_STATE) != TF_OK) {
			return fail(r, TF_EINTERNAL, "%s", tf_errmsg(r->g));
		}
		if (tfi_optim_commit_slots(r->o) != TF_OK) {
			return fail(r, TF_EINTERNAL, "%s", tf_errmsg(r->o));
		}
		tf_optim_set_steps(r->o, r->h.step);
		if (r->h.has_rng) {
			memcpy(tf_graph_rng(r->g)->s, r->h.rng,
			       sizeof r->h.rng);
		}
	}
	tf_columns_set_normalize(r->cols, cfg->normalize);
	tf_dataset_set_allow_missing(r->ds, cfg->allow_missing);
	tf_dataset_set_strict_ids(r->ds, 1);
	tf_dataset_set_stream(r->ds, cfg->stream ? STREAM_WAIT_MS : 0);
	r->queue = queue_input(cfg);
	struct tf_image_view iv;
	if ((cfg->random_flip || cfg->random_crop > 0) &&
	    !tf_columns_image(r->cols, &iv)) {
		return fail(r, TF_EINVAL,
		            "--random-flip and --random-crop are for image "
		            "records; these rows are not images");
	}
	tf_dataset_set_augment(r->ds, cfg->random_flip, cfg->random_crop);
	int dist = cfg->cluster != NULL && tf_cluster_distributed(cfg->cluster);
	if (cfg->chunk_size > 0 && !dist) {
		say_note(r,
		         "--chunk-size hands out chunks to the trainers of a "
		         "distributed run: this one process reads its "
		         "inputs whole");
	} else if (cfg->chunk_size > 0 && (rc = chunkable(r)) != TF_OK) {
		return rc;
	}
	if (dist && (rc = join_cluster(r, *resumed ? path : NULL)) != TF_OK) {
		return rc;
	}
	return start_reading(r, *resumed ? path : NULL);
}

/*
 * The checkpoint's input_state: the dataset's state after the batch
 * trained last (tfi_prefetch_state()); NULL where the inputs cannot
 * seek (a resume then replays the epoch), in a distributed run (each
 * trainer keeps its own place) and where the batch held is not the
 * header's position.
 */
static int
input_state(struct run *r)
{
	free(r->h.input_state);
	r->h.input_state = NULL;
	struct prefetch *p = r->pf;
	struct batch *cur = r->cur;
	if (p == NULL || !p->started || cur == NULL || r->cl != NULL ||
	    cur->rc != TF_OK || !cur->mark.seekable ||
	    cur->mark.epoch != r->h.epoch || cur->mark.done != r->h.done) {
		return TF_OK; /* (a pipe's reader may wait long: not held) */
	}
	int rc = tfi_prefetch_state(p, cur, &r->h.input_state);
	return rc == TF_OK ? TF_OK : fail(r, rc, "%s", tf_errmsg(r->ds));
}

/* Most times one batch's gradient is worked out again when ps 0 does
 * not apply it (each stale, or late for its sync step). */
#define MAX_RETRIES 100

/*
 * The one exchange of a distributed step: batch b's gradient to the ps
 * tasks and their values back.  With chunks handed out, a gradient ps 0
 * did not apply is worked out again on the values that came back and
 * sent again, so each record's gradient is applied once.  TF_OK, an
 * error said on the trainer, or the client's (to say with the step).
 */
static int
exchange(struct run *r, struct towers *tw, const struct batch *b, double lr,
         double *loss)
{
	for (int tries = 0;; tries++) {
		/* the host's: a device's gradient down, the new values
		 * back up */
		float *hp = host_block(r, TFI_PARAMS, 1);
		float *hg = host_block(r, TFI_GRADS, 1);
		if (hp == NULL || hg == NULL) {
			return fail(r, TF_ENOMEM, "out of memory");
		}
		if (r->chunked) {
			tfi_ps_set_spans(r->cl, b->spans, b->nspans);
		}
		int rc = tfi_ps_push(r->cl, hp, hg, (float)lr, b->b.rows,
		                     b->epoch, b->done, &r->h.step,
		                     r->sp ? &r->sp->grad : NULL,
		                     r->sp ? &r->sp->want : NULL);
		if (rc != TF_OK) {
			return rc;
		}
		if (tfi_graph_commit(r->g, TFI_PARAMS) != TF_OK) {
			return fail(r, TF_EINTERNAL, "%s", tf_errmsg(r->g));
		}
		r->idle = 0; /* the ps tasks count it again */
		if (!r->chunked || tfi_ps_applied(r->cl)) {
			return TF_OK;
		}
		if (tries == MAX_RETRIES) {
			return fail(
			    r, TF_EUNAVAIL,
			    "step %llu: ps 0 applied none of %d "
			    "gradients of one batch (each stale, or late "
			    "for its sync step): this trainer stops",
			    (unsigned long long)r->h.step, MAX_RETRIES + 1);
		}
		if ((rc = tfi_towers_run(tw, r->g, &b->b, NULL, loss)) !=
		    TF_OK) {
			return fail(r, rc, "%s", tw->msg);
		}
		if ((rc = regularize_weights(r->g, r->cfg->l1, r->cfg->l2)) !=
		    TF_OK) {
			return fail(r, rc, "%s", tf_errmsg(r->g));
		}
	}
}

int
tf_trainer_run(struct tf_trainer *t, const struct tf_registry *reg,
               const struct tf_train_config *cfg,
               const struct tf_train_sink *sink)
{
	struct run r = {0};
	tf_ckpt_header_init(&r.h);
	r.t = t;
	r.cfg = cfg;
	r.sink = sink;
	r.ds = tf_dataset_new();
	r.cols = r.ds ? tf_dataset_columns(r.ds) : NULL;
	r.g = tf_graph_new();
	r.o = tf_optim_new();
	r.ck = tf_ckpt_new();
	struct tf_metrics *m = NULL;
	struct prefetch pf = {0};
	struct towers tw = {0};
	struct batch *b = NULL;
	int rc, resumed;
	/* A failure once steps have trained checkpoints them first. */
	int trained = 0, diverged = 0;
	struct schedule sc = {0};
	if (!r.ds || !r.g || !r.o || !r.ck) {
		rc = fail(&r, TF_ENOMEM, "out of memory");
		goto out;
	}
	if (cfg->batch_size < 1) {
		rc = fail(&r, TF_EINVAL, "the batch size must be at least 1");
		goto out;
	}
	char dmsg[300];
	const char *dname = cfg->device ? cfg->device : "cpu";
	if ((rc = tf_device_open(dname, cfg->gpu_math, &r.dev, dmsg,
	                         sizeof dmsg)) != TF_OK) {
		rc = fail(&r, rc, "--device %s: %s", dname, dmsg);
		goto out;
	}
	if (tf_device_kind(r.dev) != TF_DEVICE_CPU && cfg->threads > 1) {
		rc = fail(&r, TF_EINVAL,
		          "--threads %d splits each batch across CPU threads; "
		          "on --device %s the GPU takes the whole batch (leave "
		          "--threads at 1)",
		          cfg->threads, dname);
		goto out;
	}
	if ((rc = validation_apart(&r)) != TF_OK ||
	    (rc = setup(&r, reg, &resumed)) != TF_OK ||
	    (rc = check_validation(&r)) != TF_OK) {
		goto out;
	}
	if (tf_device_kind(r.dev) != TF_DEVICE_CPU && sink->note != NULL &&
	    (cfg->l1 > 0 || cfg->l2 > 0 || cfg->cluster != NULL)) {
		sink->note(sink->ctx,
		           cfg->cluster != NULL
		               ? "on a GPU, each step's gradient and values "
		                 "cross the bus to and from the ps tasks"
		               : "--l1 and --l2 are added to the gradients on "
		                 "the host: on a GPU, each step moves them "
		                 "across the bus");
	}
	size_t bs = cfg->batch_size;
	m = tf_metrics_new(r.task, r.classes);
	r.vm = tf_metrics_new(r.task, r.classes);
	if (cfg->logdir != NULL) {
		r.ev = tf_events_new();
		if (r.ev != NULL &&
		    (rc = tf_events_open(r.ev, cfg->logdir)) != TF_OK) {
			rc = fail(&r, rc, "%s", tf_errmsg(r.ev));
			goto out;
		}
	}
	if (!m || !r.vm || (cfg->logdir != NULL && !r.ev)) {
		rc = fail(&r, TF_ENOMEM, "out of memory");
		goto out;
	}
	float *params = tf_graph_params(r.g), *grads = tf_graph_grads(r.g);
	double t0 = tfi_now(), t_mark = t0;
	uint64_t ex_mark = r.h.examples;
	uint64_t m_epoch = r.h.epoch; /* the epoch the metrics are of */
	sc.last_save = sc.last_publish = t0;
	sc.saved_step = sc.published = r.h.step;
	uint64_t ex_mark0 = r.h.examples;
	double lr = r.h.learning_rate;
	if ((rc = tfi_towers_start(&tw, r.g, r.h.model_spec, reg, cfg->seed,
	                           r.task, cfg->threads, bs)) != TF_OK) {
		rc = fail(&r, rc, "%s", tw.msg);
		goto out;
	}
	uint64_t tables = table_values(r.g);
	if (r.cl != NULL && cfg->l1 == 0 && cfg->l2 == 0) {
		r.sp = sparse_plan(r.g); /* NULL: no tables, dense */
	} else if (r.cl == NULL && cfg->l1 == 0 && cfg->l2 == 0 &&
	           tf_device_kind(r.dev) == TF_DEVICE_CPU &&
	           tfi_optim_row_exact(
	               r.o, cfg->lr_decay_rate != 1 && cfg->lr_decay_steps > 0,
	               tables_start_zero(r.g)) &&
	           (r.sp = sparse_plan(r.g)) != NULL) {
		/* an embedding table's rows a batch did not touch would not
		 * change: the optimizer updates only the rows it did */
		r.row_steps = 1;
		tfi_graph_zero_grads(r.g, 0);
		tf_zero(r.dev, grads, tf_graph_nparams(r.g));
		if (tw.maxparts > 1 && tables >= LARGE_TABLES) {
			/* parts would each hand over every table's gradient:
			 * more than the step's own work */
			if (sink->note != NULL && leads(&r)) {
				sink->note(
				    sink->ctx,
				    "--threads: a model of large embedding "
				    "tables updated row by row runs each "
				    "step whole, on one thread");
			}
			tw.maxparts = 1;
		}
		/* a step on one thread of a sparse lr: without the graph */
		r.lin = tw.n <= 1 || tw.maxparts <= 1
		            ? tfi_linear_plan(r.g, r.o)
		            : NULL;
	} else if (r.cl == NULL && leads(&r) && sink->note != NULL &&
	           tables >= LARGE_TABLES) {
		char line[400];
		snprintf(
		    line, sizeof line,
		    "--optimizer %s updates every row of the embedding "
		    "tables (%llu values) each step%s; lazy_adam, "
		    "adagrad, ftrl or sgd update only the rows a batch "
		    "touched",
		    r.h.optimizer, (unsigned long long)tables,
		    tf_device_kind(r.dev) != TF_DEVICE_CPU ? " (and so does "
		                                             "a GPU)"
		    : cfg->l1 > 0 || cfg->l2 > 0 ? " (and so do --l1, --l2)"
		                                 : "");
		sink->note(sink->ctx, line);
	}
	r.pf = &pf;
	if ((rc = tfi_prefetch_start(&pf, r.ds, bs, r.dev)) != TF_OK) {
		rc = fail(&r, rc, "cannot start the reader thread");
		goto out;
	}
	uint64_t first_step = r.h.step;
	uint64_t next_report = cfg->steps_to_validate > 0
	                           ? (r.h.step / cfg->steps_to_validate + 1) *
	                                 cfg->steps_to_validate
	                           : 0;
	sc.next_save = cfg->save_every > 0
	                   ? (r.h.step / cfg->save_every + 1) * cfg->save_every
	                   : 0;
	int ran_out = 0, stopped = 0;
	if (cfg->checkpoint_dir == NULL && leads(&r) && sink->note != NULL) {
		sink->note(sink->ctx, "no --checkpoint-dir: the model this run "
		                      "trains is not kept");
	}
	while (cfg->max_steps == 0 || r.h.step < cfg->max_steps) {
		if (sink->stop != NULL && sink->stop(sink->ctx)) {
			stopped = 1; /* checkpointed below, where it stands */
			break;
		}
		if (b != NULL) {
			tfi_prefetch_release(&pf);
		}
		b = tfi_prefetch_next(&pf);
		r.cur = b;
		size_t rows = b->b.rows;
		rc = b->rc;
		if (rc == TF_EOF) {
			rc = TF_OK;
			ran_out = 1;
			break;
		}
		if (rc == TF_EAGAIN) {
			/* A stream with nothing new: its checkpoints and
			 * publishes still come on time.  A trainer waiting
			 * for a chunk is counted as done meanwhile (a sync
			 * step does not wait for it; its next push counts
			 * it again). */
			if (r.chunked && !r.idle &&
			    (rc = tfi_ps_done(r.cl, 1)) != TF_OK) {
				rc = fail(&r, tf_errcode(r.cl), "%s",
				          tf_errmsg(r.cl));
				goto out;
			}
			r.idle = r.chunked;
			if ((rc = save_on_schedule(&r, &sc)) != TF_OK) {
				goto out;
			}
			continue;
		}
		if (rc != TF_OK) {
			/* ps 0 went on without this process: 75, start it
			 * again to rejoin */
			rc =
			    fail(&r, atomic_load(&r.pool_lost) ? TF_EAGAIN : rc,
			         "%s%s", b->msg,
			         atomic_load(&r.pool_lost) ? "; this trainer "
			                                     "stops"
			                                   : "");
			goto out;
		}
		double loss = NAN;
		/* On a GPU the next batch crosses the bus while this one
		 * computes. */
		struct batch *nx = tf_device_kind(r.dev) != TF_DEVICE_CPU
		                       ? tfi_prefetch_ready(&pf)
		                       : NULL;
		if (nx != NULL &&
		    (rc = tf_graph_stage_batch(r.g, &nx->b)) != TF_OK) {
			rc = fail(&r, rc, "%s", tf_errmsg(r.g));
			goto out;
		}
		/* The training metrics of a line are those of its epoch:
		 * a batch of the next epoch's rows starts them again (the
		 * final line's are the last epoch's, not the run's; a
		 * short batch ending an epoch is of that epoch, though the
		 * position after it is the next's). */
		if (b->rows_epoch != m_epoch && tf_metrics_count(m) > 0) {
			tf_metrics_reset(m);
			t_mark = tfi_now();
			ex_mark = r.h.examples;
		}
		m_epoch = b->rows_epoch;
		/* A sparse linear model's batch without the graph (linear.c);
		 * one it does not take goes the graph's way, over the model
		 * its rows hold. */
		int fused = r.lin != NULL && tfi_linear_takes(r.lin, &b->b);
		if (r.lin != NULL && !fused) {
			tfi_linear_flush(r.lin, r.g, r.o);
			tfi_linear_drop(r.lin);
		}
		/* A row-sparse step here lists the batch's rows first, their
		 * optimizer slots asked for as they are met, to come into
		 * the cache while the graph runs. */
		if (r.row_steps && !fused) {
			unsigned ns = tf_optim_nslots(r.o);
			r.sp->nslots = ns < 8 ? ns : 8;
			for (unsigned k = 0; k < r.sp->nslots; k++) {
				r.sp->slots[k] = tf_optim_slot(r.o, k);
			}
			if (sparse_ranges(r.sp, &b->b, &r.sp->grad, 0) !=
			    TF_OK) {
				rc = fail(&r, TF_ENOMEM, "out of memory");
				goto out;
			}
		}
		if (fused) {
			if ((rc = tfi_linear_pass(r.lin, r.g, r.o, &b->b, m,
			                          &loss)) != TF_OK) {
				rc = fail(&r, rc, "out of memory");
				goto out;
			}
		} else if ((rc = tfi_towers_run(&tw, r.g, &b->b, m, &loss)) !=
		           TF_OK) {
			rc = fail(&r, rc, "%s", tw.msg);
			goto out;
		}
		if (!isfinite(loss)) {
			diverged = 1; /* its checkpoint is the last good one */
			rc = fail(
			    &r, TF_EINTERNAL,
			    "step %llu: the loss is %g; stopping (the last "
			    "checkpoint is kept; try a lower "
			    "--learning-rate)",
			    (unsigned long long)r.h.step + 1, loss);
			goto out;
		}
		if ((rc = regularize_weights(r.g, cfg->l1, cfg->l2)) != TF_OK) {
			rc = fail(&r, rc, "%s", tf_errmsg(r.g));
			goto out;
		}
		lr =
		    tf_lr_decay(r.h.learning_rate, r.h.step, cfg->lr_decay_rate,
		                cfg->lr_decay_steps, cfg->lr_staircase);
		/* The one exchange of a step: the optimizer here, or the
		 * gradient to the ps tasks and their values back. */
		if (r.cl != NULL) {
			if (r.sp != NULL) {
				struct batch *nb = tfi_prefetch_peek(&pf);
				if (sparse_ranges(r.sp, &b->b, &r.sp->grad,
				                  1) ||
				    sparse_ranges(
				        r.sp, nb->rc == TF_OK ? &nb->b : NULL,
				        &r.sp->want, 1)) {
					rc = fail(&r, TF_ENOMEM,
					          "out of memory");
					goto out;
				}
			}
			uint64_t at = r.h.step;
			rc = exchange(&r, &tw, b, lr, &loss);
			if (rc != TF_OK && tf_errcode(r.t) != TF_OK) {
				goto out; /* said */
			}
			if (rc != TF_OK) {
				rc = fail(&r, tf_errcode(r.cl),
				          "step %llu: %s; this trainer stops",
				          (unsigned long long)at + 1,
				          tf_errmsg(r.cl));
				goto out;
			}
			note_lost(&r);
		} else if (fused) {
			if (tfi_linear_apply(r.lin, r.g, r.o, (float)lr) !=
			    TF_OK) {
				rc = fail(&r, tf_errcode(r.o), "%s",
				          tf_errmsg(r.o));
				goto out;
			}
			r.h.step++;
		} else if (r.row_steps) {
			if ((rc = row_step(&r, params, grads, lr)) != TF_OK) {
				goto out;
			}
			r.h.step++;
		} else {
			tf_optim_step(r.o, params, grads, (float)lr);
			r.h.step++;
		}
		r.h.examples += rows;
		r.h.epoch = b->epoch;
		r.h.done = b->done;
		if (!trained) {
			note_fallbacks(&r, 1);
		}
		trained = 1;
		if (sink->progress != NULL) {
			struct tf_train_progress pr = {
			    r.h.step, r.h.examples - ex_mark0,
			    r.h.epoch - r.h.run_first_epoch, cfg->epochs, loss};
			sink->progress(sink->ctx, &pr);
		}
		if (cfg->steps_to_validate > 0 && leads(&r) &&
		    r.h.step >= next_report) {
			next_report = (r.h.step / cfg->steps_to_validate + 1) *
			              cfg->steps_to_validate;
			double tn = tfi_now();
			rc = report(
			    &r, m, lr,
			    (double)(r.h.examples - ex_mark) /
			        (tn - t_mark > 1e-9 ? tn - t_mark : 1e-9),
			    0);
			if (rc != TF_OK) {
				goto out;
			}
			tf_metrics_reset(m);
			t_mark = tfi_now();
			ex_mark = r.h.examples;
		}
		if ((rc = save_on_schedule(&r, &sc)) != TF_OK) {
			goto out;
		}
	}
	/* The final line's examples/s: of the training, not of the wait for
	 * the other trainers, the validation and the checkpoint after it
	 * (as a line of --steps-to-validate leaves its validation out) */
	double t_end = tfi_now();
	int ended = 0; /* the run had ended already: only marked so now */
	if (r.h.step == first_step && !stopped && r.continued && ran_out) {
		/* The run had trained to its end when it was stopped (killed
		 * after its last periodic checkpoint): it ends now, as it
		 * would have then. */
		ended = 1;
		if (sink->note != NULL && leads(&r)) {
			sink->note(sink->ctx,
			           "the run had reached the end of its "
			           "epochs: it is marked finished");
		}
	} else if (r.h.step == first_step && !stopped && r.chunked && ran_out) {
		/* every chunk was trained before this trainer came */
		if (sink->note != NULL) {
			sink->note(sink->ctx,
			           "every chunk of the run's epochs is "
			           "trained: nothing left for this "
			           "trainer");
		}
	} else if (r.h.step == first_step && !stopped) {
		/* Nothing trained: say why, and leave the checkpoint be. */
		rc =
		    cfg->max_steps > 0 && r.h.step >= cfg->max_steps
		        ? fail(&r, TF_EINVAL,
		               "the model is at step %llu already: --max-steps "
		               "%llu leaves nothing to train (raise it)",
		               (unsigned long long)r.h.step,
		               (unsigned long long)cfg->max_steps)
		        : fail(&r, TF_EFORMAT,
		               "no examples in the input: nothing to train");
		goto out;
	}
	r.h.run_finished = ran_out;
	if (ran_out && !ended && r.h.step - first_step < 10 && !cfg->stream &&
	    sink->note != NULL) {
		char msg[256];
		snprintf(
		    msg, sizeof msg,
		    "only %llu steps of training (%llu examples at "
		    "--batch-size %zu): a usable model wants more --epochs",
		    (unsigned long long)(r.h.step - first_step),
		    (unsigned long long)(r.h.examples - ex_mark0),
		    cfg->batch_size);
		sink->note(sink->ctx, msg);
	}
	if (tf_dataset_stdin_once(r.ds) && !cfg->stream && sink->note != NULL) {
		char msg[TFI_MSG_MAX];
		snprintf(msg, sizeof msg,
		         "%s held more than 256 MiB of records: read for one "
		         "pass only (give a file for more)",
		         tfi_dataset_once_name(r.ds));
		sink->note(sink->ctx, msg);
	}
	if (r.cl != NULL) {
		/* Done here.  The chief waits for the other trainers, takes
		 * what the ps tasks hold at one step, validates and
		 * checkpoints it, and tells them the run is over. */
		double pt = cfg->peer_timeout > 0 ? cfg->peer_timeout : 60;
		if ((rc = tfi_ps_done(r.cl, 0)) != TF_OK ||
		    (r.chief && !stopped &&
		     (rc = tfi_ps_wait_done(r.cl, r.trainers, 4 * pt + 60)) !=
		         TF_OK) ||
		    (r.chief &&
		     (rc = tfi_ps_snapshot(r.cl, host_block(&r, TFI_PARAMS, 1),
		                           r.o, &r.h.step, &r.h.trainers,
		                           &r.h.ntrainers)) != TF_OK)) {
			rc = fail(&r, tf_errcode(r.cl), "%s", tf_errmsg(r.cl));
			goto out;
		}
		if (r.chief && tfi_graph_commit(r.g, TFI_PARAMS) != TF_OK) {
			rc = fail(&r, TF_EINTERNAL, "%s", tf_errmsg(r.g));
			goto out;
		}
		if (!r.chief) {
			goto out;
		}
	}
	/* The final checkpoint records the final validation metrics. */
	if (cfg->validate != NULL && cfg->checkpoint_dir != NULL &&
	    (rc = validate(&r)) != TF_OK) {
		goto out;
	}
	/* The last checkpoint marks a run that ran out finished, even when
	 * a periodic one was written at that step already. */
	if ((r.h.step != sc.saved_step || !resumed || ran_out) &&
	    (rc = save(&r)) != TF_OK) {
		goto out;
	}
	/* A stream publishes what it trained last, as it ends. */
	if (cfg->publish_every > 0 && r.h.step != first_step &&
	    r.h.step != sc.published && (rc = published(&r)) != TF_OK) {
		goto out;
	}
	note_fallbacks(&r, 0);
	note_truncated(&r);
	rc = report(&r, m, lr,
	            (double)(r.h.examples - ex_mark) /
	                (t_end - t_mark > 1e-9 ? t_end - t_mark : 1e-9),
	            1);
	if (rc == TF_OK && r.cl != NULL && !stopped &&
	    (rc = tfi_ps_finish(r.cl)) != TF_OK) {
		rc = fail(&r, tf_errcode(r.cl), "%s", tf_errmsg(r.cl));
	}
out:
	if (rc != TF_OK && trained && !diverged && r.cl == NULL &&
	    r.h.step != sc.saved_step && cfg->checkpoint_dir != NULL) {
		/* Keep what trained (a reader's error in a later file, a
		 * validation file gone): the checkpoint, then the error. */
		char msg[TFI_MSG_MAX];
		snprintf(msg, sizeof msg, "%s", tf_errmsg(t));
		tf_errclear(t); /* the first error is kept: this one's */
		if (save(&r) == TF_OK) {
			fail(&r, rc, "%s (step %llu is checkpointed in %s)",
			     msg, (unsigned long long)r.h.step,
			     cfg->checkpoint_dir);
		} else {
			char why[TFI_MSG_MAX];
			snprintf(why, sizeof why, "%s", tf_errmsg(t));
			tf_errclear(t);
			fail(&r, rc,
			     "%s (and no checkpoint could be written: "
			     "%s)",
			     msg, why);
		}
	}
	tfi_prefetch_stop(&pf);
	tfi_towers_stop(&tw);
	sparse_free(r.sp);
	tfi_linear_free(r.lin);
	tf_metrics_free(m);
	tf_metrics_free(r.vm);
	tf_dataset_free(r.vd);
	tf_batch_release(&r.vb);
	tf_events_free(r.ev);
	tf_ckpt_header_release(&r.h);
	free(r.sig);
	free(r.val_text);
	free(r.user_spec);
	free(r.fallbacks_said);
	tf_ps_client_free(r.cl);
	tf_dataset_free(r.ds);
	tf_graph_free(r.g);
	tf_optim_free(r.o);
	tf_ckpt_free(r.ck);
	return rc;
}
