/*
 * fastread.c - the dataset's fast reader: records laid out as
 * tf-csv2record writes them, read without decoding the Example.
 *
 * tf-csv2record writes each feature as one Features map entry whose
 * bytes up to the values depend only on the name, the kind and the
 * number of values (tfi_entry_head(), here so that the writer and this
 * reader share one definition).  The reader keeps those bytes for each
 * input and for the label (templates) and walks a record's entries
 * comparing them, taking the packed floats of a match straight into the
 * row, standardised.  When a record is byte for byte laid out as the
 * last one read entry by entry, one masked comparison of the whole
 * record replaces the walk (whole_record()).  Anything else (another
 * order, other kinds, a key column, unknown features) returns 0, and
 * dataset.c's decode() reads the record through tf_example_decode(),
 * with the same result bit for bit.
 */
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "dataset_private.h"

/* Names of inputs whose int64 entries int64_entry() reads are shorter:
 * their entries' lengths are then one varint byte each. */
#define INT64_TPL_KEY 110

/*
 * Size of one map entry of Features (tag, length and body) for a column
 * holding one value of n payload bytes.  Mirrors the layout of
 * tf_example_encode(): key then value, one packed run.
 */
size_t
tfi_entry_bytes(size_t klen, int kind, size_t payload, size_t *es, size_t *fs,
                size_t *ls)
{
	*ls = kind == TF_COL_BYTES ? 1 + tfi_varint_size(payload) + payload
	      : payload            ? 1 + tfi_varint_size(payload) + payload
	                           : 0;
	*fs = 1 + tfi_varint_size(*ls) + *ls;
	*es = 1 + tfi_varint_size(klen) + klen + 1 + tfi_varint_size(*fs) + *fs;
	return 1 + tfi_varint_size(*es) + *es;
}

/* Write an entry's bytes up to its payload; returns the payload start.
 * tf-csv2record writes these bytes (csv.c) and the fast reader matches
 * records against them (tfi_ds_templates()). */
uint8_t *
tfi_entry_head(uint8_t *p, const char *key, size_t klen, int kind,
               size_t payload)
{
	size_t es, fs, ls;
	tfi_entry_bytes(klen, kind, payload, &es, &fs, &ls);
	*p++ = 0x0a;
	p = tfi_put_varint(p, es);
	*p++ = 0x0a;
	p = tfi_put_varint(p, klen);
	memcpy(p, key, klen);
	p += klen;
	*p++ = 0x12;
	p = tfi_put_varint(p, fs);
	/* Feature kind: bytes_list 1, float_list 2, int64_list 3. */
	*p++ = kind == TF_COL_BYTES ? 0x0a : kind == TF_COL_FLOAT ? 0x12 : 0x1a;
	p = tfi_put_varint(p, ls);
	if (ls > 0) {
		*p++ = 0x0a;
		p = tfi_put_varint(p, payload);
	}
	return p;
}

/* The 7-bit groups of a varint's first 8 bytes in x (little-endian,
 * the continuation bits and the bytes after its last cleared) put
 * together: pairs of groups, then quads, then the two halves. */
static inline __attribute__((always_inline)) uint64_t
join_groups(uint64_t x)
{
	x = ((x & UINT64_C(0x7f007f007f007f00)) >> 1) |
	    (x & UINT64_C(0x007f007f007f007f));
	x = ((x & UINT64_C(0x3fff00003fff0000)) >> 2) |
	    (x & UINT64_C(0x00003fff00003fff));
	return ((x & UINT64_C(0x0fffffff00000000)) >> 4) |
	       (x & UINT64_C(0x000000000fffffff));
}

/* A varint of up to 10 bytes with 10 to read: the 7-bit groups of its
 * first 8 bytes put together at once, not a byte at a time (ids hashed
 * over 2^64 are 9 or 10 bytes each); tfi_get_varint() where fewer are
 * left, and for a 10th byte over 1 (its bits past the 64th dropped, as
 * tfi_get_varint() drops them). */
