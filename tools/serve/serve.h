/*
 * serve.h - tf-serve's parts, over one struct serve.
 *
 *	main.c      options, start and stop
 *	versions.c  the models served, their versions, hot reload
 *	batch.c     predicting: directly, or batched across requests
 *	route.c     a request's answer (REST and nng share it)
 *	http.c      the REST API on libmicrohttpd
 *	grpc.c      TF Serving's gRPC API (HTTP/2 through libnghttp2)
 *	nng.c       the nng request/reply endpoint
 *	stdin.c     the --stdin filter
 *	train.c     :train, examples appended to the queue (--train-queue)
 *	metrics.c   counters and the Prometheus text
 *
 * A model's current version is reference-counted: a request takes a
 * reference for its whole life, so a swap never pulls a version from
 * under it; the old version is freed when its last request finishes.
 * Each version holds one loaded model per worker (models are not
 * thread-safe while predicting); parsing and answering only read it.
 */
#ifndef TF_SERVE_H
#define TF_SERVE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "tf/tf.h"

/* ---- settings ------------------------------------------------------------ */

struct serve_opts {
	int threads;
	int batching;
	size_t max_batch;
	long batch_timeout_us;
	size_t max_body, max_rows, max_header;
	unsigned max_conn, idle;
	double poll;
	int port;
	int grpc_port; /* -1: no gRPC API */
	const char *address;
	const char *nng_url;
	int allow_missing;             /* examples may lack features */
	const char *device, *gpu_math; /* --device, --gpu-math */
	struct tf_device *dev;         /* ... opened, for every model */
	const char *train_queue;       /* :train appends here (or NULL) */
	uint64_t train_max;            /* ... bytes it may hold untrained */
	uint64_t train_segment;        /* ... bytes a segment */
};

/* ---- versions and models ------------------------------------------------- */

/* One loaded version: a model per worker, a pool of free ones. */
struct version {
	int64_t number;
	int refs; /* requests using it, plus one while current */
	struct tf_model **inst;
	int ninst;
	int *free_idx;
	int nfree;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char *metadata; /* the GET .../metadata body */
};

/* What GET /v1/models/NAME reports about a version. */
struct vstatus {
	int64_t number;
	const char *state; /* AVAILABLE, END */
	const char *code;  /* OK, DATA_LOSS, ... */
	char *message;
};

/* A version that failed to load, and what its files looked like then
 * (it is tried again only when they change). */
struct failed {
	int64_t number;
	char sig[96];
};

/* The metrics count requests by method, tf_method's numbers (one enum
 * for REST, gRPC and the metrics; INSTANCE and LINES, --stdin's, are
 * never counted), and by HTTP status. */
#define NMETHODS_COUNTED (TF_METHOD_TRAIN + 1)
#define NCODES           7
#define NBUCKETS         14

/* A model being served: its base, current version, history, counters. */
struct served {
	char *name, *base;
	int archive;
	pthread_mutex_t lock;
	struct version *cur;
	struct vstatus st[32];
	int nst;
	struct failed fail[32];
	int nfail;
	char archive_sig[96];
	int warned_empty; /* said once that BASE holds no version */
	atomic_ulong req[NMETHODS_COUNTED][NCODES];
	atomic_ulong hist[NBUCKETS + 1];
	atomic_ulong hist_count, hist_sum_ns;
	atomic_ulong loads, load_failures;
};

struct batcher; /* batch.c */

struct serve {
	struct serve_opts opt;
	struct tf_registry *reg;
	struct served *models;
	int nmodels;
	atomic_ulong other_req[NCODES]; /* requests naming no model */
	atomic_int inflight;            /* HTTP requests under way */
	/* REST connections the guard closed (http.c): waiting past
	 * --idle-timeout, and at --max-connections */
	atomic_ulong closed_idle, closed_limit;
	atomic_int stopping;
	struct batcher *batch; /* with --enable-batching */
	/* --train-queue: the queue :train appends to (one append at a
	 * time), the examples accepted and refused */
	struct tf_queue *queue;
	pthread_mutex_t queue_lock;
	atomic_ulong train_accepted, train_refused;
	pthread_mutex_t watch_lock;
	pthread_cond_t watch_wake;
};

