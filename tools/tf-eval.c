/*
 * tf-eval - evaluate a trained checkpoint on TFRecord files, or write one
 * prediction per record.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "tf/tf.h"
#include "tool.h"

static void
usage(void)
{
	printf("Usage: %s --checkpoint-dir=DIR [OPTION]... [FILE]...\n"
	       "Evaluate the latest checkpoint of DIR on TFRecord files (from "
	       "tf-csv2record),\nor with --predict write one prediction per "
	       "record.  With no FILE, or when\nFILE is -, read standard "
	       "input.\n\n"
	       "      --allow-missing       a record may lack features: their "
	       "training mean\n"
	       "  -b, --batch-size=N        examples a step (default 1024)\n"
	       "      --checkpoint=FILE     a checkpoint file instead of the "
	       "latest\n"
	       "  -d, --checkpoint-dir=DIR  the latest checkpoint of DIR\n"
	       "      --confusion           add the confusion matrix to the "
	       "JSON\n"
	       "      --csv                 --predict: CSV instead of JSON "
	       "lines\n"
	       "      --human               a table instead of JSON\n"
	       "      --key=NAME            --predict: pass this feature "
	       "through, first\n"
	       "      --plugin-dir=DIR      look for plugins in DIR first\n"
	       "  -p, --predict             one prediction per record\n"
	       "  -j, --threads=N           threads for matrix products "
	       "(default 1)\n"
	       "      --device=DEV          cpu (default), cuda or cuda:N "
	       "(a GPU)\n"
	       "      --gpu-math=M          fp32 (default) or tf32\n"
	       "  -h, --help                show this help and exit\n"
	       "  -V, --version             show the version and exit\n\n"
	       "Exit status: 0 success, 64 usage, 65 bad data or checkpoint, "
	       "66 missing input\nor checkpoint, 69 device unavailable, 70 out "
	       "of memory or an internal error,\n74 I/O error.\n",
	       tool_name);
}

enum {
	OPT_CKPT = 256,
	OPT_ALLOW_MISSING,
	OPT_CONFUSION,
	OPT_CSV,
	OPT_HUMAN,
	OPT_PLUGIN_DIR,
	OPT_KEY,
	OPT_DEVICE,
	OPT_GPU_MATH
};

static const struct option options[] = {
    {"allow-missing", no_argument, NULL, OPT_ALLOW_MISSING},
    {"batch-size", required_argument, NULL, 'b'},
    {"checkpoint", required_argument, NULL, OPT_CKPT},
    {"checkpoint-dir", required_argument, NULL, 'd'},
    {"confusion", no_argument, NULL, OPT_CONFUSION},
    {"csv", no_argument, NULL, OPT_CSV},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"gpu-math", required_argument, NULL, OPT_GPU_MATH},
    {"help", no_argument, NULL, 'h'},
    {"human", no_argument, NULL, OPT_HUMAN},
    {"key", required_argument, NULL, OPT_KEY},
    {"plugin-dir", required_argument, NULL, OPT_PLUGIN_DIR},
    {"predict", no_argument, NULL, 'p'},
    {"threads", required_argument, NULL, 'j'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/* A CSV field, RFC 4180 quoted when it holds a comma, quote or line
 * break. */
static void
print_csv_field(const char *value)
{
	if (strpbrk(value, ",\"\r\n") == NULL) {
		fputs(value, stdout);
		return;
	}
	putchar('"');
	for (const char *c = value; *c; c++) {
		if (*c == '"') {
			putchar('"');
		}
		putchar(*c);
	}
	putchar('"');
}

/* A string as JSON text (the caller frees it); the key's and its name's
 * must be UTF-8. */
static char *
json_text(const char *what, const char *value)
{
	json_t *v = json_string(value);
	char *text = v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
	json_decref(v);
	if (text == NULL) {
		die(EX_DATAERR, "%s '%s' is not UTF-8 text", what, value);
	}
	return text;
}

/*
 * One prediction.  JSON: the element tf-serve's :predict answers for the
 * row (tf_prediction_row: a number for a regression, probabilities,
 * class_ids and classes for a classifier); with a key, an object whose
 * first member is the key (a regression's value then in "predictions").
 * CSV: the key, then the class's label and each class's probability, or
 * the value.
 */
