// SPDX-License-Identifier: ISC
// vectors-lib.mjs - what the vector writers (more-vectors.mjs,
// hmac2-vectors.mjs) share: a vector, its SDK check, the usual three
// (good, tampered body, wrong secret) and the file they make.
import { createHmac } from 'node:crypto';

export const hmac = (alg, key, data, enc) => createHmac(alg, key).update(data).digest(enc);
export const none = () => true;

export function vectorSet() {
	const out = [];

	// check(v) is the SDK's verdict (check.sdk names it) or none; a vector the SDK judges otherwise stops the run
	async function add(v, check) {
		let verdict;
		try { verdict = (await check(v)) ? 'accept' : 'reject'; } catch (e) { verdict = 'reject'; }
		v.sdk_check = check.sdk ? { sdk: check.sdk, verify_verdict: verdict, pass: verdict === v.expect }
			: { sdk: 'none: no official SDK verifier; documented algorithm with node:crypto', pass: true };
		if (check.sdk && verdict !== v.expect)
			throw new Error(`${v.id}: the SDK says ${verdict}`);
		out.push(v);
	}

	// extra: kind, source, now, ctype (else JSON), url (the URL the provider signs), additional_secrets
	function vec(id, provider, expect, secret, body, headers, extra = {}) {
		const v = { id, provider, kind: extra.kind ?? 'derived', source: extra.source, expect,
			verify: { headers: { 'Content-Type': extra.ctype ?? 'application/json', ...headers }, body, secret, now: extra.now ?? 0 } };
		if (extra.url)
			v.verify.url = extra.url;
		if (extra.additional_secrets)
			v.verify.additional_secrets = extra.additional_secrets;
		return v;
	}

	// three of each: good, tampered body (extra.tamper, else a space added), wrong secret
	async function triple(provider, secret, wrong, body, signer, check, extra) {
		await add(vec(`${provider}-accept`, provider, 'accept', secret, body, signer(secret, body), extra), check);
		// Basic credentials cover no body: nothing to tamper with
		if (!extra?.unsigned_body)
			await add(vec(`${provider}-tampered-body`, provider, 'reject', secret, extra?.tamper ? extra.tamper(body) : body + ' ', signer(secret, body), extra), check);
		await add(vec(`${provider}-wrong-secret`, provider, 'reject', secret, body, signer(wrong, body), extra), check);
	}

	function emit(description) {
		process.stdout.write(JSON.stringify({ description,
			verify_now_semantics: 'verify.now = receiver clock (unix seconds) at which the vector verifies; 0 = scheme has no timestamp',
			vectors: out }, null, 1) + '\n');
	}

	return { out, add, vec, triple, emit };
}
