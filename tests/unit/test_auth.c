/* test_auth.c: unit tests of the logon cryptography (src/proto/auth.c):
 * PBKDF2 key derivation (deterministic, sensitive to password and salt),
 * proofs that verify only with the right key,
 * nonce and user name, and the hex helpers of the topology file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/error.h"
#include "proto/proto.h"

static void test_pbkdf2_derive(void **state)
{
	(void)state;
	uint8_t salt[MB_SALT_LEN], k1[MB_KEY_LEN], k2[MB_KEY_LEN], k3[MB_KEY_LEN];
	memset(salt, 0x5A, sizeof(salt));
	assert_int_equal(mb_auth_derive("secret", salt, 1000, k1), 0);
	assert_int_equal(mb_auth_derive("secret", salt, 1000, k2), 0);
	assert_memory_equal(k1, k2, MB_KEY_LEN);
	assert_int_equal(mb_auth_derive("secreT", salt, 1000, k3), 0);
	assert_memory_not_equal(k1, k3, MB_KEY_LEN);
	salt[0] ^= 1;
	assert_int_equal(mb_auth_derive("secret", salt, 1000, k3), 0);
	assert_memory_not_equal(k1, k3, MB_KEY_LEN);
	assert_int_equal(mb_auth_derive("secret", salt, 0, k3), MB_EINVAL);
}

static void test_proof_verify(void **state)
{
	(void)state;
	uint8_t salt[MB_SALT_LEN], key[MB_KEY_LEN], bad[MB_KEY_LEN];
	uint8_t nonce[MB_NONCE_LEN], proof[MB_PROOF_LEN];
	assert_int_equal(mb_auth_random(salt, sizeof(salt)), 0);
	assert_int_equal(mb_auth_random(nonce, sizeof(nonce)), 0);
	assert_int_equal(mb_auth_derive("pw-1", salt, MB_PBKDF2_ITERATIONS, key), 0);
	assert_int_equal(mb_auth_derive("pw-2", salt, MB_PBKDF2_ITERATIONS, bad), 0);
	assert_int_equal(mb_auth_proof(key, nonce, "user0001", 8, proof), 0);
	assert_int_equal(mb_auth_verify(key, nonce, "user0001", 8, proof), 0);
	/* wrong password */
	assert_int_equal(mb_auth_verify(bad, nonce, "user0001", 8, proof), MB_EAUTH);
	/* replay under another nonce */
	uint8_t nonce2[MB_NONCE_LEN];
	memcpy(nonce2, nonce, sizeof(nonce));
	nonce2[5] ^= 0x40;
	assert_int_equal(mb_auth_verify(key, nonce2, "user0001", 8, proof), MB_EAUTH);
	/* another user name */
	assert_int_equal(mb_auth_verify(key, nonce, "user0002", 8, proof), MB_EAUTH);
	/* tampered proof */
	proof[0] ^= 1;
	assert_int_equal(mb_auth_verify(key, nonce, "user0001", 8, proof), MB_EAUTH);
	/* the proof is not the password nor the key */
	assert_memory_not_equal(proof, key, MB_PROOF_LEN);
}

static void test_random_differs(void **state)
{
	(void)state;
	uint8_t a[32], b[32];
	assert_int_equal(mb_auth_random(a, sizeof(a)), 0);
	assert_int_equal(mb_auth_random(b, sizeof(b)), 0);
	assert_memory_not_equal(a, b, sizeof(a));
}

static void test_hex(void **state)
{
	(void)state;
	uint8_t in[4] = {0x00, 0x7f, 0xA5, 0xff}, out[4];
	char hex[9];
	mb_hex_encode(in, 4, hex);
	assert_string_equal(hex, "007fa5ff");
	assert_int_equal(mb_hex_decode(hex, out, 4), 0);
	assert_memory_equal(in, out, 4);
	assert_int_equal(mb_hex_decode("007fa5f", out, 4), MB_EINVAL);
	assert_int_equal(mb_hex_decode("007fa5fg", out, 4), MB_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pbkdf2_derive),
	    cmocka_unit_test(test_proof_verify),
	    cmocka_unit_test(test_random_differs),
	    cmocka_unit_test(test_hex),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
