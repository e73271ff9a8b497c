/*
 * model.h - a trained model: loaded from a checkpoint or an export,
 * predicting, and written as an export (a versioned model directory,
 * an archive, a TensorFlow.js Layers model or an ONNX model).
 *
 * An export is a directory BASE/N/ holding
 *	model.json     signature, inference graph, preprocessing, provenance
 *	variables.bin  the weights, float32 little-endian, as model.json lists
 *	manifest.json  size and SHA-256 of each other file
 * built under a temporary name, flushed and renamed into place, so a
 * reader sees a whole version or none.  Loading verifies the manifest
 * before anything else.  See tf-export(1).
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
TF_API struct tf_dataset *tf_model_dataset(struct tf_model *m);
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
 * tf_dataset_next() gives them or tf_dataset_standardize() makes them
 * (ids may be NULL when tf_dataset_id_width() is 0): out gets rows x
 * tf_model_outputs() values, class probabilities (binary: 1 - p, p) or
 * regression values.  Not thread-safe: one model per thread.
 */
struct tf_batch;
TF_API int tf_model_predict(struct tf_model *m, const struct tf_batch *b,
                            float *out);

/*
 * Evaluate the model on files (read once, in order, batch_size rows at
 * a time) into metrics (reset first): the one evaluation loop, used by
 * tf-eval and by training's validation.  The dataset's errors (TF_ENOENT,
 * TF_EFORMAT naming the file and record), or the graph's.
 */
struct tf_metrics;
TF_API int tf_model_evaluate(struct tf_model *m, const char *const *files,
                             size_t nfiles, size_t batch_size,
                             struct tf_metrics *metrics);

/*
 * Write an export BASE/N/.  version 0: one above the highest version in
 * base.  An existing version is never replaced (TF_ECREATE).  provenance
 * is a JSON object merged into model.json's "provenance" (or NULL).
 * *written gets N; dir (size bytes) the directory made.
 */
TF_API int tf_model_export(struct tf_model *m, const struct tf_registry *r,
                           const char *base, int64_t version,
                           const char *provenance, int64_t *written, char *dir,
                           size_t size);
/* The same files as one tar.gz archive holding N/..., written to a
 * temporary name and renamed to path. */
TF_API int tf_model_export_archive(struct tf_model *m,
                                   const struct tf_registry *r,
                                   const char *path, int64_t version,
                                   const char *provenance);
/* A TensorFlow.js Layers model: DIR/model.json and DIR/weights.bin. */
TF_API int tf_model_export_tfjs(struct tf_model *m, const char *dir);
/* An ONNX model (IR 7, opset 13) in one file. */
TF_API int tf_model_export_onnx(struct tf_model *m, const char *path);

/*
 * Versions of an export base: numeric names of its subdirectories,
 * highest first (the caller frees *versions).  TF_ENOENT when base is
 * missing.
 */
TF_API int tf_export_versions(const char *base, int64_t **versions, size_t *n,
                              char *err, size_t errlen);
/* Whether n bytes at s name a version (decimal digits, "007" = 7). */
TF_API int tf_export_version(const char *s, size_t n, int64_t *v);

#ifdef __cplusplus
}
#endif
#endif
