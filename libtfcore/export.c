/*
 * export.c - writing a trained model for serving: the versioned export
 * directory (model.json, variables.bin, manifest.json), the same as a
 * tar.gz archive, a TensorFlow.js Layers model and an ONNX model.
 *
 * All formats hold the inference graph: the nodes the prediction depends
 * on, dropout removed (it is the identity outside training), batch
 * normalisation with its moving statistics.
 */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "onnx.pb-c.h"
#include "tf/export.h"
#include "tf/file.h"

/* ---- the inference graph ------------------------------------------------- */

#define MAX_NODES 256

/* Nodes the prediction depends on, in spec order; dropout nodes are
 * skipped and their users read the dropout's input instead. */
struct infer {
	int n;
	int node[MAX_NODES];   /* graph node indexes, inputs included */
	int source[MAX_NODES]; /* per graph node: the node it reads as */
};

static int
is_identity(const char *op)
{
	return op != NULL && strcmp(op, "dropout") == 0;
}

/* The nodes the prediction needs, in graph order, with dropout (the
 * identity at inference) skipped: each node's source says which node it
 * reads in its place. */
static int
inference(struct tf_model *m, struct infer *inf)
{
	struct tf_graph *g = tf_model_graph(m);
	int nn = tf_graph_nnodes(g);
	int pred = tf_graph_find(g, tf_model_prediction(m));
	if (nn > MAX_NODES || pred < 0) {
		return tfi_set_error(m, TF_EINVAL,
		                     "%s: the model has more than %d nodes or "
		                     "no prediction node",
		                     tf_model_checkpoint(m), MAX_NODES);
	}
	char need[MAX_NODES] = {0};
	need[pred] = 1;
	for (int i = nn - 1; i >= 0; i--) {
		for (int k = 0; need[i] && k < tf_graph_node_ninputs(g, i);
		     k++) {
			need[tf_graph_find(g, tf_graph_node_input(g, i, k))] =
			    1;
		}
	}
	inf->n = 0;
	for (int i = 0; i < nn; i++) {
		inf->source[i] = i;
		const char *op = tf_graph_node_op(g, i);
		if (is_identity(op) && tf_graph_node_ninputs(g, i) == 1) {
			int in = tf_graph_find(g, tf_graph_node_input(g, i, 0));
			inf->source[i] = inf->source[in];
			continue;
		}
		if (need[i]) {
			inf->node[inf->n++] = i;
		}
	}
	return TF_OK;
}

/* The spec of the inference graph. */
static int
inference_spec(struct tf_model *m, const struct infer *inf, struct tfi_buf *b)
{
	struct tf_graph *g = tf_model_graph(m);
	int rc = 0;
	char line[512];
	for (int j = 0; j < inf->n && rc == 0; j++) {
		int i = inf->node[j];
		const char *op = tf_graph_node_op(g, i);
		if (op == NULL) {
			/* the input's shape as the spec gave it: 8x8x1 */
			const char *name = tf_graph_node_name(g, i);
			struct tf_shape s;
			char dims[160];
			tf_graph_shape(g, name, &s);
			tfi_shape_format(&s, dims, sizeof dims);
			snprintf(
			    line, sizeof line, "input %s %s%s\n", name, dims,
			    tf_graph_input_dtype(g, name) == TF_INT64 ? " int64"
			                                              : "");
			rc = tfi_json_put(b, line, strlen(line));
			continue;
		}
		snprintf(line, sizeof line, "node %s %s ",
		         tf_graph_node_name(g, i), op);
		rc = tfi_json_put(b, line, strlen(line));
		for (int k = 0; k < tf_graph_node_ninputs(g, i) && rc == 0;
		     k++) {
			int in = tf_graph_find(g, tf_graph_node_input(g, i, k));
			const char *src =
			    tf_graph_node_name(g, inf->source[in]);
			rc = (k ? tfi_json_put(b, ",", 1) : 0) ||
			     tfi_json_put(b, src, strlen(src));
		}
		for (int a = 0; a < tf_graph_node_nattrs(g, i) && rc == 0;
		     a++) {
			const char *val;
			const char *key = tf_graph_node_attr_at(g, i, a, &val);
			snprintf(line, sizeof line, " %s=%s", key, val);
			rc = tfi_json_put(b, line, strlen(line));
		}
		rc = rc || tfi_json_put(b, "\n", 1);
	}
	return rc ? tfi_set_error(m, TF_ENOMEM, "out of memory") : TF_OK;
}

/* variables.bin and its description in model.json. */
static int
inference_variables(struct tf_model *m, const struct infer *inf,
                    struct tfi_buf *bin, json_t *list)
{
	struct tf_graph *g = tf_model_graph(m);
	/* read through the host's view of the blocks (a device's copied) */
	const float *params = tf_graph_params(g), *states = tf_graph_state(g);
	const float *hp = tfi_graph_host(g, TFI_PARAMS, 1);
	const float *hs = tfi_graph_host(g, TFI_STATE, 1);
	if (hp == NULL || hs == NULL) {
		return tfi_set_error(m, TF_ENOMEM, "out of memory");
	}
	for (int j = 0; j < inf->n; j++) {
		int i = inf->node[j];
		for (int k = 0; k < tf_graph_node_nparams(g, i); k++) {
			const char *name;
			int64_t rows, cols;
			int state;
			const float *p = tf_graph_node_param(
			    g, i, k, &name, &rows, &cols, &state);
			p = state ? hs + (p - states) : hp + (p - params);
			size_t off = bin->len, n = (size_t)(rows * cols);
			if (tfi_runs_put(bin, p, n) != TF_OK) {
				return tfi_set_error(m, TF_ENOMEM,
				                     "out of memory");
			}
			/* As runs when that halves it (a table's rows no id
			 * touched), else the values; each begins on 4 bytes. */
			size_t runs = bin->len - off;
			if (runs <= n * 2) {
				while (bin->len % 4 != 0) {
					bin->data[bin->len++] = 0;
				}
			} else {
				bin->len = off;
				if (tfi_buf_put_le_floats(bin, p, n) != TF_OK) {
					return tfi_set_error(m, TF_ENOMEM,
					                     "out of memory");
				}
			}
			json_t *v = json_pack("{s:s,s:s,s:[I,I]}", "node",
			                      tf_graph_node_name(g, i), "name",
			                      name, "shape", (json_int_t)rows,
			                      (json_int_t)cols);
			json_object_set_new(
			    v, runs <= n * 2 ? "runs" : "offset",
			    runs <= n * 2
			        ? json_pack("[I,I]", (json_int_t)off,
			                    (json_int_t)runs)
			        : json_integer((json_int_t)(off / 4)));
			json_object_set_new(v, "state", json_boolean(state));
			json_array_append_new(list, v);
		}
	}
	return TF_OK;
}

/* The plugins behind the graph's ops: name and version. */
static json_t *
plugins_used(struct tf_model *m, const struct infer *inf,
             const struct tf_registry *reg)
{
	struct tf_graph *g = tf_model_graph(m);
	json_t *list = json_array();
	for (int j = 0; j < inf->n; j++) {
		const char *op = tf_graph_node_op(g, inf->node[j]);
		for (size_t i = 0; op != NULL && i < tf_registry_count(reg);
		     i++) {
			struct tf_plugin_info pi;
			if (tf_registry_info(reg, i, &pi) != TF_OK ||
			    strcmp(pi.kind, "op") != 0 ||
			    strcmp(pi.name, op) != 0) {
				continue;
			}
			json_t *e =
			    json_pack("{s:s,s:s,s:s}", "op", op, "plugin",
			              pi.plugin, "version", pi.version);
			size_t k;
			json_t *old;
			int dup = 0;
			json_array_foreach(list, k, old)
			{
				dup |= json_equal(old, e);
			}
			if (dup) {
				json_decref(e);
			} else {
				json_array_append_new(list, e);
			}
			break;
		}
	}
	return list;
}

/* The standardisation of each row column, as training applied it:
 * (value - mean) * scale for the floats; then the ids: categorical
 * columns, and crosses derived from them. */
static json_t *
preprocessing(struct tf_model *m)
{
	struct tf_columns *cols = tf_model_columns(m);
	json_t *list = json_array();
	static const char *const kinds[] = {"numeric", "categorical", "cross"};
	for (int64_t c = 0; c < tf_columns_count(cols); c++) {
		int is_int;
		float mean, inv;
		const char *name =
		    tf_columns_column(cols, c, &is_int, &mean, &inv);
		json_array_append_new(
		    list,
		    json_pack("{s:s?,s:s,s:f,s:f}", "name", name, "kind",
		              kinds[tf_columns_column_kind(cols, c)], "mean",
		              (double)mean, "scale", (double)inv));
	}
	return json_pack("{s:b,s:o}", "standardize", tf_model_normalizes(m),
	                 "columns", list);
}

/* The three files of an export, in memory. */
struct files {
	struct tfi_buf model, vars, manifest;
};

static void
files_free(struct files *f)
{
	tfi_buf_free(&f->model);
	tfi_buf_free(&f->vars);
	tfi_buf_free(&f->manifest);
}

/* An export's three files in memory: model.json (the inference spec,
 * signature, provenance, plugins), variables.bin and the manifest of
 * their checksums; extra, JSON, is merged into the provenance. */
static int
build_files(struct tf_model *m, const struct tf_registry *reg,
            const char *extra, struct files *f)
{
	struct infer inf;
	struct tfi_buf spec = {0};
	int rc = inference(m, &inf);
	rc = rc ? rc : inference_spec(m, &inf, &spec);
	json_t *vars = json_array();
	rc = rc ? rc : inference_variables(m, &inf, &f->vars, vars);
	if (rc != TF_OK) {
		json_decref(vars);
		tfi_buf_free(&spec);
		return rc;
	}
	char *sig = tf_model_signature(m);
	char *prov = tf_model_provenance(m);
	char *cat = tf_model_categorical(m);
	json_t *p = prov ? json_loads(prov, 0, NULL) : NULL;
	json_t *x = extra ? json_loads(extra, 0, NULL) : NULL;
	if (p != NULL && json_is_object(x)) {
		json_object_update(p, x);
	}
	if (p != NULL) {
		json_object_set_new(p, "plugins", plugins_used(m, &inf, reg));
		json_object_set_new(p, "library", json_string(tf_version()));
	}
	json_t *o = json_pack(
	    "{s:s,s:i,s:s,s:I,s:s,s:b,s:o?,s:s%,s:s,s:o*,s:o,s:o?}", "format",
	    "tfkit-model", "format_version", 1, "task",
	    tf_task_name(tf_model_task(m)), "classes",
	    (json_int_t)tf_columns_classes(tf_model_columns(m)), "prediction",
	    tf_model_prediction(m), "normalize", tf_model_normalizes(m),
	    "signature", sig ? json_loads(sig, 0, NULL) : NULL, "spec",
	    spec.data ? (char *)spec.data : "", spec.len, "schema",
	    tf_model_schema_text(m), "categorical",
	    cat ? json_loads(cat, 0, NULL) : NULL, "variables", vars,
	    "provenance", p);
	free(cat);
	free(sig);
	if (o != NULL) {
		json_object_set_new(o, "preprocessing", preprocessing(m));
	}
	free(prov);
	json_decref(x);
	tfi_buf_free(&spec);
	char *text =
	    o ? json_dumps(o, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(o);
	if (text == NULL ||
	    tfi_buf_append(&f->model, text, strlen(text)) != 0) {
		free(text);
		return tfi_set_error(m, TF_ENOMEM, "out of memory");
	}
	free(text);
	char h1[65], h2[65];
	tf_sha256_hex(f->model.data, f->model.len, h1);
	tf_sha256_hex(f->vars.data, f->vars.len, h2);
	json_t *man = json_pack(
	    "{s:s,s:i,s:[{s:s,s:I,s:s},{s:s,s:I,s:s}]}", "format",
	    "tfkit-manifest", "version", 1, "files", "name", "model.json",
	    "size", (json_int_t)f->model.len, "sha256", h1, "name",
	    "variables.bin", "size", (json_int_t)f->vars.len, "sha256", h2);
	text =
	    man ? json_dumps(man, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(man);
	if (text == NULL ||
	    tfi_buf_append(&f->manifest, text, strlen(text)) != 0 ||
	    tfi_buf_append(&f->manifest, "\n", 1) != 0) {
		free(text);
		return tfi_set_error(m, TF_ENOMEM, "out of memory");
	}
	free(text);
	return TF_OK;
}

/* ---- the export directory ------------------------------------------------ */

int
tf_export_version(const char *s, size_t n, int64_t *v)
{
	if (n == 0 || n > 18) {
		return 0;
	}
	int64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9') {
			return 0;
		}
		x = x * 10 + (s[i] - '0');
	}
	*v = x;
	return 1;
}

static int
cmp_desc(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

int
tf_export_versions(const char *base, int64_t **versions, size_t *n, char *err,
                   size_t errlen)
{
	*versions = NULL;
	*n = 0;
	DIR *d = opendir(base);
	if (d == NULL) {
		snprintf(err, errlen, "%s: %s", base, strerror(errno));
		return errno == ENOENT ? TF_ENOENT : TF_EIO;
	}
	size_t cap = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		int64_t v;
		char path[4096];
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", base, e->d_name);
		if (!tf_export_version(e->d_name, strlen(e->d_name), &v) ||
		    stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
			continue;
		}
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			int64_t *nv = realloc(*versions, cap * sizeof *nv);
			if (nv == NULL) {
				closedir(d);
				snprintf(err, errlen, "out of memory");
				return TF_ENOMEM;
			}
			*versions = nv;
		}
		(*versions)[(*n)++] = v;
	}
	closedir(d);
	if (*n > 1) {
		qsort(*versions, *n, sizeof **versions, cmp_desc);
	}
	return TF_OK;
}

/* One file of a version being built, published as every output is
 * (file.c): fsynced, renamed into the temporary directory, which is
 * synced too.  0, or -1 with errno. */
static int
write_file(const char *dir, const char *name, const struct tfi_buf *b)
{
	char path[4200];
	struct tfi_out o;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (tfi_out_open(&o, path) != 0 ||
	    tfi_out_write(&o, b->data, b->len) != 0 ||
	    tfi_out_commit(&o, 1) != 0) {
		int e = errno;
		tfi_out_abort(&o);
		errno = e;
		return -1;
	}
	return 0;
}

/* A half-written version directory removed: its files, then itself. */
static void
remove_tree(const char *dir)
{
	const char *names[] = {"model.json", "variables.bin", "manifest.json"};
	char path[4200];
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

/* mkdir -p: 0, or -1 with errno. */
static int
mkdir_p(const char *path)
{
	char p[4096];
	snprintf(p, sizeof p, "%s", path);
	for (char *s = p + 1; *s; s++) {
		if (*s == '/') {
			*s = '\0';
			if (mkdir(p, 0777) != 0 && errno != EEXIST) {
				return -1;
			}
			*s = '/';
		}
	}
	return mkdir(p, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

/* The version to write: the one asked for, or one above the highest. */
static int
pick_version(struct tf_model *m, const char *base, int64_t version,
             int64_t *out)
{
	int64_t *vs;
	size_t n;
	char err[512];
	int rc = tf_export_versions(base, &vs, &n, err, sizeof err);
	if (rc != TF_OK && rc != TF_ENOENT) {
		return tfi_set_error(m, rc, "%s", err);
	}
	*out = version > 0 ? version : n > 0 ? vs[0] + 1 : 1;
	free(vs);
	return TF_OK;
}

int
tf_model_export(struct tf_model *m, const struct tf_registry *reg,
                const char *base, int64_t version, const char *provenance,
                int64_t *written, char *dir, size_t size)
{
	struct files f = {0};
	int rc = build_files(m, reg, provenance, &f);
	if (rc != TF_OK) {
		files_free(&f);
		return rc;
	}
	if (mkdir_p(base) != 0) {
		rc = tfi_set_errno(m, TF_ECREATE, errno, "cannot create %s",
		                   base);
		files_free(&f);
		return rc;
	}
	char tmp[4096], final[4096];
	snprintf(tmp, sizeof tmp, "%s/.tmp-export-XXXXXX", base);
	if (mkdtemp(tmp) == NULL) {
		rc = tfi_set_errno(m, TF_ECREATE, errno,
		                   "cannot create a directory in %s", base);
		files_free(&f);
		return rc;
	}
	chmod(tmp, 0755);
	if (write_file(tmp, "model.json", &f.model) != 0 ||
	    write_file(tmp, "variables.bin", &f.vars) != 0 ||
	    write_file(tmp, "manifest.json", &f.manifest) != 0) {
		rc = tfi_set_errno(m, TF_EIO, errno, "cannot write %s", tmp);
		goto fail;
	}
	if ((rc = pick_version(m, base, version, written)) != TF_OK) {
		goto fail;
	}
	snprintf(final, sizeof final, "%s/%lld", base, (long long)*written);
	/* Never replace a version, even one made meanwhile. */
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, final, RENAME_NOREPLACE) != 0) {
		struct stat st;
		int e = errno;
		if ((e == EINVAL || e == ENOSYS) && stat(final, &st) != 0 &&
		    rename(tmp, final) == 0) {
			goto done;
		}
		rc = tfi_set_error(
		    m, TF_ECREATE, "cannot create %s: %s", final,
		    e == EEXIST || e == ENOTEMPTY || e == EINVAL
		        ? "that version exists (versions are never replaced)"
		        : strerror(e));
		goto fail;
	}
done:
	tfi_sync_dir(base);
	snprintf(dir, size, "%s", final);
	files_free(&f);
	return TF_OK;
fail:
	remove_tree(tmp);
	files_free(&f);
	return rc;
}

int
tf_model_export_archive(struct tf_model *m, const struct tf_registry *reg,
                        const char *path, int64_t version,
                        const char *provenance)
{
	struct files f = {0};
	int rc = build_files(m, reg, provenance, &f);
	if (rc != TF_OK) {
		files_free(&f);
		return rc;
	}
	struct tfi_out out;
	if (tfi_out_open(&out, path) != 0) {
		rc = tfi_set_errno(m, TF_ECREATE, errno, "cannot create %s",
		                   path);
		tfi_out_abort(&out);
		files_free(&f);
		return rc;
	}
	struct archive *a = archive_write_new();
	archive_write_set_format_pax_restricted(a);
	archive_write_add_filter_gzip(a);
	int ok = archive_write_open_fd(a, out.fd) == ARCHIVE_OK;
	const char *names[] = {"model.json", "variables.bin", "manifest.json"};
	const struct tfi_buf *bufs[] = {&f.model, &f.vars, &f.manifest};
	time_t now = time(NULL);
	char name[64];
	struct archive_entry *e = archive_entry_new();
	snprintf(name, sizeof name, "%lld/", (long long)version);
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFDIR);
	archive_entry_set_perm(e, 0755);
	archive_entry_set_mtime(e, now, 0);
	ok = ok && archive_write_header(a, e) == ARCHIVE_OK;
	for (int i = 0; ok && i < 3; i++) {
		archive_entry_clear(e);
		snprintf(name, sizeof name, "%lld/%s", (long long)version,
		         names[i]);
		archive_entry_set_pathname(e, name);
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, 0644);
		archive_entry_set_size(e, (la_int64_t)bufs[i]->len);
		archive_entry_set_mtime(e, now, 0);
		ok = archive_write_header(a, e) == ARCHIVE_OK &&
		     archive_write_data(a, bufs[i]->data, bufs[i]->len) ==
		         (la_ssize_t)bufs[i]->len;
	}
	archive_entry_free(e);
	if (!ok) {
		rc = tfi_set_error(m, TF_EIO, "cannot write %s: %s", path,
		                   archive_error_string(a));
	}
	ok = archive_write_close(a) == ARCHIVE_OK && ok;
	archive_write_free(a);
	if (ok && tfi_out_commit(&out, 1) != 0) {
		ok = 0;
		rc = tfi_set_errno(m, TF_EIO, errno, "cannot write %s", path);
	}
	if (!ok) {
		tfi_out_abort(&out);
		rc = rc ? rc
		        : tfi_set_errno(m, TF_EIO, errno, "cannot write %s",
		                        path);
	}
	files_free(&f);
	return rc;
}

