/*
 * grpc.h - tf-serve's gRPC: the calls (grpc_call.c: the methods by path,
 * each answered from the models served with TF Serving's codes and
 * messages), the HTTP/2 streams that carry them (grpc.c) and the
 * connections and threads (h2.c).
 */
#ifndef TF_SERVE_GRPC_H
#define TF_SERVE_GRPC_H

#include <nghttp2/nghttp2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "serve.h"

/* gRPC's status codes (the same numbers as tensorflow.error.Code). */
enum {
	G_OK = 0,
	G_INVALID_ARGUMENT = 3,
	G_NOT_FOUND = 5,
	G_RESOURCE_EXHAUSTED = 8,
	G_FAILED_PRECONDITION = 9,
	G_UNIMPLEMENTED = 12,
	G_INTERNAL = 13,
	G_UNAVAILABLE = 14,
};

#define NGRPC_METHODS 5

/* The methods, by their paths. */
struct grpc_method {
	const char *path;
	int method; /* TF_METHOD_... */
};
extern const struct grpc_method grpc_methods[NGRPC_METHODS];

/* An answer: a status, its message, and a response message. */
struct answer {
	int code;
	char details[1024];
	const void *msg;
	size_t len;
};

/* Set a's status and message. */
void grpc_fail(struct answer *a, int code, const char *msg);
/* The HTTP status the metrics count a gRPC code as. */
int grpc_http_status(int code);
/* Answer one request message of method with the models served; counted:
 * the model the metrics count it for (or NULL). */
void grpc_answer(struct serve *sv, struct tf_request *q, int method,
                 const void *body, size_t len, struct answer *a,
                 struct served **counted);

/* A connection: its session and the bytes it has yet to write. (h2.c) */
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
	int ep, wake; /* epoll; an eventfd: stop */
	struct tf_request *q;
	struct conn *conns;
	pthread_t thread;
	int started;
};

struct serve_grpc {
	struct serve *sv;
	int lfd; /* the listening socket */
	atomic_int stopping, nconn;
	struct worker *w;
	int nw;
};

/* Set the session callbacks that make calls of streams. (grpc.c) */
void grpc_session_callbacks(nghttp2_session_callbacks *cb);

#endif
