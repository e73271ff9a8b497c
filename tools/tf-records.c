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
	       "  schema    feature names, kinds and lengths seen\n"
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
	       "  -z, --compress=TYPE     output compression: gzip or zlib\n\n"
	       "Exit status: 0 success, 64 usage, 65 damaged or malformed "
	       "data, 66 missing\ninput, 73 cannot create output, 74 I/O "
	       "error.\n",
	       tool_name);
}

enum { OPT_CSV = 256, OPT_JSON, OPT_RAW, OPT_SHARD, OPT_SKIP };

static const struct option options[] = {
    {"compress", required_argument, NULL, 'z'},
    {"compression", required_argument, NULL, 'c'},
    {"csv", no_argument, NULL, OPT_CSV},
    {"help", no_argument, NULL, 'h'},
    {"json", no_argument, NULL, OPT_JSON},
    {"lines", required_argument, NULL, 'n'},
    {"memory", required_argument, NULL, 'M'},
    {"output", required_argument, NULL, 'o'},
    {"raw", no_argument, NULL, OPT_RAW},
    {"seed", required_argument, NULL, 's'},
    {"shard", required_argument, NULL, OPT_SHARD},
    {"skip-corrupt", no_argument, NULL, OPT_SKIP},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

struct opts {
	int in_comp, out_comp;
	int csv, json, raw, skip;
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
	char **cols; /* CSV header: names of the first record */
	size_t ncols;
};

static void
csv_field(const uint8_t *s, size_t n)
{
	int quote = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == ',' || s[i] == '"' || s[i] == '\n' ||
		    s[i] == '\r') {
			quote = 1;
		}
	}
	if (!quote) {
		fwrite(s, 1, n, stdout);
		return;
	}
	putchar('"');
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"') {
			putchar('"');
		}
		putchar(s[i]);
	}
	putchar('"');
}

static void
csv_value(const struct tf_feature *f)
{
	char num[48];
	if (f->kind == TF_KIND_BYTES && f->count == 1) {
		csv_field(f->bytes[0].data, f->bytes[0].len);
		return;
	}
	/* Several values: space-separated in one field. */
	size_t len = 0, cap = 64;
	char *s = malloc(cap);
	if (s == NULL) {
		die(EX_OSERR, "out of memory");
	}
	for (size_t k = 0; k < f->count; k++) {
		const char *t = num;
		size_t m;
		if (f->kind == TF_KIND_FLOAT) {
			m = (size_t)tf_format_float(num, sizeof num,
			                            f->floats[k]);
		} else if (f->kind == TF_KIND_INT64) {
			m = (size_t)snprintf(num, sizeof num, "%lld",
			                     (long long)f->ints[k]);
		} else {
			t = (const char *)f->bytes[k].data;
			m = f->bytes[k].len;
		}
		while (len + m + 2 > cap) {
			cap *= 2;
			char *p = realloc(s, cap);
			if (p == NULL) {
				die(EX_OSERR, "out of memory");
			}
			s = p;
		}
		if (k > 0) {
			s[len++] = ' ';
		}
		memcpy(s + len, t, m);
		len += m;
	}
	csv_field((const uint8_t *)s, len);
	free(s);
}

static void
print_csv(struct printer *p)
{
	size_t n = tf_example_count(ex);
	struct tf_feature f;
	if (p->cols == NULL) {
		p->cols = calloc(n + 1, sizeof *p->cols);
		for (size_t i = 0; p->cols && i < n; i++) {
			tf_example_get(ex, i, &f);
			p->cols[i] = strdup(f.name);
			csv_field((const uint8_t *)f.name, f.name_len);
			putchar(i + 1 < n ? ',' : '\n');
		}
		if (p->cols == NULL) {
			die(EX_OSERR, "out of memory");
		}
		p->ncols = n;
	}
	size_t found = 0;
	for (size_t i = 0; i < p->ncols; i++) {
		if (tf_example_find(ex, p->cols[i], &f) == TF_OK) {
			found++;
			csv_value(&f);
		}
		putchar(i + 1 < p->ncols ? ',' : '\n');
	}
	if (found != n) {
		die(EX_DATAERR,
		    "record %llu has features the first record lacks; "
		    "use JSON output",
		    (unsigned long long)p->count);
	}
}

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
		print_csv(p);
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

