// SPDX-License-Identifier: ISC
// base-vectors.mjs - writes provider-vectors-base.json: vectors for the
// providers of the first set that provider-vectors.json has none (or no
// refused ones) for: gitlab (a token compared with the secret, nothing
// signed), the generic hmac (an HMAC of the body, configured per endpoint:
// verify.endpoint holds the settings) and svix's refusals (the published
// Standard Webhooks vector under svix-* names, tampered and re-keyed).
// gitlab and hmac have no official SDK verifier: "derived", the documented
// algorithm with node:crypto.
//
//   node base-vectors.mjs > provider-vectors-base.json
//
// Accept vectors verify at any time (no timestamp); each has reject
// companions (a tampered body where the body is signed, a wrong secret).
import { hmac, none, vectorSet } from './vectors-lib.mjs';

const { add, vec, emit } = vectorSet();
const withEndpoint = (v, endpoint) => { v.verify.endpoint = endpoint; return v; };

// ---- gitlab: X-Gitlab-Token is the secret itself; the body is not covered
{
	const token = 'glwht-hookinbox-vector-token-0123';
	const body = '{"object_kind":"push","event_name":"push","checkout_sha":"da1560886d4f094c3e6c9ef40349f7d38b5d27d7","project":{"id":15}}';
	const h = (t) => ({ 'X-Gitlab-Token': t, 'X-Gitlab-Event': 'Push Hook', 'X-Gitlab-Event-UUID': '13792a34-cac6-4fda-95a8-c58e00a3954e' });
	await add(vec('gitlab-accept', 'gitlab', 'accept', token, body, h(token), { kind: 'derived', source: 'docs.gitlab.com webhooks: X-Gitlab-Token carries the secret token' }), none);
	await add(vec('gitlab-wrong-token', 'gitlab', 'reject', token, body, h('glwht-someone-else-0123'), {}), none);
	const missing = h(token);
	delete missing['X-Gitlab-Token'];
	await add(vec('gitlab-no-token', 'gitlab', 'reject', token, body, missing, {}), none);
}

// ---- svix: the published sign-function vector (standard-webhooks'
// webhook.test.ts) under svix-* names, with a body and a key it does not sign
{
	const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', id = 'msg_p5jXN8AQM9LWM0D4loKWxJek', ts = 1614265330;
	const body = '{"test": 2432232314}';
	const sig = (key, b) => 'v1,' + hmac('sha256', Buffer.from(key.slice(6), 'base64'), `${id}.${ts}.${b}`, 'base64');
	const h = (key, b) => ({ 'svix-id': id, 'svix-timestamp': String(ts), 'svix-signature': sig(key, b) });
	await add(vec('svix-tampered-body', 'svix', 'reject', secret, '{"test": 2432232315}', h(secret, body), { now: ts }), none);
	await add(vec('svix-wrong-secret', 'svix', 'reject', secret, body, h('whsec_' + Buffer.from('not-the-svix-key-0123456').toString('base64'), body), { now: ts }), none);
	await add(vec('svix-accept-derived', 'svix', 'accept', secret, body, h(secret, body), { now: ts }), none);
}

// ---- hmac: one vector set per configuration of the header, digest, encoding and prefix
const configs = [
	['hmac-sha256-hex', { header: 'X-Signature', algorithm: 'sha256', encoding: 'hex', prefix: 'sha256=', id_field: 'id' }, 'sha256', 'hex'],
	['hmac-sha512-b64', { header: 'X-Acme-Signature', algorithm: 'sha512', encoding: 'base64', id_header: 'X-Acme-Delivery' }, 'sha512', 'base64'],
	['hmac-sha1-hex', { header: 'X-Hook-Signature', algorithm: 'sha1', encoding: 'hex', id_field: 'data.id' }, 'sha1', 'hex'],
];
for (const [id, ep, alg, enc] of configs) {
	const secret = `${id}-vector-secret-0123`;
	const body = `{"id":"evt_${id}","type":"order.created","data":{"id":"ord_1"}}`;
	const h = (s, b) => ({ [ep.header]: (ep.prefix ?? '') + hmac(alg, s, b, enc), ...(ep.id_header ? { [ep.id_header]: `d-${id}` } : {}) });
	await add(withEndpoint(vec(`${id}-accept`, 'hmac', 'accept', secret, body, h(secret, body)), ep), none);
	await add(withEndpoint(vec(`${id}-tampered-body`, 'hmac', 'reject', secret, body.replace('ord_1', 'ord_2'), h(secret, body)), ep), none);
	await add(withEndpoint(vec(`${id}-wrong-secret`, 'hmac', 'reject', secret, body, h('not-the-secret-0123', body)), ep), none);
}

emit('Vectors for gitlab, the generic hmac and svix\'s refusals, written by base-vectors.mjs: derived from the documented algorithm (no official SDK verifier); verify.endpoint holds the hmac settings of the endpoint.');
