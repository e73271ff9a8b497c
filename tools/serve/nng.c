/*
 * nng.c - the nng request/reply endpoint (--nng-listen): a request is
 * "METHOD PATH\n" followed by the body; the reply is "STATUS\n"
 * followed by the body, e.g. "POST /v1/models/m:predict\n{...}" ->
 * "200\n{\"predictions\": ...}".  One context and aio per worker.
 */
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <stdlib.h>
#include <string.h>

#include "../tool.h"
#include "serve.h"

struct serve_nng {
	struct serve *sv;
	nng_socket sock;
	pthread_t *threads;
	int nthreads;
};

/* Answer one request message in place. */
static void
answer(struct serve *sv, nng_msg *msg)
{
	double t0 = now();
	struct reply r = {0};
	struct served *s = NULL;
	int kind = TF_METHOD_STATUS;
	char line[2048];
	struct tf_frame f;
	if (tf_serving_frame(nng_msg_body(msg), nng_msg_len(msg), line,
	                     sizeof line, &f) != TF_OK) {
		reply_error(&r, 400,
		            "expected 'METHOD PATH' and a newline, then the "
		            "body");
	} else if (f.body_len > sv->opt.max_body) {
		reply_error(&r, 413, "request body larger than %zu bytes",
		            sv->opt.max_body);
	} else {
		serve_route(sv, &r, f.method, f.path, f.body, f.body_len, &s,
		            &kind);
	}
	serve_count(sv, s, kind, r.status, now() - t0);
	nng_msg_clear(msg);
	char head[16];
	snprintf(head, sizeof head, "%d\n", r.status);
	if (nng_msg_append(msg, head, strlen(head)) != 0 ||
	    nng_msg_append(msg, r.body.p ? r.body.p : "", r.body.len) != 0) {
		nng_msg_clear(msg); /* an empty reply: out of memory */
	}
	free(r.body.p);
}

static void *
worker(void *arg)
{
	struct serve_nng *e = arg;
	nng_ctx ctx;
	nng_aio *aio;
	if (nng_ctx_open(&ctx, e->sock) != 0 ||
	    nng_aio_alloc(&aio, NULL, NULL) != 0) {
		warnx_("nng: cannot open a context");
		return NULL;
	}
	for (;;) {
		nng_ctx_recv(ctx, aio);
		nng_aio_wait(aio);
		if (nng_aio_result(aio) != 0) {
			break; /* closed */
		}
		nng_msg *msg = nng_aio_get_msg(aio);
		answer(e->sv, msg);
		nng_aio_set_msg(aio, msg);
		nng_ctx_send(ctx, aio);
		nng_aio_wait(aio);
		if (nng_aio_result(aio) != 0) {
			nng_msg_free(msg);
		}
	}
	nng_aio_free(aio);
	nng_ctx_close(ctx);
	return NULL;
}

struct serve_nng *
serve_nng_start(struct serve *sv)
{
	struct serve_nng *e = calloc(1, sizeof *e);
	if (e == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	e->sv = sv;
	int rv = nng_rep0_open(&e->sock);
	if (rv == 0) {
		rv = nng_listen(e->sock, sv->opt.nng_url, NULL, 0);
	}
	if (rv != 0) {
		die(EX_UNAVAILABLE, "--nng-listen %s: %s", sv->opt.nng_url,
		    nng_strerror(rv));
	}
	e->threads = calloc((size_t)sv->opt.threads, sizeof *e->threads);
	for (int i = 0; e->threads && i < sv->opt.threads; i++) {
		if (pthread_create(&e->threads[i], NULL, worker, e) == 0) {
			e->nthreads++;
		}
	}
	warnx_("nng endpoint on %s", sv->opt.nng_url);
	return e;
}

void
serve_nng_stop(struct serve_nng *e)
{
	if (e == NULL) {
		return;
	}
	nng_close(e->sock);
	for (int i = 0; i < e->nthreads; i++) {
		pthread_join(e->threads[i], NULL);
	}
	free(e->threads);
	free(e);
}
