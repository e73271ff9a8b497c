/*
 * tap.h - the TAP output tests/gpu's programs share: RUN(test) prints
 * "ok N - test" or "not ok N - test" by whether FAILF (or cur_failed++)
 * was reached in it (RUN_NAMED(fn, "name") for a test found in a
 * table); main prints the plan and exits non-zero on any failure.
 */
#ifndef TF_GPU_TAP_H
#define TF_GPU_TAP_H

#include <stdio.h>

static int ntests, nfailed, cur_failed;

#define FAILF(...)                                                             \
	do {                                                                   \
		printf("# ");                                                  \
		printf(__VA_ARGS__);                                           \
		printf("\n");                                                  \
		cur_failed++;                                                  \
	} while (0)

#define RUN_NAMED(fn, name)                                                    \
	do {                                                                   \
		cur_failed = 0;                                                \
		fn();                                                          \
		ntests++;                                                      \
		nfailed += cur_failed > 0;                                     \
		printf("%sok %d - %s\n", cur_failed ? "not " : "", ntests,     \
		       name);                                                  \
		fflush(stdout);                                                \
	} while (0)
#define RUN(name) RUN_NAMED(name, #name)

#endif
