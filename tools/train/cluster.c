/*
 * cluster.c - tf-train's and tf-ps's cluster flags, --print-cluster, and
 * the ps task (tf_ps_run) with --status.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tf/tf.h"
#include "tool.h"
#include "train.h"

int
cluster_option(struct dist *d, int c)
{
	switch (c) {
	case OPT_PS_HOSTS:
		d->f.ps_hosts = optarg;
		return 1;
	case OPT_WORKER_HOSTS:
		d->f.worker_hosts = optarg;
		return 1;
	case OPT_CHIEF_HOSTS:
		d->f.chief_hosts = optarg;
		return 1;
	case OPT_JOB_NAME:
		d->f.job_name = optarg;
		return 1;
	case OPT_TASK_INDEX:
		d->f.task_index =
		    (long)opt_int("--task-index", optarg, 0, 65535);
		return 1;
	case OPT_PS_TASKS:
		d->f.ps_tasks = (long)opt_int("--ps-tasks", optarg, 1, 4096);
		return 1;
	case OPT_PORT_BASE:
		d->f.port_base = (long)opt_int("--port-base", optarg, 1, 65535);
		return 1;
	case OPT_PRINT_CLUSTER:
		d->print_cluster = 1;
		return 1;
	case OPT_STATUS:
		d->status = 1;
		return 1;
	case OPT_TLS_CA:
		d->tls_ca = optarg;
		return 1;
	case OPT_TLS_CERT_KEY:
		d->tls_cert_key = optarg;
		return 1;
	case OPT_IDLE_TIMEOUT:
		d->idle_timeout = opt_double("--idle-timeout", optarg);
		if (d->idle_timeout < 0) {
			usage_error("--idle-timeout: '%s' is below 0", optarg);
		}
		return 1;
	case OPT_AUTH_TOKEN:
	case OPT_AUTH_FILE: {
		free(d->token);
		size_t n;
		d->token = c == OPT_AUTH_TOKEN ? strdup(optarg)
		                               : tf_file_read(optarg, &n);
		if (d->token == NULL && c == OPT_AUTH_FILE) {
			die(errno == ENOENT ? EX_NOINPUT : EX_IOERR,
			    "cannot read %s: %s", optarg, strerror(errno));
		}
		if (d->token == NULL) {
			die(EX_SOFTWARE, "out of memory");
		}
		d->token[strcspn(d->token, "\r\n")] = '\0';
		if (d->token[0] == '\0') {
			usage_error("the auth token is empty");
		}
		return 1;
	}
	default:
		return 0;
	}
}

struct tf_cluster *
resolve_cluster(struct dist *d)
{
	/* static: still reachable when a usage error exits */
	static struct tf_cluster *cl;
	cl = tf_cluster_new();
	if (cl == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
#ifdef TFKIT_PS
	/* tf-ps is a ps task, unless TF_CONFIG says which it is. */
	const char *tfc = getenv("TF_CONFIG");
	if (d->f.job_name == NULL && (tfc == NULL || *tfc == '\0')) {
		d->f.job_name = "ps";
	}
	if (d->status && d->f.task_index < 0) {
		d->f.task_index = 0; /* any ps asks them all */
	}
#endif
	if (tf_cluster_resolve(cl, &d->f, NULL) != TF_OK) {
		usage_error("%s", tf_errmsg(cl));
	}
	if (d->print_cluster) {
		char *j = tf_cluster_json(cl);
		if (j == NULL) {
			die(EX_SOFTWARE, "out of memory");
		}
		puts(j);
		free(j);
		tf_cluster_free(cl);
		exit(fflush(stdout) == 0 ? 0 : EX_IOERR);
	}
	return cl;
}

static void
ps_note(void *ctx, const char *msg)
{
	(void)ctx;
	warnx_("%s", msg);
}

