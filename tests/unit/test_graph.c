/* Model graphs over the built-in op plugins: the registry, spec errors,
 * and a numerical check of every op's gradients. */
#include "test.h"

static struct tf_registry *reg;

static uint64_t rs = 0x2545f4914f6cdd1dull;
static float
frand(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (float)((double)(rs >> 11) * 0x1.0p-53 * 2 - 1);
}

TEST(registry_finds_builtins)
{
	const char *ops[] = {"dense",   "relu",         "sigmoid",      "tanh",
	                     "softmax", "sigmoid_xent", "softmax_xent", "mse"};
	const char *opts[] = {"sgd",  "momentum", "adagrad", "adadelta",
	                      "adam", "rmsprop",  "ftrl"};
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		if (tf_registry_op(reg, ops[i]) == NULL) {
			FAILF("op %s not found; searched:\n%s", ops[i],
			      tf_registry_search_path(reg));
		}
	}
	for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
		if (tf_registry_optimizer(reg, opts[i]) == NULL) {
			FAILF("optimizer %s not found", opts[i]);
		}
	}
	CHECK(tf_registry_op(reg, "nope") == NULL);
	struct tf_plugin_info info;
	CHECK(tf_registry_count(reg) >= 15);
	CHECK(tf_registry_info(reg, 0, &info) == TF_OK && info.path[0] == '/');
}

TEST(abi_mismatch_is_refused)
{
	static const struct tf_plugin bad = {99,       sizeof(struct tf_plugin),
	                                     "future", "9.0",
	                                     NULL,     NULL,
	                                     NULL,     NULL,
	                                     NULL};
	struct tf_registry *r = tf_registry_new();
	CHECK_STATUS(tf_registry_add(r, &bad, "/x/future.so"), TF_EFORMAT, r);
	CHECK_CONTAINS(tf_errmsg(r), "/x/future.so: plugin ABI 99");
	CHECK_CONTAINS(tf_errmsg(r), "speaks ABI 1");
	tf_registry_free(r);
}

static int
build(struct tf_graph *g, const char *spec)
{
	int rc = tf_graph_parse(g, spec);
	return rc ? rc : tf_graph_build(g, reg, tf_device_cpu(), 1);
}