static inline __attribute__((always_inline)) int
long_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *s = *p;
	if (end - s < 10) {
		return tfi_get_varint(p, end, v);
	}
	uint64_t x = tfi_get_le64(s);
	uint64_t stop = ~x & UINT64_C(0x8080808080808080);
	int len = stop != 0 ? __builtin_ctzll(stop) / 8 + 1 : 8;
	if (len < 8) {
		x &= (UINT64_C(1) << (8 * len)) - 1;
	}
	x &= UINT64_C(0x7f7f7f7f7f7f7f7f);
	x = join_groups(x);
	if (stop == 0) {
		x |= (uint64_t)(s[8] & 0x7f) << 56;
		len = 9;
		if (s[8] & 0x80) {
			if (s[9] > 1) {
				return tfi_get_varint(p, end, v);
			}
			x |= (uint64_t)s[9] << 63;
			len = 10;
		}
	}
	*p = s + len;
	*v = x;
	return 1;
}

/*
 * The next varint of a packed list ending at le, in a record ending at
 * end.  Where the record has 8 bytes from it on (other fields follow the
 * list, or the varint is near its end), its bytes up to the first without
 * a continuation bit are taken from those 8 at once, with no branch on
 * its length (ids of 1, 2 and 3 bytes mixed in a record, the branch was
 * mispredicted); long_varint() otherwise, and for one of 9 or 10 bytes.
 * 0 when it is not a varint that ends within the list.
 */
static inline __attribute__((always_inline)) int
packed_varint(const uint8_t **p, const uint8_t *le, const uint8_t *end,
              uint64_t *v)
{
	const uint8_t *s = *p;
	if (end - s >= 8) {
		uint64_t x = tfi_get_le64(s);
		uint64_t stop = ~x & UINT64_C(0x8080808080808080);
		if (stop != 0) {
			long len = __builtin_ctzll(stop) / 8 + 1;
			if (len > le - s) {
				return 0;
			}
			/* the bytes up to the stop bit, their 7-bit groups */
			x &= (stop ^ (stop - 1)) & UINT64_C(0x7f7f7f7f7f7f7f7f);
			*p = s + len;
			*v = join_groups(x);
			return 1;
		}
	}
	return long_varint(p, le, v);
}

/* A length-delimited field with this one-byte tag: its bytes in
 * [*sub, *subend), *p moved past them.  0 when it is not that. */
static inline __attribute__((always_inline)) int
fast_len(const uint8_t **p, const uint8_t *end, uint8_t tag,
         const uint8_t **sub, const uint8_t **subend)
{
	uint64_t n;
	if (*p >= end || **p != tag) {
		return 0;
	}
	(*p)++;
	if (*p < end && **p < 0x80) { /* a length under 128: one byte */
		n = *(*p)++;
	} else if (!tfi_get_varint(p, end, &n)) {
		return 0;
	}
	if (n > (uint64_t)(end - *p)) {
		return 0;
	}
	*sub = *p;
	*subend = *p + n;
	*p += n;
	return 1;
}

/* n little-endian floats from src into dst, standardised when mu is not
 * NULL; four at a time, which the compiler turns into vector code. */
static inline __attribute__((always_inline)) void
put_floats(float *restrict dst, const uint8_t *restrict src, int64_t n,
           const float *restrict mu, const float *restrict is)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (mu == NULL) {
		memcpy(dst, src, (size_t)n * 4);
		return;
	}
	int64_t j = 0;
	for (; j + 4 <= n; j += 4) {
		float v[4];
		memcpy(v, src + 4 * j, sizeof v);
		dst[j] = (v[0] - mu[j]) * is[j];
		dst[j + 1] = (v[1] - mu[j + 1]) * is[j + 1];
		dst[j + 2] = (v[2] - mu[j + 2]) * is[j + 2];
		dst[j + 3] = (v[3] - mu[j + 3]) * is[j + 3];
	}
	for (; j < n; j++) {
		float v;
		memcpy(&v, src + 4 * j, 4);
		dst[j] = (v - mu[j]) * is[j];
	}
#else
	for (int64_t j = 0; j < n; j++) {
		uint32_t u = tfi_get_le32(src + 4 * j);
		float v;
		memcpy(&v, &u, 4);
		dst[j] = mu != NULL ? (v - mu[j]) * is[j] : v;
	}
#endif
}

/* A label's value (a Feature's list of kind 0x12 floats or 0x1a int64s
 * in [ls, le)): one number, packed or not, into *label; 0 otherwise. */
