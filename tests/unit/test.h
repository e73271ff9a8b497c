/*
 * test.h - a tiny TAP producer for the unit tests.
 *
 * TEST(name) defines a test; RUN(name) runs it and prints "ok N - name" or
 * "not ok N - name" with the failed checks as TAP comments.  CHECK_*
 * macros record a failure and go on; REQUIRE returns from the test.
 */
#ifndef TF_TEST_H
#define TF_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TEST_SHARED
#include "internal.h" /* tests may use the internal helpers */
#endif
#include "tf/tf.h"

static int t_count, t_failed_tests, t_cur_failed;

#define TEST(name) static void name(void)

#define FAILF(...)                                                             \
	do {                                                                   \
		t_cur_failed++;                                                \
		printf("# %s:%d: ", __FILE__, __LINE__);                       \
		printf(__VA_ARGS__);                                           \
		printf("\n");                                                  \
	} while (0)

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			FAILF("check failed: %s", #cond);                      \
		}                                                              \
	} while (0)

#define REQUIRE(cond)                                                          \
	do {                                                                   \
		if (!(cond)) {                                                 \
			FAILF("requirement failed: %s", #cond);                \
			return;                                                \
		}                                                              \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                     \
	do {                                                                   \
		long long a_ = (long long)(a), b_ = (long long)(b);            \
		if (a_ != b_) {                                                \
			FAILF("%s == %lld, expected %lld", #a, a_, b_);        \
		}                                                              \
	} while (0)

#define CHECK_STATUS(expr, want, handle)                                       \
	do {                                                                   \
		int rc_ = (expr);                                              \
		if (rc_ != (want)) {                                           \
			FAILF("%s returned %d (%s), expected %d: %s", #expr,   \
			      rc_, tf_strerror(rc_), (int)(want),              \
			      tf_errmsg(handle));                              \
		}                                                              \
	} while (0)

#define CHECK_CONTAINS(hay, needle)                                            \
	do {                                                                   \
		const char *h_ = (hay);                                        \
		if (h_ == NULL || strstr(h_, (needle)) == NULL) {              \
			FAILF("'%s' does not contain '%s'",                    \
			      h_ ? h_ : "(null)", (needle));                   \
		}                                                              \
	} while (0)

#define CHECK_MEM(a, b, n)                                                     \
	do {                                                                   \
		if (memcmp((a), (b), (n)) != 0) {                              \
			FAILF("%s and %s differ in %zu bytes", #a, #b,         \
			      (size_t)(n));                                    \
		}                                                              \
	} while (0)

#define RUN(name)                                                              \
	do {                                                                   \
		t_cur_failed = 0;                                              \
		name();                                                        \
		t_count++;                                                     \
		printf("%sok %d - %s\n", t_cur_failed ? "not " : "", t_count,  \
		       #name);                                                 \
		t_failed_tests += t_cur_failed != 0;                           \
	} while (0)

#define DONE()                                                                 \
	do {                                                                   \
		printf("1..%d\n", t_count);                                    \
		return t_failed_tests ? 1 : 0;                                 \
	} while (0)

/* Hex string ("0a 33 ...") to bytes; returns the length. */
static inline size_t
unhex(const char *s, unsigned char *out)
{
	size_t n = 0;
	while (*s) {
		if (*s == ' ' || *s == '\n') {
			s++;
			continue;
		}
		unsigned v;
		sscanf(s, "%2x", &v);
		out[n++] = (unsigned char)v;
		s += 2;
	}
	return n;
}

/*
 * A directory of the test's own under /tmp, removed at exit:
 * test_dir_make("tfkit-x") before the tests, then at(name) for paths in
 * it (each valid for the next 16 calls).
 */
static char test_dir[256];

static inline void
test_dir_remove(void)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", test_dir);
	if (test_dir[0] != '\0' && system(cmd) != 0) {
		printf("# could not remove %s\n", test_dir);
	}
}

static inline int
test_dir_make(const char *name)
{
	snprintf(test_dir, sizeof test_dir, "/tmp/%s-XXXXXX", name);
	if (mkdtemp(test_dir) == NULL) {
		printf("not ok 1 - mkdtemp %s\n", test_dir);
		return -1;
	}
	atexit(test_dir_remove);
	return 0;
}

static inline const char *
at(const char *name)
{
	static char p[16][320];
	static int k;
	k = (k + 1) % 16;
	snprintf(p[k], sizeof p[k], "%s/%s", test_dir, name);
	return p[k];
}

/* tf-csv2record's sink: records to a writer. */
static inline int
test_sink_write(void *ctx, const uint8_t *bytes, size_t n, const size_t *ends,
                size_t count)
{
	(void)ends;
	return tf_writer_write_framed(ctx, bytes, n, count) != TF_OK;
}

/* CSV text (n bytes) converted as tf-csv2record does: the records at
 * path, the schema beside them; nonzero on failure. */
static inline int
test_csv_records(const char *path, const char *csv, size_t n)
{
	struct tf_csv *c = tf_csv_new();
	struct tf_input *in = tf_input_new();
	struct tf_writer *w = tf_writer_new();
	struct tf_schema *s = tf_schema_new();
	struct tf_csv_options o;
	tf_csv_options_init(&o);
	char side[300];
	tf_schema_sidecar(path, side, sizeof side);
	int rc = !c || !in || !w || !s || tf_csv_set_options(c, &o) ||
	         tf_writer_open(w, path, 0, 0) ||
	         tf_input_open_mem(in, csv, n, "t.csv");
	struct tf_csv_sink sink = {w, test_sink_write, NULL};
	rc = rc || tf_csv_convert(c, in, &sink) || tf_writer_close(w) ||
	     tf_csv_schema(c, s) || tf_schema_write(s, side);
	tf_schema_free(s);
	tf_writer_free(w);
	tf_input_free(in);
	tf_csv_free(c);
	return rc;
}

#endif
