/* SPDX-License-Identifier: ISC */
/*
 * server.h - the accept loop: request threads over the FastCGI socket
 *
 * Each thread owns a handler (its body buffer, its rejection counts) and
 * accepts connections from the listening socket on fd 0 when it is idle.
 * server_stop closes the door first and then waits for the requests in
 * progress, so a stop or a reload (re-exec) never cuts a request off.
 */
#ifndef HOOKINBOX_SERVER_H
#define HOOKINBOX_SERVER_H

#include "conf.h"
#include "store.h"

typedef struct server server;

/* start threads serving fd 0; cfg and st must outlive the server */
server *server_start(const conf *cfg, store *st, int threads);

/*
 * Stop accepting and wait up to timeout_ms for the requests in progress.
 * Returns 0 and frees the server when every thread has finished, -1 when
 * some are still busy (the caller should then _exit rather than free what
 * they use).
 */
int server_stop(server *srv, int timeout_ms);

#endif
