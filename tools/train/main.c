/*
 * main.c - tf-train: train a model on TFRecord files of tf.train.Example,
 * resuming from the latest checkpoint by default; one task of a distributed run
 * when a cluster is given (tf/cluster.h).
 *
 * Built twice: as tf-train, and with TFKIT_PS as tf-ps, the parameter
 * server task, which takes the same command line (so one line serves
 * every task of a cluster) and ignores the flags it does not use.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "tf/tf.h"
#include "tool.h"
#include "train.h"

#ifndef TFKIT_PS
static void
usage(void)
{
	printf(
	    "Usage: %s [OPTION]... [FILE]...\n"
	    "Train a model on TFRecord files (from tf-csv2record, or any "
	    "tool); with no\nFILE, or when FILE is -, read standard input "
	    "(once, kept for more epochs up\nto 256 MiB).  With "
	    "--checkpoint-dir a run resumes from the latest checkpoint "
	    "there.\n\n"
	    "Model:\n"
	    "      --allow-missing        a record may lack features: their "
	    "training mean\n"
	    "      --bn-epsilon=X         batch norm epsilon (default "
	    "0.001)\n"
	    "      --conv=FILTERS         cnn: conv3x3-relu-maxpool2 blocks "
	    "(default \"32 64\")\n"
	    "      --crosses=A*B,...      wide_and_deep: crossed "
	    "categorical features\n"
	    "      --dropout-keep-prob=P  dnn: dropout after each hidden "
	    "layer\n"
	    "      --embedding-dim=N      wide_and_deep, token sequences: "
	    "values per\n"
	    "                             category or token (8)\n"
	    "      --enable-bn            dnn: batch normalisation in each "
	    "hidden layer\n"
	    "      --exclude=A,B,...      features to leave out\n"
	    "      --features=A,B,...     the features to train on (default: "
	    "all)\n"
	    "      --hash-buckets=N       ids of each cross, hashed feature "
	    "and hashed\n"
	    "                             token sequence (1000); sparse "
	    "ids, when given\n"
	    "      --hidden=SIZES         dnn hidden layers (default "
	    "\"128 32 8\")\n"
	    "      --image-channels=N     image records: 1 (grey) or 3 "
	    "(RGB) (default: the\n"
	    "                             images')\n"
	    "      --image-scale=HOW      image records: pixels as unit "
	    "[0,1] (default),\n"
	    "                             symmetric [-1,1] or "
	    "standardize (per image)\n"
	    "      --image-size=HxW       image records: the size images "
	    "are resized to\n"
	    "                             (default: theirs, when all "
	    "agree)\n"
	    "      --input-shape=HxWxC    cnn: the image each row is "
	    "(default: a square,\n"
	    "                             or the image records' shape); "
	    "lstm, gru: TxF,\n"
	    "                             T steps of F features\n"
	    "      --label=NAME           the label feature (default: the "
	    "schema's)\n"
	    "      --max-length=N         a sequence's steps a row keeps "
	    "(default: the\n"
	    "                             schema's longest; longer ones "
	    "are cut)\n"
	    "      --model=NAME           lr, dnn, cnn, lstm, "
	    "bidirectional_lstm, gru or\n"
	    "                             wide_and_deep (default dnn)\n"
	    "      --model-file=SPEC      a model of your own: a spec of "
	    "ops (tf-plugin(7))\n"
	    "      --no-normalize         do not standardise features\n"
	    "      --oov-buckets=N        sparse ids: N rows more, for the "
	    "ids the table has\n"
	    "                             none of their own for, hashed "
	    "(default: none;\n"
	    "                             such an id is refused)\n"
	    "      --rnn-units=N          lstm, bidirectional_lstm, gru: "
	    "the recurrent layer's\n"
	    "                             units (default 64)\n"
	    "      --gru-reset-after=BOOL gru: the reset gate after the "
	    "recurrent product\n"
	    "                             (true, Keras' and cuDNN's default) "
	    "or before it\n"
	    "                             (false: TensorFlow.js exports it)\n"
	    "      --schema=FILE          the data's schema (default: "
	    "FILE.schema.json;\n"
	    "                             without one, inferred from the "
	    "records)\n"
	    "      --seed=N               initial weights and shuffling "
	    "(default 0)\n"
	    "      --sparse               sparse ids (libsvm): a bag a row, "
	    "however few ids\n"
	    "                             (default: when there are more "
	    "than 4096)\n"
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
	    "      --random-crop=N        image records: shift each image "
	    "by up to N pixels\n"
	    "      --random-flip          image records: mirror half the "
	    "images\n"
	    "      --shuffle-buffer=N     records (default 10000; 1 = in "
	    "order)\n"
	    "Output and state:\n"
	    "  -d, --checkpoint-dir=DIR   save and resume checkpoints "
	    "here\n"
	    "      --export-base=BASE     publish checkpoints as versions "
	    "BASE/N/ (tf-serve's)\n"
	    "      --export-every=S       ... every S seconds (default 60) "
	    "and at the end\n"
	    "      --from-scratch         ignore existing checkpoints\n"
	    "      --if-better=METRIC     export only when the validation "
	    "METRIC is no worse\n"
	    "                             than the newest version's "
	    "(needs --validate)\n"
	    "      --if-damaged=WHAT      a latest checkpoint that does not "
	    "load: stop\n"
	    "                             (default) or previous (set it "
	    "aside, resume\n"
	    "                             from the one before)\n"
	    "      --keep=N               checkpoints to keep (default "
	    "5)\n"
	    "      --logdir=DIR           TensorBoard event files of the "
	    "JSON lines' scalars\n"
	    "      --save-every=N         checkpoint every N steps "
	    "(default: at the end)\n"
	    "      --save-every-secs=S    ... or every S seconds\n"
	    "      --stream               train on one input as it comes "
	    "(a file followed as\n"
	    "                             it grows, a FIFO, standard "
	    "input), records once,\n"
	    "                             in order; until the pipe closes "
	    "or a signal\n"
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
	    "  -j, --threads=N            split each batch across N "
	    "threads (default 1)\n"
	    "      --device=DEV           cpu (default), cuda or cuda:N "
	    "(a GPU)\n"
	    "      --gpu-math=M           fp32 (default) or tf32 "
	    "(tensor cores)\n"
	    "  -h, --help                 show this help and exit\n"
	    "  -V, --version              show the version and exit\n\n"
	    "Distributed (tf-ps(1)):\n"
	    "      --auth-token=TOKEN     required in every message to the "
	    "ps tasks\n"
	    "      --auth-token-file=F    ... read from F\n"
	    "      --chief-hosts=H:P      a chief task (default: worker 0 "
	    "is the chief)\n"
	    "      --chunk-size=N         hand out the inputs in chunks of "
	    "N records\n"
	    "                             (a lost worker's go to the "
	    "others)\n"
	    "      --job-name=NAME        this task's job: worker, chief or "
	    "ps\n"
	    "      --peer-timeout=S       seconds to wait for a silent peer "
	    "(default 60)\n"
	    "      --port-base=N          Slurm, MPI: a task's port is N + "
	    "its place (8888)\n"
	    "      --print-cluster        print the resolved cluster as JSON "
	    "and exit\n"
	    "      --ps-hosts=H:P,...     the ps tasks\n"
	    "      --ps-tasks=N           Slurm, MPI: the first N tasks are "
	    "ps (default 1)\n"
	    "      --replicas-to-aggregate=K  sync: gradients a step "
	    "(default: all)\n"
	    "      --staleness=N          async: the oldest gradient applied, "
	    "in steps (16)\n"
	    "      --startup-timeout=S    seconds to wait for the ps tasks "
	    "to answer first (300)\n"
	    "      --sync-mode=MODE       sync (default) or async\n"
	    "      --task-index=N         this task's index in its job\n"
	    "      --tls-ca=FILE          TLS to the ps tasks: their CAs "
	    "(PEM)\n"
	    "      --tls-cert-key=FILE    a ps's TLS certificate and key "
	    "(PEM)\n"
	    "      --total-replicas=N     trainers (default: the cluster's)\n"
	    "      --worker-hosts=H:P,... the workers\n\n"
	    "Exit status: 0 success, 64 usage, 65 bad data or checkpoint, "
	    "66 missing input,\n69 a ps or the chief unavailable, 70 the "
	    "loss diverged (or out of memory), 73 cannot create,\n74 I/O "
	    "error, 75 the "
	    "checkpoint directory is in use.\n",
	    tool_name);
}
#endif

#ifdef TFKIT_PS
/* tf-ps's own usage: what a ps task uses of the command line. */
static void
ps_usage(void)
{
	printf(
	    "Usage: %s [OPTION]...\n"
	    "Serve a shard of the model's parameters to the trainers of a "
	    "distributed run\n(tf-train --ps-hosts ... --worker-hosts "
	    "...), applying their gradients with\nthe run's optimizer.  "
	    "It takes tf-train's whole command line and ignores what\n"
	    "it does not use, so one line serves every task.\n\n"
	    "      --auth-token=TOKEN     required in every message\n"
	    "      --auth-token-file=F    ... read from F\n"
	    "  -d, --checkpoint-dir=DIR   take the shard from the latest "
	    "checkpoint there\n"
	    "      --chief-hosts=H:P      a chief task\n"
	    "      --from-scratch         do not take the shard from a "
	    "checkpoint\n"
	    "      --idle-timeout=S       exit after S seconds without a "
	    "request (0: never)\n"
	    "      --job-name=NAME        ps (the default)\n"
	    "      --plugin-dir=DIR       look for optimizer plugins in "
	    "DIR first\n"
	    "      --port-base=N          Slurm, MPI: a task's port is N + "
	    "its place (8888)\n"
	    "      --print-cluster        print the resolved cluster as "
	    "JSON and exit\n"
	    "      --ps-hosts=H:P,...     the ps tasks\n"
	    "      --ps-tasks=N           Slurm, MPI: the first N tasks are "
	    "ps (default 1)\n"
	    "      --startup-timeout=S    exit when no trainer has come for S "
	    "seconds (300)\n"
	    "      --status               print each ps's counters as JSON "
	    "and exit\n"
	    "      --task-index=N         this task's index among the ps\n"
	    "      --tls-ca=FILE          --status: the CAs of the ps "
	    "certificates (PEM)\n"
	    "      --tls-cert-key=FILE    speak TLS with this certificate "
	    "and key (PEM)\n"
	    "      --total-replicas=N     trainers (default: the "
	    "cluster's)\n"
	    "      --worker-hosts=H:P,... the workers\n"
	    "  -h, --help                 show this help and exit\n"
	    "  -V, --version              show the version and exit\n\n"
	    "It exits 0 when the chief has written its last checkpoint, "
	    "when every trainer\nis done and the chief is silent for 5 s, "
	    "after --idle-timeout, or on SIGINT\nor SIGTERM.  Exit "
	    "status: 0 then, 64 usage, 69 a ps unavailable (--status), 70 "
	    "out of\nmemory or an internal error, 74 the address cannot be "
	    "listened on.\n",
	    tool_name);
}
#endif

