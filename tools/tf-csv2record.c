/*
 * tf-csv2record - convert CSV or libsvm rows to TFRecord files of
 * tf.train.Example, with a schema sidecar for the later stages.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "tf/tf.h"
#include "tool.h"

static void
usage(void)
{
	printf("Usage: %s [OPTION]... [FILE]...\n"
	       "Convert CSV (or libsvm) rows to TFRecord files of "
	       "tf.train.Example.\n"
	       "FILE may be a .tar, .tar.gz, .zip or .gz archive; with no "
	       "FILE, or when\nFILE is -, read standard input.\n\n"
	       "Input:\n"
	       "      --allow-nonfinite      keep NaN, inf and values out of "
	       "float32's range\n"
	       "  -d, --delimiter=C          field separator (default ','; "
	       "'tab' for a tab)\n"
	       "      --drop=LIST            leave out these columns "
	       "(comma-separated names)\n"
	       "      --columns=LIST         keep only these columns (and "
	       "the label)\n"
	       "      --empty=POLICY         an empty field: omit (default), "
	       "zero or error\n"
	       "  -f, --format=FMT           csv (default) or libsvm\n"
	       "      --hash-buckets=N       --hash-features, the ids "
	       "modulo N\n"
	       "      --hash-features        every feature column as "
	       "hashed sparse ids\n"
	       "      --infer-rows=N         rows used to infer types "
	       "(default 1000; 0 = all)\n"
	       "  -l, --label=COL            label column, name or 1-based "
	       "index (default: last)\n"
	       "      --label-type=TYPE      int or float (default: "
	       "inferred)\n"
	       "  -m, --member=GLOB          archive members to read "
	       "(repeatable)\n"
	       "      --names=LIST           column names (replace or stand "
	       "in for the header)\n"
	       "      --no-header            the first row is data\n"
	       "      --no-label             the data has no label column\n"
	       "      --numeric-as-float     write integer feature columns "
	       "as float\n"
	       "      --sequence=LIST        these columns hold a sequence a "
	       "cell (a list feature)\n"
	       "      --sequence-delimiter=C the steps' separator (default "
	       "' ')\n"
	       "      --skip-bad             skip malformed rows and report "
	       "how many\n"
	       "      --types=LIST           NAME:TYPE,... (int64, float, "
	       "bytes)\n"
	       "      --types-from=SCHEMA    the types (and label) of a "
	       "schema file's columns\n"
	       "Output:\n"
	       "  -n, --shards=N             write N files "
	       "OUTPUT-00000-of-0000N (needs -o)\n"
	       "  -o, --output=FILE          write FILE (default: standard "
	       "output)\n"
	       "  -p, --pack-features=NAME   pack numeric features into one "
	       "float list NAME\n"
	       "      --no-schema            write no schema file\n"
	       "      --schema=FILE          schema file (default: "
	       "OUTPUT.schema.json with -o)\n"
	       "      --stream               each row out as it comes (to "
	       "standard output or a\n"
	       "                             FIFO; every column typed: "
	       "--types, --types-from)\n"
	       "  -z, --compress=TYPE        gzip or zlib (default: none)\n"
	       "Other:\n"
	       "  -j, --threads=N            worker threads (default: one "
	       "per CPU)\n"
	       "  -q, --quiet                no progress line\n"
	       "  -h, --help                 show this help and exit\n"
	       "  -V, --version              show the version and exit\n\n"
	       "Exit status: 0 success, 64 usage, 65 malformed input, 66 "
	       "missing input,\n70 out of memory or an internal error, 73 "
	       "cannot create output, 74 I/O error.\n",
	       tool_name);
}

enum {
	OPT_ALLOW_NONFINITE = 256,
	OPT_COLUMNS,
	OPT_DROP,
	OPT_EMPTY,
	OPT_HASH_BUCKETS,
	OPT_HASH_FEATURES,
	OPT_INFER,
	OPT_LABEL_TYPE,
	OPT_NAMES,
	OPT_NO_HEADER,
	OPT_NO_LABEL,
	OPT_NO_SCHEMA,
	OPT_NUMERIC_FLOAT,
	OPT_SCHEMA,
	OPT_SEQUENCE,
	OPT_SEQ_DELIM,
	OPT_SKIP_BAD,
	OPT_STREAM,
	OPT_TYPES,
	OPT_TYPES_FROM
};

static const struct option options[] = {
    {"allow-nonfinite", no_argument, NULL, OPT_ALLOW_NONFINITE},
    {"columns", required_argument, NULL, OPT_COLUMNS},
    {"compress", required_argument, NULL, 'z'},
    {"delimiter", required_argument, NULL, 'd'},
    {"drop", required_argument, NULL, OPT_DROP},
    {"empty", required_argument, NULL, OPT_EMPTY},
    {"format", required_argument, NULL, 'f'},
    {"hash-buckets", required_argument, NULL, OPT_HASH_BUCKETS},
    {"hash-features", no_argument, NULL, OPT_HASH_FEATURES},
    {"help", no_argument, NULL, 'h'},
    {"infer-rows", required_argument, NULL, OPT_INFER},
    {"label", required_argument, NULL, 'l'},
    {"label-type", required_argument, NULL, OPT_LABEL_TYPE},
    {"member", required_argument, NULL, 'm'},
    {"names", required_argument, NULL, OPT_NAMES},
    {"no-header", no_argument, NULL, OPT_NO_HEADER},
    {"no-label", no_argument, NULL, OPT_NO_LABEL},
    {"no-schema", no_argument, NULL, OPT_NO_SCHEMA},
    {"numeric-as-float", no_argument, NULL, OPT_NUMERIC_FLOAT},
    {"output", required_argument, NULL, 'o'},
    {"pack-features", required_argument, NULL, 'p'},
    {"quiet", no_argument, NULL, 'q'},
    {"schema", required_argument, NULL, OPT_SCHEMA},
    {"sequence", required_argument, NULL, OPT_SEQUENCE},
    {"sequence-delimiter", required_argument, NULL, OPT_SEQ_DELIM},
    {"shards", required_argument, NULL, 'n'},
    {"skip-bad", no_argument, NULL, OPT_SKIP_BAD},
    {"stream", no_argument, NULL, OPT_STREAM},
    {"threads", required_argument, NULL, 'j'},
    {"types", required_argument, NULL, OPT_TYPES},
    {"types-from", required_argument, NULL, OPT_TYPES_FROM},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

struct out {
	struct tf_writer **w;
	int n;
	uint64_t next; /* index of the next record, for sharding */
	int quiet;
	int flush;      /* --stream: each piece out as it is converted */
	uint64_t total; /* bytes of the inputs, when known (plain files) */
};

