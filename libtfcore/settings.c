/*
 * settings.c - the table of training settings, and their resolution:
 * flags, config file, checkpoint, defaults (tf/settings.h).
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tf/checkpoint.h"
#include "tf/optim.h"
#include "tf/settings.h"
#include "tf/train.h"

enum kind { K_STR, K_INT, K_REAL, K_BOOL, K_LIST };

/* Which runs a value carries over to. */
enum scope {
	RUN,    /* this invocation: how far it goes, where it writes */
	RESUME, /* how training proceeds: the checkpoint's unless given */
	MODEL   /* fixed by the checkpoint: another value is an error */
};

/* When --print-config and the provenance show it. */
enum show {
	ALWAYS,
	IF_SET,
	WIDE,   /* only for --model wide_and_deep */
	CONV,   /* only for --model cnn (and not with a --model-file spec) */
	RNN,    /* only for --model lstm, bidirectional_lstm and gru */
	GRU,    /* only for --model gru */
	SHAPED, /* only for cnn and the recurrent models */
	LAYERS  /* the built-in models' layers: not for a --model-file spec */
};

struct def {
	const char *name;
	unsigned char kind, scope, show;
	const char *dflt; /* NULL: unset unless given */
	long long imin, imax;
	double rmin;         /* K_REAL: the lowest value, or above it */
	unsigned char ropen; /* ... rmin itself is out of range */
	double rmax;         /* ... the highest value */
};

#define I(lo, hi)       lo, hi, 0, 0, 0
#define R(lo, open, hi) 0, 0, lo, open, hi
#define NONE            0, 0, 0, 0, 0

/* Every setting, in the order --print-config shows them.  The one place
 * that holds each default. */
static const struct def defs[] = {
    {"model", K_STR, MODEL, ALWAYS, "dnn", NONE},
    {"model-file", K_STR, RUN, IF_SET, NULL, NONE},
    {"hidden", K_STR, MODEL, LAYERS, "128 32 8", NONE},
    {"input-shape", K_STR, MODEL, SHAPED, NULL, NONE},
    {"conv", K_STR, MODEL, CONV, "32 64", NONE},
    {"rnn-units", K_INT, MODEL, RNN, "64", I(1, 65536)},
    {"gru-reset-after", K_BOOL, MODEL, GRU, "true", NONE},
    {"max-length", K_INT, MODEL, IF_SET, NULL, I(1, 1 << 24)},
    {"enable-bn", K_BOOL, MODEL, LAYERS, "false", NONE},
    {"image-size", K_STR, MODEL, IF_SET, NULL, NONE},
    {"image-channels", K_INT, MODEL, IF_SET, NULL, I(1, 3)},
    {"image-scale", K_STR, MODEL, IF_SET, NULL, NONE},
    {"random-flip", K_BOOL, RESUME, IF_SET, "false", NONE},
    {"random-crop", K_INT, RESUME, IF_SET, NULL, I(0, 4096)},
    {"bn-epsilon", K_REAL, MODEL, LAYERS, "0.001", R(0, 1, INFINITY)},
    {"dropout-keep-prob", K_REAL, MODEL, LAYERS, "1", R(0, 1, 1)},
    {"crosses", K_STR, MODEL, WIDE, "", NONE},
    {"hash-buckets", K_INT, MODEL, WIDE, "1000", I(1, INT32_MAX)},
    {"sparse", K_BOOL, MODEL, IF_SET, "false", NONE},
    {"oov-buckets", K_INT, MODEL, IF_SET, NULL, I(1, INT32_MAX)},
    {"embedding-dim", K_INT, MODEL, WIDE, "8", I(1, 4096)},
    {"optimizer", K_STR, MODEL, ALWAYS, "adam", NONE},
    {"learning-rate", K_REAL, RESUME, ALWAYS, "0.001", R(0, 1, INFINITY)},
    {"opt", K_LIST, RESUME, ALWAYS, NULL, NONE},
    {"batch-size", K_INT, RESUME, ALWAYS, "128", I(1, 1 << 24)},
    {"epochs", K_INT, RUN, ALWAYS, "1", I(0, 1LL << 40)},
    {"max-steps", K_INT, RUN, IF_SET, NULL, I(1, 1LL << 50)},
    {"shuffle-buffer", K_INT, RESUME, ALWAYS, "10000", I(1, 1LL << 30)},
    {"seed", K_INT, RESUME, ALWAYS, "0", I(0, INT64_MAX)},
    {"no-normalize", K_BOOL, RESUME, ALWAYS, "false", NONE},
    {"lr-decay-rate", K_REAL, RESUME, ALWAYS, "1", R(0, 1, INFINITY)},
    {"lr-decay-steps", K_INT, RESUME, ALWAYS, "0", I(0, 1LL << 50)},
    {"lr-staircase", K_BOOL, RESUME, ALWAYS, "false", NONE},
    {"l1", K_REAL, RESUME, ALWAYS, "0", R(0, 0, INFINITY)},
    {"l2", K_REAL, RESUME, ALWAYS, "0", R(0, 0, INFINITY)},
    {"steps-to-validate", K_INT, RUN, IF_SET, NULL, I(1, 1LL << 50)},
    {"save-every", K_INT, RUN, IF_SET, NULL, I(1, 1LL << 50)},
    {"save-every-secs", K_REAL, RUN, ALWAYS, "600", R(0, 1, INFINITY)},
    {"keep", K_INT, RUN, ALWAYS, "5", I(0, 1000)},
    {"from-scratch", K_BOOL, RUN, ALWAYS, "false", NONE},
    {"if-damaged", K_STR, RUN, IF_SET, NULL, NONE},
    {"threads", K_INT, RUN, ALWAYS, "1", I(1, 256)},
    {"device", K_STR, RUN, ALWAYS, "cpu", NONE},
    {"gpu-math", K_STR, RUN, ALWAYS, "fp32", NONE},
    {"sync-mode", K_STR, RUN, IF_SET, NULL, NONE},
    {"replicas-to-aggregate", K_INT, RUN, IF_SET, NULL, I(1, 65536)},
    {"total-replicas", K_INT, RUN, IF_SET, NULL, I(1, 65536)},
    {"staleness", K_INT, RUN, IF_SET, NULL, I(0, 1 << 30)},
    {"peer-timeout", K_REAL, RUN, IF_SET, NULL, R(0, 1, 86400)},
    {"chunk-size", K_INT, RUN, IF_SET, NULL, I(1, 1LL << 40)},
    {"startup-timeout", K_REAL, RUN, IF_SET, NULL, R(0, 1, 86400)},
    {"task", K_STR, MODEL, IF_SET, NULL, NONE},
    {"schema", K_STR, RUN, IF_SET, NULL, NONE},
    {"label", K_STR, MODEL, IF_SET, NULL, NONE},
    {"features", K_STR, MODEL, IF_SET, NULL, NONE},
    {"allow-missing", K_BOOL, RUN, IF_SET, "false", NONE},
    {"exclude", K_STR, MODEL, IF_SET, NULL, NONE},
    {"validate", K_STR, RUN, IF_SET, NULL, NONE},
    {"checkpoint-dir", K_STR, RUN, IF_SET, NULL, NONE},
    {"stream", K_BOOL, RUN, IF_SET, "false", NONE},
    {"export-base", K_STR, RUN, IF_SET, NULL, NONE},
    {"export-every", K_REAL, RUN, IF_SET, "60", R(0, 1, INFINITY)},
    {"if-better", K_STR, RUN, IF_SET, NULL, NONE},
    {"logdir", K_STR, RUN, IF_SET, NULL, NONE},
    {"quiet", K_BOOL, RUN, IF_SET, "false", NONE},
    {"plugin-dir", K_LIST, RUN, IF_SET, NULL, NONE},
};

