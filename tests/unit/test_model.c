/*
 * test_model.c - a trained model end to end through the library: train
 * (settings, trainer), load the checkpoint, evaluate, export, load the
 * export and an archive of it; and the errors of each: a missing input,
 * a damaged export, an optimizer setting it does not take.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

static struct tf_registry *reg;

/* 400 rows: the label is whether a + b > 1 (separable). */
static int
make_data(const char *path)
{
	char *csv = malloc(400 * 40 + 16);
	size_t n = (size_t)sprintf(csv, "a,b,label\n");
	for (int i = 0; i < 400; i++) {
		double a = (i * 37 % 100) / 50.0, b = (i * 61 % 100) / 50.0;
		n += (size_t)sprintf(csv + n, "%.2f,%.2f,%d\n", a, b,
		                     a + b > 2.0);
	}
	int rc = test_csv_records(path, csv, n);
	free(csv);
	return rc;
}

static int
train(const char *ck, const char *data, const char *opt, char *err,
      size_t errlen)
{
	struct tf_settings *s = tf_settings_new();
	struct tf_trainer *t = tf_trainer_new();
	struct tf_train_config cfg;
	const char *inputs[] = {data};
	int rc = tf_settings_set(s, "checkpoint-dir", ck) ||
	         tf_settings_set(s, "model", "lr") ||
	         tf_settings_set(s, "epochs", "30") ||
	         tf_settings_set(s, "batch-size", "32") ||
	         tf_settings_set(s, "learning-rate", "0.05") ||
	         (opt != NULL && tf_settings_set(s, "opt", opt)) ||
	         tf_settings_resolve(s) || tf_settings_config(s, &cfg);
	if (rc == TF_OK) {
		cfg.inputs = inputs;
		cfg.ninputs = 1;
		struct tf_train_sink sink = {0};
		rc = tf_trainer_run(t, reg, &cfg, &sink);
		snprintf(err, errlen, "%s", tf_errmsg(t));
	} else {
		snprintf(err, errlen, "%s", tf_errmsg(s));
	}
	tf_trainer_free(t);
	tf_settings_free(s);
	return rc;
}

/* Accuracy of a model on the data, or -1. */
static double
accuracy(struct tf_model *m, const char *data)
{
	const char *files[] = {data};
	struct tf_metrics *mt = tf_metrics_new(TF_TASK_BINARY, 2);
	struct tf_dataset *ds = tf_dataset_new_on(tf_model_columns(m));
	double a = tf_dataset_open(ds, files, 1, 1, 1, 0) == TF_OK &&
	                   tf_model_evaluate(m, ds, 64, mt) == TF_OK &&
	                   tf_metrics_count(mt) == 400
	               ? tf_metrics_accuracy(mt)
	               : -1;
	tf_dataset_free(ds);
	tf_metrics_free(mt);
	return a;
}

TEST(trained_evaluated_exported_and_loaded_back)
{
	char data[300], err[512];
	snprintf(data, sizeof data, "%s", at("d.tfrecord"));
	REQUIRE(make_data(data) == 0);
	int rc = train(at("ck"), data, NULL, err, sizeof err);
	if (rc != TF_OK) {
		printf("# %s\n", err);
	}
	REQUIRE(rc == TF_OK);
	struct tf_model *m = tf_model_new();
	CHECK_STATUS(tf_model_load(m, reg, at("ck")), TF_OK, m);
	REQUIRE(tf_errcode(m) == TF_OK);
	double acc = accuracy(m, data);
	CHECK(acc > 0.9);
	int64_t v;
	char vdir[300];
	CHECK_STATUS(
	    tf_model_export(m, reg, at("base"), 0, NULL, &v, vdir, sizeof vdir),
	    TF_OK, m);
	CHECK_EQ_INT(v, 1);
	CHECK_STATUS(
	    tf_model_export(m, reg, at("base"), 0, NULL, &v, vdir, sizeof vdir),
	    TF_OK, m);
	CHECK_EQ_INT(v, 2);
	/* an existing version is never replaced */
	CHECK_STATUS(
	    tf_model_export(m, reg, at("base"), 2, NULL, &v, vdir, sizeof vdir),
	    TF_ECREATE, m);
	tf_errclear(m);
	struct tf_model *e = tf_model_new();
	CHECK_STATUS(tf_model_load(e, reg, at("base/1")), TF_OK, e);
	CHECK(accuracy(e, data) == acc);
	/* an archive of it, read back into memory */
	CHECK_STATUS(tf_model_export_archive(m, reg, at("m.tar.gz"), 5, NULL),
	             TF_OK, m);
	struct tf_export_member_version *mv;
	size_t n;
	REQUIRE(tf_export_read_archive(at("m.tar.gz"), &mv, &n, err,
	                               sizeof err) == 0);
	CHECK(n == 1 && mv[0].number == 5 && mv[0].nfiles == 3);
	CHECK_STATUS(tf_model_load_files(e, reg, mv[0].files, mv[0].nfiles,
	                                 "m.tar.gz/5"),
	             TF_OK, e);
	CHECK(accuracy(e, data) == acc);
	tf_export_archive_free(mv, n);
	tf_model_free(e);
	tf_model_free(m);
}

