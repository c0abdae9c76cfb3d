/* test_crlf.c: the line-end scan of the protocol parsers (src/load/crlf.h):
 * CR LF and bare LF lines, a line split at every byte, the limit exactly
 * at and one past max (complete and incomplete), and the line text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/error.h"
#include "load/crlf.h"

static void test_lines(void **state)
{
	(void)state;
	const char b[] = "a1 OK done\r\n* 3 EXISTS\n+\r\n";
	size_t take, off = 0;
	assert_int_equal(mb_crlf_scan(b, strlen(b), 0, 100, &take), 1);
	assert_int_equal(take, 12);
	assert_int_equal(mb_crlf_text(b, take), 10);
	off += take;
	assert_int_equal(mb_crlf_scan(b + off, strlen(b) - off, 0, 100, &take), 1);
	assert_int_equal(take, 11);
	assert_int_equal(mb_crlf_text(b + off, take), 10); /* bare LF */
	off += take;
	assert_int_equal(mb_crlf_scan(b + off, strlen(b) - off, 0, 100, &take), 1);
	assert_int_equal(take, 3);
	assert_int_equal(mb_crlf_text(b + off, take), 1);
	off += take;
	assert_int_equal(mb_crlf_scan(b + off, 0, 0, 100, &take), 0);
	assert_int_equal(take, 0);
	/* the text of a line without its LF yet, and of nothing */
	assert_int_equal(mb_crlf_text("abc\r", 4), 3);
	assert_int_equal(mb_crlf_text("", 0), 0);
	assert_int_equal(mb_crlf_text("\n", 1), 0);
}

/* A line fed in two parts at every split point ends at the same byte. */
static void test_split(void **state)
{
	(void)state;
	const char b[] = "250-PIPELINING\r\nrest";
	size_t len = strlen(b);
	for (size_t cut = 0; cut <= 16; cut++) {
		size_t take;
		int rc = mb_crlf_scan(b, cut, 0, 100, &take);
		if (cut < 16) {
			assert_int_equal(rc, 0);
			assert_int_equal(take, cut);
			assert_int_equal(mb_crlf_scan(b + cut, len - cut, cut, 100, &take), 1);
			assert_int_equal(cut + take, 16);
		} else {
			assert_int_equal(rc, 1);
			assert_int_equal(take, 16);
		}
	}
}

static void test_limit(void **state)
{
	(void)state;
	char b[16];
	size_t take;
	memset(b, 'x', sizeof(b));
	/* max 8 bytes before the LF: 7 text bytes and a CR fit, 8 and a bare LF fit */
	memcpy(b + 7, "\r\n", 2);
	assert_int_equal(mb_crlf_scan(b, 9, 0, 8, &take), 1);
	assert_int_equal(take, 9);
	memset(b, 'x', sizeof(b));
	b[8] = '\n';
	assert_int_equal(mb_crlf_scan(b, 9, 0, 8, &take), 1);
	b[8] = 'x';
	b[9] = '\n';
	assert_int_equal(mb_crlf_scan(b, 10, 0, 8, &take), MB_ETOOBIG);
	/* incomplete: 8 bytes may still end well, 9 cannot */
	assert_int_equal(mb_crlf_scan(b, 8, 0, 8, &take), 0);
	assert_int_equal(mb_crlf_scan(b, 9, 0, 8, &take), MB_ETOOBIG);
	/* the bytes the caller holds count */
	assert_int_equal(mb_crlf_scan(b, 4, 4, 8, &take), 0);
	assert_int_equal(mb_crlf_scan(b, 5, 4, 8, &take), MB_ETOOBIG);
	assert_int_equal(mb_crlf_scan("\n", 1, 8, 8, &take), 1);
	assert_int_equal(mb_crlf_scan("\n", 1, 9, 8, &take), MB_ETOOBIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lines),
	    cmocka_unit_test(test_split),
	    cmocka_unit_test(test_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
