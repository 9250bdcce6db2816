/* SPDX-License-Identifier: ISC */
/*
 * test_fcgirec.c - whole FastCGI requests parsed in place, replies framed
 *
 * The integration tests send what lighttpd sends; this covers the records
 * a web server may also split or pad, and what is left to libfcgi.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fcgirec.h"
#include "tap.h"

int main(void);

typedef struct msg {
	unsigned char b[200000];
	size_t n;
} msg;

static void
rec(msg *m, unsigned type, unsigned id, const void *data, size_t len, size_t pad)
{
	unsigned char *h = m->b + m->n;

	h[0] = 1;
	h[1] = (unsigned char)type;
	h[2] = (unsigned char)(id >> 8);
	h[3] = (unsigned char)id;
	h[4] = (unsigned char)(len >> 8);
	h[5] = (unsigned char)len;
	h[6] = (unsigned char)pad;
	h[7] = 0;
	memcpy(h + 8, data, len);
	memset(h + 8 + len, 0xee, pad);
	m->n += 8 + len + pad;
}

static void
begin(msg *m, unsigned id, unsigned role, unsigned flags)
{
	const unsigned char b[8] = {(unsigned char)(role >> 8), (unsigned char)role,
				    (unsigned char)flags};

	m->n = 0;
	rec(m, 1, id, b, 8, 0);
}

/* one name-value pair, with 4-byte lengths when asked */
static size_t
pair(unsigned char *p, const char *name, const char *value, bool long_len)
{
	size_t nl = strlen(name), vl = strlen(value), o = 0;

	if (long_len) {
		p[o++] = (unsigned char)(0x80 | nl >> 24);
		p[o++] = (unsigned char)(nl >> 16);
		p[o++] = (unsigned char)(nl >> 8);
		p[o++] = (unsigned char)nl;
	} else {
		p[o++] = (unsigned char)nl;
	}
	p[o++] = (unsigned char)vl;
	memcpy(p + o, name, nl);
	memcpy(p + o + nl, value, vl);
	return o + nl + vl;
}

/* a good request: the pairs split across two records, the body across two, padded */
static void
good(msg *m, unsigned flags)
{
	unsigned char p[512];
	size_t n = 0;

	begin(m, 1, 1, flags);
	n += pair(p + n, "REQUEST_METHOD", "POST", false);
	n += pair(p + n, "REQUEST_URI", "/hooks/stripe-live", true);
	n += pair(p + n, "HTTP_STRIPE_SIGNATURE", "t=1,v1=ab", false);
	n += pair(p + n, "EMPTY", "", false);
	rec(m, 4, 1, p, 10, 6);
	rec(m, 4, 1, p + 10, n - 10, 0);
	rec(m, 4, 1, "", 0, 0);
	rec(m, 5, 1, "hello ", 6, 2);
	rec(m, 5, 1, "world", 5, 3);
	rec(m, 5, 1, "", 0, 0);
}

static unsigned
get16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/* the reply's records in order: their types and total content; false if malformed */
static bool
walk_reply(const unsigned char *p, size_t len, unsigned id, char *types, size_t *data)
{
	size_t off = 0, t = 0;

	*data = 0;
	while (off < len) {
		size_t clen;

		if (len - off < 8 || p[off] != 1 || get16(p + off + 2) != id)
			return false;
		clen = get16(p + off + 4);
		if (p[off + 1] == 6)
			*data += clen;
		types[t++] = p[off + 1] == 6 ? (clen ? 'o' : 'e') : p[off + 1] == 3 ? 'x' : '?';
		off += 8 + clen + p[off + 6];
	}
	types[t] = '\0';
	return off == len;
}

