/* SPDX-License-Identifier: ISC */
/*
 * jscan.c - a strict JSON reader that keeps each value's source text
 */
#include "jscan.h"

#include "utf8.h"
#include "xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
	const char *s;
	size_t len, pos;
	int depth, max_depth;
} parser;

static void
skip_ws(parser *ps)
{
	while (ps->pos < ps->len) {
		char c = ps->s[ps->pos];

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		ps->pos++;
	}
}

static int
hex4(const char *p, uint32_t *out)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (uint32_t)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

/* a string at ps->pos (the opening quote): well-formed UTF-8, valid escapes */
static int
parse_string(parser *ps)
{
	const unsigned char *u = (const unsigned char *)ps->s;
	uint32_t cp;

	ps->pos++;
	while (ps->pos < ps->len) {
		unsigned char c = u[ps->pos];
		size_t n;

		if (c == '"') {
			ps->pos++;
			return 0;
		}
		if (c < 0x20)
			return -1;
		if (c == '\\') {
			if (ps->len - ps->pos < 2)
				return -1;
			c = u[ps->pos + 1];
			if (c == 'u') {
				if (ps->len - ps->pos < 6 || hex4(ps->s + ps->pos + 2, &cp) < 0)
					return -1;
				ps->pos += 6;
			} else if (strchr("\"\\/bfnrt", c) != NULL && c != '\0') {
				ps->pos += 2;
			} else {
				return -1;
			}
			continue;
		}
		n = utf8_next(u + ps->pos, ps->len - ps->pos, &cp);
		if (n == 0)
			return -1;
		ps->pos += n;
	}
	return -1;
}

