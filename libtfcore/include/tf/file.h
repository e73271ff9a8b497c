/*
 * file.h - how outputs are published (a temporary name, fsync, rename,
 * fsync of the directory; never over anything but a regular file),
 * small files read whole, SHA-256.
 */
#ifndef TF_FILE_H
#define TF_FILE_H

#include <stddef.h>

#include "tf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TF_FILE_SYNC 1 /* fsync before the rename, the directory after */

/* What a path names: nothing yet, a regular file, a directory, or
 * something that is written to in place (a device, a FIFO, a socket;
 * also "-" and NULL, standard output).  Outputs beside an output (a
 * schema sidecar) are only written next to TF_PATH_NONE or
 * TF_PATH_REGULAR. */
enum { TF_PATH_NONE, TF_PATH_REGULAR, TF_PATH_DIR, TF_PATH_SPECIAL };
TF_API int tf_path_kind(const char *path);

/*
 * Write n bytes to a temporary file beside path, then rename it to path,
 * so readers see the old contents or the new, never a part; a device,
 * FIFO or socket at path is written directly instead.  TF_ECREATE or
 * TF_EIO with a message naming path in err.
 */
TF_API int tf_file_replace(const char *path, const void *data, size_t n,
                           int flags, char *err, size_t errlen);

/*
 * An output of any size published by the same rule (text a command
 * writes, for instance): tf_file_out_open() gives a descriptor to write
 * to, a temporary beside path (or path itself for a device, FIFO or
 * socket); tf_file_out_commit() fsyncs when flags has TF_FILE_SYNC,
 * renames it over path and frees o; tf_file_out_abort() removes the
 * temporary and frees o.  NULL or -1 with errno set.
 */
struct tf_file_out;
TF_API struct tf_file_out *tf_file_out_open(const char *path);
TF_API int tf_file_out_fd(const struct tf_file_out *o);
/* The temporary's name (NULL when writing path directly), for a
 * signal handler to unlink. */
TF_API const char *tf_file_out_temp(const struct tf_file_out *o);
TF_API int tf_file_out_commit(struct tf_file_out *o, int flags);
TF_API void tf_file_out_abort(struct tf_file_out *o);

/*
 * A regular file's bytes, with a NUL after them (so text can be used as
 * a string), and their count in *size; the caller frees them.  NULL with
 * errno set when it cannot be read (EISDIR for anything but a file).
 */
TF_API void *tf_file_read(const char *path, size_t *size);

/* SHA-256 of n bytes as 64 lower-case hex digits and a NUL (export
 * manifests). */
TF_API void tf_sha256_hex(const void *data, size_t n, char hex[65]);

#ifdef __cplusplus
}
#endif
#endif
