/*
 * main.c - tf-records: coreutils-style commands for TFRecord files: cat,
 * head, count, verify, schema, index, split and shuffle.  Input may be
 * GZIP or ZLIB compressed (detected); "-" or no file means standard
 * input.  This file: usage, options, the reading loop and main.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "records/records.h"

static void
usage(void)
{
	printf("Usage: %s COMMAND [OPTION]... [FILE]...\n"
	       "Work with TFRecord files of tf.train.Example (plain, GZIP or "
	       "ZLIB).\nWith no FILE, or when FILE is -, read standard "
	       "input.\n\n"
	       "Commands:\n"
	       "  cat       print every record as a JSON line (--csv: CSV; "
	       "--raw: records);\n"
	       "            an image (JPEG, PNG) is shown as its format and "
	       "size\n"
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
	       "      --bytes             cat, head: images as their bytes "
	       "(base64), not described\n"
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
	OPT_BYTES = 255,
	OPT_CSV = 256,
	OPT_JSON,
	OPT_LABEL,
	OPT_RAW,
	OPT_SHARD,
	OPT_SKIP,
	OPT_WRITE
};

static const struct option options[] = {
    {"bytes", no_argument, NULL, OPT_BYTES},
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

struct opts O;
int status = 0;
struct tf_reader *reader;
struct tf_example *ex;

/* ---- reading ---------------------------------------------------------- */

/* Open an input, or name it and note the failure (and go on). */
int
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
uint64_t
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

void
parse_or_die(const uint8_t *d, size_t n, uint64_t index)
{
	if (tf_example_parse(ex, d, n) != TF_OK) {
		die(EX_DATAERR, "record %llu: %s", (unsigned long long)index,
		    tf_errmsg(ex));
	}
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
		case OPT_BYTES:
			O.bytes = 1;
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
		die(EX_SOFTWARE, "out of memory");
	}
	cmds[which].run();
	tf_example_free(ex);
	tf_reader_free(reader);
	stdout_flush();
	return status;
}
