/*
 * grpc.c - the HTTP/2 server of tf-serve's gRPC API: gRPC's wire
 * protocol through libnghttp2 (the calls themselves, TensorFlow
 * Serving's PredictionService and ModelService, are grpc_call.c's).
 *
 * An acceptor thread hands each new connection to the next of the worker
 * threads (as many as the REST pool), which each run an epoll loop over
 * their connections.  A
 * connection is an nghttp2 server session; a call is a stream: POST of
 * a path naming the method, content-type application/grpc, a body of
 * one length-prefixed message (compressed with gzip or deflate when
 * grpc-encoding says so).  When the request's stream ends the worker
 * answers it (grpc_answer()) and queues the response: headers, the
 * message and the trailers with grpc-status and grpc-message, or for an
 * error headers and trailers in one frame (gRPC's Trailers-Only).
 * Everything a read produced is written in one write.  Unknown methods
 * and MultiInference are UNIMPLEMENTED.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include "../tool.h"
#include "serve.h"

#include "grpc.h"

/* ---- HTTP/2 --------------------------------------------------------------
 */

/* A call: one request stream and its response. */
struct stream {
	int32_t id;
	double start;
	int m;             /* index into methods, or -1 */
	int bad_method;    /* not POST */
	int bad_type;      /* content-type is not application/grpc */
	int too_big;       /* body over --max-body-bytes */
	char encoding[32]; /* grpc-encoding: "" (identity), gzip, deflate */
	int bad_encoding;  /* ... or one tf-serve cannot read */
	char path[256];
	struct sbuf body;
	struct sbuf out; /* the response's DATA: prefix and message */
	size_t sent;
	char status[8];
	char message[3 * 1024]; /* grpc-message, percent-encoded */
};

struct conn {
	int fd;
	nghttp2_session *h2;
	struct worker *w;
	struct sbuf out; /* bytes to write */
	size_t out_at;
	int want_out; /* EPOLLOUT is asked for */
	double last;  /* accepted, or its last call ended */
	int streams;  /* calls under way */
	struct conn *next, **prev;
};

struct worker {
	struct serve_grpc *g;
	int ep, wake; /* epoll; an eventfd: new connections, or stop */
	struct tf_request *q;
	struct conn *conns;
	pthread_mutex_t lock; /* the acceptor's new connections: */
	int *incoming, nincoming, capincoming;
	pthread_t thread;
	int started;
};

struct serve_grpc {
	struct serve *sv;
	int lfd; /* the listening socket */
	atomic_int stopping, nconn;
	struct worker *w;
	int nw;
	pthread_t acceptor;
};

/* grpc-message: printable ASCII but '%' as itself, the rest %XX. */
static void
percent_encode(char *dst, size_t size, const char *src)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)src;
	     *p && n + 4 < size; p++) {
		if (*p >= 0x20 && *p < 0x7f && *p != '%') {
			dst[n++] = (char)*p;
		} else {
			dst[n++] = '%';
			dst[n++] = hex[*p >> 4];
			dst[n++] = hex[*p & 15];
		}
	}
	dst[n] = '\0';
}

#define NV(name, value)                                                        \
	{                                                                      \
		(uint8_t *)(name), (uint8_t *)(value), sizeof(name) - 1,       \
		    strlen(value), NGHTTP2_NV_FLAG_NO_COPY_NAME                \
	}

static ssize_t
read_data(nghttp2_session *h2, int32_t id, uint8_t *buf, size_t len,
          uint32_t *flags, nghttp2_data_source *src, void *user)
{
	(void)id;
	(void)user;
	struct stream *st = src->ptr;
	size_t n = st->out.len - st->sent;
	n = n < len ? n : len;
	memcpy(buf, st->out.p + st->sent, n);
	st->sent += n;
	if (st->sent == st->out.len) {
		*flags |=
		    NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
		nghttp2_nv tr[] = {NV("grpc-status", st->status),
		                   NV("grpc-message", st->message)};
		if (nghttp2_submit_trailer(h2, st->id, tr, 2) != 0) {
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
		}
	}
	return (ssize_t)n;
}

