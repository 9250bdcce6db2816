/* SPDX-License-Identifier: ISC */
/*
 * content_length.h - strict parsing of the CONTENT_LENGTH parameter
 *
 * A module of its own so that the fuzzer (tests/fuzz/fuzz_content_length.c)
 * exercises the very code the responder runs.
 */
#ifndef HOOKINBOX_CONTENT_LENGTH_H
#define HOOKINBOX_CONTENT_LENGTH_H

#include <stddef.h>

/*
 * Decimal digits only: no sign, no blanks, no empty string, at most 18
 * digits (so no overflow).  Returns 0 and sets *out, or -1 (also for NULL).
 */
int content_length_parse(const char *s, size_t *out) __attribute__((warn_unused_result));

#endif
