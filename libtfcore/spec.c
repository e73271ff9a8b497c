/*
 * spec.c - model specs (tf-plugin(7)): the built-in models' (lr and dnn,
 * tf_model_spec(); wide_and_deep, tf_model_spec_wide_deep()) and a
 * user's --model-file (tf_model_spec_custom(): widths and shapes checked
 * against the data, the prediction and the loss of the task added).
 * The graph that runs a spec is graph.c's; the loop that trains it
 * train.c's.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tf/dataset.h"
#include "tf/schema.h"
#include "tf/train.h"

/* ---- model specs --------------------------------------------------------- */

static const char *
loss_op(int task)
{
	return task == TF_TASK_BINARY       ? "sigmoid_xent"
	       : task == TF_TASK_MULTICLASS ? "softmax_xent"
	                                    : "mse";
}

/* Append a line to a spec; non-zero when out of memory. */
static int put_line(struct tfi_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
put_line(struct tfi_buf *b, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	return tfi_json_put(b, line, strlen(line));
}

/* The next number of a list of sizes ("128 32 8" or "128,32,8") from *p,
 * which moves past it: 1 and *v, 0 at the end of the list, -1 for
 * anything else or a value outside 1..max. */
static int
next_size(const char **p, long max, long *v)
{
	while (**p == ' ' || **p == ',') {
		(*p)++;
	}
	if (**p == '\0') {
		return 0;
	}
	char *end;
	*v = strtol(*p, &end, 10);
	if (end == *p || *v < 1 || *v > max ||
	    (*end != '\0' && *end != ' ' && *end != ',')) {
		return -1;
	}
	*p = end;
	return 1;
}

/*
 * The hidden layers of a dnn on node prev: dense, then batchnorm when
 * bn_epsilon > 0, then relu, then dropout when keep < 1.  The last
 * layer's name goes to out.
 */
static int
hidden_layers(struct tfi_buf *b, const char *hidden, const char *prev,
              double bn_epsilon, double keep, char *out, size_t outlen,
              char *err, size_t errlen)
{
	const char *p = hidden ? hidden : "";
	int layer = 0, rc = 0, more;
	long units;
	snprintf(out, outlen, "%s", prev);
	while ((more = next_size(&p, 1 << 20, &units)) != 0) {
		if (more < 0) {
			snprintf(err, errlen,
			         "--hidden: '%s' is not a list of layer sizes",
			         hidden);
			return TF_EINVAL;
		}
		layer++;
		rc = rc || put_line(b, "node h%d dense %s units=%ld\n", layer,
		                    out, units);
		if (bn_epsilon > 0) {
			rc =
			    rc ||
			    put_line(b, "node n%d batchnorm h%d epsilon=%.9g\n",
			             layer, layer, bn_epsilon) ||
			    put_line(b, "node a%d relu n%d\n", layer, layer);
		} else {
			rc = rc ||
			     put_line(b, "node a%d relu h%d\n", layer, layer);
		}
		snprintf(out, outlen, "a%d", layer);
		if (keep < 1) {
			rc = rc ||
			     put_line(b, "node d%d dropout a%d keep=%.9g\n",
			              layer, layer, keep);
			snprintf(out, outlen, "d%d", layer);
		}
	}
	if (layer == 0) {
		snprintf(err, errlen, "--hidden: no layers");
		return TF_EINVAL;
	}
	if (rc) {
		snprintf(err, errlen, "out of memory");
		return TF_ENOMEM;
	}
	return TF_OK;
}

/* The prediction and the loss on node logits. */
static int
put_head(struct tfi_buf *b, int task)
{
	return (task == TF_TASK_BINARY
	            ? put_line(b, "node prob sigmoid logits\n")
	        : task == TF_TASK_MULTICLASS
	            ? put_line(b, "node prob softmax logits\n")
	            : 0) ||
	       put_line(b, "node loss %s logits,label\n", loss_op(task));
}

/* A spec's end: the head (prediction and loss) after what b holds, and
 * the text in *spec; rc nonzero (a line that did not fit) or a head
 * that does not fit is out of memory, b freed. */
static int
finish_spec(struct tfi_buf *b, int rc, int task, char **spec, char *err,
            size_t errlen)
{
	if (rc || put_head(b, task)) {
		tfi_buf_free(b);
		snprintf(err, errlen, "out of memory");
		return TF_ENOMEM;
	}
	*spec = (char *)b->data;
	return TF_OK;
}

int
tf_model_spec(const char *model, const char *hidden, int64_t inputs, int task,
              int64_t classes, double bn_epsilon, double keep, char **spec,
              char *err, size_t errlen)
{
	struct tfi_buf b = {0};
	int64_t out = task == TF_TASK_MULTICLASS ? classes : 1;
	char prev[32] = "x";
	int rc =
	    put_line(&b, "input x %lld\ninput label 1\n", (long long)inputs);
	if (strcmp(model, "dnn") == 0) {
		int hr = hidden_layers(&b, hidden, "x", bn_epsilon, keep, prev,
		                       sizeof prev, err, errlen);
		if (hr != TF_OK) {
			tfi_buf_free(&b);
			return hr;
		}
	} else if (strcmp(model, "lr") != 0) {
		snprintf(err, errlen,
		         "unknown model '%s' (lr, dnn, cnn, lstm, "
		         "bidirectional_lstm, gru or wide_and_deep; a "
		         "model "
		         "of your own: --model-file SPEC)",
		         model);
		tfi_buf_free(&b);
		return TF_EINVAL;
	}
	rc = rc || put_line(&b, "node logits dense %s units=%lld\n", prev,
	                    (long long)out);
	return finish_spec(&b, rc, task, spec, err, errlen);
}

/* A deep part from node top: the hidden layers of a dnn, then node name
 * of out values; a bad --hidden frees b and returns its error in *hr
 * (else TF_OK), the result says whether writing failed (rc, so far). */
static int
deep_part(struct tfi_buf *b, int rc, const char *top, const char *name,
          const char *hidden, double bn_epsilon, double keep, int64_t out,
          int *hr, char *err, size_t errlen)
{
	char last[32];
	*hr = hidden_layers(b, hidden, top, bn_epsilon, keep, last, sizeof last,
	                    err, errlen);
	if (*hr != TF_OK) {
		tfi_buf_free(b);
		return 1;
	}
	return rc || put_line(b, "node %s dense %s units=%lld\n", name, last,
	                      (long long)out);
}

/* A spec's end from node top: the hidden layers of a dnn, the logits of
 * out values, the prediction and loss (finish_spec()); b is freed on an
 * error, rc says whether writing it failed so far. */
static int
dense_head(struct tfi_buf *b, int rc, const char *top, const char *hidden,
           double bn_epsilon, double keep, int64_t out, int task, char **spec,
           char *err, size_t errlen)
{
	int hr;
	rc = deep_part(b, rc, top, "logits", hidden, bn_epsilon, keep, out, &hr,
	               err, errlen);
	return hr != TF_OK ? hr : finish_spec(b, rc, task, spec, err, errlen);
}

/*
 * An image shape "HxWxC" (or "HxW", one channel) into dims; TF_EINVAL
 * with why in err.
 */
static int
image_shape(const char *text, int64_t dims[3], char *err, size_t errlen)
{
	struct tf_shape sh;
	if (text == NULL || tfi_shape_parse(text, strlen(text), &sh) != 0 ||
	    sh.rank < 2 || sh.rank > 3) {
		snprintf(err, errlen,
		         "--input-shape: '%s' is not an image shape "
		         "(HxWxC, e.g. 28x28x1)",
		         text ? text : "");
		return TF_EINVAL;
	}
	dims[0] = sh.dim[0];
	dims[1] = sh.dim[1];
	dims[2] = sh.rank == 3 ? sh.dim[2] : 1;
	return TF_OK;
}

int
tf_model_spec_cnn(const char *input_shape, const char *conv, const char *hidden,
                  int64_t inputs, int task, int64_t classes, double bn_epsilon,
                  double keep, char **spec, char *err, size_t errlen)
{
	int64_t d[3];
	if (input_shape == NULL || *input_shape == '\0') {
		/* A square of one channel, when the width is one. */
		int64_t side = 1;
		while ((side + 1) * (side + 1) <= inputs) {
			side++;
		}
		if (side * side != inputs) {
			snprintf(err, errlen,
			         "--model cnn reads each row as an image: say "
			         "its shape with --input-shape HxWxC (the rows "
			         "hold %lld values)",
			         (long long)inputs);
			return TF_EINVAL;
		}
		d[0] = d[1] = side, d[2] = 1;
	} else if (image_shape(input_shape, d, err, errlen) != TF_OK) {
		return TF_EINVAL;
	} else if (d[0] * d[1] * d[2] != inputs) {
		snprintf(err, errlen,
		         "--input-shape %s holds %lld values; the data's rows "
		         "have %lld",
		         input_shape, (long long)(d[0] * d[1] * d[2]),
		         (long long)inputs);
		return TF_EINVAL;
	}
	struct tfi_buf b = {0};
	int64_t out = task == TF_TASK_MULTICLASS ? classes : 1;
	int rc = put_line(&b, "input x %lldx%lldx%lld\ninput label 1\n",
	                  (long long)d[0], (long long)d[1], (long long)d[2]);
	/* Blocks of conv 3x3 (SAME), [batchnorm,] relu, max_pool 2 (SAME). */
	const char *p = conv ? conv : "";
	char prev[32] = "x";
	int block = 0, more;
	long filters;
	while ((more = next_size(&p, 4096, &filters)) != 0) {
		if (more < 0) {
			snprintf(err, errlen,
			         "--conv: '%s' is not a list of filter counts",
			         conv);
			tfi_buf_free(&b);
			return TF_EINVAL;
		}
		block++;
		if (bn_epsilon > 0) {
			/* batch norm of each channel, whose beta is the bias */
			rc = rc ||
			     put_line(&b,
			              "node c%d conv2d %s filters=%ld kernel=3 "
			              "bias=0\n",
			              block, prev, filters) ||
			     put_line(&b,
			              "node cn%d batchnorm c%d epsilon=%.9g\n",
			              block, block, bn_epsilon) ||
			     put_line(&b, "node r%d relu cn%d\n", block, block);
		} else {
			rc =
			    rc ||
			    put_line(
			        &b, "node c%d conv2d %s filters=%ld kernel=3\n",
			        block, prev, filters) ||
			    put_line(&b, "node r%d relu c%d\n", block, block);
		}
		rc = rc ||
		     put_line(&b, "node p%d max_pool r%d size=2 padding=same\n",
		              block, block);
		snprintf(prev, sizeof prev, "p%d", block);
	}
	if (block == 0) {
		snprintf(err, errlen, "--conv: no convolution layers");
		tfi_buf_free(&b);
		return TF_EINVAL;
	}
	rc = rc || put_line(&b, "node flat flatten %s\n", prev);
	return dense_head(&b, rc, "flat", hidden, bn_epsilon, keep, out, task,
	                  spec, err, errlen);
}

int
tfi_model_recurrent(const char *model)
{
	return model != NULL && (strcmp(model, "lstm") == 0 ||
	                         strcmp(model, "bidirectional_lstm") == 0 ||
	                         strcmp(model, "gru") == 0);
}

int
tf_model_spec_rnn(const char *model, const char *input_shape, int64_t units,
                  int reset_after, const char *hidden, int64_t inputs, int task,
                  int64_t classes, double bn_epsilon, double keep, char **spec,
                  char *err, size_t errlen)
{
	int bi = strcmp(model, "bidirectional_lstm") == 0,
	    gru = strcmp(model, "gru") == 0;
	struct tf_shape sh;
	if (!tfi_model_recurrent(model)) {
		snprintf(err, errlen, "'%s' is not a recurrent model", model);
		return TF_EINVAL;
	}
	if (input_shape == NULL || *input_shape == '\0') {
		snprintf(err, errlen,
		         "--model %s reads each row as a sequence: say its "
		         "steps and features with --input-shape TxF (the rows "
		         "hold %lld values)",
		         model, (long long)inputs);
		return TF_EINVAL;
	}
	if (tfi_shape_parse(input_shape, strlen(input_shape), &sh) != 0 ||
	    sh.rank != 2) {
		snprintf(err, errlen,
		         "--input-shape: '%s' is not a sequence shape (TxF: "
		         "steps x features, e.g. 28x28)",
		         input_shape);
		return TF_EINVAL;
	}
	if (sh.dim[0] * sh.dim[1] != inputs) {
		snprintf(err, errlen,
		         "--input-shape %s holds %lld values; the data's rows "
		         "have %lld",
		         input_shape, (long long)(sh.dim[0] * sh.dim[1]),
		         (long long)inputs);
		return TF_EINVAL;
	}
	if (units < 1) {
		snprintf(err, errlen, "--rnn-units: at least 1");
		return TF_EINVAL;
	}
	struct tfi_buf b = {0};
	int64_t out = task == TF_TASK_MULTICLASS ? classes : 1;
	const char *op = gru ? "gru" : "lstm";
	int rc = put_line(&b, "input x %lldx%lld\ninput label 1\n",
	                  (long long)sh.dim[0], (long long)sh.dim[1]);
	rc = rc ||
	     put_line(&b, "node rnn %s x units=%lld%s\n", op, (long long)units,
	              gru && !reset_after ? " reset_after=0" : "");
	const char *top = "rnn";
	if (bi) {
		/* the steps read backwards too, both last outputs joined */
		rc = rc ||
		     put_line(&b, "node rnn_back lstm x units=%lld reverse=1\n",
		              (long long)units) ||
		     put_line(&b, "node rnn_both concat rnn,rnn_back\n");
		top = "rnn_both";
	}
	return dense_head(&b, rc, top, hidden, bn_epsilon, keep, out, task,
	                  spec, err, errlen);
}

int
tf_model_spec_sequence(const char *model, const struct tf_layout *l,
                       const struct tf_sequence_view *v, int64_t units,
                       int reset_after, int64_t embedding_dim,
                       const char *hidden, int task, int64_t classes,
                       double bn_epsilon, double keep, char **spec, char *err,
                       size_t errlen)
{
	if (!tfi_model_recurrent(model)) {
		snprintf(err, errlen, "'%s' is not a recurrent model", model);
		return TF_EINVAL;
	}
	if (units < 1 || embedding_dim < 1) {
		snprintf(err, errlen,
		         "--rnn-units and --embedding-dim: at least 1");
		return TF_EINVAL;
	}
	int bi = strcmp(model, "bidirectional_lstm") == 0,
	    gru = strcmp(model, "gru") == 0;
	const char *op = gru ? "gru" : "lstm";
	int64_t out = task == TF_TASK_MULTICLASS ? classes : 1;
	int64_t nids = l->categorical + l->crosses + l->sequence;
	struct tfi_buf b = {0};
	/* no x when the rows hold tokens alone */
	int rc = (l->numeric > 0 &&
	          put_line(&b, "input x %lld\n", (long long)l->numeric)) ||
	         put_line(&b, "input ids %lld int64\ninput label 1\n",
	                  (long long)nids);
	/* the steps: numbers, or tokens through an embedding */
	int64_t span = v->steps * v->step_width;
	if (v->tokens) {
		rc = rc ||
		     put_line(&b,
		              "node seq embedding ids vocab=%lld dim=%lld "
		              "combiner=concat sequence=1 begin=%lld "
		              "size=%lld\n",
		              (long long)v->vocab, (long long)embedding_dim,
		              (long long)v->first, (long long)v->steps);
	} else {
		rc = rc || put_line(&b,
		                    "node seq columns x begin=%lld size=%lld "
		                    "steps=%lld\n",
		                    (long long)v->first, (long long)span,
		                    (long long)v->steps);
	}
	rc =
	    rc || put_line(&b, "node rnn %s seq,ids units=%lld length=%lld%s\n",
	                   op, (long long)units, (long long)v->length,
	                   gru && !reset_after ? " reset_after=0" : "");
	char top[256] = "rnn";
	if (bi) {
		rc = rc || put_line(&b,
		                    "node rnn_back lstm seq,ids units=%lld "
		                    "length=%lld reverse=1\n",
		                    (long long)units, (long long)v->length);
		snprintf(top, sizeof top, "rnn,rnn_back");
	}
	/* the other numbers (a SequenceExample's context) beside it */
	int64_t lo = v->tokens ? 0 : v->first,
	        hi = v->tokens ? 0 : v->first + span;
	if (lo > 0) {
		rc = rc || put_line(&b,
		                    "node context columns x begin=0 "
		                    "size=%lld\n",
		                    (long long)lo);
		strcat(top, ",context");
	}
	if (l->numeric > hi && (v->tokens || hi > 0)) {
		rc =
		    rc || put_line(&b,
		                   "node context_after columns x begin=%lld "
		                   "size=%lld\n",
		                   (long long)hi, (long long)(l->numeric - hi));
		strcat(top, ",context_after");
	}
	if (strchr(top, ',') != NULL) {
		rc = rc || put_line(&b, "node joined concat %s\n", top);
		snprintf(top, sizeof top, "joined");
	}
	return dense_head(&b, rc, top, hidden, bn_epsilon, keep, out, task,
	                  spec, err, errlen);
}

/* Whether word w of a spec line is name n. */
static int
word_is(const char *w, size_t len, const char *n)
{
	return strlen(n) == len && memcmp(w, n, len) == 0;
}

/* One line of a user's spec made whole (tf_model_spec_custom). */
static int
custom_line(struct tfi_buf *b, const char *line, size_t len, int no,
            const char *origin, const struct tf_layout *l, int64_t out,
            int *has_label, int *has_logits, int *ids, char *err, size_t errlen)
{
	const char *w[64];
	size_t wl[64], n = 0;
	size_t end = len;
	for (size_t i = 0; i < len; i++) {
		if (line[i] == '#') {
			end = i;
			break;
		}
	}
	for (size_t i = 0; i < end && n < 64;) {
		while (i < end &&
		       (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) {
			i++;
		}
		size_t j = i;
		while (j < end && line[j] != ' ' && line[j] != '\t' &&
		       line[j] != '\r') {
			j++;
		}
		if (j > i) {
			w[n] = line + i;
			wl[n++] = j - i;
		}
		i = j;
	}
	if (n > 0 && word_is(w[0], wl[0], "input") && n >= 2) {
		int64_t want;
		const char *kind = "";
		if (word_is(w[1], wl[1], "x")) {
			want = l->numeric;
		} else if (word_is(w[1], wl[1], "label")) {
			want = 1;
			*has_label = 1;
		} else if (word_is(w[1], wl[1], "ids")) {
			/* (sparse ids: a bag's, as many as its values) */
			want = l->bag > 0
			           ? l->bag
			           : l->categorical + l->crosses + l->sequence;
			kind = " int64";
			*ids = 1;
			if (want == 0) {
				snprintf(
				    err, errlen,
				    "%s:%d: input 'ids': the data has no "
				    "categorical features (bytes columns "
				    "with a vocabulary), no sequence and no "
				    "sparse ids",
				    origin, no);
				return TF_EFORMAT;
			}
		} else {
			snprintf(
			    err, errlen,
			    "%s:%d: input '%.*s': tf-train feeds x (the "
			    "numeric features), ids (the categorical ones) "
			    "and label",
			    origin, no, (int)wl[1], w[1]);
			return TF_EFORMAT;
		}
		/* A width or a row's shape given (input x 28x28x1, an
		 * image NHWC) must hold the data's values; a dtype word is
		 * not a width ("input x float32"). */
		struct tf_shape sh = {1, {want}};
		if (n >= 3 && !word_is(w[2], wl[2], "int64") &&
		    !word_is(w[2], wl[2], "float32")) {
			if (tfi_shape_parse(w[2], wl[2], &sh) != 0 ||
			    tfi_shape_size(&sh) != want) {
				snprintf(
				    err, errlen,
				    "%s:%d: input '%.*s' is %.*s in the spec "
				    "(%lld values a row), %lld in the data "
				    "(a width comes from the schema; a shape "
				    "HxWxC must hold as many)",
				    origin, no, (int)wl[1], w[1], (int)wl[2],
				    w[2],
				    tfi_shape_parse(w[2], wl[2], &sh) == 0
				        ? (long long)tfi_shape_size(&sh)
				        : -1LL,
				    (long long)want);
				return TF_EFORMAT;
			}
		}
		char dims[96];
		tfi_shape_format(&sh, dims, sizeof dims);
		return put_line(b, "input %.*s %s%s\n", (int)wl[1], w[1], dims,
		                kind);
	}
	if (n > 0 && word_is(w[0], wl[0], "loss")) {
		snprintf(err, errlen,
		         "%s:%d: the loss is tf-train's, for the task: end the "
		         "model at a node 'logits'",
		         origin, no);
		return TF_EFORMAT;
	}
	if (n >= 2 && word_is(w[0], wl[0], "node")) {
		if (word_is(w[1], wl[1], "prob") ||
		    word_is(w[1], wl[1], "loss")) {
			snprintf(
			    err, errlen,
			    "%s:%d: node '%.*s' is tf-train's (the "
			    "prediction and the loss for the task are added "
			    "on 'logits')",
			    origin, no, (int)wl[1], w[1]);
			return TF_EFORMAT;
		}
		*has_logits |= word_is(w[1], wl[1], "logits");
		/* KEY=outputs: the model's output count. */
		int rc = 0;
		for (size_t k = 0; k < n && rc == 0; k++) {
			const char *eq = memchr(w[k], '=', wl[k]);
			size_t kl = eq ? (size_t)(eq - w[k]) : 0;
			if (k >= 3 && eq != NULL &&
			    word_is(eq + 1, wl[k] - kl - 1, "outputs")) {
				rc = put_line(b, " %.*s=%lld", (int)kl, w[k],
				              (long long)out);
			} else {
				rc = put_line(b, "%s%.*s", k ? " " : "",
				              (int)wl[k], w[k]);
			}
		}
		return rc || put_line(b, "\n");
	}
	/* Anything else (blank, comment, a line the graph parser will
	 * judge): as written, the comment dropped. */
	return put_line(b, "%.*s\n", (int)end, line);
}

int
tf_model_spec_custom(const char *text, const char *origin,
                     const struct tf_layout *l, int task, int64_t classes,
                     char **spec, int *wants_ids, char *err, size_t errlen)
{
	struct tfi_buf b = {0};
	int64_t out = task == TF_TASK_MULTICLASS ? classes : 1;
	int has_label = 0, has_logits = 0, ids = 0, no = 1, rc = TF_OK;
	for (const char *p = text; *p && rc == TF_OK; no++) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len > 400) {
			snprintf(err, errlen, "%s:%d: line too long", origin,
			         no);
			rc = TF_EFORMAT;
			break;
		}
		rc = custom_line(&b, p, len, no, origin, l, out, &has_label,
		                 &has_logits, &ids, err, errlen);
		if (rc > 0 && rc != TF_EFORMAT) {
			rc = TF_ENOMEM;
		}
		p += len + (nl != NULL);
	}
	if (rc == TF_OK && !has_logits) {
		snprintf(
		    err, errlen,
		    "%s: no node 'logits': the model's last node (with "
		    "units=outputs), which tf-train puts the prediction and "
		    "the loss on",
		    origin);
		rc = TF_EFORMAT;
	}
	if (rc == TF_OK && ((!has_label && put_line(&b, "input label 1\n")) ||
	                    put_head(&b, task))) {
		rc = TF_ENOMEM;
	}
	if (rc != TF_OK) {
		if (rc == TF_ENOMEM) {
			snprintf(err, errlen, "out of memory");
		}
		tfi_buf_free(&b);
		return rc;
	}
	if (wants_ids != NULL) {
		*wants_ids = ids;
	}
	*spec = (char *)b.data;
	return TF_OK;
}

