/*
 * tf-export - turn a checkpoint into a versioned model directory (or an
 * archive, a TensorFlow.js model, an ONNX model) for serving.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "tf/tf.h"
#include "tool.h"

static void
usage(void)
{
	printf("Usage: %s --checkpoint-dir=DIR --export-base=BASE [OPTION]...\n"
	       "  or:  %s --checkpoint-dir=DIR --format=tfjs|onnx "
	       "--output=PATH\n"
	       "Write the latest checkpoint of DIR as BASE/N/, N one above "
	       "the highest version\nin BASE, built under a temporary name "
	       "and renamed into place; or as a\nTensorFlow.js Layers model "
	       "or an ONNX model.  Prints one JSON line.\n\n"
	       "      --archive=FILE        write FILE.tar.gz holding N/ "
	       "instead of a directory\n"
	       "      --checkpoint=FILE     a checkpoint file instead of the "
	       "latest\n"
	       "  -d, --checkpoint-dir=DIR  the latest checkpoint of DIR\n"
	       "      --export-base=BASE    the directory of versions\n"
	       "  -f, --format=FORMAT       tfkit (default), tfjs or onnx\n"
	       "      --if-better=METRIC    export only when the checkpoint's "
	       "validation METRIC\n"
	       "                            is no worse than the newest "
	       "export's (a tie\n"
	       "                            exports; loss, mse, rmse, mae: "
	       "lower is better;\n"
	       "                            accuracy, auc, r2: higher)\n"
	       "  -o, --output=PATH         tfjs: a directory; onnx: a file\n"
	       "      --plugin-dir=DIR      look for plugins in DIR first\n"
	       "      --version N           write version N (never "
	       "replaces one)\n"
	       "  -h, --help                show this help and exit\n"
	       "  -V, --version             show the version and exit "
	       "(--version with no number)\n\n"
	       "Exit status: 0 success (also when --if-better declines), 64 "
	       "usage, 65 bad\ncheckpoint or no such metric, 66 missing "
	       "checkpoint, 70 out of memory or an internal error,\n73 the "
	       "version exists or cannot be created, 74 I/O error.\n",
	       tool_name, tool_name);
}

enum { OPT_ARCHIVE = 256, OPT_CKPT, OPT_BASE, OPT_IF_BETTER, OPT_PLUGIN_DIR };

static const struct option options[] = {
    {"archive", required_argument, NULL, OPT_ARCHIVE},
    {"checkpoint", required_argument, NULL, OPT_CKPT},
    {"checkpoint-dir", required_argument, NULL, 'd'},
    {"export-base", required_argument, NULL, OPT_BASE},
    {"format", required_argument, NULL, 'f'},
    {"help", no_argument, NULL, 'h'},
    {"if-better", required_argument, NULL, OPT_IF_BETTER},
    {"output", required_argument, NULL, 'o'},
    {"plugin-dir", required_argument, NULL, OPT_PLUGIN_DIR},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/*
 * "--version N" (or --version=N) is the version to write; a bare
 * --version prints the program's version.  Take the numeric form out of
 * argv before getopt sees it.
 */
static long long
take_version(int *argc, char **argv)
{
	long long v = 0;
	for (int i = 1; i < *argc; i++) {
		const char *num = NULL;
		int drop = 0;
		if (strcmp(argv[i], "--") == 0) {
			break;
		}
		if (strncmp(argv[i], "--version=", 10) == 0) {
			num = argv[i] + 10;
			drop = 1;
		} else if (strcmp(argv[i], "--version") == 0 && i + 1 < *argc &&
		           argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9') {
			num = argv[i + 1];
			drop = 2;
		}
		if (num == NULL) {
			continue;
		}
		v = opt_int("--version", num, 1, (long long)1e15);
		memmove(&argv[i], &argv[i + drop],
		        (size_t)(*argc - i - drop + 1) * sizeof *argv);
		*argc -= drop;
		i--;
	}
	return v;
}

