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

__attribute__((target("sse4.2"))) static uint32_t
crc_sse42(uint32_t crc, const void *data, size_t n)
{
	const uint8_t *p = data;
	uint64_t c = ~crc;
	while (n > 0 && ((uintptr_t)p & 7) != 0) {
		c = _mm_crc32_u8((uint32_t)c, *p++);
		n--;
	}
	while (n >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = _mm_crc32_u64(c, v);
		p += 8;
		n -= 8;
	}
	while (n-- > 0) {
		c = _mm_crc32_u8((uint32_t)c, *p++);
	}
	return ~(uint32_t)c;
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
