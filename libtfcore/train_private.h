/*
 * train_private.h - what the training loop (train.c) shares with its
 * reader thread (prefetch.c) and its towers (towers.c).  Not installed.
 */
#ifndef TF_TRAIN_PRIVATE_H
#define TF_TRAIN_PRIVATE_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "tf/batch.h"
#include "tf/dataset.h"
#include "tf/device.h"
#include "tf/graph.h"
#include "tf/metrics.h"
#include "tf/plugin.h"

/* ---- waiting for another thread ---- */

/* Spins of a wait before it sleeps: some tens of microseconds. */
#define TFI_SPINS 4000

/* Spin i of a wait: a pause, and every 256th a yield (the thread waited
 * for may want this CPU). */
static inline void
tfi_spin(int i)
{
	if ((i & 255) == 255) {
		sched_yield();
	} else {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#elif defined(__aarch64__)
		__asm__ __volatile__("yield");
#endif
	}
}

/* ---- the reader thread (prefetch.c) ---- */

/* Batches read ahead of the one training: at most AHEAD, at least 3,
 * as many as fit in AHEAD_BYTES (small batches come many a second, and
 * the reader, woken only once the trainer has taken half of them, does
 * not sleep and wake for each one). */
#define AHEAD       16
#define AHEAD_BYTES (4u << 20)

struct batch {
	struct tf_batch b;
	uint64_t epoch, done; /* dataset position after this batch */
	uint64_t rows_epoch;  /* the epoch its rows are of */
	int rc;
	char msg[TFI_MSG_MAX];
	_Atomic int full; /* set (under the lock) once read; spun on */
	/* for a checkpoint's input_state: the position after the batch,
	 * and where its rows came from */
	struct tfi_ds_mark mark;
	struct tfi_ds_pos *log;
	size_t nlog;
	/* chunks handed out: its rows by chunk ((epoch, chunk, rows)) */
	uint64_t *spans;
	size_t nspans, capspans;
};

struct prefetch {
	struct tf_dataset *ds;
	struct tf_device *dev; /* a GPU: the batches are page-locked */
	void *pinned[AHEAD][3];
	size_t bs;
	struct batch b[AHEAD];
	size_t n;          /* batches in the ring */
	size_t head, tail; /* the next to train, the next to read into */
	size_t nfull;      /* batches read and not yet trained */
	int waiting;       /* the trainer waits for a batch */
	int refill;        /* the reader, the ring full, waits until half */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop, started;
	int pause, idle; /* input_state(): hold the thread between batches */
};

/* Start the thread reading batches of bs rows of ds (page-locked for a
 * GPU's dev); TF_ENOMEM or TF_EINTERNAL when it cannot. */
int tfi_prefetch_start(struct prefetch *p, struct tf_dataset *ds, size_t bs,
                       struct tf_device *dev);
/* The next batch in order (waiting for it); tfi_prefetch_release() hands
 * it back. */
struct batch *tfi_prefetch_next(struct prefetch *p);
void tfi_prefetch_release(struct prefetch *p);
/* The batch after the one held: waited for (peek), or NULL unless the
 * reader has it already, with rows (ready). */
struct batch *tfi_prefetch_peek(struct prefetch *p);
struct batch *tfi_prefetch_ready(struct prefetch *p);
/* The dataset's state after cur, the batch held, into *state (a
 * checkpoint's input_state); the error is the dataset's. */
int tfi_prefetch_state(struct prefetch *p, const struct batch *cur,
                       char **state);
/* Stop the thread and free the batches (also after a failed start). */
void tfi_prefetch_stop(struct prefetch *p);

/* ---- towers (towers.c) ---- */

struct towers;
struct tower {
	struct tf_graph *g;
	pthread_t thread;
	struct towers *all;
};

struct part {
	struct tf_batch b;  /* a view of the step's batch */
	uint64_t seed;      /* its generator's seed (not the first part's) */
	struct tf_graph *g; /* the graph that ran it */
	int rc;
	double loss;
	float *grad; /* its gradient (np floats), predictions (rows x pw) */
	float *pred;
};

struct towers {
	int n; /* threads with a graph (1: none) */
	struct tower *t;
	struct part *p;
	int maxparts, nparts; /* parts of a full batch; of this step */
	size_t np, pw;        /* parameters; prediction columns */
	const char *pred;     /* the prediction node */
	float *grads, *preds, *state;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	atomic_uint_fast64_t gen; /* the step the threads are asked to run */
	atomic_int next;          /* the next part to take */
	atomic_int left;          /* parts of this step not yet done */
	atomic_int failed;        /* a part failed: take no more */
	atomic_int sleepers;      /* threads asleep (or going to sleep) on cv */
	atomic_int stop;
	int threads;
	char msg[TFI_MSG_MAX]; /* why a start or a step failed */
};

int tfi_towers_start(struct towers *w, struct tf_graph *rg, const char *spec,
                     const struct tf_registry *reg, uint64_t seed, int task,
                     int n, size_t bs);
int tfi_towers_run(struct towers *w, struct tf_graph *rg,
                   const struct tf_batch *b, struct tf_metrics *m,
                   double *loss);
void tfi_towers_stop(struct towers *w);

#endif
