/*
 * rmsprop.c - RMSProp, as tf.compat.v1.train.RMSPropOptimizer:
 *	ms  = decay ms + (1 - decay) g^2         (ms starts at 1)
 *	mg  = decay mg + (1 - decay) g           (centered=1 only)
 *	mom = momentum mom + lr g / sqrt(ms - mg^2 + epsilon)
 *	w  -= mom
 * Hyperparameters: decay (0.9), momentum (0), epsilon (1e-10),
 * centered (0).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tf/plugin.h"

struct st {
	float decay, momentum, eps;
	int centered;
};

static int
create(const struct tf_hparams *h, void **state, char *err, size_t errlen)
{
	struct st *s = malloc(sizeof *s);
	if (s == NULL) {
		snprintf(err, errlen, "out of memory");
		return 1;
	}
	s->decay = (float)tf_hparam(h, "decay", 0.9);
	s->momentum = (float)tf_hparam(h, "momentum", 0.0);
	s->eps = (float)tf_hparam(h, "epsilon", 1e-10);
	s->centered = tf_hparam(h, "centered", 0) != 0;
	*state = s;
	if (!(s->decay >= 0 && s->decay < 1) || s->momentum < 0 ||
	    !(s->eps > 0)) {
		snprintf(err, errlen,
		         "needs 0 <= decay < 1, momentum >= 0 "
		         "and epsilon > 0");
		return 1;
	}
	return 0;
}

static void
init_slots(void *state, float *const *slots, size_t n)
{
	(void)state;
	for (size_t i = 0; i < n; i++) {
		slots[0][i] = 1.0f; /* TensorFlow starts ms at ones */
	}
}

static void
apply(void *state, float *w, const float *g, float *const *slots, size_t n,
      uint64_t step, float lr)
{
	(void)step;
	const struct st *s = state;
	float *ms = slots[0], *mom = slots[1], *mg = slots[2];
	float d = s->decay;
	for (size_t i = 0; i < n; i++) {
		ms[i] = d * ms[i] + (1 - d) * g[i] * g[i];
		float den = ms[i];
		if (s->centered) {
			mg[i] = d * mg[i] + (1 - d) * g[i];
			den -= mg[i] * mg[i];
		}
		mom[i] = s->momentum * mom[i] + lr * g[i] / sqrtf(den + s->eps);
		w[i] -= mom[i];
	}
}

static const struct tf_optimizer optimizers[] = {
    {"rmsprop", "RMSProp (decay=0.9, momentum=0, epsilon=1e-10, centered=0|1)",
     3, create, free, init_slots, apply},
    {0},
};

/* The settings it reads, for --opt checking. */
static const char *const keys[] = {"decay", "momentum", "epsilon", "centered",
                                   NULL};
static const char *const *const optimizer_keys[] = {keys};

TF_PLUGIN_DEFINE_KEYS("rmsprop", "1.1", NULL, optimizers, optimizer_keys)
