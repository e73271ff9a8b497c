/*
 * tf-records - coreutils-style commands for TFRecord files: cat, head,
 * count, verify, schema, index, split and shuffle.  Input may be GZIP or
 * ZLIB compressed (detected); "-" or no file means standard input.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tf/tf.h"
#include "tool.h"

static void
usage(void)
{
	printf("Usage: %s COMMAND [OPTION]... [FILE]...\n"
	       "Work with TFRecord files of tf.train.Example (plain, GZIP or "
	       "ZLIB).\nWith no FILE, or when FILE is -, read standard "
	       "input.\n\n"
	       "Commands:\n"
	       "  cat       print every record as a JSON line (--csv: CSV; "
	       "--raw: records)\n"
	       "  head      the first N records, printed as by cat\n"
	       "  count     the number of records\n"
	       "  verify    check every checksum; name each damaged record\n"
	       "  schema    feature names, kinds and lengths seen (--write: "
	       "infer a schema\n"
	       "            sidecar from all the records)\n"
	       "  index     one 'offset length' line per record\n"
	       "  split     round-robin into N files, or keep shard I of N\n"
	       "  shuffle   shuffle records (seeded; larger than memory "
	       "works)\n\n"
	       "Options:\n"
	       "  -c, --compression=TYPE  input compression: auto (default), "
	       "none, gzip, zlib\n"
	       "      --csv               cat, head: CSV with a header row\n"
	       "  -h, --help              show this help and exit\n"
	       "      --json              schema: JSON instead of a table\n"
	       "      --label=NAME        schema --write: the label "
	       "(default label)\n"
	       "  -M, --memory=BYTES      shuffle: memory for records "
	       "(default 256M)\n"
	       "  -n, --lines=N           head: records (default 10); "
	       "split: number of files\n"
	       "  -o, --output=FILE       output file (split: the name "
	       "prefix)\n"
	       "      --raw               cat, head: write records, not text\n"
	       "  -s, --seed=N            shuffle: random seed (default: "
	       "time-based)\n"
	       "      --shard=I/N         split: write only records I, I+N, "
	       "I+2N, ...\n"
	       "      --skip-corrupt      skip damaged records (with a "
	       "warning) and go on\n"
	       "  -V, --version           show the version and exit\n"
	       "      --write             schema: write FILE's schema sidecar "
	       "(FILE.schema.json)\n"
	       "  -z, --compress=TYPE     output compression: gzip or zlib\n\n"
	       "Exit status: 0 success, 64 usage, 65 damaged or malformed "
	       "data, 66 missing\ninput, 70 out of memory or an internal "
	       "error, 73 cannot create output,\n74 I/O error.\n",
	       tool_name);
}

enum {
	OPT_CSV = 256,
	OPT_JSON,
	OPT_LABEL,
	OPT_RAW,
	OPT_SHARD,
	OPT_SKIP,
	OPT_WRITE
};

static const struct option options[] = {
    {"compress", required_argument, NULL, 'z'},
    {"compression", required_argument, NULL, 'c'},
    {"csv", no_argument, NULL, OPT_CSV},
    {"help", no_argument, NULL, 'h'},
    {"json", no_argument, NULL, OPT_JSON},
    {"label", required_argument, NULL, OPT_LABEL},
    {"lines", required_argument, NULL, 'n'},
    {"memory", required_argument, NULL, 'M'},
    {"output", required_argument, NULL, 'o'},
    {"raw", no_argument, NULL, OPT_RAW},
    {"seed", required_argument, NULL, 's'},
    {"shard", required_argument, NULL, OPT_SHARD},
    {"skip-corrupt", no_argument, NULL, OPT_SKIP},
    {"version", no_argument, NULL, 'V'},
    {"write", no_argument, NULL, OPT_WRITE},
    {NULL, 0, NULL, 0},
};

struct opts {
	int in_comp, out_comp;
	int csv, json, raw, skip, write;
	const char *label;
	long long n;
	int n_given;
	const char *output;
	uint64_t seed;
	int seed_given;
	long long shard_i, shard_n;
	size_t memory;
	char **files;
	int nfiles;
};

static struct opts O;
static int status = 0; /* exit status for "keep going" errors */

