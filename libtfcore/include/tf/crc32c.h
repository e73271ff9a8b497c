/*
 * crc32c.h - CRC-32C (Castagnoli) and the TFRecord mask (FORMATS.md 1.2).
 *
 * The checksum uses the SSE4.2 crc32 instruction where the CPU has it and a
 * slicing-by-8 table otherwise; both give the same values.
 */
#ifndef TF_CRC32C_H
#define TF_CRC32C_H

#include <stddef.h>
#include <stdint.h>

#include "tf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CRC-32C of n bytes at p. */
TF_API uint32_t tf_crc32c(const void *p, size_t n);

/* Continue a CRC-32C: tf_crc32c_extend(tf_crc32c(a), b) == crc of a||b. */
TF_API uint32_t tf_crc32c_extend(uint32_t crc, const void *p, size_t n);

/* The same through the portable table only (for tests and comparison). */
TF_API uint32_t tf_crc32c_portable(uint32_t crc, const void *p, size_t n);

/* 1 when the hardware instruction is in use. */
TF_API int tf_crc32c_hw(void);

/* The mask TFRecord stores: rotate right 15, add 0xa282ead8. */
static inline uint32_t
tf_crc32c_mask(uint32_t crc)
{
	return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

static inline uint32_t
tf_crc32c_unmask(uint32_t masked)
{
	uint32_t r = masked - 0xa282ead8u;
	return (r >> 17) | (r << 15);
}

#ifdef __cplusplus
}
#endif
#endif
