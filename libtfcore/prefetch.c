/*
 * prefetch.c - the reader thread of a training run (for train.c).
 *
 * A reader thread decodes the next batches while the current one trains.
 * One producer reads the dataset in order, so batches (and resume
 * positions, carried with each batch) are exactly those of a plain loop.
 * A stream with nothing new hands over an empty batch (TF_EAGAIN) now
 * and then, so the trainer still checkpoints, publishes and stops.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tf/dataset.h"
#include "tf/device.h"
#include "train_private.h"

/* The read's rows by chunk, kept with its batch. */
static void
keep_spans(struct prefetch *p, struct batch *b)
{
	size_t n;
	const uint64_t *v = tfi_dataset_spans(p->ds, &n);
	b->nspans = 0;
	if (n > b->capspans) {
		uint64_t *q = realloc(b->spans, n * sizeof *q);
		if (q == NULL) {
			if (b->rc == TF_OK) {
				b->rc = TF_ENOMEM;
				snprintf(b->msg, sizeof b->msg,
				         "out of memory");
			}
			return;
		}
		b->spans = q;
		b->capspans = n;
	}
	if (n > 0) {
		memcpy(b->spans, v, n * sizeof *v);
	}
	b->nspans = n;
}

static void *
prefetch_main(void *arg)
{
	struct prefetch *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->mu);
		if (p->b[p->tail].full) {
			p->refill = 1;
		}
		while ((p->b[p->tail].full || p->pause ||
		        (p->refill && p->nfull > p->n / 2)) &&
		       !p->stop) {
			p->idle = 1;
			pthread_cond_broadcast(&p->cv);
			pthread_cond_wait(&p->cv, &p->mu);
		}
		p->idle = 0;
		p->refill = 0;
		if (p->stop) {
			pthread_mutex_unlock(&p->mu);
			break;
		}
		struct batch *b = &p->b[p->tail];
		pthread_mutex_unlock(&p->mu);
		tfi_dataset_log(p->ds, b->log, p->bs);
		b->rc = tf_dataset_read(p->ds, &b->b);
		b->nlog = tfi_dataset_logged(p->ds);
		tfi_dataset_log(p->ds, NULL, 0);
		tfi_dataset_mark(p->ds, &b->mark);
		b->epoch = tf_dataset_epoch(p->ds);
		b->rows_epoch = tfi_dataset_rows_epoch(p->ds);
		b->done = tf_dataset_done(p->ds);
		keep_spans(p, b);
		if (b->rc != TF_OK && b->rc != TF_EOF && b->rc != TF_EAGAIN) {
			snprintf(b->msg, sizeof b->msg, "%s", tf_errmsg(p->ds));
		}
		pthread_mutex_lock(&p->mu);
		b->full = 1;
		p->nfull++;
		p->tail = (p->tail + 1) % p->n;
		if (p->waiting) {
			pthread_cond_broadcast(&p->cv);
		}
		pthread_mutex_unlock(&p->mu);
		if (b->rc != TF_OK && b->rc != TF_EAGAIN) {
			break; /* the end, or an error: nothing more to read */
		}
	}
	pthread_mutex_lock(&p->mu);
	p->idle = 1; /* for good */
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* A GPU's batches are page-locked, so their upload is one DMA each and
 * does not stage through the driver's buffers (refused: they still
 * upload, staged). */
static void
pin_batch(struct prefetch *p, int i)
{
	struct tf_batch *b = &p->b[i].b;
	void *mem[3] = {b->x, b->y, b->ids};
	size_t len[3] = {b->capacity * (size_t)b->width * sizeof(float),
	                 b->capacity * sizeof(float),
	                 b->capacity * (size_t)b->id_width * sizeof(int64_t)};
	for (int k = 0; k < 3; k++) {
		if (mem[k] != NULL && len[k] > 0 &&
		    tf_device_pin(p->dev, mem[k], len[k]) == 0) {
			p->pinned[i][k] = mem[k];
		}
	}
}

