/* TFRecord framing, compression and every damage case of FORMATS.md 1.5. */
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

static const char *EXAMPLE_HEX =
    "0a 33 0a 0e 0a 05 6c 61 62 65 6c 12 05 1a 03 0a 01 01 0a 0e 0a 04 6e "
    "61 6d 65 12 06 0a 04 0a 02 61 62 0a 11 0a 01 78 12 0c 12 0a 0a 08 00 "
    "00 80 3f 00 00 20 c0";
static const char *GZIP_HEX =
    "1f 8b 08 00 00 00 00 00 00 03 33 65 80 80 6b 47 63 9f 71 19 73 f1 71 "
    "b1 e6 24 26 a5 e6 08 b1 4a 31 73 31 32 02 f9 2c 79 89 b9 a9 42 6c 5c "
    "2c 5c 4c 89 49 5c 82 5c 8c 15 42 3c 42 5c 5c 1c 0c 0c 0d f6 0c 0c 0a "
    "07 c4 12 a3 25 00 df 78 9e a5 45 00 00 00";
static const char *ZLIB_HEX =
    "78 9c 33 65 80 80 6b 47 63 9f 71 19 73 f1 71 b1 e6 24 26 a5 e6 08 b1 "
    "4a 31 73 31 32 02 f9 2c 79 89 b9 a9 42 6c 5c 2c 5c 4c 89 49 5c 82 5c "
    "8c 15 42 3c 42 5c 5c 1c 0c 0c 0d f6 0c 0c 0a 07 c4 12 a3 25 00 af 63 "
    "0b e7";

static unsigned char framed[69];

static char tmpdir[256];

static const char *
tmp(const char *name)
{
	static char path[512];
	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	return path;
}

static void
write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	fwrite(p, 1, n, f);
	fclose(f);
}

TEST(frame_vectors)
{
	unsigned char out[64], want[64];
	tf_record_frame(out, "", 0);
	unhex("00 00 00 00 00 00 00 00 29 03 98 07 d8 ea 82 a2", want);
	CHECK_MEM(out, want, 16);
	tf_record_frame(out, "hello", 5);
	unhex("05 00 00 00 00 00 00 00 ea b2 04 3e 68 65 6c 6c 6f bb 1f 1c 19",
	      want);
	CHECK_MEM(out, want, 21);
	tf_record_frame(out, "123456789", 9);
	unhex("09 00 00 00 00 00 00 00 37 f9 71 39 31 32 33 34 35 36 37 38 39 "
	      "e5 b0 8a c7",
	      want);
	CHECK_MEM(out, want, 25);
	unsigned char ex[53];
	CHECK_EQ_INT(unhex(EXAMPLE_HEX, ex), 53);
	tf_record_frame(framed, ex, 53);
	unhex("35 00 00 00 00 00 00 00 d6 c5 5d e6", want);
	CHECK_MEM(framed, want, 12);
	unhex("16 61 5b 18", want);
	CHECK_MEM(framed + 65, want, 4);
	/* TensorBoard's file_version event, cross-checked upstream. */
	unsigned char ev[40], evw[40];
	unhex("09 00 00 80 38 99 d6 d7 41 1a 0d 62 72 61 69 6e 2e 45 76 65 6e "
	      "74 3a 32",
	      ev);
	tf_record_frame(evw, ev, 24);
	unhex("18 00 00 00 00 00 00 00 a3 7f 4b 22", want);
	CHECK_MEM(evw, want, 12);
	unhex("12 4b 36 ab", want);
	CHECK_MEM(evw + 36, want, 4);
}

/* Read every record of a buffer; returns the count, or -status. */
static long
read_all(const void *p, size_t n, int comp, struct tf_reader *r)
{
	CHECK_STATUS(tf_reader_open_mem(r, p, n, "t.tfrecord", comp), TF_OK, r);
	const uint8_t *d;
	size_t len;
	long k = 0;
	int rc;
	while ((rc = tf_reader_next(r, &d, &len)) == TF_OK) {
		k++;
	}
	return rc == TF_EOF ? k : -rc;
}