/* ---- layers: the chain TensorFlow.js and ONNX receive -------------------- */

enum act { ACT_LINEAR, ACT_RELU, ACT_SIGMOID, ACT_TANH, ACT_SOFTMAX };
static const char *const act_name[] = {"linear", "relu", "sigmoid", "tanh",
                                       "softmax"};

/* Layers on images and joins (ONNX only): the kinds after dense's 1. */
enum {
	L_CONV = 2,
	L_MAX_POOL,
	L_AVG_POOL,
	L_GLOBAL_POOL,
	L_FLATTEN,
	L_CONCAT,
	L_RNN,     /* lstm, gru (ONNX) */
	L_COLUMNS, /* columns: a block of a row's columns (ONNX) */
	L_EMBED,   /* embedding, combiner=concat: each id's row (ONNX); or a
	              bag (sum or mean of the rows of ids weighted by
	              values) */
	L_ADD      /* add: the sum of its inputs (a graph: ONNX, and
	              TensorFlow.js's functional model) */
};
#define MAX_JOIN 8 /* inputs of a concat or an add */

struct layer {
	int node;  /* graph node */
	int out;   /* the node whose output the layer's is (activation) */
	int dense; /* 1 dense, 0 batchnorm, -1 activation only, or L_* */
	enum act act;
	int64_t in, units;
	float *kernel, *bias;             /* dense, conv: in x units, units */
	float *gamma, *beta, *mean, *var; /* batchnorm */
	double epsilon;
	/* conv and pools: the input image, the window, its stride and the
	 * padding top, left, bottom, right */
	int64_t h, w, c, k, stride, pad[4];
	int same; /* padding=same */
	/* lstm, gru: the recurrent kernel, gates (4 lstm, 3 gru), steps
	 * (in: features a step), every step out, reversed, forget bias */
	float *rkernel;
	int gates, seq, reverse;
	int before; /* gru's reset_after=0 */
	int64_t steps;
	double forget_bias;
	/* lstm, gru of varying length: the ids column of each row's steps
	 * (-1: every row all of them); columns and embedding: the block
	 * read, begin and size (embedding: kernel its table of in rows of
	 * units values, bias added to each) */
	int64_t length, begin, size;
	int bag; /* embedding of a bag: 1 its weighted sum, 2 its mean */
	/* TensorFlow.js: an lstm and its reverse twin over the same input
	 * joined by a concat, as one Bidirectional layer: the twin's
	 * kernels and forget bias */
	int bidi;
	float *bkernel, *brkernel, *bbias;
	double bforget_bias;
	int src[MAX_JOIN]; /* the graph nodes it reads (ONNX) */
	int nsrc;
};

struct chain {
	int n;
	struct layer l[MAX_NODES];
	float *owned[4]; /* the first dense with standardisation folded in */
	/* or, when the first layer is not dense, the standardisation as a
	 * layer of its own: each column's mean and 1/inv_std^2 */
	float *stdz_mean, *stdz_var;
	int64_t stdz_n;
};

static void
chain_free(struct chain *c)
{
	for (int i = 0; i < 4; i++) {
		free(c->owned[i]);
	}
}

/* Whether op is an activation Keras and ONNX name (not linear). */
static int
parse_act(const char *op, enum act *a)
{
	for (int i = 1; i < 5; i++) {
		if (strcmp(op, act_name[i]) == 0) {
			*a = (enum act)i;
			return 1;
		}
	}
	return 0;
}

/*
 * A conv2d's or a pool's image layer: its input image's shape and the
 * window's geometry as the op computes it (kernel= or size=, stride=,
 * padding=: same splits the padding with the odd one after).
 */
static int
image_layer(struct tf_model *m, int i, const char *in, int kind,
            struct layer *L, const char *format)
{
	struct tf_graph *g = tf_model_graph(m);
	const char *name = tf_graph_node_name(g, i);
	struct tf_shape s;
	if (tf_graph_shape(g, in, &s) != 3) {
		return tfi_set_error(m, TF_EFORMAT,
		                     "%s export: node '%s' takes no image",
		                     format, name);
	}
	*L = (struct layer){.node = i, .dense = kind};
	L->h = s.dim[0];
	L->w = s.dim[1];
	L->c = s.dim[2];
	if (kind == L_GLOBAL_POOL || kind == L_FLATTEN) {
		return TF_OK;
	}
	const char *a =
	    tf_graph_node_attr(g, i, kind == L_CONV ? "kernel" : "size");
	L->k = a ? strtoll(a, NULL, 10) : kind == L_CONV ? 3 : 2;
	a = tf_graph_node_attr(g, i, "stride");
	L->stride = a ? strtoll(a, NULL, 10) : kind == L_CONV ? 1 : L->k;
	a = tf_graph_node_attr(g, i, "padding");
	L->same = a ? strcmp(a, "same") == 0 : kind == L_CONV;
	/* the op's own geometry: padding before from it, after the rest */
	struct tf_conv cg;
	if (L->k < 1 || L->stride < 1 ||
	    tf_conv_geometry(L->h, L->w, L->c, L->k, L->stride, L->same, &cg) !=
	        0) {
		return tfi_set_error(m, TF_EFORMAT,
		                     "%s export: node '%s' gives no image",
		                     format, name);
	}
	int64_t total[2] = {(cg.oh - 1) * cg.sh + cg.kh - cg.h,
	                    (cg.ow - 1) * cg.sw + cg.kw - cg.w};
	L->pad[0] = cg.ph;
	L->pad[1] = cg.pw;
	L->pad[2] = L->same && total[0] > cg.ph ? total[0] - cg.ph : 0;
	L->pad[3] = L->same && total[1] > cg.pw ? total[1] - cg.pw : 0;
	if (kind == L_CONV) {
		int64_t r = 0, rb;
		L->kernel =
		    tf_graph_param_by_name(g, name, "kernel", &r, &L->units);
		L->bias = tf_graph_param_by_name(g, name, "bias", &rb, &rb);
		L->in = L->k * L->k * L->c;
		if (L->kernel == NULL || r != L->in) {
			return tfi_set_error(m, TF_EFORMAT,
			                     "%s export: node '%s' has no "
			                     "kernel of its window",
			                     format, name);
		}
	}
	return TF_OK;
}

/*
 * The inference graph as a chain of layers from x to the prediction:
 * dense (an activation right after it merged in), batch normalisation,
 * activations, and with images (ONNX) conv2d, the pools and flatten.
 * fold: standardisation folded into the first dense (W'[i][j] = W[i][j]
 * / std[i], b'[j] = b[j] - sum_i mean[i] / std[i] W[i][j]).
 */
/* An lstm or gru node as a layer: its kernels, bias and attributes. */
static int
rnn_layer(struct tf_model *m, int i, const char *op, struct layer *L,
          const char *format)
{
	struct tf_graph *g = tf_model_graph(m);
	const char *name = tf_graph_node_name(g, i);
	struct tf_shape s;
	int64_t r, cols;
	const char *in = tf_graph_node_input(g, i, 0);
	*L = (struct layer){.node = i, .dense = L_RNN};
	L->gates = strcmp(op, "lstm") == 0 ? 4 : 3;
	if (tf_graph_shape(g, in, &s) != 2) {
		return tfi_set_error(m, TF_EFORMAT,
		                     "%s export: node '%s' reads no sequence",
		                     format, name);
	}
	L->steps = s.dim[0];
	L->kernel =
	    tf_graph_param_by_name(g, name, "kernel", &L->in, &L->units);
	L->rkernel =
	    tf_graph_param_by_name(g, name, "recurrent_kernel", &r, &cols);
	L->bias = tf_graph_param_by_name(g, name, "bias", &r, &cols);
	L->units /= L->gates;
	const char *a = tf_graph_node_attr(g, i, "sequences");
	L->seq = a != NULL && strtoll(a, NULL, 10) != 0;
	a = tf_graph_node_attr(g, i, "reverse");
	L->reverse = a != NULL && strtoll(a, NULL, 10) != 0;
	a = tf_graph_node_attr(g, i, "forget_bias");
	L->forget_bias = a != NULL ? strtod(a, NULL) : 1.0;
	a = tf_graph_node_attr(g, i, "reset_after");
	L->before = L->gates == 3 && a != NULL && strtoll(a, NULL, 10) == 0;
	a = tf_graph_node_attr(g, i, "length");
	L->length = a != NULL ? strtoll(a, NULL, 10) : -1;
	if ((L->length >= 0) != (tf_graph_node_ninputs(g, i) == 2)) {
		return tfi_set_error(m, TF_EFORMAT,
		                     "%s export: node '%s' reads its lengths "
		                     "without length=K, or length=K without "
		                     "the ids",
		                     format, name);
	}
	return L->kernel != NULL && L->rkernel != NULL
	           ? TF_OK
	           : tfi_set_error(m, TF_EINTERNAL,
	                           "%s export: node '%s' lacks its kernels",
	                           format, name);
}

/* Whether graph nodes i, i2 and i3 of the inference are an lstm, its
 * reverse twin (the same input and units) and a concat of the two in
 * that order, each giving its last output: a bidirectional layer.  (Of
 * every step's outputs, tfkit's concat joins the two sequences whole,
 * Keras' Bidirectional step by step: not the same row.) */
static int
is_bidirectional(struct tf_graph *g, const struct infer *inf, int i, int i2,
                 int i3)
{
	const char *op1 = tf_graph_node_op(g, i),
	           *op2 = tf_graph_node_op(g, i2),
	           *op3 = tf_graph_node_op(g, i3);
	if (op1 == NULL || op2 == NULL || op3 == NULL ||
	    strcmp(op1, op2) != 0 || strcmp(op3, "concat") != 0 ||
	    tf_graph_node_ninputs(g, i) != 1 ||
	    tf_graph_node_ninputs(g, i2) != 1 ||
	    tf_graph_node_ninputs(g, i3) != 2) {
		return 0;
	}
	int in1 = inf->source[tf_graph_find(g, tf_graph_node_input(g, i, 0))];
	int in2 = inf->source[tf_graph_find(g, tf_graph_node_input(g, i2, 0))];
	int j0 = inf->source[tf_graph_find(g, tf_graph_node_input(g, i3, 0))];
	int j1 = inf->source[tf_graph_find(g, tf_graph_node_input(g, i3, 1))];
	const char *u1 = tf_graph_node_attr(g, i, "units");
	const char *u2 = tf_graph_node_attr(g, i2, "units");
	const char *s1 = tf_graph_node_attr(g, i, "sequences");
	const char *s2 = tf_graph_node_attr(g, i2, "sequences");
	if (u1 == NULL || u2 == NULL ||
	    strtoll(u1, NULL, 10) != strtoll(u2, NULL, 10) ||
	    (s1 != NULL && strtoll(s1, NULL, 10) != 0) ||
	    (s2 != NULL && strtoll(s2, NULL, 10) != 0)) {
		return 0;
	}
	const char *r1 = tf_graph_node_attr(g, i, "reverse");
	const char *r2 = tf_graph_node_attr(g, i2, "reverse");
	return in1 == in2 && j0 == i && j1 == i2 &&
	       (r1 == NULL || strtoll(r1, NULL, 10) == 0) && r2 != NULL &&
	       strtoll(r2, NULL, 10) != 0;
}

/* A columns node (a block of the row: begin, size), or an embedding of
 * a sequence's ids (combiner=concat: each id its table row, in order),
 * as a layer; ONNX only. */
static int
block_layer(struct tf_model *m, int i, const char *op, struct layer *L,
            const char *format)
{
	struct tf_graph *g = tf_model_graph(m);
	const char *name = tf_graph_node_name(g, i);
	int embed = strcmp(op, "embedding") == 0;
	*L = (struct layer){.node = i, .dense = embed ? L_EMBED : L_COLUMNS};
	const char *a = tf_graph_node_attr(g, i, "begin");
	L->begin = a != NULL ? strtoll(a, NULL, 10) : 0;
	a = tf_graph_node_attr(g, i, "size");
	L->size = a != NULL ? strtoll(a, NULL, 10)
	                    : tf_graph_width(g, tf_graph_node_input(g, i, 0)) -
	                          L->begin;
	if (!embed) {
		return TF_OK;
	}
	a = tf_graph_node_attr(g, i, "combiner");
	if (tf_graph_node_ninputs(g, i) == 2 &&
	    (a == NULL || strcmp(a, "sum") == 0 || strcmp(a, "mean") == 0)) {
		/* a bag: ids and their values (weights) */
		L->bag = a != NULL && strcmp(a, "mean") == 0 ? 2 : 1;
	} else if (a == NULL || strcmp(a, "concat") != 0 ||
	           tf_graph_node_ninputs(g, i) != 1) {
		return tfi_set_error(m, TF_EFORMAT,
		                     "%s export: node '%s' sums or averages "
		                     "its ids (a bag): only a sequence's "
		                     "embedding (combiner=concat) is exported "
		                     "yet",
		                     format, name);
	}
	int64_t r, cols;
	L->kernel = tf_graph_param_by_name(g, name, "table", &L->in, &L->units);
	L->bias = tf_graph_param_by_name(g, name, "bias", &r, &cols);
	return L->kernel != NULL
	           ? TF_OK
	           : tfi_set_error(m, TF_EINTERNAL,
	                           "%s export: node '%s' lacks its table",
	                           format, name);
}

/* The rnn checks of TensorFlow.js's LSTM and GRU: a GRU with the reset
 * before (its only one), no backwards reading with every step's
 * output. */
static int
tfjs_rnn_check(struct tf_model *m, const char *op, const char *name,
               int reverse, int seq, int before)
{
	if (strcmp(op, "gru") == 0 && !before) {
		return tfi_set_error(
		    m, TF_EFORMAT,
		    "TensorFlow.js export: op 'gru' (node "
		    "'%s'): TensorFlow.js's GRU has no "
		    "reset_after (tfkit's and Keras' default), "
		    "so it cannot compute this one; a GRU trained with "
		    "--gru-reset-after false (reset_after=0 in a spec) "
		    "exports",
		    name);
	}
	if (reverse && seq) {
		/* go_backwards gives every step's output in reversed order;
		 * tfkit's keep their places */
		return tfi_set_error(
		    m, TF_EFORMAT,
		    "TensorFlow.js export: node '%s' reads the "
		    "steps backwards and gives every step's "
		    "output: not exported yet",
		    name);
	}
	return TF_OK;
}

