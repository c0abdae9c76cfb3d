/* auth.c: the logon handshake's cryptography, with OpenSSL.
 * key = PBKDF2-HMAC-SHA-256(password, salt, iterations); proof =
 * HMAC-SHA-256(key, nonce || user).  Invariants: the password never leaves
 * the client; proofs are compared in constant time (CRYPTO_memcmp). */
#include "proto/proto.h"
#include "core/error.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <string.h>

int mb_auth_derive(const char *password, const uint8_t salt[MB_SALT_LEN], uint32_t iterations,
		   uint8_t key[MB_KEY_LEN])
{
	if (!password || iterations == 0 || iterations > 10000000)
		return MB_EINVAL;
	if (PKCS5_PBKDF2_HMAC(password, (int)strlen(password), salt, MB_SALT_LEN, (int)iterations,
			      EVP_sha256(), MB_KEY_LEN, key) != 1)
		return MB_ESYS;
	return 0;
}

int mb_auth_proof(const uint8_t key[MB_KEY_LEN], const uint8_t nonce[MB_NONCE_LEN],
		  const char *user, size_t user_len, uint8_t proof[MB_PROOF_LEN])
{
	uint8_t msg[MB_NONCE_LEN + MB_PROTO_MAX_NAME];
	unsigned int outlen = 0;

	if (user_len > MB_PROTO_MAX_NAME)
		return MB_EINVAL;
	memcpy(msg, nonce, MB_NONCE_LEN);
	if (user_len)
		memcpy(msg + MB_NONCE_LEN, user, user_len);
	if (!HMAC(EVP_sha256(), key, MB_KEY_LEN, msg, MB_NONCE_LEN + user_len, proof, &outlen) ||
	    outlen != MB_PROOF_LEN)
		return MB_ESYS;
	return 0;
}

int mb_auth_verify(const uint8_t key[MB_KEY_LEN], const uint8_t nonce[MB_NONCE_LEN],
		   const char *user, size_t user_len, const uint8_t proof[MB_PROOF_LEN])
{
	uint8_t want[MB_PROOF_LEN];
	int rc = mb_auth_proof(key, nonce, user, user_len, want);

	if (rc)
		return MB_EAUTH;
	rc = CRYPTO_memcmp(want, proof, MB_PROOF_LEN) == 0 ? 0 : MB_EAUTH;
	OPENSSL_cleanse(want, sizeof(want));
	return rc;
}

int mb_auth_random(void *buf, size_t n)
{
	if (n > INT32_MAX)
		return MB_EINVAL;
	return RAND_bytes(buf, (int)n) == 1 ? 0 : MB_ESYS;
}

void mb_hex_encode(const uint8_t *p, size_t n, char *out)
{
	static const char hx[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hx[p[i] >> 4];
		out[2 * i + 1] = hx[p[i] & 15];
	}
	out[2 * n] = '\0';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int mb_hex_decode(const char *hex, uint8_t *out, size_t n)
{
	if (!hex || strlen(hex) != 2 * n)
		return MB_EINVAL;
	for (size_t i = 0; i < n; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return MB_EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}
