/*
 * events.h - TensorBoard event files (FORMATS.md section 3).
 *
 * An event file is an uncompressed TFRecord file of tensorflow.Event
 * messages: first {wall_time, file_version: "brain.Event:2"}, then one
 * Event per step with simple_value scalars.  Each record is flushed as it
 * is written, so TensorBoard shows a run while it trains.
 */
#ifndef TF_EVENTS_H
#define TF_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "tf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tf_events;

TF_API struct tf_events *tf_events_new(void);
TF_API void tf_events_free(struct tf_events *ev);
/*
 * Create DIR (if needed) and in it
 * events.out.tfevents.SECONDS.HOST.PID.0, and write the file-version
 * event.  TF_ECREATE naming the path on failure.
 */
TF_API int tf_events_open(struct tf_events *ev, const char *dir);
/* One Event at step holding n scalars tag[i] = value[i] (NaNs left out). */
TF_API int tf_events_scalars(struct tf_events *ev, int64_t step,
                             const char *const *tags, const double *values,
                             size_t n);
/* The file being written. */
TF_API const char *tf_events_path(const struct tf_events *ev);

/*
 * Encode an Event into out (which must hold tf_event_size() bytes):
 * file_version when not NULL, else the scalars.  Returns the length.
 */
TF_API size_t tf_event_size(const char *file_version, const char *const *tags,
                            size_t n);
TF_API size_t tf_event_encode(uint8_t *out, double wall_time, int64_t step,
                              const char *file_version, const char *const *tags,
                              const float *values, size_t n);

#ifdef __cplusplus
}
#endif
#endif