/* Handles live as long as the process (and stay reachable for leak
 * checkers when a failure exits early). */
static struct tf_reader *reader;
static struct tf_example *ex;

/* ---- reading ---------------------------------------------------------- */

typedef int (*record_fn)(const uint8_t *data, size_t n, void *ctx);

/* Open an input, or name it and note the failure (and go on). */
static int
open_input(struct tf_reader *r, const char *path)
{
	if (tf_reader_open(r, path, O.in_comp) == TF_OK) {
		return 1;
	}
	warnx_("%s", tf_errmsg(r));
	status = status ? status : EX_NOINPUT;
	return 0;
}

/* Call fn for every record of every input; returns records read. */
static uint64_t
each_record(record_fn fn, void *ctx)
{
	uint64_t total = 0;
	struct tf_reader *r = reader;
	tf_reader_set_skip_corrupt(r, O.skip);
	int stop = 0;
	for (int i = 0; i < O.nfiles && !stop; i++) {
		if (!open_input(r, O.files[i])) {
			continue;
		}
		const uint8_t *d;
		size_t n;
		int rc;
		while ((rc = tf_reader_next(r, &d, &n)) == TF_OK) {
			total++;
			if (fn(d, n, ctx) != 0) {
				rc = TF_EOF;
				stop = 1;
				break;
			}
		}
		if (tf_reader_skipped(r) > 0) {
			warn_lines(tf_reader_skip_log(r));
			warnx_("%s: skipped %llu damaged record%s", O.files[i],
			       (unsigned long long)tf_reader_skipped(r),
			       tf_reader_skipped(r) == 1 ? "" : "s");
		}
		if (rc != TF_EOF) {
			warnx_("%s", tf_errmsg(r));
			status = status ? status : tf_exit_code(rc);
		}
	}
	return total;
}

static void
parse_or_die(const uint8_t *d, size_t n, uint64_t index)
{
	if (tf_example_parse(ex, d, n) != TF_OK) {
		die(EX_DATAERR, "record %llu: %s", (unsigned long long)index,
		    tf_errmsg(ex));
	}
}

/* ---- cat / head -------------------------------------------------------- */

struct printer {
	uint64_t count, limit;
	char *buf;
	size_t len, cap;
	struct tf_writer *w;
	struct tf_csv_rows *csv; /* --csv */
};

static int
print_record(const uint8_t *d, size_t n, void *ctx)
{
	struct printer *p = ctx;
	if (p->limit && p->count >= p->limit) {
		return 1;
	}
	if (p->w != NULL) {
		if (tf_writer_write(p->w, d, n) != TF_OK) {
			die_status(tf_errcode(p->w), tf_errmsg(p->w));
		}
		p->count++;
		return 0;
	}
	parse_or_die(d, n, p->count);
	if (O.csv) {
		const char *text;
		size_t len;
		if (tf_csv_rows_add(p->csv, ex, &text, &len) != TF_OK) {
			die_status(tf_errcode(p->csv), tf_errmsg(p->csv));
		}
		fwrite(text, 1, len, stdout);
	} else {
		p->len = 0;
		if (tf_example_to_json(ex, &p->buf, &p->len, &p->cap) !=
		    TF_OK) {
			die(EX_OSERR, "out of memory");
		}
		fwrite(p->buf, 1, p->len, stdout);
		putchar('\n');
	}
	p->count++;
	return 0;
}

static struct tf_writer *
open_output(const char *path)
{
	check_binary_stdout(path);
	return output_open(path, O.out_comp);
}

/* Rename the output into place, unless an input failed: then the exit
 * handler removes it, so an error leaves no partial output. */
static void
close_output(struct tf_writer *w)
{
	if (status == 0) {
		output_close(w);
	}
}

/* --csv of records with a schema: its columns in its order, the label
 * last, so tf-csv2record reads the text back to the same schema. */
