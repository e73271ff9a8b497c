/*
 * model.c - a trained model: loading a checkpoint or an export (verified
 * against its manifest first), its serving signature, and predicting.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "tf/batch.h"
#include "tf/checkpoint.h"
#include "tf/file.h"
#include "tf/image.h"
#include "tf/metrics.h"
#include "tf/model.h"

struct tf_model {
	struct tfi_handle err;
	struct tf_graph *g;
	struct tf_columns *cols; /* what a row holds: serving and export ask */
	json_t *info; /* the checkpoint header, or the export's model.json */
	int is_export;
	int task;
	int64_t classes;
	int normalize;
	int has_label;      /* the graph has a label input (a checkpoint's) */
	char **labels;      /* class labels */
	char **labels_json; /* ... as JSON strings, for responses */
	float *zeros;       /* label rows fed when predicting */
	size_t nzeros;
	char prediction[32];
	char path[4096];
	struct tf_device *dev; /* where it runs */
};

/* A GPU is one queue with one set of loss buffers: the models of a
 * process (tf-serve's workers each have one) take turns on it. */
static pthread_mutex_t gpu_turn = PTHREAD_MUTEX_INITIALIZER;

void
tf_model_set_device(struct tf_model *m, struct tf_device *d)
{
	m->dev = d ? d : tf_device_cpu();
}

struct tf_model *
tf_model_new(void)
{
	struct tf_model *m = calloc(1, sizeof(struct tf_model));
	if (m != NULL) {
		m->dev = tf_device_cpu();
	}
	return m;
}

static void
reset(struct tf_model *m)
{
	tf_errclear(m);
	tf_graph_free(m->g);
	tf_columns_free(m->cols);
	json_decref(m->info);
	for (int64_t k = 0; m->labels != NULL && k < m->classes; k++) {
		free(m->labels[k]);
		free(m->labels_json ? m->labels_json[k] : NULL);
	}
	free(m->labels);
	free(m->labels_json);
	m->labels_json = NULL;
	free(m->zeros);
	m->g = NULL;
	m->cols = NULL;
	m->info = NULL;
	m->labels = NULL;
	m->zeros = NULL;
	m->nzeros = 0;
}

void
tf_model_free(struct tf_model *m)
{
	if (m != NULL) {
		reset(m);
		free(m);
	}
}

/* Class labels as the data spells them (dataset.c). */
static int
make_labels(struct tf_model *m)
{
	int64_t n = m->task == TF_TASK_REGRESSION ? 0 : m->classes;
	m->labels = calloc((size_t)n + 1, sizeof *m->labels);
	m->labels_json = calloc((size_t)n + 1, sizeof *m->labels_json);
	if (m->labels == NULL || m->labels_json == NULL) {
		return TF_ENOMEM;
	}
	for (int64_t k = 0; k < n; k++) {
		char buf[1024];
		if (tf_columns_class_name(m->cols, k, buf, sizeof buf) !=
		    TF_OK) {
			snprintf(buf, sizeof buf, "%lld", (long long)k);
		}
		/* Escaped once: every response row carries one. */
		json_t *j = json_string(buf);
		m->labels_json[k] = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
		json_decref(j);
		if ((m->labels[k] = strdup(buf)) == NULL ||
		    m->labels_json[k] == NULL) {
			return TF_ENOMEM;
		}
	}
	return TF_OK;
}

