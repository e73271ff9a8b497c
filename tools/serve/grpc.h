/*
 * grpc.h - tf-serve's gRPC: the calls (grpc_call.c: the methods by path,
 * each answered from the models served with TF Serving's codes and
 * messages) and the HTTP/2 server that carries them (grpc.c).
 */
#ifndef TF_SERVE_GRPC_H
#define TF_SERVE_GRPC_H

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

#define NMETHODS 5

/* The methods, by their paths. */
struct grpc_method {
	const char *path;
	int method; /* TF_METHOD_... */
	int mkind;  /* what the metrics count it as */
};
extern const struct grpc_method grpc_methods[NMETHODS];

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

#endif
