/*
 * cluster.c - a distributed run's cluster from flags, TF_CONFIG, Slurm's
 * environment or an MPI launcher's (tf/cluster.h).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <jansson.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tf/cluster.h"

enum { J_CHIEF, J_PS, J_WORKER, NJOBS };
static const char *const job_names[NJOBS] = {"chief", "ps", "worker"};

/* Addresses a launcher's environment may list: more is a mistake. */
#define MAX_TASKS 4096

struct hosts {
	char **v;
	size_t n;
};

struct tf_cluster {
	struct tfi_handle err;
	struct hosts job[NJOBS];
	int me; /* J_*, or -1: no cluster */
	size_t index;
	const char *source;
};

void
tf_cluster_flags_init(struct tf_cluster_flags *f)
{
	memset(f, 0, sizeof *f);
	f->task_index = -1;
	f->ps_tasks = 1;
	f->port_base = 8888;
}

struct tf_cluster *
tf_cluster_new(void)
{
	struct tf_cluster *c = calloc(1, sizeof *c);
	if (c != NULL) {
		c->me = -1;
		c->source = "none";
	}
	return c;
}

static void
clear(struct tf_cluster *c)
{
	for (int j = 0; j < NJOBS; j++) {
		for (size_t i = 0; i < c->job[j].n; i++) {
			free(c->job[j].v[i]);
		}
		free(c->job[j].v);
		c->job[j].v = NULL;
		c->job[j].n = 0;
	}
	c->me = -1;
	c->index = 0;
	c->source = "none";
}

void
tf_cluster_free(struct tf_cluster *c)
{
	if (c != NULL) {
		clear(c);
		free(c);
	}
}

static int
job_of(const char *name)
{
	for (int j = 0; j < NJOBS; j++) {
		if (name != NULL && strcmp(name, job_names[j]) == 0) {
			return j;
		}
	}
	return -1;
}

/* "host:port": a host of letters, digits, '.', '-', '_' (or [v6]), and a
 * port from 1 to 65535. */
static int
valid_address(const char *a, size_t n)
{
	const char *colon = NULL;
	for (size_t i = 0; i < n; i++) {
		colon = a[i] == ':' ? a + i : colon;
	}
	if (colon == NULL || colon == a || colon == a + n - 1) {
		return 0;
	}
	for (const char *p = a; p < colon; p++) {
		if (!isalnum((unsigned char)*p) && !strchr(".-_[]:", *p)) {
			return 0;
		}
	}
	long port = 0;
	for (const char *p = colon + 1; p < a + n; p++) {
		if (!isdigit((unsigned char)*p) ||
		    (port = port * 10 + (*p - '0')) > 65535) {
			return 0;
		}
	}
	return port >= 1;
}

