/*
 * example.c - tf.train.Example in memory, its encoder, a fast decoder and
 * the protobuf-c reference decoder.
 *
 * Storage: features are records in `feats`; names, bytes values, floats and
 * ints live in pools addressed by offset, so the pools can grow while an
 * example is built.  Views handed out by tf_example_get() are computed from
 * the offsets, and are valid until the example changes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example.pb-c.h"
#include "internal.h"
#include "tf/example.h"

struct feat {
	size_t name_off, name_len;
	int kind;
	size_t count;
	size_t val_off; /* index into the pool of its kind */
	size_t steps;   /* a SequenceExample's feature list: its steps */
	int list;       /* one of its feature lists, not a feature */
};

struct boff {
	size_t off, len;
};

struct tf_example {
	struct tfi_handle err;
	struct feat *feats;
	size_t n, cap;
	struct tfi_buf chars;  /* names (NUL-terminated) and bytes values */
	struct tfi_buf floats; /* float[] */
	struct tfi_buf ints;   /* int64_t[] */
	struct tfi_buf boffs;  /* struct boff[] */
	struct tfi_buf bviews; /* struct tf_bytes[], rebuilt on demand */
	int views_stale;
	int in_order;  /* names were added in increasing order */
	size_t *order; /* sorted order for encoding */
	size_t order_cap;
	struct tfi_buf enc;
};

const char *
tf_kind_name(int kind)
{
	switch (kind) {
	case TF_KIND_BYTES:
		return "bytes";
	case TF_KIND_FLOAT:
		return "float";
	case TF_KIND_INT64:
		return "int64";
	default:
		return "none";
	}
}

struct tf_example *
tf_example_new(void)
{
	return calloc(1, sizeof(struct tf_example));
}

void
tf_example_free(struct tf_example *ex)
{
	if (ex == NULL) {
		return;
	}
	free(ex->feats);
	free(ex->order);
	tfi_buf_free(&ex->chars);
	tfi_buf_free(&ex->floats);
	tfi_buf_free(&ex->ints);
	tfi_buf_free(&ex->boffs);
	tfi_buf_free(&ex->bviews);
	tfi_buf_free(&ex->enc);
	free(ex);
}

void
tf_example_clear(struct tf_example *ex)
{
	ex->n = 0;
	ex->chars.len = ex->floats.len = ex->ints.len = ex->boffs.len = 0;
	ex->views_stale = 1;
	tf_errclear(ex);
}

size_t
tf_example_count(const struct tf_example *ex)
{
	return ex->n;
}

/* Element k of size bytes in b: NULL while b holds nothing (an empty
 * name or list), never arithmetic on a null pointer. */
static inline void *
buf_at(const struct tfi_buf *b, size_t k, size_t size)
{
	return b->data != NULL ? b->data + k * size : NULL;
}

static const char *
name_at(const struct tf_example *ex, const struct feat *f)
{
	return buf_at(&ex->chars, f->name_off, 1);
}

/* Append a feature record with its name; values are added by the caller. */
static struct feat *
feat_push(struct tf_example *ex, const char *name, size_t len, int kind)
{
	if (ex->n == ex->cap) {
		size_t cap = ex->cap ? ex->cap * 2 : 32;
		struct feat *p = realloc(ex->feats, cap * sizeof *p);
		if (p == NULL) {
			return NULL;
		}
		ex->feats = p;
		ex->cap = cap;
	}
	size_t off = ex->chars.len;
	if (tfi_buf_reserve(&ex->chars, len + 1) != TF_OK) {
		return NULL;
	}
	if (len > 0) {
		memcpy(ex->chars.data + off, name, len);
	}
	ex->chars.data[off + len] = '\0';
	ex->chars.len += len + 1;
	struct feat *f = &ex->feats[ex->n++];
	f->name_off = off;
	f->name_len = len;
	f->kind = kind;
	f->count = 0;
	f->steps = 0;
	f->list = 0;
	f->val_off = kind == TF_KIND_FLOAT ? ex->floats.len / sizeof(float)
	             : kind == TF_KIND_INT64
	                 ? ex->ints.len / sizeof(int64_t)
	                 : ex->boffs.len / sizeof(struct boff);
	ex->views_stale = 1;
	return f;
}

static int
check_new_name(struct tf_example *ex, const char *name)
{
	/* While names arrive in increasing order (the usual case) they are
	 * unique without a search. */
	if (ex->n == 0) {
		ex->in_order = 1;
	}
	if (ex->in_order &&
	    (ex->n == 0 ||
	     strcmp(name_at(ex, &ex->feats[ex->n - 1]), name) < 0)) {
		return TF_OK;
	}
	ex->in_order = 0;
	for (size_t i = 0; i < ex->n; i++) {
		if (strcmp(name_at(ex, &ex->feats[i]), name) == 0) {
			return tfi_set_error(ex, TF_EINVAL,
			                     "feature '%s' added twice", name);
		}
	}
	return TF_OK;
}

/* Add a float or int64 feature holding n values of size bytes each. */
static int
add_numeric(struct tf_example *ex, const char *name, int kind,
            struct tfi_buf *pool, const void *v, size_t n, size_t size)
{
	if (check_new_name(ex, name) != TF_OK) {
		return TF_EINVAL;
	}
	struct feat *f = feat_push(ex, name, strlen(name), kind);
	if (f == NULL || tfi_buf_append(pool, v, n * size) != TF_OK) {
		return tfi_set_error(ex, TF_ENOMEM, "out of memory");
	}
	f->count = n;
	return TF_OK;
}

int
tf_example_add_floats(struct tf_example *ex, const char *name, const float *v,
                      size_t n)
{
	return add_numeric(ex, name, TF_KIND_FLOAT, &ex->floats, v, n,
	                   sizeof *v);
}

int
tf_example_add_int64s(struct tf_example *ex, const char *name, const int64_t *v,
                      size_t n)
{
	return add_numeric(ex, name, TF_KIND_INT64, &ex->ints, v, n, sizeof *v);
}

static int
push_bytes(struct tf_example *ex, const void *p, size_t len)
{
	struct boff b = {ex->chars.len, len};
	if (tfi_buf_append(&ex->chars, p, len) != TF_OK ||
	    tfi_buf_append(&ex->boffs, &b, sizeof b) != TF_OK) {
		return TF_ENOMEM;
	}
	ex->views_stale = 1;
	return TF_OK;
}

