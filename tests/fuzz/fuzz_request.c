/* SPDX-License-Identifier: ISC */
/*
 * fuzz_request.c - shared set-up for the request harnesses
 */
#include "fuzz_request.h"

#include "xalloc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* the secrets every endpoint holds (each is tried: rotation) */
/*
 * an HMAC key in hex (adyen_platform, adyen), Ed25519 public keys in hex
 * (discord) and base64 (telnyx), a P-256 public key (sendgrid)
 */
static const char secrets_text[] =
	"whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM=\n"
	"fuzz-secret-0123456789\n"
	"44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056\n"
	"d04ab232742bb4ab3a1368bd4615e4e6d0224ab71a016baf8520a332c9778737\n"
	"F8t5+ytBIPKx7GXkGY1uCLKOgT/rAeSkAIObheGAgM4=\n"
	"fuzz-user:fuzz-password\n"
	/* a P-256 verification key as SendGrid shows it (make-seeds.pl holds its private half) */
	"MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEc86dilaiHDbAsuSB6T4+FjmXUBDba4J6B77JilJMWTlqrK19lUMf1uhQi"
	"//N4WHcJYiMNbFdCU0s44venbX4SA==\n";

/* the asymmetric providers' keys: a Plaid JWK a line, Google's JWKS, a CA (a certificate) */
static const char plaid_keys[] =
	"{\"kty\":\"EC\",\"x\":\"nf6ylPYMFXNpmxSWYds0n5CH0dAMmL4k-YqxddEVyt0\",\"y\":\"EflnqKbJxfQUe8eWop4tqvWw99u2ABUc7by8OPJP04w\",\"crv\":\"P-256\",\"kid\":\"fuzz-ec\"}\n";
static const char google_jwks[] =
	"{\"keys\":[{\"kty\":\"RSA\",\"n\":\"t-jQEUmLuytq6ADnEszs4j4kzz206C5rRXfY_Z5p23c_vL051GqKrEN7C4tx1fuo_YDLS5Vvumn4hARjQvkhDnhgngzWj6xNcGLeigyE-xfC58O8PPV4LDxWYgm3nNuWeSruD8arvSF2EyPgh9sPbA3c4TekckJrNRiydvV9ae3AGrihB0P702V7_f3Z20Jic2AICK-cY5MoLUajfWMtLe9947sEmzMacbQDBN5YCBwDhxnC2Z0HPtofH5A-ufQTPtciL8BpHAxXPb8dhTZ8DWn_UxZb6_Q-ODz8wYV_CSKf8iXRf5wCs-AvT6vK0cDZQS8IzcUQFi3U-BFu8-ytUw\",\"e\":\"AQAB\",\"kid\":\"fuzz-rsa\"}]}\n";
static const char ca_pem[] = "-----BEGIN CERTIFICATE-----\n"
			     "MIIBdjCCARugAwIBAgIUMBuCD1+tNUh2RcS0cUadoMTslIMwCgYIKoZIzj0EAwIw\n"
			     "DzENMAsGA1UEAwwEZnV6ejAgFw0yNjEyMDIwOTExMDVaGA8yMTI2MTEwODA5MTEw\n"
			     "NVowDzENMAsGA1UEAwwEZnV6ejBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABD5/\n"
			     "EVyeWOSGhKY+HeScJr/SLMhPP9XbN51Vka/EX75SSnL+aMM3wvgRfwa5Ckjip1hv\n"
			     "j9YLgtklp1VFgC5h3WGjUzBRMB0GA1UdDgQWBBRxSoh4OAWrbDiYfNRpVBkMS18x\n"
			     "4TAfBgNVHSMEGDAWgBRxSoh4OAWrbDiYfNRpVBkMS18x4TAPBgNVHRMBAf8EBTAD\n"
			     "AQH/MAoGCCqGSM49BAMCA0kAMEYCIQCUhZyyacuezwORMaUYk9mt0zN5aogziBiI\n"
			     "JcvrfOy/fwIhANynHQhIN8jl79MOMcjA7MfVOIjyh8qNTyu1ydKILvl1\n"
			     "-----END CERTIFICATE-----\n";

