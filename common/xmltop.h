/* SPDX-License-Identifier: ISC */
/*
 * xmltop.h - the text of a child element of an XML document's root
 *
 * Enough XML to read a few plain fields of a provider's notification
 * (Braintree's <notification><kind>…</kind>): a prolog, comments,
 * attributes and nested elements are skipped; no DTD, no entity is
 * expanded, nothing is allocated.  Anything it does not understand is
 * "not found", never a crash.
 */
#ifndef HOOKINBOX_XMLTOP_H
#define HOOKINBOX_XMLTOP_H

#include <stddef.h>

/*
 * The text of the first element named name among the root element's
 * children, when that text is plain (no markup, no '&'): 0 with *text
 * pointing into xml and *len set, else -1.  The root's name is not
 * checked.
 */
int xml_top_text(const char *xml, size_t len, const char *name, const char **text, size_t *tlen);

#endif
