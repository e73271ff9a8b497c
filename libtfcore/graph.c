/*
 * graph.c - model graphs: the spec parser, building nodes through op
 * plugins, parameters in one block, forward and backward passes, and the
 * node API (tf_node_*) that ops use.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tf/batch.h"
#include "tf/graph.h"
#include "tf/number.h"
#include "tf/rng.h"

#define MAX_INPUTS 8
#define MAX_PARAMS 8

struct attr {
	char *key, *val;
	int used;
};

struct pdecl {
	char name[48];
	int64_t rows, cols;
	int init;
	int state; /* saved but not trained */
	size_t off;
	struct tf_tensor t, g;
};

struct tf_node {
	struct tf_graph *g;
	char *name;
	char *opname;
	const struct tf_op *op;
	int is_input;
	int dtype; /* of the output: TF_INT64 only for fed ids */
	int ninputs;
	unsigned dtype_asked; /* inputs whose dtype the op looked at */
	int inputs[MAX_INPUTS];
	struct attr *attrs;
	int nattrs;
	int64_t width;
	struct tf_shape shape; /* of a row: rank 0 until set (flat: width) */
	int on_loss_path;      /* the loss depends on this node */
	int want_grad;         /* an input whose gradient was asked for */
	struct tf_tensor out, dout;
	const void *fed; /* inputs: the data of the next forward */
	int64_t fed_rows;
	/* inputs on a device: the next batch, uploaded while this step
	 * computes (tf_graph_stage_batch()), into two buffers in turn;
	 * each remembers what it holds until a forward pass takes it */
	float *stage[2];
	size_t stage_cap[2];
	const void *stage_src[2];
	int64_t stage_rows[2];
	int stage_last;
	struct pdecl params[MAX_PARAMS];
	int nparams;
	double loss;
	float *saved[4];
};

/* Step memory: blocks kept across steps, reset at each forward. */
struct block {
	float *data;
	size_t cap, used;
	size_t present; /* floats from the start made present */
};

/* The arena makes its pages present this many floats (64 KiB) at a
 * time, ahead of what it hands out: one system call where each page
 * would fault in, and never more than 64 KiB a block that no step
 * writes. */
#define ARENA_PRESENT ((size_t)16 << 10)

static void
arena_present(struct tf_device *d, struct block *b, size_t to)
{
	if (to <= b->present) {
		return;
	}
	to = (to + ARENA_PRESENT - 1) / ARENA_PRESENT * ARENA_PRESENT;
	to = to < b->cap ? to : b->cap;
	tfi_device_populate(d, b->data, b->present * sizeof(float),
	                    to * sizeof(float));
	b->present = to;
}

struct tf_graph {
	struct tfi_handle err;
	struct tf_node *nodes;
	int n;
	int loss_node;
	char *loss_name;
	struct tfi_buf spec;
	int built;
	struct tf_device *dev;
	float *params, *grads, *state;
	size_t nparams, nstate;
	int shares_params; /* a tower's: another graph's (not freed here) */
	struct block *blocks;
	int nblocks, cur;
	int64_t rows;
	int forward_done;
	int keep_grads; /* tfi_graph_zero_grads(g, 0) */
	struct tf_rng rng;
	float *host; /* tf_graph_fetch()'s copies off a device */
	float
	    *hblk[3]; /* tfi_graph_host()'s copies of the blocks, a device's */
	size_t host_cap;
};

struct tf_graph *
tf_graph_new(void)
{
	struct tf_graph *g = calloc(1, sizeof *g);
	if (g != NULL) {
		g->loss_node = -1;
	}
	return g;
}

void
tf_graph_free(struct tf_graph *g)
{
	if (g == NULL) {
		return;
	}
	/* Tensor memory is the device's (a graph never built has none). */
	struct tf_device *dev = g->dev ? g->dev : tf_device_cpu();
	for (int i = 0; i < g->n; i++) {
		struct tf_node *nd = &g->nodes[i];
		free(nd->name);
		free(nd->opname);
		tf_device_free(dev, nd->stage[0]);
		tf_device_free(dev, nd->stage[1]);
		for (int a = 0; a < nd->nattrs; a++) {
			free(nd->attrs[a].key);
			free(nd->attrs[a].val);
		}
		free(nd->attrs);
	}
	for (int b = 0; b < g->nblocks; b++) {
		tf_device_free(dev, g->blocks[b].data);
	}
	free(g->blocks);
	free(g->nodes);
	free(g->loss_name);
	if (!g->shares_params) {
		tf_device_free(dev, g->params);
	}
	tf_device_free(dev, g->grads);
	tf_device_free(dev, g->state);
	free(g->host);
	for (int i = 0; i < 3; i++) {
		free(g->hblk[i]);
	}
	tfi_buf_free(&g->spec);
	free(g);
}

/* The index of the node called name, or -1 (a linear search: specs
 * have tens of nodes). */
static int
find_node(const struct tf_graph *g, const char *name)
{
	for (int i = 0; i < g->n; i++) {
		if (strcmp(g->nodes[i].name, name) == 0) {
			return i;
		}
	}
	return -1;
}

/* ---- parsing ------------------------------------------------------------- */

/* A node name: letters, digits and _ - . / only, so a spec line splits
 * on blanks and a checkpoint names parameters NODE/PARAM. */
static int
valid_name(const char *s)
{
	if (*s == '\0') {
		return 0;
	}
	for (; *s; s++) {
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' &&
		    *s != '.' && *s != '/') {
			return 0;
		}
	}
	return 1;
}

/* A new node of the spec's line, its name checked and not yet used;
 * NULL with the graph's error otherwise. */
static struct tf_node *
add_node(struct tf_graph *g, int line, const char *name)
{
	if (!valid_name(name)) {
		tfi_set_error(g, TF_EINVAL, "model line %d: bad name '%s'",
		              line, name);
		return NULL;
	}
	if (find_node(g, name) >= 0) {
		tfi_set_error(g, TF_EINVAL,
		              "model line %d: '%s' is declared twice", line,
		              name);
		return NULL;
	}
	struct tf_node *nodes =
	    realloc(g->nodes, (size_t)(g->n + 1) * sizeof *nodes);
	if (nodes == NULL) {
		tfi_set_error(g, TF_ENOMEM, "out of memory");
		return NULL;
	}
	g->nodes = nodes;
	struct tf_node *nd = &g->nodes[g->n++];
	memset(nd, 0, sizeof *nd);
	nd->name = strdup(name);
	if (nd->name == NULL) {
		tfi_set_error(g, TF_ENOMEM, "out of memory");
		return NULL;
	}
	return nd;
}

