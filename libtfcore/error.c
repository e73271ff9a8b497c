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

int
tfi_buf_put_le_floats(struct tfi_buf *b, const float *v, size_t n)
{
	if (n > SIZE_MAX / 4 || tfi_buf_reserve(b, 4 * n) != TF_OK) {
		return TF_ENOMEM;
	}
	b->len = (size_t)(tfi_put_le_floats(b->data + b->len, v, n) - b->data);
	return TF_OK;
}

void
tfi_buf_free(struct tfi_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void
tfi_base64_encode(char *dst, const uint8_t *s, size_t n)
{
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16;
		if (i + 1 < n) {
			v |= (uint32_t)s[i + 1] << 8;
		}
		if (i + 2 < n) {
			v |= s[i + 2];
		}
		*dst++ = b64_alphabet[v >> 18];
		*dst++ = b64_alphabet[(v >> 12) & 63];
		*dst++ = i + 1 < n ? b64_alphabet[(v >> 6) & 63] : '=';
		*dst++ = i + 2 < n ? b64_alphabet[v & 63] : '=';
	}
}

int
tfi_base64_decode(struct tfi_buf *b, const char *s, size_t n)
{
	if (tfi_buf_reserve(b, n / 4 * 3 + 3) != TF_OK) {
		return -1;
	}
	uint32_t acc = 0;
	int bits = 0;
	size_t i = 0;
	for (; i < n && s[i] != '='; i++) {
		char c = s[i];
		int d = c >= 'A' && c <= 'Z'   ? c - 'A'
		        : c >= 'a' && c <= 'z' ? c - 'a' + 26
		        : c >= '0' && c <= '9' ? c - '0' + 52
		        : c == '+' || c == '-' ? 62
		        : c == '/' || c == '_' ? 63
		                               : -1;
		if (d < 0) {
			return 1;
		}
		acc = acc << 6 | (uint32_t)d;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			b->data[b->len++] = (uint8_t)(acc >> bits);
		}
	}
	for (; i < n; i++) {
		if (s[i] != '=') {
			return 1;
		}
	}
	return 0;
}

double
tfi_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
