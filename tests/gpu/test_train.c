/*
 * test_train.c - whole training runs on the CPU and on the GPU, compared:
 * the same dnn (batch norm and dropout on, so the masks and the running
 * averages are checked too), the same seed and batches, fp32 math, for
 * every optimizer plugin; the loss of every step and the final weights
 * must agree within a stated tolerance.  Then a model trained on the GPU
 * predicts on the CPU as it did on the GPU: parameters are the same
 * floats whichever device holds them, so checkpoints and exports do not
 * depend on the device.  TAP; skips when no GPU is present.
 *	build/tests/gpu/test_train        (make check-gpu)
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "tf/tf.h"

static struct tf_registry *reg;
static struct tf_device *gpu;

enum { ROWS = 4096, WIDTH = 16, BATCH = 256, STEPS = 60 };
static float x[ROWS * WIDTH], y[ROWS];

/* A separable problem with noise: label = [w.x + noise > 0]. */
static void
make_data(void)
{
	unsigned long long s = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < ROWS * WIDTH; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		x[i] = (float)((double)(s >> 11) * 0x1.0p-53 * 2.0 - 1.0);
	}
	for (size_t r = 0; r < ROWS; r++) {
		double z = 0;
		for (size_t c = 0; c < WIDTH; c++) {
			z += x[r * WIDTH + c] * (c % 3 == 0 ? 1.0 : -0.5);
		}
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		z += ((double)(s >> 11) * 0x1.0p-53 - 0.5) * 0.5;
		y[r] = z > 0 ? 1.0f : 0.0f;
	}
}

struct run {
	struct tf_graph *g;
	struct tf_optim *o;
	double loss[STEPS];
};

/* The dnn's spec with its hidden dense layers' biases off (bias=0, as
 * the cnn's convolutions under batch norm have): batch norm follows each
 * and subtracts its mean, so such a bias has no gradient but rounding,
 * and adam (steps of about lr whatever a gradient's size) walks it by
 * the sign of that rounding, which differs between the devices, taking
 * the moving means with it.  NULL when out of memory. */
static char *
without_biases_under_batch_norm(const char *spec)
{
	size_t len = strlen(spec), extra = 0;
	for (const char *p = spec; (p = strstr(p, " dense ")) != NULL; p++) {
		extra += sizeof " bias=0";
	}
	char *out = malloc(len + extra + 1), *o = out;
	if (out == NULL) {
		return NULL;
	}
	for (const char *p = spec; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		memcpy(o, p, n);
		o += n;
		const char *q = p + 6;
		while (strncmp(p, "node h", 6) == 0 && *q >= '0' && *q <= '9') {
			q++;
		}
		if (q > p + 6 && strncmp(q, " dense ", 7) == 0) {
			memcpy(o, " bias=0", 7);
			o += 7;
		}
		if (nl) {
			*o++ = '\n';
		}
		p += n + (nl != NULL);
	}
	*o = '\0';
	return out;
}

