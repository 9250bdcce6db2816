// SPDX-License-Identifier: ISC
// hmac2-vectors.mjs - writes provider-vectors-hmac2.json: vectors for
// braintree, trello, mandrill, twitter, dropbox, asana, twitch, xero and
// docusign, each signed as its provider documents it.  Braintree's are made
// and checked by its official Node SDK (webhookTesting.sampleNotification,
// webhookNotification.parse); the others ship no webhook verifier in an
// official Node SDK (Twitch, Xero's xero-node, DocuSign's docusign-esign,
// Dropbox, Asana, Trello, Mandrill, X): "derived", the documented
// algorithm with node:crypto.
//
//   npm install braintree@3.40.0
//   node hmac2-vectors.mjs > provider-vectors-hmac2.json
//
// Accept vectors must verify at verify.now; each has reject companions (a
// tampered body, a wrong secret), which the SDK refuses too where there is one.
import { createRequire } from 'node:module';
import { hmac, none, vectorSet } from './vectors-lib.mjs';
const require = createRequire(import.meta.url);

const now = Math.floor(Date.now() / 1000);
const { add, vec, triple, emit } = vectorSet();

// ---- Braintree, with its SDK: the SDK signs a sample notification and parses ours
const braintree = require('braintree');
const gw = (priv) => new braintree.BraintreeGateway({ environment: braintree.Environment.Sandbox,
	merchantId: 'hookinbox_merchant', publicKey: 'hookinbox_public_key', privateKey: priv });
const btPrivate = '7f1c0f7e2c9b4d3e8a5b6c7d8e9f0a1b', btWrong = '0000000000000000ffffffffffffffff';
const form = (o) => Object.entries(o).map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
const unform = (b) => Object.fromEntries(b.split('&').map((kv) => kv.split('=')).map(([k, v]) => [k, decodeURIComponent(v.replace(/\+/g, ' '))]));
const btCheck = async (v) => { const f = unform(v.verify.body);
	const n = await gw(v.verify.secret).webhookNotification.parse(f.bt_signature, f.bt_payload);
	return n.kind !== undefined; };
btCheck.sdk = 'braintree@3.40.0 webhookNotification.parse';
{
	const sample = gw(btPrivate).webhookTesting.sampleNotification('subscription_went_past_due', 'sub_hookinbox_1');
	const body = form({ bt_signature: sample.bt_signature, bt_payload: sample.bt_payload });
	const wrong = gw(btWrong).webhookTesting.sampleNotification('subscription_went_past_due', 'sub_hookinbox_1');
	const ext = { kind: 'sdk', source: 'braintree@3.40.0 webhookTesting.sampleNotification', ctype: 'application/x-www-form-urlencoded' };
	await add(vec('braintree-accept', 'braintree', 'accept', btPrivate, body, {}, ext), btCheck);
	// another payload under the first signature
	await add(vec('braintree-tampered-payload', 'braintree', 'reject', btPrivate,
		form({ bt_signature: sample.bt_signature, bt_payload: Buffer.from(Buffer.from(sample.bt_payload, 'base64').toString().replace('sub_hookinbox_1', 'sub_hookinbox_2')).toString('base64') + '\n' }), {}, ext), btCheck);
	await add(vec('braintree-wrong-secret', 'braintree', 'reject', btPrivate,
		form({ bt_signature: wrong.bt_signature, bt_payload: wrong.bt_payload }), {}, ext), btCheck);
	// several public_key|signature pairs, ours second
	const pairs = `other_public_key|${'ab'.repeat(20)}&${sample.bt_signature}`;
	await add(vec('braintree-second-pair', 'braintree', 'accept', btPrivate,
		form({ bt_signature: pairs, bt_payload: sample.bt_payload }), {}, ext), btCheck);
	// the SDKs refuse a payload with a character outside base64 and "\n"
	await add(vec('braintree-illegal-payload', 'braintree', 'reject', btPrivate,
		form({ bt_signature: sample.bt_signature, bt_payload: sample.bt_payload.replace('\n', '\r\n') }), {}, ext), btCheck);
}

