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

#include "tf/tf.h"
#include "tool.h"

static void
usage(void)
{
	printf("Usage: %s [OPTION]... [FILE]...\n"
	       "Train a model on TFRecord files (from tf-csv2record); with no "
	       "FILE, or when\nFILE is -, read standard input (one pass; needs "
	       "--schema).  With --checkpoint-dir\na run resumes from the "
	       "latest checkpoint there.\n\n"
	       "Model:\n"
	       "      --bn-epsilon=X         batch norm epsilon (default "
	       "0.001)\n"
	       "      --dropout-keep-prob=P  dnn: dropout after each hidden "
	       "layer\n"
	       "      --enable-bn            dnn: batch normalisation in each "
	       "hidden layer\n"
	       "      --hidden=SIZES         dnn hidden layers (default "
	       "\"128 32 8\")\n"
	       "      --label=NAME           the label feature (default: the "
	       "schema's)\n"
	       "      --model=NAME           lr or dnn (default dnn)\n"
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
    {"dropout-keep-prob", required_argument, NULL, OPT_DROPOUT},
    {"enable-bn", no_argument, NULL, OPT_BN},
    {"epochs", required_argument, NULL, 'e'},
    {"from-scratch", no_argument, NULL, OPT_FROM_SCRATCH},
    {"help", no_argument, NULL, 'h'},
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

int
main(int argc, char **argv)
{
	tool_name = "tf-train";
	struct tf_train_config cfg;
	tf_train_config_init(&cfg);
	static struct tf_hparams *hp;
	static struct tf_registry *reg;
	static struct tf_trainer *tr;
	hp = tf_hparams_new();
	reg = tf_registry_new();
	tr = tf_trainer_new();
	if (hp == NULL || reg == NULL || tr == NULL) {
		die(EX_OSERR, "out of memory");
	}
	cfg.hparams = hp;
	int list = 0, quiet = 0, threads = 1;
	int c;
	while ((c = getopt_long(argc, argv, "b:e:hj:qV", options, NULL)) !=
	       -1) {
		switch (c) {
		case 'b':
			cfg.batch_size =
			    (size_t)opt_int("--batch-size", optarg, 1, 1 << 24);
			break;
		case 'e':
			cfg.epochs =
			    (uint64_t)opt_int("--epochs", optarg, 0, 1LL << 40);
			break;
		case 'h':
			usage();
			return 0;
		case 'j':
			threads = (int)opt_int("--threads", optarg, 1, 256);
			break;
		case 'q':
			quiet = 1;
			break;
		case 'V':
			print_version();
			return 0;
		case OPT_BN:
			cfg.enable_bn = 1;
			break;
		case OPT_BN_EPS:
			cfg.bn_epsilon = opt_double("--bn-epsilon", optarg);
			if (!(cfg.bn_epsilon > 0)) {
				usage_error("--bn-epsilon must be above 0");
			}
			break;
		case OPT_CKPT:
			cfg.checkpoint_dir = optarg;
			break;
		case OPT_DROPOUT:
			cfg.keep_prob =
			    opt_double("--dropout-keep-prob", optarg);
			if (!(cfg.keep_prob > 0 && cfg.keep_prob <= 1)) {
				usage_error(
				    "--dropout-keep-prob must be in (0, 1]");
			}
			break;
		case OPT_FROM_SCRATCH:
			cfg.from_scratch = 1;
			break;
		case OPT_HIDDEN:
			cfg.hidden = optarg;
			break;
		case OPT_KEEP:
			cfg.keep = (int)opt_int("--keep", optarg, 0, 1000);
			break;
		case OPT_L1:
			cfg.l1 = opt_double("--l1", optarg);
			break;
		case OPT_L2:
			cfg.l2 = opt_double("--l2", optarg);
			break;
		case OPT_LABEL:
			cfg.label = optarg;
			break;
		case OPT_LIST:
			list = 1;
			break;
		case OPT_LOGDIR:
			cfg.logdir = optarg;
			break;
		case OPT_LR:
			cfg.learning_rate =
			    opt_double("--learning-rate", optarg);
			if (!(cfg.learning_rate > 0)) {
				usage_error("--learning-rate must be above 0");
			}
			break;
		case OPT_LR_RATE:
			cfg.lr_decay_rate =
			    opt_double("--lr-decay-rate", optarg);
			break;
		case OPT_LR_STAIR:
			cfg.lr_staircase = 1;
			break;
		case OPT_LR_STEPS:
			cfg.lr_decay_steps = (uint64_t)opt_int(
			    "--lr-decay-steps", optarg, 0, 1LL << 50);
			break;
		case OPT_MAX_STEPS:
			cfg.max_steps = (uint64_t)opt_int("--max-steps", optarg,
			                                  1, 1LL << 50);
			break;
		case OPT_MODEL:
			cfg.model = optarg;
			break;
		case OPT_NO_NORM:
			cfg.normalize = 0;
			break;
		case OPT_OPT:
			if (tf_hparams_parse(hp, optarg) != TF_OK) {
				usage_error("--opt: %s", tf_errmsg(hp));
			}
			break;
		case OPT_OPTIMIZER:
			cfg.optimizer = optarg;
			break;
		case OPT_PLUGIN_DIR:
			tf_registry_add_dir(reg, optarg);
			break;
		case OPT_SAVE_EVERY:
			cfg.save_every = (uint64_t)opt_int(
			    "--save-every", optarg, 1, 1LL << 50);
			break;
		case OPT_SAVE_SECS:
			cfg.save_every_secs =
			    opt_double("--save-every-secs", optarg);
			break;
		case OPT_SCHEMA:
			cfg.schema = optarg;
			break;
		case OPT_SEED:
			cfg.seed =
			    (uint64_t)opt_int("--seed", optarg, 0, INT64_MAX);
			break;
		case OPT_SHUFFLE:
			cfg.shuffle_buffer = (size_t)opt_int(
			    "--shuffle-buffer", optarg, 1, 1LL << 30);
			break;
		case OPT_TASK:
			if (tf_task_parse(optarg) < 0) {
				usage_error("--task: '%s' is not binary, "
				            "multiclass or regression",
				            optarg);
			}
			cfg.task = optarg;
			break;
		case OPT_VALIDATE:
			cfg.validate = optarg;
			break;
		case OPT_VSTEPS:
			cfg.steps_to_validate = (uint64_t)opt_int(
			    "--steps-to-validate", optarg, 1, 1LL << 50);
			break;
		default:
			fprintf(stderr, "try '%s --help'\n", tool_name);
			return EX_USAGE;
		}
	}
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
	static const char *stdin_only[] = {"-"};
	cfg.inputs =
	    optind < argc ? (const char *const *)argv + optind : stdin_only;
	cfg.ninputs = optind < argc ? (size_t)(argc - optind) : 1;
	if (cfg.checkpoint_dir != NULL) {
		lock_dir(cfg.checkpoint_dir);
	}
	tf_set_threads(threads);
	struct tf_train_sink sink = {NULL, print_line, quiet ? NULL : on_step};
	if (!quiet) {
		progress_update(0, 0);
	}
	int rc = tf_trainer_run(tr, reg, &cfg, &sink);
	progress_done();
	if (rc != TF_OK) {
		die_status(rc, tf_errmsg(tr));
	}
	tf_trainer_free(tr);
	tf_hparams_free(hp);
	tf_registry_free(reg);
	return 0;
}