#define NDEFS (sizeof defs / sizeof defs[0])

struct value {
	char *text;
	int src;
};

struct list {
	struct value *v;
	size_t n;
};

struct tf_settings {
	struct tfi_handle err;
	struct value given[NDEFS]; /* the flag's, else the config file's */
	struct list items[NDEFS];  /* list settings: every item given */
	struct value value[NDEFS]; /* resolved */
	struct list resolved[NDEFS];
	struct tf_hparams *hparams; /* opt, resolved */
	char *json;                 /* resolved, compact: provenance */
};

struct tf_settings *
tf_settings_new(void)
{
	return calloc(1, sizeof(struct tf_settings));
}

static void
list_free(struct list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].text);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* Forget what a resolution made, so it can run again. */
static void
unresolve(struct tf_settings *s)
{
	for (size_t i = 0; i < NDEFS; i++) {
		free(s->value[i].text);
		s->value[i].text = NULL;
		list_free(&s->resolved[i]);
	}
	tf_hparams_free(s->hparams);
	s->hparams = NULL;
	free(s->json);
	s->json = NULL;
}

void
tf_settings_free(struct tf_settings *s)
{
	if (s == NULL) {
		return;
	}
	unresolve(s);
	for (size_t i = 0; i < NDEFS; i++) {
		free(s->given[i].text);
		list_free(&s->items[i]);
	}
	free(s);
}

static int
find(const char *name)
{
	for (size_t i = 0; i < NDEFS; i++) {
		if (strcmp(defs[i].name, name) == 0) {
			return (int)i;
		}
	}
	return -1;
}

/* ---- values -------------------------------------------------------------- */

static int
parse_int(const char *t, long long *v)
{
	char *end;
	errno = 0;
	*v = strtoll(t, &end, 10);
	return *t != '\0' && *end == '\0' && errno == 0 ? 0 : -1;
}

