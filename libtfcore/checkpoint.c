/*
 * checkpoint.c - checkpoints as TFRecord files, with TensorFlow's
 * "checkpoint" pointer file.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "tf/checkpoint.h"
#include "tf/file.h"
#include "tf/record.h"

#define MAGIC         "tfkit-checkpoint 1\n"
#define MAX_KEEP_LIST 1000

struct block {
	char *name;
	const float *ref; /* saving */
	float *own;       /* loaded */
	size_t n;
};

struct tf_ckpt {
	struct tfi_handle err;
	char *header;
	struct block *b;
	size_t nb, cap;
	char path[PATH_MAX];
};

struct tf_ckpt *
tf_ckpt_new(void)
{
	return calloc(1, sizeof(struct tf_ckpt));
}

void
tf_ckpt_clear(struct tf_ckpt *c)
{
	for (size_t i = 0; i < c->nb; i++) {
		free(c->b[i].name);
		free(c->b[i].own);
	}
	c->nb = 0;
}

void
tf_ckpt_free(struct tf_ckpt *c)
{
	if (c != NULL) {
		tf_ckpt_clear(c);
		free(c->b);
		free(c->header);
		free(c);
	}
}

int
tf_ckpt_set_header(struct tf_ckpt *c, const char *json)
{
	free(c->header);
	c->header = strdup(json);
	return c->header ? TF_OK : tfi_set_error(c, TF_ENOMEM, "out of memory");
}

static struct block *
push(struct tf_ckpt *c, const char *name)
{
	if (c->nb == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		struct block *b = realloc(c->b, cap * sizeof *b);
		if (b == NULL) {
			return NULL;
		}
		c->b = b;
		c->cap = cap;
	}
	struct block *b = &c->b[c->nb];
	memset(b, 0, sizeof *b);
	if ((b->name = strdup(name)) == NULL) {
		return NULL;
	}
	c->nb++;
	return b;
}

int
tf_ckpt_add(struct tf_ckpt *c, const char *name, const float *data, size_t n)
{
	struct block *b = push(c, name);
	if (b == NULL) {
		return tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	b->ref = data;
	b->n = n;
	return TF_OK;
}

/* The checkpoint names the pointer file lists, oldest first. */
static size_t
read_pointer(const char *dir, char names[][64], size_t max, char *latest)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/checkpoint", dir);
	FILE *f = fopen(p, "r");
	size_t n = 0;
	latest[0] = '\0';
	if (f == NULL) {
		return 0;
	}
	char line[512];
	while (fgets(line, sizeof line, f) != NULL) {
		char name[64];
		if (sscanf(line, "model_checkpoint_path: \"%63[^\"]\"", name) ==
		    1) {
			snprintf(latest, 64, "%s", name);
		} else if (names != NULL && n < max &&
		           sscanf(line,
		                  "all_model_checkpoint_paths: \"%63[^\"]\"",
		                  name) == 1) {
			snprintf(names[n++], 64, "%s", name);
		}
	}
	fclose(f);
	return n;
}

int
tf_ckpt_save(struct tf_ckpt *c, const char *dir, uint64_t step, int keep)
{
	char name[64];
	snprintf(name, sizeof name, "model.ckpt-%llu",
	         (unsigned long long)step);
	snprintf(c->path, sizeof c->path, "%s/%s", dir, name);
	struct tf_writer *w = tf_writer_new();
	if (w == NULL) {
		return tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	struct tfi_buf rec = {0};
	int rc = tf_writer_open(w, c->path, TF_COMPRESS_NONE, TF_WRITER_SYNC);
	if (rc == TF_OK) {
		rc =
		    tfi_buf_append(&rec, MAGIC, strlen(MAGIC)) ||
		            tfi_buf_append(&rec, c->header ? c->header : "{}",
		                           strlen(c->header ? c->header : "{}"))
		        ? TF_ENOMEM
		        : tf_writer_write(w, rec.data, rec.len);
	}
	for (size_t i = 0; i < c->nb && rc == TF_OK; i++) {
		rec.len = 0;
		rc =
		    tfi_buf_append(&rec, c->b[i].name, strlen(c->b[i].name) + 1)
		        ? TF_ENOMEM
		        : TF_OK;
		/* float32, little-endian */
		for (size_t k = 0; k < c->b[i].n && rc == TF_OK; k++) {
			uint8_t le[4];
			uint32_t u;
			memcpy(&u, &c->b[i].ref[k], 4);
			tfi_put_le32(le, u);
			rc = tfi_buf_append(&rec, le, 4) ? TF_ENOMEM : TF_OK;
		}
		if (rc == TF_OK) {
			rc = tf_writer_write(w, rec.data, rec.len);
		}
	}
	if (rc == TF_OK) {
		rc = tf_writer_close(w);
	}
	tfi_buf_free(&rec);
	if (rc != TF_OK) {
		rc = tfi_set_error(
		    c, rc == TF_ENOMEM ? TF_ENOMEM : tf_errcode(w), "%s",
		    rc == TF_ENOMEM ? "out of memory" : tf_errmsg(w));
		tf_writer_free(w); /* removes the temporary file */
		return rc;
	}
	tf_writer_free(w); /* published and its directory synced */
	/* The pointer file: the newest `keep`, this one last. */
	char(*names)[64] = malloc(MAX_KEEP_LIST * sizeof *names);
	char latest[64];
	if (names == NULL) {
		return tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	size_t n = read_pointer(dir, names, MAX_KEEP_LIST - 1, latest);
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(names[i], name) != 0) {
			memmove(names[j++], names[i], 64);
		}
	}
	n = j;
	memcpy(names[n++], name, sizeof name);
	size_t first = keep > 0 && n > (size_t)keep ? n - (size_t)keep : 0;
	struct tfi_buf text = {0};
	char line[128];
	snprintf(line, sizeof line, "model_checkpoint_path: \"%s\"\n", name);
	rc = tfi_json_put(&text, line, strlen(line));
	for (size_t i = first; i < n && rc == TF_OK; i++) {
		snprintf(line, sizeof line,
		         "all_model_checkpoint_paths: \"%s\"\n", names[i]);
		rc = tfi_json_put(&text, line, strlen(line));
	}
	if (rc == TF_OK) {
		char p[PATH_MAX], msg[TFI_MSG_MAX];
		snprintf(p, sizeof p, "%s/checkpoint", dir);
		rc = tf_file_replace(p, text.data, text.len, TF_FILE_SYNC, msg,
		                     sizeof msg);
		if (rc != TF_OK) {
			tfi_set_error(c, rc, "%s", msg);
		}
	}
	tfi_buf_free(&text);
	if (rc == TF_OK) {
		tfi_sync_dir(dir);
		for (size_t i = 0; i < first; i++) {
			char old[PATH_MAX];
			snprintf(old, sizeof old, "%s/%s", dir, names[i]);
			unlink(old);
		}
	}
	free(names);
	if (rc != TF_OK) {
		return rc == TF_ENOMEM
		           ? tfi_set_error(c, TF_ENOMEM, "out of memory")
		           : rc;
	}
	return TF_OK;
}