int
tf_example_add_bytes(struct tf_example *ex, const char *name,
                     const struct tf_bytes *v, size_t n)
{
	if (check_new_name(ex, name) != TF_OK) {
		return TF_EINVAL;
	}
	struct feat *f = feat_push(ex, name, strlen(name), TF_KIND_BYTES);
	if (f == NULL) {
		return tfi_set_error(ex, TF_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		if (push_bytes(ex, v[i].data, v[i].len) != TF_OK) {
			return tfi_set_error(ex, TF_ENOMEM, "out of memory");
		}
	}
	f->count = n;
	return TF_OK;
}

static int
refresh_views(struct tf_example *ex)
{
	if (!ex->views_stale) {
		return TF_OK;
	}
	size_t nb = ex->boffs.len / sizeof(struct boff);
	ex->bviews.len = 0;
	if (tfi_buf_reserve(&ex->bviews, nb * sizeof(struct tf_bytes) + 1)) {
		return tfi_set_error(ex, TF_ENOMEM, "out of memory");
	}
	const struct boff *b = (const struct boff *)ex->boffs.data;
	struct tf_bytes *v = (struct tf_bytes *)ex->bviews.data;
	for (size_t i = 0; i < nb; i++) {
		v[i].data = buf_at(&ex->chars, b[i].off, 1);
		v[i].len = b[i].len;
	}
	ex->bviews.len = nb * sizeof(struct tf_bytes);
	ex->views_stale = 0;
	return TF_OK;
}

int
tf_example_get(struct tf_example *ex, size_t i, struct tf_feature *out)
{
	if (i >= ex->n) {
		return tfi_set_error(ex, TF_EINVAL, "feature %zu of %zu", i,
		                     ex->n);
	}
	if (refresh_views(ex) != TF_OK) {
		return TF_ENOMEM;
	}
	const struct feat *f = &ex->feats[i];
	memset(out, 0, sizeof *out);
	out->name = name_at(ex, f);
	out->name_len = f->name_len;
	out->kind = f->kind;
	out->count = f->count;
	out->steps = f->steps;
	if (f->kind == TF_KIND_FLOAT) {
		// cppcheck-suppress invalidPointerCast
		out->floats = buf_at(&ex->floats, f->val_off, sizeof(float));
	} else if (f->kind == TF_KIND_INT64) {
		out->ints = buf_at(&ex->ints, f->val_off, sizeof(int64_t));
	} else if (f->kind == TF_KIND_BYTES) {
		out->bytes =
		    buf_at(&ex->bviews, f->val_off, sizeof *out->bytes);
	}
	return TF_OK;
}

int
tf_example_find(struct tf_example *ex, const char *name, struct tf_feature *out)
{
	for (size_t i = 0; i < ex->n; i++) {
		if (strcmp(name_at(ex, &ex->feats[i]), name) == 0) {
			return tf_example_get(ex, i, out);
		}
	}
	return TF_ENOENT;
}

/* ---- encoding -------------------------------------------------------- */

static int
name_cmp(const struct tf_example *ex, const struct feat *a,
         const struct feat *b)
{
	size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
	int c = memcmp(name_at(ex, a), name_at(ex, b), n);
	if (c != 0) {
		return c;
	}
	return a->name_len < b->name_len ? -1 : a->name_len > b->name_len;
}

/* Fill ex->order with the features in key order (insertion sort: n is
 * small and usually already sorted). */
static int
sort_order(struct tf_example *ex)
{
	if (ex->n == 0) {
		return TF_OK;
	}
	if (ex->order_cap < ex->n) {
		size_t *p = realloc(ex->order, ex->cap * sizeof *p);
		if (p == NULL) {
			return TF_ENOMEM;
		}
		ex->order = p;
		ex->order_cap = ex->cap;
	}
	for (size_t i = 0; i < ex->n; i++) {
		size_t j = i;
		while (j > 0 && name_cmp(ex, &ex->feats[ex->order[j - 1]],
		                         &ex->feats[i]) > 0) {
			ex->order[j] = ex->order[j - 1];
			j--;
		}
		ex->order[j] = i;
	}
	return TF_OK;
}

/* Length of the list message inside a Feature. */
static size_t
list_size(const struct tf_example *ex, const struct feat *f)
{
	size_t payload = 0;
	if (f->kind == TF_KIND_FLOAT) {
		payload = f->count * 4;
	} else if (f->kind == TF_KIND_INT64) {
		const int64_t *v = buf_at(&ex->ints, f->val_off, sizeof *v);
		for (size_t i = 0; i < f->count; i++) {
			payload += tfi_varint_size((uint64_t)v[i]);
		}
	} else if (f->kind == TF_KIND_BYTES) {
		const struct boff *b =
		    buf_at(&ex->boffs, f->val_off, sizeof *b);
		for (size_t i = 0; i < f->count; i++) {
			payload += 1 + tfi_varint_size(b[i].len) + b[i].len;
		}
		return payload;
	} else {
		return 0;
	}
	return payload ? 1 + tfi_varint_size(payload) + payload : 0;
}

static size_t
feature_size(size_t list)
{
	return 1 + tfi_varint_size(list) + list;
}

static size_t
entry_size(const struct feat *f, size_t feature)
{
	return 1 + tfi_varint_size(f->name_len) + f->name_len + 1 +
	       tfi_varint_size(feature) + feature;
}

static size_t
features_size(const struct tf_example *ex)
{
	size_t total = 0;
	for (size_t i = 0; i < ex->n; i++) {
		const struct feat *f = &ex->feats[i];
		size_t fs = f->kind == TF_KIND_NONE
		                ? 0
		                : feature_size(list_size(ex, f));
		size_t es = entry_size(f, fs);
		total += 1 + tfi_varint_size(es) + es;
	}
	return total;
}

size_t
tf_example_encoded_size(struct tf_example *ex)
{
	size_t fs = features_size(ex);
	return 1 + tfi_varint_size(fs) + fs;
}

static uint8_t *
encode_feature(const struct tf_example *ex, const struct feat *f, uint8_t *p)
{
	size_t list = list_size(ex, f);
	size_t fs = f->kind == TF_KIND_NONE ? 0 : feature_size(list);
	size_t es = entry_size(f, fs);
	*p++ = 0x0a; /* Features.feature */
	p = tfi_put_varint(p, es);
	*p++ = 0x0a; /* key */
	p = tfi_put_varint(p, f->name_len);
	memcpy(p, name_at(ex, f), f->name_len);
	p += f->name_len;
	*p++ = 0x12; /* value */
	p = tfi_put_varint(p, fs);
	if (f->kind == TF_KIND_NONE) {
		return p;
	}
	*p++ = (uint8_t)(f->kind << 3 | 2); /* bytes 1, float 2, int64 3 */
	p = tfi_put_varint(p, list);
	if (f->kind == TF_KIND_BYTES) {
		const struct boff *b =
		    buf_at(&ex->boffs, f->val_off, sizeof *b);
		for (size_t i = 0; i < f->count; i++) {
			*p++ = 0x0a;
			p = tfi_put_varint(p, b[i].len);
			memcpy(p, ex->chars.data + b[i].off, b[i].len);
			p += b[i].len;
		}
		return p;
	}
	if (list == 0) {
		return p;
	}
	*p++ = 0x0a; /* one packed run */
	if (f->kind == TF_KIND_FLOAT) {
		const float *v = buf_at(&ex->floats, f->val_off, sizeof *v);
		p = tfi_put_varint(p, f->count * 4);
		p = tfi_put_le_floats(p, v, f->count);
	} else {
		const int64_t *v = buf_at(&ex->ints, f->val_off, sizeof *v);
		size_t payload = 0;
		for (size_t i = 0; i < f->count; i++) {
			payload += tfi_varint_size((uint64_t)v[i]);
		}
		p = tfi_put_varint(p, payload);
		for (size_t i = 0; i < f->count; i++) {
			p = tfi_put_varint(p, (uint64_t)v[i]);
		}
	}
	return p;
}

size_t
tf_example_encode(struct tf_example *ex, uint8_t *out)
{
	if (sort_order(ex) != TF_OK) {
		return 0;
	}
	uint8_t *p = out;
	*p++ = 0x0a; /* Example.features */
	p = tfi_put_varint(p, features_size(ex));
	for (size_t i = 0; i < ex->n; i++) {
		p = encode_feature(ex, &ex->feats[ex->order[i]], p);
	}
	return (size_t)(p - out);
}

int
tf_example_serialize(struct tf_example *ex, const uint8_t **out, size_t *n)
{
	size_t size = tf_example_encoded_size(ex);
	ex->enc.len = 0;
	if (tfi_buf_reserve(&ex->enc, size) != TF_OK ||
	    sort_order(ex) != TF_OK) {
		return tfi_set_error(ex, TF_ENOMEM, "out of memory");
	}
	ex->enc.len = tf_example_encode(ex, ex->enc.data);
	if (ex->enc.len != size) {
		return tfi_set_error(ex, TF_EINTERNAL,
		                     "encoded %zu bytes, expected %zu",
		                     ex->enc.len, size);
	}
	*out = ex->enc.data;
	*n = ex->enc.len;
	return TF_OK;
}

/* ---- fast decoder ---------------------------------------------------- */

struct cur {
	const uint8_t *p, *end, *base;
};

static int
bad(struct tf_example *ex, const struct cur *c, const char *what)
{
	return tfi_set_error(ex, TF_EFORMAT,
	                     "malformed Example at byte %zu: %s",
	                     (size_t)(c->p - c->base), what);
}

static int
get_varint(struct cur *c, uint64_t *v)
{
	uint64_t r = 0;
	for (int shift = 0; shift < 70; shift += 7) {
		if (c->p >= c->end) {
			return -1;
		}
		uint8_t b = *c->p++;
		/* A tenth byte's bits past 64 are dropped, as protobuf's
		 * own parsers (C++, protobuf-c) drop them. */
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -1;
}

/*
 * Read a tag as protobuf-c reads one (the reference): at most 5 bytes, the
 * field number kept to 32 bits, refused when the first byte holds no
 * field number bits.
 */
static int
get_tag(struct tf_example *ex, struct cur *c, uint32_t *field, int *wire)
{
	size_t left = (size_t)(c->end - c->p);
	size_t max = left > 5 ? 5 : left;
	const uint8_t *p = c->p;
	if (left == 0) {
		return bad(ex, c, "truncated tag");
	}
	if ((p[0] & 0xf8) == 0) {
		return bad(ex, c, "bad field number");
	}
	uint32_t f = (uint32_t)(p[0] & 0x7f) >> 3;
	*wire = p[0] & 7;
	unsigned shift = 4;
	for (size_t i = 0; i < max; i++) {
		if (i > 0) {
			f |= (uint32_t)(p[i] & 0x7f) << shift;
			shift += 7;
		}
		if (!(p[i] & 0x80)) {
			*field = f;
			c->p += i + 1;
			return TF_OK;
		}
	}
	return bad(ex, c,
	           left < 5 ? "truncated tag" : "tag longer than 5 bytes");
}

/* A length-delimited payload as a sub-cursor. */
static int
get_len(struct tf_example *ex, struct cur *c, struct cur *sub)
{
	uint64_t n;
	if (get_varint(c, &n) != 0) {
		return bad(ex, c, "truncated length");
	}
	if (n > (uint64_t)(c->end - c->p)) {
		return bad(ex, c, "length runs past the end");
	}
	sub->base = c->base;
	sub->p = c->p;
	sub->end = c->p + n;
	c->p += n;
	return TF_OK;
}

static int
skip_field(struct tf_example *ex, struct cur *c, int wire)
{
	uint64_t v;
	struct cur sub;
	switch (wire) {
	case 0:
		return get_varint(c, &v) == 0 ? TF_OK
		                              : bad(ex, c, "truncated varint");
	case 1:
		if (c->end - c->p < 8) {
			return bad(ex, c, "truncated fixed64");
		}
		c->p += 8;
		return TF_OK;
	case 2:
		return get_len(ex, c, &sub);
	case 5:
		if (c->end - c->p < 4) {
			return bad(ex, c, "truncated fixed32");
		}
		c->p += 4;
		return TF_OK;
	default:
		return bad(ex, c, "unsupported wire type");
	}
}

/* Switch the feature being parsed to a kind (a oneof: another kind resets
 * it, the same kind again merges). */
static void
set_kind(struct tf_example *ex, struct feat *f, int kind)
{
	if (f->kind == kind) {
		/* Values of a repeated list must stay contiguous: they are,
		 * since this feature is the last one being filled. */
		return;
	}
	/* Drop the old values (they are at the end of their pool). */
	if (f->kind == TF_KIND_FLOAT) {
		ex->floats.len = f->val_off * sizeof(float);
	} else if (f->kind == TF_KIND_INT64) {
		ex->ints.len = f->val_off * sizeof(int64_t);
	} else if (f->kind == TF_KIND_BYTES) {
		ex->boffs.len = f->val_off * sizeof(struct boff);
	}
	f->kind = kind;
	f->count = 0;
	f->val_off = kind == TF_KIND_FLOAT ? ex->floats.len / sizeof(float)
	             : kind == TF_KIND_INT64
	                 ? ex->ints.len / sizeof(int64_t)
	                 : ex->boffs.len / sizeof(struct boff);
}

static int
parse_list(struct tf_example *ex, struct feat *f, int kind, struct cur *c)
{
	set_kind(ex, f, kind);
	while (c->p < c->end) {
		uint32_t field;
		int wire;
		if (get_tag(ex, c, &field, &wire) != TF_OK) {
			return TF_EFORMAT;
		}
		if (field != 1) {
			if (skip_field(ex, c, wire) != TF_OK) {
				return TF_EFORMAT;
			}
			continue;
		}
		struct cur sub;
		if (kind == TF_KIND_BYTES) {
			if (wire != 2) {
				return bad(ex, c,
				           "bytes value is not "
				           "length-delimited");
			}
			if (get_len(ex, c, &sub) != TF_OK ||
			    push_bytes(ex, sub.p, (size_t)(sub.end - sub.p))) {
				return ex->err.code ? ex->err.code : TF_ENOMEM;
			}
			f->count++;
		} else if (kind == TF_KIND_FLOAT) {
			size_t n;
			if (wire == 2) {
				if (get_len(ex, c, &sub) != TF_OK) {
					return TF_EFORMAT;
				}
				n = (size_t)(sub.end - sub.p);
				if (n % 4 != 0) {
					return bad(ex, c,
					           "packed floats not a "
					           "multiple of 4 bytes");
				}
			} else if (wire == 5) {
				if (c->end - c->p < 4) {
					return bad(ex, c, "truncated float");
				}
				sub.p = c->p;
				n = 4;
				c->p += 4;
			} else {
				return bad(ex, c,
				           "float value of wrong wire "
				           "type");
			}
			if (tfi_buf_reserve(&ex->floats, n) != TF_OK) {
				return tfi_set_error(ex, TF_ENOMEM,
				                     "out of memory");
			}
			float *dst = buf_at(&ex->floats, ex->floats.len, 1);
			tfi_get_le_floats(dst, sub.p, n / 4);
			ex->floats.len += n;
			f->count += n / 4;
		} else {
			uint64_t v;
			if (wire == 2) {
				if (get_len(ex, c, &sub) != TF_OK) {
					return TF_EFORMAT;
				}
				/* Room for every value at once: each ends in
				 * the one byte of its varint below 0x80. */
				size_t most = 0;
				for (const uint8_t *q = sub.p; q < sub.end;
				     q++) {
					most += *q < 0x80;
				}
				if (tfi_buf_reserve(&ex->ints, most * 8) !=
				    TF_OK) {
					return tfi_set_error(ex, TF_ENOMEM,
					                     "out of memory");
				}
				while (sub.p < sub.end) {
					if (get_varint(&sub, &v) != 0) {
						return bad(ex, &sub,
						           "truncated packed "
						           "varint");
					}
					memcpy(ex->ints.data + ex->ints.len, &v,
					       8);
					ex->ints.len += 8;
					f->count++;
				}
			} else if (wire == 0) {
				if (get_varint(c, &v) != 0) {
					return bad(ex, c, "truncated varint");
				}
				int64_t s = (int64_t)v;
				if (tfi_buf_append(&ex->ints, &s, 8)) {
					return TF_ENOMEM;
				}
				f->count++;
			} else {
				return bad(ex, c,
				           "int64 value of wrong wire "
				           "type");
			}
		}
	}
	return TF_OK;
}

static int
parse_feature(struct tf_example *ex, struct feat *f, struct cur *c)
{
	while (c->p < c->end) {
		uint32_t field;
		int wire;
		if (get_tag(ex, c, &field, &wire) != TF_OK) {
			return TF_EFORMAT;
		}
		if (field >= 1 && field <= 3) {
			struct cur sub;
			if (wire != 2) {
				return bad(ex, c, "list of wrong wire type");
			}
			/* The same list twice is refused, as a value twice
			 * is (parse_entry); another kind replaces it, as in
			 * every protobuf reader. */
			if (f->kind == (int)field) {
				return bad(ex, c,
				           "a feature gives its list twice");
			}
			if (get_len(ex, c, &sub) != TF_OK ||
			    parse_list(ex, f, (int)field, &sub) != TF_OK) {
				return ex->err.code ? ex->err.code : TF_ENOMEM;
			}
		} else if (skip_field(ex, c, wire) != TF_OK) {
			return TF_EFORMAT;
		}
	}
	return TF_OK;
}

static int next_message(struct tf_example *ex, struct cur *c, uint32_t want,
                        const char *what, struct cur *sub);

/* One step of a feature list: a Feature whose list is the kind of the
 * steps before it, with as many values. */
static int
parse_step(struct tf_example *ex, struct feat *f, struct cur *c)
{
	size_t before = f->count;
	int lists = 0;
	/* Its lists counted first: two (the oneof given twice, which
	 * protobuf readers settle by the last) are refused before either's
	 * kind is held against the steps before. */
	for (struct cur scan = *c; scan.p < scan.end;) {
		uint32_t field;
		int wire;
		if (get_tag(ex, &scan, &field, &wire) != TF_OK ||
		    skip_field(ex, &scan, wire) != TF_OK) {
			return TF_EFORMAT;
		}
		if (field >= 1 && field <= 3 && lists++ > 0) {
			return bad(ex, &scan, "a step gives its list twice");
		}
	}
	lists = 0;
	while (c->p < c->end) {
		uint32_t field;
		int wire;
		if (get_tag(ex, c, &field, &wire) != TF_OK) {
			return TF_EFORMAT;
		}
		if (field < 1 || field > 3) {
			if (skip_field(ex, c, wire) != TF_OK) {
				return TF_EFORMAT;
			}
			continue;
		}
		struct cur sub;
		if (wire != 2) {
			return bad(ex, c, "list of wrong wire type");
		}
		if (lists++ > 0) {
			return bad(ex, c, "a step gives its list twice");
		}
		if (f->steps > 0 && f->kind != (int)field) {
			return bad(ex, c,
			           "a feature list's steps are lists of "
			           "different kinds");
		}
		if (get_len(ex, c, &sub) != TF_OK ||
		    parse_list(ex, f, (int)field, &sub) != TF_OK) {
			return ex->err.code ? ex->err.code : TF_ENOMEM;
		}
	}
	if (lists == 0 && f->steps > 0 && f->kind != TF_KIND_NONE) {
		return bad(ex, c,
		           "a feature list's steps are lists of different "
		           "kinds");
	}
	size_t width = f->steps > 0 ? before / f->steps : f->count;
	if (f->count - before != width) {
		return bad(ex, c,
		           "a feature list's steps hold different numbers "
		           "of values");
	}
	f->steps++;
	return TF_OK;
}

/* A map entry of Features (a feature: its name and a Feature) or, list
 * set, of FeatureLists (a feature list: its name and a FeatureList of
 * steps, each a Feature, whose values are kept as one list in step
 * order). */
static int
parse_entry(struct tf_example *ex, struct cur *c, int list)
{
	/* The key may come after the value: remember where each is.  A
	 * value given twice in one entry is refused: protobuf's C++ parser
	 * merges the two, protobuf-c keeps the last or fails, so no answer
	 * would be the one every reader gives. */
	struct cur key = {NULL, NULL, NULL};
	int nval = 0;
	struct cur vals[1];
	while (c->p < c->end) {
		uint32_t field;
		int wire;
		if (get_tag(ex, c, &field, &wire) != TF_OK) {
			return TF_EFORMAT;
		}
		if (field == 1 || field == 2) {
			if (wire != 2) {
				return bad(ex, c,
				           "map entry field of wrong "
				           "wire type");
			}
			struct cur sub;
			if (get_len(ex, c, &sub) != TF_OK) {
				return TF_EFORMAT;
			}
			if (field == 1) {
				key = sub;
			} else if (nval == 0) {
				vals[nval++] = sub;
			} else {
				return bad(ex, c,
				           "a map entry gives its value "
				           "twice");
			}
		} else if (skip_field(ex, c, wire) != TF_OK) {
			return TF_EFORMAT;
		}
	}
	size_t klen = key.p ? (size_t)(key.end - key.p) : 0;
	if (memchr(key.p ? (const void *)key.p : "", 0, klen) != NULL) {
		return bad(ex, c, "feature name contains a NUL byte");
	}
	struct feat *f =
	    feat_push(ex, key.p ? (const char *)key.p : "", klen, TF_KIND_NONE);
	if (f == NULL) {
		return tfi_set_error(ex, TF_ENOMEM, "out of memory");
	}
	f->list = list;
	struct cur step;
	int rc = 1;
	while (nval > 0 && list &&
	       (rc = next_message(ex, &vals[0], 1, "step of wrong wire type",
	                          &step)) == 1) {
		if (parse_step(ex, f, &step) != TF_OK) {
			return ex->err.code ? ex->err.code : TF_ENOMEM;
		}
	}
	if (rc < 0) {
		return ex->err.code;
	}
	if (nval > 0 && !list && parse_feature(ex, f, &vals[0]) != TF_OK) {
		return ex->err.code ? ex->err.code : TF_ENOMEM;
	}
	return TF_OK;
}

/* Sort features by name; a repeated name keeps its last entry. */
static int
finish_parse(struct tf_example *ex)
{
	int sorted = 1;
	for (size_t i = 1; i < ex->n && sorted; i++) {
		sorted = name_cmp(ex, &ex->feats[i - 1], &ex->feats[i]) < 0;
	}
	if (sorted) {
		return TF_OK;
	}
	if (sort_order(ex) != TF_OK) {
		return tfi_set_error(ex, TF_ENOMEM, "out of memory");
	}
	/* sort_order is stable: among equal names the last is the latest. */
	struct feat *tmp = malloc(ex->n * sizeof *tmp);
	if (tmp == NULL) {
		return tfi_set_error(ex, TF_ENOMEM, "out of memory");
	}
	size_t m = 0;
	for (size_t i = 0; i < ex->n; i++) {
		const struct feat *f = &ex->feats[ex->order[i]];
		if (m > 0 && name_cmp(ex, &tmp[m - 1], f) == 0) {
			if (tmp[m - 1].list != f->list) {
				free(tmp);
				return tfi_set_error(
				    ex, TF_EFORMAT,
				    "'%s' is both a context feature and a "
				    "feature list",
				    name_at(ex, f));
			}
			tmp[m - 1] = *f;
		} else {
			tmp[m++] = *f;
		}
	}
	memcpy(ex->feats, tmp, m * sizeof *tmp);
	ex->n = m;
	free(tmp);
	return TF_OK;
}

/*
 * The next length-delimited field number `want` of the message at c, as a
 * sub-cursor, skipping any other field.  1 when found, 0 at the end,
 * -1 (with the error set) on malformed input.
 */
static int
next_message(struct tf_example *ex, struct cur *c, uint32_t want,
             const char *what, struct cur *sub)
{
	while (c->p < c->end) {
		uint32_t field;
		int wire;
		if (get_tag(ex, c, &field, &wire) != TF_OK) {
			return -1;
		}
		if (field != want) {
			if (skip_field(ex, c, wire) != TF_OK) {
				return -1;
			}
			continue;
		}
		if (wire != 2) {
			bad(ex, c, what);
			return -1;
		}
		return get_len(ex, c, sub) == TF_OK ? 1 : -1;
	}
	return 0;
}

int
tf_example_parse(struct tf_example *ex, const void *data, size_t n)
{
	tf_example_clear(ex);
	struct cur c = {data, (const uint8_t *)data + n, data};
	/* Example.features (1) holds Features.feature (1) map entries, as
	 * SequenceExample.context (1) does; SequenceExample.feature_lists
	 * (2) holds FeatureLists.feature_list (1) entries. */
	while (c.p < c.end) {
		uint32_t field;
		int wire;
		struct cur sub, entry;
		if (get_tag(ex, &c, &field, &wire) != TF_OK) {
			return ex->err.code;
		}
		if (field != 1 && field != 2) {
			if (skip_field(ex, &c, wire) != TF_OK) {
				return ex->err.code;
			}
			continue;
		}
		if (wire != 2) {
			return bad(ex, &c,
			           field == 1 ? "features of wrong wire type"
			                      : "feature lists of wrong wire "
			                        "type");
		}
		if (get_len(ex, &c, &sub) != TF_OK) {
			return ex->err.code;
		}
		int rc;
		while ((rc = next_message(ex, &sub, 1,
		                          "map entry of wrong wire type",
		                          &entry)) == 1) {
			if (parse_entry(ex, &entry, field == 2) != TF_OK) {
				return ex->err.code ? ex->err.code : TF_ENOMEM;
			}
		}
		if (rc < 0) {
			return ex->err.code;
		}
	}
	return finish_parse(ex);
}

/* ---- protobuf-c reference -------------------------------------------- */

/* A Feature's values appended to f (protobuf-c's unpacked message). */
static int
pb_values(struct tf_example *ex, struct feat *f, const Tensorflow__Feature *v)
{
	int kind = v ? (int)v->kind_case : TF_KIND_NONE;
	size_t n = 0;
	if (kind == TF_KIND_FLOAT) {
		n = v->float_list->n_value;
		if (tfi_buf_append(&ex->floats, v->float_list->value,
		                   n * sizeof(float))) {
			return TF_ENOMEM;
		}
	} else if (kind == TF_KIND_INT64) {
		n = v->int64_list->n_value;
		if (tfi_buf_append(&ex->ints, v->int64_list->value,
		                   n * sizeof(int64_t))) {
			return TF_ENOMEM;
		}
	} else if (kind == TF_KIND_BYTES) {
		n = v->bytes_list->n_value;
		for (size_t k = 0; k < n; k++) {
			if (push_bytes(ex, v->bytes_list->value[k].data,
			               v->bytes_list->value[k].len)) {
				return TF_ENOMEM;
			}
		}
	}
	f->count += n;
	return TF_OK;
}

int
tf_example_parse_pb(struct tf_example *ex, const void *data, size_t n)
{
	tf_example_clear(ex);
	/* An Example is a SequenceExample without feature lists: its
	 * features are the context (both field 1). */
	Tensorflow__SequenceExample *m =
	    tensorflow__sequence_example__unpack(NULL, n, data);
	if (m == NULL) {
		return tfi_set_error(ex, TF_EFORMAT,
		                     "malformed Example (protobuf-c rejected "
		                     "it)");
	}
	int rc = TF_OK;
	size_t nf = m->context ? m->context->n_feature : 0;
	for (size_t i = 0; i < nf && rc == TF_OK; i++) {
		const Tensorflow__Features__FeatureEntry *e =
		    m->context->feature[i];
		const char *key = e->key ? e->key : "";
		const Tensorflow__Feature *v = e->value;
		int kind = v ? (int)v->kind_case : TF_KIND_NONE;
		struct feat *f = feat_push(ex, key, strlen(key), kind);
		rc = f == NULL ? TF_ENOMEM : pb_values(ex, f, v);
	}
	size_t nl = m->feature_lists ? m->feature_lists->n_feature_list : 0;
	for (size_t i = 0; i < nl && rc == TF_OK; i++) {
		const Tensorflow__FeatureLists__FeatureListEntry *e =
		    m->feature_lists->feature_list[i];
		const char *key = e->key ? e->key : "";
		struct feat *f = feat_push(ex, key, strlen(key), TF_KIND_NONE);
		if (f == NULL) {
			rc = TF_ENOMEM;
			break;
		}
		f->list = 1;
		size_t ns = e->value ? e->value->n_feature : 0;
		for (size_t k = 0; k < ns && rc == TF_OK; k++) {
			const Tensorflow__Feature *v = e->value->feature[k];
			int kind = v ? (int)v->kind_case : TF_KIND_NONE;
			size_t before = f->count;
			if (k == 0) {
				set_kind(ex, f, kind);
			} else if (kind != f->kind) {
				rc = TF_EFORMAT;
				break;
			}
			rc = pb_values(ex, f, v);
			if (rc == TF_OK && k > 0 &&
			    f->count - before != before / k) {
				rc = TF_EFORMAT;
			}
			f->steps++;
		}
	}
	tensorflow__sequence_example__free_unpacked(m, NULL);
	if (rc == TF_EFORMAT) {
		return tfi_set_error(ex, rc,
		                     "a feature list's steps differ in kind or "
		                     "in number of values");
	}
	if (rc != TF_OK) {
		return tfi_set_error(ex, rc, "out of memory");
	}
	return finish_parse(ex);
}

int
tf_example_serialize_pb(struct tf_example *ex, uint8_t **out, size_t *n)
{
	if (sort_order(ex) != TF_OK || refresh_views(ex) != TF_OK) {
		return tfi_set_error(ex, TF_ENOMEM, "out of memory");
	}
	size_t k = ex->n;
	Tensorflow__Features__FeatureEntry *ent = calloc(k + 1, sizeof *ent);
	Tensorflow__Features__FeatureEntry **ptr = calloc(k + 1, sizeof *ptr);
	Tensorflow__Feature *fe = calloc(k + 1, sizeof *fe);
	Tensorflow__FloatList *fl = calloc(k + 1, sizeof *fl);
	Tensorflow__Int64List *il = calloc(k + 1, sizeof *il);
	Tensorflow__BytesList *bl = calloc(k + 1, sizeof *bl);
	ProtobufCBinaryData *bin =
	    calloc(ex->boffs.len / sizeof(struct boff) + 1, sizeof *bin);
	int rc = TF_OK;
	if (!ent || !ptr || !fe || !fl || !il || !bl || !bin) {
		rc = TF_ENOMEM;
		goto out;
	}
	Tensorflow__Features feats = TENSORFLOW__FEATURES__INIT;
	Tensorflow__Example msg = TENSORFLOW__EXAMPLE__INIT;
	size_t nb = 0;
	for (size_t i = 0; i < k; i++) {
		struct tf_feature v;
		tf_example_get(ex, ex->order[i], &v);
		tensorflow__features__feature_entry__init(&ent[i]);
		tensorflow__feature__init(&fe[i]);
		ent[i].key = (char *)v.name;
		ent[i].value = &fe[i];
		ptr[i] = &ent[i];
		if (v.kind == TF_KIND_FLOAT) {
			tensorflow__float_list__init(&fl[i]);
			fl[i].n_value = v.count;
			fl[i].value = (float *)v.floats;
			fe[i].kind_case = TENSORFLOW__FEATURE__KIND_FLOAT_LIST;
			fe[i].float_list = &fl[i];
		} else if (v.kind == TF_KIND_INT64) {
			tensorflow__int64_list__init(&il[i]);
			il[i].n_value = v.count;
			il[i].value = (int64_t *)v.ints;
			fe[i].kind_case = TENSORFLOW__FEATURE__KIND_INT64_LIST;
			fe[i].int64_list = &il[i];
		} else if (v.kind == TF_KIND_BYTES) {
			tensorflow__bytes_list__init(&bl[i]);
			bl[i].n_value = v.count;
			bl[i].value = &bin[nb];
			for (size_t j = 0; j < v.count; j++) {
				bin[nb].data = (uint8_t *)v.bytes[j].data;
				bin[nb].len = v.bytes[j].len;
				nb++;
			}
			fe[i].kind_case = TENSORFLOW__FEATURE__KIND_BYTES_LIST;
			fe[i].bytes_list = &bl[i];
		}
	}
	feats.n_feature = k;
	feats.feature = ptr;
	msg.features = &feats;
	*n = tensorflow__example__get_packed_size(&msg);
	*out = malloc(*n ? *n : 1);
	if (*out == NULL) {
		rc = TF_ENOMEM;
		goto out;
	}
	tensorflow__example__pack(&msg, *out);
out:
	free(ent);
	free(ptr);
	free(fe);
	free(fl);
	free(il);
	free(bl);
	free(bin);
	return rc == TF_OK ? TF_OK : tfi_set_error(ex, rc, "out of memory");
}

/* ---- JSON ------------------------------------------------------------ */

int
tf_format_float(char *buf, size_t size, float f)
{
	if (isnan(f)) {
		return snprintf(buf, size, "NaN");
	}
	if (isinf(f)) {
		return snprintf(buf, size, f < 0 ? "-Infinity" : "Infinity");
	}
	for (int prec = 6; prec <= 9; prec++) {
		int n = snprintf(buf, size, "%.*g", prec, (double)f);
		if (strtof(buf, NULL) == f || prec == 9) {
			return n;
		}
	}
	return 0;
}

/* Append text, keeping the buffer NUL-terminated. */
int
tfi_json_put(struct tfi_buf *b, const char *p, size_t n)
{
	if (tfi_buf_reserve(b, n + 1) != TF_OK) {
		return TF_ENOMEM;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return TF_OK;
}

#define jout tfi_buf
#define jput tfi_json_put

int
tfi_utf8_valid(const uint8_t *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		uint8_t c = s[i];
		size_t k;
		uint32_t cp;
		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xe0) == 0xc0) {
			k = 1;
			cp = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			k = 2;
			cp = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			k = 3;
			cp = c & 0x07;
		} else {
			return 0;
		}
		for (size_t j = 1; j <= k; j++) {
			if (i + j >= n || (s[i + j] & 0xc0) != 0x80) {
				return 0;
			}
			cp = cp << 6 | (s[i + j] & 0x3f);
		}
		if ((k == 1 && cp < 0x80) || (k == 2 && cp < 0x800) ||
		    (k == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff)) {
			return 0;
		}
		i += k + 1;
	}
	return 1;
}

