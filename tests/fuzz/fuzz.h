/*
 * fuzz.h - what the fuzz targets share: the input as a file (for loaders
 * that take a path); for those that need the op plugins, the registry,
 * loaded once, and the small export of tests/fuzz/model (or
 * $TFKIT_FUZZ_MODEL), loaded once.  A set-up that fails aborts: the
 * target cannot run.
 */
#ifndef TF_FUZZ_H
#define TF_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tf/tf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a file, for loaders that take a path: a memory file
 * (made once), its /proc/self/fd path. */
static inline const char *
fuzz_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	if (fd < 0) {
		fd = memfd_create("fuzz-input", 0);
		if (fd < 0) {
			abort();
		}
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) != 0 ||
	    pwrite(fd, data, size, 0) != (ssize_t)size) {
		abort();
	}
	return path;
}

static inline struct tf_registry *
fuzz_registry(void)
{
	static struct tf_registry *reg;
	if (reg == NULL) {
		reg = tf_registry_new();
		if (reg == NULL || tf_registry_load(reg) != TF_OK) {
			abort();
		}
	}
	return reg;
}

static inline struct tf_model *
fuzz_model(void)
{
	static struct tf_model *model;
	if (model == NULL) {
		const char *path = getenv("TFKIT_FUZZ_MODEL");
		model = tf_model_new();
		if (model == NULL ||
		    tf_model_load(model, fuzz_registry(),
		                  path ? path : "tests/fuzz/model") != TF_OK) {
			fprintf(stderr, "fuzz: %s\n",
			        model ? tf_errmsg(model) : "out of memory");
			abort();
		}
	}
	return model;
}

/* An export loaded once into *slot (abort when it does not load). */
static inline struct tf_model *
fuzz_load(struct tf_model **slot, const char *path)
{
	if (*slot == NULL &&
	    ((*slot = tf_model_new()) == NULL ||
	     tf_model_load(*slot, fuzz_registry(), path) != TF_OK)) {
		fprintf(stderr, "fuzz: %s: %s\n", path,
		        *slot ? tf_errmsg(*slot) : "out of memory");
		abort();
	}
	return *slot;
}

/* A model of sparse ids (tests/fuzz/model-sparse: heart_scale's ids as a
 * bag, {"ids": [...], "values": [...]}), loaded once. */
static inline struct tf_model *
fuzz_sparse_model(void)
{
	static struct tf_model *model;
	return fuzz_load(&model, "tests/fuzz/model-sparse");
}

/* A model of a sequence (tests/fuzz/model-seq: a gru over sessions'
 * pages, tokens of varying length, and a numeric "user"), loaded once. */
static inline struct tf_model *
fuzz_seq_model(void)
{
	static struct tf_model *model;
	return fuzz_load(&model, "tests/fuzz/model-seq");
}

#endif