static int
parse_real(const char *t, double *v)
{
	char *end;
	errno = 0;
	*v = strtod(t, &end);
	return *t != '\0' && *end == '\0' && errno == 0 && isfinite(*v) ? 0
	                                                                : -1;
}

/* Check a value of setting d; the message names the option. */
static int
check(struct tf_settings *s, const struct def *d, const char *t)
{
	long long iv;
	double rv;
	switch (d->kind) {
	case K_INT:
		if (parse_int(t, &iv) != 0 || iv < d->imin || iv > d->imax) {
			return tfi_set_error(s, TF_EINVAL,
			                     "--%s: '%s' is not a whole number "
			                     "from %lld to %lld",
			                     d->name, t, d->imin, d->imax);
		}
		return TF_OK;
	case K_REAL:
		if (parse_real(t, &rv) != 0) {
			return tfi_set_error(s, TF_EINVAL,
			                     "--%s: '%s' is not a number",
			                     d->name, t);
		}
		if (rv < d->rmin || (d->ropen && rv == d->rmin) ||
		    rv > d->rmax) {
			if (isinf(d->rmax)) {
				return tfi_set_error(
				    s, TF_EINVAL, "--%s must be %s %g", d->name,
				    d->ropen ? "above" : "at least", d->rmin);
			}
			return tfi_set_error(
			    s, TF_EINVAL, "--%s must be in %c%g, %g]", d->name,
			    d->ropen ? '(' : '[', d->rmin, d->rmax);
		}
		return TF_OK;
	case K_BOOL:
		if (strcmp(t, "true") != 0 && strcmp(t, "false") != 0) {
			return tfi_set_error(
			    s, TF_EINVAL, "--%s takes true or false", d->name);
		}
		return TF_OK;
	case K_LIST:
		if (strcmp(d->name, "opt") == 0) {
			struct tf_hparams *h = tf_hparams_new();
			int rc = h ? tf_hparams_parse(h, t) : TF_ENOMEM;
			if (rc != TF_OK) {
				tfi_set_error(s, rc, "--opt: %s",
				              h ? tf_errmsg(h)
				                : "out of memory");
			}
			tf_hparams_free(h);
			return rc;
		}
		return TF_OK;
	case K_STR:
		if (strcmp(d->name, "task") == 0 && tf_task_parse(t) < 0) {
			return tfi_set_error(s, TF_EINVAL,
			                     "--task: '%s' is not binary, "
			                     "multiclass or regression",
			                     t);
		}
		return TF_OK;
	}
	return TF_OK;
}

static int
add_item(struct list *l, const char *t, int src)
{
	struct value *v = realloc(l->v, (l->n + 1) * sizeof *v);
	if (v == NULL) {
		return -1;
	}
	l->v = v;
	if ((v[l->n].text = strdup(t)) == NULL) {
		return -1;
	}
	v[l->n++].src = src;
	return 0;
}

/* Record a value given by a flag or a config file: the flag wins, and a
 * later value of the same source replaces an earlier one. */
static int
give(struct tf_settings *s, int i, const char *t, int src)
{
	int rc = check(s, &defs[i], t);
	if (rc != TF_OK) {
		return rc;
	}
	if (defs[i].kind == K_LIST) {
		return add_item(&s->items[i], t, src)
		           ? tfi_set_error(s, TF_ENOMEM, "out of memory")
		           : TF_OK;
	}
	struct value *g = &s->given[i];
	if (g->text != NULL && g->src > src) {
		return TF_OK;
	}
	char *c = strdup(t);
	if (c == NULL) {
		return tfi_set_error(s, TF_ENOMEM, "out of memory");
	}
	free(g->text);
	g->text = c;
	g->src = src;
	return TF_OK;
}

int
tf_settings_set(struct tf_settings *s, const char *name, const char *value)
{
	int i = find(name);
	if (i < 0) {
		return tfi_set_error(s, TF_EINVAL, "unknown setting '%s'",
		                     name);
	}
	return give(s, i, value, TF_FROM_FLAG);
}

/* A JSON value as a setting's text (NULL for a kind it cannot be). */
static char *
json_text(const json_t *v)
{
	char buf[64];
	if (json_is_string(v)) {
		return strdup(json_string_value(v));
	}
	if (json_is_integer(v)) {
		snprintf(buf, sizeof buf, "%lld",
		         (long long)json_integer_value(v));
	} else if (json_is_real(v)) {
		snprintf(buf, sizeof buf, "%.17g", json_real_value(v));
	} else if (json_is_boolean(v)) {
		snprintf(buf, sizeof buf, "%s",
		         json_is_true(v) ? "true" : "false");
	} else {
		return NULL;
	}
	return strdup(buf);
}

