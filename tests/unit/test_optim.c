/* Optimizer plugins: each update rule against an independent double
 * precision reference of TensorFlow's formula, and each trains the linear
 * toy (share/data/linear_toy.csv) to w = 2, b = 10. */
#include "test.h"

static struct tf_registry *reg;

#define N 4
static const float G[3][N] = {
    {0.5f, -1.0f, 0.25f, 2.0f},
    {-0.3f, 0.8f, 0.1f, -1.5f},
    {0.2f, 0.2f, -0.6f, 0.4f},
};
static const float W0[N] = {1.0f, -2.0f, 0.5f, 0.0f};

/* Run 3 steps of an optimizer from W0 with gradients G. */
static void
run3(const char *name, const char *hp, float lr, float *w)
{
	struct tf_hparams *h = tf_hparams_new();
	if (hp != NULL) {
		char buf[128];
		snprintf(buf, sizeof buf, "%s", hp);
		for (char *p = strtok(buf, " "); p; p = strtok(NULL, " ")) {
			CHECK_STATUS(tf_hparams_parse(h, p), TF_OK, h);
		}
	}
	struct tf_optim *o = tf_optim_new();
	const struct tf_optimizer *opt = tf_registry_optimizer(reg, name);
	REQUIRE(opt != NULL);
	CHECK_STATUS(tf_optim_init(o, opt, h, N), TF_OK, o);
	memcpy(w, W0, sizeof W0);
	for (int s = 0; s < 3; s++) {
		tf_optim_step(o, w, G[s], lr);
	}
	CHECK_EQ_INT(tf_optim_steps(o), 3);
	tf_optim_free(o);
	tf_hparams_free(h);
}

static void
close_to(const char *name, const float *got, const double *want)
{
	for (int i = 0; i < N; i++) {
		if (fabs(got[i] - want[i]) > 1e-5 * (1 + fabs(want[i]))) {
			FAILF("%s: w[%d] = %.8g, reference %.8g", name, i,
			      got[i], want[i]);
		}
	}
}

TEST(update_rules)
{
	float w[N];
	double r[N], a[N], b[N], c[N];
	/* sgd */
	for (int i = 0; i < N; i++) {
		r[i] = W0[i];
		for (int s = 0; s < 3; s++) {
			r[i] -= 0.1 * G[s][i];
		}
	}
	run3("sgd", NULL, 0.1f, w);
	close_to("sgd", w, r);
	/* momentum, plain and Nesterov */
	for (int nest = 0; nest < 2; nest++) {
		for (int i = 0; i < N; i++) {
			r[i] = W0[i];
			a[i] = 0;
			for (int s = 0; s < 3; s++) {
				a[i] = 0.9 * a[i] + G[s][i];
				r[i] -= nest ? 0.1 * (G[s][i] + 0.9 * a[i])
				             : 0.1 * a[i];
			}
		}
		run3("momentum", nest ? "nesterov=1" : NULL, 0.1f, w);
		close_to(nest ? "nesterov" : "momentum", w, r);
	}
	/* adagrad */
	for (int i = 0; i < N; i++) {
		r[i] = W0[i];
		a[i] = 0.1;
		for (int s = 0; s < 3; s++) {
			a[i] += (double)G[s][i] * G[s][i];
			r[i] -= 0.5 * G[s][i] / sqrt(a[i]);
		}
	}
	run3("adagrad", NULL, 0.5f, w);
	close_to("adagrad", w, r);
	/* adadelta */
	for (int i = 0; i < N; i++) {
		r[i] = W0[i];
		a[i] = b[i] = 0;
		for (int s = 0; s < 3; s++) {
			double g = G[s][i];
			a[i] = 0.95 * a[i] + 0.05 * g * g;
			double u = sqrt(b[i] + 1e-8) / sqrt(a[i] + 1e-8) * g;
			b[i] = 0.95 * b[i] + 0.05 * u * u;
			r[i] -= 1.0 * u;
		}
	}
	run3("adadelta", NULL, 1.0f, w);
	close_to("adadelta", w, r);
	/* adam */
	for (int i = 0; i < N; i++) {
		r[i] = W0[i];
		a[i] = b[i] = 0;
		for (int s = 1; s <= 3; s++) {
			double g = G[s - 1][i];
			double lr =
			    0.01 * sqrt(1 - pow(0.999, s)) / (1 - pow(0.9, s));
			a[i] = 0.9 * a[i] + 0.1 * g;
			b[i] = 0.999 * b[i] + 0.001 * g * g;
			r[i] -= lr * a[i] / (sqrt(b[i]) + 1e-8);
		}
	}
	run3("adam", NULL, 0.01f, w);
	close_to("adam", w, r);
	/* rmsprop, centered with momentum */
	for (int i = 0; i < N; i++) {
		r[i] = W0[i];
		a[i] = 1; /* ms */
		b[i] = 0; /* mom */
		c[i] = 0; /* mg */
		for (int s = 0; s < 3; s++) {
			double g = G[s][i];
			a[i] = 0.9 * a[i] + 0.1 * g * g;
			c[i] = 0.9 * c[i] + 0.1 * g;
			b[i] = 0.5 * b[i] +
			       0.01 * g / sqrt(a[i] - c[i] * c[i] + 1e-10);
			r[i] -= b[i];
		}
	}
	run3("rmsprop", "centered=1 momentum=0.5", 0.01f, w);
	close_to("rmsprop", w, r);
	/* ftrl with l1 and l2 */
	for (int i = 0; i < N; i++) {
		r[i] = W0[i];
		a[i] = 0.1;
		b[i] = 0;
		for (int s = 0; s < 3; s++) {
			double g = G[s][i], an = a[i] + g * g;
			b[i] += g - (sqrt(an) - sqrt(a[i])) / 0.5 * r[i];
			double quad = sqrt(an) / 0.5 + 2 * 0.01;
			r[i] = fabs(b[i]) > 0.05
			           ? ((b[i] > 0 ? 0.05 : -0.05) - b[i]) / quad
			           : 0;
			a[i] = an;
		}
	}
	run3("ftrl", "l1=0.05 l2=0.01", 0.5f, w);
	close_to("ftrl", w, r);
}

