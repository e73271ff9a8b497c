/*
 * error.c - status names, per-handle error messages, and the small growable
 * buffer every module uses.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#include "internal.h"

#ifndef TF_VERSION
#define TF_VERSION "0.0.0"
#endif

const char *
tf_version(void)
{
	return TF_VERSION;
}

const char *
tf_strerror(int code)
{
	switch (code) {
	case TF_OK:
		return "success";
	case TF_EOF:
		return "end of stream";
	case TF_ENOMEM:
		return "out of memory";
	case TF_EINVAL:
		return "invalid argument";
	case TF_EIO:
		return "input/output error";
	case TF_ENOENT:
		return "no such input";
	case TF_EFORMAT:
		return "corrupt or malformed data";
	case TF_ETOOBIG:
		return "size exceeds limit";
	case TF_ECREATE:
		return "cannot create output";
	case TF_EINTERNAL:
		return "internal error";
	case TF_EUNAVAIL:
		return "a peer is unavailable";
	case TF_EAGAIN:
		return "nothing yet, try again";
	default:
		return "unknown error";
	}
}

int
tf_exit_code(int code)
{
	switch (code) {
	case TF_OK:
	case TF_EOF:
		return 0;
	case TF_EINVAL:
		return EX_USAGE;
	case TF_ENOENT:
		return EX_NOINPUT;
	case TF_EFORMAT:
	case TF_ETOOBIG:
		return EX_DATAERR;
	case TF_ECREATE:
		return EX_CANTCREAT;
	case TF_EIO:
		return EX_IOERR;
	case TF_EUNAVAIL:
		return EX_UNAVAILABLE;
	case TF_EAGAIN:
		return EX_TEMPFAIL;
	default:
		return EX_SOFTWARE;
	}
}

const char *
tf_errmsg(const void *handle)
{
	const struct tfi_handle *h = handle;
	if (h == NULL) {
		return "out of memory";
	}
	return h->msg;
}

int
tf_errcode(const void *handle)
{
	const struct tfi_handle *h = handle;
	return h == NULL ? TF_ENOMEM : h->code;
}

void
tf_errclear(void *handle)
{
	struct tfi_handle *h = handle;
	if (h != NULL) {
		h->code = TF_OK;
		h->msg[0] = '\0';
	}
}

int
tfi_set_errorv(void *handle, int code, const char *fmt, va_list ap)
{
	struct tfi_handle *h = handle;
	if (h == NULL || h->code != TF_OK) {
		return code;
	}
	h->code = code;
	vsnprintf(h->msg, sizeof h->msg, fmt, ap);
	return code;
}

int
tfi_set_error(void *h, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tfi_set_errorv(h, code, fmt, ap);
	va_end(ap);
	return code;
}

int
tfi_set_errno(void *handle, int code, int err, const char *fmt, ...)
{
	struct tfi_handle *h = handle;
	va_list ap;
	if (h == NULL || h->code != TF_OK) {
		return code;
	}
	va_start(ap, fmt);
	tfi_set_errorv(h, code, fmt, ap);
	va_end(ap);
	size_t n = strlen(h->msg);
	snprintf(h->msg + n, sizeof h->msg - n, ": %s", strerror(err));
	return code;
}

int
tfi_buf_reserve(struct tfi_buf *b, size_t extra)
{
	if (b->cap - b->len >= extra) {
		return TF_OK;
	}
	size_t cap = b->cap ? b->cap : 256;
	while (cap - b->len < extra) {
		if (cap > SIZE_MAX / 2) {
			return TF_ENOMEM;
		}
		cap *= 2;
	}
	uint8_t *p = realloc(b->data, cap);
	if (p == NULL) {
		return TF_ENOMEM;
	}
	b->data = p;
	b->cap = cap;
	return TF_OK;
}

int
tfi_buf_append(struct tfi_buf *b, const void *p, size_t n)
{
	if (n == 0) {
		return TF_OK;
	}
	if (tfi_buf_reserve(b, n) != TF_OK) {
		return TF_ENOMEM;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return TF_OK;
}

void
tfi_buf_free(struct tfi_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

double
tfi_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
