/*
 * rowmap.c - a batch's rows: an open-addressed map of the table rows a
 * batch's ids name (a row's offset in the parameters) to their place in
 * the order met, sized for the batch's ids so that it stays in the
 * cache where a mark per table row (megabytes) would not.  A new batch
 * starts it again empty by a generation, not by clearing it.  train.c
 * lists a row-sparse step's rows with it, linear.c gives each row its
 * place in a sparse lr's list; the lookup is tfi_rowmap_place()
 * (internal.h, inline: it runs for every id).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int
tfi_rowmap_start(struct tfi_rowmap *m, size_t n)
{
	size_t cap = 1024;
	int bits = 10;
	while (cap < 2 * n) {
		cap *= 2;
		bits++;
	}
	if (cap > m->cap) {
		struct tfi_place *p = calloc(cap, sizeof *p);
		if (p == NULL) {
			return -1;
		}
		free(m->p);
		m->p = p;
		m->cap = cap;
		m->bits = bits;
		m->gen = 0;
	}
	if (++m->gen == 0) {
		memset(m->p, 0, m->cap * sizeof *m->p);
		m->gen = 1;
	}
	return 0;
}

void
tfi_rowmap_release(struct tfi_rowmap *m)
{
	free(m->p);
	memset(m, 0, sizeof *m);
}