TEST(spec_errors_name_the_problem)
{
	struct {
		const char *spec, *msg;
	} cases[] = {
	    {"input x 3\nnode h frob x\nnode loss mse h,x\n",
	     "node 'h': unknown op 'frob'"},
	    {"input x 3\nnode h dense x unit=4\n", "needs units=N"},
	    {"input x 3\nnode h dense x units=4 colour=red\nnode loss mse "
	     "h,h\n",
	     "unknown attribute 'colour'"},
	    {"input x 3\nnode h dense y units=4\n",
	     "model line 2: node 'h': input 'y' is not declared above it"},
	    {"input x 3\ninput x 2\n", "model line 2: 'x' is declared twice"},

	    {"input x 3\ninput y 2\nnode loss sigmoid_xent x,y\n",
	     "logits must have width 1"},
	    {"input x 3\nnode h dense x units=four\n",
	     "units=four is not a whole number"},
	    {"input x\n", "expected 'input NAME WIDTH|HxWxC [float32|int64]'"},
	    {"input\n", "expected 'input NAME WIDTH|HxWxC [float32|int64]'"},
	    {"input x 0\n",
	     "model line 1: expected 'input NAME WIDTH|HxWxC [float32|int64]'"},
	    {"bogus line\n", "model line 1: expected 'node NAME OP"},
	    {"input x 2x\n", "model line 1: expected 'input NAME WIDTH|HxWxC"},
	    {"input x 0x3\n", "model line 1: expected 'input NAME WIDTH|HxWxC"},
	    {"input x 1x2x3x4x5\n", "model line 1: expected 'input NAME"},
	    {"input x 4096x4096x2\n", "model line 1: expected 'input NAME"},
	    {"input i 2x2 int64\n", "model line 1: expected 'input NAME"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct tf_graph *g = tf_graph_new();
		if (build(g, cases[i].spec) != TF_EINVAL) {
			FAILF("case %zu built", i);
		}
		CHECK_CONTAINS(tf_errmsg(g), cases[i].msg);
		tf_graph_free(g);
	}
}

/* A graph without a loss runs forward (an export) but cannot train. */
TEST(graph_without_loss_runs_forward_only)
{
	struct tf_graph *g = tf_graph_new();
	REQUIRE(build(g, "input x 3\nnode h relu x\n") == TF_OK);
	float x[6] = {-1, 2, -3, 4, -5, 6};
	tf_graph_feed(g, "x", x, 2);
	REQUIRE(tf_graph_forward(g, 0) == TF_OK);
	const float *h = tf_tensor_f32(tf_graph_value(g, "h"));
	CHECK(h[0] == 0 && h[1] == 2 && h[5] == 6);
	CHECK(isnan(tf_graph_loss(g)));
	CHECK(tf_graph_backward(g) == TF_EINVAL);
	CHECK_CONTAINS(tf_errmsg(g), "no node named 'loss'");
	tf_graph_free(g);
}

/* Compare analytic gradients of parameters and (with_x) input x with
 * central differences of the loss. */
static void
gradcheck_of(const char *spec, int64_t rows, int label_kind, int with_x)
{
	struct tf_graph *g = tf_graph_new();
	REQUIRE(build(g, spec) == TF_OK);
	int64_t wx = tf_graph_width(g, "x"), wy = tf_graph_width(g, "y");
	float *x = malloc(sizeof(float) * (size_t)(rows * wx));
	float *y = malloc(sizeof(float) * (size_t)(rows * wy));
	for (int64_t i = 0; i < rows * wx; i++) {
		x[i] = frand();
	}
	for (int64_t i = 0; i < rows * wy; i++) {
		y[i] = label_kind == 1   ? (frand() > 0 ? 1.0f : 0.0f)
		       : label_kind == 2 ? (float)(i % 3)
		                         : frand();
	}
	/* Sparse ids, when the graph takes them: whole numbers 0..5 and -1
	 * (no id); data, so not perturbed. */
	int64_t wi = tf_graph_width(g, "ids");
	int64_t *ids = malloc(sizeof *ids * (size_t)(rows * (wi > 0 ? wi : 1)));
	for (int64_t i = 0; i < rows * wi; i++) {
		ids[i] = (i * 5 + 3) % 7 - 1;
	}
	if (wi > 0) {
		REQUIRE(tf_graph_feed_ids(g, "ids", ids, rows) == TF_OK);
	}
	if (with_x) {
		tf_graph_want_input_grad(g, "x");
	}
	tf_graph_feed(g, "x", x, rows);
	tf_graph_feed(g, "y", y, rows);
	/* Every forward draws the same random numbers (dropout masks). */
	struct tf_rng rng0 = *tf_graph_rng(g);
	REQUIRE(tf_graph_forward(g, 1) == TF_OK);
	REQUIRE(tf_graph_backward(g) == TF_OK);
	size_t np = tf_graph_nparams(g);
	size_t nx = with_x ? (size_t)(rows * wx) : 0;
	float *w = tf_graph_params(g);
	float *an = malloc(sizeof(float) * (np + nx + 1));
	memcpy(an, tf_graph_grads(g), np * sizeof(float));
	if (with_x) {
		memcpy(an + np, tf_graph_grad(g, "x")->data,
		       sizeof(float) * nx);
	}
	int bad = 0;
	for (size_t i = 0; i < np + nx && bad < 3; i++) {
		float *v = i < np ? &w[i] : &x[i - np];
		float keep = *v, h = 1e-2f;
		*v = keep + h;
		*tf_graph_rng(g) = rng0;
		tf_graph_forward(g, 1);
		double lp = tf_graph_loss(g);
		*v = keep - h;
		*tf_graph_rng(g) = rng0;
		tf_graph_forward(g, 1);
		double lm = tf_graph_loss(g);
		*v = keep;
		double num = (lp - lm) / (2 * h);
		double tol = 2e-3 + 2e-2 * fabs(num);
		if (fabs(num - an[i]) > tol) {
			FAILF("%s: gradient %zu: analytic %.6g, numeric %.6g",
			      strchr(spec, '\n') + 1, i, an[i], num);
			bad++;
		}
	}
	free(an);
	free(x);
	free(y);
	free(ids);
	tf_graph_free(g);
}

static void
gradcheck(const char *spec, int64_t rows, int label_kind)
{
	gradcheck_of(spec, rows, label_kind, 1);
}

TEST(gradients_dense_and_activations)
{
	gradcheck("input x 5\ninput y 3\n"
	          "node h dense x units=4\nnode a relu h\n"
	          "node o dense a units=3\nnode loss mse o,y\n",
	          7, 0);
	gradcheck("input x 4\ninput y 2\n"
	          "node h dense x units=3\nnode a sigmoid h\n"
	          "node t tanh a\nnode o dense t units=2 bias=0\n"
	          "node loss mse o,y\n",
	          5, 0);
	/* A node feeding two consumers: gradients add up. */
	gradcheck("input x 3\ninput y 3\n"
	          "node h dense x units=3\nnode a tanh h\nnode b sigmoid h\n"
	          "node c dense a units=3\nnode d dense b units=3\n"
	          "node s softmax c\nnode loss mse s,y\n",
	          4, 0);
}

TEST(gradients_batchnorm_and_dropout)
{
	gradcheck("input x 4\ninput y 3\n"
	          "node h dense x units=3\nnode b batchnorm h\n"
	          "node a tanh b\nnode o dense a units=3\n"
	          "node loss mse o,y\n",
	          6, 0);
	gradcheck("input x 5\ninput y 2\n"
	          "node h dense x units=6\nnode d dropout h keep=0.7\n"
	          "node o dense d units=2\nnode loss mse o,y\n",
	          5, 0);
}

TEST(gradients_embedding_and_combine)
{
	gradcheck("input x 4\ninput y 2\ninput ids 3 int64\n"
	          "node e embedding ids vocab=6 dim=2\n"
	          "node m embedding ids vocab=6 dim=3 combiner=mean\n"
	          "node c embedding ids vocab=6 dim=2 combiner=concat\n"
	          "node h dense x units=2\nnode j concat e,m,c,h\n"
	          "node a tanh j\nnode k columns a begin=1 size=5\n"
	          "node o dense k units=2\nnode s add o,e,h\n"
	          "node loss mse s,y\n",
	          6, 0);
	gradcheck("input x 6\ninput y 1\n"
	          "node l columns x begin=2 size=3\nnode r columns x size=2\n"
	          "node j concat r,l\nnode o dense j units=1\n"
	          "node loss mse o,y\n",
	          5, 0);
}

/* An embedding bag weighted by x (data: no gradient of its own), sum
 * and mean (over the weights' sum), with a bias. */
TEST(gradients_weighted_embedding)
{
	gradcheck_of("input x 3\ninput y 2\ninput ids 3 int64\n"
	             "node e embedding ids,x vocab=6 dim=2 bias=1\n"
	             "node m embedding ids,x vocab=6 dim=2 combiner=mean\n"
	             "node a tanh m\nnode s add e,a\n"
	             "node loss mse s,y\n",
	             6, 0, 0);
	/* weights through a node: they would need a gradient */
	struct tf_graph *g = tf_graph_new();
	REQUIRE(build(g, "input x 2\ninput y 1\ninput ids 2 int64\n"
	                 "node h dense x units=2\n"
	                 "node e embedding ids,h vocab=3 dim=1\n"
	                 "node loss mse e,y\n") == TF_OK);
	float x[2] = {1, 2}, y[1] = {1};
	int64_t ids[2] = {0, 2};
	REQUIRE(tf_graph_feed_ids(g, "ids", ids, 1) == TF_OK);
	tf_graph_feed(g, "x", x, 1);
	tf_graph_feed(g, "y", y, 1);
	REQUIRE(tf_graph_forward(g, 1) == TF_OK);
	CHECK(tf_graph_backward(g) == TF_EINVAL);
	CHECK_CONTAINS(tf_errmsg(g), "its weights must be data");
	tf_graph_free(g);
}

TEST(gradients_convolution_and_pooling)
{
	gradcheck("input x 5x6x2\ninput y 3\n"
	          "node c conv2d x filters=3 kernel=3\nnode a tanh c\n"
	          "node p max_pool a size=2\nnode f flatten p\n"
	          "node o dense f units=3\nnode loss mse o,y\n",
	          3, 0);
	/* strided valid, 1x1 (the image itself), mean pooling with
	 * padding, channels joined, a mean a channel */
	gradcheck("input x 6x6x2\ninput y 2\n"
	          "node c conv2d x filters=2 kernel=3 stride=2 padding=valid\n"
	          "node d conv2d x filters=3 kernel=1 bias=0\n"
	          "node p avg_pool d size=3 stride=3\n"
	          "node q max_pool d size=2 padding=same\n"
	          "node r avg_pool q size=2 stride=1\n"
	          "node j concat c,p,r\nnode g global_avg_pool j\n"
	          "node o dense g units=2\nnode loss mse o,y\n",
	          3, 0);
	/* batch normalisation of each channel of an image */
	gradcheck("input x 4x3x2\ninput y 2\n"
	          "node c conv2d x filters=3 kernel=2 bias=0\n"
	          "node n batchnorm c\nnode a tanh n\n"
	          "node f flatten a\nnode o dense f units=2\n"
	          "node loss mse o,y\n",
	          3, 0);
}

/* Back through time, against finite differences: the last step and
 * every step, forward and reversed, stacked, bidirectional (a reverse
 * layer joined to a forward one), without a bias. */
TEST(gradients_lstm_and_gru)
{
	gradcheck("input x 4x3\ninput y 2\n"
	          "node r lstm x units=3\nnode o dense r units=2\n"
	          "node loss mse o,y\n",
	          3, 0);
	gradcheck("input x 5x2\ninput y 2\n"
	          "node r lstm x units=3 sequences=1 reverse=1\n"
	          "node q gru r units=2\nnode o dense q units=2\n"
	          "node loss mse o,y\n",
	          3, 0);
	gradcheck("input x 4x3\ninput y 3\n"
	          "node f gru x units=3 sequences=1\n"
	          "node b gru x units=2 reverse=1 bias=0 sequences=1\n"
	          "node j concat f,b\nnode k flatten j\n"
	          "node o dense k units=3\nnode loss mse o,y\n",
	          3, 0);
	/* the reset before (reset_after=0): last step, every step,
	 * reversed, stacked on an lstm, without a bias */
	gradcheck("input x 4x3\ninput y 2\n"
	          "node r gru x units=3 reset_after=0\n"
	          "node o dense r units=2\nnode loss mse o,y\n",
	          3, 0);
	gradcheck("input x 5x2\ninput y 3\n"
	          "node l lstm x units=3 sequences=1\n"
	          "node f gru l units=3 sequences=1 reset_after=0\n"
	          "node b gru x units=2 reverse=1 bias=0 sequences=1 "
	          "reset_after=0\n"
	          "node j concat f,b\nnode k flatten j\n"
	          "node o dense k units=3\nnode loss mse o,y\n",
	          3, 0);
}

/* Varying lengths (ids column 0: 2, 0, 5 and 3 steps of 4, a row of
 * none and one past T among them): padded steps pass gradients through
 * and add none, forward and reversed, last step and every step. */
TEST(gradients_recurrent_with_lengths)
{
	gradcheck("input x 4x3\ninput y 2\ninput ids 1 int64\n"
	          "node r lstm x,ids units=3 length=0\n"
	          "node b lstm x,ids units=2 length=0 reverse=1\n"
	          "node j concat r,b\nnode o dense j units=2\n"
	          "node loss mse o,y\n",
	          4, 0);
	gradcheck("input x 4x2\ninput y 2\ninput ids 2 int64\n"
	          "node r gru x,ids units=3 length=0 sequences=1\n"
	          "node b gru x,ids units=2 length=0 sequences=1 reverse=1\n"
	          "node j concat r,b\nnode k flatten j\n"
	          "node o dense k units=2\nnode loss mse o,y\n",
	          4, 0);
	gradcheck("input x 4x2\ninput y 2\ninput ids 1 int64\n"
	          "node r lstm x,ids units=3 length=0 sequences=1 reverse=1\n"
	          "node q gru r,ids units=2 length=0\n"
	          "node o dense q units=2\nnode loss mse o,y\n",
	          4, 0);
	gradcheck("input x 4x2\ninput y 2\ninput ids 2 int64\n"
	          "node r gru x,ids units=3 length=0 sequences=1 "
	          "reset_after=0\n"
	          "node b gru x,ids units=2 length=0 reverse=1 reset_after=0\n"
	          "node k flatten r\nnode j concat k,b\n"
	          "node o dense j units=2\nnode loss mse o,y\n",
	          4, 0);
}

/* The outputs of layers over rows sequences of lengths len, padded to
 * T steps of F features with junk (pad set) or zeros. */
static float *
run_padded(const char *layers, int64_t T, const int64_t *len, int64_t rows,
           const float *seq, int64_t F, int pad, int64_t *width)
{
	char spec[512];
	snprintf(spec, sizeof spec, "input x %lldx%lld\ninput ids 1 int64\n%s",
	         (long long)T, (long long)F, layers);
	struct tf_graph *g = tf_graph_new();
	if (build(g, spec) != TF_OK) {
		FAILF("%s", tf_errmsg(g));
		tf_graph_free(g);
		return NULL;
	}
	float *x = malloc(sizeof(float) * (size_t)(rows * T * F));
	for (int64_t r = 0; r < rows; r++) {
		for (int64_t i = 0; i < T * F; i++) {
			x[r * T * F + i] = i < len[r] * F ? seq[r * 9 * F + i]
			                   : pad          ? 50.0f + (float)i
			                                  : 0.0f;
		}
	}
	tf_graph_feed(g, "x", x, rows);
	tf_graph_feed_ids(g, "ids", len, rows);
	float *out = NULL;
	if (tf_graph_forward(g, 0) == TF_OK) {
		const struct tf_tensor *o = tf_graph_value(g, "o");
		*width = o->cols;
		out = malloc(sizeof(float) * (size_t)(rows * o->cols));
		memcpy(out, tf_tensor_f32(o),
		       sizeof(float) * (size_t)(rows * o->cols));
	} else {
		FAILF("%s", tf_errmsg(g));
	}
	free(x);
	tf_graph_free(g);
	return out;
}

/* The same sequences padded to 6 or to 9 steps, zeros or junk after
 * them, give the same outputs: the last step's, the reversed one's and
 * every step's (those past a row's length zero).  The parameters are
 * alike whatever T is: their shapes do not depend on it, and each graph
 * draws them from the same seed. */
TEST(recurrent_padding_changes_nothing)
{
	const int64_t rows = 4, F = 2, len[4] = {6, 1, 0, 4};
	float seq[4 * 9 * 2];
	for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
		seq[i] = frand();
	}
	static const char *const layers[] = {
	    "node f lstm x,ids units=3 length=0\n"
	    "node b lstm x,ids units=3 length=0 reverse=1\n"
	    "node o concat f,b\n",
	    "node f gru x,ids units=4 length=0\n"
	    "node b gru x,ids units=2 length=0 reverse=1\n"
	    "node o concat f,b\n",
	    "node f gru x,ids units=4 length=0 reset_after=0\n"
	    "node b gru x,ids units=2 length=0 reverse=1 reset_after=0\n"
	    "node o concat f,b\n",
	    "node o lstm x,ids units=3 length=0 sequences=1 reverse=1\n",
	};
	for (size_t k = 0; k < sizeof layers / sizeof layers[0]; k++) {
		int64_t w6 = 0, w9 = 0, wz = 0;
		float *a = run_padded(layers[k], 6, len, rows, seq, F, 1, &w6);
		float *b = run_padded(layers[k], 9, len, rows, seq, F, 1, &w9);
		float *z = run_padded(layers[k], 6, len, rows, seq, F, 0, &wz);
		REQUIRE(a != NULL && b != NULL && z != NULL);
		/* every step's: 6 or 9 steps of units, the first 6 alike */
		int64_t u = w6 == w9 ? w6 : w6 / 6;
		for (int64_t r = 0; r < rows; r++) {
			for (int64_t i = 0; i < w6; i++) {
				float va = a[r * w6 + i], vz = z[r * wz + i];
				float vb = b[r * w9 + i];
				if (fabsf(va - vb) > 1e-6f ||
				    fabsf(va - vz) > 1e-6f) {
					FAILF("spec %zu row %lld value %lld: "
					      "%g, %g, %g",
					      k, (long long)r, (long long)i, va,
					      vb, vz);
					break;
				}
				if (w6 != w9 && i / u >= len[r] && va != 0) {
					FAILF("spec %zu row %lld step %lld is "
					      "padding but %g",
					      k, (long long)r,
					      (long long)(i / u), va);
					break;
				}
			}
			for (int64_t i = w6; i < w9; i++) {
				CHECK(b[r * w9 + i] == 0.0f);
			}
		}
		free(a), free(b), free(z);
	}
}

