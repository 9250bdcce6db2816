/* SPDX-License-Identifier: ISC */
/*
 * test_rfc3339.c - RFC 3339 date-times as unix microseconds
 */
#include "rfc3339.h"
#include "tap.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int main(void);

/* a text and its time, or a refusal (which leaves the output as it was) */
static const struct {
	const char *s;
	bool ok;
	int64_t us;
	const char *name;
} cases[] = {
	{"1970-01-01T00:00:00Z", true, 0, "the epoch"},
	{"2024-02-29T12:34:56.5Z", true, 1709210096500000, "a leap day, half a second"},
	{"2022-07-13T20:30:59.037339943Z", true, 1657744259037339,
	 "digits past the sixth are ignored"},
	{"1970-01-01T02:00:00+02:00", true, 0, "an offset east"},
	{"1969-12-31t23:00:00-01:00", true, 0, "an offset west, lower-case t"},
	{"1970-01-01 00:00:01z", true, 1000000, "a space, lower-case z"},
	{"2024-01-01T00:00:00", false, 0, "no zone: refused, out untouched"},
	{"2024-01-01T00:00:00.Z", false, 0, "a dot without digits"},
	{"2024-13-01T00:00:00Z", false, 0, "month 13"},
	{"2024-01-01T24:00:00Z", false, 0, "hour 24"},
	{"2024-01-01T00:00:00+2:00", false, 0, "a one-digit offset"},
	{"+024-01-01T00:00:00Z", false, 0, "a sign in the year"},
	{"2024-01-01T00:00:00Zx", false, 0, "trailing text"},
};

int
main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t us = 7;
		int rc = rfc3339_us(cases[i].s, &us);

		ok(cases[i].ok ? rc == 0 && us == cases[i].us : rc != 0 && us == 7, "%s",
		   cases[i].name);
	}
	return done_testing();
}
