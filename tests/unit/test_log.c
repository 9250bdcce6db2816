/* SPDX-License-Identifier: ISC */
/*
 * test_log.c - log_kv's lines: LOG_NUM values are bare JSON numbers only
 * when they are JSON numbers, anything else stays a quoted string; text
 * lines are the same with or without LOG_NUM; a line stays one line;
 * quiet drops log_kv's records but not log_kv_warn's.
 */
#include "log.h"
#include "tap.h"
#include "utf8.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char captured[8192];

/* run fn (log_kv) with stderr sent to a temporary file; the line, without ts */
#define CAPTURE_FN(fn, ...)                                                                        \
	do {                                                                                       \
		FILE *tmp_ = tmpfile();                                                            \
		int saved_ = dup(STDERR_FILENO);                                                   \
		size_t n_;                                                                         \
		dup2(fileno(tmp_), STDERR_FILENO);                                                 \
		fn(__VA_ARGS__);                                                                   \
		dup2(saved_, STDERR_FILENO);                                                       \
		close(saved_);                                                                     \
		rewind(tmp_);                                                                      \
		n_ = fread(captured, 1, sizeof(captured) - 1, tmp_);                               \
		captured[n_] = '\0';                                                               \
		fclose(tmp_);                                                                      \
	} while (0)
#define CAPTURE(...) CAPTURE_FN(log_kv, __VA_ARGS__)

/* the line from the first key after event, so that ts does not matter */
static const char *
after_event(void)
{
	const char *p = strstr(captured, "\"event\":\"e\"");

	if (p != NULL)
		return p + strlen("\"event\":\"e\"");
	p = strstr(captured, "event=e");
	return p != NULL ? p + strlen("event=e") : "";
}

/* s is well-formed UTF-8 throughout */
static int
well_formed(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left = strlen(s);
	uint32_t cp;

	while (left > 0) {
		size_t n = utf8_next(p, left, &cp);

		if (n == 0)
			return 0;
		p += n;
		left -= n;
	}
	return 1;
}

static int
json_num(const char *v, const char *want)
{
	CAPTURE("e", LOG_NUM, "n", v, LOG_END);
	if (strcmp(after_event(), want) != 0) {
		printf("# got %s", captured);
		return 0;
	}
	return 1;
}

int
main(void)
{
	static const char *const numbers[] = {"0",   "200", "-1",      "1.84",
					      "0.5", "1e9", "-2.5E-3", "12345678901234567890"};
	static const char *const strings[] = {"",   "-",   "01",  "1.",	  ".5",	 "1e",	"1e+",
					      "+1", "nan", "inf", "0x10", "1 2", "12a", "--1"};
	char want[128];

	log_init("test_log");
	log_set_format(LOG_FORMAT_JSON);
	for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		snprintf(want, sizeof(want), ",\"n\":%s}\n", numbers[i]);
		ok(json_num(numbers[i], want), "json: LOG_NUM \"%s\" is a bare number", numbers[i]);
	}
	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
		snprintf(want, sizeof(want), ",\"n\":\"%s\"}\n", strings[i]);
		ok(json_num(strings[i], want), "json: LOG_NUM \"%s\" is not a number: quoted",
		   strings[i]);
	}
	CAPTURE("e", "s", "200", LOG_NUM, "n", "200", "q", "a\"b\n", LOG_END);
	ok(strcmp(after_event(), ",\"s\":\"200\",\"n\":200,\"q\":\"a\\\"b\\u000a\"}\n") == 0,
	   "json: strings quoted, numbers bare, escapes kept");
	CAPTURE("e", LOG_NUM, "skip", (const char *)NULL, LOG_NUM, "n", "7", LOG_END);
	ok(strcmp(after_event(), ",\"n\":7}\n") == 0, "json: a NULL number is skipped");
	CAPTURE("e", "k", "v", LOG_NUM, LOG_END);
	ok(strcmp(after_event(), ",\"k\":\"v\"}\n") == 0,
	   "json: LOG_NUM then LOG_END ends the line");

	/* UTF-8 as it is; a stray byte (an invalid lead, a cut sequence, an overlong form) as
	 * U+FFFD */
	CAPTURE("e", "id", "evt_\xc3\xa9\xe6\x97\xa5\xe6\x9c\xac", LOG_END);
	ok(strcmp(after_event(), ",\"id\":\"evt_\xc3\xa9\xe6\x97\xa5\xe6\x9c\xac\"}\n") == 0,
	   "json: well-formed UTF-8 is written as it is");
	CAPTURE("e", "id",
		"a\xff"
		"b\xe6\x97"
		"c\xc0\xaf\x7f",
		LOG_END);
	ok(strcmp(after_event(), ",\"id\":\"a\\ufffdb\\ufffd\\ufffdc\\ufffd\\ufffd\\u007f\"}\n") ==
		   0,
	   "json: bytes that are not well-formed UTF-8 become \\ufffd");
	{
		static char big[6001];

		memset(big, 'a', sizeof(big) - 1);
		for (size_t i = 0; i + 2 < sizeof(big) - 1; i += 3)
			memcpy(big + i, "\xe2\x82\xac", 3);
		CAPTURE("e", "v", big, LOG_END);
		ok(captured[strlen(captured) - 1] == '\n' && well_formed(captured),
		   "json: a long line is cut between characters, never inside one");
	}

	log_set_format(LOG_FORMAT_TEXT);
	CAPTURE("e", "id", "evt_\xc3\xa9", LOG_END);
	ok(strcmp(after_event(), " id=\"evt_\\xc3\\xa9\"\n") == 0,
	   "text: non-ASCII escaped as \\xNN as before");
	CAPTURE("e", LOG_NUM, "status", "200", "s", "200", LOG_NUM, "bad", "1 2", LOG_END);
	ok(strcmp(after_event(), " status=200 s=200 bad=\"1 2\"\n") == 0,
	   "text: the same with or without LOG_NUM");

	CAPTURE_FN(log_kv_warn, "e", "k", "v", LOG_END);
	ok(strstr(captured, " prog=test_log level=warning event=e k=v\n") != NULL,
	   "text: a warning record says level=warning before its event");

	log_set_quiet(true);
	CAPTURE("e", LOG_NUM, "n", "1", LOG_END);
	ok(captured[0] == '\0', "quiet: nothing");
	CAPTURE_FN(log_kv_warn, "e", "k", "v", LOG_END);
	ok(strstr(captured, " level=warning event=e k=v\n") != NULL,
	   "quiet: a warning record still");
	log_set_format(LOG_FORMAT_JSON);
	CAPTURE_FN(log_kv_warn, "e", LOG_NUM, "n", "3", LOG_END);
	ok(strstr(captured,
		  "\"prog\":\"test_log\",\"level\":\"warning\",\"event\":\"e\",\"n\":3}\n") != NULL,
	   "json: a warning record has \"level\":\"warning\"");
	return done_testing();
}
