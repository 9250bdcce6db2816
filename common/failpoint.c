/* SPDX-License-Identifier: ISC */
/*
 * failpoint.c - named crash points, compiled into test builds only
 */
#include "failpoint.h"

#ifdef HOOKINBOX_TEST
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void
failpoint_hit(const char *name)
{
	const char *want = getenv("HOOKINBOX_FAILPOINT");

	if (want != NULL && strcmp(want, name) == 0) {
		fprintf(stderr, "failpoint %s: exiting\n", name);
		_exit(99);
	}
}

void
failpoint_pause(const char *name)
{
	const char *want = getenv("HOOKINBOX_FAILPOINT");
	const struct timespec pause = {.tv_sec = 0, .tv_nsec = 50 * 1000000L};

	if (want != NULL && strcmp(want, name) == 0)
		nanosleep(&pause, NULL);
}
#else
/* keep the translation unit non-empty under -Wpedantic */
typedef int failpoint_unused;
#endif