static inline __attribute__((always_inline)) int
fast_label(const uint8_t *ls, const uint8_t *le, uint8_t kind, float *label)
{
	if (kind == 0x12) { /* one float, packed or not */
		if (le - ls == 7 && ls[0] == 0x0a && ls[1] == 4) {
			ls += 2;
		} else if (le - ls == 5 && ls[0] == 0x0d) {
			ls += 1;
		} else {
			return 0;
		}
		uint32_t u = tfi_get_le32(ls);
		memcpy(label, &u, 4);
		return 1;
	}
	uint64_t v; /* one int64, packed or not */
	if (ls < le && ls[0] == 0x0a) {
		const uint8_t *s, *e;
		if (!fast_len(&ls, le, 0x0a, &s, &e) || ls != le ||
		    !tfi_get_varint(&s, e, &v) || s != e) {
			return 0;
		}
	} else if (ls < le && ls[0] == 0x08) {
		ls++;
		if (!tfi_get_varint(&ls, le, &v) || ls != le) {
			return 0;
		}
	} else {
		return 0;
	}
	*label = (float)(int64_t)v;
	return 1;
}

/* An input's values (a Feature's list in [ls, le)): exactly width
 * floats, packed or not, or width int64s, packed or not, into dst,
 * standardised as the general path does; 0 otherwise. */
static inline __attribute__((always_inline)) int
fast_values(const struct tf_dataset *ds, const struct input *in,
            const uint8_t *ls, const uint8_t *le, uint8_t kind, float *dst)
{
	const float *mu = ds->cols->normalize ? in->mean : NULL;
	const float *is = in->inv_std;
	int64_t w = in->width;
	const uint8_t *xs, *xe;
	if (kind == 0x12 && ls < le && ls[0] == 0x0a) { /* packed floats */
		if (!fast_len(&ls, le, 0x0a, &xs, &xe) || ls != le ||
		    xe - xs != 4 * w) {
			return 0;
		}
		put_floats(dst, xs, w, mu, is);
		return 1;
	}
	int packed = kind == 0x1a && ls < le && ls[0] == 0x0a;
	if (packed) { /* int64s, packed: their varints in one field */
		if (!fast_len(&ls, le, 0x0a, &xs, &xe) || ls != le) {
			return 0;
		}
		ls = xs;
		le = xe;
	}
	for (int64_t j = 0; j < w; j++) {
		float v;
		if (kind == 0x12) { /* floats, unpacked: tag 0x0d, 4 bytes */
			if (le - ls < 5 || ls[0] != 0x0d) {
				return 0;
			}
			uint32_t u = tfi_get_le32(ls + 1);
			memcpy(&v, &u, 4);
			ls += 5;
		} else {
			uint64_t u;
			if (!packed && (ls >= le || *ls++ != 0x08)) {
				return 0; /* unpacked: a tag before each */
			}
			if (!tfi_get_varint(&ls, le, &u)) {
				return 0;
			}
			v = (float)(int64_t)u;
		}
		dst[j] = mu != NULL ? (v - mu[j]) * is[j] : v;
	}
	return ls == le;
}

/* The input named by [ks, ks + klen), found by bisecting the names;
 * -3 when the model has none of that name. */
static int64_t
find_input(const struct tf_dataset *ds, const uint8_t *ks, size_t klen)
{
	size_t lo = 0, hi = ds->cols->nin;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		size_t i = ds->by_name[mid];
		size_t n = ds->fnlen[i] < klen ? ds->fnlen[i] : klen;
		int c = memcmp(ds->cols->in[i].name, ks, n);
		if (c == 0) {
			c = ds->fnlen[i] < klen ? -1 : ds->fnlen[i] > klen;
		}
		if (c == 0) {
			return (int64_t)i;
		}
		if (c < 0) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return -3;
}

