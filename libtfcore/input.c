/*
 * input.c - named byte streams over plain files, stdin and libarchive.
 *
 * A plain file is read with read(2).  Anything whose first bytes look like
 * a compressed file or an archive goes through libarchive: archive formats
 * yield their matching members, a bare compressed file yields one stream
 * (libarchive's "raw" format).
 */
#include <archive.h>
#include <archive_entry.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "tf/input.h"

#define PEEK 512

struct tf_input {
	struct tfi_handle err;
	char *path;
	int fd, own_fd;
	const unsigned char *mem;
	size_t mem_len, mem_pos;
	unsigned char peek[PEEK];
	unsigned char *block; /* libarchive's read buffer */
	size_t peek_len, peek_pos;
	struct archive *ar;
	int raw_format; /* compressed single file */
	int started;    /* plain input: stream handed out */
	int stream_open;
	char *name;
	char **globs;
	size_t nglobs;
	unsigned streams;
};

struct tf_input *
tf_input_new(void)
{
	struct tf_input *in = calloc(1, sizeof *in);
	if (in != NULL) {
		in->fd = -1;
	}
	return in;
}

static void
input_close(struct tf_input *in)
{
	if (in->ar != NULL) {
		archive_read_free(in->ar);
		in->ar = NULL;
	}
	if (in->own_fd && in->fd >= 0) {
		close(in->fd);
	}
	in->fd = -1;
	in->own_fd = 0;
	in->mem = NULL;
	free(in->path);
	free(in->name);
	in->path = in->name = NULL;
	in->peek_len = in->peek_pos = 0;
	in->started = in->stream_open = in->raw_format = 0;
}

void
tf_input_free(struct tf_input *in)
{
	if (in == NULL) {
		return;
	}
	input_close(in);
	for (size_t i = 0; i < in->nglobs; i++) {
		free(in->globs[i]);
	}
	free(in->globs);
	free(in->block);
	free(in);
}

unsigned
tf_input_streams(const struct tf_input *in)
{
	return in->streams;
}

int
tf_input_add_member_glob(struct tf_input *in, const char *glob)
{
	char **g = realloc(in->globs, (in->nglobs + 1) * sizeof *g);
	if (g == NULL) {
		return tfi_set_error(in, TF_ENOMEM, "out of memory");
	}
	in->globs = g;
	if ((g[in->nglobs] = strdup(glob)) == NULL) {
		return tfi_set_error(in, TF_ENOMEM, "out of memory");
	}
	in->nglobs++;
	return TF_OK;
}

/* Raw bytes from the underlying file or buffer. */
static ssize_t
raw_read(struct tf_input *in, void *buf, size_t n)
{
	if (in->mem != NULL) {
		size_t k = in->mem_len - in->mem_pos;
		k = k < n ? k : n;
		memcpy(buf, in->mem + in->mem_pos, k);
		in->mem_pos += k;
		return (ssize_t)k;
	}
	for (;;) {
		ssize_t k = read(in->fd, buf, n);
		if (k >= 0 || errno != EINTR) {
			if (k < 0) {
				tfi_set_errno(in, TF_EIO, errno,
				              "%s: read failed", in->path);
			}
			return k;
		}
	}
}

/* Bytes for libarchive: the peeked prefix first, then the rest. */
static ssize_t
ar_read_cb(struct archive *a, void *data, const void **buf)
{
	(void)a;
	struct tf_input *in = data;
	if (in->peek_pos < in->peek_len) {
		*buf = in->peek + in->peek_pos;
		ssize_t k = (ssize_t)(in->peek_len - in->peek_pos);
		in->peek_pos = in->peek_len;
		return k;
	}
	*buf = in->block;
	return raw_read(in, in->block, 1 << 16);
}

static int
looks_compressed_or_archive(const unsigned char *p, size_t n)
{
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b) {
		return 1; /* gzip */
	}
	if (n >= 3 && memcmp(p, "BZh", 3) == 0) {
		return 1;
	}
	if (n >= 6 && memcmp(p,
	                     "\xfd"
	                     "7zXZ\0",
	                     6) == 0) {
		return 1;
	}
	if (n >= 4 && memcmp(p, "\x28\xb5\x2f\xfd", 4) == 0) {
		return 1; /* zstd */
	}
	if (n >= 4 && (memcmp(p, "PK\003\004", 4) == 0 ||
	               memcmp(p, "PK\005\006", 4) == 0)) {
		return 1; /* zip */
	}
	if (n >= 262 && memcmp(p + 257, "ustar", 5) == 0) {
		return 1;
	}
	if (n >= 6 && memcmp(p, "7z\xbc\xaf\x27\x1c", 6) == 0) {
		return 1;
	}
	return 0;
}

