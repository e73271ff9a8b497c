/*
 * test_train.c - the training loop through the library (tf_trainer_run()),
 * the ground the split of train.c stands on: a dnn learns a separable
 * task; the same settings make the same model bit for bit; a run stopped
 * between steps (it checkpoints where it stands) and started again ends
 * with the uninterrupted run's model; the final JSON line counts epochs
 * from 1 and carries the last epoch's metrics.
 */
#include <unistd.h>

#include "test.h"

static struct tf_registry *reg;

/* 300 rows of three features: the label is whether a + b - c > 1. */
static int
make_data(const char *path)
{
	char *csv = malloc(300 * 60 + 16);
	if (csv == NULL) {
		return -1;
	}
	size_t n = (size_t)sprintf(csv, "a,b,c,label\n");
	for (int i = 0; i < 300; i++) {
		double a = (i * 37 % 100) / 50.0, b = (i * 61 % 100) / 50.0;
		double c = (i * 13 % 100) / 100.0;
		n += (size_t)sprintf(csv + n, "%.2f,%.2f,%.2f,%d\n", a, b, c,
		                     a + b - c > 1.0);
	}
	int rc = test_csv_records(path, csv, n);
	free(csv);
	return rc;
}

struct seen {
	char last[4096]; /* the last JSON line */
	int steps, stop_after;
};

static void
on_line(void *ctx, const char *json)
{
	struct seen *s = ctx;
	snprintf(s->last, sizeof s->last, "%s", json);
}

static void
on_step(void *ctx, const struct tf_train_progress *p)
{
	(void)p;
	((struct seen *)ctx)->steps++;
}

static int
on_stop(void *ctx)
{
	struct seen *s = ctx;
	return s->stop_after > 0 && s->steps >= s->stop_after;
}

/* A dnn of "8 4", 6 epochs of batch 32 (10 steps an epoch), into ck. */
static int
train(const char *ck, const char *data, struct seen *seen)
{
	struct tf_settings *st = tf_settings_new();
	struct tf_trainer *t = tf_trainer_new();
	struct tf_train_config cfg;
	const char *inputs[] = {data};
	int rc = tf_settings_set(st, "checkpoint-dir", ck) ||
	         tf_settings_set(st, "hidden", "8 4") ||
	         tf_settings_set(st, "epochs", "6") ||
	         tf_settings_set(st, "batch-size", "32") ||
	         tf_settings_set(st, "learning-rate", "0.02") ||
	         tf_settings_set(st, "seed", "5") || tf_settings_resolve(st) ||
	         tf_settings_config(st, &cfg);
	if (rc == TF_OK) {
		cfg.inputs = inputs;
		cfg.ninputs = 1;
		struct tf_train_sink sink = {.ctx = seen,
		                             .line = on_line,
		                             .progress = on_step,
		                             .stop = on_stop};
		rc = tf_trainer_run(t, reg, &cfg, &sink);
		if (rc != TF_OK) {
			printf("# %s\n", tf_errmsg(t));
		}
	}
	tf_trainer_free(t);
	tf_settings_free(st);
	return rc;
}

/* The params block of ck's latest checkpoint, malloc'd (n floats). */
static float *
params_of(const char *ck, size_t *n)
{
	char path[512];
	struct tf_ckpt *c = tf_ckpt_new();
	float *out = NULL;
	const float *p;
	if (c != NULL && tf_ckpt_latest(ck, path, sizeof path) == TF_OK &&
	    tf_ckpt_load(c, path) == TF_OK &&
	    (p = tf_ckpt_get(c, "params", n)) != NULL &&
	    (out = malloc(*n * sizeof *out + 1)) != NULL) {
		memcpy(out, p, *n * sizeof *out);
	}
	tf_ckpt_free(c);
	return out;
}

static double
field(const char *json, const char *key)
{
	char k[64];
	snprintf(k, sizeof k, "\"%s\":", key);
	const char *p = strstr(json, k);
	return p ? strtod(p + strlen(k), NULL) : -1;
}

