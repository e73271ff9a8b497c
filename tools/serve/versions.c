/*
 * versions.c - the models tf-serve serves, their versions, and hot
 * reload: a watcher looks at each base, loads a new version (a model per
 * worker, each warmed with one prediction) and swaps it in under the
 * model's lock; a version that does not load is refused once, until its
 * files change, and the current one keeps serving.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../tool.h"
#include "serve.h"

static void
version_free(struct version *v)
{
	if (v == NULL) {
		return;
	}
	for (int i = 0; i < v->ninst; i++) {
		tf_model_free(v->inst[i]);
	}
	free(v->inst);
	free(v->free_idx);
	free(v->metadata);
	pthread_mutex_destroy(&v->lock);
	pthread_cond_destroy(&v->cond);
	free(v);
}

struct version *
serve_acquire(struct served *s, int64_t want)
{
	pthread_mutex_lock(&s->lock);
	struct version *v = s->cur;
	if (v != NULL && (want < 0 || v->number == want)) {
		v->refs++;
	} else {
		v = NULL;
	}
	pthread_mutex_unlock(&s->lock);
	return v;
}

void
serve_release(struct served *s, struct version *v)
{
	pthread_mutex_lock(&s->lock);
	int last = --v->refs == 0;
	pthread_mutex_unlock(&s->lock);
	if (last) {
		version_free(v);
	}
}

int
serve_take(struct version *v)
{
	pthread_mutex_lock(&v->lock);
	while (v->nfree == 0) {
		pthread_cond_wait(&v->cond, &v->lock);
	}
	int i = v->free_idx[--v->nfree];
	pthread_mutex_unlock(&v->lock);
	return i;
}

void
serve_give(struct version *v, int i)
{
	pthread_mutex_lock(&v->lock);
	v->free_idx[v->nfree++] = i;
	pthread_cond_signal(&v->cond);
	pthread_mutex_unlock(&v->lock);
}

/* Record what a version is (newest first; the oldest forgotten when
 * the list is full).  Called with s->lock held. */
static void
set_status(struct served *s, int64_t number, const char *state,
           const char *code, const char *message)
{
	int k = 0;
	while (k < s->nst && s->st[k].number != number) {
		k++;
	}
	if (k == s->nst) {
		if (s->nst == (int)(sizeof s->st / sizeof s->st[0])) {
			free(s->st[--s->nst].message);
		}
		k = 0;
		while (k < s->nst && s->st[k].number > number) {
			k++;
		}
		memmove(&s->st[k + 1], &s->st[k],
		        (size_t)(s->nst - k) * sizeof s->st[0]);
		s->nst++;
		s->st[k].message = NULL;
	}
	s->st[k].number = number;
	s->st[k].state = state;
	s->st[k].code = code;
	free(s->st[k].message);
	s->st[k].message = strdup(message ? message : "");
}

/* ---- reading versions ---------------------------------------------------- */

static void
stat_sig(const char *path, char *sig, size_t size)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		snprintf(sig, size, "missing");
		return;
	}
	snprintf(sig, size, "%lld.%ld:%lld", (long long)st.st_mtim.tv_sec,
	         st.st_mtim.tv_nsec, (long long)st.st_size);
}

/* What a version directory's files look like now. */
static void
dir_sig(const char *dir, char *sig, size_t size)
{
	char p[4300], a[48], b[48];
	snprintf(p, sizeof p, "%s/manifest.json", dir);
	stat_sig(p, a, sizeof a);
	stat_sig(dir, b, sizeof b);
	snprintf(sig, size, "%s/%s", a, b);
}

/* Warm a model with one prediction: a row of means and missing ids. */
static int
warm(struct tf_model *m)
{
	struct tf_batch one;
	float *y = calloc((size_t)tf_model_outputs(m), sizeof *y);
	struct tf_columns *cols = tf_model_columns(m);
	int rc = y == NULL ? TF_ENOMEM
	                   : tf_batch_init(&one, 1, tf_columns_width(cols),
	                                   tf_columns_id_width(cols));
	if (rc == TF_OK) {
		one.rows = 1;
		memset(one.x, 0, (size_t)one.width * sizeof *one.x);
		for (int64_t k = 0; k < one.id_width; k++) {
			one.ids[k] = -1;
		}
		rc = tf_model_predict(m, &one, y);
		tf_batch_release(&one);
	}
	free(y);
	return rc;
}

/*
 * Load one version: a model per worker (from the directory dir, or the
 * files mv in memory when given), each warmed.  NULL with a message on
 * failure.
 */
