/* SPDX-License-Identifier: ISC */
/*
 * test_xmltop.c - the text of a child element of an XML document's root
 */
#include "tap.h"
#include "xmltop.h"

#include <string.h>

int main(void);

/* the text of name in xml, or "(none)" */
static const char *
top(const char *xml, const char *name)
{
	static char buf[256];
	const char *t;
	size_t n;

	if (xml_top_text(xml, strlen(xml), name, &t, &n) != 0 || n >= sizeof(buf))
		return "(none)";
	memcpy(buf, t, n);
	buf[n] = '\0';
	return buf;
}

int
main(void)
{
	const char *bt = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<notification>\n"
			 "  <timestamp type=\"datetime\">2024-05-03T08:00:00Z</timestamp>\n"
			 "  <kind>subscription_went_past_due</kind>\n"
			 "  <subject><subscription><id>s1</id><kind>inner</kind></subscription>"
			 "</subject>\n</notification>\n";

	ok(strcmp(top(bt, "kind"), "subscription_went_past_due") == 0,
	   "braintree: the root's kind, not the subject's");
	ok(strcmp(top(bt, "timestamp"), "2024-05-03T08:00:00Z") == 0, "an element with attributes");
	ok(strcmp(top(bt, "id"), "(none)") == 0, "a grandchild is not a child");
	ok(strcmp(top("<a><x/><kind>k</kind></a>", "kind"), "k") == 0, "after an empty element");
	ok(strcmp(top("<a><!-- <kind>no</kind> --><kind>yes</kind></a>", "kind"), "yes") == 0,
	   "a comment is skipped");
	ok(strcmp(top("<a><b c=\">\"><kind>no</kind></b><kind>yes</kind></a>", "kind"), "yes") == 0,
	   "a '>' in an attribute value does not end the tag");
	ok(strcmp(top("<a><kinds>no</kinds><kind>yes</kind></a>", "kind"), "yes") == 0,
	   "a name is compared whole");
	ok(strcmp(top("<a><kind>a&amp;b</kind></a>", "kind"), "(none)") == 0,
	   "an entity: not plain text");
	ok(strcmp(top("<a><kind><b>x</b></kind></a>", "kind"), "(none)") == 0, "markup inside");
	ok(strcmp(top("<a><kind>never closed", "kind"), "(none)") == 0, "unterminated");
	ok(strcmp(top("<a><kind", "kind"), "(none)") == 0, "a tag cut short");
	ok(strcmp(top("</a><kind>x</kind>", "kind"), "(none)") == 0, "a close before any open");
	ok(strcmp(top("", "kind"), "(none)") == 0, "empty");
	return done_testing();
}
