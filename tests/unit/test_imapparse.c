/* test_imapparse.c: the IMAP response parser (src/load/imapparse.h):
 *  - tagged, untagged and continuation responses, response codes, numbers;
 *  - literals (several in one response, empty, LITERAL+ form, binary bytes);
 *  - a session transcript fed split at every byte boundary parses to the
 *    same responses as fed whole (and one byte at a time);
 *  - untagged responses between a command's tagged reply and others;
 *  - garbage and hostile input: clear errors, never past the buffer,
 *    sticky until reset; limits on line, literal and nesting;
 *  - the astring encoder (atom, quoted, literal). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "load/imapparse.h"

static const char transcript[] =
    "* OK [CAPABILITY IMAP4rev1 SASL-IR LITERAL+ AUTH=PLAIN] Dovecot ready.\r\n"
    "a1 OK [CAPABILITY IMAP4rev1 IDLE UIDPLUS MOVE CONDSTORE QRESYNC] Logged in\r\n"
    "* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft)\r\n"
    "* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft \\*)] Flags permitted.\r\n"
    "* 3 EXISTS\r\n"
    "* 0 RECENT\r\n"
    "* OK [UIDVALIDITY 1733091234] UIDs valid\r\n"
    "* OK [HIGHESTMODSEQ 17] Highest\r\n"
    "a2 OK [READ-WRITE] Select completed (0.001 + 0.000 secs).\r\n"
    "* 1 FETCH (UID 7 FLAGS (\\Seen) BODY[HEADER.FIELDS (SUBJECT FROM)] {33}\r\n"
    "Subject: hi\r\nFrom: a@b\r\n\r\n{x}\r\n\r\n MODSEQ (12))\r\n"
    "* 2 FETCH (UID 8 BODY[] {0}\r\n ENVELOPE (\"Mon, 1 Dec 2026\" \"say \\\"hi\\\"\" NIL NIL NIL "
    "NIL NIL NIL NIL \"<m@x>\"))\r\n"
    "* 4 EXISTS\r\n"
    "a3 OK Fetch completed.\r\n"
    "+ idling\r\n"
    "* VANISHED (EARLIER) 1:3,5\r\n"
    "a4 NO [TRYCREATE] Mailbox doesn't exist: Foo\r\n"
    "* BYE Logging out\r\n";

static struct mb_imap_parser *mk(void)
{
	struct mb_imap_parser *p;
	assert_int_equal(mb_imap_parser_create(NULL, &p), 0);
	return p;
}

/* Feed buf in pieces of the given sizes (cycled); record each response's
 * raw bytes, name and tag into out (joined by '|'). */
static int feed_split(const char *buf, size_t len, const size_t *sizes, size_t nsizes, char *out,
		      size_t outcap, int *count)
{
	struct mb_imap_parser *p = mk();
	size_t off = 0, k = 0, o = 0;
	*count = 0;
	out[0] = 0;
	while (off < len) {
		size_t n = sizes[k++ % nsizes];
		if (n > len - off)
			n = len - off;
		size_t done = 0;
		while (done < n) {
			size_t used;
			int rc = mb_imap_parser_feed(p, buf + off + done, n - done, &used);
			if (rc < 0) {
				mb_imap_parser_destroy(p);
				return rc;
			}
			done += used;
			if (rc == 1) {
				const struct mb_imap_resp *r = mb_imap_parser_resp(p);
				o += (size_t)snprintf(out + o, outcap - o, "%d:%s:%s:%s:%zu|",
						      r->kind, r->tag ? r->tag : "", r->name,
						      r->code ? r->code : "", r->raw_len);
				(*count)++;
			}
		}
		off += n;
	}
	mb_imap_parser_destroy(p);
	return 0;
}