static struct version *
load_version(struct serve *sv, struct served *s, int64_t number,
             const char *dir, const struct tf_export_member_version *mv,
             char *err, size_t errlen)
{
	struct version *v = calloc(1, sizeof *v);
	int n = sv->opt.threads + 2 + (sv->opt.nng_url ? sv->opt.threads : 0);
	if (v == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&v->lock, NULL);
	pthread_cond_init(&v->cond, NULL);
	v->number = number;
	v->refs = 1;
	v->inst = calloc((size_t)n, sizeof *v->inst);
	v->free_idx = calloc((size_t)n, sizeof *v->free_idx);
	if (v->inst == NULL || v->free_idx == NULL) {
		snprintf(err, errlen, "out of memory");
		version_free(v);
		return NULL;
	}
	char origin[4200];
	snprintf(origin, sizeof origin, "%s/%lld", s->base, (long long)number);
	for (int i = 0; i < n; i++) {
		struct tf_model *m = tf_model_new();
		v->inst[v->ninst++] = m;
		if (m != NULL) {
			tf_model_set_device(m, sv->opt.dev);
		}
		int rc = m == NULL ? TF_ENOMEM
		         : mv      ? tf_model_load_files(m, sv->reg, mv->files,
		                                         mv->nfiles, origin)
		                   : tf_model_load(m, sv->reg, dir);
		if (rc != TF_OK) {
			snprintf(err, errlen, "%s",
			         m ? tf_errmsg(m) : "out of memory");
			version_free(v);
			return NULL;
		}
		if (warm(m) != TF_OK) {
			snprintf(err, errlen,
			         "%.1024s: warm-up prediction failed: %.512s",
			         origin, tf_errmsg(m));
			version_free(v);
			return NULL;
		}
		v->free_idx[v->nfree++] = i;
	}
	v->metadata = tf_model_metadata(v->inst[0], s->name, number);
	if (v->metadata == NULL) {
		snprintf(err, errlen, "out of memory");
		version_free(v);
		return NULL;
	}
	return v;
}

static int
failed_before(struct served *s, int64_t number, const char *sig)
{
	for (int i = 0; i < s->nfail; i++) {
		if (s->fail[i].number == number &&
		    strcmp(s->fail[i].sig, sig) == 0) {
			return 1;
		}
	}
	return 0;
}

static void
remember_failure(struct served *s, int64_t number, const char *sig)
{
	int k = 0;
	while (k < s->nfail && s->fail[k].number != number) {
		k++;
	}
	if (k == s->nfail) {
		if (s->nfail == (int)(sizeof s->fail / sizeof s->fail[0])) {
			memmove(&s->fail[0], &s->fail[1],
			        sizeof s->fail - sizeof s->fail[0]);
			s->nfail--;
		}
		k = s->nfail++;
	}
	s->fail[k].number = number;
	snprintf(s->fail[k].sig, sizeof s->fail[k].sig, "%s", sig);
}

/* Make v current; the old version goes when its last request ends. */
static void
swap_in(struct served *s, struct version *v, const char *from)
{
	pthread_mutex_lock(&s->lock);
	struct version *old = s->cur;
	s->cur = v;
	set_status(s, v->number, "AVAILABLE", "OK", "");
	if (old != NULL) {
		set_status(s, old->number, "END", "OK", "");
	}
	pthread_mutex_unlock(&s->lock);
	atomic_fetch_add(&s->loads, 1);
	if (old != NULL) {
		warnx_("model %s: version %lld loaded from %s, replacing "
		       "version %lld",
		       s->name, (long long)v->number, from,
		       (long long)old->number);
		serve_release(s, old);
	} else {
		warnx_("model %s: version %lld loaded from %s", s->name,
		       (long long)v->number, from);
	}
}

static void
refuse(struct served *s, int64_t number, const char *sig, const char *why)
{
	remember_failure(s, number, sig);
	pthread_mutex_lock(&s->lock);
	set_status(s, number, "END", "DATA_LOSS", why);
	pthread_mutex_unlock(&s->lock);
	atomic_fetch_add(&s->load_failures, 1);
	warnx_("model %s: version %lld refused: %s", s->name, (long long)number,
	       why);
}

/* An archive base: read again when it changes; its highest version that
 * loads is served. */
static void
scan_archive(struct serve *sv, struct served *s, int64_t cur)
{
	char sig[96], err[2048];
	stat_sig(s->base, sig, sizeof sig);
	if (strcmp(sig, s->archive_sig) == 0) {
		return;
	}
	struct tf_export_member_version *mv = NULL;
	size_t n = 0;
	if (tf_export_read_archive(s->base, &mv, &n, err, sizeof err) != 0) {
		warnx_("model %s: %s", s->name, err);
		return; /* perhaps being written: next poll */
	}
	snprintf(s->archive_sig, sizeof s->archive_sig, "%s", sig);
	char *tried = calloc(n + 1, 1);
	for (;;) {
		size_t best = n;
		for (size_t i = 0; tried != NULL && i < n; i++) {
			if (!tried[i] && mv[i].nfiles > 0 &&
			    (best == n || mv[i].number > mv[best].number)) {
				best = i;
			}
		}
		if (best == n || mv[best].number == cur) {
			break;
		}
		tried[best] = 1;
		struct version *v =
		    load_version(sv, s, mv[best].number, s->base, &mv[best],
		                 err, sizeof err);
		if (v != NULL) {
			swap_in(s, v, s->base);
			break;
		}
		refuse(s, mv[best].number, sig, err);
	}
	free(tried);
	tf_export_archive_free(mv, n);
}