/* Batch norm of an image: a gamma, beta and running mean and variance a
 * channel; in training each channel has mean 0 and variance 1 over the
 * batch and every place, whatever the place's own statistics. */
TEST(batchnorm_of_images_per_channel)
{
	struct tf_graph *g = tf_graph_new();
	REQUIRE(build(g, "input x 4x5x3\nnode b batchnorm x\n") == TF_OK);
	CHECK_EQ_INT(tf_graph_nstate(g), 6);
	CHECK_EQ_INT(tf_graph_width(g, "b"), 60);
	static float x[8 * 60];
	for (int i = 0; i < 8 * 60; i++) {
		/* channel ch around 10 * ch, each place its own offset */
		int ch = i % 3, place = (i / 3) % 20;
		x[i] = 10.0f * (float)ch + 0.1f * (float)place + frand();
	}
	tf_graph_feed(g, "x", x, 8);
	REQUIRE(tf_graph_forward(g, 1) == TF_OK);
	const float *b = tf_graph_value(g, "b")->data;
	for (int ch = 0; ch < 3; ch++) {
		double m = 0, v = 0;
		for (int i = ch; i < 8 * 60; i += 3) {
			m += b[i];
		}
		m /= 8 * 20;
		for (int i = ch; i < 8 * 60; i += 3) {
			v += (b[i] - m) * (b[i] - m);
		}
		CHECK(fabs(m) < 1e-5);
		CHECK(fabs(v / (8 * 20) - 1) < 1e-2);
	}
	/* a place is not normalised alone: channel 0 at place 0 keeps its
	 * offset (-1.9 before, about -2.3 after) from place 19 */
	double first = 0, last = 0;
	for (int r = 0; r < 8; r++) {
		first += b[r * 60];
		last += b[r * 60 + 19 * 3];
	}
	CHECK((first - last) / 8 < -1.5);
	tf_graph_free(g);
}

