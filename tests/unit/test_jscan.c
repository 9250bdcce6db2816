/* SPDX-License-Identifier: ISC */
/*
 * test_jscan.c - the strict JSON reader behind the envelope fields: what it
 * accepts (RFC 8259, as JSON.parse), and that keys, strings and numbers
 * come out as JSON.parse reads them
 */
#include "jscan.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

int main(void);

static bool
parses(const char *s)
{
	jscan_value v;

	return jscan_parse(s, strlen(s), 64, &v) == 0;
}

/* the string at key k of object s, or "(none)" / "(ill-formed)" */
static const char *
member(const char *s, const char *k, size_t klen, char *buf, size_t cap)
{
	jscan_value root, v;
	char *text;
	size_t len;

	if (jscan_parse(s, strlen(s), 64, &root) != 0 || jscan_member(&root, k, klen, &v) != 0)
		return "(none)";
	if (v.type != JSCAN_STRING) {
		snprintf(buf, cap, "%.*s", (int)v.len, v.p);
		return buf;
	}
	if (jscan_string(&v, &text, &len) != 0)
		return "(ill-formed)";
	snprintf(buf, cap, "%s", text);
	free(text);
	return buf;
}

/* jscan_string_into on the JSON text s (one value), into buf of cap bytes */
static int
into(const char *s, char *buf, size_t cap, size_t *len)
{
	jscan_value v;

	if (jscan_parse(s, strlen(s), 64, &v) != 0)
		return -2;
	return jscan_string_into(&v, buf, cap, len);
}

/* the source text at dotted path of object s, or "(none)" */
static const char *
path(const char *s, const char *dotted, char *buf, size_t cap)
{
	jscan_value root, v;

	if (jscan_parse(s, strlen(s), 64, &root) != 0 || jscan_path(&root, dotted, &v) != 0)
		return "(none)";
	snprintf(buf, cap, "%.*s", (int)v.len, v.p);
	return buf;
}

/* the elements of array s, each's source text followed by '|', or "(none)" */
static const char *
elements(const char *s, char *buf, size_t cap)
{
	jscan_value root, v;
	const char *pos = NULL;
	size_t used = 0;

	if (jscan_parse(s, strlen(s), 64, &root) != 0)
		return "(none)";
	buf[0] = '\0';
	while (jscan_element(&root, &pos, &v) == 0 && used < cap)
		used += (size_t)snprintf(buf + used, cap - used, "%.*s|", (int)v.len, v.p);
	return used == 0 && root.type != JSCAN_ARRAY ? "(none)" : buf;
}

/* what member, path or elements gives for json (key: the key or dotted path) */
typedef struct lookup {
	const char *json, *key;
	size_t klen;
	const char *want, *name;
} lookup;

static const lookup members[] = {
	{"{\"id\":\"a\",\"id\\u0000x\":\"b\"}", "id", 2, "a",
	 "a key with an escaped NUL is another key"},
	{"{\"id\":\"a\",\"id\\u0000x\":\"b\"}", "id\0x", 4, "b",
	 "and can be looked up with all its bytes"},
	{"{\"id\":\"a\",\"i\\u0064\":\"b\"}", "id", 2, "b",
	 "an escaped key matches; the last repeated key wins"},
	{"{\"x\":{\"id\":\"inner\"},\"id\":\"outer\"}", "id", 2, "outer",
	 "a nested key is not a member of the outer object"},
	{"{\"s\":\"x}\\\"{\",\"id\":\"after\"}", "id", 2, "after",
	 "brackets and quotes inside strings are skipped"},
	/* string ends are found by the quotes: a run of backslashes before one decides */
	{"{\"s\":\"a\\\\\",\"id\":\"after\"}", "id", 2, "after",
	 "a string ending in an escaped backslash ends at its quote"},
	{"{\"s\":\"\\\\\\\"\\\\\",\"id\":\"x\\\\\\\"y\"}", "id", 2, "x\\\"y",
	 "backslash runs of two and three before quotes"},
	{"{\"n\":-1.5e+3,\"t\":true,\"z\":null,\"id\":7}", "id", 2, "7",
	 "numbers and literals are skipped to their end"},
	{"{\"id\":12345678901234567890123}", "id", 2, "12345678901234567890123",
	 "a number keeps its source text"},
	{"{\"t\":\"\\ud83d\\ude00\\u00e9\\n\"}", "t", 1, "\xf0\x9f\x98\x80\xc3\xa9\n",
	 "escapes and surrogate pairs decode to UTF-8"},
	{"{\"t\":\"a\\ud800\"}", "t", 1, "(ill-formed)", "a lone high surrogate is not replaced"},
	{"{\"t\":\"\\udc00a\"}", "t", 1, "(ill-formed)", "a lone low surrogate is not replaced"},
	{"{\"t\":\"\\ud800\\u0041\"}", "t", 1, "(ill-formed)",
	 "a high surrogate followed by no low one is not replaced"},
	{"{\"a\":1}", "b", 1, "(none)", "a missing key"},
};

