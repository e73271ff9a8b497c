/*
 * record.c - TFRecord framing, reading and writing, with optional GZIP/ZLIB.
 *
 * The reader keeps a window [start, end) of uncompressed bytes in buf; a
 * record is returned as a view into it.  fill() tops the window up from the
 * source (a file descriptor, memory, or an inflate stream over either).
 * Offsets in messages are positions in the uncompressed stream, as in
 * TensorFlow.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "internal.h"
#include "tf/crc32c.h"
#include "tf/record.h"

#define CHUNK ((size_t)1 << 20)

int
tf_compression_parse(const char *name)
{
	if (name == NULL || name[0] == '\0' || strcasecmp(name, "none") == 0) {
		return TF_COMPRESS_NONE;
	}
	if (strcasecmp(name, "gzip") == 0) {
		return TF_COMPRESS_GZIP;
	}
	if (strcasecmp(name, "zlib") == 0) {
		return TF_COMPRESS_ZLIB;
	}
	if (strcasecmp(name, "auto") == 0) {
		return TF_COMPRESS_AUTO;
	}
	return -2;
}

const char *
tf_compression_name(int c)
{
	switch (c) {
	case TF_COMPRESS_GZIP:
		return "gzip";
	case TF_COMPRESS_ZLIB:
		return "zlib";
	case TF_COMPRESS_AUTO:
		return "auto";
	default:
		return "none";
	}
}

void
tfi_record_frame_inplace(uint8_t *rec, size_t n)
{
	tfi_put_le64(rec, (uint64_t)n);
	tfi_put_le32(rec + 8, tf_crc32c_mask(tf_crc32c(rec, 8)));
	tfi_put_le32(rec + 12 + n, tf_crc32c_mask(tf_crc32c(rec + 12, n)));
}

void
tf_record_frame(uint8_t *out, const void *data, size_t n)
{
	if (n > 0) {
		memmove(out + 12, data, n);
	}
	tfi_record_frame_inplace(out, n);
}

/* ---- reader ---------------------------------------------------------- */

struct tf_reader {
	struct tfi_handle err;
	char *name;
	int fd;
	int own_fd;
	const uint8_t *mem; /* memory source */
	size_t mem_len, mem_pos;
	int compression; /* requested, then actual */
	int src_eof;
	int detected;
	z_stream zs;
	int z_init;
	int z_end; /* inflate reached the end of all input */
	uint8_t *zin;
	size_t zin_cap;
	uint8_t *buf;
	size_t cap, start, end;
	uint64_t pos;    /* stream offset of buf[start] */
	uint64_t offset; /* offset of the record last returned */
	uint64_t count, skipped;
	size_t max_record;
	size_t readahead; /* bytes a read asks for beyond a record (0: CHUNK) */
	int skip_corrupt;
	int resyncing;
	int failed;
	struct tfi_buf skip_log;
	int follow;   /* ms to wait for more of a followed input (0: no) */
	int regular;  /* the input is a regular file */
	int queue;    /* ... a segment of the queue directory name */
	uint64_t seg; /* its number */
	int again;    /* a read found no bytes for now (following) */
	uint64_t skip_left; /* of an over-long record being skipped */
};

struct tf_reader *
tf_reader_new(void)
{
	struct tf_reader *r = calloc(1, sizeof *r);
	if (r != NULL) {
		r->fd = -1;
		r->max_record = TF_RECORD_MAX_DEFAULT;
	}
	return r;
}

static void
reader_reset(struct tf_reader *r)
{
	if (r->own_fd && r->fd >= 0) {
		close(r->fd);
	}
	if (r->z_init) {
		inflateEnd(&r->zs);
	}
	free(r->name);
	free(r->buf);
	free(r->zin);
	tfi_buf_free(&r->skip_log);
	size_t max = r->max_record;
	int skip = r->skip_corrupt, follow = r->follow;
	memset(r, 0, sizeof *r);
	r->fd = -1;
	r->max_record = max;
	r->skip_corrupt = skip;
	r->follow = follow;
}

void
tf_reader_free(struct tf_reader *r)
{
	if (r != NULL) {
		reader_reset(r);
		free(r);
	}
}

void
tf_reader_set_max_record(struct tf_reader *r, size_t max)
{
	r->max_record = max;
}

void
tf_reader_set_skip_corrupt(struct tf_reader *r, int on)
{
	r->skip_corrupt = on;
}

