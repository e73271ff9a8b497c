/*
 * exchange.c - a trainer's side of the parameter servers (tf/ps.h): one
 * nng request socket per ps, every round of requests sent to all of them
 * at once (aio), so a step's exchange with P shards costs about one
 * round trip.
 */
#include <jansson.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <nng/supplemental/tls/tls.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "pool.h"
#include "ps.pb-c.h"
#include "tf/optim.h"
#include "tf/ps.h"

struct conn {
	nng_socket sock;
	nng_ctx ctx;
	nng_aio *aio;
	int open;
	char url[320];
	uint64_t seq, lo, hi, step;
	Tfkit__Ps__Reply *reply; /* the last round's */
	/* a row-sparse push: its ranges of this shard (pairs), the
	 * gradient's values there, the ranges whose values come back */
	struct tfi_ranges blocks, want;
	int some; /* the last reply holds only the ranges want names */
	float *vals;
	size_t capvals;
	atomic_int pipes; /* connections up (nng's pipe events) */
	/* the keep-alive thread's own context on the socket (ALIVE, DONE
	 * as one idle), beside the rounds' */
	nng_ctx actx;
	nng_aio *aaio;
	int asent;
};

/* nng's pipe events: a connection to the ps came up or went. */
static void
on_pipe(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	(void)p;
	struct conn *c = arg;
	atomic_fetch_add(&c->pipes, ev == NNG_PIPE_EV_ADD_POST ? 1 : -1);
}

struct tf_ps_client {
	struct tfi_handle err;
	struct conn *c;
	size_t n;
	char *token;
	char *ca_file; /* TLS: the CAs of the ps tasks' certificates */
	/* a round's requests and what is left of it, one per ps: made once,
	 * not each step */
	Tfkit__Ps__Request *q;
	unsigned char *todo;
	double timeout;
	uint32_t rank;
	uint64_t nparams;
	uint64_t model; /* tfi_model_key() */
	/* what the exchange cost */
	uint64_t bytes, rounds, stale, dropped;
	uint64_t steps, step_bytes; /* of the pushes alone */
	double *ms;
	size_t nms, capms;
	/* the trainers the ps tasks have gone on without (the first 64),
	 * as their replies last said, and whether that changed */
	uint64_t lost, lost_seen;
	/* this process among the trainers (ps.proto's session) */
	uint64_t session;
	/* chunks: the next push's rows by chunk, whether ps 0 applied the
	 * last one; the reader's own connection to ps 0 for TAKE, and the
	 * number of its last TAKE */
	const uint64_t *spans;
	size_t nspans;
	int applied;
	struct conn pool;
	uint64_t takes;
	char pool_addr[320];
	/* keep-alive: a thread that wakes each `every` seconds and, when
	 * the same round or local phase (round_no) has been going on since
	 * it last woke, sends ALIVE to every ps (alives counts those), or
	 * once, for a local phase (aside: validating, checkpointing), DONE
	 * as one idle (asides counts those); amu orders the main thread's
	 * tfi_ps_aside() after what the thread is sending */
	pthread_t alive;
	int alive_on, alive_quit, aside, aside_said;
	pthread_mutex_t amu;
	pthread_cond_t acv;
	double every;
	atomic_uint_fast64_t round_no, alives, asides;
	atomic_int waiting;
};

struct tf_ps_client *
tf_ps_client_new(void)
{
	struct tf_ps_client *cl = calloc(1, sizeof(struct tf_ps_client));
	if (cl == NULL) {
		return NULL;
	}
	/* a number no other trainer process draws: the clock's
	 * nanoseconds and the process, mixed */
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t x = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	x ^= (uint64_t)getpid() << 32;
	x ^= (uintptr_t)cl;
	cl->session = tfi_mix64(x) | 1;
	return cl;
}

static void
drop_replies(struct tf_ps_client *cl)
{
	for (size_t i = 0; i < cl->n; i++) {
		if (cl->c[i].reply != NULL) {
			tfkit__ps__reply__free_unpacked(cl->c[i].reply, NULL);
			cl->c[i].reply = NULL;
		}
	}
}

void
tf_ps_client_free(struct tf_ps_client *cl)
{
	if (cl == NULL) {
		return;
	}
	drop_replies(cl);
	if (cl->alive_on) {
		pthread_mutex_lock(&cl->amu);
		cl->alive_quit = 1;
		pthread_cond_signal(&cl->acv);
		pthread_mutex_unlock(&cl->amu);
		pthread_join(cl->alive, NULL);
		pthread_cond_destroy(&cl->acv);
		pthread_mutex_destroy(&cl->amu);
	}
	for (size_t i = 0; i <= cl->n; i++) {
		struct conn *c = i < cl->n ? &cl->c[i] : &cl->pool;
		if (c->open) {
			nng_close(c->sock);
		}
		if (c->aio != NULL) {
			nng_aio_free(c->aio);
		}
		if (c->aaio != NULL) {
			nng_aio_free(c->aaio);
		}
		free(c->blocks.v);
		free(c->want.v);
		free(c->vals);
	}
	free(cl->c);
	free(cl->q);
	free(cl->todo);
	free(cl->token);
	free(cl->ca_file);
	free(cl->ms);
	free(cl);
}

int
tf_ps_client_set_tls(struct tf_ps_client *cl, const char *ca_file)
{
	free(cl->ca_file);
	cl->ca_file = ca_file ? strdup(ca_file) : NULL;
	return ca_file == NULL || cl->ca_file != NULL
	           ? TF_OK
	           : tfi_set_error(cl, TF_ENOMEM, "out of memory");
}

/* Dial a ps at one of its addresses: plain tcp, or TLS checking its
 * certificate against the CA file and its host name. */
