/* SPDX-License-Identifier: ISC */
/*
 * template.c - the signed content of provider = hmac, from a template
 * (template.h)
 */
#include "template.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* the placeholders without an argument */
static const struct {
	const char *name;
	template_kind kind;
} names[] = {
	{"body", TPL_BODY},
	{"timestamp", TPL_TIMESTAMP},
	{"method", TPL_METHOD},
	{"url", TPL_URL},
};

#define HEADER_TAG "header:"

static bool
header_name_ok(const char *p, size_t len)
{
	if (len == 0 || len > TEMPLATE_HEADER_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)p[i]) && p[i] != '-' && p[i] != '_')
			return false;
	return true;
}

static int
add(template *t, template_kind kind, const char *p, size_t len, char *errbuf, size_t errlen)
{
	if (t->n == TEMPLATE_PIECES_MAX) {
		snprintf(errbuf, errlen, "too many pieces (at most %d placeholders and texts)",
			 TEMPLATE_PIECES_MAX);
		return -1;
	}
	/* literal text next to literal text (an escaped brace) joins it when adjacent */
	if (kind == TPL_TEXT && t->n > 0 && t->piece[t->n - 1].kind == TPL_TEXT &&
	    t->piece[t->n - 1].p + t->piece[t->n - 1].len == p) {
		t->piece[t->n - 1].len += len;
		return 0;
	}
	t->piece[t->n++] = (template_piece){kind, p, len};
	return 0;
}

/* the placeholder between braces, p[0..len) */
static int
placeholder(template *t, const char *p, size_t len, char *errbuf, size_t errlen)
{
	size_t tag = strlen(HEADER_TAG);

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i].name) == len && memcmp(p, names[i].name, len) == 0)
			return add(t, names[i].kind, NULL, 0, errbuf, errlen);
	if (len > tag && memcmp(p, HEADER_TAG, tag) == 0) {
		if (!header_name_ok(p + tag, len - tag)) {
			snprintf(errbuf, errlen,
				 "{header:%.*s}: a header name is 1 to %d letters, digits, '-' "
				 "or '_'",
				 (int)(len - tag > 80 ? 80 : len - tag), p + tag,
				 TEMPLATE_HEADER_NAME_MAX);
			return -1;
		}
		return add(t, TPL_HEADER, p + tag, len - tag, errbuf, errlen);
	}
	snprintf(errbuf, errlen,
		 "unknown placeholder {%.*s} (body, timestamp, header:Name, method, url; "
		 "{{ and }} for braces)",
		 (int)(len > 80 ? 80 : len), p);
	return -1;
}

int
template_parse(const char *s, template *t, char *errbuf, size_t errlen)
{
	size_t len = strnlen(s, TEMPLATE_MAX + 1);

	t->n = 0;
	if (len > TEMPLATE_MAX) {
		snprintf(errbuf, errlen, "longer than %d bytes", TEMPLATE_MAX);
		return -1;
	}
	for (size_t i = 0; i < len;) {
		size_t j = i;
		const char *close;

		while (j < len && s[j] != '{' && s[j] != '}')
			j++;
		if (j > i && add(t, TPL_TEXT, s + i, j - i, errbuf, errlen) < 0)
			return -1;
		if (j == len)
			break;
		/* "{{" and "}}": one literal brace */
		if (j + 1 < len && s[j + 1] == s[j]) {
			if (add(t, TPL_TEXT, s + j, 1, errbuf, errlen) < 0)
				return -1;
			i = j + 2;
			continue;
		}
		if (s[j] == '}') {
			snprintf(errbuf, errlen,
				 "'}' at byte %zu closes nothing (write }} for one)", j + 1);
			return -1;
		}
		if ((close = memchr(s + j + 1, '}', len - j - 1)) == NULL) {
			snprintf(errbuf, errlen, "'{' at byte %zu is not closed", j + 1);
			return -1;
		}
		if (placeholder(t, s + j + 1, (size_t)(close - s) - j - 1, errbuf, errlen) < 0)
			return -1;
		i = (size_t)(close - s) + 1;
	}
	if (!template_has(t, TPL_BODY)) {
		snprintf(errbuf, errlen, "must sign {body}");
		return -1;
	}
	return 0;
}

bool
template_has(const template *t, template_kind k)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->piece[i].kind == k)
			return true;
	return false;
}

bool
template_signs_header(const template *t, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < t->n; i++)
		if (t->piece[i].kind == TPL_HEADER && t->piece[i].len == len &&
		    strncasecmp(t->piece[i].p, name, len) == 0)
			return true;
	return false;
}

int
template_parts(const template *t, const template_values *v, hmac_part parts[TEMPLATE_PARTS_MAX],
	       size_t *n, char name[TEMPLATE_HEADER_NAME_MAX + 1])
{
	*n = 0;
	for (size_t i = 0; i < t->n; i++) {
		const template_piece *pc = &t->piece[i];

		switch (pc->kind) {
		case TPL_TEXT:
			parts[(*n)++] = (hmac_part){pc->p, pc->len};
			break;
		case TPL_BODY:
			parts[(*n)++] = v->body;
			break;
		case TPL_TIMESTAMP:
			parts[(*n)++] = v->timestamp;
			break;
		case TPL_METHOD:
			parts[(*n)++] = (hmac_part){v->method, strlen(v->method)};
			break;
		case TPL_URL:
			parts[(*n)++] = v->url;
			if (v->query.data != NULL) {
				parts[(*n)++] = (hmac_part){"?", 1};
				parts[(*n)++] = v->query;
			}
			break;
		case TPL_HEADER:
			/* parsed: the name fits */
			memcpy(name, pc->p, pc->len);
			name[pc->len] = '\0';
			if (!v->header(v->ctx, name, &parts[*n]))
				return -1;
			(*n)++;
			break;
		}
	}
	return 0;
}
