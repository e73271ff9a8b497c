/*
 * momentum.c - momentum, as tf.compat.v1.train.MomentumOptimizer:
 *	a = momentum a + g
 *	w -= lr a                      (or lr (g + momentum a) with nesterov=1)
 * Hyperparameters: momentum (0.9), nesterov (0).
 */
#include <stdio.h>
#include <stdlib.h>

#include "tf/plugin.h"

struct st {
	float momentum;
	int nesterov;
};

static int
create(const struct tf_hparams *h, void **state, char *err, size_t errlen)
{
	struct st *s = malloc(sizeof *s);
	if (s == NULL) {
		snprintf(err, errlen, "out of memory");
		return 1;
	}
	s->momentum = (float)tf_hparam(h, "momentum", 0.9);
	s->nesterov = tf_hparam(h, "nesterov", 0) != 0;
	*state = s;
	if (s->momentum < 0) {
		snprintf(err, errlen, "momentum must be >= 0");
		return 1;
	}
	return 0;
}

static void
apply(void *state, float *w, const float *g, float *const *slots, size_t n,
      uint64_t step, float lr)
{
	(void)step;
	const struct st *s = state;
	float *a = slots[0], m = s->momentum;
	for (size_t i = 0; i < n; i++) {
		a[i] = m * a[i] + g[i];
		w[i] -= s->nesterov ? lr * (g[i] + m * a[i]) : lr * a[i];
	}
}

static const struct tf_optimizer optimizers[] = {
    {"momentum", "momentum (momentum=0.9, nesterov=0|1)", 1, create, free, NULL,
     apply},
    {0},
};

/* The settings it reads, for --opt checking. */
static const char *const keys[] = {"momentum", "nesterov", NULL};
static const char *const *const optimizer_keys[] = {keys};

TF_PLUGIN_DEFINE_KEYS("momentum", "1.1", NULL, optimizers, optimizer_keys)