/* Dataset and graph from a spec and a schema. */
static int
setup(struct tf_model *m, const struct tf_registry *reg, const char *spec,
      const char *schema, const char *task, json_int_t classes,
      const char *pred, int normalize)
{
	m->g = tf_graph_new();
	m->cols = tf_columns_new();
	if (m->g == NULL || m->cols == NULL) {
		return tfi_set_error(m, TF_ENOMEM, "out of memory");
	}
	int rc;
	snprintf(m->prediction, sizeof m->prediction, "%s", pred);
	if ((rc = tf_columns_parse_schema(m->cols, schema, m->path)) != TF_OK) {
		return tfi_set_error(m, rc, "%s", tf_errmsg(m->cols));
	}
	/* wide_and_deep: categorical columns and crosses, as trained. */
	json_t *cat = json_object_get(m->info, "categorical");
	if (json_is_object(cat) &&
	    (rc = tf_columns_set_categorical(
	         m->cols, json_string_value(json_object_get(cat, "crosses")),
	         json_integer_value(json_object_get(cat, "buckets")))) !=
	        TF_OK) {
		return tfi_set_error(m, rc, "%s: %s", m->path,
		                     tf_errmsg(m->cols));
	}
	m->task = tf_task_parse(task);
	if (m->task < 0) {
		return tfi_set_error(m, TF_EFORMAT, "%s: unknown task '%s'",
		                     m->path, task);
	}
	tf_columns_set_label(m->cols, tf_columns_label_name(m->cols), m->task,
	                     classes);
	tf_columns_set_normalize(m->cols, normalize);
	m->normalize = normalize;
	m->classes = tf_columns_classes(m->cols);
	if ((rc = tf_graph_parse(m->g, spec)) != TF_OK ||
	    (rc = tf_graph_build(m->g, reg, m->dev, 0)) != TF_OK) {
		/* The stored model does not build: bad data. */
		return tfi_set_error(m, rc == TF_EINVAL ? TF_EFORMAT : rc,
		                     "%s: %s", m->path, tf_errmsg(m->g));
	}
	if (tfi_graph_x_width(m->g) != tf_columns_width(m->cols) ||
	    tf_graph_ids_width(m->g) != tf_columns_id_width(m->cols) ||
	    tf_graph_width(m->g, m->prediction) !=
	        tf_model_outputs(m) - (m->task == TF_TASK_BINARY)) {
		return tfi_set_error(m, TF_EFORMAT,
		                     "%s: the model's inputs or outputs do not "
		                     "fit its schema",
		                     m->path);
	}
	m->has_label = tf_graph_width(m->g, "label") > 0;
	if (make_labels(m) != TF_OK) {
		return tfi_set_error(m, TF_ENOMEM, "out of memory");
	}
	return TF_OK;
}

static int
load_checkpoint(struct tf_model *m, const struct tf_registry *reg,
                const char *checkpoint)
{
	struct tf_ckpt *ck = tf_ckpt_new();
	if (ck == NULL) {
		return tfi_set_error(m, TF_ENOMEM, "out of memory");
	}
	int rc = tf_ckpt_load(ck, checkpoint);
	if (rc != TF_OK) {
		rc = tfi_set_error(m, rc, "%s", tf_errmsg(ck));
		tf_ckpt_free(ck);
		return rc;
	}
	snprintf(m->path, sizeof m->path, "%s", tf_ckpt_path(ck));
	/* The header decoded once (checkpoint.c); kept as JSON too, for
	 * the training facts an export carries as provenance. */
	struct tf_ckpt_header h;
	tf_ckpt_header_init(&h);
	if ((rc = tf_ckpt_get_header(ck, &h)) != TF_OK) {
		rc = tfi_set_error(m, rc, "%s", tf_errmsg(ck));
		goto out;
	}
	m->info = json_loads(tf_ckpt_header(ck), 0, NULL);
	rc = m->info == NULL ? tfi_set_error(m, TF_ENOMEM, "out of memory")
	                     : setup(m, reg, h.model_spec, h.schema, h.task,
	                             h.classes, h.prediction, h.normalize);
	tf_ckpt_header_release(&h);
	if (rc != TF_OK) {
		goto out;
	}
	/* into the host's view of the blocks (a device's: copies, then
	 * uploaded) */
	float *hp = tfi_graph_host(m->g, TFI_PARAMS, 0);
	float *hs = tfi_graph_host(m->g, TFI_STATE, 1);
	if (hp == NULL || hs == NULL) {
		rc = tfi_set_error(m, TF_ENOMEM, "out of memory");
		goto out;
	}
	if (tf_ckpt_read(ck, "params", hp, tf_graph_nparams(m->g)) != TF_OK) {
		rc = tfi_set_error(m, TF_EFORMAT,
		                   "%s: parameters do not fit the model",
		                   m->path);
		goto out;
	}
	/* a model without state, or a checkpoint from before it had one */
	tf_ckpt_read(ck, "state", hs, tf_graph_nstate(m->g));
	if (tfi_graph_commit(m->g, TFI_PARAMS) != TF_OK ||
	    tfi_graph_commit(m->g, TFI_STATE) != TF_OK) {
		rc = tfi_set_error(m, TF_EINTERNAL, "%s", tf_errmsg(m->g));
	}
out:
	tf_ckpt_free(ck);
	return rc;
}