static int
dial_url(struct tf_ps_client *cl, struct conn *c, const char *url,
         const char *host)
{
	if (cl->ca_file == NULL) {
		return nng_dial(c->sock, url, NULL, NNG_FLAG_NONBLOCK);
	}
	nng_dialer d;
	nng_tls_config *tc = NULL;
	int rv = nng_dialer_create(&d, c->sock, url);
	rv = rv ? rv : nng_tls_config_alloc(&tc, NNG_TLS_MODE_CLIENT);
	rv = rv ? rv : nng_tls_config_ca_file(tc, cl->ca_file);
	rv = rv ? rv : nng_tls_config_server_name(tc, host);
	rv = rv ? rv : nng_tls_config_auth_mode(tc, NNG_TLS_AUTH_MODE_REQUIRED);
	rv = rv ? rv : nng_dialer_set_ptr(d, NNG_OPT_TLS_CONFIG, tc);
	rv = rv ? rv : nng_dialer_start(d, NNG_FLAG_NONBLOCK);
	if (tc != NULL) {
		nng_tls_config_free(tc); /* the dialer holds it */
	}
	return rv;
}

/* Dial every address of a ps's name (localhost may be ::1 and
 * 127.0.0.1, and the ps on either): a dialer each, reconnecting in the
 * background, the requests going by whichever is connected. */
static int
dial(struct tf_ps_client *cl, struct conn *c, const char *host)
{
	char urls[TFI_URLS_MAX][TFI_URL_MAX], err[300];
	int n =
	    tfi_url_addresses(c->url, urls, TFI_URLS_MAX, 0, err, sizeof err);
	if (n < 0) {
		/* not resolved now: nng resolves again as it reconnects */
		return dial_url(cl, c, c->url, host);
	}
	int rv = 0;
	for (int i = 0; i < n && rv == 0; i++) {
		rv = dial_url(cl, c, urls[i], host);
	}
	return rv;
}

/* A request socket to the ps at addr, dialling in the background: 0 or
 * nng's error. */
static int
open_conn(struct tf_ps_client *cl, struct conn *c, const char *addr)
{
	snprintf(c->url, sizeof c->url, "%s%.300s",
	         strstr(addr, "://") ? ""
	         : cl->ca_file       ? "tls+tcp://"
	                             : "tcp://",
	         addr);
	/* The host, for the TLS server name. */
	char host[300];
	const char *h = strstr(c->url, "://") + 3;
	const char *colon = strrchr(h, ':');
	snprintf(host, sizeof host, "%.*s",
	         (int)(colon ? colon - h : (ptrdiff_t)strlen(h)), h);
	int rv = nng_req0_open(&c->sock);
	if (rv != 0) {
		return rv;
	}
	c->open = 1;
	nng_pipe_notify(c->sock, NNG_PIPE_EV_ADD_POST, on_pipe, c);
	nng_pipe_notify(c->sock, NNG_PIPE_EV_REM_POST, on_pipe, c);
	/* Reconnect soon after a ps comes (back); never resend a request
	 * on a timer (a push is answered once). */
	nng_socket_set_ms(c->sock, NNG_OPT_RECONNMINT, 20);
	nng_socket_set_ms(c->sock, NNG_OPT_RECONNMAXT, 500);
	nng_socket_set_ms(c->sock, NNG_OPT_REQ_RESENDTIME,
	                  NNG_DURATION_INFINITE);
	nng_socket_set_size(c->sock, NNG_OPT_RECVMAXSZ, (size_t)1 << 30);
	if ((rv = nng_ctx_open(&c->ctx, c->sock)) != 0 ||
	    (rv = nng_aio_alloc(&c->aio, NULL, NULL)) != 0) {
		return rv;
	}
	return dial(cl, c, host);
}

int
tf_ps_client_connect(struct tf_ps_client *cl, const char *const *addrs,
                     size_t n, const char *token, double timeout)
{
	cl->c = calloc(n ? n : 1, sizeof *cl->c);
	cl->q = calloc(n ? n : 1, sizeof *cl->q);
	cl->todo = calloc(n ? n : 1, 1);
	cl->token = strdup(token ? token : "");
	if (cl->c == NULL || cl->q == NULL || cl->todo == NULL ||
	    cl->token == NULL) {
		return tfi_set_error(cl, TF_ENOMEM, "out of memory");
	}
	cl->n = n;
	cl->timeout = timeout > 0 ? timeout : 60;
	for (size_t i = 0; i < n; i++) {
		int rv = open_conn(cl, &cl->c[i], addrs[i]);
		if (rv != 0) {
			return tfi_set_error(cl, TF_EUNAVAIL, "%s: %s",
			                     cl->c[i].url, nng_strerror(rv));
		}
	}
	if (n > 0) {
		snprintf(cl->pool_addr, sizeof cl->pool_addr, "%s", addrs[0]);
	}
	return TF_OK;
}

/* The range of ps k among the client's n of nparams values. */
static void
shard(const struct tf_ps_client *cl, size_t k, uint64_t *lo, uint64_t *hi)
{
	*lo = k * cl->nparams / cl->n;
	*hi = (k + 1) * cl->nparams / cl->n;
}

/* Send q to ps k, packed anew (a resend keeps its sequence number). */
static int
send_one(struct tf_ps_client *cl, size_t k, const Tfkit__Ps__Request *q,
         nng_duration ms)
{
	struct conn *c = &cl->c[k];
	size_t len = tfkit__ps__request__get_packed_size(q);
	nng_msg *m;
	if (nng_msg_alloc(&m, len) != 0) {
		return tfi_set_error(cl, TF_ENOMEM, "out of memory");
	}
	tfkit__ps__request__pack(q, nng_msg_body(m));
	cl->bytes += len;
	nng_aio_set_msg(c->aio, m);
	nng_aio_set_timeout(c->aio, ms);
	nng_ctx_send(c->ctx, c->aio);
	return TF_OK;
}

/* A connection that broke (a ps that died and is starting again): the
 * request is sent again once it is back. */
