/*
 * look.c - tf-records' commands that look at records: cat and head (JSON
 * lines, CSV or raw records), count, verify and index.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "records/records.h"

/* ---- cat / head -------------------------------------------------------- */

struct printer {
	uint64_t count, limit;
	char *buf;
	size_t len, cap;
	struct tf_writer *w;
	struct tf_csv_rows *csv; /* --csv */
	struct tf_example *show; /* ex with its images described */
	struct tf_image *im;
};

/* ex for reading: each encoded image (a bytes value that is a JPEG or
 * PNG) replaced by a line saying what it is, "PNG image 28x28x1, 627
 * bytes"; the example itself when it holds none, or with --bytes. */
static struct tf_example *
described(struct printer *p)
{
	size_t nf = tf_example_count(ex), images = 0;
	struct tf_feature f;
	for (size_t i = 0; i < nf && !O.bytes; i++) {
		tf_example_get(ex, i, &f);
		for (size_t k = 0; f.kind == TF_KIND_BYTES && k < f.count;
		     k++) {
			images += tf_image_sniff(f.bytes[k].data,
			                         f.bytes[k].len) != 0;
		}
	}
	if (images == 0) {
		return ex;
	}
	if ((p->show == NULL && (p->show = tf_example_new()) == NULL) ||
	    (p->im == NULL && (p->im = tf_image_new()) == NULL)) {
		die(EX_SOFTWARE, "out of memory");
	}
	tf_example_clear(p->show);
	int bad = 0;
	for (size_t i = 0; i < nf && !bad; i++) {
		tf_example_get(ex, i, &f);
		if (f.kind == TF_KIND_FLOAT) {
			bad = tf_example_add_floats(p->show, f.name, f.floats,
			                            f.count);
		} else if (f.kind == TF_KIND_INT64) {
			bad = tf_example_add_int64s(p->show, f.name, f.ints,
			                            f.count);
		} else if (f.kind == TF_KIND_BYTES) {
			struct tf_bytes *v = calloc(f.count + 1, sizeof *v);
			char(*text)[96] = calloc(f.count + 1, sizeof *text);
			bad = v == NULL || text == NULL;
			for (size_t k = 0; !bad && k < f.count; k++) {
				int fmt, h, w, c;
				v[k] = f.bytes[k];
				if (tf_image_sniff(v[k].data, v[k].len) == 0) {
					continue;
				}
				if (tf_image_probe(p->im, v[k].data, v[k].len,
				                   &fmt, &h, &w, &c) == TF_OK) {
					snprintf(text[k], sizeof text[k],
					         "%s image %dx%dx%d, %zu bytes",
					         tf_image_format_name(fmt), h,
					         w, c, v[k].len);
				} else {
					snprintf(text[k], sizeof text[k],
					         "damaged %s image, %zu bytes",
					         tf_image_format_name(fmt),
					         v[k].len);
				}
				v[k].data = (const uint8_t *)text[k];
				v[k].len = strlen(text[k]);
			}
			bad = bad ||
			      tf_example_add_bytes(p->show, f.name, v, f.count);
			free(v);
			free(text);
		}
	}
	if (bad) {
		die(EX_SOFTWARE, "out of memory");
	}
	return p->show;
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
		const char *text;
		size_t len;
		if (tf_csv_rows_add(p->csv, described(p), &text, &len) !=
		    TF_OK) {
			die_status(tf_errcode(p->csv), tf_errmsg(p->csv));
		}
		fwrite(text, 1, len, stdout);
	} else {
		p->len = 0;
		if (tf_example_to_json(described(p), &p->buf, &p->len,
		                       &p->cap) != TF_OK) {
			die(EX_SOFTWARE, "out of memory");
		}
		fwrite(p->buf, 1, p->len, stdout);
		putchar('\n');
	}
	p->count++;
	return 0;
}

struct tf_writer *
open_output(const char *path)
{
	check_binary_stdout(path);
	return output_open(path, O.out_comp);
}

/* Rename the output into place, unless an input failed: then the exit
 * handler removes it, so an error leaves no partial output. */
void
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
		die(EX_SOFTWARE, "out of memory");
	}
	int type;
	for (size_t i = 0; i < n; i++) {
		names[k++] = tf_schema_feature(s, i, &type);
	}
	if (tf_schema_label(s) != NULL) {
		names[k++] = tf_schema_label(s);
	}
	if (tf_schema_packed(s) == NULL && n > 0 &&
	    tf_csv_rows_columns(c, names, k) != TF_OK) {
		die(EX_SOFTWARE, "out of memory");
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
		die(EX_SOFTWARE, "out of memory");
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
	tf_example_free(p.show);
	tf_image_free(p.im);
	free(p.buf);
	stdout_flush();
}

void
cmd_cat_all(void)
{
	cmd_cat(0);
}

void
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

void
cmd_count(void)
{
	char **files = O.files;
	int nfiles = O.nfiles;
	uint64_t total = 0, *each = calloc((size_t)nfiles + 1, sizeof *each);
	if (each == NULL) {
		die(EX_SOFTWARE, "out of memory");
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

void
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

void
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
