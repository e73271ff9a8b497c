/*
 * http.c - the REST API on libmicrohttpd: a thread pool, epoll, bodies
 * collected up to --max-body-bytes, each response in one write
 * (TCP_NODELAY), the same answers as nng (route.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "../tool.h"
#include "serve.h"

struct serve_http {
	struct MHD_Daemon *d;
};

/* A request being received. */
struct conn_state {
	struct sbuf body;
	int too_big;
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
	int kind = M_STATUS;
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
	}
}

/* Small responses go out as soon as they are written. */
static void
on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
              enum MHD_ConnectionNotificationCode toe)
{
	(void)cls;
	(void)socket_context;
	if (toe != MHD_CONNECTION_NOTIFY_STARTED) {
		return;
	}
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci != NULL) {
		int one = 1;
		setsockopt(ci->connect_fd, IPPROTO_TCP, TCP_NODELAY, &one,
		           sizeof one);
	}
}

static void
on_mhd_error(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	char msg[512];
	vsnprintf(msg, sizeof msg, fmt, ap);
	size_t n = strlen(msg);
	while (n > 0 && msg[n - 1] == '\n') {
		msg[--n] = '\0';
	}
	warnx_("http: %s", msg);
}

/* The listening socket, bound here so that a port in use is named as it
 * is (libmicrohttpd's own message names port 0 for a given address). */
static int
listen_on(struct serve *sv)
{
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)sv->opt.port);
	inet_pton(AF_INET, sv->opt.address, &sa.sin_addr); /* checked */
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
	    listen(fd, 1024) != 0) {
		die(EX_UNAVAILABLE, "cannot listen on %s:%d: %s",
		    sv->opt.address, sv->opt.port, strerror(errno));
	}
	return fd;
}

struct serve_http *
serve_http_start(struct serve *sv, unsigned *pool_out)
{
	int fd = listen_on(sv);
	unsigned pool = (unsigned)sv->opt.threads;
	if (sv->opt.batching) {
		/* Connection threads wait for batches: more of them. */
		size_t want = sv->opt.max_batch < 64 ? sv->opt.max_batch : 64;
		pool = want > pool ? (unsigned)want : pool;
	}
	struct serve_http *h = calloc(1, sizeof *h);
	if (h == NULL) {
		die(EX_OSERR, "out of memory");
	}
	h->d = MHD_start_daemon(
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC |
	        MHD_USE_ERROR_LOG,
	    0, NULL, NULL, on_request, sv, MHD_OPTION_EXTERNAL_LOGGER,
	    on_mhd_error, NULL, MHD_OPTION_LISTEN_SOCKET, fd,
	    MHD_OPTION_THREAD_POOL_SIZE, pool, MHD_OPTION_NOTIFY_COMPLETED,
	    on_done, sv, MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL,
	    MHD_OPTION_CONNECTION_LIMIT, sv->opt.max_conn,
	    MHD_OPTION_CONNECTION_TIMEOUT, sv->opt.idle,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, sv->opt.max_header,
	    MHD_OPTION_END);
	if (h->d == NULL) {
		die(EX_UNAVAILABLE, "cannot listen on %s:%d (in use?)",
		    sv->opt.address, sv->opt.port);
	}
	const union MHD_DaemonInfo *di =
	    MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	warnx_("REST API on http://%s:%u/ (%u threads)", sv->opt.address,
	       di ? di->port : (unsigned)sv->opt.port, pool);
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
	free(h);
}
