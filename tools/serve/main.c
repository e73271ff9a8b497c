/*
 * tf-serve - serve exported models over the TensorFlow Serving REST API
 * (libmicrohttpd), an nng request/reply socket, or as a stdin filter;
 * watch the export base and swap in each new valid version.  This file
 * holds the options, start and stop; serve.h lists the other parts.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tool.h"
#include "serve.h"

static void
usage(void)
{
	printf(
	    "Usage: %s --model-base=BASE [--model-name=NAME] [OPTION]...\n"
	    "  or:  %s --model-config-file=FILE [OPTION]...\n"
	    "  or:  %s --model-base=BASE --stdin [--stdin-format=FORMAT]\n"
	    "Serve the newest valid version of exported models (tf-export) "
	    "over\nTensorFlow Serving's gRPC and REST APIs, and optionally an "
	    "nng request/reply\nsocket; watch BASE and swap in new versions "
	    "without failing a request.  BASE may\nalso be a .tar.gz "
	    "archive from tf-export --archive.  With --stdin, read\n"
	    "instances (JSON lines) or records from standard input and "
	    "write one\nprediction per line.\n\n"
	    "      --allow-missing       :classify, :regress: a feature an "
	    "example lacks\n"
	    "                            counts as its training mean\n"
	    "      --batch-timeout-micros=N  wait up to N us to fill a batch "
	    "(default 1000)\n"
	    "      --enable-batching     run concurrent requests as one "
	    "batch\n"
	    "      --idle-timeout=SECS   close idle connections after SECS "
	    "(default 30)\n"
	    "      --grpc-port=PORT      gRPC port (default 8500; 0: any free "
	    "port; off:\n"
	    "                            no gRPC API); also spelled --port\n"
	    "      --listen-address=ADDR IPv4 or IPv6 address of both APIs "
	    "(default\n"
	    "                            0.0.0.0: every address, IPv6's "
	    "too)\n"
	    "      --max-batch-size=N    rows in one batch (default 64)\n"
	    "      --max-body-bytes=N    largest request body (default "
	    "16777216)\n"
	    "      --max-connections=N   open connections at most (default "
	    "1024)\n"
	    "      --max-header-bytes=N  memory for one request's headers "
	    "(default 32768)\n"
	    "      --max-request-rows=N  rows in one request (default "
	    "10000)\n"
	    "      --model-base=BASE     versions BASE/N/, or an archive\n"
	    "      --model-config-file=FILE  several models: JSON {\"models\": "
	    "[{\"name\":\n"
	    "                            NAME, \"base_path\": BASE}, ...]}\n"
	    "      --model-name=NAME     the name in URLs (default model)\n"
	    "      --nng-listen=URL      also answer on an nng rep socket "
	    "(tcp://, ipc://)\n"
	    "      --plugin-dir=DIR      look for plugins in DIR first\n"
	    "      --poll-interval=SECS  look for new versions every SECS "
	    "(default 1;\n"
	    "                            0: only at start)\n"
	    "      --rest-api-port=PORT  REST port (default 8501; 0: any "
	    "free port)\n"
	    "      --stdin               a filter: predictions for standard "
	    "input\n"
	    "      --stdin-format=FORMAT json (one instance a line, default) "
	    "or tfrecord\n"
	    "  -j, --threads=N           worker threads (default 2)\n"
	    "      --train-queue=DIR     take labelled examples on POST "
	    ":train into the queue\n"
	    "                            DIR, which tf-train trains "
	    "(tf-train(1))\n"
	    "      --train-queue-max=BYTES  503 while DIR holds this much "
	    "untrained (1G)\n"
	    "      --train-segment-bytes=BYTES  a queue segment's size "
	    "(64M)\n"
	    "      --device=DEV          cpu (default), cuda or cuda:N: "
	    "where models run\n"
	    "      --gpu-math=M          fp32 (default) or tf32\n"
	    "  -h, --help                show this help and exit\n"
	    "  -V, --version             show the version and exit\n\n"
	    "Exit status: 0 after SIGTERM or SIGINT (requests drained) or "
	    "at the end of\n--stdin, 64 usage, 65 bad input (--stdin), 66 "
	    "missing model base, 69 no\nvalid version, the port is "
	    "taken or no such device, 70 out of memory or an internal\n"
	    "error, 74 I/O error.\n",
	    tool_name, tool_name, tool_name);
}

enum {
	OPT_BATCH_TIMEOUT = 256,
	OPT_ALLOW_MISSING,
	OPT_BATCHING,
	OPT_IDLE,
	OPT_ADDRESS,
	OPT_MAX_BATCH,
	OPT_MAX_BODY,
	OPT_MAX_CONN,
	OPT_MAX_HEADER,
	OPT_MAX_ROWS,
	OPT_BASE,
	OPT_CONFIG,
	OPT_NAME,
	OPT_NNG,
	OPT_PLUGIN_DIR,
	OPT_POLL,
	OPT_PORT,
	OPT_GRPC_PORT,
	OPT_STDIN,
	OPT_STDIN_FORMAT,
	OPT_DEVICE,
	OPT_GPU_MATH,
	OPT_TRAIN_QUEUE,
	OPT_TRAIN_MAX,
	OPT_TRAIN_SEGMENT
};

static const struct option options[] = {
    {"allow-missing", no_argument, NULL, OPT_ALLOW_MISSING},
    {"batch-timeout-micros", required_argument, NULL, OPT_BATCH_TIMEOUT},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"enable-batching", no_argument, NULL, OPT_BATCHING},
    {"gpu-math", required_argument, NULL, OPT_GPU_MATH},
    {"grpc-port", required_argument, NULL, OPT_GRPC_PORT},
    {"help", no_argument, NULL, 'h'},
    {"idle-timeout", required_argument, NULL, OPT_IDLE},
    {"listen-address", required_argument, NULL, OPT_ADDRESS},
    {"max-batch-size", required_argument, NULL, OPT_MAX_BATCH},
    {"max-body-bytes", required_argument, NULL, OPT_MAX_BODY},
    {"max-connections", required_argument, NULL, OPT_MAX_CONN},
    {"max-header-bytes", required_argument, NULL, OPT_MAX_HEADER},
    {"max-request-rows", required_argument, NULL, OPT_MAX_ROWS},
    {"model-base", required_argument, NULL, OPT_BASE},
    {"model-config-file", required_argument, NULL, OPT_CONFIG},
    {"model-name", required_argument, NULL, OPT_NAME},
    {"nng-listen", required_argument, NULL, OPT_NNG},
    {"plugin-dir", required_argument, NULL, OPT_PLUGIN_DIR},
    {"poll-interval", required_argument, NULL, OPT_POLL},
    {"port", required_argument, NULL, OPT_GRPC_PORT}, /* TF Serving's */
    {"rest-api-port", required_argument, NULL, OPT_PORT},
    {"stdin", no_argument, NULL, OPT_STDIN},
    {"stdin-format", required_argument, NULL, OPT_STDIN_FORMAT},
    {"threads", required_argument, NULL, 'j'},
    {"train-queue", required_argument, NULL, OPT_TRAIN_QUEUE},
    {"train-queue-max", required_argument, NULL, OPT_TRAIN_MAX},
    {"train-segment-bytes", required_argument, NULL, OPT_TRAIN_SEGMENT},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/* One option into the settings. */
