/*
 * grpc.c - TensorFlow Serving's gRPC API (tensorflow.serving.
 * PredictionService and ModelService) on the gRPC C core.
 *
 * The methods are registered with the server, which reads each call's
 * request message before handing the call over.  --threads workers each
 * keep one request for a call of every method outstanding on their own
 * completion queue (plus one for any other method, answered
 * UNIMPLEMENTED); a worker answers a call from the models served (the
 * messages are the library's, tf_request_decode_pb() and on) and sends
 * headers, response and status in one batch, on a second queue of its
 * own, then asks for the method's next call.
 */
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/log.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tool.h"
#include "serve.h"

/* gRPC's status codes (the same numbers as tensorflow.error.Code). */
enum {
	G_OK = 0,
	G_INVALID_ARGUMENT = 3,
	G_NOT_FOUND = 5,
	G_RESOURCE_EXHAUSTED = 8,
	G_UNIMPLEMENTED = 12,
	G_INTERNAL = 13,
	G_UNAVAILABLE = 14,
};

#define NMETHODS 5

/* A worker's outstanding request for a call of one method (or, for
 * method NMETHODS, of any other). */
struct slot {
	struct worker *w;
	int m;
	grpc_call *call;
	gpr_timespec deadline;
	grpc_metadata_array md;
	grpc_byte_buffer *payload;
	grpc_call_details det; /* the other methods: which one */
};

struct worker {
	struct serve_grpc *g;
	grpc_completion_queue *cq;  /* new calls */
	grpc_completion_queue *ops; /* a call's batch */
	struct tf_request *q;
	struct slot slot[NMETHODS + 1];
	pthread_t thread;
	int started;
};

struct serve_grpc {
	struct serve *sv;
	grpc_server *server;
	void *registered[NMETHODS];
	grpc_completion_queue *shutdown_cq;
	struct worker *w;
	int nw;
};

/* The methods, by their paths. */
static const struct {
	const char *path;
	int method; /* TF_METHOD_..., or -1: UNIMPLEMENTED */
	int mkind;  /* what the metrics count it as */
} methods[NMETHODS] = {
    {"/tensorflow.serving.PredictionService/Predict", TF_METHOD_PREDICT,
     M_PREDICT},
    {"/tensorflow.serving.PredictionService/Classify", TF_METHOD_CLASSIFY,
     M_CLASSIFY},
    {"/tensorflow.serving.PredictionService/Regress", TF_METHOD_REGRESS,
     M_REGRESS},
    {"/tensorflow.serving.PredictionService/GetModelMetadata",
     TF_METHOD_METADATA, M_METADATA},
    {"/tensorflow.serving.ModelService/GetModelStatus", TF_METHOD_STATUS,
     M_STATUS},
};

/* An answer: a status, its message, and a response message. */
struct answer {
	int code;
	char details[1024];
	const void *msg;
	size_t len;
};

static void
fail(struct answer *a, int code, const char *msg)
{
	a->code = code;
	snprintf(a->details, sizeof a->details, "%s", msg);
	a->msg = NULL;
	a->len = 0;
}

/* The HTTP status the metrics count a gRPC code as (one set of counters
 * for both APIs). */
static int
http_status(int code)
{
	switch (code) {
	case G_OK:
		return 200;
	case G_INVALID_ARGUMENT:
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
		fail(a, G_NOT_FOUND, m);
	} else if (n == 0) {
		char m[600];
		snprintf(m, sizeof m, "Could not find any versions of model %s",
		         s->name);
		fail(a, G_NOT_FOUND, m);
	} else if (rc != TF_OK) {
		fail(a, code_of(rc), tf_errmsg(q));
	}
}

/* Answer one request message of method with the models served. */
static void
answer(struct serve *sv, struct tf_request *q, int method,
       const grpc_slice *body, struct answer *a, struct served **counted)
{
	struct tf_model_spec spec;
	a->code = G_OK;
	a->details[0] = '\0';
	if (tf_request_decode_pb(q, method, GRPC_SLICE_START_PTR(*body),
	                         GRPC_SLICE_LENGTH(*body), &spec) != TF_OK) {
		fail(a, G_INVALID_ARGUMENT, tf_errmsg(q));
		return;
	}
	if (spec.label != NULL) {
		char m[600];
		snprintf(
		    m, sizeof m,
		    "Unrecognized servable version label: %.400s (tf-serve "
		    "serves versions by number)",
		    spec.label);
		fail(a, G_INVALID_ARGUMENT, m);
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
			fail(a, G_NOT_FOUND, m);
		}
		return;
	}
	if (s == NULL || (v = serve_acquire(s, spec.version)) == NULL) {
		char m[600];
		tf_serving_not_found(m, sizeof m, spec.name, strlen(spec.name),
		                     spec.version);
		fail(a, G_NOT_FOUND, m);
		*counted = s;
		return;
	}
	*counted = s;
	const struct tf_model *m = v->inst[0]; /* read only */
	tf_request_set_allow_missing(q, sv->opt.allow_missing);
	int rc = tf_request_parse_pb(q, m, sv->opt.max_rows);
	if (rc == TF_OK && method != TF_METHOD_METADATA &&
	    serve_predict(sv, v, q) != TF_OK) {
		fail(a, G_INTERNAL, "prediction failed");
	} else if (rc == TF_OK &&
	           (rc = tf_request_respond_pb(q, m, s->name, v->number,
	                                       &a->msg, &a->len)) != TF_OK) {
		fail(a, code_of(rc), tf_errmsg(q));
	} else if (rc != TF_OK) {
		fail(a, code_of(rc), tf_errmsg(q));
	}
	/* The response lies in q, not in the version: safe to let go. */
	serve_release(s, v);
}

