/*
 * tf-serve - serve exported models over the TensorFlow Serving REST API
 * (libmicrohttpd), an nng request/reply socket, or as a stdin filter;
 * watch the export base and swap in each new valid version.
 *
 * A model's current version is reference-counted: a request takes a
 * reference for its whole life, so a swap never pulls a version from
 * under it; the old version is freed when its last request finishes.
 * Each version holds one loaded model per worker (models are not
 * thread-safe while predicting); parsing and answering only read it.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <jansson.h>
#include <microhttpd.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>

#include "tf/tf.h"
#include "tool.h"

static void
usage(void)
{
	printf(
	    "Usage: %s --model-base=BASE [--model-name=NAME] [OPTION]...\n"
	    "  or:  %s --model-config-file=FILE [OPTION]...\n"
	    "  or:  %s --model-base=BASE --stdin [--stdin-format=FORMAT]\n"
	    "Serve the newest valid version of exported models (tf-export) "
	    "over the\nTensorFlow Serving REST API, and optionally an nng "
	    "request/reply socket;\nwatch BASE and swap in new versions "
	    "without failing a request.  BASE may\nalso be a .tar.gz "
	    "archive from tf-export --archive.  With --stdin, read\n"
	    "instances (JSON lines) or records from standard input and "
	    "write one\nprediction per line.\n\n"
	    "      --batch-timeout-micros=N  wait up to N us to fill a batch "
	    "(default 1000)\n"
	    "      --enable-batching     run concurrent requests as one "
	    "batch\n"
	    "      --idle-timeout=SECS   close idle connections after SECS "
	    "(default 30)\n"
	    "      --listen-address=ADDR REST address (default 0.0.0.0)\n"
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
	    "  -h, --help                show this help and exit\n"
	    "  -V, --version             show the version and exit\n\n"
	    "Exit status: 0 after SIGTERM or SIGINT (requests drained) or "
	    "at the end of\n--stdin, 64 usage, 65 bad input (--stdin), 66 "
	    "missing model base, 69 no\nvalid version or the port is "
	    "taken, 74 I/O error.\n",
	    tool_name, tool_name, tool_name);
}

enum {
	OPT_BATCH_TIMEOUT = 256,
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
	OPT_STDIN,
	OPT_STDIN_FORMAT
};

static const struct option options[] = {
    {"batch-timeout-micros", required_argument, NULL, OPT_BATCH_TIMEOUT},
    {"enable-batching", no_argument, NULL, OPT_BATCHING},
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
    {"rest-api-port", required_argument, NULL, OPT_PORT},
    {"stdin", no_argument, NULL, OPT_STDIN},
    {"stdin-format", required_argument, NULL, OPT_STDIN_FORMAT},
    {"threads", required_argument, NULL, 'j'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/* ---- settings ------------------------------------------------------------ */

static struct {
	int threads;
	int batching;
	size_t max_batch;
	long batch_timeout_us;
	size_t max_body, max_rows, max_header;
	unsigned max_conn, idle;
	double poll;
	int port;
	const char *address;
	const char *nng_url;
} opt = {2,    0,  64,  1000, 16u << 20, 10000, 32768,
         1024, 30, 1.0, 8501, "0.0.0.0", NULL};

static struct tf_registry *reg;

/* ---- versions and models ------------------------------------------------- */

/* One loaded version: a model per worker, a pool of free ones. */
struct version {
	int64_t number;
	int refs; /* requests using it, plus one while current */
	struct tf_model **inst;
	int ninst;
	int *free_idx;
	int nfree;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char *metadata; /* the GET .../metadata body */
};

/* What GET /v1/models/NAME reports about a version. */
struct vstatus {
	int64_t number;
	const char *state; /* AVAILABLE, END */
	const char *code;  /* OK, DATA_LOSS, ... */
	char *message;
};

/* A version that failed to load, and what its files looked like then
 * (it is tried again only when they change). */
struct failed {
	int64_t number;
	char sig[96];
};

enum { M_STATUS, M_METADATA, M_PREDICT, M_CLASSIFY, M_REGRESS, M_N };
static const char *const method_name[] = {"status", "metadata", "predict",
                                          "classify", "regress"};
static const int codes[] = {200, 400, 404, 405, 413, 500, 503};
#define NCODES (int)(sizeof codes / sizeof codes[0])
static const double buckets[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                 0.005,  0.01,    0.025,  0.05,  0.1,
                                 0.25,   0.5,     1,      2.5};
#define NBUCKETS (int)(sizeof buckets / sizeof buckets[0])

struct served {
	char *name, *base;
	int archive;
	pthread_mutex_t lock;
	struct version *cur;
	struct vstatus st[32];
	int nst;
	struct failed fail[32];
	int nfail;
	char archive_sig[96];
	int warned_empty; /* said once that BASE holds no version */
	/* metrics */
	atomic_ulong req[M_N][NCODES];
	atomic_ulong hist[NBUCKETS + 1];
	atomic_ulong hist_count, hist_sum_ns;
	atomic_ulong loads, load_failures;
};

static struct served *models;
static int nmodels;
static atomic_ulong other_req[NCODES];
static atomic_int inflight;
static atomic_int stopping;

static void
version_free(struct version *v)
{
	if (v == NULL) {
		return;
	}
	for (int i = 0; i < v->ninst; i++) {
		tf_model_free(v->inst[i]);
	}
	free(v->inst);
	free(v->free_idx);
	free(v->metadata);
	pthread_mutex_destroy(&v->lock);
	pthread_cond_destroy(&v->cond);
	free(v);
}

/* The current version with a reference, or NULL. */
static struct version *
acquire(struct served *s, int64_t want)
{
	pthread_mutex_lock(&s->lock);
	struct version *v = s->cur;
	if (v != NULL && (want < 0 || v->number == want)) {
		v->refs++;
	} else {
		v = NULL;
	}
	pthread_mutex_unlock(&s->lock);
	return v;
}

static void
release(struct served *s, struct version *v)
{
	pthread_mutex_lock(&s->lock);
	int last = --v->refs == 0;
	pthread_mutex_unlock(&s->lock);
	if (last) {
		version_free(v);
	}
}

/* A worker's model of v; waits when all are busy. */
static int
take(struct version *v)
{
	pthread_mutex_lock(&v->lock);
	while (v->nfree == 0) {
		pthread_cond_wait(&v->cond, &v->lock);
	}
	int i = v->free_idx[--v->nfree];
	pthread_mutex_unlock(&v->lock);
	return i;
}

static void
give(struct version *v, int i)
{
	pthread_mutex_lock(&v->lock);
	v->free_idx[v->nfree++] = i;
	pthread_cond_signal(&v->cond);
	pthread_mutex_unlock(&v->lock);
}