int
tfi_ds_templates(struct tf_dataset *ds)
{
	size_t room = 2 * (ds->ylen + 32);
	for (size_t i = 0; i < ds->cols->nin; i++) {
		room += 3 * (ds->fnlen[i] + 32);
	}
	free(ds->ftpl);
	free(ds->ftoff);
	free(ds->ftlen);
	free(ds->itoff);
	free(ds->roff);
	free(ds->rcol);
	free(ds->rmu);
	free(ds->ris);
	size_t w = (size_t)ds->cols->width + 1;
	ds->rlen = 0;
	ds->roff = malloc(w * sizeof *ds->roff);
	ds->rcol = malloc(w * sizeof *ds->rcol);
	ds->ftpl = malloc(room);
	ds->ftoff = malloc((ds->cols->nin + 1) * sizeof *ds->ftoff);
	ds->ftlen = malloc((ds->cols->nin + 1) * sizeof *ds->ftlen);
	ds->itoff = malloc((ds->cols->nin + 1) * sizeof *ds->itoff);
	ds->rmu = malloc(w * sizeof *ds->rmu);
	ds->ris = malloc(w * sizeof *ds->ris);
	if (!ds->ftpl || !ds->ftoff || !ds->ftlen || !ds->itoff || !ds->rmu ||
	    !ds->ris || !ds->roff || !ds->rcol ||
	    ds->cols->width > UINT32_MAX) {
		return TF_ENOMEM;
	}
	for (size_t c = 0; c < w; c++) {
		ds->rmu[c] = 0.0f; /* (v - 0) * 1 is v, bit for bit */
		ds->ris[c] = 1.0f;
	}
	for (size_t i = 0; i < ds->cols->nin; i++) {
		const struct input *in = &ds->cols->in[i];
		for (int64_t j = 0; in->mean != NULL && j < in->width; j++) {
			ds->rmu[in->col + j] = in->mean[j];
			ds->ris[in->col + j] = in->inv_std[j];
		}
	}
	size_t at = 0;
	for (size_t i = 0; i < ds->cols->nin; i++) {
		ds->ftoff[i] = at;
		ds->ftlen[i] =
		    (size_t)(tfi_entry_head(ds->ftpl + at, ds->cols->in[i].name,
		                            ds->fnlen[i], TF_COL_FLOAT,
		                            4 * (size_t)ds->cols->in[i].width) -
		             (ds->ftpl + at));
		at += ds->ftlen[i];
		/* one int64 of 1 and 2 varint bytes (int64_entry()) */
		ds->itoff[i] = at;
		for (size_t p = 1; p <= 2 && ds->fnlen[i] < INT64_TPL_KEY;
		     p++) {
			at += (size_t)(tfi_entry_head(
			                   ds->ftpl + at, ds->cols->in[i].name,
			                   ds->fnlen[i], TF_COL_INT64, p) -
			               (ds->ftpl + at));
		}
	}
	for (int k = 0; k < 2; k++) {
		ds->ytoff[k] = at;
		ds->ytlen[k] =
		    ds->cols->label == NULL
		        ? 0
		        : (size_t)(tfi_entry_head(
		                       ds->ftpl + at, ds->cols->label, ds->ylen,
		                       k == 0 ? TF_COL_INT64 : TF_COL_FLOAT,
		                       k == 0 ? 1 : 4) -
		                   (ds->ftpl + at));
		at += ds->ytlen[k];
	}
	return TF_OK;
}

/* Whether the n bytes at p are those of the template t. */
static inline __attribute__((always_inline)) int
same_bytes(const uint8_t *p, const uint8_t *t, size_t n)
{
	uint64_t x = 0, a, b;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		memcpy(&a, p + i, 8);
		memcpy(&b, t + i, 8);
		x |= a ^ b;
	}
	if (i < n && n >= 8) { /* the last 8, overlapping those compared */
		memcpy(&a, p + n - 8, 8);
		memcpy(&b, t + n - 8, 8);
		return (x | (a ^ b)) == 0;
	}
	for (; i < n; i++) {
		x |= (uint64_t)(p[i] ^ t[i]);
	}
	return x == 0;
}

/*
 * One entry of input g holding one int64 (tf-csv2record's integer
 * columns): its bytes before the varint depend on the varint's size p
 * (1 to 10), which the entry's length tells.  Those of p 1 and 2 (values
 * under 16384) are the input's int64 templates; for the others the
 * lengths are checked one by one around the bytes from the key's tag to
 * the Feature's tag, which the float template has too.  The value goes
 * into *dst as fast_values() puts it.  Returns the entry's size, or 0
 * when the entry is not laid out so.
 */
