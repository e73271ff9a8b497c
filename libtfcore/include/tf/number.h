/*
 * number.h - decimal text to numbers (number.c), as tfkit reads them in
 * CSV, libsvm and the commands' options: exact (floats correctly
 * rounded), the whole string, no spaces, no hex.
 */
#ifndef TF_NUMBER_H
#define TF_NUMBER_H

#include <stddef.h>
#include <stdint.h>

#include "tf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 0, or -1 when the n bytes at s are not such a number ("nan", "inf" and
 * values beyond float32 read as NaN and infinities: whether to keep them
 * is the caller's). */
TF_API int tf_parse_float(const char *s, size_t n, float *out);
TF_API int tf_parse_int64(const char *s, size_t n, int64_t *out);

#ifdef __cplusplus
}
#endif
#endif
