/* SPDX-License-Identifier: ISC */
/*
 * fuzz_xml.c - the root's children of an XML document (common/xmltop.c),
 * as Braintree's notifications are read
 *
 * Looks a few names up in a copy of exactly the input and checks that a
 * text found lies inside the input and holds no markup.
 */
#include "xmltop.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {"kind", "timestamp", "", "a"};
	char *s = malloc(size ? size : 1);

	if (s == NULL)
		return 0;
	if (size > 0)
		memcpy(s, data, size);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *t;
		size_t tlen;

		if (xml_top_text(s, size, names[i], &t, &tlen) != 0)
			continue;
		if (t < s || t + tlen > s + size || memchr(t, '<', tlen) != NULL ||
		    memchr(t, '&', tlen) != NULL)
			abort();
	}
	free(s);
	return 0;
}