static inline __attribute__((always_inline)) size_t
int64_entry(const struct tf_dataset *ds, int64_t g, const uint8_t *fs,
            size_t left, float *dst)
{
	size_t kl = ds->fnlen[g], h = 10 + kl;
	if (kl >= INT64_TPL_KEY || left <= h || fs[1] <= 8 + kl ||
	    fs[1] > 18 + kl) {
		return 0;
	}
	size_t p = (size_t)fs[1] - 8 - kl, n = h + p;
	const uint8_t *v = fs + h;
	uint64_t u;
	if (n > left) {
		return 0;
	}
	if (p <= 2) {
		if (!same_bytes(fs, ds->ftpl + ds->itoff[g] + (p - 1) * h, h)) {
			return 0;
		}
		if (p == 1 && v[0] < 0x80) {
			u = v[0];
		} else if (p == 2 && v[0] >= 0x80 && v[1] < 0x80) {
			u = (uint64_t)(v[0] & 0x7f) | (uint64_t)v[1] << 7;
		} else {
			return 0;
		}
	} else {
		const uint8_t *t = ds->ftpl + ds->ftoff[g];
		if (fs[0] != 0x0a || !same_bytes(fs + 2, t + 2, 3 + kl) ||
		    fs[5 + kl] != 4 + p || fs[6 + kl] != 0x1a ||
		    fs[7 + kl] != 2 + p || fs[8 + kl] != 0x0a ||
		    fs[9 + kl] != p || !tfi_get_varint(&v, fs + n, &u) ||
		    v != fs + n) {
			return 0;
		}
	}
	float x = (float)(int64_t)u;
	const struct input *in = &ds->cols->in[g];
	*dst = ds->cols->normalize && in->mean != NULL
	           ? (x - in->mean[0]) * in->inv_std[0]
	           : x;
	return n;
}

/*
 * A record laid out exactly as the template (the last record that
 * tfi_ds_fast_record() read entry by entry): the same length and the same bytes
 * wherever the mask says they make the structure (tags, lengths, names).
 * Protobuf's framing is those bytes alone, so such a record holds the
 * same features at the same places, and its values are read from there:
 * one comparison of the record instead of one walk per feature.
 */
static int
whole_record(struct tf_dataset *ds, const uint8_t *d, size_t n, float *row,
             float *label)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (n != ds->rlen || n == 0) {
		return 0;
	}
	const uint8_t *t = ds->rtpl, *m = ds->rmask;
	uint64_t x = 0;
	size_t i = 0;
#if defined(__SSE2__)
	__m128i v = _mm_setzero_si128();
	for (; i + 32 <= n; i += 32) {
		__m128i a0 = _mm_loadu_si128((const __m128i *)(d + i));
		__m128i a1 = _mm_loadu_si128((const __m128i *)(d + i + 16));
		__m128i b0 = _mm_loadu_si128((const __m128i *)(t + i));
		__m128i b1 = _mm_loadu_si128((const __m128i *)(t + i + 16));
		__m128i k0 = _mm_loadu_si128((const __m128i *)(m + i));
		__m128i k1 = _mm_loadu_si128((const __m128i *)(m + i + 16));
		v = _mm_or_si128(v, _mm_and_si128(_mm_xor_si128(a0, b0), k0));
		v = _mm_or_si128(v, _mm_and_si128(_mm_xor_si128(a1, b1), k1));
	}
	x = _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_setzero_si128())) ^ 0xffff;
#endif
	for (; i + 8 <= n; i += 8) {
		uint64_t a, b, k;
		memcpy(&a, d + i, 8);
		memcpy(&b, t + i, 8);
		memcpy(&k, m + i, 8);
		x |= (a ^ b) & k;
	}
	for (; i < n; i++) {
		x |= (uint64_t)((d[i] ^ t[i]) & m[i]);
	}
	if (x != 0) {
		return 0;
	}
	/* each float from its place (covered == width: every column) */
	const uint32_t *restrict off = ds->roff, *restrict col = ds->rcol;
	float *restrict r = row;
	size_t nf = (size_t)ds->cols->width;
	if (ds->rseq) { /* packed: one copy, standardised four at a time */
		const uint8_t *src = d + off[0];
		const float *restrict mu = ds->rmu, *restrict is = ds->ris;
		size_t k = 0;
		if (ds->cols->normalize) {
#if defined(__SSE2__)
			for (; k + 4 <= nf; k += 4) {
				__m128 val = _mm_loadu_ps(
				    (const float *)(const void *)(src + 4 * k));
				val = _mm_mul_ps(
				    _mm_sub_ps(val, _mm_loadu_ps(mu + k)),
				    _mm_loadu_ps(is + k));
				_mm_storeu_ps(r + k, val);
			}
#endif
			for (; k < nf; k++) {
				float val;
				memcpy(&val, src + 4 * k, 4);
				r[k] = (val - mu[k]) * is[k];
			}
		} else {
			memcpy(r, src, 4 * nf);
		}
	} else if (ds->cols->normalize) {
		const float *restrict mu = ds->rmu, *restrict is = ds->ris;
		for (size_t k = 0; k < nf; k++) {
			float val;
			memcpy(&val, d + off[k], 4);
			uint32_t c = col[k];
			r[c] = (val - mu[c]) * is[c];
		}
	} else {
		for (size_t k = 0; k < nf; k++) {
			memcpy(r + col[k], d + off[k], 4);
		}
	}
	if (ds->rykind == 0) {
		*label = (float)d[ds->ryoff];
	} else if (ds->rykind == 1) {
		uint32_t u = tfi_get_le32(d + ds->ryoff);
		memcpy(label, &u, 4);
	}
	return ds->cols->label == NULL || is_class(ds, *label);