int
tfi_json_string(struct tfi_buf *o, const uint8_t *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	int rc = jput(o, "\"", 1);
	size_t run = 0;
	for (size_t i = 0; i < n && rc == TF_OK; i++) {
		uint8_t c = s[i];
		if (c >= 0x20 && c != '"' && c != '\\') {
			continue;
		}
		rc = jput(o, (const char *)s + run, i - run);
		run = i + 1;
		char e[7] = {'\\', 0, 0, 0, 0, 0, 0};
		size_t el = 2;
		switch (c) {
		case '"':
			e[1] = '"';
			break;
		case '\\':
			e[1] = '\\';
			break;
		case '\n':
			e[1] = 'n';
			break;
		case '\t':
			e[1] = 't';
			break;
		case '\r':
			e[1] = 'r';
			break;
		default:
			memcpy(e + 1, "u00", 3);
			e[4] = hex[c >> 4];
			e[5] = hex[c & 15];
			el = 6;
		}
		if (rc == TF_OK) {
			rc = jput(o, e, el);
		}
	}
	if (rc == TF_OK) {
		rc = jput(o, (const char *)s + run, n - run);
	}
	return rc == TF_OK ? jput(o, "\"", 1) : rc;
}

static int
jbase64(struct jout *o, const uint8_t *s, size_t n)
{
	char q[1024]; /* 256 groups of 3 bytes at a time */
	int rc = jput(o, "{\"b64\":\"", 8);
	for (size_t i = 0; i < n && rc == TF_OK; i += 768) {
		size_t k = n - i < 768 ? n - i : 768;
		tfi_base64_encode(q, s + i, k);
		rc = jput(o, q, (k + 2) / 3 * 4);
	}
	return rc == TF_OK ? jput(o, "\"}", 2) : rc;
}

