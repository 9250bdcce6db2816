/* SPDX-License-Identifier: ISC */
/*
 * test_decimal.c - what counts as a decimal integer in a configuration
 * value or an option, and as a digit run of a protocol field
 */
#include "decimal.h"
#include "tap.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int main(void);

/* a text and the bounds it is read with; ok: taken (as want), else refused */
typedef struct icase {
	const char *s;
	long long min, max;
	bool ok;
	long long want;
	const char *name;
} icase;

static const icase ints[] = {
	{"42", 1, 100, true, 42, "42"},
	{"-5", -10, 10, true, -5, "-5"},
	{"0", 0, 0, true, 0, "0 in [0, 0]"},
	{"101", 1, 100, false, 0, "above max: refused, out untouched"},
	{"0", 1, 100, false, 0, "below min"},
	{"", 1, 100, false, 0, "empty"},
	{" 5", 1, 100, false, 0, "leading space"},
	{"+5", 1, 100, false, 0, "plus sign"},
	{"5 ", 1, 100, false, 0, "trailing space"},
	{"5s", 1, 100, false, 0, "trailing text"},
	{"-", -10, 10, false, 0, "a lone minus"},
	{"0x10", 0, 100, false, 0, "hex"},
	{"99999999999999999999", 0, 0x7fffffffffffffffLL, false, 0, "overflow"},
};

typedef struct rcase {
	const char *s;
	bool ok;
	double want;
	const char *name;
} rcase;

static const rcase reals[] = {
	{"1.5", true, 1.5, "1.5"},
	{"-0.25", true, -0.25, "-0.25"},
	{"42", true, 42, "an integer"},
	{"1.5e+30", true, 1.5e+30, "an exponent"},
	{"", false, 0, "empty refused, out untouched"},
	{" 1", false, 0, "leading space"},
	{"+1", false, 0, "plus sign"},
	{"1x", false, 0, "trailing text"},
	{"1 ", false, 0, "trailing space"},
	{"0x10", false, 0, "hex"},
	{"NaN", false, 0, "NaN"},
	{"Infinity", false, 0, "Infinity"},
	{"1e999", false, 0, "overflow"},
	{".5", false, 0, "no digit before the point"},
};

typedef struct dcase {
	const char *s;
	size_t len;
	uint64_t max;
	bool ok;
	uint64_t want;
	const char *name;
} dcase;

static const dcase digits[] = {
	{"0042", 4, 99, true, 42, "leading zeros kept as value"},
	{"12345", 2, 99, true, 12, "only len bytes read"},
	{"100", 3, 99, false, 0, "above max refused, out untouched"},
	{"", 0, 99, false, 0, "none"},
	{"1", 3, 99, false, 0, "a NUL inside len is not a digit"},
	{"-1", 2, 99, false, 0, "no sign"},
	{"+1", 2, 99, false, 0, "no plus"},
	{" 1", 2, 99, false, 0, "no space"},
	{"1a", 2, 99, false, 0, "no other byte"},
	{"18446744073709551615", 20, UINT64_MAX, true, UINT64_MAX, "UINT64_MAX itself"},
	{"18446744073709551616", 20, UINT64_MAX, false, 0, "UINT64_MAX + 1"},
	{"9223372036854775808", 19, INT64_MAX, false, 0, "INT64_MAX + 1"},
	{"9", 1, 9, true, 9, "max below 10"},
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* a refused text leaves the output as it was (7) */
int
main(void)
{
	for (size_t i = 0; i < N(ints); i++) {
		const icase *c = &ints[i];
		long long v = 7;
		int rc = decimal_parse(c->s, c->min, c->max, &v);

		ok(c->ok ? rc == 0 && v == c->want : rc != 0 && v == 7, "%s", c->name);
	}
	for (size_t i = 0; i < N(reals); i++) {
		const rcase *c = &reals[i];
		double d = 7;
		int rc = decimal_real(c->s, &d);

		ok(c->ok ? rc == 0 && d == c->want : rc != 0 && d == 7, "real: %s", c->name);
	}
	for (size_t i = 0; i < N(digits); i++) {
		const dcase *c = &digits[i];
		uint64_t u = 7;
		int rc = decimal_digits(c->s, c->len, c->max, &u);

		ok(c->ok ? rc == 0 && u == c->want : rc != 0 && u == 7, "digits: %s", c->name);
	}
	return done_testing();
}
