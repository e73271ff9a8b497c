/*
 * test_settings.c - the resolution of a run's settings: flags over the
 * config file over the checkpoint over defaults; what a checkpoint fixes;
 * bad values and files.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

TEST(defaults_config_and_flags_in_that_order)
{
	struct tf_settings *s = tf_settings_new();
	write_file(at("c.json"), "{\"batch-size\": 16, \"hidden\": \"8 4\", "
	                         "\"opt\": [\"beta1=0.8\", \"beta2=0.9\"], "
	                         "\"enable-bn\": true}");
	CHECK_STATUS(tf_settings_set(s, "batch-size", "32"), TF_OK, s);
	CHECK_STATUS(tf_settings_load(s, at("c.json")), TF_OK, s);
	CHECK_STATUS(tf_settings_set(s, "opt", "beta1=0.7"), TF_OK, s);
	CHECK_STATUS(tf_settings_resolve(s), TF_OK, s);
	CHECK(strcmp(tf_settings_get(s, "batch-size"), "32") == 0);
	CHECK_EQ_INT(tf_settings_source(s, "batch-size"), TF_FROM_FLAG);
	CHECK(strcmp(tf_settings_get(s, "hidden"), "8 4") == 0);
	CHECK_EQ_INT(tf_settings_source(s, "hidden"), TF_FROM_CONFIG);
	CHECK(strcmp(tf_settings_get(s, "optimizer"), "adam") == 0);
	CHECK_EQ_INT(tf_settings_source(s, "optimizer"), TF_FROM_DEFAULT);
	CHECK(tf_settings_get(s, "max-steps") == NULL);
	struct tf_train_config cfg;
	CHECK_STATUS(tf_settings_config(s, &cfg), TF_OK, s);
	CHECK(cfg.batch_size == 32 && cfg.enable_bn == 1);
	CHECK(tf_hparam(cfg.hparams, "beta1", 0) == 0.7); /* the flag's */
	CHECK(tf_hparam(cfg.hparams, "beta2", 0) == 0.9);
	/* the JSON reads back as the same settings */
	char *json = tf_settings_json(s, 1);
	write_file(at("back.json"), json);
	struct tf_settings *t = tf_settings_new();
	CHECK_STATUS(tf_settings_load(t, at("back.json")), TF_OK, t);
	CHECK_STATUS(tf_settings_resolve(t), TF_OK, t);
	char *again = tf_settings_json(t, 1);
	CHECK(strcmp(json, again) == 0);
	CHECK_CONTAINS(json, "\"opt\": [\n    \"beta1=0.7\",");
	free(json);
	free(again);
	tf_settings_free(t);
	tf_settings_free(s);
}

TEST(bad_values_and_files_name_the_setting)
{
	struct tf_settings *s = tf_settings_new();
	CHECK_STATUS(tf_settings_set(s, "batch-size", "0"), TF_EINVAL, s);
	CHECK_CONTAINS(tf_errmsg(s), "--batch-size: '0' is not a whole "
	                             "number from 1 to");
	tf_errclear(s);
	CHECK_STATUS(tf_settings_set(s, "learning-rate", "0"), TF_EINVAL, s);
	CHECK_CONTAINS(tf_errmsg(s), "--learning-rate must be above 0");
	tf_errclear(s);
	CHECK_STATUS(tf_settings_set(s, "dropout-keep-prob", "1.5"), TF_EINVAL,
	             s);
	CHECK_CONTAINS(tf_errmsg(s), "--dropout-keep-prob must be in (0, 1]");
	tf_errclear(s);
	CHECK_STATUS(tf_settings_set(s, "task", "clustering"), TF_EINVAL, s);
	tf_errclear(s);
	CHECK_STATUS(tf_settings_set(s, "colour", "blue"), TF_EINVAL, s);
	CHECK_CONTAINS(tf_errmsg(s), "unknown setting 'colour'");
	tf_errclear(s);
	write_file(at("bad.json"), "{\"epochs\": \"many\"}");
	CHECK_STATUS(tf_settings_load(s, at("bad.json")), TF_EFORMAT, s);
	CHECK_CONTAINS(tf_errmsg(s), "bad.json: --epochs: 'many'");
	tf_errclear(s);
	write_file(at("flag.json"), "{\"enable-bn\": 1}");
	CHECK_STATUS(tf_settings_load(s, at("flag.json")), TF_EFORMAT, s);
	CHECK_CONTAINS(tf_errmsg(s), "'enable-bn' takes true or false");
	tf_errclear(s);
	CHECK_STATUS(tf_settings_load(s, at("none.json")), TF_ENOENT, s);
	tf_errclear(s);
	CHECK_STATUS(tf_settings_set(s, "epochs", "0"), TF_OK, s);
	CHECK_STATUS(tf_settings_resolve(s), TF_EINVAL, s);
	CHECK_CONTAINS(tf_errmsg(s), "--epochs 0 needs --max-steps");
	tf_settings_free(s);
}