static void
apply(struct serve_opts *o, int c, const char *arg)
{
	switch (c) {
	case 'j':
		o->threads = (int)opt_int("--threads", arg, 1, 256);
		break;
	case OPT_BATCH_TIMEOUT:
		o->batch_timeout_us =
		    (long)opt_int("--batch-timeout-micros", arg, 0, 10000000);
		break;
	case OPT_BATCHING:
		o->batching = 1;
		break;
	case OPT_ALLOW_MISSING:
		o->allow_missing = 1;
		break;
	case OPT_IDLE:
		o->idle = (unsigned)opt_int("--idle-timeout", arg, 1, 86400);
		break;
	case OPT_ADDRESS:
		o->address = arg;
		break;
	case OPT_MAX_BATCH:
		o->max_batch =
		    (size_t)opt_int("--max-batch-size", arg, 1, 1 << 20);
		break;
	case OPT_MAX_BODY:
		o->max_body =
		    (size_t)opt_int("--max-body-bytes", arg, 64, 1LL << 32);
		break;
	case OPT_MAX_CONN:
		o->max_conn =
		    (unsigned)opt_int("--max-connections", arg, 1, 1 << 20);
		break;
	case OPT_MAX_HEADER:
		o->max_header =
		    (size_t)opt_int("--max-header-bytes", arg, 4096, 1 << 24);
		break;
	case OPT_MAX_ROWS:
		o->max_rows =
		    (size_t)opt_int("--max-request-rows", arg, 1, 1 << 24);
		break;
	case OPT_NNG:
		o->nng_url = arg;
		break;
	case OPT_DEVICE:
		o->device = arg;
		break;
	case OPT_GPU_MATH:
		o->gpu_math = arg;
		break;
	case OPT_POLL:
		o->poll = opt_double("--poll-interval", arg);
		if (o->poll < 0) {
			usage_error("--poll-interval must be at least 0");
		}
		break;
	case OPT_PORT:
		o->port = (int)opt_int("--rest-api-port", arg, 0, 65535);
		break;
	case OPT_TRAIN_QUEUE:
		o->train_queue = arg;
		break;
	case OPT_TRAIN_MAX:
		o->train_max = opt_size("--train-queue-max", arg, 1);
		break;
	case OPT_TRAIN_SEGMENT:
		o->train_segment = opt_size("--train-segment-bytes", arg, 1);
		if (o->train_segment >= (uint64_t)1 << 40) {
			usage_error("--train-segment-bytes: at most 1T - 1");
		}
		break;
	case OPT_GRPC_PORT:
		o->grpc_port = strcmp(arg, "off") == 0
		                   ? -1
		                   : (int)opt_int("--grpc-port", arg, 0, 65535);
		break;
	default:
		fprintf(stderr, "try '%s --help'\n", tool_name);
		exit(EX_USAGE);
	}
}

