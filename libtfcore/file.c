/*
 * file.c - the one publish step every output goes through, small files
 * read whole, and SHA-256.
 *
 * Publishing: an output is written under a temporary name beside its
 * final one (PATH.tmp.XXXXXX, same directory, so the rename is atomic),
 * optionally fsynced, renamed over PATH, and the directory fsynced so
 * the rename itself survives a crash.  Only a regular file is ever
 * replaced: when PATH names a device, a FIFO or a socket, the output is
 * written to it directly (a full device then fails like a full disk),
 * and nothing is renamed.
 */
#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "internal.h"
#include "tf/file.h"

int
tf_path_kind(const char *path)
{
	struct stat st;
	if (path == NULL || strcmp(path, "-") == 0) {
		return TF_PATH_SPECIAL; /* standard output */
	}
	if (stat(path, &st) != 0) {
		return TF_PATH_NONE;
	}
	return S_ISREG(st.st_mode)   ? TF_PATH_REGULAR
	       : S_ISDIR(st.st_mode) ? TF_PATH_DIR
	                             : TF_PATH_SPECIAL;
}

void
tfi_sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* fsync the directory that holds path. */
static void
sync_parent(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (slash == NULL) {
		tfi_sync_dir(".");
		return;
	}
	size_t n = slash == path ? 1 : (size_t)(slash - path);
	char *dir = strndup(path, n);
	if (dir != NULL) {
		tfi_sync_dir(dir);
		free(dir);
	}
}

/* A socket cannot be open(2)ed: connect to it as a stream. */
static int
open_socket(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof sa.sun_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int
tfi_out_open(struct tfi_out *o, const char *path)
{
	memset(o, 0, sizeof *o);
	o->fd = -1;
	o->path = strdup(path);
	if (o->path == NULL) {
		errno = ENOMEM;
		return -1;
	}
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) &&
	    !S_ISDIR(st.st_mode)) {
		/* A device, a FIFO or a socket: never replaced. */
		o->fd = S_ISSOCK(st.st_mode)
		            ? open_socket(path)
		            : open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
		return o->fd < 0 ? -1 : 0;
	}
	size_t n = strlen(path) + 16;
	o->tmp = malloc(n);
	if (o->tmp == NULL) {
		errno = ENOMEM;
		return -1;
	}
	snprintf(o->tmp, n, "%s.tmp.XXXXXX", path);
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	if (o->fd < 0) {
		int e = errno;
		free(o->tmp);
		o->tmp = NULL;
		errno = e;
		return -1;
	}
	/* mkstemp makes 0600; outputs get what the umask allows. */
	mode_t mask = umask(0);
	umask(mask);
	fchmod(o->fd, 0666 & ~mask);
	return 0;
}

int
tfi_out_write(struct tfi_out *o, const void *data, size_t n)
{
	const uint8_t *p = data;
	while (n > 0) {
		ssize_t k = write(o->fd, p, n);
		if (k < 0 && errno == EINTR) {
			continue;
		}
		if (k <= 0) {
			errno = k == 0 ? EIO : errno;
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int
tfi_out_commit(struct tfi_out *o, int sync)
{
	int ok = 1, e = 0;
	if (o->tmp != NULL && sync && fsync(o->fd) != 0) {
		ok = 0;
		e = errno;
	}
	if (o->fd >= 0 && close(o->fd) != 0 && ok) {
		ok = 0;
		e = errno;
	}
	o->fd = -1;
	if (ok && o->tmp != NULL) {
		if (rename(o->tmp, o->path) != 0) {
			ok = 0;
			e = errno;
		} else {
			free(o->tmp);
			o->tmp = NULL;
			if (sync) {
				sync_parent(o->path);
			}
		}
	}
	tfi_out_abort(o);
	errno = e;
	return ok ? 0 : -1;
}

void
tfi_out_abort(struct tfi_out *o)
{
	if (o->fd >= 0) {
		close(o->fd);
		o->fd = -1;
	}
	if (o->tmp != NULL) {
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
	free(o->path);
	o->path = NULL;
}

int
tf_file_replace(const char *path, const void *data, size_t n, int flags,
                char *err, size_t errlen)
{
	struct tfi_out o;
	if (tfi_out_open(&o, path) != 0) {
		snprintf(err, errlen, "cannot create '%s': %s", path,
		         strerror(errno));
		tfi_out_abort(&o);
		return TF_ECREATE;
	}
	if (tfi_out_write(&o, data, n) != 0 ||
	    tfi_out_commit(&o, flags & TF_FILE_SYNC) != 0) {
		snprintf(err, errlen, "cannot write '%s': %s", path,
		         strerror(errno));
		tfi_out_abort(&o);
		return TF_EIO;
	}
	return TF_OK;
}

struct tf_file_out {
	struct tfi_out o;
};

struct tf_file_out *
tf_file_out_open(const char *path)
{
	struct tf_file_out *f = malloc(sizeof *f);
	if (f == NULL) {
		return NULL;
	}
	if (tfi_out_open(&f->o, path) != 0) {
		int e = errno;
		tfi_out_abort(&f->o);
		free(f);
		errno = e;
		return NULL;
	}
	return f;
}

int
tf_file_out_fd(const struct tf_file_out *o)
{
	return o->o.fd;
}

const char *
tf_file_out_temp(const struct tf_file_out *o)
{
	return o->o.tmp;
}

int
tf_file_out_commit(struct tf_file_out *o, int flags)
{
	int rc = tfi_out_commit(&o->o, flags & TF_FILE_SYNC);
	int e = errno;
	free(o);
	errno = e;
	return rc;
}

void
tf_file_out_abort(struct tf_file_out *o)
{
	if (o != NULL) {
		tfi_out_abort(&o->o);
		free(o);
	}
}

void *
tf_file_read(const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0) {
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EISDIR;
		return NULL;
	}
	uint8_t *p = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (p != NULL && got < (size_t)st.st_size) {
		ssize_t k = read(fd, p + got, (size_t)st.st_size - got);
		if (k <= 0) {
			free(p);
			p = NULL;
			errno = k == 0 ? EIO : errno;
			break;
		}
		got += (size_t)k;
	}
	close(fd);
	if (p != NULL) {
		p[got] = '\0';
	}
	*size = got;
	return p;
}

void
tf_sha256_hex(const void *data, size_t n, char hex[65])
{
	struct sha256_ctx ctx;
	uint8_t d[SHA256_DIGEST_SIZE];
	sha256_init(&ctx);
	sha256_update(&ctx, n, data);
	sha256_digest(&ctx, sizeof d, d);
	for (int i = 0; i < SHA256_DIGEST_SIZE; i++) {
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	}
}
