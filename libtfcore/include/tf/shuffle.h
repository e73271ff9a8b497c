/*
 * shuffle.h - records in a uniformly random order, larger than memory.
 *
 * Records are kept in memory up to a budget; past it they are dealt at
 * random into 64 temporary files (tmpfile(3), so TMPDIR), each of which
 * is shuffled in turn the same way (at most three levels deep, then in
 * memory whatever its size).  The order is a property of the seed and
 * the budget.  Used by tf-records shuffle.
 */
#ifndef TF_SHUFFLE_H
#define TF_SHUFFLE_H

#include <stddef.h>
#include <stdint.h>

#include "tf/error.h"
#include "tf/record.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tf_shuffle;

/* memory: bytes of records to hold before spilling (0: no limit). */
TF_API struct tf_shuffle *tf_shuffle_new(uint64_t seed, size_t memory);
TF_API void tf_shuffle_free(struct tf_shuffle *s);
/* One record's bytes (copied).  TF_ENOMEM; TF_ECREATE when a temporary
 * file cannot be made; TF_EIO when one cannot be written. */
TF_API int tf_shuffle_add(struct tf_shuffle *s, const void *data, size_t n);
/* Every record added, shuffled, to w; the shuffle is then empty.  The
 * writer's errors, or the temporary files'. */
TF_API int tf_shuffle_finish(struct tf_shuffle *s, struct tf_writer *w);

#ifdef __cplusplus
}
#endif
#endif
