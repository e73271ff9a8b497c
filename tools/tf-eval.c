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
	       "  -h, --help                show this help and exit\n"
	       "  -V, --version             show the version and exit\n\n"
	       "Exit status: 0 success, 64 usage, 65 bad data or checkpoint, "
	       "66 missing input\nor checkpoint, 74 I/O error.\n",
	       tool_name);
}

enum {
	OPT_CKPT = 256,
	OPT_ALLOW_MISSING,
	OPT_CONFUSION,
	OPT_CSV,
	OPT_HUMAN,
	OPT_PLUGIN_DIR,
	OPT_KEY
};

static const struct option options[] = {
    {"allow-missing", no_argument, NULL, OPT_ALLOW_MISSING},
    {"batch-size", required_argument, NULL, 'b'},
    {"checkpoint", required_argument, NULL, OPT_CKPT},
    {"checkpoint-dir", required_argument, NULL, 'd'},
    {"confusion", no_argument, NULL, OPT_CONFUSION},
    {"csv", no_argument, NULL, OPT_CSV},
    {"help", no_argument, NULL, 'h'},
    {"human", no_argument, NULL, OPT_HUMAN},
    {"key", required_argument, NULL, OPT_KEY},
    {"plugin-dir", required_argument, NULL, OPT_PLUGIN_DIR},
    {"predict", no_argument, NULL, 'p'},
    {"threads", required_argument, NULL, 'j'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/* A key to pass through: a JSON member, or a CSV field, first. */
static void
print_key(const char *name, const char *value, int csv)
{
	json_t *v = json_string(value);
	char *text = v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
	if (text == NULL) {
		die(EX_DATAERR, "key '%s' is not UTF-8 text", value);
	}
	if (csv) {
		/* RFC 4180 quoting when the value holds a comma, quote or
		 * line break. */
		int plain = strpbrk(value, ",\"\r\n") == NULL;
		if (plain) {
			printf("%s,", value);
		} else {
			putchar('"');
			for (const char *c = value; *c; c++) {
				if (*c == '"') {
					putchar('"');
				}
				putchar(*c);
			}
			printf("\",");
		}
	} else {
		json_t *k = json_string(name);
		char *kt = k ? json_dumps(k, JSON_ENCODE_ANY) : NULL;
		printf("%s:%s,", kt ? kt : "\"key\"", text);
		free(kt);
		json_decref(k);
	}
	free(text);
	json_decref(v);
}

/* One prediction: JSON or CSV. */
static void
print_prediction(int task, int64_t classes, const float *p, int csv)
{
	char num[48];
	if (task == TF_TASK_REGRESSION) {
		tf_format_float(num, sizeof num, p[0]);
		printf(csv ? "%s\n" : "\"prediction\":%s}\n", num);
		return;
	}
	/* Binary and multiclass alike: the class (the most probable, as
	 * tf-serve's class_ids) and every class's probability. */
	int64_t k = 0;
	for (int64_t c = 1; c < classes; c++) {
		k = p[c] > p[k] ? c : k;
	}
	printf(csv ? "%lld" : "\"class\":%lld,\"probabilities\":[",
	       (long long)k);
	for (int64_t c = 0; c < classes; c++) {
		tf_format_float(num, sizeof num, p[c]);
		printf(csv ? ",%s" : "%s%s", csv ? num : (c ? "," : ""),
		       csv ? "" : num);
	}
	printf(csv ? "\n" : "]}\n");
}

/* --predict: one line per record, JSON or CSV. */
static void
predict_all(struct tf_model *model, const char *const *files, size_t nfiles,
            size_t bs, const char *key, int csv)
{
	struct tf_dataset *ds = tf_model_dataset(model);
	int task = tf_dataset_task(ds);
	int64_t classes = tf_dataset_classes(ds);
	int64_t pw = tf_model_outputs(model);
	struct tf_batch b;
	float *out = malloc(bs * (size_t)pw * sizeof *out);
	if (tf_dataset_open(ds, files, nfiles, 1, 1, 0) != TF_OK) {
		die_status(tf_errcode(ds), tf_errmsg(ds));
	}
	if (out == NULL || tf_dataset_batch(ds, &b, bs) != TF_OK) {
		die(EX_OSERR, "out of memory");
	}
	if (csv) {
		if (key != NULL) {
			printf("%s,", key);
		}
		if (task != TF_TASK_REGRESSION) {
			printf("class");
			for (int64_t k = 0; k < classes; k++) {
				printf(",p%lld", (long long)k);
			}
			printf("\n");
		} else {
			printf("prediction\n");
		}
	}
	int rc;
	while ((rc = tf_dataset_read(ds, &b)) == TF_OK) {
		/* Predictions need no label: a record without one is fine. */
		if (tf_model_predict(model, &b, out) != TF_OK) {
			die_status(tf_errcode(model), tf_errmsg(model));
		}
		for (size_t r = 0; r < b.rows; r++) {
			if (!csv) {
				putchar('{');
			}
			if (key != NULL) {
				print_key(key, tf_dataset_key(ds, r), csv);
			}
			/* Binary outputs are (1 - p, p): print p. */
			const float *p = out + r * (size_t)pw;
			print_prediction(task, classes, p, csv);
		}
	}
	if (rc != TF_EOF) {
		die_status(rc, tf_errmsg(ds));
	}
	tf_batch_release(&b);
	free(out);
}

int
main(int argc, char **argv)
{
	tool_name = "tf-eval";
	static struct tf_registry *reg;
	static struct tf_model *model;
	reg = tf_registry_new();
	model = tf_model_new();
	if (reg == NULL || model == NULL) {
		die(EX_OSERR, "out of memory");
	}
	const char *ckpt = NULL, *key = NULL;
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
	if (tf_registry_load(reg) != TF_OK) {
		die(EX_SOFTWARE, "%s", tf_errmsg(reg));
	}
	tf_set_threads(threads);
	if (tf_model_load(model, reg, ckpt) != TF_OK) {
		die_status(tf_errcode(model), tf_errmsg(model));
	}
	struct tf_dataset *ds = tf_model_dataset(model);
	int task = tf_dataset_task(ds);
	int64_t classes = tf_dataset_classes(ds);
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
		die(EX_OSERR, "out of memory");
	}
	if (!predict) {
		/* Metrics: the library's evaluation loop. */
		if (tf_model_evaluate(model, files, nfiles, bs, m) != TF_OK) {
			die_status(tf_errcode(model), tf_errmsg(model));
		}
	} else {
		predict_all(model, files, nfiles, bs, key, csv);
	}
	if (!predict) {
		char *out = NULL;
		if (human) {
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
	tf_model_free(model);
	tf_registry_free(reg);
	if (fflush(stdout) != 0) {
		die(EX_IOERR, "write error");
	}
	return 0;
}