/* Serve until SIGTERM or SIGINT, then drain and stop. */
static int
run(struct serve *sv)
{
	/* Signals go to sigwait() below, never to a worker. */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	unsigned pool;
	struct serve_http *http = serve_http_start(sv, &pool);
	struct serve_grpc *grpc = serve_grpc_start(sv, pool);
	/* The port is taken before the models load: a client may ask for
	 * /readyz meanwhile (503 until every model has a version). */
	for (int i = 0; i < sv->nmodels; i++) {
		serve_scan(sv, &sv->models[i]);
	}
	struct serve_nng *nng =
	    sv->opt.nng_url != NULL ? serve_nng_start(sv) : NULL;
	if (sv->opt.batching && serve_batching_start(sv) != 0) {
		die(EX_OSERR, "cannot start the batch workers");
	}
	pthread_t watch_thread;
	int watching =
	    sv->opt.poll > 0 &&
	    pthread_create(&watch_thread, NULL, serve_watcher, sv) == 0;
	int sig = 0;
	sigwait(&sigs, &sig);
	warnx_("%s: draining", sig == SIGINT ? "SIGINT" : "SIGTERM");
	serve_http_stop(sv, http);
	serve_grpc_stop(grpc);
	atomic_store(&sv->stopping, 1);
	pthread_mutex_lock(&sv->watch_lock);
	pthread_cond_broadcast(&sv->watch_wake);
	pthread_mutex_unlock(&sv->watch_lock);
	if (watching) {
		pthread_join(watch_thread, NULL);
	}
	serve_nng_stop(nng);
	serve_batching_stop(sv);
	warnx_("stopped");
	return 0;
}

/* One try at a listening socket on a resolved address; -1 with errno. */
static int
listen_sockaddr(const struct sockaddr *sa, socklen_t len, int dual)
{
	int one = 1, zero = 0;
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return -1;
	}
	if ((dual && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero,
	                        sizeof zero) != 0) ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
	    bind(fd, sa, len) != 0 || listen(fd, 1024) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

const char *
serve_hostport(char *buf, size_t n, const char *address, int port)
{
	const char *v6 = strchr(address, ':') ? "[" : "";
	snprintf(buf, n, "%s%s%s:%d", v6, address, *v6 ? "]" : "", port);
	return buf;
}