/* One member of a config file. */
static int
load_one(struct tf_settings *s, const char *path, const char *key, json_t *v)
{
	int i = find(key);
	if (i < 0) {
		return tfi_set_error(s, TF_EFORMAT, "%s: unknown setting '%s'",
		                     path, key);
	}
	const struct def *d = &defs[i];
	if (json_is_null(v)) {
		return TF_OK;
	}
	if (d->kind == K_BOOL && !json_is_boolean(v)) {
		return tfi_set_error(s, TF_EFORMAT,
		                     "%s: '%s' takes true or false", path, key);
	}
	if (d->kind == K_LIST && json_is_array(v)) {
		size_t k;
		json_t *item;
		json_array_foreach(v, k, item)
		{
			int rc = load_one(s, path, key, item);
			if (rc != TF_OK) {
				return rc;
			}
		}
		return TF_OK;
	}
	char *t = json_is_array(v) || json_is_object(v) ? NULL : json_text(v);
	if (t == NULL) {
		return tfi_set_error(s, TF_EFORMAT,
		                     "%s: '%s' has a value of the wrong kind",
		                     path, key);
	}
	int rc = give(s, i, t, TF_FROM_CONFIG);
	free(t);
	if (rc == TF_EINVAL) {
		/* A bad value in a file is bad data, named with its file. */
		char msg[TFI_MSG_MAX];
		snprintf(msg, sizeof msg, "%s", tf_errmsg(s));
		tf_errclear(s);
		return tfi_set_error(s, TF_EFORMAT, "%s: %s", path, msg);
	}
	return rc;
}

int
tf_settings_load(struct tf_settings *s, const char *path)
{
	json_error_t je;
	json_t *root = json_load_file(path, 0, &je);
	if (root == NULL) {
		return json_error_code(&je) == json_error_cannot_open_file
		           ? tfi_set_error(s, TF_ENOENT, "%s", je.text)
		           : tfi_set_error(s, TF_EFORMAT, "%s:%d: %s", path,
		                           je.line, je.text);
	}
	int rc = TF_OK;
	if (!json_is_object(root)) {
		rc = tfi_set_error(s, TF_EFORMAT,
		                   "%s: not a JSON object of settings", path);
	}
	const char *key;
	json_t *v;
	json_object_foreach(root, key, v)
	{
		if (rc == TF_OK) {
			rc = load_one(s, path, key, v);
		}
	}
	json_decref(root);
	return rc;
}

/* ---- resolution ---------------------------------------------------------- */

/* The shortest text that reads back as v. */
static void
real_text(double v, char *buf, size_t n)
{
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, n, "%.*g", prec, v);
		if (strtod(buf, NULL) == v) {
			return;
		}
	}
}

/* A checkpoint's value of setting d, as text (the caller frees it), or
 * NULL when it has none.  The header's own fields first; the rest from
 * the settings it recorded. */
static char *
checkpoint_value(const struct def *d, const struct tf_ckpt_header *h,
                 json_t *config)
{
	char buf[64];
	const char *n = d->name;
	if (strcmp(n, "optimizer") == 0) {
		return strdup(h->optimizer);
	}
	if (strcmp(n, "learning-rate") == 0 && h->learning_rate > 0) {
		real_text(h->learning_rate, buf, sizeof buf);
		return strdup(buf);
	}
	if (strcmp(n, "seed") == 0) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)h->seed);
		return strdup(buf);
	}
	if (strcmp(n, "task") == 0 && h->task != NULL && h->task[0]) {
		return strdup(h->task);
	}
	if (strcmp(n, "no-normalize") == 0) {
		return strdup(h->normalize ? "false" : "true");
	}
	if (strcmp(n, "crosses") == 0 && h->crosses != NULL) {
		return strdup(h->crosses);
	}
	if (strcmp(n, "hash-buckets") == 0 && h->crosses != NULL) {
		snprintf(buf, sizeof buf, "%lld", (long long)h->buckets);
		return strdup(buf);
	}
	json_t *v = json_object_get(config, n);
	return v != NULL && !json_is_null(v) && !json_is_array(v) ? json_text(v)
	                                                          : NULL;
}

/* A value in a form where equal settings compare equal ("16,8" and
 * "16 8" are the same layers; 1e-3 and 0.001 the same number). */
static void
canonical(const struct def *d, const char *t, char *buf, size_t n)
{
	long long iv;
	double rv;
	if (d->kind == K_INT && parse_int(t, &iv) == 0) {
		snprintf(buf, n, "%lld", iv);
	} else if (d->kind == K_REAL && parse_real(t, &rv) == 0) {
		snprintf(buf, n, "%.17g", rv);
	} else if (strcmp(d->name, "hidden") == 0 ||
	           strcmp(d->name, "conv") == 0) {
		size_t k = 0;
		for (const char *p = t; *p && k + 2 < n; p++) {
			int sep = *p == ',' || *p == ' ';
			if (!sep) {
				buf[k++] = *p;
			} else if (k > 0 && buf[k - 1] != ' ') {
				buf[k++] = ' ';
			}
		}
		while (k > 0 && buf[k - 1] == ' ') {
			k--;
		}
		buf[k] = '\0';
	} else {
		snprintf(buf, n, "%s", t);
	}
}