static size_t
digits(parser *ps)
{
	size_t start = ps->pos;

	while (ps->pos < ps->len && ps->s[ps->pos] >= '0' && ps->s[ps->pos] <= '9')
		ps->pos++;
	return ps->pos - start;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int
parse_number(parser *ps)
{
	if (ps->s[ps->pos] == '-')
		ps->pos++;
	if (ps->pos < ps->len && ps->s[ps->pos] == '0')
		ps->pos++;
	else if (digits(ps) == 0)
		return -1;
	if (ps->pos < ps->len && ps->s[ps->pos] == '.') {
		ps->pos++;
		if (digits(ps) == 0)
			return -1;
	}
	if (ps->pos < ps->len && (ps->s[ps->pos] == 'e' || ps->s[ps->pos] == 'E')) {
		ps->pos++;
		if (ps->pos < ps->len && (ps->s[ps->pos] == '+' || ps->s[ps->pos] == '-'))
			ps->pos++;
		if (digits(ps) == 0)
			return -1;
	}
	return 0;
}

static int
literal(parser *ps, const char *word)
{
	size_t n = strlen(word);

	if (ps->len - ps->pos < n || memcmp(ps->s + ps->pos, word, n) != 0)
		return -1;
	ps->pos += n;
	return 0;
}

static int parse_value(parser *ps, jscan_value *v);

/* an array or an object at ps->pos; close is ']' or '}' */
static int
parse_container(parser *ps, char close)
{
	jscan_value item;
	bool first = true;

	if (++ps->depth > ps->max_depth)
		return -1;
	ps->pos++;
	for (;;) {
		skip_ws(ps);
		if (ps->pos >= ps->len)
			return -1;
		if (ps->s[ps->pos] == close && first)
			break;
		if (!first) {
			if (ps->s[ps->pos] == close)
				break;
			if (ps->s[ps->pos] != ',')
				return -1;
			ps->pos++;
			skip_ws(ps);
			if (ps->pos >= ps->len)
				return -1;
		}
		first = false;
		if (close == '}') {
			if (ps->s[ps->pos] != '"' || parse_string(ps) < 0)
				return -1;
			skip_ws(ps);
			if (ps->pos >= ps->len || ps->s[ps->pos] != ':')
				return -1;
			ps->pos++;
		}
		if (parse_value(ps, &item) < 0)
			return -1;
	}
	ps->pos++;
	ps->depth--;
	return 0;
}

static int
parse_value(parser *ps, jscan_value *v)
{
	size_t start;
	int rc;

	skip_ws(ps);
	if (ps->pos >= ps->len)
		return -1;
	start = ps->pos;
	switch (ps->s[ps->pos]) {
	case '{':
		v->type = JSCAN_OBJECT;
		rc = parse_container(ps, '}');
		break;
	case '[':
		v->type = JSCAN_ARRAY;
		rc = parse_container(ps, ']');
		break;
	case '"':
		v->type = JSCAN_STRING;
		rc = parse_string(ps);
		break;
	case 't':
		v->type = JSCAN_TRUE;
		rc = literal(ps, "true");
		break;
	case 'f':
		v->type = JSCAN_FALSE;
		rc = literal(ps, "false");
		break;
	case 'n':
		v->type = JSCAN_NULL;
		rc = literal(ps, "null");
		break;
	default:
		v->type = JSCAN_NUMBER;
		rc = parse_number(ps);
		break;
	}
	v->p = ps->s + start;
	v->len = ps->pos - start;
	return rc;
}

int
jscan_parse(const char *s, size_t len, int max_depth, jscan_value *root)
{
	parser ps = {s, len, 0, 0, max_depth};

	if (parse_value(&ps, root) < 0)
		return -1;
	skip_ws(&ps);
	return ps.pos == len ? 0 : -1;
}

/* ---- reading a value that jscan_parse has checked ---- */

/*
 * The end of the checked string starting at p (its opening quote), which
 * ends before end: the first quote not escaped, found with memchr (a
 * quote is escaped when an odd number of backslashes stands before it).
 */
static const char *
string_end(const char *p, const char *end)
{
	for (p++;;) {
		const char *q = memchr(p, '"', (size_t)(end - p));
		const char *b;

		if (q == NULL)
			return end; /* not checked text: cannot happen */
		for (b = q; b > p && b[-1] == '\\'; b--)
			;
		if ((q - b) % 2 == 0)
			return q + 1;
		p = q + 1;
	}
}

/* what ends a number or a literal in checked text */
static bool
ends_scalar(char c)
{
	switch (c) {
	case ',':
	case ':':
	case ']':
	case '}':
	case ' ':
	case '\t':
	case '\n':
	case '\r':
	case '\0':
		return true;
	default:
		return false;
	}
}

/* the end of the checked value starting at p, without recursion */
static const char *
value_end(const char *p, const char *end)
{
	int depth = 0;

	do {
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
			p++;
		if (*p == '"') {
			p = string_end(p, end);
		} else if (*p == '{' || *p == '[') {
			depth++;
			p++;
		} else if (*p == '}' || *p == ']') {
			depth--;
			p++;
		} else if (*p == ',' || *p == ':') {
			p++;
		} else {
			while (p < end && !ends_scalar(*p))
				p++;
		}
	} while (depth > 0);
	return p;
}

/*
 * out[*o..] = s[0..n) when it fits in cap bytes; *o counts the bytes
 * either way, so that the caller learns the whole text's length.  Once one
 * piece does not fit no later one does (*o is then past cap).
 */
static void
put(char *out, size_t cap, size_t *o, const void *s, size_t n)
{
	if (*o <= cap && n <= cap - *o)
		memcpy(out + *o, s, n);
	*o += n;
}

/*
 * Unescape the string whose source (quotes included) is p[0..len) into
 * out (room for cap bytes); *olen = the unescaped length, which exceeds
 * cap when it did not fit.  -1 on a lone surrogate anywhere in the string,
 * whether or not it fits, so that the answer does not depend on cap.
 */
static int
unescape(const char *p, size_t len, char *out, size_t cap, size_t *olen)
{
	const char *end = p + len - 1;
	size_t o = 0;

	for (p++; p < end;) {
		const char *bs = memchr(p, '\\', (size_t)(end - p));
		size_t run = (size_t)((bs != NULL ? bs : end) - p);
		unsigned char ch[4];
		size_t n = 1, step = 2; /* the bytes it stands for, the escape's own */
		uint32_t cp, lo;

		put(out, cap, &o, p, run);
		p += run;
		if (p == end)
			break;
		switch (p[1]) {
		case 'b':
			ch[0] = '\b';
			break;
		case 'f':
			ch[0] = '\f';
			break;
		case 'n':
			ch[0] = '\n';
			break;
		case 'r':
			ch[0] = '\r';
			break;
		case 't':
			ch[0] = '\t';
			break;
		case 'u':
			(void)hex4(p + 2, &cp);
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return -1;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (end - p < 12 || p[6] != '\\' || p[7] != 'u' ||
				    hex4(p + 8, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff)
					return -1;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				p += 6;
			}
			n = utf8_put(cp, ch);
			step = 6;
			break;
		default:
			ch[0] = (unsigned char)p[1];
			break; /* \" \\ \/ */
		}
		put(out, cap, &o, ch, n);
		p += step;
	}
	*olen = o;
	return 0;
}

/* the type of the checked value starting at p */
static jscan_type
type_at(const char *p)
{
	switch (*p) {
	case '{':
		return JSCAN_OBJECT;
	case '[':
		return JSCAN_ARRAY;
	case '"':
		return JSCAN_STRING;
	case 't':
		return JSCAN_TRUE;
	case 'f':
		return JSCAN_FALSE;
	case 'n':
		return JSCAN_NULL;
	default:
		return JSCAN_NUMBER;
	}
}

int
jscan_member(const jscan_value *o, const char *key, size_t key_len, jscan_value *out)
{
	const char *p, *end;
	int found = -1;

	if (o->type != JSCAN_OBJECT)
		return -1;
	p = o->p + 1;
	end = o->p + o->len - 1;
	for (;;) {
		const char *k, *kend, *v;
		bool match;

		while (p < end && *p != '"')
			p++;
		if (p >= end)
			break;
		k = p;
		kend = string_end(k, end);
		if (memchr(k, '\\', (size_t)(kend - k)) == NULL) {
			match = (size_t)(kend - k - 2) == key_len &&
				memcmp(k + 1, key, key_len) == 0;
		} else {
			char *buf = xmalloc((size_t)(kend - k));
			size_t n;

			match = unescape(k, (size_t)(kend - k), buf, (size_t)(kend - k), &n) == 0 &&
				n == key_len && memcmp(buf, key, key_len) == 0;
			free(buf);
		}
		p = kend;
		while (*p != ':')
			p++;
		p++;
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		v = p;
		p = value_end(v, end);
		if (match) {
			out->type = type_at(v);
			out->p = v;
			out->len = (size_t)(p - v);
			found = 0; /* keep looking: the last one wins */
		}
	}
	return found;
}

int
jscan_element(const jscan_value *a, const char **pos, jscan_value *out)
{
	const char *p = *pos != NULL ? *pos : a->p + 1;
	const char *end = a->p + a->len - 1;

	if (a->type != JSCAN_ARRAY)
		return -1;
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ','))
		p++;
	if (p >= end)
		return -1;
	out->type = type_at(p);
	out->p = p;
	*pos = value_end(p, end);
	out->len = (size_t)(*pos - p);
	return 0;
}