static void
set_status(struct served *s, int64_t number, const char *state,
           const char *code, const char *message)
{
	int k = 0;
	while (k < s->nst && s->st[k].number != number) {
		k++;
	}
	if (k == s->nst) {
		if (s->nst == (int)(sizeof s->st / sizeof s->st[0])) {
			free(s->st[--s->nst].message); /* forget the oldest */
		}
		/* Keep the list newest first. */
		k = 0;
		while (k < s->nst && s->st[k].number > number) {
			k++;
		}
		memmove(&s->st[k + 1], &s->st[k],
		        (size_t)(s->nst - k) * sizeof s->st[0]);
		s->nst++;
		s->st[k].message = NULL;
	}
	s->st[k].number = number;
	s->st[k].state = state;
	s->st[k].code = code;
	free(s->st[k].message);
	s->st[k].message = strdup(message ? message : "");
}

/* ---- reading versions ---------------------------------------------------- */

/* Files of one version held in memory (from an archive). */
struct memver {
	int64_t number;
	struct tf_export_file f[8];
	int n;
};

static void
memvers_free(struct memver *mv, int n)
{
	for (int i = 0; i < n; i++) {
		for (int k = 0; k < mv[i].n; k++) {
			free((void *)mv[i].f[k].name);
			free((void *)mv[i].f[k].data);
		}
	}
	free(mv);
}

/* Every N/FILE member of an archive, grouped by version. */
static int
read_archive(const char *path, struct memver **out, int *nout, char *err,
             size_t errlen)
{
	struct archive *a = archive_read_new();
	archive_read_support_filter_all(a);
	archive_read_support_format_all(a);
	struct memver *mv = NULL;
	int n = 0, rc = 0;
	if (archive_read_open_filename(a, path, 65536) != ARCHIVE_OK) {
		snprintf(err, errlen, "%s: %s", path, archive_error_string(a));
		archive_read_free(a);
		return -1;
	}
	struct archive_entry *e;
	while ((rc = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);
		const char *slash = name ? strchr(name, '/') : NULL;
		int64_t v;
		if (slash == NULL || archive_entry_filetype(e) != AE_IFREG ||
		    !tf_export_version(name, (size_t)(slash - name), &v) ||
		    strchr(slash + 1, '/') != NULL || slash[1] == '\0') {
			continue;
		}
		la_int64_t size = archive_entry_size(e);
		if (size < 0 || size > (1LL << 31)) {
			continue;
		}
		int k = 0;
		while (k < n && mv[k].number != v) {
			k++;
		}
		if (k == n) {
			struct memver *g =
			    realloc(mv, (size_t)(n + 1) * sizeof *g);
			if (g == NULL) {
				break;
			}
			mv = g;
			memset(&mv[n], 0, sizeof mv[n]);
			mv[n++].number = v;
		}
		if (mv[k].n == 8) {
			continue;
		}
		char *data = malloc((size_t)size + 1);
		char *fname = strdup(slash + 1);
		if (data == NULL || fname == NULL ||
		    archive_read_data(a, data, (size_t)size) != size) {
			free(data);
			free(fname);
			snprintf(err, errlen, "%s: %s: %s", path, name,
			         archive_error_string(a)
			             ? archive_error_string(a)
			             : "short member");
			rc = ARCHIVE_FATAL;
			break;
		}
		mv[k].f[mv[k].n++] =
		    (struct tf_export_file){fname, data, (size_t)size};
	}
	if (rc != ARCHIVE_EOF && rc != ARCHIVE_OK) {
		if (rc != ARCHIVE_FATAL || err[0] == '\0') {
			snprintf(err, errlen, "%s: %s", path,
			         archive_error_string(a));
		}
		archive_read_free(a);
		memvers_free(mv, n);
		return -1;
	}
	archive_read_free(a);
	*out = mv;
	*nout = n;
	return 0;
}

static void
stat_sig(const char *path, char *sig, size_t size)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		snprintf(sig, size, "missing");
		return;
	}
	snprintf(sig, size, "%lld.%ld:%lld", (long long)st.st_mtim.tv_sec,
	         st.st_mtim.tv_nsec, (long long)st.st_size);
}

/* What a version directory's files look like now. */
static void
dir_sig(const char *dir, char *sig, size_t size)
{
	char p[4300], a[48], b[48];
	snprintf(p, sizeof p, "%s/manifest.json", dir);
	stat_sig(p, a, sizeof a);
	stat_sig(dir, b, sizeof b);
	snprintf(sig, size, "%s/%s", a, b);
}

/*
 * Load one version: a model per worker (from the directory dir, or the
 * files mv in memory when given), each warmed with one prediction.  NULL with a
 * message on failure.
 */
static struct version *
load_version(struct served *s, int64_t number, const char *dir,
             const struct memver *mv, char *err, size_t errlen)
{
	struct version *v = calloc(1, sizeof *v);
	int n = opt.threads + 2 + (opt.nng_url ? opt.threads : 0);
	if (v == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&v->lock, NULL);
	pthread_cond_init(&v->cond, NULL);
	v->number = number;
	v->refs = 1;
	v->inst = calloc((size_t)n, sizeof *v->inst);
	v->free_idx = calloc((size_t)n, sizeof *v->free_idx);
	if (v->inst == NULL || v->free_idx == NULL) {
		snprintf(err, errlen, "out of memory");
		version_free(v);
		return NULL;
	}
	char origin[4200];
	snprintf(origin, sizeof origin, "%s/%lld", s->base, (long long)number);
	for (int i = 0; i < n; i++) {
		struct tf_model *m = tf_model_new();
		v->inst[v->ninst++] = m;
		int rc = m == NULL ? TF_ENOMEM
		         : mv      ? tf_model_load_files(m, reg, mv->f,
		                                         (size_t)mv->n, origin)
		                   : tf_model_load(m, reg, dir);
		if (rc != TF_OK) {
			snprintf(err, errlen, "%s",
			         m ? tf_errmsg(m) : "out of memory");
			version_free(v);
			return NULL;
		}
		/* Warm: one prediction of a row of means and missing ids. */
		struct tf_batch one;
		float *y = calloc((size_t)tf_model_outputs(m), sizeof *y);
		rc = y == NULL || tf_dataset_batch(tf_model_dataset(m), &one,
		                                   1) != TF_OK
		         ? TF_ENOMEM
		         : TF_OK;
		if (rc == TF_OK) {
			one.rows = 1;
			memset(one.x, 0, (size_t)one.width * sizeof *one.x);
			for (int64_t k = 0; k < one.id_width; k++) {
				one.ids[k] = -1;
			}
			rc = tf_model_predict(m, &one, y);
		}
		tf_batch_release(&one);
		free(y);
		if (rc != TF_OK) {
			snprintf(err, errlen,
			         "%.1024s: warm-up prediction failed: %.512s",
			         origin, tf_errmsg(m));
			version_free(v);
			return NULL;
		}
		v->free_idx[v->nfree++] = i;
	}
	v->metadata = tf_model_metadata(v->inst[0], s->name, number);
	if (v->metadata == NULL) {
		snprintf(err, errlen, "out of memory");
		version_free(v);
		return NULL;
	}
	return v;
}

