/*
 * handler.h - one webhook request, from routing to the reply
 *
 * Cheapest rejection first: endpoint and method, then the declared length
 * (413 before reading), then the signature over the exact raw bytes, then
 * the envelope, then one committed insert, and only then the 2xx.
 */
#ifndef HOOKINBOX_HANDLER_H
#define HOOKINBOX_HANDLER_H

#include <fcgiapp.h>

#include "conf.h"
#include "store.h"

typedef struct handler handler;

/* cfg and st stay owned by the caller and must outlive the handler */
handler *handler_new(const conf *cfg, store *st);
void handler_free(handler *h);

/* answer one request; never exits, whatever the peer sent */
void handler_serve(handler *h, FCGX_Request *req);

/* write out rejection counts gathered so far (also done periodically) */
void handler_flush_counts(handler *h);

#endif
