// SPDX-License-Identifier: ISC
// sdk.mjs - sign and verify webhook deliveries with the providers' official SDKs
//
//   node sdk.mjs sign   < cases.json   # [{provider, secret, body, id, type, url, timestamp}]
//   node sdk.mjs verify < cases.json   # [{provider, secret, body, headers, url}]
//                                      # apple: [{provider, body, roots, bundle_id}]
//                                      # sns: [{provider, body, cert_url, cert_pem}]
//   node sdk.mjs fields < cases.json   # [{provider, secret, body, headers}]
//
// Reads a JSON array of cases on standard input and prints a JSON array of
// results, one per case, in order: for sign {headers, url}, for verify
// {ok, error}.  Bodies are text (the tests use ASCII bodies).  Used by
// tests/t/30-providers.t (the SDK signs, the responder verifies) and
// tests/t/31-sender.t and 30-providers-asym.t (hookinbox-send signs, the
// SDK verifies).
//
// Where a provider's SDK has no signing function the signature is computed
// as the provider documents it, with node:crypto, and the case says so in
// "how": Shopify (base64 HMAC-SHA256 of the body), Slack (v0=hex HMAC-SHA256
// of "v0:<ts>:<body>") and Paddle (ts=<ts>;h1=hex HMAC-SHA256 of
// "<ts>:<body>").  Verification always goes through the SDK.
//
// fields: the envelope fields as the SDK hands the event to its user
// (Stripe's constructEvent, Standard Webhooks' and Svix's verify; GitHub's
// octokit only verifies, so its body goes through JSON.parse, as an app
// would).  Numbers are given as their source text when node can (JSON.parse
// with source, --harmony-json-parse-with-source): a 20-digit id is kept
// whole, as hookinbox keeps it.  A string that is not well-formed Unicode
// (a lone surrogate) is reported as {"ill_formed": true}: UTF-8 cannot hold
// it, so hookinbox must store nothing for that field rather than another
// string.  Used by tests/t/16-ids.t.

import { createHmac } from 'node:crypto';
import { EventEmitter } from 'node:events';

// each SDK is loaded when first used, so that a run for one provider starts
// fast (Paddle's SDK allows only 5 seconds between signing and verifying)
const loaded = {};
async function load(name) {
	loaded[name] ??= await import(name);
	return loaded[name];
}

let stripeClient;
async function stripe() {
	const Stripe = (await load('stripe')).default;
	stripeClient ??= new Stripe('sk_test_hookinbox_crosscheck');
	return stripeClient;
}

function hmac(alg, key, data, enc) {
	return createHmac(alg, key).update(data).digest(enc);
}

// form body -> {name: value or [values]} as Express would hand it to twilio
function formParams(body) {
	const out = {};
	for (const [k, v] of new URLSearchParams(body)) {
		if (k in out)
			out[k] = [].concat(out[k], v);
		else
			out[k] = v;
	}
	return out;
}