TEST(read_compressed_vectors)
{
	unsigned char gz[100], zl[100];
	size_t ng = unhex(GZIP_HEX, gz), nz = unhex(ZLIB_HEX, zl);
	struct tf_reader *r = tf_reader_new();
	const uint8_t *d;
	size_t len;
	CHECK_STATUS(tf_reader_open_mem(r, gz, ng, "g", TF_COMPRESS_AUTO),
	             TF_OK, r);
	CHECK_STATUS(tf_reader_next(r, &d, &len), TF_OK, r);
	CHECK_EQ_INT(len, 53);
	CHECK_MEM(d, framed + 12, 53);
	CHECK_EQ_INT(tf_reader_compression(r), TF_COMPRESS_GZIP);
	CHECK_STATUS(tf_reader_next(r, &d, &len), TF_EOF, r);
	CHECK_STATUS(tf_reader_open_mem(r, zl, nz, "z", TF_COMPRESS_ZLIB),
	             TF_OK, r);
	CHECK_STATUS(tf_reader_next(r, &d, &len), TF_OK, r);
	CHECK_MEM(d, framed + 12, 53);
	/* Auto-detection finds zlib too. */
	CHECK_EQ_INT(read_all(zl, nz, TF_COMPRESS_AUTO, r), 1);
	CHECK_EQ_INT(tf_reader_compression(r), TF_COMPRESS_ZLIB);
	/* A plain file is not mistaken for a compressed one. */
	CHECK_EQ_INT(read_all(framed, 69, TF_COMPRESS_AUTO, r), 1);
	CHECK_EQ_INT(tf_reader_compression(r), TF_COMPRESS_NONE);
	/* Two gzip members back to back: two records. */
	unsigned char two[200];
	memcpy(two, gz, ng);
	memcpy(two + ng, gz, ng);
	CHECK_EQ_INT(read_all(two, 2 * ng, TF_COMPRESS_GZIP, r), 2);
	/* A cut gzip stream is a data error naming inflate. */
	CHECK_EQ_INT(read_all(gz, ng - 20, TF_COMPRESS_GZIP, r), -TF_EFORMAT);
	CHECK_CONTAINS(tf_errmsg(r), "inflate");
	tf_reader_free(r);
}

TEST(damage_cases)
{
	struct tf_reader *r = tf_reader_new();
	unsigned char b[200];
	/* Empty file: zero records. */
	CHECK_EQ_INT(read_all(b, 0, TF_COMPRESS_NONE, r), 0);
	/* Truncated to 68 bytes. */
	CHECK_EQ_INT(read_all(framed, 68, TF_COMPRESS_NONE, r), -TF_EFORMAT);
	CHECK_CONTAINS(tf_errmsg(r), "truncated record at 0");
	CHECK_CONTAINS(tf_errmsg(r), "Is this even a TFRecord file?");
	CHECK_CONTAINS(tf_errmsg(r), "t.tfrecord");
	/* Five stray bytes after one good record. */
	memcpy(b, framed, 69);
	memcpy(b + 69, "abcde", 5);
	CHECK_EQ_INT(read_all(b, 74, TF_COMPRESS_NONE, r), -TF_EFORMAT);
	CHECK_EQ_INT(tf_reader_count(r), 1);
	CHECK_CONTAINS(tf_errmsg(r), "record 1: truncated record at 69");
	/* A flipped length byte. */
	for (int i = 0; i < 12; i++) {
		memcpy(b, framed, 69);
		b[i] ^= 0x40;
		CHECK_EQ_INT(read_all(b, 69, TF_COMPRESS_NONE, r), -TF_EFORMAT);
		CHECK_CONTAINS(tf_errmsg(r), "corrupted record at 0");
	}
	/* A flipped data or data-CRC byte. */
	for (int i = 12; i < 69; i++) {
		memcpy(b, framed, 69);
		b[i] ^= 0x01;
		CHECK_EQ_INT(read_all(b, 69, TF_COMPRESS_NONE, r), -TF_EFORMAT);
		CHECK_CONTAINS(tf_errmsg(r), "corrupted record at 12");
	}
	/* The second record damaged: its own offset, and no hint. */
	memcpy(b, framed, 69);
	memcpy(b + 69, framed, 69);
	b[69 + 20] ^= 1;
	CHECK_EQ_INT(read_all(b, 138, TF_COMPRESS_NONE, r), -TF_EFORMAT);
	CHECK_CONTAINS(tf_errmsg(r), "record 1: corrupted record at 81");
	CHECK(strstr(tf_errmsg(r), "Is this") == NULL);
	tf_reader_free(r);
}

