/*
 * h2.c - the connections of tf-serve's gRPC API: the listening socket
 * and the worker threads (as many as the REST pool), each an epoll loop
 * over the connections it accepted.  A connection is an nghttp2 server
 * session whose callbacks are grpc.c's; everything one read produced is
 * written in one write.  Connections with no call under way go after
 * --idle-timeout; stopping tells every client (GOAWAY) and closes.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../tool.h"
#include "serve.h"

#include "grpc.h"

static nghttp2_session_callbacks *callbacks;

/* A connection's end: out of its worker's epoll and list, and freed. */
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

/* A connection just accepted: a session on it. */
static void
conn_add(struct worker *w, int fd)
{
	struct serve_grpc *g = w->g;
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	struct conn *c = calloc(1, sizeof *c);
	if (c == NULL || nghttp2_session_server_new(&c->h2, callbacks, c)) {
		die(EX_SOFTWARE, "out of memory");
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

/* New connections, every one waiting (up to 64 a turn: as nginx's
 * multi_accept).  The listening socket is in every worker's epoll with
 * EPOLLEXCLUSIVE, so a connection wakes one worker that is waiting, an
 * idle one, and a burst of them shares the worker it woke: 16 clients
 * with a call at a time each are one loop's work, not two threads
 * waking each other on one spare CPU (the REST pool's threads take
 * connections the same way). */
static void
accept_all(struct worker *w)
{
	struct serve_grpc *g = w->g;
	for (int k = 0; k < 64; k++) {
		int fd =
		    accept4(g->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && (errno == EINTR || errno == ECONNABORTED)) {
			continue;
		}
		if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			usleep(10000); /* no descriptors: wait a bit */
			return;
		}
		if (fd < 0) {
			return; /* none left, or stopping */
		}
		if (atomic_fetch_add(&g->nconn, 1) >=
		    (int)g->sv->opt.max_conn) {
			atomic_fetch_sub(&g->nconn, 1);
			close(fd);
			continue;
		}
		conn_add(w, fd);
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

/* A worker: its connections' events, new connections when it is the one
 * woken, the idle sweep once a second; at stop, GOAWAY to each. */
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
			if (ev[i].data.ptr == (void *)g) {
				accept_all(w);
			} else if (ev[i].data.ptr != (void *)w) {
				conn_event(ev[i].data.ptr, ev[i].events);
			} /* else the eventfd: stopping, seen above */
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
		die(EX_SOFTWARE, "out of memory");
	}
	grpc_session_callbacks(callbacks);
	g->sv = sv;
	int port;
	g->lfd = serve_listen(sv->opt.address, sv->opt.grpc_port, " for gRPC",
	                      &port);
	g->nw = (int)workers;
	g->w = calloc((size_t)g->nw, sizeof *g->w);
	if (g->w == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	int fl = fcntl(g->lfd, F_GETFL);
	if (fl < 0 || fcntl(g->lfd, F_SETFL, fl | O_NONBLOCK) < 0) {
		die(EX_OSERR, "cannot start the gRPC workers: %s",
		    strerror(errno));
	}
	for (int i = 0; i < g->nw; i++) {
		struct worker *w = &g->w[i];
		w->g = g;
		w->q = tf_request_new();
		w->ep = epoll_create1(EPOLL_CLOEXEC);
		w->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		struct epoll_event wev = {.events = EPOLLIN, .data.ptr = w};
		struct epoll_event lev = {.events = EPOLLIN | EPOLLEXCLUSIVE,
		                          .data.ptr = g};
		if (w->q == NULL || w->ep < 0 || w->wake < 0 ||
		    epoll_ctl(w->ep, EPOLL_CTL_ADD, w->wake, &wev) ||
		    epoll_ctl(w->ep, EPOLL_CTL_ADD, g->lfd, &lev)) {
			die(EX_OSERR, "cannot start the gRPC workers: %s",
			    strerror(errno));
		}
		if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
			die(EX_OSERR, "cannot start the gRPC workers");
		}
		w->started = 1;
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
		close(w->ep);
		close(w->wake);
		tf_request_free(w->q);
	}
	close(g->lfd);
	nghttp2_session_callbacks_del(callbacks);
	free(g->w);
	free(g);
}