int
jscan_path(const jscan_value *o, const char *path, jscan_value *out)
{
	jscan_value cur = *o;

	for (;;) {
		size_t n = strcspn(path, ".");
		jscan_value next;

		if (jscan_member(&cur, path, n, &next) < 0)
			return -1;
		if (path[n] == '\0') {
			*out = next;
			return 0;
		}
		cur = next;
		path += n + 1;
	}
}

int
jscan_string_into(const jscan_value *v, char *buf, size_t cap, size_t *len)
{
	size_t n;

	if (v->type != JSCAN_STRING || unescape(v->p, v->len, buf, cap, &n) < 0)
		return -1;
	if (n >= cap)
		return 1;
	buf[n] = '\0';
	*len = n;
	return 0;
}

int
jscan_string(const jscan_value *v, char **out, size_t *len)
{
	/* the text is shorter than its source, quotes included: room for the NUL */
	char *buf;

	if (v->type != JSCAN_STRING)
		return -1;
	buf = xmalloc(v->len);
	if (jscan_string_into(v, buf, v->len, len) != 0) {
		free(buf);
		return -1;
	}
	*out = buf;
	return 0;
}

bool
jscan_is_integer(const jscan_value *v)
{
	return v->type == JSCAN_NUMBER && memchr(v->p, '.', v->len) == NULL &&
	       memchr(v->p, 'e', v->len) == NULL && memchr(v->p, 'E', v->len) == NULL;
}
