/*
 * online.c - online learning's two pieces: a :train body (tfkit's own
 * REST method, beside TF Serving's :predict) made into records, and the
 * queue on disk between tf-serve, which appends what it acknowledges,
 * and tf-train --stream, which trains it.
 *
 * The queue is a directory of segments, NNNNNNNNNNNNNNNNNNNN.tfrecord
 * (the segment's number in 20 decimal digits, so names sort as numbers),
 * each plain TFRecords.  The writer appends whole records and syncs them
 * before they are acknowledged, and begins the next segment when one
 * reaches its size; a reader (record.c, a directory in follow mode) reads
 * the segments in order as one stream, and a trainer releases (deletes)
 * the segments before the one its latest checkpoint stands in.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "tf/columns.h"
#include "tf/crc32c.h"
#include "tf/example.h"
#include "tf/image.h"
#include "tf/model.h"
#include "tf/queue.h"
#include "tf/record.h"
#include "tf/schema.h"
#include "tf/serving.h"

/* ---- the queue's segments ------------------------------------------------ */

void
tfi_queue_path(char *buf, size_t size, const char *dir, uint64_t seg)
{
	snprintf(buf, size, "%s/%020" PRIu64 ".tfrecord", dir, seg);
}

/* A segment's number from its name: 0 and *seg, -1 for another name. */
static int
segment_number(const char *name, uint64_t *seg)
{
	if (strlen(name) != 29 || strcmp(name + 20, ".tfrecord") != 0 ||
	    strspn(name, "0123456789") != 20) {
		return -1;
	}
	*seg = strtoull(name, NULL, 10);
	return *seg < TFI_QUEUE_MAX_SEGMENT ? 0 : -1;
}

int
tfi_queue_find(const char *dir, uint64_t from, uint64_t *seg)
{
	DIR *d = opendir(dir);
	if (d == NULL) {
		return -1;
	}
	int found = -1;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		uint64_t k;
		if (segment_number(e->d_name, &k) == 0 && k >= from &&
		    (found != 0 || k < *seg)) {
			*seg = k;
			found = 0;
		}
	}
	closedir(d);
	return found;
}

struct tf_queue {
	struct tfi_handle err;
	char *dir;
	int fd;            /* the segment appended to */
	uint64_t seg;      /* its number */
	uint64_t size;     /* its bytes */
	uint64_t max;      /* a segment's bytes before the next begins */
	uint64_t appended; /* records appended since opened */
};

struct tf_queue *
tf_queue_new(void)
{
	struct tf_queue *q = calloc(1, sizeof *q);
	if (q != NULL) {
		q->fd = -1;
	}
	return q;
}

void
tf_queue_free(struct tf_queue *q)
{
	if (q != NULL) {
		if (q->fd >= 0) {
			close(q->fd);
		}
		free(q->dir);
		free(q);
	}
}

static int
sync_dir(struct tf_queue *q)
{
	int fd = open(q->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) != 0) {
		int e = errno;
		if (fd >= 0) {
			close(fd);
		}
		return tfi_set_errno(q, TF_EIO, e, "%s: cannot sync", q->dir);
	}
	close(fd);
	return TF_OK;
}

/* Begin segment seg (new: it must not exist). */
static int
begin_segment(struct tf_queue *q, uint64_t seg)
{
	char path[4200];
	if (seg >= TFI_QUEUE_MAX_SEGMENT) {
		return tfi_set_error(q, TF_ETOOBIG,
		                     "%s: the queue has used its %llu segment "
		                     "numbers",
		                     q->dir,
		                     (unsigned long long)TFI_QUEUE_MAX_SEGMENT);
	}
	tfi_queue_path(path, sizeof path, q->dir, seg);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC,
	              0644);
	if (fd < 0) {
		return tfi_set_errno(q, TF_ECREATE, errno, "cannot create '%s'",
		                     path);
	}
	if (q->fd >= 0) {
		close(q->fd);
	}
	q->fd = fd;
	q->seg = seg;
	q->size = 0;
	return sync_dir(q);
}

/*
 * The end of the last whole record of the open segment (size bytes):
 * frames are walked by their checked lengths.  A frame cut short at the
 * end (a writer stopped mid-append, never acknowledged) ends the walk; a
 * header that fails its checksum is damage.
 */
