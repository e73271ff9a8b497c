/*
 * error.h - status codes and error messages shared by every libtfcore call.
 *
 * Functions return TF_OK (0), TF_EOF at the end of a stream, or one of the
 * TF_E* codes below.  The handle a function ran on carries a message naming
 * the file, record or byte offset; read it with tf_errmsg().  Codes are only
 * ever appended, never renumbered.
 */
#ifndef TF_ERROR_H
#define TF_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TF_BUILDING_LIBRARY)
#define TF_API __attribute__((visibility("default")))
#else
#define TF_API
#endif

enum tf_status {
	TF_OK = 0,
	TF_EOF = 1,    /* end of stream: not an error */
	TF_ENOMEM = 2, /* out of memory */
	TF_EINVAL = 3, /* invalid argument or option */
	TF_EIO = 4,    /* read or write failed (errno in the message) */
	TF_ENOENT = 5, /* input missing or unreadable */
	TF_EFORMAT =
	    6, /* malformed data: corrupt record, bad Example, bad CSV */
	TF_ETOOBIG = 7,   /* a length exceeds its ceiling */
	TF_ECREATE = 8,   /* output could not be created */
	TF_EINTERNAL = 9, /* a bug: an invariant did not hold */
	TF_EUNAVAIL = 10, /* a peer (a ps, the chief) cannot be reached */
	TF_EAGAIN = 11    /* nothing yet (a followed stream): try again */
};

/* The name of a status code, e.g. "corrupt or malformed data". */
TF_API const char *tf_strerror(int code);

/*
 * The message of the first error set on a handle (any libtfcore handle:
 * reader, writer, example, csv, input), or "" when none was set.
 */
TF_API const char *tf_errmsg(const void *handle);

/* The code of the first error set on a handle, TF_OK when none. */
TF_API int tf_errcode(const void *handle);

/* Forget the error on a handle so it can be reused. */
TF_API void tf_errclear(void *handle);

/* The sysexits(3) code a command should exit with for a status. */
TF_API int tf_exit_code(int code);

/* Library version string, e.g. "0.1.0". */
TF_API const char *tf_version(void);

#ifdef __cplusplus
}
#endif
#endif
