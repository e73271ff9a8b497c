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

int
main(void)
{
	if (test_dir_make("tfkit-ckpt") != 0) {
		return 1;
	}
	RUN(the_header_round_trips_through_a_saved_checkpoint);
	RUN(older_checkpoints_beyond_keep_are_pruned);
	RUN(missing_damaged_and_foreign_files_are_refused);
	DONE();
}
