/*
 * batch.c - predicting a request: on a free model of its version, or,
 * with --enable-batching, queued and run with other requests of the
 * same version as one batch (up to --max-batch-size rows, waiting up to
 * --batch-timeout-micros for more).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tool.h"
#include "serve.h"

struct job {
	struct version *v;
	const struct tf_batch *in;
	float *y;
	int done, rc;
	struct job *next;
};

#define MAX_JOBS 1024

struct batcher {
	pthread_mutex_t lock;
	pthread_cond_t more, done;
	struct job *head, *tail;
	pthread_t *workers;
	int nworkers;
};

/* Move queued jobs of v into jobs[*n], up to max rows in all (a first
 * job always goes); *rows counts them.  Called with the lock held. */
static void
collect(struct batcher *b, struct version *v, size_t max, struct job **jobs,
        int *n, size_t *rows)
{
	struct job **pp = &b->head, *prev = NULL;
	while (*pp != NULL && *n < MAX_JOBS) {
		struct job *j = *pp;
		if (j->v == v && (*n == 0 || *rows + j->in->rows <= max)) {
			*pp = j->next;
			if (b->tail == j) {
				b->tail = prev;
			}
			jobs[(*n)++] = j;
			*rows += j->in->rows;
		} else {
			prev = j;
			pp = &j->next;
		}
	}
}

static void *
batch_worker(void *arg)
{
	struct serve *sv = arg;
	struct batcher *b = sv->batch;
	struct tf_batch all = {0};
	float *y = NULL;
	size_t cap = 0;
	struct job *jobs[MAX_JOBS];
	pthread_mutex_lock(&b->lock);
	for (;;) {
		while (b->head == NULL && !atomic_load(&sv->stopping)) {
			pthread_cond_wait(&b->more, &b->lock);
		}
		if (b->head == NULL) {
			break;
		}
		struct timespec deadline;
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_nsec += sv->opt.batch_timeout_us * 1000;
		deadline.tv_sec += deadline.tv_nsec / 1000000000;
		deadline.tv_nsec %= 1000000000;
		struct version *v = b->head->v;
		size_t rows = 0;
		int n = 0;
		for (;;) {
			collect(b, v, sv->opt.max_batch, jobs, &n, &rows);
			if (rows >= sv->opt.max_batch || n == MAX_JOBS ||
			    atomic_load(&sv->stopping) ||
			    pthread_cond_timedwait(&b->more, &b->lock,
			                           &deadline) == ETIMEDOUT) {
				break;
			}
		}
		pthread_mutex_unlock(&b->lock);
		/* The jobs' rows one after another, in one batch. */
		int64_t o = tf_model_outputs(v->inst[0]);
		if (all.width != jobs[0]->in->width ||
		    all.id_width != jobs[0]->in->id_width) {
			tf_batch_release(&all);
			all.width = jobs[0]->in->width;
			all.id_width = jobs[0]->in->id_width;
		}
		all.rows = 0;
		if (rows > cap) {
			free(y);
			cap = rows;
			y = malloc(cap * (size_t)o * sizeof *y);
		}
		for (int i = 0; i < n && y != NULL; i++) {
			if (tf_batch_append(&all, jobs[i]->in) != TF_OK) {
				die(EX_SOFTWARE, "out of memory");
			}
		}
		if (y == NULL) {
			die(EX_SOFTWARE, "out of memory");
		}
		int k = serve_take(v);
		int rc = tf_model_predict(v->inst[k], &all, y);
		serve_give(v, k);
		pthread_mutex_lock(&b->lock);
		size_t at = 0;
		for (int i = 0; i < n; i++) {
			memcpy(jobs[i]->y, y + at * (size_t)o,
			       jobs[i]->in->rows * (size_t)o * sizeof *y);
			at += jobs[i]->in->rows;
			jobs[i]->rc = rc;
			jobs[i]->done = 1;
		}
		pthread_cond_broadcast(&b->done);
	}
	pthread_mutex_unlock(&b->lock);
	tf_batch_release(&all);
	free(y);
	return NULL;
}

int
serve_batching_start(struct serve *sv)
{
	struct batcher *b = calloc(1, sizeof *b);
	if (b == NULL) {
		return -1;
	}
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->more, NULL);
	pthread_cond_init(&b->done, NULL);
	sv->batch = b;
	b->workers = calloc((size_t)sv->opt.threads, sizeof *b->workers);
	for (int i = 0; b->workers && i < sv->opt.threads; i++) {
		if (pthread_create(&b->workers[i], NULL, batch_worker, sv) ==
		    0) {
			b->nworkers++;
		}
	}
	return b->nworkers > 0 ? 0 : -1;
}

void
serve_batching_stop(struct serve *sv)
{
	struct batcher *b = sv->batch;
	if (b == NULL) {
		return;
	}
	pthread_mutex_lock(&b->lock);
	pthread_cond_broadcast(&b->more);
	pthread_mutex_unlock(&b->lock);
	for (int i = 0; i < b->nworkers; i++) {
		pthread_join(b->workers[i], NULL);
	}
	free(b->workers);
	pthread_mutex_destroy(&b->lock);
	pthread_cond_destroy(&b->more);
	pthread_cond_destroy(&b->done);
	free(b);
	sv->batch = NULL;
}

int
serve_predict(struct serve *sv, struct version *v, struct tf_request *q)
{
	struct batcher *b = sv->batch;
	if (b == NULL) {
		int k = serve_take(v);
		int rc = tf_request_predict(q, v->inst[k]);
		serve_give(v, k);
		return rc;
	}
	struct job j = {v,   tf_request_batch(q), tf_request_outputs(q), 0, 0,
	                NULL};
	pthread_mutex_lock(&b->lock);
	if (b->tail != NULL) {
		b->tail->next = &j;
	} else {
		b->head = &j;
	}
	b->tail = &j;
	pthread_cond_signal(&b->more);
	while (!j.done) {
		pthread_cond_wait(&b->done, &b->lock);
	}
	pthread_mutex_unlock(&b->lock);
	return j.rc;
}