void
serve_scan(struct serve *sv, struct served *s)
{
	char err[2048];
	int64_t cur = s->cur ? s->cur->number : -1;
	if (s->archive) {
		scan_archive(sv, s, cur);
		return;
	}
	int64_t *vs = NULL;
	size_t n = 0;
	if (tf_export_versions(s->base, &vs, &n, err, sizeof err) != TF_OK) {
		warnx_("model %s: %s", s->name, err);
		return;
	}
	/* Highest first, down to the one serving. */
	for (size_t i = 0; i < n && vs[i] != cur; i++) {
		char dir[4200], sig[96];
		snprintf(dir, sizeof dir, "%s/%lld", s->base, (long long)vs[i]);
		dir_sig(dir, sig, sizeof sig);
		if (failed_before(s, vs[i], sig)) {
			continue;
		}
		struct version *v =
		    load_version(sv, s, vs[i], dir, NULL, err, sizeof err);
		if (v != NULL) {
			swap_in(s, v, dir);
			break;
		}
		refuse(s, vs[i], sig, err);
	}
	if (n == 0 && cur < 0 && !s->warned_empty++) {
		warnx_("model %s: no versions in %s (did you forget to name "
		       "the version directory as a number, e.g. '1/'?)",
		       s->name, s->base);
	}
	free(vs);
}

void *
serve_watcher(void *arg)
{
	struct serve *sv = arg;
	pthread_mutex_lock(&sv->watch_lock);
	while (!atomic_load(&sv->stopping)) {
		struct timespec t;
		clock_gettime(CLOCK_REALTIME, &t);
		long us = (long)(sv->opt.poll * 1e6);
		t.tv_sec += us / 1000000;
		t.tv_nsec += (us % 1000000) * 1000;
		t.tv_sec += t.tv_nsec / 1000000000;
		t.tv_nsec %= 1000000000;
		pthread_cond_timedwait(&sv->watch_wake, &sv->watch_lock, &t);
		if (atomic_load(&sv->stopping)) {
			break;
		}
		pthread_mutex_unlock(&sv->watch_lock);
		for (int i = 0; i < sv->nmodels; i++) {
			serve_scan(sv, &sv->models[i]);
		}
		pthread_mutex_lock(&sv->watch_lock);
	}
	pthread_mutex_unlock(&sv->watch_lock);
	return NULL;
}

/* ---- the models served --------------------------------------------------- */

void
serve_add_model(struct serve *sv, const char *name, const char *base)
{
	for (int i = 0; i < sv->nmodels; i++) {
		if (strcmp(sv->models[i].name, name) == 0) {
			usage_error("model name '%s' given twice", name);
		}
	}
	if (*name == '\0' || strpbrk(name, "/:") != NULL) {
		usage_error("model name '%s': empty, or holds '/' or ':'",
		            name);
	}
	struct served *m =
	    realloc(sv->models, (size_t)(sv->nmodels + 1) * sizeof *m);
	if (m == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	sv->models = m;
	struct served *s = &sv->models[sv->nmodels++];
	memset(s, 0, sizeof *s);
	s->name = strdup(name);
	s->base = strdup(base);
	if (s->name == NULL || s->base == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	struct stat st;
	if (stat(base, &st) != 0) {
		die(EX_NOINPUT, "model %s: %s: %s", name, base,
		    strerror(errno));
	}
	s->archive = S_ISREG(st.st_mode);
	pthread_mutex_init(&s->lock, NULL);
}

void
serve_load_config(struct serve *sv, const char *path)
{
	json_error_t je;
	json_t *root = json_load_file(path, 0, &je);
	if (root == NULL) {
		die(je.line < 0 ? EX_NOINPUT : EX_DATAERR, "%s:%d: %s", path,
		    je.line, je.text);
	}
	json_t *list = json_object_get(root, "models");
	if (!json_is_array(list) || json_array_size(list) == 0) {
		die(EX_DATAERR,
		    "%s: expected {\"models\": [{\"name\": ..., "
		    "\"base_path\": ...}, ...]}",
		    path);
	}
	size_t i;
	json_t *e;
	json_array_foreach(list, i, e)
	{
		const char *name =
		    json_string_value(json_object_get(e, "name"));
		const char *base =
		    json_string_value(json_object_get(e, "base_path"));
		if (name == NULL || base == NULL) {
			die(EX_DATAERR,
			    "%s: model %zu needs \"name\" and \"base_path\"",
			    path, i);
		}
		serve_add_model(sv, name, base);
	}
	json_decref(root);
}

void
serve_free_models(struct serve *sv)
{
	for (int i = 0; i < sv->nmodels; i++) {
		struct served *s = &sv->models[i];
		if (s->cur != NULL) {
			serve_release(s, s->cur);
		}
		for (int k = 0; k < s->nst; k++) {
			free(s->st[k].message);
		}
		pthread_mutex_destroy(&s->lock);
		free(s->name);
		free(s->base);
	}
	free(sv->models);
	sv->models = NULL;
	sv->nmodels = 0;
}