/* a string a line: one literal would pass the 4095 bytes C17 promises (-Woverlength-strings) */
static const char *const conf_text[] = {
	"[database]\n",
	"conninfo = dbname=none\n",
	"[intake]\n",
	"max_body = 65536\n",
	"[endpoint stripe]\nprovider = stripe\nsecret_file = secrets\n",
	"[endpoint github]\nprovider = github\nsecret_file = secrets\n",
	"[endpoint standard]\nprovider = standard\nsecret_file = secrets\n",
	"[endpoint svix]\nprovider = svix\nsecret_file = secrets\n",
	"[endpoint shopify]\nprovider = shopify\nsecret_file = secrets\n",
	"[endpoint slack]\nprovider = slack\nsecret_file = secrets\n",
	"[endpoint paddle]\nprovider = paddle\nsecret_file = secrets\ntolerance = 300\n",
	"[endpoint twilio]\nprovider = twilio\nsecret_file = secrets\n",
	"public_url = https://hooks.example.com/hooks/twilio\n",
	"[endpoint twilio-port]\nprovider = twilio\nsecret_file = secrets\n",
	"public_url = http://user@[::1]:8080/hooks/twilio?x=1\n",
	"[endpoint gitlab]\nprovider = gitlab\nsecret_file = secrets\n",
	"[endpoint square]\nprovider = square\nsecret_file = secrets\n",
	"public_url = https://hooks.example.com/hooks/square\n",
	"[endpoint hmac]\nprovider = hmac\nsecret_file = secrets\nheader = X-Signature\n",
	"prefix = sha256=\nid_header = X-Event-Id\ntype_field = type\n",
	"object_field = data.object.id\nversion_field = created\n",
	"[endpoint hmac-b64]\nprovider = hmac\nsecret_file = secrets\nheader = X-Signature\n",
	"algorithm = sha1\nencoding = base64\nid_field = data.id\ntype_header = X-Event\n",
	"version_field = meta.at\n",
	"[endpoint hmac-512]\nprovider = hmac\nsecret_file = secrets\nheader = X-Signature\n",
	"algorithm = sha512\nid_header = X-Event-Id\n",
	/* signed_content: a template (template.h) over a header, a timestamp, the URL */
	"[endpoint hmac-tpl]\nprovider = hmac\nsecret_file = secrets\nheader = X-Signature\n",
	"prefix = v1=\nid_header = X-Event-Id\ntype_field = type\n",
	"signed_content = {header:X-Event-Id}.{timestamp}.{body}\ntimestamp_header = X-Timestamp\n",
	"[endpoint hmac-url]\nprovider = hmac\nsecret_file = secrets\nheader = X-Signature\n",
	"algorithm = sha512\nencoding = base64\nid_field = id\n",
	"signed_content = {method}&{url}&{header:X-Tenant}&{timestamp}&{{{body}}}\n",
	"timestamp_header = X-Timestamp\ntimestamp_unit = milliseconds\n",
	"public_url = https://hooks.example.com/hooks/hmac-url\n",
	"[endpoint adyen_platform]\nprovider = adyen_platform\nsecret_file = secrets\n",
	"[endpoint linear]\nprovider = linear\nsecret_file = secrets\n",
	"[endpoint mux]\nprovider = mux\nsecret_file = secrets\n",
	"[endpoint workos]\nprovider = workos\nsecret_file = secrets\n",
	"[endpoint razorpay]\nprovider = razorpay\nsecret_file = secrets\n",
	"[endpoint discord]\nprovider = discord\nsecret_file = secrets\n",
	"[endpoint zoom]\nprovider = zoom\nsecret_file = secrets\n",
	"[endpoint telnyx]\nprovider = telnyx\nsecret_file = secrets\n",
	"[endpoint intercom]\nprovider = intercom\nsecret_file = secrets\n",
	"[endpoint bitbucket]\nprovider = bitbucket\nsecret_file = secrets\n",
	"[endpoint typeform]\nprovider = typeform\nsecret_file = secrets\n",
	"[endpoint calendly]\nprovider = calendly\nsecret_file = secrets\n",
	"[endpoint woocommerce]\nprovider = woocommerce\nsecret_file = secrets\n",
	"[endpoint sentry]\nprovider = sentry\nsecret_file = secrets\n",
	"[endpoint pagerduty]\nprovider = pagerduty\nsecret_file = secrets\n",
	"[endpoint vercel]\nprovider = vercel\nsecret_file = secrets\n",
	"[endpoint checkout]\nprovider = checkout\nsecret_file = secrets\n",
	"[endpoint lemonsqueezy]\nprovider = lemonsqueezy\nsecret_file = secrets\n",
	"[endpoint notion]\nprovider = notion\nsecret_file = secrets\n",
	"[endpoint postmark]\nprovider = postmark\nsecret_file = secrets\n",
	"[endpoint chargebee]\nprovider = chargebee\nsecret_file = secrets\n",
	"[endpoint box]\nprovider = box\nsecret_file = secrets\n",
	"[endpoint webflow]\nprovider = webflow\nsecret_file = secrets\n",
	"[endpoint gocardless]\nprovider = gocardless\nsecret_file = secrets\n",
	"[endpoint meta]\nprovider = meta\nsecret_file = secrets\n",
	"[endpoint clerk]\nprovider = clerk\nsecret_file = secrets\n",
	"[endpoint resend]\nprovider = resend\nsecret_file = secrets\n",
	"[endpoint okta]\nprovider = okta\nsecret_file = secrets\n",
	"[endpoint zendesk]\nprovider = zendesk\nsecret_file = secrets\n",
	"[endpoint adyen]\nprovider = adyen\nsecret_file = secrets\n",
	"[endpoint sendgrid]\nprovider = sendgrid\nsecret_file = secrets\n",
	"[endpoint hubspot]\nprovider = hubspot\nsecret_file = secrets\n",
	"public_url = https://hooks.example.com/hooks/hubspot\n",
	"[endpoint mailgun]\nprovider = mailgun\nsecret_file = secrets\n",
	"[endpoint braintree]\nprovider = braintree\nsecret_file = secrets\n",
	"[endpoint trello]\nprovider = trello\nsecret_file = secrets\n",
	"public_url = https://hooks.example.com/hooks/trello\n",
	"[endpoint mandrill]\nprovider = mandrill\nsecret_file = secrets\n",
	"public_url = https://hooks.example.com/hooks/mandrill\n",
	"[endpoint twitter]\nprovider = twitter\nsecret_file = secrets\n",
	"[endpoint dropbox]\nprovider = dropbox\nsecret_file = secrets\n",
	"[endpoint asana]\nprovider = asana\nsecret_file = secrets\n",
	"[endpoint twitch]\nprovider = twitch\nsecret_file = secrets\n",
	"[endpoint xero]\nprovider = xero\nsecret_file = secrets\n",
	"[endpoint docusign]\nprovider = docusign\nsecret_file = secrets\n",
	"[endpoint plaid]\nprovider = plaid\nsecret_file = plaid-keys\n",
	"[endpoint pubsub]\nprovider = pubsub\nsecret_file = secrets\nkey_file = google.jwks\n",
	"audience = https://fuzz.example/ps\n",
	"[endpoint paypal]\nprovider = paypal\nsecret_file = secrets\nca_file = ca.pem\n",
	"cert_cache = certs\n",
	"[endpoint sns]\nprovider = sns\nsecret_file = secrets\nca_file = ca.pem\ncert_cache = certs\n",
	"[endpoint apple]\nprovider = apple\nsecret_file = secrets\nca_file = ca.pem\n",
	"[endpoint graph]\nprovider = graph\nsecret_file = secrets\n",
};

