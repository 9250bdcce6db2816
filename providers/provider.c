/* SPDX-License-Identifier: ISC */
/*
 * provider.c - the table of providers
 *
 * One row per provider, each defined in its own file.  Everything that
 * differs between providers is reached through provider_get().
 */
#include "provider.h"

#include "endpoint.h"
#include "pkey.h"

#include <stdio.h>
#include <string.h>

extern const provider_ops provider_stripe, provider_github, provider_standard, provider_svix,
	provider_hmac, provider_shopify, provider_slack, provider_paddle, provider_twilio,
	provider_gitlab, provider_square, provider_adyen_platform, provider_linear, provider_mux,
	provider_workos, provider_razorpay, provider_discord, provider_zoom, provider_telnyx,
	provider_intercom, provider_bitbucket, provider_typeform, provider_calendly,
	provider_woocommerce, provider_sentry, provider_pagerduty, provider_vercel,
	provider_checkout, provider_lemonsqueezy, provider_notion, provider_postmark,
	provider_chargebee, provider_box, provider_webflow, provider_gocardless, provider_meta,
	provider_clerk, provider_resend, provider_okta, provider_zendesk;
extern const provider_ops provider_adyen, provider_sendgrid, provider_hubspot, provider_mailgun;
extern const provider_ops provider_braintree, provider_trello, provider_mandrill, provider_twitter,
	provider_dropbox, provider_asana, provider_twitch, provider_xero, provider_docusign;
/* the asymmetric schemes (pkey.h) */
extern const provider_ops provider_plaid, provider_pubsub, provider_paypal, provider_sns,
	provider_apple, provider_graph;

static const provider_ops *const table[PROVIDER__COUNT] = {
	[PROVIDER_STRIPE] = &provider_stripe,
	[PROVIDER_GITHUB] = &provider_github,
	[PROVIDER_STANDARD] = &provider_standard,
	[PROVIDER_SVIX] = &provider_svix,
	[PROVIDER_HMAC] = &provider_hmac,
	[PROVIDER_SHOPIFY] = &provider_shopify,
	[PROVIDER_SLACK] = &provider_slack,
	[PROVIDER_PADDLE] = &provider_paddle,
	[PROVIDER_TWILIO] = &provider_twilio,
	[PROVIDER_GITLAB] = &provider_gitlab,
	[PROVIDER_SQUARE] = &provider_square,
	[PROVIDER_ADYEN_PLATFORM] = &provider_adyen_platform,
	[PROVIDER_LINEAR] = &provider_linear,
	[PROVIDER_MUX] = &provider_mux,
	[PROVIDER_WORKOS] = &provider_workos,
	[PROVIDER_RAZORPAY] = &provider_razorpay,
	[PROVIDER_DISCORD] = &provider_discord,
	[PROVIDER_ZOOM] = &provider_zoom,
	[PROVIDER_TELNYX] = &provider_telnyx,
	[PROVIDER_INTERCOM] = &provider_intercom,
	[PROVIDER_BITBUCKET] = &provider_bitbucket,
	[PROVIDER_TYPEFORM] = &provider_typeform,
	[PROVIDER_CALENDLY] = &provider_calendly,
	[PROVIDER_WOOCOMMERCE] = &provider_woocommerce,
	[PROVIDER_SENTRY] = &provider_sentry,
	[PROVIDER_PAGERDUTY] = &provider_pagerduty,
	[PROVIDER_VERCEL] = &provider_vercel,
	[PROVIDER_CHECKOUT] = &provider_checkout,
	[PROVIDER_LEMONSQUEEZY] = &provider_lemonsqueezy,
	[PROVIDER_NOTION] = &provider_notion,
	[PROVIDER_POSTMARK] = &provider_postmark,
	[PROVIDER_CHARGEBEE] = &provider_chargebee,
	[PROVIDER_BOX] = &provider_box,
	[PROVIDER_WEBFLOW] = &provider_webflow,
	[PROVIDER_GOCARDLESS] = &provider_gocardless,
	[PROVIDER_META] = &provider_meta,
	[PROVIDER_CLERK] = &provider_clerk,
	[PROVIDER_RESEND] = &provider_resend,
	[PROVIDER_OKTA] = &provider_okta,
	[PROVIDER_ZENDESK] = &provider_zendesk,
	[PROVIDER_ADYEN] = &provider_adyen,
	[PROVIDER_SENDGRID] = &provider_sendgrid,
	[PROVIDER_HUBSPOT] = &provider_hubspot,
	[PROVIDER_MAILGUN] = &provider_mailgun,
	[PROVIDER_BRAINTREE] = &provider_braintree,
	[PROVIDER_TRELLO] = &provider_trello,
	[PROVIDER_MANDRILL] = &provider_mandrill,
	[PROVIDER_TWITTER] = &provider_twitter,
	[PROVIDER_DROPBOX] = &provider_dropbox,
	[PROVIDER_ASANA] = &provider_asana,
	[PROVIDER_TWITCH] = &provider_twitch,
	[PROVIDER_XERO] = &provider_xero,
	[PROVIDER_DOCUSIGN] = &provider_docusign,
	/* the asymmetric schemes (pkey.h) */
	[PROVIDER_PLAID] = &provider_plaid,
	[PROVIDER_PUBSUB] = &provider_pubsub,
	[PROVIDER_PAYPAL] = &provider_paypal,
	[PROVIDER_SNS] = &provider_sns,
	[PROVIDER_APPLE] = &provider_apple,
	[PROVIDER_GRAPH] = &provider_graph,
};

