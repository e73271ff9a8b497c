/*
 * cluster.h - who is who in a distributed run: the parameter servers
 * (ps), the workers that train (a chief among them), and which of them
 * this process is.
 *
 * One cluster, five ways to say it, resolved in this order:
 *   1. flags: --ps-hosts, --worker-hosts (and --chief-hosts), with
 *      --job-name and --task-index, as TensorFlow 0.8's trainers take;
 *   2. TF_CONFIG, the JSON the Kubernetes training operators set
 *      ({"cluster": {"chief": [...], "ps": [...], "worker": [...]},
 *      "task": {"type": "worker", "index": 1}});
 *   3. Slurm's environment (SLURM_PROCID, SLURM_NTASKS,
 *      SLURM_STEP_NODELIST, SLURM_STEP_TASKS_PER_NODE): the first
 *      ps_tasks tasks are ps, the rest workers, each at its node's host
 *      and port_base plus its place among the node's tasks, as
 *      TensorFlow's Slurm resolver does;
 *   4. an MPI launcher's rank (Open MPI's OMPI_COMM_WORLD_RANK/SIZE,
 *      MPICH's PMI_RANK/SIZE): the same split, every task on this host at
 *      port_base + rank (or at the hosts the flags give).
 * --job-name and --task-index given with a launcher's environment say
 * which task this process is (an srun --multi-prog line); the hosts come
 * from the environment.
 *
 * The chief is chief:0 when there is a chief job, else worker:0.  The
 * trainers are the chief job and the workers, ranked chief first: a
 * trainer's rank picks its shard of the data.
 */
#ifndef TF_CLUSTER_H
#define TF_CLUSTER_H

#include <stddef.h>

#include "tf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tf_cluster_flags {
	const char *ps_hosts;     /* "h:p,h:p", or NULL */
	const char *worker_hosts; /* "h:p,h:p", or NULL */
	const char *chief_hosts;  /* "h:p", or NULL */
	const char *job_name;     /* "ps", "worker" or "chief", or NULL */
	long task_index;          /* -1: not given */
	long ps_tasks;            /* launchers: how many tasks are ps (1) */
	long port_base;           /* launchers: the first port (8888) */
};

/* Flags unset: NULLs, -1 index, 1 ps task, port base 8888. */
TF_API void tf_cluster_flags_init(struct tf_cluster_flags *f);

/* Reads the environment through getenv_fn (NULL: getenv). */
typedef const char *(*tf_getenv_fn)(const char *name);

struct tf_cluster;
TF_API struct tf_cluster *tf_cluster_new(void);
TF_API void tf_cluster_free(struct tf_cluster *c);

/*
 * Resolve the cluster (see above).  TF_OK with no cluster at all when
 * nothing describes one (tf_cluster_distributed() is 0: one process);
 * TF_EINVAL for a cluster that does not hold together (the message
 * names the source and what is wrong).
 */
TF_API int tf_cluster_resolve(struct tf_cluster *c,
                              const struct tf_cluster_flags *f,
                              tf_getenv_fn getenv_fn);

/* Whether a cluster was described; where from ("flags", "TF_CONFIG",
 * "slurm", "mpi", "none"). */
TF_API int tf_cluster_distributed(const struct tf_cluster *c);
TF_API const char *tf_cluster_source(const struct tf_cluster *c);
/* This process: its job ("ps", "worker", "chief") and index. */
TF_API const char *tf_cluster_job(const struct tf_cluster *c);
TF_API size_t tf_cluster_index(const struct tf_cluster *c);
/* Tasks of a job, and their addresses ("host:port"). */
TF_API size_t tf_cluster_count(const struct tf_cluster *c, const char *job);
TF_API const char *tf_cluster_host(const struct tf_cluster *c, const char *job,
                                   size_t i);
/* Trainers (chief and workers), this one's rank among them (chief 0),
 * and whether it is the chief. */
TF_API size_t tf_cluster_trainers(const struct tf_cluster *c);
TF_API size_t tf_cluster_rank(const struct tf_cluster *c);
TF_API int tf_cluster_is_chief(const struct tf_cluster *c);
/*
 * The cluster as TF_CONFIG's JSON plus what was resolved: {"cluster":
 * {...}, "task": {"type": ..., "index": ...}, "chief": "worker:0",
 * "source": ...}.  The caller frees it.
 */
TF_API char *tf_cluster_json(const struct tf_cluster *c);

#ifdef __cplusplus
}
#endif
#endif