TEST(record_ceiling)
{
	struct tf_reader *r = tf_reader_new();
	unsigned char b[64];
	/* A header claiming 2^40 bytes with a valid length CRC. */
	tfi_put_le64(b, (uint64_t)1 << 40);
	tfi_put_le32(b + 8, tf_crc32c_mask(tf_crc32c(b, 8)));
	CHECK_EQ_INT(read_all(b, 12, TF_COMPRESS_NONE, r), -TF_ETOOBIG);
	CHECK_CONTAINS(tf_errmsg(r), "record size too large");
	tf_reader_set_max_record(r, 10);
	CHECK_EQ_INT(read_all(framed, 69, TF_COMPRESS_NONE, r), -TF_ETOOBIG);
	tf_reader_free(r);
}

TEST(skip_corrupt)
{
	struct tf_reader *r = tf_reader_new();
	tf_reader_set_skip_corrupt(r, 1);
	unsigned char b[69 * 4 + 5];
	for (int i = 0; i < 4; i++) {
		memcpy(b + 69 * i, framed, 69);
	}
	b[69 + 30] ^= 1;    /* record 1: data damaged */
	b[69 * 2 + 3] ^= 1; /* record 2: length damaged */
	memcpy(b + 69 * 4, "junk!", 5);
	CHECK_EQ_INT(read_all(b, sizeof b, TF_COMPRESS_NONE, r), 2);
	CHECK_EQ_INT(tf_reader_skipped(r), 3);
	CHECK_CONTAINS(tf_reader_skip_log(r), "corrupted record at 81");
	CHECK_CONTAINS(tf_reader_skip_log(r), "corrupted record at 138");
	CHECK_CONTAINS(tf_reader_skip_log(r), "truncated record at 276");
	tf_reader_free(r);
}

