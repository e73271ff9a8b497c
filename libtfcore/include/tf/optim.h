/*
 * optim.h - running an optimizer plugin over a parameter block, and the
 * learning-rate schedule.
 */
#ifndef TF_OPTIM_H
#define TF_OPTIM_H

#include <stddef.h>
#include <stdint.h>

#include "tf/error.h"
#include "tf/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Hyperparameters: a small name -> number map. */
TF_API struct tf_hparams *tf_hparams_new(void);
TF_API void tf_hparams_free(struct tf_hparams *h);
/* Set (or replace) a value; TF_ENOMEM or TF_EINVAL for a bad name. */
TF_API int tf_hparams_set(struct tf_hparams *h, const char *key, double v);
/* Parse "key=value" and set it. */
TF_API int tf_hparams_parse(struct tf_hparams *h, const char *kv);
/* The settings in the order they were first set: key i and its value
 * (NULL past the end). */
TF_API size_t tf_hparams_count(const struct tf_hparams *h);
TF_API const char *tf_hparams_get(const struct tf_hparams *h, size_t i,
                                  double *v);
/* A copy (NULL when out of memory); a NULL h copies as empty. */
TF_API struct tf_hparams *tf_hparams_copy(const struct tf_hparams *h);
/*
 * Check every key against the NULL-terminated list an optimizer says it
 * takes (tf_registry_optimizer_keys(); NULL: it does not say, and every
 * key passes).  TF_EINVAL naming the first unknown key and the keys
 * taken.
 */
TF_API int tf_hparams_check(struct tf_hparams *h, const char *optimizer,
                            const char *const *keys);

/* An optimizer at work: its plugin, private state, slots, step. */
struct tf_optim;

TF_API struct tf_optim *tf_optim_new(void);
TF_API void tf_optim_free(struct tf_optim *o);
/* Set up for n parameters.  TF_EINVAL with the plugin's message for a
 * bad hyperparameter. */
TF_API int tf_optim_init(struct tf_optim *o, const struct tf_optimizer *opt,
                         const struct tf_hparams *h, size_t n);
/*
 * Where the optimizer runs, before tf_optim_init(): its slots live on
 * device d (NULL: the CPU), and update, when not NULL, is the plugin's
 * fused update (tf_registry_optimizer_update()), which then runs there;
 * without it the plugin's apply runs on the host.
 */
TF_API int tf_optim_place(struct tf_optim *o, struct tf_device *d,
                          tf_update_fn update);
/* One update: the step count goes up by one first.  On a GPU the step
 * is waited for, so the parameters are the host's to read after it. */
TF_API int tf_optim_step(struct tf_optim *o, float *w, const float *g,
                         float lr);
TF_API uint64_t tf_optim_steps(const struct tf_optim *o);
/* Set the step count (a restored checkpoint). */
TF_API void tf_optim_set_steps(struct tf_optim *o, uint64_t steps);
TF_API unsigned tf_optim_nslots(const struct tf_optim *o);
/* Slot i: n floats (saved and restored with checkpoints). */
TF_API float *tf_optim_slot(struct tf_optim *o, unsigned i);

/*
 * Exponential decay, as tf.train.exponential_decay:
 * lr * rate^(step / decay_steps), the exponent floored with staircase.
 * decay_steps 0 means no decay.
 */
TF_API double tf_lr_decay(double lr, uint64_t step, double rate,
                          uint64_t decay_steps, int staircase);

#ifdef __cplusplus
}
#endif
#endif