/* What the checkpoint fixes must not change under it. */
static int
conflict(struct tf_settings *s, const struct def *d, const char *given,
         const char *saved, const char *ckpt)
{
	char a[256], b[256];
	canonical(d, given, a, sizeof a);
	canonical(d, saved, b, sizeof b);
	if (strcmp(a, b) == 0) {
		return TF_OK;
	}
	/* a flag that is off unless given: with or without it */
	if (d->kind == K_BOOL && strcmp(d->dflt, "false") == 0) {
		return tfi_set_error(
		    s, TF_EINVAL,
		    "%s was trained %s --%s (use "
		    "--from-scratch to start over)",
		    ckpt, strcmp(saved, "true") == 0 ? "with" : "without",
		    d->name);
	}
	return tfi_set_error(s, TF_EINVAL,
	                     "%s was trained with --%s %s, not %s (use "
	                     "--from-scratch to start over)",
	                     ckpt, d->name, saved, given);
}

/* Take what a resumed run inherits from the latest checkpoint. */
static int
from_checkpoint(struct tf_settings *s, const char *dir)
{
	char path[4096];
	if (tf_ckpt_latest(dir, path, sizeof path) != TF_OK) {
		return TF_OK; /* a first run */
	}
	struct tf_ckpt *ck = tf_ckpt_new();
	struct tf_ckpt_header h;
	tf_ckpt_header_init(&h);
	if (ck == NULL) {
		return tfi_set_error(s, TF_ENOMEM, "out of memory");
	}
	int rc = tf_ckpt_load_header(ck, path);
	if (rc == TF_OK) {
		rc = tf_ckpt_get_header(ck, &h);
	}
	const char *dm = s->value[find("if-damaged")].text;
	char prev[4096];
	if (rc != TF_OK && dm != NULL && strcmp(dm, "previous") == 0 &&
	    tf_ckpt_previous(dir, prev, sizeof prev) == TF_OK) {
		/* the run resumes from the one before (train.c sets the
		 * damaged one aside and says so) */
		rc = tf_ckpt_load_header(ck, prev);
		rc = rc ? rc : tf_ckpt_get_header(ck, &h);
		snprintf(path, sizeof path, "%s", prev);
	}
	if (rc != TF_OK) {
		rc = tfi_ckpt_damaged(s, rc, dir, tf_errmsg(ck));
		tf_ckpt_free(ck);
		return rc;
	}
	json_t *config = h.config ? json_loads(h.config, 0, NULL) : NULL;
	for (size_t i = 0; rc == TF_OK && i < NDEFS; i++) {
		const struct def *d = &defs[i];
		if (d->scope == RUN || d->kind == K_LIST) {
			continue;
		}
		char *saved = checkpoint_value(d, &h, config);
		struct value *v = &s->value[i];
		if (saved == NULL) {
			continue;
		}
		if (v->text != NULL) {
			rc = d->scope == MODEL
			         ? conflict(s, d, v->text, saved, path)
			         : TF_OK;
			free(saved);
		} else {
			v->text = saved;
			v->src = TF_FROM_CHECKPOINT;
		}
	}
	/* The optimizer's settings: the checkpoint's, then those given. */
	double hv;
	for (size_t i = 0; rc == TF_OK && i < tf_hparams_count(h.hparams);
	     i++) {
		const char *key = tf_hparams_get(h.hparams, i, &hv);
		if (tf_hparams_set(s->hparams, key, hv) != TF_OK) {
			rc = tfi_set_error(s, TF_ENOMEM, "out of memory");
		}
	}
	json_decref(config);
	tf_ckpt_header_release(&h);
	tf_ckpt_free(ck);
	return rc;
}

/* The resolved list of setting i: plugin directories given by flags
 * first (searched first), opt items in the order they apply. */
static int
resolve_list(struct tf_settings *s, int i)
{
	const struct list *in = &s->items[i];
	struct list *out = &s->resolved[i];
	int dirs = strcmp(defs[i].name, "plugin-dir") == 0;
	for (int pass = 0; pass < 2; pass++) {
		int src = (pass == 0) == dirs ? TF_FROM_FLAG : TF_FROM_CONFIG;
		for (size_t k = 0; k < in->n; k++) {
			if (in->v[k].src == src &&
			    add_item(out, in->v[k].text, src)) {
				return tfi_set_error(s, TF_ENOMEM,
				                     "out of memory");
			}
		}
	}
	return TF_OK;
}

static int
is_true(const struct tf_settings *s, const char *name)
{
	const char *t = tf_settings_get(s, name);
	return t != NULL && strcmp(t, "true") == 0;
}