TEST(learns_and_repeats_bit_for_bit)
{
	struct seen a = {0}, b = {0};
	REQUIRE(train(at("a"), at("d.tfrecord"), &a) == TF_OK);
	REQUIRE(train(at("b"), at("d.tfrecord"), &b) == TF_OK);
	CHECK(strstr(a.last, "\"final\":true") != NULL);
	CHECK_EQ_INT(field(a.last, "step"), 60);
	CHECK_EQ_INT(field(a.last, "epoch"), 6); /* from 1, as shown */
	CHECK_EQ_INT(field(a.last, "examples_total"), 6 * 300);
	/* the last epoch's metrics: its 300 rows and the rest of the batch
	 * it began in */
	double ex = field(a.last, "examples");
	CHECK(ex >= 300 && ex < 332);
	CHECK(field(a.last, "accuracy") >= 0.9);
	size_t na, nb;
	float *pa = params_of(at("a"), &na), *pb = params_of(at("b"), &nb);
	REQUIRE(pa != NULL && pb != NULL);
	CHECK(na == nb && memcmp(pa, pb, na * sizeof *pa) == 0);
	free(pa);
	free(pb);
}

TEST(stopped_and_started_again_ends_as_one_run)
{
	struct seen one = {0}, cut = {0}, rest = {0};
	REQUIRE(train(at("one"), at("d.tfrecord"), &one) == TF_OK);
	cut.stop_after = 23; /* mid-epoch */
	REQUIRE(train(at("two"), at("d.tfrecord"), &cut) == TF_OK);
	CHECK_EQ_INT(cut.steps, 23);
	REQUIRE(train(at("two"), at("d.tfrecord"), &rest) == TF_OK);
	CHECK_EQ_INT(rest.steps, 60 - 23);
	size_t n1, n2;
	float *p1 = params_of(at("one"), &n1), *p2 = params_of(at("two"), &n2);
	REQUIRE(p1 != NULL && p2 != NULL);
	CHECK(n1 == n2 && memcmp(p1, p2, n1 * sizeof *p1) == 0);
	free(p1);
	free(p2);
}

/* A row-sparse step (tfi_optim_step_ranges: some ranges packed, one
 * long one in place) is the dense step where the rest of the gradient is
 * zero, for the optimizers that allow it (lazy_adam too); adam and
 * momentum do not. */
TEST(row_sparse_steps)
{
	enum { M = 700 };
	static float wd[M], ws[M], g[M];
	struct tfi_ranges all = {0}, some = {0};
	/* rows of 3 at 10, 40, 41 (joined), 99, a 300 long block at 400,
	 * and 2 at 5; after the first step, rows 40 and 41 are not touched
	 * (where adam and momentum still move them) */
	REQUIRE(tfi_ranges_add(&all, 30, 3) == 0);
	REQUIRE(tfi_ranges_add(&all, 120, 6) == 0);
	REQUIRE(tfi_ranges_add(&some, 30, 3) == 0);
	for (int q = 0; q < 2; q++) {
		struct tfi_ranges *t = q ? &some : &all;
		REQUIRE(tfi_ranges_add(t, 297, 3) == 0);
		REQUIRE(tfi_ranges_add(t, 400, 300) == 0);
		REQUIRE(tfi_ranges_add(t, 5, 2) == 0);
	}
	const char *names[] = {"sgd",       "adagrad", "ftrl",
	                       "lazy_adam", "adam",    "momentum"};
	for (int k = 0; k < 6; k++) {
		struct tf_optim *od = tf_optim_new(), *os = tf_optim_new();
		const struct tf_optimizer *opt =
		    tf_registry_optimizer(reg, names[k]);
		tf_update_fn up = tf_registry_optimizer_update(reg, names[k]);
		REQUIRE(opt != NULL && up != NULL);
		struct tf_hparams *h = tf_hparams_new();
		CHECK_STATUS(tf_optim_place(od, NULL, up), TF_OK, od);
		CHECK_STATUS(tf_optim_place(os, NULL, up), TF_OK, os);
		CHECK_STATUS(tf_optim_init(od, opt, h, M), TF_OK, od);
		CHECK_STATUS(tf_optim_init(os, opt, h, M), TF_OK, os);
		int exact = tfi_optim_row_exact(os, 0, 1);
		CHECK_EQ_INT(exact, k < 4);
		/* FTRL: not with a decaying rate, nor tables not at zero */
		CHECK_EQ_INT(tfi_optim_row_exact(os, 1, 1), k < 4 && k != 2);
		CHECK_EQ_INT(tfi_optim_row_exact(os, 0, 0), k < 4 && k != 2);
		for (int i = 0; i < M; i++) {
			wd[i] = ws[i] = k == 2 ? 0.0f : (float)(i % 7) - 3.0f;
		}
		for (int step = 0; step < 3; step++) {
			const struct tfi_ranges *rr = step ? &some : &all;
			memset(g, 0, sizeof g);
			for (size_t q = 0; q < rr->n; q += 2) {
				for (uint64_t i = 0; i < rr->v[q + 1]; i++) {
					uint64_t at = rr->v[q] + i;
					g[at] =
					    (float)((at * 7 + (uint64_t)step) %
					            11) /
					        5.0f -
					    1.0f;
				}
			}
			CHECK_STATUS(tf_optim_step(od, wd, g, 0.1f), TF_OK, od);
			CHECK_STATUS(tfi_optim_step_ranges(os, ws, g, 0.1f, rr),
			             TF_OK, os);
		}
		CHECK_EQ_INT(tf_optim_steps(os), 3);
		if (exact && k == 2) {
			/* FTRL's dense step recomputes an untouched weight from
			 * its accumulator as stored (a float): within a unit in
			 * the last place of the sparse step's */
			for (int i = 0; i < M; i++) {
				CHECK(fabsf(ws[i] - wd[i]) <=
				      1e-6f * fabsf(wd[i]));
			}
		} else if (exact) {
			CHECK_MEM(ws, wd, sizeof ws);
			for (unsigned j = 0; j < tf_optim_nslots(os); j++) {
				CHECK_MEM(tf_optim_slot(os, j),
				          tf_optim_slot(od, j),
				          M * sizeof(float));
			}
		} else {
			CHECK(memcmp(ws, wd, sizeof ws) != 0);
		}
		tf_hparams_free(h);
		tf_optim_free(od);
		tf_optim_free(os);
	}
	free(all.v);
	free(some.v);
}