static int
failed_before(struct served *s, int64_t number, const char *sig)
{
	for (int i = 0; i < s->nfail; i++) {
		if (s->fail[i].number == number &&
		    strcmp(s->fail[i].sig, sig) == 0) {
			return 1;
		}
	}
	return 0;
}

static void
remember_failure(struct served *s, int64_t number, const char *sig)
{
	int k = 0;
	while (k < s->nfail && s->fail[k].number != number) {
		k++;
	}
	if (k == s->nfail) {
		if (s->nfail == (int)(sizeof s->fail / sizeof s->fail[0])) {
			memmove(&s->fail[0], &s->fail[1],
			        sizeof s->fail - sizeof s->fail[0]);
			s->nfail--;
		}
		k = s->nfail++;
	}
	s->fail[k].number = number;
	snprintf(s->fail[k].sig, sizeof s->fail[k].sig, "%s", sig);
}

/* Make v current; the old version goes when its last request ends. */
static void
swap_in(struct served *s, struct version *v, const char *from)
{
	pthread_mutex_lock(&s->lock);
	struct version *old = s->cur;
	s->cur = v;
	set_status(s, v->number, "AVAILABLE", "OK", "");
	if (old != NULL) {
		set_status(s, old->number, "END", "OK", "");
	}
	pthread_mutex_unlock(&s->lock);
	atomic_fetch_add(&s->loads, 1);
	if (old != NULL) {
		warnx_("model %s: version %lld loaded from %s, replacing "
		       "version %lld",
		       s->name, (long long)v->number, from,
		       (long long)old->number);
		release(s, old);
	} else {
		warnx_("model %s: version %lld loaded from %s", s->name,
		       (long long)v->number, from);
	}
}

static void
refuse(struct served *s, int64_t number, const char *sig, const char *why)
{
	remember_failure(s, number, sig);
	pthread_mutex_lock(&s->lock);
	set_status(s, number, "END", "DATA_LOSS", why);
	pthread_mutex_unlock(&s->lock);
	atomic_fetch_add(&s->load_failures, 1);
	warnx_("model %s: version %lld refused: %s", s->name, (long long)number,
	       why);
}

/*
 * Look at a model's base: serve the highest version that loads.  A
 * version that fails is refused once (until its files change) and the
 * current one keeps serving.
 */
static void
scan(struct served *s)
{
	char err[2048];
	int64_t cur = s->cur ? s->cur->number : -1;
	if (s->archive) {
		char sig[96];
		stat_sig(s->base, sig, sizeof sig);
		if (strcmp(sig, s->archive_sig) == 0) {
			return;
		}
		struct memver *mv = NULL;
		int n = 0;
		err[0] = '\0';
		if (read_archive(s->base, &mv, &n, err, sizeof err) != 0) {
			warnx_("model %s: %s", s->name, err);
			return; /* perhaps being written: next poll */
		}
		snprintf(s->archive_sig, sizeof s->archive_sig, "%s", sig);
		/* Highest version first. */
		for (int done = 0; !done;) {
			int best = -1;
			for (int i = 0; i < n; i++) {
				if (mv[i].n > 0 &&
				    (best < 0 ||
				     mv[i].number > mv[best].number)) {
					best = i;
				}
			}
			if (best < 0 || mv[best].number == cur) {
				break;
			}
			struct version *v =
			    load_version(s, mv[best].number, s->base, &mv[best],
			                 err, sizeof err);
			if (v != NULL) {
				swap_in(s, v, s->base);
				done = 1;
			} else {
				refuse(s, mv[best].number, sig, err);
				mv[best].n = -mv[best].n; /* skip, free later */
			}
		}
		for (int i = 0; i < n; i++) {
			mv[i].n = mv[i].n < 0 ? -mv[i].n : mv[i].n;
		}
		memvers_free(mv, n);
		return;
	}
	int64_t *vs = NULL;
	size_t n = 0;
	if (tf_export_versions(s->base, &vs, &n, err, sizeof err) != TF_OK) {
		warnx_("model %s: %s", s->name, err);
		return;
	}
	for (size_t i = 0; i < n && vs[i] != cur; i++) {
		char dir[4200], sig[96];
		snprintf(dir, sizeof dir, "%s/%lld", s->base, (long long)vs[i]);
		dir_sig(dir, sig, sizeof sig);
		if (failed_before(s, vs[i], sig)) {
			continue;
		}
		struct version *v =
		    load_version(s, vs[i], dir, NULL, err, sizeof err);
		if (v != NULL) {
			swap_in(s, v, dir);
			break;
		}
		refuse(s, vs[i], sig, err);
	}
	if (n == 0 && cur < 0) {
		if (!s->warned_empty++) {
			warnx_("model %s: no versions in %s (did you forget "
			       "to name the version directory as a number, "
			       "e.g. '1/'?)",
			       s->name, s->base);
		}
	}
	free(vs);
}

/* ---- metrics ------------------------------------------------------------- */

static int
code_index(int status)
{
	for (int i = 0; i < NCODES; i++) {
		if (codes[i] == status) {
			return i;
		}
	}
	return status >= 500 ? 5 : 1;
}

static void
count(struct served *s, int method, int status, double secs)
{
	if (s == NULL) {
		atomic_fetch_add(&other_req[code_index(status)], 1);
		return;
	}
	atomic_fetch_add(&s->req[method][code_index(status)], 1);
	if (method >= M_PREDICT) {
		int b = 0;
		while (b < NBUCKETS && secs > buckets[b]) {
			b++;
		}
		atomic_fetch_add(&s->hist[b], 1);
		atomic_fetch_add(&s->hist_count, 1);
		atomic_fetch_add(&s->hist_sum_ns,
		                 (unsigned long)(secs * 1e9 + 0.5));
	}
}

/* A growable text buffer for responses. */
struct sbuf {
	char *p;
	size_t len, cap;
};

