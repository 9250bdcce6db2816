/* SPDX-License-Identifier: ISC */
/*
 * fuzz_content_length.c - the responder's CONTENT_LENGTH parser
 *
 * The input is the parameter's value (cut at the first NUL, as FastCGI
 * parameters are C strings).  Accepted means: 1..18 decimal digits and the
 * value they spell.
 */
#include "content_length.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	size_t n = 12345, len;

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	len = strlen(s);
	if (content_length_parse(s, &n) == 0) {
		unsigned long long want = 0;

		if (len == 0 || len > 18)
			abort();
		for (size_t i = 0; i < len; i++) {
			if (s[i] < '0' || s[i] > '9')
				abort();
			want = want * 10 + (unsigned long long)(s[i] - '0');
		}
		if (n != want)
			abort();
	} else if (n != 12345) {
		abort(); /* *out untouched on failure */
	}
	if (content_length_parse(NULL, &n) != -1)
		abort();
	free(s);
	return 0;
}
