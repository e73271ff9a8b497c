/*
 * crc32c.c - CRC-32C, polynomial 0x82f63b78 (reflected).
 *
 * Two implementations: the x86 SSE4.2 crc32 instruction, chosen at run time
 * when the CPU reports it, and a portable slicing-by-8 table.  Tests check
 * both against the vectors of FORMATS.md 1.3.
 */
#include <pthread.h>
#include <string.h>

#include "internal.h"
#include "tf/crc32c.h"

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void
table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++) {
			c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		}
		table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++) {
		for (int t = 1; t < 8; t++) {
			uint32_t prev = table[t - 1][i];
			table[t][i] = (prev >> 8) ^ table[0][prev & 0xff];
		}
	}
}

uint32_t
tf_crc32c_portable(uint32_t crc, const void *data, size_t n)
{
	const uint8_t *p = data;
	pthread_once(&table_once, table_init);
	crc = ~crc;
	while (n >= 8) {
		uint32_t lo = tfi_get_le32(p) ^ crc;
		uint32_t hi = tfi_get_le32(p + 4);
		crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^
		      table[5][(lo >> 16) & 0xff] ^ table[4][lo >> 24] ^
		      table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
		      table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
		p += 8;
		n -= 8;
	}
	while (n-- > 0) {
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	}
	return ~crc;
}

#if defined(__x86_64__)
#include <nmmintrin.h>

/*
 * The crc32 instruction takes three cycles and one can start each cycle,
 * so three streams at once run three times as fast as one: blocks of
 * 3 x SHORT bytes are taken as three parts, each part's CRC register
 * computed from zero beside the others, then joined.  By linearity the
 * register after A then B is the register after A moved over |B| zero
 * bytes, xor B's register from zero; moving over SHORT zero bytes is a
 * linear map of the 32 bits, kept as four tables of a byte each
 * (Mark Adler's construction, from zlib's crc32_combine).
 */
#define SHORT 64
static uint32_t shift_short[4][256];
static pthread_once_t shift_once = PTHREAD_ONCE_INIT;

/* The GF(2) matrix mat (32 columns) times vec. */
static uint32_t
gf2_times(const uint32_t *mat, uint32_t vec)
{
	uint32_t sum = 0;
	for (; vec != 0; vec >>= 1, mat++) {
		if (vec & 1) {
			sum ^= *mat;
		}
	}
	return sum;
}

static void
gf2_square(uint32_t *square, const uint32_t *mat)
{
	for (int n = 0; n < 32; n++) {
		square[n] = gf2_times(mat, mat[n]);
	}
}

static void
shift_init(void)
{
	uint32_t a[32], b[32];
	a[0] = 0x82f63b78u; /* one zero bit */
	for (int n = 1; n < 32; n++) {
		a[n] = 1u << (n - 1);
	}
	/* squared: 2, 4, ... bits; 2^9 bits = SHORT (64) bytes */
	uint32_t *cur = a, *next = b;
	for (int k = 0; k < 9; k++) {
		gf2_square(next, cur);
		uint32_t *t = cur;
		cur = next;
		next = t;
	}
	for (uint32_t v = 0; v < 256; v++) {
		for (int k = 0; k < 4; k++) {
			shift_short[k][v] = gf2_times(cur, v << (8 * k));
		}
	}
}

static inline uint32_t
shift(uint32_t c)
{
	return shift_short[0][c & 0xff] ^ shift_short[1][(c >> 8) & 0xff] ^
	       shift_short[2][(c >> 16) & 0xff] ^ shift_short[3][c >> 24];
}

__attribute__((target("sse4.2"))) static uint32_t
crc_sse42(uint32_t crc, const void *data, size_t n)
{
	const uint8_t *p = data;
	uint64_t c = ~crc;
	/* (unaligned loads cost nothing here: no byte-wise prologue) */
	if (n >= 3 * SHORT) {
		pthread_once(&shift_once, shift_init);
	}
	while (n >= 3 * SHORT) {
		uint64_t c1 = 0, c2 = 0;
		for (int i = 0; i < SHORT; i += 8) {
			uint64_t v0, v1, v2;
			memcpy(&v0, p + i, 8);
			memcpy(&v1, p + SHORT + i, 8);
			memcpy(&v2, p + 2 * SHORT + i, 8);
			c = _mm_crc32_u64(c, v0);
			c1 = _mm_crc32_u64(c1, v1);
			c2 = _mm_crc32_u64(c2, v2);
		}
		c = shift((uint32_t)c) ^ (uint32_t)c1;
		c = shift((uint32_t)c) ^ (uint32_t)c2;
		p += 3 * SHORT;
		n -= 3 * SHORT;
	}
	while (n >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = _mm_crc32_u64(c, v);
		p += 8;
		n -= 8;
	}
	uint32_t c32 = (uint32_t)c;
	if (n >= 4) {
		uint32_t v;
		memcpy(&v, p, 4);
		c32 = _mm_crc32_u32(c32, v);
		p += 4;
		n -= 4;
	}
	if (n >= 2) {
		uint16_t v;
		memcpy(&v, p, 2);
		c32 = _mm_crc32_u16(c32, v);
		p += 2;
		n -= 2;
	}
	if (n > 0) {
		c32 = _mm_crc32_u8(c32, *p);
	}
	return ~c32;
}

static int
have_sse42(void)
{
	static int cached = -1;
	if (cached < 0) {
		__builtin_cpu_init();
		cached = __builtin_cpu_supports("sse4.2") ? 1 : 0;
	}
	return cached;
}
#endif

int
tf_crc32c_hw(void)
{
#if defined(__x86_64__)
	return have_sse42();
#else
	return 0;
#endif
}

uint32_t
tf_crc32c_extend(uint32_t crc, const void *p, size_t n)
{
#if defined(__x86_64__)
	if (have_sse42()) {
		return crc_sse42(crc, p, n);
	}
#endif
	return tf_crc32c_portable(crc, p, n);
}

uint32_t
tf_crc32c(const void *p, size_t n)
{
	return tf_crc32c_extend(0, p, n);
}
