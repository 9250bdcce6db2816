/* SPDX-License-Identifier: ISC */
/*
 * endpoint.h - what a provider reads of an endpoint
 *
 * The configuration (conf/conf.h) sits above providers/: its endpoint_conf
 * holds one provider_endpoint (its member pe), filled from the [endpoint]
 * section, and passes &ep->pe to the dispatchers (verify.h, envelope.h,
 * provider.h).  The providers see these members and nothing else of
 * the configuration, so providers/ compiles with -Icommon -Iproviders.
 */
#ifndef HOOKINBOX_ENDPOINT_H
#define HOOKINBOX_ENDPOINT_H

#include <stdint.h>

#include "hmac.h"     /* hmac_alg */
#include "provider.h" /* provider */
#include "secret.h"

typedef enum hmac_encoding { HMAC_HEX, HMAC_BASE64 } hmac_encoding;
typedef enum hmac_time_unit { HMAC_SECONDS, HMAC_MILLISECONDS } hmac_time_unit;

/* the generic "hmac" provider's settings; NULL strings are unset */
typedef struct hmac_conf {
	char *header;	   /* header carrying the signature, e.g. "X-Signature" */
	hmac_alg alg;	   /* algorithm = sha256 (default) | sha1 | sha512 */
	hmac_encoding enc; /* encoding = hex (default) | base64 */
	char *prefix;	   /* prefix = "sha256=" stripped before decoding */
	char *id_header;   /* id_header = X-Event-Id, or */
	char *id_field;	   /* id_field = id (dotted JSON path, e.g. data.id) */
	char *type_header; /* type_header / type_field likewise */
	char *type_field;
	char *object_field;  /* object_field = data.object.id */
	char *version_field; /* version_field = created (integer or RFC 3339) */
	/* signed_content = v0:{timestamp}:{body} (template.h); unset: the body alone */
	char *signed_content;
	char *timestamp_header; /* timestamp_header = X-Timestamp: {timestamp}, windowed */
	hmac_time_unit ts_unit; /* timestamp_unit = seconds (default) | milliseconds */
} hmac_conf;

typedef struct provider_endpoint {
	provider provider;   /* provider = */
	secret_set *secrets; /* loaded from secret_file; never logged */
	int64_t tolerance;   /* replay window in seconds; 0 = the provider's default */
	char *public_url;    /* Twilio: the URL the provider signs */
	hmac_conf hmac;	     /* provider = hmac only */
	/*
	 * The asymmetric schemes (pkey.h): the provider's keys and the roots
	 * its certificates chain to, files the operator keeps (absolute paths
	 * once loaded), and what provider_endpoint_load made of them at start.
	 */
	char *key_file;	    /* Pub/Sub: Google's JWKS */
	char *ca_file;	    /* PayPal, SNS: the CA bundle; App Store: Apple Root CA - G3 */
	char *cert_cache;   /* PayPal, SNS: directory of fetched signing certificates */
	char *audience;	    /* Pub/Sub: the token's aud */
	struct pkeys *keys; /* owned: provider_endpoint_release frees it */
} provider_endpoint;

#endif