/* versions.c */
void serve_add_model(struct serve *sv, const char *name, const char *base);
void serve_load_config(struct serve *sv, const char *path);
/* Serve the highest version of s's base that loads. */
void serve_scan(struct serve *sv, struct served *s);
/* The watcher thread: scans every poll interval until stopping. */
void *serve_watcher(void *sv);
/* The current version (or version want) with a reference, or NULL. */
struct version *serve_acquire(struct served *s, int64_t want);
void serve_release(struct served *s, struct version *v);
/* A free model of v (waiting while all are busy), and back. */
int serve_take(struct version *v);
void serve_give(struct version *v, int i);
void serve_free_models(struct serve *sv);

/* batch.c */
int serve_batching_start(struct serve *sv);
void serve_batching_stop(struct serve *sv);
/* Predict q's rows with v: directly, or as part of a batch. */
int serve_predict(struct serve *sv, struct version *v, struct tf_request *q);

/* metrics.c: a growable text, the counters, their Prometheus text. */
struct sbuf {
	char *p;
	size_t len, cap;
};
void sb_add(struct sbuf *b, const char *s, size_t n);
void sb_printf(struct sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void serve_count(struct serve *sv, struct served *s, int method, int status,
                 double secs);
void serve_metrics_text(struct serve *sv, struct sbuf *b);

/* route.c */
struct reply {
	int status;
	const char *type; /* content type */
	struct sbuf body;
	int retry_after; /* seconds (a 503's Retry-After), or 0 */
};
void reply_error(struct reply *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Answer one request (method and path as HTTP has them); *counted and
 * *method_out (a TF_METHOD_) say what the metrics count it as. */
void serve_route(struct serve *sv, struct reply *r, const char *method,
                 const char *path, const char *body, size_t len,
                 struct served **counted, int *method_out);
/* This thread's request buffers (freed when the thread ends). */
struct tf_request *serve_thread_request(void);
/* The model served as name (n bytes), or NULL. */
struct served *serve_find(struct serve *sv, const char *name, size_t n);

/* http.c, nng.c: start (exit 69 when they cannot listen) and stop. */
struct serve_http;
/* A listening TCP socket on address (an IPv4 or IPv6 literal) and port
 * (0: any free one), its port in *bound; exits 69 naming what when it
 * cannot.  The wildcard 0.0.0.0, the default, is one socket on [::] that
 * takes IPv4 and IPv6 clients alike (a client of "localhost" may try ::1
 * first), or 0.0.0.0 where the machine has no IPv6. (main.c) */
/* "address:port", an IPv6 address in brackets, in buf. (main.c) */
const char *serve_hostport(char *buf, size_t n, const char *address, int port);
int serve_listen(const char *address, int port, const char *what, int *bound);
struct serve_http *serve_http_start(struct serve *sv, unsigned *pool);
void serve_http_stop(struct serve *sv, struct serve_http *h);
struct serve_grpc;
/* gRPC: as many workers as the REST pool. */
struct serve_grpc *serve_grpc_start(struct serve *sv, unsigned workers);
void serve_grpc_stop(struct serve_grpc *g);
struct serve_nng;
struct serve_nng *serve_nng_start(struct serve *sv);
void serve_nng_stop(struct serve_nng *n);

/* train.c: POST :train, and the queue behind it. */
void serve_train_open(struct serve *sv);
void serve_train(struct serve *sv, struct reply *r, struct served *s,
                 const char *body, size_t len);

/* stdin.c */
int serve_stdin(struct serve *sv, struct served *s, const char *format);

#endif
