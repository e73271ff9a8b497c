/*
 * train.h - what tools/train/ shares: tf-train and tf-ps are one
 * command line (main.c, built twice: with TFKIT_PS as tf-ps), and the
 * cluster flags and the ps task live in cluster.c.
 */
#ifndef TFKIT_TOOLS_TRAIN_H
#define TFKIT_TOOLS_TRAIN_H

#include <signal.h>

#include "tf/tf.h"

enum {
	OPT_CKPT = 256,
	OPT_AUTH_TOKEN,
	OPT_AUTH_FILE,
	OPT_CHIEF_HOSTS,
	OPT_IDLE_TIMEOUT,
	OPT_JOB_NAME,
	OPT_PORT_BASE,
	OPT_PRINT_CLUSTER,
	OPT_PS_HOSTS,
	OPT_PS_TASKS,
	OPT_STATUS,
	OPT_TASK_INDEX,
	OPT_WORKER_HOSTS,
	OPT_TLS_CA,
	OPT_TLS_CERT_KEY,
	OPT_SETTING, /* a setting with no code of its own */
	OPT_ALLOW_MISSING,
	OPT_CONFIG,
	OPT_CROSSES,
	OPT_EMB_DIM,
	OPT_EXCLUDE,
	OPT_FEATURES,
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
	OPT_MODEL_FILE,
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

/* The cluster flags and what --status, --print-cluster and a ps task
 * need (cluster.c). */
struct dist {
	struct tf_cluster_flags f;
	char *token;
	const char *tls_ca, *tls_cert_key;
	double idle_timeout;
	int print_cluster, status;
};

/* A cluster flag into d; 0 for any other option. */
int cluster_option(struct dist *d, int c);
/* The cluster (and --print-cluster); a bad one is a usage error. */
struct tf_cluster *resolve_cluster(struct dist *d);
/* A ps task: serve until the run is over (or print --status). */
int ps_main(struct tf_registry *reg, struct tf_settings *set,
            const struct tf_cluster *cl, const struct dist *d);

/* SIGINT or SIGTERM: the run checkpoints where it stands (main.c). */
extern volatile sig_atomic_t stop_signal;
void on_stop_signal(int sig);
int should_stop(void *ctx);

#endif
