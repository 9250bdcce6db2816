/* SPDX-License-Identifier: ISC */
/*
 * secret.h - secrets read from files, kept in one place, wiped on free
 *
 * A secret file holds one secret a line (blank lines and lines starting
 * with '#' are ignored); every line is a current secret, so a secret can be
 * rolled with an overlap.  Files that others can read are refused, as libpq
 * refuses such key files: mode 0600 or less, or 0640 or less when owned
 * by root (so "root:hookinbox-intake 0640" works).
 *
 * Secret bytes never leave this module except through secret_get, and are
 * wiped with OPENSSL_cleanse when the set is freed.
 */
#ifndef HOOKINBOX_SECRET_H
#define HOOKINBOX_SECRET_H

#include <stddef.h>

typedef struct secret_set secret_set;

/*
 * Load the file at path.  On error returns NULL and writes a message
 * (which never contains secret bytes) into errbuf.
 * The caller owns the set and frees it with secret_set_free.
 */
secret_set *secret_set_load(const char *path, char *errbuf, size_t errlen);
void secret_set_free(secret_set *set);

size_t secret_count(const secret_set *set);
/* the i-th secret (0-based); the pointer stays owned by the set */
const unsigned char *secret_get(const secret_set *set, size_t i, size_t *len);

#endif
