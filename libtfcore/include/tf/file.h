/*
 * file.h - small files (schemas, manifests, pointer files): read whole,
 * replaced atomically.
 */
#ifndef TF_FILE_H
#define TF_FILE_H

#include <stddef.h>

#include "tf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TF_FILE_SYNC 1 /* fsync before the rename */

/*
 * Write n bytes to a temporary file beside path, then rename it to path,
 * so readers see the old contents or the new, never a part.  TF_ECREATE
 * or TF_EIO with a message naming path in err.
 */
TF_API int tf_file_replace(const char *path, const void *data, size_t n,
                           int flags, char *err, size_t errlen);

/*
 * A regular file's bytes, with a NUL after them (so text can be used as
 * a string), and their count in *size; the caller frees them.  NULL with
 * errno set when it cannot be read (EISDIR for anything but a file).
 */
TF_API void *tf_file_read(const char *path, size_t *size);

#ifdef __cplusplus
}
#endif
#endif
