/* SPDX-License-Identifier: ISC */
/*
 * form.h - application/x-www-form-urlencoded bodies and query strings
 *
 * Decodes "k=v&k2=v2" ('+' is a space, %XX an escaped byte; a '%' not
 * followed by two hex digits is kept as it is, as Node's querystring and
 * PHP do).  Used where a provider signs or sends form parameters: Twilio's
 * signature, Slack's slash commands and interactive payloads.
 */
#ifndef HOOKINBOX_FORM_H
#define HOOKINBOX_FORM_H

#include <stddef.h>

typedef struct form_param {
	char *key; /* decoded, NUL-terminated; may hold a NUL byte itself (%00) */
	size_t key_len;
	char *value; /* likewise; "" for "k" or "k=" */
	size_t value_len;
} form_param;

typedef struct form {
	form_param *params; /* in the order received */
	size_t n;
} form;

#define FORM_MAX_PARAMS 1000

/*
 * Parse len bytes at s into *f (empty pieces between '&' are skipped).
 * Returns 0, or -1 when there are more than FORM_MAX_PARAMS parameters.
 * The caller releases *f with form_release in every case.
 */
int form_parse(const char *s, size_t len, form *f) __attribute__((warn_unused_result));
void form_release(form *f);

/* the first parameter named key, or NULL; owned by f */
const form_param *form_get(const form *f, const char *key);

/*
 * Sort the parameters by key, then value (bytewise), and drop exact
 * duplicates: the order Twilio's signature concatenates them in.
 */
void form_sort_unique(form *f);

#endif