#else
	(void)ds, (void)d, (void)n, (void)row, (void)label;
	return 0;
#endif
}

/* Keep the record just read entry by entry (every input and the label
 * through their templates, nf floats placed in roff and rcol) as
 * whole_record()'s template. */
static void
keep_record(struct tf_dataset *ds, const uint8_t *d, size_t n, size_t nf)
{
	if (nf != (size_t)ds->cols->width) {
		return; /* (the inputs cover the row: never) */
	}
	if (n > ds->rcap) {
		uint8_t *a = realloc(ds->rtpl, n);
		if (a == NULL) {
			return;
		}
		ds->rtpl = a;
		uint8_t *b = realloc(ds->rmask, n);
		if (b == NULL) {
			return;
		}
		ds->rmask = b;
		ds->rcap = n;
	}
	memcpy(ds->rtpl, d, n);
	memset(ds->rmask, 0xff, n);
	ds->rseq = nf > 0;
	for (size_t k = 0; k < nf; k++) {
		memset(ds->rmask + ds->roff[k], 0, 4);
		if (ds->rcol[k] != k || ds->roff[k] != ds->roff[0] + 4 * k) {
			ds->rseq = 0;
		}
	}
	if (ds->rykind == 0) {
		ds->rmask[ds->ryoff] = 0x80; /* a one-byte varint: under 128 */
	} else if (ds->rykind == 1) {
		memset(ds->rmask + ds->ryoff, 0, 4);
	}
	ds->rlen = n;
}

/*
 * The records tf-csv2record writes, packed or one feature per column,
 * read without the general parser: one Features message holding each of
 * the model's numeric inputs once (the right count of floats or int64s,
 * packed or not) and the label (one number) once, nothing else.  Records
 * of one file hold their features in one order, so the input at each
 * entry's place is guessed from the record before and checked by name;
 * a wrong guess bisects the names.  Returns 1 when it filled row and
 * label; 0 sends the record to the general parser, which decides about
 * anything unusual (other features, one given twice, damage).
 */