static const struct tf_export_file *
find_file(const struct tf_export_file *files, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(files[i].name, name) == 0) {
			return &files[i];
		}
	}
	return NULL;
}

/* Check each file the manifest lists: present, its size, its SHA-256. */
static int
verify(struct tf_model *m, const struct tf_export_file *files, size_t n)
{
	const struct tf_export_file *mf = find_file(files, n, "manifest.json");
	if (mf == NULL) {
		return tfi_set_error(m, TF_EFORMAT,
		                     "%s: no manifest.json (not an export, or "
		                     "one still being written)",
		                     m->path);
	}
	json_error_t je;
	json_t *man = json_loadb(mf->data, mf->size, 0, &je);
	json_t *list = json_object_get(man, "files");
	int rc = TF_OK;
	if (!json_is_array(list)) {
		rc =
		    tfi_set_error(m, TF_EFORMAT, "%s: manifest.json: %s",
		                  m->path, man ? "no \"files\" list" : je.text);
		goto out;
	}
	int have_model = 0, have_vars = 0;
	size_t i;
	json_t *e;
	json_array_foreach(list, i, e)
	{
		const char *name =
		    json_string_value(json_object_get(e, "name"));
		const char *sum =
		    json_string_value(json_object_get(e, "sha256"));
		json_int_t size =
		    json_integer_value(json_object_get(e, "size"));
		const struct tf_export_file *f =
		    name ? find_file(files, n, name) : NULL;
		if (name == NULL || sum == NULL) {
			rc = tfi_set_error(
			    m, TF_EFORMAT,
			    "%s: manifest.json: entry %zu lacks a "
			    "name or sha256",
			    m->path, i);
			goto out;
		}
		if (f == NULL) {
			rc = tfi_set_error(
			    m, TF_EFORMAT,
			    "%s: %s is listed in the manifest but "
			    "missing",
			    m->path, name);
			goto out;
		}
		char hex[65];
		tf_sha256_hex(f->data, f->size, hex);
		if ((json_int_t)f->size != size || strcmp(hex, sum) != 0) {
			rc = tfi_set_error(
			    m, TF_EFORMAT,
			    "%s: %s does not match the manifest (%zu bytes, "
			    "SHA-256 %.16s..., expected %lld bytes, %.16s...): "
			    "damaged or half-written",
			    m->path, name, f->size, hex, (long long)size, sum);
			goto out;
		}
		have_model |= strcmp(name, "model.json") == 0;
		have_vars |= strcmp(name, "variables.bin") == 0;
	}
	if (!have_model || !have_vars) {
		rc = tfi_set_error(m, TF_EFORMAT,
		                   "%s: the manifest does not cover model.json "
		                   "and variables.bin",
		                   m->path);
	}
out:
	json_decref(man);
	return rc;
}

/* Copy the weights model.json lists from variables.bin into the graph;
 * every parameter and state value must be covered exactly once. */
