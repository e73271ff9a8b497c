/*
 * input.h - byte streams from files, standard input and archives.
 *
 * A struct tf_input yields one or more named streams: a plain file or
 * standard input is one stream; a .tar, .tar.gz, .zip (or any format
 * libarchive reads) yields each matching member in archive order; a .gz,
 * .bz2, .xz or .zst file yields its decompressed contents.  Archives are
 * recognised by their content, not their name.
 */
#ifndef TF_INPUT_H
#define TF_INPUT_H

#include <stddef.h>

#include "tf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tf_input;

TF_API struct tf_input *tf_input_new(void);
TF_API void tf_input_free(struct tf_input *in);

/*
 * Only archive members whose path matches one of these fnmatch(3) globs are
 * read.  Without any, members named *.csv, *.tsv, *.txt, *.svm or *.libsvm
 * (any case) are read.
 */
TF_API int tf_input_add_member_glob(struct tf_input *in, const char *glob);

/* Open a path ("-" = standard input).  TF_ENOENT if it cannot be read. */
TF_API int tf_input_open(struct tf_input *in, const char *path);
/* Open a buffer (not copied; it must outlive the input). */
TF_API int tf_input_open_mem(struct tf_input *in, const void *data, size_t n,
                             const char *name);

/*
 * Advance to the next stream; *name (owned by in) names it in messages,
 * e.g. "data.tar.gz:train.csv".  TF_EOF when there are no more.
 */
TF_API int tf_input_next(struct tf_input *in, const char **name);

/* Read up to n bytes of the current stream; *got is 0 at its end. */
TF_API int tf_input_read(struct tf_input *in, void *buf, size_t n, size_t *got);

/* Streams opened so far. */
TF_API unsigned tf_input_streams(const struct tf_input *in);

#ifdef __cplusplus
}
#endif
#endif
