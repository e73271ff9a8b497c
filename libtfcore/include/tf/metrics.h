/*
 * metrics.h - evaluation metrics over a stream of predictions.
 *
 * Binary: loss, accuracy (threshold 0.5), exact AUC (ranks over all
 * examples, ties averaged), confusion matrix.  Multiclass: loss, accuracy
 * (arg max), confusion matrix.  Regression: loss (MSE), RMSE, MAE, R^2.
 * Keys in JSON are lower case and match tf-train's output.
 */
#ifndef TF_METRICS_H
#define TF_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "tf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tf_metrics;

/* task: TF_TASK_*; classes: 2 for binary, K for multiclass. */
TF_API struct tf_metrics *tf_metrics_new(int task, int64_t classes);
TF_API void tf_metrics_free(struct tf_metrics *m);
TF_API void tf_metrics_reset(struct tf_metrics *m);
/*
 * Add rows predictions: binary, one probability each; multiclass,
 * classes probabilities each; regression, one value each.  loss is the
 * mean loss of these rows; NaN: computed from the predictions
 * (cross-entropy of probabilities clamped to [1e-7, 1 - 1e-7], or the
 * squared error).
 */
TF_API int tf_metrics_add(struct tf_metrics *m, const float *pred,
                          const float *label, size_t rows, double loss);
TF_API uint64_t tf_metrics_count(const struct tf_metrics *m);
TF_API double tf_metrics_loss(const struct tf_metrics *m);
/* NaN where it does not apply (AUC for regression, say). */
TF_API double tf_metrics_accuracy(const struct tf_metrics *m);
TF_API double tf_metrics_auc(struct tf_metrics *m);
/*
 * Append the metrics as JSON members ("examples":N,"loss":...) without
 * braces to *out (malloc'd, NUL-terminated); with confusion, add the
 * confusion matrix (rows: true class).
 */
TF_API int tf_metrics_json(struct tf_metrics *m, int confusion, char **out);
/* A table for people. */
TF_API int tf_metrics_text(struct tf_metrics *m, char **out);
/* Name class k names[k] (as the data spells it) in tf_metrics_text()'s
 * confusion matrix, instead of its number; the names are copied. */
TF_API int tf_metrics_name_classes(struct tf_metrics *m,
                                   const char *const *names);

#ifdef __cplusplus
}
#endif
#endif