static int
stdz_stats(struct tf_model *m, struct chain *c)
{
	int64_t w = tf_columns_width(tf_model_columns(m));
	c->stdz_n = w;
	c->stdz_mean = c->owned[2] = malloc((size_t)w * sizeof(float));
	c->stdz_var = c->owned[3] = malloc((size_t)w * sizeof(float));
	if (c->stdz_mean == NULL || c->stdz_var == NULL) {
		return tfi_set_error(m, TF_ENOMEM, "out of memory");
	}
	for (int64_t i = 0; i < w; i++) {
		int is_int;
		float inv;
		tf_columns_column(tf_model_columns(m), i, &is_int,
		                  &c->stdz_mean[i], &inv);
		c->stdz_var[i] = (float)(1.0 / ((double)inv * inv));
	}
	return TF_OK;
}

/* The model's inference graph as layers for format: fold, the
 * standardisation into a first dense layer; images, the image ops
 * taken; graph, any graph of layers (ONNX, TensorFlow.js's functional
 * model), not only a chain (a model of sparse ids, an embedding of
 * ids and values, is one). */
static int
chain(struct tf_model *m, struct chain *c, int fold, int images, int graph,
      const char *format)
{
	static const char *const image_ops[] = {
	    "conv2d", "max_pool", "avg_pool", "global_avg_pool", "flatten"};
	struct infer inf;
	struct tf_graph *g = tf_model_graph(m);
	struct tf_sequence_view sv;
	memset(c, 0, sizeof *c); /* chain_free() on every return */
	/* a graph (ONNX, TensorFlow.js's functional model) takes the ids
	 * (tokens, lengths) as a second input */
	int seqs = tf_columns_sequence(tf_model_columns(m), &sv);
	int64_t bw, bv;
	int bag = tf_columns_bag(tf_model_columns(m), &bw, &bv);
	int rc = inference(m, &inf);
	if (rc != TF_OK) {
		return rc;
	}
	const char *prev = "x";
	for (int j = 0; j < inf.n; j++) {
		int i = inf.node[j];
		const char *op = tf_graph_node_op(g, i);
		const char *name = tf_graph_node_name(g, i);
		if (op == NULL) {
			if (strcmp(name, "ids") == 0 && !seqs && !bag) {
				return tfi_set_error(
				    m, TF_EFORMAT,
				    "%s export: the model reads categorical "
				    "features (strings looked up as ids), not "
				    "exported yet; the tfkit format serves it",
				    format);
			}
			if (strcmp(name, "x") != 0 &&
			    !((seqs || bag) && strcmp(name, "ids") == 0)) {
				return tfi_set_error(
				    m, TF_EFORMAT,
				    "%s export: the model has an input '%s' "
				    "besides x",
				    format, name);
			}
			continue;
		}
		/* TensorFlow.js takes a chain, each layer reading the one
		 * before; ONNX (graph) any graph of one-input layers and
		 * concats */
		int nin = tf_graph_node_ninputs(g, i), src[MAX_JOIN];
		int join = graph && (strcmp(op, "concat") == 0 ||
		                     strcmp(op, "add") == 0);
		for (int k = 0; k < nin && k < MAX_JOIN; k++) {
			src[k] = inf.source[tf_graph_find(
			    g, tf_graph_node_input(g, i, k))];
		}
		const char *in = nin > 0 ? tf_graph_node_name(g, src[0]) : "";
		/* the ids: an embedding's, or a recurrent layer's lengths */
		int rnn = strcmp(op, "lstm") == 0 || strcmp(op, "gru") == 0,
		    embed = strcmp(op, "embedding") == 0;
		for (int k = 0; k < nin && k < MAX_JOIN; k++) {
			int ids =
			    strcmp(tf_graph_node_name(g, src[k]), "ids") == 0;
			if (ids != ((embed && k == 0) || (rnn && k == 1))) {
				return tfi_set_error(
				    m, TF_EFORMAT,
				    "%s export: node '%s' reads '%s' %s",
				    format, name, tf_graph_node_name(g, src[k]),
				    ids ? "as numbers" : "as its ids");
			}
		}
		if (nin > MAX_JOIN ||
		    (!join && nin != 1 && !(rnn && nin == 2) &&
		     !(bag && embed && nin == 2)) ||
		    (!graph && strcmp(in, prev) != 0)) {
			return tfi_set_error(m, TF_EFORMAT,
			                     "%s export: node '%s' is not a "
			                     "layer of a plain chain",
			                     format, name);
		}
		prev = name;
		int out = i; /* the node whose output the layer's is */
		enum act a;
		int64_t r, cols;
		struct layer *L = &c->l[c->n];
		int kind = !join                       ? 0
		           : strcmp(op, "concat") == 0 ? L_CONCAT
		                                       : L_ADD;
		for (int k = 0; images && k < 5; k++) {
			kind =
			    strcmp(op, image_ops[k]) == 0 ? L_CONV + k : kind;
		}
		struct tf_shape js;
		if ((kind == L_CONCAT || kind == L_ADD) &&
		    tf_graph_shape(g, name, &js) == 2) {
			return tfi_set_error(m, TF_EFORMAT,
			                     "%s export: node '%s' joins "
			                     "sequences step by step, which is "
			                     "not exported yet",
			                     format, name);
		}
		if (kind == L_CONCAT || kind == L_ADD) {
			*L = (struct layer){.node = i, .dense = kind};
		} else if (kind != 0) {
			rc = image_layer(m, i, in, kind, L, format);
			if (rc != TF_OK) {
				return rc;
			}
		} else if (parse_act(op, &a)) {
			if (c->n > 0 && c->l[c->n - 1].dense == 1 &&
			    c->l[c->n - 1].act == ACT_LINEAR &&
			    c->l[c->n - 1].node == src[0]) {
				c->l[c->n - 1].act = a;
				c->l[c->n - 1].out = i;
				continue;
			}
			*L = (struct layer){.node = i, .dense = -1, .act = a};
		} else if (strcmp(op, "dense") == 0) {
			*L = (struct layer){.node = i, .dense = 1};
			L->kernel = tf_graph_param_by_name(g, name, "kernel",
			                                   &L->in, &L->units);
			L->bias =
			    tf_graph_param_by_name(g, name, "bias", &r, &cols);
		} else if (strcmp(op, "batchnorm") == 0) {
			*L = (struct layer){.node = i, .dense = 0};
			L->gamma = tf_graph_param_by_name(g, name, "gamma", &r,
			                                  &L->units);
			L->beta =
			    tf_graph_param_by_name(g, name, "beta", &r, &cols);
			L->mean = tf_graph_param_by_name(g, name, "moving_mean",
			                                 &r, &cols);
			L->var = tf_graph_param_by_name(
			    g, name, "moving_variance", &r, &cols);
			const char *eps = tf_graph_node_attr(g, i, "epsilon");
			L->epsilon = eps ? strtod(eps, NULL) : 0.001;
		} else if (graph && (strcmp(op, "columns") == 0 || embed)) {
			rc = block_layer(m, i, op, L, format);
			if (rc != TF_OK) {
				return rc;
			}
		} else if (graph && rnn) {
			rc = rnn_layer(m, i, op, L, format);
			if (rc != TF_OK) {
				return rc;
			}
		} else if (rnn && j + 2 < inf.n &&
		           is_bidirectional(g, &inf, i, inf.node[j + 1],
		                            inf.node[j + 2])) {
			/* TensorFlow.js's Bidirectional LSTM or GRU: its
			 * backward layer reads the steps backwards and gives
			 * each step's output in the step's place, as the
			 * twin */
			struct layer twin;
			rc = rnn_layer(m, i, op, L, format);
			rc = rc ? rc
			        : rnn_layer(m, inf.node[j + 1], op, &twin,
			                    format);
			rc = rc ? rc
			        : tfjs_rnn_check(m, op, name, 0, 0, L->before);
			rc = rc ? rc
			        : tfjs_rnn_check(
			              m, op,
			              tf_graph_node_name(g, inf.node[j + 1]), 0,
			              0, twin.before);
			if (rc != TF_OK) {
				return rc;
			}
			L->bidi = 1;
			L->bkernel = twin.kernel;
			L->brkernel = twin.rkernel;
			L->bbias = twin.bias;
			L->bforget_bias = twin.forget_bias;
			j += 2; /* the layer's output is the concat's */
			out = inf.node[j];
			prev = tf_graph_node_name(g, out);
		} else if (rnn) {
			/* TensorFlow.js's LSTM and GRU: Keras' gates, as
			 * tfkit's */
			rc = rnn_layer(m, i, op, L, format);
			if (rc != TF_OK) {
				return rc;
			}
			rc = tfjs_rnn_check(m, op, name, L->reverse, L->seq,
			                    L->before);
			if (rc != TF_OK) {
				return rc;
			}
		} else {
			return tfi_set_error(
			    m, TF_EFORMAT,
			    "%s export: op '%s' (node '%s') has "
			    "no %s counterpart",
			    format, op, name, format);
		}
		L->out = out;
		L->nsrc = nin;
		memcpy(L->src, src, (size_t)nin * sizeof *src);
		c->n++;
	}
	if (strcmp(prev, tf_model_prediction(m)) != 0 || c->n == 0) {
		return tfi_set_error(m, TF_EFORMAT,
		                     "%s export: the chain does not end at "
		                     "the prediction",
		                     format);
	}
	if (!fold || !tf_model_normalizes(m)) {
		return TF_OK;
	}
	struct layer *L = &c->l[0];
	if (L->dense != 1) {
		/* a convolution or a recurrent layer: its kernel is shared
		 * by columns of different statistics, so the standardisation
		 * stays a layer (a batch normalisation of the row: gamma 1,
		 * beta 0, the mean and the variance of the schema) */
		return stdz_stats(m, c);
	}
	float *k = malloc((size_t)(L->in * L->units) * sizeof *k);
	float *b = calloc((size_t)L->units, sizeof *b);
	c->owned[0] = k;
	c->owned[1] = b;
	if (k == NULL || b == NULL) {
		return tfi_set_error(m, TF_ENOMEM, "out of memory");
	}
	for (int64_t u = 0; u < L->units; u++) {
		double acc = L->bias ? L->bias[u] : 0.0;
		for (int64_t i = 0; i < L->in; i++) {
			int is_int;
			float mean, inv;
			tf_columns_column(tf_model_columns(m), i, &is_int,
			                  &mean, &inv);
			float w = L->kernel[i * L->units + u];
			k[i * L->units + u] = w * inv;
			acc -= (double)mean * inv * w;
		}
		b[u] = (float)acc;
	}
	L->kernel = k;
	L->bias = b;
	return TF_OK;
}

/* ---- TensorFlow.js ------------------------------------------------------- */

/* One weight of TensorFlow.js's manifest, named LAYER/NAME, its values
 * appended to weights.bin as little-endian float32; shape NULL: rows x
 * cols (cols alone when rows is 0). */
static int
put_weights_shape(struct tfi_buf *bin, json_t *manifest, const char *layer,
                  const char *name, const float *p, int64_t rows, int64_t cols,
                  json_t *shape)
{
	char full[160];
	snprintf(full, sizeof full, "%s/%s", layer, name);
	if (shape == NULL) {
		shape = rows > 0 ? json_pack("[I,I]", (json_int_t)rows,
		                             (json_int_t)cols)
		                 : json_pack("[I]", (json_int_t)cols);
	}
	json_array_append_new(manifest,
	                      json_pack("{s:s,s:o,s:s}", "name", full, "shape",
	                                shape, "dtype", "float32"));
	return tfi_buf_put_le_floats(bin, p,
	                             (size_t)((rows > 0 ? rows : 1) * cols));
}

/* rows x cols values (cols alone when rows is 0) as one named weight. */
static int
put_weights(struct tfi_buf *bin, json_t *manifest, const char *layer,
            const char *name, const float *p, int64_t rows, int64_t cols)
{
	return put_weights_shape(bin, manifest, layer, name, p, rows, cols,
	                         NULL);
}

/* A BatchNormalization layer's four weights, n each, named LAYER/...;
 * gamma and beta NULL: 1 and 0 (the schema's standardisation). */
static int
put_batchnorm(struct tfi_buf *bin, json_t *manifest, const char *layer,
              const float *gamma, const float *beta, const float *mean,
              const float *var, int64_t n)
{
	float *one = gamma ? NULL : malloc((size_t)n * sizeof *one);
	float *zero = beta ? NULL : calloc((size_t)n, sizeof *zero);
	for (int64_t k = 0; one != NULL && k < n; k++) {
		one[k] = 1.0f;
	}
	const char *wn[] = {"gamma", "beta", "moving_mean", "moving_variance"};
	const float *wp[] = {gamma ? gamma : one, beta ? beta : zero, mean,
	                     var};
	int rc = wp[0] && wp[1] ? TF_OK : TF_ENOMEM;
	for (int k = 0; k < 4 && rc == TF_OK; k++) {
		rc = put_weights(bin, manifest, layer, wn[k], wp[k], 0, n);
	}
	free(one);
	free(zero);
	return rc;
}

/* A Keras layer of images: Conv2D (its kernel HWIO, as tfkit's rows
 * already are), the poolings and Flatten, channels last as tfkit's. */
static json_t *
tfjs_image_layer(const struct layer *L, const char *name, const char **cls,
                 struct tfi_buf *bin, json_t *weights, int *rc)
{
	const char *pad = L->same ? "same" : "valid";
	json_t *cfg;
	switch (L->dense) {
	case L_CONV:
		*cls = "Conv2D";
		cfg = json_pack(
		    "{s:s,s:I,s:[I,I],s:[I,I],s:s,s:s,s:[i,i],s:s,"
		    "s:b,s:s}",
		    "name", name, "filters", (json_int_t)L->units,
		    "kernel_size", (json_int_t)L->k, (json_int_t)L->k,
		    "strides", (json_int_t)L->stride, (json_int_t)L->stride,
		    "padding", pad, "data_format", "channels_last",
		    "dilation_rate", 1, 1, "activation", "linear", "use_bias",
		    L->bias != NULL, "dtype", "float32");
		*rc = put_weights_shape(
		    bin, weights, name, "kernel", L->kernel, L->in, L->units,
		    json_pack("[I,I,I,I]", (json_int_t)L->k, (json_int_t)L->k,
		              (json_int_t)L->c, (json_int_t)L->units));
		if (*rc == TF_OK && L->bias != NULL) {
			*rc = put_weights(bin, weights, name, "bias", L->bias,
			                  0, L->units);
		}
		return cfg;
	case L_MAX_POOL:
	case L_AVG_POOL:
		*cls = L->dense == L_MAX_POOL ? "MaxPooling2D"
		                              : "AveragePooling2D";
		return json_pack(
		    "{s:s,s:[I,I],s:[I,I],s:s,s:s}", "name", name, "pool_size",
		    (json_int_t)L->k, (json_int_t)L->k, "strides",
		    (json_int_t)L->stride, (json_int_t)L->stride, "padding",
		    pad, "data_format", "channels_last");
	case L_GLOBAL_POOL:
		*cls = "GlobalAveragePooling2D";
		return json_pack("{s:s,s:s}", "name", name, "data_format",
		                 "channels_last");
	default:
		*cls = "Flatten";
		return json_pack("{s:s}", "name", name);
	}
}

/* TensorFlow.js's LSTM of an lstm node: the same kernels (Keras' gate
 * order), the bias with tfkit's forget_bias added to the forget gate's
 * (Keras adds none when it runs), sigmoid gates as Keras' (TensorFlow.js
 * defaults to hard sigmoid).  Its GRU of a gru node with the reset
 * before: the same kernels and bias (z, r, h), reset_after false. */
static int
tfjs_lstm_weights(const struct layer *L, const char *prefix,
                  const float *kernel, const float *rkernel, const float *b,
                  double forget_bias, struct tfi_buf *bin, json_t *weights)
{
	int64_t u = L->units, gu = L->gates * u;
	float *bias = calloc((size_t)gu, sizeof *bias);
	if (bias == NULL) {
		return TF_ENOMEM;
	}
	for (int64_t k = 0; k < gu; k++) {
		bias[k] =
		    (b ? b[k] : 0.0f) + (L->gates == 4 && k >= u && k < 2 * u
		                             ? (float)forget_bias
		                             : 0.0f);
	}
	int rc = put_weights(bin, weights, prefix, "kernel", kernel, L->in, gu);
	if (rc == TF_OK) {
		rc = put_weights(bin, weights, prefix, "recurrent_kernel",
		                 rkernel, u, gu);
	}
	if (rc == TF_OK) {
		rc = put_weights(bin, weights, prefix, "bias", bias, 0, gu);
	}
	free(bias);
	return rc;
}

/* ... and of a bidirectional layer (L->bidi), named name (the concat's):
 * a Bidirectional wrapper (merge_mode concat, the forward outputs first,
 * as tfkit's concat) of the lstm, whose weights are NAME/forward_LSTM/
 * and NAME/backward_LSTM/ (the twin's). */