/* An HTTP error (not a gRPC one): 405, 415. */
static void
http_error(nghttp2_session *h2, struct stream *st, const char *code)
{
	nghttp2_nv h[] = {NV(":status", code)};
	nghttp2_submit_response(h2, st->id, h, 1, NULL);
}

/* The request message out of gRPC's framing (one message, maybe
 * compressed) into *msg, *len; 0, or fills a with the error. */
static int
unframe(struct serve *sv, struct stream *st, struct sbuf *plain,
        const void **msg, size_t *len, struct answer *a)
{
	const unsigned char *b = (const unsigned char *)st->body.p;
	if (st->body.len < 5) {
		grpc_fail(a, G_INVALID_ARGUMENT,
		          "the call has no request message");
		return -1;
	}
	uint32_t n = (uint32_t)b[1] << 24 | (uint32_t)b[2] << 16 |
	             (uint32_t)b[3] << 8 | b[4];
	if ((size_t)n + 5 != st->body.len) {
		grpc_fail(a, G_INVALID_ARGUMENT,
		          (size_t)n + 5 < st->body.len
		              ? "a unary call takes one request message"
		              : "the request message is cut short");
		return -1;
	}
	*msg = b + 5;
	*len = n;
	if (b[0] == 0) {
		return 0;
	}
	if (b[0] != 1 || st->encoding[0] == '\0') {
		grpc_fail(a, G_INTERNAL,
		          "a compressed message without a grpc-encoding");
		return -1;
	}
	/* gzip or deflate (zlib), inflated up to --max-body-bytes. */
	z_stream z = {0};
	if (inflateInit2(&z, strcmp(st->encoding, "gzip") == 0
	                         ? 16 + MAX_WBITS
	                         : MAX_WBITS) != Z_OK) {
		grpc_fail(a, G_INTERNAL, "out of memory");
		return -1;
	}
	z.next_in = (unsigned char *)(b + 5);
	z.avail_in = n;
	int rc = Z_OK;
	while (rc == Z_OK) {
		char chunk[16384];
		z.next_out = (unsigned char *)chunk;
		z.avail_out = sizeof chunk;
		rc = inflate(&z, Z_NO_FLUSH);
		sb_add(plain, chunk, sizeof chunk - z.avail_out);
		if (plain->len > sv->opt.max_body) {
			rc = Z_MEM_ERROR;
		} else if (rc == Z_BUF_ERROR && z.avail_in > 0) {
			rc = Z_OK; /* more room was all it needed */
		}
	}
	inflateEnd(&z);
	if (rc != Z_STREAM_END) {
		grpc_fail(
		    a, rc == Z_MEM_ERROR ? G_RESOURCE_EXHAUSTED : G_INTERNAL,
		    rc == Z_MEM_ERROR ? "the request message inflates past "
		                        "--max-body-bytes"
		                      : "the request message does not inflate");
		return -1;
	}
	*msg = plain->p;
	*len = plain->len;
	return 0;
}