static void
sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n + 1) {
			cap *= 2;
		}
		char *p = realloc(b->p, cap);
		if (p == NULL) {
			die(EX_OSERR, "out of memory");
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sb_printf(struct sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
sb_printf(struct sbuf *b, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	sb_add(b, tmp, n < (int)sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void
metrics_text(struct sbuf *b)
{
	sb_printf(b, "# HELP tfkit_requests_total Requests answered, by "
	             "model, method and HTTP status.\n"
	             "# TYPE tfkit_requests_total counter\n");
	for (int i = 0; i < nmodels; i++) {
		struct served *s = &models[i];
		for (int m = 0; m < M_N; m++) {
			for (int c = 0; c < NCODES; c++) {
				unsigned long v = atomic_load(&s->req[m][c]);
				if (v > 0) {
					sb_printf(
					    b,
					    "tfkit_requests_total{model=\"%"
					    "s\",method=\"%s\",code=\"%d\"} "
					    "%lu\n",
					    s->name, method_name[m], codes[c],
					    v);
				}
			}
		}
	}
	for (int c = 0; c < NCODES; c++) {
		unsigned long v = atomic_load(&other_req[c]);
		if (v > 0) {
			sb_printf(b,
			          "tfkit_requests_total{model=\"\",method="
			          "\"other\",code=\"%d\"} %lu\n",
			          codes[c], v);
		}
	}
	sb_printf(b, "# HELP tfkit_request_duration_seconds Time to answer "
	             "predict, classify and regress.\n"
	             "# TYPE tfkit_request_duration_seconds histogram\n");
	for (int i = 0; i < nmodels; i++) {
		struct served *s = &models[i];
		unsigned long cum = 0;
		for (int k = 0; k <= NBUCKETS; k++) {
			cum += atomic_load(&s->hist[k]);
			char le[32];
			if (k < NBUCKETS) {
				snprintf(le, sizeof le, "%g", buckets[k]);
			} else {
				snprintf(le, sizeof le, "+Inf");
			}
			sb_printf(b,
			          "tfkit_request_duration_seconds_bucket{model="
			          "\"%s\",le=\"%s\"} %lu\n",
			          s->name, le, cum);
		}
		sb_printf(b,
		          "tfkit_request_duration_seconds_sum{model=\"%s\"} "
		          "%.9f\n"
		          "tfkit_request_duration_seconds_count{model=\"%s\"} "
		          "%lu\n",
		          s->name, (double)atomic_load(&s->hist_sum_ns) * 1e-9,
		          s->name, atomic_load(&s->hist_count));
	}
	sb_printf(b, "# HELP tfkit_model_version The version being served "
	             "(-1: none).\n# TYPE tfkit_model_version gauge\n");
	for (int i = 0; i < nmodels; i++) {
		struct version *v = acquire(&models[i], -1);
		sb_printf(b, "tfkit_model_version{model=\"%s\"} %lld\n",
		          models[i].name, v ? (long long)v->number : -1LL);
		if (v != NULL) {
			release(&models[i], v);
		}
	}
	sb_printf(b, "# HELP tfkit_model_loads_total Versions loaded.\n"
	             "# TYPE tfkit_model_loads_total counter\n");
	for (int i = 0; i < nmodels; i++) {
		sb_printf(b, "tfkit_model_loads_total{model=\"%s\"} %lu\n",
		          models[i].name, atomic_load(&models[i].loads));
	}
	sb_printf(b, "# HELP tfkit_model_load_failures_total Versions "
	             "refused (damaged, half-written, unloadable).\n"
	             "# TYPE tfkit_model_load_failures_total counter\n");
	for (int i = 0; i < nmodels; i++) {
		sb_printf(
		    b, "tfkit_model_load_failures_total{model=\"%s\"} %lu\n",
		    models[i].name, atomic_load(&models[i].load_failures));
	}
}

/* ---- batching ------------------------------------------------------------ */

struct job {
	struct version *v;
	const struct tf_batch *in;
	float *y;
	size_t rows;
	int done, rc;
	struct job *next;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t more, done;
	struct job *head, *tail;
	pthread_t *workers;
	int nworkers;
} batch = {PTHREAD_MUTEX_INITIALIZER,
           PTHREAD_COND_INITIALIZER,
           PTHREAD_COND_INITIALIZER,
           NULL,
           NULL,
           NULL,
           0};

static void
timespec_add_us(struct timespec *t, long us)
{
	t->tv_nsec += us * 1000;
	t->tv_sec += t->tv_nsec / 1000000000;
	t->tv_nsec %= 1000000000;
}

/* Take jobs of one version up to max_batch rows, waiting up to the batch
 * timeout for more, and run them as one prediction. */
static void *
batch_worker(void *arg)
{
	(void)arg;
	struct tf_batch all = {0};
	float *y = NULL;
	size_t cap = 0;
	struct job *jobs[1024];
	pthread_mutex_lock(&batch.lock);
	for (;;) {
		while (batch.head == NULL && !atomic_load(&stopping)) {
			pthread_cond_wait(&batch.more, &batch.lock);
		}
		if (batch.head == NULL) {
			break;
		}
		struct timespec deadline;
		clock_gettime(CLOCK_REALTIME, &deadline);
		timespec_add_us(&deadline, opt.batch_timeout_us);
		struct version *v = batch.head->v;
		size_t rows = 0;
		int n = 0;
		for (;;) {
			/* Move queued jobs of v into this batch. */
			struct job **pp = &batch.head, *prev = NULL;
			while (*pp != NULL && n < 1024) {
				struct job *j = *pp;
				if (j->v == v &&
				    (n == 0 ||
				     rows + j->rows <= opt.max_batch)) {
					*pp = j->next;
					if (batch.tail == j) {
						batch.tail = prev;
					}
					jobs[n++] = j;
					rows += j->rows;
				} else {
					prev = j;
					pp = &j->next;
				}
			}
			if (rows >= opt.max_batch || n == 1024 ||
			    atomic_load(&stopping) ||
			    pthread_cond_timedwait(&batch.more, &batch.lock,
			                           &deadline) == ETIMEDOUT) {
				break;
			}
		}
		pthread_mutex_unlock(&batch.lock);
		int64_t o = tf_model_outputs(v->inst[0]);
		int rc = TF_OK;
		/* The jobs' rows one after another, in one batch. */
		if (all.width != jobs[0]->in->width ||
		    all.id_width != jobs[0]->in->id_width) {
			tf_batch_release(&all);
			all.width = jobs[0]->in->width;
			all.id_width = jobs[0]->in->id_width;
		}
		all.rows = 0;
		if (rows > cap) {
			free(y);
			cap = rows;
			y = malloc(cap * (size_t)o * sizeof *y);
		}
		for (int i = 0; i < n && y != NULL; i++) {
			if (tf_batch_append(&all, jobs[i]->in) != TF_OK) {
				y = NULL;
			}
		}
		if (y == NULL) {
			die(EX_OSERR, "out of memory");
		}
		size_t at;
		int k = take(v);
		rc = tf_model_predict(v->inst[k], &all, y);
		give(v, k);
		pthread_mutex_lock(&batch.lock);
		at = 0;
		for (int i = 0; i < n; i++) {
			memcpy(jobs[i]->y, y + at * (size_t)o,
			       jobs[i]->rows * (size_t)o * sizeof *y);
			at += jobs[i]->rows;
			jobs[i]->rc = rc;
			jobs[i]->done = 1;
		}
		pthread_cond_broadcast(&batch.done);
	}
	pthread_mutex_unlock(&batch.lock);
	tf_batch_release(&all);
	free(y);
	return NULL;
}

static int
predict(struct version *v, struct tf_request *q)
{
	const struct tf_batch *in = tf_request_batch(q);
	float *y = tf_request_outputs(q);
	if (!opt.batching) {
		int k = take(v);
		int rc = tf_model_predict(v->inst[k], in, y);
		give(v, k);
		return rc;
	}
	struct job j = {v, in, y, in->rows, 0, 0, NULL};
	pthread_mutex_lock(&batch.lock);
	if (batch.tail != NULL) {
		batch.tail->next = &j;
	} else {
		batch.head = &j;
	}
	batch.tail = &j;
	pthread_cond_signal(&batch.more);
	while (!j.done) {
		pthread_cond_wait(&batch.done, &batch.lock);
	}
	pthread_mutex_unlock(&batch.lock);
	return j.rc;
}

/* ---- routing (REST and nng) ---------------------------------------------- */

struct reply {
	int status;
	const char *type; /* content type */
	struct sbuf body;
};

static void json_error(struct reply *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
json_error(struct reply *r, int status, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	json_t *s = json_string(msg);
	char *t = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
	r->status = status;
	r->type = "application/json";
	r->body.len = 0;
	sb_printf(&r->body, "{ \"error\": %s }", t ? t : "\"error\"");
	free(t);
	json_decref(s);
}

static void
model_status(struct reply *r, struct served *s, int64_t want)
{
	pthread_mutex_lock(&s->lock);
	int any = 0;
	r->body.len = 0;
	sb_printf(&r->body, "{\n \"model_version_status\": [");
	for (int i = 0; i < s->nst; i++) {
		if (want >= 0 && s->st[i].number != want) {
			continue;
		}
		json_t *msg = json_string(s->st[i].message);
		char *mt = msg ? json_dumps(msg, JSON_ENCODE_ANY) : NULL;
		sb_printf(&r->body,
		          "%s\n  {\n   \"version\": \"%lld\",\n   \"state\": "
		          "\"%s\",\n   \"status\": {\n    \"error_code\": "
		          "\"%s\",\n    \"error_message\": ",
		          any ? "," : "", (long long)s->st[i].number,
		          s->st[i].state, s->st[i].code);
		sb_add(&r->body, mt ? mt : "\"\"", strlen(mt ? mt : "\"\""));
		sb_printf(&r->body, "\n   }\n  }");
		free(mt);
		json_decref(msg);
		any = 1;
	}
	sb_printf(&r->body, "\n ]\n}\n");
	pthread_mutex_unlock(&s->lock);
	r->status = 200;
	r->type = "application/json";
	if (!any && want >= 0) {
		json_error(r, 404, "Could not find version %lld of model %s",
		           (long long)want, s->name);
	} else if (!any) {
		json_error(r, 404, "Could not find any versions of model %s",
		           s->name);
	}
}

/* Each thread's request buffers, freed when the thread ends. */
static pthread_key_t req_key;
static pthread_once_t req_once = PTHREAD_ONCE_INIT;

static void
free_request(void *q)
{
	tf_request_free(q);
}

static void
make_req_key(void)
{
	pthread_key_create(&req_key, free_request);
}

static struct tf_request *
thread_request(void)
{
	pthread_once(&req_once, make_req_key);
	struct tf_request *q = pthread_getspecific(req_key);
	if (q == NULL) {
		if ((q = tf_request_new()) == NULL) {
			die(EX_OSERR, "out of memory");
		}
		pthread_setspecific(req_key, q);
	}
	return q;
}

/* TF Serving's 404 for a model or version that is not being served. */
static void
not_found(struct reply *r, const char *name, size_t n, int64_t want)
{
	if (want >= 0) {
		json_error(
		    r, 404,
		    "Servable not found for request: Specific(%.*s, %lld)",
		    (int)n, name, (long long)want);
	} else {
		json_error(r, 404,
		           "Servable not found for request: Latest(%.*s)",
		           (int)n, name);
	}
}

static void
infer(struct reply *r, struct served *s, int64_t want, int method,
      const char *body, size_t len)
{
	struct version *v = acquire(s, want);
	if (v == NULL) {
		not_found(r, s->name, strlen(s->name), want);
		return;
	}
	struct tf_request *q = thread_request();
	const struct tf_model *m = v->inst[0]; /* read only */
	int kind = method == M_PREDICT    ? TF_METHOD_PREDICT
	           : method == M_CLASSIFY ? TF_METHOD_CLASSIFY
	                                  : TF_METHOD_REGRESS;
	int rc = tf_request_parse(q, m, kind, body, len, opt.max_rows);
	if (rc == TF_OK) {
		rc = predict(v, q);
		if (rc != TF_OK) {
			json_error(r, 500, "prediction failed");
			release(s, v);
			return;
		}
		const char *out;
		size_t olen;
		rc = tf_request_respond(q, m, &out, &olen);
		if (rc == TF_OK) {
			r->status = 200;
			r->type = "application/json";
			r->body.len = 0;
			sb_add(&r->body, out, olen);
		}
	}
	if (rc != TF_OK) {
		json_error(r, rc == TF_EINVAL ? 400 : 500, "%s", tf_errmsg(q));
	}
	release(s, v);
}

static struct served *
find_model(const char *name, size_t n)
{
	for (int i = 0; i < nmodels; i++) {
		if (strlen(models[i].name) == n &&
		    strncmp(models[i].name, name, n) == 0) {
			return &models[i];
		}
	}
	return NULL;
}

static int
prefix(const char *s, const char *p)
{
	return strncasecmp(s, p, strlen(p)) == 0;
}

/*
 * Answer one request: method and path as HTTP has them.  *counted is
 * the model (or NULL) and method for the metrics.
 */
static void
route(struct reply *r, const char *method, const char *path, const char *body,
      size_t len, struct served **counted, int *mkind)
{
	*counted = NULL;
	*mkind = M_STATUS;
	int get = strcmp(method, "GET") == 0;
	int post = strcmp(method, "POST") == 0;
	r->body.len = 0;
	if (strcasecmp(path, "/healthz") == 0 && get) {
		r->status = 200;
		r->type = "text/plain";
		sb_printf(&r->body, "OK\n");
		return;
	}
	if (strcasecmp(path, "/readyz") == 0 && get) {
		for (int i = 0; i < nmodels; i++) {
			struct version *v = acquire(&models[i], -1);
			if (v == NULL) {
				r->status = 503;
				r->type = "text/plain";
				sb_printf(
				    &r->body,
				    "not ready: no version of model %s is "
				    "loaded\n",
				    models[i].name);
				return;
			}
			release(&models[i], v);
		}
		r->status = 200;
		r->type = "text/plain";
		sb_printf(&r->body, "ready\n");
		return;
	}
	if (strcasecmp(path, "/monitoring/prometheus/metrics") == 0 && get) {
		r->status = 200;
		r->type = "text/plain; version=0.0.4";
		metrics_text(&r->body);
		return;
	}
	if (!prefix(path, "/v1/")) {
		r->status = 404;
		r->type = "text/plain";
		sb_printf(&r->body, "404 Not Found\n");
		return;
	}
	if (!prefix(path, "/v1/models/") || path[11] == '\0') {
		json_error(r, 400, "Missing model name in request.");
		return;
	}
	const char *name = path + 11;
	size_t nlen = strcspn(name, "/:");
	struct served *s = find_model(name, nlen);
	const char *rest = name + nlen;
	int64_t want = -1;
	if (prefix(rest, "/versions/")) {
		const char *num = rest + 10;
		size_t dl = strspn(num, "0123456789");
		if (!tf_export_version(num, dl, &want)) {
			json_error(r, 400, "Malformed request: %s %s", method,
			           path);
			return;
		}
		rest = num + dl;
	} else if (prefix(rest, "/labels/")) {
		const char *l = rest + 8;
		size_t ll = strcspn(l, "/:");
		json_error(r, 404,
		           "Unrecognized servable version label: %.*s (this "
		           "server assigns no labels)",
		           (int)ll, l);
		return;
	}
	int kind;
	if (*rest == '\0' && get) {
		kind = M_STATUS;
	} else if (strcasecmp(rest, "/metadata") == 0 && get) {
		kind = M_METADATA;
	} else if (strcasecmp(rest, ":predict") == 0 && post) {
		kind = M_PREDICT;
	} else if (strcasecmp(rest, ":classify") == 0 && post) {
		kind = M_CLASSIFY;
	} else if (strcasecmp(rest, ":regress") == 0 && post) {
		kind = M_REGRESS;
	} else {
		json_error(r, 400, "Malformed request: %s %s", method, path);
		return;
	}
	if (s == NULL) {
		if (kind == M_STATUS) {
			json_error(r, 404,
			           "Could not find any versions of model %.*s",
			           (int)nlen, name);
		} else {
			not_found(r, name, nlen, want);
		}
		return;
	}
	*counted = s;
	*mkind = kind;
	if (kind == M_STATUS) {
		model_status(r, s, want);
	} else if (kind == M_METADATA) {
		struct version *v = acquire(s, want);
		if (v == NULL) {
			not_found(r, s->name, strlen(s->name), want);
			return;
		}
		r->status = 200;
		r->type = "application/json";
		sb_add(&r->body, v->metadata, strlen(v->metadata));
		release(s, v);
	} else {
		infer(r, s, want, kind, body, len);
	}
}

/* ---- HTTP (libmicrohttpd) ------------------------------------------------ */

struct conn_state {
	struct sbuf body;
	int too_big;
	double start;
};

static void
send_reply(struct MHD_Connection *c, struct reply *r)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(
	    r->body.len, r->body.p ? r->body.p : (char *)"",
	    MHD_RESPMEM_MUST_COPY);
	if (resp == NULL) {
		return;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->type);
	MHD_queue_response(c, (unsigned)r->status, resp);
	MHD_destroy_response(resp);
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url,
           const char *method, const char *version, const char *data,
           size_t *data_size, void **con_cls)
{
	(void)cls;
	(void)version;
	struct conn_state *st = *con_cls;
	if (st == NULL) {
		st = calloc(1, sizeof *st);
		if (st == NULL) {
			return MHD_NO;
		}
		st->start = now();
		*con_cls = st;
		atomic_fetch_add(&inflight, 1);
		return MHD_YES;
	}
	if (*data_size > 0) {
		if (st->body.len + *data_size > opt.max_body) {
			st->too_big = 1;
		} else {
			sb_add(&st->body, data, *data_size);
		}
		*data_size = 0;
		return MHD_YES;
	}
	struct reply r = {0};
	struct served *s = NULL;
	int kind = M_STATUS;
	if (st->too_big) {
		json_error(&r, 413,
		           "request body larger than %zu bytes "
		           "(--max-body-bytes)",
		           opt.max_body);
	} else {
		route(&r, method, url, st->body.p ? st->body.p : "",
		      st->body.len, &s, &kind);
	}
	count(s, kind, r.status, now() - st->start);
	send_reply(c, &r);
	free(r.body.p);
	return MHD_YES;
}

static void
on_done(void *cls, struct MHD_Connection *c, void **con_cls,
        enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)c;
	(void)toe;
	struct conn_state *st = *con_cls;
	if (st != NULL) {
		free(st->body.p);
		free(st);
		*con_cls = NULL;
		atomic_fetch_sub(&inflight, 1);
	}
}

/* Small responses go out as soon as they are written. */
static void
on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
              enum MHD_ConnectionNotificationCode toe)
{
	(void)cls;
	(void)socket_context;
	if (toe != MHD_CONNECTION_NOTIFY_STARTED) {
		return;
	}
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci != NULL) {
		int one = 1;
		setsockopt(ci->connect_fd, IPPROTO_TCP, TCP_NODELAY, &one,
		           sizeof one);
	}
}

static void
on_mhd_error(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	char msg[512];
	vsnprintf(msg, sizeof msg, fmt, ap);
	size_t n = strlen(msg);
	while (n > 0 && msg[n - 1] == '\n') {
		msg[--n] = '\0';
	}
	warnx_("http: %s", msg);
}

/* ---- nng ----------------------------------------------------------------- */

/*
 * A request is "METHOD PATH\n" followed by the body; the reply is
 * "STATUS\n" followed by the body, e.g. "POST /v1/models/m:predict\n{...}"
 * -> "200\n{\"predictions\": ...}".
 */
static nng_socket nng_sock;

static void *
nng_worker(void *arg)
{
	(void)arg;
	nng_ctx ctx;
	nng_aio *aio;
	if (nng_ctx_open(&ctx, nng_sock) != 0 ||
	    nng_aio_alloc(&aio, NULL, NULL) != 0) {
		warnx_("nng: cannot open a context");
		return NULL;
	}
	for (;;) {
		nng_ctx_recv(ctx, aio);
		nng_aio_wait(aio);
		if (nng_aio_result(aio) != 0) {
			break; /* closed */
		}
		double t0 = now();
		nng_msg *msg = nng_aio_get_msg(aio);
		char *p = nng_msg_body(msg);
		size_t n = nng_msg_len(msg);
		char *nl = memchr(p, '\n', n);
		struct reply r = {0};
		struct served *s = NULL;
		int kind = M_STATUS;
		char line[2048];
		size_t ll = nl ? (size_t)(nl - p) : n;
		char *sp = ll < sizeof line ? memchr(p, ' ', ll) : NULL;
		if (sp == NULL) {
			json_error(&r, 400,
			           "expected 'METHOD PATH' and a newline, then "
			           "the body");
		} else {
			memcpy(line, p, ll);
			line[ll] = '\0';
			line[sp - p] = '\0';
			const char *body = nl ? nl + 1 : "";
			size_t blen = nl ? n - ll - 1 : 0;
			if (blen > opt.max_body) {
				json_error(&r, 413,
				           "request body larger than %zu bytes",
				           opt.max_body);
			} else {
				route(&r, line, line + (sp - p) + 1, body, blen,
				      &s, &kind);
			}
		}
		count(s, kind, r.status, now() - t0);
		nng_msg_clear(msg);
		char head[16];
		snprintf(head, sizeof head, "%d\n", r.status);
		if (nng_msg_append(msg, head, strlen(head)) != 0 ||
		    nng_msg_append(msg, r.body.p ? r.body.p : "", r.body.len) !=
		        0) {
			nng_msg_free(msg);
			free(r.body.p);
			continue;
		}
		free(r.body.p);
		nng_aio_set_msg(aio, msg);
		nng_ctx_send(ctx, aio);
		nng_aio_wait(aio);
		if (nng_aio_result(aio) != 0) {
			nng_msg_free(msg);
		}
	}
	nng_aio_free(aio);
	nng_ctx_close(ctx);
	return NULL;
}

/* ---- the stdin filter ---------------------------------------------------- */

static int
run_stdin(struct served *s, const char *format)
{
	struct version *v = acquire(s, -1);
	struct tf_model *m = v->inst[0];
	struct tf_request *q = tf_request_new();
	if (q == NULL) {
		die(EX_OSERR, "out of memory");
	}
	const char *out;
	size_t olen;
	if (strcmp(format, "tfrecord") == 0) {
		struct tf_dataset *ds = tf_model_dataset(m);
		static const char *files[] = {"-"};
		tf_dataset_set_label_optional(ds, 1);
		if (tf_dataset_open(ds, files, 1, 1, 1, 0) != TF_OK) {
			die_status(tf_errcode(ds), tf_errmsg(ds));
		}
		struct tf_batch b;
		if (tf_dataset_batch(ds, &b, 256) != TF_OK) {
			die(EX_OSERR, "out of memory");
		}
		int rc;
		while ((rc = tf_dataset_read(ds, &b)) == TF_OK) {
			if (tf_request_set_rows(q, m, &b) != TF_OK ||
			    tf_model_predict(m, tf_request_batch(q),
			                     tf_request_outputs(q)) != TF_OK ||
			    tf_request_respond(q, m, &out, &olen) != TF_OK) {
				die(EX_SOFTWARE, "prediction failed");
			}
			fwrite(out, 1, olen, stdout);
		}
		if (rc != TF_EOF) {
			die_status(rc, tf_errmsg(ds));
		}
		tf_batch_release(&b);
	} else {
		char *line = NULL;
		size_t cap = 0;
		ssize_t n;
		unsigned long lineno = 0;
		while ((n = getline(&line, &cap, stdin)) >= 0) {
			lineno++;
			size_t k = (size_t)n;
			while (k > 0 &&
			       (line[k - 1] == '\n' || line[k - 1] == '\r' ||
			        line[k - 1] == ' ')) {
				k--;
			}
			if (k == 0) {
				continue; /* blank line */
			}
			if (tf_request_parse(q, m, TF_METHOD_INSTANCE, line, k,
			                     0) != TF_OK) {
				die(EX_DATAERR, "(stdin):%lu: %s", lineno,
				    tf_errmsg(q));
			}
			if (tf_model_predict(m, tf_request_batch(q),
			                     tf_request_outputs(q)) != TF_OK ||
			    tf_request_respond(q, m, &out, &olen) != TF_OK) {
				die(EX_SOFTWARE,
				    "(stdin):%lu: prediction failed", lineno);
			}
			fwrite(out, 1, olen, stdout);
			putchar('\n');
		}
		free(line);
		if (ferror(stdin)) {
			die(EX_IOERR, "(stdin): read error");
		}
	}
	tf_request_free(q);
	release(s, v);
	if (fflush(stdout) != 0) {
		die(EX_IOERR, "write error");
	}
	return 0;
}

/* ---- set-up -------------------------------------------------------------- */

static void
add_model(const char *name, const char *base)
{
	struct served *m = realloc(models, (size_t)(nmodels + 1) * sizeof *m);
	if (m == NULL) {
		die(EX_OSERR, "out of memory");
	}
	models = m;
	struct served *s = &models[nmodels++];
	memset(s, 0, sizeof *s);
	s->name = strdup(name);
	s->base = strdup(base);
	if (s->name == NULL || s->base == NULL) {
		die(EX_OSERR, "out of memory");
	}
	for (int i = 0; i < nmodels - 1; i++) {
		if (strcmp(models[i].name, name) == 0) {
			usage_error("model name '%s' given twice", name);
		}
	}
	if (*name == '\0' || strpbrk(name, "/:") != NULL) {
		usage_error("model name '%s': empty, or holds '/' or ':'",
		            name);
	}
	struct stat st;
	if (stat(base, &st) != 0) {
		die(EX_NOINPUT, "model %s: %s: %s", name, base,
		    strerror(errno));
	}
	s->archive = S_ISREG(st.st_mode);
	pthread_mutex_init(&s->lock, NULL);
}

static void
load_config(const char *path)
{
	json_error_t je;
	json_t *root = json_load_file(path, 0, &je);
	if (root == NULL) {
		die(je.line < 0 ? EX_NOINPUT : EX_DATAERR, "%s:%d: %s", path,
		    je.line, je.text);
	}
	json_t *list = json_object_get(root, "models");
	if (!json_is_array(list) || json_array_size(list) == 0) {
		die(EX_DATAERR,
		    "%s: expected {\"models\": [{\"name\": ..., "
		    "\"base_path\": ...}, ...]}",
		    path);
	}
	size_t i;
	json_t *e;
	json_array_foreach(list, i, e)
	{
		const char *name =
		    json_string_value(json_object_get(e, "name"));
		const char *base =
		    json_string_value(json_object_get(e, "base_path"));
		if (name == NULL || base == NULL) {
			die(EX_DATAERR,
			    "%s: model %zu needs \"name\" and \"base_path\"",
			    path, i);
		}
		add_model(name, base);
	}
	json_decref(root);
}

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
} watch = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};