static json_t *
tfjs_lstm_layer(const struct layer *L, const char *lstm, const char *name,
                const char **cls, struct tfi_buf *bin, json_t *weights, int *rc)
{
	const char *rnn = L->gates == 4 ? "LSTM" : "GRU";
	*cls = L->bidi ? "Bidirectional" : rnn;
	json_t *cfg = json_pack(
	    "{s:s,s:I,s:s,s:s,s:b,s:b,s:b,s:b,s:s}", "name", lstm, "units",
	    (json_int_t)L->units, "activation", "tanh", "recurrent_activation",
	    "sigmoid", "use_bias", 1, "return_sequences", L->seq,
	    "return_state", 0, "go_backwards", L->reverse, "dtype", "float32");
	if (cfg != NULL) {
		json_object_set_new(
		    cfg, L->gates == 4 ? "unit_forget_bias" : "reset_after",
		    json_false());
	}
	if (!L->bidi) {
		*rc = tfjs_lstm_weights(L, lstm, L->kernel, L->rkernel, L->bias,
		                        L->forget_bias, bin, weights);
		return cfg;
	}
	char fw[300], bw[300];
	snprintf(fw, sizeof fw, "%s/forward_%s", name, lstm);
	snprintf(bw, sizeof bw, "%s/backward_%s", name, lstm);
	*rc = tfjs_lstm_weights(L, fw, L->kernel, L->rkernel, L->bias,
	                        L->forget_bias, bin, weights);
	if (*rc == TF_OK) {
		*rc =
		    tfjs_lstm_weights(L, bw, L->bkernel, L->brkernel, L->bbias,
		                      L->bforget_bias, bin, weights);
	}
	return json_pack("{s:s,s:s,s:{s:s,s:o},s:s}", "name", name,
	                 "merge_mode", "concat", "layer", "class_name", rnn,
	                 "config", cfg, "dtype", "float32");
}

/* ---- TensorFlow.js: a functional model for sequences of varying length -- */

/*
 * A model of sequences of varying length takes two inputs, x and ids, as
 * its ONNX export (ids as float32 here) and is a Keras functional model
 * of standard layers alone:
 * - a block of an input's columns is a Cropping2D of the row seen as a
 *   1 x W x 1 image;
 * - a recurrent layer's steps are masked by their row's length: a Dense
 *   of the length column gives length - t for step t, a ReLU capped at
 *   1 makes that 1 for each step and 0 after the last; the steps are
 *   multiplied by it, and it is joined to them as one more feature (its
 *   kernel row zeros), so a Masking layer masks exactly the padded
 *   steps (all of a step's values 0), whatever the step's own values;
 *   an lstm reading every step of one before it of the same lengths
 *   takes that layer's mask as Keras passes it on;
 * - a sequence's embedding is an Embedding of the table with a row of
 *   zeros before and after it and the bias added to every row: a Dense
 *   adds 1 to each id and a ReLU capped at vocab + 1 sends an id below
 *   the table to the first row and one past it to the last, the rows
 *   of zeros tfkit's lookup reads for them.
 * A model of sparse ids whose ids are its table's rows takes ids,
 * values and features (numbers beside them) as its ONNX export, x its
 * values and standardised features joined; a bag is the same Embedding
 * without the bias, a Dot of its rows and the values, and a Dense of
 * the identity adding the bias (fn_bag()).
 */
struct fn {
	struct tf_model *m;
	json_t *layers, *weights;
	struct tfi_buf *bin;
	int rc;
	const char *val[MAX_NODES]; /* each graph node's Keras layer */
	int form[MAX_NODES];    /* 0 a row, 1 steps (T x F), 2 masked steps */
	int64_t len[MAX_NODES]; /* masked steps: their ids length column */
	int64_t flag_col[MAX_NODES];
	const char *flag[MAX_NODES]; /* each length column's step flags */
	int nflags;
};

/* Keras layer NAME of class CLS and config CFG (its name set) reading
 * the layers named in IN, appended; its name as the model keeps it, or
 * NULL (f->rc set) when something failed. */
static const char *
fn_add(struct fn *f, const char *cls, const char *name, json_t *cfg,
       const char *const *in, int nin)
{
	json_t *inbound = json_array(), *node = json_array();
	for (int k = 0; k < nin && node != NULL; k++) {
		json_array_append_new(node,
		                      json_pack("[s,i,i,{}]", in[k], 0, 0));
	}
	if (nin > 0) {
		json_array_append_new(inbound, node);
	} else {
		json_decref(node);
	}
	if (cfg != NULL) {
		json_object_set_new(cfg, "name", json_string(name));
	}
	json_t *l =
	    cfg && inbound
	        ? json_pack("{s:s,s:o,s:s,s:o}", "class_name", cls, "config",
	                    cfg, "name", name, "inbound_nodes", inbound)
	        : NULL;
	if (l == NULL || json_array_append_new(f->layers, l) != 0) {
		if (l == NULL) {
			json_decref(cfg);
			json_decref(inbound);
		}
		f->rc = f->rc ? f->rc : TF_ENOMEM;
		return NULL;
	}
	return json_string_value(json_object_get(l, "name"));
}

/* A layer of one input (NULL when in is NULL: an earlier step failed). */
static const char *
fn_add1(struct fn *f, const char *cls, const char *name, json_t *cfg,
        const char *in)
{
	if (in == NULL || f->rc != TF_OK) {
		json_decref(cfg);
		return NULL;
	}
	return fn_add(f, cls, name, cfg, &in, 1);
}

static const char *
fn_reshape(struct fn *f, const char *name, const char *in, json_t *shape)
{
	return fn_add1(f, "Reshape", name,
	               json_pack("{s:o}", "target_shape", shape), in);
}

/* A Dense of fixed weights: kernel rows x cols and bias cols. */
static const char *
fn_dense(struct fn *f, const char *name, const char *in, const float *kernel,
         const float *bias, int64_t rows, int64_t cols, const char *act)
{
	const char *l =
	    fn_add1(f, "Dense", name,
	            json_pack("{s:I,s:s,s:b,s:s}", "units", (json_int_t)cols,
	                      "activation", act, "use_bias", bias != NULL,
	                      "dtype", "float32"),
	            in);
	int rc = l ? put_weights(f->bin, f->weights, name, "kernel", kernel,
	                         rows, cols)
	           : TF_OK;
	if (l && rc == TF_OK && bias != NULL) {
		rc = put_weights(f->bin, f->weights, name, "bias", bias, 0,
		                 cols);
	}
	f->rc = f->rc ? f->rc : rc;
	return rc == TF_OK ? l : NULL;
}

/* ReLU capped at max (values clipped to [0, max]). */
static const char *
fn_clip(struct fn *f, const char *name, const char *in, double max)
{
	return fn_add1(f, "ReLU", name, json_pack("{s:f}", "max_value", max),
	               in);
}

/* Columns begin to begin + size of the row of layer in (width wide) as
 * a 1 x size x 1 image, named NAME/crop. */
static const char *
fn_crop(struct fn *f, const char *name, const char *in, int64_t width,
        int64_t begin, int64_t size)
{
	char rn[300], cn[300];
	snprintf(rn, sizeof rn, "%s/row", name);
	snprintf(cn, sizeof cn, "%s/crop", name);
	const char *r = fn_reshape(
	    f, rn, in, json_pack("[i,I,i]", 1, (json_int_t)width, 1));
	return fn_add1(f, "Cropping2D", cn,
	               json_pack("{s:[[i,i],[I,I]],s:s}", "cropping", 0, 0,
	                         (json_int_t)begin,
	                         (json_int_t)(width - begin - size),
	                         "data_format", "channels_last"),
	               r);
}

/* Each step's flag (T x 1: 1 for the row's steps, 0 after its last) of
 * the lengths in ids column col, made once a column. */
static const char *
fn_flags(struct fn *f, int64_t col, int64_t T, int64_t ids_width)
{
	for (int k = 0; k < f->nflags; k++) {
		if (f->flag_col[k] == col) {
			return f->flag[k];
		}
	}
	char base[64], n1[96], n2[96], n3[96];
	snprintf(base, sizeof base, "ids/length_%lld", (long long)col);
	snprintf(n1, sizeof n1, "%s/steps", base);
	snprintf(n2, sizeof n2, "%s/flags", base);
	snprintf(n3, sizeof n3, "%s/flag_steps", base);
	float *k = malloc((size_t)T * sizeof *k),
	      *b = malloc((size_t)T * sizeof *b);
	for (int64_t t = 0; k && b && t < T; t++) {
		k[t] = 1.0f;
		b[t] = (float)-t;
	}
	const char *c = fn_crop(f, base, "ids", ids_width, col, 1);
	const char *l = fn_reshape(f, base, c, json_pack("[i]", 1));
	l = k && b ? fn_dense(f, n1, l, k, b, 1, T, "linear") : NULL;
	free(k);
	free(b);
	l = fn_clip(f, n2, l, 1.0);
	l = fn_reshape(f, n3, l, json_pack("[I,i]", (json_int_t)T, 1));
	if (l != NULL && f->nflags < MAX_NODES) {
		f->flag_col[f->nflags] = col;
		f->flag[f->nflags++] = l;
	}
	if (l == NULL && f->rc == TF_OK) {
		f->rc = TF_ENOMEM;
	}
	return l;
}

/* The error of node reader taking every step of node src's output
 * (how: what TensorFlow.js's model cannot give as tfkit's): NULL. */
static const char *
every_step(struct fn *f, const char *reader, int src, const char *how)
{
	f->rc = tfi_set_error(
	    f->m, TF_EFORMAT,
	    "TensorFlow.js export: node '%s' reads every step of '%s' %s: "
	    "not exported yet",
	    reader, tf_graph_node_name(tf_model_graph(f->m), src), how);
	return NULL;
}

/* Node src's value as a row (a flattened sequence of embeddings), or
 * NULL with the error set for the output of every step of a recurrent
 * layer (padded steps that tfkit gives as zeros, TensorFlow.js as the
 * last step's output). */
static const char *
fn_row(struct fn *f, int src, const char *reader)
{
	struct tf_graph *g = tf_model_graph(f->m);
	if (f->form[src] == 2) {
		return every_step(f, reader, src, "of varying length");
	}
	if (f->form[src] == 0) {
		return f->val[src];
	}
	char n[300];
	snprintf(n, sizeof n, "%s/flat", tf_graph_node_name(g, src));
	const char *l = fn_add1(f, "Flatten", n, json_object(), f->val[src]);
	f->val[src] = l;
	f->form[src] = 0;
	return l;
}

/* A sequence's embedding (block_layer()'s) as described above, bias
 * (NULL: none) added to each row. */
static const char *
fn_embedding(struct fn *f, const struct layer *L, const char *name,
             int64_t ids_width, const float *bias)
{
	int64_t V = L->in, D = L->units;
	char n1[300], n2[300], n3[300], n4[300];
	snprintf(n1, sizeof n1, "%s/ids", name);
	snprintf(n2, sizeof n2, "%s/shift", name);
	snprintf(n3, sizeof n3, "%s/rows", name);
	snprintf(n4, sizeof n4, "%s/index", name);
	const float one = 1.0f;
	const char *l = fn_crop(f, name, "ids", ids_width, L->begin, L->size);
	l = fn_reshape(f, n1, l, json_pack("[I,i]", (json_int_t)L->size, 1));
	l = fn_dense(f, n2, l, &one, &one, 1, 1, "linear");
	l = fn_clip(f, n3, l, (double)(V + 1));
	l = fn_reshape(f, n4, l, json_pack("[I]", (json_int_t)L->size));
	l = fn_add1(f, "Embedding", name,
	            json_pack("{s:I,s:I,s:b,s:s}", "input_dim",
	                      (json_int_t)(V + 2), "output_dim", (json_int_t)D,
	                      "mask_zero", 0, "dtype", "float32"),
	            l);
	float *tab = l ? calloc((size_t)((V + 2) * D), sizeof *tab) : NULL;
	if (l != NULL && tab == NULL) {
		f->rc = TF_ENOMEM;
		return NULL;
	}
	for (int64_t r = 0; tab && r < V + 2; r++) {
		for (int64_t d = 0; d < D; d++) {
			float v = r >= 1 && r <= V ? L->kernel[(r - 1) * D + d]
			                           : 0.0f;
			tab[r * D + d] = v + (bias ? bias[d] : 0.0f);
		}
	}
	int rc = tab ? put_weights(f->bin, f->weights, name, "embeddings", tab,
	                           V + 2, D)
	             : TF_OK;
	free(tab);
	f->rc = f->rc ? f->rc : rc;
	return rc == TF_OK ? l : NULL;
}

/* A bag (block_layer()'s, combiner=sum) of the ids in columns begin to
 * begin + size and their values, the same columns of layer vals (width
 * wide): each id's row, an id below the table or past it a row of zeros
 * (fn_embedding()'s, without the bias), the rows weighted by the values
 * and summed (a Dot over the places), then the bias added by a Dense of
 * the identity. */
static const char *
fn_bag(struct fn *f, const struct layer *L, const char *name, int64_t ids_width,
       const char *vals, int64_t width)
{
	int64_t D = L->units;
	char n1[300], n2[300], n3[300];
	snprintf(n1, sizeof n1, "%s/lookup", name);
	snprintf(n2, sizeof n2, "%s/values", name);
	snprintf(n3, sizeof n3, "%s/sum", name);
	const char *in[2];
	in[0] = fn_embedding(f, L, n1, ids_width, NULL);
	in[1] = fn_crop(f, n2, vals, width, L->begin, L->size);
	in[1] = fn_reshape(f, n2, in[1], json_pack("[I]", (json_int_t)L->size));
	if (in[0] == NULL || in[1] == NULL || f->rc != TF_OK) {
		return NULL;
	}
	const char *sum = fn_add(
	    f, "Dot", L->bias ? n3 : name,
	    json_pack("{s:[i,i],s:b}", "axes", 1, 1, "normalize", 0), in, 2);
	if (sum == NULL || L->bias == NULL) {
		return sum;
	}
	float *eye = calloc((size_t)(D * D), sizeof *eye);
	if (eye == NULL) {
		f->rc = TF_ENOMEM;
		return NULL;
	}
	for (int64_t d = 0; d < D; d++) {
		eye[d * D + d] = 1.0f;
	}
	const char *l = fn_dense(f, name, sum, eye, L->bias, D, D, "linear");
	free(eye);
	return l;
}

/* An lstm (L, named name) over node src's steps, masked by its lengths
 * (the flags joined as a last feature: the kernel gains a row of zeros)
 * or by the lstm before it. */
static const char *
fn_lstm(struct fn *f, const struct layer *L, const char *name,
        int64_t ids_width)
{
	int src = L->src[0];
	const char *in = f->val[src];
	struct layer K = *L;
	float *padded = NULL;
	if (f->form[src] == 2 && f->len[src] != L->length) {
		return every_step(f, name, src, "by other lengths");
	}
	/* steps masked already (every step of the lstm before it, whose
	 * mask Keras passes on) go in as they are */
	if (f->form[src] != 2) {
		char n[300];
		if (f->form[src] == 0) {
			snprintf(n, sizeof n, "%s/steps", name);
			in = fn_reshape(f, n, in,
			                json_pack("[I,I]", (json_int_t)L->steps,
			                          (json_int_t)L->in));
		}
		if (L->length >= 0) {
			const char *flags =
			    fn_flags(f, L->length, L->steps, ids_width);
			const char *two[2] = {in, flags};
			snprintf(n, sizeof n, "%s/zeroed", name);
			in = in && flags && f->rc == TF_OK
			         ? fn_add(f, "Multiply", n, json_object(), two,
			                  2)
			         : NULL;
			two[0] = in;
			snprintf(n, sizeof n, "%s/flagged", name);
			in = in ? fn_add(f, "Concatenate", n,
			                 json_pack("{s:i}", "axis", -1), two, 2)
			        : NULL;
			snprintf(n, sizeof n, "%s/masked", name);
			in = fn_add1(f, "Masking", n,
			             json_pack("{s:f}", "mask_value", 0.0), in);
			/* the flag's kernel row: zeros */
			int64_t gu = L->gates * L->units;
			padded =
			    calloc((size_t)((L->in + 1) * gu), sizeof *padded);
			if (padded == NULL) {
				f->rc = TF_ENOMEM;
				return NULL;
			}
			memcpy(padded, L->kernel,
			       (size_t)(L->in * gu) * sizeof *padded);
			K.kernel = padded;
			K.in = L->in + 1;
		}
	}
	const char *cls;
	int rc = TF_OK;
	json_t *cfg =
	    in ? tfjs_lstm_layer(&K, name, name, &cls, f->bin, f->weights, &rc)
	       : NULL;
	free(padded);
	f->rc = f->rc ? f->rc : rc;
	return cfg && rc == TF_OK ? fn_add1(f, cls, name, cfg, in) : NULL;
}

/* Input NAME of width floats a row, listed in inputs. */
static const char *
fn_input(struct fn *f, json_t *inputs, const char *name, int64_t width)
{
	json_array_append_new(inputs, json_pack("[s,i,i]", name, 0, 0));
	return fn_add(f, "InputLayer", name,
	              json_pack("{s:[n,I],s:s,s:b}", "batch_input_shape",
	                        (json_int_t)width, "dtype", "float32", "sparse",
	                        0),
	              NULL, 0);
}

/* The schema's standardisation of n columns (their means and variances)
 * as a BatchNormalization layer named name over layer in. */
static const char *
fn_standardize(struct fn *f, const char *name, const char *in,
               const float *mean, const float *var, int64_t n)
{
	int rc =
	    put_batchnorm(f->bin, f->weights, name, NULL, NULL, mean, var, n);
	f->rc = f->rc ? f->rc : rc;
	/* (x - mean) / sqrt(var + 0) */
	return fn_add1(f, "BatchNormalization", name,
	               json_pack("{s:i,s:f,s:f,s:b,s:b}", "axis", -1, "epsilon",
	                         0.0, "momentum", 0.99, "center", 1, "scale",
	                         1),
	               in);
}

/* Whether TensorFlow.js's layers can look a bag's ids up (a table of
 * rows rows): only ids that are the table's rows (an Embedding), of
 * float32's exact integers; a hash or an id vocabulary they cannot. */