static void
csv_columns(struct tf_csv_rows *c)
{
	char side[4096];
	if (strcmp(O.files[0], "-") == 0) {
		return;
	}
	tf_schema_sidecar(O.files[0], side, sizeof side);
	if (access(side, F_OK) != 0) {
		return; /* none: the first record's order */
	}
	struct tf_schema *s = tf_schema_new();
	if (s == NULL || tf_schema_load(s, side) != TF_OK) {
		tf_schema_free(s);
		return; /* not a schema: the first record's order */
	}
	size_t n = tf_schema_nfeatures(s), k = 0;
	const char **names = calloc(n + 2, sizeof *names);
	if (names == NULL) {
		die(EX_OSERR, "out of memory");
	}
	int type;
	for (size_t i = 0; i < n; i++) {
		names[k++] = tf_schema_feature(s, i, &type);
	}
	if (tf_schema_label(s) != NULL) {
		names[k++] = tf_schema_label(s);
	}
	if (tf_schema_packed(s) == NULL &&
	    tf_csv_rows_columns(c, names, k) != TF_OK) {
		die(EX_OSERR, "out of memory");
	}
	free(names);
	tf_schema_free(s);
}

static void
cmd_cat(uint64_t limit)
{
	static struct printer p;
	p.limit = limit;
	if (O.raw) {
		p.w = open_output(O.output);
	} else {
		text_output_open(O.output);
	}
	if (O.csv && (p.csv = tf_csv_rows_new()) == NULL) {
		die(EX_OSERR, "out of memory");
	}
	if (O.csv) {
		csv_columns(p.csv);
	}
	each_record(print_record, &p);
	if (p.w != NULL) {
		close_output(p.w);
	} else if (status == 0) {
		text_output_close();
	}
	tf_csv_rows_free(p.csv);
	free(p.buf);
	stdout_flush();
}

static void
cmd_cat_all(void)
{
	cmd_cat(0);
}

static void
cmd_head(void)
{
	if (O.n > 0) {
		cmd_cat((uint64_t)O.n);
	}
}

/* ---- count / verify / index --------------------------------------------- */

static int
nothing(const uint8_t *d, size_t n, void *ctx)
{
	(void)d;
	(void)n;
	(void)ctx;
	return 0;
}

static void
cmd_count(void)
{
	char **files = O.files;
	int nfiles = O.nfiles;
	uint64_t total = 0, *each = calloc((size_t)nfiles + 1, sizeof *each);
	if (each == NULL) {
		die(EX_OSERR, "out of memory");
	}
	for (int i = 0; i < nfiles; i++) {
		O.files = &files[i];
		O.nfiles = 1;
		each[i] = each_record(nothing, NULL);
		total += each[i];
	}
	/* A count is printed only when whole: a damaged file (without
	 * --skip-corrupt) has none. */
	if (status != 0) {
		free(each);
		return;
	}
	for (int i = 0; nfiles > 1 && i < nfiles; i++) {
		printf("%llu %s\n", (unsigned long long)each[i], files[i]);
	}
	if (nfiles > 1) {
		printf("%llu total\n", (unsigned long long)total);
	} else {
		printf("%llu\n", (unsigned long long)total);
	}
	free(each);
}

static void
cmd_verify(void)
{
	struct tf_reader *r = reader;
	tf_reader_set_skip_corrupt(r, 1);
	for (int i = 0; i < O.nfiles; i++) {
		if (!open_input(r, O.files[i])) {
			continue;
		}
		const uint8_t *d;
		size_t n;
		int rc;
		/* Framing and checksums make a record good; one whose
		 * content is not a tf.train.Example (a TensorBoard event)
		 * is counted as such, not as damage. */
		uint64_t others = 0;
		char first[600] = "";
		while ((rc = tf_reader_next(r, &d, &n)) == TF_OK) {
			if (tf_example_parse(ex, d, n) != TF_OK &&
			    others++ == 0) {
				snprintf(
				    first, sizeof first, "record %llu: %s",
				    (unsigned long long)tf_reader_count(r) - 1,
				    tf_errmsg(ex));
			}
		}
		warn_lines(tf_reader_skip_log(r));
		uint64_t bad = tf_reader_skipped(r);
		if (rc != TF_EOF) {
			warnx_("%s", tf_errmsg(r));
			status = status ? status : tf_exit_code(rc);
		} else if (bad > 0) {
			warnx_("%s: %llu damaged record%s, %llu good",
			       O.files[i], (unsigned long long)bad,
			       bad == 1 ? "" : "s",
			       (unsigned long long)tf_reader_count(r));
			status = status ? status : EX_DATAERR;
		} else if (others > 0) {
			char some[40] = "none is";
			if (others < tf_reader_count(r)) {
				snprintf(some, sizeof some, "%llu %s not",
				         (unsigned long long)others,
				         others == 1 ? "is" : "are");
			}
			printf("%s: OK, %llu records (%s); %s a "
			       "tf.train.Example (%s)\n",
			       O.files[i],
			       (unsigned long long)tf_reader_count(r),
			       tf_compression_name(tf_reader_compression(r)),
			       some, first);
		} else {
			printf("%s: OK, %llu records (%s)\n", O.files[i],
			       (unsigned long long)tf_reader_count(r),
			       tf_compression_name(tf_reader_compression(r)));
		}
	}
}

