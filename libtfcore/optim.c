/*
 * optim.c - hyperparameters, optimizer instances over a parameter block,
 * and the exponential learning-rate decay.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tf/optim.h"

struct hp {
	char key[40];
	double v;
};

struct tf_hparams {
	struct tfi_handle err;
	struct hp *v;
	size_t n;
};

struct tf_hparams *
tf_hparams_new(void)
{
	return calloc(1, sizeof(struct tf_hparams));
}

void
tf_hparams_free(struct tf_hparams *h)
{
	if (h != NULL) {
		free(h->v);
		free(h);
	}
}

int
tf_hparams_set(struct tf_hparams *h, const char *key, double v)
{
	if (strlen(key) == 0 || strlen(key) >= sizeof h->v[0].key) {
		return tfi_set_error(h, TF_EINVAL,
		                     "bad hyperparameter name "
		                     "'%s'",
		                     key);
	}
	for (size_t i = 0; i < h->n; i++) {
		if (strcmp(h->v[i].key, key) == 0) {
			h->v[i].v = v;
			return TF_OK;
		}
	}
	struct hp *p = realloc(h->v, (h->n + 1) * sizeof *p);
	if (p == NULL) {
		return tfi_set_error(h, TF_ENOMEM, "out of memory");
	}
	h->v = p;
	snprintf(p[h->n].key, sizeof p[h->n].key, "%s", key);
	p[h->n++].v = v;
	return TF_OK;
}

int
tf_hparams_parse(struct tf_hparams *h, const char *kv)
{
	const char *eq = strchr(kv, '=');
	char key[40];
	if (eq == NULL || eq == kv || (size_t)(eq - kv) >= sizeof key) {
		return tfi_set_error(h, TF_EINVAL,
		                     "expected KEY=VALUE, got "
		                     "'%s'",
		                     kv);
	}
	memcpy(key, kv, (size_t)(eq - kv));
	key[eq - kv] = '\0';
	char *end;
	double v = strtod(eq + 1, &end);
	if (eq[1] == '\0' || *end != '\0' || !isfinite(v)) {
		return tfi_set_error(h, TF_EINVAL, "%s: '%s' is not a number",
		                     key, eq + 1);
	}
	return tf_hparams_set(h, key, v);
}

size_t
tf_hparams_count(const struct tf_hparams *h)
{
	return h != NULL ? h->n : 0;
}

const char *
tf_hparams_get(const struct tf_hparams *h, size_t i, double *v)
{
	if (h == NULL || i >= h->n) {
		return NULL;
	}
	*v = h->v[i].v;
	return h->v[i].key;
}

struct tf_hparams *
tf_hparams_copy(const struct tf_hparams *h)
{
	struct tf_hparams *c = tf_hparams_new();
	for (size_t i = 0; c != NULL && i < tf_hparams_count(h); i++) {
		if (tf_hparams_set(c, h->v[i].key, h->v[i].v) != TF_OK) {
			tf_hparams_free(c);
			return NULL;
		}
	}
	return c;
}

int
tf_hparams_check(struct tf_hparams *h, const char *optimizer,
                 const char *const *keys)
{
	for (size_t i = 0; keys != NULL && i < h->n; i++) {
		size_t k = 0;
		while (keys[k] != NULL && strcmp(keys[k], h->v[i].key) != 0) {
			k++;
		}
		if (keys[k] != NULL) {
			continue;
		}
		/* Unknown: say which keys the optimizer does take. */
		char known[256] = "";
		size_t len = 0;
		for (k = 0; keys[k] != NULL && len < sizeof known; k++) {
			int w = snprintf(known + len, sizeof known - len,
			                 "%s%s", k ? ", " : "", keys[k]);
			len += w > 0 ? (size_t)w : 0;
		}
		return tfi_set_error(h, TF_EINVAL,
		                     "--opt %s: optimizer '%s' takes %s%s",
		                     h->v[i].key, optimizer,
		                     keys[0] ? "" : "no settings", known);
	}
	return TF_OK;
}

double
tf_hparam(const struct tf_hparams *h, const char *key, double dflt)
{
	for (size_t i = 0; h != NULL && i < h->n; i++) {
		if (strcmp(h->v[i].key, key) == 0) {
			return h->v[i].v;
		}
	}
	return dflt;
}

