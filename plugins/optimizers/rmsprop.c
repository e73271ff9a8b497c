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

/* The update, as the device runs it (kernels/cpu/update.c and its CUDA
 * twin hold the formula). */
static int
describe(const void *state, uint64_t step, float lr, struct tf_update *u)
{
	(void)step;
	const struct st *s = state;
	*u = (struct tf_update){.kind = TF_UPDATE_RMSPROP,
	                        .flag = s->centered,
	                        .lr = lr,
	                        .f0 = s->decay,
	                        .f1 = s->momentum,
	                        .f2 = s->eps};
	return 0;
}

TF_APPLY_BY_UPDATE(apply, describe)

static const struct tf_optimizer optimizers[] = {
    {"rmsprop", "RMSProp (decay=0.9, momentum=0, epsilon=1e-10, centered=0|1)",
     3, create, free, init_slots, apply},
    {0},
};

/* The settings it reads, for --opt checking. */
static const char *const keys[] = {"decay", "momentum", "epsilon", "centered",
                                   NULL};
static const char *const *const optimizer_keys[] = {keys};

static const tf_update_fn updates[] = {describe};

TF_PLUGIN_DEFINE_UPDATES("rmsprop", "1.2", NULL, optimizers, optimizer_keys,
                         updates)
