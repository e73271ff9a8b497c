/*
 * tool.c - messages, exits, option numbers and progress for the commands.
 */
#include <errno.h>
#include <glob.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tf/tf.h"
#include "tool.h"

const char *tool_name = "tf";

/* Set by the exits that report a failure of their own: standard output's
 * last flush then says nothing more and changes no status. */
static int failing;

/* What a command printed must have reached standard output, or the run
 * failed: a metrics line lost to a full disk is not success.  Runs at
 * every exit(), and at the return from main. */
static void
flush_at_exit(void)
{
	if (failing) {
		return;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		int e = errno;
		fprintf(stderr, "%s: cannot write standard output: %s\n",
		        tool_name, strerror(e ? e : EIO));
		_exit(EX_IOERR);
	}
}

/* The fewest significant digits (1 to 17) that read back as x. */
static int
shortest_digits(double x)
{
	char t[40];
	for (int p = 1; p < 17; p++) {
		snprintf(t, sizeof t, "%.*g", p, x);
		if (strtod(t, NULL) == x) {
			return p;
		}
	}
	return 17;
}

/* The most digits any real in v needs to read back exactly. */
static int
digits_needed(json_t *v)
{
	int most = 1;
	if (json_is_real(v)) {
		return shortest_digits(json_real_value(v));
	}
	if (json_is_object(v)) {
		const char *k;
		json_t *e;
		json_object_foreach(v, k, e)
		{
			int d = digits_needed(e);
			most = d > most ? d : most;
		}
	} else if (json_is_array(v)) {
		size_t i;
		json_t *e;
		json_array_foreach(v, i, e)
		{
			int d = digits_needed(e);
			most = d > most ? d : most;
		}
	}
	return most;
}

char *
json_shortest(json_t *v, size_t flags)
{
	/* jansson writes reals with one precision for the document: the
	 * most any of them needs.  Up to 15 digits, each real then reads as
	 * its shortest form (0.963093146, not 0.96309314599999996), since
	 * %.Ng of a double nearest a shorter decimal is that decimal. */
	return json_dumps(v, flags | JSON_REAL_PRECISION(digits_needed(v)));
}

void
tool_start(const char *name)
{
	tool_name = name;
	tf_set_threads(1);
	atexit(flush_at_exit);
}

/* One line, written at once, so threads' messages do not interleave. */
static void
vmsg(const char *fmt, va_list ap)
{
	char line[4096];
	vsnprintf(line, sizeof line, fmt, ap);
	fprintf(stderr, "%s: %s\n", tool_name, line);
}

void
warnx_(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

void
warn_lines(const char *text)
{
	while (*text != '\0') {
		const char *e = strchr(text, '\n');
		size_t k = e ? (size_t)(e - text) : strlen(text);
		warnx_("%.*s", (int)k, text);
		text += k + (e != NULL);
	}
}

void
die(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	failing = code != 0;
	exit(code);
}

void
usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fprintf(stderr, "try '%s --help'\n", tool_name);
	failing = 1;
	exit(EX_USAGE);
}

void
die_status(int status, const char *msg)
{
	die(tf_exit_code(status), "%s",
	    msg && *msg ? msg : tf_strerror(status));
}

void
load_model(struct tf_registry *reg, struct tf_model *m, const char *path,
           struct tf_device *dev)
{
	if (tf_registry_load(reg) != TF_OK) {
		die_status(tf_errcode(reg), tf_errmsg(reg));
	}
	if (dev != NULL) {
		tf_model_set_device(m, dev);
	}
	if (tf_model_load(m, reg, path) != TF_OK) {
		die_status(tf_errcode(m), tf_errmsg(m));
	}
}

int
metric_known(const char *metric)
{
	const char *all[] = {"loss",     "mse", "rmse", "mae",
	                     "accuracy", "auc", "r2"};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
		if (strcmp(metric, all[i]) == 0) {
			return 1;
		}
	}
	return 0;
}

/* Lower is better for these metrics. */
static int
lower_better(const char *metric)
{
	return strcmp(metric, "loss") == 0 || strcmp(metric, "mse") == 0 ||
	       strcmp(metric, "rmse") == 0 || strcmp(metric, "mae") == 0;
}

/* The newest export's metric, when it has one: 1 and *value, else 0. */
static int
newest_metric(const struct tf_registry *reg, const char *base,
              const char *metric, double *value, long long *version)
{
	int64_t *vs;
	size_t n;
	char err[512];
	if (tf_export_versions(base, &vs, &n, err, sizeof err) != TF_OK ||
	    n == 0) {
		return 0;
	}
	*version = (long long)vs[0];
	char dir[4200];
	snprintf(dir, sizeof dir, "%s/%lld", base, *version);
	free(vs);
	struct tf_model *m = tf_model_new();
	int have = 0;
	if (m != NULL && tf_model_load(m, reg, dir) == TF_OK) {
		have = tf_model_metric(m, metric, value) == TF_OK;
	} else if (m != NULL) {
		warnx_("%s (exporting anyway)", tf_errmsg(m));
	}
	tf_model_free(m);
	return have;
}