static json_t *
json_of(const struct tf_settings *s)
{
	json_t *o = json_object();
	int wide = strcmp(tf_settings_get(s, "model"), "wide_and_deep") == 0;
	int cnn = strcmp(tf_settings_get(s, "model"), "cnn") == 0;
	int rnn = tfi_model_recurrent(tf_settings_get(s, "model"));
	int gru = strcmp(tf_settings_get(s, "model"), "gru") == 0;
	int custom = strcmp(tf_settings_get(s, "model"), "custom") == 0;
	for (size_t i = 0; o != NULL && i < NDEFS; i++) {
		const struct def *d = &defs[i];
		const char *t = s->value[i].text;
		if ((d->show == WIDE && !wide) || (d->show == CONV && !cnn) ||
		    (d->show == RNN && !rnn) || (d->show == GRU && !gru) ||
		    (d->show == SHAPED && !cnn && !rnn) ||
		    (d->show == LAYERS && custom) ||
		    (d->show == IF_SET && d->kind != K_LIST &&
		     (t == NULL || strcmp(t, "false") == 0)) ||
		    (d->show == IF_SET && d->kind == K_LIST &&
		     s->resolved[i].n == 0)) {
			continue;
		}
		json_t *v = NULL;
		if (d->kind == K_LIST && strcmp(d->name, "opt") == 0) {
			/* The optimizer's settings as they apply. */
			v = json_array();
			double hv;
			for (size_t k = 0; k < tf_hparams_count(s->hparams);
			     k++) {
				const char *key =
				    tf_hparams_get(s->hparams, k, &hv);
				char num[64], item[128];
				real_text(hv, num, sizeof num);
				snprintf(item, sizeof item, "%s=%s", key, num);
				json_array_append_new(v, json_string(item));
			}
		} else if (d->kind == K_LIST) {
			v = json_array();
			for (size_t k = 0; k < s->resolved[i].n; k++) {
				json_array_append_new(
				    v, json_string(s->resolved[i].v[k].text));
			}
		} else if (t == NULL) {
			continue;
		} else if (d->kind == K_INT) {
			v = json_integer((json_int_t)strtoll(t, NULL, 10));
		} else if (d->kind == K_REAL) {
			v = json_real(strtod(t, NULL));
		} else if (d->kind == K_BOOL) {
			v = json_boolean(strcmp(t, "true") == 0);
		} else {
			v = json_string(t);
		}
		json_object_set_new(o, d->name, v);
	}
	return o;
}

/* --model-file SPEC is --model custom, whose layers the spec says. */
static int
model_file(struct tf_settings *s)
{
	struct value *f = &s->value[find("model-file")];
	struct value *m = &s->value[find("model")];
	if (f->text == NULL) {
		return m->text != NULL && strcmp(m->text, "custom") == 0
		           ? tfi_set_error(s, TF_EINVAL,
		                           "--model custom needs --model-file "
		                           "SPEC")
		           : TF_OK;
	}
	if (m->text != NULL && strcmp(m->text, "custom") != 0) {
		return tfi_set_error(s, TF_EINVAL,
		                     "--model-file is a model of its own: it "
		                     "goes without --model %s",
		                     m->text);
	}
	for (size_t i = 0; i < NDEFS; i++) {
		if ((defs[i].show == LAYERS || defs[i].show == CONV ||
		     defs[i].show == RNN || defs[i].show == GRU ||
		     defs[i].show == SHAPED) &&
		    s->value[i].text != NULL) {
			return tfi_set_error(
			    s, TF_EINVAL,
			    "--%s does not go with --model-file "
			    "(the spec says the layers)",
			    defs[i].name);
		}
	}
	if (m->text == NULL && (m->text = strdup("custom")) == NULL) {
		return tfi_set_error(s, TF_ENOMEM, "out of memory");
	}
	m->src = f->src;
	return TF_OK;
}

