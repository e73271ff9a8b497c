/*
 * test_batch.c - struct tf_batch: room, growth, appending rows.
 */
#include "test.h"

TEST(room_grows_and_rows_append_in_order)
{
	struct tf_batch a, b;
	REQUIRE(tf_batch_init(&a, 2, 3, 1) == TF_OK);
	CHECK_EQ_INT(a.capacity, 2);
	CHECK_EQ_INT(a.rows, 0);
	REQUIRE(tf_batch_init(&b, 3, 3, 1) == TF_OK);
	for (int r = 0; r < 3; r++) {
		for (int c = 0; c < 3; c++) {
			b.x[r * 3 + c] = (float)(10 * r + c);
		}
		b.ids[r] = 100 + r;
		b.y[r] = (float)r;
	}
	b.rows = 3;
	CHECK_EQ_INT(tf_batch_append(&a, &b), TF_OK);
	CHECK_EQ_INT(tf_batch_append(&a, &b), TF_OK);
	CHECK_EQ_INT(a.rows, 6);
	CHECK(a.capacity >= 6);
	CHECK(a.x[3 * 3 + 1] == 1.0f && a.x[5 * 3 + 2] == 22.0f);
	CHECK(a.ids[4] == 101 && a.y[5] == 2.0f);
	/* rows of other widths do not mix */
	struct tf_batch c;
	REQUIRE(tf_batch_init(&c, 1, 2, 1) == TF_OK);
	c.rows = 1;
	CHECK_EQ_INT(tf_batch_append(&a, &c), TF_EINVAL);
	CHECK_EQ_INT(a.rows, 6);
	tf_batch_release(&a);
	tf_batch_release(&b);
	tf_batch_release(&c);
	CHECK(a.x == NULL && a.capacity == 0);
}

TEST(a_batch_without_ids_or_columns_still_has_addresses)
{
	struct tf_batch a;
	REQUIRE(tf_batch_init(&a, 0, 0, 0) == TF_OK);
	CHECK(a.x != NULL && a.ids != NULL && a.y != NULL);
	CHECK_EQ_INT(a.capacity, 1);
	CHECK_EQ_INT(tf_batch_reserve(&a, 100), TF_OK);
	CHECK_EQ_INT(a.capacity, 100);
	tf_batch_release(&a);
}

int
main(void)
{
	RUN(room_grows_and_rows_append_in_order);
	RUN(a_batch_without_ids_or_columns_still_has_addresses);
	DONE();
}