static void
cmd_cat(uint64_t limit)
{
	struct printer p = {0};
	p.limit = limit;
	if (O.raw) {
		p.w = open_output(O.output);
	} else if (O.output != NULL && strcmp(O.output, "-") != 0 &&
	           freopen(O.output, "w", stdout) == NULL) {
		die(EX_CANTCREAT, "cannot create '%s'", O.output);
	}
	each_record(print_record, &p);
	if (p.w != NULL) {
		close_output(p.w);
	}
	for (size_t i = 0; i < p.ncols; i++) {
		free(p.cols[i]);
	}
	free(p.cols);
	free(p.buf);
	if (fflush(stdout) != 0) {
		die(EX_IOERR, "write error");
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
	uint64_t total = 0;
	for (int i = 0; i < nfiles; i++) {
		O.files = &files[i];
		O.nfiles = 1;
		uint64_t n = each_record(nothing, NULL);
		total += n;
		if (nfiles > 1) {
			printf("%llu %s\n", (unsigned long long)n, files[i]);
		}
	}
	if (nfiles > 1) {
		printf("%llu total\n", (unsigned long long)total);
	} else {
		printf("%llu\n", (unsigned long long)total);
	}
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
		uint64_t bad_examples = 0;
		while ((rc = tf_reader_next(r, &d, &n)) == TF_OK) {
			if (tf_example_parse(ex, d, n) != TF_OK) {
				if (bad_examples++ < 20) {
					warnx_("%s: record %llu at %llu: %s",
					       O.files[i],
					       (unsigned long long)
					               tf_reader_count(r) -
					           1,
					       (unsigned long long)
					           tf_reader_offset(r),
					       tf_errmsg(ex));
				}
			}
		}
		warn_lines(tf_reader_skip_log(r));
		uint64_t bad = tf_reader_skipped(r) + bad_examples;
		if (rc != TF_EOF) {
			warnx_("%s", tf_errmsg(r));
			status = status ? status : tf_exit_code(rc);
		} else if (bad > 0) {
			warnx_("%s: %llu damaged record%s, %llu good",
			       O.files[i], (unsigned long long)bad,
			       bad == 1 ? "" : "s",
			       (unsigned long long)(tf_reader_count(r) -
			                            bad_examples));
			status = status ? status : EX_DATAERR;
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

struct fstat_ {
	char *name;
	int kind; /* -1 = mixed */
	uint64_t records;
	size_t min_len, max_len;
};

struct schema {
	struct fstat_ *f;
	size_t n, cap;
	uint64_t records;
};

static int
schema_record(const uint8_t *d, size_t n, void *ctx)
{
	struct schema *s = ctx;
	parse_or_die(d, n, s->records);
	s->records++;
	size_t k = tf_example_count(ex);
	for (size_t i = 0; i < k; i++) {
		struct tf_feature f;
		tf_example_get(ex, i, &f);
		struct fstat_ *t = NULL;
		for (size_t j = 0; j < s->n; j++) {
			if (strcmp(s->f[j].name, f.name) == 0) {
				t = &s->f[j];
				break;
			}
		}
		if (t == NULL) {
			if (s->n == s->cap) {
				s->cap = s->cap ? s->cap * 2 : 32;
				s->f = realloc(s->f, s->cap * sizeof *s->f);
				if (s->f == NULL) {
					die(EX_OSERR, "out of memory");
				}
			}
			t = &s->f[s->n++];
			t->name = strdup(f.name);
			t->kind = f.kind;
			t->records = 0;
			t->min_len = t->max_len = f.count;
		}
		if (t->kind != f.kind) {
			t->kind = -1;
		}
		t->records++;
		t->min_len = f.count < t->min_len ? f.count : t->min_len;
		t->max_len = f.count > t->max_len ? f.count : t->max_len;
	}
	return 0;
}

static int
fstat_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fstat_ *)a)->name,
	              ((const struct fstat_ *)b)->name);
}

static void
cmd_schema(void)
{
	struct schema s = {0};
	each_record(schema_record, &s);
	qsort(s.f, s.n, sizeof *s.f, fstat_cmp);
	if (O.json) {
		printf("{\"records\":%llu,\"features\":[",
		       (unsigned long long)s.records);
	} else {
		printf("%-24s %-6s %10s %8s %8s\n", "feature", "kind",
		       "records", "min_len", "max_len");
	}
	for (size_t i = 0; i < s.n; i++) {
		const struct fstat_ *t = &s.f[i];
		const char *kind =
		    t->kind < 0 ? "mixed" : tf_kind_name(t->kind);
		if (O.json) {
			char *q = NULL;
			size_t ql = 0, qc = 0;
			struct tf_example *tmp = tf_example_new();
			/* JSON-quote the name through the example printer. */
			tf_example_add_floats(tmp, t->name, NULL, 0);
			tf_example_to_json(tmp, &q, &ql, &qc);
			q[ql - 4] = '\0'; /* {"name":[]} -> {"name" */
			printf(
			    "%s{\"name\":%s,\"kind\":\"%s\",\"records\":%llu,"
			    "\"min_len\":%zu,\"max_len\":%zu}",
			    i ? "," : "", q + 1, kind,
			    (unsigned long long)t->records, t->min_len,
			    t->max_len);
			free(q);
			tf_example_free(tmp);
		} else {
			printf("%-24s %-6s %10llu %8zu %8zu\n", t->name, kind,
			       (unsigned long long)t->records, t->min_len,
			       t->max_len);
		}
		free(t->name);
	}
	if (O.json) {
		printf("]}\n");
	} else {
		printf("%llu records\n", (unsigned long long)s.records);
	}
	free(s.f);
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
			snprintf(name, sizeof name, "%s-%05lld-of-%05lld",
			         O.output, i, s.n);
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
		snprintf(first, sizeof first, "%s-00000-of-%05lld", O.output,
		         s.n);
		carry_schema(first, -1);
	}
}