static int
retryable(int rv)
{
	return rv == NNG_ECONNRESET || rv == NNG_ECONNSHUT ||
	       rv == NNG_ECONNREFUSED || rv == NNG_ECONNABORTED;
}

/*
 * One round: q[k] to every ps, all sent before any reply is awaited;
 * each reply in cl->c[k].reply.  A ps whose connection breaks is asked
 * again, with the same sequence number, until it answers or the timeout
 * passes.  TF_EUNAVAIL naming the ps that failed.
 */
static int
round_trip(struct tf_ps_client *cl, Tfkit__Ps__Request *q)
{
	atomic_fetch_add(&cl->round_no, 1);
	atomic_fetch_add(&cl->waiting, 1);
	drop_replies(cl);
	double t0 = tfi_now(), deadline = t0 + cl->timeout;
	uint64_t bytes0 = cl->bytes;
	nng_duration ms = (nng_duration)(cl->timeout * 1000);
	unsigned char *todo = cl->todo;
	for (size_t k = 0; k < cl->n; k++) {
		q[k].version = TF_PS_PROTOCOL;
		q[k].token = cl->token;
		q[k].worker = cl->rank;
		q[k].n = cl->nparams;
		q[k].model = cl->model;
		q[k].session = cl->session;
		q[k].seq = ++cl->c[k].seq;
		todo[k] = 1;
	}
	int rc = TF_OK;
	for (size_t left = cl->n; left > 0 && rc == TF_OK;) {
		int failed = 0, last = 0;
		size_t where = 0;
		for (size_t k = 0; k < cl->n && rc == TF_OK; k++) {
			if (todo[k]) {
				rc = send_one(cl, k, &q[k], ms);
			}
		}
		for (size_t k = 0; k < cl->n && rc == TF_OK; k++) {
			struct conn *c = &cl->c[k];
			if (!todo[k]) {
				continue;
			}
			nng_aio_wait(c->aio);
			int rv = nng_aio_result(c->aio);
			if (rv != 0) {
				nng_msg_free(nng_aio_get_msg(c->aio));
				todo[k] = 2; /* not sent */
				failed = failed ? failed : rv;
				where = failed == rv ? k : where;
				continue;
			}
			nng_aio_set_timeout(c->aio, ms);
			nng_ctx_recv(c->ctx, c->aio);
		}
		for (size_t k = 0; k < cl->n && rc == TF_OK; k++) {
			struct conn *c = &cl->c[k];
			if (todo[k] != 1) {
				todo[k] = todo[k] == 2;
				continue;
			}
			nng_aio_wait(c->aio);
			int rv = nng_aio_result(c->aio);
			if (rv != 0) {
				failed = failed ? failed : rv;
				where = failed == rv ? k : where;
				last = !retryable(rv);
				continue;
			}
			nng_msg *m = nng_aio_get_msg(c->aio);
			cl->bytes += nng_msg_len(m);
			c->reply = tfkit__ps__reply__unpack(
			    NULL, nng_msg_len(m), nng_msg_body(m));
			nng_msg_free(m);
			todo[k] = 0;
			left--;
			if (k == 0 && c->reply != NULL) {
				uint64_t lost = 0;
				for (size_t i = 0; i < c->reply->n_lost; i++) {
					lost |= c->reply->lost[i] < 64
					            ? (uint64_t)1
					                  << c->reply->lost[i]
					            : 0;
				}
				cl->lost = lost;
			}
			if (c->reply == NULL) {
				rc = tfi_set_error(
				    cl, TF_EUNAVAIL,
				    "ps %zu (%s): a malformed reply", k,
				    c->url);
			} else if (c->reply->status ==
			           TFKIT__PS__REPLY__STATUS__ERROR) {
				rc = tfi_set_error(cl, TF_EINVAL,
				                   "ps %zu (%s): %s", k, c->url,
				                   c->reply->message);
			} else if (c->reply->status ==
			           TFKIT__PS__REPLY__STATUS__LOST) {
				/* 75: a trainer started again rejoins */
				rc = tfi_set_error(cl, TF_EAGAIN,
				                   "ps %zu (%s): %s", k, c->url,
				                   c->reply->message);
			}
		}
		if (rc == TF_OK && failed != 0 &&
		    (last || !retryable(failed) || tfi_now() > deadline)) {
			rc = tfi_set_error(
			    cl, TF_EUNAVAIL, "ps %zu (%s) did not answer: %s%s",
			    where, cl->c[where].url, nng_strerror(failed),
			    failed != NNG_ETIMEDOUT ? ""
			    : cl->ca_file != NULL
			        ? " (is it running, with a certificate "
			          "--tls-ca trusts?)"
			        : " (is it running, and without TLS?)");
		}
		if (rc == TF_OK && failed != 0) {
			struct timespec ts = {0, 50 * 1000 * 1000};
			nanosleep(&ts, NULL); /* it may be starting again */
		}
	}
	/* A failed round leaves receives in flight: stop them. */
	for (size_t k = 0; rc != TF_OK && k < cl->n; k++) {
		nng_aio_stop(cl->c[k].aio);
	}
	cl->rounds++;
	if (cl->n > 0 && q[0].kind == TFKIT__PS__REQUEST__KIND__PUSH) {
		cl->steps++;
		cl->step_bytes += cl->bytes - bytes0;
	}
	if (cl->nms == cl->capms && cl->capms < (1u << 20)) {
		size_t cap = cl->capms ? cl->capms * 2 : 1024;
		double *v = realloc(cl->ms, cap * sizeof *v);
		if (v != NULL) {
			cl->ms = v;
			cl->capms = cap;
		}
	}
	if (cl->nms < cl->capms) {
		cl->ms[cl->nms++] = (tfi_now() - t0) * 1000;
	}
	atomic_fetch_sub(&cl->waiting, 1);
	return rc;
}

