/* SPDX-License-Identifier: ISC */
/*
 * fuzz_ecdsa.c - the ECDSA class's parsers: a DER SubjectPublicKeyInfo and
 * a DER signature (common/ecdsa.c, SendGrid's keys and signatures)
 *
 * Input: a key length byte n, n bytes of key, the rest a signature.  The
 * key is read as SendGrid's verification key would be; when it parses, the
 * signature is checked against a fixed message.  Also the private-key
 * reader (hookinbox-send's) on the key bytes: a signature it makes fits
 * ECDSA_SIG_MAX.
 */
#include "ecdsa.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char msg[] = "1700000000[{\"sg_event_id\":\"e1\"}]";
	size_t klen;
	ecdsa_key *k;
	unsigned char sig[ECDSA_SIG_MAX];
	size_t siglen = 0;

	if (size == 0)
		return 0;
	klen = data[0] < size - 1 ? data[0] : size - 1;
	k = ecdsa_public_from_der(data + 1, klen);
	if (k != NULL) {
		(void)ecdsa_verify(k, msg, sizeof(msg) - 1, data + 1 + klen, size - 1 - klen);
		ecdsa_key_free(k);
	}
	if (ecdsa_sign_der(data + 1, klen, msg, sizeof(msg) - 1, sig, &siglen) == 0 &&
	    (siglen == 0 || siglen > ECDSA_SIG_MAX))
		abort();
	return 0;
}