int
tf_example_to_json(struct tf_example *ex, char **s, size_t *len, size_t *cap)
{
	struct tfi_buf o = {(uint8_t *)*s, *len, *cap};
	int rc = tfi_example_json(ex, &o);
	*s = (char *)o.data;
	*len = o.len;
	*cap = o.cap;
	return rc;
}

int
tfi_example_json(struct tf_example *ex, struct tfi_buf *out)
{
	struct tfi_buf o = *out;
	int rc = jput(&o, "{", 1);
	char num[48];
	for (size_t i = 0; i < ex->n && rc == TF_OK; i++) {
		struct tf_feature f;
		if (tf_example_get(ex, i, &f) != TF_OK) {
			return ex->err.code;
		}
		if (i > 0) {
			rc = jput(&o, ",", 1);
		}
		rc = rc ? rc
		        : tfi_json_string(&o, (const uint8_t *)f.name,
		                          f.name_len);
		rc = rc ? rc : jput(&o, ":", 1);
		if (f.kind == TF_KIND_NONE) {
			rc = rc ? rc : jput(&o, "null", 4);
			continue;
		}
		rc = rc ? rc : jput(&o, "[", 1);
		for (size_t k = 0; k < f.count && rc == TF_OK; k++) {
			if (k > 0) {
				rc = jput(&o, ",", 1);
			}
			int m = 0;
			if (f.kind == TF_KIND_FLOAT) {
				m = tf_format_float(num, sizeof num,
				                    f.floats[k]);
			} else if (f.kind == TF_KIND_INT64) {
				m = snprintf(num, sizeof num, "%lld",
				             (long long)f.ints[k]);
			} else if (tfi_utf8_valid(f.bytes[k].data,
			                          f.bytes[k].len)) {
				rc = rc ? rc
				        : tfi_json_string(&o, f.bytes[k].data,
				                          f.bytes[k].len);
			} else {
				rc = rc ? rc
				        : jbase64(&o, f.bytes[k].data,
				                  f.bytes[k].len);
			}
			if (m > 0 && rc == TF_OK) {
				rc = jput(&o, num, (size_t)m);
			}
		}
		rc = rc ? rc : jput(&o, "]", 1);
	}
	rc = rc ? rc : jput(&o, "}", 1);
	*out = o;
	return rc == TF_OK ? TF_OK : tfi_set_error(ex, rc, "out of memory");
}

