/* test_smtpparse.c: the SMTP reply parser (src/load/smtpparse.h):
 * single and multi-line replies, an EHLO reply's keywords, pipelined
 * replies in one buffer split at every byte boundary, and garbage. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "load/smtpparse.h"

static const char pipelined[] =
    "220 lab.mailbench.test ESMTP\r\n"
    "250-lab.mailbench.test\r\n250-PIPELINING\r\n250-SIZE 52428800\r\n"
    "250-AUTH PLAIN LOGIN\r\n250 8BITMIME\r\n"
    "235 2.7.0 Authentication successful\r\n"
    "250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n550 5.1.1 <x@y>: Recipient rejected\r\n"
    "354 End data with <CR><LF>.<CR><LF>\r\n"
    "250 2.0.0 Ok: queued as 7E482A72170\r\n221\r\n";

static void run(const char *buf, size_t len, size_t first, char *out, size_t cap)
{
	struct mb_smtp_parser *p;
	size_t off = 0, o = 0;
	assert_int_equal(mb_smtp_parser_create(&p), 0);
	out[0] = 0;
	while (off < len) {
		size_t n = off == 0 ? first : len - off;
		size_t done = 0;
		while (done < n) {
			size_t used;
			int rc = mb_smtp_parser_feed(p, buf + off + done, n - done, &used);
			assert_true(rc >= 0);
			done += used;
			if (rc == 1) {
				const struct mb_smtp_reply *r = mb_smtp_parser_reply(p);
				o += (size_t)snprintf(out + o, cap - o, "%d/%d/%s|", r->code,
						      r->nlines, r->line[r->nlines - 1]);
			}
		}
		off += n;
	}
	mb_smtp_parser_destroy(p);
}

static void test_pipelined(void **state)
{
	(void)state;
	char whole[2048], piece[2048];
	size_t len = sizeof(pipelined) - 1;
	run(pipelined, len, len, whole, sizeof(whole));
	assert_string_equal(whole, "220/1/lab.mailbench.test ESMTP|250/5/8BITMIME|"
				   "235/1/2.7.0 Authentication successful|250/1/2.1.0 Ok|"
				   "250/1/2.1.5 Ok|550/1/5.1.1 <x@y>: Recipient rejected|"
				   "354/1/End data with <CR><LF>.<CR><LF>|"
				   "250/1/2.0.0 Ok: queued as 7E482A72170|221/1/|");
	for (size_t i = 1; i < len; i++) {
		run(pipelined, len, i, piece, sizeof(piece));
		assert_string_equal(piece, whole);
	}
}

static void test_frame(void **state)
{
	(void)state;
	size_t len = sizeof(pipelined) - 1, off = 0;
	int n = 0;
	while (off < len) {
		long fl = mb_smtp_frame(pipelined + off, len - off);
		assert_true(fl > 0);
		assert_int_equal(mb_smtp_frame(pipelined + off, (size_t)fl - 1), 0);
		off += (size_t)fl;
		n++;
	}
	assert_int_equal(n, 9);
	assert_int_equal(mb_smtp_frame("HTTP/1.1 200\r\n", 14), MB_EPROTO);
}

static void test_ehlo(void **state)
{
	(void)state;
	struct mb_smtp_parser *p;
	size_t used;
	const char *s = "250-x\r\n250-pipelining\r\n250-AUTH PLAIN LOGIN\r\n250 STARTTLS\r\n";
	assert_int_equal(mb_smtp_parser_create(&p), 0);
	assert_int_equal(mb_smtp_parser_feed(p, s, strlen(s), &used), 1);
	const struct mb_smtp_reply *r = mb_smtp_parser_reply(p);
	assert_non_null(mb_smtp_ehlo_has(r, "PIPELINING"));
	assert_string_equal(mb_smtp_ehlo_has(r, "AUTH"), "PLAIN LOGIN");
	assert_string_equal(mb_smtp_ehlo_has(r, "STARTTLS"), "");
	assert_null(mb_smtp_ehlo_has(r, "CHUNKING"));
	assert_null(mb_smtp_ehlo_has(r, "x"));
	mb_smtp_parser_destroy(p);
}

static void bad(const char *s, int code, const char *what)
{
	struct mb_smtp_parser *p;
	size_t used;
	assert_int_equal(mb_smtp_parser_create(&p), 0);
	assert_int_equal(mb_smtp_parser_feed(p, s, strlen(s), &used), code);
	assert_non_null(strstr(mb_smtp_parser_error(p), what));
	assert_int_equal(mb_smtp_parser_feed(p, "250 ok\r\n", 8, &used), MB_EPROTO);
	mb_smtp_parser_reset(p);
	assert_int_equal(mb_smtp_parser_feed(p, "250 ok\r\n", 8, &used), 1);
	mb_smtp_parser_destroy(p);
}

static void test_garbage(void **state)
{
	(void)state;
	bad("HTTP/1.1 400 Bad\r\n", MB_EPROTO, "not an SMTP reply");
	bad("25\r\n", MB_EPROTO, "not an SMTP reply");
	bad("250x\r\n", MB_EPROTO, "not an SMTP reply");
	bad("250-a\r\n251 b\r\n", MB_EPROTO, "changes its code");
	bad("999 x\r\n", MB_EPROTO, "out of range");
	char big[5001];
	memset(big, '2', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	bad(big, MB_ETOOBIG, "line over");
	char many[256 * 8 + 16] = "";
	for (int i = 0; i < 257; i++)
		strcat(many, "250-a\r\n");
	bad(many, MB_ETOOBIG, "more than");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pipelined),
	    cmocka_unit_test(test_frame),
	    cmocka_unit_test(test_ehlo),
	    cmocka_unit_test(test_garbage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