static int
whole_end(struct tf_queue *q, uint64_t size, uint64_t *end)
{
	uint64_t at = 0;
	while (at + 12 <= size) {
		uint8_t h[12];
		if (pread(q->fd, h, 12, (off_t)at) != 12) {
			return tfi_set_errno(
			    q, TF_EIO, errno, "%s: segment %llu: read failed",
			    q->dir, (unsigned long long)q->seg);
		}
		if (tf_crc32c_mask(tf_crc32c(h, 8)) != tfi_get_le32(h + 8)) {
			return tfi_set_error(
			    q, TF_EFORMAT,
			    "%s: segment %llu: damaged record at %llu (length "
			    "checksum mismatch); the queue is not appended to",
			    q->dir, (unsigned long long)q->seg,
			    (unsigned long long)at);
		}
		uint64_t n = tfi_get_le64(h);
		if (n > size || at + 16 + n > size) {
			break;
		}
		at += 16 + n;
	}
	*end = at;
	return TF_OK;
}

int
tf_queue_open(struct tf_queue *q, const char *dir, uint64_t segment_bytes,
              uint64_t *dropped)
{
	*dropped = 0;
	free(q->dir);
	if ((q->dir = strdup(dir)) == NULL) {
		return tfi_set_error(q, TF_ENOMEM, "out of memory");
	}
	q->max = segment_bytes > 0 ? segment_bytes : (uint64_t)64 << 20;
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		return tfi_set_errno(q, TF_ECREATE, errno, "cannot create '%s'",
		                     dir);
	}
	/* the highest segment there, appended to */
	uint64_t seg = 0, last = 0;
	int any = 0;
	while (tfi_queue_find(dir, seg, &seg) == 0) {
		last = seg++;
		any = 1;
	}
	if (!any) {
		return begin_segment(q, 0);
	}
	char path[4200];
	tfi_queue_path(path, sizeof path, dir, last);
	int fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		int e = errno;
		if (fd >= 0) {
			close(fd);
		}
		return tfi_set_errno(q, TF_ENOENT, e, "cannot open '%s'", path);
	}
	if (q->fd >= 0) {
		close(q->fd);
	}
	q->fd = fd;
	q->seg = last;
	uint64_t end = 0;
	int rc = whole_end(q, (uint64_t)st.st_size, &end);
	if (rc != TF_OK) {
		return rc;
	}
	if (end < (uint64_t)st.st_size) {
		/* never acknowledged: the append was not synced whole */
		if (ftruncate(fd, (off_t)end) != 0 || fdatasync(fd) != 0) {
			return tfi_set_errno(q, TF_EIO, errno,
			                     "%s: cannot truncate", path);
		}
		*dropped = (uint64_t)st.st_size - end;
	}
	q->size = end;
	return TF_OK;
}

int
tf_queue_append(struct tf_queue *q, const void *records, size_t n)
{
	if (q->fd < 0) {
		return tfi_set_error(q, TF_EINVAL, "the queue is not open");
	}
	if (q->size > 0 && q->size + n > q->max &&
	    begin_segment(q, q->seg + 1) != TF_OK) {
		return q->err.code;
	}
	const uint8_t *p = records;
	size_t left = n;
	while (left > 0) {
		ssize_t k = write(q->fd, p, left);
		if (k < 0 && errno == EINTR) {
			continue;
		}
		if (k <= 0) {
			int e = k < 0 ? errno : ENOSPC;
			/* nothing half-written stays: the append is undone */
			if (ftruncate(q->fd, (off_t)q->size) != 0) {
				e = errno;
			}
			return tfi_set_errno(
			    q, TF_EIO, e, "%s: segment %llu: write failed",
			    q->dir, (unsigned long long)q->seg);
		}
		p += k;
		left -= (size_t)k;
	}
	if (fdatasync(q->fd) != 0) {
		int e = errno;
		if (ftruncate(q->fd, (off_t)q->size) != 0) {
			e = errno;
		}
		return tfi_set_errno(q, TF_EIO, e,
		                     "%s: segment %llu: sync failed", q->dir,
		                     (unsigned long long)q->seg);
	}
	q->size += n;
	return TF_OK;
}