static int
tfjs_bag_check(struct tf_model *m, int64_t rows)
{
	const struct tf_columns *cols = tf_model_columns(m);
	size_t n;
	const char *how =
	    tf_columns_bag_hashed(cols)
	        ? "hashes its ids into buckets (--hash-buckets)"
	    : tfi_columns_id_vocab(cols, &n) != NULL
	        ? "looks its ids up in their vocabulary (the schema's)"
	    : tf_columns_bag_oov(cols) > 0
	        ? "hashes the ids it has no row for (--oov-buckets)"
	    : rows > (1 << 24) ? "has more rows than float32 ids can name"
	                       : NULL;
	return how == NULL
	           ? TF_OK
	           : tfi_set_error(m, TF_EFORMAT,
	                           "TensorFlow.js export: the model %s, "
	                           "which TensorFlow.js's layers cannot "
	                           "do (a model of ids that are its "
	                           "table's rows exports); ONNX and the "
	                           "tfkit format serve it",
	                           how);
}

/* The functional model (its layers, inputs and output) of a model of
 * sequences of varying length or of sparse ids, its weights appended
 * to bin and weights. */
static int
tfjs_functional(struct tf_model *m, struct tfi_buf *bin, json_t *weights,
                json_t **topology)
{
	struct chain c;
	memset(&c, 0, sizeof c); /* chain_free() when it is not made */
	struct fn *f = calloc(1, sizeof *f);
	int64_t bw, bv;
	int bag = tf_columns_bag(tf_model_columns(m), &bw, &bv);
	int rc = bag ? tfjs_bag_check(m, bv) : TF_OK;
	rc = rc ? rc : f ? chain(m, &c, 0, 0, 1, "TensorFlow.js") : TF_ENOMEM;
	if (rc != TF_OK) {
		chain_free(&c);
		free(f);
		return rc == TF_ENOMEM ? tfi_set_error(m, rc, "out of memory")
		                       : rc;
	}
	struct tf_graph *g = tf_model_graph(m);
	struct tf_columns *cols = tf_model_columns(m);
	int64_t w = tf_columns_width(cols), iw = tf_graph_ids_width(g);
	int xi = tf_graph_find(g, "x"), ii = tf_graph_find(g, "ids");
	f->m = m;
	f->layers = json_array();
	f->weights = weights;
	f->bin = bin;
	json_t *inputs = json_array();
	int64_t nnum = bag && w > bw ? w - bw : 0; /* numbers beside ids */
	if (bag && xi >= 0 && ii >= 0) {
		/* ONNX's inputs: ids, their values and the numbers beside
		 * them (standardised), x their values and numbers joined */
		f->val[ii] = fn_input(f, inputs, "ids", iw);
		const char *v = fn_input(f, inputs, "values", bw), *in[2];
		in[0] = v;
		in[1] = nnum > 0 ? fn_input(f, inputs, "features", nnum) : NULL;
		if (nnum > 0 && tf_model_normalizes(m)) {
			f->rc = stdz_stats(m, &c);
			in[1] = f->rc ? NULL
			              : fn_standardize(f, "standardize", in[1],
			                               c.stdz_mean + bw,
			                               c.stdz_var + bw, nnum);
		}
		f->val[xi] = nnum == 0 ? v
		             : v && in[1]
		                 ? fn_add(f, "Concatenate", "values_features",
		                          json_pack("{s:i}", "axis", -1), in, 2)
		                 : NULL;
	} else {
		if (xi >= 0) {
			f->val[xi] = fn_input(f, inputs, "x", w);
		}
		if (ii >= 0) {
			f->val[ii] = fn_input(f, inputs, "ids", iw);
		}
	}
	if (xi >= 0 && tf_model_normalizes(m) && !bag) {
		f->rc = stdz_stats(m, &c);
		f->val[xi] =
		    f->rc ? NULL
		          : fn_standardize(f, "x_standardize", f->val[xi],
		                           c.stdz_mean, c.stdz_var, w);
	}
	for (int i = 0; i < c.n && f->rc == TF_OK; i++) {
		const struct layer *L = &c.l[i];
		const char *name = tf_graph_node_name(g, L->node);
		const char *op = tf_graph_node_op(g, L->node);
		const char *l = NULL, *in[MAX_JOIN];
		int form = 0;
		switch (L->dense) {
		case L_COLUMNS:
			l = fn_crop(
			    f, name, f->val[L->src[0]],
			    tf_graph_width(g, tf_graph_node_name(g, L->src[0])),
			    L->begin, L->size);
			l = fn_reshape(f, name, l,
			               json_pack("[I]", (json_int_t)L->size));
			break;
		case L_EMBED:
			if (L->bag == 2) {
				f->rc = tfi_set_error(
				    m, TF_EFORMAT,
				    "TensorFlow.js export: node '%s' averages "
				    "its ids (combiner=mean), a division "
				    "TensorFlow.js's layers do not have; ONNX "
				    "and the tfkit format serve it",
				    name);
				break;
			}
			if (L->bag) {
				l = fn_bag(f, L, name, iw, f->val[L->src[1]],
				           w);
				break;
			}
			l = fn_embedding(f, L, name, iw, L->bias);
			form = 1;
			break;
		case L_RNN:
			f->rc = tfjs_rnn_check(m, op, name, L->reverse, L->seq,
			                       L->before);
			l = f->rc == TF_OK ? fn_lstm(f, L, name, iw) : NULL;
			form = L->seq ? 2 : 0;
			f->len[L->node] = L->length;
			break;
		case L_CONCAT:
		case L_ADD:
			for (int k = 0; k < L->nsrc; k++) {
				in[k] = fn_row(f, L->src[k], name);
			}
			l = f->rc != TF_OK ? NULL
			    : L->dense == L_ADD
			        ? fn_add(f, "Add", name, json_object(), in,
			                 L->nsrc)
			        : fn_add(f, "Concatenate", name,
			                 json_pack("{s:i}", "axis", -1), in,
			                 L->nsrc);
			break;
		case 1:
			l = fn_row(f, L->src[0], name);
			l = l ? fn_dense(f, name, l, L->kernel, L->bias, L->in,
			                 L->units, act_name[L->act])
			      : NULL;
			break;
		case 0: {
			l = fn_add1(f, "BatchNormalization", name,
			            json_pack("{s:i,s:f,s:f,s:b,s:b}", "axis",
			                      -1, "epsilon", L->epsilon,
			                      "momentum", 0.99, "center", 1,
			                      "scale", 1),
			            fn_row(f, L->src[0], name));
			f->rc = l ? put_batchnorm(bin, weights, name, L->gamma,
			                          L->beta, L->mean, L->var,
			                          L->units)
			          : f->rc;
			break;
		}
		case -1:
			l = fn_add1(
			    f, "Activation", name,
			    json_pack("{s:s}", "activation", act_name[L->act]),
			    fn_row(f, L->src[0], name));
			break;
		default:
			f->rc =
			    tfi_set_error(m, TF_EFORMAT,
			                  "TensorFlow.js export: node '%s' "
			                  "has no counterpart in a model of "
			                  "sequences of varying length",
			                  name);
		}
		if (l == NULL) {
			f->rc = f->rc ? f->rc : TF_ENOMEM;
			break;
		}
		/* the layer's value is its output node's (an activation
		 * merged into a dense) */
		f->val[L->node] = f->val[L->out] = l;
		f->form[L->node] = f->form[L->out] = form;
	}
	int p = tf_graph_find(g, tf_model_prediction(m));
	const char *out = f->rc == TF_OK && p >= 0
	                      ? fn_row(f, p, tf_model_prediction(m))
	                      : NULL;
	rc = f->rc != TF_OK ? f->rc : out == NULL ? TF_EINTERNAL : TF_OK;
	if (rc == TF_OK) {
		*topology = json_pack(
		    "{s:s,s:{s:s,s:o,s:o,s:[[s,i,i]]}}", "class_name", "Model",
		    "config", "name", "tfkit", "layers", f->layers,
		    "input_layers", inputs, "output_layers", out, 0, 0);
		rc = *topology ? TF_OK : TF_ENOMEM;
	} else {
		json_decref(f->layers);
		json_decref(inputs);
	}
	if (rc == TF_ENOMEM || rc == TF_EINTERNAL) {
		rc = tfi_set_error(m, rc,
		                   rc == TF_ENOMEM ? "out of memory"
		                                   : "TensorFlow.js export: no "
		                                     "prediction");
	}
	chain_free(&c);
	free(f);
	return rc;
}

/* The Sequential model of a chain of layers (every other model), its
 * weights appended to bin and weights. */
static int
tfjs_sequential(struct tf_model *m, struct tfi_buf *bin, json_t *weights,
                json_t **topology)
{
	struct chain c;
	int rc = chain(m, &c, 1, 1, 0, "TensorFlow.js");
	if (rc != TF_OK) {
		chain_free(&c);
		return rc;
	}
	struct tf_graph *g = tf_model_graph(m);
	json_t *layers = json_array();
	int64_t width = tf_columns_width(tf_model_columns(m));
	int image = 0; /* the layer before gave an image, not a row */
	if (c.stdz_mean != NULL) {
		/* (x - mean) / sqrt(var + 0): the schema's standardisation */
		const char *sn = "x_standardize";
		rc = put_batchnorm(bin, weights, sn, NULL, NULL, c.stdz_mean,
		                   c.stdz_var, width);
		json_array_append_new(
		    layers,
		    json_pack("{s:s,s:{s:s,s:[n,I],s:i,s:f,s:f,s:b,s:b,s:s}}",
		              "class_name", "BatchNormalization", "config",
		              "name", sn, "batch_input_shape",
		              (json_int_t)width, "axis", -1, "epsilon", 0.0,
		              "momentum", 0.99, "center", 1, "scale", 1,
		              "dtype", "float32"));
	}
	for (int i = 0; i < c.n && rc == TF_OK; i++) {
		const struct layer *L = &c.l[i];
		const char *name = tf_graph_node_name(g, L->node);
		json_t *cfg;
		const char *cls;
		/* a bidirectional layer is named as the concat it is */
		const char *outn = tf_graph_node_name(g, L->out);
		if (image && (L->dense == 1 || L->act == ACT_SOFTMAX)) {
			/* tfkit's dense takes an image as its row; Keras's
			 * would take its last axis */
			char fl[160];
			snprintf(fl, sizeof fl, "%s/flatten", name);
			json_array_append_new(
			    layers, json_pack("{s:s,s:{s:s}}", "class_name",
			                      "Flatten", "config", "name", fl));
			image = 0;
		}
		if (L->dense == L_RNN) {
			image = L->seq; /* every step's output: T x units */
		} else if (L->dense >= L_CONV) {
			image =
			    L->dense != L_FLATTEN && L->dense != L_GLOBAL_POOL;
		}
		if (L->dense == L_RNN) {
			cfg = tfjs_lstm_layer(L, name, L->bidi ? outn : name,
			                      &cls, bin, weights, &rc);
		} else if (L->dense == 1) {
			cls = "Dense";
			cfg = json_pack("{s:s,s:I,s:s,s:b,s:s}", "name", name,
			                "units", (json_int_t)L->units,
			                "activation", act_name[L->act],
			                "use_bias", L->bias != NULL, "dtype",
			                "float32");
			rc = put_weights(bin, weights, name, "kernel",
			                 L->kernel, L->in, L->units);
			if (rc == TF_OK && L->bias != NULL) {
				rc = put_weights(bin, weights, name, "bias",
				                 L->bias, 0, L->units);
			}
		} else if (L->dense == 0) {
			cls = "BatchNormalization";
			cfg = json_pack("{s:s,s:i,s:f,s:f,s:b,s:b}", "name",
			                name, "axis", -1, "epsilon", L->epsilon,
			                "momentum", 0.99, "center", 1, "scale",
			                1);
			rc = put_batchnorm(bin, weights, name, L->gamma,
			                   L->beta, L->mean, L->var, L->units);
		} else if (L->dense >= L_CONV) {
			cfg =
			    tfjs_image_layer(L, name, &cls, bin, weights, &rc);
		} else {
			cls = "Activation";
			cfg = json_pack("{s:s,s:s}", "name", name, "activation",
			                act_name[L->act]);
		}
		struct tf_shape s;
		int rank = i == 0 ? tf_graph_shape(g, "x", &s) : 0;
		if (i == 0 && ((L->dense == L_RNN && rank == 2) ||
		               (L->dense >= L_CONV && rank == 3))) {
			/* the row of features to the steps or the image it
			 * is (the first layer, or after the standardisation) */
			json_t *r = json_pack(
			    "{s:s,s:{s:s,s:o}}", "class_name", "Reshape",
			    "config", "name", rank == 2 ? "x_steps" : "x_image",
			    "target_shape",
			    rank == 2
			        ? json_pack("[I,I]", (json_int_t)s.dim[0],
			                    (json_int_t)s.dim[1])
			        : json_pack("[I,I,I]", (json_int_t)s.dim[0],
			                    (json_int_t)s.dim[1],
			                    (json_int_t)s.dim[2]));
			if (c.stdz_mean == NULL) {
				json_object_set_new(
				    json_object_get(r, "config"),
				    "batch_input_shape",
				    json_pack("[n,I]", (json_int_t)width));
			}
			json_array_append_new(layers, r);
		} else if (i == 0 && c.stdz_mean == NULL) {
			json_object_set_new(
			    cfg, "batch_input_shape",
			    json_pack("[n,I]", (json_int_t)width));
		}
		json_array_append_new(
		    layers,
		    json_pack("{s:s,s:o}", "class_name", cls, "config", cfg));
	}
	chain_free(&c);
	*topology = json_pack("{s:s,s:{s:s,s:o}}", "class_name", "Sequential",
	                      "config", "name", "tfkit", "layers", layers);
	return rc == TF_OK && *topology == NULL
	           ? tfi_set_error(m, TF_ENOMEM, "out of memory")
	           : rc;
}

int
tf_model_export_tfjs(struct tf_model *m, const char *dir)
{
	struct tf_sequence_view sv;
	json_t *weights = json_array(), *topology = NULL;
	struct tfi_buf bin = {0};
	int64_t bw, bv;
	int rc = tf_columns_sequence(tf_model_columns(m), &sv) ||
	                 tf_columns_bag(tf_model_columns(m), &bw, &bv)
	             ? tfjs_functional(m, &bin, weights, &topology)
	             : tfjs_sequential(m, &bin, weights, &topology);
	char gen[64];
	snprintf(gen, sizeof gen, "tf-export %s", tf_version());
	if (topology != NULL) {
		json_object_set_new(topology, "keras_version",
		                    json_string("tfjs-layers 4.22.0"));
		json_object_set_new(topology, "backend",
		                    json_string("tensor_flow.js"));
	}
	json_t *o =
	    topology
	        ? json_pack("{s:s,s:s,s:n,s:o,s:[{s:[s],s:o}]}", "format",
	                    "layers-model", "generatedBy", gen, "convertedBy",
	                    "modelTopology", topology, "weightsManifest",
	                    "paths", "weights.bin", "weights", weights)
	        : NULL;
	if (topology == NULL) {
		json_decref(weights); /* (json_pack() took it otherwise) */
	}
	char *text = o && rc == TF_OK
	                 ? json_dumps(o, JSON_INDENT(1) | JSON_PRESERVE_ORDER)
	                 : NULL;
	json_decref(o);
	if (rc == TF_OK && text == NULL) {
		rc = tfi_set_error(m, TF_ENOMEM, "out of memory");
	}
	if (rc == TF_OK && mkdir_p(dir) != 0) {
		rc = tfi_set_errno(m, TF_ECREATE, errno, "cannot create %s",
		                   dir);
	}
	char path[4096], err[512];
	if (rc == TF_OK) {
		/* Weights first: model.json names them, so it comes last. */
		snprintf(path, sizeof path, "%s/weights.bin", dir);
		rc = tf_file_replace(path, bin.data, bin.len, TF_FILE_SYNC, err,
		                     sizeof err);
		snprintf(path, sizeof path, "%s/model.json", dir);
		rc = rc ? rc
		        : tf_file_replace(path, text, strlen(text),
		                          TF_FILE_SYNC, err, sizeof err);
		if (rc != TF_OK) {
			tfi_set_error(m, rc, "%s", err);
		}
	}
	free(text);
	tfi_buf_free(&bin);
	return rc;
}

/* ---- ONNX ---------------------------------------------------------------- */

/* Everything an ONNX model points to, freed together. */
struct onnx {
	Onnx__NodeProto *nodes[8 * MAX_NODES];
	Onnx__TensorProto *inits[8 * MAX_NODES];
	size_t nnodes, ninits;

	char *strs[16 * MAX_NODES];
	size_t nstrs;
	Onnx__AttributeProto attrs[8 * MAX_NODES];
	Onnx__AttributeProto *attrp[8 * MAX_NODES];
	size_t nattrs;
	int64_t ints[32 * MAX_NODES]; /* the attributes' lists */
	size_t nints;
	int64_t *lists[2]; /* ... too long for ints: an id vocabulary's */
	size_t nlists;
	int ml; /* a node of ai.onnx.ml (LabelEncoder): its opset imported */
	const char *id_rows; /* the ids' rows in an id vocabulary, once */
	int bits; /* a bitwise node (a hashed id's): opset 18, not 13 */
	int full; /* something did not fit: no model */
};

/* A name made from fmt, a and b, kept until onnx_free(); NULL (and the
 * model marked full) when it cannot be. */