TEST(writer_round_trip)
{
	int comps[] = {TF_COMPRESS_NONE, TF_COMPRESS_GZIP, TF_COMPRESS_ZLIB};
	struct tf_writer *w = tf_writer_new();
	struct tf_reader *r = tf_reader_new();
	char *big = malloc(3 << 20);
	for (size_t i = 0; i < (3u << 20); i++) {
		big[i] = (char)(i * 31 + (i >> 9));
	}
	for (int c = 0; c < 3; c++) {
		const char *path = tmp("rt.tfrecord");
		unlink(path);
		CHECK_STATUS(tf_writer_open(w, path, comps[c], TF_WRITER_SYNC),
		             TF_OK, w);
		/* Nothing at the final name until close. */
		CHECK(access(path, F_OK) != 0);
		for (int i = 0; i < 1000; i++) {
			char rec[32];
			int n = snprintf(rec, sizeof rec, "record %d", i);
			CHECK_STATUS(tf_writer_write(w, rec, (size_t)n), TF_OK,
			             w);
		}
		CHECK_STATUS(tf_writer_write(w, big, 3u << 20), TF_OK, w);
		CHECK_STATUS(tf_writer_close(w), TF_OK, w);
		CHECK_EQ_INT(tf_writer_count(w), 1001);
		CHECK(access(path, F_OK) == 0);
		CHECK_STATUS(tf_reader_open(r, path, TF_COMPRESS_AUTO), TF_OK,
		             r);
		const uint8_t *d;
		size_t n;
		int k = 0;
		while (tf_reader_next(r, &d, &n) == TF_OK) {
			if (k < 1000) {
				char rec[32];
				int m =
				    snprintf(rec, sizeof rec, "record %d", k);
				if ((size_t)m != n || memcmp(d, rec, n) != 0) {
					FAILF("record %d differs", k);
					break;
				}
			} else {
				CHECK_EQ_INT(n, 3u << 20);
				CHECK(memcmp(d, big, n) == 0);
			}
			k++;
		}
		CHECK_EQ_INT(k, 1001);
		CHECK_EQ_INT(tf_reader_compression(r), comps[c]);
	}
	/* A writer freed without close leaves nothing behind. */
	CHECK_STATUS(tf_writer_open(w, tmp("gone.tfrecord"), 0, 0), TF_OK, w);
	tf_writer_write(w, "x", 1);
	tf_writer_free(w);
	CHECK(access(tmp("gone.tfrecord"), F_OK) != 0);
	/* An unwritable place is TF_ECREATE with the name. */
	w = tf_writer_new();
	CHECK_STATUS(tf_writer_open(w, "/nonexistent/dir/x.tfrecord", 0, 0),
	             TF_ECREATE, w);
	CHECK_CONTAINS(tf_errmsg(w), "/nonexistent/dir/x.tfrecord");
	tf_writer_free(w);
	/* A missing input is TF_ENOENT. */
	CHECK_STATUS(tf_reader_open(r, tmp("missing"), 0), TF_ENOENT, r);
	tf_reader_free(r);
	free(big);
}

TEST(writer_matches_tensorflow_gzip_content)
{
	/* Our gzip output decompresses to the same framed bytes. */
	struct tf_writer *w = tf_writer_new();
	char path[600];
	snprintf(path, sizeof path, "%s", tmp("one.tfrecord.gz"));
	CHECK_STATUS(tf_writer_open(w, path, TF_COMPRESS_GZIP, 0), TF_OK, w);
	CHECK_STATUS(tf_writer_write(w, framed + 12, 53), TF_OK, w);
	CHECK_STATUS(tf_writer_close(w), TF_OK, w);
	tf_writer_free(w);
	char cmd[1400];
	snprintf(cmd, sizeof cmd, "gzip -dc '%s' > '%s'", path,
	         tmp("one.plain"));
	REQUIRE(system(cmd) == 0);
	FILE *f = fopen(tmp("one.plain"), "rb");
	unsigned char got[100];
	size_t n = fread(got, 1, sizeof got, f);
	fclose(f);
	CHECK_EQ_INT(n, 69);
	CHECK_MEM(got, framed, 69);
	write_file(tmp("x"), "", 0);
}

/* A followed file: its end for now is TF_EAGAIN, a half-written record
 * is read once whole, a pipe's close is the end, a truncated file is read
 * again from its start. */
