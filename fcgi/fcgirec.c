/* SPDX-License-Identifier: ISC */
/*
 * fcgirec.c - a whole FastCGI request in one buffer, and its reply in one write
 *
 * The FastCGI specification, section 3 (records) and 3.4 (name-value
 * pairs).  Every length is checked against what is left of the buffer
 * before use, so that no record or pair can reach past it.
 */
#include "fcgirec.h"

#include "dynbuf.h"
#include "xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_LEN 8
#define BEGIN_REQUEST 1
#define END_REQUEST 3
#define PARAMS 4
#define STDIN 5
#define STDOUT 6
#define ROLE_RESPONDER 1
#define KEEP_CONN 1
/* a record's content is at most 65535 bytes; 65528 keeps it 8-aligned */
#define OUT_CHUNK 65528

void
fcgirec_init(fcgirec *r)
{
	*r = (fcgirec){0};
}

void
fcgirec_release(fcgirec *r)
{
	free(r->env);
	free(r->out);
	*r = (fcgirec){0};
}

/* a pair's length (1 or 4 bytes) at p[*off..len); -1 when it does not fit */
static int
pair_len(const unsigned char *p, size_t len, size_t *off, size_t *out)
{
	if (*off >= len)
		return -1;
	if ((p[*off] & 0x80) == 0) {
		*out = p[(*off)++];
		return 0;
	}
	if (len - *off < 4)
		return -1;
	*out = (size_t)(p[*off] & 0x7f) << 24 | (size_t)p[*off + 1] << 16 |
	       (size_t)p[*off + 2] << 8 | p[*off + 3];
	*off += 4;
	return 0;
}

/*
 * The pairs of p[0..len) made "NAME=value" strings in place: a pair's
 * lengths take at least two bytes, as many as its '=' and NUL, so each
 * string ends before the next pair begins.
 */
static int
parse_pairs(fcgirec *r, unsigned char *p, size_t len)
{
	size_t rd = 0, wr = 0, n = 0;

	while (rd < len) {
		size_t nl, vl;

		if (pair_len(p, len, &rd, &nl) != 0 || pair_len(p, len, &rd, &vl) != 0 || nl == 0 ||
		    nl > len - rd || vl > len - rd - nl)
			return -1;
		/* a name with '=' or NUL would make another variable's lookup find it */
		if (memchr(p + rd, '=', nl) != NULL || memchr(p + rd, '\0', nl) != NULL)
			return -1;
		r->env = xgrow(r->env, n + 2, &r->env_alloc, sizeof(*r->env));
		r->env[n++] = (char *)p + wr;
		memmove(p + wr, p + rd, nl);
		p[wr + nl] = '=';
		memmove(p + wr + nl + 1, p + rd + nl, vl);
		p[wr + nl + 1 + vl] = '\0';
		wr += nl + vl + 2;
		rd += nl + vl;
	}
	r->env = xgrow(r->env, n + 1, &r->env_alloc, sizeof(*r->env));
	r->env[n] = NULL;
	return 0;
}

int
fcgirec_parse(fcgirec *r, unsigned char *buf, size_t len)
{
	size_t off = 0, wr = 0, params_len = 0;
	bool params_done = false;

	r->id = 0;
	r->body = NULL;
	r->body_len = r->body_off = 0;
	r->out_len = 0;
	for (;;) {
		const unsigned char *h = buf + off;
		unsigned type, id;
		size_t clen, rec;

		if (len - off < HEADER_LEN || h[0] != 1)
			return -1;
		type = h[1];
		id = (unsigned)h[2] << 8 | h[3];
		clen = (size_t)h[4] << 8 | h[5];
		rec = HEADER_LEN + clen + h[6];
		if (rec > len - off || id == 0)
			return -1;
		if (r->id == 0) {
			/* the first record begins the request, as a responder */
			if (type != BEGIN_REQUEST || clen != 8 ||
			    ((unsigned)h[8] << 8 | h[9]) != ROLE_RESPONDER)
				return -1;
			r->id = id;
			r->keep_conn = (h[10] & KEEP_CONN) != 0;
		} else if (id == r->id && type == PARAMS && !params_done) {
			memmove(buf + wr, h + HEADER_LEN, clen);
			wr += clen;
			params_len += clen;
			params_done = clen == 0;
		} else if (id == r->id && type == STDIN && params_done) {
			memmove(buf + wr, h + HEADER_LEN, clen);
			wr += clen;
			r->body_len += clen;
			if (clen == 0) {
				/* the end of the body ends the buffer */
				if (rec != len - off)
					return -1;
				break;
			}
		} else {
			/* another request's record, or one out of its place */
			return -1;
		}
		off += rec;
	}
	r->body = buf + params_len;
	return parse_pairs(r, buf, params_len);
}