int
ps_main(struct tf_registry *reg, struct tf_settings *set,
        const struct tf_cluster *cl, const struct dist *d)
{
	size_t nps = tf_cluster_count(cl, "ps");
	if (d->status) {
		const char *addrs[4096];
		for (size_t i = 0; i < nps && i < 4096; i++) {
			addrs[i] = tf_cluster_host(cl, "ps", i);
		}
		struct tf_ps_client *c = tf_ps_client_new();
		char *json = NULL;
		if (c == NULL || tf_ps_client_set_tls(c, d->tls_ca) != TF_OK ||
		    tf_ps_client_connect(c, addrs, nps, d->token, 5) != TF_OK ||
		    tf_ps_client_status(c, &json) != TF_OK) {
			die_status(c ? tf_errcode(c) : TF_ENOMEM, tf_errmsg(c));
		}
		fputs(json, stdout);
		free(json);
		tf_ps_client_free(c);
		return fflush(stdout) == 0 ? 0 : EX_IOERR;
	}
	/* The optimizer plugins the chief may name. */
	const char *dir;
	for (size_t i = 0; (dir = tf_settings_item(set, "plugin-dir", i));
	     i++) {
		tf_registry_add_dir(reg, dir);
	}
	if (tf_registry_load(reg) != TF_OK) {
		die_status(tf_errcode(reg), tf_errmsg(reg));
	}
	const char *me = tf_cluster_host(cl, "ps", tf_cluster_index(cl));
	const char *colon = strrchr(me, ':');
	char url[320];
	/* The port on every interface, as TensorFlow's servers listen;
	 * a loopback host stays on loopback. */
	int loop = strncmp(me, "localhost:", 10) == 0 ||
	           strncmp(me, "127.", 4) == 0 || strncmp(me, "[::1]:", 6) == 0;
	const char *scheme = d->tls_cert_key ? "tls+tcp" : "tcp";
	/* a loopback name: each address it has (::1 and 127.0.0.1, say);
	 * any other: the IPv4 wildcard and the name's IPv6 addresses */
	char v6[320];
	snprintf(url, sizeof url, "%s://%.*s%s", scheme,
	         loop ? (int)(colon ? colon - me : (ptrdiff_t)strlen(me)) : 7,
	         loop ? me : "0.0.0.0", colon ? colon : ":0");
	snprintf(v6, sizeof v6, "%s://%s", scheme, me);
	const char *tr = tf_settings_get(set, "total-replicas");
	/* The run's settings a ps restarted where the chief checkpoints
	 * needs (the same command line's). */
	if (tf_settings_resolve(set) != TF_OK) {
		die_status(tf_errcode(set), tf_errmsg(set));
	}
	struct tf_train_config tc;
	tf_settings_config(set, &tc);
	struct tf_ps_config pc = {
	    .listen = url,
	    .token = d->token,
	    .index = tf_cluster_index(cl),
	    .count = nps,
	    .trainers =
	        tr ? (size_t)strtoul(tr, NULL, 10) : tf_cluster_trainers(cl),
	    .idle_timeout = d->idle_timeout,
	    .checkpoint_dir = tc.from_scratch ? NULL : tc.checkpoint_dir,
	    .tls_cert_key = d->tls_cert_key,
	    .sync = tc.sync,
	    .replicas_to_aggregate = tc.replicas_to_aggregate,
	    .staleness = tc.staleness,
	    .peer_timeout = tc.peer_timeout,
	    .listen_v6 = loop ? NULL : v6,
	    .startup_timeout = tc.startup_timeout,
	};
	struct tf_ps_sink sink = {NULL, ps_note, should_stop};
	struct sigaction sa = {.sa_handler = on_stop_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	int rc = tf_ps_run(reg, &pc, &sink);
	if (rc == TF_EIO) {
		die(EX_IOERR, "ps %zu: cannot serve on %s", pc.index, url);
	}
	if (rc == TF_EUNAVAIL) {
		return EX_UNAVAILABLE; /* no trainer came: said in a note */
	}
	if (rc != TF_OK) {
		die_status(rc, tf_strerror(rc));
	}
	return 0;
}