TEST(bad_hyperparameters)
{
	struct tf_hparams *h = tf_hparams_new();
	struct tf_optim *o = tf_optim_new();
	tf_hparams_set(h, "beta1", 1.5);
	CHECK_STATUS(tf_optim_init(o, tf_registry_optimizer(reg, "adam"), h, 4),
	             TF_EINVAL, o);
	CHECK_CONTAINS(tf_errmsg(o), "optimizer 'adam': needs 0 <= beta1");
	CHECK_STATUS(tf_hparams_parse(h, "beta1"), TF_EINVAL, h);
	CHECK_STATUS(tf_hparams_parse(h, "beta1=x"), TF_EINVAL, h);
	tf_optim_free(o);
	tf_hparams_free(h);
	CHECK(fabs(tf_lr_decay(0.1, 250, 0.5, 100, 0) - 0.1 * pow(0.5, 2.5)) <
	      1e-12);
	CHECK(fabs(tf_lr_decay(0.1, 250, 0.5, 100, 1) - 0.025) < 1e-12);
	CHECK(tf_lr_decay(0.1, 250, 0.5, 0, 1) == 0.1);
}

/* Full-batch training of y = w x + b on the linear toy. */
TEST(every_optimizer_fits_the_linear_toy)
{
	FILE *f = fopen("share/data/linear_toy.csv", "r");
	REQUIRE(f != NULL);
	float x[128], y[128];
	int n = 0;
	char line[128];
	REQUIRE(fgets(line, sizeof line, f) != NULL); /* header */
	while (n < 128 && fscanf(f, "%f,%f", &x[n], &y[n]) == 2) {
		n++;
	}
	fclose(f);
	CHECK_EQ_INT(n, 100);
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	for (int i = 0; i < n; i++) {
		sx += x[i];
		sy += y[i];
		sxx += (double)x[i] * x[i];
		sxy += (double)x[i] * y[i];
	}
	double wls = (n * sxy - sx * sy) / (n * sxx - sx * sx);
	double bls = (sy - wls * sx) / n;
	printf("# least squares: w = %.4f  b = %.4f\n", wls, bls);
	struct {
		const char *name, *hp;
		float lr;
		int steps;
	} runs[] = {
	    {"sgd", NULL, 0.3f, 2000},     {"momentum", NULL, 0.05f, 2000},
	    {"adagrad", NULL, 2.0f, 3000}, {"adadelta", NULL, 20.0f, 3000},
	    {"adam", NULL, 0.2f, 3000},    {"rmsprop", NULL, 0.05f, 3000},
	    {"ftrl", NULL, 3.0f, 3000},
	};
	for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
		struct tf_graph *g = tf_graph_new();
		REQUIRE(tf_graph_parse(g, "input x 1\ninput y 1\n"
		                          "node p dense x units=1\n"
		                          "node loss mse p,y\n") == TF_OK);
		REQUIRE(tf_graph_build(g, reg, tf_device_cpu(), 3) == TF_OK);
		struct tf_hparams *h = tf_hparams_new();
		if (runs[k].hp != NULL) {
			tf_hparams_parse(h, runs[k].hp);
		}
		struct tf_optim *o = tf_optim_new();
		REQUIRE(tf_optim_init(o,
		                      tf_registry_optimizer(reg, runs[k].name),
		                      h, tf_graph_nparams(g)) == TF_OK);
		tf_graph_feed(g, "x", x, n);
		tf_graph_feed(g, "y", y, n);
		for (int s = 0; s < runs[k].steps; s++) {
			tf_graph_forward(g, 1);
			tf_graph_backward(g);
			tf_optim_step(o, tf_graph_params(g), tf_graph_grads(g),
			              runs[k].lr);
		}
		float w = tf_graph_params(g)[0], b = tf_graph_params(g)[1];
		printf("# %-8s w = %.4f  b = %.4f  loss = %.4f\n", runs[k].name,
		       w, b, tf_graph_loss(g));
		/* Near the least-squares fit, and so near y = 2x + 10. */
		if (fabs(w - wls) > 0.06 || fabs(b - bls) > 0.05 ||
		    fabsf(w - 2.0f) > 0.15f || fabsf(b - 10.0f) > 0.1f) {
			FAILF("%s ends at w = %g, b = %g (least squares: %g, "
			      "%g)",
			      runs[k].name, w, b, wls, bls);
		}
		tf_optim_free(o);
		tf_hparams_free(h);
		tf_graph_free(g);
	}
}

int
main(void)
{
	reg = tf_registry_new();
	if (tf_registry_load(reg) != TF_OK) {
		printf("# %s\n", tf_errmsg(reg));
	}
	RUN(update_rules);
	RUN(bad_hyperparameters);
	RUN(every_optimizer_fits_the_linear_toy);
	tf_registry_free(reg);
	DONE();
}
