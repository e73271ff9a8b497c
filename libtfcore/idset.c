/*
 * idset.c - sets of 64-bit ids, each numbered in the order it was added:
 * a model's id vocabulary (an id's table row), and the vocabulary's text
 * in the schema.  Open addressing with linear probing, the table kept
 * at most two thirds full, of any size (an id's home slot is its hash
 * scaled to the size, not masked); a slot is 12 bytes, the id's halves
 * and its row + 1 (0 when the slot is empty, so every id of 2^64 can be
 * a member): a vocabulary of a million ids in 17 MB, not the 32 of
 * 16-byte slots in a power of two.
 */
#include <stdlib.h>

#include "internal.h"
#include "tf/columns.h"

/* The set moved into cap slots. */
static int
grow(struct tfi_idset *s, uint64_t cap)
{
	if (cap > ((uint64_t)1 << 32) || cap > SIZE_MAX / 12) {
		return -1;
	}
	struct tfi_idset t = {tfi_table_alloc((size_t)cap * 12), cap, 0};
	if (t.slot == NULL) {
		return -1;
	}
	for (uint64_t i = 0; i < s->cap; i++) {
		const uint32_t *e = &s->slot[3 * i];
		if (e[2] != 0) {
			memcpy(tfi_idset_probe(&t, (uint64_t)e[1] << 32 | e[0]),
			       e, 12);
		}
	}
	free(s->slot);
	s->slot = t.slot;
	s->cap = cap;
	return 0;
}

int
tfi_idset_reserve(struct tfi_idset *s, size_t n)
{
	/* two thirds full once they are there */
	return 3 * (uint64_t)n > 2 * s->cap ? grow(s, (uint64_t)n * 3 / 2 + 1)
	                                    : 0;
}

int
tfi_idset_add(struct tfi_idset *s, uint64_t id)
{
	if (3 * ((uint64_t)s->n + 1) > 2 * s->cap &&
	    grow(s, s->cap < 512 ? 1024 : 2 * s->cap) != 0) {
		return -1;
	}
	uint32_t *e = tfi_idset_probe(s, id);
	if (e[2] != 0) {
		return 0;
	}
	e[0] = (uint32_t)id;
	e[1] = (uint32_t)(id >> 32);
	e[2] = (uint32_t)++s->n;
	return 1;
}

void
tfi_idset_ids(const struct tfi_idset *s, uint64_t *out)
{
	for (uint64_t i = 0; i < s->cap; i++) {
		const uint32_t *e = s->slot + 3 * i;
		if (e[2] != 0) {
			out[e[2] - 1] = (uint64_t)e[1] << 32 | e[0];
		}
	}
}

void
tfi_idset_free(struct tfi_idset *s)
{
	free(s->slot);
	s->slot = NULL;
	s->cap = 0;
	s->n = 0;
}

int
tfi_id_vocab_wanted(uint64_t max_index, size_t n)
{
	return n > 0 && n <= TFI_ID_VOCAB_MAX &&
	       max_index >= TF_DENSE_IDS_MAX && max_index / 4 >= n;
}

/* The vocabulary's text: each id's difference from the one before (the
 * first's from 0) as a varint, in base64. */
int
tfi_id_vocab_put(struct tfi_buf *b, const uint64_t *ids, size_t n)
{
	struct tfi_buf v = {0};
	if (tfi_buf_reserve(&v, n * 10 + 1) != TF_OK) {
		return TF_ENOMEM;
	}
	uint64_t prev = 0;
	for (size_t i = 0; i < n; i++) {
		v.len = (size_t)(tfi_put_varint(v.data + v.len, ids[i] - prev) -
		                 v.data);
		prev = ids[i];
	}
	size_t len = (v.len + 2) / 3 * 4;
	int rc = tfi_buf_reserve(b, len + 1);
	if (rc == TF_OK) {
		tfi_base64_encode((char *)b->data + b->len, v.data, v.len);
		b->len += len;
		b->data[b->len] = '\0';
	}
	tfi_buf_free(&v);
	return rc;
}

int
tfi_id_vocab_get(const char *s, size_t len, size_t count, uint64_t **ids,
                 const char **why)
{
	struct tfi_buf v = {0};
	*ids = NULL;
	int bad = tfi_base64_decode(&v, s, len);
	if (bad < 0) {
		return TF_ENOMEM;
	}
	/* each id takes a byte at least: count is checked against the
	 * text before it sizes anything */
	if (bad || count == 0 || count > TFI_ID_VOCAB_MAX || count > v.len) {
		tfi_buf_free(&v);
		*why = bad ? "is not base64 text"
		           : "does not hold as many ids as id_count says "
		             "(1 to 4194304)";
		return TF_EFORMAT;
	}
	uint64_t *out = malloc(count * sizeof *out);
	if (out == NULL) {
		tfi_buf_free(&v);
		return TF_ENOMEM;
	}
	const uint8_t *p = v.data, *end = v.data + v.len;
	uint64_t prev = 0;
	size_t k = 0;
	*why = NULL;
	while (p < end && *why == NULL) {
		uint64_t d;
		if (!tfi_get_varint(&p, end, &d)) {
			*why = "holds a malformed varint";
		} else if (k == count) {
			*why = "holds more ids than id_count says";
		} else if ((k > 0 && d == 0) || d > UINT64_MAX - prev) {
			*why = "is not of ids in increasing order";
		} else {
			prev += d;
			out[k++] = prev;
		}
	}
	if (*why == NULL && k != count) {
		*why = "holds fewer ids than id_count says";
	}
	tfi_buf_free(&v);
	if (*why != NULL) {
		free(out);
		return TF_EFORMAT;
	}
	*ids = out;
	return TF_OK;
}
