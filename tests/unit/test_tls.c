/* test_tls.c: the TLS session over memory BIOs (core/tls.h) against an
 * in-memory server session: ciphertext is moved between the two by hand.
 * A certificate made by mb_tls_selfsigned (key mode 0600) verifies with
 * --tls-ca semantics and fails without it or for another host name;
 * plaintext goes both ways, written early it waits for the handshake;
 * close_notify ends the read side; garbage fails the session with
 * MB_ETLS and a message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/tls.h"

static char dir[256], cert[300], key[300], other[300], otherkey[300];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/mb-test-tls.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(cert, sizeof(cert), "%s/cert.pem", dir);
	snprintf(key, sizeof(key), "%s/key.pem", dir);
	snprintf(other, sizeof(other), "%s/other.pem", dir);
	snprintf(otherkey, sizeof(otherkey), "%s/otherkey.pem", dir);
	char err[400];
	if (mb_tls_selfsigned("localhost", cert, key, err, sizeof(err)) ||
	    mb_tls_selfsigned("localhost", other, otherkey, err, sizeof(err)))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(cert);
	unlink(key);
	unlink(other);
	unlink(otherkey);
	rmdir(dir);
	return 0;
}

/* Move every pending ciphertext byte from a to b: how many. */
static size_t pump(struct mb_tls *a, struct mb_tls *b)
{
	char buf[4096];
	size_t n, total = 0;
	while ((n = mb_tls_out_take(a, buf, sizeof(buf))) > 0) {
		assert_int_equal(mb_tls_feed(b, buf, n), 0);
		total += n;
	}
	return total;
}

/* Run the handshake to its end: the client's last step result. */
static int handshake(struct mb_tls *c, struct mb_tls *s)
{
	int rc = 0;
	for (int i = 0; i < 20; i++) {
		rc = mb_tls_step(c);
		size_t moved = pump(c, s);
		int src = mb_tls_step(s);
		moved += pump(s, c);
		if (rc < 0 || src < 0)
			return rc < 0 ? rc : mb_tls_step(c);
		if (rc == 1 && src == 1 && moved == 0)
			break;
	}
	return mb_tls_step(c);
}

struct pair {
	struct mb_tls_ctx *cctx, *sctx;
	struct mb_tls *c, *s;
};

static void pair_open(struct pair *p, const char *ca, bool insecure, const char *host)
{
	char err[400];
	memset(p, 0, sizeof(*p));
	assert_int_equal(mb_tls_ctx_client(ca, insecure, &p->cctx, err, sizeof(err)), 0);
	assert_int_equal(mb_tls_ctx_server(cert, key, &p->sctx, err, sizeof(err)), 0);
	assert_int_equal(mb_tls_create(p->cctx, host, &p->c), 0);
	assert_int_equal(mb_tls_create(p->sctx, NULL, &p->s), 0);
}

static void pair_close(struct pair *p)
{
	mb_tls_destroy(p->c);
	mb_tls_destroy(p->s);
	mb_tls_ctx_destroy(p->cctx);
	mb_tls_ctx_destroy(p->sctx);
}