int
tf_settings_resolve(struct tf_settings *s)
{
	unresolve(s);
	s->hparams = tf_hparams_new();
	if (s->hparams == NULL) {
		return tfi_set_error(s, TF_ENOMEM, "out of memory");
	}
	int rc = TF_OK;
	for (size_t i = 0; i < NDEFS && rc == TF_OK; i++) {
		if (s->given[i].text != NULL) {
			s->value[i].text = strdup(s->given[i].text);
			s->value[i].src = s->given[i].src;
			if (s->value[i].text == NULL) {
				rc = tfi_set_error(s, TF_ENOMEM,
				                   "out of memory");
			}
		}
		if (rc == TF_OK && defs[i].kind == K_LIST) {
			rc = resolve_list(s, (int)i);
		}
	}
	if (rc == TF_OK) {
		rc = model_file(s);
	}
	/* A cnn's or recurrent model's settings with another model said:
	 * a mistake to say. */
	const char *model = s->value[find("model")].text;
	int known = model != NULL && strcmp(model, "custom") != 0;
	int cnn = known && strcmp(model, "cnn") == 0;
	int rnn = known && tfi_model_recurrent(model);
	int gru = known && strcmp(model, "gru") == 0;
	for (size_t i = 0; rc == TF_OK && known && i < NDEFS; i++) {
		const char *with = defs[i].show == CONV && !cnn ? "cnn"
		                   : defs[i].show == RNN && !rnn
		                       ? "lstm, bidirectional_lstm or gru"
		                   : defs[i].show == GRU && !gru ? "gru"
		                   : defs[i].show == SHAPED && !cnn && !rnn
		                       ? "cnn, lstm, bidirectional_lstm or gru"
		                       : NULL;
		if (with != NULL && s->value[i].text != NULL) {
			rc = tfi_set_error(s, TF_EINVAL,
			                   "--%s goes with --model %s, not %s",
			                   defs[i].name, with, model);
		}
	}
	const char *sm = s->value[find("sync-mode")].text;
	if (rc == TF_OK && sm != NULL && strcmp(sm, "sync") != 0 &&
	    strcmp(sm, "async") != 0) {
		rc = tfi_set_error(
		    s, TF_EINVAL, "--sync-mode: '%s' is neither sync nor async",
		    sm);
	}
	const char *dm = s->value[find("if-damaged")].text;
	if (rc == TF_OK && dm != NULL && strcmp(dm, "stop") != 0 &&
	    strcmp(dm, "previous") != 0) {
		rc = tfi_set_error(
		    s, TF_EINVAL,
		    "--if-damaged: '%s' is neither stop nor previous", dm);
	}
	const char *dir = s->value[find("checkpoint-dir")].text;
	if (rc == TF_OK && dir != NULL && !is_true(s, "from-scratch")) {
		rc = from_checkpoint(s, dir);
	}
	for (size_t i = 0; i < NDEFS && rc == TF_OK; i++) {
		if (s->value[i].text == NULL && defs[i].dflt != NULL) {
			s->value[i].text = strdup(defs[i].dflt);
			s->value[i].src = TF_FROM_DEFAULT;
			if (s->value[i].text == NULL) {
				rc = tfi_set_error(s, TF_ENOMEM,
				                   "out of memory");
			}
		}
	}
	/* --opt given: config first, flags last, so flags win per key. */
	const struct list *opt = &s->resolved[find("opt")];
	for (size_t k = 0; k < opt->n && rc == TF_OK; k++) {
		rc = tf_hparams_parse(s->hparams, opt->v[k].text);
	}
	if (rc == TF_OK && strcmp(tf_settings_get(s, "epochs"), "0") == 0 &&
	    tf_settings_get(s, "max-steps") == NULL) {
		rc =
		    tfi_set_error(s, TF_EINVAL, "--epochs 0 needs --max-steps");
	}
	if (rc == TF_OK) {
		json_t *o = json_of(s);
		s->json = o ? json_dumps(o, JSON_COMPACT) : NULL;
		json_decref(o);
		if (s->json == NULL) {
			rc = tfi_set_error(s, TF_ENOMEM, "out of memory");
		}
	}
	return rc;
}

const char *
tf_settings_get(const struct tf_settings *s, const char *name)
{
	int i = find(name);
	return i >= 0 ? s->value[i].text : NULL;
}

int
tf_settings_source(const struct tf_settings *s, const char *name)
{
	int i = find(name);
	if (i < 0) {
		return TF_FROM_DEFAULT;
	}
	int src = s->value[i].src;
	for (size_t k = 0; k < s->resolved[i].n; k++) {
		src = s->resolved[i].v[k].src > src ? s->resolved[i].v[k].src
		                                    : src;
	}
	return src;
}

const char *
tf_settings_item(const struct tf_settings *s, const char *name, size_t i)
{
	int d = find(name);
	return d >= 0 && i < s->resolved[d].n ? s->resolved[d].v[i].text : NULL;
}

char *
tf_settings_json(const struct tf_settings *s, int pretty)
{
	if (!pretty) {
		return s->json ? strdup(s->json) : NULL;
	}
	json_t *o = json_of(s);
	char *text = o ? json_dumps(o, JSON_INDENT(2)) : NULL;
	json_decref(o);
	return text;
}

/* ---- into a training config ---------------------------------------------- */

/* The text of setting i: resolved, or (s NULL) the default. */
static const char *
text(const struct tf_settings *s, const char *name)
{
	int i = find(name);
	return s != NULL ? s->value[i].text : defs[i].dflt;
}

static long long
num(const struct tf_settings *s, const char *name)
{
	const char *t = text(s, name);
	return t != NULL ? strtoll(t, NULL, 10) : 0;
}

static double
real(const struct tf_settings *s, const char *name)
{
	const char *t = text(s, name);
	return t != NULL ? strtod(t, NULL) : 0;
}

static int
flag(const struct tf_settings *s, const char *name)
{
	const char *t = text(s, name);
	return t != NULL && strcmp(t, "true") == 0;
}