static int
train(struct run *r, struct tf_device *d, const char *optimizer)
{
	char *spec = NULL, err[256];
	memset(r, 0, sizeof *r);
	if (tf_model_spec("dnn", "64 32", WIDTH, TF_TASK_BINARY, 2, 0.001, 0.9,
	                  &spec, err, sizeof err) != TF_OK) {
		FAILF("spec: %s", err);
		return -1;
	}
	char *nb = without_biases_under_batch_norm(spec);
	free(spec);
	if ((spec = nb) == NULL) {
		FAILF("spec: out of memory");
		return -1;
	}
	r->g = tf_graph_new();
	r->o = tf_optim_new();
	struct tf_hparams *h = tf_hparams_new();
	int rc = tf_graph_parse(r->g, spec);
	rc = rc ? rc : tf_graph_build(r->g, reg, d, 7);
	free(spec);
	if (rc != TF_OK) {
		FAILF("%s: build: %s", tf_device_name(d), tf_errmsg(r->g));
		tf_hparams_free(h);
		return -1;
	}
	const struct tf_optimizer *opt = tf_registry_optimizer(reg, optimizer);
	if (opt == NULL ||
	    tf_optim_place(r->o, d,
	                   tf_registry_optimizer_update(reg, optimizer)) !=
	        TF_OK ||
	    tf_optim_init(r->o, opt, h, tf_graph_nparams(r->g)) != TF_OK) {
		FAILF("%s: optimizer %s: %s", tf_device_name(d), optimizer,
		      opt ? tf_errmsg(r->o) : "not found");
		tf_hparams_free(h);
		return -1;
	}
	tf_hparams_free(h);
	for (int s = 0; s < STEPS; s++) {
		size_t at = (size_t)(s % (ROWS / BATCH)) * BATCH;
		/* the next batch uploaded while this one computes, as
		 * tf-train does (on the CPU: nothing) */
		size_t nx = (size_t)((s + 1) % (ROWS / BATCH)) * BATCH;
		struct tf_batch next = {x + nx * WIDTH, NULL,  y + nx, BATCH,
		                        BATCH,          WIDTH, 0};
		if (s % 3 != 2 && tf_graph_stage_batch(r->g, &next) != TF_OK) {
			FAILF("%s: stage: %s", tf_device_name(d),
			      tf_errmsg(r->g));
			return -1;
		}
		if (tf_graph_feed(r->g, "x", x + at * WIDTH, BATCH) != TF_OK ||
		    tf_graph_feed(r->g, "label", y + at, BATCH) != TF_OK ||
		    tf_graph_forward(r->g, 1) != TF_OK ||
		    tf_graph_backward(r->g) != TF_OK) {
			FAILF("%s: step %d: %s", tf_device_name(d), s,
			      tf_errmsg(r->g));
			return -1;
		}
		r->loss[s] = tf_graph_loss(r->g);
		if (tf_optim_step(r->o, tf_graph_params(r->g),
		                  tf_graph_grads(r->g), 0.01f) != TF_OK) {
			FAILF("%s: step %d: %s", tf_device_name(d), s,
			      tf_errmsg(r->o));
			return -1;
		}
	}
	return 0;
}

static void
run_free(struct run *r)
{
	tf_graph_free(r->g);
	tf_optim_free(r->o);
}

/* Worst |a - b| / (atol + rtol |a|) over n values: <= 1 passes. */
static double
worst(const float *a, const float *b, size_t n, double rtol, double atol,
      size_t *at)
{
	double w = 0;
	for (size_t i = 0; i < n; i++) {
		double e =
		    fabs((double)a[i] - b[i]) / (atol + rtol * fabs(a[i]));
		if (!(e <= w)) {
			w = e;
			*at = i;
		}
	}
	return w;
}

static void
every_optimizer_trains_alike(void)
{
	const char *opts[] = {"sgd",      "momentum", "adagrad", "rmsprop",
	                      "adadelta", "adam",     "ftrl"};
	for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
		struct run c, g;
		if (train(&c, tf_device_cpu(), opts[k]) != 0 ||
		    train(&g, gpu, opts[k]) != 0) {
			run_free(&c), run_free(&g);
			continue;
		}
		/* Losses: the GPU's exp/log and fused multiply-adds, and
		 * cuBLAS's order of sums, a few ulps a step, compounded. */
		for (int s = 0; s < STEPS; s++) {
			if (!(fabs(c.loss[s] - g.loss[s]) <=
			      1e-4 + 1e-3 * fabs(c.loss[s]))) {
				FAILF("%s: step %d loss cpu %.9g gpu %.9g",
				      opts[k], s, c.loss[s], g.loss[s]);
				break;
			}
		}
		/* the GPU's blocks are device memory: downloaded to compare */
		size_t n = tf_graph_nparams(c.g), at = 0;
		size_t ns = tf_graph_nstate(c.g);
		float *gp = malloc((n + 1) * sizeof *gp);
		float *gs = malloc((ns + 1) * sizeof *gs);
		if (gp == NULL || gs == NULL) {
			FAILF("%s: out of memory", opts[k]);
			free(gp), free(gs);
			run_free(&c), run_free(&g);
			continue;
		}
		tf_device_download(gpu, gp, tf_graph_params(g.g),
		                   n * sizeof *gp);
		tf_device_download(gpu, gs, tf_graph_state(g.g),
		                   ns * sizeof *gs);
		double w = worst(tf_graph_params(c.g), gp, n, 1e-3, 1e-4, &at);
		printf("# %-9s loss %.6f (cpu) %.6f (gpu) after %d steps; "
		       "weights within %.3g of the tolerance\n",
		       opts[k], c.loss[STEPS - 1], g.loss[STEPS - 1], STEPS, w);
		if (w > 1) {
			FAILF("%s: weight %zu cpu %.9g gpu %.9g", opts[k], at,
			      tf_graph_params(c.g)[at], gp[at]);
		}
		if (worst(tf_graph_state(c.g), gs, ns, 1e-3, 1e-4, &at) > 1) {
			FAILF("%s: batch-norm average %zu cpu %.9g gpu %.9g",
			      opts[k], at, tf_graph_state(c.g)[at], gs[at]);
		}
		free(gp), free(gs);
		run_free(&c), run_free(&g);
	}
}

