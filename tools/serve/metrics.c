/*
 * metrics.c - what tf-serve counts (requests by model, method and
 * status; latency of predictions; versions loaded and refused) and its
 * Prometheus text for /monitoring/prometheus/metrics.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tool.h"
#include "serve.h"

static const char *const method_name[NMETHODS_COUNTED] = {
    [TF_METHOD_PREDICT] = "predict", [TF_METHOD_CLASSIFY] = "classify",
    [TF_METHOD_REGRESS] = "regress", [TF_METHOD_METADATA] = "metadata",
    [TF_METHOD_STATUS] = "status",   [TF_METHOD_TRAIN] = "train",
};
static const int codes[NCODES] = {200, 400, 404, 405, 413, 500, 503};
static const double buckets[NBUCKETS] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                         0.005,  0.01,    0.025,  0.05,  0.1,
                                         0.25,   0.5,     1,      2.5};

void
sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n + 1) {
			cap *= 2;
		}
		char *p = realloc(b->p, cap);
		if (p == NULL) {
			die(EX_SOFTWARE, "out of memory");
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void
sb_printf(struct sbuf *b, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	sb_add(b, tmp, n < (int)sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static int
code_index(int status)
{
	for (int i = 0; i < NCODES; i++) {
		if (codes[i] == status) {
			return i;
		}
	}
	return status >= 500 ? 5 : 1;
}

void
serve_count(struct serve *sv, struct served *s, int method, int status,
            double secs)
{
	if (s == NULL) {
		atomic_fetch_add(&sv->other_req[code_index(status)], 1);
		return;
	}
	atomic_fetch_add(&s->req[method][code_index(status)], 1);
	if (method <= TF_METHOD_REGRESS) { /* inference: timed */
		int b = 0;
		while (b < NBUCKETS && secs > buckets[b]) {
			b++;
		}
		atomic_fetch_add(&s->hist[b], 1);
		atomic_fetch_add(&s->hist_count, 1);
		atomic_fetch_add(&s->hist_sum_ns,
		                 (unsigned long)(secs * 1e9 + 0.5));
	}
}

static void
requests_text(struct serve *sv, struct sbuf *b)
{
	sb_printf(b, "# HELP tfkit_requests_total Requests answered, by "
	             "model, method and HTTP status.\n"
	             "# TYPE tfkit_requests_total counter\n");
	for (int i = 0; i < sv->nmodels; i++) {
		struct served *s = &sv->models[i];
		for (int m = 0; m < NMETHODS_COUNTED; m++) {
			for (int c = 0; c < NCODES; c++) {
				unsigned long v = atomic_load(&s->req[m][c]);
				if (v > 0) {
					sb_printf(
					    b,
					    "tfkit_requests_total{model=\"%"
					    "s\",method=\"%s\",code=\"%d\"} "
					    "%lu\n",
					    s->name, method_name[m], codes[c],
					    v);
				}
			}
		}
	}
	for (int c = 0; c < NCODES; c++) {
		unsigned long v = atomic_load(&sv->other_req[c]);
		if (v > 0) {
			sb_printf(b,
			          "tfkit_requests_total{model=\"\",method="
			          "\"other\",code=\"%d\"} %lu\n",
			          codes[c], v);
		}
	}
}

static void
latency_text(struct serve *sv, struct sbuf *b)
{
	sb_printf(b, "# HELP tfkit_request_duration_seconds Time to answer "
	             "predict, classify and regress.\n"
	             "# TYPE tfkit_request_duration_seconds histogram\n");
	for (int i = 0; i < sv->nmodels; i++) {
		struct served *s = &sv->models[i];
		unsigned long cum = 0;
		for (int k = 0; k <= NBUCKETS; k++) {
			cum += atomic_load(&s->hist[k]);
			char le[32];
			if (k < NBUCKETS) {
				snprintf(le, sizeof le, "%g", buckets[k]);
			} else {
				snprintf(le, sizeof le, "+Inf");
			}
			sb_printf(b,
			          "tfkit_request_duration_seconds_bucket{model="
			          "\"%s\",le=\"%s\"} %lu\n",
			          s->name, le, cum);
		}
		sb_printf(b,
		          "tfkit_request_duration_seconds_sum{model=\"%s\"} "
		          "%.9f\n"
		          "tfkit_request_duration_seconds_count{model=\"%s\"} "
		          "%lu\n",
		          s->name, (double)atomic_load(&s->hist_sum_ns) * 1e-9,
		          s->name, atomic_load(&s->hist_count));
	}
}

/* What each served version has trained on, and how old it is (its
 * provenance: the checkpoint's examples, the export's time). */
