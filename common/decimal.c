/* SPDX-License-Identifier: ISC */
/*
 * decimal.c - strict decimal integers, for configuration values, options
 * and the digit runs of protocol fields
 */
#include "decimal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int
decimal_parse(const char *s, long long min, long long max, long long *out)
{
	const char *digits = *s == '-' ? s + 1 : s;
	char *end;
	long long n;

	/* strtoll alone would take leading space and '+' */
	if (!isdigit((unsigned char)*digits))
		return -1;
	errno = 0;
	n = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || n < min || n > max)
		return -1;
	*out = n;
	return 0;
}

int
decimal_real(const char *s, double *out)
{
	const char *digits = *s == '-' ? s + 1 : s;
	char *end;
	double v;

	/* strtod alone would take space, '+', hex, "inf" and "nan" */
	if (!isdigit((unsigned char)*digits) || digits[strspn(digits, "0123456789.eE+-")] != '\0')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

int
decimal_digits(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0)
		return -1;
	for (size_t i = 0; i < len; i++) {
		unsigned d;

		if (s[i] < '0' || s[i] > '9')
			return -1;
		d = (unsigned)(s[i] - '0');
		if (v > max / 10 || (v == max / 10 && d > max % 10))
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}