/* Trained on the GPU, the same floats predict on the CPU. */
static void
gpu_weights_predict_on_the_cpu(void)
{
	struct run g;
	if (train(&g, gpu, "adam") != 0) {
		run_free(&g);
		return;
	}
	struct tf_graph *c = tf_graph_new();
	const char *spec = tf_graph_spec(g.g);
	if (tf_graph_parse(c, spec) != TF_OK ||
	    tf_graph_build(c, reg, tf_device_cpu(), 0) != TF_OK) {
		FAILF("cpu build: %s", tf_errmsg(c));
		goto out;
	}
	tf_device_download(gpu, tf_graph_params(c), tf_graph_params(g.g),
	                   tf_graph_nparams(c) * sizeof(float));
	tf_device_download(gpu, tf_graph_state(c), tf_graph_state(g.g),
	                   tf_graph_nstate(c) * sizeof(float));
	float pg[BATCH], pc[BATCH];
	struct tf_graph *gs[2] = {g.g, c};
	float *out[2] = {pg, pc};
	for (int k = 0; k < 2; k++) {
		if (tf_graph_feed(gs[k], "x", x, BATCH) != TF_OK ||
		    tf_graph_feed(gs[k], "label", y, BATCH) != TF_OK ||
		    tf_graph_forward(gs[k], 0) != TF_OK) {
			FAILF("predict: %s", tf_errmsg(gs[k]));
			goto out;
		}
		const float *prob = tf_graph_fetch(gs[k], "prob");
		if (prob == NULL) {
			FAILF("predict: %s", tf_errmsg(gs[k]));
			goto out;
		}
		memcpy(out[k], prob, sizeof pg);
	}
	size_t at = 0;
	if (worst(pc, pg, BATCH, 1e-4, 1e-5, &at) > 1) {
		FAILF("row %zu: gpu %.9g cpu %.9g", at, pg[at], pc[at]);
	}
out:
	tf_graph_free(c);
	run_free(&g);
}

int
main(void)
{
	char msg[400], exe[PATH_MAX], dir[PATH_MAX + 32];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
	reg = tf_registry_new();
	if (len > 0) {
		exe[len] = '\0';
		*strrchr(exe, '/') = '\0';
		snprintf(dir, sizeof dir, "%s/../../lib/tfkit/plugins", exe);
		tf_registry_add_dir(reg, dir);
	}
	int rc = tf_device_open("cuda", "fp32", &gpu, msg, sizeof msg);
	if (rc == TF_EUNAVAIL) {
		printf("1..0 # SKIP %s\n", msg);
		tf_registry_free(reg);
		return 0;
	}
	if (rc != TF_OK || tf_registry_load(reg) != TF_OK) {
		printf("Bail out! %s\n", rc != TF_OK ? msg : tf_errmsg(reg));
		return 1;
	}
	printf("# %s\n", tf_device_name(gpu));
	make_data();
	RUN(every_optimizer_trains_alike);
	RUN(gpu_weights_predict_on_the_cpu);
	if (tf_device_fallbacks(gpu)[0] != '\0') {
		printf("# ran on the CPU: %s\n", tf_device_fallbacks(gpu));
	}
	printf("1..%d\n", ntests);
	tf_registry_free(reg);
	return nfailed ? 1 : 0;
}