/* The request stream ended: answer it. */
static void
serve_stream(struct conn *c, struct stream *st)
{
	struct serve *sv = c->w->g->sv;
	if (st->bad_method) {
		http_error(c->h2, st, "405");
		return;
	}
	if (st->bad_type) {
		http_error(c->h2, st, "415");
		return;
	}
	struct answer a = {0};
	struct served *counted = NULL;
	struct sbuf plain = {0};
	const void *msg;
	size_t len;
	if (st->m < 0) {
		char m[600];
		snprintf(m, sizeof m, "Method not found: %.500s", st->path);
		grpc_fail(&a, G_UNIMPLEMENTED, m);
	} else if (st->bad_encoding) {
		char m[200];
		snprintf(
		    m, sizeof m,
		    "grpc-encoding %s is not supported (identity, deflate, "
		    "gzip are)",
		    st->encoding);
		grpc_fail(&a, G_UNIMPLEMENTED, m);
	} else if (st->too_big) {
		char m[200];
		snprintf(m, sizeof m,
		         "the request message is larger than %zu bytes "
		         "(--max-body-bytes)",
		         sv->opt.max_body);
		grpc_fail(&a, G_RESOURCE_EXHAUSTED, m);
	} else if (atomic_load(&c->w->g->stopping)) {
		grpc_fail(&a, G_UNAVAILABLE, "tf-serve is shutting down");
	} else if (unframe(sv, st, &plain, &msg, &len, &a) == 0) {
		grpc_answer(sv, c->w->q, grpc_methods[st->m].method, msg, len,
		            &a, &counted);
	}
	free(plain.p);
	snprintf(st->status, sizeof st->status, "%d", a.code);
	percent_encode(st->message, sizeof st->message, a.details);
	nghttp2_nv h[] = {
	    NV(":status", "200"), NV("content-type", "application/grpc"),
	    NV("grpc-accept-encoding", "identity,deflate,gzip"),
	    NV("grpc-status", st->status), NV("grpc-message", st->message)};
	if (a.code == G_OK) {
		unsigned char pre[5] = {0, (unsigned char)(a.len >> 24),
		                        (unsigned char)(a.len >> 16),
		                        (unsigned char)(a.len >> 8),
		                        (unsigned char)a.len};
		st->out.len = 0;
		sb_add(&st->out, (const char *)pre, 5);
		sb_add(&st->out, a.msg, a.len);
		nghttp2_data_provider dp = {.source.ptr = st,
		                            .read_callback = read_data};
		nghttp2_submit_response(c->h2, st->id, h, 3, &dp);
	} else { /* Trailers-Only */
		nghttp2_submit_response(c->h2, st->id, h, 5, NULL);
	}
	if (st->m >= 0) {
		serve_count(sv, counted, grpc_methods[st->m].mkind,
		            grpc_http_status(a.code), now() - st->start);
	}
}

static int
on_begin_headers(nghttp2_session *h2, const nghttp2_frame *f, void *user)
{
	struct conn *c = user;
	if (f->hd.type != NGHTTP2_HEADERS ||
	    f->headers.cat != NGHTTP2_HCAT_REQUEST) {
		return 0;
	}
	struct stream *st = calloc(1, sizeof *st);
	if (st == NULL) {
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	}
	c->streams++;
	st->id = f->hd.stream_id;
	st->start = now();
	st->m = -1;
	st->bad_type = 1; /* until a content-type says otherwise */
	nghttp2_session_set_stream_user_data(h2, st->id, st);
	return 0;
}

static int
is(const uint8_t *s, size_t n, const char *lit)
{
	return n == strlen(lit) && memcmp(s, lit, n) == 0;
}

static int
on_header(nghttp2_session *h2, const nghttp2_frame *f, const uint8_t *name,
          size_t nlen, const uint8_t *value, size_t vlen, uint8_t flags,
          void *user)
{
	(void)flags;
	(void)user;
	struct stream *st =
	    nghttp2_session_get_stream_user_data(h2, f->hd.stream_id);
	if (st == NULL || f->hd.type != NGHTTP2_HEADERS) {
		return 0;
	}
	if (is(name, nlen, ":path")) {
		size_t n =
		    vlen < sizeof st->path - 1 ? vlen : sizeof st->path - 1;
		memcpy(st->path, value, n);
		st->path[n] = '\0';
		for (int i = 0; i < NMETHODS; i++) {
			if (strcmp(st->path, grpc_methods[i].path) == 0) {
				st->m = i;
			}
		}
	} else if (is(name, nlen, ":method")) {
		st->bad_method = !is(value, vlen, "POST");
	} else if (is(name, nlen, "content-type")) {
		/* application/grpc, or application/grpc+proto and the like */
		st->bad_type = !(
		    vlen >= 16 && memcmp(value, "application/grpc", 16) == 0 &&
		    (vlen == 16 || value[16] == '+' || value[16] == ';'));
	} else if (is(name, nlen, "grpc-encoding")) {
		if (is(value, vlen, "identity")) {
			st->encoding[0] = '\0';
		} else if (is(value, vlen, "gzip") ||
		           is(value, vlen, "deflate")) {
			memcpy(st->encoding, value, vlen);
			st->encoding[vlen] = '\0';
		} else {
			size_t n = vlen < sizeof st->encoding - 1
			               ? vlen
			               : sizeof st->encoding - 1;
			memcpy(st->encoding, value, n);
			st->encoding[n] = '\0';
			st->bad_encoding = 1;
		}
	}
	return 0;
}