/* One spec line: "input NAME SHAPE [int64|float32]" or "node NAME OP
 * INPUTS [KEY=VALUE]...", blank ones skipped; errors name the line. */
static int
parse_line(struct tf_graph *g, int line, char *s)
{
	char *tok[64];
	int nt = 0;
	for (char *p = strtok(s, " \t\r"); p != NULL && nt < 64;
	     p = strtok(NULL, " \t\r")) {
		tok[nt++] = p;
	}
	if (nt == 0) {
		return TF_OK;
	}
	if (strcmp(tok[0], "input") == 0) {
		struct tf_shape sh;
		/* tok[3] only when there is one (a line of two words
		 * has none; fuzz_spec found the old read past them) */
		int dtype = nt == 3 ? TF_FLOAT32
		            : nt == 4 && strcmp(tok[3], "int64") == 0 ? TF_INT64
		            : nt == 4 && strcmp(tok[3], "float32") == 0
		                ? TF_FLOAT32
		                : -1;
		/* WIDTH, or a row's shape: 28x28x1 (NHWC), 28x28 */
		if ((nt != 3 && nt != 4) || dtype < 0 ||
		    tfi_shape_parse(tok[2], strlen(tok[2]), &sh) != 0 ||
		    (dtype == TF_INT64 && sh.rank > 1)) {
			return tfi_set_error(
			    g, TF_EINVAL,
			    "model line %d: expected 'input "
			    "NAME WIDTH|HxWxC [float32|int64]'",
			    line);
		}
		struct tf_node *nd = add_node(g, line, tok[1]);
		if (nd == NULL) {
			return g->err.code;
		}
		nd->is_input = 1;
		nd->dtype = dtype;
		nd->width = tfi_shape_size(&sh);
		nd->shape = sh;
		return TF_OK;
	}
	if (strcmp(tok[0], "loss") == 0) {
		if (nt != 2) {
			return tfi_set_error(
			    g, TF_EINVAL, "model line %d: expected 'loss NODE'",
			    line);
		}
		free(g->loss_name);
		g->loss_name = strdup(tok[1]);
		return g->loss_name ? TF_OK : TF_ENOMEM;
	}
	if (strcmp(tok[0], "node") != 0 || nt < 4) {
		return tfi_set_error(g, TF_EINVAL,
		                     "model line %d: expected 'node NAME OP "
		                     "INPUTS [KEY=VALUE ...]', 'input NAME "
		                     "WIDTH' or 'loss NODE'",
		                     line);
	}
	struct tf_node *nd = add_node(g, line, tok[1]);
	if (nd == NULL) {
		return g->err.code;
	}
	nd->opname = strdup(tok[2]);
	if (nd->opname == NULL) {
		return tfi_set_error(g, TF_ENOMEM, "out of memory");
	}
	for (char *p = strtok(tok[3], ","); p != NULL; p = strtok(NULL, ",")) {
		int k = find_node(g, p);
		if (k < 0 || k == g->n - 1) {
			return tfi_set_error(g, TF_EINVAL,
			                     "model line %d: node '%s': input "
			                     "'%s' is not declared above it",
			                     line, nd->name, p);
		}
		if (nd->ninputs == MAX_INPUTS) {
			return tfi_set_error(
			    g, TF_EINVAL, "model line %d: more than %d inputs",
			    line, MAX_INPUTS);
		}
		nd->inputs[nd->ninputs++] = k;
	}
	nd->attrs = calloc((size_t)(nt - 4 + 1), sizeof *nd->attrs);
	if (nd->attrs == NULL) {
		return tfi_set_error(g, TF_ENOMEM, "out of memory");
	}
	for (int i = 4; i < nt; i++) {
		char *eq = strchr(tok[i], '=');
		if (eq == NULL || eq == tok[i] || eq[1] == '\0') {
			return tfi_set_error(
			    g, TF_EINVAL,
			    "model line %d: expected KEY=VALUE, "
			    "got '%s'",
			    line, tok[i]);
		}
		*eq = '\0';
		struct attr *a = &nd->attrs[nd->nattrs++];
		a->key = strdup(tok[i]);
		a->val = strdup(eq + 1);
		if (a->key == NULL || a->val == NULL) {
			return tfi_set_error(g, TF_ENOMEM, "out of memory");
		}
	}
	return TF_OK;
}