static void
print_prediction(struct tf_request *q, const struct tf_model *model,
                 const float *p, const char *key, const char *kv, int csv)
{
	int64_t n = tf_model_outputs(model);
	int reg = tf_model_task(model) == TF_TASK_REGRESSION;
	if (csv) {
		char num[48];
		if (key != NULL) {
			print_csv_field(kv);
			putchar(',');
		}
		if (!reg) {
			int64_t k = 0;
			for (int64_t c = 1; c < n; c++) {
				k = p[c] > p[k] ? c : k;
			}
			print_csv_field(tf_model_label(model, k));
		}
		for (int64_t c = 0; c < n; c++) {
			tf_format_float(num, sizeof num, p[c]);
			printf(reg ? "%s" : ",%s", num);
		}
		putchar('\n');
		return;
	}
	const char *row;
	size_t len;
	if (tf_prediction_row(q, model, p, &row, &len) != TF_OK) {
		die(EX_SOFTWARE, "out of memory");
	}
	if (key != NULL) {
		char *kn = json_text("--key", key), *kt = json_text("key", kv);
		if (reg) {
			printf("{%s:%s,\"predictions\":%.*s}\n", kn, kt,
			       (int)len, row);
		} else { /* the key before the row's members */
			printf("{%s:%s,%.*s\n", kn, kt, (int)len - 1, row + 1);
		}
		free(kn);
		free(kt);
		return;
	}
	fwrite(row, 1, len, stdout);
	putchar('\n');
}

/* --predict: one line per record, JSON or CSV. */
static void
predict_all(struct tf_model *model, struct tf_dataset *ds, size_t bs,
            const char *key, int csv)
{
	int task = tf_model_task(model);
	int64_t pw = tf_model_outputs(model);
	struct tf_batch b;
	struct tf_request *q = tf_request_new();
	float *out = malloc(bs * (size_t)pw * sizeof *out);
	if (q == NULL || out == NULL || tf_dataset_batch(ds, &b, bs) != TF_OK) {
		die(EX_SOFTWARE, "out of memory");
	}
	if (csv) {
		if (key != NULL) {
			print_csv_field(key);
			putchar(',');
		}
		if (task != TF_TASK_REGRESSION) {
			/* class, then p_LABEL for each class */
			printf("class");
			for (int64_t k = 0; k < pw; k++) {
				char h[1100];
				snprintf(h, sizeof h, "p_%s",
				         tf_model_label(model, k));
				putchar(',');
				print_csv_field(h);
			}
			printf("\n");
		} else {
			printf("predictions\n");
		}
	}
	int rc;
	while ((rc = tf_dataset_read(ds, &b)) == TF_OK) {
		/* Predictions need no label: a record without one is fine. */
		if (tf_model_predict(model, &b, out) != TF_OK) {
			die_status(tf_errcode(model), tf_errmsg(model));
		}
		for (size_t r = 0; r < b.rows; r++) {
			print_prediction(q, model, out + r * (size_t)pw, key,
			                 tf_dataset_key(ds, r), csv);
		}
	}
	if (rc != TF_EOF) {
		die_status(rc, tf_errmsg(ds));
	}
	tf_batch_release(&b);
	tf_request_free(q);
	free(out);
}

/* The table's classes as the data spells them ("-1", "setosa"). */
static void
name_classes(struct tf_metrics *m, const struct tf_columns *cols,
             int64_t classes)
{
	char **names = calloc((size_t)classes, sizeof *names);
	int ok = names != NULL;
	for (int64_t k = 0; ok && k < classes; k++) {
		char buf[256];
		if (tf_columns_class_name(cols, k, buf, sizeof buf) != TF_OK) {
			snprintf(buf, sizeof buf, "%lld", (long long)k);
		}
		ok = (names[k] = strdup(buf)) != NULL;
	}
	if (!ok ||
	    tf_metrics_name_classes(m, (const char *const *)names) != TF_OK) {
		die(EX_SOFTWARE, "out of memory");
	}
	for (int64_t k = 0; k < classes; k++) {
		free(names[k]);
	}
	free(names);
}

