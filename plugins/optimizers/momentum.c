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

/* The update, as the device runs it (kernels/cpu/update.c and its CUDA
 * twin hold the formula). */
static int
describe(const void *state, uint64_t step, float lr, struct tf_update *u)
{
	(void)step;
	const struct st *s = state;
	*u = (struct tf_update){.kind = TF_UPDATE_MOMENTUM,
	                        .flag = s->nesterov,
	                        .lr = lr,
	                        .f0 = s->momentum};
	return 0;
}

TF_APPLY_BY_UPDATE(apply, describe)

static const struct tf_optimizer optimizers[] = {
    {"momentum", "momentum (momentum=0.9, nesterov=0|1)", 1, create, free, NULL,
     apply},
    {0},
};

/* The settings it reads, for --opt checking. */
static const char *const keys[] = {"momentum", "nesterov", NULL};
static const char *const *const optimizer_keys[] = {keys};

static const tf_update_fn updates[] = {describe};

TF_PLUGIN_DEFINE_UPDATES("momentum", "1.2", NULL, optimizers, optimizer_keys,
                         updates)
