/*
 * grpc.c - gRPC's wire protocol over libnghttp2 for tf-serve: the
 * session callbacks that make a call of a stream and answer it (the
 * calls themselves, TensorFlow Serving's PredictionService and
 * ModelService, are grpc_call.c's; the connections and their threads
 * h2.c's).
 *
 * A connection is an nghttp2 server session; a call is a stream: POST of
 * a path naming the method, content-type application/grpc, a body of
 * one length-prefixed message (compressed with gzip or deflate when
 * grpc-encoding says so).  When the request's stream ends the worker
 * answers it (grpc_answer()) and queues the response: headers, the
 * message and the trailers with grpc-status and grpc-message, or for an
 * error headers and trailers in one frame (gRPC's Trailers-Only).
 * Unknown methods and MultiInference are UNIMPLEMENTED.
 */
#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../tool.h"
#include "serve.h"

#include "grpc.h"

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

/* nghttp2 asks for a response's DATA: the prefixed message, then the
 * trailers (the stream ends with them, not with the data). */
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
		/* grpc-message only when there is one (not for OK) */
		nghttp2_nv tr[] = {NV("grpc-status", st->status),
		                   NV("grpc-message", st->message)};
		if (nghttp2_submit_trailer(h2, st->id, tr,
		                           st->message[0] ? 2 : 1) != 0) {
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
		serve_count(sv, counted, grpc_methods[st->m].method,
		            grpc_http_status(a.code), now() - st->start);
	}
}

/* A request's HEADERS begin: a stream of its own for the call. */
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

/* One request header: the method's path, :method, content-type and
 * grpc-encoding are what a call needs; the rest pass. */
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
		for (int i = 0; i < NGRPC_METHODS; i++) {
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

/* Request body bytes: kept up to --max-body-bytes (and the prefix). */
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

/* The request's stream ended (its last DATA or HEADERS): answer it. */
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

/* A stream closed, answered or reset: its call is freed. */
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

void
grpc_session_callbacks(nghttp2_session_callbacks *cb)
{
	nghttp2_session_callbacks_set_on_begin_headers_callback(
	    cb, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
}
