/* SPDX-License-Identifier: ISC */
/*
 * xmltop.c - the text of a child element of an XML document's root
 *
 * One pass over the tags with a depth count: <?…?>, <!…> and comments are
 * skipped, <a …/> does not nest, </a> closes.  Tag names are compared
 * whole; an unterminated tag ends the scan.
 */
#include "xmltop.h"

#include <stdbool.h>
#include <string.h>

/* the end of the markup that starts at p ('<'), just past its '>'; NULL if unterminated */
static const char *
tag_end(const char *p, const char *end)
{
	const char *stop = "-->";

	if (end - p >= 4 && memcmp(p, "<!--", 4) == 0) {
		for (const char *q = p + 4; end - q >= 3; q++)
			if (memcmp(q, stop, 3) == 0)
				return q + 3;
		return NULL;
	}
	for (const char *q = p + 1; q < end; q++) {
		if (*q == '"' || *q == '\'') {
			const char *c = memchr(q + 1, *q, (size_t)(end - q - 1));

			if (c == NULL)
				return NULL;
			q = c;
		} else if (*q == '>') {
			return q + 1;
		}
	}
	return NULL;
}

/* does the tag at p..e ("<name …>" or "</name>") name name? */
static bool
tag_is(const char *p, const char *e, size_t skip, const char *name)
{
	size_t n = strlen(name);
	const char *s = p + skip;

	return (size_t)(e - s) > n && memcmp(s, name, n) == 0 &&
	       (s[n] == '>' || s[n] == '/' || s[n] == ' ' || s[n] == '\t' || s[n] == '\n' ||
		s[n] == '\r');
}

int
xml_top_text(const char *xml, size_t len, const char *name, const char **text, size_t *tlen)
{
	const char *p = xml, *end = xml + len;
	int depth = 0;

	while ((p = memchr(p, '<', (size_t)(end - p))) != NULL) {
		const char *e = tag_end(p, end);

		if (e == NULL)
			return -1;
		if (e - p >= 2 && (p[1] == '?' || p[1] == '!')) {
			p = e;
			continue;
		}
		if (p[1] == '/') {
			if (--depth < 0)
				return -1;
			p = e;
			continue;
		}
		if (e[-2] == '/') { /* <a/>: does not nest */
			p = e;
			continue;
		}
		if (depth == 1 && tag_is(p, e, 1, name)) {
			const char *close = memchr(e, '<', (size_t)(end - e));

			if (close == NULL || end - close < 2 || close[1] != '/' ||
			    memchr(e, '&', (size_t)(close - e)))
				return -1;
			*text = e;
			*tlen = (size_t)(close - e);
			return 0;
		}
		depth++;
		p = e;
	}
	return -1;
}