async function sign(c) {
	const ts = c.timestamp ?? Math.floor(Date.now() / 1000);
	switch (c.provider) {
	case 'stripe':
		return { headers: { 'Stripe-Signature': (await stripe()).webhooks.generateTestHeaderString(
			{ payload: c.body, secret: c.secret, timestamp: ts }) }, how: 'sdk' };
	case 'github':
		return { headers: { 'X-Hub-Signature-256': await (await load('@octokit/webhooks-methods')).sign(c.secret, c.body),
			'X-GitHub-Delivery': c.id, 'X-GitHub-Event': c.type }, how: 'sdk' };
	case 'standard': {
		const { Webhook } = await load('standardwebhooks');
		const sig = new Webhook(c.secret).sign(c.id, new Date(ts * 1000), c.body);
		return { headers: { 'webhook-id': c.id, 'webhook-timestamp': String(ts),
			'webhook-signature': sig }, how: 'sdk' };
	}
	case 'svix': {
		const { Webhook } = await load('svix');
		const sig = new Webhook(c.secret).sign(c.id, new Date(ts * 1000), c.body);
		return { headers: { 'svix-id': c.id, 'svix-timestamp': String(ts),
			'svix-signature': sig }, how: 'sdk' };
	}
	case 'shopify':
		return { headers: { 'X-Shopify-Hmac-Sha256': hmac('sha256', c.secret, c.body, 'base64'),
			'X-Shopify-Webhook-Id': c.id, 'X-Shopify-Topic': c.type }, how: 'documented' };
	case 'slack':
		return { headers: { 'X-Slack-Request-Timestamp': String(ts),
			'X-Slack-Signature': 'v0=' + hmac('sha256', c.secret, `v0:${ts}:${c.body}`, 'hex') },
			how: 'documented' };
	case 'paddle':
		return { headers: { 'Paddle-Signature': `ts=${ts};h1=` +
			hmac('sha256', c.secret, `${ts}:${c.body}`, 'hex') }, how: 'documented' };
	case 'twilio': {
		const twilio = (await load('twilio')).default;
		let url = c.url, params = formParams(c.body);
		if (/^\s*[{[]/.test(c.body)) {
			url += (url.includes('?') ? '&' : '?') + 'bodySHA256=' + twilio.getExpectedBodyHash(c.body);
			params = {};
		}
		const headers = { 'X-Twilio-Signature': twilio.getExpectedTwilioSignature(c.secret, url, params) };
		if (c.id)
			headers['I-Twilio-Idempotency-Token'] = c.id;
		return { headers, url, how: 'sdk' };
	}
	default:
		throw new Error(`no SDK signer for ${c.provider}`);
	}
}

function lower(headers) {
	const out = {};
	for (const [k, v] of Object.entries(headers))
		out[k.toLowerCase()] = v;
	return out;
}

async function verify(c) {
	const h = lower(c.headers);
	switch (c.provider) {
	case 'stripe':
		(await stripe()).webhooks.constructEvent(c.body, h['stripe-signature'], c.secret);
		return;
	case 'github':
		if (!await (await load('@octokit/webhooks-methods')).verify(c.secret, c.body, h['x-hub-signature-256']))
			throw new Error('octokit verify returned false');
		return;
	case 'standard':
		new (await load('standardwebhooks')).Webhook(c.secret).verify(c.body, h);
		return;
	case 'svix':
		new (await load('svix')).Webhook(c.secret).verify(c.body, h);
		return;
	case 'shopify': {
		await load('@shopify/shopify-api/adapters/node');
		const { shopifyApi, ApiVersion, LogSeverity } = await load('@shopify/shopify-api');
		const shopify = shopifyApi({ apiKey: 'hookinbox', apiSecretKey: c.secret,
			apiVersion: ApiVersion.October25 ?? Object.values(ApiVersion)[0], hostName: 'localhost', isEmbeddedApp: false,
			logger: { level: LogSeverity.Error, log: () => {} } });
		const res = await shopify.webhooks.validate({ rawBody: c.body,
			rawRequest: { method: 'POST', url: '/', headers: h }, rawResponse: {} });
		if (!res.valid)
			throw new Error(`shopify validate: ${res.reason} ${res.missingHeaders ?? ''}`);
		return;
	}
	case 'slack':
		(await load('@slack/bolt')).default.verifySlackRequest({ signingSecret: c.secret, body: c.body,
			headers: { 'x-slack-signature': h['x-slack-signature'],
				'x-slack-request-timestamp': Number(h['x-slack-request-timestamp']) } });
		return;
	case 'paddle': {
		const { Paddle, Environment } = await load('@paddle/paddle-node-sdk');
		const paddle = new Paddle('pdl_hookinbox_crosscheck', { environment: Environment.sandbox });
		if (!await paddle.webhooks.isSignatureValid(c.body, c.secret, h['paddle-signature']))
			throw new Error('paddle isSignatureValid returned false');
		return;
	}
	case 'sns': {
		// AWS's own validator; the certificate it would fetch from
		// SigningCertURL is the case's (cert_url, cert_pem), served by a
		// stand-in for https.get: nothing leaves the machine
		const https = (await load('node:https')).default;
		const get = https.get;
		https.get = (url, cb) => {
			const res = new EventEmitter();
			res.statusCode = String(url) === c.cert_url ? 200 : 404;
			process.nextTick(() => { cb(res); res.emit('data', Buffer.from(c.cert_pem)); res.emit('end'); });
			return { on() { return this; } };
		};
		try {
			const { default: MessageValidator } = await load('sns-validator');
			await new Promise((resolve, reject) => new MessageValidator().validate(JSON.parse(c.body),
				(err) => (err ? reject(err) : resolve())));
		} finally {
			https.get = get;
		}
		return;
	}
	case 'apple': {
		// the App Store's own verifier, offline: the chain at the payload's
		// signedDate, to the roots the case gives (base64 DER)
		const { SignedDataVerifier, Environment } = await load('@apple/app-store-server-library');
		const v = new SignedDataVerifier(c.roots.map((r) => Buffer.from(r, 'base64')), false,
			Environment.SANDBOX, c.bundle_id);
		await v.verifyAndDecodeNotification(JSON.parse(c.body).signedPayload);
		return;
	}
	case 'twilio': {
		const twilio = (await load('twilio')).default;
		const sig = h['x-twilio-signature'];
		const ok = /[?&]bodySHA256=/.test(c.url)
			? twilio.validateRequestWithBody(c.secret, sig, c.url, c.body)
			: twilio.validateRequest(c.secret, sig, c.url, formParams(c.body));
		if (!ok)
			throw new Error('twilio validateRequest returned false');
		return;
	}
	default:
		throw new Error(`no SDK verifier for ${c.provider}`);
	}
}

// JSON.parse keeping numbers' source text where node supports it
function parseWithSource(text) {
	try {
		return JSON.parse(text, (k, v, ctx) => (typeof v === 'number' && ctx && 'source' in ctx ? ctx.source : v));
	} catch (e) {
		return JSON.parse(text);
	}
}

// the value at a dotted path, or undefined
function at(o, path) {
	for (const k of path.split('.')) {
		if (o === null || typeof o !== 'object' || Array.isArray(o) || !Object.hasOwn(o, k))
			return undefined;
		o = o[k];
	}
	return o;
}

function field(v) {
	if (v === undefined || v === null)
		return null;
	if (typeof v === 'string')
		return v.isWellFormed() ? v : { ill_formed: true };
	if (typeof v === 'number')
		return String(v);
	return v;
}

async function fields(c) {
	const h = lower(c.headers);
	switch (c.provider) {
	case 'stripe': {
		const ev = (await stripe()).webhooks.constructEvent(c.body, h['stripe-signature'], c.secret);
		const src = parseWithSource(c.body);
		return { event_id: field(ev.id), event_type: field(ev.type), object_id: field(at(ev, 'data.object.id')),
			version: field(at(src, 'created')) };
	}
	case 'standard':
	case 'svix': {
		const wh = new (await load(c.provider === 'svix' ? 'svix' : 'standardwebhooks')).Webhook(c.secret);
		const ev = wh.verify(c.body, h);
		return { event_type: field(ev.type), object_id: field(at(ev, 'data.id')) };
	}
	case 'github': {
		if (!await (await load('@octokit/webhooks-methods')).verify(c.secret, c.body, h['x-hub-signature-256']))
			throw new Error('octokit verify returned false');
		const ev = parseWithSource(c.body), name = h['x-github-event'];
		const obj = at(ev, name) ?? at(ev, name.replace(/s$/, ''));
		return { object_id: field(obj && typeof obj === 'object' ? obj.id : undefined),
			event_type: name + (typeof ev.action === 'string' ? '.' + ev.action : '') };
	}
	default:
		throw new Error(`no SDK reader for ${c.provider}`);
	}
}

async function main() {
	const mode = process.argv[2];
	let input = '';
	for await (const chunk of process.stdin)
		input += chunk;
	const out = [];
	for (const c of JSON.parse(input)) {
		if (mode === 'sign') {
			out.push(await sign(c));
		} else if (mode === 'fields') {
			try {
				out.push({ ok: true, fields: await fields(c) });
			} catch (e) {
				out.push({ ok: false, error: String(e && e.message || e) });
			}
		} else if (mode === 'verify') {
			try {
				await verify(c);
				out.push({ ok: true });
			} catch (e) {
				out.push({ ok: false, error: String(e && e.message || e) });
			}
		} else {
			throw new Error('usage: node sdk.mjs sign|verify|fields < cases.json');
		}
	}
	process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
	process.stderr.write(`sdk.mjs: ${e.stack || e}\n`);
	process.exit(1);
});
