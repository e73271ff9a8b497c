/*
 * events.c - TensorBoard event files: Event and Summary protobufs encoded
 * by hand (a handful of fields), framed as TFRecords and flushed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "tf/events.h"
#include "tf/record.h"

struct tf_events {
	struct tfi_handle err;
	struct tf_writer *w;
	int fd;
	char path[PATH_MAX];
	struct tfi_buf buf;
};

/* Summary.Value{tag = 1, simple_value = 2}. */
static size_t
value_size(const char *tag)
{
	size_t t = strlen(tag);
	return 1 + tfi_varint_size(t) + t + 5;
}

static size_t
summary_size(const char *const *tags, size_t n)
{
	size_t s = 0;
	for (size_t i = 0; i < n; i++) {
		size_t v = value_size(tags[i]);
		s += 1 + tfi_varint_size(v) + v;
	}
	return s;
}

size_t
tf_event_size(const char *file_version, const char *const *tags, size_t n)
{
	size_t s = 9 + 1 + 10; /* wall_time, step */
	if (file_version != NULL) {
		size_t f = strlen(file_version);
		return s + 1 + tfi_varint_size(f) + f;
	}
	size_t sum = summary_size(tags, n);
	return s + 1 + tfi_varint_size(sum) + sum;
}

size_t
tf_event_encode(uint8_t *out, double wall_time, int64_t step,
                const char *file_version, const char *const *tags,
                const float *values, size_t n)
{
	uint8_t *p = out;
	uint64_t bits;
	memcpy(&bits, &wall_time, 8);
	*p++ = 0x09; /* wall_time, fixed64 */
	tfi_put_le64(p, bits);
	p += 8;
	if (step != 0) {
		*p++ = 0x10; /* step */
		p = tfi_put_varint(p, (uint64_t)step);
	}
	if (file_version != NULL) {
		size_t f = strlen(file_version);
		*p++ = 0x1a; /* file_version */
		p = tfi_put_varint(p, f);
		memcpy(p, file_version, f);
		return (size_t)(p + f - out);
	}
	*p++ = 0x2a; /* summary */
	p = tfi_put_varint(p, summary_size(tags, n));
	for (size_t i = 0; i < n; i++) {
		size_t t = strlen(tags[i]);
		*p++ = 0x0a; /* value */
		p = tfi_put_varint(p, value_size(tags[i]));
		*p++ = 0x0a; /* tag */
		p = tfi_put_varint(p, t);
		memcpy(p, tags[i], t);
		p += t;
		*p++ = 0x15; /* simple_value, fixed32 */
		uint32_t u;
		memcpy(&u, &values[i], 4);
		tfi_put_le32(p, u);
		p += 4;
	}
	return (size_t)(p - out);
}

struct tf_events *
tf_events_new(void)
{
	struct tf_events *ev = calloc(1, sizeof *ev);
	if (ev != NULL) {
		ev->fd = -1;
	}
	return ev;
}

void
tf_events_free(struct tf_events *ev)
{
	if (ev != NULL) {
		if (ev->w != NULL) {
			tf_writer_flush(ev->w);
		}
		tf_writer_free(ev->w);
		if (ev->fd >= 0) {
			close(ev->fd);
		}
		tfi_buf_free(&ev->buf);
		free(ev);
	}
}

const char *
tf_events_path(const struct tf_events *ev)
{
	return ev->path;
}

static double
wall(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
put(struct tf_events *ev, int64_t step, const char *fv, const char *const *tags,
    const float *values, size_t n)
{
	ev->buf.len = 0;
	if (tfi_buf_reserve(&ev->buf, tf_event_size(fv, tags, n)) != TF_OK) {
		return tfi_set_error(ev, TF_ENOMEM, "out of memory");
	}
	size_t len =
	    tf_event_encode(ev->buf.data, wall(), step, fv, tags, values, n);
	if (tf_writer_write(ev->w, ev->buf.data, len) != TF_OK ||
	    tf_writer_flush(ev->w) != TF_OK) {
		return tfi_set_error(ev, tf_errcode(ev->w), "%s",
		                     tf_errmsg(ev->w));
	}
	return TF_OK;
}

int
tf_events_open(struct tf_events *ev, const char *dir)
{
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		return tfi_set_errno(ev, TF_ECREATE, errno,
		                     "cannot create '%s'", dir);
	}
	char host[256] = "localhost";
	gethostname(host, sizeof host - 1);
	snprintf(ev->path, sizeof ev->path,
	         "%s/events.out.tfevents.%010lld.%s.%d.0", dir,
	         (long long)time(NULL), host, (int)getpid());
	/* Written in place, not renamed: TensorBoard reads it as it grows. */
	ev->fd = open(ev->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (ev->fd < 0) {
		return tfi_set_errno(ev, TF_ECREATE, errno,
		                     "cannot create '%s'", ev->path);
	}
	ev->w = tf_writer_new();
	if (ev->w == NULL || tf_writer_open_fd(ev->w, ev->fd, ev->path,
	                                       TF_COMPRESS_NONE) != TF_OK) {
		return tfi_set_error(ev, TF_ENOMEM, "out of memory");
	}
	return put(ev, 0, "brain.Event:2", NULL, NULL, 0);
}

int
tf_events_scalars(struct tf_events *ev, int64_t step, const char *const *tags,
                  const double *values, size_t n)
{
	const char *t[64];
	float v[64];
	size_t k = 0;
	for (size_t i = 0; i < n && k < 64; i++) {
		if (!isnan(values[i])) {
			t[k] = tags[i];
			v[k++] = (float)values[i];
		}
	}
	return put(ev, step, NULL, t, v, k);
}
