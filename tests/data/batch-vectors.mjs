// SPDX-License-Identifier: ISC
// batch-vectors.mjs - writes provider-vectors-batch.json: vectors for the
// batch class (adyen, sendgrid, hubspot) and for mailgun, each signed as
// its provider documents it and, where the provider has an official Node
// SDK verifier, checked with it at generation time (sdk_check), as
// more-vectors.mjs does for the providers before them.
//
//   npm install @adyen/api-library@32.1.0 @sendgrid/eventwebhook@8.0.0 \
//     @hubspot/api-client@14.0.1
//   node batch-vectors.mjs > provider-vectors-batch.json
//
// Accept vectors must verify at verify.now; each has reject companions (a
// tampered signed field or body, a wrong secret or key) that the SDK
// refuses too.  mailgun.js has no verifier: its vectors are "derived".
// An Adyen batch is accepted only when every item verifies: the SDK is
// asked about each item, and the batch's verdict is that of its worst.
import { createHmac, generateKeyPairSync, sign as ecsign } from 'node:crypto';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);

const now = Math.floor(Date.now() / 1000);
const hmac = (alg, key, data, enc) => createHmac(alg, key).update(data).digest(enc);
const out = [];

async function add(v, check) {
	let verdict;
	try { verdict = (await check(v)) ? 'accept' : 'reject'; } catch (e) { verdict = 'reject'; }
	v.sdk_check = check.sdk ? { sdk: check.sdk, verify_verdict: verdict, pass: verdict === v.expect }
		: { sdk: 'none: no official SDK verifier; documented algorithm with node:crypto', pass: true };
	if (verdict !== v.expect)
		throw new Error(`${v.id}: the check says ${verdict}`);
	out.push(v);
}

function vec(id, provider, expect, secret, body, headers, extra = {}) {
	const v = { id, provider, kind: extra.kind ?? 'derived', expect,
		verify: { headers: { 'Content-Type': 'application/json', ...headers }, body, secret, now: extra.now ?? 0 } };
	if (extra.url) v.verify.url = extra.url;
	return v;
}

// ---- adyen: each NotificationRequestItem signed in additionalData.hmacSignature
const HmacValidator = require('@adyen/api-library/lib/src/utils/hmacValidator').default;
const adyenKey = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
const adyenOther = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA057';
const adyenCheck = async (v) => JSON.parse(v.verify.body).notificationItems
	.every((i) => new HmacValidator().validateHMAC(i.NotificationRequestItem, v.verify.secret));
adyenCheck.sdk = '@adyen/api-library@32.1.0 HmacValidator.validateHMAC, each item';
{
	const item = (key, n, over = {}) => {
		const it = { amount: { currency: 'EUR', value: 1000 + n }, eventCode: 'AUTHORISATION',
			eventDate: '2024-05-03T10:00:00+02:00', merchantAccountCode: 'TestMerchant',
			merchantReference: `order-${n}`, originalReference: '', pspReference: `88310000000000${n}`,
			reason: '', success: 'true', ...over };
		it.additionalData = { hmacSignature: new HmacValidator().calculateHmac(it, key) };
		return { NotificationRequestItem: it };
	};
	const body = (...items) => JSON.stringify({ live: 'false', notificationItems: items });
	await add(vec('adyen-accept', 'adyen', 'accept', adyenKey, body(item(adyenKey, 1), item(adyenKey, 2))), adyenCheck);
	const t = item(adyenKey, 2);
	t.NotificationRequestItem.amount.value = 1;
	await add(vec('adyen-tampered-amount', 'adyen', 'reject', adyenKey, body(item(adyenKey, 1), t)), adyenCheck);
	await add(vec('adyen-wrong-key', 'adyen', 'reject', adyenKey, body(item(adyenOther, 1))), adyenCheck);
	await add(vec('adyen-one-item-wrong-key', 'adyen', 'reject', adyenKey, body(item(adyenKey, 1), item(adyenOther, 2))), adyenCheck);
	const esc = item(adyenKey, 3, { merchantReference: 'ref:with\\colon', success: 'false', originalReference: '8831000000000001' });
	await add(vec('adyen-accept-escapes', 'adyen', 'accept', adyenKey, body(esc)), adyenCheck);
}

// ---- sendgrid: ECDSA P-256 over timestamp + body
const { EventWebhook } = require('@sendgrid/eventwebhook');
const sgCheck = async (v) => { const ew = new EventWebhook(); const h = v.verify.headers;
	return ew.verifySignature(ew.convertPublicKeyToECDSA(v.verify.secret), v.verify.body,
		h['X-Twilio-Email-Event-Webhook-Signature'], h['X-Twilio-Email-Event-Webhook-Timestamp']); };