static int
on_data(nghttp2_session *h2, uint8_t flags, int32_t id, const uint8_t *data,
        size_t len, void *user)
{
	(void)flags;
	struct conn *c = user;
	struct stream *st = nghttp2_session_get_stream_user_data(h2, id);
	if (st == NULL) {
		return 0;
	}
	/* the prefix's 5 bytes beside the message */
	if (st->body.len + len > c->w->g->sv->opt.max_body + 5) {
		st->too_big = 1;
		free(st->body.p);
		st->body = (struct sbuf){0};
	} else if (!st->too_big) {
		sb_add(&st->body, (const char *)data, len);
	}
	return 0;
}

static int
on_frame(nghttp2_session *h2, const nghttp2_frame *f, void *user)
{
	struct conn *c = user;
	if ((f->hd.type != NGHTTP2_DATA && f->hd.type != NGHTTP2_HEADERS) ||
	    !(f->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
		return 0;
	}
	struct stream *st =
	    nghttp2_session_get_stream_user_data(h2, f->hd.stream_id);
	if (st != NULL) {
		serve_stream(c, st);
	}
	return 0;
}

static int
on_close(nghttp2_session *h2, int32_t id, uint32_t err, void *user)
{
	(void)err;
	struct conn *c = user;
	struct stream *st = nghttp2_session_get_stream_user_data(h2, id);
	if (st != NULL) {
		c->streams--;
		c->last = now();
		nghttp2_session_set_stream_user_data(h2, id, NULL);
		free(st->body.p);
		free(st->out.p);
		free(st);
	}
	return 0;
}

static nghttp2_session_callbacks *callbacks;

static void
conn_close(struct conn *c)
{
	epoll_ctl(c->w->ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	nghttp2_session_del(c->h2);
	*c->prev = c->next;
	if (c->next != NULL) {
		c->next->prev = c->prev;
	}
	atomic_fetch_sub(&c->w->g->nconn, 1);
	free(c->out.p);
	free(c);
}

/* What the session has to send, appended, then written in one go (the
 * rest when the socket takes it).  -1: the connection is done. */
static int
flush(struct conn *c)
{
	for (;;) {
		const uint8_t *p;
		ssize_t n = nghttp2_session_mem_send(c->h2, &p);
		if (n < 0) {
			return -1;
		}
		if (n == 0) {
			break;
		}
		sb_add(&c->out, (const char *)p, (size_t)n);
	}
	while (c->out_at < c->out.len) {
		ssize_t n =
		    write(c->fd, c->out.p + c->out_at, c->out.len - c->out_at);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!c->want_out) {
				struct epoll_event ev = {.events =
				                             EPOLLIN | EPOLLOUT,
				                         .data.ptr = c};
				epoll_ctl(c->w->ep, EPOLL_CTL_MOD, c->fd, &ev);
				c->want_out = 1;
			}
			return 0;
		}
		if (n < 0) {
			return -1;
		}
		c->out_at += (size_t)n;
	}
	c->out.len = c->out_at = 0;
	if (c->want_out) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
		epoll_ctl(c->w->ep, EPOLL_CTL_MOD, c->fd, &ev);
		c->want_out = 0;
	}
	return nghttp2_session_want_read(c->h2) ||
	               nghttp2_session_want_write(c->h2)
	           ? 0
	           : -1;
}

/* A connection the acceptor handed over: a session on it. */
static void
conn_add(struct worker *w, int fd)
{
	struct serve_grpc *g = w->g;
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	struct conn *c = calloc(1, sizeof *c);
	if (c == NULL || nghttp2_session_server_new(&c->h2, callbacks, c)) {
		die(EX_OSERR, "out of memory");
	}
	c->fd = fd;
	c->w = w;
	c->last = now();
	c->next = w->conns;
	c->prev = &w->conns;
	if (w->conns != NULL) {
		w->conns->prev = &c->next;
	}
	w->conns = c;
	nghttp2_settings_entry set[] = {
	    {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 128},
	    {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20},
	    {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE,
	     (uint32_t)g->sv->opt.max_header},
	};
	nghttp2_submit_settings(c->h2, NGHTTP2_FLAG_NONE, set, 3);
	nghttp2_session_set_local_window_size(c->h2, NGHTTP2_FLAG_NONE, 0,
	                                      1 << 24);
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
	epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev);
	if (flush(c) != 0) {
		conn_close(c);
	}
}

