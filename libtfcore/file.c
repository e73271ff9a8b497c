/*
 * file.c - small files: read whole; replaced atomically (temporary
 * name, optional fsync, rename).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "tf/file.h"

int
tf_file_replace(const char *path, const void *data, size_t n, int flags,
                char *err, size_t errlen)
{
	size_t len = strlen(path) + 16;
	char *tmp = malloc(len);
	if (tmp == NULL) {
		snprintf(err, errlen, "out of memory");
		return TF_ENOMEM;
	}
	snprintf(tmp, len, "%s.tmp.XXXXXX", path);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create '%s': %s", path,
		         strerror(errno));
		free(tmp);
		return TF_ECREATE;
	}
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	int ok = write(fd, data, n) == (ssize_t)n &&
	         (!(flags & TF_FILE_SYNC) || fsync(fd) == 0);
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, path) != 0) {
		snprintf(err, errlen, "cannot write '%s': %s", path,
		         strerror(errno));
		unlink(tmp);
		free(tmp);
		return TF_EIO;
	}
	free(tmp);
	return TF_OK;
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
