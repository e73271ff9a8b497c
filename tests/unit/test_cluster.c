/*
 * test_cluster.c - one cluster from each source (flags, TF_CONFIG, Slurm,
 * MPI) resolves the same, and what does not hold together is refused.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tf/cluster.h"

/* A fake environment: NAME=VALUE pairs. */
static const char *const *env_vars;

static const char *
fake_env(const char *name)
{
	size_t n = strlen(name);
	for (const char *const *e = env_vars; e != NULL && *e != NULL; e++) {
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') {
			return *e + n + 1;
		}
	}
	return NULL;
}

/* The JSON of a cluster resolved from f and env, "source" cut off. */
static char *
resolve(const struct tf_cluster_flags *f, const char *const *env, int *rc)
{
	struct tf_cluster *c = tf_cluster_new();
	env_vars = env;
	*rc = tf_cluster_resolve(c, f, fake_env);
	char *j = *rc == TF_OK ? tf_cluster_json(c) : strdup(tf_errmsg(c));
	char *src = j ? strstr(j, ",\"source\"") : NULL;
	if (src != NULL && *rc == TF_OK) {
		strcpy(src, "}");
	}
	tf_cluster_free(c);
	return j;
}

TEST(every_source_gives_the_same_cluster)
{
	static const char *want =
	    "{\"cluster\":{\"ps\":[\"127.0.0.1:8888\"],\"worker\":[\"127.0.0."
	    "1:8889\",\"127.0.0.1:8890\"]},\"task\":{\"type\":\"worker\","
	    "\"index\":1},\"chief\":\"worker:0\"}";
	struct tf_cluster_flags f;
	int rc;
	tf_cluster_flags_init(&f);
	f.ps_hosts = "127.0.0.1:8888";
	f.worker_hosts = "127.0.0.1:8889, 127.0.0.1:8890";
	f.job_name = "worker";
	f.task_index = 1;
	char *a = resolve(&f, NULL, &rc);
	CHECK(rc == TF_OK && strcmp(a, want) == 0);
	tf_cluster_flags_init(&f);
	const char *tfc[] = {
	    "TF_CONFIG={\"cluster\": {\"ps\": [\"127.0.0.1:8888\"], "
	    "\"worker\": "
	    "[\"127.0.0.1:8889\", \"127.0.0.1:8890\"], \"evaluator\": "
	    "[\"127.0.0.1:9999\"]}, \"task\": {\"type\": \"worker\", "
	    "\"index\": 1}, \"environment\": \"cloud\"}",
	    NULL};
	char *b = resolve(&f, tfc, &rc);
	CHECK(rc == TF_OK && strcmp(b, want) == 0);
	const char *slurm[] = {"SLURM_PROCID=2", "SLURM_NTASKS=3",
	                       "SLURM_STEP_NODELIST=127.0.0.1",
	                       "SLURM_STEP_TASKS_PER_NODE=3", NULL};
	char *c = resolve(&f, slurm, &rc);
	CHECK(rc == TF_OK && strcmp(c, want) == 0);
	const char *ompi[] = {"OMPI_COMM_WORLD_RANK=2",
	                      "OMPI_COMM_WORLD_SIZE=3", NULL};
	char *d = resolve(&f, ompi, &rc);
	CHECK(rc == TF_OK && strcmp(d, want) == 0);
	const char *mpich[] = {"PMI_RANK=2", "PMI_SIZE=3", NULL};
	char *e = resolve(&f, mpich, &rc);
	CHECK(rc == TF_OK && strcmp(e, want) == 0);
	free(a);
	free(b);
	free(c);
	free(d);
	free(e);
}

TEST(slurm_node_lists_and_tasks_per_node)
{
	struct tf_cluster_flags f;
	tf_cluster_flags_init(&f);
	f.ps_tasks = 2;
	const char *env[] = {"SLURM_PROCID=3", "SLURM_NTASKS=6",
	                     "SLURM_STEP_NODELIST=n[1-2],x07",
	                     "SLURM_STEP_TASKS_PER_NODE=2(x2),2", NULL};
	struct tf_cluster *c = tf_cluster_new();
	env_vars = env;
	REQUIRE(tf_cluster_resolve(c, &f, fake_env) == TF_OK);
	CHECK(strcmp(tf_cluster_source(c), "slurm") == 0);
	CHECK_EQ_INT(tf_cluster_count(c, "ps"), 2);
	CHECK_EQ_INT(tf_cluster_count(c, "worker"), 4);
	CHECK(strcmp(tf_cluster_host(c, "ps", 1), "n1:8889") == 0);
	CHECK(strcmp(tf_cluster_host(c, "worker", 0), "n2:8888") == 0);
	CHECK(strcmp(tf_cluster_host(c, "worker", 3), "x07:8889") == 0);
	CHECK(strcmp(tf_cluster_job(c), "worker") == 0);
	CHECK_EQ_INT(tf_cluster_index(c), 1);
	CHECK_EQ_INT(tf_cluster_rank(c), 1);
	CHECK(!tf_cluster_is_chief(c));
	/* an srun --multi-prog line says which task it is */
	f.job_name = "worker";
	f.task_index = 0;
	REQUIRE(tf_cluster_resolve(c, &f, fake_env) == TF_OK);
	CHECK(tf_cluster_is_chief(c));
	/* zero-padded ranges keep their width */
	const char *pad[] = {"SLURM_PROCID=0", "SLURM_NTASKS=2",
	                     "SLURM_STEP_NODELIST=node[09-10]",
	                     "SLURM_STEP_TASKS_PER_NODE=1(x2)", NULL};
	tf_cluster_flags_init(&f);
	env_vars = pad;
	REQUIRE(tf_cluster_resolve(c, &f, fake_env) == TF_OK);
	CHECK(strcmp(tf_cluster_host(c, "worker", 0), "node10:8888") == 0);
	tf_cluster_free(c);
}

