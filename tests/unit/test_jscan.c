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

	ok(strcmp(member("{\"id\":\"a\",\"id\\u0000x\":\"b\"}", "id", 2, buf, sizeof(buf)), "a") ==
		   0,
	   "a key with an escaped NUL is another key");
	ok(strcmp(member("{\"id\":\"a\",\"id\\u0000x\":\"b\"}", "id\0x", 4, buf, sizeof(buf)),
		  "b") == 0,
	   "and can be looked up with all its bytes");
	ok(strcmp(member("{\"id\":\"a\",\"i\\u0064\":\"b\"}", "id", 2, buf, sizeof(buf)), "b") == 0,
	   "an escaped key matches; the last repeated key wins");
	ok(strcmp(member("{\"x\":{\"id\":\"inner\"},\"id\":\"outer\"}", "id", 2, buf, sizeof(buf)),
		  "outer") == 0,
	   "a nested key is not a member of the outer object");
	ok(strcmp(member("{\"s\":\"x}\\\"{\",\"id\":\"after\"}", "id", 2, buf, sizeof(buf)),
		  "after") == 0,
	   "brackets and quotes inside strings are skipped");
	/* string ends are found by the quotes: a run of backslashes before one decides */
	ok(strcmp(member("{\"s\":\"a\\\\\",\"id\":\"after\"}", "id", 2, buf, sizeof(buf)),
		  "after") == 0,
	   "a string ending in an escaped backslash ends at its quote");
	ok(strcmp(member("{\"s\":\"\\\\\\\"\\\\\",\"id\":\"x\\\\\\\"y\"}", "id", 2, buf,
			 sizeof(buf)),
		  "x\\\"y") == 0,
	   "backslash runs of two and three before quotes");
	ok(strcmp(member("{\"n\":-1.5e+3,\"t\":true,\"z\":null,\"id\":7}", "id", 2, buf,
			 sizeof(buf)),
		  "7") == 0,
	   "numbers and literals are skipped to their end");
	ok(strcmp(member("{\"id\":12345678901234567890123}", "id", 2, buf, sizeof(buf)),
		  "12345678901234567890123") == 0,
	   "a number keeps its source text");
	ok(strcmp(member("{\"t\":\"\\ud83d\\ude00\\u00e9\\n\"}", "t", 1, buf, sizeof(buf)),
		  "\xf0\x9f\x98\x80\xc3\xa9\n") == 0,
	   "escapes and surrogate pairs decode to UTF-8");
	ok(strcmp(member("{\"t\":\"a\\ud800\"}", "t", 1, buf, sizeof(buf)), "(ill-formed)") == 0,
	   "a lone high surrogate is not replaced");
	ok(strcmp(member("{\"t\":\"\\udc00a\"}", "t", 1, buf, sizeof(buf)), "(ill-formed)") == 0,
	   "a lone low surrogate is not replaced");
	ok(strcmp(member("{\"t\":\"\\ud800\\u0041\"}", "t", 1, buf, sizeof(buf)), "(ill-formed)") ==
		   0,
	   "a high surrogate followed by no low one is not replaced");
	ok(strcmp(member("{\"a\":1}", "b", 1, buf, sizeof(buf)), "(none)") == 0, "a missing key");
	ok(jscan_parse("1e5", 3, 64, &v) == 0 && !jscan_is_integer(&v),
	   "1e5 is not an integer token");
	ok(jscan_parse("-42", 3, 64, &v) == 0 && jscan_is_integer(&v), "-42 is");
	ok(strcmp(path("{\"data\":{\"object\":{\"id\":\"x\"}}}", "data.object.id", buf,
		       sizeof(buf)),
		  "\"x\"") == 0,
	   "path: nested objects");
	ok(strcmp(path("{\"id\":7}", "id", buf, sizeof(buf)), "7") == 0, "path: one part");
	ok(strcmp(path("{\"data\":[{\"id\":1}]}", "data.id", buf, sizeof(buf)), "(none)") == 0,
	   "path: an array is not walked");
	ok(strcmp(path("{\"data\":\"s\"}", "data.id", buf, sizeof(buf)), "(none)") == 0,
	   "path: a string is not walked");
	ok(strcmp(path("{\"a.b\":1,\"a\":{\"b\":2}}", "a.b", buf, sizeof(buf)), "2") == 0,
	   "path: a dot separates parts, never part of a key");
	ok(strcmp(path("{\"a\":{\"b\":1}}", "a.c", buf, sizeof(buf)), "(none)") == 0,
	   "path: a missing part");
	ok(strcmp(path("[1]", "a", buf, sizeof(buf)), "(none)") == 0,
	   "path: the root is not an object");
	ok(strcmp(elements("[]", buf, sizeof(buf)), "") == 0, "element: an empty array");
	ok(strcmp(elements("[ 1 , \"a,]\" ,{\"x\":[2,3]},[ ], null ]", buf, sizeof(buf)),
		  "1|\"a,]\"|{\"x\":[2,3]}|[ ]|null|") == 0,
	   "element: each value's exact text, strings and nesting skipped whole");
	ok(strcmp(elements("{\"a\":1}", buf, sizeof(buf)), "(none)") == 0,
	   "element: an object is not an array");
	return done_testing();
}