/* ---- shuffle --------------------------------------------------------------
 */

#define BUCKETS 64

struct pool {
	uint8_t *data;
	size_t len, cap;
	size_t *off; /* record i spans off[i]..off[i+1] */
	size_t n, ncap;
};

static void
pool_add(struct pool *p, const uint8_t *d, size_t n)
{
	if (p->cap - p->len < n) {
		size_t cap = p->cap ? p->cap : 1 << 20;
		while (cap - p->len < n) {
			cap *= 2;
		}
		p->data = realloc(p->data, cap);
		p->cap = cap;
	}
	if (p->n + 2 > p->ncap) {
		p->ncap = p->ncap ? p->ncap * 2 : 1024;
		p->off = realloc(p->off, p->ncap * sizeof *p->off);
	}
	if (p->data == NULL || p->off == NULL) {
		die(EX_OSERR, "out of memory");
	}
	if (p->n == 0) {
		p->off[0] = 0;
	}
	memcpy(p->data + p->len, d, n);
	p->len += n;
	p->off[++p->n] = p->len;
}

static void
pool_flush_shuffled(struct pool *p, struct tf_rng *r, struct tf_writer *w)
{
	size_t *idx = malloc((p->n + 1) * sizeof *idx);
	if (idx == NULL) {
		die(EX_OSERR, "out of memory");
	}
	for (size_t i = 0; i < p->n; i++) {
		idx[i] = i;
	}
	for (size_t i = p->n; i > 1; i--) {
		size_t j = (size_t)tf_rng_below(r, i);
		size_t t = idx[i - 1];
		idx[i - 1] = idx[j];
		idx[j] = t;
	}
	for (size_t i = 0; i < p->n; i++) {
		size_t k = idx[i];
		if (tf_writer_write(w, p->data + p->off[k],
		                    p->off[k + 1] - p->off[k]) != TF_OK) {
			die_status(tf_errcode(w), tf_errmsg(w));
		}
	}
	free(idx);
	p->len = p->n = 0;
}

struct shuffler {
	struct pool pool;
	struct tf_rng *rng;
	size_t memory;
	FILE *bucket[BUCKETS];
	struct tf_writer *bw[BUCKETS];
	struct tf_reader *r; /* reads the buckets back */
	int spilled;
};

/* One shuffler per level of spilling; past MAX_DEPTH a bucket is shuffled
 * in memory whatever its size.  Static, so everything stays reachable. */
#define MAX_DEPTH 3
static struct shuffler levels[MAX_DEPTH + 1];

static void shuffle_level(struct tf_reader *r, struct tf_writer *out,
                          int depth);

static void
spill(struct shuffler *s, const uint8_t *d, size_t n)
{
	int b = (int)tf_rng_below(s->rng, BUCKETS);
	if (tf_writer_write(s->bw[b], d, n) != TF_OK) {
		die_status(tf_errcode(s->bw[b]), tf_errmsg(s->bw[b]));
	}
}

static int
shuffle_record(const uint8_t *d, size_t n, void *ctx)
{
	struct shuffler *s = ctx;
	if (s->spilled) {
		spill(s, d, n);
		return 0;
	}
	pool_add(&s->pool, d, n);
	if (s->pool.len + s->pool.n * 16 <= s->memory) {
		return 0;
	}
	/* Too much for memory: deal records into temporary buckets. */
	for (int b = 0; b < BUCKETS; b++) {
		if (s->bw[b] == NULL && (s->bw[b] = tf_writer_new()) == NULL) {
			die(EX_OSERR, "out of memory");
		}
		s->bucket[b] = tmpfile();
		if (s->bucket[b] == NULL ||
		    tf_writer_open_fd(s->bw[b], fileno(s->bucket[b]),
		                      "(temporary file)",
		                      TF_COMPRESS_NONE) != TF_OK) {
			die(EX_CANTCREAT, "cannot create a temporary file "
			                  "(see TMPDIR)");
		}
	}
	s->spilled = 1;
	for (size_t i = 0; i < s->pool.n; i++) {
		spill(s, s->pool.data + s->pool.off[i],
		      s->pool.off[i + 1] - s->pool.off[i]);
	}
	s->pool.len = s->pool.n = 0;
	return 0;
}