static void test_transcript_splits(void **state)
{
	(void)state;
	char whole[4096], piece[4096];
	int n1, n2;
	size_t len = sizeof(transcript) - 1;
	size_t all = len;
	assert_int_equal(feed_split(transcript, len, &all, 1, whole, sizeof(whole), &n1), 0);
	assert_int_equal(n1, 17);
	assert_non_null(strstr(whole, "2::FETCH::"));
	/* every split point: first part i bytes, then the rest */
	for (size_t i = 1; i < len; i++) {
		size_t sz[2] = {i, len};
		assert_int_equal(feed_split(transcript, len, sz, 2, piece, sizeof(piece), &n2), 0);
		assert_int_equal(n2, n1);
		assert_string_equal(piece, whole);
	}
	size_t one = 1, three[3] = {1, 2, 7};
	assert_int_equal(feed_split(transcript, len, &one, 1, piece, sizeof(piece), &n2), 0);
	assert_string_equal(piece, whole);
	assert_int_equal(feed_split(transcript, len, three, 3, piece, sizeof(piece), &n2), 0);
	assert_string_equal(piece, whole);
}

/* Parse one complete response from s. */
static const struct mb_imap_resp *one(struct mb_imap_parser *p, const char *s)
{
	size_t used;
	mb_imap_parser_reset(p);
	int rc = mb_imap_parser_feed(p, s, strlen(s), &used);
	if (rc != 1) {
		print_message("rc %d: %s\n", rc, mb_imap_parser_error(p));
		fail();
	}
	assert_int_equal(used, strlen(s));
	return mb_imap_parser_resp(p);
}

static void test_shapes(void **state)
{
	(void)state;
	struct mb_imap_parser *p = mk();
	const struct mb_imap_resp *r;
	uint64_t v;

	r = one(p, "a7 OK [APPENDUID 1733091234 42] Append completed.\r\n");
	assert_int_equal(r->kind, MB_IMAP_TAGGED);
	assert_string_equal(r->tag, "a7");
	assert_string_equal(r->name, "OK");
	assert_string_equal(r->code, "APPENDUID");
	assert_int_equal(mb_imap_node_u64(r->code_args, &v), 0);
	assert_int_equal(v, 1733091234u);
	assert_int_equal(mb_imap_node_u64(r->code_args->next, &v), 0);
	assert_int_equal(v, 42);
	assert_string_equal(r->text, "Append completed.");

	r = one(p, "* 12 EXISTS\r\n");
	assert_int_equal(r->kind, MB_IMAP_UNTAGGED);
	assert_true(r->has_number);
	assert_int_equal(r->number, 12);
	assert_string_equal(r->name, "EXISTS");

	r = one(p, "* capability IMAP4rev1 IDLE literal+\n"); /* bare LF, lower case */
	assert_string_equal(r->name, "CAPABILITY");
	assert_true(mb_imap_has_cap(r->args, "LITERAL+"));
	assert_true(mb_imap_has_cap(r->args, "IDLE"));
	assert_false(mb_imap_has_cap(r->args, "MOVE"));

	r = one(p, "* 1 FETCH (UID 9 RFC822.SIZE 44 BODY[] {5}\r\nab\r\nc FLAGS ())\r\n");
	assert_string_equal(r->name, "FETCH");
	assert_int_equal(r->args->type, MB_IMAP_LIST);
	const struct mb_imap_node *b = mb_imap_fetch_item(r->args, "BODY[]");
	assert_non_null(b);
	assert_int_equal(b->type, MB_IMAP_STRING);
	assert_int_equal(b->len, 5);
	assert_memory_equal(b->s, "ab\r\nc", 5);
	assert_int_equal(mb_imap_node_u64(mb_imap_fetch_item(r->args, "uid"), &v), 0);
	assert_int_equal(v, 9);
	const struct mb_imap_node *f = mb_imap_fetch_item(r->args, "FLAGS");
	assert_int_equal(f->type, MB_IMAP_LIST);
	assert_null(f->child);

	/* a literal with binary bytes, and the LITERAL+ form */
	char bin[64] = "* 2 FETCH (BODY[] {4+}\r\n";
	size_t bl = strlen(bin);
	memcpy(bin + bl, "\0\xff\n)", 4);
	memcpy(bin + bl + 4, ")\r\n", 3);
	size_t used;
	mb_imap_parser_reset(p);
	assert_int_equal(mb_imap_parser_feed(p, bin, bl + 7, &used), 1);
	r = mb_imap_parser_resp(p);
	b = mb_imap_fetch_item(r->args, "BODY[]");
	assert_int_equal(b->len, 4);
	assert_memory_equal(b->s, "\0\xff\n)", 4);

	r = one(p, "* LIST (\\HasNoChildren) \"/\" \"Sent \\\"Items\\\"\"\r\n");
	assert_string_equal(r->name, "LIST");
	assert_true(mb_imap_node_is(r->args->next, "/"));
	assert_int_equal(r->args->next->next->len, strlen("Sent \"Items\""));
	assert_memory_equal(r->args->next->next->s, "Sent \"Items\"", 12);

	r = one(p, "* STATUS INBOX (MESSAGES 3 HIGHESTMODSEQ 9)\r\n");
	assert_int_equal(mb_imap_node_u64(mb_imap_fetch_item(r->args->next, "MESSAGES"), &v), 0);
	assert_int_equal(v, 3);

	r = one(p, "+\r\n");
	assert_int_equal(r->kind, MB_IMAP_CONTINUE);
	assert_string_equal(r->text, "");
	r = one(p, "* SEARCH\r\n");
	assert_null(r->args);
	r = one(p, "* OK\r\n");
	assert_string_equal(r->text, "");
	r = one(p, "* 3 FETCH (X {0}\r\n {0}\r\n)\r\n");
	assert_int_equal(r->args->child->next->len, 0);
	assert_int_equal(r->args->child->next->next->len, 0);
	mb_imap_parser_destroy(p);
}