static void test_key_mode(void **state)
{
	(void)state;
	struct stat st;
	assert_int_equal(stat(key, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
}

static void test_exchange(void **state)
{
	(void)state;
	struct pair p;
	pair_open(&p, cert, false, "127.0.0.1");
	/* written before the handshake: kept, sent once it is open */
	assert_int_equal(mb_tls_write(p.c, "a1 CAPABILITY\r\n", 15), 0);
	assert_false(mb_tls_open(p.c));
	assert_int_equal(handshake(p.c, p.s), 1);
	assert_true(mb_tls_open(p.c));
	pump(p.c, p.s);
	char buf[256];
	long n = mb_tls_read(p.s, buf, sizeof(buf));
	assert_int_equal(n, 15);
	assert_memory_equal(buf, "a1 CAPABILITY\r\n", 15);
	/* nothing more yet */
	assert_int_equal(mb_tls_read(p.s, buf, sizeof(buf)), 0);
	/* the other way, a larger reply in several records */
	static char big[100000];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + i % 26);
	assert_int_equal(mb_tls_write(p.s, big, sizeof(big)), 0);
	pump(p.s, p.c);
	size_t got = 0;
	static char back[100000];
	while ((n = mb_tls_read(p.c, back + got, sizeof(back) - got)) > 0)
		got += (size_t)n;
	assert_int_equal(n, 0);
	assert_int_equal(got, sizeof(big));
	assert_memory_equal(back, big, sizeof(big));
	char d[128];
	mb_tls_describe(p.c, d, sizeof(d));
	assert_non_null(strstr(d, "TLSv1."));
	/* close_notify: the peer's read ends */
	mb_tls_shutdown(p.c);
	assert_true(pump(p.c, p.s) > 0);
	assert_int_equal(mb_tls_read(p.s, buf, sizeof(buf)), MB_ECLOSED);
	assert_int_equal(mb_tls_write(p.c, "x", 1), MB_ECLOSED);
	pair_close(&p);
}

static void test_untrusted(void **state)
{
	(void)state;
	struct pair p;
	/* the other certificate as CA: the server's is not trusted */
	pair_open(&p, other, false, "127.0.0.1");
	assert_int_equal(handshake(p.c, p.s), MB_ETLS);
	assert_false(mb_tls_open(p.c));
	assert_non_null(strstr(mb_tls_error(p.c), "certificate verify failed"));
	/* failed stays failed */
	char buf[16];
	assert_int_equal(mb_tls_read(p.c, buf, sizeof(buf)), MB_ETLS);
	assert_int_equal(mb_tls_write(p.c, "x", 1), MB_ETLS);
	pair_close(&p);
}

static void test_wrong_host(void **state)
{
	(void)state;
	struct pair p;
	pair_open(&p, cert, false, "mail.example.org");
	assert_int_equal(handshake(p.c, p.s), MB_ETLS);
	assert_non_null(strstr(mb_tls_error(p.c), "certificate verify failed"));
	pair_close(&p);
	pair_open(&p, cert, false, "localhost"); /* the name it carries */
	assert_int_equal(handshake(p.c, p.s), 1);
	pair_close(&p);
}

static void test_insecure(void **state)
{
	(void)state;
	struct pair p;
	pair_open(&p, other, true, "mail.example.org"); /* nothing verified */
	assert_int_equal(handshake(p.c, p.s), 1);
	pair_close(&p);
}

static void test_garbage(void **state)
{
	(void)state;
	struct pair p;
	pair_open(&p, cert, false, "127.0.0.1");
	assert_int_equal(mb_tls_step(p.c), 0);
	assert_true(mb_tls_out_pending(p.c) > 0);
	const char junk[] = "* OK plain IMAP greeting, not TLS\r\n";
	assert_int_equal(mb_tls_feed(p.c, junk, sizeof(junk) - 1), 0);
	assert_int_equal(mb_tls_step(p.c), MB_ETLS);
	assert_string_not_equal(mb_tls_error(p.c), "no error");
	pair_close(&p);
}

static void test_bad_ca_file(void **state)
{
	(void)state;
	struct mb_tls_ctx *c = NULL;
	char err[400] = "";
	assert_int_equal(mb_tls_ctx_client("/nonexistent/ca.pem", false, &c, err, sizeof(err)),
			 MB_ETLS);
	assert_null(c);
	assert_non_null(strstr(err, "/nonexistent/ca.pem"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_key_mode),	cmocka_unit_test(test_exchange),
	    cmocka_unit_test(test_untrusted),	cmocka_unit_test(test_wrong_host),
	    cmocka_unit_test(test_insecure),	cmocka_unit_test(test_garbage),
	    cmocka_unit_test(test_bad_ca_file),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
