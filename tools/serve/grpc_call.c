/*
 * grpc_call.c - TensorFlow Serving's gRPC methods (tensorflow.serving.
 * PredictionService and ModelService) answered from the models served:
 * the request message decoded and parsed by the library
 * (tf_request_decode_pb() and on), TF Serving's status codes and
 * messages, GetModelStatus from the versions' states.  The HTTP/2 that
 * carries the calls is grpc.c's.
 */
#include <stdio.h>
#include <string.h>

#include "../tool.h"
#include "grpc.h"

/* The methods, by their paths. */
const struct grpc_method grpc_methods[NGRPC_METHODS] = {
    {"/tensorflow.serving.PredictionService/Predict", TF_METHOD_PREDICT},
    {"/tensorflow.serving.PredictionService/Classify", TF_METHOD_CLASSIFY},
    {"/tensorflow.serving.PredictionService/Regress", TF_METHOD_REGRESS},
    {"/tensorflow.serving.PredictionService/GetModelMetadata",
     TF_METHOD_METADATA},
    {"/tensorflow.serving.ModelService/GetModelStatus", TF_METHOD_STATUS},
};

void
grpc_fail(struct answer *a, int code, const char *msg)
{
	a->code = code;
	snprintf(a->details, sizeof a->details, "%s", msg);
	a->msg = NULL;
	a->len = 0;
}

/* The HTTP status the metrics count a gRPC code as (one set of counters
 * for both APIs). */
int
grpc_http_status(int code)
{
	switch (code) {
	case G_OK:
		return 200;
	case G_INVALID_ARGUMENT:
	case G_FAILED_PRECONDITION:
		return 400;
	case G_NOT_FOUND:
		return 404;
	case G_RESOURCE_EXHAUSTED:
		return 413;
	case G_UNAVAILABLE:
		return 503;
	default:
		return 500;
	}
}

/* A library status as a gRPC status code. */
static int
code_of(int rc)
{
	return rc == TF_EINVAL   ? G_INVALID_ARGUMENT
	       : rc == TF_ENOMEM ? G_RESOURCE_EXHAUSTED
	                         : G_INTERNAL;
}

/* GetModelStatus: every version of s (or version want) and its state. */
static void
model_status(struct tf_request *q, struct served *s, int64_t want,
             struct answer *a)
{
	struct tf_version_state st[32];
	size_t n = 0;
	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < s->nst && n < 32; i++) {
		if (want < 0 || s->st[i].number == want) {
			st[n++] = (struct tf_version_state){
			    s->st[i].number, s->st[i].state, s->st[i].code,
			    s->st[i].message};
		}
	}
	int rc =
	    n > 0 ? tf_serving_status_pb(q, st, n, &a->msg, &a->len) : TF_OK;
	pthread_mutex_unlock(&s->lock);
	if (n == 0 && want >= 0) {
		char m[600];
		snprintf(m, sizeof m, "Could not find version %lld of model %s",
		         (long long)want, s->name);
		grpc_fail(a, G_NOT_FOUND, m);
	} else if (n == 0) {
		char m[600];
		snprintf(m, sizeof m, "Could not find any versions of model %s",
		         s->name);
		grpc_fail(a, G_NOT_FOUND, m);
	} else if (rc != TF_OK) {
		grpc_fail(a, code_of(rc), tf_errmsg(q));
	}
}

/* Answer one request message of method with the models served. */
void
grpc_answer(struct serve *sv, struct tf_request *q, int method,
            const void *body, size_t len, struct answer *a,
            struct served **counted)
{
	struct tf_model_spec spec;
	a->code = G_OK;
	a->details[0] = '\0';
	if (tf_request_decode_pb(q, method, body, len, &spec) != TF_OK) {
		grpc_fail(a, G_INVALID_ARGUMENT, tf_errmsg(q));
		return;
	}
	if (spec.label != NULL) {
		char m[600];
		snprintf(
		    m, sizeof m,
		    "Unrecognized servable version label: %.400s (tf-serve "
		    "serves versions by number)",
		    spec.label);
		grpc_fail(a, G_INVALID_ARGUMENT, m);
		return;
	}
	if (spec.name[0] == '\0') {
		grpc_fail(a, G_INVALID_ARGUMENT,
		          "ModelSpec has no name specified.");
		return;
	}
	struct served *s = serve_find(sv, spec.name, strlen(spec.name));
	struct version *v = NULL;
	if (method == TF_METHOD_STATUS) {
		*counted = s;
		if (s != NULL) {
			model_status(q, s, spec.version, a);
		} else {
			char m[600];
			snprintf(m, sizeof m,
			         "Could not find any versions of model %.500s",
			         spec.name);
			grpc_fail(a, G_NOT_FOUND, m);
		}
		return;
	}
	if (s == NULL || (v = serve_acquire(s, spec.version)) == NULL) {
		char m[600];
		tf_serving_not_found(m, sizeof m, spec.name, strlen(spec.name),
		                     spec.version);
		grpc_fail(a, G_NOT_FOUND, m);
		*counted = s;
		return;
	}
	*counted = s;
	const struct tf_model *m = v->inst[0]; /* read only */
	tf_request_set_allow_missing(q, sv->opt.allow_missing);
	int rc = tf_request_parse_pb(q, m, sv->opt.max_rows);
	if (rc == TF_OK && method != TF_METHOD_METADATA &&
	    serve_predict(sv, v, q) != TF_OK) {
		grpc_fail(a, G_INTERNAL, "prediction failed");
	} else if (rc == TF_OK &&
	           (rc = tf_request_respond_pb(q, m, s->name, v->number,
	                                       &a->msg, &a->len)) != TF_OK) {
		grpc_fail(a, tf_request_grpc_code(q), tf_errmsg(q));
	} else if (rc != TF_OK) {
		grpc_fail(a, tf_request_grpc_code(q), tf_errmsg(q));
	}
	/* The response lies in q, not in the version: safe to let go. */
	serve_release(s, v);
}
