/*
 * towers.c - a training step on --threads N towers (for train.c).
 *
 * Towers (--threads N): each step's batch split in parts of nearly equal
 * rows, each through a copy of the graph on one of N threads (its own
 * activations and gradient; the parameters are the model's one copy),
 * then one gradient: the parts' weighted by their rows and summed in
 * part order, so a run is repeatable for its (seed, thread count).
 * There are 4N parts for a model of up to CHUNK_PARAMS parameters (N
 * for a larger one, whose parts' gradients would cost more to keep
 * apart than they save), taken by whichever thread is free: the reader
 * thread shares the CPUs with the towers, and a thread it slows takes
 * fewer parts instead of holding up the step.  Which thread ran a part
 * changes nothing: each part's gradient, loss and predictions are kept
 * apart and combined in part order.  The first part always runs on the
 * run's graph, on the calling thread, first.  As in TensorFlow's
 * multi-tower training, batch normalisation takes each part's
 * statistics and keeps the first part's moving averages; the other
 * parts' random numbers (dropout) are seeded from the run's generator
 * at each step, so a checkpoint's generator resumes them all.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kernels/kernels.h"
#include "tf/metrics.h"
#include "tf/rng.h"
#include "train_private.h"

#define CHUNK_PARAMS (1 << 16)

/*
 * A step is handed to the tower threads and its end handed back through
 * counters, each waited for by spinning a while and then sleeping on
 * the condition variable: a part of a small network takes well under a
 * millisecond, and a thread that sleeps between steps is woken through
 * the scheduler (on a virtual machine, an interrupt to a halted CPU)
 * each time, which costs as much as a part's own arithmetic.  The
 * sleepers count says whether a wake-up is needed at all; each side
 * publishes its counter before it reads the other's sleepers (both
 * sequentially consistent), so a wake-up is never lost.
 */

/* A failure: its code, the message in w->msg. */
static int tw_fail(struct towers *w, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
tw_fail(struct towers *w, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->msg, sizeof w->msg, fmt, ap);
	va_end(ap);
	return code;
}

/* Wait until done(w, arg) holds: spin, then sleep on the variable. */
static void
towers_wait(struct towers *w, int (*done)(struct towers *, uint64_t),
            uint64_t arg)
{
	for (int i = 0; i < TFI_SPINS; i++) {
		if (done(w, arg)) {
			return;
		}
		tfi_spin(i);
	}
	pthread_mutex_lock(&w->mu);
	atomic_fetch_add(&w->sleepers, 1);
	while (!done(w, arg)) {
		pthread_cond_wait(&w->cv, &w->mu);
	}
	atomic_fetch_sub(&w->sleepers, 1);
	pthread_mutex_unlock(&w->mu);
}

/* Wake the sleepers, if any, after a counter has changed. */
static void
towers_wake(struct towers *w)
{
	if (atomic_load(&w->sleepers) > 0) {
		pthread_mutex_lock(&w->mu);
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
	}
}

static int
step_posted(struct towers *w, uint64_t seen)
{
	return atomic_load(&w->gen) != seen || atomic_load(&w->stop);
}

static int
step_done(struct towers *w, uint64_t unused)
{
	(void)unused;
	return atomic_load(&w->left) == 0;
}

/* y = c x and y += c x, for the parts' gradients: vector loops, each
 * element's arithmetic as a scalar loop's (no contraction in C11). */
static TF_VECTOR_CLONES void
scaled(float *restrict y, const float *restrict x, float c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		y[i] = c * x[i];
	}
}

static TF_VECTOR_CLONES void
add_scaled(float *restrict y, const float *restrict x, float c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		y[i] += c * x[i];
	}
}

/* Batch b through graph g, forward and backward. */
static int
train_pass(struct tf_graph *g, const struct tf_batch *b)
{
	int rc = tf_graph_feed_batch(g, b);
	rc = rc ? rc : tf_graph_forward(g, 1);
	return rc ? rc : tf_graph_backward(g);
}