int
tf_model_spec_wide_deep(const struct tf_layout *l, const char *hidden, int task,
                        int64_t classes, double bn_epsilon, double keep,
                        int64_t dim, char **spec, char *err, size_t errlen)
{
	struct tfi_buf b = {0};
	int64_t out = task == TF_TASK_MULTICLASS ? classes : 1;
	if (l->categorical == 0) {
		snprintf(err, errlen,
		         "wide_and_deep needs categorical features: bytes "
		         "columns with a vocabulary in the schema");
		return TF_EINVAL;
	}
	if (dim < 1) {
		snprintf(err, errlen, "--embedding-dim must be at least 1");
		return TF_EINVAL;
	}
	/* A row: numeric features in x; categorical ids, then crossed ids,
	 * in ids. */
	int rc = put_line(&b, "input x %lld\ninput ids %lld int64\n",
	                  (long long)l->numeric,
	                  (long long)(l->categorical + l->crosses)) ||
	         put_line(&b, "input label 1\n");
	/* Deep: numeric features and an embedding per categorical id. */
	rc = rc || put_line(&b,
	                    "node emb embedding ids begin=0 size=%lld "
	                    "vocab=%lld dim=%lld combiner=concat\n",
	                    (long long)l->categorical, (long long)l->ids,
	                    (long long)dim);
	rc = rc || put_line(&b, "node deep_in concat x,emb\n");
	int hr;
	rc = deep_part(&b, rc, "deep_in", "deep", hidden, bn_epsilon, keep, out,
	               &hr, err, errlen);
	if (hr != TF_OK) {
		return hr;
	}
	/* Wide: linear in the numeric columns, the categorical ids and their
	 * crosses (one weight per id and output). */
	char sum[128] = "deep,wide_num,wide_cat";
	rc = rc || put_line(&b, "node wide_num dense x units=%lld bias=0\n",
	                    (long long)out);
	rc = rc || put_line(&b,
	                    "node wide_cat embedding ids begin=0 size=%lld "
	                    "vocab=%lld dim=%lld init=zeros\n",
	                    (long long)l->categorical, (long long)l->ids,
	                    (long long)out);
	if (l->crosses > 0) {
		rc = rc ||
		     put_line(&b,
		              "node wide_cross embedding ids begin=%lld "
		              "size=%lld vocab=%lld dim=%lld "
		              "init=zeros\n",
		              (long long)l->categorical, (long long)l->crosses,
		              (long long)l->buckets, (long long)out);
		strcat(sum, ",wide_cross");
	}
	rc = rc || put_line(&b, "node logits add %s\n", sum);
	return finish_spec(&b, rc, task, spec, err, errlen);
}

