/*
 * model.h - a trained model: loaded from a checkpoint or an export
 * (tf/export.h describes exports and writes them), its signature,
 * predicting and evaluating.  Loading an export verifies its manifest
 * before anything else.
 */
#ifndef TF_MODEL_H
#define TF_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "tf/dataset.h"
#include "tf/error.h"
#include "tf/graph.h"
#include "tf/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tf_model;
TF_API struct tf_model *tf_model_new(void);
TF_API void tf_model_free(struct tf_model *m);
/* Where the model runs, before it is loaded (tf_device_open(); the CPU
 * unless set).  Checkpoints and exports load on any device. */
TF_API void tf_model_set_device(struct tf_model *m, struct tf_device *d);

/*
 * Load a checkpoint file, the latest checkpoint of a directory, or an
 * export directory (one holding manifest.json).  TF_ENOENT when there is
 * none; TF_EFORMAT for a damaged one or a manifest that does not verify.
 */
TF_API int tf_model_load(struct tf_model *m, const struct tf_registry *r,
                         const char *path);

/* A file of an export held in memory (an archive member). */
struct tf_export_file {
	const char *name; /* "model.json", "variables.bin", "manifest.json" */
	const void *data;
	size_t size;
};
/* Load an export from its files in memory; origin names it in messages. */
TF_API int tf_model_load_files(struct tf_model *m, const struct tf_registry *r,
                               const struct tf_export_file *files, size_t n,
                               const char *origin);

TF_API struct tf_graph *tf_model_graph(struct tf_model *m);
/* What a row of the model holds (tf/columns.h); records are read
 * through a dataset on them: tf_dataset_new_on(tf_model_columns(m)). */
TF_API struct tf_columns *tf_model_columns(struct tf_model *m);
/* The node holding predictions: probabilities or values. */
TF_API const char *tf_model_prediction(const struct tf_model *m);
/* The checkpoint file or export directory loaded. */
TF_API const char *tf_model_checkpoint(const struct tf_model *m);
/* Training step of the weights. */
TF_API uint64_t tf_model_step(const struct tf_model *m);
/*
 * A validation metric recorded when the checkpoint was saved ("accuracy",
 * "auc", "loss", ...); TF_ENOENT when there is none.
 */
TF_API int tf_model_metric(const struct tf_model *m, const char *name,
                           double *value);
/* Provenance as a JSON object: flags, seed, step, validation metrics,
 * versions (the caller frees it). */
TF_API char *tf_model_provenance(const struct tf_model *m);

/*
 * The serving signature as a JSON object: "inputs" (one per row column,
 * in row order: name, dtype DT_FLOAT or DT_INT64), "outputs" (name,
 * dtype, shape), "task", "classes", "labels" (the caller frees it).
 */
TF_API char *tf_model_signature(const struct tf_model *m);
/* Width of the output: classes for multiclass and binary
 * ("probabilities"), 1 for regression. */
TF_API int64_t tf_model_outputs(const struct tf_model *m);
/* Class k's label (from the schema), or "" for regression. */
TF_API const char *tf_model_label(const struct tf_model *m, int64_t k);

/*
 * Predict rows of standardised features and their ids, as
 * tf_dataset_next() gives them or tf_columns_standardize() makes them
 * (ids may be NULL when tf_dataset_id_width() is 0): out gets rows x
 * tf_model_outputs() values, class probabilities (binary: 1 - p, p) or
 * regression values.  Not thread-safe: one model per thread.
 */
struct tf_batch;
TF_API int tf_model_predict(struct tf_model *m, const struct tf_batch *b,
                            float *out);

/*
 * Evaluate the model on the rows of ds (a dataset on the model's
 * columns, tf_dataset_new_on(), opened for the files to read once, in
 * order), batch_size rows at a time, into metrics (reset first): the
 * one evaluation loop, used by tf-eval and by training's validation.
 * The dataset's errors (TF_EFORMAT naming the file and record), or the
 * graph's.
 */
struct tf_dataset;
struct tf_metrics;
TF_API int tf_model_evaluate(struct tf_model *m, struct tf_dataset *ds,
                             size_t batch_size, struct tf_metrics *metrics);

/* What an export records of a model (tf/export.h): its schema text, its
 * task, whether it standardises, and wide_and_deep's categorical
 * settings as JSON (the caller frees it; NULL for other models). */
TF_API const char *tf_model_schema_text(const struct tf_model *m);
TF_API int tf_model_task(const struct tf_model *m);
TF_API int tf_model_normalizes(const struct tf_model *m);
TF_API char *tf_model_categorical(const struct tf_model *m);

#ifdef __cplusplus
}
#endif
#endif
