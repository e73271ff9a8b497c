/*
 * checkpoint.h - saving and restoring training state.
 *
 * A checkpoint is a TFRecord file DIR/model.ckpt-STEP: the first record
 * holds a JSON header (model spec, optimizer and its settings, step, RNG
 * state, input position, schema), each further record one named block of
 * float32 values (parameters, state, optimizer slots), so every byte is
 * covered by a CRC.  It is written under a temporary name, flushed to
 * disk and renamed; then the text file DIR/checkpoint, in TensorFlow's
 * CheckpointState format, is replaced the same way to name it as the
 * latest.  Older checkpoints beyond `keep` are removed.
 */
#ifndef TF_CHECKPOINT_H
#define TF_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "tf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tf_ckpt;

TF_API struct tf_ckpt *tf_ckpt_new(void);
TF_API void tf_ckpt_free(struct tf_ckpt *c);

/* For saving: the header (copied) and blocks (referenced until saved). */
TF_API int tf_ckpt_set_header(struct tf_ckpt *c, const char *json);
TF_API int tf_ckpt_add(struct tf_ckpt *c, const char *name, const float *data,
                       size_t n);
/* Forget the blocks added (before the next save). */
TF_API void tf_ckpt_clear(struct tf_ckpt *c);
/*
 * Write DIR/model.ckpt-STEP, make it the latest, and keep the newest
 * `keep` (0 = all).  TF_ECREATE or TF_EIO naming the file on failure; the
 * previous latest checkpoint is then untouched.
 */
TF_API int tf_ckpt_save(struct tf_ckpt *c, const char *dir, uint64_t step,
                        int keep);

/*
 * Load a checkpoint file, or the latest of a directory.  TF_ENOENT when
 * there is none; TF_EFORMAT for a damaged one.
 */
TF_API int tf_ckpt_load(struct tf_ckpt *c, const char *path);
/* The latest checkpoint of dir into path; TF_ENOENT if none. */
TF_API int tf_ckpt_latest(const char *dir, char *path, size_t size);
TF_API const char *tf_ckpt_header(const struct tf_ckpt *c);
/* A loaded block, or NULL. */
TF_API const float *tf_ckpt_get(const struct tf_ckpt *c, const char *name,
                                size_t *n);
/* The file last saved or loaded. */
TF_API const char *tf_ckpt_path(const struct tf_ckpt *c);

#ifdef __cplusplus
}
#endif
#endif
