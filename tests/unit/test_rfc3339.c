/* SPDX-License-Identifier: ISC */
/*
 * test_rfc3339.c - RFC 3339 date-times as unix microseconds
 */
#include "rfc3339.h"
#include "tap.h"

int main(void);

int
main(void)
{
	int64_t us = 7;

	ok(rfc3339_us("1970-01-01T00:00:00Z", &us) == 0 && us == 0, "the epoch");
	ok(rfc3339_us("2024-02-29T12:34:56.5Z", &us) == 0 && us == 1709210096500000,
	   "a leap day, half a second");
	ok(rfc3339_us("2022-07-13T20:30:59.037339943Z", &us) == 0 && us == 1657744259037339,
	   "digits past the sixth are ignored");
	ok(rfc3339_us("1970-01-01T02:00:00+02:00", &us) == 0 && us == 0, "an offset east");
	ok(rfc3339_us("1969-12-31t23:00:00-01:00", &us) == 0 && us == 0,
	   "an offset west, lower-case t");
	ok(rfc3339_us("1970-01-01 00:00:01z", &us) == 0 && us == 1000000, "a space, lower-case z");
	us = 7;
	ok(rfc3339_us("2024-01-01T00:00:00", &us) != 0 && us == 7,
	   "no zone: refused, out untouched");
	ok(rfc3339_us("2024-01-01T00:00:00.Z", &us) != 0, "a dot without digits");
	ok(rfc3339_us("2024-13-01T00:00:00Z", &us) != 0, "month 13");
	ok(rfc3339_us("2024-01-01T24:00:00Z", &us) != 0, "hour 24");
	ok(rfc3339_us("2024-01-01T00:00:00+2:00", &us) != 0, "a one-digit offset");
	ok(rfc3339_us("+024-01-01T00:00:00Z", &us) != 0, "a sign in the year");
	ok(rfc3339_us("2024-01-01T00:00:00Zx", &us) != 0, "trailing text");
	return done_testing();
}
