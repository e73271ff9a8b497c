/*
 * record.h - reading and writing TFRecord files (FORMATS.md section 1).
 *
 * A record is: uint64 length, masked CRC-32C of the length, the data, masked
 * CRC-32C of the data.  Files may be compressed as one GZIP or ZLIB stream,
 * exactly as TensorFlow's TFRecordWriter writes them.
 *
 * Readers report damage the way TensorFlow does ("truncated record at N",
 * "corrupted record at N") with the file name, the record index and the byte
 * offset in the uncompressed stream.  They can instead skip damaged records
 * and count them.  A record longer than the reader's ceiling is an error, so
 * a corrupt length never causes a huge allocation.
 */
#ifndef TF_RECORD_H
#define TF_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "tf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tf_compression {
	TF_COMPRESS_AUTO = -1, /* reader only: detect GZIP/ZLIB by magic */
	TF_COMPRESS_NONE = 0,
	TF_COMPRESS_ZLIB = 1,
	TF_COMPRESS_GZIP = 2
};

/* Framing overhead: 12-byte header and 4-byte footer. */
#define TF_RECORD_OVERHEAD 16
/* Default ceiling on one record's data: 256 MiB. */
#define TF_RECORD_MAX_DEFAULT ((size_t)256 << 20)

/* Parse "none", "gzip", "zlib" (any case, "" = none); -1 if unknown. */
TF_API int tf_compression_parse(const char *name);
TF_API const char *tf_compression_name(int compression);

/* Frame one record into out (which must hold n + 16 bytes). */
TF_API void tf_record_frame(uint8_t *out, const void *data, size_t n);

/* ---- reader ---------------------------------------------------------- */

struct tf_reader;

/* A new reader; NULL only when out of memory. */
TF_API struct tf_reader *tf_reader_new(void);
TF_API void tf_reader_free(struct tf_reader *r);

/* Largest record data accepted (default TF_RECORD_MAX_DEFAULT). */
TF_API void tf_reader_set_max_record(struct tf_reader *r, size_t max);
/* When on, damaged records are skipped and counted instead of failing. */
TF_API void tf_reader_set_skip_corrupt(struct tf_reader *r, int on);

/*
 * Follow the input as it grows, as tail -F does (set before opening; 0
 * turns it off): an end of the input for now is TF_EAGAIN from
 * tf_reader_next() once wait_ms have passed without bytes (a pipe's
 * writer closing it is still TF_EOF), and the record a writer is halfway
 * through is read whole on a later call.  A followed file replaced
 * (another inode at its path) or truncated is read again from its
 * start.  Records are read uncompressed.
 */
TF_API void tf_reader_set_follow(struct tf_reader *r, int wait_ms);

/*
 * Open a file ("-" = standard input).  compression is a tf_compression
 * value; TF_COMPRESS_AUTO detects GZIP and ZLIB.  TF_ENOENT when the file
 * cannot be opened.
 */
TF_API int tf_reader_open(struct tf_reader *r, const char *path,
                          int compression);
/* Read from fd (not closed by the reader); name is used in messages. */
TF_API int tf_reader_open_fd(struct tf_reader *r, int fd, const char *name,
                             int compression);
/* Read from memory (not copied; must outlive the reader). */
TF_API int tf_reader_open_mem(struct tf_reader *r, const void *data, size_t n,
                              const char *name, int compression);

/*
 * The next record.  On TF_OK, *data and *len view the record's bytes, owned by
 * the reader and valid until the next call.  TF_EOF at a clean end;
 * TF_EFORMAT for damage, TF_ETOOBIG for an over-long record, TF_EIO for a
 * read error.  After an error the reader stays failed.
 */
TF_API int tf_reader_next(struct tf_reader *r, const uint8_t **data,
                          size_t *len);

/* Byte offset (uncompressed) of the record last returned. */
TF_API uint64_t tf_reader_offset(const struct tf_reader *r);
/* The offset of the next record (the end of the last one returned). */
TF_API uint64_t tf_reader_tell(const struct tf_reader *r);
/* Continue reading at offset, a record's start that an earlier reading
 * of the same file gave by tf_reader_tell() or tf_reader_offset(), as
 * record number count.  TF_EINVAL for compressed files and pipes, which
 * read from their start only. */
TF_API int tf_reader_seek(struct tf_reader *r, uint64_t offset, uint64_t count);
/* Records returned so far. */
TF_API uint64_t tf_reader_count(const struct tf_reader *r);
/* Damaged records skipped so far (with skip_corrupt on). */
TF_API uint64_t tf_reader_skipped(const struct tf_reader *r);
/* The compression in use (after detection), once the first record is read. */
TF_API int tf_reader_compression(const struct tf_reader *r);
/* Messages of the skipped records, one per line ("" if none). */
TF_API const char *tf_reader_skip_log(const struct tf_reader *r);

/* ---- writer ---------------------------------------------------------- */

struct tf_writer;

TF_API struct tf_writer *tf_writer_new(void);
/* Frees; an output not closed successfully is removed. */
TF_API void tf_writer_free(struct tf_writer *w);

/* Flags for tf_writer_open. */
#define TF_WRITER_SYNC 1 /* fsync before the rename */

/*
 * Create path ("-" or NULL = standard output).  The data goes to a
 * temporary file in the same directory that tf_writer_close() renames to
 * path, so readers never see a partial file.  TF_ECREATE on failure.
 */
TF_API int tf_writer_open(struct tf_writer *w, const char *path,
                          int compression, int flags);
/* Write to fd (not closed); name is used in messages. */
TF_API int tf_writer_open_fd(struct tf_writer *w, int fd, const char *name,
                             int compression);
/* Set the deflate level (0-9, default 6 as in TensorFlow). */
TF_API void tf_writer_set_level(struct tf_writer *w, int level);

/* Frame and write one record. */
TF_API int tf_writer_write(struct tf_writer *w, const void *data, size_t n);
/* Write bytes that are already framed records (count = how many). */
TF_API int tf_writer_write_framed(struct tf_writer *w, const void *bytes,
                                  size_t n, uint64_t count);
/* Flush buffered data (and finish no stream). */
TF_API int tf_writer_flush(struct tf_writer *w);
/* Finish the stream, flush, and rename into place. */
TF_API int tf_writer_close(struct tf_writer *w);

/* The temporary file being written (NULL for an fd or once renamed), so a
 * signal handler can unlink(2) it. */
TF_API const char *tf_writer_temp_path(const struct tf_writer *w);

TF_API uint64_t tf_writer_count(const struct tf_writer *w);
/* Bytes of framed (uncompressed) records written. */
TF_API uint64_t tf_writer_bytes(const struct tf_writer *w);

#ifdef __cplusplus
}
#endif
#endif