/* Convolution and pooling by hand, TensorFlow's way: a 3x3 kernel of
 * ones with SAME padding sums each place's neighbours; VALID keeps the
 * whole windows; max_pool with SAME pads at the end; concat of images
 * interleaves their channels. */
TEST(convolution_and_pooling_by_hand)
{
	struct tf_graph *g = tf_graph_new();
	REQUIRE(build(g, "input x 3x4x1\n"
	                 "node s conv2d x filters=1 kernel=3 bias=0\n"
	                 "node v conv2d x filters=1 kernel=3 padding=valid "
	                 "bias=0\n"
	                 "node m max_pool x size=2 padding=same\n"
	                 "node j concat m,m\n") == TF_OK);
	float *w = tf_graph_params(g);
	for (int i = 0; i < 18; i++) {
		w[i] = 1;
	}
	/* 1  2  3  4
	 * 5  6  7  8
	 * 9 10 11 12 */
	float x[12];
	for (int i = 0; i < 12; i++) {
		x[i] = (float)(i + 1);
	}
	tf_graph_feed(g, "x", x, 1);
	REQUIRE(tf_graph_forward(g, 0) == TF_OK);
	const float *s = tf_tensor_f32(tf_graph_value(g, "s"));
	CHECK(s[0] == 1 + 2 + 5 + 6);
	CHECK(s[5] == 1 + 2 + 3 + 5 + 6 + 7 + 9 + 10 + 11);
	CHECK(s[11] == 7 + 8 + 11 + 12);
	const float *v = tf_tensor_f32(tf_graph_value(g, "v"));
	CHECK_EQ_INT(tf_graph_width(g, "v"), 2);
	CHECK(v[0] == 54 && v[1] == 63);
	/* 3x4 by 2x2 windows, SAME: 2x2 outputs, the last row alone */
	const float *m = tf_tensor_f32(tf_graph_value(g, "m"));
	CHECK_EQ_INT(tf_graph_width(g, "m"), 4);
	CHECK(m[0] == 6 && m[1] == 8 && m[2] == 10 && m[3] == 12);
	const float *j = tf_tensor_f32(tf_graph_value(g, "j"));
	CHECK(j[0] == 6 && j[1] == 6 && j[2] == 8 && j[7] == 12);
	tf_graph_free(g);
	/* shapes that do not fit name the node and the shapes */
	g = tf_graph_new();
	CHECK(build(g, "input x 4x4x1\nnode c conv2d x filters=2 kernel=5 "
	               "padding=valid\n") == TF_EINVAL);
	CHECK_CONTAINS(tf_errmsg(g), "'c'");
	CHECK_CONTAINS(tf_errmsg(g), "5x5 window does not fit its 4x4x1");
	tf_graph_free(g);
	g = tf_graph_new();
	CHECK(build(g, "input x 16\nnode p max_pool x\n") == TF_EINVAL);
	CHECK_CONTAINS(tf_errmsg(g), "needs an image input");
	tf_graph_free(g);
}