struct tf_optim {
	struct tfi_handle err;
	const struct tf_optimizer *opt;
	void *state;
	float *slots[8];
	float *host[8]; /* on a device: the host's copies of the slots */
	unsigned nslots;
	size_t n;
	uint64_t steps;
	struct tf_device *dev; /* where the slots live */
	tf_update_fn update;   /* the plugin's fused update, or NULL */
	float *pack;           /* row-sparse steps' packed rows (pack_rows()) */
	size_t pack_cap;
};

struct tf_optim *
tf_optim_new(void)
{
	struct tf_optim *o = calloc(1, sizeof(struct tf_optim));
	if (o != NULL) {
		o->dev = tf_device_cpu();
	}
	return o;
}

static void
optim_release(struct tf_optim *o)
{
	if (o->opt != NULL && o->opt->destroy != NULL && o->state != NULL) {
		o->opt->destroy(o->state);
	}
	for (unsigned i = 0; i < o->nslots; i++) {
		tf_device_free(o->dev, o->slots[i]);
		o->slots[i] = NULL;
		free(o->host[i]);
		o->host[i] = NULL;
	}
	free(o->pack);
	o->pack = NULL;
	o->pack_cap = 0;
	o->state = NULL;
	o->opt = NULL;
	o->nslots = 0;
}

void
tf_optim_free(struct tf_optim *o)
{
	if (o != NULL) {
		optim_release(o);
		free(o);
	}
}

int
tf_optim_place(struct tf_optim *o, struct tf_device *d, tf_update_fn update)
{
	if (o->opt != NULL) {
		return tfi_set_error(o, TF_EINVAL,
		                     "optimizer already set up: place it "
		                     "first");
	}
	o->dev = d ? d : tf_device_cpu();
	o->update = update;
	return TF_OK;
}

int
tf_optim_init(struct tf_optim *o, const struct tf_optimizer *opt,
              const struct tf_hparams *h, size_t n)
{
	optim_release(o);
	if (opt->nslots > sizeof o->slots / sizeof o->slots[0]) {
		return tfi_set_error(o, TF_EINVAL,
		                     "optimizer '%s': %u slots, at most %zu",
		                     opt->name, opt->nslots,
		                     sizeof o->slots / sizeof o->slots[0]);
	}
	char msg[256] = "";
	void *state = NULL;
	if (opt->create != NULL && opt->create(h, &state, msg, sizeof msg)) {
		if (state != NULL && opt->destroy != NULL) {
			opt->destroy(state);
		}
		return tfi_set_error(o, TF_EINVAL, "optimizer '%s': %s",
		                     opt->name, msg[0] ? msg : "bad settings");
	}
	o->state = state;
	o->opt = opt;
	for (unsigned i = 0; i < opt->nslots; i++) {
		o->slots[i] = tf_device_alloc(o->dev, n + 1);
		o->nslots = i + 1;
		if (o->slots[i] == NULL) {
			return tfi_set_error(o, TF_ENOMEM, "out of memory");
		}
	}
	o->n = n;
	o->steps = 0;
	if (opt->init_slots != NULL) {
		/* on the host: the slots themselves, or a device's copies */
		float *const *hs = tfi_optim_host_slots(o, 0);
		if (hs == NULL) {
			return TF_ENOMEM;
		}
		opt->init_slots(o->state, hs, n);
		return tfi_optim_commit_slots(o);
	}
	return TF_OK;
}