static void
cmd_index(void)
{
	struct tf_reader *r = reader;
	for (int i = 0; i < O.nfiles; i++) {
		if (tf_reader_open(r, O.files[i], O.in_comp) != TF_OK) {
			die_status(tf_errcode(r), tf_errmsg(r));
		}
		const uint8_t *d;
		size_t n;
		int rc;
		while ((rc = tf_reader_next(r, &d, &n)) == TF_OK) {
			if (tf_reader_compression(r) != TF_COMPRESS_NONE) {
				die(EX_DATAERR,
				    "%s: is %s-compressed; an index needs an "
				    "uncompressed file",
				    O.files[i],
				    tf_compression_name(
				        tf_reader_compression(r)));
			}
			printf("%llu %zu\n",
			       (unsigned long long)tf_reader_offset(r),
			       n + TF_RECORD_OVERHEAD);
		}
		if (rc != TF_EOF) {
			die_status(rc, tf_errmsg(r));
		}
	}
}

/* ---- schema ---------------------------------------------------------------
 */

static int
survey_record(const uint8_t *d, size_t n, void *ctx)
{
	struct tf_survey *s = ctx;
	parse_or_die(d, n, tf_survey_records(s));
	if (tf_survey_add(s, ex) != TF_OK) {
		die_status(tf_errcode(s), tf_errmsg(s));
	}
	return 0;
}

/* schema --write: the inputs' sidecar, inferred from every record. */
static void
write_schema(struct tf_survey *s)
{
	char side[4096], other[4096], skipped[1024];
	if (status != 0) {
		return; /* an input failed: no schema of part of it */
	}
	tf_schema_sidecar(O.files[0], side, sizeof side);
	for (int i = 1; i < O.nfiles; i++) {
		tf_schema_sidecar(O.files[i], other, sizeof other);
		if (strcmp(side, other) != 0) {
			usage_error("--write: the inputs are of several sets "
			            "(%s, %s); write one set at a time",
			            side, other);
		}
	}
	static struct tf_schema *sc;
	if ((sc = tf_schema_new()) == NULL) {
		die(EX_OSERR, "out of memory");
	}
	if (tf_survey_schema(s, O.label, sc, skipped, sizeof skipped) !=
	    TF_OK) {
		die_status(tf_errcode(s), tf_errmsg(s));
	}
	if (tf_schema_write(sc, side) != TF_OK) {
		die_status(tf_errcode(sc), tf_errmsg(sc));
	}
	printf("%s: %llu records, %zu features, label '%s'\n", side,
	       (unsigned long long)tf_schema_rows(sc), tf_schema_nfeatures(sc),
	       tf_schema_label(sc));
	if (skipped[0] != '\0') {
		warnx_("left out (not one fixed-length value in every record): "
		       "%s",
		       skipped);
	}
	tf_schema_free(sc);
}