static int
load_variables(struct tf_model *m, const struct tf_export_file *vf)
{
	json_t *vars = json_object_get(m->info, "variables");
	size_t covered = 0, i;
	json_t *e;
	/* written through the host's view of the blocks, uploaded after */
	float *params = tf_graph_params(m->g), *state = tf_graph_state(m->g);
	float *hp = tfi_graph_host(m->g, TFI_PARAMS, 0);
	float *hs = tfi_graph_host(m->g, TFI_STATE, 0);
	if (hp == NULL || hs == NULL) {
		return tfi_set_error(m, TF_ENOMEM, "out of memory");
	}
	json_array_foreach(vars, i, e)
	{
		const char *node = NULL, *name = NULL;
		json_int_t rows = 0, cols = 0, off = -1, at = -1, len = -1;
		/* its values at an offset (in values), or runs at a byte
		 * offset and of a length (a table's rows, mostly untouched) */
		if (json_unpack(e, "{s:s,s:s,s:[II],s?I,s?[II]}", "node", &node,
		                "name", &name, "shape", &rows, &cols, "offset",
		                &off, "runs", &at, &len) != 0 ||
		    (off < 0) == (at < 0)) {
			return tfi_set_error(m, TF_EFORMAT,
			                     "%s: model.json: bad variable %zu",
			                     m->path, i);
		}
		int64_t r, c;
		float *dst = tf_graph_param_by_name(m->g, node, name, &r, &c);
		/* the graph's shape, which bounds the values */
		uint64_t n = dst ? (uint64_t)r * (uint64_t)c : 0, got = 0;
		if (dst == NULL || r != rows || c != cols ||
		    (off >= 0 &&
		     (n > vf->size / 4 || (uint64_t)off > vf->size / 4 - n)) ||
		    (at >= 0 && (len < 0 || (uint64_t)at > vf->size ||
		                 (uint64_t)len > vf->size - (uint64_t)at))) {
			return tfi_set_error(m, TF_EFORMAT,
			                     "%s: variable %s/%s does not fit "
			                     "the model",
			                     m->path, node, name);
		}
		dst = dst >= params && dst < params + tf_graph_nparams(m->g)
		          ? hp + (dst - params)
		          : hs + (dst - state);
		const uint8_t *src = (const uint8_t *)vf->data;
		if (at >= 0 &&
		    (tfi_runs_read(src + at, (size_t)len, n, &got, dst) != 0 ||
		     got != n)) {
			return tfi_set_error(m, TF_EFORMAT,
			                     "%s: variable %s/%s: its runs in "
			                     "variables.bin are damaged",
			                     m->path, node, name);
		}
		if (off >= 0) {
			tfi_get_le_floats(dst, src + 4 * off, (size_t)n);
		}
		covered += (size_t)n;
	}
	if (covered != tf_graph_nparams(m->g) + tf_graph_nstate(m->g)) {
		return tfi_set_error(m, TF_EFORMAT,
		                     "%s: variables.bin holds %zu of the "
		                     "model's %zu values",
		                     m->path, covered,
		                     tf_graph_nparams(m->g) +
		                         tf_graph_nstate(m->g));
	}
	if (tfi_graph_commit(m->g, TFI_PARAMS) != TF_OK ||
	    tfi_graph_commit(m->g, TFI_STATE) != TF_OK) {
		return tfi_set_error(m, TF_EINTERNAL, "%s", tf_errmsg(m->g));
	}
	return TF_OK;
}

int
tf_model_load_files(struct tf_model *m, const struct tf_registry *reg,
                    const struct tf_export_file *files, size_t n,
                    const char *origin)
{
	reset(m);
	m->is_export = 1;
	snprintf(m->path, sizeof m->path, "%s", origin);
	int rc = verify(m, files, n);
	if (rc != TF_OK) {
		return rc;
	}
	const struct tf_export_file *mj = find_file(files, n, "model.json");
	json_error_t je;
	m->info = json_loadb(mj->data, mj->size, 0, &je);
	const char *fmt = NULL, *spec = NULL, *schema = NULL, *task = NULL,
	           *pred = NULL;
	json_int_t classes = 0;
	int normalize = 1;
	if (m->info == NULL ||
	    json_unpack(m->info, "{s:s,s:s,s:s,s:s,s:s,s:I,s:b}", "format",
	                &fmt, "spec", &spec, "schema", &schema, "task", &task,
	                "prediction", &pred, "classes", &classes, "normalize",
	                &normalize) != 0 ||
	    strcmp(fmt, "tfkit-model") != 0) {
		return tfi_set_error(
		    m, TF_EFORMAT, "%s: model.json is not a tfkit model%s%s",
		    m->path, m->info ? "" : ": ", m->info ? "" : je.text);
	}
	if ((rc = setup(m, reg, spec, schema, task, classes, pred,
	                normalize)) != TF_OK) {
		return rc;
	}
	return load_variables(m, find_file(files, n, "variables.bin"));
}