int
tf_graph_parse(struct tf_graph *g, const char *spec)
{
	if (g->n > 0) {
		return tfi_set_error(g, TF_EINVAL, "graph already parsed");
	}
	char *copy = strdup(spec);
	if (copy == NULL) {
		return tfi_set_error(g, TF_ENOMEM, "out of memory");
	}
	int rc = TF_OK, line = 0;
	char *save = NULL;
	for (char *s = copy; rc == TF_OK && s != NULL; s = save) {
		char *nl = strchr(s, '\n');
		save = nl ? nl + 1 : NULL;
		if (nl != NULL) {
			*nl = '\0';
		}
		line++;
		char *hash = strchr(s, '#');
		if (hash != NULL) {
			*hash = '\0';
		}
		rc = parse_line(g, line, s);
	}
	free(copy);
	if (rc != TF_OK) {
		return rc;
	}
	const char *ln = g->loss_name ? g->loss_name : "loss";
	g->loss_node = find_node(g, ln);
	if (g->loss_node < 0 && g->loss_name != NULL) {
		return tfi_set_error(g, TF_EINVAL, "model: no loss node '%s'",
		                     ln);
	}
	/* The normalised spec, for checkpoints. */
	for (int i = 0; i < g->n && rc == TF_OK; i++) {
		const struct tf_node *nd = &g->nodes[i];
		char buf[256];
		if (nd->is_input) {
			char dims[96];
			tfi_shape_format(&nd->shape, dims, sizeof dims);
			snprintf(buf, sizeof buf, "input %s %s%s\n", nd->name,
			         dims, nd->dtype == TF_INT64 ? " int64" : "");
			rc = tfi_json_put(&g->spec, buf, strlen(buf));
			continue;
		}
		snprintf(buf, sizeof buf, "node %s %s ", nd->name, nd->opname);
		rc = tfi_json_put(&g->spec, buf, strlen(buf));
		for (int k = 0; k < nd->ninputs && rc == TF_OK; k++) {
			const char *in = g->nodes[nd->inputs[k]].name;
			rc = (k > 0 ? tfi_json_put(&g->spec, ",", 1) : TF_OK) ||
			     tfi_json_put(&g->spec, in, strlen(in));
		}
		for (int a = 0; a < nd->nattrs && rc == TF_OK; a++) {
			snprintf(buf, sizeof buf, " %s=%s", nd->attrs[a].key,
			         nd->attrs[a].val);
			rc = tfi_json_put(&g->spec, buf, strlen(buf));
		}
		rc = rc ? rc : tfi_json_put(&g->spec, "\n", 1);
	}
	if (rc == TF_OK && g->loss_node >= 0) {
		char buf[160];
		snprintf(buf, sizeof buf, "loss %s\n",
		         g->nodes[g->loss_node].name);
		rc = tfi_json_put(&g->spec, buf, strlen(buf));
	}
	return rc == TF_OK ? TF_OK
	                   : tfi_set_error(g, TF_ENOMEM, "out of memory");
}

const char *
tf_graph_spec(const struct tf_graph *g)
{
	return g->spec.len ? (const char *)g->spec.data : "";
}

/* ---- the node API ----------------------------------------------------------
 */