static void
version_text(struct serve *sv, struct sbuf *b)
{
	sb_printf(b, "# HELP tfkit_model_examples_trained Examples the served "
	             "version was trained on.\n"
	             "# TYPE tfkit_model_examples_trained gauge\n");
	struct sbuf age = {0};
	sb_printf(&age, "# HELP tfkit_model_version_age_seconds Seconds since "
	                "the served version was exported.\n"
	                "# TYPE tfkit_model_version_age_seconds gauge\n");
	for (int i = 0; i < sv->nmodels; i++) {
		struct version *v = serve_acquire(&sv->models[i], -1);
		char *p = v ? tf_model_provenance(v->inst[0]) : NULL;
		json_t *j = p ? json_loads(p, 0, NULL) : NULL;
		json_t *ex = json_object_get(j, "examples");
		const char *when =
		    json_string_value(json_object_get(j, "exported"));
		if (json_is_integer(ex)) {
			sb_printf(b,
			          "tfkit_model_examples_trained{model=\"%s\"} "
			          "%lld\n",
			          sv->models[i].name,
			          (long long)json_integer_value(ex));
		}
		struct tm tm = {0};
		const char *end =
		    when ? strptime(when, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;
		if (end != NULL && *end == '\0') {
			sb_printf(
			    &age,
			    "tfkit_model_version_age_seconds{model=\"%s\"}"
			    " %.0f\n",
			    sv->models[i].name,
			    difftime(time(NULL), timegm(&tm)));
		}
		json_decref(j);
		free(p);
		if (v != NULL) {
			serve_release(&sv->models[i], v);
		}
	}
	sb_add(b, age.p, age.len);
	free(age.p);
}

void
serve_metrics_text(struct serve *sv, struct sbuf *b)
{
	requests_text(sv, b);
	latency_text(sv, b);
	sb_printf(b, "# HELP tfkit_model_version The version being served "
	             "(-1: none).\n# TYPE tfkit_model_version gauge\n");
	for (int i = 0; i < sv->nmodels; i++) {
		struct version *v = serve_acquire(&sv->models[i], -1);
		sb_printf(b, "tfkit_model_version{model=\"%s\"} %lld\n",
		          sv->models[i].name, v ? (long long)v->number : -1LL);
		if (v != NULL) {
			serve_release(&sv->models[i], v);
		}
	}
	sb_printf(b,
	          "# HELP tfkit_connections_closed_total REST connections "
	          "closed without a request: waiting past --idle-timeout "
	          "(idle, or sending headers too slowly), or the longest "
	          "waiting at --max-connections.\n"
	          "# TYPE tfkit_connections_closed_total counter\n"
	          "tfkit_connections_closed_total{reason=\"idle\"} %lu\n"
	          "tfkit_connections_closed_total{reason=\"limit\"} %lu\n",
	          atomic_load(&sv->closed_idle),
	          atomic_load(&sv->closed_limit));
	version_text(sv, b);
	if (sv->queue != NULL) {
		uint64_t segs;
		uint64_t bytes = tf_queue_depth(sv->opt.train_queue, &segs);
		sb_printf(
		    b,
		    "# HELP tfkit_train_queue_bytes Bytes in the :train queue "
		    "that no trainer's checkpoint has released.\n"
		    "# TYPE tfkit_train_queue_bytes gauge\n"
		    "tfkit_train_queue_bytes %llu\n"
		    "# HELP tfkit_train_queue_segments Its segments.\n"
		    "# TYPE tfkit_train_queue_segments gauge\n"
		    "tfkit_train_queue_segments %llu\n"
		    "# HELP tfkit_train_examples_total Examples posted to "
		    ":train: accepted (on disk), or refused (the queue full "
		    "or not writable).\n"
		    "# TYPE tfkit_train_examples_total counter\n"
		    "tfkit_train_examples_total{result=\"accepted\"} %lu\n"
		    "tfkit_train_examples_total{result=\"refused\"} %lu\n",
		    (unsigned long long)bytes, (unsigned long long)segs,
		    atomic_load(&sv->train_accepted),
		    atomic_load(&sv->train_refused));
	}
	sb_printf(b, "# HELP tfkit_model_loads_total Versions loaded.\n"
	             "# TYPE tfkit_model_loads_total counter\n");
	for (int i = 0; i < sv->nmodels; i++) {
		sb_printf(b, "tfkit_model_loads_total{model=\"%s\"} %lu\n",
		          sv->models[i].name,
		          atomic_load(&sv->models[i].loads));
	}
	sb_printf(b, "# HELP tfkit_model_load_failures_total Versions "
	             "refused (damaged, half-written, unloadable).\n"
	             "# TYPE tfkit_model_load_failures_total counter\n");
	for (int i = 0; i < sv->nmodels; i++) {
		sb_printf(b,
		          "tfkit_model_load_failures_total{model=\"%s\"} %lu\n",
		          sv->models[i].name,
		          atomic_load(&sv->models[i].load_failures));
	}
}
