/*
 * test_decimal.c - what counts as a decimal integer in a configuration
 * value or an option
 */
#include "decimal.h"
#include "tap.h"

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
	return done_testing();
}