static char *
keep_str(struct onnx *o, const char *fmt, const char *a, const char *b)
{
	char buf[256];
	if (a == NULL || b == NULL) {
		o->full = 1; /* a name before could not be made */
		return NULL;
	}
	snprintf(buf, sizeof buf, fmt, a, b);
	char *s = strdup(buf);
	if (s != NULL && o->nstrs < sizeof o->strs / sizeof o->strs[0]) {
		o->strs[o->nstrs++] = s;
		return s;
	}
	o->full = 1;
	free(s);
	return NULL;
}

/* An initializer of rank dims: float32 values p, or int64 values q. */
static const char *
add_init_nd(struct onnx *o, const char *name, const float *p, const int64_t *q,
            const int64_t *dim, int rank)
{
	Onnx__TensorProto *t = calloc(1, sizeof *t);
	int64_t *dims = calloc((size_t)rank, sizeof *dims);
	size_t n = 1, size = p ? 4 : 8;
	for (int d = 0; d < rank; d++) {
		n *= (size_t)dim[d];
	}
	uint8_t *raw = malloc(n * size);
	if (o->ninits == sizeof o->inits / sizeof o->inits[0]) {
		o->full = 1;
		free(t);
		t = NULL;
	}
	if (t == NULL || dims == NULL || raw == NULL) {
		free(t);
		free(dims);
		free(raw);
		return NULL;
	}
	onnx__tensor_proto__init(t);
	t->name = keep_str(o, "%s%s", name, "");
	memcpy(dims, dim, (size_t)rank * sizeof *dims);
	t->n_dims = (size_t)rank;
	t->dims = dims;
	t->has_data_type = 1;
	t->data_type = p ? ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
	                 : ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
	if (p != NULL) {
		tfi_put_le_floats(raw, p, n);
	}
	for (size_t i = 0; p == NULL && i < n; i++) {
		tfi_put_le64(raw + 8 * i, (uint64_t)q[i]);
	}
	t->has_raw_data = 1;
	t->raw_data.data = raw;
	t->raw_data.len = n * size;
	o->inits[o->ninits++] = t;
	return t->name;
}

/* A float initializer: d0 x d1, or of d1 values when d0 is 0. */
static const char *
add_init(struct onnx *o, const char *name, const float *p, int64_t d0,
         int64_t d1)
{
	int64_t dim[2] = {d0 > 0 ? d0 : d1, d1};
	return add_init_nd(o, name, p, NULL, dim, d0 > 0 ? 2 : 1);
}

/* A node of one output; inputs NULL-terminated. */
static Onnx__NodeProto *
add_node(struct onnx *o, const char *op, const char *out, const char *in0,
         const char *in1, const char *in2, const char *in3, const char *in4)
{
	Onnx__NodeProto *n = calloc(1, sizeof *n);
	const char *ins[] = {in0, in1, in2, in3, in4};
	char **inp = calloc(MAX_JOIN, sizeof *inp); /* a concat's */
	char **outp = calloc(1, sizeof *outp);
	if (o->nnodes == sizeof o->nodes / sizeof o->nodes[0]) {
		o->full = 1;
		free(n);
		n = NULL;
	}
	if (n == NULL || inp == NULL || outp == NULL) {
		free(n);
		free(inp);
		free(outp);
		return NULL;
	}
	onnx__node_proto__init(n);
	for (int i = 0; i < 5 && ins[i] != NULL; i++) {
		inp[n->n_input++] = (char *)ins[i];
	}
	n->input = inp;
	outp[0] = (char *)out;
	n->output = outp;
	n->n_output = 1;
	n->op_type = (char *)op;
	n->name = (char *)out;
	o->nodes[o->nnodes++] = n;
	return n;
}

/* One more attribute of n (a node's attributes are added one after
 * another): a float, an int, or n_ints ints. */
static void
node_attrs(struct onnx *o, Onnx__NodeProto *n, const char *name, int is_float,
           double v, const int64_t *ints, size_t n_ints)
{
	if (o->nattrs == sizeof o->attrs / sizeof o->attrs[0] ||
	    n_ints > sizeof o->ints / sizeof o->ints[0] - o->nints) {
		o->full = 1;
		return;
	}
	Onnx__AttributeProto *a = &o->attrs[o->nattrs];
	onnx__attribute_proto__init(a);
	a->name = (char *)name;
	a->has_type = 1;
	if (ints != NULL) {
		a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
		a->ints = o->ints + o->nints;
		a->n_ints = n_ints;
		memcpy(a->ints, ints, n_ints * sizeof *ints);
		o->nints += n_ints;
	} else if (is_float) {
		a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
		a->has_f = 1;
		a->f = (float)v;
	} else {
		a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
		a->has_i = 1;
		a->i = (int64_t)v;
	}
	o->attrp[o->nattrs] = a;
	if (n->n_attribute == 0) {
		n->attribute = &o->attrp[o->nattrs];
	}
	o->nattrs++;
	n->n_attribute++;
}

static void
node_attr(struct onnx *o, Onnx__NodeProto *n, const char *name, int is_float,
          double v)
{
	node_attrs(o, n, name, is_float, v, NULL, 0);
}

/* An ints attribute of n values of list, a malloc'd array the model
 * keeps (freed with it, and on failure). */
static void
node_attr_list(struct onnx *o, Onnx__NodeProto *n, const char *name,
               int64_t *list, size_t count)
{
	if (o->nlists == sizeof o->lists / sizeof o->lists[0]) {
		o->full = 1;
		free(list);
		return;
	}
	o->lists[o->nlists++] = list;
	node_attrs(o, n, name, 0, 0, NULL, 0);
	if (n->n_attribute > 0 && !o->full) {
		Onnx__AttributeProto *a = n->attribute[n->n_attribute - 1];
		a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
		a->has_i = 0;
		a->ints = list;
		a->n_ints = count;
	}
}

/* A string attribute (a constant the caller keeps). */
static void
node_attr_str(struct onnx *o, Onnx__NodeProto *n, const char *name,
              const char *v)
{
	node_attrs(o, n, name, 0, 0, NULL, 0);
	if (n->n_attribute > 0 && !o->full) {
		Onnx__AttributeProto *a = n->attribute[n->n_attribute - 1];
		a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
		a->has_i = 0;
		a->has_s = 1;
		a->s.data = (uint8_t *)v;
		a->s.len = strlen(v);
	}
}

/*
 * An lstm or gru layer as ONNX's LSTM or GRU: the flat rows reshaped to
 * N x T x F and made T x N x F; the kernels as W [1, G*H, F] and R
 * [1, G*H, H] in ONNX's gate order (LSTM i, o, f, c from Keras' i, f,
 * c, o; GRU z, r, h as Keras'), the biases as B [1, 2*G*H] (lstm's
 * forget_bias folded into the forget gate's; gru's linear_before_reset,
 * Keras' reset_after, or with reset_after=0 linear_before_reset 0 and
 * the one bias as Wb, Rb zeros); its last h (Y_h) or every step's (Y) made flat
 * rows again.  lens (int32 [N], or NULL): each row's steps, as ONNX's
 * sequence_lens: a row's last h is that of its last step, its padded
 * steps' outputs zero, and reverse reads each row from its own last
 * step, as tfkit's length=K.
 */
static int
rnn_node(struct onnx *o, const struct layer *L, const char *out, const char *in,
         const char *lens)
{
	static const int lstm_from[] = {0, 3, 1, 2}; /* ONNX gate <- Keras' */
	int64_t G = L->gates, H = L->units, F = L->in, T = L->steps;
	float *W = malloc((size_t)(G * H * F) * sizeof *W);
	float *R = malloc((size_t)(G * H * H) * sizeof *R);
	float *B = calloc((size_t)(2 * G * H), sizeof *B);
	int ok = W != NULL && R != NULL && B != NULL;
	for (int64_t q = 0; ok && q < G; q++) {
		int64_t k = G == 4 ? lstm_from[q] : q; /* Keras' gate */
		for (int64_t u = 0; u < H; u++) {
			for (int64_t f = 0; f < F; f++) {
				W[(q * H + u) * F + f] =
				    L->kernel[f * G * H + k * H + u];
			}
			for (int64_t v = 0; v < H; v++) {
				R[(q * H + u) * H + v] =
				    L->rkernel[v * G * H + k * H + u];
			}
			if (L->bias != NULL) {
				B[q * H + u] = L->bias[k * H + u];
				if (G == 3 && !L->before) {
					B[G * H + q * H + u] =
					    L->bias[G * H + k * H + u];
				}
			}
			if (G == 4 && k == 1) {
				B[q * H + u] += (float)L->forget_bias;
			}
		}
	}
	const int64_t wd[] = {1, G * H, F}, rd[] = {1, G * H, H},
	              bd[] = {1, 2 * G * H}, one = 3, two = 2;
	const int64_t seq_shape[] = {-1, T, F}, tnf[] = {1, 0, 2};
	const char *wn =
	    ok ? add_init_nd(o, keep_str(o, "%s%s", out, "/W"), W, NULL, wd, 3)
	       : NULL;
	const char *rn =
	    wn ? add_init_nd(o, keep_str(o, "%s%s", out, "/R"), R, NULL, rd, 3)
	       : NULL;
	const char *bn =
	    rn ? add_init_nd(o, keep_str(o, "%s%s", out, "/B"), B, NULL, bd, 2)
	       : NULL;
	free(W);
	free(R);
	free(B);
	const char *shp =
	    bn ? add_init_nd(o, keep_str(o, "%s%s", out, "/seq_shape"), NULL,
	                     seq_shape, &one, 1)
	       : NULL;
	const char *ntf = keep_str(o, "%s%s", out, "/ntf");
	const char *tnf_name = keep_str(o, "%s%s", out, "/tnf");
	const char *y = keep_str(o, "%s%s", out, "/Y");
	const char *yh = keep_str(o, "%s%s", out, "/Y_h");
	Onnx__NodeProto *n =
	    shp && ntf && tnf_name && y && yh
	        ? add_node(o, "Reshape", ntf, in, shp, NULL, NULL, NULL)
	        : NULL;
	n = n ? add_node(o, "Transpose", tnf_name, ntf, NULL, NULL, NULL, NULL)
	      : NULL;
	if (n != NULL) {
		node_attrs(o, n, "perm", 0, 0, tnf, 3);
		n = add_node(o, G == 4 ? "LSTM" : "GRU", yh, tnf_name, wn, rn,
		             bn, lens);
	}
	char **outs = n ? calloc(2, sizeof *outs) : NULL;
	if (outs == NULL) {
		return -1;
	}
	free(n->output);
	outs[0] = (char *)y;
	outs[1] = (char *)yh;
	n->output = outs;
	n->n_output = 2;
	node_attr(o, n, "hidden_size", 0, (double)H);
	if (L->reverse) {
		node_attr_str(o, n, "direction", "reverse");
	}
	if (G == 3 && !L->before) {
		node_attr(o, n, "linear_before_reset", 0, 1);
	}
	if (!L->seq) {
		/* Y_h: 1 x N x H to N x H */
		const int64_t flat[] = {-1, H};
		const char *fs =
		    add_init_nd(o, keep_str(o, "%s%s", out, "/h_shape"), NULL,
		                flat, &two, 1);
		return fs && add_node(o, "Reshape", out, yh, fs, NULL, NULL,
		                      NULL)
		           ? 0
		           : -1;
	}
	/* Y: T x 1 x N x H to N x (T*H) */
	const int64_t tnh[] = {T, -1, H}, ntf_perm[] = {1, 0, 2},
	              flat[] = {-1, T * H};
	const char *s1 = add_init_nd(o, keep_str(o, "%s%s", out, "/tnh"), NULL,
	                             tnh, &one, 1);
	const char *s2 = add_init_nd(o, keep_str(o, "%s%s", out, "/nth"), NULL,
	                             flat, &two, 1);
	const char *a = keep_str(o, "%s%s", out, "/Y_tnh");
	const char *b = keep_str(o, "%s%s", out, "/Y_nth");
	n = s1 && s2 && a && b
	        ? add_node(o, "Reshape", a, y, s1, NULL, NULL, NULL)
	        : NULL;
	n = n ? add_node(o, "Transpose", b, a, NULL, NULL, NULL, NULL) : NULL;
	if (n != NULL) {
		node_attrs(o, n, "perm", 0, 0, ntf_perm, 3);
		n = add_node(o, "Reshape", out, b, s2, NULL, NULL, NULL);
	}
	return n != NULL ? 0 : -1;
}

/* The int64 initializer out + suffix of the n values v (a shape, an
 * index), made when ok (what it follows was made), else NULL. */
static const char *
add_ints(struct onnx *o, int ok, const char *out, const char *suffix,
         const int64_t *v, int64_t n)
{
	return ok ? add_init_nd(o, keep_str(o, "%s%s", out, suffix), NULL, v,
	                        &n, 1)
	          : NULL;
}

/* A uint64 constant of one value, named out + suffix (add_ints()'s,
 * its type uint64). */
static const char *
add_u64(struct onnx *o, int ok, const char *out, const char *suffix, uint64_t v)
{
	const int64_t q = (int64_t)v;
	const char *n = add_ints(o, ok, out, suffix, &q, 1);
	if (n != NULL) {
		o->inits[o->ninits - 1]->data_type =
		    ONNX__TENSOR_PROTO__DATA_TYPE__UINT64;
	}
	return n;
}

/* A Cast of in to type, named out: out, or NULL. */
static const char *
cast_node(struct onnx *o, const char *out, const char *in, int type)
{
	Onnx__NodeProto *n =
	    out ? add_node(o, "Cast", out, in, NULL, NULL, NULL, NULL) : NULL;
	if (n != NULL) {
		node_attr(o, n, "to", 0, type);
	}
	return n != NULL ? out : NULL;
}

/* Columns begin to begin + size of a flat [N, W] value in, named out:
 * ONNX's Slice along axis 1. */
static const char *
slice_cols(struct onnx *o, const char *out, const char *in, int64_t begin,
           int64_t size)
{
	const int64_t b = begin, e = begin + size, axis = 1;
	const char *bn = add_ints(o, 1, out, "/begin", &b, 1);
	const char *en = add_ints(o, bn != NULL, out, "/end", &e, 1);
	const char *an = add_ints(o, en != NULL, out, "/axis", &axis, 1);
	return an && add_node(o, "Slice", out, in, bn, en, an, NULL) ? out
	                                                             : NULL;
}

/* Each row's steps for recurrent layer out: column col of the ids, as
 * int32 [N] (ONNX's sequence_lens). */
static const char *
lengths_node(struct onnx *o, const char *out, int64_t col)
{
	const int64_t flat = -1;
	const char *c = keep_str(o, "%s%s", out, "/length_col");
	const char *r = keep_str(o, "%s%s", out, "/length_n");
	const char *l = keep_str(o, "%s%s", out, "/lengths");
	const char *sh =
	    add_ints(o, c && r && l, out, "/length_shape", &flat, 1);
	return sh && slice_cols(o, c, "ids", col, 1) &&
	               add_node(o, "Reshape", r, c, sh, NULL, NULL, NULL)
	           ? cast_node(o, l, r, ONNX__TENSOR_PROTO__DATA_TYPE__INT32)
	           : NULL;
}

/* The table rows of ids r (int64), named from out: r where 0 <= r < V
 * (vn; zn the int64 0), else row els; *inside the mask.  NULL when a
 * node cannot be made. */
static const char *
table_rows(struct onnx *o, const char *out, const char *r, const char *zn,
           const char *vn, const char *els, const char **inside)
{
	const char *ge = keep_str(o, "%s%s", out, "/ids_ge0");
	const char *lt = keep_str(o, "%s%s", out, "/ids_lt");
	const char *in = keep_str(o, "%s%s", out, "/ids_in");
	const char *at = keep_str(o, "%s%s", out, "/rows");
	*inside = in;
	return ge && lt && in && at &&
	               add_node(o, "GreaterOrEqual", ge, r, zn, NULL, NULL,
	                        NULL) &&
	               add_node(o, "Less", lt, r, vn, NULL, NULL, NULL) &&
	               add_node(o, "And", in, ge, lt, NULL, NULL, NULL) &&
	               add_node(o, "Where", at, in, r, els, NULL, NULL)
	           ? at
	           : NULL;
}

/*
 * An embedding of a sequence's ids (combiner=concat), named out: ids
 * columns begin to begin + size, each id's row of the table in order as
 * [N, size * dim]; an id outside the table reads a row of zeros, as
 * tfkit's lookup gives it (Where picks the zero row appended to the
 * table), then the bias, if any, is added to every row.
 */
