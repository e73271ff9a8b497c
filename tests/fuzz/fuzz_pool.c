/*
 * Fuzz target: the pool of chunks as a checkpoint holds it (pool.c, the
 * JSON under the header's "pool", given to ps 0 at INIT).  The input is
 * the JSON text; a pool that parses is then driven as ps 0 drives it:
 * trainers take chunks, report rows applied (their own, and made up),
 * give back, and the pool is written out again, and that text parses.
 * Nothing crashes, and a refusal says why.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../libtfcore/pool.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (text == NULL) {
		abort();
	}
	memcpy(text, data, size);
	text[size] = '\0';
	char err[300] = "";
	struct tfi_pool *p = tfi_pool_parse(text, 3, err, sizeof err);
	free(text);
	if (p == NULL) {
		if (err[0] == '\0') {
			abort(); /* refused without saying why */
		}
		return 0;
	}
	unsigned char gone[3] = {0, 0, 1};
	for (int round = 0; round < 40; round++) {
		uint32_t w = (uint32_t)round % 3;
		struct tfi_chunk c;
		int r = tfi_pool_take(p, w, gone, round & 1, &c);
		if (r == TFI_TAKE_CHUNK) {
			if (c.count == 0 || c.skip > c.count) {
				abort();
			}
			/* half the chunk applied, then a made-up span */
			uint64_t spans[6] = {c.epoch,           c.index,
			                     (c.count + 1) / 2, c.epoch + 1,
			                     c.index ^ 1,       7};
			tfi_pool_applied(p, w, spans, 2);
		} else if (r == TFI_TAKE_NOMEM) {
			abort();
		}
		if (round % 7 == 6) {
			char what[200];
			tfi_pool_give_back(p, w, what, sizeof what);
		}
	}
	char *j = tfi_pool_json(p);
	char *s = tfi_pool_status(p);
	if (j == NULL || s == NULL) {
		abort();
	}
	struct tfi_pool *again = tfi_pool_parse(j, 3, err, sizeof err);
	if (again == NULL || !tfi_pool_same_plan(p, again)) {
		abort(); /* what it wrote, it reads */
	}
	tfi_pool_free(again);
	free(j);
	free(s);
	tfi_pool_free(p);
	return 0;
}
