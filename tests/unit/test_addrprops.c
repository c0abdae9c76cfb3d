/* test_addrprops.c: the address properties of a received message
 * (src/store/addrprops.c): the Address Book EntryID's layout ([MS-OXCDATA]
 * 2.2.5.2), the search key (address type, colon, the DN upper-cased), the
 * FlatEntryList of the reply recipients (2.3.3, padded to 4 bytes), and
 * the two groups of properties with their tags and values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "store/addrprops.h"

static const struct mb_prop *find(const struct mb_prop *p, int n, uint32_t tag)
{
	const struct mb_prop *q = mb_props_find(p, (uint16_t)n, tag);
	assert_non_null(q);
	return q;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void test_ids(void **state)
{
	(void)state;
	static const char dn[] = "/o=mailbench/ou=First Administrative Group/cn=Recipients/cn=ann";
	static const uint8_t uid[16] = {0xDC, 0xA7, 0x40, 0xC8, 0xC0, 0x42, 0x10, 0x1A,
					0xB4, 0xB9, 0x08, 0x00, 0x2B, 0x2F, 0xE1, 0x82};
	struct mb_addr a;
	mb_addr_build(&a, "ann");
	assert_string_equal(a.name, "ann");
	/* flags 0, the provider, version 1, type 0, the DN with its NUL */
	assert_int_equal(a.entryid_len, 28 + sizeof(dn));
	assert_int_equal(get32(a.entryid), 0);
	assert_memory_equal(a.entryid + 4, uid, 16);
	assert_int_equal(get32(a.entryid + 20), 1);
	assert_int_equal(get32(a.entryid + 24), 0);
	assert_memory_equal(a.entryid + 28, dn, sizeof(dn));
	/* EX: and the DN upper-cased, NUL-terminated */
	const char *key = "EX:/O=MAILBENCH/OU=FIRST ADMINISTRATIVE GROUP/CN=RECIPIENTS/CN=ANN";
	assert_int_equal(a.search_key_len, strlen(key) + 1);
	assert_memory_equal(a.search_key, key, strlen(key) + 1);
	/* one FlatEntry: count 1, size, the entry's size, the id, padding */
	uint32_t padded = (a.entryid_len + 3) & ~3u;
	assert_int_equal(get32(a.entries), 1);
	assert_int_equal(get32(a.entries + 4), 4 + padded);
	assert_int_equal(get32(a.entries + 8), a.entryid_len);
	assert_memory_equal(a.entries + 12, a.entryid, a.entryid_len);
	assert_int_equal(a.entries_len, 8 + 4 + padded);
	for (uint32_t i = 12 + a.entryid_len; i < a.entries_len; i++)
		assert_int_equal(a.entries[i], 0);
}

static void test_groups(void **state)
{
	(void)state;
	struct mb_addr from, to;
	struct mb_prop p[MB_ADDR_SENDER_PROPS + MB_ADDR_RECIPIENT_PROPS];
	mb_addr_build(&from, "bob");
	mb_addr_build(&to, "cy");
	int n = mb_addr_sender_props(&from, 12345, p);
	assert_int_equal(n, MB_ADDR_SENDER_PROPS);
	const struct mb_prop *q = find(p, n, MB_PR_SENDER_ENTRYID);
	assert_int_equal(q->v.b.len, from.entryid_len);
	assert_memory_equal(q->v.b.p, from.entryid, from.entryid_len);
	q = find(p, n, MB_PR_SENDER_SEARCH_KEY);
	assert_memory_equal(q->v.b.p, from.search_key, from.search_key_len);
	assert_true(mb_bytes_eq_str(find(p, n, MB_PR_SENT_REPRESENTING_NAME)->v.b, "bob"));
	assert_int_equal(find(p, n, MB_PR_SENT_REPRESENTING_ENTRYID)->v.b.len, from.entryid_len);
	assert_true(mb_bytes_eq_str(find(p, n, MB_PR_REPLY_RECIPIENT_NAMES)->v.b, "bob"));
	assert_int_equal(find(p, n, MB_PR_REPLY_RECIPIENT_ENTRIES)->v.b.len, from.entries_len);
	assert_int_equal(find(p, n, MB_PR_CLIENT_SUBMIT_TIME)->v.i, 12345);
	n = mb_addr_recipient_props(&to, false, p);
	assert_int_equal(n, MB_ADDR_RECIPIENT_PROPS);
	assert_true(mb_bytes_eq_str(find(p, n, MB_PR_RECEIVED_BY_NAME)->v.b, "cy"));
	q = find(p, n, MB_PR_RECEIVED_BY_ENTRYID);
	assert_memory_equal(q->v.b.p, to.entryid, to.entryid_len);
	assert_true(mb_bytes_eq_str(find(p, n, MB_PR_RCVD_REPRESENTING_NAME)->v.b, "cy"));
	assert_int_equal(find(p, n, MB_PR_RCVD_REPRESENTING_SEARCH_KEY)->v.b.len,
			 to.search_key_len);
	assert_int_equal(find(p, n, MB_PR_MESSAGE_TO_ME)->v.i, 0);
	assert_int_equal(find(p, n, MB_PR_MESSAGE_RECIP_ME)->v.i, 0);
	n = mb_addr_recipient_props(&to, true, p);
	assert_int_equal(find(p, n, MB_PR_MESSAGE_TO_ME)->v.i, 1);
	assert_int_equal(find(p, n, MB_PR_MESSAGE_RECIP_ME)->v.i, 1);
	assert_int_equal(find(p, n, MB_PR_MESSAGE_CC_ME)->v.i, 0);
}

/* A name longer than a wire name is cut to MB_PROTO_MAX_NAME, and the ids
 * built from it stay within their buffers. */
static void test_long_name(void **state)
{
	(void)state;
	char longname[MB_PROTO_MAX_NAME + 40];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	struct mb_addr a;
	mb_addr_build(&a, longname);
	assert_int_equal(strlen(a.name), MB_PROTO_MAX_NAME);
	assert_true(a.entryid_len <= sizeof(a.entryid));
	assert_int_equal(a.entryid[a.entryid_len - 1], 0);
	assert_true(a.search_key_len <= sizeof(a.search_key));
	assert_true(a.entries_len <= sizeof(a.entries));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ids),
	    cmocka_unit_test(test_groups),
	    cmocka_unit_test(test_long_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
