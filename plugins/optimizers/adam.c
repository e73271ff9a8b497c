/*
 * adam.c - Adam, as tf.compat.v1.train.AdamOptimizer:
 *	lr_t = lr sqrt(1 - beta2^t) / (1 - beta1^t)
 *	m    = beta1 m + (1 - beta1) g
 *	v    = beta2 v + (1 - beta2) g^2
 *	w   -= lr_t m / (sqrt(v) + epsilon)
 * Hyperparameters: beta1 (0.9), beta2 (0.999), epsilon (1e-8).
 *
 * lazy_adam, as TensorFlow's LazyAdam (tfa.optimizers.LazyAdam): the same
 * for the values a batch touched; a value whose gradient is zero (a row
 * of an embedding table no id of the batch named) keeps its value and
 * moments, where adam would go on moving it by its momentum.  A sparse
 * model's table is then updated row by row (tf-train(1)).
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

/* The update, as the device runs it (kernels/cpu/update.c and its CUDA
 * twin hold the formula). */
static int
describe(const void *state, uint64_t step, float lr, struct tf_update *u)
{
	const struct st *s = state;
	float lr_t = (float)(lr * sqrt(1 - pow(s->beta2, (double)step)) /
	                     (1 - pow(s->beta1, (double)step)));
	*u = (struct tf_update){.kind = TF_UPDATE_ADAM,
	                        .lr = lr_t,
	                        .f0 = (float)s->beta1,
	                        .f1 = (float)s->beta2,
	                        .f2 = s->eps};
	return 0;
}

TF_APPLY_BY_UPDATE(apply, describe)

static int
describe_lazy(const void *state, uint64_t step, float lr, struct tf_update *u)
{
	describe(state, step, lr, u);
	u->flag = 1;
	return 0;
}

TF_APPLY_BY_UPDATE(apply_lazy, describe_lazy)

static const struct tf_optimizer optimizers[] = {
    {"adam", "Adam (beta1=0.9, beta2=0.999, epsilon=1e-8)", 2, create, free,
     NULL, apply},
    {"lazy_adam",
     "Adam of the values a batch touched, as TensorFlow's LazyAdam "
     "(beta1=0.9, beta2=0.999, epsilon=1e-8)",
     2, create, free, NULL, apply_lazy},
    {0},
};

/* The settings they read, for --opt checking. */
static const char *const keys[] = {"beta1", "beta2", "epsilon", NULL};
static const char *const *const optimizer_keys[] = {keys, keys};

static const tf_update_fn updates[] = {describe, describe_lazy};

TF_PLUGIN_DEFINE_UPDATES("adam", "1.3", NULL, optimizers, optimizer_keys,
                         updates)