/* The acceptor: each connection to the next worker, in turn. */
static void *
acceptor_main(void *arg)
{
	struct serve_grpc *g = arg;
	for (unsigned next = 0;; next++) {
		int fd =
		    accept4(g->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && (errno == EINTR || errno == ECONNABORTED ||
		               errno == EMFILE || errno == ENFILE)) {
			if (errno == EMFILE || errno == ENFILE) {
				usleep(10000); /* no descriptors: wait a bit */
			}
			continue;
		}
		if (fd < 0 || atomic_load(&g->stopping)) {
			if (fd >= 0) {
				close(fd);
			}
			return NULL; /* the socket was shut: stopping */
		}
		if (atomic_fetch_add(&g->nconn, 1) >=
		    (int)g->sv->opt.max_conn) {
			atomic_fetch_sub(&g->nconn, 1);
			close(fd);
			continue;
		}
		struct worker *w = &g->w[next % (unsigned)g->nw];
		pthread_mutex_lock(&w->lock);
		if (w->nincoming == w->capincoming) {
			int cap = w->capincoming ? 2 * w->capincoming : 16;
			int *p = realloc(w->incoming, (size_t)cap * sizeof *p);
			if (p == NULL) {
				die(EX_OSERR, "out of memory");
			}
			w->incoming = p;
			w->capincoming = cap;
		}
		w->incoming[w->nincoming++] = fd;
		pthread_mutex_unlock(&w->lock);
		uint64_t one = 1;
		if (write(w->wake, &one, sizeof one) < 0) {
			warnx_("gRPC: cannot wake a worker: %s",
			       strerror(errno));
		}
	}
}

/* Bytes came (or the socket can take more): feed the session, send. */
static void
conn_event(struct conn *c, uint32_t events)
{
	if (events & EPOLLIN) {
		char buf[65536];
		for (;;) {
			ssize_t n = read(c->fd, buf, sizeof buf);
			if (n < 0 && errno == EINTR) {
				continue;
			}
			if (n < 0 &&
			    (errno == EAGAIN || errno == EWOULDBLOCK)) {
				break;
			}
			if (n <= 0 ||
			    nghttp2_session_mem_recv(
			        c->h2, (const uint8_t *)buf, (size_t)n) < 0) {
				/* closed, or not HTTP/2 */
				conn_close(c);
				return;
			}
			if ((size_t)n < sizeof buf) {
				break;
			}
		}
	}
	if (flush(c) != 0) {
		conn_close(c);
	}
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct serve_grpc *g = w->g;
	double sweep = now();
	for (;;) {
		struct epoll_event ev[64];
		int n = epoll_wait(w->ep, ev, 64, 1000);
		if (atomic_load(&g->stopping)) {
			break;
		}
		for (int i = 0; i < n; i++) {
			if (ev[i].data.ptr != (void *)w) {
				conn_event(ev[i].data.ptr, ev[i].events);
				continue;
			}
			uint64_t k;
			if (read(w->wake, &k, sizeof k) < 0 &&
			    errno != EAGAIN) {
				warnx_("gRPC: %s", strerror(errno));
			}
			pthread_mutex_lock(&w->lock);
			int fds[64], nfd = 0;
			while (w->nincoming > 0 && nfd < 64) {
				fds[nfd++] = w->incoming[--w->nincoming];
			}
			if (w->nincoming > 0) { /* the rest next time round */
				uint64_t one = 1;
				if (write(w->wake, &one, sizeof one) < 0) {
					warnx_("gRPC: %s", strerror(errno));
				}
			}
			pthread_mutex_unlock(&w->lock);
			for (int j = 0; j < nfd; j++) {
				conn_add(w, fds[j]);
			}
		}
		double t = now();
		/* Connections with no call under way for --idle-timeout go,
		 * however slowly they keep sending (pings, a preface byte by
		 * byte). */
		if (t - sweep >= 1.0) {
			sweep = t;
			for (struct conn *c = w->conns, *next; c != NULL;
			     c = next) {
				next = c->next;
				if (c->streams == 0 &&
				    t - c->last > g->sv->opt.idle) {
					nghttp2_session_terminate_session(
					    c->h2, NGHTTP2_NO_ERROR);
					flush(c);
					conn_close(c);
				}
			}
		}
	}
	/* Every call was answered within its event: tell the clients,
	 * then close. */
	while (w->conns != NULL) {
		struct conn *c = w->conns;
		nghttp2_session_terminate_session(c->h2, NGHTTP2_NO_ERROR);
		flush(c);
		conn_close(c);
	}
	return NULL;
}

