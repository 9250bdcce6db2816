/* SPDX-License-Identifier: ISC */
/*
 * msgpart.h - a message given in pieces, MACed or hashed as the
 * concatenation of all its pieces (hmac.h, sha256.h)
 */
#ifndef HOOKINBOX_MSGPART_H
#define HOOKINBOX_MSGPART_H

#include <stddef.h>

typedef struct msg_part {
	const void *data;
	size_t len;
} msg_part;

#endif