uint64_t
tf_queue_depth(const char *dir, uint64_t *segments)
{
	uint64_t bytes = 0, n = 0, seg = 0;
	char path[4200];
	while (tfi_queue_find(dir, seg, &seg) == 0) {
		struct stat st;
		tfi_queue_path(path, sizeof path, dir, seg);
		if (stat(path, &st) == 0) {
			bytes += (uint64_t)st.st_size;
			n++;
		}
		seg++;
	}
	if (segments != NULL) {
		*segments = n;
	}
	return bytes;
}

int
tf_queue_release(const char *dir, uint64_t offset, uint64_t *released)
{
	uint64_t upto = offset >> TFI_QUEUE_SHIFT, seg = 0;
	*released = 0;
	char path[4200];
	while (tfi_queue_find(dir, seg, &seg) == 0 && seg < upto) {
		tfi_queue_path(path, sizeof path, dir, seg);
		if (unlink(path) != 0 && errno != ENOENT) {
			return TF_EIO;
		}
		(*released)++;
		seg++;
	}
	return TF_OK;
}

/* ---- :train bodies ------------------------------------------------------- */

/* A schema's type name as TF_COL_* (float for none). */
static int
col_type(json_t *v)
{
	const char *t = json_string_value(v);
	return t != NULL ? tf_coltype_parse(t) : TF_COL_FLOAT;
}

/* Each input's type (TF_COL_*): the schema's for its features, the
 * signature's for an input the schema does not list by name (a packed
 * list, sparse ids); an object of name: type, or NULL. */
static json_t *
feature_types(json_t *schema, json_t *sig)
{
	json_t *types = json_object();
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(sig, "inputs"), i, f)
	{
		const char *n = json_string_value(json_object_get(f, "name"));
		const char *t = json_string_value(json_object_get(f, "dtype"));
		int type =
		    t != NULL && strcmp(t, "DT_INT64") == 0    ? TF_COL_INT64
		    : t != NULL && strcmp(t, "DT_STRING") == 0 ? TF_COL_BYTES
		                                               : TF_COL_FLOAT;
		if (n != NULL &&
		    json_object_set_new(types, n, json_integer(type)) != 0) {
			json_decref(types);
			return NULL;
		}
	}
	json_array_foreach(json_object_get(schema, "features"), i, f)
	{
		const char *n = json_string_value(json_object_get(f, "name"));
		if (n != NULL &&
		    json_object_set_new(types, n,
		                        json_integer(col_type(json_object_get(
		                            f, "type")))) != 0) {
			json_decref(types);
			return NULL;
		}
	}
	return types;
}

/* A whole number of JSON (an integer, or a real without a fraction). */
static int
whole(json_t *v, int64_t *out)
{
	if (json_is_integer(v)) {
		*out = (int64_t)json_integer_value(v);
		return 1;
	}
	double d = json_is_real(v) ? json_real_value(v) : NAN;
	if (isfinite(d) && d == floor(d) && fabs(d) < 9.2e18) {
		*out = (int64_t)d;
		return 1;
	}
	return 0;
}

struct values {
	float *f;
	int64_t *i;
	struct tf_bytes *s;
	size_t n, cap;
};

