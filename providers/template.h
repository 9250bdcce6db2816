/* SPDX-License-Identifier: ISC */
/*
 * template.h - the signed content of provider = hmac, written as a
 * template of placeholders and literal text
 *
 *   signed_content = v0:{timestamp}:{body}
 *
 * {body} the raw body, {timestamp} the timestamp header's value as sent,
 * {header:Name} a request header's value as sent, {method} the method,
 * {url} the endpoint's public_url then "?" and the query the request
 * arrived with, if any; "{{" and "}}" are literal braces, anything else
 * literal text.  The configuration parses the template once to refuse a
 * bad one at its line; the verifier and the signer parse it again on the
 * stack.  The pieces point into the template and the parts into it and
 * the request, so nothing is allocated and every size is bounded.
 */
#ifndef HOOKINBOX_TEMPLATE_H
#define HOOKINBOX_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>

#include "hmac.h" /* hmac_part */

#define TEMPLATE_MAX 512	    /* bytes of a template */
#define TEMPLATE_PIECES_MAX 16	    /* placeholders and literals */
#define TEMPLATE_HEADER_NAME_MAX 64 /* the Name of {header:Name} */
/* {url} is up to three parts (public_url, "?", the query) */
#define TEMPLATE_PARTS_MAX (3 * TEMPLATE_PIECES_MAX)

typedef enum template_kind {
	TPL_TEXT,      /* literal text: p, len */
	TPL_BODY,      /* {body} */
	TPL_TIMESTAMP, /* {timestamp} */
	TPL_HEADER,    /* {header:Name}: the name in p, len */
	TPL_METHOD,    /* {method} */
	TPL_URL	       /* {url} */
} template_kind;

typedef struct template_piece {
	template_kind kind;
	const char *p; /* into the template string */
	size_t len;
} template_piece;

typedef struct template
{
	template_piece piece[TEMPLATE_PIECES_MAX];
	size_t n;
}
template;

/*
 * Parse s into *t, which points into s from now on: 0, or -1 with what is
 * wrong in errbuf (it quotes the template's own text, never a secret).
 * A template must sign {body}.
 */
int template_parse(const char *s, template *t, char *errbuf, size_t errlen)
	__attribute__((warn_unused_result));

/* whether t has a piece of kind k */
bool template_has(const template *t, template_kind k);
/* whether t signs the header name ({header:Name}, names compared case-insensitively) */
bool template_signs_header(const template *t, const char *name);

/* what the placeholders stand for, from a request or a sender */
typedef struct template_values {
	hmac_part body;
	hmac_part timestamp;
	const char *method;
	hmac_part url;	 /* public_url up to its '?', or the URL a sender requests */
	hmac_part query; /* data NULL: no "?" and no query */
	/* the value of header name (NUL-terminated); false when there is none */
	bool (*header)(void *ctx, const char *name, hmac_part *value);
	void *ctx;
} template_values;

/*
 * The parts of the signed content, in order, into parts (n of them): 0, or
 * -1 with name the header v->header has no value for.
 */
int template_parts(const template *t, const template_values *v, hmac_part parts[TEMPLATE_PARTS_MAX],
		   size_t *n, char name[TEMPLATE_HEADER_NAME_MAX + 1])
	__attribute__((warn_unused_result));

#endif