/* ---- CSV rows --------------------------------------------------------------
 */

struct tf_csv_rows {
	struct tfi_handle err;
	char **cols; /* the header: the first Example's feature names */
	size_t ncols;
	uint64_t rows;
	int given; /* the columns came from tf_csv_rows_columns() */
	struct tfi_buf out, field;
};

struct tf_csv_rows *
tf_csv_rows_new(void)
{
	return calloc(1, sizeof(struct tf_csv_rows));
}

void
tf_csv_rows_free(struct tf_csv_rows *c)
{
	if (c == NULL) {
		return;
	}
	for (size_t i = 0; i < c->ncols; i++) {
		free(c->cols[i]);
	}
	free(c->cols);
	tfi_buf_free(&c->out);
	tfi_buf_free(&c->field);
	free(c);
}

/* One field, quoted when it holds a delimiter, a quote or a newline. */
static int
csv_field(struct tfi_buf *o, const uint8_t *s, size_t n)
{
	int quote = 0;
	for (size_t i = 0; i < n && !quote; i++) {
		quote =
		    s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
	}
	if (!quote) {
		return tfi_buf_append(o, s, n);
	}
	int rc = tfi_buf_append(o, "\"", 1);
	for (size_t i = 0; i < n && !rc; i++) {
		rc = (s[i] == '"' && tfi_buf_append(o, "\"", 1)) ||
		     tfi_buf_append(o, &s[i], 1);
	}
	return rc || tfi_buf_append(o, "\"", 1);
}

