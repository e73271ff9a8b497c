/*
 * tool.h - what every tf-* command shares: messages, exit codes, number
 * parsing, version lines and the progress line.
 */
#ifndef TF_TOOL_H
#define TF_TOOL_H

#include <stdint.h>
#include <stdio.h>
#include <sysexits.h>

extern const char *tool_name;
struct tf_device;

/* A command's first call: its name for messages, and tf_set_threads(1)
 * (tf/device.h), before the command starts threads of its own. */
void tool_start(const char *name);

/* "tf-NAME: message" on stderr. */
void warnx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same, then exit with code. */
__attribute__((noreturn, format(printf, 2, 3))) void die(int code,
                                                         const char *fmt, ...);
/* A usage error: the message, a hint to --help, exit 64. */
__attribute__((noreturn, format(printf, 1, 2))) void
usage_error(const char *fmt, ...);
/* Exit with the sysexits code for a libtfcore status and its message. */
__attribute__((noreturn)) void die_status(int status, const char *msg);
/* --device NAME with --gpu-math MATH (either may be NULL: cpu, fp32):
 * the device, or exit 64 for a bad name, 69 when it cannot be had. */
struct tf_device *open_device(const char *name, const char *math);

/* json_dumps() with each real in its shortest form that reads back
 * exactly (up to 15 significant digits; more only where needed). */
struct json_t;
char *json_shortest(struct json_t *v, size_t flags);

/* The plugins (--plugin-dir added to reg before), then the model at
 * path (a checkpoint, its directory or an export) on dev (NULL: the
 * CPU): the prologue of tf-eval and tf-export; exits with the status of
 * what failed. */
struct tf_registry;
struct tf_model;
void load_model(struct tf_registry *reg, struct tf_model *m, const char *path,
                struct tf_device *dev);

/* A metric --if-better compares: loss, mse, rmse, mae (lower is
 * better), accuracy, auc, r2 (higher). */
int metric_known(const char *metric);
/* Provenance a checkpoint does not know, for an export's model.json:
 * when, and by what (JSON text to free; NULL: out of memory). */
char *export_provenance(const char *exporter);
/* m (loaded from a checkpoint) as version N of base (0: one above the
 * highest), unless if_better (NULL: always) names a validation metric
 * worse than the newest version's (a tie exports).  What happened goes
 * into line (version, path, exported true or false and why, the metric
 * and validation); a tf_status, TF_EFORMAT when m has no such metric
 * (said on stderr), else the export's (its message is m's). */
int export_version(const struct tf_registry *reg, struct tf_model *m,
                   const char *base, long long version, const char *if_better,
                   const char *exporter, struct json_t *line);

/* An export's line says so: exported true, and the model's validation
 * metrics when its checkpoint recorded them. */
void export_said(struct json_t *line, struct tf_model *m);

/* Each line of a multi-line message as its own warning. */
void warn_lines(const char *text);

/* Checked numbers for options: the whole string, in range, or exit 64. */
long long opt_int(const char *opt, const char *s, long long min, long long max);
/* A byte count such as 64M (K, M, G: powers of 1024), at least min;
 * exits 64 naming opt otherwise. */
size_t opt_size(const char *opt, const char *s, size_t min);
double opt_double(const char *opt, const char *s);

/* "tf-NAME 0.1.0 (libtfcore 0.1.0; ...)" on stdout. */
void print_version(void);

/* Refuse to write binary records to a terminal. */
void check_binary_stdout(const char *out);

struct tf_writer;
/*
 * Open an output through a tf_writer that is tracked until
 * output_close(): if the command exits early or is killed by SIGINT,
 * SIGTERM, SIGHUP or SIGPIPE, its temporary file is removed, so a failed
 * run leaves nothing behind.  Dies with the right code on failure.
 */
struct tf_writer *output_open(const char *path, int compression);
/* Standard output redirected to path, published as every output is
 * (nothing for NULL or "-"); text_output_close() flushes and publishes
 * it (exit 74 on a write error), and an early exit removes it. */
void text_output_open(const char *path);
void text_output_close(void);
/* Flush standard output, publishing nothing; exit 74 naming the cause of
 * a write error. */
void stdout_flush(void);
/* Close (rename into place) and free; dies on failure. */
void output_close(struct tf_writer *w);
/*
 * A small file published with the outputs (a schema sidecar): written
 * whole to its temporary now, before any output_close(), so a full disk
 * fails the run (exit 74) while the previous outputs and their sidecar
 * are still in place; side_output_commit() renames it in after them.
 */
void side_output_write(const char *path, const char *text);
void side_output_commit(void);

/*
 * The input files of a command from its operands ("-", standard input,
 * when there are none).  An operand that names no file and holds *, ?
 * or [ is a file pattern, as TensorFlow takes them ('data/train-*'):
 * expanded with glob(3), in name order; one that matches nothing exits
 * 66.  The list lives until exit.
 */
char **input_files(int argc, char **argv, int *n);
extern char **tool_inputs;

/* Seconds on the monotonic clock. */
double now(void);

/* Progress on stderr when it is a terminal: rows, rows/s. */
/*
 * The progress line, on a terminal's standard error unless standard
 * output is a pipe: rows and bytes read (of total, when known, with a
 * percentage and the time left); a training step; a last line that stays
 * (progress_summary); progress_done() clears it before other output.
 */
void progress_update(uint64_t rows, uint64_t bytes, uint64_t total);
void progress_train(uint64_t step, uint64_t examples, uint64_t epoch,
                    uint64_t epochs, double loss);
void progress_summary(const char *text);
void progress_done(void);

#endif
