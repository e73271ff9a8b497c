/*
 * tool.c - messages, exits, option numbers and progress for the commands.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tf/tf.h"
#include "tool.h"

const char *tool_name = "tf";

static void
vmsg(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", tool_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
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
die(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
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
	exit(EX_USAGE);
}

void
die_status(int status, const char *msg)
{
	die(tf_exit_code(status), "%s", msg && *msg ? msg : tf_strerror(status));
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

void
print_version(void)
{
	printf("%s %s (libtfcore %s; cuda: no)\n", tool_name,
	       TF_TOOL_VERSION, tf_version());
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

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void
progress_update(uint64_t rows, uint64_t bytes)
{
	if (tty < 0) {
		tty = isatty(2);
		t0 = last = now();
	}
	if (!tty) {
		return;
	}
	double t = now();
	if (t - last < 0.25) {
		return;
	}
	last = t;
	double dt = t - t0 > 1e-9 ? t - t0 : 1e-9;
	fprintf(stderr, "\r%s: %llu rows, %.0f rows/s, %.1f MB read", tool_name,
		(unsigned long long)rows, (double)rows / dt,
		(double)bytes / 1e6);
	fflush(stderr);
}

void
progress_done(void)
{
	if (tty == 1) {
		fprintf(stderr, "\r\033[K");
	}
}
