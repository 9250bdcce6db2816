/* SPDX-License-Identifier: ISC */
/*
 * stampmac.c - the class of schemes that sign the body with an RFC 3339
 * timestamp header (and Twitch's message id) in some order (scheme.h's
 * stamp_mac): Box, Zendesk, Twitch EventSub
 */
#include "base64.h"
#include "hex.h"
#include "rfc3339.h"
#include "scheme.h"
#include "xalloc.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define LAYOUT_MAX 3

/* the signature in one header: [prefix]<enc> of 32 bytes; false when not */
static bool
decode_sig(const stamp_mac *sc, const char *v, size_t len, unsigned char want[32 + 3])
{
	size_t plen = sc->prefix != NULL ? strlen(sc->prefix) : 0;

	if (len < plen || (plen > 0 && memcmp(v, sc->prefix, plen) != 0))
		return false;
	if (sc->enc == HMAC_HEX)
		return hex_decode(v + plen, len - plen, want, 32 + 3) == 32;
	return base64_decode(v + plen, len - plen, want, 32 + 3) == 32;
}

/* the parts in layout order; false when the layout is longer than ours */
static bool
layout_parts(const char *layout, span body, span ts, span id, hmac_part parts[LAYOUT_MAX],
	     size_t *n)
{
	*n = 0;
	for (const char *c = layout; *c != '\0'; c++) {
		span s = *c == 'b' ? body : *c == 't' ? ts : id;

		if (*n == LAYOUT_MAX)
			return false;
		parts[(*n)++] = (hmac_part){s.p, s.len};
	}
	return true;
}

int
scheme_verify_stamp_mac(const stamp_mac *sc, const provider_endpoint *ep, const request_view *req,
			verify_result *res)
{
	unsigned char want[2][32 + 3];
	bool too_long = false, id_long = false, have[2] = {false, false}, present = false;
	size_t tslen, idlen = 0, n;
	int64_t us;
	verify_status st;
	hmac_part parts[LAYOUT_MAX];
	const char *ts = scheme_header(req, sc->ts_header, &tslen, &too_long);
	const char *id = NULL;

	if (strchr(sc->layout, 'i') != NULL &&
	    (id = scheme_header(req, sc->id_header, &idlen, &id_long)) == NULL)
		return scheme_fail(res, VERIFY_UNSIGNED, sc->missing);
	if (id_long)
		return scheme_fail(res, VERIFY_MALFORMED, "delivery id header too long");
	if (ts == NULL)
		return scheme_fail(res, VERIFY_UNSIGNED, sc->missing);
	for (int i = 0; i < 2 && sc->sig_headers[i] != NULL; i++) {
		bool long_one = false;
		size_t len;
		const char *v = scheme_header(req, sc->sig_headers[i], &len, &long_one);

		present = present || v != NULL;
		have[i] = v != NULL && !long_one && decode_sig(sc, v, len, want[i]);
	}
	if (!present)
		return scheme_fail(res, VERIFY_UNSIGNED, sc->missing);
	if (!have[0] && !have[1])
		return scheme_fail(res, VERIFY_MALFORMED, "malformed signature header");
	if (too_long || rfc3339_us(ts, &us) < 0)
		return scheme_fail(res, VERIFY_MALFORMED, "bad timestamp header");
	/* floor division: a time before 1970 is simply stale */
	if ((st = scheme_window(ep, req, us >= 0 ? us / 1000000 : -1 - (-1 - us) / 1000000)) !=
	    VERIFY_OK)
		return scheme_window_fail(res, st);
	if (!layout_parts(sc->layout, (span){(const char *)req->body, req->body_len},
			  (span){ts, tslen}, (span){id, idlen}, parts, &n))
		return scheme_fail(res, VERIFY_MISMATCH, "signature computation failed");
	for (int i = 0; i < 2; i++) {
		if (have[i] &&
		    scheme_match_secrets(HMAC_SHA256, ep, parts, n, want[i], 32, res) == 0)
			return 0;
	}
	return scheme_fail(res, VERIFY_MISMATCH, "signature mismatch");
}

int
scheme_sign_stamp_mac(const stamp_mac *sc, const sign_input *in, sign_output *out, char *errbuf,
		      size_t errlen)
{
	char mac[BASE64_ENCODED_SIZE(HMAC_MAX_LEN) + 2 * HMAC_MAX_LEN], ts[32];
	time_t t = (time_t)in->timestamp;
	struct tm tm;
	hmac_part parts[LAYOUT_MAX];
	size_t n;
	const char *id = in->event_id != NULL ? in->event_id : "";
	int rc;

	if (strchr(sc->layout, 'i') != NULL && in->event_id == NULL) {
		snprintf(errbuf, errlen, "this provider signs its message id: give one");
		return -1;
	}
	if (gmtime_r(&t, &tm) == NULL || strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
		snprintf(errbuf, errlen, "bad timestamp");
		return -1;
	}
	if (!layout_parts(sc->layout, (span){(const char *)in->body, in->body_len},
			  (span){ts, strlen(ts)}, (span){id, strlen(id)}, parts, &n)) {
		snprintf(errbuf, errlen, "bad signature layout");
		return -1;
	}
	if (sc->enc == HMAC_HEX)
		rc = sign_mac_hex(HMAC_SHA256, in, parts, n, mac);
	else
		rc = sign_mac_b64(HMAC_SHA256, in->secret, in->secret_len, parts, n, mac);
	if (rc < 0) {
		snprintf(errbuf, errlen, "could not compute signature");
		return -1;
	}
	sign_add(out, sc->sig_headers[0],
		 xasprintf("%s%s", sc->prefix != NULL ? sc->prefix : "", mac));
	sign_add(out, sc->ts_header, xstrdup(ts));
	sign_add_opt(out, sc->id_header, in->event_id);
	return 0;
}