static const lookup paths[] = {
	{"{\"data\":{\"object\":{\"id\":\"x\"}}}", "data.object.id", 0, "\"x\"", "nested objects"},
	{"{\"id\":7}", "id", 0, "7", "one part"},
	{"{\"data\":[{\"id\":1}]}", "data.id", 0, "(none)", "an array is not walked"},
	{"{\"data\":\"s\"}", "data.id", 0, "(none)", "a string is not walked"},
	{"{\"a.b\":1,\"a\":{\"b\":2}}", "a.b", 0, "2",
	 "a dot separates parts, never part of a key"},
	{"{\"a\":{\"b\":1}}", "a.c", 0, "(none)", "a missing part"},
	{"[1]", "a", 0, "(none)", "the root is not an object"},
};

static const lookup arrays[] = {
	{"[]", NULL, 0, "", "an empty array"},
	{"[ 1 , \"a,]\" ,{\"x\":[2,3]},[ ], null ]", NULL, 0, "1|\"a,]\"|{\"x\":[2,3]}|[ ]|null|",
	 "each value's exact text, strings and nesting skipped whole"},
	{"{\"a\":1}", NULL, 0, "(none)", "an object is not an array"},
};

int
main(void)
{
	static const char *const good[] = {
		"{}",
		"[]",
		"0",
		"-0",
		"1.5e-3",
		"\"a\"",
		"null",
		" {\"a\" : [1, true, false, null, {}]} \r\n",
		"\"\\ud800\"", /* JSON.parse accepts a lone surrogate escape */
		"{\"a\":1,\"a\":2}",
		"\"\xe6\x97\xa5\"",
		"\"\\u0000\"",
	};
	static const char *const bad[] = {
		"",
		" ",
		"{",
		"{\"a\"}",
		"{\"a\":}",
		"{\"a\":1,}",
		"[1,]",
		"[,1]",
		"01",
		"1.",
		".5",
		"+1",
		"1e",
		"-",
		"tru",
		"nul",
		"\"a",
		"\"\\x\"",
		"\"\\u12\"",
		"\"\t\"",
		"\"\xc3\x28\"",
		"\"\xed\xa0\x80\"",
		"{} {}",
		"{}x",
		"{'a':1}",
		"[1 2]",
		"{\"a\" 1}",
		"\xef\xbb\xbf{}",
		"NaN",
		"Infinity",
	};
	char buf[128], deep[200];
	jscan_value v;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ok(parses(good[i]), "accepts %s", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(!parses(bad[i]), "refuses [%s]", bad[i]);
	ok(jscan_parse("{}\0", 3, 64, &v) != 0, "refuses a NUL byte after the value");
	memset(deep, '[', 100);
	memset(deep + 100, ']', 100);
	ok(jscan_parse(deep, 200, 64, &v) != 0, "refuses nesting deeper than the limit");
	ok(jscan_parse(deep + 40, 120, 64, &v) == 0, "accepts nesting at the limit");

	for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++)
		ok(strcmp(member(members[i].json, members[i].key, members[i].klen, buf,
				 sizeof(buf)),
			  members[i].want) == 0,
		   "%s", members[i].name);
	ok(jscan_parse("1e5", 3, 64, &v) == 0 && !jscan_is_integer(&v),
	   "1e5 is not an integer token");
	ok(jscan_parse("-42", 3, 64, &v) == 0 && jscan_is_integer(&v), "-42 is");
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		ok(strcmp(path(paths[i].json, paths[i].key, buf, sizeof(buf)), paths[i].want) == 0,
		   "path: %s", paths[i].name);
	for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
		ok(strcmp(elements(arrays[i].json, buf, sizeof(buf)), arrays[i].want) == 0,
		   "element: %s", arrays[i].name);

	/* into a caller's buffer: the length counts the unescaped bytes, the NUL needs room */
	{
		size_t len = 0;

		memset(buf, 'x', sizeof(buf));
		ok(into("\"abc\"", buf, 4, &len) == 0 && len == 3 && strcmp(buf, "abc") == 0,
		   "into: a text that fits with its NUL");
		ok(into("\"abc\"", buf, 3, &len) == 1, "into: one byte short is too long");
		ok(into("\"\\u00e9\\n\"", buf, 4, &len) == 0 && len == 3 &&
			   strcmp(buf, "\xc3\xa9\n") == 0,
		   "into: escapes count as the bytes they stand for");
		ok(into("\"a\\ud83d\\ude00\"", buf, 5, &len) == 1,
		   "into: a character that would straddle the end is too long");
		ok(into("\"a\\ud83d\\ude00\"", buf, 6, &len) == 0 && len == 5,
		   "into: and fits with one byte more");
		ok(into("\"abcdefgh\\ud800\"", buf, 2, &len) == -1,
		   "into: a lone surrogate past the end is still refused");
		ok(into("\"\"", buf, 1, &len) == 0 && len == 0 && buf[0] == '\0',
		   "into: the empty string");
		ok(into("17", buf, sizeof(buf), &len) == -1, "into: a number is not a string");
	}
	return done_testing();
}