/* Part k on graph g: forward, backward, and what it gave kept apart. */
static void
run_part(struct towers *w, struct tf_graph *g, int k, const char *pred)
{
	struct part *p = &w->p[k];
	p->g = g;
	if (k > 0) {
		tf_rng_seed(tf_graph_rng(g), p->seed);
	}
	int rc = train_pass(g, &p->b);
	p->rc = rc;
	if (rc == TF_OK) {
		p->loss = tf_graph_loss(g);
		memcpy(p->grad, tf_graph_grads(g), w->np * sizeof(float));
		memcpy(p->pred, tf_tensor_f32(tf_graph_value(g, pred)),
		       p->b.rows * w->pw * sizeof(float));
	} else {
		atomic_store(&w->failed, 1);
	}
	if (atomic_fetch_sub(&w->left, 1) == 1) {
		towers_wake(w);
	}
}

/* Take parts until there are none; after a part failed, those left are
 * taken and counted without running (the step waits for every part). */
static void
take_parts(struct towers *w, struct tf_graph *g, const char *pred)
{
	for (;;) {
		int k = atomic_fetch_add(&w->next, 1);
		if (k >= w->nparts) {
			break;
		}
		if (atomic_load(&w->failed)) {
			if (atomic_fetch_sub(&w->left, 1) == 1) {
				towers_wake(
				    w); /* part k stays unrun (g NULL) */
			}
			continue;
		}
		run_part(w, g, k, pred);
	}
}

static void *
tower_main(void *arg)
{
	struct tower *t = arg;
	struct towers *w = t->all;
	uint64_t seen = 0;
	for (;;) {
		towers_wait(w, step_posted, seen);
		if (atomic_load(&w->stop)) {
			break;
		}
		seen = atomic_load(&w->gen);
		take_parts(w, t->g, w->pred);
	}
	return NULL;
}

void
tfi_towers_stop(struct towers *w)
{
	if (w->threads > 0) {
		pthread_mutex_lock(&w->mu);
		atomic_store(&w->stop, 1);
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
	}
	for (int k = 1; k < w->n; k++) {
		if (k <= w->threads) {
			pthread_join(w->t[k].thread, NULL);
		}
		tf_graph_free(w->t[k].g);
	}
	if (w->threads > 0) {
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->cv);
	}
	free(w->t);
	free(w->p);
	free(w->grads);
	free(w->preds);
	free(w->state);
	memset(w, 0, sizeof *w);
}

/* n threads beside the run's graph rg (built from spec, its parameters
 * set; the towers' copies are built with seed and share them), for
 * batches of up to bs rows of a model of task. */