int
main(int argc, char **argv)
{
	tool_start("tf-eval");
	static struct tf_registry *reg;
	static struct tf_model *model;
	reg = tf_registry_new();
	model = tf_model_new();
	if (reg == NULL || model == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	const char *ckpt = NULL, *key = NULL, *device = NULL, *math = NULL;
	size_t bs = 1024;
	int predict = 0, csv = 0, human = 0, confusion = 0, threads = 1;
	int allow_missing = 0;
	int c;
	while ((c = getopt_long(argc, argv, "b:d:hj:pV", options, NULL)) !=
	       -1) {
		switch (c) {
		case 'b':
			bs =
			    (size_t)opt_int("--batch-size", optarg, 1, 1 << 24);
			break;
		case 'd':
		case OPT_CKPT:
			ckpt = optarg;
			break;
		case 'h':
			usage();
			return 0;
		case 'j':
			threads = (int)opt_int("--threads", optarg, 1, 256);
			break;
		case 'p':
			predict = 1;
			break;
		case 'V':
			print_version();
			return 0;
		case OPT_CONFUSION:
			confusion = 1;
			break;
		case OPT_CSV:
			csv = 1;
			break;
		case OPT_HUMAN:
			human = 1;
			break;
		case OPT_ALLOW_MISSING:
			allow_missing = 1;
			break;
		case OPT_KEY:
			key = optarg;
			break;
		case OPT_DEVICE:
			device = optarg;
			break;
		case OPT_GPU_MATH:
			math = optarg;
			break;
		case OPT_PLUGIN_DIR:
			tf_registry_add_dir(reg, optarg);
			break;
		default:
			fprintf(stderr, "try '%s --help'\n", tool_name);
			return EX_USAGE;
		}
	}
	if (ckpt == NULL) {
		usage_error("say which model: --checkpoint-dir DIR or "
		            "--checkpoint FILE");
	}
	if (csv && !predict) {
		usage_error("--csv goes with --predict");
	}
	tf_set_threads(threads);
	load_model(reg, model, ckpt, open_device(device, math));
	/* Records are read as rows of the model's columns. */
	static struct tf_dataset *ds;
	ds = tf_dataset_new_on(tf_model_columns(model));
	if (ds == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	int task = tf_model_task(model);
	int64_t classes = tf_columns_classes(tf_model_columns(model));
	int nin;
	const char *const *files = (const char *const *)input_files(
	    argc - optind, argv + optind, &nin);
	size_t nfiles = (size_t)nin;
	tf_dataset_set_label_optional(ds, predict);
	tf_dataset_set_allow_missing(ds, allow_missing);
	if (key != NULL && (!predict || tf_dataset_set_key(ds, key) != TF_OK)) {
		usage_error("--key goes with --predict");
	}
	static struct tf_metrics *m;
	m = tf_metrics_new(task, classes);
	if (m == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	if (tf_dataset_open(ds, files, nfiles, 1, 1, 0) != TF_OK) {
		die_status(tf_errcode(ds), tf_errmsg(ds));
	}
	if (!predict) {
		/* Metrics: the library's evaluation loop. */
		if (tf_model_evaluate(model, ds, bs, m) != TF_OK) {
			die_status(tf_errcode(model), tf_errmsg(model));
		}
	} else {
		predict_all(model, ds, bs, key, csv);
	}
	if (!predict) {
		char *out = NULL;
		if (human) {
			if (task != TF_TASK_REGRESSION) {
				name_classes(m, tf_model_columns(model),
				             classes);
			}
			tf_metrics_text(m, &out);
			printf("checkpoint %s\n%s", tf_model_checkpoint(model),
			       out);
		} else {
			tf_metrics_json(m, confusion, &out);
			printf("{%s,\"task\":\"%s\"}\n", out,
			       tf_task_name(task));
		}
		free(out);
	}
	tf_metrics_free(m);
	tf_dataset_free(ds);
	tf_model_free(model);
	tf_registry_free(reg);
	stdout_flush();
	return 0;
}
