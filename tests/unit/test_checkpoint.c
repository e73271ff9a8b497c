/*
 * test_checkpoint.c - checkpoints: the header written and read back as
 * one struct, blocks, the pointer file and pruning, and the errors of
 * missing, damaged and foreign files.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

static void
fill(struct tf_ckpt_header *h)
{
	tf_ckpt_header_init(h);
	h->model_spec = strdup("input x 2\ninput label 1\n");
	h->optimizer = strdup("adam");
	h->hparams = tf_hparams_new();
	tf_hparams_set(h->hparams, "beta1", 0.8);
	h->learning_rate = 0.01;
	h->step = 42;
	h->examples = 4200;
	h->epoch = 3;
	h->done = 17;
	h->seed = 9;
	h->task = strdup("binary");
	h->prediction = strdup("prob");
	h->classes = 2;
	h->schema = strdup("{\"format\":\"tfkit-schema\"}");
	h->normalize = 0;
	h->has_rng = 1;
	h->rng[0] = 1;
	h->rng[3] = 0xffffffffffffffffULL;
	h->crosses = strdup("a*b");
	h->buckets = 77;
	h->validation = strdup("{\"auc\":0.5}");
	h->config = strdup("{\"batch-size\":16}");
}

TEST(the_header_round_trips_through_a_saved_checkpoint)
{
	struct tf_ckpt *c = tf_ckpt_new();
	struct tf_ckpt_header h, back;
	fill(&h);
	float w[3] = {1, 2, 3};
	CHECK_STATUS(tf_ckpt_put_header(c, &h), TF_OK, c);
	CHECK_STATUS(tf_ckpt_add(c, "params", w, 3), TF_OK, c);
	CHECK_STATUS(tf_ckpt_save(c, test_dir, 42, 2), TF_OK, c);
	struct tf_ckpt *r = tf_ckpt_new();
	tf_ckpt_header_init(&back);
	CHECK_STATUS(tf_ckpt_load(r, test_dir), TF_OK, r);
	CHECK_STATUS(tf_ckpt_get_header(r, &back), TF_OK, r);
	CHECK(strcmp(back.model_spec, h.model_spec) == 0);
	CHECK(strcmp(back.optimizer, "adam") == 0);
	double v;
	CHECK(tf_hparams_count(back.hparams) == 1 &&
	      strcmp(tf_hparams_get(back.hparams, 0, &v), "beta1") == 0 &&
	      v == 0.8);
	CHECK(back.learning_rate == 0.01 && back.step == 42);
	CHECK(back.examples == 4200 && back.epoch == 3 && back.done == 17);
	CHECK(back.seed == 9 && back.classes == 2 && back.normalize == 0);
	CHECK(back.has_rng && back.rng[0] == 1 &&
	      back.rng[3] == 0xffffffffffffffffULL);
	CHECK(strcmp(back.crosses, "a*b") == 0 && back.buckets == 77);
	CHECK(strcmp(back.validation, "{\"auc\":0.5}") == 0);
	CHECK(strcmp(back.config, "{\"batch-size\":16}") == 0);
	CHECK(strcmp(back.library, tf_version()) == 0);
	size_t n;
	const float *p = tf_ckpt_get(r, "params", &n);
	CHECK(p != NULL && n == 3 && p[2] == 3);
	/* the header alone, for settings */
	CHECK_STATUS(tf_ckpt_load_header(r, test_dir), TF_OK, r);
	CHECK(tf_ckpt_get(r, "params", &n) == NULL);
	CHECK_STATUS(tf_ckpt_get_header(r, &back), TF_OK, r);
	CHECK(back.step == 42);
	tf_ckpt_header_release(&back);
	tf_ckpt_header_release(&h);
	tf_ckpt_free(r);
	tf_ckpt_free(c);
}

TEST(older_checkpoints_beyond_keep_are_pruned)
{
	struct tf_ckpt *c = tf_ckpt_new();
	struct tf_ckpt_header h;
	fill(&h);
	CHECK_STATUS(tf_ckpt_put_header(c, &h), TF_OK, c);
	for (uint64_t s = 50; s <= 53; s++) {
		CHECK_STATUS(tf_ckpt_save(c, test_dir, s, 2), TF_OK, c);
	}
	char path[300];
	CHECK_STATUS(tf_ckpt_latest(test_dir, path, sizeof path), TF_OK, c);
	CHECK_CONTAINS(path, "/model.ckpt-53");
	snprintf(path, sizeof path, "%s/model.ckpt-52", test_dir);
	CHECK(access(path, F_OK) == 0);
	snprintf(path, sizeof path, "%s/model.ckpt-51", test_dir);
	CHECK(access(path, F_OK) != 0);
	tf_ckpt_header_release(&h);
	tf_ckpt_free(c);
}

