/* SPDX-License-Identifier: ISC */
/*
 * fuzz_fcgirec.c - the whole-request FastCGI parser and its reply framing
 *
 * The input is the bytes of a request as server.c hands them over (a copy,
 * parsed in place).  Accepted means: every variable is a "NAME=value"
 * string and the body lies within the input; a reply of as many bytes as
 * the input is framed as records that add up.
 */
#include "fcgirec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *buf = malloc(size + 1);
	fcgirec r;

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	fcgirec_init(&r);
	if (fcgirec_parse(&r, buf, size) == 0) {
		unsigned char sink[4096];
		size_t n, total = 0, out_len, off = 0, got = 0;
		const unsigned char *out;

		for (char *const *e = r.env; *e != NULL; e++) {
			const char *eq = strchr(*e, '=');

			if (eq == NULL || eq == *e || (unsigned char *)*e < buf ||
			    (unsigned char *)*e >= buf + size)
				abort();
			/* a lookup by the name finds a value (the first of that name) */
			{
				char name[256];
				size_t nl = (size_t)(eq - *e);

				if (nl < sizeof(name)) {
					memcpy(name, *e, nl);
					name[nl] = '\0';
					if (fcgirec_param(&r, name) == NULL)
						abort();
				}
			}
		}
		while ((n = fcgirec_read(&r, sink, sizeof(sink))) > 0)
			total += n;
		if (total != r.body_len || total > size)
			abort();
		fcgirec_write(&r, data, size);
		out = fcgirec_reply(&r, &out_len);
		while (off < out_len) {
			size_t clen;

			if (out_len - off < 8 || out[off] != 1)
				abort();
			clen = (size_t)out[off + 4] << 8 | out[off + 5];
			if (out[off + 1] == 6 && clen > 0 &&
			    memcmp(out + off + 8, data + got, clen) != 0)
				abort();
			if (out[off + 1] == 6)
				got += clen;
			off += 8 + clen + out[off + 6];
		}
		if (off != out_len || got != size)
			abort();
	}
	fcgirec_release(&r);
	free(buf);
	return 0;
}