/* The bytes there are to read, for a percentage: plain files only (not
 * standard input, compressed files or archives). */
static uint64_t
input_size(int n, char **paths)
{
	static const char *const packed[] = {".gz",  ".tgz", ".zip", ".tar",
	                                     ".bz2", ".xz",  ".zst", ".7z"};
	uint64_t total = 0;
	for (int i = 0; i < n; i++) {
		struct stat st;
		const char *dot = strrchr(paths[i], '.');
		for (size_t k = 0; dot && k < sizeof packed / sizeof *packed;
		     k++) {
			if (strcmp(dot, packed[k]) == 0) {
				return 0;
			}
		}
		if (stat(paths[i], &st) != 0 || !S_ISREG(st.st_mode)) {
			return 0;
		}
		total += (uint64_t)st.st_size;
	}
	return total;
}

static int
sink_write(void *ctx, const uint8_t *bytes, size_t n, const size_t *ends,
           size_t count)
{
	struct out *o = ctx;
	if (o->n == 1) {
		int rc = tf_writer_write_framed(o->w[0], bytes, n, count);
		return rc == TF_OK && o->flush ? tf_writer_flush(o->w[0]) : rc;
	}
	size_t start = 0;
	for (size_t i = 0; i < count; i++) {
		struct tf_writer *w = o->w[o->next++ % (uint64_t)o->n];
		int rc = tf_writer_write_framed(w, bytes + start,
		                                ends[i] - start, 1);
		if (rc != TF_OK) {
			return rc;
		}
		start = ends[i];
	}
	return TF_OK;
}