TEST(missing_damaged_and_foreign_files_are_refused)
{
	struct tf_ckpt *c = tf_ckpt_new();
	char empty[320], path[400];
	snprintf(empty, sizeof empty, "%s", at("empty"));
	mkdir(empty, 0777);
	CHECK_STATUS(tf_ckpt_load(c, empty), TF_ENOENT, c);
	CHECK_CONTAINS(tf_errmsg(c), "no checkpoint");
	tf_errclear(c);
	CHECK(tf_ckpt_latest(empty, path, sizeof path) == TF_ENOENT);
	/* records, but not a checkpoint */
	snprintf(path, sizeof path, "%s/foreign", test_dir);
	struct tf_writer *w = tf_writer_new();
	tf_writer_open(w, path, TF_COMPRESS_NONE, 0);
	tf_writer_write(w, "hello", 5);
	tf_writer_close(w);
	tf_writer_free(w);
	CHECK_STATUS(tf_ckpt_load(c, path), TF_EFORMAT, c);
	CHECK_CONTAINS(tf_errmsg(c), "not a tfkit checkpoint");
	tf_errclear(c);
	/* a header without the fields a checkpoint must have */
	CHECK_STATUS(tf_ckpt_set_header(c, "{\"step\":1}"), TF_OK, c);
	CHECK_STATUS(tf_ckpt_save(c, empty, 1, 0), TF_OK, c);
	struct tf_ckpt_header h;
	tf_ckpt_header_init(&h);
	CHECK_STATUS(tf_ckpt_load(c, empty), TF_OK, c);
	CHECK_STATUS(tf_ckpt_get_header(c, &h), TF_EFORMAT, c);
	CHECK_CONTAINS(tf_errmsg(c), "bad checkpoint header");
	tf_errclear(c);
	/* a flipped byte: the CRC names it */
	snprintf(path, sizeof path, "%s/model.ckpt-1", empty);
	FILE *f = fopen(path, "r+b");
	REQUIRE(f != NULL);
	fseek(f, 20, SEEK_SET);
	fputc('X', f);
	fclose(f);
	CHECK_STATUS(tf_ckpt_load(c, empty), TF_EFORMAT, c);
	CHECK_CONTAINS(tf_errmsg(c), "corrupted record");
	/* a directory that cannot be written */
	tf_errclear(c);
	CHECK(tf_ckpt_save(c, "/nonexistent/dir", 1, 0) != TF_OK);
	CHECK_CONTAINS(tf_errmsg(c), "/nonexistent/dir/model.ckpt-1");
	tf_ckpt_free(c);
}

/* A block's values as saved: bit for bit, through tf_ckpt_get() and
 * tf_ckpt_read(). */
static int
same_bits(const float *a, const float *b, size_t n)
{
	return n == 0 || memcmp(a, b, n * sizeof *a) == 0;
}

