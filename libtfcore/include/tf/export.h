/*
 * export.h - exports of a trained model, and reading them back.
 *
 * An export is a directory BASE/N/ holding
 *	model.json     signature, inference graph, preprocessing, provenance
 *	variables.bin  the weights, float32 little-endian, as model.json lists
 *	manifest.json  size and SHA-256 of each other file
 * built under a temporary name, flushed and renamed into place, so a
 * reader sees a whole version or none; or the same files as N/... in
 * one tar.gz archive.  A model is also written as a TensorFlow.js
 * Layers model or an ONNX model.  tf_model_load() (tf/model.h) loads an
 * export directory; an archive's versions are read into memory here and
 * loaded with tf_model_load_files().  See tf-export(1).
 */
#ifndef TF_EXPORT_H
#define TF_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "tf/error.h"
#include "tf/model.h"
#include "tf/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* One version of an archive, its files in memory. */
#define TF_EXPORT_MAX_FILES 8
struct tf_export_member_version {
	int64_t number;
	struct tf_export_file files[TF_EXPORT_MAX_FILES];
	size_t nfiles;
};
/*
 * Every N/FILE member of an archive (tar, tar.gz, zip: what libarchive
 * reads), grouped by version; other members are passed over.  -1 with a
 * message naming the archive (and member) in err.  The caller frees
 * *versions with tf_export_archive_free().
 */
TF_API int tf_export_read_archive(const char *path,
                                  struct tf_export_member_version **versions,
                                  size_t *n, char *err, size_t errlen);
TF_API void tf_export_archive_free(struct tf_export_member_version *v,
                                   size_t n);

#ifdef __cplusplus
}
#endif
#endif
