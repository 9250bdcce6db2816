// SPDX-License-Identifier: ISC
// asym-vectors.mjs - writes provider-vectors-asym.json: vectors for the
// providers that sign with public keys (plaid, pubsub, paypal, sns, apple)
// and for graph's clientState,
// with keys and certificate authorities made at generation time (node:crypto,
// and the openssl command for certificates), checked where the provider has
// an official or widely used Node verifier that works offline (sdk_check):
//
//   npm install google-auth-library@11.3.4 @apple/app-store-server-library@3.1.0 \
//     sns-validator@0.3.5
//   node asym-vectors.mjs > provider-vectors-asym.json
//
// Beside the secret, a vector carries what its endpoint reads from files
// (verify.files: key_file, ca_file as text; cert_cache as {URL: PEM}) and
// other endpoint keys (verify.endpoint); tests/t/13-vectors.t writes them.
// Certificates are valid for 30 days from generation; verify.now is within.
// Plaid and PayPal publish no Node verifier: "derived" (the documented
// algorithm with node:crypto).  sns-validator fetches certificates with
// https.get, which is played here by the vector's cache.
import { generateKeyPairSync, sign, createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);

const now = Math.floor(Date.now() / 1000);
// the receiver's clock: after the certificates made below begin, within every window
const vnow = now + 120;
const out = [];
const b64u = (b) => Buffer.from(b).toString('base64url');
const sha256hex = (b) => createHash('sha256').update(b).digest('hex');
const dir = mkdtempSync(`${tmpdir()}/asym-vectors-`);
const ossl = (...a) => execFileSync('openssl', a, { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'] });
const pem = (f) => readFileSync(`${dir}/${f}`, 'utf8');

async function add(v, check) {
	let verdict;
	try { verdict = (await check(v)) ? 'accept' : 'reject'; } catch (e) { verdict = 'reject'; }
	v.sdk_check = check.sdk ? { sdk: check.sdk, verify_verdict: verdict, pass: verdict === v.expect }
		: { sdk: 'none: no offline Node verifier; documented algorithm with node:crypto', pass: true };
	if (check.sdk && verdict !== v.expect)
		throw new Error(`${v.id}: the SDK says ${verdict}`);
	out.push(v);
}
const derived = () => true;

function vec(id, provider, expect, secrets, body, headers, extra = {}) {
	return { id, provider, kind: extra.kind ?? 'derived', expect,
		verify: { headers: { 'Content-Type': 'application/json', ...headers }, body,
			secret: secrets[0], additional_secrets: secrets.slice(1), now: vnow,
			files: extra.files ?? {}, endpoint: extra.endpoint ?? {} } };
}

function jws(alg, key, header, payload) {
	const s = `${b64u(JSON.stringify(header))}.${b64u(JSON.stringify(payload))}`;
	const sig = sign('sha256', Buffer.from(s), alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' } : key);
	return `${s}.${b64u(sig)}`;
}

// ---- plaid: ES256 JWT over the body's digest (derived)
{
	const good = generateKeyPairSync('ec', { namedCurve: 'P-256' });
	const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
	const jwk = { ...good.publicKey.export({ format: 'jwk' }), kid: 'bfbd5111-8e33-4643-8ced-b2e642a72f3c', alg: 'ES256', use: 'sig', created_at: now - 86400, expired_at: null };
	const secrets = [JSON.stringify(jwk)];
	const body = '{"environment":"sandbox","error":null,"item_id":"wz666MBjYWTp2PDzzggYhM6oWWmBb","new_transactions":19,"webhook_code":"DEFAULT_UPDATE","webhook_type":"TRANSACTIONS"}';
	const tok = (key, b, iat, alg = 'ES256') => jws(alg, key, { alg, kid: jwk.kid, typ: 'JWT' }, { iat, request_body_sha256: sha256hex(b) });
	await add(vec('plaid-accept', 'plaid', 'accept', secrets, body, { 'Plaid-Verification': tok(good.privateKey, body, now) }), derived);
	await add(vec('plaid-tampered-body', 'plaid', 'reject', secrets, body.replace('19', '20'), { 'Plaid-Verification': tok(good.privateKey, body, now) }), derived);
	await add(vec('plaid-wrong-key', 'plaid', 'reject', secrets, body, { 'Plaid-Verification': tok(other.privateKey, body, now) }), derived);
	await add(vec('plaid-stale', 'plaid', 'reject', secrets, body, { 'Plaid-Verification': tok(good.privateKey, body, now - 301) }), derived);
	const none = `${b64u(JSON.stringify({ alg: 'none', kid: jwk.kid }))}.${b64u(JSON.stringify({ iat: now, request_body_sha256: sha256hex(body) }))}.`;
	await add(vec('plaid-alg-none', 'plaid', 'reject', secrets, body, { 'Plaid-Verification': none }), derived);
}

// ---- pubsub: RS256 OIDC token, checked with google-auth-library given the keys
{
	const { OAuth2Client } = require('google-auth-library');
	const good = generateKeyPairSync('rsa', { modulusLength: 2048 });
	const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
	const kid = 'a50f6e70ef4b548a5fd9142eecd1fb8f54dce9ee';
	const jwks = JSON.stringify({ keys: [{ ...good.publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' }] }, null, 2);
	const aud = 'https://hooks.example.test/in/pubsub';
	const email = 'pusher@my-project.iam.gserviceaccount.com';
	const body = '{"message":{"attributes":{"key":"value"},"data":"SGVsbG8gQ2xvdWQgUHViL1N1YiEgSGVyZSBpcyBteSBtZXNzYWdlIQ==","messageId":"2070443601311540","message_id":"2070443601311540","publishTime":"2021-02-26T19:13:55.749Z","publish_time":"2021-02-26T19:13:55.749Z"},"subscription":"projects/myproject/subscriptions/mysubscription"}';
	const claims = (o = {}) => ({ aud, azp: '113774264463038321964', email, email_verified: true, exp: now + 3600, iat: now, iss: 'https://accounts.google.com', sub: '113774264463038321964', ...o });
	const bearer = (key, c) => ({ Authorization: `Bearer ${jws('RS256', key, { alg: 'RS256', kid, typ: 'JWT' }, c)}` });
	const extra = { files: { key_file: jwks }, endpoint: { audience: aud } };
	const client = new OAuth2Client();
	const check = async (v) => {
		const t = v.verify.headers.Authorization.slice(7);
		await client.verifySignedJwtWithCertsAsync(t, { [kid]: good.publicKey.export({ type: 'spki', format: 'pem' }) }, aud, ['https://accounts.google.com', 'accounts.google.com']);
		return true;
	};
	check.sdk = 'google-auth-library@11.3.4 OAuth2Client.verifySignedJwtWithCertsAsync';
	await add(vec('pubsub-accept', 'pubsub', 'accept', [email], body, bearer(good.privateKey, claims()), extra), check);
	await add(vec('pubsub-wrong-key', 'pubsub', 'reject', [email], body, bearer(other.privateKey, claims()), extra), check);
	await add(vec('pubsub-wrong-audience', 'pubsub', 'reject', [email], body, bearer(good.privateKey, claims({ aud: 'https://elsewhere.example/' })), extra), check);
	await add(vec('pubsub-expired', 'pubsub', 'reject', [email], body, bearer(good.privateKey, claims({ iat: now - 7600, exp: now - 4000 })), extra), check);
	await add(vec('pubsub-wrong-issuer', 'pubsub', 'reject', [email], body, bearer(good.privateKey, claims({ iss: 'https://evil.example' })), extra), check);
}

// ---- a certificate authority, and signing certificates it and a rogue CA issued
for (const ca of ['ca', 'rogue']) {
	ossl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${ca}.key`, '-out', `${ca}.pem`, '-days', '30', '-subj', `/CN=Vector ${ca}`);
	ossl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${ca}-leaf.key`, '-out', `${ca}-leaf.csr`, '-subj', '/CN=signer');
	ossl('x509', '-req', '-in', `${ca}-leaf.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${ca}-leaf.pem`, '-days', '30');
}
const leafKey = createPrivateKey(pem('ca-leaf.key'));
const rogueKey = createPrivateKey(pem('rogue-leaf.key'));

// ---- paypal: SHA256withRSA over id|time|webhook id|crc32 (derived)
{
	const crcTable = Array.from({ length: 256 }, (_, n) => { let c = n; for (let k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320 ^ (c >>> 1) : c >>> 1; return c >>> 0; });
	const crc32 = (s) => { let c = 0xFFFFFFFF; for (const b of Buffer.from(s)) c = crcTable[(c ^ b) & 0xFF] ^ (c >>> 8); return (c ^ 0xFFFFFFFF) >>> 0; };
	const certUrl = 'https://api.sandbox.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-a5cafa77';
	const webhookId = '1JE4291016473214C';
	const body = '{"id":"WH-2WR32451HC0233532-67976317FL4543714","create_time":"2014-10-23T17:23:52Z","resource_type":"sale","event_type":"PAYMENT.SALE.COMPLETED","summary":"A successful sale payment was made for $ 0.48 USD","resource":{"id":"80021663DE681814L","state":"completed"}}';
	const headers = (key, b, wh, t) => {
		const tm = new Date(t * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
		const id = '103e3700-8b0b-11e4-9f82-4d3d7a4cc4fc';
		return { 'PAYPAL-TRANSMISSION-ID': id, 'PAYPAL-TRANSMISSION-TIME': tm, 'PAYPAL-CERT-URL': certUrl, 'PAYPAL-AUTH-ALGO': 'SHA256withRSA',
			'PAYPAL-TRANSMISSION-SIG': sign('sha256', Buffer.from(`${id}|${tm}|${wh}|${crc32(b)}`), key).toString('base64') };
	};
	const extra = { files: { ca_file: pem('ca.pem'), cert_cache: { [certUrl]: pem('ca-leaf.pem') } } };
	await add(vec('paypal-accept', 'paypal', 'accept', [webhookId], body, headers(leafKey, body, webhookId, now), extra), derived);
	await add(vec('paypal-tampered-body', 'paypal', 'reject', [webhookId], body.replace('0.48', '0.49'), headers(leafKey, body, webhookId, now), extra), derived);
	await add(vec('paypal-wrong-webhook-id', 'paypal', 'reject', [webhookId], body, headers(leafKey, body, '8PT597110X687430LKGECATA', now), extra), derived);
	await add(vec('paypal-wrong-key', 'paypal', 'reject', [webhookId], body, headers(rogueKey, body, webhookId, now), extra), derived);
	await add(vec('paypal-stale', 'paypal', 'reject', [webhookId], body, headers(leafKey, body, webhookId, now - 301), extra), derived);
}

// ---- sns: the canonical string, checked with sns-validator (certificates from the vector's cache)
{
	const https = require('node:https');
	const { PassThrough } = require('node:stream');
	const served = {};
	https.get = (url, cb) => {
		const res = new PassThrough();
		res.statusCode = served[url] ? 200 : 404;
		process.nextTick(() => { cb(res); res.end(served[url] ?? ''); });
		return { on() { return this; } };
	};
	const MessageValidator = require('sns-validator');
	const validator = new MessageValidator();
	const check = (v) => new Promise((resolve) => validator.validate(v.verify.body, (err) => resolve(!err)));
	check.sdk = 'sns-validator@0.3.5 MessageValidator.validate';
	const certUrl = 'https://sns.us-west-2.amazonaws.com/SimpleNotificationService-bb750dd426d95ee9390147a5624348ee.pem';
	served[certUrl] = pem('ca-leaf.pem');
	const topic = 'arn:aws:sns:us-west-2:123456789012:MyTopic';
	const msg = (key, m) => {
		const names = m.Type === 'Notification' ? ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type']
			: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
		const canon = names.filter((n) => n in m).map((n) => `${n}\n${m[n]}\n`).join('');
		return JSON.stringify({ ...m, Signature: sign(m.SignatureVersion === '1' ? 'sha1' : 'sha256', Buffer.from(canon), key).toString('base64') }, null, 2);
	};
	const note = { Type: 'Notification', MessageId: '22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324', TopicArn: topic,
		Subject: 'My First Message', Message: 'Hello world!', Timestamp: '2012-05-02T00:54:06.655Z', SignatureVersion: '1',
		SigningCertURL: certUrl, UnsubscribeURL: 'https://sns.us-west-2.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:us-west-2:123456789012:MyTopic:c9135db0-26c4-47ec-8998-413945fb5a96' };
	const confirm = { Type: 'SubscriptionConfirmation', MessageId: '165545c9-2a5c-472c-8df2-7ff2be2b3b1b', Token: '2336412f37fb687f5d51e6e241d09c805a5a57b30d712f794cc5f6a988666d92768dd60a747ba6f3beb71854e285d6ad02428b09ceece29417f1f02d609c582afbacc99c583a916b9981dd2728f4ae6fdb82efd087cc3b7849e05798d2d2785c03b0879594eeac82c01f235d0e717736',
		TopicArn: topic, Message: 'You have chosen to subscribe to the topic arn:aws:sns:us-west-2:123456789012:MyTopic.\nTo confirm the subscription, visit the SubscribeURL included in this message.',
		SubscribeURL: 'https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-west-2:123456789012:MyTopic&Token=2336412f37', Timestamp: '2012-04-26T20:45:04.751Z',
		SignatureVersion: '2', SigningCertURL: certUrl };
	const extra = { files: { ca_file: pem('ca.pem'), cert_cache: { [certUrl]: pem('ca-leaf.pem') } } };
	const h = { 'Content-Type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': 'Notification' };
	await add(vec('sns-accept-v1', 'sns', 'accept', [topic], msg(leafKey, note), h, extra), check);
	await add(vec('sns-accept-v2', 'sns', 'accept', [topic], msg(leafKey, { ...note, SignatureVersion: '2' }), h, extra), check);
	await add(vec('sns-subscription-confirmation', 'sns', 'accept', [topic], msg(leafKey, confirm), { ...h, 'x-amz-sns-message-type': 'SubscriptionConfirmation' }, extra), check);
	await add(vec('sns-tampered-message', 'sns', 'reject', [topic], msg(leafKey, note).replace('Hello world!', 'Hello World!'), h, extra), check);
	await add(vec('sns-wrong-key', 'sns', 'reject', [topic], msg(rogueKey, note), h, extra), check);
	const { Subject, ...noSubject } = note;
	await add(vec('sns-accept-no-subject', 'sns', 'accept', [topic], msg(leafKey, { ...noSubject, MessageId: 'da41e39f-ea4d-435a-b922-c6aae3915ebe' }), h, extra), check);
}

// ---- apple: signedPayload JWS with an x5c chain, checked with SignedDataVerifier given the root
{
	const { SignedDataVerifier, Environment } = require('@apple/app-store-server-library');
	writeFileSync(`${dir}/ext-int`, 'basicConstraints=critical,CA:true\nkeyUsage=critical,keyCertSign\n1.2.840.113635.100.6.2.1=ASN1:NULL\n');
	writeFileSync(`${dir}/ext-leaf`, '1.2.840.113635.100.6.11.1=ASN1:NULL\n');
	for (const r of ['aroot', 'arogue'])
		ossl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${r}.key`, '-out', `${r}.pem`, '-days', '30', '-subj', `/CN=Vector ${r}`);
	ossl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'aint.key', '-out', 'aint.csr', '-subj', '/CN=Vector WWDR');
	ossl('x509', '-req', '-in', 'aint.csr', '-CA', 'aroot.pem', '-CAkey', 'aroot.key', '-CAcreateserial', '-extfile', 'ext-int', '-out', 'aint.pem', '-days', '30');
	ossl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'aleaf.key', '-out', 'aleaf.csr', '-subj', '/CN=Vector Signer');
	ossl('x509', '-req', '-in', 'aleaf.csr', '-CA', 'aint.pem', '-CAkey', 'aint.key', '-CAcreateserial', '-extfile', 'ext-leaf', '-out', 'aleaf.pem', '-days', '30');
	const der = (f) => new X509Certificate(pem(f)).raw;
	const x5c = ['aleaf.pem', 'aint.pem', 'aroot.pem'].map((f) => der(f).toString('base64'));
	const key = createPrivateKey(pem('aleaf.key'));
	const bundle = 'com.example.app';
	const payload = (o = {}) => ({ notificationType: 'DID_RENEW', subtype: 'BILLING_RECOVERY', notificationUUID: '002e14d5-51f5-4503-b5a8-c3a1af68eb20',
		data: { appAppleId: 1234, bundleId: bundle, bundleVersion: '1.2.3', environment: 'Sandbox', signedTransactionInfo: 'x', status: 1 },
		version: '2.0', signedDate: now * 1000, ...o });
	const body = (k, p, chain = x5c) => JSON.stringify({ signedPayload: jws('ES256', k, { alg: 'ES256', x5c: chain }, p) });
	const verifier = new SignedDataVerifier([der('aroot.pem')], false, Environment.SANDBOX, bundle, 1234);
	const check = async (v) => { await verifier.verifyAndDecodeNotification(JSON.parse(v.verify.body).signedPayload); return true; };
	check.sdk = '@apple/app-store-server-library@3.1.0 SignedDataVerifier.verifyAndDecodeNotification';
	const extra = { files: { ca_file: pem('aroot.pem') } };
	await add(vec('apple-accept', 'apple', 'accept', [bundle], body(key, payload()), {}, extra), check);
	const good = JSON.parse(body(key, payload())).signedPayload.split('.');
	const forged = [good[0], b64u(JSON.stringify(payload({ notificationType: 'REFUND', subtype: undefined }))), good[2]].join('.');
	await add(vec('apple-tampered-payload', 'apple', 'reject', [bundle], JSON.stringify({ signedPayload: forged }), {}, extra), check);
	await add(vec('apple-other-bundle', 'apple', 'reject', [bundle], body(key, payload({ data: { ...payload().data, bundleId: 'com.other.app' } })), {}, extra), check);
	await add(vec('apple-wrong-signer', 'apple', 'reject', [bundle], body(createPrivateKey(pem('arogue.key')), payload()), {}, extra), check);
	// the chain is good, the endpoint trusts another root
	await add(vec('apple-untrusted-root', 'apple', 'reject', [bundle], body(key, payload()), {}, { files: { ca_file: pem('arogue.pem') } }),
		derived);
}

// ---- graph: the subscription's clientState in every notification (derived: Graph signs nothing)
{
	const cs = 'graph-client-state-0123456789';
	const item = (id, c = cs) => ({ subscriptionId: 'b6f4d2b8-9ad2-4d62-8a68-0d3b4e6c1a11', subscriptionExpirationDateTime: '2026-12-03T18:23:45.9356913Z',
		changeType: 'created', resource: `Users/u1/Messages/${id}`, clientState: c, tenantId: '84bd8158-6d4d-4958-8b9f-9d6445542f95',
		resourceData: { '@odata.type': '#Microsoft.Graph.Message', '@odata.id': `Users/u1/Messages/${id}`, id } });
	await add(vec('graph-accept', 'graph', 'accept', [cs], JSON.stringify({ value: [item('AAMkAGUwNjQ4'), item('AAMkAGUwNjQ5')] }), {}), derived);
	await add(vec('graph-wrong-client-state', 'graph', 'reject', [cs], JSON.stringify({ value: [item('AAMkAGUwNjQ4'), item('AAMkAGUwNjQ5', 'guessed')] }), {}), derived);
}

rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify({
	description: 'Vectors for the providers that sign with public keys, written by asym-vectors.mjs: keys and certificate authorities made at generation time; SDK-checked where a Node verifier works offline (sdk_check.sdk names it), else derived from the documented algorithm. verify.files and verify.endpoint are what the endpoint reads besides its secret_file.',
	verify_now_semantics: 'verify.now = receiver clock (unix seconds) at which the vector verifies; certificates are valid for 30 days from it',
	vectors: out,
}, null, 1));