static void
sink_progress(void *ctx, uint64_t rows, uint64_t bytes)
{
	struct out *o = ctx;
	if (!o->quiet) {
		progress_update(rows, bytes, o->total);
	}
}

/* "NAME:TYPE,..." of the columns of a schema file (features and label),
 * and its label's name (a copy) into *label; exits 66 or 65 for a
 * file that is missing or not a schema. */
static char *
schema_types(const char *path, char **label)
{
	json_error_t e;
	json_t *j = json_load_file(path, 0, &e);
	if (j == NULL) {
		die(access(path, F_OK) == 0 ? EX_DATAERR : EX_NOINPUT,
		    "--types-from %s: %s (line %d)", path, e.text, e.line);
	}
	json_t *f = json_object_get(j, "features"),
	       *l = json_object_get(j, "label");
	if (!json_is_array(f)) {
		die(EX_DATAERR, "--types-from %s: not a schema (no features)",
		    path);
	}
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	if (m == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	size_t i;
	json_t *v;
	json_array_foreach(f, i, v)
	{
		const char *name =
		    json_string_value(json_object_get(v, "name"));
		const char *type =
		    json_string_value(json_object_get(v, "type"));
		if (name != NULL && type != NULL) {
			fprintf(m, "%s%s:%s", ftell(m) ? "," : "", name, type);
		}
	}
	const char *ln = json_string_value(json_object_get(l, "name"));
	const char *lt = json_string_value(json_object_get(l, "type"));
	if (ln != NULL && lt != NULL) {
		fprintf(m, "%s%s:%s", ftell(m) ? "," : "", ln, lt);
		*label = strdup(ln);
	}
	if (fclose(m) != 0 || text == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	json_decref(j);
	return text;
}

/* The run's handles live as long as the process (and stay reachable for
 * leak checkers when a failure exits early). */
static struct tf_csv *conv;
static struct tf_input *in;
static struct out out;

static char
parse_delim(const char *flag, const char *s)
{
	if (strcmp(s, "tab") == 0 || strcmp(s, "\\t") == 0 ||
	    strcmp(s, "\t") == 0) {
		return '\t';
	}
	if (strlen(s) != 1 || s[0] == '"' || s[0] == '\n' || s[0] == '\r') {
		usage_error("%s: '%s' is not one character (or 'tab')", flag,
		            s);
	}
	return s[0];
}

int
main(int argc, char **argv)
{
	tool_start("tf-csv2record");
	struct tf_csv_options o;
	tf_csv_options_init(&o);
	const char *output = NULL, *schema = NULL, *types_from = NULL;
	char *types_text = NULL, *label_copy = NULL;
	int compress = TF_COMPRESS_NONE, shards = 1, no_schema = 0;
	int quiet = 0;
	const char **members = NULL;
	int nmembers = 0;
	int c;
	while ((c = getopt_long(argc, argv, "d:f:hj:l:m:n:o:p:qVz:", options,
	                        NULL)) != -1) {
		switch (c) {
		case 'd':
			o.delimiter = parse_delim("--delimiter", optarg);
			break;
		case 'f':
			if (strcmp(optarg, "csv") == 0) {
				o.format = TF_FORMAT_CSV;
			} else if (strcmp(optarg, "libsvm") == 0) {
				o.format = TF_FORMAT_LIBSVM;
			} else {
				usage_error("--format: '%s' is not csv or "
				            "libsvm",
				            optarg);
			}
			break;
		case 'h':
			usage();
			return 0;
		case 'j':
			o.threads = (int)opt_int("--threads", optarg, 1, 256);
			break;
		case 'l':
			o.label = optarg;
			break;
		case 'm':
			members = realloc(members, (size_t)(nmembers + 1) *
			                               sizeof *members);
			if (members == NULL) {
				die(EX_SOFTWARE, "out of memory");
			}
			members[nmembers++] = optarg;
			break;
		case 'n':
			shards = (int)opt_int("--shards", optarg, 1, 99999);
			break;
		case 'o':
			output = optarg;
			break;
		case 'p':
			o.pack = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'V':
			print_version();
			return 0;
		case 'z':
			compress = tf_compression_parse(optarg);
			if (compress < TF_COMPRESS_NONE) {
				usage_error(
				    "--compress: '%s' is not gzip, zlib "
				    "or none",
				    optarg);
			}
			break;
		case OPT_COLUMNS:
			o.columns = optarg;
			break;
		case OPT_SEQUENCE:
			o.sequence = optarg;
			break;
		case OPT_SEQ_DELIM:
			o.seq_delimiter =
			    parse_delim("--sequence-delimiter", optarg);
			break;
		case OPT_DROP:
			o.drop = optarg;
			break;
		case OPT_EMPTY:
			if (strcmp(optarg, "omit") == 0) {
				o.empty = TF_EMPTY_OMIT;
			} else if (strcmp(optarg, "zero") == 0) {
				o.empty = TF_EMPTY_ZERO;
			} else if (strcmp(optarg, "error") == 0) {
				o.empty = TF_EMPTY_ERROR;
			} else {
				usage_error(
				    "--empty: '%s' is not omit, zero or "
				    "error",
				    optarg);
			}
			break;
		case OPT_HASH_BUCKETS:
			o.hash_buckets = (uint64_t)opt_int(
			    "--hash-buckets", optarg, 1, INT64_MAX);
			break;
		case OPT_HASH_FEATURES:
			o.hash_features = 1;
			break;
		case OPT_INFER:
			o.infer_rows = (size_t)opt_int("--infer-rows", optarg,
			                               0, 1LL << 40);
			break;
		case OPT_LABEL_TYPE:
			if (strcmp(optarg, "int") == 0 ||
			    strcmp(optarg, "int64") == 0) {
				o.label_type = TF_COL_INT64;
			} else if (strcmp(optarg, "float") == 0) {
				o.label_type = TF_COL_FLOAT;
			} else {
				usage_error("--label-type: '%s' is not int or "
				            "float",
				            optarg);
			}
			break;
		case OPT_NAMES:
			o.names = optarg;
			break;
		case OPT_NO_HEADER:
			o.no_header = 1;
			break;
		case OPT_NO_LABEL:
			o.no_label = 1;
			break;
		case OPT_NO_SCHEMA:
			no_schema = 1;
			break;
		case OPT_NUMERIC_FLOAT:
			o.numeric_as_float = 1;
			break;
		case OPT_SCHEMA:
			schema = optarg;
			break;
		case OPT_ALLOW_NONFINITE:
			o.allow_nonfinite = 1;
			break;
		case OPT_SKIP_BAD:
			o.skip_bad = 1;
			break;
		case OPT_TYPES:
			o.types = optarg;
			break;
		case OPT_TYPES_FROM:
			types_from = optarg;
			break;
		case OPT_STREAM:
			o.stream = 1;
			break;
		default:
			fprintf(stderr, "try '%s --help'\n", tool_name);
			return EX_USAGE;
		}
	}
	if (o.label != NULL && o.no_label) {
		usage_error("--label and --no-label exclude each other");
	}
	if (o.format == TF_FORMAT_LIBSVM &&
	    (o.pack || o.columns || o.drop || o.types || o.names ||
	     o.sequence)) {
		usage_error("--format libsvm takes no column options");
	}
	if (types_from != NULL) {
		if (o.types != NULL) {
			usage_error(
			    "--types and --types-from exclude each other");
		}
		o.types = types_text = schema_types(types_from, &label_copy);
		o.label = o.label ? o.label : label_copy;
	}
	if (o.stream && (shards > 1 || compress != TF_COMPRESS_NONE ||
	                 tf_path_kind(output) != TF_PATH_SPECIAL)) {
		usage_error("--stream writes plain records to standard output "
		            "or a FIFO, as they come (a file would appear only "
		            "at the end)");
	}
	if (shards > 1 && (output == NULL || strcmp(output, "-") == 0)) {
		usage_error("--shards needs --output");
	}
	check_binary_stdout(shards > 1 ? "x" : output);
	/* A device or FIFO is written in place, and gets no sidecar. */
	int kind = tf_path_kind(output);
	if (kind == TF_PATH_DIR) {
		die(EX_CANTCREAT, "%s: is a directory", output);
	}
	if (shards > 1 && kind == TF_PATH_SPECIAL) {
		usage_error("--shards needs an --output that names files, "
		            "not '%s'",
		            output);
	}

	conv = tf_csv_new();
	if (conv == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	if (tf_csv_set_options(conv, &o) != TF_OK) {
		usage_error("%s", tf_errmsg(conv));
	}
	free(types_text); /* the converter has its copies */
	free(label_copy);

	out.n = shards;
	out.quiet = quiet;
	out.flush = o.stream;
	out.w = calloc((size_t)shards, sizeof *out.w);
	if (out.w == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	for (int i = 0; i < shards; i++) {
		char name[4096];
		if (shards > 1) {
			tf_shard_name(output, i, shards, name, sizeof name);
		} else {
			snprintf(name, sizeof name, "%s",
			         output ? output : "-");
		}
		out.w[i] = output_open(name, compress);
	}
	struct tf_csv_sink sink = {&out, sink_write, sink_progress};

	in = tf_input_new();
	if (in == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	for (int i = 0; i < nmembers; i++) {
		tf_input_add_member_glob(in, members[i]);
	}
	if (!quiet) {
		progress_update(0, 0, 0); /* start the clock */
	}
	int nfiles = argc - optind;
	int rc = TF_OK;
	out.total = input_size(nfiles, argv + optind);
	for (int i = 0; i < (nfiles ? nfiles : 1) && rc == TF_OK; i++) {
		const char *path = nfiles ? argv[optind + i] : "-";
		if (tf_input_open(in, path) != TF_OK) {
			progress_done();
			die_status(tf_errcode(in), tf_errmsg(in));
		}
		rc = tf_csv_convert(conv, in, &sink);
		if (rc == TF_OK && tf_input_streams(in) == 0) {
			progress_done();
			die(EX_DATAERR, "%s: no CSV members (see --member)",
			    path);
		}
	}
	progress_done();
	if (rc != TF_OK) {
		/* A writer's own error says more than "writing failed". */
		for (int i = 0; i < shards; i++) {
			if (tf_errcode(out.w[i]) != TF_OK) {
				die_status(tf_errcode(out.w[i]),
				           tf_errmsg(out.w[i]));
			}
		}
		die_status(rc, tf_errmsg(conv));
	}
	/* The schema is written before the records are renamed into
	 * place and renamed in after them: a full disk fails the run with
	 * the previous records and schema both still there. */
	if (!no_schema && (schema != NULL || kind != TF_PATH_SPECIAL)) {
		char path[4096];
		if (schema == NULL) {
			snprintf(path, sizeof path, "%s.schema.json", output);
			schema = path;
		}
		struct tf_schema *s = tf_schema_new();
		if (s == NULL) {
			die(EX_SOFTWARE, "out of memory");
		}
		if (tf_csv_schema(conv, s) != TF_OK) {
			die_status(tf_errcode(conv), tf_errmsg(conv));
		}
		if (tf_schema_write(s, NULL) != TF_OK) {
			die_status(tf_errcode(s), tf_errmsg(s));
		}
		side_output_write(schema, tf_schema_text(s));
		tf_schema_free(s);
	}
	for (int i = 0; i < shards; i++) {
		output_close(out.w[i]);
	}
	side_output_commit();
	if (!quiet) {
		char done[128];
		snprintf(done, sizeof done, "%llu rows converted",
		         (unsigned long long)tf_csv_rows(conv));
		progress_summary(done);
	}
	if (tf_csv_skipped(conv) > 0) {
		warn_lines(tf_csv_skip_log(conv));
		warnx_("skipped %llu malformed row%s of %llu",
		       (unsigned long long)tf_csv_skipped(conv),
		       tf_csv_skipped(conv) == 1 ? "" : "s",
		       (unsigned long long)(tf_csv_skipped(conv) +
		                            tf_csv_rows(conv)));
	}
	free(out.w);
	free(members);
	tf_input_free(in);
	tf_csv_free(conv);
	return 0;
}