char *
export_provenance(const char *exporter)
{
	char stamp[32];
	time_t now = time(NULL);
	strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	json_t *extra =
	    json_pack("{s:s,s:s}", "exported", stamp, "exporter", exporter);
	char *prov = extra ? json_dumps(extra, JSON_COMPACT) : NULL;
	json_decref(extra);
	return prov;
}

int
export_version(const struct tf_registry *reg, struct tf_model *m,
               const char *base, long long version, const char *if_better,
               const char *exporter, struct json_t *line)
{
	if (if_better != NULL) {
		double mine, theirs;
		long long v = 0;
		if (tf_model_metric(m, if_better, &mine) != TF_OK) {
			fprintf(stderr,
			        "%s: %s: no validation %s recorded (train "
			        "with --validate)\n",
			        tool_name, tf_model_checkpoint(m), if_better);
			return TF_EFORMAT;
		}
		json_object_set_new(line, "metric", json_string(if_better));
		json_object_set_new(line, "value", json_real(mine));
		if (newest_metric(reg, base, if_better, &theirs, &v)) {
			/* A tie exports: the checkpoint has trained on
			 * more data and is no worse on validation, and a
			 * metric at its best value (an AUC of 1) would
			 * otherwise never export again. */
			int better = lower_better(if_better) ? mine <= theirs
			                                     : mine >= theirs;
			json_object_set_new(line, "newest_version",
			                    json_integer(v));
			json_object_set_new(line, "newest_value",
			                    json_real(theirs));
			if (!better) {
				char why[256];
				snprintf(why, sizeof why,
				         "%s %.9g is worse than version %lld's "
				         "%.9g",
				         if_better, mine, v, theirs);
				json_object_set_new(line, "exported",
				                    json_false());
				json_object_set_new(line, "reason",
				                    json_string(why));
				return TF_OK;
			}
		}
	}
	char *prov = export_provenance(exporter);
	int64_t v = 0;
	char dir[4096];
	int rc = prov == NULL ? TF_ENOMEM
	                      : tf_model_export(m, reg, base, version, prov, &v,
	                                        dir, sizeof dir);
	free(prov);
	if (rc != TF_OK) {
		return rc;
	}
	json_object_set_new(line, "version", json_integer(v));
	json_object_set_new(line, "path", json_string(dir));
	export_said(line, m);
	return TF_OK;
}

void
export_said(struct json_t *line, struct tf_model *m)
{
	json_object_set_new(line, "exported", json_true());
	char *p = tf_model_provenance(m);
	json_t *pj = p ? json_loads(p, 0, NULL) : NULL;
	free(p);
	json_t *val = json_object_get(pj, "validation");
	if (val != NULL) {
		json_object_set(line, "validation", val);
	}
	json_decref(pj);
}

struct tf_device *
open_device(const char *name, const char *math)
{
	struct tf_device *d;
	char msg[400];
	name = name ? name : "cpu";
	int rc = tf_device_open(name, math, &d, msg, sizeof msg);
	if (rc == TF_EINVAL) {
		usage_error("--device %s%s%s: %s", name,
		            math ? " --gpu-math " : "", math ? math : "", msg);
	}
	if (rc != TF_OK) {
		die(tf_exit_code(rc), "--device %s: %s", name, msg);
	}
	return d;
}

long long
opt_int(const char *opt, const char *s, long long min, long long max)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno != 0 || v < min || v > max) {
		usage_error("%s: '%s' is not a whole number from %lld to %lld",
		            opt, s, min, max);
	}
	return v;
}

double
opt_double(const char *opt, const char *s)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (*s == '\0' || *end != '\0' || errno != 0 || !isfinite(v)) {
		usage_error("%s: '%s' is not a number", opt, s);
	}
	return v;
}

size_t
opt_size(const char *opt, const char *s, size_t min)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end), mul = 1;
	const char *units = "kKmMgG";
	const char *u = end != s && *end ? strchr(units, *end) : NULL;
	if (u != NULL) {
		mul = (double)(1ULL << (10 * (1 + (u - units) / 2)));
		end++;
	}
	if (end == s || *end != '\0' || errno != 0 || !(v > 0) ||
	    v * mul < (double)min || v * mul > 1e18) {
		usage_error("%s: '%s' is not a size such as 64M (at least "
		            "%zuK)",
		            opt, s, min / 1024);
	}
	return (size_t)(v * mul);
}

