/*
 * idset.c - sets of 64-bit ids, each numbered in the order it was added:
 * a model's id vocabulary (an id's table row), and the vocabulary's text
 * in the schema.  Open addressing with linear probing,
 * the table kept at most half full; a slot's row + 1 beside its id, 0
 * when the slot is empty, so every id of 2^64 can be a member.
 */
#include <stdlib.h>

#include "internal.h"

static int
grow(struct tfi_idset *s)
{
	uint64_t cap = s->slot != NULL ? (s->mask + 1) * 2 : 1024;
	if (cap > ((uint64_t)1 << 40) || cap > SIZE_MAX / sizeof *s->slot) {
		return -1;
	}
	struct tfi_idslot *t = calloc((size_t)cap, sizeof *t);
	if (t == NULL) {
		return -1;
	}
	for (uint64_t i = 0; s->slot != NULL && i <= s->mask; i++) {
		const struct tfi_idslot *e = &s->slot[i];
		if (e->row1 == 0) {
			continue;
		}
		uint64_t h = tfi_mix64(e->id) & (cap - 1);
		while (t[h].row1 != 0) {
			h = (h + 1) & (cap - 1);
		}
		t[h] = *e;
	}
	free(s->slot);
	s->slot = t;
	s->mask = cap - 1;
	return 0;
}

int
tfi_idset_add(struct tfi_idset *s, uint64_t id)
{
	if ((s->slot == NULL || 2 * (s->n + 1) > s->mask + 1) && grow(s) != 0) {
		return -1;
	}
	uint64_t h = tfi_mix64(id) & s->mask;
	for (; s->slot[h].row1 != 0; h = (h + 1) & s->mask) {
		if (s->slot[h].id == id) {
			return 0;
		}
	}
	s->slot[h].id = id;
	s->slot[h].row1 = ++s->n;
	return 1;
}

void
tfi_idset_free(struct tfi_idset *s)
{
	free(s->slot);
	s->slot = NULL;
	s->mask = 0;
	s->n = 0;
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