TEST(follow)
{
	const char *path = tmp("grow");
	write_file(path, framed, 30); /* a record and a half-written one */
	struct tf_reader *r = tf_reader_new();
	tf_reader_set_follow(r, 5);
	CHECK_EQ_INT(tf_reader_open(r, path, TF_COMPRESS_AUTO), TF_OK);
	const uint8_t *d;
	size_t n;
	CHECK_EQ_INT(tf_reader_next(r, &d, &n), TF_EAGAIN);
	CHECK_EQ_INT(tf_reader_count(r), 0);
	FILE *f = fopen(path, "ab");
	fwrite(framed + 30, 1, sizeof framed - 30, f);
	fwrite(framed, 1, 10, f); /* the next one's first bytes */
	fclose(f);
	CHECK_EQ_INT(tf_reader_next(r, &d, &n), TF_OK);
	CHECK_EQ_INT(n, 53);
	CHECK_EQ_INT(tf_reader_next(r, &d, &n), TF_EAGAIN);
	f = fopen(path, "ab");
	fwrite(framed + 10, 1, sizeof framed - 10, f);
	fclose(f);
	CHECK_EQ_INT(tf_reader_next(r, &d, &n), TF_OK);
	CHECK_EQ_INT(tf_reader_offset(r), 69);
	CHECK_EQ_INT(tf_reader_next(r, &d, &n), TF_EAGAIN);
	/* truncated to one record: read again from its start */
	write_file(path, framed, sizeof framed);
	CHECK_EQ_INT(tf_reader_next(r, &d, &n), TF_EAGAIN);
	CHECK_EQ_INT(tf_reader_next(r, &d, &n), TF_OK);
	CHECK_EQ_INT(tf_reader_offset(r), 0);
	CHECK_EQ_INT(tf_reader_count(r), 3);
	/* a pipe: nothing yet, then a record, then its writer's close */
	int fds[2];
	CHECK(pipe(fds) == 0);
	CHECK_EQ_INT(tf_reader_open_fd(r, fds[0], "pipe", TF_COMPRESS_AUTO),
	             TF_OK);
	CHECK_EQ_INT(tf_reader_next(r, &d, &n), TF_EAGAIN);
	CHECK(write(fds[1], framed, sizeof framed) == (ssize_t)sizeof framed);
	close(fds[1]);
	CHECK_EQ_INT(tf_reader_next(r, &d, &n), TF_OK);
	CHECK_EQ_INT(tf_reader_next(r, &d, &n), TF_EOF);
	close(fds[0]);
	tf_reader_free(r);
}

/* The queue: appends rotate segments, a reader follows them as one
 * stream, a torn tail is cut off on opening, release deletes segments
 * before an offset, a seek goes back into a segment. */
TEST(queue)
{
	char dir[512];
	snprintf(dir, sizeof dir, "%s", tmp("queue"));
	struct tf_queue *q = tf_queue_new();
	uint64_t dropped = 9;
	CHECK_EQ_INT(tf_queue_open(q, dir, 100, &dropped), TF_OK);
	CHECK_EQ_INT(dropped, 0);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ_INT(tf_queue_append(q, framed, sizeof framed), TF_OK);
	}
	uint64_t segs;
	CHECK_EQ_INT(tf_queue_depth(dir, &segs), 3 * 69);
	CHECK_EQ_INT(segs, 3);
	struct tf_reader *r = tf_reader_new();
	tf_reader_set_follow(r, 5);
	CHECK_EQ_INT(tf_reader_open(r, dir, TF_COMPRESS_AUTO), TF_OK);
	const uint8_t *d;
	size_t n;
	for (int i = 0; i < 3; i++) {
		CHECK_EQ_INT(tf_reader_next(r, &d, &n), TF_OK);
		CHECK_EQ_INT(n, 53);
		CHECK_EQ_INT(tf_reader_offset(r), (uint64_t)i << 40);
	}
	CHECK_EQ_INT(tf_reader_next(r, &d, &n), TF_EAGAIN);
	/* a crashed writer's torn tail: cut off when the queue opens again,
	 * and never joined by the reader to what is appended after */
	char path[600];
	snprintf(path, sizeof path, "%s/00000000000000000002.tfrecord", dir);
	FILE *f = fopen(path, "ab");
	fwrite(framed, 1, 30, f);
	fclose(f);
	CHECK_EQ_INT(tf_reader_next(r, &d, &n), TF_EAGAIN);
	tf_queue_free(q);
	q = tf_queue_new();
	CHECK_EQ_INT(tf_queue_open(q, dir, 100, &dropped), TF_OK);
	CHECK_EQ_INT(dropped, 30);
	CHECK_EQ_INT(tf_queue_append(q, framed, sizeof framed), TF_OK);
	CHECK_EQ_INT(tf_reader_next(r, &d, &n), TF_OK);
	CHECK_EQ_INT(n, 53);
	CHECK_EQ_INT(tf_reader_offset(r), (uint64_t)3 << 40);
	/* released up to the third record's segment: two gone */
	uint64_t gone;
	CHECK_EQ_INT(tf_queue_release(dir, (uint64_t)2 << 40, &gone), TF_OK);
	CHECK_EQ_INT(gone, 2);
	CHECK_EQ_INT(tf_queue_depth(dir, &segs), 2 * 69);
	/* a reader seeks back to a checkpoint's place */
	struct tf_reader *r2 = tf_reader_new();
	tf_reader_set_follow(r2, 5);
	CHECK_EQ_INT(tf_reader_open(r2, dir, TF_COMPRESS_AUTO), TF_OK);
	CHECK_EQ_INT(tf_reader_seek(r2, (uint64_t)3 << 40, 3), TF_OK);
	CHECK_EQ_INT(tf_reader_next(r2, &d, &n), TF_OK);
	CHECK_EQ_INT(tf_reader_offset(r2), (uint64_t)3 << 40);
	CHECK_EQ_INT(tf_reader_next(r2, &d, &n), TF_EAGAIN);
	/* a released segment cannot be sought */
	CHECK_EQ_INT(tf_reader_seek(r2, 0, 0), TF_ENOENT);
	tf_reader_free(r2);
	tf_reader_free(r);
	tf_queue_free(q);
}