static void
cmd_schema(void)
{
	static struct tf_survey *s;
	if ((s = tf_survey_new()) == NULL) {
		die(EX_OSERR, "out of memory");
	}
	each_record(survey_record, s);
	if (O.write) {
		write_schema(s);
		tf_survey_free(s);
		return;
	}
	if (O.json) {
		char *text = tf_survey_json(s);
		if (text == NULL) {
			die(EX_OSERR, "out of memory");
		}
		puts(text);
		free(text);
		tf_survey_free(s);
		return;
	}
	printf("%-24s %-6s %10s %8s %8s\n", "feature", "kind", "records",
	       "min_len", "max_len");
	struct tf_survey_feature f;
	for (size_t i = 0; tf_survey_get(s, i, &f) == TF_OK; i++) {
		printf("%-24s %-6s %10llu %8zu %8zu\n", f.name,
		       f.kind < 0 ? "mixed" : tf_kind_name(f.kind),
		       (unsigned long long)f.records, f.min_len, f.max_len);
	}
	printf("%llu records\n", (unsigned long long)tf_survey_records(s));
	tf_survey_free(s);
}

/*
 * Carry the inputs' schema sidecar to an output of the same data, so the
 * next stage (tf-train) finds it (tf_schema_carry()); rows >= 0 (a shard
 * of the records) replaces its row count.
 */
static void
carry_schema(const char *out, long long rows)
{
	if (status != 0) {
		return;
	}
	struct tf_schema *s = tf_schema_new();
	if (s == NULL) {
		die(EX_OSERR, "out of memory");
	}
	if (tf_schema_carry(s, (const char *const *)O.files, (size_t)O.nfiles,
	                    out, rows) != TF_OK) {
		die_status(tf_errcode(s), tf_errmsg(s));
	}
	tf_schema_free(s);
}

/* ---- split ----------------------------------------------------------------
 */

struct splitter {
	struct tf_writer **w;
	long long n;
	uint64_t i, kept;
};

static int
split_record(const uint8_t *d, size_t n, void *ctx)
{
	struct splitter *s = ctx;
	uint64_t k = s->i++ % (uint64_t)s->n;
	struct tf_writer *w = O.shard_n ? s->w[0] : s->w[k];
	if (O.shard_n && (long long)k != O.shard_i) {
		return 0;
	}
	s->kept++;
	if (tf_writer_write(w, d, n) != TF_OK) {
		die_status(tf_errcode(w), tf_errmsg(w));
	}
	return 0;
}

static void
cmd_split(void)
{
	struct splitter s = {0};
	if (O.shard_n) {
		s.n = O.shard_n;
		s.w = calloc(1, sizeof *s.w);
		if (s.w == NULL) {
			die(EX_OSERR, "out of memory");
		}
		s.w[0] = open_output(O.output);
	} else {
		if (!O.n_given || O.n < 1) {
			usage_error("split needs -n N (files) or --shard I/N");
		}
		if (O.output == NULL || strcmp(O.output, "-") == 0) {
			usage_error("split -n needs -o PREFIX");
		}
		s.n = O.n;
		s.w = calloc((size_t)s.n, sizeof *s.w);
		if (s.w == NULL) {
			die(EX_OSERR, "out of memory");
		}
		for (long long i = 0; i < s.n; i++) {
			char name[4096];
			tf_shard_name(O.output, i, s.n, name, sizeof name);
			s.w[i] = open_output(name);
		}
	}
	each_record(split_record, &s);
	for (long long i = 0; i < (O.shard_n ? 1 : s.n); i++) {
		close_output(s.w[i]);
	}
	free(s.w);
	if (O.shard_n) {
		carry_schema(O.output, (long long)s.kept);
	} else {
		char first[4096];
		tf_shard_name(O.output, 0, s.n, first, sizeof first);
		carry_schema(first, -1);
	}
}

/* ---- shuffle --------------------------------------------------------------
 */

static int
shuffle_record(const uint8_t *d, size_t n, void *ctx)
{
	struct tf_shuffle *s = ctx;
	if (tf_shuffle_add(s, d, n) != TF_OK) {
		die_status(tf_errcode(s), tf_errmsg(s));
	}
	return 0;
}

static void
cmd_shuffle(void)
{
	if (!O.seed_given) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		O.seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
		         (uint64_t)getpid();
	}
	static struct tf_shuffle *s;
	s = tf_shuffle_new(O.seed, O.memory);
	if (s == NULL) {
		die(EX_OSERR, "out of memory");
	}
	struct tf_writer *out = open_output(O.output);
	each_record(shuffle_record, s);
	if (status == 0 && tf_shuffle_finish(s, out) != TF_OK) {
		die_status(tf_errcode(s), tf_errmsg(s));
	}
	close_output(out);
	carry_schema(O.output, -1);
	tf_shuffle_free(s);
}