static long
file_size(const char *dir, uint64_t step)
{
	char path[400];
	struct stat st;
	snprintf(path, sizeof path, "%s/model.ckpt-%llu", dir,
	         (unsigned long long)step);
	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

TEST(blocks_keep_every_value_and_runs_take_a_few_bytes)
{
	struct tf_ckpt *c = tf_ckpt_new(), *r = tf_ckpt_new();
	char dir[320];
	snprintf(dir, sizeof dir, "%s", at("runs"));
	/* a table of a million rows, 100 of them touched: zero weights
	 * and slots at FTRL's 0.1 elsewhere */
	size_t rows = 1000000;
	float *w = calloc(rows, sizeof *w), *acc = malloc(rows * sizeof *acc);
	REQUIRE(w != NULL && acc != NULL);
	for (size_t i = 0; i < rows; i++) {
		acc[i] = 0.1f;
	}
	for (size_t i = 0; i < 100; i++) {
		size_t at = (i * 7919 * 131) % rows;
		w[at] = 0.001f * (float)(i + 1);
		acc[at] = 0.1f + (float)i;
	}
	/* edges of the runs: MIN_RUN - 1 and MIN_RUN equal values, runs at
	 * the start and the end, -0 beside 0, NaN bits, an empty block */
	float edge[64];
	uint32_t nan = 0x7fc01234u;
	for (size_t i = 0; i < 64; i++) {
		edge[i] = i < 7    ? 2.0f
		          : i < 15 ? 3.0f
		          : i < 20 ? (float)i
		                   : 0.0f;
	}
	edge[20] = -0.0f;
	memcpy(&edge[30], &nan, 4);
	memcpy(&edge[31], &nan, 4);
	CHECK_STATUS(tf_ckpt_set_header(c, "{}"), TF_OK, c);
	CHECK_STATUS(tf_ckpt_add(c, "params", w, rows), TF_OK, c);
	CHECK_STATUS(tf_ckpt_add(c, "slot0", acc, rows), TF_OK, c);
	CHECK_STATUS(tf_ckpt_add(c, "edge", edge, 64), TF_OK, c);
	CHECK_STATUS(tf_ckpt_add(c, "none", edge, 0), TF_OK, c);
	CHECK_STATUS(tf_ckpt_save(c, dir, 1, 0), TF_OK, c);
	/* 8 MB of values; the rows that exist, a few kilobytes */
	CHECK(file_size(dir, 1) > 0 && file_size(dir, 1) < 8000);
	CHECK_STATUS(tf_ckpt_load(r, dir), TF_OK, r);
	size_t n;
	const float *p = tf_ckpt_get(r, "params", &n);
	CHECK(p != NULL && n == rows && same_bits(p, w, rows));
	p = tf_ckpt_get(r, "edge", &n);
	CHECK(p != NULL && n == 64 && same_bits(p, edge, 64));
	p = tf_ckpt_get(r, "none", &n);
	CHECK(p != NULL && n == 0);
	float *back = malloc(rows * sizeof *back);
	REQUIRE(back != NULL);
	CHECK_STATUS(tf_ckpt_read(r, "slot0", back, rows), TF_OK, r);
	CHECK(same_bits(back, acc, rows));
	CHECK_STATUS(tf_ckpt_read(r, "edge", back, 64), TF_OK, r);
	CHECK(same_bits(back, edge, 64));
	/* parts of a block (a ps's shard), decoded from the runs (loaded
	 * again: none decoded yet): windows that start and end inside
	 * literals and runs, an empty one at the end, one past it */
	CHECK_STATUS(tf_ckpt_load(r, dir), TF_OK, r);
	const size_t win[][2] = {{0, 64}, {3, 10}, {10, 25}, {29, 3}, {64, 0}};
	for (size_t k = 0; k < sizeof win / sizeof win[0]; k++) {
		float part[64];
		CHECK_STATUS(
		    tf_ckpt_read_part(r, "edge", win[k][0], part, win[k][1]),
		    TF_OK, r);
		CHECK(same_bits(part, edge + win[k][0], win[k][1]));
	}
	CHECK_STATUS(tf_ckpt_read_part(r, "slot0", rows - 5, back, 5), TF_OK,
	             r);
	CHECK(same_bits(back, acc + rows - 5, 5));
	CHECK_STATUS(tf_ckpt_read_part(r, "edge", 60, back, 5), TF_EFORMAT, r);
	CHECK_CONTAINS(tf_errmsg(r), "has no values 60 to 65");
	tf_errclear(r);
	/* another size, or no such block */
	CHECK_STATUS(tf_ckpt_read(r, "edge", back, 63), TF_EFORMAT, r);
	CHECK_CONTAINS(tf_errmsg(r), "block 'edge' is missing or of another");
	tf_errclear(r);
	CHECK_STATUS(tf_ckpt_read(r, "slot1", back, 64), TF_EFORMAT, r);
	tf_errclear(r);
	/* values that never repeat: their size, and the varints' bytes */
	for (size_t i = 0; i < rows; i++) {
		w[i] = (float)i;
	}
	CHECK_STATUS(tf_ckpt_save(c, dir, 2, 0), TF_OK, c);
	CHECK(file_size(dir, 2) > 4000000 && file_size(dir, 2) < 4004000);
	CHECK_STATUS(tf_ckpt_load(r, dir), TF_OK, r);
	CHECK_STATUS(tf_ckpt_read(r, "params", back, rows), TF_OK, r);
	CHECK(same_bits(back, w, rows));
	free(back);
	free(acc);
	free(w);
	tf_ckpt_free(r);
	tf_ckpt_free(c);
}

/* A checkpoint of blocks as hand-made records: the header record, then
 * "params\0" and body. */
static void
write_ckpt(const char *path, const char *magic, const uint8_t *body, size_t len)
{
	struct tf_writer *w = tf_writer_new();
	uint8_t rec[256];
	char head[64];
	snprintf(head, sizeof head, "%s{}", magic);
	memcpy(rec, "params", 7);
	memcpy(rec + 7, body, len);
	REQUIRE(tf_writer_open(w, path, TF_COMPRESS_NONE, 0) == TF_OK);
	tf_writer_write(w, head, strlen(head));
	tf_writer_write(w, rec, 7 + len);
	tf_writer_close(w);
	tf_writer_free(w);
}

TEST(version_1_loads_and_damaged_runs_are_refused)
{
	struct tf_ckpt *c = tf_ckpt_new();
	char path[400];
	snprintf(path, sizeof path, "%s/hand", test_dir);
	/* version 1: the values as they are */
	const uint8_t v1[] = {0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}; /* 1, -2 */
	write_ckpt(path, "tfkit-checkpoint 1\n", v1, sizeof v1);
	CHECK_STATUS(tf_ckpt_load(c, path), TF_OK, c);
	float two[2];
	CHECK_STATUS(tf_ckpt_read(c, "params", two, 2), TF_OK, c);
	CHECK(two[0] == 1 && two[1] == -2);
	/* version 2: 10 values as 1 literal and 9 copies of -2 */
	const uint8_t ok[] = {10, 1, 0, 0, 0x80, 0x3f, 9, 0, 0, 0, 0xc0};
	write_ckpt(path, "tfkit-checkpoint 2\n", ok, sizeof ok);
	CHECK_STATUS(tf_ckpt_load(c, path), TF_OK, c);
	float ten[10];
	CHECK_STATUS(tf_ckpt_read(c, "params", ten, 10), TF_OK, c);
	CHECK(ten[0] == 1 && ten[1] == -2 && ten[9] == -2);
	/* runs past the count, short of it, cut short, a pair of nothing,
	 * bytes after the last run, and a count past 2^34 */
	const struct {
		uint8_t b[16];
		size_t n;
	} bad[] = {
	    {{10, 1, 0, 0, 0x80, 0x3f, 10, 0, 0, 0, 0xc0}, 11},
	    {{10, 1, 0, 0, 0x80, 0x3f, 8, 0, 0, 0, 0xc0}, 11},
	    {{10, 1, 0, 0, 0x80, 0x3f, 9, 0, 0}, 9},
	    {{2, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0}, 13},
	    {{1, 1, 0, 0, 0x80, 0x3f, 0, 7}, 8},
	    {{0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0, 0x80, 0x80, 0x80, 0x80,
	      0x80, 0x01, 0, 0, 0},
	     16},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		write_ckpt(path, "tfkit-checkpoint 2\n", bad[i].b, bad[i].n);
		CHECK_STATUS(tf_ckpt_load(c, path), TF_EFORMAT, c);
		CHECK_CONTAINS(tf_errmsg(c), "record 1 is not a block");
		tf_errclear(c);
	}
	/* values in a version 1 file that are not whole floats */
	write_ckpt(path, "tfkit-checkpoint 1\n", v1, 5);
	CHECK_STATUS(tf_ckpt_load(c, path), TF_EFORMAT, c);
	tf_errclear(c);
	/* a later format is named as such */
	write_ckpt(path, "tfkit-checkpoint 3\n", v1, sizeof v1);
	CHECK_STATUS(tf_ckpt_load(c, path), TF_EFORMAT, c);
	CHECK_CONTAINS(tf_errmsg(c),
	               "a checkpoint of a later tfkit (format 3)");
	tf_ckpt_free(c);
}

int
main(void)
{
	if (test_dir_make("tfkit-ckpt") != 0) {
		return 1;
	}
	RUN(the_header_round_trips_through_a_saved_checkpoint);
	RUN(older_checkpoints_beyond_keep_are_pruned);
	RUN(missing_damaged_and_foreign_files_are_refused);
	RUN(blocks_keep_every_value_and_runs_take_a_few_bytes);
	RUN(version_1_loads_and_damaged_runs_are_refused);
	DONE();
}
