/*
 * tf-train - train a model on TFRecord files of tf.train.Example, resuming
 * from the latest checkpoint by default.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "tf/tf.h"
#include "tool.h"

static void
usage(void)
{
	printf(
	    "Usage: %s [OPTION]... [FILE]...\n"
	    "Train a model on TFRecord files (from tf-csv2record); with no "
	    "FILE, or when\nFILE is -, read standard input (one pass; needs "
	    "--schema).  With --checkpoint-dir\na run resumes from the "
	    "latest checkpoint there.\n\n"
	    "Model:\n"
	    "      --bn-epsilon=X         batch norm epsilon (default "
	    "0.001)\n"
	    "      --crosses=A*B,...      wide_and_deep: crossed "
	    "categorical features\n"
	    "      --dropout-keep-prob=P  dnn: dropout after each hidden "
	    "layer\n"
	    "      --embedding-dim=N      wide_and_deep: values per "
	    "categorical feature (8)\n"
	    "      --enable-bn            dnn: batch normalisation in each "
	    "hidden layer\n"
	    "      --hash-buckets=N       wide_and_deep: ids of each cross and "
	    "hashed feature (1000)\n"
	    "      --hidden=SIZES         dnn hidden layers (default "
	    "\"128 32 8\")\n"
	    "      --label=NAME           the label feature (default: the "
	    "schema's)\n"
	    "      --model=NAME           lr, dnn or wide_and_deep (default "
	    "dnn)\n"
	    "      --no-normalize         do not standardise features\n"
	    "      --schema=FILE          the data's schema (default: "
	    "FILE.schema.json)\n"
	    "      --seed=N               initial weights and shuffling "
	    "(default 0)\n"
	    "      --task=TASK            binary, multiclass or regression "
	    "(default: from\n"
	    "                             the label's type and classes)\n"
	    "Optimization:\n"
	    "  -b, --batch-size=N         examples a step (default 128)\n"
	    "  -e, --epochs=N             passes over the files (default "
	    "1; 0 = until\n"
	    "                             --max-steps)\n"
	    "      --l1=X, --l2=X         L1, L2 penalties on every weight\n"
	    "      --learning-rate=X      (default 0.001, or the "
	    "checkpoint's)\n"
	    "      --lr-decay-rate=X      exponential decay factor "
	    "(default 1: none)\n"
	    "      --lr-decay-steps=N     ... every N steps\n"
	    "      --lr-staircase         decay in whole steps of N\n"
	    "      --max-steps=N          stop when the global step "
	    "reaches N\n"
	    "      --opt=KEY=VALUE        an optimizer setting "
	    "(repeatable)\n"
	    "      --optimizer=NAME       (default adam, or the "
	    "checkpoint's)\n"
	    "      --shuffle-buffer=N     records (default 10000; 1 = in "
	    "order)\n"
	    "Output and state:\n"
	    "      --checkpoint-dir=DIR   save and resume checkpoints "
	    "here\n"
	    "      --from-scratch         ignore existing checkpoints\n"
	    "      --keep=N               checkpoints to keep (default "
	    "5)\n"
	    "      --logdir=DIR           TensorBoard event files of the "
	    "JSON lines' scalars\n"
	    "      --save-every=N         checkpoint every N steps "
	    "(default: at the end)\n"
	    "      --save-every-secs=S    ... or every S seconds\n"
	    "      --steps-to-validate=N  a JSON line every N steps "
	    "(default: at the end)\n"
	    "      --validate=FILE        evaluate on FILE at each JSON "
	    "line\n"
	    "Other:\n"
	    "      --config=FILE          settings from a JSON file (the "
	    "command line wins)\n"
	    "      --print-config         print the settings as JSON "
	    "and exit\n"
	    "      --list-plugins         list ops and optimizers found, "
	    "and exit\n"
	    "      --plugin-dir=DIR       look for plugins in DIR first\n"
	    "  -q, --quiet                no progress line\n"
	    "  -j, --threads=N            threads for matrix products "
	    "(default 1)\n"
	    "  -h, --help                 show this help and exit\n"
	    "  -V, --version              show the version and exit\n\n"
	    "Exit status: 0 success, 64 usage, 65 bad data or checkpoint, "
	    "66 missing input,\n70 the loss diverged, 73 cannot create, "
	    "74 I/O error, 75 the checkpoint\ndirectory is in use.\n",
	    tool_name);
}

enum {
	OPT_CKPT = 256,
	OPT_CONFIG,
	OPT_CROSSES,
	OPT_EMB_DIM,
	OPT_BUCKETS,
	OPT_BN,
	OPT_BN_EPS,
	OPT_DROPOUT,
	OPT_FROM_SCRATCH,
	OPT_HIDDEN,
	OPT_KEEP,
	OPT_L1,
	OPT_L2,
	OPT_LABEL,
	OPT_LIST,
	OPT_LOGDIR,
	OPT_LR,
	OPT_LR_RATE,
	OPT_LR_STAIR,
	OPT_LR_STEPS,
	OPT_MAX_STEPS,
	OPT_MODEL,
	OPT_NO_NORM,
	OPT_OPT,
	OPT_OPTIMIZER,
	OPT_PLUGIN_DIR,
	OPT_PRINT_CONFIG,
	OPT_SAVE_EVERY,
	OPT_SAVE_SECS,
	OPT_SCHEMA,
	OPT_SEED,
	OPT_SHUFFLE,
	OPT_TASK,
	OPT_VALIDATE,
	OPT_VSTEPS
};

static const struct option options[] = {
    {"batch-size", required_argument, NULL, 'b'},
    {"bn-epsilon", required_argument, NULL, OPT_BN_EPS},
    {"checkpoint-dir", required_argument, NULL, OPT_CKPT},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"crosses", required_argument, NULL, OPT_CROSSES},
    {"dropout-keep-prob", required_argument, NULL, OPT_DROPOUT},
    {"embedding-dim", required_argument, NULL, OPT_EMB_DIM},
    {"enable-bn", no_argument, NULL, OPT_BN},
    {"epochs", required_argument, NULL, 'e'},
    {"from-scratch", no_argument, NULL, OPT_FROM_SCRATCH},
    {"help", no_argument, NULL, 'h'},
    {"hash-buckets", required_argument, NULL, OPT_BUCKETS},
    {"hidden", required_argument, NULL, OPT_HIDDEN},
    {"keep", required_argument, NULL, OPT_KEEP},
    {"l1", required_argument, NULL, OPT_L1},
    {"l2", required_argument, NULL, OPT_L2},
    {"label", required_argument, NULL, OPT_LABEL},
    {"learning-rate", required_argument, NULL, OPT_LR},
    {"list-plugins", no_argument, NULL, OPT_LIST},
    {"logdir", required_argument, NULL, OPT_LOGDIR},
    {"lr-decay-rate", required_argument, NULL, OPT_LR_RATE},
    {"lr-decay-steps", required_argument, NULL, OPT_LR_STEPS},
    {"lr-staircase", no_argument, NULL, OPT_LR_STAIR},
    {"max-steps", required_argument, NULL, OPT_MAX_STEPS},
    {"model", required_argument, NULL, OPT_MODEL},
    {"no-normalize", no_argument, NULL, OPT_NO_NORM},
    {"opt", required_argument, NULL, OPT_OPT},
    {"optimizer", required_argument, NULL, OPT_OPTIMIZER},
    {"plugin-dir", required_argument, NULL, OPT_PLUGIN_DIR},
    {"print-config", no_argument, NULL, OPT_PRINT_CONFIG},
    {"quiet", no_argument, NULL, 'q'},
    {"save-every", required_argument, NULL, OPT_SAVE_EVERY},
    {"save-every-secs", required_argument, NULL, OPT_SAVE_SECS},
    {"schema", required_argument, NULL, OPT_SCHEMA},
    {"seed", required_argument, NULL, OPT_SEED},
    {"shuffle-buffer", required_argument, NULL, OPT_SHUFFLE},
    {"steps-to-validate", required_argument, NULL, OPT_VSTEPS},
    {"task", required_argument, NULL, OPT_TASK},
    {"threads", required_argument, NULL, 'j'},
    {"validate", required_argument, NULL, OPT_VALIDATE},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

static void
print_line(void *ctx, const char *json)
{
	(void)ctx;
	puts(json);
	fflush(stdout);
}

static void
print_note(void *ctx, const char *msg)
{
	(void)ctx;
	progress_done();
	warnx_("note: %s", msg);
}

static void
on_step(void *ctx, uint64_t step, uint64_t examples, double loss)
{
	(void)ctx;
	(void)loss;
	progress_update(step, examples);
}

/* Take the directory's lock, or exit 75 when another run holds it. */
static void
lock_dir(const char *dir)
{
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		die(EX_CANTCREAT, "cannot create '%s': %s", dir,
		    strerror(errno));
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/LOCK", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0) {
		die(EX_CANTCREAT, "cannot create '%s': %s", path,
		    strerror(errno));
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		die(EX_TEMPFAIL, "%s: another tf-train is using it", dir);
	}
	/* fd stays open: the lock lasts as long as the process. */
}

