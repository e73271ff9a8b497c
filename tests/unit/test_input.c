/*
 * test_input.c - named inputs (input.c): a missing file, a gzip'd CSV
 * read as one stream, archives' members by glob.
 */
#include <unistd.h>
#include <zlib.h>

#include "test.h"

TEST(inputs_plain_compressed_and_missing)
{
	struct tf_input *in = tf_input_new();
	CHECK_STATUS(tf_input_open(in, "/no/such/file.csv"), TF_ENOENT, in);
	CHECK_CONTAINS(tf_errmsg(in), "cannot open '/no/such/file.csv'");
	tf_errclear(in);
	/* gzip is recognised by its first bytes */
	const char text[] =
	    "sepal_length,sepal_width,label\n5.1,3.5,0\n4.9,3,1\n";
	char path[] = "/tmp/tfkit-input-XXXXXX";
	int fd = mkstemp(path);
	REQUIRE(fd >= 0);
	gzFile gz = gzdopen(fd, "wb");
	gzwrite(gz, text, sizeof text - 1);
	gzclose(gz);
	CHECK_STATUS(tf_input_open(in, path), TF_OK, in);
	unlink(path);
	const char *name;
	CHECK_STATUS(tf_input_next(in, &name), TF_OK, in);
	char buf[64];
	size_t got, all = 0;
	while (tf_input_read(in, buf + all, sizeof buf - all, &got) == TF_OK &&
	       got > 0) {
		all += got;
	}
	CHECK(all == sizeof text - 1 && memcmp(buf, text, all) == 0);
	CHECK_EQ_INT(tf_input_next(in, &name), TF_EOF);
	tf_input_free(in);
}

TEST(archive_members_by_glob)
{
	REQUIRE(test_dir_make("tfkit-input") == 0);
	char cmd[800];
	snprintf(cmd, sizeof cmd,
	         "cd '%s' && mkdir d && printf 'x,y\\n1,0\\n' > d/a.csv && "
	         "printf 'x,y\\n2,1\\n' > d/b.csv && echo hi > d/README && "
	         "tar -czf t.tar.gz -C d a.csv README b.csv",
	         test_dir);
	REQUIRE(system(cmd) == 0);
	struct tf_input *in = tf_input_new();
	CHECK_STATUS(tf_input_open(in, at("t.tar.gz")), TF_OK, in);
	const char *name;
	int n = 0;
	while (tf_input_next(in, &name) == TF_OK) {
		n++;
		CHECK_CONTAINS(name, "t.tar.gz:");
		CHECK(strstr(name, "README") == NULL);
	}
	CHECK_EQ_INT(n, 2);
	tf_input_add_member_glob(in, "b*");
	CHECK_STATUS(tf_input_open(in, at("t.tar.gz")), TF_OK, in);
	CHECK_STATUS(tf_input_next(in, &name), TF_OK, in);
	CHECK_CONTAINS(name, ":b.csv");
	CHECK_EQ_INT(tf_input_next(in, &name), TF_EOF);
	tf_input_free(in);
}

int
main(void)
{
	RUN(inputs_plain_compressed_and_missing);
	RUN(archive_members_by_glob);
	DONE();
}
