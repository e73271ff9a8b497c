/* pool.c: the chunks of a distributed run's epochs, cut from real record
 * files, handed out, applied, given back, and kept in a checkpoint. */
#include <jansson.h>
#include <unistd.h>

#include "pool.h"
#include "test.h"

static char tmpdir[256];
static char file_a[300], file_b[300];
static const char *files[2] = {file_a, file_b};

/* NAME with n records, record i's bytes "NAME-i". */
static void
write_records(const char *path, const char *name, int n)
{
	struct tf_writer *w = tf_writer_new();
	if (tf_writer_open(w, path, 0, 0) != TF_OK) {
		FAILF("%s: %s", path, tf_errmsg(w));
	}
	for (int i = 0; i < n; i++) {
		char rec[64];
		int len = snprintf(rec, sizeof rec, "%s-%d", name, i);
		tf_writer_write(w, rec, (size_t)len);
	}
	tf_writer_close(w);
	tf_writer_free(w);
}

/* A pool of a.tfrecord (23 records) and b.tfrecord (5) in chunks of 6:
 * a's 6, 6, 6, 5 and b's 5, five chunks an epoch. */
static struct tfi_pool *
pool_of(uint32_t trainers, uint64_t epochs)
{
	char *json = NULL, err[256];
	if (tfi_pool_plan(files, 2, 6, 0, epochs, 7, 1, &json, err,
	                  sizeof err) != 0) {
		FAILF("plan: %s", err);
		return NULL;
	}
	struct tfi_pool *p = tfi_pool_parse(json, trainers, err, sizeof err);
	if (p == NULL) {
		FAILF("parse: %s", err);
	}
	free(json);
	return p;
}

/* A number of the pool's status object: key, or key of worker w. */
static long long
status(const struct tfi_pool *p, const char *key, int w)
{
	char *s = tfi_pool_status(p);
	json_t *o = s ? json_loads(s, 0, NULL) : NULL;
	free(s);
	json_t *at = o;
	if (w >= 0) {
		at = json_array_get(json_object_get(o, "workers"), (size_t)w);
	}
	long long v = (long long)json_integer_value(json_object_get(at, key));
	json_decref(o);
	return v;
}

/* The whole of chunk c applied for trainer w. */
static void
apply_all(struct tfi_pool *p, uint32_t w, const struct tfi_chunk *c)
{
	uint64_t spans[3] = {c->epoch, c->index, c->count - c->skip};
	tfi_pool_applied(p, w, spans, 3);
}

TEST(plan_cuts_the_files_where_their_records_are)
{
	struct tfi_pool *p = pool_of(1, 1);
	REQUIRE(p != NULL);
	CHECK_EQ_INT(status(p, "chunks", -1), 5);
	CHECK_EQ_INT(status(p, "records", -1), 28);
	/* each chunk read from its offset starts at its first record */
	struct tf_reader *r = tf_reader_new();
	struct tfi_chunk c;
	unsigned char none[1] = {0};
	uint64_t seen = 0;
	while (tfi_pool_take(p, 0, none, 0, &c) == TFI_TAKE_CHUNK) {
		REQUIRE(tf_reader_open(r, files[c.file], TF_COMPRESS_AUTO) ==
		        TF_OK);
		CHECK(tf_reader_seek(r, c.off, c.rec) == TF_OK);
		const uint8_t *d;
		size_t n;
		REQUIRE(tf_reader_next(r, &d, &n) == TF_OK);
		char want[64];
		snprintf(want, sizeof want, "%s-%llu", c.file ? "b" : "a",
		         (unsigned long long)c.rec);
		CHECK(n == strlen(want) && memcmp(d, want, n) == 0);
		CHECK(c.count == (c.file ? 5 : c.rec == 18 ? 5 : 6));
		seen += c.count;
		apply_all(p, 0, &c);
	}
	CHECK_EQ_INT(seen, 28);
	CHECK(tfi_pool_complete(p));
	tf_reader_free(r);
	tfi_pool_free(p);
	/* no records: refused, naming why */
	char empty[300], *json = NULL, err[256];
	snprintf(empty, sizeof empty, "%s/empty.tfrecord", tmpdir);
	write_records(empty, "e", 0);
	const char *one[1] = {empty};
	CHECK(tfi_pool_plan(one, 1, 6, 0, 1, 7, 1, &json, err, sizeof err) !=
	      0);
	CHECK(strstr(err, "no records") != NULL);
}

/* Two trainers in turn, 7 epochs of 5 chunks: every record once an
 * epoch, and the deal going on across epochs gives each 17 or 18
 * chunks (not 3 and 2 an epoch: 21 and 14). */