int
tf_optim_step(struct tf_optim *o, float *w, const float *g, float lr)
{
	if (o->opt == NULL) {
		return tfi_set_error(o, TF_EINVAL, "optimizer not set up");
	}
	o->steps++;
	struct tf_device *d = o->dev;
	struct tf_update u;
	char msg[300];
	if (o->update != NULL && o->update(o->state, o->steps, lr, &u) == 0) {
		tf_update(d, &u, w, g, o->slots, o->n);
	} else if (tf_device_kind(d) == TF_DEVICE_CPU) {
		/* the plugin's own loop */
		o->opt->apply(o->state, w, g, o->slots, o->n, o->steps, lr);
	} else {
		/* ... on the host, over copies of a device's memory (out
		 * of the host's reach), which go back up */
		tfi_device_fallback(d, o->opt->name);
		size_t bytes = o->n * sizeof(float);
		float *hw = malloc(bytes + 4), *hg = malloc(bytes + 4);
		float *const *hs = tfi_optim_host_slots(o, 1);
		if (hw == NULL || hg == NULL || hs == NULL) {
			free(hw);
			free(hg);
			return tfi_set_error(o, TF_ENOMEM, "out of memory");
		}
		tf_device_download(d, hw, w, bytes);
		tf_device_download(d, hg, g, bytes);
		o->opt->apply(o->state, hw, hg, hs, o->n, o->steps, lr);
		tf_device_upload(d, w, hw, bytes);
		int rc = tfi_optim_commit_slots(o);
		free(hw);
		free(hg);
		if (rc != TF_OK) {
			return rc;
		}
	}
	if (tf_device_sync(d, msg, sizeof msg) != TF_OK) {
		return tfi_set_error(o, TF_EINTERNAL, "%s", msg);
	}
	return TF_OK;
}

int
tfi_optim_row_exact(const struct tf_optim *o, int lr_decays, int tables_zero)
{
	struct tf_update u;
	if (o->opt == NULL || o->update == NULL ||
	    o->update(o->state, o->steps + 1, 0.01f, &u) != 0) {
		return 0;
	}
	return u.kind == TF_UPDATE_SGD || u.kind == TF_UPDATE_ADAGRAD ||
	       (u.kind == TF_UPDATE_ADAM && u.flag) ||
	       (u.kind == TF_UPDATE_FTRL && !lr_decays && tables_zero);
}

#define PACK_MAX   256
#define PACK_AHEAD 16

/* The ranges shorter than PACK_MAX (packed floats in all) through one
 * update on the CPU: gathered (their gradient zeroed), updated, put
 * back. */
static int
pack_rows(struct tf_optim *o, const struct tf_update *u, float *w, float *g,
          const struct tfi_ranges *r, size_t packed)
{
	unsigned ns = o->nslots;
	if (packed > o->pack_cap) {
		float *p = realloc(o->pack, packed * (ns + 2) * sizeof *p);
		if (p == NULL) {
			return tfi_set_error(o, TF_ENOMEM, "out of memory");
		}
		o->pack = p;
		o->pack_cap = packed;
	}
	float *pw = o->pack, *pg = pw + packed, *ps[8];
	for (unsigned k = 0; k < ns; k++) {
		ps[k] = pg + (k + 1) * packed;
	}
	size_t at = 0;
	for (size_t i = 0; i < r->n; i += 2) {
		uint64_t from = r->v[i], len = r->v[i + 1];
		/* The rows are scattered over the tables: their values
		 * and slots asked for some ranges ahead. */
		if (i + 2 * PACK_AHEAD < r->n) {
			uint64_t ahead = r->v[i + 2 * PACK_AHEAD];
			__builtin_prefetch(&w[ahead]);
			__builtin_prefetch(&g[ahead], 1);
			for (unsigned k = 0; k < ns; k++) {
				__builtin_prefetch(&o->slots[k][ahead]);
			}
		}
		for (uint64_t j = 0; len < PACK_MAX && j < len; j++) {
			pw[at + j] = w[from + j];
			pg[at + j] = g[from + j];
			g[from + j] = 0.0f; /* taken */
			for (unsigned k = 0; k < ns; k++) {
				ps[k][at + j] = o->slots[k][from + j];
			}
		}
		at += len < PACK_MAX ? len : 0;
	}
	tf_update(o->dev, u, pw, pg, ps, packed);
	at = 0;
	for (size_t i = 0; i < r->n; i += 2) {
		uint64_t to = r->v[i], len = r->v[i + 1];
		for (uint64_t j = 0; len < PACK_MAX && j < len; j++) {
			w[to + j] = pw[at + j];
			for (unsigned k = 0; k < ns; k++) {
				o->slots[k][to + j] = ps[k][at + j];
			}
		}
		at += len < PACK_MAX ? len : 0;
	}
	return TF_OK;
}