static void
list_plugins(const struct tf_registry *r)
{
	printf("%-10s %-14s %-10s %s\n", "kind", "name", "plugin", "path");
	for (size_t i = 0; i < tf_registry_count(r); i++) {
		struct tf_plugin_info in;
		tf_registry_info(r, i, &in);
		printf("%-10s %-14s %-10s %s\n", in.kind, in.name, in.plugin,
		       in.path);
	}
	printf("searched:\n%s", tf_registry_search_path(r));
}

/* The run's settings, as options set them. */
static struct tf_train_config cfg;
static struct tf_hparams *hp;
static struct tf_registry *reg;
static int list, quiet, threads = 1, print_config;
static const char *opt_args[64]; /* the --opt settings, for --print-config */
static size_t nopt;

/* Apply one option (from the command line or a --config file). */
static void
apply(int c, const char *arg)
{
	switch (c) {
	case 'b':
		cfg.batch_size =
		    (size_t)opt_int("--batch-size", arg, 1, 1 << 24);
		break;
	case 'e':
		cfg.epochs = (uint64_t)opt_int("--epochs", arg, 0, 1LL << 40);
		break;
	case 'h':
		usage();
		exit(0);
	case 'j':
		threads = (int)opt_int("--threads", arg, 1, 256);
		break;
	case 'q':
		quiet = 1;
		break;
	case 'V':
		print_version();
		exit(0);
	case OPT_BN:
		cfg.enable_bn = 1;
		break;
	case OPT_BN_EPS:
		cfg.bn_epsilon = opt_double("--bn-epsilon", arg);
		if (!(cfg.bn_epsilon > 0)) {
			usage_error("--bn-epsilon must be above 0");
		}
		break;
	case OPT_CKPT:
		cfg.checkpoint_dir = arg;
		break;
	case OPT_CONFIG:
		break; /* read before the command line (see main) */
	case OPT_PRINT_CONFIG:
		print_config = 1;
		break;
	case OPT_DROPOUT:
		cfg.keep_prob = opt_double("--dropout-keep-prob", arg);
		if (!(cfg.keep_prob > 0 && cfg.keep_prob <= 1)) {
			usage_error("--dropout-keep-prob must be in (0, 1]");
		}
		break;
	case OPT_FROM_SCRATCH:
		cfg.from_scratch = 1;
		break;
	case OPT_HIDDEN:
		cfg.hidden = arg;
		break;
	case OPT_KEEP:
		cfg.keep = (int)opt_int("--keep", arg, 0, 1000);
		break;
	case OPT_L1:
		cfg.l1 = opt_double("--l1", arg);
		break;
	case OPT_L2:
		cfg.l2 = opt_double("--l2", arg);
		break;
	case OPT_LABEL:
		cfg.label = arg;
		break;
	case OPT_LIST:
		list = 1;
		break;
	case OPT_LOGDIR:
		cfg.logdir = arg;
		break;
	case OPT_LR:
		cfg.learning_rate = opt_double("--learning-rate", arg);
		if (!(cfg.learning_rate > 0)) {
			usage_error("--learning-rate must be above 0");
		}
		break;
	case OPT_LR_RATE:
		cfg.lr_decay_rate = opt_double("--lr-decay-rate", arg);
		break;
	case OPT_LR_STAIR:
		cfg.lr_staircase = 1;
		break;
	case OPT_LR_STEPS:
		cfg.lr_decay_steps =
		    (uint64_t)opt_int("--lr-decay-steps", arg, 0, 1LL << 50);
		break;
	case OPT_MAX_STEPS:
		cfg.max_steps =
		    (uint64_t)opt_int("--max-steps", arg, 1, 1LL << 50);
		break;
	case OPT_MODEL:
		cfg.model = arg;
		break;
	case OPT_CROSSES:
		cfg.crosses = arg;
		break;
	case OPT_EMB_DIM:
		cfg.embedding_dim = opt_int("--embedding-dim", arg, 1, 4096);
		break;
	case OPT_BUCKETS:
		cfg.hash_buckets = opt_int("--hash-buckets", arg, 1, INT32_MAX);
		break;
	case OPT_NO_NORM:
		cfg.normalize = 0;
		break;
	case OPT_OPT:
		if (tf_hparams_parse(hp, arg) != TF_OK) {
			usage_error("--opt: %s", tf_errmsg(hp));
		}
		if (nopt < sizeof opt_args / sizeof opt_args[0]) {
			opt_args[nopt++] = arg;
		}
		break;
	case OPT_OPTIMIZER:
		cfg.optimizer = arg;
		break;
	case OPT_PLUGIN_DIR:
		tf_registry_add_dir(reg, arg);
		break;
	case OPT_SAVE_EVERY:
		cfg.save_every =
		    (uint64_t)opt_int("--save-every", arg, 1, 1LL << 50);
		break;
	case OPT_SAVE_SECS:
		cfg.save_every_secs = opt_double("--save-every-secs", arg);
		break;
	case OPT_SCHEMA:
		cfg.schema = arg;
		break;
	case OPT_SEED:
		cfg.seed = (uint64_t)opt_int("--seed", arg, 0, INT64_MAX);
		break;
	case OPT_SHUFFLE:
		cfg.shuffle_buffer =
		    (size_t)opt_int("--shuffle-buffer", arg, 1, 1LL << 30);
		break;
	case OPT_TASK:
		if (tf_task_parse(arg) < 0) {
			usage_error("--task: '%s' is not binary, "
			            "multiclass or regression",
			            arg);
		}
		cfg.task = arg;
		break;
	case OPT_VALIDATE:
		cfg.validate = arg;
		break;
	case OPT_VSTEPS:
		cfg.steps_to_validate =
		    (uint64_t)opt_int("--steps-to-validate", arg, 1, 1LL << 50);
		break;
	default:
		fprintf(stderr, "try '%s --help'\n", tool_name);
		exit(EX_USAGE);
	}
}