/* v's values (a value, or nested lists of them) of type into vs. */
static int
collect(struct tf_request *q, struct values *vs, json_t *v, int type,
        const char *what, size_t row, int depth)
{
	if (json_is_array(v) && depth < 8) {
		size_t i;
		json_t *e;
		json_array_foreach(v, i, e)
		{
			int rc = collect(q, vs, e, type, what, row, depth + 1);
			if (rc != TF_OK) {
				return rc;
			}
		}
		return TF_OK;
	}
	if (vs->n == vs->cap) {
		size_t cap = vs->cap ? vs->cap * 2 : 64;
		float *f = realloc(vs->f, cap * sizeof *f);
		vs->f = f ? f : vs->f;
		int64_t *i = f ? realloc(vs->i, cap * sizeof *i) : NULL;
		vs->i = i ? i : vs->i;
		struct tf_bytes *s = i ? realloc(vs->s, cap * sizeof *s) : NULL;
		vs->s = s ? s : vs->s;
		if (s == NULL) {
			return tfi_set_error(q, TF_ENOMEM, "out of memory");
		}
		vs->cap = cap;
	}
	size_t k = vs->n;
	uint64_t id;
	if (type == TF_COL_BYTES && json_is_string(v)) {
		vs->s[k].data = (const uint8_t *)json_string_value(v);
		vs->s[k].len = json_string_length(v);
	} else if (type == TF_COL_INT64 && whole(v, &vs->i[k])) {
		/* taken */
	} else if (type == TF_COL_INT64 && json_is_string(v) &&
	           tfi_json_id(v, &id)) {
		/* an id past 2^63 - 1, as :predict takes it: its bits */
		memcpy(&vs->i[k], &id, sizeof id);
	} else if (type == TF_COL_FLOAT && json_is_number(v)) {
		vs->f[k] = (float)json_number_value(v);
	} else {
		return tfi_request_bad(q,
		                       "row %zu: '%s' is not %s (:train takes "
		                       "numbers, strings and lists of them)",
		                       row, what,
		                       type == TF_COL_BYTES   ? "a string"
		                       : type == TF_COL_INT64 ? "a whole number"
		                                              : "a number");
	}
	vs->n++;
	return TF_OK;
}

/* Feature name of row's Example from v, typed as type. */
static int
add_feature(struct tf_request *q, struct tf_example *ex, struct values *vs,
            const char *name, json_t *v, int type, size_t row)
{
	vs->n = 0;
	int rc = collect(q, vs, v, type, name, row, 0);
	if (rc != TF_OK) {
		return rc;
	}
	rc = type == TF_COL_BYTES ? tf_example_add_bytes(ex, name, vs->s, vs->n)
	     : type == TF_COL_INT64
	         ? tf_example_add_int64s(ex, name, vs->i, vs->n)
	         : tf_example_add_floats(ex, name, vs->f, vs->n);
	return rc == TF_OK ? TF_OK
	                   : tfi_request_bad(q, "row %zu: '%s': %s", row, name,
	                                     tf_errmsg(ex));
}

/* A label the model knows: of the label's type, and one of its classes
 * when the schema lists them. */
static int
check_label(struct tf_request *q, json_t *label, json_t *v, size_t row)
{
	const char *name = json_string_value(json_object_get(label, "name"));
	int type = col_type(json_object_get(label, "type"));
	json_t *classes = json_object_get(label, "classes");
	int64_t k;
	int ok = type == TF_COL_BYTES   ? json_is_string(v)
	         : type == TF_COL_INT64 ? whole(v, &k)
	                                : json_is_number(v);
	if (!ok) {
		return tfi_request_bad(q, "row %zu: the label '%s' is not %s",
		                       row, name ? name : "",
		                       type == TF_COL_BYTES   ? "a string"
		                       : type == TF_COL_INT64 ? "a whole number"
		                                              : "a number");
	}
	if (!json_is_array(classes) || json_array_size(classes) == 0) {
		return TF_OK;
	}
	size_t i;
	json_t *c;
	json_array_foreach(classes, i, c)
	{
		int64_t ck;
		if ((json_is_string(c) && json_is_string(v) &&
		     strcmp(json_string_value(c), json_string_value(v)) == 0) ||
		    (whole(c, &ck) && type != TF_COL_BYTES && ck == k)) {
			return TF_OK;
		}
	}
	char *text = json_dumps(v, JSON_ENCODE_ANY);
	int rc =
	    tfi_request_bad(q,
	                    "row %zu: the label %.100s is not one of "
	                    "the model's %zu classes",
	                    row, text ? text : "?", json_array_size(classes));
	free(text);
	return rc;
}

/*
 * The rows of a :train body as objects of features (new references in
 * rows) and their labels (borrowed): "examples" (objects holding the
 * label by name), or "instances" (objects, or lists in the signature's
 * order) or columnar "inputs", each with "labels".
 */