struct serve_grpc *
serve_grpc_start(struct serve *sv, unsigned workers)
{
	if (sv->opt.grpc_port < 0) {
		return NULL;
	}
	struct serve_grpc *g = calloc(1, sizeof *g);
	if (g == NULL || nghttp2_session_callbacks_new(&callbacks) != 0) {
		die(EX_OSERR, "out of memory");
	}
	nghttp2_session_callbacks_set_on_begin_headers_callback(
	    callbacks, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(callbacks, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks,
	                                                          on_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks,
	                                                     on_frame);
	nghttp2_session_callbacks_set_on_stream_close_callback(callbacks,
	                                                       on_close);
	g->sv = sv;
	int port;
	g->lfd = serve_listen(sv->opt.address, sv->opt.grpc_port, " for gRPC",
	                      &port);
	g->nw = (int)workers;
	g->w = calloc((size_t)g->nw, sizeof *g->w);
	if (g->w == NULL) {
		die(EX_OSERR, "out of memory");
	}
	for (int i = 0; i < g->nw; i++) {
		struct worker *w = &g->w[i];
		w->g = g;
		w->q = tf_request_new();
		w->ep = epoll_create1(EPOLL_CLOEXEC);
		w->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		pthread_mutex_init(&w->lock, NULL);
		struct epoll_event wev = {.events = EPOLLIN, .data.ptr = w};
		if (w->q == NULL || w->ep < 0 || w->wake < 0 ||
		    epoll_ctl(w->ep, EPOLL_CTL_ADD, w->wake, &wev)) {
			die(EX_OSERR, "cannot start the gRPC workers: %s",
			    strerror(errno));
		}
		if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
			die(EX_OSERR, "cannot start the gRPC workers");
		}
		w->started = 1;
	}
	if (pthread_create(&g->acceptor, NULL, acceptor_main, g) != 0) {
		die(EX_OSERR, "cannot start the gRPC acceptor");
	}
	char hp[64];
	warnx_("gRPC API on %s (%d threads)",
	       serve_hostport(hp, sizeof hp, sv->opt.address, port), g->nw);
	return g;
}

void
serve_grpc_stop(struct serve_grpc *g)
{
	if (g == NULL) {
		return;
	}
	atomic_store(&g->stopping, 1);
	shutdown(g->lfd, SHUT_RDWR); /* the acceptor's accept() returns */
	pthread_join(g->acceptor, NULL);
	for (int i = 0; i < g->nw; i++) {
		struct worker *w = &g->w[i];
		uint64_t one = 1;
		if (write(w->wake, &one, sizeof one) < 0) {
			warnx_("gRPC: cannot wake a worker: %s",
			       strerror(errno));
		}
		if (w->started) {
			pthread_join(w->thread, NULL);
		}
		for (int k = 0; k < w->nincoming; k++) {
			close(w->incoming[k]);
		}
		free(w->incoming);
		pthread_mutex_destroy(&w->lock);
		close(w->ep);
		close(w->wake);
		tf_request_free(w->q);
	}
	close(g->lfd);
	nghttp2_session_callbacks_del(callbacks);
	free(g->w);
	free(g);
}