/* A copy of a setting's text that lives as long as the run. */
static const char *
keep_string(const char *s)
{
	static char *kept[128];
	static size_t n;
	if (n == sizeof kept / sizeof kept[0]) {
		die(EX_DATAERR, "too many settings");
	}
	if ((kept[n] = strdup(s)) == NULL) {
		die(EX_OSERR, "out of memory");
	}
	return kept[n++];
}

/*
 * Settings from a JSON file: keys are long option names, values strings
 * or numbers (true for a flag; "opt" may be a list).  The command line,
 * applied after, wins.
 */
static void
load_config(const char *path)
{
	json_error_t je;
	/* The settings point into the documents: keep them. */
	static json_t *docs[16];
	static size_t ndocs;
	if (ndocs == sizeof docs / sizeof docs[0]) {
		die(EX_USAGE, "too many --config files");
	}
	json_t *root = docs[ndocs++] = json_load_file(path, 0, &je);
	if (root == NULL &&
	    json_error_code(&je) == json_error_cannot_open_file) {
		die(EX_NOINPUT, "%s", je.text);
	}
	if (root == NULL) {
		die(EX_DATAERR, "%s:%d: %s", path, je.line, je.text);
	}
	if (!json_is_object(root)) {
		die(EX_DATAERR, "%s: not a JSON object of settings", path);
	}
	const char *key;
	json_t *v;
	json_object_foreach(root, key, v)
	{
		const struct option *o = options;
		while (o->name != NULL && strcmp(o->name, key) != 0) {
			o++;
		}
		if (o->name == NULL || o->val == OPT_CONFIG ||
		    o->val == OPT_PRINT_CONFIG || o->val == 'h' ||
		    o->val == 'V') {
			die(EX_DATAERR, "%s: unknown setting '%s'", path, key);
		}
		char buf[64];
		size_t i;
		json_t *item;
		if (o->has_arg == no_argument) {
			if (!json_is_boolean(v)) {
				die(EX_DATAERR, "%s: '%s' takes true or false",
				    path, key);
			}
			if (json_is_true(v)) {
				apply(o->val, "");
			}
		} else if (json_is_array(v) && o->val == OPT_OPT) {
			json_array_foreach(v, i, item)
			{
				apply(o->val, json_string_value(item)
				                  ? json_string_value(item)
				                  : "");
			}
		} else if (json_is_string(v)) {
			/* The strings must outlive the run: keep root. */
			apply(o->val, json_string_value(v));
		} else if (json_is_integer(v)) {
			snprintf(buf, sizeof buf, "%lld",
			         (long long)json_integer_value(v));
			apply(o->val, keep_string(buf));
		} else if (json_is_real(v)) {
			snprintf(buf, sizeof buf, "%.17g", json_real_value(v));
			apply(o->val, keep_string(buf));
		} else if (!json_is_null(v)) {
			die(EX_DATAERR,
			    "%s: '%s' has a value of the wrong kind", path,
			    key);
		}
	}
}