TEST(missing_damaged_and_refused)
{
	char err[512];
	struct tf_model *m = tf_model_new();
	CHECK_STATUS(tf_model_load(m, reg, at("nothing")), TF_ENOENT, m);
	tf_errclear(m);
	CHECK_STATUS(tf_model_load(m, reg, at("ck")), TF_OK, m);
	const char *files[] = {at("missing.tfrecord")};
	struct tf_metrics *mt = tf_metrics_new(TF_TASK_BINARY, 2);
	struct tf_dataset *ds = tf_dataset_new_on(tf_model_columns(m));
	CHECK_STATUS(tf_dataset_open(ds, files, 1, 1, 1, 0), TF_OK, ds);
	CHECK_STATUS(tf_model_evaluate(m, ds, 64, mt), TF_ENOENT, m);
	CHECK_CONTAINS(tf_errmsg(m), "missing.tfrecord");
	/* a dataset of other columns is not the model's to evaluate on */
	struct tf_dataset *other = tf_dataset_new();
	CHECK_STATUS(tf_model_evaluate(m, other, 64, mt), TF_EINVAL, m);
	CHECK_CONTAINS(tf_errmsg(m), "tf_dataset_new_on");
	tf_dataset_free(other);
	tf_dataset_free(ds);
	tf_metrics_free(mt);
	/* a byte of the weights changed: the manifest says so */
	FILE *f = fopen(at("base/2/variables.bin"), "r+b");
	REQUIRE(f != NULL);
	fputc('Z', f);
	fclose(f);
	tf_errclear(m);
	CHECK_STATUS(tf_model_load(m, reg, at("base/2")), TF_EFORMAT, m);
	CHECK_CONTAINS(tf_errmsg(m), "does not match the manifest");
	char *none[1];
	size_t n;
	CHECK(tf_export_read_archive(at("nothing.tar.gz"),
	                             (struct tf_export_member_version **)none,
	                             &n, err, sizeof err) != 0);
	CHECK_CONTAINS(err, "nothing.tar.gz");
	tf_model_free(m);
	/* a setting the optimizer does not take stops the run */
	CHECK_EQ_INT(train(at("ck2"), at("d.tfrecord"), "weight_decay=1", err,
	                   sizeof err),
	             TF_EINVAL);
	CHECK_CONTAINS(err, "--opt weight_decay: optimizer 'adam' takes beta1");
	struct stat st;
	CHECK(stat(at("ck2/checkpoint"), &st) != 0);
}

int
main(void)
{
	if (test_dir_make("tfkit-model") != 0) {
		return 1;
	}
	reg = tf_registry_new();
	if (tf_registry_load(reg) != TF_OK) {
		printf("# %s\n", tf_errmsg(reg));
	}
	RUN(trained_evaluated_exported_and_loaded_back);
	RUN(missing_damaged_and_refused);
	tf_registry_free(reg);
	DONE();
}