int
tf_ckpt_latest(const char *dir, char *path, size_t size)
{
	char latest[64];
	read_pointer(dir, NULL, 0, latest);
	if (latest[0] == '\0') {
		return TF_ENOENT;
	}
	snprintf(path, size, "%s/%s", dir, latest);
	return TF_OK;
}

int
tf_ckpt_load(struct tf_ckpt *c, const char *path)
{
	tf_ckpt_clear(c);
	char p[PATH_MAX];
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		if (tf_ckpt_latest(path, p, sizeof p) != TF_OK) {
			return tfi_set_error(
			    c, TF_ENOENT,
			    "%s: no checkpoint (no 'checkpoint' "
			    "file naming one)",
			    path);
		}
	} else {
		snprintf(p, sizeof p, "%s", path);
	}
	snprintf(c->path, sizeof c->path, "%s", p);
	struct tf_reader *r = tf_reader_new();
	if (r == NULL) {
		return tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	int rc = tf_reader_open(r, p, TF_COMPRESS_NONE);
	const uint8_t *d;
	size_t n;
	if (rc == TF_OK && (rc = tf_reader_next(r, &d, &n)) == TF_OK) {
		size_t ml = strlen(MAGIC);
		if (n < ml || memcmp(d, MAGIC, ml) != 0) {
			rc = tfi_set_error(c, TF_EFORMAT,
			                   "%s: not a tfkit checkpoint", p);
		} else {
			free(c->header);
			c->header = malloc(n - ml + 1);
			if (c->header == NULL) {
				rc = TF_ENOMEM;
			} else {
				memcpy(c->header, d + ml, n - ml);
				c->header[n - ml] = '\0';
			}
		}
	}
	while (rc == TF_OK && (rc = tf_reader_next(r, &d, &n)) == TF_OK) {
		const uint8_t *nul = memchr(d, 0, n);
		size_t vals = nul ? n - (size_t)(nul - d) - 1 : 0;
		if (nul == NULL || vals % 4 != 0) {
			rc = tfi_set_error(
			    c, TF_EFORMAT, "%s: record %llu is not a block", p,
			    (unsigned long long)tf_reader_count(r) - 1);
			break;
		}
		struct block *b = push(c, (const char *)d);
		if (b == NULL || (b->own = malloc(vals + 4)) == NULL) {
			rc = TF_ENOMEM;
			break;
		}
		b->n = vals / 4;
		for (size_t k = 0; k < b->n; k++) {
			uint32_t u = tfi_get_le32(nul + 1 + 4 * k);
			memcpy(&b->own[k], &u, 4);
		}
	}
	if (rc == TF_EOF) {
		rc = c->header ? TF_OK
		               : tfi_set_error(c, TF_EFORMAT, "%s: empty", p);
	} else if (rc == TF_ENOMEM) {
		rc = tfi_set_error(c, TF_ENOMEM, "out of memory");
	} else if (c->err.code == TF_OK) {
		rc = tfi_set_error(c, tf_errcode(r), "checkpoint %s",
		                   tf_errmsg(r));
	}
	tf_reader_free(r);
	return rc;
}

const char *
tf_ckpt_header(const struct tf_ckpt *c)
{
	return c->header ? c->header : "";
}

const float *
tf_ckpt_get(const struct tf_ckpt *c, const char *name, size_t *n)
{
	for (size_t i = 0; i < c->nb; i++) {
		if (strcmp(c->b[i].name, name) == 0) {
			*n = c->b[i].n;
			return c->b[i].own ? c->b[i].own : c->b[i].ref;
		}
	}
	return NULL;
}

const char *
tf_ckpt_path(const struct tf_ckpt *c)
{
	return c->path;
}