/* Lookups by hand: sum, mean over the ids present, concat with zeros
 * for a missing id. */
TEST(embedding_lookups)
{
	struct tf_graph *g = tf_graph_new();
	REQUIRE(build(g,
	              "input ids 3 int64\n"
	              "node s embedding ids vocab=3 dim=2 size=2\n"
	              "node m embedding ids vocab=3 dim=2 combiner=mean "
	              "size=2\n"
	              "node c embedding ids vocab=3 dim=2 combiner=concat "
	              "begin=0 size=2\n"
	              "node t embedding ids vocab=3 dim=2 begin=2\n") == TF_OK);
	/* All four tables: row i = (i + 1, 10 (i + 1)). */
	float *w = tf_graph_params(g);
	for (int t = 0; t < 4; t++) {
		for (int i = 0; i < 3; i++) {
			w[t * 6 + i * 2] = (float)(i + 1);
			w[t * 6 + i * 2 + 1] = 10.0f * (float)(i + 1);
		}
	}
	/* Three rows of three ids; s, m and c read the first two, t the
	 * last.  An id past the table (2^40 + 1) is no id. */
	int64_t ids[9] = {0, 2, 1, 1, -1, 0, -1, ((int64_t)1 << 40) + 1, 2};
	CHECK(tf_graph_feed(g, "ids", (const float *)ids, 3) == TF_EINVAL);
	CHECK_CONTAINS(tf_errmsg(g), "takes int64, not float32");
	REQUIRE(tf_graph_feed_ids(g, "ids", ids, 3) == TF_OK);
	REQUIRE(tf_graph_forward(g, 0) == TF_OK);
	const float *s = tf_tensor_f32(tf_graph_value(g, "s"));
	const float *m = tf_tensor_f32(tf_graph_value(g, "m"));
	const float *c = tf_tensor_f32(tf_graph_value(g, "c"));
	const float *t = tf_tensor_f32(tf_graph_value(g, "t"));
	float ws[6] = {4, 40, 2, 20, 0, 0}, wm[6] = {2, 20, 2, 20, 0, 0};
	float wc[12] = {1, 10, 3, 30, 2, 20, 0, 0, 0, 0, 0, 0};
	float wt[6] = {2, 20, 1, 10, 3, 30};
	CHECK_MEM(s, ws, sizeof ws);
	CHECK_MEM(m, wm, sizeof wm);
	CHECK_MEM(c, wc, sizeof wc);
	CHECK_MEM(t, wt, sizeof wt);
	CHECK_EQ_INT(tf_graph_width(g, "c"), 4);
	CHECK_EQ_INT(tf_graph_input_dtype(g, "ids"), TF_INT64);
	CHECK_EQ_INT(tf_graph_ids_width(g), 3);
	CHECK_CONTAINS(tf_graph_spec(g), "input ids 3 int64\n");
	tf_graph_free(g);
	/* Ids reach only ops that take them. */
	g = tf_graph_new();
	CHECK(build(g, "input ids 2 int64\nnode h dense ids units=2\n") ==
	      TF_EINVAL);
	CHECK_CONTAINS(tf_errmsg(g), "input 'ids' holds int64 ids");
	tf_graph_free(g);
	g = tf_graph_new();
	CHECK(build(g, "input x 2\nnode e embedding x vocab=3 dim=2\n") ==
	      TF_EINVAL);
	CHECK_CONTAINS(tf_errmsg(g), "must hold int64 ids");
	tf_graph_free(g);
	g = tf_graph_new();
	CHECK(build(g, "input ids 2 int64\n"
	               "node e embedding ids vocab=3 dim=2 begin=1 size=2\n") ==
	      TF_EINVAL);
	CHECK_CONTAINS(tf_errmsg(g), "do not fit in 2 ids");
	tf_graph_free(g);
	/* Weighted: sum and mean by the weights (TensorFlow's
	 * embedding_lookup_sparse), a bias, and what they refuse. */
	g = tf_graph_new();
	REQUIRE(build(g, "input x 3\ninput ids 3 int64\n"
	                 "node s embedding ids,x vocab=3 dim=2 bias=1\n"
	                 "node m embedding ids,x vocab=3 dim=2 "
	                 "combiner=mean\n") == TF_OK);
	w = tf_graph_params(g);
	for (int i = 0; i < 3; i++) { /* row i = (i + 1, 10 (i + 1)) */
		w[i * 2] = w[8 + i * 2] = (float)(i + 1);
		w[i * 2 + 1] = w[8 + i * 2 + 1] = 10.0f * (float)(i + 1);
	}
	w[6] = 0.5f; /* s's bias */
	w[7] = -1.0f;
	int64_t wid[6] = {0, 2, -1, 1, 1, 7};
	float wx[6] = {2, 0.5f, 9, 1, 3, 5};
	REQUIRE(tf_graph_feed_ids(g, "ids", wid, 2) == TF_OK);
	tf_graph_feed(g, "x", wx, 2);
	REQUIRE(tf_graph_forward(g, 0) == TF_OK);
	s = tf_tensor_f32(tf_graph_value(g, "s"));
	m = tf_tensor_f32(tf_graph_value(g, "m"));
	/* row 0: 2 (1, 10) + 0.5 (3, 30) = (3.5, 35), over 2.5 = (1.4, 14);
	 * row 1: 4 (2, 20) = (8, 80), over 4 = (2, 20) */
	float vs[4] = {4.0f, 34.0f, 8.5f, 79.0f}, vm[4] = {1.4f, 14, 2, 20};
	for (int i = 0; i < 4; i++) {
		CHECK(fabsf(s[i] - vs[i]) < 1e-5f &&
		      fabsf(m[i] - vm[i]) < 1e-5f);
	}
	tf_graph_free(g);
	g = tf_graph_new();
	CHECK(build(g, "input x 2\ninput ids 3 int64\n"
	               "node e embedding ids,x vocab=3 dim=2\n") == TF_EINVAL);
	CHECK_CONTAINS(tf_errmsg(g), "its weights must be 3 floats");
	tf_graph_free(g);
	g = tf_graph_new();
	CHECK(build(g, "input x 2\ninput ids 2 int64\n"
	               "node e embedding ids,x vocab=3 dim=2 "
	               "combiner=concat\n") == TF_EINVAL);
	CHECK_CONTAINS(tf_errmsg(g), "weights need combiner=sum or mean");
	tf_graph_free(g);
	g = tf_graph_new();
	CHECK(tf_graph_parse(g, "input ids 2 int32\n") == TF_EINVAL);
	CHECK_CONTAINS(tf_errmsg(g), "[float32|int64]");
	tf_graph_free(g);
}

