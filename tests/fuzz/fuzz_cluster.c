/*
 * Fuzz target: the cluster sources of a distributed run read from the
 * environment: TF_CONFIG, Slurm's step variables (node lists such as
 * "node[01-04,07]" and tasks per node such as "2(x3),1"), and the MPI
 * launchers' rank and size.  The input is the variables' values, NUL
 * between them, in the order of names[].  Resolving never crashes; a
 * cluster that resolves has a rank below its trainers and a host for
 * every task it counts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tf/tf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = {
    "TF_CONFIG",
    "SLURM_PROCID",
    "SLURM_NTASKS",
    "SLURM_STEP_NODELIST",
    "SLURM_STEP_TASKS_PER_NODE",
    "SLURM_JOB_NODELIST",
    "SLURM_TASKS_PER_NODE",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "PMI_RANK",
    "PMI_SIZE",
};
#define NNAMES (sizeof names / sizeof names[0])
static char *value[NNAMES];

static const char *
fuzz_env(const char *name)
{
	for (size_t i = 0; i < NNAMES; i++) {
		if (strcmp(names[i], name) == 0) {
			return value[i];
		}
	}
	return NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	if (buf == NULL) {
		abort();
	}
	memcpy(buf, data, size);
	buf[size] = '\0';
	/* values in order; a field that is absent leaves its variable
	 * unset, so every source is reached */
	char *p = buf, *end = buf + size;
	for (size_t i = 0; i < NNAMES; i++) {
		value[i] = p < end || (p == end && i == 0) ? p : NULL;
		p = p < end ? p + strlen(p) + 1 : end + 1;
	}
	struct tf_cluster_flags f;
	tf_cluster_flags_init(&f);
	struct tf_cluster *c = tf_cluster_new();
	if (c == NULL) {
		abort();
	}
	int rc = tf_cluster_resolve(c, &f, fuzz_env);
	if (rc != TF_OK && rc != TF_EINVAL) {
		abort();
	}
	if (rc == TF_OK && tf_cluster_distributed(c)) {
		if (strcmp(tf_cluster_job(c), "ps") != 0 &&
		    tf_cluster_rank(c) >= tf_cluster_trainers(c)) {
			abort();
		}
		static const char *const jobs[] = {"ps", "worker", "chief"};
		for (size_t j = 0; j < 3; j++) {
			for (size_t k = 0; k < tf_cluster_count(c, jobs[j]);
			     k++) {
				if (tf_cluster_host(c, jobs[j], k) == NULL) {
					abort();
				}
			}
		}
		free(tf_cluster_json(c));
	}
	tf_cluster_free(c);
	free(buf);
	return 0;
}