static void expect_error(const char *s, int code, const char *what)
{
	struct mb_imap_parser *p = mk();
	size_t used;
	int rc = mb_imap_parser_feed(p, s, strlen(s), &used);
	assert_int_equal(rc, code);
	assert_non_null(strstr(mb_imap_parser_error(p), what));
	/* sticky */
	assert_int_equal(mb_imap_parser_feed(p, "* OK\r\n", 6, &used), MB_EPROTO);
	mb_imap_parser_reset(p);
	assert_int_equal(mb_imap_parser_feed(p, "* OK\r\n", 6, &used), 1);
	mb_imap_parser_destroy(p);
}

static void test_garbage(void **state)
{
	(void)state;
	expect_error("\r\n", MB_EPROTO, "empty");
	expect_error(" OK x\r\n", MB_EPROTO, "tag");
	expect_error("a1\r\n", MB_EPROTO, "space after the tag");
	expect_error("a1 FETCH 1\r\n", MB_EPROTO, "not OK, NO or BAD");
	expect_error("* 1 FETCH (UID 1\r\n", MB_EPROTO, "missing ')'");
	expect_error("* 1 FETCH UID 1)\r\n", MB_EPROTO, "unbalanced");
	expect_error("* LIST () \"/ INBOX\r\n", MB_EPROTO, "unterminated quoted");
	expect_error("* LIST () \"\\x\" INBOX\r\n", MB_EPROTO, "bad escape");
	expect_error("* 1 FETCH (BODY[TEXT x)\r\n", MB_EPROTO, "unterminated '['");
	expect_error("* 99999999999999999999 EXISTS\r\n", MB_EPROTO, "number too large");
	expect_error("* 1 FETCH (BODY[] {99999999999999}\r\n", MB_ETOOBIG, "literal");
	expect_error("* 1 FETCH (A {x}\r\n", MB_EPROTO, "bad literal");
	expect_error("* OK [ALERT\r\n", MB_EPROTO, "missing ']'");
	char deep[400];
	memset(deep, '(', 200);
	strcpy(deep + 200, "\r\n");
	char full[420] = "* X ";
	strcat(full, deep);
	expect_error(full, MB_EPROTO, "nested deeper");
	expect_error("* X \x01\r\n", MB_EPROTO, "unexpected byte");

	/* line limit */
	struct mb_imap_limits lim = {.max_line = 100, .max_literal = 10};
	struct mb_imap_parser *p;
	assert_int_equal(mb_imap_parser_create(&lim, &p), 0);
	char big[300];
	memset(big, 'x', sizeof(big));
	size_t used;
	assert_int_equal(mb_imap_parser_feed(p, big, sizeof(big), &used), MB_ETOOBIG);
	assert_non_null(strstr(mb_imap_parser_error(p), "line over"));
	mb_imap_parser_reset(p);
	assert_int_equal(mb_imap_parser_feed(p, "* 1 FETCH (BODY[] {11}\r\n", 24, &used),
			 MB_ETOOBIG);
	mb_imap_parser_destroy(p);

	/* random garbage: never a crash, always a result */
	struct mb_imap_parser *q = mk();
	uint64_t s = 12345;
	char junk[512];
	for (int round = 0; round < 2000; round++) {
		size_t n = 1 + (size_t)(round % 511);
		for (size_t i = 0; i < n; i++) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			static const char al[] = "* (){}[]\"\\ 0123456789aOKNIL\r\n+";
			junk[i] =
			    (s >> 60) & 1 ? al[(s >> 33) % (sizeof(al) - 1)] : (char)(s >> 40);
		}
		size_t off = 0;
		while (off < n) {
			int rc = mb_imap_parser_feed(q, junk + off, n - off, &used);
			off += used;
			if (rc < 0) {
				assert_true(strlen(mb_imap_parser_error(q)) > 0);
				mb_imap_parser_reset(q);
				break;
			}
			if (rc == 0)
				break;
		}
	}
	mb_imap_parser_destroy(q);
}