static int
embed_node(struct onnx *o, const struct layer *L, const char *out)
{
	int64_t V = L->in, D = L->units;
	float *tab = calloc((size_t)((V + 1) * D), sizeof *tab);
	if (tab != NULL) {
		memcpy(tab, L->kernel, (size_t)(V * D) * sizeof *tab);
	}
	const int64_t td[] = {V + 1, D}, zero = 0, shape[] = {-1, L->size * D};
	const char *tn =
	    tab ? add_init_nd(o, keep_str(o, "%s%s", out, "/table"), tab, NULL,
	                      td, 2)
	        : NULL;
	free(tab);
	const char *zn = add_ints(o, tn != NULL, out, "/zero", &zero, 1);
	const char *vn = add_ints(o, zn != NULL, out, "/vocab", &V, 1);
	const char *sn = add_ints(o, vn != NULL, out, "/shape", shape, 2);
	const char *bn =
	    sn && L->bias
	        ? add_init(o, keep_str(o, "%s%s", out, "/bias"), L->bias, 0, D)
	        : NULL;
	const char *ids = keep_str(o, "%s%s", out, "/ids");
	const char *g = keep_str(o, "%s%s", out, "/gathered");
	const char *gb = keep_str(o, "%s%s", out, "/biased");
	const char *in, *at;
	if (sn == NULL || (L->bias && bn == NULL) || !ids || !g || !gb ||
	    slice_cols(o, ids, "ids", L->begin, L->size) == NULL ||
	    (at = table_rows(o, out, ids, zn, vn, vn, &in)) == NULL ||
	    !add_node(o, "Gather", g, tn, at, NULL, NULL, NULL) ||
	    (bn && !add_node(o, "Add", gb, g, bn, NULL, NULL, NULL))) {
		return -1;
	}
	return add_node(o, "Reshape", out, bn ? gb : g, sn, NULL, NULL, NULL)
	           ? 0
	           : -1;
}

/*
 * Each of ids (int64) hashed into n buckets, plus base, named from out
 * (int64, ids' shape): tfkit's rule (tf_columns_bag_id(), tfi_mix64():
 * splitmix64's finaliser, z ^= z >> 30, z *= K1, z ^= z >> 27, z *= K2,
 * z ^= z >> 31, then z mod n) as ONNX computes it: shifts and xors of
 * uint64 (BitShift, BitwiseXor: opset 18), the products of int64 (the
 * low 64 bits are the same; onnxruntime multiplies int64, not uint64),
 * Mod of uint64.  NULL when a node cannot be made.
 */
static const char *
hash_rows(struct onnx *o, const char *out, const char *ids, uint64_t n,
          int64_t base)
{
	static const int sh[3] = {30, 27, 31};
	static const uint64_t mul[2] = {0xbf58476d1ce4e5b9ull,
	                                0x94d049bb133111ebull};
	static const char *const step[3] = {"/hash1", "/hash2", "/hash3"};
	const int U64 = ONNX__TENSOR_PROTO__DATA_TYPE__UINT64;
	const int I64 = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
	o->bits = 1;
	const char *z =
	    cast_node(o, keep_str(o, "%s%s", out, "/hash_u"), ids, U64);
	for (int k = 0; k < 3 && z != NULL; k++) {
		const char *st = keep_str(o, "%s%s", out, step[k]);
		const char *c =
		    add_u64(o, st != NULL, st, "_shift", (uint64_t)sh[k]);
		const char *r = keep_str(o, "%s%s", st, "_shifted");
		const char *x = keep_str(o, "%s%s", st, "_xor");
		Onnx__NodeProto *bs =
		    c && r && x
		        ? add_node(o, "BitShift", r, z, c, NULL, NULL, NULL)
		        : NULL;
		if (bs == NULL) {
			return NULL;
		}
		node_attr_str(o, bs, "direction", "RIGHT");
		z = add_node(o, "BitwiseXor", x, z, r, NULL, NULL, NULL) ? x
		                                                         : NULL;
		if (k == 2 || z == NULL) {
			break;
		}
		const int64_t m = (int64_t)mul[k];
		const char *mn = add_ints(o, 1, st, "_k", &m, 1);
		const char *si =
		    cast_node(o, keep_str(o, "%s%s", st, "_signed"), z, I64);
		const char *p = keep_str(o, "%s%s", st, "_product");
		z = mn && si && p &&
		            add_node(o, "Mul", p, si, mn, NULL, NULL, NULL)
		        ? cast_node(o, keep_str(o, "%s%s", st, "_u"), p, U64)
		        : NULL;
	}
	const char *nn = add_u64(o, z != NULL, out, "/buckets", n);
	const char *md = keep_str(o, "%s%s", out, "/bucket_u");
	const char *b =
	    nn && md && add_node(o, "Mod", md, z, nn, NULL, NULL, NULL)
	        ? cast_node(o, keep_str(o, "%s%s", out, "/bucket"), md, I64)
	        : NULL;
	if (b == NULL || base == 0) {
		return b;
	}
	const char *bn = add_ints(o, 1, out, "/bucket_base", &base, 1);
	const char *at = keep_str(o, "%s%s", out, "/oov_rows");
	return bn && at && add_node(o, "Add", at, b, bn, NULL, NULL, NULL)
	           ? at
	           : NULL;
}

/*
 * An embedding bag (tfkit's weighted lookup: TensorFlow's
 * embedding_lookup_sparse), named out: ids columns begin to begin + size
 * (int64 [N, size]) and as many values, vals (float [N, size]); each id's
 * row of the table (an id vocabulary's through ai.onnx.ml's LabelEncoder,
 * its ids as keys; the ids themselves below the rows otherwise; hashed
 * into buckets, hash_rows(), for --hash-buckets, and for an id of none
 * of the rows with --oov-buckets) times its value, summed (Gather, Mul,
 * ReduceSum), over the values' sum for a mean (unless it is 0), then the
 * bias, if any: [N, dim].  An id the table has no row for adds nothing,
 * as tf-serve gives a vocabulary's; a row's unused places take any id
 * with the value 0.
 */
static int
bag_node(struct onnx *o, const struct layer *L, const char *out,
         const char *vals, const struct tf_columns *cols)
{
	size_t nvocab;
	const uint64_t *vocab = tfi_columns_id_vocab(cols, &nvocab);
	int64_t V = L->in, oov = tf_columns_bag_oov(cols);
	const int64_t td[] = {V, L->units}, zero = 0, one = 1, two = 2;
	const float fz = 0.0f, f1 = 1.0f;
	const char *tn = add_init_nd(o, keep_str(o, "%s%s", out, "/table"),
	                             L->kernel, NULL, td, 2);
	const char *zn = add_ints(o, tn != NULL, out, "/zero", &zero, 1);
	const char *vn = add_ints(o, zn != NULL, out, "/vocab", &V, 1);
	const char *a1 = add_ints(o, vn != NULL, out, "/axis1", &one, 1);
	const char *a2 = add_ints(o, a1 != NULL, out, "/axis2", &two, 1);
	const char *fzn =
	    a2 ? add_init(o, keep_str(o, "%s%s", out, "/fzero"), &fz, 0, 1)
	       : NULL;
	const char *f1n =
	    fzn && L->bag == 2
	        ? add_init(o, keep_str(o, "%s%s", out, "/fone"), &f1, 0, 1)
	        : fzn;
	const char *bn = f1n && L->bias
	                     ? add_init(o, keep_str(o, "%s%s", out, "/bias"),
	                                L->bias, 0, L->units)
	                     : NULL;
	const char *ids = keep_str(o, "%s%s", out, "/ids");
	const char *wv = keep_str(o, "%s%s", out, "/values");
	const char *raw = keep_str(o, "%s%s", out, "/looked_up");
	const char *w = keep_str(o, "%s%s", out, "/weights");
	const char *g = keep_str(o, "%s%s", out, "/gathered");
	const char *wu = keep_str(o, "%s%s", out, "/weights3");
	const char *p = keep_str(o, "%s%s", out, "/weighted");
	const char *sum = keep_str(o, "%s%s", out, "/sum");
	const char *ws = keep_str(o, "%s%s", out, "/weight_sum");
	const char *nz = keep_str(o, "%s%s", out, "/weight_sum_0");
	const char *den = keep_str(o, "%s%s", out, "/divisor");
	const char *mean = keep_str(o, "%s%s", out, "/mean");
	if (f1n == NULL || (L->bias && bn == NULL) || !ids || !wv || !raw ||
	    !w || !g || !wu || !p || !sum || !ws || !nz || !den || !mean ||
	    slice_cols(o, ids, "ids", L->begin, L->size) == NULL ||
	    slice_cols(o, wv, vals, L->begin, L->size) == NULL) {
		return -1;
	}
	if (vocab != NULL && o->id_rows == NULL) {
		/* the vocabulary's i-th id is row i; any other, -1: one
		 * lookup of every id, the bags' (wide_and_deep's two) each
		 * taking its columns of it */
		int64_t *keys = malloc((nvocab ? nvocab : 1) * sizeof *keys);
		int64_t *rows = malloc((nvocab ? nvocab : 1) * sizeof *rows);
		Onnx__NodeProto *n =
		    keys && rows
		        ? add_node(o, "LabelEncoder", "ids/vocabulary_rows",
		                   "ids", NULL, NULL, NULL, NULL)
		        : NULL;
		if (n == NULL) {
			free(keys);
			free(rows);
			return -1;
		}
		for (size_t i = 0; i < nvocab; i++) {
			keys[i] = (int64_t)vocab[i];
			rows[i] = (int64_t)i;
		}
		n->domain = "ai.onnx.ml";
		o->ml = 1;
		node_attr_list(o, n, "keys_int64s", keys, nvocab);
		node_attr_list(o, n, "values_int64s", rows, nvocab);
		node_attr(o, n, "default_int64", 0, -1);
		o->id_rows = "ids/vocabulary_rows";
	}
	if (vocab != NULL &&
	    slice_cols(o, raw, o->id_rows, L->begin, L->size) == NULL) {
		return -1;
	}
	/* hashed, every id a bucket; with oov buckets, an id of no row
	 * one of them */
	const char *r = vocab != NULL ? raw : ids;
	if (tf_columns_bag_hashed(cols)) {
		r = hash_rows(o, out, ids, (uint64_t)V, 0);
	} else if (oov > 0) {
		/* an id the table's first rows have: its row; any other,
		 * its bucket after them */
		const int64_t known = V - oov;
		const char *kn = add_ints(o, 1, out, "/known_count", &known, 1);
		const char *hn =
		    kn ? hash_rows(o, out, ids, (uint64_t)oov, known) : NULL;
		const char *inside;
		r = hn ? table_rows(o, keep_str(o, "%s%s", out, "/known"), r,
		                    zn, kn, hn, &inside)
		       : NULL;
	}
	/* an id without a row: row 0, its weight 0 */
	const char *in, *at;
	Onnx__NodeProto *sn;
	if (r == NULL ||
	    (at = table_rows(o, out, r, zn, vn, zn, &in)) == NULL ||
	    !add_node(o, "Where", w, in, wv, fzn, NULL, NULL) ||
	    !add_node(o, "Gather", g, tn, at, NULL, NULL, NULL) ||
	    !add_node(o, "Unsqueeze", wu, w, a2, NULL, NULL, NULL) ||
	    !add_node(o, "Mul", p, g, wu, NULL, NULL, NULL) ||
	    (sn = add_node(o, "ReduceSum", sum, p, a1, NULL, NULL, NULL)) ==
	        NULL) {
		return -1;
	}
	node_attr(o, sn, "keepdims", 0, 0);
	const char *y = sum;
	if (L->bag == 2) { /* the mean: over the values' sum, unless 0 */
		sn = add_node(o, "ReduceSum", ws, w, a1, NULL, NULL, NULL);
		if (sn == NULL ||
		    !add_node(o, "Equal", nz, ws, fzn, NULL, NULL, NULL) ||
		    !add_node(o, "Where", den, nz, f1n, ws, NULL, NULL) ||
		    !add_node(o, "Div", mean, sum, den, NULL, NULL, NULL)) {
			return -1;
		}
		node_attr(o, sn, "keepdims", 0, 1);
		y = mean;
	}
	return add_node(o, bn ? "Add" : "Identity", out, y, bn, NULL, NULL,
	                NULL)
	           ? 0
	           : -1;
}

/* Everything add_node(), add_init_nd() and keep_str() allocated. */
static void
onnx_free(struct onnx *o)
{
	for (size_t i = 0; i < o->nnodes; i++) {
		free(o->nodes[i]->input);
		free(o->nodes[i]->output);
		free(o->nodes[i]);
	}
	for (size_t i = 0; i < o->ninits; i++) {
		free(o->inits[i]->dims);
		free(o->inits[i]->raw_data.data);
		free(o->inits[i]);
	}
	for (size_t i = 0; i < o->nstrs; i++) {
		free(o->strs[i]);
	}
	for (size_t i = 0; i < o->nlists; i++) {
		free(o->lists[i]);
	}
}

/* A float tensor value [N, width] for graph inputs and outputs. */
struct vinfo {
	Onnx__ValueInfoProto v;
	Onnx__TypeProto t;
	Onnx__TypeProto__Tensor tt;
	Onnx__TensorShapeProto s;
	Onnx__TensorShapeProto__Dimension d[2];
	Onnx__TensorShapeProto__Dimension *dp[2];
};

static void
vinfo_init(struct vinfo *vi, const char *name, int64_t width)
{
	onnx__value_info_proto__init(&vi->v);
	onnx__type_proto__init(&vi->t);
	onnx__type_proto__tensor__init(&vi->tt);
	onnx__tensor_shape_proto__init(&vi->s);
	for (int i = 0; i < 2; i++) {
		onnx__tensor_shape_proto__dimension__init(&vi->d[i]);
		vi->dp[i] = &vi->d[i];
	}
	vi->d[0].value_case =
	    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
	vi->d[0].dim_param = "N";
	vi->d[1].value_case =
	    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
	vi->d[1].dim_value = width;
	vi->s.n_dim = 2;
	vi->s.dim = vi->dp;
	vi->tt.has_elem_type = 1;
	vi->tt.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	vi->tt.shape = &vi->s;
	vi->t.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	vi->t.tensor_type = &vi->tt;
	vi->v.name = (char *)name;
	vi->v.type = &vi->t;
}

/* Each graph node's value as ONNX tensors, made when first asked: flat
 * (N x width, as tfkit's rows, H x W x C for an image) and, for an
 * image, N x C x H x W (ONNX's layout). */
struct tensors {
	struct onnx *o;
	struct tf_graph *g;
	const char *flat[MAX_NODES];
	const char *nchw[MAX_NODES];
};

/* A node's value flat: an image transposed back to H x W x C first. */
static const char *
as_flat(struct tensors *t, int node)
{
	if (t->flat[node] != NULL || t->nchw[node] == NULL) {
		return t->flat[node];
	}
	static const int64_t nhwc[] = {0, 2, 3, 1};
	const char *name = tf_graph_node_name(t->g, node);
	const char *hwc = keep_str(t->o, "%s%s", name, "/nhwc");
	const char *row = keep_str(t->o, "%s%s", name, "/flat");
	Onnx__NodeProto *n =
	    hwc && row ? add_node(t->o, "Transpose", hwc, t->nchw[node], NULL,
	                          NULL, NULL, NULL)
	               : NULL;
	if (n != NULL) {
		node_attrs(t->o, n, "perm", 0, 0, nhwc, 4);
		n = add_node(t->o, "Flatten", row, hwc, NULL, NULL, NULL, NULL);
	}
	if (n != NULL) {
		node_attr(t->o, n, "axis", 0, 1);
		t->flat[node] = row;
	}
	return t->flat[node];
}

/* A node's value as an image, channels first: a flat row reshaped to
 * its H x W x C, then transposed. */
static const char *
as_image(struct tensors *t, int node)
{
	struct tf_shape s;
	const char *name = tf_graph_node_name(t->g, node);
	if (t->nchw[node] != NULL || t->flat[node] == NULL ||
	    tf_graph_shape(t->g, name, &s) != 3) {
		return t->nchw[node];
	}
	const int64_t shape[] = {-1, s.dim[0], s.dim[1], s.dim[2]};
	const int64_t rank = 4, nchw[] = {0, 3, 1, 2};
	const char *sh =
	    add_init_nd(t->o, keep_str(t->o, "%s%s", name, "/image_shape"),
	                NULL, shape, &rank, 1);
	const char *hwc = keep_str(t->o, "%s%s", name, "/nhwc");
	const char *chw = keep_str(t->o, "%s%s", name, "/nchw");
	Onnx__NodeProto *n = sh && hwc && chw
	                         ? add_node(t->o, "Reshape", hwc, t->flat[node],
	                                    sh, NULL, NULL, NULL)
	                         : NULL;
	n = n ? add_node(t->o, "Transpose", chw, hwc, NULL, NULL, NULL, NULL)
	      : NULL;
	if (n != NULL) {
		node_attrs(t->o, n, "perm", 0, 0, nchw, 4);
		t->nchw[node] = chw;
	}
	return t->nchw[node];
}

/* Conv, MaxPool or AveragePool of an image layer L, named out. */
static Onnx__NodeProto *
window_node(struct onnx *o, const struct layer *L, const char *out,
            const char *in)
{
	const int64_t win[] = {L->k, L->k}, step[] = {L->stride, L->stride};
	Onnx__NodeProto *n;
	if (L->dense == L_CONV) {
		/* HWIO rows (ky, kx, channel) to OIHW */
		float *wt = malloc((size_t)(L->in * L->units) * sizeof *wt);
		for (int64_t j = 0; wt && j < L->in; j++) {
			int64_t ch = j % L->c, at = j / L->c;
			for (int64_t u = 0; u < L->units; u++) {
				wt[(u * L->c + ch) * L->k * L->k + at] =
				    L->kernel[j * L->units + u];
			}
		}
		const int64_t dim[] = {L->units, L->c, L->k, L->k};
		const char *k =
		    wt ? add_init_nd(o, keep_str(o, "%s%s", out, "/kernel"), wt,
		                     NULL, dim, 4)
		       : NULL;
		free(wt);
		const char *b =
		    L->bias ? add_init(o, keep_str(o, "%s%s", out, "/bias"),
		                       L->bias, 0, L->units)
		            : NULL;
		n = k ? add_node(o, "Conv", out, in, k, b, NULL, NULL) : NULL;
	} else {
		n = add_node(o,
		             L->dense == L_MAX_POOL ? "MaxPool" : "AveragePool",
		             out, in, NULL, NULL, NULL, NULL);
	}
	if (n != NULL) {
		node_attrs(o, n, "kernel_shape", 0, 0, win, 2);
		node_attrs(o, n, "strides", 0, 0, step, 2);
		node_attrs(o, n, "pads", 0, 0, L->pad, 4);
		if (L->dense == L_AVG_POOL) {
			/* the padding counts for nothing, as in TensorFlow's
			 * SAME */
			node_attr(o, n, "count_include_pad", 0, 0);
		}
	}
	return n;
}

