/* SPDX-License-Identifier: ISC */
/*
 * wipe.h - wiping buffers that held secret material
 */
#ifndef HOOKINBOX_WIPE_H
#define HOOKINBOX_WIPE_H

#include <stddef.h>

/* OPENSSL_cleanse, which the compiler may not optimise away; p may be NULL */
void secure_wipe(void *p, size_t len);

#endif