int
tf_node_error(struct tf_node *n, const char *fmt, ...)
{
	char msg[TFI_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return tfi_set_error(n->g, TF_EINVAL, "node '%s' (%s): %s", n->name,
	                     n->opname ? n->opname : "input", msg);
}

int
tf_node_ninputs(const struct tf_node *n)
{
	return n->ninputs;
}

struct tf_tensor *
tf_node_input(struct tf_node *n, int i)
{
	return &n->g->nodes[n->inputs[i]].out;
}

const float *
tf_node_input_host(struct tf_node *n, int i)
{
	const struct tf_node *in = &n->g->nodes[n->inputs[i]];
	return in->is_input && in->dtype == TF_FLOAT32 ? in->fed : NULL;
}

struct tf_tensor *
tf_node_input_grad(struct tf_node *n, int i)
{
	struct tf_node *in = &n->g->nodes[n->inputs[i]];
	return in->dout.data != NULL ? &in->dout : NULL;
}

struct tf_tensor *
tf_node_output(struct tf_node *n)
{
	return &n->out;
}

struct tf_tensor *
tf_node_output_grad(struct tf_node *n)
{
	return &n->dout;
}

int64_t
tf_node_input_width(const struct tf_node *n, int i)
{
	return n->g->nodes[n->inputs[i]].width;
}

int
tf_node_input_dtype(struct tf_node *n, int i)
{
	n->dtype_asked |= 1u << i;
	return n->g->nodes[n->inputs[i]].dtype;
}

void
tf_node_set_width(struct tf_node *n, int64_t cols)
{
	n->width = cols;
	n->shape = (struct tf_shape){1, {cols}};
}

/* A node's row shape: as set, else flat (its width). */
static struct tf_shape
shape_of(const struct tf_node *n)
{
	return n->shape.rank > 0 ? n->shape : (struct tf_shape){1, {n->width}};
}

int
tf_node_input_shape(const struct tf_node *n, int i, struct tf_shape *s)
{
	*s = shape_of(&n->g->nodes[n->inputs[i]]);
	return s->rank;
}

int
tf_node_set_shape(struct tf_node *n, const struct tf_shape *s)
{
	int64_t w = 1;
	if (s->rank < 1 || s->rank > TF_SHAPE_MAX) {
		return tf_node_error(n, "a shape of rank %d (1 to %d)", s->rank,
		                     TF_SHAPE_MAX);
	}
	for (int k = 0; k < s->rank; k++) {
		if (s->dim[k] < 1 || s->dim[k] > (1 << 24) || w > (1 << 24)) {
			return tf_node_error(n, "a shape with dimension %lld",
			                     (long long)s->dim[k]);
		}
		w *= s->dim[k];
	}
	if (w > (1 << 24)) {
		return tf_node_error(n, "a shape of %lld values a row",
		                     (long long)w);
	}
	n->shape = *s;
	n->width = w;
	return TF_OK;
}

int
tfi_shape_parse(const char *s, size_t len, struct tf_shape *out)
{
	struct tf_shape sh = {0, {0}};
	int64_t w = 1;
	size_t i = 0;
	while (i < len) {
		size_t j = i;
		while (j < len && s[j] != 'x') {
			j++;
		}
		int64_t d;
		if (sh.rank == TF_SHAPE_MAX || j == i ||
		    tf_parse_int64(s + i, j - i, &d) != 0 || d < 1 ||
		    d > (1 << 24) || (w *= d) > (1 << 24)) {
			return -1;
		}
		sh.dim[sh.rank++] = d;
		if (j == len) {
			break;
		}
		i = j + 1;
		if (i == len) {
			return -1; /* "28x" */
		}
	}
	if (sh.rank == 0) {
		return -1;
	}
	*out = sh;
	return 0;
}

int
tfi_shape_format(const struct tf_shape *s, char *buf, size_t size)
{
	size_t at = 0;
	buf[0] = '\0';
	for (int k = 0; k < s->rank && at < size; k++) {
		at += (size_t)snprintf(buf + at, size - at, "%s%lld",
		                       k ? "x" : "", (long long)s->dim[k]);
	}
	return at < size ? 0 : -1;
}

int64_t
tfi_shape_size(const struct tf_shape *s)
{
	int64_t w = 1;
	for (int k = 0; k < s->rank; k++) {
		w *= s->dim[k];
	}
	return w;
}

const char *
tf_node_name(const struct tf_node *n)
{
	return n->name;
}

struct tf_device *
tf_node_device(struct tf_node *n)
{
	return n->g->dev;
}

/* The node's attribute key, or NULL. */
static struct attr *
attr_find(struct tf_node *n, const char *key)
{
	for (int i = 0; i < n->nattrs; i++) {
		if (strcmp(n->attrs[i].key, key) == 0) {
			n->attrs[i].used = 1;
			return &n->attrs[i];
		}
	}
	return NULL;
}

int64_t
tf_node_attr_int(struct tf_node *n, const char *key, int64_t dflt)
{
	struct attr *a = attr_find(n, key);
	int64_t v;
	if (a == NULL) {
		return dflt;
	}
	if (tf_parse_int64(a->val, strlen(a->val), &v) != 0) {
		tf_node_error(n, "%s=%s is not a whole number", key, a->val);
		return dflt;
	}
	return v;
}

double
tf_node_attr_float(struct tf_node *n, const char *key, double dflt)
{
	struct attr *a = attr_find(n, key);
	if (a == NULL) {
		return dflt;
	}
	char *end;
	errno = 0;
	double v = strtod(a->val, &end);
	if (*end != '\0' || errno != 0 || !isfinite(v)) {
		tf_node_error(n, "%s=%s is not a number", key, a->val);
		return dflt;
	}
	return v;
}

const char *
tf_node_attr_str(struct tf_node *n, const char *key, const char *dflt)
{
	struct attr *a = attr_find(n, key);
	return a ? a->val : dflt;
}

/* A parameter (or state, which the optimizer leaves alone) of rows x
 * cols, its shape bounded before any block is sized from it; its index
 * among the node's, or an error. */
static int
declare(struct tf_node *n, const char *name, int64_t rows, int64_t cols,
        int init, int state)
{
	if (n->nparams == MAX_PARAMS) {
		return tf_node_error(n, "more than %d parameters", MAX_PARAMS);
	}
	/* Tables may be tall (hashed ids); 2^32 values at most. */
	if (rows < 1 || cols < 1 || rows > INT32_MAX || cols > (1 << 24) ||
	    rows * cols > ((int64_t)1 << 32)) {
		return tf_node_error(n, "parameter %s: bad shape %lld x %lld",
		                     name, (long long)rows, (long long)cols);
	}
	struct pdecl *p = &n->params[n->nparams];
	snprintf(p->name, sizeof p->name, "%s", name);
	p->rows = rows;
	p->cols = cols;
	p->init = init;
	p->state = state;
	return n->nparams++;
}

int
tf_node_add_param(struct tf_node *n, const char *name, int64_t rows,
                  int64_t cols, int init)
{
	return declare(n, name, rows, cols, init, 0);
}

int
tf_node_add_state(struct tf_node *n, const char *name, int64_t rows,
                  int64_t cols, int init)
{
	return declare(n, name, rows, cols, init, 1);
}

int
tf_node_nparams(const struct tf_node *n)
{
	return n->nparams;
}

struct tf_tensor *
tf_node_param(struct tf_node *n, int i)
{
	return &n->params[i].t;
}

struct tf_tensor *
tf_node_param_grad(struct tf_node *n, int i)
{
	return &n->params[i].g;
}

struct tf_tensor *
tf_node_state(struct tf_node *n, int i)
{
	return &n->params[i].t;
}

/* Floats from the step arena (64-byte aligned); NULL when out of memory. */
static float *
arena_alloc(struct tf_graph *g, size_t floats)
{
	floats = (floats + 15) & ~(size_t)15;
	while (g->cur < g->nblocks) {
		struct block *b = &g->blocks[g->cur];
		if (b->cap - b->used >= floats) {
			float *p = b->data + b->used;
			b->used += floats;
			arena_present(g->dev, b, b->used);
			return p;
		}
		g->cur++;
	}
	size_t cap = floats > ((size_t)1 << 20) ? floats : (size_t)1 << 20;
	struct block *bl =
	    realloc(g->blocks, (size_t)(g->nblocks + 1) * sizeof *bl);
	if (bl == NULL) {
		return NULL;
	}
	g->blocks = bl;
	float *data = tfi_device_alloc_step(g->dev, cap);
	if (data == NULL) {
		return NULL;
	}
	g->blocks[g->nblocks] = (struct block){data, cap, floats, 0};
	arena_present(g->dev, &g->blocks[g->nblocks], floats);
	g->cur = g->nblocks++;
	return data;
}

static void
arena_reset(struct tf_graph *g)
{
	for (int b = 0; b < g->nblocks; b++) {
		g->blocks[b].used = 0;
	}
	g->cur = 0;
}

float *
tf_node_scratch(struct tf_node *n, size_t floats)
{
	float *p = arena_alloc(n->g, floats);
	if (p == NULL) {
		tfi_set_error(n->g, TF_ENOMEM, "out of memory for a step");
	}
	return p;
}

void
tf_node_set_saved(struct tf_node *n, int slot, float *p)
{
	if (slot >= 0 && slot < 4) {
		n->saved[slot] = p;
	}
}

float *
tf_node_saved(struct tf_node *n, int slot)
{
	return slot >= 0 && slot < 4 ? n->saved[slot] : NULL;
}

uint64_t
tf_node_random(struct tf_node *n)
{
	return tf_rng_next(&n->g->rng);
}

struct tf_rng *
tf_graph_rng(struct tf_graph *g)
{
	return &g->rng;
}

void
tf_node_set_loss(struct tf_node *n, double loss)
{
	n->loss = loss;
}

/* ---- building -------------------------------------------------------------
 */

static void
init_values(float *v, const struct pdecl *p, struct tf_rng *rng)
{
	size_t n = (size_t)(p->rows * p->cols);
	switch (p->init) {
	case TF_INIT_ONES:
		for (size_t i = 0; i < n; i++) {
			v[i] = 1.0f;
		}
		break;
	case TF_INIT_GLOROT_UNIFORM: {
		/* fan_in = rows, fan_out = cols (a [in, out] kernel) */
		double limit = sqrt(6.0 / (double)(p->rows + p->cols));
		for (size_t i = 0; i < n; i++) {
			v[i] = (float)((tf_rng_uniform(rng) * 2 - 1) * limit);
		}
		break;
	}
	case TF_INIT_NORMAL:
		for (size_t i = 0; i < n; i++) {
			v[i] = (float)(0.05 * tf_rng_normal(rng));
		}
		break;
	default:
		for (size_t i = 0; i < n; i++) {
			v[i] = 0.0f;
		}
	}
}

int
tf_graph_build(struct tf_graph *g, const struct tf_registry *r,
               struct tf_device *dev, uint64_t seed)
{
	if (g->built) {
		return tfi_set_error(g, TF_EINVAL, "graph already built");
	}
	if (g->n == 0) {
		return tfi_set_error(g, TF_EINVAL, "model: no nodes");
	}
	g->dev = dev;
	for (int i = 0; i < g->n; i++) {
		struct tf_node *nd = &g->nodes[i];
		nd->g = g;
		if (nd->is_input) {
			continue;
		}
		nd->op = tf_registry_op(r, nd->opname);
		if (nd->op == NULL) {
			return tfi_set_error(g, TF_EINVAL,
			                     "node '%s': unknown op '%s' (see "
			                     "--list-plugins)",
			                     nd->name, nd->opname);
		}
		int rc = nd->op->build(nd);
		if (rc != TF_OK || g->err.code != TF_OK) {
			return g->err.code ? g->err.code
			                   : tf_node_error(nd, "build failed");
		}
		/* Ids reach only ops that asked what they are given. */
		for (int k = 0; k < nd->ninputs; k++) {
			const struct tf_node *in = &g->nodes[nd->inputs[k]];
			if (in->dtype != TF_FLOAT32 &&
			    !(nd->dtype_asked & (1u << k))) {
				return tf_node_error(
				    nd,
				    "input '%s' holds int64 ids; this op "
				    "takes float32 (ids go to embedding)",
				    in->name);
			}
		}
		for (int a = 0; a < nd->nattrs; a++) {
			if (!nd->attrs[a].used) {
				return tf_node_error(nd,
				                     "unknown attribute "
				                     "'%s'",
				                     nd->attrs[a].key);
			}
		}
		if (nd->width < 1) {
			return tf_node_error(nd, "the op set no output width");
		}
	}
	/* Which nodes the loss depends on: backward visits only those.  A
	 * graph without a loss (an export's) only runs forward. */
	if (g->loss_node >= 0) {
		g->nodes[g->loss_node].on_loss_path = 1;
	}
	for (int i = g->loss_node; i >= 0; i--) {
		struct tf_node *nd = &g->nodes[i];
		for (int k = 0; nd->on_loss_path && k < nd->ninputs; k++) {
			g->nodes[nd->inputs[k]].on_loss_path = 1;
		}
	}
	/* One block for parameters, one for their gradients, one for state. */
	for (int i = 0; i < g->n; i++) {
		struct tf_node *nd = &g->nodes[i];
		for (int k = 0; k < nd->nparams; k++) {
			struct pdecl *p = &nd->params[k];
			size_t sz = (size_t)(p->rows * p->cols);
			p->off = p->state ? g->nstate : g->nparams;
			*(p->state ? &g->nstate : &g->nparams) += sz;
		}
	}
	g->params = tf_device_alloc(dev, g->nparams + 1);
	g->grads = tf_device_alloc(dev, g->nparams + 1);
	g->state = tf_device_alloc(dev, g->nstate + 1);
	if (!g->params || !g->grads || !g->state) {
		return tfi_set_error(g, TF_ENOMEM,
		                     "out of memory for %zu "
		                     "parameters",
		                     g->nparams);
	}
	struct tf_rng rng;
	tf_rng_seed(&rng, seed);
	tf_rng_seed(&g->rng, seed ^ 0x5deece66dull); /* for the ops */
	/* Initial values are drawn on the host: into the blocks on the CPU,
	 * into copies that go up whole on a device (its memory is out of
	 * the host's reach). */
	int host = tf_device_kind(dev) == TF_DEVICE_CPU;
	float *hp = host ? g->params : calloc(g->nparams + 1, sizeof *hp);
	float *hs = host ? g->state : calloc(g->nstate + 1, sizeof *hs);
	if (hp == NULL || hs == NULL) {
		if (!host) {
			free(hp);
			free(hs);
		}
		return tfi_set_error(g, TF_ENOMEM, "out of memory");
	}
	for (int i = 0; i < g->n; i++) {
		struct tf_node *nd = &g->nodes[i];
		for (int k = 0; k < nd->nparams; k++) {
			struct pdecl *p = &nd->params[k];
			float *base = p->state ? g->state : g->params;
			p->t = (struct tf_tensor){base + p->off, TF_FLOAT32,
			                          p->rows, p->cols, dev};
			p->g = (struct tf_tensor){
			    p->state ? NULL : g->grads + p->off, TF_FLOAT32,
			    p->rows, p->cols, dev};
			init_values((p->state ? hs : hp) + p->off, p, &rng);
		}
	}
	if (!host) {
		tf_device_upload(dev, g->params, hp, g->nparams * sizeof *hp);
		tf_device_upload(dev, g->state, hs, g->nstate * sizeof *hs);
		char msg[300];
		int rc = tf_device_sync(dev, msg, sizeof msg);
		free(hp);
		free(hs);
		if (rc != TF_OK) {
			return tfi_set_error(g, rc, "%s", msg);
		}
	}
	g->built = 1;
	return TF_OK;
}

/* Towers (train.c): t, the same model built again, trains on g's
 * parameters; its gradients, state and step memory stay its own (the
 * state starts as a copy of g's). */
int
tfi_graph_share_params(struct tf_graph *t, struct tf_graph *g)
{
	if (!t->built || !g->built || t->nparams != g->nparams ||
	    t->nstate != g->nstate || t->shares_params) {
		return tfi_set_error(t, TF_EINVAL,
		                     "towers: not the same model");
	}
	if (t->dev != g->dev) {
		return tfi_set_error(t, TF_EINVAL,
		                     "towers: not on the same device");
	}
	tf_device_free(t->dev, t->params);
	t->params = g->params;
	t->shares_params = 1;
	for (int i = 0; i < t->n; i++) {
		struct tf_node *nd = &t->nodes[i];
		for (int k = 0; k < nd->nparams; k++) {
			struct pdecl *p = &nd->params[k];
			if (!p->state) {
				p->t.data = g->params + p->off;
			}
		}
	}
	memcpy(t->state, g->state, t->nstate * sizeof *t->state);
	return TF_OK;
}

int
tf_graph_want_input_grad(struct tf_graph *g, const char *input)
{
	int k = find_node(g, input);
	if (k < 0 || !g->nodes[k].is_input) {
		return tfi_set_error(g, TF_EINVAL, "no input '%s'", input);
	}
	if (g->nodes[k].dtype != TF_FLOAT32) {
		return tfi_set_error(
		    g, TF_EINVAL, "input '%s' holds ids: no gradient", input);
	}
	g->nodes[k].want_grad = 1;
	return TF_OK;
}

/* Rows of an input for the next pass, borrowed (not copied) until it
 * ends; the dtype must be the input's. */
static int
feed(struct tf_graph *g, const char *input, int dtype, const void *data,
     int64_t rows)
{
	int k = find_node(g, input);
	if (k < 0 || !g->nodes[k].is_input) {
		return tfi_set_error(g, TF_EINVAL, "no input '%s'", input);
	}
	if (g->nodes[k].dtype != dtype) {
		return tfi_set_error(
		    g, TF_EINVAL, "input '%s' takes %s, not %s", input,
		    g->nodes[k].dtype == TF_INT64 ? "int64" : "float32",
		    dtype == TF_INT64 ? "int64" : "float32");
	}
	if (rows < 1) {
		return tfi_set_error(g, TF_EINVAL, "input '%s': no rows",
		                     input);
	}
	g->nodes[k].fed = data;
	g->nodes[k].fed_rows = rows;
	return TF_OK;
}

int
tf_graph_feed(struct tf_graph *g, const char *input, const float *data,
              int64_t rows)
{
	return feed(g, input, TF_FLOAT32, data, rows);
}

int
tf_graph_feed_ids(struct tf_graph *g, const char *input, const int64_t *ids,
                  int64_t rows)
{
	return feed(g, input, TF_INT64, ids, rows);
}

/* The next batch's rows of one input, on their way to the device in
 * the buffer the current step does not use. */
static int
stage_input(struct tf_graph *g, const char *input, const void *data,
            int64_t rows)
{
	int k = find_node(g, input);
	if (k < 0 || !g->nodes[k].is_input || data == NULL || rows < 1) {
		return TF_OK;
	}
	struct tf_node *nd = &g->nodes[k];
	/* Not the buffer staged last, which the next forward may take; the
	 * other one's batch has been computed (or was never fed). */
	int s = nd->stage_last ^ 1;
	nd->stage_src[s] = NULL;
	size_t floats =
	    (size_t)(rows * nd->width) * (nd->dtype == TF_INT64 ? 2 : 1);
	if (nd->stage_cap[s] < floats) {
		tf_device_free(g->dev, nd->stage[s]);
		nd->stage[s] = tfi_device_alloc_step(g->dev, floats);
		nd->stage_cap[s] = nd->stage[s] ? floats : 0;
		if (nd->stage[s] == NULL) {
			return tfi_set_error(
			    g, TF_ENOMEM, "out of device memory for a batch");
		}
		/* written whole by each upload */
		tfi_device_populate(g->dev, nd->stage[s], 0,
		                    floats * sizeof(float));
	}
	tf_device_upload_ahead(g->dev, nd->stage[s], data,
	                       floats * sizeof(float), s);
	nd->stage_src[s] = data;
	nd->stage_rows[s] = rows;
	nd->stage_last = s;
	return TF_OK;
}

int
tf_graph_stage_batch(struct tf_graph *g, const struct tf_batch *b)
{
	if (!g->built || tf_device_kind(g->dev) == TF_DEVICE_CPU) {
		return TF_OK; /* the CPU reads batches in place */
	}
	int64_t rows = (int64_t)b->rows;
	/* no x: a model of ids alone (a sequence of tokens) */
	int rc = find_node(g, "x") >= 0 || b->width > 0
	             ? stage_input(g, "x", b->x, rows)
	             : TF_OK;
	if (rc == TF_OK && b->id_width > 0) {
		rc = stage_input(g, "ids", b->ids, rows);
	}
	if (rc == TF_OK && b->y != NULL) {
		rc = stage_input(g, "label", b->y, rows);
	}
	return rc;
}

int
tf_graph_feed_batch(struct tf_graph *g, const struct tf_batch *b)
{
	int64_t rows = (int64_t)b->rows;
	int rc = find_node(g, "x") >= 0 || b->width > 0
	             ? feed(g, "x", TF_FLOAT32, b->x, rows)
	             : TF_OK;
	if (rc == TF_OK && find_node(g, "ids") >= 0) {
		rc = b->ids != NULL && b->id_width > 0
		         ? feed(g, "ids", TF_INT64, b->ids, rows)
		         : tfi_set_error(g, TF_EINVAL,
		                         "the model takes ids; none "
		                         "were given");
	}
	if (rc == TF_OK && b->y != NULL && find_node(g, "label") >= 0) {
		rc = feed(g, "label", TF_FLOAT32, b->y, rows);
	}
	return rc;
}

int64_t
tf_graph_ids_width(const struct tf_graph *g)
{
	int k = find_node(g, "ids");
	return k >= 0 && g->nodes[k].is_input && g->nodes[k].dtype == TF_INT64
	           ? g->nodes[k].width
	           : 0;
}

int
tf_graph_input_dtype(const struct tf_graph *g, const char *input)
{
	int k = find_node(g, input);
	return k >= 0 && g->nodes[k].is_input ? g->nodes[k].dtype : -1;
}

/* ---- running ----------------------------------------------------------------
 */

static int
alloc_tensor(struct tf_graph *g, struct tf_tensor *t, int dtype, int64_t rows,
             int64_t cols)
{
	size_t n = (size_t)(rows * cols) * (dtype == TF_INT64 ? 2 : 1);
	float *p = arena_alloc(g, n);
	if (p == NULL) {
		return tfi_set_error(g, TF_ENOMEM, "out of memory for a step");
	}
	*t = (struct tf_tensor){p, dtype, rows, cols, g->dev};
	return TF_OK;
}

/* Wait for the device (a GPU's queue): the values of the pass are then
 * the host's to read.  A failed kernel's message becomes the graph's. */
static int
sync(struct tf_graph *g)
{
	char msg[300];
	if (tf_device_sync(g->dev, msg, sizeof msg) != TF_OK) {
		return tfi_set_error(g, TF_EINTERNAL, "%s", msg);
	}
	return TF_OK;
}

int
tf_graph_forward(struct tf_graph *g, int training)
{
	if (!g->built) {
		return tfi_set_error(g, TF_EINVAL, "graph is not built");
	}
	tf_errclear(g); /* a new step */
	arena_reset(g);
	g->forward_done = 0;
	int64_t rows = -1;
	for (int i = 0; i < g->n; i++) {
		struct tf_node *nd = &g->nodes[i];
		nd->dout.data = NULL;
		nd->out.data = NULL; /* values of this step only */
		if (!nd->is_input) {
			continue;
		}
		if (nd->fed == NULL) {
			return tfi_set_error(
			    g, TF_EINVAL, "input '%s' was not fed", nd->name);
		}
		if (rows >= 0 && nd->fed_rows != rows) {
			return tfi_set_error(g, TF_EINVAL,
			                     "input '%s' has %lld rows, others "
			                     "%lld",
			                     nd->name, (long long)nd->fed_rows,
			                     (long long)rows);
		}
		rows = nd->fed_rows;
	}
	g->rows = rows;
	int host = tf_device_kind(g->dev) == TF_DEVICE_CPU;
	for (int i = 0; i < g->n; i++) {
		struct tf_node *nd = &g->nodes[i];
		if (nd->is_input && host) {
			/* The CPU reads fed data in place (ops never write
			 * their inputs). */
			nd->out.data = (void *)nd->fed;
			nd->out.dtype = nd->dtype;
			nd->out.rows = rows;
			nd->out.cols = nd->width;
			nd->out.dev = g->dev;
			continue;
		}
		int s = !nd->is_input                 ? -1
		        : nd->stage_src[0] == nd->fed ? 0
		        : nd->stage_src[1] == nd->fed ? 1
		                                      : -1;
		if (s >= 0 && nd->stage_rows[s] == rows) {
			/* Uploaded during the step before: the device waits
			 * for that copy only. */
			nd->stage_src[s] = NULL;
			tf_device_await_uploads(g->dev, s);
			nd->out = (struct tf_tensor){nd->stage[s], nd->dtype,
			                             rows, nd->width, g->dev};
			continue;
		}
		if (alloc_tensor(g, &nd->out, nd->dtype, rows, nd->width) !=
		    TF_OK) {
			return g->err.code;
		}
		if (nd->is_input) {
			/* Bytes to the device, in order with its kernels. */
			tf_device_upload(g->dev, nd->out.data, nd->fed,
			                 (size_t)(rows * nd->width) *
			                     (nd->dtype == TF_INT64 ? 8 : 4));
			continue;
		}
		if (nd->op->forward(nd, training) != TF_OK ||
		    g->err.code != TF_OK) {
			return g->err.code
			           ? g->err.code
			           : tf_node_error(nd, "forward failed");
		}
	}
	if (sync(g) != TF_OK) {
		return g->err.code;
	}
	g->forward_done = 1;
	return TF_OK;
}

double
tf_graph_loss(const struct tf_graph *g)
{
	return g->loss_node >= 0 ? g->nodes[g->loss_node].loss : NAN;
}

int
tfi_graph_zero_grads(struct tf_graph *g, int on)
{
	int was = !g->keep_grads;
	g->keep_grads = !on;
	return was;
}

int
tf_graph_backward(struct tf_graph *g)
{
	if (g->loss_node < 0) {
		return tfi_set_error(g, TF_EINVAL,
		                     "model: no node named 'loss' (or say "
		                     "'loss NODE'): nothing to train");
	}
	if (!g->forward_done) {
		return tfi_set_error(g, TF_EINVAL, "backward before forward");
	}
	if (!g->keep_grads) {
		tf_zero(g->dev, g->grads, g->nparams);
	}
	for (int i = 0; i < g->n; i++) {
		struct tf_node *nd = &g->nodes[i];
		int need = nd->on_loss_path && nd->dtype == TF_FLOAT32 &&
		           (!nd->is_input || nd->want_grad);
		nd->dout.data = NULL;
		if (!need) {
			continue;
		}
		if (alloc_tensor(g, &nd->dout, TF_FLOAT32, nd->out.rows,
		                 nd->out.cols) != TF_OK) {
			return g->err.code;
		}
		tf_zero(g->dev, tf_tensor_f32(&nd->dout),
		        tf_tensor_size(&nd->dout));
	}
	/* d loss / d loss = 1 in every row of the loss output. */
	struct tf_node *ln = &g->nodes[g->loss_node];
	tf_fill(g->dev, tf_tensor_f32(&ln->dout), tf_tensor_size(&ln->dout),
	        1.0f);
	for (int i = g->loss_node; i >= 0; i--) {
		struct tf_node *nd = &g->nodes[i];
		if (nd->is_input || !nd->on_loss_path) {
			continue;
		}
		if (nd->op->backward(nd) != TF_OK || g->err.code != TF_OK) {
			return g->err.code
			           ? g->err.code
			           : tf_node_error(nd, "backward failed");
		}
	}
	return sync(g);
}

const struct tf_tensor *
tf_graph_value(struct tf_graph *g, const char *node)
{
	int k = find_node(g, node);
	return k >= 0 && g->nodes[k].out.data ? &g->nodes[k].out : NULL;
}

const float *
tf_graph_fetch(struct tf_graph *g, const char *node)
{
	const struct tf_tensor *t = tf_graph_value(g, node);
	if (t == NULL || t->dtype != TF_FLOAT32) {
		return NULL;
	}
	if (tf_device_kind(g->dev) == TF_DEVICE_CPU) {
		return tf_tensor_f32(t);
	}
	size_t n = tf_tensor_size(t);
	if (n > g->host_cap) {
		float *p = realloc(g->host, n * sizeof *p);
		if (p == NULL) {
			return NULL;
		}
		g->host = p;
		g->host_cap = n;
	}
	tf_device_download(g->dev, g->host, tf_tensor_f32(t),
	                   n * sizeof(float));
	return g->host;
}

const struct tf_tensor *
tf_graph_grad(struct tf_graph *g, const char *node)
{
	int k = find_node(g, node);
	return k >= 0 && g->nodes[k].dout.data ? &g->nodes[k].dout : NULL;
}

int
tf_graph_shape(const struct tf_graph *g, const char *node, struct tf_shape *s)
{
	int k = find_node(g, node);
	if (k < 0) {
		*s = (struct tf_shape){0, {0}};
		return 0;
	}
	*s = shape_of(&g->nodes[k]);
	return s->rank;
}

int64_t
tf_graph_width(const struct tf_graph *g, const char *node)
{
	int k = find_node(g, node);
	return k >= 0 ? g->nodes[k].width : -1;
}

int64_t
tfi_graph_x_width(const struct tf_graph *g)
{
	int k = find_node(g, "x");
	return k >= 0 ? g->nodes[k].width : 0;
}

size_t
tf_graph_nparams(const struct tf_graph *g)
{
	return g->nparams;
}

float *
tf_graph_params(struct tf_graph *g)
{
	return g->params;
}

float *
tf_graph_grads(struct tf_graph *g)
{
	return g->grads;
}

size_t
tf_graph_nstate(const struct tf_graph *g)
{
	return g->nstate;
}

float *
tf_graph_state(struct tf_graph *g)
{
	return g->state;
}

/* Block which (TFI_PARAMS, TFI_GRADS, TFI_STATE) on the device, and its
 * length. */
static float *
block(struct tf_graph *g, int which, size_t *n)
{
	*n = which == TFI_STATE ? g->nstate : g->nparams;
	return which == TFI_PARAMS  ? g->params
	       : which == TFI_GRADS ? g->grads
	                            : g->state;
}

float *
tfi_graph_host(struct tf_graph *g, int which, int fetch)
{
	size_t n;
	float *d = block(g, which, &n);
	if (tf_device_kind(g->dev) == TF_DEVICE_CPU) {
		return d;
	}
	float *h = tfi_device_mirror(g->dev, &g->hblk[which], d, n, fetch);
	if (h == NULL) {
		tfi_set_error(g, TF_ENOMEM, "out of memory");
	}
	return h;
}

int
tfi_graph_commit(struct tf_graph *g, int which)
{
	size_t n;
	float *d = block(g, which, &n);
	if (tf_device_kind(g->dev) == TF_DEVICE_CPU) {
		return TF_OK;
	}
	if (g->hblk[which] == NULL) {
		return tfi_set_error(g, TF_EINTERNAL,
		                     "a block committed that was never read");
	}
	tf_device_upload(g->dev, d, g->hblk[which], n * sizeof(float));
	char msg[300];
	return tf_device_sync(g->dev, msg, sizeof msg) == TF_OK
	           ? TF_OK
	           : tfi_set_error(g, TF_EINTERNAL, "%s", msg);
}

/* ---- looking at a built graph (exports) ---------------------------------
 */

int
tf_graph_nnodes(const struct tf_graph *g)
{
	return g->n;
}

int
tf_graph_find(const struct tf_graph *g, const char *name)
{
	return find_node(g, name);
}

const char *
tf_graph_node_name(const struct tf_graph *g, int i)
{
	return i >= 0 && i < g->n ? g->nodes[i].name : NULL;
}

const char *
tf_graph_node_op(const struct tf_graph *g, int i)
{
	return i >= 0 && i < g->n ? g->nodes[i].opname : NULL;
}

int
tf_graph_node_ninputs(const struct tf_graph *g, int i)
{
	return i >= 0 && i < g->n ? g->nodes[i].ninputs : 0;
}

const char *
tf_graph_node_input(const struct tf_graph *g, int i, int k)
{
	if (i < 0 || i >= g->n || k < 0 || k >= g->nodes[i].ninputs) {
		return NULL;
	}
	return g->nodes[g->nodes[i].inputs[k]].name;
}

const char *
tf_graph_node_attr(const struct tf_graph *g, int i, const char *key)
{
	if (i < 0 || i >= g->n) {
		return NULL;
	}
	const struct tf_node *nd = &g->nodes[i];
	for (int a = 0; a < nd->nattrs; a++) {
		if (strcmp(nd->attrs[a].key, key) == 0) {
			return nd->attrs[a].val;
		}
	}
	return NULL;
}

int
tf_graph_node_nparams(const struct tf_graph *g, int i)
{
	return i >= 0 && i < g->n ? g->nodes[i].nparams : 0;
}

float *
tf_graph_node_param(struct tf_graph *g, int i, int k, const char **name,
                    int64_t *rows, int64_t *cols, int *state)
{
	if (!g->built || i < 0 || i >= g->n || k < 0 ||
	    k >= g->nodes[i].nparams) {
		return NULL;
	}
	struct pdecl *p = &g->nodes[i].params[k];
	*name = p->name;
	*rows = p->rows;
	*cols = p->cols;
	*state = p->state;
	return tf_tensor_f32(&p->t);
}

float *
tf_graph_param_by_name(struct tf_graph *g, const char *node, const char *param,
                       int64_t *rows, int64_t *cols)
{
	int i = find_node(g, node);
	for (int k = 0; i >= 0 && k < tf_graph_node_nparams(g, i); k++) {
		const char *name;
		int state;
		float *d =
		    tf_graph_node_param(g, i, k, &name, rows, cols, &state);
		if (d != NULL && strcmp(name, param) == 0) {
			return d;
		}
	}
	return NULL;
}

int
tf_graph_node_nattrs(const struct tf_graph *g, int i)
{
	return i >= 0 && i < g->n ? g->nodes[i].nattrs : 0;
}

const char *
tf_graph_node_attr_at(const struct tf_graph *g, int i, int a,
                      const char **value)
{
	if (i < 0 || i >= g->n || a < 0 || a >= g->nodes[i].nattrs) {
		return NULL;
	}
	*value = g->nodes[i].attrs[a].val;
	return g->nodes[i].attrs[a].key;
}