static const struct option options[] = {
    {"allow-missing", no_argument, NULL, OPT_ALLOW_MISSING},
    {"auth-token", required_argument, NULL, OPT_AUTH_TOKEN},
    {"auth-token-file", required_argument, NULL, OPT_AUTH_FILE},
    {"batch-size", required_argument, NULL, 'b'},
    {"bn-epsilon", required_argument, NULL, OPT_BN_EPS},
    {"checkpoint-dir", required_argument, NULL, OPT_CKPT},
    {"chief-hosts", required_argument, NULL, OPT_CHIEF_HOSTS},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"conv", required_argument, NULL, OPT_SETTING},
    {"crosses", required_argument, NULL, OPT_CROSSES},
    {"dropout-keep-prob", required_argument, NULL, OPT_DROPOUT},
    {"embedding-dim", required_argument, NULL, OPT_EMB_DIM},
    {"enable-bn", no_argument, NULL, OPT_BN},
    {"device", required_argument, NULL, OPT_SETTING},
    {"epochs", required_argument, NULL, 'e'},
    {"exclude", required_argument, NULL, OPT_EXCLUDE},
    {"export-base", required_argument, NULL, OPT_SETTING},
    {"export-every", required_argument, NULL, OPT_SETTING},
    {"features", required_argument, NULL, OPT_FEATURES},
    {"from-scratch", no_argument, NULL, OPT_FROM_SCRATCH},
    {"if-damaged", required_argument, NULL, OPT_SETTING},
    {"hash-buckets", required_argument, NULL, OPT_BUCKETS},
    {"gpu-math", required_argument, NULL, OPT_SETTING},
    {"help", no_argument, NULL, 'h'},
    {"hidden", required_argument, NULL, OPT_HIDDEN},
    {"idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT},
    {"if-better", required_argument, NULL, OPT_SETTING},
    {"image-channels", required_argument, NULL, OPT_SETTING},
    {"image-scale", required_argument, NULL, OPT_SETTING},
    {"image-size", required_argument, NULL, OPT_SETTING},
    {"input-shape", required_argument, NULL, OPT_SETTING},
    {"job-name", required_argument, NULL, OPT_JOB_NAME},
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
    {"model-file", required_argument, NULL, OPT_MODEL_FILE},
    {"no-normalize", no_argument, NULL, OPT_NO_NORM},
    {"opt", required_argument, NULL, OPT_OPT},
    {"optimizer", required_argument, NULL, OPT_OPTIMIZER},
    {"peer-timeout", required_argument, NULL, OPT_SETTING},
    {"chunk-size", required_argument, NULL, OPT_SETTING},
    {"plugin-dir", required_argument, NULL, OPT_PLUGIN_DIR},
    {"port-base", required_argument, NULL, OPT_PORT_BASE},
    {"print-cluster", no_argument, NULL, OPT_PRINT_CLUSTER},
    {"print-config", no_argument, NULL, OPT_PRINT_CONFIG},
    {"ps-hosts", required_argument, NULL, OPT_PS_HOSTS},
    {"ps-tasks", required_argument, NULL, OPT_PS_TASKS},
    {"quiet", no_argument, NULL, 'q'},
    {"random-crop", required_argument, NULL, OPT_SETTING},
    {"random-flip", no_argument, NULL, OPT_SETTING},
    {"replicas-to-aggregate", required_argument, NULL, OPT_SETTING},
    {"rnn-units", required_argument, NULL, OPT_SETTING},
    {"gru-reset-after", required_argument, NULL, OPT_SETTING},
    {"max-length", required_argument, NULL, OPT_SETTING},
    {"save-every", required_argument, NULL, OPT_SAVE_EVERY},
    {"save-every-secs", required_argument, NULL, OPT_SAVE_SECS},
    {"schema", required_argument, NULL, OPT_SCHEMA},
    {"seed", required_argument, NULL, OPT_SEED},
    {"shuffle-buffer", required_argument, NULL, OPT_SHUFFLE},
    {"sparse", no_argument, NULL, OPT_SETTING},
    {"oov-buckets", required_argument, NULL, OPT_SETTING},
    {"staleness", required_argument, NULL, OPT_SETTING},
    {"startup-timeout", required_argument, NULL, OPT_SETTING},
    {"status", no_argument, NULL, OPT_STATUS},
    {"stream", no_argument, NULL, OPT_SETTING},
    {"steps-to-validate", required_argument, NULL, OPT_VSTEPS},
    {"sync-mode", required_argument, NULL, OPT_SETTING},
    {"task", required_argument, NULL, OPT_TASK},
    {"task-index", required_argument, NULL, OPT_TASK_INDEX},
    {"threads", required_argument, NULL, 'j'},
    {"tls-ca", required_argument, NULL, OPT_TLS_CA},
    {"tls-cert-key", required_argument, NULL, OPT_TLS_CERT_KEY},
    {"total-replicas", required_argument, NULL, OPT_SETTING},
    {"validate", required_argument, NULL, OPT_VALIDATE},
    {"version", no_argument, NULL, 'V'},
    {"worker-hosts", required_argument, NULL, OPT_WORKER_HOSTS},
    {NULL, 0, NULL, 0},
};