// ---- the documented algorithm, no SDK
const trelloUrl = 'https://hooks.example.com/in/trello';
await triple('trello', 'trello-app-secret-0123456789', 'trello-app-secret-9876543210',
	'{"action":{"id":"5f8a2b3c4d5e6f7a8b9c0d1e","idMemberCreator":"5f8a0000","type":"updateCard","date":"2024-05-03T08:00:00.000Z","data":{"card":{"id":"5f8a1111"}}},"model":{"id":"5f8a2b3c4d5e6f7a8b9c0000","name":"Board"}}',
	(s, b) => ({ 'X-Trello-Webhook': hmac('sha1', s, b + trelloUrl, 'base64') }), none, { url: trelloUrl });

const mandrillUrl = 'https://hooks.example.com/in/mandrill';
{
	const events = '[{"event":"send","_id":"exampleaaaaaaaaaaaaaaaaaaaaaaaaa","ts":1714723200,"msg":{"email":"a@example.com","subject":"Hello"}}]';
	const body = form({ mandrill_events: events });
	const sig = (s, b) => { const p = unform(b);
		const data = mandrillUrl + Object.keys(p).sort().map((k) => k + p[k]).join('');
		return { 'X-Mandrill-Signature': hmac('sha1', s, data, 'base64') }; };
	await triple('mandrill', 'mandrill-webhook-key-0123', 'mandrill-webhook-key-9876', body, sig, none,
		{ url: mandrillUrl, ctype: 'application/x-www-form-urlencoded', tamper: (b) => b.replace('Hello', 'Hullo') });
}

await triple('twitter', 'tw-consumer-secret-0123456789', 'tw-consumer-secret-9876543210',
	'{"for_user_id":"2244994945","tweet_create_events":[{"id_str":"1790000000000000000","text":"hello","user":{"id_str":"2244994945"}}]}',
	(s, b) => ({ 'x-twitter-webhooks-signature': 'sha256=' + hmac('sha256', s, b, 'base64') }), none);

await triple('dropbox', 'dbx-app-secret-0123456789', 'dbx-app-secret-9876543210',
	'{"list_folder":{"accounts":["dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc"]},"delta":{"users":[12345678]}}',
	(s, b) => ({ 'X-Dropbox-Signature': hmac('sha256', s, b, 'hex') }), none);

await triple('asana', '2bb94a6c8bb26d68eba9b2e6bb07d4b1', '0bb94a6c8bb26d68eba9b2e6bb07d4b0',
	'{"events":[{"user":{"gid":"1201","resource_type":"user"},"created_at":"2024-05-03T08:00:00.000Z","action":"changed","resource":{"gid":"1202","resource_type":"task"},"parent":null,"change":{"field":"name","action":"changed"}}]}',
	(s, b) => ({ 'X-Hook-Signature': hmac('sha256', s, b, 'hex') }), none);

{
	const ts = new Date(now * 1000).toISOString().replace(/\.\d+Z$/, '.123456789Z');
	const id = 'befa7b53-d79d-478f-86b9-120f112b044e';
	const sig = (s, b, i = id, t = ts) => ({ 'Twitch-Eventsub-Message-Id': i, 'Twitch-Eventsub-Message-Timestamp': t,
		'Twitch-Eventsub-Message-Type': 'notification', 'Twitch-Eventsub-Subscription-Type': 'channel.follow',
		'Twitch-Eventsub-Message-Signature': 'sha256=' + hmac('sha256', s, i + t + b, 'hex') });
	const body = '{"subscription":{"id":"f1c2a387-161a-49f9-a165-0f21d7a4e1c4","type":"channel.follow","version":"2","status":"enabled","cost":0,"condition":{"broadcaster_user_id":"1337","moderator_user_id":"1337"},"transport":{"method":"webhook","callback":"https://example.com/webhooks/callback"},"created_at":"2024-05-03T08:00:00.000Z"},"event":{"user_id":"1234","user_login":"cool_user","broadcaster_user_id":"1337","followed_at":"2024-05-03T08:00:00.000Z"}}';
	await triple('twitch', 'twitch-eventsub-secret-0123', 'twitch-eventsub-secret-9876', body, sig, none, { now });
	// the message id is signed: another id under the same signature
	const good = sig('twitch-eventsub-secret-0123', body);
	await add(vec('twitch-other-message-id', 'twitch', 'reject', 'twitch-eventsub-secret-0123', body,
		{ ...good, 'Twitch-Eventsub-Message-Id': 'c0ffee00-d79d-478f-86b9-120f112b044e' }, { now }), none);
	const old = new Date((now - 660) * 1000).toISOString();
	await add(vec('twitch-eleven-minutes-old', 'twitch', 'reject', 'twitch-eventsub-secret-0123', body,
		sig('twitch-eventsub-secret-0123', body, id, old), { now }), none);
}