int
serve_listen(const char *address, int port, const char *what, int *bound)
{
	struct sockaddr_in6 v6 = {.sin6_family = AF_INET6,
	                          .sin6_port = htons((uint16_t)port)};
	struct sockaddr_in v4 = {.sin_family = AF_INET,
	                         .sin_port = htons((uint16_t)port)};
	int fd;
	if (strcmp(address, "0.0.0.0") == 0 || strcmp(address, "::") == 0) {
		/* Both families on one [::] socket; 0.0.0.0 (v4 as it is)
		 * where the machine has no IPv6. */
		v6.sin6_addr = in6addr_any;
		fd = listen_sockaddr((struct sockaddr *)&v6, sizeof v6, 1);
		if (fd < 0 &&
		    (errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL)) {
			fd = listen_sockaddr((struct sockaddr *)&v4, sizeof v4,
			                     0);
		}
	} else if (inet_pton(AF_INET6, address, &v6.sin6_addr) == 1) {
		fd = listen_sockaddr((struct sockaddr *)&v6, sizeof v6, 0);
	} else {
		inet_pton(AF_INET, address, &v4.sin_addr); /* checked */
		fd = listen_sockaddr((struct sockaddr *)&v4, sizeof v4, 0);
	}
	if (fd < 0) {
		char hp[64];
		die(EX_UNAVAILABLE, "cannot listen%s on %s: %s", what,
		    serve_hostport(hp, sizeof hp, address, port),
		    strerror(errno));
	}
	/* the port given, or the one taken for port 0 */
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	getsockname(fd, (struct sockaddr *)&ss, &len);
	*bound = ntohs(ss.ss_family == AF_INET6
	                   ? ((struct sockaddr_in6 *)&ss)->sin6_port
	                   : ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

int
main(int argc, char **argv)
{
	tool_start("tf-serve");
	static struct serve sv = {
	    .opt = {.threads = 2,
	            .max_batch = 64,
	            .batch_timeout_us = 1000,
	            .max_body = 16u << 20,
	            .max_rows = 10000,
	            .max_header = 32768,
	            .max_conn = 1024,
	            .idle = 30,
	            .poll = 1.0,
	            .port = 8501,
	            .grpc_port = 8500,
	            .address = "0.0.0.0",
	            .train_max = (uint64_t)1 << 30,
	            .train_segment = (uint64_t)64 << 20},
	    .watch_lock = PTHREAD_MUTEX_INITIALIZER,
	    .watch_wake = PTHREAD_COND_INITIALIZER,
	};
	sv.reg = tf_registry_new();
	if (sv.reg == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	const char *base = NULL, *name = "model", *config = NULL;
	const char *stdin_format = "json";
	int use_stdin = 0, c;
	while ((c = getopt_long(argc, argv, "hj:V", options, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage();
			return 0;
		case 'V':
			print_version();
			return 0;
		case OPT_BASE:
			base = optarg;
			break;
		case OPT_CONFIG:
			config = optarg;
			break;
		case OPT_NAME:
			name = optarg;
			break;
		case OPT_PLUGIN_DIR:
			tf_registry_add_dir(sv.reg, optarg);
			break;
		case OPT_STDIN:
			use_stdin = 1;
			break;
		case OPT_STDIN_FORMAT:
			stdin_format = optarg;
			if (strcmp(optarg, "json") != 0 &&
			    strcmp(optarg, "tfrecord") != 0) {
				usage_error("--stdin-format: '%s' is not json "
				            "or tfrecord",
				            optarg);
			}
			break;
		default:
			apply(&sv.opt, c, optarg);
		}
	}
	if (optind < argc) {
		usage_error("unexpected argument '%s'", argv[optind]);
	}
	if ((base == NULL) == (config == NULL)) {
		usage_error("say what to serve: --model-base BASE or "
		            "--model-config-file FILE");
	}
	if (use_stdin && config != NULL) {
		usage_error("--stdin serves one model: use --model-base");
	}
	if (sv.opt.train_queue != NULL && (config != NULL || use_stdin)) {
		usage_error("--train-queue takes the examples of the one model "
		            "of --model-base, over REST");
	}
	struct in6_addr addr;
	if (inet_pton(AF_INET, sv.opt.address, &addr) != 1 &&
	    inet_pton(AF_INET6, sv.opt.address, &addr) != 1) {
		usage_error("--listen-address: '%s' is not an IPv4 or IPv6 "
		            "address",
		            sv.opt.address);
	}
	if (tf_registry_load(sv.reg) != TF_OK) {
		die_status(tf_errcode(sv.reg), tf_errmsg(sv.reg));
	}
	sv.opt.dev = open_device(sv.opt.device, sv.opt.gpu_math);
	if (config != NULL) {
		serve_load_config(&sv, config);
	} else {
		serve_add_model(&sv, name, base);
	}
	serve_train_open(&sv);
	int rc;
	if (use_stdin) {
		serve_scan(&sv, &sv.models[0]);
		if (sv.models[0].cur == NULL) {
			die(EX_UNAVAILABLE, "model %s: no valid version in %s",
			    sv.models[0].name, sv.models[0].base);
		}
		rc = serve_stdin(&sv, &sv.models[0], stdin_format);
	} else {
		rc = run(&sv);
	}
	serve_free_models(&sv);
	tf_registry_free(sv.reg);
	return rc;
}