int
tfi_optim_next_update(struct tf_optim *o, float lr, struct tf_update *u)
{
	if (o->opt == NULL || o->update == NULL ||
	    o->update(o->state, o->steps + 1, lr, u) != 0) {
		return tfi_set_error(o, TF_EINVAL,
		                     "optimizer not set up for row-sparse "
		                     "steps");
	}
	o->steps++;
	return TF_OK;
}

int
tfi_optim_step_ranges(struct tf_optim *o, float *w, float *g, float lr,
                      const struct tfi_ranges *r)
{
	struct tf_update u;
	if (tfi_optim_next_update(o, lr, &u) != TF_OK) {
		return TF_EINVAL;
	}
	float *slots[8];
	/* On the CPU, short ranges (an embedding's rows) are packed into one
	 * update, not one call each. */
	int pack = tf_device_kind(o->dev) == TF_DEVICE_CPU;
	size_t packed = 0;
	for (size_t i = 0; i < r->n; i += 2) {
		uint64_t at = r->v[i], len = r->v[i + 1];
		if (pack && len < PACK_MAX) {
			packed += len;
			continue;
		}
		for (unsigned k = 0; k < o->nslots; k++) {
			slots[k] = o->slots[k] + at;
		}
		tf_update(o->dev, &u, w + at, g + at, slots, len);
		tf_zero(o->dev, g + at, len);
	}
	if (packed > 0 && pack_rows(o, &u, w, g, r, packed) != TF_OK) {
		return TF_ENOMEM;
	}
	char msg[300];
	if (tf_device_sync(o->dev, msg, sizeof msg) != TF_OK) {
		return tfi_set_error(o, TF_EINTERNAL, "%s", msg);
	}
	return TF_OK;
}

uint64_t
tf_optim_steps(const struct tf_optim *o)
{
	return o->steps;
}

void
tf_optim_set_steps(struct tf_optim *o, uint64_t steps)
{
	o->steps = steps;
}

unsigned
tf_optim_nslots(const struct tf_optim *o)
{
	return o->nslots;
}

float *
tf_optim_slot(struct tf_optim *o, unsigned i)
{
	return i < o->nslots ? o->slots[i] : NULL;
}

float *const *
tfi_optim_host_slots(struct tf_optim *o, int fetch)
{
	if (o->dev == NULL || tf_device_kind(o->dev) == TF_DEVICE_CPU) {
		return o->slots;
	}
	for (unsigned i = 0; i < o->nslots; i++) {
		if (tfi_device_mirror(o->dev, &o->host[i], o->slots[i], o->n,
		                      fetch) == NULL) {
			tfi_set_error(o, TF_ENOMEM, "out of memory");
			return NULL;
		}
	}
	return o->host;
}

int
tfi_optim_commit_slots(struct tf_optim *o)
{
	if (o->dev == NULL || tf_device_kind(o->dev) == TF_DEVICE_CPU) {
		return TF_OK;
	}
	for (unsigned i = 0; i < o->nslots; i++) {
		if (o->host[i] != NULL) {
			tf_device_upload(o->dev, o->slots[i], o->host[i],
			                 o->n * sizeof(float));
		}
	}
	char msg[300];
	return tf_device_sync(o->dev, msg, sizeof msg) == TF_OK
	           ? TF_OK
	           : tfi_set_error(o, TF_EINTERNAL, "%s", msg);
}

double
tf_lr_decay(double lr, uint64_t step, double rate, uint64_t decay_steps,
            int staircase)
{
	if (decay_steps == 0) {
		return lr;
	}
	double p = (double)step / (double)decay_steps;
	if (staircase) {
		p = floor(p);
	}
	return lr * pow(rate, p);
}

char *
tfi_hparams_text(const struct tf_hparams *h)
{
	struct tfi_buf b = {0};
	int rc = tfi_json_put(&b, "", 0);
	for (size_t i = 0; rc == 0 && i < tf_hparams_count(h); i++) {
		double v;
		const char *k = tf_hparams_get(h, i, &v);
		char item[160];
		snprintf(item, sizeof item, "%s%s=%.17g", i ? "," : "", k, v);
		rc = tfi_json_put(&b, item, strlen(item));
	}
	if (rc != 0) {
		tfi_buf_free(&b);
		return NULL;
	}
	return (char *)b.data;
}