void
tf_reader_set_follow(struct tf_reader *r, int wait_ms)
{
	r->follow = wait_ms > 0 ? wait_ms : 0;
}

uint64_t
tf_reader_offset(const struct tf_reader *r)
{
	return r->offset;
}

uint64_t
tf_reader_count(const struct tf_reader *r)
{
	return r->count;
}

uint64_t
tf_reader_skipped(const struct tf_reader *r)
{
	return r->skipped;
}

int
tf_reader_compression(const struct tf_reader *r)
{
	return r->compression;
}

const char *
tf_reader_skip_log(const struct tf_reader *r)
{
	return r->skip_log.len ? (const char *)r->skip_log.data : "";
}

static int
reader_start(struct tf_reader *r, const char *name, int compression)
{
	if (compression < TF_COMPRESS_AUTO || compression > TF_COMPRESS_GZIP) {
		return tfi_set_error(r, TF_EINVAL, "%s: bad compression %d",
		                     name, compression);
	}
	r->name = strdup(name);
	r->buf = malloc(CHUNK);
	if (r->name == NULL || r->buf == NULL) {
		return tfi_set_error(r, TF_ENOMEM, "out of memory");
	}
	r->cap = CHUNK;
	r->compression = r->follow ? TF_COMPRESS_NONE : compression;
	struct stat st;
	r->regular =
	    r->fd >= 0 && fstat(r->fd, &st) == 0 && S_ISREG(st.st_mode);
	return TF_OK;
}

int
tf_reader_open_fd(struct tf_reader *r, int fd, const char *name,
                  int compression)
{
	reader_reset(r);
	r->fd = fd;
	return reader_start(r, name ? name : "(fd)", compression);
}

static int queue_open(struct tf_reader *r, int exact);

int
tf_reader_open(struct tf_reader *r, const char *path, int compression)
{
	if (path == NULL || strcmp(path, "-") == 0) {
		return tf_reader_open_fd(r, 0, "(stdin)", compression);
	}
	reader_reset(r);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return tfi_set_errno(r, TF_ENOENT, errno, "cannot open '%s'",
		                     path);
	}
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && r->follow) {
		/* a queue: its segments read as one stream */
		close(fd);
		int rc = reader_start(r, path, TF_COMPRESS_NONE);
		r->queue = 1;
		r->regular = 1;
		r->own_fd = 1;
		return rc != TF_OK            ? rc
		       : queue_open(r, 0) < 0 ? r->err.code
		                              : TF_OK;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		return tfi_set_error(r, TF_ENOENT, "%s: is a directory", path);
	}
	r->fd = fd;
	r->own_fd = 1;
#ifdef POSIX_FADV_SEQUENTIAL
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
	return reader_start(r, path, compression);
}

int
tf_reader_open_mem(struct tf_reader *r, const void *data, size_t n,
                   const char *name, int compression)
{
	reader_reset(r);
	r->mem = data;
	r->mem_len = n;
	return reader_start(r, name ? name : "(memory)", compression);
}