void
print_version(void)
{
	printf("%s %s (libtfcore %s; cuda: no)\n", tool_name, TF_TOOL_VERSION,
	       tf_version());
}

void
check_binary_stdout(const char *out)
{
	if ((out == NULL || strcmp(out, "-") == 0) && isatty(1)) {
		usage_error("refusing to write binary records to a terminal; "
		            "use -o FILE or a pipe");
	}
}

static double t0, last;
static int tty = -1;
static int shown; /* a progress line is on the terminal */

double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Whether progress is shown: standard error is a terminal, and standard
 * output is not a pipe (in a pipeline the last command speaks; two lines
 * on one terminal would garble each other).  Starts the clock.
 */
static int
progress_on(void)
{
	if (tty < 0) {
		struct stat st;
		tty =
		    isatty(2) && !(fstat(1, &st) == 0 && S_ISFIFO(st.st_mode));
		t0 = last = now();
	}
	return tty;
}

/* Draw the line, at most four times a second (always when final). */
static void
progress_line(const char *text, int force)
{
	double t = now();
	if (!force && t - last < 0.25) {
		return;
	}
	last = t;
	fprintf(stderr, "\r\033[K%s: %s", tool_name, text);
	fflush(stderr);
	shown = 1;
}

static double
elapsed(void)
{
	double dt = now() - t0;
	return dt > 1e-9 ? dt : 1e-9;
}

void
progress_update(uint64_t rows, uint64_t bytes, uint64_t total)
{
	if (!progress_on()) {
		return;
	}
	char line[256];
	double dt = elapsed();
	int n = snprintf(line, sizeof line, "%llu rows, %.0f rows/s, %.1f MB",
	                 (unsigned long long)rows, (double)rows / dt,
	                 (double)bytes / 1e6);
	if (total > 0 && bytes > 0 && bytes <= total && n > 0) {
		double left = dt * (double)(total - bytes) / (double)bytes;
		snprintf(line + n, sizeof line - (size_t)n,
		         " of %.1f (%.0f%%, %.0f s left)", (double)total / 1e6,
		         100.0 * (double)bytes / (double)total, left);
	}
	progress_line(line, 0);
}

void
progress_train(uint64_t step, uint64_t examples, uint64_t epoch,
               uint64_t epochs, double loss)
{
	if (!progress_on()) {
		return;
	}
	char line[256];
	char of[32] = "";
	if (epochs > 0) {
		snprintf(of, sizeof of, " of %llu", (unsigned long long)epochs);
	}
	snprintf(line, sizeof line,
	         "step %llu, %llu examples, %.0f examples/s, epoch %llu%s, "
	         "loss %.4g",
	         (unsigned long long)step, (unsigned long long)examples,
	         (double)examples / elapsed(), (unsigned long long)epoch + 1,
	         of, loss);
	progress_line(line, 0);
}

void
progress_summary(const char *text)
{
	if (progress_on()) {
		fprintf(stderr, "\r\033[K%s: %s in %.1f s\n", tool_name, text,
		        elapsed());
		shown = 0;
	}
}

void
progress_done(void)
{
	if (shown) {
		fprintf(stderr, "\r\033[K");
		fflush(stderr);
		shown = 0;
	}
}

/* ---- tracked outputs ----------------------------------------------------- */

#define MAX_OUTPUTS 4096
static struct tf_writer *outputs[MAX_OUTPUTS];
static volatile sig_atomic_t noutputs;
static struct tf_file_out *text_out; /* standard output, redirected */
static struct tf_file_out *side_out; /* a sidecar, written, not renamed */
static char side_path[4096];

static void
remove_outputs(void)
{
	tf_file_out_abort(text_out); /* removes an unfinished text output */
	text_out = NULL;
	tf_file_out_abort(side_out);
	side_out = NULL;
	for (int i = 0; i < noutputs; i++) {
		if (outputs[i] != NULL) {
			tf_writer_free(outputs[i]); /* unlinks its temp file */
			outputs[i] = NULL;
		}
	}
}