/* An export directory: read the files the manifest names, then load. */
static int
load_export_dir(struct tf_model *m, const struct tf_registry *reg,
                const char *dir)
{
	struct tf_export_file files[8];
	size_t n = 0;
	char path[4096];
	int rc = TF_OK;
	snprintf(path, sizeof path, "%s/manifest.json", dir);
	size_t size;
	void *data = tf_file_read(path, &size);
	if (data == NULL && errno == ENOENT) {
		return tfi_set_error(m, TF_EFORMAT,
		                     "%s: no manifest.json (not an export, or "
		                     "one still being written)",
		                     dir);
	}
	if (data == NULL) {
		return tfi_set_errno(m, TF_EFORMAT, errno, "%s", path);
	}
	files[n++] = (struct tf_export_file){"manifest.json", data, size};
	json_t *man = json_loadb(data, size, 0, NULL);
	json_t *list = json_object_get(man, "files");
	size_t i;
	json_t *e;
	json_array_foreach(list, i, e)
	{
		const char *name =
		    json_string_value(json_object_get(e, "name"));
		if (name == NULL || n == sizeof files / sizeof files[0] ||
		    strchr(name, '/') != NULL || name[0] == '.' ||
		    find_file(files, n, name) != NULL) {
			rc = tfi_set_error(m, TF_EFORMAT,
			                   "%s: manifest.json: bad file entry "
			                   "%zu",
			                   dir, i);
			break;
		}
		snprintf(path, sizeof path, "%s/%s", dir, name);
		data = tf_file_read(path, &size);
		if (data == NULL) {
			rc = tfi_set_errno(m, TF_EFORMAT, errno,
			                   "%s: %s is listed in the manifest",
			                   dir, name);
			break;
		}
		files[n].name = strdup(name);
		files[n].data = data;
		files[n].size = size;
		if (files[n++].name == NULL) {
			rc = tfi_set_error(m, TF_ENOMEM, "out of memory");
			break;
		}
	}
	json_decref(man);
	if (rc == TF_OK) {
		rc = tf_model_load_files(m, reg, files, n, dir);
	}
	for (size_t k = 0; k < n; k++) {
		free((void *)files[k].data);
		if (k > 0) {
			free((void *)files[k].name);
		}
	}
	return rc;
}

int
tf_model_load(struct tf_model *m, const struct tf_registry *reg,
              const char *path)
{
	reset(m);
	char mf[4096], mj[4096];
	struct stat st;
	snprintf(mf, sizeof mf, "%s/manifest.json", path);
	snprintf(mj, sizeof mj, "%s/model.json", path);
	/* An export directory (model.json without a manifest: one that is
	 * incomplete, refused by the loader). */
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
	    (stat(mf, &st) == 0 || stat(mj, &st) == 0)) {
		return load_export_dir(m, reg, path);
	}
	m->is_export = 0;
	return load_checkpoint(m, reg, path);
}

struct tf_graph *
tf_model_graph(struct tf_model *m)
{
	return m->g;
}

struct tf_columns *
tf_model_columns(struct tf_model *m)
{
	return m->cols;
}

const char *
tf_model_prediction(const struct tf_model *m)
{
	return m->prediction;
}

const char *
tf_model_checkpoint(const struct tf_model *m)
{
	return m->path;
}

/* Training facts: the checkpoint header, or the export's provenance. */
static json_t *
facts(const struct tf_model *m)
{
	return m->is_export ? json_object_get(m->info, "provenance") : m->info;
}

uint64_t
tf_model_step(const struct tf_model *m)
{
	return (uint64_t)json_integer_value(json_object_get(facts(m), "step"));
}

int
tf_model_metric(const struct tf_model *m, const char *name, double *value)
{
	json_t *v =
	    json_object_get(json_object_get(facts(m), "validation"), name);
	if (!json_is_number(v)) {
		return TF_ENOENT;
	}
	*value = json_number_value(v);
	return TF_OK;
}

char *
tf_model_provenance(const struct tf_model *m)
{
	json_t *f = facts(m);
	json_t *p = json_object();
	const char *keys[] = {
	    "step",       "examples",      "epoch",      "seed",   "optimizer",
	    "hparams",    "learning_rate", "validation", "config", "library",
	    "checkpoint", "plugins",       "exported"};
	for (size_t i = 0; p && i < sizeof keys / sizeof keys[0]; i++) {
		json_t *v = json_object_get(f, keys[i]);
		if (v != NULL) {
			json_object_set(p, keys[i], v);
		}
	}
	if (p != NULL && !m->is_export) {
		json_object_set_new(p, "checkpoint", json_string(m->path));
	}
	char *text = p ? json_dumps(p, JSON_COMPACT) : NULL;
	json_decref(p);
	return text;
}

