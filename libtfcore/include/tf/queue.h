/*
 * queue.h - online learning: labelled examples posted to tf-serve
 * (:train, tfkit's own REST method) made into records, and the queue on
 * disk that holds them until tf-train --stream has trained them.
 *
 * The queue is a directory of segments of TFRecords (DIR/N.tfrecord, N
 * in 20 digits).  A writer appends whole records and syncs them before
 * they are acknowledged, beginning the next segment when one reaches its
 * size; tf_reader_open() of the directory with tf_reader_set_follow()
 * reads the segments in order as one stream; a trainer releases the
 * segments before the one its latest checkpoint stands in.
 */
#ifndef TF_QUEUE_H
#define TF_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "tf/error.h"
#include "tf/model.h"
#include "tf/serving.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A :train body as records of tf.train.Example, each with the model's
 * label: "examples" (objects of features holding the label by name), or
 * "instances" (objects, or lists in the signature's order) or columnar
 * "inputs", as :predict takes them, with "labels" (one a row).  The rows
 * must be what :predict accepts of m, and the labels of the label's type
 * (one of its classes when the schema lists them); TF_EINVAL with a
 * message naming what is wrong otherwise (HTTP 400).  *records (bytes
 * of framed records, count of them) is owned by q until its next use.
 */
TF_API int tf_request_train(struct tf_request *q, const struct tf_model *m,
                            const char *body, size_t len, size_t max_rows,
                            const uint8_t **records, size_t *bytes,
                            size_t *count);

struct tf_queue;

TF_API struct tf_queue *tf_queue_new(void);
TF_API void tf_queue_free(struct tf_queue *q);
/*
 * Open (creating) the queue dir for appending, segments of about
 * segment_bytes (0: 64 MiB).  The last segment's tail that holds no
 * whole record (an append a crash cut short, never acknowledged) is cut
 * off: *dropped says how many bytes.  TF_EFORMAT for a segment damaged
 * within.
 */
TF_API int tf_queue_open(struct tf_queue *q, const char *dir,
                         uint64_t segment_bytes, uint64_t *dropped);
/* Append n bytes of framed records and sync them: on TF_OK they are on
 * disk; on an error none of them are (the append is undone). */
TF_API int tf_queue_append(struct tf_queue *q, const void *records, size_t n);
/* The bytes of the segments in dir not yet released (and how many
 * segments, when segments is not NULL). */
TF_API uint64_t tf_queue_depth(const char *dir, uint64_t *segments);
/* Delete the segments of dir before the one a reader's offset (its
 * tf_reader_tell() in the queue's stream) stands in: what a checkpoint
 * at that offset has trained.  *released: how many. */
TF_API int tf_queue_release(const char *dir, uint64_t offset,
                            uint64_t *released);

#ifdef __cplusplus
}
#endif

#endif