TEST(every_record_once_an_epoch_dealt_evenly)
{
	struct tfi_pool *p = pool_of(2, 7);
	REQUIRE(p != NULL);
	unsigned char none[2] = {0, 0};
	struct tfi_chunk c;
	int ends = 0, guard = 0;
	while (ends < 2 && guard++ < 1000) {
		ends = 0;
		for (uint32_t w = 0; w < 2; w++) {
			int r = tfi_pool_take(p, w, none, 0, &c);
			if (r == TFI_TAKE_CHUNK) {
				apply_all(p, w, &c);
			}
			ends += r == TFI_TAKE_END;
		}
	}
	CHECK(tfi_pool_complete(p));
	CHECK_EQ_INT(status(p, "excess", -1), 0);
	long long a = status(p, "chunks", 0), b = status(p, "chunks", 1);
	CHECK_EQ_INT(a + b, 35);
	CHECK(a - b <= 1 && b - a <= 1);
	CHECK_EQ_INT(status(p, "applied", 0) + status(p, "applied", 1), 7 * 28);
	tfi_pool_free(p);
}

/* A trainer's chunk given back after 2 of its records were applied: the
 * rest go to another only once it is gone (sync), skipping those 2. */
TEST(given_back_chunks_go_on_where_they_stood)
{
	struct tfi_pool *p = pool_of(2, 1);
	REQUIRE(p != NULL);
	unsigned char none[2] = {0, 0}, gone[2] = {0, 1};
	struct tfi_chunk c1, c0;
	REQUIRE(tfi_pool_take(p, 1, none, 0, &c1) == TFI_TAKE_CHUNK);
	uint64_t two[3] = {c1.epoch, c1.index, 2};
	tfi_pool_applied(p, 1, two, 3);
	CHECK(tfi_pool_holds(p, 1));
	char what[200];
	CHECK_EQ_INT(tfi_pool_give_back(p, 1, what, sizeof what), c1.count - 2);
	CHECK(!tfi_pool_holds(p, 1));
	char want[100];
	snprintf(want, sizeof want,
	         "chunk %llu of epoch 0 (2 of %llu records trained)",
	         (unsigned long long)c1.index, (unsigned long long)c1.count);
	CHECK(strstr(what, want) != NULL);
	/* trainer 0 takes its own first, then (trainer 1 gone) the rest */
	int got_back = 0;
	for (int k = 0; k < 10; k++) {
		int r = tfi_pool_take(p, 0, gone, 0, &c0);
		if (r != TFI_TAKE_CHUNK) {
			CHECK(r == TFI_TAKE_END);
			break;
		}
		if (c0.index == c1.index) {
			got_back = 1;
			CHECK_EQ_INT(c0.skip, 2);
		}
		apply_all(p, 0, &c0);
	}
	CHECK(got_back);
	CHECK(tfi_pool_complete(p));
	CHECK_EQ_INT(status(p, "excess", -1), 0);
	CHECK_EQ_INT(status(p, "returned", 1), c1.count - 2);
	tfi_pool_free(p);
}

/* The state written into a checkpoint and read back hands out what the
 * pool it came from would have. */
TEST(checkpoint_state_goes_on_alike)
{
	struct tfi_pool *p = pool_of(2, 3);
	REQUIRE(p != NULL);
	unsigned char none[2] = {0, 0};
	struct tfi_chunk c, d;
	for (int k = 0; k < 6; k++) {
		REQUIRE(tfi_pool_take(p, (uint32_t)(k % 2), none, 0, &c) ==
		        TFI_TAKE_CHUNK);
		if (k < 4) { /* two left in flight: taken again */
			apply_all(p, (uint32_t)(k % 2), &c);
		}
	}
	char *json = tfi_pool_json(p), err[256];
	REQUIRE(json != NULL);
	struct tfi_pool *q = tfi_pool_parse(json, 2, err, sizeof err);
	free(json);
	REQUIRE(q != NULL);
	CHECK(tfi_pool_same_plan(p, q));
	tfi_pool_give_back(p, 0, NULL, 0);
	tfi_pool_give_back(p, 1, NULL, 0);
	for (int k = 0; k < 20; k++) {
		uint32_t w = (uint32_t)(k % 2);
		int r1 = tfi_pool_take(p, w, none, 0, &c);
		int r2 = tfi_pool_take(q, w, none, 0, &d);
		CHECK_EQ_INT(r1, r2);
		if (r1 != TFI_TAKE_CHUNK || r2 != TFI_TAKE_CHUNK) {
			break;
		}
		CHECK(c.epoch == d.epoch && c.index == d.index &&
		      c.skip == d.skip && c.off == d.off);
		apply_all(p, w, &c);
		apply_all(q, w, &d);
	}
	CHECK(tfi_pool_complete(p) && tfi_pool_complete(q));
	tfi_pool_free(p);
	tfi_pool_free(q);
}

int
main(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/tfkit-test-pool.XXXXXX");
	if (mkdtemp(tmpdir) == NULL) {
		printf("Bail out! mkdtemp\n");
		return 1;
	}
	snprintf(file_a, sizeof file_a, "%s/a.tfrecord", tmpdir);
	snprintf(file_b, sizeof file_b, "%s/b.tfrecord", tmpdir);
	write_records(file_a, "a", 23);
	write_records(file_b, "b", 5);
	RUN(plan_cuts_the_files_where_their_records_are);
	RUN(every_record_once_an_epoch_dealt_evenly);
	RUN(given_back_chunks_go_on_where_they_stood);
	RUN(checkpoint_state_goes_on_alike);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	if (system(cmd) != 0) {
		printf("# could not remove %s\n", tmpdir);
	}
	DONE();
}
