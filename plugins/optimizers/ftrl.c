/*
 * ftrl.c - FTRL-Proximal, as tf.compat.v1.train.FtrlOptimizer (without
 * l2 shrinkage):
 *	acc'  = acc + g^2
 *	lin  += g - (acc'^-p - acc^-p) / lr w        (p = learning_rate_power)
 *	quad  = acc'^-p / lr + 2 l2
 *	w     = |lin| > l1 ? (sign(lin) l1 - lin) / quad : 0
 *	acc   = acc'
 * Hyperparameters: learning_rate_power (-0.5), initial_accumulator_value
 * (0.1), l1 (0), l2 (0).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tf/plugin.h"

struct st {
	double power;
	float init, l1, l2;
};

static int
create(const struct tf_hparams *h, void **state, char *err, size_t errlen)
{
	struct st *s = malloc(sizeof *s);
	if (s == NULL) {
		snprintf(err, errlen, "out of memory");
		return 1;
	}
	s->power = tf_hparam(h, "learning_rate_power", -0.5);
	s->init = (float)tf_hparam(h, "initial_accumulator_value", 0.1);
	s->l1 = (float)tf_hparam(h, "l1", 0.0);
	s->l2 = (float)tf_hparam(h, "l2", 0.0);
	*state = s;
	if (s->power > 0 || !(s->init > 0) || s->l1 < 0 || s->l2 < 0) {
		snprintf(err, errlen,
		         "needs learning_rate_power <= 0, "
		         "initial_accumulator_value > 0, l1 >= 0 "
		         "and l2 >= 0");
		return 1;
	}
	return 0;
}

static void
init_slots(void *state, float *const *slots, size_t n)
{
	const struct st *s = state;
	for (size_t i = 0; i < n; i++) {
		slots[0][i] = s->init;
	}
}

/* The update, as the device runs it (kernels/cpu/update.c and its CUDA
 * twin hold the formula). */
static int
describe(const void *state, uint64_t step, float lr, struct tf_update *u)
{
	(void)step;
	const struct st *s = state;
	*u = (struct tf_update){.kind = TF_UPDATE_FTRL,
	                        .lr = lr,
	                        .f0 = s->l1,
	                        .f1 = s->l2,
	                        .d0 = s->power};
	return 0;
}

TF_APPLY_BY_UPDATE(apply, describe)

static const struct tf_optimizer optimizers[] = {
    {"ftrl",
     "FTRL-Proximal (learning_rate_power=-0.5, "
     "initial_accumulator_value=0.1, l1=0, l2=0)",
     2, create, free, init_slots, apply},
    {0},
};

/* The settings it reads, for --opt checking. */
static const char *const keys[] = {
    "learning_rate_power", "initial_accumulator_value", "l1", "l2", NULL};
static const char *const *const optimizer_keys[] = {keys};

static const tf_update_fn updates[] = {describe};

TF_PLUGIN_DEFINE_UPDATES("ftrl", "1.2", NULL, optimizers, optimizer_keys,
                         updates)