static void
print_line(void *ctx, const char *json)
{
	(void)ctx;
	progress_done(); /* no JSON on the progress line */
	puts(json);
	fflush(stdout);
}

static void
print_note(void *ctx, const char *msg)
{
	(void)ctx;
	progress_done();
	/* the library's words start with "warning: " where they warn */
	warnx_("%s%s", strncmp(msg, "warning: ", 9) == 0 ? "" : "note: ", msg);
}

/* The dnn's layer settings given on the command line to lr (a linear
 * model, no hidden layers): said, as they change nothing.  (Not from a
 * --config file: a run's own settings, fed back, list them all.) */
static void
note_unused_layers(const struct tf_settings *set)
{
	static const char *const layers[] = {"hidden", "enable-bn",
	                                     "bn-epsilon", "dropout-keep-prob",
	                                     "embedding-dim"};
	const char *model = tf_settings_get(set, "model");
	if (model == NULL || strcmp(model, "lr") != 0) {
		return;
	}
	char names[160] = "";
	size_t len = 0, n = 0;
	for (size_t i = 0; i < sizeof layers / sizeof *layers; i++) {
		if (tf_settings_source(set, layers[i]) == TF_FROM_FLAG) {
			len += (size_t)snprintf(names + len, sizeof names - len,
			                        "%s--%s", n++ ? ", " : "",
			                        layers[i]);
		}
	}
	if (n > 0) {
		char msg[300];
		snprintf(msg, sizeof msg,
		         "--model lr is a linear model, with no hidden layers "
		         "or embeddings: %s %s not used",
		         names, n == 1 ? "is" : "are");
		print_note(NULL, msg);
	}
}

