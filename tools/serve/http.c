/*
 * http.c - the REST API on libmicrohttpd: a thread pool, epoll, bodies
 * collected up to --max-body-bytes, each response in one write
 * (TCP_NODELAY), the same answers as nng (route.c).
 *
 * A guard watches the connections libmicrohttpd holds: one that has not
 * completed a request's headers for --idle-timeout seconds is closed,
 * however slowly it trickles bytes (slowloris), and at --max-connections
 * a new connection closes the one waiting longest, so a crowd of idle
 * connections never keeps a client out.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "../tool.h"
#include "serve.h"

/* A connection as the guard sees it (its socket context). */
struct guard_conn {
	struct guard_conn *prev, *next;
	struct serve_http *h;
	int fd;
	int busy;     /* its request's headers are in: being answered */
	int closing;  /* shut down by the guard, not yet closed */
	double since; /* accepted, or its last request answered */
};

struct serve_http {
	struct MHD_Daemon *d;
	struct serve *sv;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct guard_conn conns; /* a ring: oldest first */
	size_t n;                /* open, less those closing */
	pthread_t sweeper;
	int started, stop;
};

/* Close c's socket under libmicrohttpd, which then sees its end and
 * frees it (mu held: the socket is still c's). */
static void
guard_close(struct serve_http *h, struct guard_conn *c, atomic_ulong *count)
{
	if (!c->closing) {
		c->closing = 1;
		h->n--;
		shutdown(c->fd, SHUT_RDWR);
		atomic_fetch_add(count, 1);
	}
}

/* The connection waiting longest for a request (mu held), or NULL. */
static struct guard_conn *
guard_oldest_waiting(struct serve_http *h)
{
	struct guard_conn *best = NULL;
	for (struct guard_conn *c = h->conns.next; c != &h->conns;
	     c = c->next) {
		if (!c->busy && !c->closing &&
		    (best == NULL || c->since < best->since)) {
			best = c;
		}
	}
	return best;
}

/* Every 200 ms: connections waiting past --idle-timeout go. */
static void *
guard_main(void *arg)
{
	struct serve_http *h = arg;
	pthread_mutex_lock(&h->mu);
	while (!h->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 200 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&h->cv, &h->mu, &ts);
		double t = now();
		for (struct guard_conn *c = h->conns.next; c != &h->conns;
		     c = c->next) {
			if (!c->busy && t - c->since > h->sv->opt.idle) {
				guard_close(h, c, &h->sv->closed_idle);
			}
		}
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

/* A request's headers are in (busy) or its answer is sent (waiting). */
static void
guard_mark(struct MHD_Connection *mc, int busy)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct guard_conn *c = ci ? ci->socket_context : NULL;
	if (c != NULL) {
		pthread_mutex_lock(&c->h->mu);
		c->busy = busy;
		c->since = now();
		pthread_mutex_unlock(&c->h->mu);
	}
}

/* A request being received. */
struct conn_state {
	struct sbuf body;
	int too_big;
	int answered; /* refused before its body was read */
	double start;
};

static void
send_reply(struct MHD_Connection *c, struct reply *r)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(
	    r->body.len, r->body.p ? r->body.p : (char *)"",
	    MHD_RESPMEM_MUST_COPY);
	if (resp == NULL) {
		return;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->type);
	if (r->retry_after > 0) {
		char secs[16];
		snprintf(secs, sizeof secs, "%d", r->retry_after);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER,
		                        secs);
	}
	MHD_queue_response(c, (unsigned)r->status, resp);
	MHD_destroy_response(resp);
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url,
           const char *method, const char *version, const char *data,
           size_t *data_size, void **con_cls)
{
	struct serve *sv = cls;
	(void)version;
	struct conn_state *st = *con_cls;
	if (st == NULL) {
		st = calloc(1, sizeof *st);
		if (st == NULL) {
			return MHD_NO;
		}
		st->start = now();
		*con_cls = st;
		atomic_fetch_add(&sv->inflight, 1);
		guard_mark(c, 1);
		/* A body announced too large is refused before it is read
		 * (the connection closes after the answer). */
		const char *cl = MHD_lookup_connection_value(
		    c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl != NULL && strtoull(cl, NULL, 10) > sv->opt.max_body) {
			struct reply r = {0};
			reply_error(&r, 413,
			            "request body larger than %zu bytes "
			            "(--max-body-bytes)",
			            sv->opt.max_body);
			serve_count(sv, NULL, TF_METHOD_STATUS, r.status, 0);
			send_reply(c, &r);
			free(r.body.p);
			st->answered = 1;
		}
		return MHD_YES;
	}
	if (st->answered) {
		*data_size = 0; /* the early answer is on its way */
		return MHD_YES;
	}
	if (*data_size > 0) {
		if (st->body.len + *data_size > sv->opt.max_body) {
			st->too_big = 1;
		} else {
			sb_add(&st->body, data, *data_size);
		}
		*data_size = 0;
		return MHD_YES;
	}
	struct reply r = {0};
	struct served *s = NULL;
	int kind = TF_METHOD_STATUS;
	if (st->too_big) {
		reply_error(&r, 413,
		            "request body larger than %zu bytes "
		            "(--max-body-bytes)",
		            sv->opt.max_body);
	} else {
		serve_route(sv, &r, method, url, st->body.p ? st->body.p : "",
		            st->body.len, &s, &kind);
	}
	serve_count(sv, s, kind, r.status, now() - st->start);
	send_reply(c, &r);
	free(r.body.p);
	return MHD_YES;
}

