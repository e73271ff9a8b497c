/*
 * sgd.c - plain gradient descent, as tf.compat.v1.train.
 * GradientDescentOptimizer: w -= lr * g.
 */
#include <stddef.h>

#include "tf/plugin.h"

/* The update, as the device runs it (kernels/cpu/update.c and its CUDA
 * twin hold the formula). */
static int
describe(const void *state, uint64_t step, float lr, struct tf_update *u)
{
	(void)state;
	(void)step;
	*u = (struct tf_update){.kind = TF_UPDATE_SGD, .lr = lr};
	return 0;
}

TF_APPLY_BY_UPDATE(apply, describe)

static const struct tf_optimizer optimizers[] = {
    {"sgd", "gradient descent: w -= lr g", 0, NULL, NULL, NULL, apply},
    {0},
};

/* The settings it reads, for --opt checking. */
static const char *const keys[] = {NULL};
static const char *const *const optimizer_keys[] = {keys};

static const tf_update_fn updates[] = {describe};

TF_PLUGIN_DEFINE_UPDATES("sgd", "1.2", NULL, optimizers, optimizer_keys,
                         updates)
