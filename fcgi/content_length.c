/* SPDX-License-Identifier: ISC */
/*
 * content_length.c - strict parsing of the CONTENT_LENGTH parameter
 */
#include "content_length.h"

#include "decimal.h"

#include <stdint.h>
#include <string.h>

#define DIGITS_MAX 18 /* 10^18 - 1 fits in a 64-bit size_t */

int
content_length_parse(const char *s, size_t *out)
{
	size_t len;
	uint64_t n;

	if (s == NULL || (len = strnlen(s, DIGITS_MAX + 1)) > DIGITS_MAX ||
	    decimal_digits(s, len, SIZE_MAX, &n) < 0)
		return -1;
	*out = (size_t)n;
	return 0;
}