int64_t
tf_model_outputs(const struct tf_model *m)
{
	return m->task == TF_TASK_REGRESSION ? 1 : m->classes;
}

const char *
tf_model_label(const struct tf_model *m, int64_t k)
{
	return m->labels != NULL && m->task != TF_TASK_REGRESSION && k >= 0 &&
	               k < m->classes
	           ? m->labels[k]
	           : "";
}

const char *
tfi_model_label_json(const struct tf_model *m, int64_t k)
{
	return m->labels_json != NULL && m->task != TF_TASK_REGRESSION &&
	               k >= 0 && k < m->classes
	           ? m->labels_json[k]
	           : "\"\"";
}

char *
tf_model_signature(const struct tf_model *m)
{
	json_t *s = json_object();
	json_t *in = json_array(), *out = json_array(), *labels = json_array();
	size_t n = tfi_columns_inputs(m->cols, NULL, 0);
	struct tfi_input *ins = calloc(n ? n : 1, sizeof *ins);
	if (ins == NULL) {
		json_decref(s);
		json_decref(in);
		json_decref(out);
		json_decref(labels);
		return NULL;
	}
	tfi_columns_inputs(m->cols, ins, n);
	for (size_t i = 0; i < n; i++) {
		/* A list of several columns (packed, or libsvm's "x") is one
		 * [-1, width] input. */
		json_t *e = json_pack("{s:s,s:s}", "name", ins[i].name, "dtype",
		                      ins[i].categorical ? "DT_STRING"
		                      : ins[i].is_int    ? "DT_INT64"
		                                         : "DT_FLOAT");
		if (ins[i].sparse) {
			/* ragged: up to max_ids a row */
			json_object_set_new(e, "sparse", json_true());
			json_object_set_new(
			    e, "max_ids",
			    json_integer((json_int_t)ins[i].width));
		} else if (ins[i].sequence) {
			/* ragged: up to max_length steps of step_width */
			json_object_set_new(e, "sequence", json_true());
			json_object_set_new(
			    e, "max_length",
			    json_integer((json_int_t)ins[i].steps));
			json_object_set_new(
			    e, "step_width",
			    json_integer(
			        (json_int_t)(ins[i].width / ins[i].steps)));
		} else if (ins[i].list) {
			json_object_set_new(
			    e, "width", json_integer((json_int_t)ins[i].width));
		}
		json_array_append_new(in, e);
	}
	free(ins);
	if (m->task == TF_TASK_REGRESSION) {
		json_array_append_new(out, json_pack("{s:s,s:s,s:[i]}", "name",
		                                     "predictions", "dtype",
		                                     "DT_FLOAT", "shape", -1));
	} else {
		json_array_append_new(
		    out, json_pack("{s:s,s:s,s:[i,I]}", "name", "probabilities",
		                   "dtype", "DT_FLOAT", "shape", -1,
		                   (json_int_t)m->classes));
		json_array_append_new(out, json_pack("{s:s,s:s,s:[i]}", "name",
		                                     "class_ids", "dtype",
		                                     "DT_INT64", "shape", -1));
		json_array_append_new(out, json_pack("{s:s,s:s,s:[i]}", "name",
		                                     "classes", "dtype",
		                                     "DT_STRING", "shape", -1));
		for (int64_t k = 0; k < m->classes; k++) {
			json_array_append_new(labels,
			                      json_string(m->labels[k]));
		}
	}
	json_object_set_new(s, "inputs", in);
	json_object_set_new(s, "outputs", out);
	json_object_set_new(s, "task", json_string(tf_task_name(m->task)));
	json_object_set_new(s, "classes", json_integer(m->classes));
	json_object_set_new(s, "labels", labels);
	char *text = json_dumps(s, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(s);
	return text;
}

int
tf_model_predict(struct tf_model *m, const struct tf_batch *b, float *out)
{
	tf_errclear(m);
	size_t rows = b->rows;
	if (rows == 0) {
		return TF_OK;
	}
	/* A checkpoint's graph takes a label: zeros, so no loss is NaN. */
	if (m->has_label && m->nzeros < rows) {
		free(m->zeros);
		m->zeros = calloc(rows, sizeof(float));
		m->nzeros = m->zeros ? rows : 0;
		if (m->zeros == NULL) {
			return tfi_set_error(m, TF_ENOMEM, "out of memory");
		}
	}
	struct tf_batch in = *b;
	in.y = m->has_label ? m->zeros : NULL;
	int gpu = tf_device_kind(m->dev) != TF_DEVICE_CPU;
	if (gpu) {
		pthread_mutex_lock(&gpu_turn);
	}
	int rc = tf_graph_feed_batch(m->g, &in);
	rc = rc ? rc : tf_graph_forward(m->g, 0);
	if (gpu) {
		pthread_mutex_unlock(&gpu_turn);
	}
	if (rc != TF_OK) {
		return tfi_set_error(m, rc, "%s", tf_errmsg(m->g));
	}
	const float *p = tf_graph_fetch(m->g, m->prediction);
	if (p == NULL) {
		return tfi_set_error(m, TF_ENOMEM, "out of memory");
	}
	if (m->task == TF_TASK_BINARY) {
		for (size_t r = 0; r < rows; r++) {
			out[2 * r] = 1.0f - p[r];
			out[2 * r + 1] = p[r];
		}
	} else {
		memcpy(out, p, rows * (size_t)tf_model_outputs(m) * sizeof *p);
	}
	return TF_OK;
}

int
tfi_evaluate(struct tf_graph *g, const char *prediction, struct tf_dataset *ds,
             struct tf_batch *b, struct tf_metrics *mt, void *errh)
{
	int rc;
	tf_metrics_reset(mt);
	while ((rc = tf_dataset_read(ds, b)) == TF_OK) {
		if ((rc = tf_graph_feed_batch(g, b)) != TF_OK ||
		    (rc = tf_graph_forward(g, 0)) != TF_OK) {
			return tfi_set_error(errh, rc, "%s", tf_errmsg(g));
		}
		const float *p = tf_graph_fetch(g, prediction);
		if (p == NULL) {
			return tfi_set_error(errh, TF_ENOMEM, "out of memory");
		}
		tf_metrics_add(mt, p, b->y, b->rows, tf_graph_loss(g));
	}
	return rc == TF_EOF ? TF_OK
	                    : tfi_set_error(errh, rc, "%s", tf_errmsg(ds));
}

int
tf_model_evaluate(struct tf_model *m, struct tf_dataset *ds, size_t batch_size,
                  struct tf_metrics *metrics)
{
	struct tf_batch b;
	tf_errclear(m);
	if (m->g == NULL) {
		return tfi_set_error(m, TF_EINVAL, "no model loaded");
	}
	if (tf_dataset_columns(ds) != m->cols) {
		return tfi_set_error(m, TF_EINVAL,
		                     "the dataset does not read the model's "
		                     "columns (tf_dataset_new_on)");
	}
	if (tf_dataset_batch(ds, &b, batch_size) != TF_OK) {
		return tfi_set_error(m, TF_ENOMEM, "out of memory");
	}
	int rc = tfi_evaluate(m->g, m->prediction, ds, &b, metrics, m);
	tf_batch_release(&b);
	return rc;
}

/* ---- for export.c --------------------------------------------------------
 */

char *
tf_model_categorical(const struct tf_model *m)
{
	json_t *c = json_object_get(m->info, "categorical");
	return json_is_object(c) ? json_dumps(c, JSON_COMPACT) : NULL;
}

const char *
tf_model_schema_text(const struct tf_model *m)
{
	return tf_columns_schema_text(m->cols);
}

int
tf_model_task(const struct tf_model *m)
{
	return m->task;
}

int
tf_model_normalizes(const struct tf_model *m)
{
	/* images are scaled as they are decoded, never standardised */
	struct tf_image_view v;
	return m->normalize && !tf_columns_image(m->cols, &v);
}