/* ---- main -----------------------------------------------------------------
 */

int
main(int argc, char **argv)
{
	tool_start("tf-records");
	O.in_comp = TF_COMPRESS_AUTO;
	O.memory = (size_t)256 << 20;
	O.n = 10;
	if (argc < 2) {
		usage_error("missing COMMAND");
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) {
		usage();
		return 0;
	}
	if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0) {
		print_version();
		return 0;
	}
	static const struct {
		const char *name;
		void (*run)(void);
	} cmds[] = {{"cat", cmd_cat_all},   {"head", cmd_head},
	            {"count", cmd_count},   {"verify", cmd_verify},
	            {"schema", cmd_schema}, {"index", cmd_index},
	            {"split", cmd_split},   {"shuffle", cmd_shuffle}};
	size_t which = 0;
	while (which < sizeof cmds / sizeof cmds[0] &&
	       strcmp(cmd, cmds[which].name) != 0) {
		which++;
	}
	if (which == sizeof cmds / sizeof cmds[0]) {
		usage_error("unknown command '%s'", cmd);
	}
	argv++;
	argc--;
	int c;
	while ((c = getopt_long(argc, argv, "c:hM:n:o:s:Vz:", options, NULL)) !=
	       -1) {
		switch (c) {
		case 'c':
			O.in_comp = tf_compression_parse(optarg);
			if (O.in_comp < TF_COMPRESS_AUTO) {
				usage_error("--compression: '%s' is not auto, "
				            "none, gzip or zlib",
				            optarg);
			}
			break;
		case 'h':
			usage();
			return 0;
		case 'M':
			O.memory = opt_size("--memory", optarg, 4096);
			break;
		case 'n':
			O.n = opt_int("-n", optarg, 0, 1LL << 62);
			O.n_given = 1;
			break;
		case 'o':
			O.output = optarg;
			break;
		case 's':
			O.seed =
			    (uint64_t)opt_int("--seed", optarg, 0, INT64_MAX);
			O.seed_given = 1;
			break;
		case 'V':
			print_version();
			return 0;
		case 'z':
			O.out_comp = tf_compression_parse(optarg);
			if (O.out_comp < TF_COMPRESS_NONE) {
				usage_error(
				    "--compress: '%s' is not gzip, zlib "
				    "or none",
				    optarg);
			}
			break;
		case OPT_CSV:
			O.csv = 1;
			break;
		case OPT_JSON:
			O.json = 1;
			break;
		case OPT_LABEL:
			O.label = optarg;
			break;
		case OPT_WRITE:
			O.write = 1;
			break;
		case OPT_RAW:
			O.raw = 1;
			break;
		case OPT_SHARD: {
			char *slash = strchr(optarg, '/');
			if (slash == NULL) {
				usage_error("--shard: expected I/N, got '%s'",
				            optarg);
			}
			*slash = '\0';
			O.shard_i = opt_int("--shard", optarg, 0, 1LL << 40);
			O.shard_n = opt_int("--shard", slash + 1, 1, 1LL << 40);
			if (O.shard_i >= O.shard_n) {
				usage_error("--shard: I must be below N");
			}
			break;
		}
		case OPT_SKIP:
			O.skip = 1;
			break;
		default:
			fprintf(stderr, "try '%s --help'\n", tool_name);
			return EX_USAGE;
		}
	}
	O.files = input_files(argc - optind, argv + optind, &O.nfiles);
	if (O.write && (O.nfiles == 0 || strcmp(O.files[0], "-") == 0)) {
		usage_error(
		    "--write names files: the sidecar goes beside them");
	}
	if (O.csv && O.raw) {
		usage_error("--csv and --raw exclude each other");
	}
	ex = tf_example_new();
	reader = tf_reader_new();
	if (ex == NULL || reader == NULL) {
		die(EX_OSERR, "out of memory");
	}
	cmds[which].run();
	tf_example_free(ex);
	tf_reader_free(reader);
	stdout_flush();
	return status;
}