/* A writer appending to a queue of small segments while a reader follows
 * it: every record read whole and in order, across every segment switch
 * (the reader catching up with the writer again and again). */
static void *
queue_writer(void *dir)
{
	struct tf_queue *q = tf_queue_new();
	uint64_t dropped;
	if (tf_queue_open(q, dir, 4000, &dropped) != TF_OK) {
		abort();
	}
	/* 300 appends of 7 records of 100 bytes, each numbered */
	static uint8_t batch[7 * 116];
	uint8_t data[100] = {0};
	for (uint32_t i = 0; i < 300; i++) {
		for (uint32_t k = 0; k < 7; k++) {
			uint32_t seq = i * 7 + k;
			memcpy(data, &seq, sizeof seq);
			tf_record_frame(batch + k * 116, data, 100);
		}
		if (tf_queue_append(q, batch, sizeof batch) != TF_OK) {
			abort();
		}
		usleep(200);
	}
	tf_queue_free(q);
	return NULL;
}

TEST(queue_followed_while_written)
{
	char dir[512];
	snprintf(dir, sizeof dir, "%s", tmp("queue2"));
	struct tf_queue *q = tf_queue_new();
	uint64_t dropped;
	CHECK_EQ_INT(tf_queue_open(q, dir, 4000, &dropped), TF_OK);
	tf_queue_free(q);
	pthread_t t;
	REQUIRE(pthread_create(&t, NULL, queue_writer, dir) == 0);
	struct tf_reader *r = tf_reader_new();
	tf_reader_set_follow(r, 1);
	CHECK_EQ_INT(tf_reader_open(r, dir, TF_COMPRESS_AUTO), TF_OK);
	const uint8_t *d;
	size_t n;
	uint32_t got = 0, bad = 0;
	while (got < 300 * 7) {
		int rc = tf_reader_next(r, &d, &n);
		if (rc == TF_EAGAIN) {
			continue;
		}
		if (rc != TF_OK) {
			FAILF("record %u: %s", got, tf_errmsg(r));
			break;
		}
		uint32_t seq;
		memcpy(&seq, d, sizeof seq);
		bad += n != 100 || seq != got;
		got++;
	}
	pthread_join(t, NULL);
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_INT(got, 300 * 7);
	tf_reader_free(r);
}

int
main(void)
{
	snprintf(tmpdir, sizeof tmpdir, "%s/tfrec.XXXXXX",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	RUN(frame_vectors);
	RUN(read_compressed_vectors);
	RUN(damage_cases);
	RUN(record_ceiling);
	RUN(skip_corrupt);
	RUN(writer_round_trip);
	RUN(writer_matches_tensorflow_gzip_content);
	RUN(follow);
	RUN(queue);
	RUN(queue_followed_while_written);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	system(cmd);
	DONE();
}