static void
print_json(json_t *o)
{
	char *text =
	    o ? json_shortest(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	if (text == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	puts(text);
	free(text);
	json_decref(o);
}

int
main(int argc, char **argv)
{
	tool_start("tf-export");
	static struct tf_registry *reg;
	static struct tf_model *model;
	reg = tf_registry_new();
	model = tf_model_new();
	if (reg == NULL || model == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	long long version = take_version(&argc, argv);
	const char *ckpt = NULL, *base = NULL, *archive = NULL, *out = NULL;
	const char *format = "tfkit", *if_better = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "d:f:ho:V", options, NULL)) != -1) {
		switch (c) {
		case 'd':
		case OPT_CKPT:
			ckpt = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'h':
			usage();
			return 0;
		case 'o':
			out = optarg;
			break;
		case 'V':
			print_version();
			return 0;
		case OPT_ARCHIVE:
			archive = optarg;
			break;
		case OPT_BASE:
			base = optarg;
			break;
		case OPT_IF_BETTER:
			if_better = optarg;
			break;
		case OPT_PLUGIN_DIR:
			tf_registry_add_dir(reg, optarg);
			break;
		default:
			fprintf(stderr, "try '%s --help'\n", tool_name);
			return EX_USAGE;
		}
	}
	if (optind < argc) {
		usage_error("unexpected argument '%s'", argv[optind]);
	}
	if (ckpt == NULL) {
		usage_error("say which model: --checkpoint-dir DIR or "
		            "--checkpoint FILE");
	}
	int native = strcmp(format, "tfkit") == 0;
	if (!native && strcmp(format, "tfjs") != 0 &&
	    strcmp(format, "onnx") != 0) {
		usage_error("--format: '%s' is not tfkit, tfjs or onnx",
		            format);
	}
	if (native && base == NULL && archive == NULL) {
		usage_error("say where: --export-base BASE or --archive FILE");
	}
	if (!native && out == NULL) {
		usage_error("--format %s needs --output PATH", format);
	}
	if (native && out != NULL) {
		usage_error("--output goes with --format tfjs or onnx");
	}
	if (if_better != NULL && (base == NULL || archive != NULL || !native)) {
		usage_error("--if-better compares with the newest version of "
		            "--export-base");
	}
	if (if_better != NULL && !metric_known(if_better)) {
		usage_error("--if-better: unknown metric '%s' (loss, mse, "
		            "rmse, mae, accuracy, auc, r2)",
		            if_better);
	}
	load_model(reg, model, ckpt, NULL);
	/* static: reachable for leak checkers when a failure exits early */
	static json_t *line;
	line = json_object();
	json_object_set_new(line, "format", json_string(format));
	json_object_set_new(line, "checkpoint",
	                    json_string(tf_model_checkpoint(model)));
	json_object_set_new(line, "step",
	                    json_integer((json_int_t)tf_model_step(model)));
	int rc;
	if (native && archive == NULL) {
		rc = export_version(reg, model, base, version, if_better,
		                    "tf-export " TF_TOOL_VERSION, line);
		if (rc == TF_EFORMAT && if_better != NULL &&
		    json_object_get(line, "value") == NULL) {
			exit(EX_DATAERR); /* no such metric: said */
		}
	} else if (!native) {
		rc = strcmp(format, "tfjs") == 0
		         ? tf_model_export_tfjs(model, out)
		         : tf_model_export_onnx(model, out);
		json_object_set_new(line, "path", json_string(out));
	} else {
		int64_t v = version;
		if (v == 0 && base != NULL) {
			int64_t *vs;
			size_t n;
			char err[512];
			if (tf_export_versions(base, &vs, &n, err,
			                       sizeof err) == TF_OK &&
			    n > 0) {
				v = vs[0] + 1;
			}
			free(vs);
		}
		v = v > 0 ? v : 1;
		char *prov = export_provenance("tf-export " TF_TOOL_VERSION);
		rc = tf_model_export_archive(model, reg, archive, v, prov);
		free(prov);
		json_object_set_new(line, "version", json_integer(v));
		json_object_set_new(line, "path", json_string(archive));
	}
	if (rc != TF_OK) {
		die_status(rc, tf_errmsg(model));
	}
	if (json_object_get(line, "exported") == NULL) {
		export_said(line, model); /* tfjs, onnx, an archive */
	}
	print_json(line);
	tf_model_free(model);
	tf_registry_free(reg);
	stdout_flush();
	return 0;
}