/* Take each reply's values into params. */
static int
take_values(struct tf_ps_client *cl, float *params)
{
	for (size_t k = 0; k < cl->n; k++) {
		struct conn *c = &cl->c[k];
		uint64_t lo, hi;
		shard(cl, k, &lo, &hi);
		const Tfkit__Ps__Reply *r = c->reply;
		uint64_t expect = hi - lo;
		if (c->some) {
			expect = 0;
			for (size_t i = 0; i < c->want.n; i += 2) {
				expect += c->want.v[i + 1];
			}
		}
		if (r->lo != lo || r->hi != hi ||
		    r->values.len != expect * sizeof(float)) {
			return tfi_set_error(
			    cl, TF_EINVAL,
			    "ps %zu (%s) holds values %llu to %llu, not %llu "
			    "to %llu: a ps of another cluster or model",
			    k, c->url, (unsigned long long)r->lo,
			    (unsigned long long)r->hi, (unsigned long long)lo,
			    (unsigned long long)hi);
		}
		if (!c->some) {
			memcpy(params + lo, r->values.data, r->values.len);
		}
		for (size_t i = 0, at = 0; i < c->want.n; i += 2) {
			memcpy(params + lo + c->want.v[i], r->values.data + at,
			       c->want.v[i + 1] * sizeof(float));
			at += c->want.v[i + 1] * sizeof(float);
		}
		c->step = r->step;
	}
	return TF_OK;
}

/* The client's requests, one per ps, made empty requests of kind. */
static Tfkit__Ps__Request *
requests(struct tf_ps_client *cl, int kind)
{
	Tfkit__Ps__Request *q = cl->q;
	for (size_t k = 0; k < cl->n; k++) {
		Tfkit__Ps__Request z = TFKIT__PS__REQUEST__INIT;
		q[k] = z;
		q[k].kind = kind;
		cl->c[k].want.n = 0;
		cl->c[k].some = 0;
	}
	return q;
}

/* A request of kind outside the rounds (the keep-alive thread's, TAKE):
 * this trainer's protocol, token, rank, model size and session. */
static Tfkit__Ps__Request
own_request(const struct tf_ps_client *cl, int kind)
{
	Tfkit__Ps__Request q = TFKIT__PS__REQUEST__INIT;
	q.version = TF_PS_PROTOCOL;
	q.token = cl->token;
	q.kind = kind;
	q.worker = cl->rank;
	q.n = cl->nparams;
	q.model = cl->model;
	q.session = cl->session;
	return q;
}

/* A request of kind (ALIVE, or DONE as one idle) to every ps on the
 * keep-alive contexts, all sent before any answer is awaited; what the
 * answers say does not matter (a ps that went on without this trainer
 * tells its next round). */
static void
tell_all(struct tf_ps_client *cl, int kind)
{
	Tfkit__Ps__Request q = own_request(cl, kind);
	q.take = kind == TFKIT__PS__REQUEST__KIND__DONE; /* idle */
	size_t len = tfkit__ps__request__get_packed_size(&q);
	nng_duration ms = (nng_duration)(cl->every * 1000) + 100;
	for (size_t k = 0; k < cl->n; k++) {
		struct conn *c = &cl->c[k];
		nng_msg *m;
		c->asent = nng_msg_alloc(&m, len) == 0;
		if (c->asent) {
			tfkit__ps__request__pack(&q, nng_msg_body(m));
			nng_aio_set_msg(c->aaio, m);
			nng_aio_set_timeout(c->aaio, ms);
			nng_ctx_send(c->actx, c->aaio);
		}
	}
	for (size_t k = 0; k < cl->n; k++) {
		struct conn *c = &cl->c[k];
		if (!c->asent) {
			continue;
		}
		nng_aio_wait(c->aaio);
		if (nng_aio_result(c->aaio) != 0) {
			nng_msg_free(nng_aio_get_msg(c->aaio));
			c->asent = 0;
			continue;
		}
		nng_aio_set_timeout(c->aaio, ms);
		nng_ctx_recv(c->actx, c->aaio);
	}
	for (size_t k = 0; k < cl->n; k++) {
		struct conn *c = &cl->c[k];
		if (c->asent) {
			nng_aio_wait(c->aaio);
			if (nng_aio_result(c->aaio) == 0) {
				nng_msg_free(nng_aio_get_msg(c->aaio));
			}
		}
	}
}

/* The keep-alive thread: each `every` seconds, when a round or a local
 * phase has been going on since the last look, ALIVE to every ps; the
 * first time in a local phase DONE as one idle instead, so a sync step
 * does not wait for this trainer's gradient meanwhile (its next push
 * takes it back). */
static void *
keep_alive(void *arg)
{
	struct tf_ps_client *cl = arg;
	uint64_t seen = UINT64_MAX;
	pthread_mutex_lock(&cl->amu);
	while (!cl->alive_quit) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		double at = (double)ts.tv_nsec / 1e9 + cl->every;
		ts.tv_sec += (time_t)at;
		ts.tv_nsec = (long)((at - (double)(time_t)at) * 1e9);
		pthread_cond_timedwait(&cl->acv, &cl->amu, &ts);
		uint64_t r = atomic_load(&cl->round_no);
		if (cl->alive_quit || r != seen ||
		    !(cl->aside || atomic_load(&cl->waiting) > 0)) {
			seen = r;
			continue;
		}
		if (cl->aside && !cl->aside_said) {
			tell_all(cl, TFKIT__PS__REQUEST__KIND__DONE);
			cl->aside_said = 1;
			atomic_fetch_add(&cl->asides, 1);
		} else {
			tell_all(cl, TFKIT__PS__REQUEST__KIND__ALIVE);
			atomic_fetch_add(&cl->alives, 1);
		}
	}
	pthread_mutex_unlock(&cl->amu);
	return NULL;
}

