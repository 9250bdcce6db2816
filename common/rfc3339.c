/* SPDX-License-Identifier: ISC */
/*
 * rfc3339.c - RFC 3339 date-times as unix microseconds
 */
#include "rfc3339.h"

#include "decimal.h"

#include <string.h>

/* days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm) */
static int64_t
days_from_civil(int64_t y, int64_t m, int64_t d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* exactly n digits at s (n <= 6: no overflow) */
static int
digits(const char *s, size_t n, int64_t *out)
{
	uint64_t v;

	if (decimal_digits(s, n, UINT64_MAX, &v) < 0)
		return -1;
	*out = (int64_t)v;
	return 0;
}

int
rfc3339_us(const char *s, int64_t *out)
{
	int64_t y, mo, d, h, mi, sec, us = 0, off = 0;
	const char *p;

	if (strlen(s) < 20 || digits(s, 4, &y) < 0 || s[4] != '-' || digits(s + 5, 2, &mo) < 0 ||
	    s[7] != '-' || digits(s + 8, 2, &d) < 0 ||
	    (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || digits(s + 11, 2, &h) < 0 ||
	    s[13] != ':' || digits(s + 14, 2, &mi) < 0 || s[16] != ':' ||
	    digits(s + 17, 2, &sec) < 0)
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return -1;
	p = s + 19;
	if (*p == '.') {
		size_t n = strspn(++p, "0123456789");

		/* the first six digits are the microseconds, the rest is ignored */
		if (n == 0 || digits(p, n < 6 ? n : 6, &us) < 0)
			return -1;
		for (size_t k = n; k < 6; k++)
			us *= 10;
		p += n;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int64_t oh, om;

		if (digits(p + 1, 2, &oh) < 0 || p[3] != ':' || digits(p + 4, 2, &om) < 0 ||
		    oh > 23 || om > 59)
			return -1;
		off = (oh * 60 + om) * 60 * (*p == '-' ? -1 : 1);
		p += 6;
	} else {
		return -1;
	}
	if (*p != '\0')
		return -1;
	*out = ((days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec) - off) * 1000000 +
	       us;
	return 0;
}
