/*
 * test_file.c - publishing outputs: replaced whole, never over anything
 * but a regular file, a device written in place; reading small files.
 */
#include <errno.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "test.h"

TEST(a_regular_file_is_replaced_whole)
{
	char err[256];
	CHECK_EQ_INT(tf_path_kind(at("f")), TF_PATH_NONE);
	CHECK_EQ_INT(
	    tf_file_replace(at("f"), "one", 3, TF_FILE_SYNC, err, sizeof err),
	    TF_OK);
	CHECK_EQ_INT(tf_path_kind(at("f")), TF_PATH_REGULAR);
	CHECK_EQ_INT(tf_file_replace(at("f"), "second", 6, 0, err, sizeof err),
	             TF_OK);
	size_t n;
	char *t = tf_file_read(at("f"), &n);
	CHECK(t != NULL && n == 6 && strcmp(t, "second") == 0);
	free(t);
	/* no temporary left beside it */
	char cmd[400];
	snprintf(cmd, sizeof cmd, "ls '%s' | grep -q tmp", test_dir);
	CHECK(system(cmd) != 0);
	CHECK_EQ_INT(tf_path_kind(test_dir), TF_PATH_DIR);
	CHECK_EQ_INT(tf_path_kind("-"), TF_PATH_SPECIAL);
	CHECK_EQ_INT(
	    tf_file_replace(at("no/such/f"), "x", 1, 0, err, sizeof err),
	    TF_ECREATE);
	CHECK_CONTAINS(err, "no/such/f");
}

TEST(a_device_or_fifo_is_written_in_place)
{
	char err[256];
	if (mknod(at("null"), S_IFCHR | 0666, makedev(1, 3)) != 0) {
		printf("# skip: mknod: %s\n", strerror(errno));
		return;
	}
	CHECK_EQ_INT(tf_path_kind(at("null")), TF_PATH_SPECIAL);
	CHECK_EQ_INT(
	    tf_file_replace(at("null"), "x", 1, TF_FILE_SYNC, err, sizeof err),
	    TF_OK);
	struct stat st;
	CHECK(stat(at("null"), &st) == 0 && S_ISCHR(st.st_mode));
	REQUIRE(mknod(at("full"), S_IFCHR | 0666, makedev(1, 7)) == 0);
	CHECK_EQ_INT(tf_file_replace(at("full"), "x", 1, 0, err, sizeof err),
	             TF_EIO);
	CHECK_CONTAINS(err, "No space left on device");
	CHECK(stat(at("full"), &st) == 0 && S_ISCHR(st.st_mode));
	struct tf_file_out *o = tf_file_out_open(at("null"));
	REQUIRE(o != NULL);
	CHECK(tf_file_out_temp(o) == NULL);
	CHECK(write(tf_file_out_fd(o), "abc", 3) == 3);
	CHECK(tf_file_out_commit(o, 0) == 0);
}

TEST(an_aborted_output_leaves_nothing)
{
	struct tf_file_out *o = tf_file_out_open(at("g"));
	REQUIRE(o != NULL);
	REQUIRE(tf_file_out_temp(o) != NULL);
	char tmp[300];
	snprintf(tmp, sizeof tmp, "%s", tf_file_out_temp(o));
	CHECK(access(tmp, F_OK) == 0);
	tf_file_out_abort(o);
	CHECK(access(tmp, F_OK) != 0);
	CHECK(access(at("g"), F_OK) != 0);
	size_t n;
	CHECK(tf_file_read(at("g"), &n) == NULL && errno == ENOENT);
	CHECK(tf_file_read(test_dir, &n) == NULL && errno == EISDIR);
}

int
main(void)
{
	if (test_dir_make("tfkit-file") != 0) {
		return 1;
	}
	RUN(a_regular_file_is_replaced_whole);
	RUN(a_device_or_fifo_is_written_in_place);
	RUN(an_aborted_output_leaves_nothing);
	DONE();
}