void
tfi_ps_aside(struct tf_ps_client *cl, int on)
{
	if (cl == NULL || !cl->alive_on) {
		return;
	}
	pthread_mutex_lock(&cl->amu);
	atomic_fetch_add(&cl->round_no, 1);
	cl->aside = on;
	cl->aside_said = 0;
	pthread_mutex_unlock(&cl->amu);
}

int
tfi_ps_client_setup(struct tf_ps_client *cl, uint32_t rank, uint64_t nparams,
                    uint64_t model, double every)
{
	cl->rank = rank;
	cl->nparams = nparams;
	cl->model = model;
	if (every <= 0 || cl->alive_on || cl->n == 0) {
		return TF_OK;
	}
	cl->every = every;
	for (size_t k = 0; k < cl->n; k++) { /* the thread's contexts */
		struct conn *c = &cl->c[k];
		int rv = nng_ctx_open(&c->actx, c->sock);
		rv = rv ? rv : nng_aio_alloc(&c->aaio, NULL, NULL);
		if (rv != 0) {
			return tfi_set_error(cl, TF_EUNAVAIL, "%s: %s", c->url,
			                     nng_strerror(rv));
		}
	}
	pthread_condattr_t ca;
	if (pthread_condattr_init(&ca) != 0) {
		return tfi_set_error(cl, TF_ENOMEM, "out of memory");
	}
	int ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
	         pthread_cond_init(&cl->acv, &ca) == 0;
	pthread_condattr_destroy(&ca);
	if (ok && pthread_mutex_init(&cl->amu, NULL) != 0) {
		pthread_cond_destroy(&cl->acv);
		ok = 0;
	}
	if (ok && pthread_create(&cl->alive, NULL, keep_alive, cl) != 0) {
		pthread_cond_destroy(&cl->acv);
		pthread_mutex_destroy(&cl->amu);
		ok = 0;
	}
	if (!ok) {
		return tfi_set_error(cl, TF_ENOMEM,
		                     "cannot start the keep-alive thread");
	}
	cl->alive_on = 1;
	return TF_OK;
}

int
tfi_ps_init(struct tf_ps_client *cl, float *params, struct tf_optim *o,
            uint64_t *step, const char *optimizer, const char *hparams,
            const struct tfi_ps_mode *mode)
{
	Tfkit__Ps__Request *q = requests(cl, TFKIT__PS__REQUEST__KIND__INIT);
	unsigned ns = tf_optim_nslots(o);
	uint8_t **slots = calloc(cl->n, sizeof *slots);
	/* the host's view of the slots (a device's, downloaded) */
	float *const *os = tfi_optim_host_slots(o, 1);
	int rc = slots == NULL || os == NULL
	             ? tfi_set_error(cl, TF_ENOMEM, "out of memory")
	             : TF_OK;
	for (size_t k = 0; rc == TF_OK && k < cl->n; k++) {
		uint64_t lo, hi;
		shard(cl, k, &lo, &hi);
		size_t one = (hi - lo) * sizeof(float);
		q[k].step = *step;
		q[k].values.data = (uint8_t *)(params + lo);
		q[k].values.len = one;
		if (ns > 0 && (slots[k] = malloc(ns * one + 1)) == NULL) {
			rc = tfi_set_error(cl, TF_ENOMEM, "out of memory");
			break;
		}
		for (unsigned i = 0; i < ns; i++) {
			memcpy(slots[k] + i * one, os[i] + lo, one);
		}
		q[k].slots.data = slots[k];
		q[k].slots.len = ns * one;
		q[k].optimizer = (char *)optimizer;
		q[k].hparams = (char *)hparams;
		q[k].sync = mode->sync;
		q[k].replicas_to_aggregate = mode->replicas_to_aggregate;
		q[k].total_replicas = mode->total_replicas;
		q[k].staleness = mode->staleness;
		q[k].peer_timeout = mode->peer_timeout;
		/* ps 0 holds the pool; every ps knows there is one */
		q[k].pool = (char *)(k == 0 && mode->pool ? mode->pool : "");
		q[k].take = mode->pool != NULL;
	}
	if (rc == TF_OK) {
		rc = round_trip(cl, q);
	}
	/* A ps that was up already (the chief restarted) answers with what
	 * it holds: go on from there. */
	if (rc == TF_OK && (rc = take_values(cl, params)) == TF_OK) {
		*step = cl->c[0].step;
	}
	for (size_t k = 0; slots != NULL && k < cl->n; k++) {
		free(slots[k]);
	}
	free(slots);
	return rc;
}