TEST(dropout_and_batchnorm_behaviour)
{
	struct tf_graph *g = tf_graph_new();
	REQUIRE(build(g, "input x 100\ninput y 100\n"
	                 "node d dropout x keep=0.8\nnode b batchnorm x\n"
	                 "node loss mse d,y\n") == TF_OK);
	static float x[50 * 100], y[50 * 100];
	for (int i = 0; i < 50 * 100; i++) {
		x[i] = 1.0f + (float)(i % 100) * 0.01f;
	}
	tf_graph_feed(g, "x", x, 50);
	tf_graph_feed(g, "y", y, 50);
	REQUIRE(tf_graph_forward(g, 1) == TF_OK);
	const float *d = tf_graph_value(g, "d")->data;
	int zeros = 0;
	double sum = 0, sumx = 0;
	for (int i = 0; i < 5000; i++) {
		zeros += d[i] == 0;
		sum += d[i];
		sumx += x[i];
		if (d[i] != 0 && fabsf(d[i] - x[i] / 0.8f) > 1e-5f) {
			FAILF("kept value %g is not x / keep", d[i]);
			break;
		}
	}
	CHECK(zeros > 850 && zeros < 1150); /* 1000 expected */
	CHECK(fabs(sum / sumx - 1) < 0.05);
	/* Training batch norm: each column has mean 0, variance ~1. */
	const float *b = tf_graph_value(g, "b")->data;
	double m = 0, v = 0;
	for (int r = 0; r < 50; r++) {
		m += b[r * 100 + 7];
	}
	m /= 50;
	for (int r = 0; r < 50; r++) {
		v += (b[r * 100 + 7] - m) * (b[r * 100 + 7] - m);
	}
	CHECK(fabs(m) < 1e-5);
	/* Column 7 is constant, so its variance is 0 and it stays 0. */
	CHECK(v / 50 < 1e-6);
	/* Not training: dropout is the identity, batch norm uses the
	 * running averages (moved 1% of the way from 0 and 1). */
	REQUIRE(tf_graph_forward(g, 0) == TF_OK);
	d = tf_graph_value(g, "d")->data;
	CHECK(memcmp(d, x, sizeof x) == 0);
	b = tf_graph_value(g, "b")->data;
	float mm = 0.01f * x[7], mv = 0.99f * 1.0f + 0.01f * 0.0f;
	CHECK(fabsf(b[7] - (x[7] - mm) / sqrtf(mv + 0.001f)) < 1e-4f);
	CHECK_EQ_INT(tf_graph_nstate(g), 200);
	tf_graph_free(g);
}