const char *
fcgirec_param(const fcgirec *r, const char *name)
{
	size_t n = strlen(name);

	for (char *const *e = r->env; e != NULL && *e != NULL; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

size_t
fcgirec_read(fcgirec *r, void *buf, size_t len)
{
	size_t left = r->body_len - r->body_off;

	if (len > left)
		len = left;
	memcpy(buf, r->body + r->body_off, len);
	r->body_off += len;
	return len;
}

/* room for n more bytes of output */
static unsigned char *
out_room(fcgirec *r, size_t n)
{
	if (r->out_len == 0)
		r->out_len = HEADER_LEN;
	r->out = xgrow(r->out, r->out_len + n, &r->out_alloc, 1);
	return r->out + r->out_len;
}

void
fcgirec_write(fcgirec *r, const void *buf, size_t len)
{
	memcpy(out_room(r, len), buf, len);
	r->out_len += len;
}

static void
put_header(unsigned char *at, unsigned type, unsigned id, size_t clen, size_t pad)
{
	at[0] = 1;
	at[1] = (unsigned char)type;
	at[2] = (unsigned char)(id >> 8);
	at[3] = (unsigned char)id;
	at[4] = (unsigned char)(clen >> 8);
	at[5] = (unsigned char)clen;
	at[6] = (unsigned char)pad;
	at[7] = 0;
}

const unsigned char *
fcgirec_reply(fcgirec *r, size_t *len)
{
	size_t data = r->out_len > HEADER_LEN ? r->out_len - HEADER_LEN : 0;
	size_t chunks = (data + OUT_CHUNK - 1) / OUT_CHUNK; /* 0: no data record */
	size_t extra = chunks > 1 ? (chunks - 1) * HEADER_LEN : 0;
	size_t pad = (8 - data % 8) % 8;

	(void)out_room(r, extra + pad + 2 * HEADER_LEN + 8);
	/* past one record (rare: our replies are small), each chunk moved up behind its header */
	for (size_t k = chunks; k-- > 1;) {
		size_t from = HEADER_LEN + k * OUT_CHUNK;
		size_t n = data - k * OUT_CHUNK < OUT_CHUNK ? data - k * OUT_CHUNK : OUT_CHUNK;
		size_t to = from + k * HEADER_LEN;

		memmove(r->out + to, r->out + from, n);
		put_header(r->out + to - HEADER_LEN, STDOUT, r->id, n, k == chunks - 1 ? pad : 0);
	}
	if (chunks > 0)
		put_header(r->out, STDOUT, r->id, chunks > 1 ? OUT_CHUNK : data,
			   chunks > 1 ? 0 : pad);
	r->out_len = chunks > 0 ? HEADER_LEN + data + extra : 0;
	memset(r->out + r->out_len, 0, pad);
	r->out_len += pad;
	put_header(r->out + r->out_len, STDOUT, r->id, 0, 0);
	r->out_len += HEADER_LEN;
	put_header(r->out + r->out_len, END_REQUEST, r->id, 8, 0);
	r->out_len += HEADER_LEN;
	/* appStatus 0, FCGI_REQUEST_COMPLETE */
	memset(r->out + r->out_len, 0, 8);
	r->out_len += 8;
	*len = r->out_len;
	r->out_len = 0;
	return r->out;
}