/* what the asymmetric endpoints read besides the secrets, under the temp directory */
static const struct {
	const char *name, *text;
} key_files[] = {{"plaid-keys", plaid_keys}, {"google.jwks", google_jwks}, {"ca.pem", ca_pem}};

static conf *the_conf;
static char dir[] = "/tmp/hookinbox-fuzz-XXXXXX";

static void
write_parts(const char *path, const char *const *parts, size_t n, mode_t mode)
{
	FILE *fp = fopen(path, "w");
	bool ok = fp != NULL;

	for (size_t i = 0; ok && i < n; i++)
		ok = fputs(parts[i], fp) >= 0;
	if (fp != NULL && fclose(fp) != 0)
		ok = false;
	if (!ok || chmod(path, mode) != 0) {
		perror(path);
		abort();
	}
}

static void
write_file(const char *path, const char *text, mode_t mode)
{
	write_parts(path, &text, 1, mode);
}

static void
cleanup(void)
{
	char path[sizeof(dir) + 32];

	conf_free(the_conf);
	the_conf = NULL;
	snprintf(path, sizeof(path), "%s/secrets", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/hookinbox.conf", dir);
	unlink(path);
	for (size_t i = 0; i < sizeof(key_files) / sizeof(key_files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, key_files[i].name);
		unlink(path);
	}
	/* the certificates the asymmetric providers wanted (certsig.c) */
	snprintf(path, sizeof(path), "%s/certs/wanted", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/certs", dir);
	rmdir(path);
	rmdir(dir);
}

const conf *
fuzz_conf(void)
{
	char path[sizeof(dir) + 32], err[1024];

	if (the_conf != NULL)
		return the_conf;
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		abort();
	}
	snprintf(path, sizeof(path), "%s/secrets", dir);
	write_file(path, secrets_text, 0600);
	for (size_t i = 0; i < sizeof(key_files) / sizeof(key_files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, key_files[i].name);
		write_file(path, key_files[i].text, 0600);
	}
	snprintf(path, sizeof(path), "%s/certs", dir);
	if (mkdir(path, 0700) != 0) {
		perror("mkdir");
		abort();
	}
	snprintf(path, sizeof(path), "%s/hookinbox.conf", dir);
	write_parts(path, conf_text, sizeof(conf_text) / sizeof(conf_text[0]), 0600);
	the_conf = conf_load(path, err, sizeof(err));
	if (the_conf == NULL) {
		fprintf(stderr, "fuzz: %s\n", err);
		abort();
	}
	atexit(cleanup);
	return the_conf;
}

static const char *
lookup(const void *ctx, const char *name)
{
	const fuzz_request *r = ctx;

	for (size_t i = 0; i < r->n; i++) {
		if (strcasecmp(r->name[i], name) == 0)
			return r->value[i];
	}
	return NULL;
}

/* the next line of data[*off..size) without its '\n'; NULL at the end */
static const uint8_t *
next_line(const uint8_t *data, size_t size, size_t *off, size_t *len)
{
	const uint8_t *p = data + *off, *nl;

	if (*off >= size)
		return NULL;
	nl = memchr(p, '\n', size - *off);
	*len = nl != NULL ? (size_t)(nl - p) : size - *off;
	*off += *len + (nl != NULL);
	return p;
}

const endpoint_conf *
fuzz_request_parse(const uint8_t *data, size_t size, fuzz_request *r)
{
	const conf *c = fuzz_conf();
	const endpoint_conf *ep = NULL;
	const uint8_t *line;
	size_t off = 0, len;

	memset(r, 0, sizeof(*r));
	line = next_line(data, size, &off, &len);
	if (line != NULL) {
		char *name = xstrndup((const char *)line, len);

		ep = conf_endpoint(c, name);
		free(name);
	}
	if (ep == NULL)
		ep = conf_endpoint_at(c, (size > 0 ? data[0] : 0) % conf_endpoint_count(c));

	while ((line = next_line(data, size, &off, &len)) != NULL && len > 0) {
		const uint8_t *colon = memchr(line, ':', len);
		size_t nlen, vstart;
		char *value;

		if (colon == NULL)
			continue;
		nlen = (size_t)(colon - line);
		vstart = nlen + 1;
		if (vstart < len && line[vstart] == ' ')
			vstart++;
		/* header values reach the responder as C strings: a NUL ends them */
		value = xstrndup((const char *)line + vstart, len - vstart);
		if (nlen == 1 && line[0] == '?') {
			free(r->query);
			r->query = value;
		} else if (r->n < FUZZ_MAX_HEADERS) {
			r->name[r->n] = xstrndup((const char *)line, nlen);
			r->value[r->n++] = value;
		} else {
			free(value);
		}
	}
	r->body = xmalloc(size - off);
	if (size > off)
		memcpy(r->body, data + off, size - off);
	r->view = (request_view){
		.header = lookup,
		.ctx = r,
		.body = r->body,
		.body_len = size - off,
		.query = r->query,
		.now = FUZZ_NOW,
	};
	return ep;
}

void
fuzz_request_release(fuzz_request *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->name[i]);
		free(r->value[i]);
	}
	free(r->query);
	free(r->body);
	memset(r, 0, sizeof(*r));
}