TEST(gradients_losses)
{
	gradcheck("input x 6\ninput y 1\nnode o dense x units=1\n"
	          "node loss sigmoid_xent o,y\n",
	          8, 1);
	gradcheck("input x 6\ninput y 1\nnode o dense x units=3\n"
	          "node loss softmax_xent o,y\n",
	          9, 2);
}

TEST(loss_values)
{
	/* softmax_xent of uniform logits is log(K). */
	struct tf_graph *g = tf_graph_new();
	REQUIRE(build(g, "input x 4\ninput y 1\n"
	                 "node loss softmax_xent x,y\n") == TF_OK);
	float x[8] = {0}, y[2] = {1, 3};
	tf_graph_feed(g, "x", x, 2);
	tf_graph_feed(g, "y", y, 2);
	CHECK_STATUS(tf_graph_forward(g, 0), TF_OK, g);
	CHECK(fabs(tf_graph_loss(g) - log(4.0)) < 1e-6);
	y[1] = 4; /* not a class */
	CHECK_STATUS(tf_graph_forward(g, 0), TF_EINVAL, g);
	CHECK_CONTAINS(tf_errmsg(g), "label 4 is not a class from 0 to 3");
	tf_graph_free(g);
	/* sigmoid_xent at logit 0 is log 2, whatever the label. */
	g = tf_graph_new();
	REQUIRE(build(g, "input x 1\ninput y 1\n"
	                 "node loss sigmoid_xent x,y\n") == TF_OK);
	float z[2] = {0, 0}, l[2] = {0, 1};
	tf_graph_feed(g, "x", z, 2);
	tf_graph_feed(g, "y", l, 2);
	CHECK_STATUS(tf_graph_forward(g, 0), TF_OK, g);
	CHECK(fabs(tf_graph_loss(g) - log(2.0)) < 1e-6);
	tf_graph_free(g);
}

