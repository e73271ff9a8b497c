/*
 * adadelta.c - Adadelta, as tf.compat.v1.train.AdadeltaOptimizer:
 *	acc  = rho acc + (1 - rho) g^2
 *	u    = sqrt(accu + eps) / sqrt(acc + eps) g
 *	accu = rho accu + (1 - rho) u^2
 *	w   -= lr u
 * Hyperparameters: rho (0.95), epsilon (1e-8).  TensorFlow's default
 * learning rate for it is 0.001.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tf/plugin.h"

struct st {
	float rho, eps;
};

static int
create(const struct tf_hparams *h, void **state, char *err, size_t errlen)
{
	struct st *s = malloc(sizeof *s);
	if (s == NULL) {
		snprintf(err, errlen, "out of memory");
		return 1;
	}
	s->rho = (float)tf_hparam(h, "rho", 0.95);
	s->eps = (float)tf_hparam(h, "epsilon", 1e-8);
	*state = s;
	if (!(s->rho >= 0 && s->rho < 1) || !(s->eps > 0)) {
		snprintf(err, errlen, "needs 0 <= rho < 1 and epsilon > 0");
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
	*u = (struct tf_update){
	    .kind = TF_UPDATE_ADADELTA, .lr = lr, .f0 = s->rho, .f1 = s->eps};
	return 0;
}

TF_APPLY_BY_UPDATE(apply, describe)

static const struct tf_optimizer optimizers[] = {
    {"adadelta", "Adadelta (rho=0.95, epsilon=1e-8)", 2, create, free, NULL,
     apply},
    {0},
};

/* The settings it reads, for --opt checking. */
static const char *const keys[] = {"rho", "epsilon", NULL};
static const char *const *const optimizer_keys[] = {keys};

static const tf_update_fn updates[] = {describe};

TF_PLUGIN_DEFINE_UPDATES("adadelta", "1.2", NULL, optimizers, optimizer_keys,
                         updates)