/* SIGINT or SIGTERM: the run checkpoints where it stands, then the
 * signal is raised again. */
volatile sig_atomic_t stop_signal;

void
on_stop_signal(int sig)
{
	stop_signal = sig;
}

int
should_stop(void *ctx)
{
	(void)ctx;
	return stop_signal != 0;
}

/* SIGUSR1: a checkpoint now (and a version, with --export-base), the
 * run going on. */
static volatile sig_atomic_t save_signal;

static void
on_save_signal(int sig)
{
	(void)sig;
	save_signal = 1;
}

static int
should_save(void *ctx)
{
	(void)ctx;
	if (save_signal) {
		save_signal = 0;
		return 1;
	}
	return 0;
}

static void
on_step(void *ctx, const struct tf_train_progress *p)
{
	(void)ctx;
	progress_train(p->step, p->examples, p->epoch, p->epochs, p->loss);
}

/* --export-base: where a run's checkpoints are published. */
struct publisher {
	const struct tf_registry *reg;
	const char *base, *if_better;
};

/* A checkpoint as the next version of --export-base (unless --if-better
 * declines), said in a JSON line; a failed export is said and tried
 * again at the next one, the run going on. */
static int
publish(void *ctx, const char *checkpoint, uint64_t step, uint64_t examples,
        char *why, size_t size)
{
	(void)why;
	(void)size;
	const struct publisher *p = ctx;
	struct tf_model *m = tf_model_new();
	json_t *line = json_object();
	int rc = m == NULL || line == NULL
	             ? TF_ENOMEM
	             : tf_model_load(m, p->reg, checkpoint);
	if (rc == TF_OK) {
		json_object_set_new(line, "checkpoint",
		                    json_string(checkpoint));
		json_object_set_new(line, "step",
		                    json_integer((json_int_t)step));
		json_object_set_new(line, "examples_total",
		                    json_integer((json_int_t)examples));
		rc = export_version(p->reg, m, p->base, 0, p->if_better,
		                    "tf-train " TF_TOOL_VERSION, line);
	}
	char *text =
	    rc == TF_OK
	        ? json_shortest(line, JSON_COMPACT | JSON_PRESERVE_ORDER)
	        : NULL;
	if (text != NULL) {
		print_line(NULL, text);
	} else {
		progress_done();
		warnx_("step %llu not exported to %s: %s (the run goes on; "
		       "the next export tries again)",
		       (unsigned long long)step, p->base,
		       rc == TF_OK || m == NULL ? "out of memory"
		                                : tf_errmsg(m));
	}
	free(text);
	json_decref(line);
	tf_model_free(m);
	return TF_OK;
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
	/* fd stays open: the lock lasts as long as the process.  Holding
	 * it, the checkpoints' temporaries a killed run left (a SIGKILL
	 * cannot remove them) are nobody's: they go. */
	const char *pat[] = {"model.ckpt-*.tmp.??????",
	                     "checkpoint.tmp.??????"};
	size_t gone = 0;
	for (size_t i = 0; i < sizeof pat / sizeof pat[0]; i++) {
		glob_t g;
		snprintf(path, sizeof path, "%s/%s", dir, pat[i]);
		if (glob(path, 0, NULL, &g) == 0) {
			for (size_t k = 0; k < g.gl_pathc; k++) {
				gone += unlink(g.gl_pathv[k]) == 0;
			}
		}
		globfree(&g);
	}
	if (gone > 0) {
		warnx_("%s: removed %zu temporar%s a killed run left", dir,
		       gone, gone == 1 ? "y" : "ies");
	}
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

/* --stream, --export-base and --if-better with what they need. */
static void
check_stream(const struct tf_train_config *cfg, const struct publisher *p,
             int distributed)
{
	if (p->if_better != NULL && p->base == NULL) {
		usage_error("--if-better compares with the newest version of "
		            "--export-base");
	}
	if (p->if_better != NULL && !metric_known(p->if_better)) {
		usage_error("--if-better: unknown metric '%s' (loss, mse, "
		            "rmse, mae, accuracy, auc, r2)",
		            p->if_better);
	}
	if (p->if_better != NULL && cfg->validate == NULL) {
		usage_error("--if-better compares validation metrics: give "
		            "--validate FILE");
	}
	if (p->base != NULL && cfg->checkpoint_dir == NULL) {
		usage_error("--export-base exports the run's checkpoints: give "
		            "--checkpoint-dir DIR");
	}
	if (cfg->stream && cfg->ninputs > 1) {
		usage_error("--stream reads one input (a file followed as it "
		            "grows, a FIFO, or - for standard input)");
	}
	if (cfg->stream && distributed) {
		usage_error("--stream trains in one process: a distributed "
		            "run reads files");
	}
}

/* The long name of a short option. */
static const char *
long_name(int c, int index)
{
	switch (c) {
	case 'b':
		return "batch-size";
	case 'd':
		return "checkpoint-dir";
	case 'e':
		return "epochs";
	case 'j':
		return "threads";
	case 'q':
		return "quiet";
	default:
		return options[index].name;
	}
}

int
main(int argc, char **argv)
{
#ifdef TFKIT_PS
	tool_start("tf-ps");
#else
	tool_start("tf-train");
#endif
	static struct tf_settings *set;
	static struct tf_registry *reg;
	static struct tf_trainer *tr;
	set = tf_settings_new();
	reg = tf_registry_new();
	if (set == NULL || reg == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	/* Values from flags and --config files; the library knows each
	 * setting, its range and its default (tf/settings.h). */
	int c, index = 0, list = 0, print_config = 0;
	struct dist d = {0};
	tf_cluster_flags_init(&d.f);
	while ((c = getopt_long(argc, argv, "b:d:e:hj:qV", options, &index)) !=
	       -1) {
		if (cluster_option(&d, c)) {
			continue;
		}
		switch (c) {
		case 'h':
#ifdef TFKIT_PS
			ps_usage();
#else
			usage();
#endif
			return 0;
		case 'V':
			print_version();
			return 0;
		case OPT_LIST:
			list = 1;
			break;
		case OPT_PRINT_CONFIG:
			print_config = 1;
			break;
		case OPT_CONFIG:
			if (tf_settings_load(set, optarg) != TF_OK) {
				die_status(tf_errcode(set), tf_errmsg(set));
			}
			break;
		case '?':
			fprintf(stderr, "try '%s --help'\n", tool_name);
			return EX_USAGE;
		default:
			if (tf_settings_set(set, long_name(c, index),
			                    optarg ? optarg : "true") !=
			    TF_OK) {
				usage_error("%s", tf_errmsg(set));
			}
		}
	}
	/* Which task this is: a cluster from flags, TF_CONFIG, Slurm or
	 * MPI, or none (one process). */
	static struct tf_cluster *cl;
	cl = resolve_cluster(&d);
	if (tf_cluster_distributed(cl) &&
	    strcmp(tf_cluster_job(cl), "ps") == 0) {
		int st = ps_main(reg, set, cl, &d);
		tf_cluster_free(cl);
		tf_settings_free(set);
		tf_registry_free(reg);
		free(d.token);
		return st;
	}
#ifdef TFKIT_PS
	usage_error("this task is %s %zu of the cluster (%s): tf-ps runs ps "
	            "tasks",
	            tf_cluster_job(cl), tf_cluster_index(cl),
	            tf_cluster_source(cl));
#endif
	/* What runs: flags, config, the checkpoint, defaults. */
	if (tf_settings_resolve(set) != TF_OK) {
		die_status(tf_errcode(set), tf_errmsg(set));
	}
	if (print_config) {
		char *text = tf_settings_json(set, 1);
		if (text == NULL) {
			die(EX_SOFTWARE, "out of memory");
		}
		puts(text);
		free(text);
		return 0;
	}
	const char *dir;
	for (size_t i = 0; (dir = tf_settings_item(set, "plugin-dir", i));
	     i++) {
		tf_registry_add_dir(reg, dir);
	}
	if (tf_registry_load(reg) != TF_OK) {
		die_status(tf_errcode(reg), tf_errmsg(reg));
	}
	if (list) {
		list_plugins(reg);
		return 0;
	}
	const char *ckdir = tf_settings_get(set, "checkpoint-dir");
	/* One command line for every task: only the chief writes the
	 * checkpoints, and so only it takes the directory's lock. */
	if (tf_cluster_distributed(cl) && !tf_cluster_is_chief(cl)) {
		ckdir = NULL;
	}
	if (ckdir != NULL) {
		lock_dir(ckdir);
		/* Again under the lock: the checkpoint may have moved on. */
		if (tf_settings_resolve(set) != TF_OK) {
			die_status(tf_errcode(set), tf_errmsg(set));
		}
	}
	struct tf_train_config cfg;
	tf_settings_config(set, &cfg);
	note_unused_layers(set);
	if (tf_cluster_distributed(cl)) {
		cfg.cluster = cl;
		cfg.auth_token = d.token;
		cfg.tls_ca = d.tls_ca;
	}
	int nin;
	cfg.inputs = (const char *const *)input_files(argc - optind,
	                                              argv + optind, &nin);
	cfg.ninputs = (size_t)nin;
	struct publisher pub = {reg, tf_settings_get(set, "export-base"),
	                        tf_settings_get(set, "if-better")};
	check_stream(&cfg, &pub, tf_cluster_distributed(cl));
	int quiet = strcmp(tf_settings_get(set, "quiet"), "true") == 0;
	struct tf_train_sink sink = {
	    &pub,       print_line,  quiet ? NULL : on_step,
	    print_note, should_stop, pub.base ? publish : NULL,
	    should_save};
	struct sigaction sa = {.sa_handler = on_stop_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	struct sigaction su = {.sa_handler = on_save_signal};
	sigemptyset(&su.sa_mask);
	sigaction(SIGUSR1, &su, NULL);
	if (!quiet) {
		progress_update(0, 0, 0); /* start the clock */
	}
	if ((tr = tf_trainer_new()) == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	int rc = tf_trainer_run(tr, reg, &cfg, &sink);
	progress_done();
	if (rc != TF_OK) {
		die_status(rc, tf_errmsg(tr));
	}
	if (stop_signal != 0) {
		/* Checkpointed: now end as the signal would have. */
		warnx_("%s: stopped at a checkpoint",
		       stop_signal == SIGINT ? "SIGINT" : "SIGTERM");
		signal(stop_signal, SIG_DFL);
		raise(stop_signal);
	}
	tf_trainer_free(tr);
	tf_settings_free(set);
	tf_registry_free(reg);
	tf_cluster_free(cl);
	free(d.token);
	return 0;
}