int
tf_model_export_onnx(struct tf_model *m, const char *path)
{
	struct chain c;
	int rc = chain(m, &c, 0, 1, 1, "ONNX");
	struct onnx *o = calloc(1, sizeof *o);
	if (rc != TF_OK || o == NULL) {
		chain_free(&c);
		free(o);
		return rc ? rc : tfi_set_error(m, TF_ENOMEM, "out of memory");
	}
	struct tf_graph *g = tf_model_graph(m);
	struct tf_columns *cols = tf_model_columns(m);
	int64_t w = tf_columns_width(cols);
	const char *cur = "x";
	int ok = 1;
	/* a model of tokens alone has no x; one of sequences has ids; one
	 * of a bag has ids and their values (x, named so) */
	int has_x = tf_graph_find(g, "x") >= 0,
	    has_ids = tf_graph_find(g, "ids") >= 0;
	int64_t bw, bv;
	int bag = tf_columns_bag(cols, &bw, &bv);
	/* numeric features beside a bag's ids: their own input, x's
	 * columns after the values */
	int64_t nnum = bag && w > bw ? w - bw : 0, first = bag ? bw : 0;
	if (bag) {
		cur = nnum > 0 ? "features" : "values";
	}
	if (has_x && tf_model_normalizes(m) && (!bag || nnum > 0)) {
		/* Standardisation as Sub and Mul nodes, exactly as served. */
		int64_t n = w - first;
		float *mean = malloc((size_t)n * sizeof *mean);
		float *inv = malloc((size_t)n * sizeof *inv);
		for (int64_t i = 0; mean && inv && i < n; i++) {
			int is_int;
			tf_columns_column(cols, first + i, &is_int, &mean[i],
			                  &inv[i]);
		}
		const char *mn =
		    mean && inv ? add_init(o, "standardize/mean", mean, 0, n)
		                : NULL;
		const char *in =
		    mn ? add_init(o, "standardize/inv_std", inv, 0, n) : NULL;
		free(mean);
		free(inv);
		ok = in != NULL &&
		     add_node(o, "Sub", "standardize/centered", cur, mn, NULL,
		              NULL, NULL) != NULL &&
		     add_node(o, "Mul", "standardize", "standardize/centered",
		              in, NULL, NULL, NULL) != NULL;
		cur = "standardize";
	}
	if (nnum > 0) {
		Onnx__NodeProto *n = add_node(o, "Concat", "values_features",
		                              "values", cur, NULL, NULL, NULL);
		if (n != NULL) {
			node_attr(o, n, "axis", 0, 1);
		}
		ok = ok && n != NULL;
		cur = "values_features";
	}
	static const char *const onnx_act[] = {NULL, "Relu", "Sigmoid", "Tanh",
	                                       "Softmax"};
	/* Each graph node's value as ONNX tensors: flat (N x width, as
	 * tfkit's rows) and, for images, N x C x H x W (ONNX's layout). */
	struct tensors t;
	memset(&t, 0, sizeof t);
	t.o = o;
	t.g = g;
	if (has_x) {
		t.flat[tf_graph_find(g, "x")] = cur;
	}
	for (int i = 0; ok && i < c.n; i++) {
		const struct layer *L = &c.l[i];
		const char *name = tf_graph_node_name(g, L->node);
		const char *out = name, *in = NULL;
		Onnx__NodeProto *n = NULL;
		struct tf_shape shape;
		int image_out = 0;
		switch (L->dense) {
		case 1: /* dense */
			in = as_flat(&t, L->src[0]);
			break;
		case L_CONV:
		case L_MAX_POOL:
		case L_AVG_POOL:
		case L_GLOBAL_POOL:
			in = as_image(&t, L->src[0]);
			image_out = L->dense != L_GLOBAL_POOL;
			break;
		case L_FLATTEN:
		case L_RNN:
		case L_COLUMNS:
			in = as_flat(&t, L->src[0]);
			break;
		case L_EMBED:
			in = "ids";
			break;
		case L_CONCAT:
		case L_ADD:
			image_out = tf_graph_shape(g, name, &shape) == 3;
			break;
		default: /* batch norm, activations: as the input is */
			image_out =
			    L->act != ACT_SOFTMAX &&
			    tf_graph_shape(g, tf_graph_node_name(g, L->src[0]),
			                   &shape) == 3;
			in = image_out ? as_image(&t, L->src[0])
			               : as_flat(&t, L->src[0]);
		}
		if (L->dense != L_CONCAT && L->dense != L_ADD && in == NULL) {
			ok = 0;
			break;
		}
		if (L->dense == L_FLATTEN) {
			t.flat[L->node] = in; /* the same values */
			continue;
		} else if (L->dense == L_CONCAT || L->dense == L_ADD) {
			/* channels (axis 1 of N x C x H x W) or columns; an
			 * add's Sum, of any count */
			const char *part[MAX_JOIN];
			for (int k = 0; k < L->nsrc; k++) {
				part[k] = image_out ? as_image(&t, L->src[k])
				                    : as_flat(&t, L->src[k]);
				ok = ok && part[k] != NULL;
			}
			n = ok ? add_node(o,
			                  L->dense == L_ADD ? "Sum" : "Concat",
			                  out, NULL, NULL, NULL, NULL, NULL)
			       : NULL;
			for (int k = 0; n != NULL && k < L->nsrc; k++) {
				n->input[n->n_input++] = (char *)part[k];
			}
			if (n != NULL && L->dense == L_CONCAT) {
				node_attr(o, n, "axis", 0, 1);
			}
		} else if (L->dense == L_GLOBAL_POOL) {
			const char *pool = keep_str(o, "%s%s", name, "/pool");
			ok = pool != NULL &&
			     add_node(o, "GlobalAveragePool", pool, in, NULL,
			              NULL, NULL, NULL) != NULL;
			n = ok ? add_node(o, "Flatten", out, pool, NULL, NULL,
			                  NULL, NULL)
			       : NULL;
			if (n != NULL) {
				node_attr(o, n, "axis", 0, 1);
			}
		} else if (L->dense == L_RNN) {
			const char *lens =
			    L->length >= 0 ? lengths_node(o, name, L->length)
			                   : NULL;
			ok = (L->length < 0 || lens != NULL) &&
			     rnn_node(o, L, name, in, lens) == 0;
			t.flat[L->node] = name;
			continue;
		} else if (L->dense == L_COLUMNS) {
			ok = slice_cols(o, name, in, L->begin, L->size) != NULL;
			t.flat[L->node] = name;
			continue;
		} else if (L->dense == L_EMBED && L->bag) {
			ok = bag_node(o, L, name, as_flat(&t, L->src[1]),
			              cols) == 0;
			t.flat[L->node] = name;
			continue;
		} else if (L->dense == L_EMBED) {
			ok = embed_node(o, L, name) == 0;
			t.flat[L->node] = name;
			continue;
		} else if (L->dense >= L_CONV) {
			n = window_node(o, L, name, in);
		} else if (L->dense == 1) {
			const char *k =
			    add_init(o, keep_str(o, "%s%s", name, "/kernel"),
			             L->kernel, L->in, L->units);
			const char *b =
			    L->bias
			        ? add_init(o,
			                   keep_str(o, "%s%s", name, "/bias"),
			                   L->bias, 0, L->units)
			        : NULL;
			n = add_node(o, "Gemm", out, in, k, b, NULL, NULL);
		} else if (L->dense == 0) {
			const char *nm[4];
			const float *wp[] = {L->gamma, L->beta, L->mean,
			                     L->var};
			const char *wn[] = {"/gamma", "/beta", "/moving_mean",
			                    "/moving_variance"};
			for (int k = 0; k < 4; k++) {
				nm[k] = add_init(
				    o, keep_str(o, "%s%s", name, wn[k]), wp[k],
				    0, L->units);
			}
			n = add_node(o, "BatchNormalization", out, in, nm[0],
			             nm[1], nm[2], nm[3]);
			if (n != NULL) {
				node_attr(o, n, "epsilon", 1, L->epsilon);
			}
		}
		if (L->dense != -1) {
			ok = ok && n != NULL;
			in = out;
			if (image_out) {
				t.nchw[L->node] = out;
			} else {
				t.flat[L->node] = out;
			}
		}
		if (ok && L->act != ACT_LINEAR) {
			const char *an = tf_graph_node_name(g, L->out);
			n = add_node(o, onnx_act[L->act], an, in, NULL, NULL,
			             NULL, NULL);
			ok = n != NULL;
			if (ok && L->act == ACT_SOFTMAX) {
				node_attr(o, n, "axis", 0, -1);
			}
			if (image_out) {
				t.nchw[L->out] = an;
			} else {
				t.flat[L->out] = an;
			}
		}
	}
	cur = ok ? as_flat(&t, tf_graph_find(g, tf_model_prediction(m))) : NULL;
	ok = ok && cur != NULL && !o->full;
	cur = cur ? cur : "";
	chain_free(&c);
	struct vinfo vin, vnum, vids, vout;
	vinfo_init(&vin, bag ? "values" : "x", bag ? bw : w);
	vinfo_init(&vnum, "features", nnum);
	vinfo_init(&vids, "ids", tf_graph_ids_width(g));
	vids.tt.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
	vinfo_init(&vout, cur, tf_graph_width(g, tf_model_prediction(m)));
	Onnx__ValueInfoProto *vinp[3], *voutp = &vout.v;
	size_t nin = 0;
	if (has_x) {
		vinp[nin++] = &vin.v;
	}
	if (nnum > 0) {
		vinp[nin++] = &vnum.v;
	}
	if (has_ids) {
		vinp[nin++] = &vids.v;
	}
	Onnx__GraphProto graph;
	onnx__graph_proto__init(&graph);
	graph.name = "tfkit";
	graph.n_node = o->nnodes;
	graph.node = o->nodes;
	graph.n_initializer = o->ninits;
	graph.initializer = o->inits;
	graph.n_input = nin;
	graph.input = vinp;
	graph.n_output = 1;
	graph.output = &voutp;
	Onnx__OperatorSetIdProto opset;
	onnx__operator_set_id_proto__init(&opset);
	opset.domain = "";
	opset.has_version = 1;
	opset.version = o->bits ? 18 : 13;
	Onnx__OperatorSetIdProto ml;
	onnx__operator_set_id_proto__init(&ml);
	ml.domain = "ai.onnx.ml";
	ml.has_version = 1;
	ml.version = 2; /* LabelEncoder's int64 keys and values */
	Onnx__OperatorSetIdProto *opsetp[] = {&opset, &ml};
	Onnx__ModelProto model;
	onnx__model_proto__init(&model);
	model.has_ir_version = 1;
	model.ir_version = o->bits ? 8 : 7; /* (opset 18 needs IR 8) */
	model.producer_name = "tf-export";
	model.producer_version = (char *)tf_version();
	model.graph = &graph;
	model.n_opset_import = o->ml ? 2 : 1;
	model.opset_import = opsetp;
	char doc[320];
	if (bag) {
		snprintf(doc, sizeof doc,
		         "input ids: int64 [N, %lld], a row's sparse ids (its "
		         "unused places any id with value 0); values: float "
		         "[N, %lld], each id's value%s; output %s",
		         (long long)bw, (long long)bw,
		         nnum > 0 ? "; features: float [N, numbers], the "
		                    "numeric features in schema order"
		                  : "",
		         cur);
	} else if (has_ids) {
		snprintf(doc, sizeof doc,
		         "input x: %lld features in schema column order; "
		         "ids: %lld int64 (a sequence's token ids, then its "
		         "length); output %s",
		         (long long)w, (long long)tf_graph_ids_width(g), cur);
	} else {
		snprintf(doc, sizeof doc,
		         "input x: %lld features in schema column order; "
		         "output %s",
		         (long long)w, cur);
	}
	model.doc_string = doc;
	uint8_t *buf = NULL;
	size_t len = 0;
	if (ok) {
		len = onnx__model_proto__get_packed_size(&model);
		buf = malloc(len ? len : 1);
		ok = buf != NULL;
	}
	if (ok) {
		onnx__model_proto__pack(&model, buf);
		char err[512];
		rc = tf_file_replace(path, buf, len, TF_FILE_SYNC, err,
		                     sizeof err);
		if (rc != TF_OK) {
			tfi_set_error(m, rc, "%s", err);
		}
	} else {
		rc = tfi_set_error(m, TF_ENOMEM, "out of memory");
	}
	free(buf);
	onnx_free(o);
	free(o);
	return rc;
}

/* ---- reading archives -----------------------------------------------------
 */

void
tf_export_archive_free(struct tf_export_member_version *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++) {
		for (size_t k = 0; k < v[i].nfiles; k++) {
			free((void *)v[i].files[k].name);
			free((void *)v[i].files[k].data);
		}
	}
	free(v);
}

/* The group of version v, added when there is none yet. */
static struct tf_export_member_version *
group(struct tf_export_member_version **mv, size_t *n, int64_t v)
{
	for (size_t k = 0; k < *n; k++) {
		if ((*mv)[k].number == v) {
			return &(*mv)[k];
		}
	}
	struct tf_export_member_version *g = realloc(*mv, (*n + 1) * sizeof *g);
	if (g == NULL) {
		return NULL;
	}
	*mv = g;
	memset(&g[*n], 0, sizeof g[*n]);
	g[*n].number = v;
	return &g[(*n)++];
}

/* A member of size bytes, as the archive's header says, NUL-terminated:
 * the buffer grows with the bytes that arrive, so a header that claims
 * more than the archive holds allocates no more than it holds (a
 * 199-byte archive asked for 2 GiB).  NULL when short or out of memory. */
static char *
read_member(struct archive *a, size_t size)
{
	size_t cap = size < 65536 ? size + 1 : 65536, len = 0;
	char *data = malloc(cap);
	if (data == NULL) {
		return NULL;
	}
	while (len < size) {
		if (len + 1 == cap) {
			size_t more = cap * 2 < size + 1 ? cap * 2 : size + 1;
			char *p = realloc(data, more);
			if (p == NULL) {
				break;
			}
			data = p;
			cap = more;
		}
		la_ssize_t got =
		    archive_read_data(a, data + len, cap - 1 - len);
		if (got <= 0) {
			break;
		}
		len += (size_t)got;
	}
	if (len != size) {
		free(data);
		return NULL;
	}
	data[len] = '\0';
	return data;
}

int
tf_export_read_archive(const char *path,
                       struct tf_export_member_version **versions, size_t *n,
                       char *err, size_t errlen)
{
	struct archive *a = archive_read_new();
	archive_read_support_filter_all(a);
	archive_read_support_format_all(a);
	struct tf_export_member_version *mv = NULL;
	size_t nv = 0;
	int rc = 0;
	err[0] = '\0';
	if (archive_read_open_filename(a, path, 65536) != ARCHIVE_OK) {
		snprintf(err, errlen, "%s: %s", path, archive_error_string(a));
		archive_read_free(a);
		return -1;
	}
	struct archive_entry *e;
	while ((rc = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		/* N/FILE: a version's file; anything else is not ours. */
		const char *name = archive_entry_pathname(e);
		const char *slash = name ? strchr(name, '/') : NULL;
		int64_t v;
		if (slash == NULL || archive_entry_filetype(e) != AE_IFREG ||
		    !tf_export_version(name, (size_t)(slash - name), &v) ||
		    strchr(slash + 1, '/') != NULL || slash[1] == '\0') {
			continue;
		}
		la_int64_t size = archive_entry_size(e);
		if (size < 0 || size > (1LL << 31)) {
			continue;
		}
		struct tf_export_member_version *g = group(&mv, &nv, v);
		if (g == NULL) {
			snprintf(err, errlen, "out of memory");
			rc = ARCHIVE_FATAL;
			break;
		}
		if (g->nfiles == TF_EXPORT_MAX_FILES) {
			continue;
		}
		char *data = read_member(a, (size_t)size);
		char *fname = strdup(slash + 1);
		if (data == NULL || fname == NULL) {
			free(data);
			free(fname);
			snprintf(err, errlen, "%s: %s: %s", path, name,
			         archive_error_string(a)
			             ? archive_error_string(a)
			             : "short member");
			rc = ARCHIVE_FATAL;
			break;
		}
		g->files[g->nfiles++] =
		    (struct tf_export_file){fname, data, (size_t)size};
	}
	if (rc != ARCHIVE_EOF && rc != ARCHIVE_OK) {
		if (err[0] == '\0') {
			snprintf(err, errlen, "%s: %s", path,
			         archive_error_string(a));
		}
		archive_read_free(a);
		tf_export_archive_free(mv, nv);
		return -1;
	}
	archive_read_free(a);
	*versions = mv;
	*n = nv;
	return 0;
}
