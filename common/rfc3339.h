/* SPDX-License-Identifier: ISC */
/*
 * rfc3339.h - RFC 3339 date-times as unix microseconds
 */
#ifndef HOOKINBOX_RFC3339_H
#define HOOKINBOX_RFC3339_H

#include <stdint.h>

/*
 * s (all of it) is an RFC 3339 date-time ("2024-05-01T12:00:00.5+02:00";
 * 'T', 't' or ' ' between date and time, 'Z' or 'z' for UTC, fraction
 * digits beyond the sixth ignored): 0 and *out = unix microseconds
 * (seconds * 1000000 + microseconds), or -1 if malformed.
 */
int rfc3339_us(const char *s, int64_t *out);

#endif
