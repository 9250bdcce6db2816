/* SPDX-License-Identifier: ISC */
/*
 * decimal.h - strict decimal numbers: configuration values and options,
 * and the digit runs of protocol fields (CONTENT_LENGTH, signature
 * timestamps, JSON integers, RFC 3339 times)
 */
#ifndef HOOKINBOX_DECIMAL_H
#define HOOKINBOX_DECIMAL_H

#include <stddef.h>
#include <stdint.h>

/*
 * s is a decimal integer in [min, max] and nothing else: an optional '-',
 * digits, no space, no '+', no trailing text.  0 (*out set) or -1.
 */
int decimal_parse(const char *s, long long min, long long max, long long *out)
	__attribute__((warn_unused_result));

/*
 * s is a finite decimal number in the form PostgreSQL's float8 and
 * numeric output and Prometheus samples use (an optional '-', digits, an
 * optional fraction and exponent) and nothing else.  0 (*out set) or -1.
 */
int decimal_real(const char *s, double *out) __attribute__((warn_unused_result));

/*
 * s[0..len) is one or more ASCII digits '0'..'9' (no sign, no space; a NUL
 * among them is not a digit, so s may be shorter than len when it ends in
 * one) worth at most max.  0 (*out set) or -1.
 */
int decimal_digits(const char *s, size_t len, uint64_t max, uint64_t *out)
	__attribute__((warn_unused_result));

#endif