/* A feature's values as one field: several are space-separated. */
static int
csv_value(struct tf_csv_rows *c, const struct tf_feature *f)
{
	struct tfi_buf *v = &c->field;
	char num[48];
	int rc = 0;
	v->len = 0;
	for (size_t k = 0; k < f->count && !rc; k++) {
		const char *t = num;
		size_t m;
		if (f->kind == TF_KIND_FLOAT) {
			m = (size_t)tf_format_float(num, sizeof num,
			                            f->floats[k]);
		} else if (f->kind == TF_KIND_INT64) {
			m = (size_t)snprintf(num, sizeof num, "%lld",
			                     (long long)f->ints[k]);
		} else {
			t = (const char *)f->bytes[k].data;
			m = f->bytes[k].len;
		}
		rc = (k > 0 && tfi_buf_append(v, " ", 1)) ||
		     tfi_buf_append(v, t, m);
	}
	return rc ||
	       csv_field(&c->out, v->data ? v->data : (uint8_t *)"", v->len);
}

int
tf_csv_rows_columns(struct tf_csv_rows *c, const char *const *names, size_t n)
{
	if (c->cols != NULL) {
		return tfi_set_error(c, TF_EINVAL, "the header is written");
	}
	c->cols = calloc(n + 1, sizeof *c->cols);
	int rc = c->cols == NULL;
	for (size_t i = 0; i < n && !rc; i++) {
		rc = (c->cols[i] = strdup(names[i])) == NULL;
		c->ncols += !rc;
	}
	c->given = 1;
	return rc ? tfi_set_error(c, TF_ENOMEM, "out of memory") : TF_OK;
}