static void
on_signal(int sig)
{
	const char *tt = text_out ? tf_file_out_temp(text_out) : NULL;
	if (tt != NULL) {
		unlink(tt);
	}
	tt = side_out ? tf_file_out_temp(side_out) : NULL;
	if (tt != NULL) {
		unlink(tt);
	}
	for (int i = 0; i < noutputs; i++) {
		const char *t =
		    outputs[i] ? tf_writer_temp_path(outputs[i]) : NULL;
		if (t != NULL) {
			unlink(t);
		}
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Remove unfinished outputs at exit and on a fatal signal. */
static void
track_outputs(void)
{
	static int installed;
	if (!installed) {
		installed = 1;
		atexit(remove_outputs);
		int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
		for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
			signal(sigs[i], on_signal);
		}
	}
}

void
text_output_open(const char *path)
{
	if (path == NULL || strcmp(path, "-") == 0) {
		return;
	}
	track_outputs();
	fflush(stdout);
	text_out = tf_file_out_open(path);
	if (text_out == NULL) {
		die(EX_CANTCREAT, "cannot create '%s': %s", path,
		    strerror(errno));
	}
	if (dup2(tf_file_out_fd(text_out), 1) < 0) {
		die(EX_OSERR, "cannot redirect standard output: %s",
		    strerror(errno));
	}
}

void
stdout_flush(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		die(EX_IOERR, "write error: %s", strerror(errno));
	}
}

void
text_output_close(void)
{
	stdout_flush();
	if (text_out == NULL) {
		return;
	}
	/* The descriptor written through is 1: the one to sync. */
	if (fsync(1) != 0 && errno != EINVAL && errno != EROFS) {
		die(EX_IOERR, "write error: %s", strerror(errno));
	}
	struct tf_file_out *o = text_out;
	text_out = NULL;
	if (tf_file_out_commit(o, 0) != 0) {
		die(EX_IOERR, "cannot publish the output: %s", strerror(errno));
	}
}

void
side_output_write(const char *path, const char *text)
{
	track_outputs();
	snprintf(side_path, sizeof side_path, "%s", path);
	side_out = tf_file_out_open(path);
	if (side_out == NULL) {
		die(EX_CANTCREAT, "cannot create '%s': %s", path,
		    strerror(errno));
	}
	int fd = tf_file_out_fd(side_out);
	for (size_t n = strlen(text), at = 0; at < n;) {
		ssize_t k = write(fd, text + at, n - at);
		if (k < 0 && errno == EINTR) {
			continue;
		}
		if (k <= 0) {
			die(EX_IOERR, "cannot write '%s': %s", path,
			    k < 0 ? strerror(errno) : "short write");
		}
		at += (size_t)k;
	}
}

void
side_output_commit(void)
{
	struct tf_file_out *o = side_out;
	side_out = NULL;
	if (o != NULL && tf_file_out_commit(o, TF_FILE_SYNC) != 0) {
		die(EX_IOERR, "cannot write '%s': %s", side_path,
		    strerror(errno));
	}
}

struct tf_writer *
output_open(const char *path, int compression)
{
	track_outputs();
	if (noutputs == MAX_OUTPUTS) {
		die(EX_SOFTWARE, "too many outputs");
	}
	struct tf_writer *w = tf_writer_new();
	if (w == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	outputs[noutputs] = w;
	noutputs = noutputs + 1;
	if (tf_writer_open(w, path, compression, 0) != TF_OK) {
		die_status(tf_errcode(w), tf_errmsg(w));
	}
	return w;
}

void
output_close(struct tf_writer *w)
{
	if (tf_writer_close(w) != TF_OK) {
		die_status(tf_errcode(w), tf_errmsg(w));
	}
	for (int i = 0; i < noutputs; i++) {
		if (outputs[i] == w) {
			outputs[i] = NULL;
		}
	}
	tf_writer_free(w);
}

/* ---- input files ----------------------------------------------------------
 */

/* The expanded list, kept until exit (external, so that the store is
 * kept and leak checkers see it reachable). */
char **tool_inputs;

char **
input_files(int argc, char **argv, int *n)
{
	static char *stdin_only[] = {"-", NULL};
	if (argc == 0) {
		*n = 1;
		return stdin_only;
	}
	size_t cap = (size_t)argc + 1, k = 0;
	char **out = malloc(cap * sizeof *out);
	if (out == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (strpbrk(a, "*?[") == NULL || strcmp(a, "-") == 0 ||
		    access(a, F_OK) == 0) {
			out[k++] = argv[i];
			continue;
		}
		glob_t g;
		int rc = glob(a, 0, NULL, &g);
		if (rc == GLOB_NOMATCH) {
			die(EX_NOINPUT, "%s: no files match this pattern", a);
		}
		if (rc != 0) {
			die(EX_OSERR, "%s: cannot expand the pattern", a);
		}
		cap += g.gl_pathc;
		char **p = realloc(out, cap * sizeof *out);
		if (p == NULL) {
			die(EX_SOFTWARE, "out of memory");
		}
		out = p;
		for (size_t j = 0; j < g.gl_pathc; j++) {
			out[k] = strdup(g.gl_pathv[j]);
			if (out[k++] == NULL) {
				die(EX_SOFTWARE, "out of memory");
			}
		}
		globfree(&g);
	}
	out[k] = NULL;
	*n = (int)k;
	tool_inputs = out;
	return out;
}