static int
train_rows(struct tf_request *q, json_t *root, json_t *sig, const char *label,
           json_t *rows, json_t *labels, size_t max_rows)
{
	json_t *ex = json_object_get(root, "examples");
	json_t *in = json_object_get(root, "instances");
	json_t *cols = json_object_get(root, "inputs");
	json_t *labs = json_object_get(root, "labels");
	if ((ex != NULL) + (in != NULL) + (cols != NULL) != 1) {
		return tfi_request_bad(q,
		                       "a :train body has one of \"examples\" "
		                       "(objects with their label), or "
		                       "\"instances\" or \"inputs\" with "
		                       "\"labels\"");
	}
	if (ex == NULL && !json_is_array(labs)) {
		return tfi_request_bad(q, "\"labels\" is missing: a list, one "
		                          "label a row");
	}
	size_t n = ex                     ? json_array_size(ex)
	           : in                   ? json_array_size(in)
	           : json_is_object(cols) ? json_array_size(labs)
	                                  : 0;
	if ((ex && !json_is_array(ex)) || (in && !json_is_array(in)) ||
	    (cols && !json_is_object(cols)) || n == 0) {
		return tfi_request_bad(q, "no rows to train on (a non-empty "
		                          "list of examples or instances, or "
		                          "an object of inputs)");
	}
	if (max_rows > 0 && n > max_rows) {
		return tfi_request_bad(q,
		                       "%zu rows: more than the %zu a request "
		                       "may hold",
		                       n, max_rows);
	}
	if (ex == NULL && json_array_size(labs) != n) {
		return tfi_request_bad(q, "%zu labels for %zu rows",
		                       json_array_size(labs), n);
	}
	json_t *inputs = json_object_get(sig, "inputs");
	for (size_t r = 0; r < n; r++) {
		json_t *row, *lab = NULL, *o = json_array_get(ex ? ex : in, r);
		const char *key;
		json_t *v;
		if (json_is_object(o)) {
			/* the body's own object, the label taken out of it */
			lab = ex != NULL ? json_object_get(o, label) : NULL;
			if (ex != NULL && lab == NULL) {
				return tfi_request_bad(
				    q, "example %zu has no label '%s'", r,
				    label);
			}
			json_incref(lab); /* kept: taken out of o */
			if (lab != NULL && json_object_del(o, label) != 0) {
				json_decref(lab);
				return tfi_set_error(q, TF_ENOMEM,
				                     "out of memory");
			}
			if (json_array_append(rows, o) != 0) {
				json_decref(lab);
				return tfi_set_error(q, TF_ENOMEM,
				                     "out of memory");
			}
			row = o;
		} else if (ex != NULL) {
			return tfi_request_bad(
			    q, "example %zu is not an object", r);
		} else if ((row = json_object()) == NULL ||
		           json_array_append_new(rows, row) != 0) {
			return tfi_set_error(q, TF_ENOMEM, "out of memory");
		}
		if (json_is_object(o)) {
			/* taken whole */
		} else if (in != NULL) {
			json_t *a = json_array_get(in, r);
			if (!json_is_array(a) ||
			    json_array_size(a) != json_array_size(inputs)) {
				return tfi_request_bad(
				    q,
				    "instance %zu: an object of inputs, or a "
				    "list of the %zu inputs in the signature's "
				    "order",
				    r, json_array_size(inputs));
			}
			size_t i;
			json_array_foreach(a, i, v)
			{
				const char *name =
				    json_string_value(json_object_get(
				        json_array_get(inputs, i), "name"));
				json_object_set(row, name ? name : "", v);
			}
		} else {
			json_object_foreach(cols, key, v)
			{
				if (!json_is_array(v) ||
				    json_array_size(v) != n) {
					return tfi_request_bad(
					    q,
					    "input '%s': a list of %zu values, "
					    "one a row",
					    key, n);
				}
				json_object_set(row, key, json_array_get(v, r));
			}
		}
		if ((lab != NULL ? json_array_append_new(labels, lab)
		                 : json_array_append(
		                       labels, json_array_get(labs, r))) != 0) {
			return tfi_set_error(q, TF_ENOMEM, "out of memory");
		}
	}
	return TF_OK;
}

/* ---- the usual :train body, scanned ------------------------------------- */

