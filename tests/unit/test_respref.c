/* SPDX-License-Identifier: ISC */
/*
 * test_respref.c - the downstream's reference read from its JSON answer
 */
#include <stdbool.h>
#include <string.h>

#include "respref.h"
#include "tap.h"

int main(void);

static char out[201];
static const char *why;

static int
ref(const char *body, const char *path)
{
	why = NULL;
	return respref_from_json(body, strlen(body), false, path, out, sizeof(out), &why);
}

int
main(void)
{
	char small[4];

	ok(ref("{\"id\":\"ord_1\",\"ok\":true}", "id") == 0 && strcmp(out, "ord_1") == 0,
	   "a top-level string");
	ok(ref("{\"data\":{\"id\":\"in_9\"},\"id\":\"x\"}", "data.id") == 0 &&
		   strcmp(out, "in_9") == 0,
	   "a dotted path");
	ok(ref("{\"ok\":true,\"seq\":12345678901234567890123}", "seq") == 0 &&
		   strcmp(out, "12345678901234567890123") == 0,
	   "a number as written, every digit");
	ok(ref("{\"id\":\"a\",\"id\":\"b\"}", "id") == 0 && strcmp(out, "b") == 0,
	   "a repeated key: the last, as JSON.parse");
	ok(ref("{\"id\":\"caf\\u00e9\\n\"}", "id") == 0 && strcmp(out, "caf???") == 0,
	   "unescaped, then printable ASCII only");
	ok(ref("created", "id") == -1 && strcmp(why, "answer is not JSON") == 0 && out[0] == '\0',
	   "not JSON: none, and why");
	ok(ref("{\"id\":\"x\"", "id") == -1 && strcmp(why, "answer is not JSON") == 0,
	   "cut JSON is not JSON");
	ok(ref("", "id") == -1 && strcmp(why, "answer is not JSON") == 0, "an empty answer");
	ok(ref("{\"ok\":true}", "id") == -1 && strcmp(why, "no such field") == 0, "no such field");
	ok(ref("[{\"id\":\"x\"}]", "id") == -1 && strcmp(why, "no such field") == 0,
	   "an array holds no field");
	ok(ref("{\"data\":\"x\"}", "data.id") == -1 && strcmp(why, "no such field") == 0,
	   "a path through a string");
	ok(ref("{\"id\":{\"a\":1}}", "id") == -1 &&
		   strcmp(why, "field is not a string or number") == 0,
	   "an object is no reference");
	ok(ref("{\"id\":null}", "id") == -1, "null is no reference");
	ok(ref("{\"id\":\"\"}", "id") == -1, "an empty string is no reference");
	ok(ref("{\"id\":\"\\ud800\"}", "id") == -1, "a lone surrogate is no reference");
	ok(respref_from_json("{\"id\":\"x\"}", 10, true, "id", out, sizeof(out), &why) == -1 &&
		   strcmp(why, "answer over 64 KiB") == 0,
	   "a truncated answer is not read");
	ok(respref_from_json("{\"id\":\"abcdef\"}", 15, false, "id", small, sizeof(small), &why) ==
			   0 &&
		   strcmp(small, "abc") == 0,
	   "cut to the room given");
	respref_printable(out, sizeof(out), "req\r\nX-Evil: 1\x7f\xc3\xa9", 17);
	ok(strcmp(out, "req??X-Evil: 1???") == 0, "control and non-ASCII bytes become '?': %s",
	   out);
	respref_printable(small, sizeof(small), "abcdef", 6);
	ok(strcmp(small, "abc") == 0, "a header value is cut to the room given");
	respref_printable(small, sizeof(small), "", 0);
	ok(small[0] == '\0', "nothing gives an empty string");
	return done_testing();
}
