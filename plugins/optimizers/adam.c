/*
 * adam.c - Adam, as tf.compat.v1.train.AdamOptimizer:
 *	lr_t = lr sqrt(1 - beta2^t) / (1 - beta1^t)
 *	m    = beta1 m + (1 - beta1) g
 *	v    = beta2 v + (1 - beta2) g^2
 *	w   -= lr_t m / (sqrt(v) + epsilon)
 * Hyperparameters: beta1 (0.9), beta2 (0.999), epsilon (1e-8).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tf/plugin.h"

struct st {
	double beta1, beta2;
	float eps;
};

static int
create(const struct tf_hparams *h, void **state, char *err, size_t errlen)
{
	struct st *s = malloc(sizeof *s);
	if (s == NULL) {
		snprintf(err, errlen, "out of memory");
		return 1;
	}
	s->beta1 = tf_hparam(h, "beta1", 0.9);
	s->beta2 = tf_hparam(h, "beta2", 0.999);
	s->eps = (float)tf_hparam(h, "epsilon", 1e-8);
	*state = s;
	if (!(s->beta1 >= 0 && s->beta1 < 1) ||
	    !(s->beta2 >= 0 && s->beta2 < 1) || !(s->eps > 0)) {
		snprintf(err, errlen,
		         "needs 0 <= beta1, beta2 < 1 and "
		         "epsilon > 0");
		return 1;
	}
	return 0;
}

static void
apply(void *state, float *w, const float *g, float *const *slots, size_t n,
      uint64_t step, float lr)
{
	const struct st *s = state;
	float *m = slots[0], *v = slots[1];
	float b1 = (float)s->beta1, b2 = (float)s->beta2;
	float lr_t = (float)(lr * sqrt(1 - pow(s->beta2, (double)step)) /
	                     (1 - pow(s->beta1, (double)step)));
	for (size_t i = 0; i < n; i++) {
		m[i] = b1 * m[i] + (1 - b1) * g[i];
		v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
		w[i] -= lr_t * m[i] / (sqrtf(v[i]) + s->eps);
	}
}

static const struct tf_optimizer optimizers[] = {
    {"adam", "Adam (beta1=0.9, beta2=0.999, epsilon=1e-8)", 2, create, free,
     NULL, apply},
    {0},
};

/* The settings it reads, for --opt checking. */
static const char *const keys[] = {"beta1", "beta2", "epsilon", NULL};
static const char *const *const optimizer_keys[] = {keys};

TF_PLUGIN_DEFINE_KEYS("adam", "1.1", NULL, optimizers, optimizer_keys)
