/*
 * sgd.c - plain gradient descent, as tf.compat.v1.train.
 * GradientDescentOptimizer: w -= lr * g.
 */
#include <stddef.h>

#include "tf/plugin.h"

static void
apply(void *state, float *w, const float *g, float *const *slots, size_t n,
      uint64_t step, float lr)
{
	(void)state;
	(void)slots;
	(void)step;
	for (size_t i = 0; i < n; i++) {
		w[i] -= lr * g[i];
	}
}

static const struct tf_optimizer optimizers[] = {
    {"sgd", "gradient descent: w -= lr g", 0, NULL, NULL, NULL, apply},
    {0},
};

/* The settings it reads, for --opt checking. */
static const char *const keys[] = {NULL};
static const char *const *const optimizer_keys[] = {keys};

TF_PLUGIN_DEFINE_KEYS("sgd", "1.1", NULL, optimizers, optimizer_keys)