/* The resolved settings as JSON that --config reads back (the caller
 * frees it). */
static char *
settings(size_t flags)
{
	json_t *o = json_object();
	json_object_set_new(o, "model", json_string(cfg.model));
	json_object_set_new(o, "hidden", json_string(cfg.hidden));
	json_object_set_new(o, "enable-bn", json_boolean(cfg.enable_bn));
	json_object_set_new(o, "bn-epsilon", json_real(cfg.bn_epsilon));
	json_object_set_new(o, "dropout-keep-prob", json_real(cfg.keep_prob));
	if (strcmp(cfg.model, "wide_and_deep") == 0) {
		json_object_set_new(
		    o, "crosses", json_string(cfg.crosses ? cfg.crosses : ""));
		json_object_set_new(o, "hash-buckets",
		                    json_integer(cfg.hash_buckets));
		json_object_set_new(o, "embedding-dim",
		                    json_integer(cfg.embedding_dim));
	}
	json_object_set_new(
	    o, "optimizer",
	    json_string(cfg.optimizer ? cfg.optimizer : "adam"));
	json_object_set_new(
	    o, "learning-rate",
	    json_real(cfg.learning_rate > 0 ? cfg.learning_rate : 0.001));
	json_t *opts = json_array();
	for (size_t i = 0; i < nopt; i++) {
		json_array_append_new(opts, json_string(opt_args[i]));
	}
	json_object_set_new(o, "opt", opts);
	json_object_set_new(o, "batch-size",
	                    json_integer((json_int_t)cfg.batch_size));
	json_object_set_new(o, "epochs", json_integer((json_int_t)cfg.epochs));
	if (cfg.max_steps > 0) {
		json_object_set_new(o, "max-steps",
		                    json_integer((json_int_t)cfg.max_steps));
	}
	json_object_set_new(o, "shuffle-buffer",
	                    json_integer((json_int_t)cfg.shuffle_buffer));
	json_object_set_new(o, "seed", json_integer((json_int_t)cfg.seed));
	json_object_set_new(o, "no-normalize", json_boolean(!cfg.normalize));
	json_object_set_new(o, "lr-decay-rate", json_real(cfg.lr_decay_rate));
	json_object_set_new(o, "lr-decay-steps",
	                    json_integer((json_int_t)cfg.lr_decay_steps));
	json_object_set_new(o, "lr-staircase", json_boolean(cfg.lr_staircase));
	json_object_set_new(o, "l1", json_real(cfg.l1));
	json_object_set_new(o, "l2", json_real(cfg.l2));
	if (cfg.steps_to_validate > 0) {
		json_object_set_new(
		    o, "steps-to-validate",
		    json_integer((json_int_t)cfg.steps_to_validate));
	}
	if (cfg.save_every > 0) {
		json_object_set_new(o, "save-every",
		                    json_integer((json_int_t)cfg.save_every));
	}
	if (cfg.save_every_secs > 0) {
		json_object_set_new(o, "save-every-secs",
		                    json_real(cfg.save_every_secs));
	}
	json_object_set_new(o, "keep", json_integer(cfg.keep));
	json_object_set_new(o, "from-scratch", json_boolean(cfg.from_scratch));
	json_object_set_new(o, "threads", json_integer(threads));
	const char *strs[][2] = {{"task", cfg.task},
	                         {"schema", cfg.schema},
	                         {"label", cfg.label},
	                         {"validate", cfg.validate},
	                         {"checkpoint-dir", cfg.checkpoint_dir},
	                         {"logdir", cfg.logdir}};
	for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
		if (strs[i][1] != NULL) {
			json_object_set_new(o, strs[i][0],
			                    json_string(strs[i][1]));
		}
	}
	char *text = json_dumps(o, flags | JSON_PRESERVE_ORDER);
	if (text == NULL) {
		die(EX_OSERR, "out of memory");
	}
	json_decref(o);
	return text;
}

