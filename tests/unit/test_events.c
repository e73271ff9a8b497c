/* TensorBoard events: the vectors of FORMATS.md 3.5, byte for byte. */
#include <unistd.h>

#include "test.h"

TEST(event_vectors)
{
	uint8_t out[128], want[128];
	size_t n = tf_event_encode(out, 1700000000.0, 0, "brain.Event:2", NULL,
	                           NULL, 0);
	size_t k =
	    unhex("09 00 00 00 40 fc 54 d9 41 1a 0d 62 72 61 69 6e 2e 45 "
	          "76 65 6e 74 3a 32",
	          want);
	CHECK_EQ_INT(n, k);
	CHECK_MEM(out, want, k);
	CHECK(tf_event_size("brain.Event:2", NULL, 0) >= n);
	const char *tags[] = {"loss"};
	float v[] = {0.5f};
	n = tf_event_encode(out, 1700000001.5, 1, NULL, tags, v, 1);
	k = unhex("09 00 00 60 40 fc 54 d9 41 10 01 2a 0d 0a 0b 0a 04 6c 6f 73 "
	          "73 15 00 00 00 3f",
	          want);
	CHECK_EQ_INT(n, k);
	CHECK_MEM(out, want, k);
	CHECK(tf_event_size(NULL, tags, 1) >= n);
	/* Framed, the two make FORMATS' complete 82-byte event file. */
	uint8_t file[200], wantf[200];
	uint8_t e1[64], e2[64];
	size_t n1 = tf_event_encode(e1, 1700000000.0, 0, "brain.Event:2", NULL,
	                            NULL, 0);
	size_t n2 = tf_event_encode(e2, 1700000001.5, 1, NULL, tags, v, 1);
	tf_record_frame(file, e1, n1);
	tf_record_frame(file + n1 + 16, e2, n2);
	k = unhex("18 00 00 00 00 00 00 00 a3 7f 4b 22 09 00 00 00 40 fc 54 d9 "
	          "41 1a 0d 62 72 61 69 6e 2e 45 76 65 6e 74 3a 32 ec ed 8f 9d "
	          "1a 00 00 00 00 00 00 00 12 9b d8 2d 09 00 00 60 40 fc 54 d9 "
	          "41 10 01 2a 0d 0a 0b 0a 04 6c 6f 73 73 15 00 00 00 3f 2e e4 "
	          "2f 0f",
	          wantf);
	CHECK_EQ_INT(n1 + n2 + 32, k);
	CHECK_MEM(file, wantf, k);
}

TEST(event_file)
{
	char dir[] = "/tmp/tfevents.XXXXXX";
	REQUIRE(mkdtemp(dir) != NULL);
	char logdir[64];
	snprintf(logdir, sizeof logdir, "%s/run", dir);
	struct tf_events *ev = tf_events_new();
	CHECK_STATUS(tf_events_open(ev, logdir), TF_OK, ev);
	CHECK_CONTAINS(tf_events_path(ev), "/run/events.out.tfevents.");
	const char *tags[] = {"train/loss", "train/auc"};
	double v[] = {0.25, NAN};
	CHECK_STATUS(tf_events_scalars(ev, 10, tags, v, 2), TF_OK, ev);
	/* Readable while open (flushed): two records. */
	struct tf_reader *r = tf_reader_new();
	CHECK_STATUS(tf_reader_open(r, tf_events_path(ev), TF_COMPRESS_NONE),
	             TF_OK, r);
	const uint8_t *d;
	size_t n;
	int count = 0;
	while (tf_reader_next(r, &d, &n) == TF_OK) {
		count++;
	}
	CHECK_EQ_INT(count, 2);
	/* The NaN was left out: one value of tag train/loss. */
	CHECK(n == 9 + 2 + 2 + 2 + 12 + 5);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	tf_reader_free(r);
	tf_events_free(ev);
	system(cmd);
}

int
main(void)
{
	RUN(event_vectors);
	RUN(event_file);
	DONE();
}
