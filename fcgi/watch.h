/* SPDX-License-Identifier: ISC */
/*
 * watch.h - has the configuration or a secret file changed on disk?
 *
 * The responder reloads on its own when the configuration file or one of
 * the endpoints' secret files changes, so that a secret rotation needs no
 * signal to every process a web server spawned.  A file's stamp is its
 * device, inode, size, modification and change times (a rename over it, a
 * rewrite, a chmod); a missing file has an empty stamp.
 */
#ifndef HOOKINBOX_WATCH_H
#define HOOKINBOX_WATCH_H

#include <stdbool.h>

#include "conf.h"

typedef struct watch watch;

/* the files of cfg, loaded from path, stamped now; the caller frees */
watch *watch_new(const conf *cfg, const char *path);
/* accepts NULL */
void watch_free(watch *w);
/*
 * True when a file's stamp differs from the last one seen; the new stamps
 * are kept, so one change is reported once (a bad file is not retried
 * until it changes again).
 */
bool watch_changed(watch *w);

#endif
