/* test_held.c: the bytes a logged-on session's handles hold (drafts'
 * property values, open streams; src/store/handles.c, "held bytes"),
 * against a real store in a thread started with small limits: 1 MiB per
 * session and 2 MiB across the store.  A property value that would take a
 * session past its limit is refused with MB_EFULL and the draft keeps what
 * it had; so is a stream that would; releasing a handle gives its bytes
 * back; the store's limit holds across sessions, and a session that goes
 * away gives its bytes back to the others.  Before these limits one client
 * could make the store hold 64 handles x 64 properties x 4 MiB.  Also:
 * empty values are not free (each costs its entry); a tag given several
 * times in one SetProperties counts its last value once and what it
 * replaces once; SetProperties past 64 properties changes nothing; and
 * GetProperties of a draft followed by its Release in one request
 * answers with the values (a copy, not the freed bytes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "storetest.h"
#include "tests/opbatch.h"

static struct storetest T;
static uint8_t value[600 << 10]; /* 600 KiB: one fits a session, two do not */

static int setup(void **state)
{
	(void)state;
	memset(value, 'v', sizeof(value));
	return storetest_start_with(&T, 6, 0, 1, 2);
}

static int teardown(void **state)
{
	(void)state;
	storetest_stop(&T);
	return 0;
}

/* A draft in Sent Items under handle h. */
static void draft(struct mb_client *c, uint32_t h)
{
	struct mb_op o = opbatch_op(MB_OP_CREATE_MESSAGE);
	struct mb_op_reply r;
	o.u.create_message.fid = MB_FID(mb_client_mailbox(c), MB_FID_SENT);
	o.u.create_message.handle = h;
	assert_int_equal(storetest_one(c, &o, &r), 0);
}

/* SetProperties of props[0..n) on handle h; the op's status. */
static int set_props(struct mb_client *c, uint32_t h, struct mb_prop *props, uint16_t n)
{
	struct mb_op o = opbatch_op(MB_OP_SET_PROPS);
	struct mb_op_reply r;
	o.u.set_props.handle = h;
	o.u.set_props.n = n;
	o.u.set_props.props = props;
	return storetest_one(c, &o, &r);
}

static struct mb_prop binary(uint32_t tag, size_t len)
{
	struct mb_prop p;
	memset(&p, 0, sizeof(p));
	p.tag = tag;
	p.v.b.p = value;
	p.v.b.len = (uint32_t)len;
	return p;
}

/* SetProperties: tag = value[0..len) on handle h; the op's status. */
static int set_value(struct mb_client *c, uint32_t h, uint32_t tag, size_t len)
{
	struct mb_prop p = binary(tag, len);
	return set_props(c, h, &p, 1);
}

static int release(struct mb_client *c, uint32_t h)
{
	struct mb_op o = opbatch_release(h);
	struct mb_op_reply r;
	return storetest_one(c, &o, &r);
}

#define TAG(i) MB_PTAG(0x8000 + (i), MB_PT_BINARY)

static void test_session_limit(void **state)
{
	(void)state;
	struct mb_client *c = storetest_client(&T, 0, 0);
	assert_non_null(c);
	draft(c, 1);
	assert_int_equal(set_value(c, 1, TAG(1), sizeof(value)), 0);
	/* a second value would hold 1.2 MiB: refused, nothing changed */
	assert_int_equal(set_value(c, 1, TAG(2), sizeof(value)), MB_EFULL);
	uint32_t tags[2] = {TAG(1), TAG(2)};
	struct mb_op o = opbatch_get_props(1, tags, 2);
	struct mb_reply rep;
	assert_int_equal(mb_client_call(c, &o, 1, &rep), 0);
	assert_int_equal(rep.ops[0].status, 0);
	assert_int_equal(rep.ops[0].u.props.n, 2);
	assert_int_equal(rep.ops[0].u.props.props[0].v.b.len, sizeof(value));
	assert_int_equal(MB_PTAG_TYPE(rep.ops[0].u.props.props[1].tag), MB_PT_ERROR);
	/* a smaller one still fits; replacing a value does not count it twice */
	assert_int_equal(set_value(c, 1, TAG(3), 300 << 10), 0);
	assert_int_equal(set_value(c, 1, TAG(1), sizeof(value)), 0);
	/* the connection is still good, and a release gives the bytes back */
	assert_int_equal(release(c, 1), 0);
	draft(c, 2);
	assert_int_equal(set_value(c, 2, MB_PR_BODY, sizeof(value)), 0);

	/* a stream counts: save the 600 KiB body, open it twice */
	o = opbatch_op(MB_OP_SAVE_CHANGES);
	o.u.save.handle = 2;
	assert_int_equal(mb_client_call(c, &o, 1, &rep), 0);
	assert_int_equal(rep.ops[0].status, 0);
	uint64_t mid = rep.ops[0].u.saved.mid;
	assert_int_equal(release(c, 2), 0);
	o = opbatch_op(MB_OP_OPEN_MESSAGE);
	o.u.open_message.fid = MB_FID(mb_client_mailbox(c), MB_FID_SENT);
	o.u.open_message.mid = mid;
	o.u.open_message.handle = 3;
	struct mb_op_reply r;
	assert_int_equal(storetest_one(c, &o, &r), 0);
	for (uint32_t h = 4; h <= 5; h++) {
		o = opbatch_op(MB_OP_OPEN_STREAM);
		o.u.open_stream.obj = 3;
		o.u.open_stream.tag = MB_PR_BODY;
		o.u.open_stream.handle = h;
		assert_int_equal(storetest_one(c, &o, &r), h == 4 ? 0 : MB_EFULL);
	}
	assert_int_equal(release(c, 4), 0);
	assert_int_equal(storetest_one(c, &o, &r), 0);
	/* give back what is held now (a closed connection gives it back too,
	 * but later: test_store_limit counts on the store's sum) */
	assert_int_equal(release(c, 5), 0);
	mb_client_destroy(c);
}