const char *const provider_common_headers[] = {"Content-Type", "User-Agent", NULL};

const provider_ops *
provider_get(provider p)
{
	return table[p];
}

const char *
provider_name(provider p)
{
	return (unsigned)p < PROVIDER__COUNT ? table[p]->name : "unknown";
}

int
provider_from_name(const char *name, provider *out)
{
	for (int i = 0; i < PROVIDER__COUNT; i++) {
		if (strcmp(name, table[i]->name) == 0) {
			*out = (provider)i;
			return 0;
		}
	}
	return -1;
}

void
provider_names(char *buf, size_t len)
{
	size_t used = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (int i = 0; i < PROVIDER__COUNT; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i > 0 ? ", " : "", table[i]->name);

		if (n < 0 || (size_t)n >= len - used)
			return; /* truncated: still NUL-terminated */
		used += (size_t)n;
	}
}

bool
provider_id_signed(const struct provider_endpoint *ep)
{
	(void)ep;
	return true;
}

bool
provider_id_unsigned(const struct provider_endpoint *ep)
{
	(void)ep;
	return false;
}

bool
provider_always(const struct provider_endpoint *ep)
{
	(void)ep;
	return true;
}

bool
provider_never(const struct provider_endpoint *ep)
{
	(void)ep;
	return false;
}

provider
provider_unset(void)
{
	return PROVIDER__COUNT;
}

bool
provider_is_set(provider p)
{
	return (unsigned)p < PROVIDER__COUNT;
}

const char *const *
provider_kept_headers(size_t i)
{
	if (i == 0)
		return provider_common_headers;
	return i - 1 < PROVIDER__COUNT ? table[i - 1]->headers : NULL;
}

const char *const *
provider_headers(provider p)
{
	return table[p]->headers;
}

const char *
provider_endpoint_check(const struct provider_endpoint *ep)
{
	const provider_ops *ops = table[ep->provider];

	return ops->check != NULL ? ops->check(ep) : NULL;
}

int
provider_endpoint_load(struct provider_endpoint *ep, char *errbuf, size_t errlen)
{
	const provider_ops *ops = table[ep->provider];

	return ops->load != NULL ? ops->load(ep, errbuf, errlen) : 0;
}

void
provider_endpoint_release(struct provider_endpoint *ep)
{
	pkeys_free(ep->keys);
	ep->keys = NULL;
}

bool
provider_endpoint_sends_version(const struct provider_endpoint *ep)
{
	return table[ep->provider]->sends_version(ep);
}

bool
provider_endpoint_id_signed(const struct provider_endpoint *ep)
{
	return table[ep->provider]->id_signed(ep);
}

provider_replay
provider_replay_class(provider p)
{
	return table[p]->replay;
}

const char *
provider_class(provider p)
{
	const provider_ops *ops = table[p];

	if (ops->klass != NULL)
		return ops->klass;
	if (ops->verify == NULL && ops->stamp_mac != NULL)
		return "RFC 3339 timestamp and MAC";
	if (ops->verify == NULL && ops->body_mac != NULL)
		return "HMAC of the body in one header";
	if (ops->verify == NULL && ops->v0 != NULL)
		return "HMAC of v0:<ts>:<body>";
	if (ops->verify == NULL && ops->ed25519 != NULL)
		return "Ed25519 over <ts><body>";
	if (ops->verify == NULL && ops->token != NULL)
		return "shared token in one header";
	if (ops->verify == NULL)
		return "HMAC of <ts><sep><body>, t=...,v1=...";
	return ops->name; /* a scheme of its own */
}

bool
provider_batched(provider p)
{
	return table[p]->batch != NULL;
}

bool
provider_bare_answers(provider p)
{
	return provider_is_set(p) && table[p]->bare_answers;
}
