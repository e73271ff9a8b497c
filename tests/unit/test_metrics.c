/*
 * test_metrics.c - metrics on hand-computed cases: accuracy, exact AUC
 * with ties, multiclass confusion, regression, the loss from
 * predictions; the AUC of more scores than are kept one by one; the
 * table for people, its classes named.
 */
#include "test.h"

TEST(binary_accuracy_and_exact_auc)
{
	struct tf_metrics *m = tf_metrics_new(TF_TASK_BINARY, 2);
	float p[] = {0.9f, 0.8f, 0.3f, 0.3f, 0.2f, 0.6f};
	float y[] = {1, 1, 0, 1, 0, 0};
	CHECK_EQ_INT(tf_metrics_add(m, p, y, 6, 0.25), TF_OK);
	CHECK_EQ_INT(tf_metrics_count(m), 6);
	/* at 0.5: 1,1,0,0,0,1 against 1,1,0,1,0,0: 4 of 6 */
	CHECK(fabs(tf_metrics_accuracy(m) - 4.0 / 6) < 1e-12);
	/* pairs (pos, neg): 3 x 3 = 9; pos 0.3 ties neg 0.3 (half) and
	 * loses to 0.6: 0.9 and 0.8 beat all three: 6 + 0.5 + 1 = 7.5 */
	CHECK(fabs(tf_metrics_auc(m) - 7.5 / 9) < 1e-12);
	CHECK(fabs(tf_metrics_loss(m) - 0.25) < 1e-12);
	char *j = NULL;
	CHECK_EQ_INT(tf_metrics_json(m, 1, &j), TF_OK);
	CHECK_CONTAINS(j, "\"examples\":6");
	CHECK_CONTAINS(j, "\"confusion\":[[2,1],[1,2]]");
	free(j);
	/* the table: classes by number, or by the names given, the
	 * columns as wide as the widest */
	CHECK_EQ_INT(tf_metrics_text(m, &j), TF_OK);
	CHECK_CONTAINS(j, "        |       0       1\n"
	                  "      0 |       2       1\n");
	free(j);
	const char *names[] = {"no", "a longer name"};
	CHECK_EQ_INT(tf_metrics_name_classes(m, names), TF_OK);
	CHECK_EQ_INT(tf_metrics_text(m, &j), TF_OK);
	CHECK_CONTAINS(j, "              |            no a longer name\n"
	                  "           no |             2             1\n"
	                  "a longer name |             1             2\n");
	free(j);
	tf_metrics_reset(m);
	CHECK_EQ_INT(tf_metrics_count(m), 0);
	/* the loss from the predictions: clamped cross-entropy */
	float one[] = {1.0f}, lab[] = {0};
	tf_metrics_add(m, one, lab, 1, NAN);
	CHECK(fabs(tf_metrics_loss(m) + log(1e-7)) < 1e-3);
	tf_metrics_free(m);
}

TEST(multiclass_and_regression)
{
	struct tf_metrics *m = tf_metrics_new(TF_TASK_MULTICLASS, 3);
	float p[] = {0.7f, 0.2f, 0.1f, 0.1f, 0.1f, 0.8f, 0.3f, 0.4f, 0.3f};
	float y[] = {0, 2, 0};
	tf_metrics_add(m, p, y, 3, NAN);
	CHECK(fabs(tf_metrics_accuracy(m) - 2.0 / 3) < 1e-12);
	CHECK(isnan(tf_metrics_auc(m)));
	tf_metrics_free(m);
	m = tf_metrics_new(TF_TASK_REGRESSION, 1);
	float v[] = {1, 2, 3}, t[] = {1, 2, 5};
	tf_metrics_add(m, v, t, 3, NAN);
	char *j = NULL;
	tf_metrics_json(m, 0, &j);
	/* mse 4/3; r2 = 1 - 4 / (sum (t - 8/3)^2 = 78/9) = 1 - 36/78 */
	CHECK_CONTAINS(j, "\"mse\":1.33333");
	CHECK_CONTAINS(j, "\"r2\":0.538461538");
	free(j);
	tf_metrics_free(m);
}

