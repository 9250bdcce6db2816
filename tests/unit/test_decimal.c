/* SPDX-License-Identifier: ISC */
/*
 * test_decimal.c - what counts as a decimal integer in a configuration
 * value or an option, and as a digit run of a protocol field
 */
#include "decimal.h"
#include "tap.h"

#include <stdint.h>

int main(void);

int
main(void)
{
	long long v = 7;

	ok(decimal_parse("42", 1, 100, &v) == 0 && v == 42, "42");
	ok(decimal_parse("-5", -10, 10, &v) == 0 && v == -5, "-5");
	ok(decimal_parse("0", 0, 0, &v) == 0 && v == 0, "0 in [0, 0]");
	v = 7;
	ok(decimal_parse("101", 1, 100, &v) != 0 && v == 7, "above max: refused, out untouched");
	ok(decimal_parse("0", 1, 100, &v) != 0, "below min");
	ok(decimal_parse("", 1, 100, &v) != 0, "empty");
	ok(decimal_parse(" 5", 1, 100, &v) != 0, "leading space");
	ok(decimal_parse("+5", 1, 100, &v) != 0, "plus sign");
	ok(decimal_parse("5 ", 1, 100, &v) != 0, "trailing space");
	ok(decimal_parse("5s", 1, 100, &v) != 0, "trailing text");
	ok(decimal_parse("-", -10, 10, &v) != 0, "a lone minus");
	ok(decimal_parse("0x10", 0, 100, &v) != 0, "hex");
	ok(decimal_parse("99999999999999999999", 0, 0x7fffffffffffffffLL, &v) != 0, "overflow");

	double d = 7;

	ok(decimal_real("1.5", &d) == 0 && d == 1.5, "real: 1.5");
	ok(decimal_real("-0.25", &d) == 0 && d == -0.25, "real: -0.25");
	ok(decimal_real("42", &d) == 0 && d == 42, "real: an integer");
	ok(decimal_real("1.5e+30", &d) == 0 && d == 1.5e+30, "real: an exponent");
	d = 7;
	ok(decimal_real("", &d) != 0 && d == 7, "real: empty refused, out untouched");
	ok(decimal_real(" 1", &d) != 0, "real: leading space");
	ok(decimal_real("+1", &d) != 0, "real: plus sign");
	ok(decimal_real("1x", &d) != 0, "real: trailing text");
	ok(decimal_real("1 ", &d) != 0, "real: trailing space");
	ok(decimal_real("0x10", &d) != 0, "real: hex");
	ok(decimal_real("NaN", &d) != 0, "real: NaN");
	ok(decimal_real("Infinity", &d) != 0, "real: Infinity");
	ok(decimal_real("1e999", &d) != 0, "real: overflow");
	ok(decimal_real(".5", &d) != 0, "real: no digit before the point");

	uint64_t u = 7;

	ok(decimal_digits("0042", 4, 99, &u) == 0 && u == 42,
	   "digits: leading zeros kept as value");
	ok(decimal_digits("12345", 2, 99, &u) == 0 && u == 12, "digits: only len bytes read");
	u = 7;
	ok(decimal_digits("100", 3, 99, &u) != 0 && u == 7,
	   "digits: above max refused, out untouched");
	ok(decimal_digits("", 0, 99, &u) != 0, "digits: none");
	ok(decimal_digits("1", 3, 99, &u) != 0, "digits: a NUL inside len is not a digit");
	ok(decimal_digits("-1", 2, 99, &u) != 0, "digits: no sign");
	ok(decimal_digits("+1", 2, 99, &u) != 0, "digits: no plus");
	ok(decimal_digits(" 1", 2, 99, &u) != 0, "digits: no space");
	ok(decimal_digits("1a", 2, 99, &u) != 0, "digits: no other byte");
	ok(decimal_digits("18446744073709551615", 20, UINT64_MAX, &u) == 0 && u == UINT64_MAX,
	   "digits: UINT64_MAX itself");
	ok(decimal_digits("18446744073709551616", 20, UINT64_MAX, &u) != 0,
	   "digits: UINT64_MAX + 1");
	ok(decimal_digits("9223372036854775808", 19, INT64_MAX, &u) != 0, "digits: INT64_MAX + 1");
	ok(decimal_digits("9", 1, 9, &u) == 0 && u == 9, "digits: max below 10");
	return done_testing();
}