int
main(int argc, char **argv)
{
	tool_name = "tf-train";
	static struct tf_trainer *tr;
	tf_train_config_init(&cfg);
	hp = tf_hparams_new();
	reg = tf_registry_new();
	tr = tf_trainer_new();
	if (hp == NULL || reg == NULL || tr == NULL) {
		die(EX_OSERR, "out of memory");
	}
	cfg.hparams = hp;
	/* A --config file first, so the command line wins. */
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			break;
		}
		if (strncmp(argv[i], "--config=", 9) == 0) {
			load_config(argv[i] + 9);
		} else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
			load_config(argv[++i]);
		}
	}
	int c;
	while ((c = getopt_long(argc, argv, "b:e:hj:qV", options, NULL)) !=
	       -1) {
		apply(c, optarg);
	}
	static char *resolved;
	resolved = settings(print_config ? JSON_INDENT(2) : JSON_COMPACT);
	if (print_config) {
		puts(resolved);
		free(resolved);
		return 0;
	}
	cfg.settings = resolved; /* provenance, kept in checkpoints */
	if (cfg.learning_rate < 0) {
		usage_error("--learning-rate must be above 0");
	}
	if (!(cfg.lr_decay_rate > 0)) {
		usage_error("--lr-decay-rate must be above 0");
	}
	if (cfg.l1 < 0 || cfg.l2 < 0) {
		usage_error("--l1 and --l2 must be at least 0");
	}
	if (cfg.epochs == 0 && cfg.max_steps == 0) {
		usage_error("--epochs 0 needs --max-steps");
	}
	if (tf_registry_load(reg) != TF_OK) {
		die(EX_SOFTWARE, "%s", tf_errmsg(reg));
	}
	if (list) {
		list_plugins(reg);
		return 0;
	}
	int nin;
	cfg.inputs = (const char *const *)input_files(argc - optind,
	                                              argv + optind, &nin);
	cfg.ninputs = (size_t)nin;
	if (cfg.checkpoint_dir != NULL) {
		lock_dir(cfg.checkpoint_dir);
	}
	tf_set_threads(threads);
	struct tf_train_sink sink = {NULL, print_line, quiet ? NULL : on_step,
	                             print_note};
	if (!quiet) {
		progress_update(0, 0);
	}
	int rc = tf_trainer_run(tr, reg, &cfg, &sink);
	progress_done();
	if (rc != TF_OK) {
		die_status(rc, tf_errmsg(tr));
	}
	tf_trainer_free(tr);
	free(resolved);
	tf_hparams_free(hp);
	tf_registry_free(reg);
	return 0;
}
