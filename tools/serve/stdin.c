/*
 * stdin.c - tf-serve --stdin: a filter from instances (JSON lines) or
 * records (--stdin-format tfrecord) on standard input to one prediction
 * a line, with the served version's model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tool.h"
#include "serve.h"

/* Records: their rows, 256 at a time, one prediction a line. */
static void
records(struct tf_model *m, struct tf_request *q)
{
	struct tf_dataset *ds = tf_dataset_new_on(tf_model_columns(m));
	static const char *files[] = {"-"};
	const char *out;
	size_t olen;
	if (ds == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	tf_dataset_set_label_optional(ds, 1);
	if (tf_dataset_open(ds, files, 1, 1, 1, 0) != TF_OK) {
		die_status(tf_errcode(ds), tf_errmsg(ds));
	}
	struct tf_batch b;
	if (tf_dataset_batch(ds, &b, 256) != TF_OK) {
		die(EX_SOFTWARE, "out of memory");
	}
	int rc;
	while ((rc = tf_dataset_read(ds, &b)) == TF_OK) {
		if (tf_request_set_rows(q, m, &b) != TF_OK ||
		    tf_request_predict(q, m) != TF_OK ||
		    tf_request_respond(q, m, &out, &olen) != TF_OK) {
			die(EX_SOFTWARE, "prediction failed: %s", tf_errmsg(q));
		}
		fwrite(out, 1, olen, stdout);
	}
	if (rc != TF_EOF) {
		die_status(rc, tf_errmsg(ds));
	}
	tf_batch_release(&b);
	tf_dataset_free(ds);
}

/* JSON lines: one instance each; blank lines are passed over. */
static void
instances(struct tf_model *m, struct tf_request *q)
{
	const char *out;
	size_t olen;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned long lineno = 0;
	while ((n = getline(&line, &cap, stdin)) >= 0) {
		lineno++;
		size_t k = (size_t)n;
		while (k > 0 && (line[k - 1] == '\n' || line[k - 1] == '\r' ||
		                 line[k - 1] == ' ')) {
			k--;
		}
		if (k == 0) {
			continue;
		}
		if (tf_request_parse(q, m, TF_METHOD_INSTANCE, line, k, 0) !=
		    TF_OK) {
			die(EX_DATAERR, "(stdin):%lu: %s", lineno,
			    tf_errmsg(q));
		}
		if (tf_request_predict(q, m) != TF_OK ||
		    tf_request_respond(q, m, &out, &olen) != TF_OK) {
			die(EX_SOFTWARE, "(stdin):%lu: prediction failed",
			    lineno);
		}
		fwrite(out, 1, olen, stdout);
		putchar('\n');
	}
	free(line);
	if (ferror(stdin)) {
		die(EX_IOERR, "(stdin): read error");
	}
}

int
serve_stdin(struct serve *sv, struct served *s, const char *format)
{
	(void)sv;
	struct version *v = serve_acquire(s, -1);
	struct tf_model *m = v->inst[0];
	struct tf_request *q = tf_request_new();
	if (q == NULL) {
		die(EX_SOFTWARE, "out of memory");
	}
	if (strcmp(format, "tfrecord") == 0) {
		records(m, q);
	} else {
		instances(m, q);
	}
	tf_request_free(q);
	serve_release(s, v);
	stdout_flush();
	return 0;
}