/*
 * Most clients of a model of numeric columns send
 *	{"examples": [{"NAME": number, ..., "LABEL": number}, ...]}
 * Scanned without a JSON tree and encoded straight into records, such a
 * body costs a fraction of the tree's parse.  Anything else, every error
 * included, is left to the full path, which names what is wrong.
 */
#define QUICK_MAX_COLUMNS 256

struct quick_col {
	const char *name;
	size_t len;
	int type; /* TF_COL_INT64 or TF_COL_FLOAT */
	float f;
	int64_t i;
	uint32_t seen; /* the row it was last set in, + 1 */
};

/* Feature k's Feature message (float_list or int64_list of one value):
 * its bytes into p (when not NULL); its size. */
static size_t
feature_value(const struct quick_col *k, uint8_t *p)
{
	if (k->type == TF_COL_FLOAT) {
		if (p != NULL) {
			uint8_t v[8] = {0x12, 0x06, 0x0a, 0x04};
			memcpy(v + 4, &k->f,
			       4); /* little-endian, as the wire */
			memcpy(p, v, 8);
		}
		return 8;
	}
	size_t l = tfi_varint_size((uint64_t)k->i);
	if (p != NULL) {
		*p++ = 0x1a;
		*p++ = (uint8_t)(l + 2);
		*p++ = 0x0a;
		*p++ = (uint8_t)l;
		tfi_put_varint(p, (uint64_t)k->i);
	}
	return 4 + l;
}

/* One row's record (an Example of the columns) appended to q->train. */
static int
quick_record(struct tf_request *q, const struct quick_col *k, size_t n)
{
	size_t feats = 0;
	for (size_t c = 0; c < n; c++) {
		size_t e = 2 + k[c].len + 2 + feature_value(&k[c], NULL);
		feats += 1 + tfi_varint_size(e) + e;
	}
	size_t ex = 1 + tfi_varint_size(feats) + feats;
	if (tfi_buf_reserve(&q->train, ex + 16) != 0) {
		return tfi_set_error(q, TF_ENOMEM, "out of memory");
	}
	uint8_t *rec = q->train.data + q->train.len, *p = rec + 12;
	*p++ = 0x0a;
	p = tfi_put_varint(p, feats);
	for (size_t c = 0; c < n; c++) {
		size_t v = feature_value(&k[c], NULL);
		size_t e = 2 + k[c].len + 2 + v;
		*p++ = 0x0a;
		p = tfi_put_varint(p, e);
		*p++ = 0x0a;
		*p++ = (uint8_t)k[c].len;
		memcpy(p, k[c].name, k[c].len);
		p += k[c].len;
		*p++ = 0x12;
		*p++ = (uint8_t)v;
		p += feature_value(&k[c], p);
	}
	tfi_record_frame_inplace(rec, ex);
	q->train.len += ex + 16;
	return TF_OK;
}

/* A whole number in JSON's syntax (no fraction or exponent). */
static int
scan_whole(struct tfi_scan *s, int64_t *out)
{
	tfi_scan_ws(s);
	const char *p = s->p;
	p += p < s->end && *p == '-';
	const char *d = p;
	while (p < s->end && *p >= '0' && *p <= '9') {
		p++;
	}
	if (p == d || p - d > 18 || (*d == '0' && p - d > 1) || p >= s->end ||
	    *p == '.' || *p == 'e' || *p == 'E') {
		return 0;
	}
	*out = strtoll(s->p, NULL, 10);
	s->p = p;
	return 1;
}

/* The columns (and label, last) of a model the scan can take: 0 when it
 * cannot (another layout, categorical or sequence inputs, a bytes
 * label, too many columns). */