/* Write the level's records shuffled: from memory, or bucket by bucket
 * through the next level. */
static void
finish_shuffle(struct shuffler *s, struct tf_writer *out, int depth)
{
	if (!s->spilled) {
		pool_flush_shuffled(&s->pool, s->rng, out);
		return;
	}
	if (s->r == NULL && (s->r = tf_reader_new()) == NULL) {
		die(EX_OSERR, "out of memory");
	}
	for (int b = 0; b < BUCKETS; b++) {
		if (tf_writer_close(s->bw[b]) != TF_OK) {
			die_status(tf_errcode(s->bw[b]), tf_errmsg(s->bw[b]));
		}
		rewind(s->bucket[b]);
		if (tf_reader_open_fd(s->r, fileno(s->bucket[b]),
		                      "(temporary file)",
		                      TF_COMPRESS_NONE) != TF_OK) {
			die(EX_IOERR, "cannot read a temporary file");
		}
		shuffle_level(s->r, out, depth + 1);
		fclose(s->bucket[b]);
		s->bucket[b] = NULL;
	}
	s->spilled = 0;
}

static void
shuffle_level(struct tf_reader *r, struct tf_writer *out, int depth)
{
	struct shuffler *s = &levels[depth];
	s->rng = levels[0].rng;
	s->memory = depth >= MAX_DEPTH ? SIZE_MAX : levels[0].memory;
	s->spilled = 0;
	s->pool.len = s->pool.n = 0;
	const uint8_t *d;
	size_t n;
	int rc;
	while ((rc = tf_reader_next(r, &d, &n)) == TF_OK) {
		shuffle_record(d, n, s);
	}
	if (rc != TF_EOF) {
		die_status(rc, tf_errmsg(r));
	}
	finish_shuffle(s, out, depth);
}

static void
cmd_shuffle(void)
{
	static struct tf_rng rng;
	if (!O.seed_given) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		O.seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
		         (uint64_t)getpid();
	}
	tf_rng_seed(&rng, O.seed);
	struct tf_writer *out = open_output(O.output);
	levels[0].rng = &rng;
	levels[0].memory = O.memory;
	each_record(shuffle_record, &levels[0]);
	if (status == 0) {
		finish_shuffle(&levels[0], out, 0);
	}
	close_output(out);
	carry_schema(O.output, -1);
	for (int i = 0; i <= MAX_DEPTH; i++) {
		free(levels[i].pool.data);
		free(levels[i].pool.off);
		tf_reader_free(levels[i].r);
		for (int b = 0; b < BUCKETS; b++) {
			tf_writer_free(levels[i].bw[b]);
		}
	}
}

/* ---- main -----------------------------------------------------------------
 */

static size_t
parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	double mul = 1;
	if (end != s) {
		switch (*end) {
		case 'k':
		case 'K':
			mul = 1024.0;
			end++;
			break;
		case 'm':
		case 'M':
			mul = 1024.0 * 1024;
			end++;
			break;
		case 'g':
		case 'G':
			mul = 1024.0 * 1024 * 1024;
			end++;
			break;
		default:
			break;
		}
	}
	if (end == s || *end != '\0' || v <= 0 || v * mul < 4096) {
		usage_error(
		    "--memory: '%s' is not a size such as 64M (at least "
		    "4K)",
		    s);
	}
	return (size_t)(v * mul);
}

int
main(int argc, char **argv)
{
	tool_name = "tf-records";
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
	static const char *const cmds[] = {"cat",    "head",   "count",
	                                   "verify", "schema", "index",
	                                   "split",  "shuffle"};
	int known = 0;
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		known |= strcmp(cmd, cmds[i]) == 0;
	}
	if (!known) {
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
			O.memory = parse_size(optarg);
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
	if (O.csv && O.raw) {
		usage_error("--csv and --raw exclude each other");
	}
	ex = tf_example_new();
	reader = tf_reader_new();
	if (ex == NULL || reader == NULL) {
		die(EX_OSERR, "out of memory");
	}
	if (strcmp(cmd, "cat") == 0) {
		cmd_cat(0);
	} else if (strcmp(cmd, "head") == 0) {
		if (O.n == 0) {
			return 0;
		}
		cmd_cat((uint64_t)O.n);
	} else if (strcmp(cmd, "count") == 0) {
		cmd_count();
	} else if (strcmp(cmd, "verify") == 0) {
		cmd_verify();
	} else if (strcmp(cmd, "schema") == 0) {
		cmd_schema();
	} else if (strcmp(cmd, "index") == 0) {
		cmd_index();
	} else if (strcmp(cmd, "split") == 0) {
		cmd_split();
	} else {
		cmd_shuffle();
	}
	tf_example_free(ex);
	tf_reader_free(reader);
	if (fflush(stdout) != 0) {
		die(EX_IOERR, "write error");
	}
	return status;
}