await triple('xero', 'xero-webhook-key-0123456789', 'xero-webhook-key-9876543210',
	'{"events":[{"resourceUrl":"https://api.xero.com/api.xro/2.0/Contacts/717f2bfc-c6d4-41fd-b238-3f2f0c0cf777","resourceId":"717f2bfc-c6d4-41fd-b238-3f2f0c0cf777","eventDateUtc":"2024-05-03T08:00:00.000","eventType":"UPDATE","eventCategory":"CONTACT","tenantId":"c2cc9b6e-9458-4c7d-93cc-f02b81b0594f","tenantType":"ORGANISATION"}],"firstEventSequence":1,"lastEventSequence":1,"entropy":"TSGDFTKKHFZAKRSMMFXL"}',
	(s, b) => ({ 'x-xero-signature': hmac('sha256', s, b, 'base64') }), none);
{
	const itr = '{"events":[],"firstEventSequence":0,"lastEventSequence":0,"entropy":"S0m3r4Nd0mt3xt"}';
	await add(vec('xero-intent-to-receive-correct', 'xero', 'accept', 'xero-webhook-key-0123456789', itr,
		{ 'x-xero-signature': hmac('sha256', 'xero-webhook-key-0123456789', itr, 'base64') }), none);
	await add(vec('xero-intent-to-receive-incorrect', 'xero', 'reject', 'xero-webhook-key-0123456789', itr,
		{ 'x-xero-signature': hmac('sha256', 'xero-webhook-key-9876543210', itr, 'base64') }), none);
}

{
	const body = '{"event":"envelope-completed","apiVersion":"v2.1","uri":"/restapi/v2.1/accounts/8d2a0a3b/envelopes/93be49ab-afa0-4adf-933c-f752070d71ec","retryCount":0,"configurationId":10418,"generatedDateTime":"2024-05-03T08:00:00.0000000Z","data":{"accountId":"8d2a0a3b-0000-0000-0000-000000000000","userId":"5b6c0000-0000-0000-0000-000000000000","envelopeId":"93be49ab-afa0-4adf-933c-f752070d71ec"}}';
	await triple('docusign', 'docusign-connect-key-0123456789', 'docusign-connect-key-9876543210', body,
		(s, b) => ({ 'X-DocuSign-Signature-1': hmac('sha256', s, b, 'base64') }), none);
	// two Connect keys: ours signs the second header
	await add(vec('docusign-second-header', 'docusign', 'accept', 'docusign-connect-key-0123456789', body,
		{ 'X-DocuSign-Signature-1': hmac('sha256', 'docusign-other-key-000000000', body, 'base64'),
			'X-DocuSign-Signature-2': hmac('sha256', 'docusign-connect-key-0123456789', body, 'base64') }), none);
}

emit('Vectors for braintree, trello, mandrill, twitter, dropbox, asana, twitch, xero and docusign, written by hmac2-vectors.mjs: Braintree made and checked by its official Node SDK (sdk_check.sdk names it), the others derived from the documented algorithm.');