static size_t
quick_columns(const struct tf_model *m, struct quick_col *k)
{
	struct tf_columns *cols = tf_model_columns((struct tf_model *)m);
	const struct tf_schema *s = tf_columns_schema(cols);
	int64_t n = tfi_serving_ninputs(m), bw, bv;
	struct tf_image_view iv;
	struct tf_sequence_view sv;
	if (s == NULL || !s->has_label || s->layout != TFI_LAYOUT_COLUMNS ||
	    s->label.type == TF_COL_BYTES || n <= 0 || n >= QUICK_MAX_COLUMNS ||
	    tf_columns_bag(cols, &bw, &bv) || tf_columns_image(cols, &iv) ||
	    tf_columns_sequence(cols, &sv)) {
		return 0;
	}
	for (int64_t c = 0; c <= n; c++) {
		int is_int;
		float mean, inv;
		const char *name =
		    c < n ? tf_columns_column(cols, c, &is_int, &mean, &inv)
		          : s->label.name;
		int type = c < n ? -1 : s->label.type;
		for (size_t f = 0; c < n && name && f < s->nfeatures; f++) {
			if (strcmp(s->features[f].name, name) == 0) {
				type = s->features[f].type;
			}
		}
		if (name == NULL || strlen(name) >= 120 ||
		    (c < n &&
		     tf_columns_column_kind(cols, c) != TF_COLUMN_NUMERIC) ||
		    (type != TF_COL_FLOAT && type != TF_COL_INT64)) {
			return 0;
		}
		k[c] = (struct quick_col){name, strlen(name), type, 0, 0, 0};
	}
	return (size_t)n + 1;
}

/* An int64 label the model knows: one of its classes when it lists them. */
static int
known_class(const struct tf_schema *s, int64_t v)
{
	if (s->classes == NULL || s->nclasses == 0 || s->classes_over) {
		return 1;
	}
	size_t lo = 0, hi = s->nclasses;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->classes[mid] < v) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo < s->nclasses && s->classes[lo] == v;
}

static int
quick_train(struct tf_request *q, const struct tf_model *m, const char *body,
            size_t len, size_t max_rows, size_t *count)
{
	static const char key[] = "\"examples\"";
	struct quick_col k[QUICK_MAX_COLUMNS + 1];
	size_t n = quick_columns(m, k);
	const struct tf_schema *s =
	    tf_columns_schema(tf_model_columns((struct tf_model *)m));
	struct tfi_scan sc = {body, body + len};
	if (n == 0 || !tfi_scan_take(&sc, '{') || !tfi_scan_take(&sc, '"') ||
	    (size_t)(sc.end - sc.p) < sizeof key - 2 ||
	    memcmp(sc.p, key + 1, sizeof key - 2) != 0) {
		return 0;
	}
	sc.p += sizeof key - 2;
	if (!tfi_scan_take(&sc, ':') || !tfi_scan_take(&sc, '[')) {
		return 0;
	}
	uint32_t r = 0;
	do {
		if ((max_rows && r >= max_rows) || r == UINT32_MAX - 1 ||
		    !tfi_scan_take(&sc, '{')) {
			return 0;
		}
		size_t got = 0;
		do {
			if (!tfi_scan_take(&sc, '"')) {
				return 0;
			}
			const char *name = sc.p;
			while (sc.p < sc.end && *sc.p != '"' && *sc.p != '\\') {
				sc.p++;
			}
			if (sc.p >= sc.end || *sc.p != '"') {
				return 0; /* escapes: the full path */
			}
			size_t nl = (size_t)(sc.p - name), c = 0;
			sc.p++;
			while (c < n && (k[c].len != nl ||
			                 memcmp(k[c].name, name, nl) != 0)) {
				c++;
			}
			if (c == n || k[c].seen == r + 1 ||
			    !tfi_scan_take(&sc, ':') ||
			    !(k[c].type == TF_COL_FLOAT
			          ? tfi_scan_number(&sc, &k[c].f) &&
			                isfinite(k[c].f)
			          : scan_whole(&sc, &k[c].i))) {
				return 0;
			}
			k[c].seen = r + 1;
			got++;
		} while (tfi_scan_take(&sc, ','));
		if (got != n || !tfi_scan_take(&sc, '}') ||
		    (k[n - 1].type == TF_COL_INT64 &&
		     !known_class(s, k[n - 1].i)) ||
		    quick_record(q, k, n) != TF_OK) {
			return 0;
		}
		r++;
	} while (tfi_scan_take(&sc, ','));
	if (!tfi_scan_take(&sc, ']') || !tfi_scan_take(&sc, '}')) {
		return 0;
	}
	tfi_scan_ws(&sc);
	*count = r;
	return sc.p == sc.end;
}