int
tfi_ps_pull(struct tf_ps_client *cl, float *params, uint64_t *step, double wait)
{
	double t0 = tfi_now();
	for (;;) {
		Tfkit__Ps__Request *q =
		    requests(cl, TFKIT__PS__REQUEST__KIND__PULL);
		int rc = round_trip(cl, q);
		if (rc != TF_OK) {
			return rc;
		}
		int ready = 1;
		for (size_t k = 0; k < cl->n; k++) {
			ready &= cl->c[k].reply->status !=
			         TFKIT__PS__REPLY__STATUS__NOT_READY;
		}
		if (ready) {
			rc = take_values(cl, params);
			*step = cl->c[0].step;
			return rc;
		}
		if (tfi_now() - t0 > wait) {
			return tfi_set_error(cl, TF_EUNAVAIL,
			                     "the ps tasks were not given the "
			                     "model within %g s: is the chief "
			                     "running?",
			                     wait);
		}
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

int
tfi_ranges_add(struct tfi_ranges *r, uint64_t start, uint64_t len)
{
	if (r->n >= 2 && r->v[r->n - 2] + r->v[r->n - 1] == start) {
		r->v[r->n - 1] += len; /* adjoins the last: one range */
		return 0;
	}
	if (r->n + 2 > r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 256;
		uint64_t *p = realloc(r->v, cap * sizeof *p);
		if (p == NULL) {
			return -1;
		}
		r->v = p;
		r->cap = cap;
	}
	r->v[r->n++] = start;
	r->v[r->n++] = len;
	return 0;
}

/* The part of ranges r (over the whole vector) in [lo, hi), made
 * relative to lo, into out; -1 out of memory. */
static int
clip(const struct tfi_ranges *r, uint64_t lo, uint64_t hi,
     struct tfi_ranges *out)
{
	out->n = 0;
	for (size_t i = 0; i < r->n; i += 2) {
		uint64_t a = r->v[i], b = r->v[i] + r->v[i + 1];
		a = a < lo ? lo : a;
		b = b > hi ? hi : b;
		if (a < b && tfi_ranges_add(out, a - lo, b - a) != 0) {
			return -1;
		}
	}
	return 0;
}

/* Push k's row-sparse request: its ranges, their gradient gathered. */
static int
sparse_push(struct tf_ps_client *cl, size_t k, Tfkit__Ps__Request *q,
            const float *grads, const struct tfi_ranges *grad,
            const struct tfi_ranges *want)
{
	struct conn *c = &cl->c[k];
	uint64_t lo, hi;
	shard(cl, k, &lo, &hi);
	c->some = 1;
	if ((want != NULL && clip(want, lo, hi, &c->want) != 0) ||
	    clip(grad, lo, hi, &c->blocks) != 0) {
		return tfi_set_error(cl, TF_ENOMEM, "out of memory");
	}
	size_t total = 0;
	for (size_t i = 0; i < c->blocks.n; i += 2) {
		total += c->blocks.v[i + 1];
	}
	if (total > c->capvals) {
		float *p = realloc(c->vals, total * sizeof *p);
		if (p == NULL) {
			return tfi_set_error(cl, TF_ENOMEM, "out of memory");
		}
		c->vals = p;
		c->capvals = total;
	}
	for (size_t i = 0, at = 0; i < c->blocks.n; i += 2) {
		memcpy(c->vals + at, grads + lo + c->blocks.v[i],
		       c->blocks.v[i + 1] * sizeof(float));
		at += c->blocks.v[i + 1];
	}
	q->sparse = 1;
	q->blocks = c->blocks.v;
	q->n_blocks = c->blocks.n;
	q->want = c->want.v;
	q->n_want = c->want.n;
	q->values.data = (uint8_t *)c->vals;
	q->values.len = total * sizeof(float);
	return TF_OK;
}

int
tfi_ps_push(struct tf_ps_client *cl, float *params, const float *grads,
            float lr, uint64_t rows, uint64_t epoch, uint64_t done,
            uint64_t *step, const struct tfi_ranges *grad,
            const struct tfi_ranges *want)
{
	Tfkit__Ps__Request *q = requests(cl, TFKIT__PS__REQUEST__KIND__PUSH);
	for (size_t k = 0; k < cl->n; k++) {
		uint64_t lo, hi;
		shard(cl, k, &lo, &hi);
		q[k].step = cl->c[k].step;
		q[k].values.data = (uint8_t *)(grads + lo);
		q[k].values.len = (hi - lo) * sizeof(float);
		if (grad != NULL &&
		    sparse_push(cl, k, &q[k], grads, grad, want) != TF_OK) {
			return cl->err.code;
		}
		q[k].learning_rate = lr;
		q[k].examples = rows;
		q[k].epoch = epoch;
		q[k].done = done;
		q[k].last_ms = cl->nms > 0 ? (float)cl->ms[cl->nms - 1] : 0;
	}
	if (cl->n > 0) { /* the rows by chunk: ps 0's pool counts them */
		q[0].chunks = (uint64_t *)cl->spans;
		q[0].n_chunks = cl->nspans;
	}
	cl->spans = NULL;
	cl->nspans = 0;
	cl->applied = 0;
	int rc = round_trip(cl, q);
	if (rc == TF_OK && cl->n > 0) {
		cl->applied =
		    cl->c[0].reply->status == TFKIT__PS__REPLY__STATUS__OK;
	}
	for (size_t k = 0; rc == TF_OK && k < cl->n; k++) {
		int st = cl->c[k].reply->status;
		if (st == TFKIT__PS__REPLY__STATUS__NOT_READY) {
			rc = tfi_set_error(cl, TF_EUNAVAIL,
			                   "ps %zu (%s) lost its shard (it "
			                   "restarted)",
			                   k, cl->c[k].url);
		}
		cl->stale += st == TFKIT__PS__REPLY__STATUS__STALE;
		cl->dropped += st == TFKIT__PS__REPLY__STATUS__DROPPED;
	}
	if (rc == TF_OK && (rc = take_values(cl, params)) == TF_OK) {
		*step = cl->c[0].step;
	}
	return rc;
}

int
tfi_ps_snapshot(struct tf_ps_client *cl, float *params, struct tf_optim *o,
                uint64_t *step, uint64_t **positions, size_t *npositions)
{
	uint64_t want = 0;
	for (size_t k = 0; k < cl->n; k++) {
		want = cl->c[k].step > want ? cl->c[k].step : want;
	}
	unsigned ns = tf_optim_nslots(o);
	float *const *os = tfi_optim_host_slots(o, 0);
	if (os == NULL) {
		return tfi_set_error(cl, TF_ENOMEM, "out of memory");
	}
	for (int tries = 0; tries < 20; tries++) {
		Tfkit__Ps__Request *q =
		    requests(cl, TFKIT__PS__REQUEST__KIND__SNAPSHOT);
		for (size_t k = 0; k < cl->n; k++) {
			q[k].step = want;
		}
		int rc = round_trip(cl, q);
		if (rc == TF_OK) {
			rc = take_values(cl, params);
		}
		if (rc != TF_OK) {
			return rc;
		}
		int same = 1;
		for (size_t k = 0; k < cl->n; k++) {
			same &= cl->c[k].step == cl->c[0].step;
			want = cl->c[k].step > want ? cl->c[k].step : want;
		}
		if (!same) {
			continue; /* a shard moved on: again, at its step */
		}
		for (size_t k = 0; k < cl->n; k++) {
			uint64_t lo, hi;
			shard(cl, k, &lo, &hi);
			size_t one = (hi - lo) * sizeof(float);
			const Tfkit__Ps__Reply *r = cl->c[k].reply;
			if (r->slots.len != ns * one) {
				return tfi_set_error(
				    cl, TF_EINVAL,
				    "ps %zu (%s) sent %zu bytes of slots, not "
				    "%zu",
				    k, cl->c[k].url, r->slots.len, ns * one);
			}
			for (unsigned i = 0; i < ns; i++) {
				memcpy(os[i] + lo, r->slots.data + i * one,
				       one);
			}
		}
		if (tfi_optim_commit_slots(o) != TF_OK) {
			return tfi_set_error(cl, TF_EINTERNAL, "%s",
			                     tf_errmsg(o));
		}
		*step = cl->c[0].step;
		tf_optim_set_steps(o, *step);
		const Tfkit__Ps__Reply *r0 = cl->c[0].reply;
		if (positions != NULL && r0->n_positions >= 2) {
			uint64_t *p =
			    malloc(r0->n_positions * sizeof *r0->positions);
			if (p == NULL) {
				return tfi_set_error(cl, TF_ENOMEM,
				                     "out of memory");
			}
			memcpy(p, r0->positions,
			       r0->n_positions * sizeof *r0->positions);
			free(*positions);
			*positions = p;
			*npositions = r0->n_positions / 2;
		}
		return TF_OK;
	}
	return tfi_set_error(cl, TF_EUNAVAIL,
	                     "the ps shards did not meet at one step for a "
	                     "checkpoint");
}

/* A request of kind to every ps; *done: the trainers done (ps 0's). */
static int
tell(struct tf_ps_client *cl, int kind, uint32_t *done)
{
	Tfkit__Ps__Request *q = requests(cl, kind);
	int rc = round_trip(cl, q);
	if (rc == TF_OK && done != NULL) {
		*done = cl->c[0].reply->workers_done;
	}
	return rc;
}

int
tfi_ps_done(struct tf_ps_client *cl, int idle)
{
	Tfkit__Ps__Request *q = requests(cl, TFKIT__PS__REQUEST__KIND__DONE);
	for (size_t k = 0; k < cl->n; k++) {
		q[k].take = idle ? 1 : 0;
	}
	return round_trip(cl, q);
}

int
tfi_ps_wait_done(struct tf_ps_client *cl, uint32_t trainers, double wait)
{
	double t0 = tfi_now();
	for (;;) {
		uint32_t done = 0;
		/* DONE again: counted once, answered with the count
		 * (STATUS would have the ps build all its counters). */
		int rc = tell(cl, TFKIT__PS__REQUEST__KIND__DONE, &done);
		if (rc != TF_OK || done >= trainers) {
			return rc;
		}
		if (tfi_now() - t0 > wait) {
			return tfi_set_error(
			    cl, TF_EUNAVAIL,
			    "%u of %u trainers done after %g s", done, trainers,
			    wait);
		}
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

int
tfi_ps_finish(struct tf_ps_client *cl)
{
	return tell(cl, TFKIT__PS__REQUEST__KIND__FINISH, NULL);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

char *
tfi_ps_stats(struct tf_ps_client *cl)
{
	double p50 = 0;
	if (cl->nms > 0) {
		qsort(cl->ms, cl->nms, sizeof *cl->ms, cmp_double);
		p50 = cl->ms[cl->nms / 2];
	}
	json_t *o =
	    json_pack("{s:I,s:f,s:f,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "rounds",
	              (json_int_t)cl->rounds, "p50_ms", p50, "max_ms",
	              cl->nms > 0 ? cl->ms[cl->nms - 1] : 0.0, "bytes",
	              (json_int_t)cl->bytes, "steps", (json_int_t)cl->steps,
	              "step_bytes", (json_int_t)cl->step_bytes, "stale",
	              (json_int_t)cl->stale, "dropped", (json_int_t)cl->dropped,
	              "keepalives", (json_int_t)atomic_load(&cl->alives),
	              "asides", (json_int_t)atomic_load(&cl->asides));
	char *t =
	    o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(4)) : NULL;
	json_decref(o);
	return t;
}

int
tf_ps_client_status(struct tf_ps_client *cl, char **json)
{
	int rc = tell(cl, TFKIT__PS__REQUEST__KIND__STATUS, NULL);
	if (rc != TF_OK) {
		return rc;
	}
	size_t len = 1;
	for (size_t k = 0; k < cl->n; k++) {
		len += strlen(cl->c[k].reply->status_json) + 1;
	}
	char *out = malloc(len), *p = out;
	if (out == NULL) {
		return tfi_set_error(cl, TF_ENOMEM, "out of memory");
	}
	for (size_t k = 0; k < cl->n; k++) {
		p += sprintf(p, "%s\n", cl->c[k].reply->status_json);
	}
	*p = '\0';
	*json = out;
	return TF_OK;
}

char *
tfi_ps_pool_status(struct tf_ps_client *cl)
{
	if (cl->n == 0 ||
	    tell(cl, TFKIT__PS__REQUEST__KIND__STATUS, NULL) != TF_OK) {
		return NULL;
	}
	json_t *o = json_loads(cl->c[0].reply->status_json, 0, NULL);
	json_t *p = json_object_get(o, "pool");
	char *s = p ? json_dumps(p, JSON_COMPACT) : NULL;
	json_decref(o);
	return s;
}

int
tfi_ps_lost(struct tf_ps_client *cl, uint64_t *lost)
{
	*lost = cl->lost;
	int changed = cl->lost != cl->lost_seen;
	cl->lost_seen = cl->lost;
	return changed;
}

int
tfi_ps_ready(struct tf_ps_client *cl, double wait,
             void (*waiting)(void *ctx, const char *msg), void *ctx)
{
	/* Connected to every ps first (dialers retry in the background),
	 * saying now and then which is awaited; then each must answer. */
	double t0 = tfi_now(), said = t0;
	for (;;) {
		size_t k = 0;
		while (k < cl->n && atomic_load(&cl->c[k].pipes) > 0) {
			k++;
		}
		if (k == cl->n) {
			break;
		}
		double t = tfi_now();
		if (t - t0 >= wait) {
			return tfi_set_error(
			    cl, TF_EUNAVAIL,
			    "ps %zu (%s) cannot be reached after --startup-"
			    "timeout %g s (is it running, %s?)",
			    k, cl->c[k].url, wait,
			    cl->ca_file != NULL
			        ? "with a certificate --tls-ca trusts"
			        : "and without TLS");
		}
		if (waiting != NULL && t - said >= (said == t0 ? 2 : 30)) {
			char msg[400];
			snprintf(
			    msg, sizeof msg,
			    "waiting for ps %zu (%s) to be reachable (up to "
			    "--startup-timeout %g s)",
			    k, cl->c[k].url, wait);
			waiting(ctx, msg);
			said = t;
		}
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	return tell(cl, TFKIT__PS__REQUEST__KIND__STATUS, NULL);
}

void
tfi_ps_set_spans(struct tf_ps_client *cl, const uint64_t *spans, size_t n)
{
	cl->spans = spans;
	cl->nspans = n;
}

int
tfi_ps_applied(const struct tf_ps_client *cl)
{
	return cl->applied;
}

char *
tfi_ps_snapshot_pool(const struct tf_ps_client *cl)
{
	const Tfkit__Ps__Reply *r = cl->n > 0 ? cl->c[0].reply : NULL;
	return r != NULL && r->pool != NULL && r->pool[0] ? strdup(r->pool)
	                                                  : NULL;
}

/* One TAKE to ps 0 over the reader's connection, sent again (with the
 * same number: the same chunk) while the connection breaks, up to the
 * client's timeout; the reply, or NULL with msg said. */
static Tfkit__Ps__Reply *
take_round(struct tf_ps_client *cl, char *msg, size_t len)
{
	struct conn *c = &cl->pool;
	Tfkit__Ps__Request q = own_request(cl, TFKIT__PS__REQUEST__KIND__TAKE);
	q.take = ++cl->takes;
	nng_duration ms = (nng_duration)(cl->timeout * 1000);
	double deadline = tfi_now() + cl->timeout;
	for (;;) {
		size_t n = tfkit__ps__request__get_packed_size(&q);
		nng_msg *m;
		if (nng_msg_alloc(&m, n) != 0) {
			snprintf(msg, len, "out of memory");
			return NULL;
		}
		tfkit__ps__request__pack(&q, nng_msg_body(m));
		nng_aio_set_msg(c->aio, m);
		nng_aio_set_timeout(c->aio, ms);
		nng_ctx_send(c->ctx, c->aio);
		nng_aio_wait(c->aio);
		int rv = nng_aio_result(c->aio);
		if (rv != 0) {
			nng_msg_free(nng_aio_get_msg(c->aio));
		} else {
			nng_aio_set_timeout(c->aio, ms);
			nng_ctx_recv(c->ctx, c->aio);
			nng_aio_wait(c->aio);
			rv = nng_aio_result(c->aio);
		}
		if (rv == 0) {
			m = nng_aio_get_msg(c->aio);
			Tfkit__Ps__Reply *r = tfkit__ps__reply__unpack(
			    NULL, nng_msg_len(m), nng_msg_body(m));
			nng_msg_free(m);
			if (r == NULL) {
				snprintf(msg, len,
				         "ps 0 (%s): a malformed reply",
				         c->url);
			}
			return r;
		}
		if (!retryable(rv) || tfi_now() > deadline) {
			snprintf(msg, len,
			         "ps 0 (%s) did not hand out a chunk: %s",
			         c->url, nng_strerror(rv));
			return NULL;
		}
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL); /* it may be starting again */
	}
}

int
tfi_ps_take(struct tf_ps_client *cl, struct tfi_chunk *ch, int *lost, char *msg,
            size_t len)
{
	struct conn *c = &cl->pool;
	*lost = 0;
	if (!c->open) {
		int rv =
		    cl->n > 0 ? open_conn(cl, c, cl->pool_addr) : NNG_EINVAL;
		if (rv != 0) {
			snprintf(msg, len, "%s: %s", cl->pool_addr,
			         nng_strerror(rv));
			return TF_EUNAVAIL;
		}
	}
	Tfkit__Ps__Reply *r = take_round(cl, msg, len);
	if (r == NULL) {
		return TF_EUNAVAIL;
	}
	int rc = TF_OK;
	switch (r->status) {
	case TFKIT__PS__REPLY__STATUS__OK:
		if (r->n_chunk != 8) {
			snprintf(msg, len, "ps 0 (%s): a chunk of %zu values",
			         c->url, r->n_chunk);
			rc = TF_EUNAVAIL;
			break;
		}
		*ch = (struct tfi_chunk){r->chunk[0], r->chunk[1], r->chunk[2],
		                         r->chunk[3], r->chunk[4], r->chunk[5],
		                         r->chunk[6], r->chunk[7]};
		break;
	case TFKIT__PS__REPLY__STATUS__WAIT:
		rc = TF_EAGAIN;
		break;
	case TFKIT__PS__REPLY__STATUS__END:
		rc = TF_EOF;
		break;
	default:
		*lost = r->status == TFKIT__PS__REPLY__STATUS__LOST;
		snprintf(msg, len, "ps 0 (%s): %s", c->url,
		         r->message ? r->message : "refused");
		rc = TF_EUNAVAIL;
	}
	tfkit__ps__reply__free_unpacked(r, NULL);
	return rc;
}