int
tfi_prefetch_start(struct prefetch *p, struct tf_dataset *ds, size_t bs,
                   struct tf_device *dev)
{
	memset(p, 0, sizeof *p);
	p->ds = ds;
	p->bs = bs;
	p->dev = dev;
	p->n = AHEAD;
	for (size_t i = 0; i < p->n; i++) {
		if (tf_dataset_batch(ds, &p->b[i].b, bs) != TF_OK ||
		    (p->b[i].log = malloc(bs * sizeof *p->b[i].log)) == NULL) {
			return TF_ENOMEM;
		}
		if (dev != NULL && tf_device_kind(dev) != TF_DEVICE_CPU) {
			pin_batch(p, i);
		}
		if (i == 0) {
			const struct tf_batch *b = &p->b[0].b;
			size_t bytes =
			    b->capacity * ((size_t)b->width + 1) *
			        sizeof(float) +
			    b->capacity * (size_t)b->id_width * sizeof(int64_t);
			size_t fit = AHEAD_BYTES / (bytes ? bytes : 1);
			p->n = fit < 3 ? 3 : fit > AHEAD ? AHEAD : fit;
		}
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (pthread_create(&p->thread, NULL, prefetch_main, p) != 0) {
		return TF_EINTERNAL;
	}
	p->started = 1;
	return TF_OK;
}

/* Wait a while for batch b by spinning, before the lock's variable: when
 * the trainer is the faster, a batch comes every few tens of
 * microseconds, and a sleep for each would cost the reader a wake (a
 * system call) a batch. */
static void
spin_for(const struct batch *b)
{
	for (int i = 0; i < TFI_SPINS && !atomic_load(&b->full); i++) {
		tfi_spin(i);
	}
}

/* The batch after the one held (waiting for it): a look ahead, the
 * next tfi_prefetch_next() returns it. */
struct batch *
tfi_prefetch_peek(struct prefetch *p)
{
	struct batch *b = &p->b[(p->head + 1) % p->n];
	spin_for(b);
	pthread_mutex_lock(&p->mu);
	while (!b->full) {
		p->waiting = 1;
		pthread_cond_wait(&p->cv, &p->mu);
	}
	p->waiting = 0;
	pthread_mutex_unlock(&p->mu);
	return b;
}

/* The batch after the one held when the reader has it already, with
 * rows; NULL otherwise (an upload ahead never waits for the reader). */
struct batch *
tfi_prefetch_ready(struct prefetch *p)
{
	struct batch *b = &p->b[(p->head + 1) % p->n];
	pthread_mutex_lock(&p->mu);
	int full = b->full;
	pthread_mutex_unlock(&p->mu);
	return full && b->rc == TF_OK && b->b.rows > 0 ? b : NULL;
}

/* The next batch in order; tfi_prefetch_release() hands it back. */
struct batch *
tfi_prefetch_next(struct prefetch *p)
{
	spin_for(&p->b[p->head]);
	pthread_mutex_lock(&p->mu);
	while (!p->b[p->head].full) {
		p->waiting = 1;
		pthread_cond_wait(&p->cv, &p->mu);
	}
	p->waiting = 0;
	struct batch *b = &p->b[p->head];
	pthread_mutex_unlock(&p->mu);
	return b;
}

void
tfi_prefetch_release(struct prefetch *p)
{
	pthread_mutex_lock(&p->mu);
	p->b[p->head].full = 0;
	p->nfull--;
	p->head = (p->head + 1) % p->n;
	if (p->idle && p->nfull <= p->n / 2) {
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
}

void
tfi_prefetch_stop(struct prefetch *p)
{
	if (p->started) {
		pthread_mutex_lock(&p->mu);
		p->stop = 1;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->thread, NULL);
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
	}
	for (int i = 0; i < AHEAD; i++) {
		for (int k = 0; k < 3; k++) {
			if (p->pinned[i][k] != NULL) {
				tf_device_unpin(p->dev, p->pinned[i][k]);
				p->pinned[i][k] = NULL;
			}
		}
		tf_batch_release(&p->b[i].b);
		free(p->b[i].log);
		p->b[i].log = NULL;
		free(p->b[i].spans);
		p->b[i].spans = NULL;
		p->b[i].capspans = 0;
	}
	p->started = 0;
}

/* The dataset's state after batch cur, the one held (tfi_dataset_state()
 * into *state): the thread is held between batches while it is worked
 * out from the live shuffle buffer and the logs of the batches read
 * ahead. */
int
tfi_prefetch_state(struct prefetch *p, const struct batch *cur, char **state)
{
	pthread_mutex_lock(&p->mu);
	p->pause = 1;
	while (!p->idle) {
		pthread_cond_wait(&p->cv, &p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	const struct tfi_ds_pos *logs[AHEAD];
	size_t nlogs[AHEAD], n = 0;
	uint64_t epochs[AHEAD];
	uint64_t before = cur->mark.epoch; /* each batch's rows' epoch */
	for (size_t k = 1; k < p->n; k++) {
		struct batch *a = &p->b[(p->head + k) % p->n];
		if (!a->full) {
			break;
		}
		logs[n] = a->log;
		nlogs[n] = a->nlog;
		epochs[n] = before;
		before = a->mark.epoch;
		n++;
	}
	int rc =
	    tfi_dataset_state(p->ds, &cur->mark, logs, nlogs, epochs, n, state);
	pthread_mutex_lock(&p->mu);
	p->pause = 0;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return rc;
}
