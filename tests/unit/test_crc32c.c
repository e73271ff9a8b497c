/* CRC-32C and its mask against the vectors of FORMATS.md 1.3, through both
 * the hardware path (where the CPU has it) and the portable table. */
#include "test.h"

static uint32_t
both(const void *p, size_t n)
{
	uint32_t a = tf_crc32c(p, n);
	uint32_t b = tf_crc32c_portable(0, p, n);
	if (a != b) {
		FAILF("hardware %08x != table %08x for %zu bytes", a, b, n);
	}
	return a;
}

TEST(crc_vectors)
{
	unsigned char z[32], f[32];
	memset(z, 0, sizeof z);
	memset(f, 0xff, sizeof f);
	CHECK_EQ_INT(both("123456789", 9), 0xe3069283u);
	CHECK_EQ_INT(both("", 0), 0);
	CHECK_EQ_INT(both(z, 32), 0x8a9136aau);
	CHECK_EQ_INT(both(f, 32), 0x62a8ab43u);
}

TEST(mask_vectors)
{
	CHECK_EQ_INT(tf_crc32c_mask(0xe3069283u), 0xc78ab0e5u);
	CHECK_EQ_INT(tf_crc32c_mask(0), 0xa282ead8u);
	CHECK_EQ_INT(tf_crc32c_mask(0xffffffffu), 0xa282ead7u);
	unsigned char b[] = "\x1a\x11"
	                    "CRC test, one two";
	CHECK_EQ_INT(tf_crc32c_mask(both(b, 19)), 0x5794d08au);
	for (uint32_t v = 1; v < 0xf0000000u; v = v * 3 + 7) {
		if (tf_crc32c_unmask(tf_crc32c_mask(v)) != v) {
			FAILF("unmask(mask(%08x)) differs", v);
			break;
		}
	}
}

TEST(crc_extend_and_alignment)
{
	unsigned char buf[1000];
	for (size_t i = 0; i < sizeof buf; i++) {
		buf[i] = (unsigned char)(i * 7 + 3);
	}
	/* Every start offset and length, against the table. */
	for (size_t off = 0; off < 9; off++) {
		for (size_t n = 0; n < 80; n++) {
			both(buf + off, n);
		}
	}
	/* Lengths about the three-stream blocks (192 bytes) */
	for (size_t n = 180; n < 600; n += 7) {
		both(buf + 3, n);
	}
	uint32_t whole = both(buf, sizeof buf);
	uint32_t part = tf_crc32c_extend(tf_crc32c(buf, 333), buf + 333, 667);
	CHECK_EQ_INT(part, whole);
}

int
main(void)
{
	printf("# crc32c hardware path: %s\n", tf_crc32c_hw() ? "yes" : "no");
	RUN(crc_vectors);
	RUN(mask_vectors);
	RUN(crc_extend_and_alignment);
	DONE();
}
