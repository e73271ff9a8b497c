/*
 * test_metrics.c - metrics on hand-computed cases: accuracy, exact AUC
 * with ties, multiclass confusion, regression, the loss from
 * predictions.
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

int
main(void)
{
	RUN(binary_accuracy_and_exact_auc);
	RUN(multiclass_and_regression);
	DONE();
}
