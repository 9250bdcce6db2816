/* SPDX-License-Identifier: ISC */
/*
 * tap.h - minimal TAP output for C unit tests, run by prove
 */
#ifndef HOOKINBOX_TAP_H
#define HOOKINBOX_TAP_H

#include <stdio.h>

static int tap_n, tap_failed;

#define ok(cond, ...)                                                                              \
	do {                                                                                       \
		int ok_c_ = (cond) ? 1 : 0;                                                        \
		printf("%sok %d - ", ok_c_ ? "" : "not ", ++tap_n);                                \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
		if (!ok_c_) {                                                                      \
			tap_failed++;                                                              \
			printf("#   failed at %s line %d\n", __FILE__, __LINE__);                  \
		}                                                                                  \
	} while (0)

#define done_testing() (printf("1..%d\n", tap_n), tap_failed ? 1 : 0)

#endif
