/*
 * train.c - POST /v1/models/NAME:train (tfkit's own method): labelled
 * examples checked against the model served (tf_request_train()),
 * appended to the queue on disk (--train-queue) and synced before the
 * 200 that acknowledges them; 503 with Retry-After while the queue holds
 * --train-queue-max bytes a trainer has not yet released.  tf-train
 * --stream DIR trains what the queue holds.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tool.h"
#include "serve.h"

void
serve_train_open(struct serve *sv)
{
	if (sv->opt.train_queue == NULL) {
		return;
	}
	pthread_mutex_init(&sv->queue_lock, NULL);
	sv->queue = tf_queue_new();
	if (sv->queue == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	uint64_t dropped;
	if (tf_queue_open(sv->queue, sv->opt.train_queue, sv->opt.train_segment,
	                  &dropped) != TF_OK) {
		die_status(tf_errcode(sv->queue), tf_errmsg(sv->queue));
	}
	if (dropped > 0) {
		warnx_("%s: removed the %llu bytes of an append cut short "
		       "(never acknowledged)",
		       sv->opt.train_queue, (unsigned long long)dropped);
	}
}

/* The model's schema beside the segments, for the trainer (once). */
static int
queue_schema(struct serve *sv, const struct tf_model *m, char *err, size_t size)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/schema.json", sv->opt.train_queue);
	if (access(path, F_OK) == 0) {
		return TF_OK;
	}
	const char *text = tf_model_schema_text(m);
	return tf_file_replace(path, text, strlen(text), TF_FILE_SYNC, err,
	                       size);
}

void
serve_train(struct serve *sv, struct reply *r, struct served *s,
            const char *body, size_t len)
{
	if (sv->queue == NULL) {
		reply_error(r, 404,
		            "this server takes no examples: :train needs "
		            "tf-serve --train-queue DIR");
		return;
	}
	struct version *v = serve_acquire(s, -1);
	if (v == NULL) {
		/* a model served but with no version loaded yet (the server
		 * just started, or its base is still empty): the examples
		 * need its schema, so the client waits, as for a full queue */
		r->retry_after = 1;
		reply_error(r, 503,
		            "model '%s' has no version loaded yet: retry "
		            "later",
		            s->name);
		return;
	}
	struct tf_request *q = serve_thread_request();
	const uint8_t *rec;
	size_t bytes, n;
	int rc = tf_request_train(q, v->inst[0], body, len, sv->opt.max_rows,
	                          &rec, &bytes, &n);
	char err[600];
	if (rc != TF_OK) {
		reply_error(r, rc == TF_EINVAL ? 400 : 500, "%s", tf_errmsg(q));
	} else if (tf_queue_depth(sv->opt.train_queue, NULL) + bytes >
	           sv->opt.train_max) {
		atomic_fetch_add(&sv->train_refused, n);
		r->retry_after = 1;
		reply_error(r, 503,
		            "the training queue is full (%llu bytes not yet "
		            "trained): retry later",
		            (unsigned long long)sv->opt.train_max);
	} else if (queue_schema(sv, v->inst[0], err, sizeof err) != TF_OK) {
		r->retry_after = 5;
		reply_error(r, 503, "%s", err);
	} else {
		pthread_mutex_lock(&sv->queue_lock);
		rc = tf_queue_append(sv->queue, rec, bytes);
		if (rc != TF_OK) {
			snprintf(err, sizeof err, "%s", tf_errmsg(sv->queue));
		}
		pthread_mutex_unlock(&sv->queue_lock);
		if (rc != TF_OK) {
			atomic_fetch_add(&sv->train_refused, n);
			r->retry_after = 5;
			reply_error(r, 503,
			            "the examples could not be queued: %s",
			            err);
		} else {
			atomic_fetch_add(&sv->train_accepted, n);
			r->status = 200;
			r->type = "application/json";
			r->body.len = 0;
			sb_printf(&r->body, "{\"accepted\": %zu}", n);
		}
	}
	serve_release(s, v);
}
