/* SPDX-License-Identifier: ISC */
/*
 * failpoint.h - named crash points, compiled into test builds only
 *
 * FAILPOINT("name") makes the process exit at once (_exit, no cleanup,
 * no reply, no commit of anything still open) when the environment variable
 * HOOKINBOX_FAILPOINT names it; FAILPOINT_PAUSE("name") makes the thread
 * wait 50 ms instead (to let work pile up).  In a release build both expand
 * to nothing, so the shipped binaries contain no failure points.
 */
#ifndef HOOKINBOX_FAILPOINT_H
#define HOOKINBOX_FAILPOINT_H

#ifdef HOOKINBOX_TEST
void failpoint_hit(const char *name);
void failpoint_pause(const char *name);
#define FAILPOINT(name) failpoint_hit(name)
#define FAILPOINT_PAUSE(name) failpoint_pause(name)
#else
#define FAILPOINT(name) ((void)0)
#define FAILPOINT_PAUSE(name) ((void)0)
#endif

#endif
