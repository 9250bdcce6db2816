/*
 * decimal.c - strict decimal integers, for configuration values and options
 */
#include "decimal.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

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