/* Wait for the one operation a worker has started. */
static int
wait_op(grpc_completion_queue *cq)
{
	grpc_event ev = grpc_completion_queue_next(
	    cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
	return ev.type == GRPC_OP_COMPLETE && ev.success;
}

/* Answer the call of a slot (its request message already read). */
static void
serve_call(struct worker *w, struct slot *sl)
{
	struct serve *sv = w->g->sv;
	double start = now();
	int method = sl->m < NMETHODS ? methods[sl->m].method : -1;
	struct answer a = {0};
	struct served *counted = NULL;
	grpc_slice body = grpc_empty_slice();
	if (method < 0) {
		char *path = grpc_slice_to_c_string(sl->det.method);
		char m[600];
		snprintf(m, sizeof m, "Method not found: %.500s", path);
		gpr_free(path);
		fail(&a, G_UNIMPLEMENTED, m);
	} else if (sl->payload == NULL) {
		fail(&a, G_INVALID_ARGUMENT, "the call has no request message");
	} else {
		grpc_byte_buffer_reader rd;
		if (grpc_byte_buffer_reader_init(&rd, sl->payload)) {
			body = grpc_byte_buffer_reader_readall(&rd);
			grpc_byte_buffer_reader_destroy(&rd);
			answer(sv, w->q, method, &body, &a, &counted);
		} else {
			fail(&a, G_INTERNAL, "cannot read the request");
		}
	}
	grpc_slice_unref(body);
	/* Headers, message, status and trailers together. */
	grpc_op op[4];
	memset(op, 0, sizeof op);
	grpc_byte_buffer *out = NULL;
	size_t n = 0;
	op[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
	if (a.code == G_OK) {
		grpc_slice s = grpc_slice_from_copied_buffer(a.msg, a.len);
		out = grpc_raw_byte_buffer_create(&s, 1);
		grpc_slice_unref(s);
		op[n].op = GRPC_OP_SEND_MESSAGE;
		op[n++].data.send_message.send_message = out;
	}
	grpc_slice details = grpc_slice_from_copied_string(a.details);
	op[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
	op[n].data.send_status_from_server.status = (grpc_status_code)a.code;
	op[n++].data.send_status_from_server.status_details = &details;
	int cancelled = 0;
	op[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
	op[n++].data.recv_close_on_server.cancelled = &cancelled;
	if (grpc_call_start_batch(sl->call, op, n, sl, NULL) == GRPC_CALL_OK) {
		wait_op(w->ops);
	}
	grpc_slice_unref(details);
	if (out != NULL) {
		grpc_byte_buffer_destroy(out);
	}
	if (method >= 0) {
		serve_count(sv, counted, methods[sl->m].mkind,
		            http_status(a.code), now() - start);
	}
}

/* Ask for the next call of a slot's method. */
static int
request(struct slot *sl)
{
	struct worker *w = sl->w;
	sl->call = NULL;
	sl->payload = NULL;
	grpc_metadata_array_init(&sl->md);
	if (sl->m < NMETHODS) {
		return grpc_server_request_registered_call(
		           w->g->server, w->g->registered[sl->m], &sl->call,
		           &sl->deadline, &sl->md, &sl->payload, w->ops, w->cq,
		           sl) == GRPC_CALL_OK;
	}
	grpc_call_details_init(&sl->det);
	return grpc_server_request_call(w->g->server, &sl->call, &sl->det,
	                                &sl->md, w->ops, w->cq,
	                                sl) == GRPC_CALL_OK;
}

/* A slot's call answered (or its request failed): let go of it. */
static void
release(struct slot *sl)
{
	if (sl->call != NULL) {
		grpc_call_unref(sl->call);
	}
	if (sl->payload != NULL) {
		grpc_byte_buffer_destroy(sl->payload);
	}
	grpc_metadata_array_destroy(&sl->md);
	if (sl->m == NMETHODS) {
		grpc_call_details_destroy(&sl->det);
	}
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	int live = 0;
	for (int i = 0; i <= NMETHODS; i++) {
		live += request(&w->slot[i]);
	}
	while (live > 0) {
		grpc_event ev = grpc_completion_queue_next(
		    w->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
		if (ev.type != GRPC_OP_COMPLETE) {
			break;
		}
		struct slot *sl = ev.tag;
		if (ev.success) {
			serve_call(w, sl);
		}
		release(sl);
		/* After a failed request the server is shutting down. */
		if (!ev.success || !request(sl)) {
			live--;
		}
	}
	return NULL;
}

/* gRPC's own log lines are not tf-serve's messages: tf-serve says what
 * went wrong itself. */
static void
quiet(gpr_log_func_args *args)
{
	(void)args;
}

static void
drain(grpc_completion_queue *cq)
{
	grpc_completion_queue_shutdown(cq);
	while (grpc_completion_queue_next(
	           cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL)
	           .type != GRPC_QUEUE_SHUTDOWN) {
	}
	grpc_completion_queue_destroy(cq);
}

struct serve_grpc *
serve_grpc_start(struct serve *sv)
{
	if (sv->opt.grpc_port < 0) {
		return NULL;
	}
	gpr_set_log_function(quiet);
	grpc_init();
	struct serve_grpc *g = calloc(1, sizeof *g);
	if (g == NULL) {
		die(EX_OSERR, "out of memory");
	}
	g->sv = sv;
	grpc_arg args[] = {
	    {.type = GRPC_ARG_INTEGER,
	     .key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
	     .value.integer =
	         sv->opt.max_body > INT_MAX ? INT_MAX : (int)sv->opt.max_body},
	    /* A port another process holds is an error, not shared. */
	    {.type = GRPC_ARG_INTEGER,
	     .key = GRPC_ARG_ALLOW_REUSEPORT,
	     .value.integer = 0},
	    {.type = GRPC_ARG_INTEGER,
	     .key = GRPC_ARG_MAX_CONNECTION_IDLE_MS,
	     .value.integer = (int)sv->opt.idle * 1000},
	};
	grpc_channel_args ca = {sizeof args / sizeof args[0], args};
	g->server = grpc_server_create(&ca, NULL);
	g->shutdown_cq = grpc_completion_queue_create_for_next(NULL);
	grpc_server_register_completion_queue(g->server, g->shutdown_cq, NULL);
	g->nw = sv->opt.threads;
	g->w = calloc((size_t)g->nw, sizeof *g->w);
	if (g->w == NULL) {
		die(EX_OSERR, "out of memory");
	}
	for (int i = 0; i < NMETHODS; i++) {
		g->registered[i] = grpc_server_register_method(
		    g->server, methods[i].path, NULL,
		    GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
		if (g->registered[i] == NULL) {
			die(EX_SOFTWARE, "cannot register %s", methods[i].path);
		}
	}
	for (int i = 0; i < g->nw; i++) {
		struct worker *w = &g->w[i];
		w->g = g;
		w->cq = grpc_completion_queue_create_for_next(NULL);
		w->ops = grpc_completion_queue_create_for_next(NULL);
		w->q = tf_request_new();
		if (w->q == NULL) {
			die(EX_OSERR, "out of memory");
		}
		for (int k = 0; k <= NMETHODS; k++) {
			w->slot[k].w = w;
			w->slot[k].m = k;
		}
		grpc_server_register_completion_queue(g->server, w->cq, NULL);
	}
	char addr[128];
	snprintf(addr, sizeof addr, "%s:%d", sv->opt.address,
	         sv->opt.grpc_port);
	grpc_server_credentials *cred =
	    grpc_insecure_server_credentials_create();
	int port = grpc_server_add_http2_port(g->server, addr, cred);
	grpc_server_credentials_release(cred);
	if (port <= 0) {
		die(EX_UNAVAILABLE,
		    "cannot listen for gRPC on %s (is the port "
		    "taken? --grpc-port)",
		    addr);
	}
	grpc_server_start(g->server);
	for (int i = 0; i < g->nw; i++) {
		if (pthread_create(&g->w[i].thread, NULL, worker_main,
		                   &g->w[i]) != 0) {
			die(EX_OSERR, "cannot start the gRPC workers");
		}
		g->w[i].started = 1;
	}
	warnx_("gRPC API on %s:%d (%d threads)", sv->opt.address, port, g->nw);
	return g;
}

void
serve_grpc_stop(struct serve_grpc *g)
{
	if (g == NULL) {
		return;
	}
	/* Calls under way finish; then every waiting worker is told. */
	grpc_server_shutdown_and_notify(g->server, g->shutdown_cq, g);
	grpc_event ev = grpc_completion_queue_next(
	    g->shutdown_cq, gpr_time_from_seconds(10, GPR_TIMESPAN), NULL);
	if (ev.type == GRPC_QUEUE_TIMEOUT) {
		grpc_server_cancel_all_calls(g->server);
		grpc_completion_queue_next(
		    g->shutdown_cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
	}
	for (int i = 0; i < g->nw; i++) {
		if (g->w[i].started) {
			pthread_join(g->w[i].thread, NULL);
		}
	}
	grpc_server_destroy(g->server);
	drain(g->shutdown_cq);
	for (int i = 0; i < g->nw; i++) {
		drain(g->w[i].cq);
		drain(g->w[i].ops);
		tf_request_free(g->w[i].q);
	}
	free(g->w);
	free(g);
	grpc_shutdown_blocking();
}