int
main(void)
{
	static msg m;
	fcgirec r;
	char buf[64];
	size_t n;
	const unsigned char *out;
	char types[16];
	size_t data;

	fcgirec_init(&r);

	good(&m, 0);
	ok(fcgirec_parse(&r, m.b, m.n) == 0, "a request split across records parses");
	ok(r.id == 1 && !r.keep_conn, "its id, no FCGI_KEEP_CONN");
	ok(fcgirec_param(&r, "REQUEST_METHOD") != NULL &&
		   strcmp(fcgirec_param(&r, "REQUEST_METHOD"), "POST") == 0,
	   "a variable split across records");
	ok(strcmp(fcgirec_param(&r, "REQUEST_URI"), "/hooks/stripe-live") == 0,
	   "a name with a 4-byte length");
	ok(strcmp(fcgirec_param(&r, "HTTP_STRIPE_SIGNATURE"), "t=1,v1=ab") == 0,
	   "a value with '='");
	ok(strcmp(fcgirec_param(&r, "EMPTY"), "") == 0, "an empty value");
	ok(fcgirec_param(&r, "REQUEST") == NULL && fcgirec_param(&r, "NONE") == NULL,
	   "a prefix of a name, or no such name: NULL");
	ok(r.env[0] != NULL && strcmp(r.env[0], "REQUEST_METHOD=POST") == 0 && r.env[4] == NULL,
	   "the variables as NAME=value, NULL last");
	n = fcgirec_read(&r, buf, 4);
	n += fcgirec_read(&r, buf + n, sizeof(buf) - n);
	ok(n == 11 && memcmp(buf, "hello world", 11) == 0, "the body, its records joined");
	ok(fcgirec_read(&r, buf, sizeof(buf)) == 0, "then its end");

	fcgirec_write(&r, "Status: 200 OK\r\n\r\n", 18);
	fcgirec_write(&r, "{}\n", 3);
	out = fcgirec_reply(&r, &n);
	ok(walk_reply(out, n, 1, types, &data) && strcmp(types, "oex") == 0 && data == 21,
	   "the reply: its data, the empty FCGI_STDOUT, FCGI_END_REQUEST (%s, %zu)", types, data);
	ok(n % 8 == 0 && memcmp(out + 8, "Status: 200 OK\r\n\r\n{}\n", 21) == 0,
	   "its bytes, padded to 8");
	ok(get16(out + n - 8) == 0 && out[n - 8 + 2] == 0 && out[n - 8 + 3] == 0 &&
		   out[n - 8 + 4] == 0,
	   "application status 0, request complete");

	good(&m, 1);
	ok(fcgirec_parse(&r, m.b, m.n) == 0 && r.keep_conn, "FCGI_KEEP_CONN");
	out = fcgirec_reply(&r, &n);
	ok(walk_reply(out, n, 1, types, &data) && strcmp(types, "ex") == 0 && n == 24,
	   "a reply with no bytes: the stream's end only");

	{
		static unsigned char big[150000];
		size_t got = 0;
		bool same = true;

		for (size_t i = 0; i < sizeof(big); i++)
			big[i] = (unsigned char)(i * 7);
		good(&m, 0);
		(void)fcgirec_parse(&r, m.b, m.n);
		fcgirec_write(&r, big, 1000);
		fcgirec_write(&r, big + 1000, sizeof(big) - 1000);
		out = fcgirec_reply(&r, &n);
		ok(walk_reply(out, n, 1, types, &data) && strcmp(types, "oooex") == 0 &&
			   data == sizeof(big),
		   "a reply past one record: three records of data (%s, %zu)", types, data);
		for (size_t off = 0; off < n && out[off + 1] == 6;) {
			size_t clen = get16(out + off + 4);

			same = same && memcmp(out + off + 8, big + got, clen) == 0;
			got += clen;
			off += 8 + clen + out[off + 6];
		}
		ok(same && got == sizeof(big), "its bytes in order");
	}

	/* what is left to libfcgi */
	good(&m, 0);
	m.b[9] = 2; /* role: authorizer */
	ok(fcgirec_parse(&r, m.b, m.n) == -1, "another role: not taken");
	good(&m, 0);
	ok(fcgirec_parse(&r, m.b, m.n - 1) == -1, "cut inside the last header: not taken");
	good(&m, 0);
	m.b[m.n++] = 0;
	ok(fcgirec_parse(&r, m.b, m.n) == -1, "a byte past the empty FCGI_STDIN: not taken");
	good(&m, 0);
	m.b[0] = 2;
	ok(fcgirec_parse(&r, m.b, m.n) == -1, "another version: not taken");
	good(&m, 0);
	m.b[16 + 3] = 2; /* the first FCGI_PARAMS under request id 2 */
	ok(fcgirec_parse(&r, m.b, m.n) == -1, "two request ids: not taken");
	m.n = 0;
	rec(&m, 9, 0, "", 0, 0); /* FCGI_GET_VALUES */
	ok(fcgirec_parse(&r, m.b, m.n) == -1, "a management record: not taken");
	begin(&m, 1, 1, 0);
	rec(&m, 5, 1, "", 0, 0);
	ok(fcgirec_parse(&r, m.b, m.n) == -1, "a body before the parameters' end: not taken");
	begin(&m, 1, 1, 0);
	rec(&m, 4, 1, "", 0, 0);
	rec(&m, 2, 1, "", 0, 0); /* FCGI_ABORT_REQUEST */
	ok(fcgirec_parse(&r, m.b, m.n) == -1, "an abort: not taken");
	begin(&m, 1, 1, 0);
	rec(&m, 4, 1,
	    "\x05\x01"
	    "AB",
	    4, 0); /* lengths say 6 bytes, 2 follow */
	rec(&m, 4, 1, "", 0, 0);
	rec(&m, 5, 1, "", 0, 0);
	ok(fcgirec_parse(&r, m.b, m.n) == -1, "a pair longer than its stream: not taken");
	begin(&m, 1, 1, 0);
	rec(&m, 4, 1, "\x83\x00", 2, 0); /* a 4-byte length cut short */
	rec(&m, 4, 1, "", 0, 0);
	rec(&m, 5, 1, "", 0, 0);
	ok(fcgirec_parse(&r, m.b, m.n) == -1, "a length cut short: not taken");
	begin(&m, 1, 1, 0);
	rec(&m, 4, 1,
	    "\x03\x01"
	    "A=BC",
	    6, 0);
	rec(&m, 4, 1, "", 0, 0);
	rec(&m, 5, 1, "", 0, 0);
	ok(fcgirec_parse(&r, m.b, m.n) == -1, "a name with '=': not taken");
	begin(&m, 1, 1, 0);
	rec(&m, 4, 1, "", 0, 0);
	rec(&m, 5, 1, "", 0, 0);
	ok(fcgirec_parse(&r, m.b, m.n) == 0 && r.env[0] == NULL && fcgirec_read(&r, buf, 1) == 0,
	   "no variables, no body");

	fcgirec_release(&r);
	return done_testing();
}