static int
push_host(struct tf_cluster *c, int j, const char *a, size_t n)
{
	struct hosts *h = &c->job[j];
	if (h->n >= MAX_TASKS) {
		return tfi_set_error(c, TF_EINVAL, "%s: more than %d %s tasks",
		                     c->source, MAX_TASKS, job_names[j]);
	}
	char **v = realloc(h->v, (h->n + 1) * sizeof *v);
	if (v == NULL) {
		return tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	h->v = v;
	if ((v[h->n] = strndup(a, n)) == NULL) {
		return tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	h->n++;
	return TF_OK;
}

/* A comma list of addresses for job j. */
static int
parse_hosts(struct tf_cluster *c, int j, const char *list, const char *what)
{
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		while (n > 0 && *p == ' ') {
			p++, n--;
		}
		while (n > 0 && p[n - 1] == ' ') {
			n--;
		}
		if (!valid_address(p, n)) {
			return tfi_set_error(c, TF_EINVAL,
			                     "%s: '%.*s' is not HOST:PORT",
			                     what, (int)(n > 200 ? 200 : n), p);
		}
		int rc = push_host(c, j, p, n);
		if (rc != TF_OK) {
			return rc;
		}
		p = e ? e + 1 : p + strlen(p);
	}
	return TF_OK;
}

/* This process's job and index, checked against the cluster. */
static int
set_me(struct tf_cluster *c, const char *job, long index, const char *what)
{
	int j = job_of(job);
	if (j < 0) {
		return tfi_set_error(
		    c, TF_EINVAL, "%s: job '%s' is none of chief, ps, worker",
		    what, job ? job : "");
	}
	if (index < 0 || (size_t)index >= c->job[j].n) {
		return tfi_set_error(c, TF_EINVAL,
		                     "%s: there is no %s task %ld (the cluster "
		                     "has %zu)",
		                     what, job, index, c->job[j].n);
	}
	if (c->job[J_CHIEF].n > 1) {
		return tfi_set_error(c, TF_EINVAL, "%s: more than one chief",
		                     what);
	}
	if (c->job[J_PS].n == 0 ||
	    c->job[J_CHIEF].n + c->job[J_WORKER].n == 0) {
		return tfi_set_error(c, TF_EINVAL,
		                     "%s: a cluster needs a ps and a worker",
		                     what);
	}
	c->me = j;
	c->index = (size_t)index;
	return TF_OK;
}

/* ---- TF_CONFIG --------------------------------------------------------- */

static int
from_tf_config(struct tf_cluster *c, const char *text,
               const struct tf_cluster_flags *f)
{
	json_error_t je;
	json_t *root = json_loads(text, 0, &je);
	int rc = TF_OK;
	if (!json_is_object(root)) {
		json_decref(root);
		return tfi_set_error(c, TF_EINVAL,
		                     "TF_CONFIG: not a JSON object (%s, column "
		                     "%d)",
		                     je.text, je.column);
	}
	json_t *cl = json_object_get(root, "cluster");
	if (cl == NULL && json_object_get(root, "sparseCluster") != NULL) {
		json_decref(root);
		return tfi_set_error(c, TF_EINVAL,
		                     "TF_CONFIG: a sparseCluster does not say "
		                     "how many workers train; give the whole "
		                     "cluster");
	}
	if (!json_is_object(cl)) {
		json_decref(root);
		return tfi_set_error(c, TF_EINVAL, "TF_CONFIG: no \"cluster\"");
	}
	const char *key;
	json_t *v;
	json_object_foreach(cl, key, v)
	{
		int j = job_of(key);
		if (j < 0) {
			continue; /* "evaluator" and others: not trainers */
		}
		if (!json_is_array(v)) {
			rc = tfi_set_error(
			    c, TF_EINVAL, "TF_CONFIG: cluster.%s is not a list",
			    key);
			break;
		}
		size_t i;
		json_t *h;
		json_array_foreach(v, i, h)
		{
			const char *s = json_string_value(h);
			char what[64];
			snprintf(what, sizeof what, "TF_CONFIG: cluster.%s",
			         key);
			rc = s == NULL
			         ? tfi_set_error(c, TF_EINVAL,
			                         "%s[%zu] is not a string",
			                         what, i)
			         : parse_hosts(c, j, s, what);
			if (rc != TF_OK) {
				break;
			}
		}
		if (rc != TF_OK) {
			break;
		}
	}
	json_t *task = json_object_get(root, "task");
	const char *type = json_string_value(json_object_get(task, "type"));
	json_t *ix = json_object_get(task, "index");
	long index = json_is_integer(ix) ? (long)json_integer_value(ix) : 0;
	if (rc == TF_OK) {
		if (f->job_name != NULL) {
			type = f->job_name;
		}
		if (f->task_index >= 0) {
			index = f->task_index;
		}
		rc = type == NULL ? tfi_set_error(c, TF_EINVAL,
		                                  "TF_CONFIG: no task.type")
		                  : set_me(c, type, index, "TF_CONFIG");
	}
	json_decref(root);
	return rc;
}

/* ---- launchers ----------------------------------------------------------- */

static int
add_name(struct tf_cluster *c, struct hosts *out, const char *s, size_t n)
{
	if (out->n >= MAX_TASKS) {
		return tfi_set_error(c, TF_EINVAL, "slurm: node list too long");
	}
	char **v = realloc(out->v, (out->n + 1) * sizeof *v);
	if (v == NULL) {
		return tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	out->v = v;
	if ((v[out->n] = strndup(s, n)) == NULL) {
		return tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	out->n++;
	return TF_OK;
}

/* Append the hosts of a Slurm node list ("n1,n[2-4,07-08],h") to out. */
static int
expand_nodelist(struct tf_cluster *c, const char *list, struct hosts *out)
{
	int rc = TF_OK;
	for (const char *p = list; *p && rc == TF_OK;) {
		const char *b = p;
		while (*p && *p != ',' && *p != '[') {
			p++;
		}
		size_t plen = (size_t)(p - b);
		if (*p != '[') {
			rc = plen > 0 ? add_name(c, out, b, plen) : TF_OK;
			p += *p == ',';
			continue;
		}
		const char *close = strchr(p, ']');
		if (close == NULL || plen > 200) {
			return tfi_set_error(c, TF_EINVAL,
			                     "slurm: bad node list '%s'", list);
		}
		for (const char *r = p + 1; r < close && rc == TF_OK;) {
			char *e;
			long lo = strtol(r, &e, 10), hi = lo;
			int width = (int)(e - r);
			if (e != r && *e == '-') {
				const char *h = e + 1;
				hi = strtol(h, &e, 10);
				hi = e == h ? -1 : hi;
			}
			/* node numbers of up to nine digits (a saturated
			 * strtol would overflow the loop: fuzz_cluster) */
			if (e == r || lo < 0 || hi < lo || hi > 999999999L ||
			    hi - lo >= MAX_TASKS || (*e != ',' && e != close)) {
				return tfi_set_error(
				    c, TF_EINVAL, "slurm: bad node list '%s'",
				    list);
			}
			for (long k = lo; k <= hi && rc == TF_OK; k++) {
				char name[240];
				int n = snprintf(name, sizeof name, "%.*s%0*ld",
				                 (int)plen, b, width, k);
				rc = add_name(c, out, name, (size_t)n);
			}
			r = e + (*e == ',');
		}
		p = close + 1;
		p += *p == ',';
	}
	return rc;
}

static void
free_hosts(struct hosts *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->v[i]);
	}
	free(h->v);
}

/* The tasks of a launcher: ntasks addresses, ps_tasks ps first. */
static int
split_tasks(struct tf_cluster *c, char **addr, size_t ntasks, long procid,
            const struct tf_cluster_flags *f)
{
	if (f->ps_tasks < 1 || (size_t)f->ps_tasks >= ntasks) {
		return tfi_set_error(c, TF_EINVAL,
		                     "%s: %zu tasks cannot be %ld ps and at "
		                     "least one worker (--ps-tasks)",
		                     c->source, ntasks, f->ps_tasks);
	}
	for (size_t i = 0; i < ntasks; i++) {
		int j = i < (size_t)f->ps_tasks ? J_PS : J_WORKER;
		int rc = push_host(c, j, addr[i], strlen(addr[i]));
		if (rc != TF_OK) {
			return rc;
		}
	}
	const char *job = procid < f->ps_tasks ? "ps" : "worker";
	long index = procid < f->ps_tasks ? procid : procid - f->ps_tasks;
	if (f->job_name != NULL) {
		job = f->job_name;
	}
	if (f->task_index >= 0) {
		index = f->task_index;
	}
	return set_me(c, job, index, c->source);
}

static int
env_long(tf_getenv_fn env, const char *name, long *v)
{
	const char *s = env(name);
	char *e;
	if (s == NULL || *s == '\0') {
		return 0;
	}
	*v = strtol(s, &e, 10);
	return *e == '\0' && *v >= 0;
}

static int
from_slurm(struct tf_cluster *c, tf_getenv_fn env,
           const struct tf_cluster_flags *f)
{
	long procid, ntasks;
	const char *nodes = env("SLURM_STEP_NODELIST");
	const char *per = env("SLURM_STEP_TASKS_PER_NODE");
	nodes = nodes ? nodes : env("SLURM_JOB_NODELIST");
	per = per ? per : env("SLURM_TASKS_PER_NODE");
	if (!env_long(env, "SLURM_PROCID", &procid) ||
	    !env_long(env, "SLURM_NTASKS", &ntasks) || nodes == NULL ||
	    per == NULL || ntasks < 1 || ntasks > MAX_TASKS) {
		return tfi_set_error(c, TF_EINVAL,
		                     "slurm: SLURM_PROCID, SLURM_NTASKS, "
		                     "SLURM_STEP_NODELIST and "
		                     "SLURM_STEP_TASKS_PER_NODE are needed");
	}
	struct hosts h = {0};
	int rc = expand_nodelist(c, nodes, &h);
	char **addr = calloc((size_t)ntasks, sizeof *addr);
	size_t t = 0;
	if (rc == TF_OK && addr == NULL) {
		rc = tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	/* "2(x3),1": tasks per node in node order, tasks placed in blocks
	 * (Slurm's default distribution), each at its node's port_base
	 * plus its place there. */
	size_t node = 0;
	for (const char *p = per; rc == TF_OK && *p;) {
		char *e;
		long k = strtol(p, &e, 10), rep = 1;
		if (strncmp(e, "(x", 2) == 0) {
			const char *q = e + 2;
			rep = strtol(q, &e, 10);
			rep = e == q || *e != ')' ? -1 : rep;
			e += *e == ')';
		}
		if (e == p || k < 0 || rep < 1 || (*e != ',' && *e != '\0')) {
			rc = tfi_set_error(
			    c, TF_EINVAL,
			    "slurm: bad SLURM_STEP_TASKS_PER_NODE "
			    "'%s'",
			    per);
			break;
		}
		if (rep > (long)(h.n - node)) {
			/* more nodes than the list holds (and a count like
			 * (x99999999999) ends here, not after its loop) */
			rc = tfi_set_error(
			    c, TF_EINVAL,
			    "slurm: SLURM_STEP_TASKS_PER_NODE '%.200s' counts "
			    "more nodes than '%.200s' lists",
			    per, nodes);
			break;
		}
		for (long r = 0; r < rep && rc == TF_OK; r++, node++) {
			/* past ntasks only the count matters: said below */
			for (long i = 0;
			     i < k && t <= (size_t)ntasks && rc == TF_OK; i++) {
				char a[300];
				snprintf(a, sizeof a, "%.200s:%ld", h.v[node],
				         f->port_base + i);
				if (t >= (size_t)ntasks) {
					t++; /* too many: said below */
				} else if ((addr[t++] = strdup(a)) == NULL) {
					rc = tfi_set_error(c, TF_ENOMEM,
					                   "out of memory");
				}
			}
		}
		p = e + (*e == ',');
	}
	if (rc == TF_OK && t != (size_t)ntasks) {
		rc = tfi_set_error(c, TF_EINVAL,
		                   "slurm: SLURM_STEP_TASKS_PER_NODE '%s' over "
		                   "'%s' places %zu of %ld tasks",
		                   per, nodes, t, ntasks);
	}
	if (rc == TF_OK) {
		rc = split_tasks(c, addr, (size_t)ntasks, procid, f);
	}
	for (size_t i = 0; addr != NULL && i < (size_t)ntasks; i++) {
		free(addr[i]);
	}
	free(addr);
	free_hosts(&h);
	return rc;
}

static int
from_mpi(struct tf_cluster *c, long rank, long size,
         const struct tf_cluster_flags *f)
{
	if (size < 2 || size > MAX_TASKS || rank >= size) {
		return tfi_set_error(c, TF_EINVAL,
		                     "mpi: rank %ld of %ld tasks: a cluster "
		                     "needs a ps and a worker",
		                     rank, size);
	}
	char **addr = calloc((size_t)size, sizeof *addr);
	int rc =
	    addr == NULL ? tfi_set_error(c, TF_ENOMEM, "out of memory") : TF_OK;
	for (long i = 0; rc == TF_OK && i < size; i++) {
		char a[64];
		snprintf(a, sizeof a, "127.0.0.1:%ld", f->port_base + i);
		if ((addr[i] = strdup(a)) == NULL) {
			rc = tfi_set_error(c, TF_ENOMEM, "out of memory");
		}
	}
	if (rc == TF_OK) {
		rc = split_tasks(c, addr, (size_t)size, rank, f);
	}
	for (long i = 0; addr != NULL && i < size; i++) {
		free(addr[i]);
	}
	free(addr);
	return rc;
}

/* ---- resolution ---------------------------------------------------------- */

int
tf_cluster_resolve(struct tf_cluster *c, const struct tf_cluster_flags *f,
                   tf_getenv_fn env)
{
	clear(c);
	env = env ? env : (tf_getenv_fn)getenv;
	long rank, size;
	int rc;
	if (f->ps_hosts != NULL || f->worker_hosts != NULL ||
	    f->chief_hosts != NULL) {
		c->source = "flags";
		if ((f->ps_hosts &&
		     (rc = parse_hosts(c, J_PS, f->ps_hosts, "--ps-hosts"))) ||
		    (f->worker_hosts &&
		     (rc = parse_hosts(c, J_WORKER, f->worker_hosts,
		                       "--worker-hosts"))) ||
		    (f->chief_hosts &&
		     (rc = parse_hosts(c, J_CHIEF, f->chief_hosts,
		                       "--chief-hosts")))) {
			return rc;
		}
		if (f->job_name == NULL || f->task_index < 0) {
			return tfi_set_error(
			    c, TF_EINVAL,
			    "--ps-hosts and --worker-hosts go "
			    "with --job-name and --task-index");
		}
		return set_me(c, f->job_name, f->task_index, "flags");
	}
	const char *tfc = env("TF_CONFIG");
	if (tfc != NULL && *tfc != '\0') {
		c->source = "TF_CONFIG";
		return from_tf_config(c, tfc, f);
	}
	if (env("SLURM_PROCID") != NULL && env("SLURM_NTASKS") != NULL &&
	    env("SLURM_STEP_NODELIST") != NULL) {
		c->source = "slurm";
		return from_slurm(c, env, f);
	}
	if ((env_long(env, "OMPI_COMM_WORLD_RANK", &rank) &&
	     env_long(env, "OMPI_COMM_WORLD_SIZE", &size)) ||
	    (env_long(env, "PMI_RANK", &rank) &&
	     env_long(env, "PMI_SIZE", &size))) {
		c->source = "mpi";
		return from_mpi(c, rank, size, f);
	}
	if (f->job_name != NULL || f->task_index >= 0) {
		return tfi_set_error(c, TF_EINVAL,
		                     "--job-name and --task-index need a "
		                     "cluster: --ps-hosts and --worker-hosts, "
		                     "TF_CONFIG, or a Slurm or MPI launcher");
	}
	return TF_OK; /* one process */
}

int
tf_cluster_distributed(const struct tf_cluster *c)
{
	return c->me >= 0;
}

const char *
tf_cluster_source(const struct tf_cluster *c)
{
	return c->source;
}

const char *
tf_cluster_job(const struct tf_cluster *c)
{
	return c->me >= 0 ? job_names[c->me] : "";
}

size_t
tf_cluster_index(const struct tf_cluster *c)
{
	return c->index;
}

size_t
tf_cluster_count(const struct tf_cluster *c, const char *job)
{
	int j = job_of(job);
	return j >= 0 ? c->job[j].n : 0;
}

const char *
tf_cluster_host(const struct tf_cluster *c, const char *job, size_t i)
{
	int j = job_of(job);
	return j >= 0 && i < c->job[j].n ? c->job[j].v[i] : NULL;
}

size_t
tf_cluster_trainers(const struct tf_cluster *c)
{
	return c->job[J_CHIEF].n + c->job[J_WORKER].n;
}

size_t
tf_cluster_rank(const struct tf_cluster *c)
{
	return c->me == J_WORKER ? c->job[J_CHIEF].n + c->index : 0;
}

int
tf_cluster_is_chief(const struct tf_cluster *c)
{
	return c->me == J_CHIEF ||
	       (c->me == J_WORKER && c->index == 0 && c->job[J_CHIEF].n == 0);
}

char *
tf_cluster_json(const struct tf_cluster *c)
{
	json_t *o = json_object(), *cl = json_object();
	for (int j = 0; j < NJOBS; j++) {
		if (c->job[j].n == 0) {
			continue;
		}
		json_t *a = json_array();
		for (size_t i = 0; i < c->job[j].n; i++) {
			json_array_append_new(a, json_string(c->job[j].v[i]));
		}
		json_object_set_new(cl, job_names[j], a);
	}
	json_object_set_new(o, "cluster", cl);
	if (c->me >= 0) {
		json_object_set_new(o, "task",
		                    json_pack("{s:s,s:I}", "type",
		                              job_names[c->me], "index",
		                              (json_int_t)c->index));
		json_object_set_new(
		    o, "chief",
		    json_string(c->job[J_CHIEF].n ? "chief:0" : "worker:0"));
	}
	json_object_set_new(o, "source", json_string(c->source));
	char *text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return text;
}

/* ---- the addresses of a host name ---------------------------------------- */

/*
 * A name such as localhost may resolve to several addresses (Debian's
 * /etc/hosts gives it ::1 and 127.0.0.1): a listener on one of them and
 * a dialer that tries another miss each other.  So a ps listens on, and
 * a trainer dials, every address the name resolves to, as gRPC does.
 * An address literal, bracketed or not, is itself.
 */
int
tfi_url_addresses(const char *url, char (*out)[TFI_URL_MAX], int max,
                  int v6_only, char *err, size_t errlen)
{
	const char *sep = strstr(url, "://");
	const char *host = sep ? sep + 3 : url;
	const char *colon = strrchr(host, ':');
	if (sep == NULL || colon == NULL || colon == host || host[0] == '[' ||
	    max < 1) {
		snprintf(out[0], TFI_URL_MAX, "%s", url);
		return v6_only ? 0 : 1;
	}
	char name[256];
	snprintf(name, sizeof name, "%.*s", (int)(colon - host), host);
	unsigned char bin[sizeof(struct in6_addr)];
	if (inet_pton(AF_INET, name, bin) == 1 ||
	    inet_pton(AF_INET6, name, bin) == 1) {
		snprintf(out[0], TFI_URL_MAX, "%s", url);
		return v6_only ? 0 : 1;
	}
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
	                         .ai_socktype = SOCK_STREAM};
	struct addrinfo *res = NULL;
	int rv = getaddrinfo(name, NULL, &hints, &res);
	if (rv != 0) {
		snprintf(err, errlen, "%s: %s", name, gai_strerror(rv));
		return -1;
	}
	int n = 0;
	for (struct addrinfo *a = res; a != NULL && n < max; a = a->ai_next) {
		char addr[INET6_ADDRSTRLEN];
		const void *p =
		    a->ai_family == AF_INET
		        ? (const void *)&(
		              (struct sockaddr_in *)(void *)a->ai_addr)
		              ->sin_addr
		        : (const void *)&(
		              (struct sockaddr_in6 *)(void *)a->ai_addr)
		              ->sin6_addr;
		if ((a->ai_family != AF_INET && a->ai_family != AF_INET6) ||
		    (v6_only && a->ai_family != AF_INET6) ||
		    inet_ntop(a->ai_family, p, addr, sizeof addr) == NULL) {
			continue;
		}
		char u[TFI_URL_MAX];
		snprintf(u, sizeof u, "%.*s%s%s%s%s", (int)(sep + 3 - url), url,
		         a->ai_family == AF_INET6 ? "[" : "", addr,
		         a->ai_family == AF_INET6 ? "]" : "", colon);
		int seen = 0;
		for (int k = 0; k < n && !seen; k++) {
			seen = strcmp(out[k], u) == 0;
		}
		if (!seen) {
			memcpy(out[n++], u, sizeof u);
		}
	}
	freeaddrinfo(res);
	if (n == 0 && !v6_only) {
		snprintf(err, errlen, "%s: no address", name);
		return -1;
	}
	return n;
}
