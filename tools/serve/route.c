/*
 * route.c - one request's answer, for REST and nng alike: the URL
 * grammar is the library's (tf_serving_route()); here each kind of
 * request is answered from the models served.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tool.h"
#include "serve.h"

void
reply_error(struct reply *r, int status, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	char *body = tf_serving_error_body(msg);
	r->status = status;
	r->type = "application/json";
	r->body.len = 0;
	sb_printf(&r->body, "%s", body ? body : "{ \"error\": \"error\" }");
	free(body);
}

static void
text(struct reply *r, int status, const char *msg)
{
	r->status = status;
	r->type = "text/plain";
	r->body.len = 0;
	sb_printf(&r->body, "%s\n", msg);
}

/* GET /v1/models/NAME[/versions/N]: what each version is. */
static void
model_status(struct reply *r, struct served *s, int64_t want)
{
	pthread_mutex_lock(&s->lock);
	int any = 0;
	r->body.len = 0;
	sb_printf(&r->body, "{\n \"model_version_status\": [");
	for (int i = 0; i < s->nst; i++) {
		if (want >= 0 && s->st[i].number != want) {
			continue;
		}
		json_t *msg = json_string(s->st[i].message);
		char *mt = msg ? json_dumps(msg, JSON_ENCODE_ANY) : NULL;
		sb_printf(&r->body,
		          "%s\n  {\n   \"version\": \"%lld\",\n   \"state\": "
		          "\"%s\",\n   \"status\": {\n    \"error_code\": "
		          "\"%s\",\n    \"error_message\": ",
		          any ? "," : "", (long long)s->st[i].number,
		          s->st[i].state, s->st[i].code);
		sb_add(&r->body, mt ? mt : "\"\"", strlen(mt ? mt : "\"\""));
		sb_printf(&r->body, "\n   }\n  }");
		free(mt);
		json_decref(msg);
		any = 1;
	}
	sb_printf(&r->body, "\n ]\n}\n");
	pthread_mutex_unlock(&s->lock);
	r->status = 200;
	r->type = "application/json";
	if (!any && want >= 0) {
		reply_error(r, 404, "Could not find version %lld of model %s",
		            (long long)want, s->name);
	} else if (!any) {
		reply_error(r, 404, "Could not find any versions of model %s",
		            s->name);
	}
}

/* Each thread's request buffers, freed when the thread ends. */
static pthread_key_t req_key;
static pthread_once_t req_once = PTHREAD_ONCE_INIT;

static void
free_request(void *q)
{
	tf_request_free(q);
}

static void
make_req_key(void)
{
	pthread_key_create(&req_key, free_request);
}

struct tf_request *
serve_thread_request(void)
{
	pthread_once(&req_once, make_req_key);
	struct tf_request *q = pthread_getspecific(req_key);
	if (q == NULL) {
		if ((q = tf_request_new()) == NULL) {
			die(EX_SOFTWARE, "out of memory");
		}
		pthread_setspecific(req_key, q);
	}
	return q;
}

static void
not_found(struct reply *r, const char *name, size_t n, int64_t want)
{
	char msg[512];
	tf_serving_not_found(msg, sizeof msg, name, n, want);
	reply_error(r, 404, "%s", msg);
}

/* :predict, :classify, :regress: parse, predict, respond. */
static void
infer(struct serve *sv, struct reply *r, struct served *s, int64_t want,
      int method, const char *body, size_t len)
{
	struct version *v = serve_acquire(s, want);
	if (v == NULL) {
		not_found(r, s->name, strlen(s->name), want);
		return;
	}
	struct tf_request *q = serve_thread_request();
	const struct tf_model *m = v->inst[0]; /* read only */
	tf_request_set_allow_missing(q, sv->opt.allow_missing);
	int rc = tf_request_parse(q, m, method, body, len, sv->opt.max_rows);
	if (rc == TF_OK && serve_predict(sv, v, q) != TF_OK) {
		reply_error(r, 500, "prediction failed");
		serve_release(s, v);
		return;
	}
	const char *out;
	size_t olen;
	if (rc == TF_OK &&
	    (rc = tf_request_respond(q, m, &out, &olen)) == TF_OK) {
		r->status = 200;
		r->type = "application/json";
		r->body.len = 0;
		sb_add(&r->body, out, olen);
	}
	if (rc != TF_OK) {
		reply_error(r, rc == TF_EINVAL ? 400 : 500, "%s", tf_errmsg(q));
	}
	serve_release(s, v);
}