int
tf_request_train(struct tf_request *q, const struct tf_model *m,
                 const char *body, size_t len, size_t max_rows,
                 const uint8_t **records, size_t *bytes, size_t *count)
{
	*records = NULL;
	*bytes = 0;
	*count = 0;
	tf_errclear(q);
	q->train.len = 0;
	size_t quick;
	if (!q->no_quick && quick_train(q, m, body, len, max_rows, &quick)) {
		q->quick_hits++;
		*records = q->train.data;
		*bytes = q->train.len;
		*count = quick;
		return TF_OK;
	}
	q->train.len = 0;
	json_error_t e;
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &e);
	json_t *schema = json_loads(tf_model_schema_text(m), 0, NULL);
	char *sigtext = tf_model_signature(m);
	json_t *sig = sigtext ? json_loads(sigtext, 0, NULL) : NULL;
	free(sigtext);
	json_t *rows = json_array(), *labels = json_array();
	json_t *label = json_object_get(schema, "label");
	const char *lname = json_string_value(json_object_get(label, "name"));
	struct tf_example *ex = tf_example_new();
	struct values vs = {0};
	int rc = TF_OK;
	if (schema == NULL || sig == NULL || rows == NULL || labels == NULL ||
	    ex == NULL) {
		rc = tfi_set_error(q, TF_ENOMEM, "out of memory");
	} else if (root == NULL) {
		rc = tfi_request_bad(q, "malformed JSON at line %d: %s%s",
		                     e.line, e.text,
		                     tfi_request_json_hint(m, e.text));
	} else if (!json_is_object(root)) {
		rc = tfi_request_bad(q, "a :train body is a JSON object");
	} else if (lname == NULL) {
		rc = tfi_request_bad(q, "the model has no label to train");
	} else {
		rc = train_rows(q, root, sig, lname, rows, labels, max_rows);
	}
	/* What :predict would make of the rows is the check of them. */
	if (rc == TF_OK) {
		q->training = 1;
		rc = tfi_request_instances(q, m, rows, max_rows);
		q->training = 0;
	}
	json_t *types = rc == TF_OK ? feature_types(schema, sig) : NULL;
	if (rc == TF_OK && types == NULL) {
		rc = tfi_set_error(q, TF_ENOMEM, "out of memory");
	}
	size_t r;
	json_t *row;
	json_array_foreach(rc == TF_OK ? rows : NULL, r, row)
	{
		tf_example_clear(ex);
		const char *key;
		json_t *v;
		json_object_foreach(row, key, v)
		{
			json_t *t = json_object_get(types, key);
			int type = t ? (int)json_integer_value(t) : -1;
			if (type < 0) {
				rc = tfi_request_bad(q,
				                     "row %zu: unknown input "
				                     "'%s'",
				                     r, key);
			}
			if (rc == TF_OK) {
				rc = add_feature(q, ex, &vs, key, v, type, r);
			}
			if (rc != TF_OK) {
				break;
			}
		}
		json_t *lv = json_array_get(labels, r);
		if (rc == TF_OK &&
		    (rc = check_label(q, label, lv, r)) == TF_OK) {
			rc = add_feature(
			    q, ex, &vs, lname, lv,
			    col_type(json_object_get(label, "type")), r);
		}
		size_t need = rc == TF_OK ? tf_example_encoded_size(ex) : 0;
		if (rc == TF_OK && tfi_buf_reserve(&q->train, need + 16) != 0) {
			rc = tfi_set_error(q, TF_ENOMEM, "out of memory");
		}
		if (rc != TF_OK) {
			break;
		}
		uint8_t *at = q->train.data + q->train.len;
		tf_example_encode(ex, at + 12);
		tfi_record_frame_inplace(at, need);
		q->train.len += need + 16;
	}
	if (rc == TF_OK) {
		*records = q->train.data;
		*bytes = q->train.len;
		*count = json_array_size(rows);
	}
	free(vs.f);
	free(vs.i);
	free(vs.s);
	tf_example_free(ex);
	json_decref(types);
	json_decref(rows);
	json_decref(labels);
	json_decref(sig);
	json_decref(schema);
	json_decref(root);
	return rc;
}