int
tf_model_spec_sparse(const char *model, const struct tf_layout *l,
                     const char *hidden, int task, int64_t classes,
                     double bn_epsilon, double keep, int64_t dim, char **spec,
                     char *err, size_t errlen)
{
	int64_t out = task == TF_TASK_MULTICLASS ? classes : 1;
	int lr = strcmp(model, "lr") == 0, dnn = strcmp(model, "dnn") == 0;
	int wide = strcmp(model, "wide_and_deep") == 0;
	if (!lr && !dnn && !wide) {
		snprintf(err, errlen,
		         "--model %s does not read sparse ids: lr, dnn or "
		         "wide_and_deep do",
		         model);
		return TF_EINVAL;
	}
	if (dim < 1) {
		snprintf(err, errlen, "--embedding-dim must be at least 1");
		return TF_EINVAL;
	}
	/* A row: the ids' values in x, the ids in ids; numeric features
	 * beside them, after the values in x (num) */
	struct tfi_buf b = {0};
	int64_t nnum = l->numeric > l->bag ? l->numeric - l->bag : 0;
	int rc = put_line(&b, "input x %lld\ninput ids %lld int64\n",
	                  (long long)(l->bag + nnum), (long long)l->bag) ||
	         put_line(&b, "input label 1\n");
	if (nnum > 0) { /* (an embedding's weights: x's first columns) */
		rc = rc ||
		     put_line(&b, "node num columns x begin=%lld size=%lld\n",
		              (long long)l->bag, (long long)nnum);
	}
	const char *linear = "node %s embedding ids,x vocab=%lld dim=%lld "
	                     "init=zeros bias=1\n";
	if (lr) {
		rc =
		    rc || put_line(&b, linear, nnum > 0 ? "wide_ids" : "logits",
		                   (long long)l->bag_vocab, (long long)out);
		rc = rc ||
		     (nnum > 0 &&
		      (put_line(&b,
		                "node wide_num dense num units=%lld "
		                "bias=0\n",
		                (long long)out) ||
		       put_line(&b, "node logits add wide_ids,wide_num\n")));
		return finish_spec(&b, rc, task, spec, err, errlen);
	}
	rc =
	    rc || put_line(&b, "node bag embedding ids,x vocab=%lld dim=%lld\n",
	                   (long long)l->bag_vocab, (long long)dim);
	rc = rc || (nnum > 0 && put_line(&b, "node bag_num concat bag,num\n"));
	const char *in = nnum > 0 ? "bag_num" : "bag";
	if (!wide) {
		return dense_head(&b, rc, in, hidden, bn_epsilon, keep, out,
		                  task, spec, err, errlen);
	}
	int hr;
	rc = deep_part(&b, rc, in, "deep", hidden, bn_epsilon, keep, out, &hr,
	               err, errlen);
	if (hr != TF_OK) {
		return hr;
	}
	rc = rc || put_line(&b, linear, "wide", (long long)l->bag_vocab,
	                    (long long)out);
	if (nnum > 0) {
		rc = rc ||
		     put_line(&b, "node wide_num dense num units=%lld bias=0\n",
		              (long long)out) ||
		     put_line(&b, "node logits add deep,wide,wide_num\n");
		return finish_spec(&b, rc, task, spec, err, errlen);
	}
	rc = rc || put_line(&b, "node logits add deep,wide\n");
	return finish_spec(&b, rc, task, spec, err, errlen);
}

const char *
tfi_prediction_node(int task)
{
	return task == TF_TASK_REGRESSION ? "logits" : "prob";
}