sgCheck.sdk = '@sendgrid/eventwebhook@8.0.0 EventWebhook.verifySignature';
{
	const ec = () => { const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
		return { pub: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'), privateKey }; };
	const k = ec(), other = ec();
	const ts = String(now);
	const s = (key, b) => ({ 'X-Twilio-Email-Event-Webhook-Signature': ecsign('sha256', Buffer.from(ts + b), key).toString('base64'),
		'X-Twilio-Email-Event-Webhook-Timestamp': ts });
	const body = JSON.stringify([
		{ email: 'example@test.com', timestamp: 1714723200, 'smtp-id': '<14c5d75ce93.dfd.64b469@ismtpd-555>', event: 'processed', category: 'cat facts', sg_event_id: 'sg_event_id-1', sg_message_id: 'sg_message_id-1' },
		{ email: 'example@test.com', timestamp: 1714723201, 'smtp-id': '<14c5d75ce93.dfd.64b469@ismtpd-555>', event: 'delivered', category: 'cat facts', sg_event_id: 'sg_event_id-2', sg_message_id: 'sg_message_id-1', response: '250 OK' },
	]) + '\r\n';
	await add(vec('sendgrid-accept', 'sendgrid', 'accept', k.pub, body, s(k.privateKey, body)), sgCheck);
	await add(vec('sendgrid-tampered-body', 'sendgrid', 'reject', k.pub, body.replace('processed', 'dropped__'), s(k.privateKey, body)), sgCheck);
	await add(vec('sendgrid-wrong-key', 'sendgrid', 'reject', k.pub, body, s(other.privateKey, body)), sgCheck);
	const h = s(k.privateKey, body);
	h['X-Twilio-Email-Event-Webhook-Timestamp'] = String(now + 1);
	await add(vec('sendgrid-tampered-timestamp', 'sendgrid', 'reject', k.pub, body, h), sgCheck);
}

// ---- hubspot v3: method + URI + body + timestamp (ms), 5 minutes
const { Signature } = require('@hubspot/api-client/lib/src/utils/signature');
const hsCheck = async (v) => Signature.isValid({ signatureVersion: 'v3', method: 'POST', url: v.verify.url,
	signature: v.verify.headers['X-HubSpot-Signature-v3'], clientSecret: v.verify.secret,
	requestBody: v.verify.body, timestamp: Number(v.verify.headers['X-HubSpot-Request-Timestamp']) });
hsCheck.sdk = '@hubspot/api-client@14.0.1 Signature.isValid (v3)';
{
	const secret = 'hubspot-client-secret-0123456789';
	const url = 'https://hooks.example.test/in/hubspot?portal=62515';
	const ms = now * 1000 + 789;
	const s = (k, b, t = ms, u = url) => ({ 'X-HubSpot-Signature-v3': hmac('sha256', k, `POST${u}${b}${t}`, 'base64'),
		'X-HubSpot-Request-Timestamp': String(t), 'X-HubSpot-Signature-Version': 'v3' });
	const body = JSON.stringify([
		{ eventId: 1001, subscriptionId: 77, portalId: 62515, appId: 54321, occurredAt: 1714723200000, subscriptionType: 'contact.creation', attemptNumber: 0, objectId: 1246965, changeFlag: 'CREATED', changeSource: 'CRM' },
		{ eventId: 1002, subscriptionId: 78, portalId: 62515, appId: 54321, occurredAt: 1714723200001, subscriptionType: 'contact.propertyChange', attemptNumber: 0, objectId: 1246965, propertyName: 'email', propertyValue: 'a@example.com', changeSource: 'CRM' },
	]);
	const x = { now, url };
	await add(vec('hubspot-accept', 'hubspot', 'accept', secret, body, s(secret, body), x), hsCheck);
	await add(vec('hubspot-tampered-body', 'hubspot', 'reject', secret, body + ' ', s(secret, body), x), hsCheck);
	await add(vec('hubspot-wrong-secret', 'hubspot', 'reject', secret, body, s('hubspot-client-secret-9876543210', body), x), hsCheck);
	await add(vec('hubspot-other-url', 'hubspot', 'reject', secret, body, s(secret, body, ms, 'https://hooks.example.test/in/hubspot'), x), hsCheck);
	const stale = (now - 301) * 1000;
	await add(vec('hubspot-stale', 'hubspot', 'reject', secret, body, s(secret, body, stale), x), hsCheck);
}

// ---- mailgun: hex HMAC-SHA256 of timestamp + token, in the body (no SDK verifier)
const none = async (v) => { const b = JSON.parse(v.verify.body).signature;
	return hmac('sha256', v.verify.secret, b.timestamp + b.token, 'hex') === b.signature; };
{
	const key = 'key-mailgun-signing-0123456789ab';
	const ev = { id: 'CPgfbmQMTCKtHW6uIWtuVe', timestamp: 1521472262.908181, event: 'delivered',
		message: { headers: { 'message-id': '20130503182626.18666.16540@example.mailgun.org' } } };
	const token = 'e0b5477167110d68991efc6b9f89f0a11066af27834600e123';
	const body = (k, tok = token, ts = String(now), sigts = ts) => JSON.stringify({ signature: { token: tok, timestamp: ts,
		signature: hmac('sha256', k, sigts + tok, 'hex') }, 'event-data': ev });
	await add(vec('mailgun-accept', 'mailgun', 'accept', key, body(key)), none);
	await add(vec('mailgun-wrong-key', 'mailgun', 'reject', key, body('key-mailgun-signing-9876543210ba')), none);
	const tampered = JSON.parse(body(key));
	tampered.signature.token = tampered.signature.token.replace('e0b5', 'e0b6');
	await add(vec('mailgun-tampered-token', 'mailgun', 'reject', key, JSON.stringify(tampered)), none);
	await add(vec('mailgun-tampered-timestamp', 'mailgun', 'reject', key, body(key, token, String(now + 1), String(now))), none);
}

process.stdout.write(JSON.stringify({
	description: 'Vectors for the batch class (adyen, sendgrid, hubspot) and mailgun, written by batch-vectors.mjs: SDK-checked where the provider ships an official Node SDK verifier (sdk_check.sdk names it), else derived from the documented algorithm.',
	verify_now_semantics: 'verify.now = receiver clock (unix seconds) at which the vector verifies; 0 = scheme has no timestamp',
	vectors: out }, null, 1) + '\n');