int
tfi_ds_fast_record(struct tf_dataset *ds, const uint8_t *d, size_t n,
                   float *row, float *label)
{
	if (whole_record(ds, d, n, row, label)) {
		ds->whole_hits++;
		return 1;
	}
	const uint8_t *p = d, *end = d + n, *fs, *fe;
	size_t ylen = ds->ylen, found = 0, place = 0, nf = 0;
	/* every entry through its template: the record becomes the next
	 * whole_record() template */
	int whole = n <= UINT32_MAX;
	ds->rlen = 0;
	ds->rykind = -1;
	if (!fast_len(&p, end, 0x0a, &fs, &fe) || p != end) {
		return 0;
	}
	uint32_t gen = ++ds->fgen;
	if (gen == 0) { /* wrapped: forget every mark */
		memset(ds->fseen, 0, ds->cols->nin * sizeof *ds->fseen);
		gen = ds->fgen = 1;
	}
	int have_y = ds->cols->label == NULL;
	while (fs < fe) {
		/* The entry as tf-csv2record writes the input guessed here:
		 * its bytes before the values are the template's. */
		int64_t g = place <= ds->cols->nin ? ds->fslot[place] : -2;
		size_t left = (size_t)(fe - fs);
		if (g >= 0 && ds->fseen[g] != gen) {
			const struct input *in = &ds->cols->in[g];
			size_t tl = ds->ftlen[g], vl = 4 * (size_t)in->width;
			const uint8_t *ft = ds->ftpl + ds->ftoff[g];
			/* (byte 1, the entry's length, tells an integer
			 * column's entry at once) */
			if (left >= tl + vl && fs[1] == ft[1] &&
			    same_bytes(fs, ft, tl)) {
				put_floats(row + in->col, fs + tl, in->width,
				           ds->cols->normalize ? in->mean
				                               : NULL,
				           in->inv_std);
				for (int64_t j = 0;
				     j < in->width &&
				     nf < (size_t)ds->cols->width;
				     j++, nf++) { /* for keep_record() */
					ds->roff[nf] =
					    (uint32_t)(fs + tl - d + 4 * j);
					ds->rcol[nf] = (uint32_t)(in->col + j);
				}
				ds->fseen[g] = gen;
				found++;
				place++;
				fs += tl + vl;
				continue;
			}
			size_t il =
			    in->width == 1
			        ? int64_entry(ds, g, fs, left, row + in->col)
			        : 0;
			if (il > 0) { /* (varints: no whole-record template) */
				whole = 0;
				ds->fseen[g] = gen;
				found++;
				place++;
				fs += il;
				continue;
			}
		} else if (g == -1 && !have_y) {
			size_t t0 = ds->ytlen[0], t1 = ds->ytlen[1];
			if (left > t0 && fs[t0] < 0x80 &&
			    same_bytes(fs, ds->ftpl + ds->ytoff[0], t0)) {
				*label = (float)fs[t0];
				ds->rykind = 0;
				ds->ryoff = (size_t)(fs + t0 - d);
				have_y = 1;
				place++;
				fs += t0 + 1;
				continue;
			}
			if (left >= t1 + 4 &&
			    same_bytes(fs, ds->ftpl + ds->ytoff[1], t1)) {
				uint32_t u = tfi_get_le32(fs + t1);
				memcpy(label, &u, 4);
				ds->rykind = 1;
				ds->ryoff = (size_t)(fs + t1 - d);
				have_y = 1;
				place++;
				fs += t1 + 4;
				continue;
			}
		}
		whole = 0; /* an entry off the templates */
		const uint8_t *es, *ee, *ks, *ke, *vs, *ve, *ls, *le;
		if (!fast_len(&fs, fe, 0x0a, &es, &ee) ||
		    !fast_len(&es, ee, 0x0a, &ks, &ke) ||
		    !fast_len(&es, ee, 0x12, &vs, &ve) || es != ee) {
			return 0;
		}
		size_t klen = (size_t)(ke - ks);
		uint8_t kind = vs < ve ? *vs : 0;
		if (!fast_len(&vs, ve, kind, &ls, &le) || vs != ve ||
		    (kind != 0x12 && kind != 0x1a)) {
			return 0;
		}
		int64_t i = g; /* the guess, checked by name */
		if (i >= 0 && !(ds->fnlen[i] == klen &&
		                memcmp(ds->cols->in[i].name, ks, klen) == 0)) {
			i = -2;
		} else if (i == -1 &&
		           !(ylen == klen && ds->cols->label != NULL &&
		             memcmp(ds->cols->label, ks, klen) == 0)) {
			i = -2;
		}
		if (i == -2) {
			i = ds->cols->label != NULL && ylen == klen &&
			            memcmp(ds->cols->label, ks, klen) == 0
			        ? -1
			        : find_input(ds, ks, klen);
			if (i == -3) {
				return 0; /* not one of the model's */
			}
			if (place <= ds->cols->nin) {
				ds->fslot[place] = i;
			}
		}
		place++;
		if (i == -1) {
			if (have_y || !fast_label(ls, le, kind, label)) {
				return 0;
			}
			have_y = 1;
			continue;
		}
		const struct input *in = &ds->cols->in[i];
		if (ds->fseen[i] == gen ||
		    !fast_values(ds, in, ls, le, kind, row + in->col)) {
			return 0;
		}
		ds->fseen[i] = gen;
		found++;
	}
	/* A label that is not a class: the general path says so. */
	if (have_y && ds->cols->label != NULL && !is_class(ds, *label)) {
		return 0;
	}
	if (found != ds->cols->nin || !have_y) {
		return 0;
	}
	if (whole) {
		keep_record(ds, d, n, nf);
	}
	return 1;
}