TEST(seeded_init_and_spec)
{
	const char *spec = "input x 3   # features\ninput y 2\n"
	                   "node h dense x units=2\nnode loss mse h,y\n";
	struct tf_graph *a = tf_graph_new(), *b = tf_graph_new();
	CHECK_STATUS(build(a, spec), TF_OK, a);
	REQUIRE(build(b, spec) == TF_OK);
	CHECK_EQ_INT(tf_graph_nparams(a), 3 * 2 + 2);
	CHECK(memcmp(tf_graph_params(a), tf_graph_params(b),
	             tf_graph_nparams(a) * sizeof(float)) == 0);
	/* Glorot uniform within sqrt(6 / (3 + 2)), bias zero. */
	float lim = sqrtf(6.0f / 5.0f);
	for (int i = 0; i < 6; i++) {
		CHECK(fabsf(tf_graph_params(a)[i]) <= lim);
	}
	CHECK(tf_graph_params(a)[6] == 0 && tf_graph_params(a)[7] == 0);
	CHECK(strcmp(tf_graph_spec(a),
	             "input x 3\ninput y 2\nnode h dense x units=2\n"
	             "node loss mse h,y\nloss loss\n") == 0);
	tf_graph_free(a);
	tf_graph_free(b);
}

/* Shapes: an input's rows given as HxWxC (NHWC) hold their product of
 * values; elementwise ops keep the shape, dense rows are flat; the spec
 * writes the shape back. */
TEST(shapes_in_the_graph)
{
	const char *spec = "input x 2x3x2\ninput y 1\nnode a relu x\n"
	                   "node d dropout a keep=0.5\nnode h dense d units=1\n"
	                   "node loss mse h,y\n";
	struct tf_graph *g = tf_graph_new();
	CHECK_STATUS(build(g, spec), TF_OK, g);
	struct tf_shape s;
	CHECK_EQ_INT(tf_graph_width(g, "x"), 12);
	CHECK_EQ_INT(tf_graph_shape(g, "x", &s), 3);
	CHECK(s.dim[0] == 2 && s.dim[1] == 3 && s.dim[2] == 2);
	CHECK_EQ_INT(tf_graph_shape(g, "a", &s), 3);
	CHECK_EQ_INT(tf_graph_shape(g, "d", &s), 3);
	CHECK(s.dim[0] == 2 && s.dim[1] == 3 && s.dim[2] == 2);
	CHECK_EQ_INT(tf_graph_shape(g, "h", &s), 1);
	CHECK(s.dim[0] == 1);
	CHECK_EQ_INT(tf_graph_shape(g, "nope", &s), 0);
	CHECK_EQ_INT(tf_graph_nparams(g), 12 + 1);
	CHECK(strncmp(tf_graph_spec(g), "input x 2x3x2\ninput y 1\n", 24) == 0);
	/* the spec written back builds the same graph */
	struct tf_graph *g2 = tf_graph_new();
	CHECK_STATUS(build(g2, tf_graph_spec(g)), TF_OK, g2);
	CHECK(strcmp(tf_graph_spec(g), tf_graph_spec(g2)) == 0);
	tf_graph_free(g);
	tf_graph_free(g2);
}

int
main(void)
{
	reg = tf_registry_new();
	if (tf_registry_load(reg) != TF_OK) {
		printf("# %s\n", tf_errmsg(reg));
	}
	RUN(registry_finds_builtins);
	RUN(abi_mismatch_is_refused);
	RUN(spec_errors_name_the_problem);
	RUN(graph_without_loss_runs_forward_only);
	RUN(gradients_embedding_and_combine);
	RUN(embedding_lookups);
	RUN(gradients_dense_and_activations);
	RUN(gradients_batchnorm_and_dropout);
	RUN(gradients_convolution_and_pooling);
	RUN(gradients_lstm_and_gru);
	RUN(gradients_recurrent_with_lengths);
	RUN(recurrent_padding_changes_nothing);
	RUN(convolution_and_pooling_by_hand);
	RUN(batchnorm_of_images_per_channel);
	RUN(dropout_and_batchnorm_behaviour);
	RUN(gradients_losses);
	RUN(loss_values);
	RUN(seeded_init_and_spec);
	RUN(shapes_in_the_graph);
	/* last: it draws from the generator the others were tuned on */
	RUN(gradients_weighted_embedding);
	tf_registry_free(reg);
	DONE();
}