static int damage(struct tf_reader *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A followed input's wait for more. */
static void
follow_wait(const struct tf_reader *r)
{
	struct timespec ts = {r->follow / 1000,
	                      (long)(r->follow % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/*
 * The end of a followed file for now: after the wait, -2 ("not yet"),
 * the file at its path opened again from its start when it was replaced
 * (another inode there) or read again from its start when truncated
 * below what was read.  A record cut short by the change is damage.
 */
static ssize_t
follow_file(struct tf_reader *r)
{
	follow_wait(r);
	struct stat now, was;
	if (!r->own_fd || fstat(r->fd, &was) != 0 || stat(r->name, &now) != 0) {
		return -2; /* a path being rotated: looked at again later */
	}
	uint64_t read_to = r->pos + (r->end - r->start);
	int moved = now.st_ino != was.st_ino || now.st_dev != was.st_dev;
	if (!moved && (uint64_t)was.st_size >= read_to) {
		return -2;
	}
	if (r->end > r->start &&
	    damage(r, TF_EFORMAT,
	           "%s: record %llu: truncated record at %llu (the file was "
	           "%s while a record was half written)",
	           r->name, (unsigned long long)r->count,
	           (unsigned long long)r->pos,
	           moved ? "replaced" : "truncated") != TF_OK) {
		return -1;
	}
	if (moved) {
		int fd = open(r->name, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			return -2;
		}
		close(r->fd);
		r->fd = fd;
	} else if (lseek(r->fd, 0, SEEK_SET) != 0) {
		tfi_set_errno(r, TF_EIO, errno, "%s: seek failed", r->name);
		return -1;
	}
	r->start = r->end = 0;
	r->pos = 0;
	return -2;
}

/* Segment seg of a queue (the lowest there from seg when not exact)
 * opened at its start: 1, 0 when there is none yet (or -1, an error). */
static int
queue_open(struct tf_reader *r, int exact)
{
	uint64_t seg = r->seg;
	if (!exact && tfi_queue_find(r->name, r->seg, &seg) != 0) {
		return 0;
	}
	char path[4200];
	tfi_queue_path(path, sizeof path, r->name, seg);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (exact) {
			tfi_set_errno(r, TF_ENOENT, errno,
			              "%s: segment %llu of the queue is gone",
			              r->name, (unsigned long long)seg);
			return -1;
		}
		return 0;
	}
	if (r->fd >= 0) {
		close(r->fd);
	}
	r->fd = fd;
	r->seg = seg;
	r->pos = seg << TFI_QUEUE_SHIFT;
	/* the window empty where it ends: a read under way puts the new
	 * segment's bytes there */
	r->start = r->end;
	return 1;
}

/*
 * A queue's segment read to its end for now: after the wait, the next
 * segment when the writer has begun one (0: read on; the current one is
 * read once more first, as what the writer put there before it moved on
 * may have come since), else -2 ("not yet").  A record cut short at the
 * end of a segment the writer left is damage.
 */
static ssize_t
queue_next(struct tf_reader *r, uint8_t *dst, size_t n)
{
	follow_wait(r);
	uint64_t next;
	if (r->fd < 0) {
		return queue_open(r, 0) > 0 ? 0 : -2;
	}
	if (tfi_queue_find(r->name, r->seg + 1, &next) != 0) {
		return -2;
	}
	ssize_t k = read(r->fd, dst, n);
	if (k < 0 && errno == EINTR) {
		return -2;
	}
	if (k < 0) {
		tfi_set_errno(r, TF_EIO, errno, "%s: read failed", r->name);
		return -1;
	}
	if (k > 0) {
		return k;
	}
	if (r->end > r->start &&
	    damage(r, TF_EFORMAT,
	           "%s: segment %llu ends in the middle of a record", r->name,
	           (unsigned long long)r->seg) != TF_OK) {
		return -1;
	}
	r->seg = next;
	return queue_open(r, 1) > 0 ? 0 : -1;
}

/* Raw bytes from the source; 0 at its end, -2 when a followed input
 * has none yet, -1 on error. */
static ssize_t
src_read(struct tf_reader *r, uint8_t *dst, size_t n)
{
	while (r->queue && r->fd < 0) {
		ssize_t k = queue_next(r, dst, n);
		if (k != 0) {
			return k;
		}
	}
	if (r->mem != NULL || r->fd < 0) {
		size_t k = r->mem_len - r->mem_pos;
		if (k > n) {
			k = n;
		}
		if (k > 0) {
			memcpy(dst, r->mem + r->mem_pos, k);
		}
		r->mem_pos += k;
		return (ssize_t)k;
	}
	if (r->follow && !r->regular) {
		/* a pipe, FIFO or socket: no bytes within the wait is "not
		 * yet"; its writer closing it is the end */
		struct pollfd p = {.fd = r->fd, .events = POLLIN};
		int k = poll(&p, 1, r->follow);
		if (k == 0 || (k < 0 && errno == EINTR)) {
			return -2;
		}
	}
	for (;;) {
		ssize_t k = read(r->fd, dst, n);
		if (k == 0 && r->queue) {
			if ((k = queue_next(r, dst, n)) == 0) {
				continue; /* the next segment */
			}
			return k;
		}
		if (k == 0 && r->follow && r->regular) {
			return follow_file(r);
		}
		if (k >= 0) {
			return k;
		}
		if (errno != EINTR) {
			tfi_set_errno(r, TF_EIO, errno, "%s: read failed",
			              r->name);
			return -1;
		}
	}
}

/* Uncompressed bytes into dst; 0 at the end, -1 on error. */
static ssize_t
stream_read(struct tf_reader *r, uint8_t *dst, size_t n)
{
	if (r->compression == TF_COMPRESS_NONE) {
		return src_read(r, dst, n);
	}
	if (r->z_end) {
		return 0;
	}
	r->zs.next_out = dst;
	r->zs.avail_out = (uInt)(n > UINT_MAX ? UINT_MAX : n);
	while (r->zs.avail_out > 0) {
		if (r->zs.avail_in == 0 && !r->src_eof) {
			ssize_t k = src_read(r, r->zin, r->zin_cap);
			if (k < 0) {
				return -1;
			}
			if (k == 0) {
				r->src_eof = 1;
			}
			r->zs.next_in = r->zin;
			r->zs.avail_in = (uInt)k;
		}
		int rc = inflate(&r->zs, Z_NO_FLUSH);
		if (rc == Z_STREAM_END) {
			/* Concatenated gzip members: restart after each. */
			if (r->zs.avail_in == 0 && r->src_eof) {
				r->z_end = 1;
				break;
			}
			if (r->zs.avail_in == 0) {
				ssize_t k = src_read(r, r->zin, r->zin_cap);
				if (k < 0) {
					return -1;
				}
				if (k == 0) {
					r->src_eof = 1;
					r->z_end = 1;
					break;
				}
				r->zs.next_in = r->zin;
				r->zs.avail_in = (uInt)k;
			}
			inflateReset(&r->zs);
			continue;
		}
		if (rc == Z_BUF_ERROR && r->src_eof && r->zs.avail_in == 0) {
			if (r->zs.avail_out < n) {
				break; /* deliver what we have first */
			}
			tfi_set_error(r, TF_EFORMAT,
			              "%s: inflate() failed: compressed stream "
			              "ends early",
			              r->name);
			return -1;
		}
		if (rc != Z_OK && rc != Z_BUF_ERROR) {
			tfi_set_error(r, TF_EFORMAT,
			              "%s: inflate() failed with error %d: %s",
			              r->name, rc,
			              r->zs.msg ? r->zs.msg : zError(rc));
			return -1;
		}
	}
	return (ssize_t)(n - r->zs.avail_out);
}

/* Make the window hold at least need bytes; returns the bytes held, or -1. */
static ssize_t
fill(struct tf_reader *r, size_t need)
{
	while (r->end - r->start < need) {
		if (r->cap - r->start < need) {
			if (r->start > 0) {
				memmove(r->buf, r->buf + r->start,
				        r->end - r->start);
				r->end -= r->start;
				r->start = 0;
			}
			if (r->cap < need) {
				size_t cap = need + CHUNK;
				uint8_t *p = realloc(r->buf, cap);
				if (p == NULL) {
					tfi_set_error(r, TF_ENOMEM,
					              "%s: out of memory for a "
					              "%zu-byte record",
					              r->name, need);
					return -1;
				}
				r->buf = p;
				r->cap = cap;
			}
		}
		size_t room = r->cap - r->end;
		if (room > CHUNK && r->end - r->start + CHUNK >= need) {
			room = CHUNK;
		}
		if (r->readahead > 0 &&
		    room > need - (r->end - r->start) + r->readahead) {
			room = need - (r->end - r->start) + r->readahead;
		}
		ssize_t k = stream_read(r, r->buf + r->end, room);
		if (k == -2) {
			r->again = 1; /* a followed input: more later */
			break;
		}
		if (k < 0) {
			return -1;
		}
		if (k == 0) {
			break;
		}
		r->end += (size_t)k;
	}
	return (ssize_t)(r->end - r->start);
}

/* Choose the compression on the first read (FORMATS.md 1.4). */
static int
detect(struct tf_reader *r)
{
	r->detected = 1;
	if (r->compression == TF_COMPRESS_NONE) {
		return TF_OK;
	}
	int want = r->compression;
	if (want == TF_COMPRESS_AUTO) {
		r->compression = TF_COMPRESS_NONE;
		ssize_t k = fill(r, 12);
		if (k < 0) {
			return r->err.code;
		}
		const uint8_t *p = r->buf + r->start;
		if (k >= 12 &&
		    tf_crc32c_mask(tf_crc32c(p, 8)) == tfi_get_le32(p + 8)) {
			return TF_OK; /* a valid plain record header */
		}
		if (k >= 2 && p[0] == 0x1f && p[1] == 0x8b) {
			want = TF_COMPRESS_GZIP;
		} else if (k >= 2 && (p[0] & 0x0f) == 8 &&
		           ((p[0] << 8) | p[1]) % 31 == 0) {
			want = TF_COMPRESS_ZLIB;
		} else {
			return TF_OK;
		}
	}
	/* Hand bytes already read to inflate as its first input. */
	r->zin_cap = CHUNK;
	size_t have = r->end - r->start;
	r->zin = malloc(r->zin_cap > have ? r->zin_cap : have);
	if (r->zin == NULL) {
		return tfi_set_error(r, TF_ENOMEM, "out of memory");
	}
	if (have > r->zin_cap) {
		r->zin_cap = have;
	}
	memcpy(r->zin, r->buf + r->start, have);
	r->start = r->end = 0;
	memset(&r->zs, 0, sizeof r->zs);
	r->zs.next_in = r->zin;
	r->zs.avail_in = (uInt)have;
	if (inflateInit2(&r->zs, want == TF_COMPRESS_GZIP ? 15 + 16 : 15) !=
	    Z_OK) {
		return tfi_set_error(r, TF_ENOMEM, "inflateInit failed");
	}
	r->z_init = 1;
	r->compression = want;
	return TF_OK;
}

static const char *
first_hint(uint64_t off)
{
	return off == 0 ? " (Is this even a TFRecord file?)" : "";
}

/* Report damage: fail, or log and count it when skipping. */
static int
damage(struct tf_reader *r, int code, const char *fmt, ...)
{
	char msg[TFI_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (!r->skip_corrupt) {
		r->failed = 1;
		return tfi_set_error(r, code, "%s", msg);
	}
	if (!r->resyncing) {
		r->skipped++;
		tfi_json_put(&r->skip_log, msg, strlen(msg)); /* NUL-kept */
		tfi_json_put(&r->skip_log, "\n", 1);
	}
	return TF_OK;
}

static void
consume(struct tf_reader *r, size_t n)
{
	r->start += n;
	r->pos += n;
}

/*
 * A record not whole yet: TF_EAGAIN.  A queue's reader lets go of the
 * part it has and reads it again from its start next time, so a tail a
 * crashed writer left, cut off when it starts again and appends anew,
 * is never joined to what follows.
 */
static int
again(struct tf_reader *r)
{
	if (r->queue && r->end > r->start && r->fd >= 0) {
		uint64_t in = r->pos & (((uint64_t)1 << TFI_QUEUE_SHIFT) - 1);
		if (lseek(r->fd, (off_t)in, SEEK_SET) >= 0) {
			r->start = r->end = 0;
		}
	}
	return TF_EAGAIN;
}

/* The rest of an over-long record skipped, in pieces (TF_EOF when the
 * input ends first; a followed input's "not yet" keeps the count). */
static int
skip_bytes(struct tf_reader *r)
{
	while (r->skip_left > 0) {
		size_t step = r->skip_left > CHUNK ? CHUNK : r->skip_left;
		ssize_t got = fill(r, step);
		if (got < 0) {
			r->failed = 1;
			return r->err.code;
		}
		size_t take = (size_t)got < step ? (size_t)got : step;
		consume(r, take);
		r->skip_left -= take;
		if (take < step) {
			if (r->again) {
				return TF_EAGAIN;
			}
			r->skip_left = 0;
			return TF_EOF;
		}
	}
	return TF_OK;
}

int
tf_reader_seek(struct tf_reader *r, uint64_t offset, uint64_t count)
{
	if (r->buf == NULL) {
		return tfi_set_error(r, TF_EINVAL, "reader is not open");
	}
	if (!r->detected && detect(r) != TF_OK) {
		r->failed = 1;
		return r->err.code;
	}
	if (r->compression != TF_COMPRESS_NONE) {
		return tfi_set_error(r, TF_EINVAL,
		                     "%s: a compressed file is read from its "
		                     "start",
		                     r->name);
	}
	if (offset >= r->pos && offset - r->pos <= r->end - r->start) {
		consume(r, (size_t)(offset - r->pos)); /* in the window */
		r->count = count;
		return TF_OK;
	}
	if (r->queue) {
		/* the segment the offset names, opened there */
		r->seg = offset >> TFI_QUEUE_SHIFT;
		if (queue_open(r, 1) < 0) {
			return r->err.code;
		}
		if (lseek(r->fd,
		          (off_t)(offset &
		                  (((uint64_t)1 << TFI_QUEUE_SHIFT) - 1)),
		          SEEK_SET) < 0) {
			return tfi_set_errno(r, TF_EINVAL, errno,
			                     "%s: cannot seek", r->name);
		}
	} else if (r->mem != NULL) {
		if (offset > r->mem_len) {
			return tfi_set_error(
			    r, TF_EINVAL, "%s: offset %llu is past the end",
			    r->name, (unsigned long long)offset);
		}
		r->mem_pos = (size_t)offset;
	} else if (lseek(r->fd, (off_t)offset, SEEK_SET) < 0) {
		return tfi_set_errno(r, TF_EINVAL, errno, "%s: cannot seek",
		                     r->name);
	}
	r->start = r->end = 0;
	r->pos = offset;
	r->count = count;
	r->src_eof = 0;
	r->resyncing = 0;
	r->failed = 0;
	return TF_OK;
}

void
tfi_reader_set_readahead(struct tf_reader *r, size_t bytes)
{
	r->readahead = bytes;
}

uint64_t
tf_reader_tell(const struct tf_reader *r)
{
	return r->pos;
}

int
tf_reader_next(struct tf_reader *r, const uint8_t **data, size_t *len)
{
	if (r->failed || r->err.code != TF_OK) {
		return r->err.code ? r->err.code : TF_EINTERNAL;
	}
	if (r->buf == NULL) {
		return tfi_set_error(r, TF_EINVAL, "reader is not open");
	}
	if (!r->detected && detect(r) != TF_OK) {
		r->failed = 1;
		return r->err.code;
	}
	r->again = 0;
	for (;;) {
		int skipped = r->skip_left > 0 ? skip_bytes(r) : TF_OK;
		if (skipped != TF_OK) {
			return skipped;
		}
		ssize_t k = fill(r, 12);
		uint64_t at = r->pos; /* after the fill: a queue may move on */
		if (k < 0) {
			r->failed = 1;
			return r->err.code;
		}
		if (k < 12 && r->again) {
			return again(r); /* the rest is still being written */
		}
		if (k == 0) {
			return TF_EOF;
		}
		if (k < 12) {
			int rc = damage(r, TF_EFORMAT,
			                "%s: record %llu: truncated record at "
			                "%llu%s",
			                r->name, (unsigned long long)r->count,
			                (unsigned long long)at, first_hint(at));
			if (rc != TF_OK) {
				return rc;
			}
			consume(r, (size_t)k);
			return TF_EOF;
		}
		const uint8_t *h = r->buf + r->start;
		uint64_t n = tfi_get_le64(h);
		if (tf_crc32c_mask(tf_crc32c(h, 8)) != tfi_get_le32(h + 8)) {
			int rc = damage(r, TF_EFORMAT,
			                "%s: record %llu: corrupted record at "
			                "%llu (length checksum mismatch)%s",
			                r->name, (unsigned long long)r->count,
			                (unsigned long long)at, first_hint(at));
			if (rc != TF_OK) {
				return rc;
			}
			r->resyncing = 1; /* look for the next good header */
			consume(r, 1);
			continue;
		}
		if (n > r->max_record) {
			int rc = damage(r, TF_ETOOBIG,
			                "%s: record %llu at %llu: record size "
			                "too large (%llu bytes; the limit is "
			                "%zu)",
			                r->name, (unsigned long long)r->count,
			                (unsigned long long)at,
			                (unsigned long long)n, r->max_record);
			if (rc != TF_OK) {
				return rc;
			}
			r->resyncing = 0;
			/* The length is trusted: skip its bytes in pieces. */
			r->skip_left = n + 16;
			continue;
		}
		size_t need = (size_t)n + 16;
		k = fill(r, need);
		if (k < 0) {
			r->failed = 1;
			return r->err.code;
		}
		if ((size_t)k < need && r->again) {
			return again(r);
		}
		if ((size_t)k < need) {
			int rc = damage(r, TF_EFORMAT,
			                "%s: record %llu: truncated record at "
			                "%llu%s",
			                r->name, (unsigned long long)r->count,
			                (unsigned long long)at, first_hint(at));
			if (rc != TF_OK) {
				return rc;
			}
			consume(r, (size_t)k);
			return TF_EOF;
		}
		h = r->buf + r->start;
		if (tf_crc32c_mask(tf_crc32c(h + 12, (size_t)n)) !=
		    tfi_get_le32(h + 12 + n)) {
			int rc = damage(r, TF_EFORMAT,
			                "%s: record %llu: corrupted record at "
			                "%llu (data checksum mismatch)%s",
			                r->name, (unsigned long long)r->count,
			                (unsigned long long)(at + 12),
			                first_hint(at));
			if (rc != TF_OK) {
				return rc;
			}
			r->resyncing = 0;
			consume(r, need);
			continue;
		}
		r->resyncing = 0;
		r->offset = at;
		r->count++;
		*data = h + 12;
		*len = (size_t)n;
		consume(r, need);
		return TF_OK;
	}
}

/* ---- writer ---------------------------------------------------------- */

struct tf_writer {
	struct tfi_handle err;
	char *name;
	struct tfi_out out; /* a file being published (fd -1 for an fd) */
	int fd;             /* out.fd, or the caller's */
	int flags;
	int compression;
	int level;
	z_stream zs;
	int z_init;
	uint8_t *buf; /* framed records not yet written */
	size_t out_len;
	uint8_t *zout;
	uint64_t count, bytes;
	int failed;
	int closed;
};

struct tf_writer *
tf_writer_new(void)
{
	struct tf_writer *w = calloc(1, sizeof *w);
	if (w != NULL) {
		w->fd = w->out.fd = -1;
		w->level = Z_DEFAULT_COMPRESSION;
	}
	return w;
}

static void
writer_release(struct tf_writer *w)
{
	tfi_out_abort(&w->out); /* closes it and removes the temporary */
	w->fd = -1;
	if (w->z_init) {
		deflateEnd(&w->zs);
		w->z_init = 0;
	}
	free(w->name);
	free(w->buf);
	free(w->zout);
	w->name = NULL;
	w->buf = w->zout = NULL;
}

void
tf_writer_free(struct tf_writer *w)
{
	if (w != NULL) {
		writer_release(w);
		free(w);
	}
}

void
tf_writer_set_level(struct tf_writer *w, int level)
{
	w->level = level;
}

const char *
tf_writer_temp_path(const struct tf_writer *w)
{
	return w->out.tmp;
}

uint64_t
tf_writer_count(const struct tf_writer *w)
{
	return w->count;
}

uint64_t
tf_writer_bytes(const struct tf_writer *w)
{
	return w->bytes;
}

static int
writer_start(struct tf_writer *w, const char *name, int compression)
{
	if (compression < TF_COMPRESS_NONE || compression > TF_COMPRESS_GZIP) {
		return tfi_set_error(w, TF_EINVAL, "%s: bad compression %d",
		                     name, compression);
	}
	w->name = strdup(name);
	w->buf = malloc(CHUNK);
	if (w->name == NULL || w->buf == NULL) {
		return tfi_set_error(w, TF_ENOMEM, "out of memory");
	}
	w->compression = compression;
	if (compression != TF_COMPRESS_NONE) {
		w->zout = malloc(CHUNK);
		if (w->zout == NULL) {
			return tfi_set_error(w, TF_ENOMEM, "out of memory");
		}
		/* TensorFlow's defaults: level 6, memLevel 9. */
		int bits = compression == TF_COMPRESS_GZIP ? 15 + 16 : 15;
		if (deflateInit2(&w->zs, w->level, Z_DEFLATED, bits, 9,
		                 Z_DEFAULT_STRATEGY) != Z_OK) {
			return tfi_set_error(w, TF_EINVAL,
			                     "%s: deflateInit failed", name);
		}
		w->z_init = 1;
	}
	return TF_OK;
}

int
tf_writer_open_fd(struct tf_writer *w, int fd, const char *name,
                  int compression)
{
	writer_release(w);
	w->fd = fd;
	w->failed = w->closed = 0;
	w->count = w->bytes = 0;
	return writer_start(w, name ? name : "(fd)", compression);
}

int
tf_writer_open(struct tf_writer *w, const char *path, int compression,
               int flags)
{
	if (path == NULL || strcmp(path, "-") == 0) {
		return tf_writer_open_fd(w, 1, "(stdout)", compression);
	}
	writer_release(w);
	w->failed = w->closed = 0;
	w->count = w->bytes = 0;
	w->flags = flags;
	/* A temporary beside path, renamed over it on close (a device or
	 * FIFO is written directly). */
	if (tfi_out_open(&w->out, path) != 0) {
		int e = errno;
		tfi_out_abort(&w->out);
		return tfi_set_errno(w, TF_ECREATE, e, "cannot create '%s'",
		                     path);
	}
	w->fd = w->out.fd;
	return writer_start(w, path, compression);
}

static int
write_all(struct tf_writer *w, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t k = write(w->fd, p, n);
		if (k < 0) {
			if (errno == EINTR) {
				continue;
			}
			w->failed = 1;
			return tfi_set_errno(w, TF_EIO, errno,
			                     "%s: write failed", w->name);
		}
		p += k;
		n -= (size_t)k;
	}
	return TF_OK;
}

/* Push n bytes of framed data to the file, through deflate if set. */
static int
emit(struct tf_writer *w, const uint8_t *p, size_t n, int flush)
{
	if (w->compression == TF_COMPRESS_NONE) {
		return write_all(w, p, n);
	}
	w->zs.next_in = (Bytef *)p;
	w->zs.avail_in = (uInt)n;
	for (;;) {
		w->zs.next_out = w->zout;
		w->zs.avail_out = (uInt)CHUNK;
		int rc = deflate(&w->zs, flush);
		if (rc == Z_STREAM_ERROR) {
			w->failed = 1;
			return tfi_set_error(w, TF_EINTERNAL,
			                     "%s: deflate failed", w->name);
		}
		size_t have = CHUNK - w->zs.avail_out;
		if (have > 0 && write_all(w, w->zout, have) != TF_OK) {
			return TF_EIO;
		}
		if (flush == Z_FINISH ? rc == Z_STREAM_END
		                      : w->zs.avail_out != 0) {
			break;
		}
	}
	return TF_OK;
}

int
tf_writer_flush(struct tf_writer *w)
{
	if (w->failed) {
		return w->err.code;
	}
	if (w->out_len > 0) {
		int rc = emit(w, w->buf, w->out_len, Z_NO_FLUSH);
		w->out_len = 0;
		return rc;
	}
	return TF_OK;
}

static int
writer_check(struct tf_writer *w)
{
	if (w->failed) {
		return w->err.code ? w->err.code : TF_EIO;
	}
	if (w->buf == NULL || w->closed) {
		return tfi_set_error(w, TF_EINVAL, "writer is not open");
	}
	return TF_OK;
}

int
tf_writer_write_framed(struct tf_writer *w, const void *bytes, size_t n,
                       uint64_t count)
{
	int rc = writer_check(w);
	if (rc != TF_OK) {
		return rc;
	}
	w->count += count;
	w->bytes += n;
	if (n >= CHUNK) {
		rc = tf_writer_flush(w);
		return rc != TF_OK ? rc : emit(w, bytes, n, Z_NO_FLUSH);
	}
	if (CHUNK - w->out_len < n && (rc = tf_writer_flush(w)) != TF_OK) {
		return rc;
	}
	memcpy(w->buf + w->out_len, bytes, n);
	w->out_len += n;
	return TF_OK;
}

int
tf_writer_write(struct tf_writer *w, const void *data, size_t n)
{
	int rc = writer_check(w);
	if (rc != TF_OK) {
		return rc;
	}
	if (n + 16 > CHUNK) {
		/* Large record: frame it in three pieces, no copy of data. */
		uint8_t head[12], foot[4];
		tfi_put_le64(head, (uint64_t)n);
		tfi_put_le32(head + 8, tf_crc32c_mask(tf_crc32c(head, 8)));
		tfi_put_le32(foot, tf_crc32c_mask(tf_crc32c(data, n)));
		if ((rc = tf_writer_flush(w)) != TF_OK ||
		    (rc = emit(w, head, 12, Z_NO_FLUSH)) != TF_OK ||
		    (rc = emit(w, data, n, Z_NO_FLUSH)) != TF_OK ||
		    (rc = emit(w, foot, 4, Z_NO_FLUSH)) != TF_OK) {
			return rc;
		}
		w->count++;
		w->bytes += n + 16;
		return TF_OK;
	}
	if (CHUNK - w->out_len < n + 16 && (rc = tf_writer_flush(w)) != TF_OK) {
		return rc;
	}
	tf_record_frame(w->buf + w->out_len, data, n);
	w->out_len += n + 16;
	w->count++;
	w->bytes += n + 16;
	return TF_OK;
}

int
tf_writer_close(struct tf_writer *w)
{
	int rc = writer_check(w);
	if (rc != TF_OK) {
		return rc;
	}
	if ((rc = tf_writer_flush(w)) != TF_OK) {
		return rc;
	}
	if (w->compression != TF_COMPRESS_NONE &&
	    (rc = emit(w, NULL, 0, Z_FINISH)) != TF_OK) {
		return rc;
	}
	w->closed = 1;
	if (w->out.path == NULL) {
		return TF_OK; /* the caller's descriptor */
	}
	w->fd = -1;
	if (tfi_out_commit(&w->out, w->flags & TF_WRITER_SYNC) != 0) {
		w->failed = 1;
		return tfi_set_errno(w, TF_EIO, errno, "%s: cannot publish",
		                     w->name);
	}
	return TF_OK;
}