/* A sparse lr's step without the graph (linear.c) is the graph's step
 * bit for bit: forward, loss, predictions, the gradient summed in the
 * same order, the same update of the same rows; ids repeat within a
 * row and a batch, and some name no row (-1, past the table). */
TEST(linear_step_is_the_graphs)
{
	enum { W = 6, V = 40, B = 16, STEPS = 25 };
	struct tf_layout l = {.bag = W, .bag_vocab = V};
	char *spec = NULL, err[200];
	REQUIRE(tf_model_spec_sparse("lr", &l, NULL, TF_TASK_BINARY, 2, 0, 1, 1,
	                             &spec, err, sizeof err) == TF_OK);
	static float x[B * W], y[B];
	static int64_t ids[B * W];
	struct tf_batch b = {x, ids, y, B, B, W, W};
	const char *names[] = {"sgd", "adagrad", "ftrl", "lazy_adam"};
	for (int k = 0; k < 4; k++) {
		struct tf_graph *g[2];
		struct tf_optim *o[2];
		struct tf_metrics *m[2];
		struct tf_hparams *h = tf_hparams_new();
		for (int q = 0; q < 2; q++) {
			g[q] = tf_graph_new();
			REQUIRE(tf_graph_parse(g[q], spec) == TF_OK);
			REQUIRE(tf_graph_build(g[q], reg, tf_device_cpu(), 7) ==
			        TF_OK);
			o[q] = tf_optim_new();
			CHECK_STATUS(
			    tf_optim_place(
			        o[q], NULL,
			        tf_registry_optimizer_update(reg, names[k])),
			    TF_OK, o[q]);
			CHECK_STATUS(
			    tf_optim_init(o[q],
			                  tf_registry_optimizer(reg, names[k]),
			                  h, tf_graph_nparams(g[q])),
			    TF_OK, o[q]);
			m[q] = tf_metrics_new(TF_TASK_BINARY, 2);
		}
		tfi_graph_zero_grads(g[0], 0);
		size_t np = tf_graph_nparams(g[0]);
		struct tfi_linear *lin = tfi_linear_plan(g[1], o[1]);
		REQUIRE(lin != NULL);
		struct tfi_ranges rr = {0};
		for (int step = 0; step < STEPS; step++) {
			for (int i = 0; i < B * W; i++) {
				uint64_t r =
				    (uint64_t)(i * 2654435761u +
				               (unsigned)step * 40503u);
				ids[i] = (int64_t)(r % (V + 6)) - 2;
				x[i] = (float)((r >> 8) % 9) / 4.0f - 0.5f;
			}
			for (int i = 0; i < B; i++) {
				y[i] = (float)((i * 5 + step) % 3 == 0);
			}
			/* the graph's way: the rows met, then the bias */
			float *p0 = tf_graph_params(g[0]);
			uint64_t off =
			    (uint64_t)(tf_graph_node_param(
			                   g[0], tf_graph_find(g[0], "logits"),
			                   0, &(const char *){0}, &(int64_t){0},
			                   &(int64_t){0}, &(int){0}) -
			               p0);
			rr.n = 0;
			for (int i = 0; i < B * W; i++) {
				int met = ids[i] < 0 || ids[i] >= V;
				for (int j = 0; j < i && !met; j++) {
					met = ids[j] == ids[i];
				}
				if (!met) {
					REQUIRE(tfi_ranges_add(
					            &rr, off + (uint64_t)ids[i],
					            1) == 0);
				}
			}
			REQUIRE(tfi_ranges_add(&rr, np - 1, 1) == 0);
			REQUIRE(tf_graph_feed_batch(g[0], &b) == TF_OK);
			REQUIRE(tf_graph_forward(g[0], 1) == TF_OK);
			REQUIRE(tf_graph_backward(g[0]) == TF_OK);
			tf_metrics_add(m[0], tf_graph_fetch(g[0], "prob"), y, B,
			               tf_graph_loss(g[0]));
			CHECK_STATUS(tfi_optim_step_ranges(o[0], p0,
			                                   tf_graph_grads(g[0]),
			                                   0.5f, &rr),
			             TF_OK, o[0]);
			/* linear.c's */
			double loss;
			REQUIRE(tfi_linear_takes(lin, &b));
			CHECK_EQ_INT(
			    tfi_linear_pass(lin, g[1], o[1], &b, m[1], &loss),
			    TF_OK);
			CHECK_STATUS(tfi_linear_apply(lin, g[1], o[1], 0.5f),
			             TF_OK, o[1]);
			CHECK(loss == tf_graph_loss(g[0]));
			if (step == STEPS / 2) {
				/* its rows written out and read again, as
				 * around a checkpoint or a step the graph took
				 */
				tfi_linear_flush(lin, g[1], o[1]);
				tfi_linear_drop(lin);
			}
		}
		tfi_linear_flush(lin, g[1], o[1]);
		CHECK_MEM(tf_graph_params(g[1]), tf_graph_params(g[0]),
		          np * sizeof(float));
		for (unsigned j = 0; j < tf_optim_nslots(o[0]); j++) {
			CHECK_MEM(tf_optim_slot(o[1], j),
			          tf_optim_slot(o[0], j), np * sizeof(float));
		}
		/* nothing left in either gradient */
		for (size_t i = 0; i < np; i++) {
			CHECK(tf_graph_grads(g[0])[i] == 0.0f &&
			      tf_graph_grads(g[1])[i] == 0.0f);
		}
		CHECK(tf_metrics_auc(m[0]) == tf_metrics_auc(m[1]) &&
		      tf_metrics_loss(m[0]) == tf_metrics_loss(m[1]));
		/* the step has moved the weights of the ids it met */
		CHECK(tf_graph_params(g[1])[np - 1] != 0.0f);
		/* a label the loss refuses is left to the graph, which says
		 * so */
		y[3] = 2.0f;
		CHECK(!tfi_linear_takes(lin, &b));
		free(rr.v);
		tfi_linear_free(lin);
		tf_hparams_free(h);
		for (int q = 0; q < 2; q++) {
			tf_metrics_free(m[q]);
			tf_optim_free(o[q]);
			tf_graph_free(g[q]);
		}
	}
	free(spec);
	/* a dnn over the bag is not a linear model */
	REQUIRE(tf_model_spec_sparse("dnn", &l, "4", TF_TASK_BINARY, 2, 0, 1, 2,
	                             &spec, err, sizeof err) == TF_OK);
	struct tf_graph *dg = tf_graph_new();
	REQUIRE(tf_graph_parse(dg, spec) == TF_OK &&
	        tf_graph_build(dg, reg, tf_device_cpu(), 7) == TF_OK);
	struct tf_optim *o0 = tf_optim_new();
	struct tf_hparams *h0 = tf_hparams_new();
	CHECK_STATUS(tf_optim_init(o0, tf_registry_optimizer(reg, "adagrad"),
	                           h0, tf_graph_nparams(dg)),
	             TF_OK, o0);
	CHECK(tfi_linear_plan(dg, o0) == NULL);
	tf_optim_free(o0);
	tf_hparams_free(h0);
	tf_graph_free(dg);
	free(spec);
}

int
main(void)
{
	if (test_dir_make("tfkit-train") != 0) {
		return 1;
	}
	reg = tf_registry_new();
	if (tf_registry_load(reg) != TF_OK) {
		printf("# %s\n", tf_errmsg(reg));
	}
	if (make_data(at("d.tfrecord")) != 0) {
		printf("not ok 1 - the data\n");
		return 1;
	}
	RUN(learns_and_repeats_bit_for_bit);
	RUN(stopped_and_started_again_ends_as_one_run);
	RUN(row_sparse_steps);
	RUN(linear_step_is_the_graphs);
	tf_registry_free(reg);
	DONE();
}
