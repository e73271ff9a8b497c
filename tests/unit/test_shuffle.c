/*
 * test_shuffle.c - the external-memory shuffle: a permutation, in memory
 * and spilled, the same for the same seed and budget; CSV rows of
 * Examples.
 */
#include <unistd.h>

#include "test.h"

static char path[] = "/tmp/tfkit-shuffle-XXXXXX";

/* Shuffle 2000 records "r0".."r1999" with a budget; their order. */
static int
shuffled(uint64_t seed, size_t memory, int *order, size_t n)
{
	struct tf_shuffle *s = tf_shuffle_new(seed, memory);
	struct tf_writer *w = tf_writer_new();
	if (s == NULL || w == NULL ||
	    tf_writer_open(w, path, TF_COMPRESS_NONE, 0) != TF_OK) {
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		char rec[32];
		int k = snprintf(rec, sizeof rec, "r%zu", i);
		if (tf_shuffle_add(s, rec, (size_t)k) != TF_OK) {
			return -1;
		}
	}
	if (tf_shuffle_finish(s, w) != TF_OK || tf_writer_close(w) != TF_OK) {
		return -1;
	}
	tf_writer_free(w);
	tf_shuffle_free(s);
	struct tf_reader *r = tf_reader_new();
	if (tf_reader_open(r, path, TF_COMPRESS_NONE) != TF_OK) {
		return -1;
	}
	const uint8_t *d;
	size_t len, got = 0;
	while (tf_reader_next(r, &d, &len) == TF_OK && got < n) {
		char num[32] = "";
		memcpy(num, d + 1, len - 1 < sizeof num - 1 ? len - 1 : 0);
		order[got++] = atoi(num);
	}
	tf_reader_free(r);
	return (int)got;
}

static int
is_permutation(const int *order, size_t n)
{
	char *seen = calloc(n, 1);
	int ok = seen != NULL;
	for (size_t i = 0; ok && i < n; i++) {
		ok = order[i] >= 0 && (size_t)order[i] < n && !seen[order[i]];
		if (ok) {
			seen[order[i]] = 1;
		}
	}
	free(seen);
	return ok;
}

TEST(in_memory_and_spilled_a_permutation_fixed_by_the_seed)
{
	enum { N = 2000 };
	static int a[N], b[N], c[N], d[N];
	CHECK_EQ_INT(shuffled(7, 0, a, N), N);
	CHECK(is_permutation(a, N));
	CHECK_EQ_INT(shuffled(7, 0, b, N), N);
	CHECK(memcmp(a, b, sizeof a) == 0);
	CHECK_EQ_INT(shuffled(8, 0, c, N), N);
	CHECK(memcmp(a, c, sizeof a) != 0);
	/* 4 KiB of budget for ~40 KiB of records: spilled, twice over */
	CHECK_EQ_INT(shuffled(7, 4096, d, N), N);
	CHECK(is_permutation(d, N));
	CHECK(memcmp(a, d, sizeof a) != 0);
	CHECK_EQ_INT(shuffled(7, 4096, c, N), N);
	CHECK(memcmp(c, d, sizeof c) == 0);
	/* not stuck near where it started */
	int moved = 0;
	for (int i = 0; i < N; i++) {
		moved += abs(d[i] - i) > 100;
	}
	CHECK(moved > N / 2);
}

TEST(csv_rows_header_then_values_quoted)
{
	struct tf_csv_rows *c = tf_csv_rows_new();
	struct tf_example *ex = tf_example_new();
	float v[2] = {1.5f, -2};
	int64_t k = 7;
	struct tf_bytes name = {(const uint8_t *)"a, \"b\"", 6};
	tf_example_add_floats(ex, "x", v, 2);
	tf_example_add_int64s(ex, "n", &k, 1);
	tf_example_add_bytes(ex, "s", &name, 1);
	const char *text;
	size_t len;
	CHECK_STATUS(tf_csv_rows_add(c, ex, &text, &len), TF_OK, c);
	CHECK(len == strlen("x,n,s\n1.5 -2,7,\"a, \"\"b\"\"\"\n") &&
	      memcmp(text, "x,n,s\n1.5 -2,7,\"a, \"\"b\"\"\"\n", len) == 0);
	/* a later record lacking one: an empty field; with another: 65 */
	tf_example_clear(ex);
	tf_example_add_int64s(ex, "n", &k, 1);
	CHECK_STATUS(tf_csv_rows_add(c, ex, &text, &len), TF_OK, c);
	CHECK(len == 4 && memcmp(text, ",7,\n", 4) == 0);
	tf_example_add_int64s(ex, "extra", &k, 1);
	CHECK_STATUS(tf_csv_rows_add(c, ex, &text, &len), TF_EFORMAT, c);
	CHECK_CONTAINS(tf_errmsg(c), "record 2 has features the first "
	                             "record lacks");
	tf_example_free(ex);
	tf_csv_rows_free(c);
}

int
main(void)
{
	int fd = mkstemp(path);
	if (fd < 0) {
		printf("not ok 1 - mkstemp\n");
		return 1;
	}
	close(fd);
	RUN(in_memory_and_spilled_a_permutation_fixed_by_the_seed);
	RUN(csv_rows_header_then_values_quoted);
	unlink(path);
	DONE();
}
