/*
 * adagrad.c - Adagrad, as tf.compat.v1.train.AdagradOptimizer:
 *	acc += g^2
 *	w -= lr g / sqrt(acc)
 * Hyperparameters: initial_accumulator_value (0.1).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tf/plugin.h"

struct st {
	float init;
};

static int
create(const struct tf_hparams *h, void **state, char *err, size_t errlen)
{
	struct st *s = malloc(sizeof *s);
	if (s == NULL) {
		snprintf(err, errlen, "out of memory");
		return 1;
	}
	s->init = (float)tf_hparam(h, "initial_accumulator_value", 0.1);
	*state = s;
	if (!(s->init > 0)) {
		snprintf(err, errlen, "initial_accumulator_value must be > 0");
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
	(void)state;
	(void)step;
	*u = (struct tf_update){.kind = TF_UPDATE_ADAGRAD, .lr = lr};
	return 0;
}

TF_APPLY_BY_UPDATE(apply, describe)

static const struct tf_optimizer optimizers[] = {
    {"adagrad", "Adagrad (initial_accumulator_value=0.1)", 1, create, free,
     init_slots, apply},
    {0},
};

/* The settings it reads, for --opt checking. */
static const char *const keys[] = {"initial_accumulator_value", NULL};
static const char *const *const optimizer_keys[] = {keys};

static const tf_update_fn updates[] = {describe};

TF_PLUGIN_DEFINE_UPDATES("adagrad", "1.2", NULL, optimizers, optimizer_keys,
                         updates)
