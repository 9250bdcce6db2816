/*
 * decimal.h - strict decimal integers, for configuration values and options
 */
#ifndef HOOKINBOX_DECIMAL_H
#define HOOKINBOX_DECIMAL_H

/*
 * s is a decimal integer in [min, max] and nothing else: an optional '-',
 * digits, no space, no '+', no trailing text.  0 (*out set) or -1.
 */
int decimal_parse(const char *s, long long min, long long max, long long *out)
	__attribute__((warn_unused_result));

#endif