static void test_small_values_count(void **state)
{
	(void)state;
	struct mb_client *c = storetest_client(&T, 5, 0);
	assert_non_null(c);
	/* lists of 64 empty strings: nothing but entries, yet they count */
	struct mb_bytes empty[64];
	memset(empty, 0, sizeof(empty));
	struct mb_prop lists[60];
	memset(lists, 0, sizeof(lists));
	for (int i = 0; i < 60; i++) {
		lists[i].tag = MB_PTAG(0x9000 + i, MB_PT_MV_STRING);
		lists[i].v.mv.n = 64;
		lists[i].v.mv.v = empty;
	}
	int rc = 0;
	uint32_t h;
	for (h = 1; h <= 40 && rc == 0; h++) {
		draft(c, h);
		rc = set_props(c, h, lists, 60);
	}
	assert_int_equal(rc, MB_EFULL); /* before the handles run out (64) */
	for (uint32_t k = 1; k < h; k++)
		assert_int_equal(release(c, k), 0);

	/* a tag given three times: its last value counts once, what it
	 * replaces once (300 KiB held, 1.2 MiB after: refused, nothing set) */
	draft(c, 1);
	assert_int_equal(set_value(c, 1, TAG(5), 300 << 10), 0);
	struct mb_prop dup[4] = {binary(TAG(5), 0), binary(TAG(5), 0),
				 binary(TAG(5), sizeof(value)), binary(TAG(6), sizeof(value))};
	assert_int_equal(set_props(c, 1, dup, 4), MB_EFULL);
	uint32_t tags[2] = {TAG(5), TAG(6)};
	struct mb_op o = opbatch_get_props(1, tags, 2);
	struct mb_reply rep;
	assert_int_equal(mb_client_call(c, &o, 1, &rep), 0);
	assert_int_equal(rep.ops[0].u.props.props[0].v.b.len, 300 << 10);
	assert_int_equal(MB_PTAG_TYPE(rep.ops[0].u.props.props[1].tag), MB_PT_ERROR);

	/* past 64 properties: refused before any is set */
	struct mb_prop many[70];
	for (int i = 0; i < 70; i++)
		many[i] = binary(MB_PTAG(0xA000 + i, MB_PT_BINARY), 1);
	assert_int_equal(set_props(c, 1, many, 60), 0);
	assert_int_equal(set_props(c, 1, many + 60, 10), MB_EFULL);
	uint32_t first_new = many[60].tag;
	o.u.get_props.n = 1;
	o.u.get_props.tags = &first_new;
	assert_int_equal(mb_client_call(c, &o, 1, &rep), 0);
	assert_int_equal(MB_PTAG_TYPE(rep.ops[0].u.props.props[0].tag), MB_PT_ERROR);

	/* GetProperties, then Release, in one request: the values arrive */
	struct mb_op two[2] = {opbatch_op(MB_OP_GET_PROPS), opbatch_op(MB_OP_RELEASE)};
	two[0].u.get_props.handle = 1;
	two[0].u.get_props.n = 1;
	two[0].u.get_props.tags = tags;
	two[1].u.release.handle = 1;
	assert_int_equal(mb_client_call(c, two, 2, &rep), 0);
	assert_int_equal(rep.ops[0].status, 0);
	assert_int_equal(rep.ops[1].status, 0);
	assert_int_equal(rep.ops[0].u.props.props[0].v.b.len, 300 << 10);
	assert_memory_equal(rep.ops[0].u.props.props[0].v.b.p, value, 300 << 10);
	mb_client_destroy(c);
}

static void test_store_limit(void **state)
{
	(void)state;
	struct mb_client *c[4];
	for (int i = 0; i < 4; i++) {
		c[i] = storetest_client(&T, 1 + i, 0);
		assert_non_null(c[i]);
		draft(c[i], 1);
	}
	/* 600 KiB each: the fourth would take the store past 2 MiB */
	for (int i = 0; i < 3; i++)
		assert_int_equal(set_value(c[i], 1, TAG(1), sizeof(value)), 0);
	assert_int_equal(set_value(c[3], 1, TAG(1), sizeof(value)), MB_EFULL);
	/* a session that goes away gives its bytes back (once the store has
	 * seen the connection close) */
	mb_client_destroy(c[0]);
	int rc = MB_EFULL;
	for (int i = 0; i < 100 && rc == MB_EFULL; i++) {
		rc = set_value(c[3], 1, TAG(1), sizeof(value));
		if (rc == MB_EFULL)
			usleep(20000);
	}
	assert_int_equal(rc, 0);
	for (int i = 1; i < 4; i++)
		mb_client_destroy(c[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_session_limit),
	    cmocka_unit_test(test_small_values_count),
	    cmocka_unit_test(test_store_limit),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