/* A checkpoint of sgd at 0.05, batch 8, an lr model, as a run saves. */
static void
checkpoint(const char *ck)
{
	mkdir(ck, 0777);
	struct tf_ckpt *c = tf_ckpt_new();
	struct tf_ckpt_header h;
	tf_ckpt_header_init(&h);
	h.model_spec = strdup("input x 1\n");
	h.optimizer = strdup("momentum");
	h.hparams = tf_hparams_new();
	tf_hparams_set(h.hparams, "momentum", 0.5);
	h.learning_rate = 0.05;
	h.seed = 3;
	h.task = strdup("binary");
	h.prediction = strdup("prob");
	h.schema = strdup("{}");
	h.config = strdup("{\"model\": \"lr\", \"batch-size\": 8, "
	                  "\"hidden\": \"16,8\", \"epochs\": 7, "
	                  "\"enable-bn\": false}");
	tf_ckpt_put_header(c, &h);
	tf_ckpt_save(c, ck, 10, 0);
	tf_ckpt_header_release(&h);
	tf_ckpt_free(c);
}

TEST(a_resume_takes_the_checkpoints_settings_and_keeps_what_it_fixes)
{
	const char *ck = at("ck");
	checkpoint(ck);
	struct tf_settings *s = tf_settings_new();
	CHECK_STATUS(tf_settings_set(s, "checkpoint-dir", ck), TF_OK, s);
	CHECK_STATUS(tf_settings_set(s, "hidden", "16 8"), TF_OK, s);
	CHECK_STATUS(tf_settings_resolve(s), TF_OK, s);
	CHECK(strcmp(tf_settings_get(s, "optimizer"), "momentum") == 0);
	CHECK_EQ_INT(tf_settings_source(s, "optimizer"), TF_FROM_CHECKPOINT);
	CHECK(strcmp(tf_settings_get(s, "learning-rate"), "0.05") == 0);
	CHECK(strcmp(tf_settings_get(s, "model"), "lr") == 0);
	CHECK(strcmp(tf_settings_get(s, "batch-size"), "8") == 0);
	CHECK(strcmp(tf_settings_get(s, "seed"), "3") == 0);
	/* how far a run goes is its own */
	CHECK(strcmp(tf_settings_get(s, "epochs"), "1") == 0);
	struct tf_train_config cfg;
	tf_settings_config(s, &cfg);
	CHECK(tf_hparam(cfg.hparams, "momentum", 0) == 0.5);
	tf_settings_free(s);
	/* another model or optimizer under it: a usage error */
	s = tf_settings_new();
	tf_settings_set(s, "checkpoint-dir", ck);
	tf_settings_set(s, "model", "dnn");
	CHECK_STATUS(tf_settings_resolve(s), TF_EINVAL, s);
	CHECK_CONTAINS(tf_errmsg(s), "model.ckpt-10 was trained with --model "
	                             "lr, not dnn (use --from-scratch");
	tf_settings_free(s);
	s = tf_settings_new();
	tf_settings_set(s, "checkpoint-dir", ck);
	tf_settings_set(s, "enable-bn", "true");
	CHECK_STATUS(tf_settings_resolve(s), TF_EINVAL, s);
	CHECK_CONTAINS(tf_errmsg(s), "was trained without --enable-bn");
	tf_settings_free(s);
	/* --from-scratch reads nothing of it */
	s = tf_settings_new();
	tf_settings_set(s, "checkpoint-dir", ck);
	tf_settings_set(s, "from-scratch", "true");
	tf_settings_set(s, "model", "dnn");
	CHECK_STATUS(tf_settings_resolve(s), TF_OK, s);
	CHECK(strcmp(tf_settings_get(s, "optimizer"), "adam") == 0);
	tf_settings_free(s);
}

int
main(void)
{
	if (test_dir_make("tfkit-settings") != 0) {
		return 1;
	}
	RUN(defaults_config_and_flags_in_that_order);
	RUN(bad_values_and_files_name_the_setting);
	RUN(a_resume_takes_the_checkpoints_settings_and_keeps_what_it_fixes);
	DONE();
}