static void
fill(const struct tf_settings *s, struct tf_train_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->model = text(s, "model");
	cfg->model_file = text(s, "model-file");
	cfg->hidden = text(s, "hidden");
	cfg->input_shape = text(s, "input-shape");
	cfg->conv = text(s, "conv");
	cfg->rnn_units = num(s, "rnn-units");
	cfg->gru_reset_after = flag(s, "gru-reset-after");
	cfg->max_length = num(s, "max-length");
	cfg->enable_bn = flag(s, "enable-bn");
	cfg->image_size = text(s, "image-size");
	cfg->image_channels = (int)num(s, "image-channels");
	cfg->image_scale = text(s, "image-scale");
	cfg->random_flip = flag(s, "random-flip");
	cfg->random_crop = (int)num(s, "random-crop");
	cfg->bn_epsilon = real(s, "bn-epsilon");
	cfg->keep_prob = real(s, "dropout-keep-prob");
	cfg->crosses = text(s, "crosses");
	cfg->hash_buckets = num(s, "hash-buckets");
	cfg->sparse = flag(s, "sparse");
	cfg->oov_buckets = num(s, "oov-buckets");
	int hb = find("hash-buckets");
	cfg->sparse_buckets = s != NULL && s->value[hb].src != TF_FROM_DEFAULT
	                          ? cfg->hash_buckets
	                          : 0;
	cfg->embedding_dim = num(s, "embedding-dim");
	cfg->optimizer = text(s, "optimizer");
	cfg->learning_rate = real(s, "learning-rate");
	cfg->batch_size = (size_t)num(s, "batch-size");
	cfg->epochs = (uint64_t)num(s, "epochs");
	cfg->max_steps = (uint64_t)num(s, "max-steps");
	cfg->shuffle_buffer = (size_t)num(s, "shuffle-buffer");
	cfg->seed = (uint64_t)num(s, "seed");
	cfg->normalize = !flag(s, "no-normalize");
	cfg->lr_decay_rate = real(s, "lr-decay-rate");
	cfg->lr_decay_steps = (uint64_t)num(s, "lr-decay-steps");
	cfg->lr_staircase = flag(s, "lr-staircase");
	cfg->l1 = real(s, "l1");
	cfg->l2 = real(s, "l2");
	cfg->steps_to_validate = (uint64_t)num(s, "steps-to-validate");
	cfg->save_every = (uint64_t)num(s, "save-every");
	cfg->save_every_secs = real(s, "save-every-secs");
	cfg->keep = (int)num(s, "keep");
	cfg->from_scratch = flag(s, "from-scratch");
	const char *dm = text(s, "if-damaged");
	cfg->take_previous = dm != NULL && strcmp(dm, "previous") == 0;
	cfg->threads = (int)num(s, "threads");
	cfg->device = text(s, "device");
	cfg->gpu_math = text(s, "gpu-math");
	cfg->task = text(s, "task");
	cfg->schema = text(s, "schema");
	cfg->label = text(s, "label");
	cfg->features = text(s, "features");
	cfg->allow_missing = flag(s, "allow-missing");
	cfg->exclude = text(s, "exclude");
	cfg->validate = text(s, "validate");
	cfg->checkpoint_dir = text(s, "checkpoint-dir");
	cfg->logdir = text(s, "logdir");
	cfg->stream = flag(s, "stream");
	cfg->publish_every =
	    text(s, "export-base") != NULL ? real(s, "export-every") : 0;
	const char *sm = text(s, "sync-mode");
	cfg->sync = sm == NULL || strcmp(sm, "async") != 0;
	cfg->replicas_to_aggregate = (unsigned)num(s, "replicas-to-aggregate");
	cfg->total_replicas = (unsigned)num(s, "total-replicas");
	cfg->staleness =
	    text(s, "staleness") ? (unsigned)num(s, "staleness") : 16;
	cfg->peer_timeout =
	    text(s, "peer-timeout") ? real(s, "peer-timeout") : 60;
	cfg->startup_timeout =
	    text(s, "startup-timeout") ? real(s, "startup-timeout") : 300;
	cfg->chunk_size =
	    text(s, "chunk-size") ? (uint64_t)num(s, "chunk-size") : 0;
}

void
tf_train_config_init(struct tf_train_config *cfg)
{
	fill(NULL, cfg);
	/* Unset, so that a resume takes the checkpoint's. */
	cfg->optimizer = NULL;
	cfg->learning_rate = 0;
}

const char *
tfi_settings_default(const char *name)
{
	int i = find(name);
	return i >= 0 ? defs[i].dflt : NULL;
}

int
tf_settings_config(struct tf_settings *s, struct tf_train_config *cfg)
{
	if (s->json == NULL) {
		return tfi_set_error(s, TF_EINVAL, "settings not resolved");
	}
	fill(s, cfg);
	cfg->hparams = s->hparams;
	cfg->settings = s->json;
	return TF_OK;
}
