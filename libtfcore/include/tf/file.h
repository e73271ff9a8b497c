/*
 * file.h - replacing a small file atomically (schemas, pointer files).
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

#ifdef __cplusplus
}
#endif
#endif