struct served *
serve_find(struct serve *sv, const char *name, size_t n)
{
	for (int i = 0; i < sv->nmodels; i++) {
		if (strlen(sv->models[i].name) == n &&
		    strncmp(sv->models[i].name, name, n) == 0) {
			return &sv->models[i];
		}
	}
	return NULL;
}

/* /readyz: every model has a version. */
static void
ready(struct serve *sv, struct reply *r)
{
	for (int i = 0; i < sv->nmodels; i++) {
		struct version *v = serve_acquire(&sv->models[i], -1);
		if (v == NULL) {
			char msg[600];
			snprintf(msg, sizeof msg,
			         "not ready: no version of model %.500s is "
			         "loaded",
			         sv->models[i].name);
			text(r, 503, msg);
			return;
		}
		serve_release(&sv->models[i], v);
	}
	text(r, 200, "ready");
}

void
serve_route(struct serve *sv, struct reply *r, const char *method,
            const char *path, const char *body, size_t len,
            struct served **counted, int *method_out)
{
	*counted = NULL;
	*method_out = TF_METHOD_STATUS;
	r->body.len = 0;
	struct tf_route rt;
	tf_serving_route(method, path, &rt);
	switch (rt.kind) {
	case TF_ROUTE_HEALTH:
		text(r, 200, "OK");
		return;
	case TF_ROUTE_READY:
		ready(sv, r);
		return;
	case TF_ROUTE_METRICS:
		r->status = 200;
		r->type = "text/plain; version=0.0.4";
		serve_metrics_text(sv, &r->body);
		return;
	case TF_ROUTE_ERROR:
		if (rt.plain) {
			text(r, rt.status, rt.message);
		} else {
			reply_error(r, rt.status, "%s", rt.message);
		}
		return;
	default:
		break;
	}
	static const int kinds[] = {
	    [TF_ROUTE_STATUS] = TF_METHOD_STATUS,
	    [TF_ROUTE_METADATA] = TF_METHOD_METADATA,
	    [TF_ROUTE_PREDICT] = TF_METHOD_PREDICT,
	    [TF_ROUTE_CLASSIFY] = TF_METHOD_CLASSIFY,
	    [TF_ROUTE_REGRESS] = TF_METHOD_REGRESS,
	    [TF_ROUTE_TRAIN] = TF_METHOD_TRAIN,
	};
	int kind = kinds[rt.kind];
	struct served *s = serve_find(sv, rt.model, rt.model_len);
	if (s == NULL) {
		if (kind == TF_METHOD_STATUS) {
			reply_error(r, 404,
			            "Could not find any versions of model %.*s",
			            (int)rt.model_len, rt.model);
		} else {
			not_found(r, rt.model, rt.model_len, rt.version);
		}
		return;
	}
	*counted = s;
	*method_out = kind;
	if (kind == TF_METHOD_STATUS) {
		model_status(r, s, rt.version);
	} else if (kind == TF_METHOD_METADATA) {
		struct version *v = serve_acquire(s, rt.version);
		if (v == NULL) {
			not_found(r, s->name, strlen(s->name), rt.version);
			return;
		}
		r->status = 200;
		r->type = "application/json";
		sb_add(&r->body, v->metadata, strlen(v->metadata));
		serve_release(s, v);
	} else if (kind == TF_METHOD_TRAIN) {
		serve_train(sv, r, s, body, len);
	} else {
		infer(sv, r, s, rt.version, kind, body, len);
	}
}
