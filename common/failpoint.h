/*
 * failpoint.h - named crash points, compiled into test builds only
 *
 * FAILPOINT("name") makes the process exit at once (_exit, no cleanup,
 * no reply, no commit of anything still open) when the environment variable
 * HOOKINBOX_FAILPOINT names it.  In a release build it expands to nothing,
 * so the shipped binaries contain no failure points.
 */
#ifndef HOOKINBOX_FAILPOINT_H
#define HOOKINBOX_FAILPOINT_H

#ifdef HOOKINBOX_TEST
void failpoint_hit(const char *name);
#define FAILPOINT(name) failpoint_hit(name)
#else
#define FAILPOINT(name) ((void)0)
#endif

#endif