static int
start(struct tf_input *in, const char *name)
{
	in->path = strdup(name);
	if (in->path == NULL) {
		return tfi_set_error(in, TF_ENOMEM, "out of memory");
	}
	while (in->peek_len < PEEK) {
		ssize_t k =
		    raw_read(in, in->peek + in->peek_len, PEEK - in->peek_len);
		if (k < 0) {
			return TF_EIO;
		}
		if (k == 0) {
			break;
		}
		in->peek_len += (size_t)k;
	}
	if (!looks_compressed_or_archive(in->peek, in->peek_len)) {
		return TF_OK;
	}
	if (in->block == NULL) {
		in->block = malloc(1 << 16);
	}
	in->ar = archive_read_new();
	if (in->ar == NULL || in->block == NULL) {
		return tfi_set_error(in, TF_ENOMEM, "out of memory");
	}
	archive_read_support_filter_all(in->ar);
	/* Archives of files, and a compressed single file (raw).  Not every
	 * format: mtree's reader takes many a CSV header for its own text
	 * format, so `gzip data.csv` would read as no members. */
	archive_read_support_format_tar(in->ar);
	archive_read_support_format_zip(in->ar);
	archive_read_support_format_7zip(in->ar);
	archive_read_support_format_cpio(in->ar);
	archive_read_support_format_raw(in->ar);
	if (archive_read_open(in->ar, in, NULL, ar_read_cb, NULL) !=
	    ARCHIVE_OK) {
		return tfi_set_error(in, TF_EFORMAT, "%s: %s", name,
		                     archive_error_string(in->ar));
	}
	return TF_OK;
}

int
tf_input_open(struct tf_input *in, const char *path)
{
	input_close(in);
	tf_errclear(in);
	if (strcmp(path, "-") == 0) {
		in->fd = 0;
		return start(in, "(stdin)");
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return tfi_set_errno(in, TF_ENOENT, errno, "cannot open '%s'",
		                     path);
	}
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		return tfi_set_error(in, TF_ENOENT, "%s: is a directory", path);
	}
	in->fd = fd;
	in->own_fd = 1;
#ifdef POSIX_FADV_SEQUENTIAL
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
	return start(in, path);
}

int
tf_input_open_mem(struct tf_input *in, const void *data, size_t n,
                  const char *name)
{
	input_close(in);
	tf_errclear(in);
	in->mem = data;
	in->mem_len = n;
	return start(in, name ? name : "(memory)");
}

static int
member_wanted(const struct tf_input *in, const char *path)
{
	if (in->nglobs > 0) {
		for (size_t i = 0; i < in->nglobs; i++) {
			if (fnmatch(in->globs[i], path, 0) == 0) {
				return 1;
			}
		}
		return 0;
	}
	static const char *const ext[] = {".csv", ".tsv", ".txt", ".svm",
	                                  ".libsvm"};
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (base[0] == '.' || strncmp(path, "__MACOSX/", 9) == 0) {
		return 0;
	}
	size_t n = strlen(base);
	for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
		size_t k = strlen(ext[i]);
		if (n > k && strcasecmp(base + n - k, ext[i]) == 0) {
			return 1;
		}
	}
	return 0;
}

static int
set_name(struct tf_input *in, const char *member)
{
	free(in->name);
	size_t n = strlen(in->path) + (member ? strlen(member) : 0) + 2;
	in->name = malloc(n);
	if (in->name == NULL) {
		return tfi_set_error(in, TF_ENOMEM, "out of memory");
	}
	if (member != NULL) {
		snprintf(in->name, n, "%s:%s", in->path, member);
	} else {
		snprintf(in->name, n, "%s", in->path);
	}
	in->streams++;
	return TF_OK;
}

int
tf_input_next(struct tf_input *in, const char **name)
{
	if (in->path == NULL) {
		return tfi_set_error(in, TF_EINVAL, "input is not open");
	}
	if (in->ar == NULL) {
		if (in->started) {
			return TF_EOF;
		}
		in->started = in->stream_open = 1;
		if (set_name(in, NULL) != TF_OK) {
			return TF_ENOMEM;
		}
		*name = in->name;
		return TF_OK;
	}
	if (in->raw_format) {
		return TF_EOF;
	}
	for (;;) {
		struct archive_entry *e;
		int rc = archive_read_next_header(in->ar, &e);
		if (rc == ARCHIVE_EOF) {
			in->stream_open = 0;
			return TF_EOF;
		}
		if (rc < ARCHIVE_WARN) {
			return tfi_set_error(in, TF_EFORMAT, "%s: %s", in->path,
			                     archive_error_string(in->ar));
		}
		if (archive_format(in->ar) == ARCHIVE_FORMAT_RAW) {
			in->raw_format = 1;
			in->stream_open = 1;
			if (set_name(in, NULL) != TF_OK) {
				return TF_ENOMEM;
			}
			*name = in->name;
			return TF_OK;
		}
		const char *p = archive_entry_pathname(e);
		if (archive_entry_filetype(e) != AE_IFREG || p == NULL ||
		    !member_wanted(in, p)) {
			continue;
		}
		in->stream_open = 1;
		if (set_name(in, p) != TF_OK) {
			return TF_ENOMEM;
		}
		*name = in->name;
		return TF_OK;
	}
}

int
tf_input_read(struct tf_input *in, void *buf, size_t n, size_t *got)
{
	*got = 0;
	if (!in->stream_open) {
		return TF_OK;
	}
	if (in->ar != NULL) {
		la_ssize_t k = archive_read_data(in->ar, buf, n);
		if (k < 0) {
			return tfi_set_error(in, TF_EFORMAT, "%s: %s", in->name,
			                     archive_error_string(in->ar));
		}
		*got = (size_t)k;
		return TF_OK;
	}
	size_t k = 0;
	if (in->peek_pos < in->peek_len) {
		k = in->peek_len - in->peek_pos;
		k = k < n ? k : n;
		memcpy(buf, in->peek + in->peek_pos, k);
		in->peek_pos += k;
		if (k == n) {
			*got = k;
			return TF_OK;
		}
	}
	ssize_t r = raw_read(in, (char *)buf + k, n - k);
	if (r < 0) {
		return TF_EIO;
	}
	*got = k + (size_t)r;
	return TF_OK;
}
