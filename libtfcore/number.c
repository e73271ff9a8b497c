/*
 * number.c - decimal text to numbers, as the commands and CSV conversion
 * read them (tf/number.h): exact (correctly rounded floats), the whole
 * string, no spaces, no hex.
 */
#include <ctype.h>
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tf/number.h"

/* ---- numbers ----------------------------------------------------------- */

static const double pow10tab[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static int parse_float_general(const char *s, size_t n, float *out);

/* Anything the fast paths do not take: strtof on a NUL-terminated copy,
 * accepting only a whole decimal number (or nan, inf, infinity). */
static int
slow_float(const char *s, size_t n, float *out)
{
	char small[128];
	if (n == 0 || isspace((unsigned char)s[0]) || memchr(s, 'x', n) ||
	    memchr(s, 'X', n) || memchr(s, '\0', n)) {
		return -1; /* strtof would skip spaces and read hex floats */
	}
	char *tmp = n < sizeof small ? small : malloc(n + 1);
	if (tmp == NULL) {
		return -1;
	}
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	char *end;
	float f = strtof(tmp, &end);
	int ok = end == tmp + n;
	if (tmp != small) {
		free(tmp);
	}
	if (!ok) {
		return -1;
	}
	*out = f;
	return 0;
}

/*
 * Decimal text to float, correctly rounded.  The common case (up to 19
 * significant digits, a small exponent) is Clinger's fast path in double,
 * which is exact unless the double lands on a float rounding midpoint;
 * anything else goes to strtof.
 */
/* m * 10^exp10 as a correctly rounded float, when Clinger's fast path
 * applies; -1 otherwise. */
static int
fast_scale(uint64_t m, int exp10, int neg, float *out)
{
	if (m == 0) {
		*out = neg ? -0.0f : 0.0f;
		return 0;
	}
	static const float pow10f[11] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f,
	                                 1e6f, 1e7f, 1e8f, 1e9f, 1e10f};
	if (m <= ((uint64_t)1 << 24) && exp10 >= -10 && exp10 <= 0) {
		/* Both operands exact in float: one correctly rounded
		 * division, no double rounding. */
		float f = (float)m / pow10f[-exp10];
		*out = neg ? -f : f;
		return 0;
	}
	if (m > ((uint64_t)1 << 53) || exp10 < -22 || exp10 > 22) {
		return -1;
	}
	double d = exp10 < 0 ? (double)m / pow10tab[-exp10]
	                     : (double)m * pow10tab[exp10];
	if (d < (double)FLT_MIN || d > (double)FLT_MAX) {
		return -1;
	}
	uint64_t bits;
	memcpy(&bits, &d, 8);
	if ((bits & 0x1fffffffu) == 0x10000000u) {
		return -1; /* on a float midpoint: double rounding could bite */
	}
	float f = (float)d;
	*out = neg ? -f : f;
	return 0;
}

int
tf_parse_float(const char *s, size_t n, float *out)
{
	/* The usual shape first: [-]digits[.digits], at most 19 digits. */
	const char *p = s, *end = s + n;
	int neg = 0;
	if (p < end && (*p == '-' || *p == '+')) {
		neg = *p == '-';
		p++;
	}
	const char *d0 = p;
	uint64_t m = 0;
	while (p < end && (unsigned)(*p - '0') < 10) {
		m = m * 10 + (uint64_t)(*p++ - '0');
	}
	size_t ndig = (size_t)(p - d0);
	int frac = 0;
	if (p < end && *p == '.') {
		const char *f0 = ++p;
		while (p < end && (unsigned)(*p - '0') < 10) {
			m = m * 10 + (uint64_t)(*p++ - '0');
		}
		frac = (int)(p - f0);
		ndig += (size_t)frac;
	}
	if (p == end && ndig > 0 && ndig <= 19 &&
	    fast_scale(m, -frac, neg, out) == 0) {
		return 0;
	}
	return parse_float_general(s, n, out);
}

static int
parse_float_general(const char *s, size_t n, float *out)
{
	const char *p = s, *end = s + n;
	int neg = 0;
	if (p < end && (*p == '-' || *p == '+')) {
		neg = *p == '-';
		p++;
	}
	uint64_t m = 0;
	int digits = 0, exp10 = 0, any = 0, inexact = 0;
	while (p < end && *p >= '0' && *p <= '9') {
		any = 1;
		if (digits < 19) {
			m = m * 10 + (uint64_t)(*p - '0');
			digits += m != 0;
		} else {
			exp10++;
			inexact |= *p != '0';
		}
		p++;
	}
	if (p < end && *p == '.') {
		p++;
		while (p < end && *p >= '0' && *p <= '9') {
			any = 1;
			if (digits < 19) {
				m = m * 10 + (uint64_t)(*p - '0');
				digits += m != 0;
				exp10--;
			} else {
				inexact |= *p != '0';
			}
			p++;
		}
	}
	if (!any) {
		return slow_float(s, n, out); /* nan, inf, or not a number */
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		int eneg = 0, e = 0, edig = 0;
		if (p < end && (*p == '-' || *p == '+')) {
			eneg = *p == '-';
			p++;
		}
		while (p < end && *p >= '0' && *p <= '9') {
			if (e < 10000) {
				e = e * 10 + (*p - '0');
			}
			edig = 1;
			p++;
		}
		if (!edig) {
			return -1;
		}
		exp10 += eneg ? -e : e;
	}
	if (p != end) {
		return -1;
	}
	if (!inexact && fast_scale(m, exp10, neg, out) == 0) {
		return 0;
	}
	return slow_float(s, n, out);
}

int
tf_parse_int64(const char *s, size_t n, int64_t *out)
{
	const char *p = s, *end = s + n;
	int neg = 0;
	if (p < end && (*p == '-' || *p == '+')) {
		neg = *p == '-';
		p++;
	}
	if (p == end) {
		return -1;
	}
	uint64_t v = 0;
	uint64_t lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	while (p < end) {
		if (*p < '0' || *p > '9') {
			return -1;
		}
		uint64_t d = (uint64_t)(*p - '0');
		if (v > (lim - d) / 10) {
			return -1;
		}
		v = v * 10 + d;
		p++;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}
