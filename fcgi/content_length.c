/*
 * content_length.c - strict parsing of the CONTENT_LENGTH parameter
 */
#include "content_length.h"

#include <string.h>

#define DIGITS_MAX 18 /* 10^18 - 1 fits in a 64-bit size_t */

int
content_length_parse(const char *s, size_t *out)
{
	size_t n = 0;

	if (s == NULL || *s == '\0' || strnlen(s, DIGITS_MAX + 1) > DIGITS_MAX)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		n = n * 10 + (size_t)(*s - '0');
	}
	*out = n;
	return 0;
}