static void
on_done(void *cls, struct MHD_Connection *c, void **con_cls,
        enum MHD_RequestTerminationCode toe)
{
	struct serve *sv = cls;
	(void)c;
	(void)toe;
	struct conn_state *st = *con_cls;
	if (st != NULL) {
		free(st->body.p);
		free(st);
		*con_cls = NULL;
		atomic_fetch_sub(&sv->inflight, 1);
		guard_mark(c, 0);
	}
}

/* A connection opened (small responses go out as soon as they are
 * written; the guard takes it in, closing the longest waiting one at
 * --max-connections) or closed (the guard lets it go). */
static void
on_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
              enum MHD_ConnectionNotificationCode toe)
{
	struct serve_http *h = cls;
	struct guard_conn *c = *socket_context;
	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (c != NULL) {
			pthread_mutex_lock(&h->mu);
			c->prev->next = c->next;
			c->next->prev = c->prev;
			if (!c->closing) {
				h->n--;
			}
			pthread_mutex_unlock(&h->mu);
			free(c);
			*socket_context = NULL;
		}
		return;
	}
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci == NULL) {
		return;
	}
	int one = 1;
	setsockopt(ci->connect_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if ((c = calloc(1, sizeof *c)) == NULL) {
		shutdown(ci->connect_fd, SHUT_RDWR); /* out of memory */
		return;
	}
	c->h = h;
	c->fd = ci->connect_fd;
	c->since = now();
	pthread_mutex_lock(&h->mu);
	c->prev = h->conns.prev;
	c->next = &h->conns;
	c->prev->next = c;
	h->conns.prev = c;
	h->n++;
	while (h->n > h->sv->opt.max_conn) {
		struct guard_conn *old = guard_oldest_waiting(h);
		guard_close(h, old != NULL ? old : c, &h->sv->closed_limit);
	}
	pthread_mutex_unlock(&h->mu);
	*socket_context = c;
}

/* libmicrohttpd's messages, at most 10 a second: a crowd of clients
 * hanging up must not flood the log. */
static void
on_mhd_error(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static double second;
	static unsigned said, held;
	double t = now();
	pthread_mutex_lock(&mu);
	if (t - second >= 1.0) {
		if (held > 0) {
			warnx_("http: %u more messages not shown", held);
		}
		second = t;
		said = held = 0;
	}
	int show = said < 10;
	said += show;
	held += !show;
	pthread_mutex_unlock(&mu);
	if (!show) {
		return;
	}
	char msg[512];
	vsnprintf(msg, sizeof msg, fmt, ap);
	size_t n = strlen(msg);
	while (n > 0 && msg[n - 1] == '\n') {
		msg[--n] = '\0';
	}
	warnx_("http: %s", msg);
}

struct serve_http *
serve_http_start(struct serve *sv, unsigned *pool_out)
{
	/* bound here so that a port in use is named as it is
	 * (libmicrohttpd's own message names port 0 for a given address) */
	int port;
	int fd = serve_listen(sv->opt.address, sv->opt.port, "", &port);
	unsigned pool = (unsigned)sv->opt.threads;
	if (sv->opt.batching) {
		/* Connection threads wait for batches: more of them. */
		size_t want = sv->opt.max_batch < 64 ? sv->opt.max_batch : 64;
		pool = want > pool ? (unsigned)want : pool;
	}
	struct serve_http *h = calloc(1, sizeof *h);
	if (h == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	h->sv = sv;
	h->conns.prev = h->conns.next = &h->conns;
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->cv, NULL);
	/* libmicrohttpd's own limit has room above --max-connections: the
	 * guard keeps to it, closing the connection waiting longest. */
	unsigned limit = (unsigned)sv->opt.max_conn + pool * 4 + 16;
	h->d = MHD_start_daemon(
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC |
	        MHD_USE_ERROR_LOG,
	    0, NULL, NULL, on_request, sv, MHD_OPTION_EXTERNAL_LOGGER,
	    on_mhd_error, NULL, MHD_OPTION_LISTEN_SOCKET, fd,
	    MHD_OPTION_THREAD_POOL_SIZE, pool, MHD_OPTION_NOTIFY_COMPLETED,
	    on_done, sv, MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
	    MHD_OPTION_CONNECTION_LIMIT, limit, MHD_OPTION_CONNECTION_TIMEOUT,
	    sv->opt.idle, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
	    sv->opt.max_header, MHD_OPTION_END);
	if (h->d == NULL) {
		die(EX_UNAVAILABLE, "cannot listen on %s:%d (in use?)",
		    sv->opt.address, sv->opt.port);
	}
	if (pthread_create(&h->sweeper, NULL, guard_main, h) != 0) {
		die(EX_OSERR, "cannot start a thread");
	}
	h->started = 1;
	char hp[64];
	warnx_("REST API on http://%s/ (%u threads)",
	       serve_hostport(hp, sizeof hp, sv->opt.address, port), pool);
	*pool_out = pool;
	return h;
}

void
serve_http_stop(struct serve *sv, struct serve_http *h)
{
	/* Stop accepting, let requests under way finish (up to 10 s). */
	MHD_quiesce_daemon(h->d);
	for (int i = 0; i < 1000 && atomic_load(&sv->inflight) > 0; i++) {
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
	}
	MHD_stop_daemon(h->d);
	if (h->started) {
		pthread_mutex_lock(&h->mu);
		h->stop = 1;
		pthread_cond_signal(&h->cv);
		pthread_mutex_unlock(&h->mu);
		pthread_join(h->sweeper, NULL);
	}
	pthread_mutex_destroy(&h->mu);
	pthread_cond_destroy(&h->cv);
	free(h);
}