int
tf_csv_rows_add(struct tf_csv_rows *c, struct tf_example *ex, const char **text,
                size_t *len)
{
	size_t n = tf_example_count(ex);
	struct tf_feature f;
	int rc = 0;
	c->out.len = 0;
	if (c->given && c->rows == 0) {
		for (size_t i = 0; i < c->ncols && !rc; i++) {
			rc = csv_field(&c->out, (const uint8_t *)c->cols[i],
			               strlen(c->cols[i])) ||
			     tfi_buf_append(&c->out,
			                    i + 1 < c->ncols ? "," : "\n", 1);
		}
	}
	if (c->cols == NULL) {
		c->cols = calloc(n + 1, sizeof *c->cols);
		rc = c->cols == NULL;
		for (size_t i = 0; i < n && !rc; i++) {
			tf_example_get(ex, i, &f);
			rc = (c->cols[i] = strdup(f.name)) == NULL ||
			     csv_field(&c->out, (const uint8_t *)f.name,
			               f.name_len) ||
			     tfi_buf_append(&c->out, i + 1 < n ? "," : "\n", 1);
			c->ncols += !rc;
		}
	}
	size_t found = 0;
	for (size_t i = 0; i < c->ncols && !rc; i++) {
		if (tf_example_find(ex, c->cols[i], &f) == TF_OK) {
			found++;
			rc = csv_value(c, &f);
		}
		rc = rc ||
		     tfi_buf_append(&c->out, i + 1 < c->ncols ? "," : "\n", 1);
	}
	if (rc) {
		return tfi_set_error(c, TF_ENOMEM, "out of memory");
	}
	if (found != n) {
		return tfi_set_error(c, TF_EFORMAT,
		                     "record %llu has features the %s lacks; "
		                     "use JSON output",
		                     (unsigned long long)c->rows,
		                     c->given ? "schema" : "first record");
	}
	c->rows++;
	*text = (const char *)c->out.data;
	*len = c->out.len;
	return TF_OK;
}