int
tfi_towers_start(struct towers *w, struct tf_graph *rg, const char *spec,
                 const struct tf_registry *reg, uint64_t seed, int task, int n,
                 size_t bs)
{
	memset(w, 0, sizeof *w);
	w->n = 1;
	w->pred = tfi_prediction_node(task);
	if (n <= 1) {
		return TF_OK;
	}
	w->np = tf_graph_nparams(rg);
	int64_t pw = tf_graph_width(rg, w->pred);
	w->pw = pw > 0 ? (size_t)pw : 1;
	w->maxparts = w->np <= CHUNK_PARAMS ? 4 * n : n;
	if ((size_t)w->maxparts > bs) {
		w->maxparts = (int)bs;
	}
	size_t ns = tf_graph_nstate(rg);
	w->t = calloc((size_t)n, sizeof *w->t);
	w->p = calloc((size_t)w->maxparts, sizeof *w->p);
	w->grads = malloc((size_t)w->maxparts * (w->np + 1) * sizeof(float));
	w->preds = malloc((bs * w->pw + 1) * sizeof(float));
	w->state = malloc((ns + 1) * sizeof(float));
	if (!w->t || !w->p || !w->grads || !w->preds || !w->state) {
		return tw_fail(w, TF_ENOMEM, "out of memory");
	}
	w->t[0].g = rg;
	for (int k = 1; k < n; k++) {
		struct tf_graph *g = tf_graph_new();
		w->t[k].g = g;
		w->n = k + 1;
		if (g == NULL) {
			return tw_fail(w, TF_ENOMEM, "out of memory");
		}
		if (tf_graph_parse(g, spec) != TF_OK ||
		    tf_graph_build(g, reg, tf_device_cpu(), seed) != TF_OK ||
		    tfi_graph_share_params(g, rg) != TF_OK) {
			return tw_fail(w, tf_errcode(g), "tower %d: %s", k,
			               tf_errmsg(g));
		}
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	for (int k = 1; k < n; k++) {
		w->t[k].all = w;
		if (pthread_create(&w->t[k].thread, NULL, tower_main,
		                   &w->t[k]) != 0) {
			return tw_fail(w, TF_EINTERNAL,
			               "cannot start a thread");
		}
		w->threads = k;
	}
	return TF_OK;
}

/* One step's forward and backward over batch b on every tower; the
 * gradient in the run's graph rg, the loss (the rows' mean) in *loss and
 * each part's predictions added to m. */
int
tfi_towers_run(struct towers *w, struct tf_graph *rg, const struct tf_batch *b,
               struct tf_metrics *m, double *loss)
{
	const char *pred = w->pred;
	size_t rows = b->rows;
	int parts =
	    w->n > 1 ? (w->maxparts < (int)rows ? w->maxparts : (int)rows) : 1;
	if (parts <= 1) { /* the whole batch on the run's graph */
		int rc = train_pass(rg, b);
		if (rc != TF_OK) {
			return tw_fail(w, rc, "%s", tf_errmsg(rg));
		}
		*loss = tf_graph_loss(rg);
		const float *p = tf_graph_fetch(rg, pred);
		if (p == NULL) {
			return tw_fail(w, TF_ENOMEM, "out of memory");
		}
		tf_metrics_add(m, p, b->y, rows, *loss);
		return TF_OK;
	}
	struct tf_rng *rng = tf_graph_rng(rg);
	float *pr = w->preds;
	for (int k = 0; k < parts; k++) {
		size_t lo = rows * (size_t)k / (size_t)parts;
		size_t hi = rows * (size_t)(k + 1) / (size_t)parts;
		struct part *p = &w->p[k];
		struct tf_batch *v = &p->b;
		*v = *b;
		v->x = b->x + lo * (size_t)b->width;
		v->ids = b->ids ? b->ids + lo * (size_t)b->id_width : NULL;
		v->y = b->y + lo;
		v->rows = hi - lo;
		v->capacity = hi - lo;
		p->seed = k > 0 ? tf_rng_next(rng) : 0;
		p->g = NULL; /* set by the part's run */
		p->rc = TF_OK;
		p->grad = w->grads + (size_t)k * w->np;
		p->pred = pr;
		pr += v->rows * w->pw;
	}
	/* the parts before next: a thread that takes one sees them
	 * (next's store and load are sequentially consistent) */
	w->nparts = parts;
	atomic_store(&w->failed, 0);
	atomic_store(&w->left, parts);
	atomic_store(&w->next, 1);
	atomic_fetch_add(&w->gen, 1);
	towers_wake(w);
	/* The first part on the run's graph, first; its generator and
	 * moving averages are the run's, whatever else this thread runs.
	 * Each part's gradient starts at zero (a row-sparse run's graph
	 * leaves its gradient to the step, which takes the parts' sum). */
	int zeroed = tfi_graph_zero_grads(rg, 1);
	run_part(w, rg, 0, pred);
	struct tf_rng kept = *rng;
	size_t ns = tf_graph_nstate(rg);
	float *st = tf_graph_state(rg);
	if (ns > 0) {
		memcpy(w->state, st, ns * sizeof(float));
	}
	take_parts(w, rg, pred);
	towers_wait(w, step_done, 0);
	tfi_graph_zero_grads(rg, zeroed);
	*rng = kept;
	if (ns > 0) {
		memcpy(st, w->state, ns * sizeof(float));
	}
	/* the first part that failed says why (the parts after it may not
	 * have run) */
	for (int k = 0; k < parts; k++) {
		struct part *p = &w->p[k];
		if (p->g != NULL && p->rc != TF_OK) {
			return tw_fail(w, p->rc, "%s", tf_errmsg(p->g));
		}
	}
	for (int k = 0; k < parts; k++) {
		if (w->p[k].g == NULL) {
			return tw_fail(w, TF_EINTERNAL,
			               "part %d of the step did not run", k);
		}
	}
	/* The batch's mean: each part's weighted by its share of rows,
	 * added in part order. */
	size_t np = w->np;
	float *g0 = tf_graph_grads(rg);
	scaled(g0, w->p[0].grad, (float)w->p[0].b.rows / (float)rows, np);
	*loss = 0;
	for (int k = 0; k < parts; k++) {
		const struct part *p = &w->p[k];
		*loss += p->loss * (double)p->b.rows / (double)rows;
		tf_metrics_add(m, p->pred, p->b.y, p->b.rows, p->loss);
		if (k > 0) {
			add_scaled(g0, p->grad, (float)p->b.rows / (float)rows,
			           np);
		}
	}
	return TF_OK;
}