static int
by_score(const void *a, const void *b)
{
	float x = ((const float *)a)[0], y = ((const float *)b)[0];
	return x < y ? -1 : x > y;
}

/* Past 4,194,304 scores the AUC counts them in buckets: scores a bucket
 * apart rank as ties (a pair an ulp apart scores a half, not 1), and
 * the AUC of millions of scores spread over [0, 1] is the exact one to
 * within 1e-5 (the Mann-Whitney sum over the sorted scores here). */
TEST(auc_past_the_exact_scores_is_counted)
{
	struct tf_metrics *m = tf_metrics_new(TF_TASK_BINARY, 2);
	REQUIRE(m != NULL);
	/* positives an ulp above the negatives: exact, 1 */
	enum { CHUNK = 4096 };
	static float p[CHUNK], y[CHUNK];
	float lo = 0.75f, hi = nextafterf(0.75f, 1.0f);
	for (int i = 0; i < CHUNK; i++) {
		p[i] = i % 2 ? hi : lo;
		y[i] = (float)(i % 2);
	}
	CHECK_EQ_INT(tf_metrics_add(m, p, y, CHUNK, 0), TF_OK);
	CHECK(tf_metrics_auc(m) == 1.0);
	/* past 2^22 of them the two share a bucket: a tie */
	for (int k = 1; k <= (1 << 22) / CHUNK; k++) {
		CHECK_EQ_INT(tf_metrics_add(m, p, y, CHUNK, 0), TF_OK);
	}
	CHECK(tf_metrics_count(m) == (1u << 22) + CHUNK);
	CHECK(tf_metrics_auc(m) == 0.5);
	/* a new start is exact again */
	tf_metrics_reset(m);
	CHECK_EQ_INT(tf_metrics_add(m, p, y, CHUNK, 0), TF_OK);
	CHECK(tf_metrics_auc(m) == 1.0);
	tf_metrics_reset(m);
	/* 5,000,000 scores of a model that ranks positives higher, ties
	 * included, against the exact sum */
	size_t n = 5000000;
	float *all = malloc(2 * n * sizeof *all);
	REQUIRE(all != NULL);
	uint64_t st = 12345;
	for (size_t i = 0; i < n; i++) {
		st = st * 6364136223846793005ULL + 1442695040888963407ULL;
		float u = (float)(st >> 40) / 16777216.0f; /* [0, 1) */
		float lab = (float)((st >> 20) % 3 == 0);
		float s = lab > 0 ? sqrtf(u) : u * u;
		if (i % 1000 == 0) {
			s = 0.5f; /* ties across labels */
		}
		all[2 * i] = s;
		all[2 * i + 1] = lab;
	}
	for (size_t i = 0; i < n; i += CHUNK) {
		size_t k = n - i < CHUNK ? n - i : CHUNK;
		for (size_t j = 0; j < k; j++) {
			p[j] = all[2 * (i + j)];
			y[j] = all[2 * (i + j) + 1];
		}
		CHECK_EQ_INT(tf_metrics_add(m, p, y, k, 0), TF_OK);
	}
	qsort(all, n, 2 * sizeof *all, by_score);
	double rank_sum = 0, pos = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && all[2 * j] == all[2 * i]) {
			j++;
		}
		for (size_t k = i; k < j; k++) {
			if (all[2 * k + 1] > 0.5f) {
				rank_sum += (double)(i + 1 + j) / 2.0;
				pos++;
			}
		}
		i = j;
	}
	double neg = (double)n - pos;
	double exact = (rank_sum - pos * (pos + 1) / 2.0) / (pos * neg);
	double auc = tf_metrics_auc(m);
	CHECK(exact > 0.7 && exact < 0.9);
	CHECK(fabs(auc - exact) < 1e-5);
	free(all);
	tf_metrics_free(m);
}

int
main(void)
{
	RUN(binary_accuracy_and_exact_auc);
	RUN(multiclass_and_regression);
	RUN(auc_past_the_exact_scores_is_counted);
	DONE();
}