/*
 * A sparse record as tf-csv2record -f libsvm writes it (the bag layout:
 * "ids", the label, "values", in any order): its ids into the bag's
 * table rows (tf_columns_bag_id(), hashed or checked), their values into
 * row (1 for each where the record has none), the rest of the row no id
 * and 0, the label.  Only for a model of the bag alone; anything else,
 * or anything the general path would refuse (too many ids, an id beyond
 * the table, ids and values of different counts, a label that is not a
 * class), returns 0 and decode() reads the record, with the same result
 * bit for bit.
 */
int
tfi_ds_fast_bag(struct tf_dataset *ds, const uint8_t *d, size_t n, float *row,
                int64_t *ids, float *label)
{
	const struct tf_columns *cols = ds->cols;
	const uint8_t *p = d, *end = d + n, *fs, *fe;
	const uint8_t *is = NULL, *ie = NULL, *vs = NULL, *ve = NULL;
	int have_y = cols->label == NULL;
	if (!fast_len(&p, end, 0x0a, &fs, &fe) || p != end) {
		return 0;
	}
	while (fs < fe) {
		const uint8_t *es, *ee, *ks, *ke, *ls, *le, *xs, *xe;
		if (!fast_len(&fs, fe, 0x0a, &es, &ee) ||
		    !fast_len(&es, ee, 0x0a, &ks, &ke) ||
		    !fast_len(&es, ee, 0x12, &ls, &le) || es != ee) {
			return 0;
		}
		size_t klen = (size_t)(ke - ks);
		uint8_t kind = ls < le ? *ls : 0;
		if (!fast_len(&ls, le, kind, &xs, &xe) || ls != le ||
		    (kind != 0x12 && kind != 0x1a)) {
			return 0;
		}
		if (klen == 3 && memcmp(ks, "ids", 3) == 0 && kind == 0x1a &&
		    is == NULL) {
			/* packed, or none at all */
			if (xs < xe && !fast_len(&xs, xe, 0x0a, &is, &ie)) {
				return 0;
			}
			if (xs != xe) {
				return 0;
			}
			if (is == NULL) {
				is = ie = xe;
			}
		} else if (klen == 6 && memcmp(ks, "values", 6) == 0 &&
		           kind == 0x12 && vs == NULL) {
			if (xs < xe && !fast_len(&xs, xe, 0x0a, &vs, &ve)) {
				return 0;
			}
			if (xs != xe || (ve - vs) % 4 != 0) {
				return 0;
			}
			if (vs == NULL) {
				vs = ve = xe;
			}
		} else if (!have_y && klen == ds->ylen &&
		           memcmp(cols->label, ks, klen) == 0) {
			if (!fast_label(xs, xe, kind, label)) {
				return 0;
			}
			have_y = 1;
		} else {
			return 0; /* another feature: the general path */
		}
	}
	/* (no ids at all: the general path says what is wrong) */
	if (!have_y || is == NULL ||
	    (cols->label != NULL && !is_class(ds, *label))) {
		return 0;
	}
	int64_t width, vocab, k = 0;
	tf_columns_bag(cols, &width, &vocab);
	size_t nv = vs != NULL ? (size_t)(ve - vs) / 4 : 0;
	const struct tfi_idset *iv =
	    cols->bag_ids.slot != NULL ? &cols->bag_ids : NULL;
	while (is < ie) {
		uint64_t v;
		if (k == width || !packed_varint(&is, ie, end, &v)) {
			return 0;
		}
		if (iv != NULL) {
			/* an id vocabulary's slots asked for now, looked up
			 * when the next record comes (tfi_ds_settle()) */
			__builtin_prefetch(
			    &iv->slot[3 * tfi_idset_home(iv, v)]);
			ids[k++] = (int64_t)v;
			continue;
		}
		int64_t id = tfi_bag_row(cols, v);
		if (id < 0) {
			return 0;
		}
		ids[k++] = id;
	}
	if (nv > 0 && nv != (size_t)k) {
		return 0;
	}
	if (nv > 0) {
		put_floats(row, vs, k, NULL, NULL);
	} else {
		for (int64_t j = 0; j < k; j++) {
			row[j] = 1.0f; /* no values: 1 each */
		}
	}
	for (int64_t j = k; j < width; j++) {
		ids[j] = -1;
		row[j] = 0.0f;
	}
	if (iv != NULL) { /* looked up later: tfi_ds_settle() */
		ds->pend_ids = ids;
		ds->pend_row = row;
		ds->pend_n = k;
		ds->pend_file = ds->file;
		ds->pend_rec = tfi_ds_record(ds);
	}
	return 1;
}