TEST(a_chief_job_is_trainer_zero)
{
	struct tf_cluster_flags f;
	tf_cluster_flags_init(&f);
	const char *env[] = {
	    "TF_CONFIG={\"cluster\": {\"chief\": [\"c:1\"], \"ps\": "
	    "[\"p:1\"], \"worker\": [\"w:1\", \"w:2\"]}, \"task\": "
	    "{\"type\": \"worker\", \"index\": 1}}",
	    NULL};
	struct tf_cluster *c = tf_cluster_new();
	env_vars = env;
	REQUIRE(tf_cluster_resolve(c, &f, fake_env) == TF_OK);
	CHECK_EQ_INT(tf_cluster_trainers(c), 3);
	CHECK_EQ_INT(tf_cluster_rank(c), 2);
	CHECK(!tf_cluster_is_chief(c));
	f.job_name = "chief";
	f.task_index = 0;
	REQUIRE(tf_cluster_resolve(c, &f, fake_env) == TF_OK);
	CHECK(tf_cluster_is_chief(c) && tf_cluster_rank(c) == 0);
	/* nothing at all: one process */
	tf_cluster_flags_init(&f);
	env_vars = NULL;
	REQUIRE(tf_cluster_resolve(c, &f, fake_env) == TF_OK);
	CHECK(!tf_cluster_distributed(c));
	tf_cluster_free(c);
}

TEST(clusters_that_do_not_hold_together)
{
	static const struct {
		const char *ps, *workers, *job;
		long index;
		const char *env, *msg;
	} bad[] = {
	    {"h:1", "h:2", "worker", 2, NULL,
	     "flags: there is no worker task 2 (the cluster has 1)"},
	    {"h:x", "h:2", "worker", 0, NULL,
	     "--ps-hosts: 'h:x' is not HOST:PORT"},
	    {"h:1", "h:70000", "worker", 0, NULL,
	     "--worker-hosts: 'h:70000' is not HOST:PORT"},
	    {"h:1", "h:2", "boss", 0, NULL,
	     "flags: job 'boss' is none of chief, ps, worker"},
	    {"h:1", "h:2", NULL, -1, NULL,
	     "--ps-hosts and --worker-hosts go with --job-name and "
	     "--task-index"},
	    {NULL, NULL, "worker", 0, NULL,
	     "--job-name and --task-index need a cluster"},
	    {NULL, NULL, NULL, -1, "TF_CONFIG=[1]",
	     "TF_CONFIG: not a JSON object"},
	    {NULL, NULL, NULL, -1,
	     "TF_CONFIG={\"sparseCluster\": {\"ps\": [\"p:1\"]}}",
	     "TF_CONFIG: a sparseCluster does not say how many workers"},
	    {NULL, NULL, NULL, -1,
	     "TF_CONFIG={\"cluster\": {\"ps\": [\"p:1\"], \"worker\": "
	     "[\"w:1\"]}}",
	     "TF_CONFIG: no task.type"},
	    {NULL, NULL, NULL, -1, "PMI_RANK=0",
	     NULL}, /* no size: not MPI, one process */
	    {NULL, NULL, NULL, -1, "OMPI_COMM_WORLD_RANK=0", NULL},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct tf_cluster_flags f;
		tf_cluster_flags_init(&f);
		f.ps_hosts = bad[i].ps;
		f.worker_hosts = bad[i].workers;
		f.job_name = bad[i].job;
		f.task_index = bad[i].index;
		const char *env[] = {bad[i].env, NULL};
		int rc;
		char *m = resolve(&f, env, &rc);
		if (bad[i].msg == NULL) {
			CHECK(rc == TF_OK);
		} else {
			CHECK(rc == TF_EINVAL);
			CHECK_CONTAINS(m, bad[i].msg);
		}
		free(m);
	}
	/* one task cannot be a ps and a worker */
	struct tf_cluster_flags f;
	tf_cluster_flags_init(&f);
	const char *one[] = {"PMI_RANK=0", "PMI_SIZE=1", NULL};
	int rc;
	char *m = resolve(&f, one, &rc);
	CHECK(rc == TF_EINVAL);
	CHECK_CONTAINS(m, "a cluster needs a ps and a worker");
	free(m);
	const char *bad_list[] = {"SLURM_PROCID=0", "SLURM_NTASKS=2",
	                          "SLURM_STEP_NODELIST=n[1-",
	                          "SLURM_STEP_TASKS_PER_NODE=2", NULL};
	m = resolve(&f, bad_list, &rc);
	CHECK(rc == TF_EINVAL);
	CHECK_CONTAINS(m, "slurm: bad node list 'n[1-'");
	free(m);
	const char *short_list[] = {"SLURM_PROCID=0", "SLURM_NTASKS=4",
	                            "SLURM_STEP_NODELIST=n1",
	                            "SLURM_STEP_TASKS_PER_NODE=2", NULL};
	m = resolve(&f, short_list, &rc);
	CHECK(rc == TF_EINVAL);
	CHECK_CONTAINS(m, "places 2 of 4 tasks");
	free(m);
}

int
main(void)
{
	RUN(every_source_gives_the_same_cluster);
	RUN(slurm_node_lists_and_tasks_per_node);
	RUN(a_chief_job_is_trainer_zero);
	RUN(clusters_that_do_not_hold_together);
	DONE();
}