/* mb_imap_frame: the same response boundaries as the parser, with the
 * buffer growing one byte at a time. */
static void test_frame(void **state)
{
	(void)state;
	size_t len = sizeof(transcript) - 1, off = 0, scan = 0;
	struct mb_imap_parser *p = mk();
	int n = 0;
	while (off < len) {
		long fl = 0;
		for (size_t have = 1; off + have <= len; have++) {
			fl = mb_imap_frame(transcript + off, have, &scan);
			assert_true(fl >= 0);
			if (fl > 0)
				break;
		}
		assert_true(fl > 0);
		size_t used;
		assert_int_equal(mb_imap_parser_feed(p, transcript + off, (size_t)fl, &used), 1);
		assert_int_equal(used, (size_t)fl);
		off += (size_t)fl;
		n++;
	}
	assert_int_equal(n, 17);
	scan = 0;
	char big[70000];
	memset(big, 'x', sizeof(big));
	assert_int_equal(mb_imap_frame(big, sizeof(big), &scan), MB_ETOOBIG);
	mb_imap_parser_destroy(p);
}

static void test_astring(void **state)
{
	(void)state;
	char buf[64];
	size_t pos = 0;
	assert_int_equal(mb_imap_put_astring(NULL, 0, &pos, "INBOX", 5), 5);
	mb_imap_put_astring(buf, sizeof(buf), &pos, "INBOX", 5);
	buf[pos++] = ' ';
	mb_imap_put_astring(buf, sizeof(buf), &pos, "Sent Items", 10);
	buf[pos++] = ' ';
	mb_imap_put_astring(buf, sizeof(buf), &pos, "a\"b", 3);
	buf[pos++] = ' ';
	mb_imap_put_astring(buf, sizeof(buf), &pos, "", 0);
	buf[pos++] = ' ';
	mb_imap_put_astring(buf, sizeof(buf), &pos, "\xc3\xa9", 2);
	buf[pos] = 0;
	assert_string_equal(buf, "INBOX \"Sent Items\" \"a\\\"b\" \"\" {2+}\r\n\xc3\xa9");
	/* too small: nothing written */
	pos = 60;
	assert_int_equal(mb_imap_put_astring(buf, sizeof(buf), &pos, "ABCDEFGH", 8), 8);
	assert_int_equal(pos, 60);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_transcript_splits), cmocka_unit_test(test_shapes),
	    cmocka_unit_test(test_garbage),	      cmocka_unit_test(test_frame),
	    cmocka_unit_test(test_astring),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
