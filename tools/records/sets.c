/*
 * sets.c - tf-records' commands that make sets of records: schema (a
 * sidecar from every record), split (round-robin shards, or one), and
 * shuffle (an external-memory shuffle); and the schema carried along.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "records/records.h"

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
		die(EX_SOFTWARE, "out of memory");
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
		warnx_("left out (not one fixed-length value in every record; "
		       "beside sparse ids, not one number): %s",
		       skipped);
	}
	tf_schema_free(sc);
}

void
cmd_schema(void)
{
	static struct tf_survey *s;
	if ((s = tf_survey_new()) == NULL) {
		die(EX_SOFTWARE, "out of memory");
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
			die(EX_SOFTWARE, "out of memory");
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
void
carry_schema(const char *out, long long rows)
{
	if (status != 0) {
		return;
	}
	struct tf_schema *s = tf_schema_new();
	if (s == NULL) {
		die(EX_SOFTWARE, "out of memory");
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

void
cmd_split(void)
{
	struct splitter s = {0};
	if (O.shard_n) {
		s.n = O.shard_n;
		s.w = calloc(1, sizeof *s.w);
		if (s.w == NULL) {
			die(EX_SOFTWARE, "out of memory");
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
			die(EX_SOFTWARE, "out of memory");
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

void
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
		die(EX_SOFTWARE, "out of memory");
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
