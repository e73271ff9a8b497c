/*
 * Fuzz target: a queue segment as a crash or a disk left it, opened for
 * appending (tf_queue_open(): a tail that holds no whole record is cut
 * off, damage within refused).  Opening never crashes; an open queue
 * keeps the segment's whole records, takes an append, and opens again
 * with nothing to cut off.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[64];
	if (dir[0] == '\0') {
		snprintf(dir, sizeof dir, "/tmp/fuzz-queue.XXXXXX");
		if (mkdtemp(dir) == NULL) {
			abort();
		}
	}
	char path[128];
	snprintf(path, sizeof path, "%s/00000000000000000000.tfrecord", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/00000000000000000001.tfrecord", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/00000000000000000000.tfrecord", dir);
	FILE *f = fopen(path, "wb");
	if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
		abort();
	}
	struct tf_queue *q = tf_queue_new();
	uint64_t dropped;
	int rc = tf_queue_open(q, dir, 1 << 20, &dropped);
	if (rc != TF_OK) {
		if (rc != TF_EFORMAT) {
			abort();
		}
		tf_queue_free(q);
		return 0;
	}
	struct stat st;
	if (stat(path, &st) != 0 || (uint64_t)st.st_size + dropped != size) {
		abort();
	}
	uint8_t rec[21];
	tf_record_frame(rec, "hello", 5);
	if (tf_queue_append(q, rec, sizeof rec) != TF_OK) {
		abort();
	}
	tf_queue_free(q);
	q = tf_queue_new();
	if (tf_queue_open(q, dir, 1 << 20, &dropped) != TF_OK || dropped != 0) {
		abort();
	}
	tf_queue_free(q);
	return 0;
}