static void *
watcher(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&watch.lock);
	while (!atomic_load(&stopping)) {
		struct timespec t;
		clock_gettime(CLOCK_REALTIME, &t);
		timespec_add_us(&t, (long)(opt.poll * 1e6));
		pthread_cond_timedwait(&watch.wake, &watch.lock, &t);
		if (atomic_load(&stopping)) {
			break;
		}
		pthread_mutex_unlock(&watch.lock);
		for (int i = 0; i < nmodels; i++) {
			scan(&models[i]);
		}
		pthread_mutex_lock(&watch.lock);
	}
	pthread_mutex_unlock(&watch.lock);
	return NULL;
}

int
main(int argc, char **argv)
{
	tool_name = "tf-serve";
	reg = tf_registry_new();
	if (reg == NULL) {
		die(EX_OSERR, "out of memory");
	}
	const char *base = NULL, *name = "model", *config = NULL;
	const char *stdin_format = "json";
	int use_stdin = 0, c;
	while ((c = getopt_long(argc, argv, "hj:V", options, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage();
			return 0;
		case 'j':
			opt.threads = (int)opt_int("--threads", optarg, 1, 256);
			break;
		case 'V':
			print_version();
			return 0;
		case OPT_BATCH_TIMEOUT:
			opt.batch_timeout_us = (long)opt_int(
			    "--batch-timeout-micros", optarg, 0, 10000000);
			break;
		case OPT_BATCHING:
			opt.batching = 1;
			break;
		case OPT_IDLE:
			opt.idle = (unsigned)opt_int("--idle-timeout", optarg,
			                             1, 86400);
			break;
		case OPT_ADDRESS:
			opt.address = optarg;
			break;
		case OPT_MAX_BATCH:
			opt.max_batch = (size_t)opt_int("--max-batch-size",
			                                optarg, 1, 1 << 20);
			break;
		case OPT_MAX_BODY:
			opt.max_body = (size_t)opt_int("--max-body-bytes",
			                               optarg, 64, 1LL << 32);
			break;
		case OPT_MAX_CONN:
			opt.max_conn = (unsigned)opt_int("--max-connections",
			                                 optarg, 1, 1 << 20);
			break;
		case OPT_MAX_HEADER:
			opt.max_header = (size_t)opt_int("--max-header-bytes",
			                                 optarg, 4096, 1 << 24);
			break;
		case OPT_MAX_ROWS:
			opt.max_rows = (size_t)opt_int("--max-request-rows",
			                               optarg, 1, 1 << 24);
			break;
		case OPT_BASE:
			base = optarg;
			break;
		case OPT_CONFIG:
			config = optarg;
			break;
		case OPT_NAME:
			name = optarg;
			break;
		case OPT_NNG:
			opt.nng_url = optarg;
			break;
		case OPT_PLUGIN_DIR:
			tf_registry_add_dir(reg, optarg);
			break;
		case OPT_POLL:
			opt.poll = opt_double("--poll-interval", optarg);
			if (opt.poll < 0) {
				usage_error("--poll-interval must be at least "
				            "0");
			}
			break;
		case OPT_PORT:
			opt.port =
			    (int)opt_int("--rest-api-port", optarg, 0, 65535);
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
			fprintf(stderr, "try '%s --help'\n", tool_name);
			return EX_USAGE;
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
	struct in_addr addr;
	if (inet_pton(AF_INET, opt.address, &addr) != 1) {
		usage_error("--listen-address: '%s' is not an IPv4 address",
		            opt.address);
	}
	if (tf_registry_load(reg) != TF_OK) {
		die(EX_SOFTWARE, "%s", tf_errmsg(reg));
	}
	if (config != NULL) {
		load_config(config);
	} else {
		add_model(name, base);
	}
	for (int i = 0; i < nmodels; i++) {
		scan(&models[i]);
	}
	if (use_stdin) {
		if (models[0].cur == NULL) {
			die(EX_UNAVAILABLE, "model %s: no valid version in %s",
			    models[0].name, models[0].base);
		}
		return run_stdin(&models[0], stdin_format);
	}
	/* Signals go to sigwait() below, never to a worker. */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	struct sockaddr_in sa;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)opt.port);
	sa.sin_addr = addr;
	unsigned pool = (unsigned)opt.threads;
	if (opt.batching) {
		/* Connection threads wait for batches: more of them. */
		size_t want = opt.max_batch < 64 ? opt.max_batch : 64;
		pool = want > pool ? (unsigned)want : pool;
	}
	struct MHD_Daemon *d = MHD_start_daemon(
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC |
	        MHD_USE_ERROR_LOG,
	    0, NULL, NULL, on_request, NULL, MHD_OPTION_EXTERNAL_LOGGER,
	    on_mhd_error, NULL, MHD_OPTION_SOCK_ADDR, &sa,
	    MHD_OPTION_THREAD_POOL_SIZE, pool, MHD_OPTION_NOTIFY_COMPLETED,
	    on_done, NULL, MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL,
	    MHD_OPTION_CONNECTION_LIMIT, opt.max_conn,
	    MHD_OPTION_CONNECTION_TIMEOUT, opt.idle,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, opt.max_header, MHD_OPTION_END);
	if (d == NULL) {
		die(EX_UNAVAILABLE, "cannot listen on %s:%d (in use?)",
		    opt.address, opt.port);
	}
	const union MHD_DaemonInfo *di =
	    MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	warnx_("REST API on http://%s:%u/ (%u threads)", opt.address,
	       di ? di->port : (unsigned)opt.port, pool);
	pthread_t *nng_threads = NULL;
	if (opt.nng_url != NULL) {
		int rv = nng_rep0_open(&nng_sock);
		if (rv == 0) {
			rv = nng_listen(nng_sock, opt.nng_url, NULL, 0);
		}
		if (rv != 0) {
			die(EX_UNAVAILABLE, "--nng-listen %s: %s", opt.nng_url,
			    nng_strerror(rv));
		}
		nng_threads = calloc((size_t)opt.threads, sizeof *nng_threads);
		for (int i = 0; nng_threads && i < opt.threads; i++) {
			pthread_create(&nng_threads[i], NULL, nng_worker, NULL);
		}
		warnx_("nng endpoint on %s", opt.nng_url);
	}
	if (opt.batching) {
		batch.nworkers = opt.threads;
		batch.workers =
		    calloc((size_t)opt.threads, sizeof *batch.workers);
		for (int i = 0; batch.workers && i < opt.threads; i++) {
			pthread_create(&batch.workers[i], NULL, batch_worker,
			               NULL);
		}
	}
	pthread_t watch_thread;
	int watching = opt.poll > 0 &&
	               pthread_create(&watch_thread, NULL, watcher, NULL) == 0;
	int sig = 0;
	sigwait(&sigs, &sig);
	warnx_("%s: draining", sig == SIGINT ? "SIGINT" : "SIGTERM");
	/* Stop accepting, let requests under way finish (up to 10 s). */
	MHD_quiesce_daemon(d);
	for (int i = 0; i < 1000 && atomic_load(&inflight) > 0; i++) {
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
	}
	MHD_stop_daemon(d);
	atomic_store(&stopping, 1);
	pthread_mutex_lock(&watch.lock);
	pthread_cond_broadcast(&watch.wake);
	pthread_mutex_unlock(&watch.lock);
	if (watching) {
		pthread_join(watch_thread, NULL);
	}
	if (opt.nng_url != NULL) {
		nng_close(nng_sock);
		for (int i = 0; nng_threads && i < opt.threads; i++) {
			pthread_join(nng_threads[i], NULL);
		}
		free(nng_threads);
	}
	pthread_mutex_lock(&batch.lock);
	pthread_cond_broadcast(&batch.more);
	pthread_mutex_unlock(&batch.lock);
	for (int i = 0; i < batch.nworkers; i++) {
		pthread_join(batch.workers[i], NULL);
	}
	free(batch.workers);
	for (int i = 0; i < nmodels; i++) {
		if (models[i].cur != NULL) {
			release(&models[i], models[i].cur);
		}
		for (int k = 0; k < models[i].nst; k++) {
			free(models[i].st[k].message);
		}
		free(models[i].name);
		free(models[i].base);
	}
	free(models);
	tf_registry_free(reg);
	warnx_("stopped");
	return 0;
}
