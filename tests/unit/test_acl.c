/* test_acl.c: access control of the store, against a real store in a
 * thread: a session reads, writes and deletes only in its own mailbox
 * (every folder-addressed op on another mailbox is MB_EACCES and changes
 * nothing), opens only its own mailbox at logon, may read others'
 * free/busy; wrong passwords, unknown users and logons without a challenge
 * are refused (MB_EAUTH) after the configured delay; nothing but logon
 * works before logon. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <time.h>

#include "core/sampler.h"
#include "storetest.h"

static struct storetest T;

static int setup(void **state)
{
	(void)state;
	return storetest_start(&T, 12);
}

static int teardown(void **state)
{
	(void)state;
	storetest_stop(&T);
	return 0;
}

static void test_cross_mailbox_denied(void **state)
{
	(void)state;
	struct mb_client *a = storetest_client(&T, 0, 0);
	struct mb_client *b = storetest_client(&T, 1, 0);
	assert_non_null(a);
	assert_non_null(b);
	uint32_t ma = mb_client_mailbox(a);
	uint64_t inbox_a = MB_FID(ma, MB_FID_INBOX);
	struct mb_op op;
	struct mb_op_reply r;

	/* A's own view first */
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_OPEN_FOLDER;
	op.u.open_folder.fid = inbox_a;
	assert_int_equal(storetest_one(a, &op, &r), 0);
	uint32_t count = r.u.folder.count;
	assert_true(count > 0);
	uint64_t mid = 1; /* init's first item is in the Inbox */

	/* reads */
	assert_int_equal(storetest_one(b, &op, &r), MB_EACCES);
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_GET_CONTENTS_TABLE;
	op.u.get_table.fid = inbox_a;
	op.u.get_table.handle = 1;
	assert_int_equal(storetest_one(b, &op, &r), MB_EACCES);
	op.code = MB_OP_GET_HIERARCHY_TABLE;
	op.u.get_table.fid = MB_FID(ma, MB_FID_ROOT);
	assert_int_equal(storetest_one(b, &op, &r), MB_EACCES);
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_OPEN_MESSAGE;
	op.u.open_message.fid = inbox_a;
	op.u.open_message.mid = mid;
	op.u.open_message.handle = 2;
	assert_int_equal(storetest_one(b, &op, &r), MB_EACCES);
	/* B's handle 2 did not come into being: nothing to read through it */
	static uint32_t body[] = {MB_PR_BODY};
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_GET_PROPS;
	op.u.get_props.handle = 2;
	op.u.get_props.n = 1;
	op.u.get_props.tags = body;
	assert_int_equal(storetest_one(b, &op, &r), MB_ENOTFOUND);
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_SYNC_DOWNLOAD;
	op.u.sync_down.fid = inbox_a;
	op.u.sync_down.max = 10;
	assert_int_equal(storetest_one(b, &op, &r), MB_EACCES);

	/* writes */
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_CREATE_MESSAGE;
	op.u.create_message.fid = inbox_a;
	op.u.create_message.handle = 3;
	assert_int_equal(storetest_one(b, &op, &r), MB_EACCES);
	struct mb_sync_change ch;
	memset(&ch, 0, sizeof(ch));
	ch.kind = MB_SYNC_SET_FLAGS;
	ch.mid = mid;
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_SYNC_UPLOAD;
	op.u.sync_up.fid = inbox_a;
	op.u.sync_up.n = 1;
	op.u.sync_up.changes = &ch;
	assert_int_equal(storetest_one(b, &op, &r), MB_EACCES);
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_MOVE_COPY;
	op.u.move_copy.src_fid = inbox_a;
	op.u.move_copy.dst_fid = MB_FID(mb_client_mailbox(b), MB_FID_INBOX);
	op.u.move_copy.flags = MB_MC_F_COPY;
	op.u.move_copy.n = 1;
	op.u.move_copy.mids = &mid;
	assert_int_equal(storetest_one(b, &op, &r), MB_EACCES);
	/* moving into someone else's folder is refused as well */
	uint64_t bmid = 1;
	op.u.move_copy.src_fid = MB_FID(mb_client_mailbox(b), MB_FID_INBOX);
	op.u.move_copy.dst_fid = inbox_a;
	op.u.move_copy.mids = &bmid;
	assert_int_equal(storetest_one(b, &op, &r), MB_EACCES);

	/* deletes */
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_DELETE_MESSAGES;
	op.u.del.fid = inbox_a;
	op.u.del.n = 1;
	op.u.del.mids = &mid;
	assert_int_equal(storetest_one(b, &op, &r), MB_EACCES);

	/* nothing changed in A's mailbox */
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_OPEN_FOLDER;
	op.u.open_folder.fid = inbox_a;
	assert_int_equal(storetest_one(a, &op, &r), 0);
	assert_int_equal(r.u.folder.count, count);
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_OPEN_MESSAGE;
	op.u.open_message.fid = inbox_a;
	op.u.open_message.mid = mid;
	op.u.open_message.handle = 1;
	assert_int_equal(storetest_one(a, &op, &r), 0);

	/* free/busy of another user is readable */
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_FREEBUSY;
	op.u.freebusy.user = mb_str(mb_topology_user(T.topo, 0)->name);
	op.u.freebusy.start = INT64_MIN / 2;
	op.u.freebusy.end = INT64_MAX / 2;
	assert_int_equal(storetest_one(b, &op, &r), 0);
	assert_true(r.u.freebusy.n >= 1);
	mb_client_destroy(a);
	mb_client_destroy(b);
}

static void test_logon_refusals(void **state)
{
	(void)state;
	const struct mb_topo_user *u0 = mb_topology_user(T.topo, 0);
	const struct mb_topo_user *u1 = mb_topology_user(T.topo, 1);
	struct mb_client *c;
	assert_int_equal(mb_client_connect("127.0.0.1", T.port, 10000, &c), 0);

	/* nothing before logon */
	struct mb_op op;
	struct mb_op_reply r;
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_OPEN_FOLDER;
	op.u.open_folder.fid = MB_FID(u0->mailbox, MB_FID_INBOX);
	assert_int_equal(storetest_one(c, &op, &r), MB_ESTATE);

	/* wrong password: refused, after the delay (100 ms in these tests) */
	double t0 = mb_now_s();
	assert_int_equal(mb_client_logon(c, u0->name, "wrong password", 0, NULL), MB_EAUTH);
	assert_true(mb_now_s() - t0 >= 0.09);
	/* unknown user */
	assert_int_equal(mb_client_logon(c, "nobody", "x", 0, NULL), MB_EAUTH);
	/* a Logon without a fresh challenge (a replayed proof) */
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_LOGON;
	op.u.logon.user = mb_str(u0->name);
	assert_int_equal(storetest_one(c, &op, &r), MB_EAUTH);
	/* still not logged on */
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_OPEN_FOLDER;
	op.u.open_folder.fid = MB_FID(u0->mailbox, MB_FID_INBOX);
	assert_int_equal(storetest_one(c, &op, &r), MB_ESTATE);
	mb_client_destroy(c);

	/* right credentials but another user's mailbox: refused */
	assert_int_equal(mb_client_connect("127.0.0.1", T.port, 10000, &c), 0);
	struct mb_reply rep;
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_LOGON_CHALLENGE;
	op.u.challenge.user = mb_str(u1->name);
	assert_int_equal(mb_client_call(c, &op, 1, &rep), 0);
	uint8_t nonce[MB_NONCE_LEN];
	memcpy(nonce, rep.ops[0].u.challenge.nonce, MB_NONCE_LEN);
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_LOGON;
	op.u.logon.user = mb_str(u1->name);
	op.u.logon.mailbox = mb_str(u0->name);
	assert_int_equal(
	    mb_auth_proof(u1->key, nonce, u1->name, strlen(u1->name), op.u.logon.proof), 0);
	assert_int_equal(storetest_one(c, &op, &r), MB_EACCES);
	mb_client_destroy(c);

	/* and the right logon works, with the derived key alone */
	assert_int_equal(mb_client_connect("127.0.0.1", T.port, 10000, &c), 0);
	assert_int_equal(mb_client_logon_key(c, u1->name, u1->key, u1->salt, 0, NULL), 0);
	assert_int_equal(mb_client_mailbox(c), u1->mailbox);
	mb_client_destroy(c);
}

static void challenge_salt(const char *user, uint8_t salt[MB_SALT_LEN])
{
	struct mb_client *c;
	struct mb_op op;
	struct mb_reply rep;
	assert_int_equal(mb_client_connect("127.0.0.1", T.port, 10000, &c), 0);
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_LOGON_CHALLENGE;
	op.u.challenge.user = mb_str(user);
	assert_int_equal(mb_client_call(c, &op, 1, &rep), 0);
	assert_int_equal(rep.ops[0].status, 0);
	memcpy(salt, rep.ops[0].u.challenge.salt, MB_SALT_LEN);
	mb_client_destroy(c);
}

/* Unknown names get a stable salt that nobody without the data
 * directory's secret can compute: not the one a key written in the source
 * (the 0x6b bytes the store used to use) gives, and never a user's. */
static void test_unknown_user_salt(void **state)
{
	(void)state;
	uint8_t a[MB_SALT_LEN], b[MB_SALT_LEN], known[MB_SALT_LEN];
	challenge_salt("nobody-at-all", a);
	challenge_salt("nobody-at-all", b);
	assert_memory_equal(a, b, MB_SALT_LEN);
	challenge_salt("someone-else", b);
	assert_memory_not_equal(a, b, MB_SALT_LEN);
	uint8_t key[MB_KEY_LEN], proof[MB_PROOF_LEN], zero[MB_NONCE_LEN];
	memset(key, 0x6b, sizeof(key));
	memset(zero, 0, sizeof(zero));
	mb_auth_proof(key, zero, "nobody-at-all", strlen("nobody-at-all"), proof);
	assert_memory_not_equal(a, proof, MB_SALT_LEN);
	const struct mb_topo_user *u0 = mb_topology_user(T.topo, 0);
	challenge_salt(u0->name, known);
	assert_memory_equal(known, u0->salt, MB_SALT_LEN);
	assert_true(mb_topology_info(T.topo)->has_secret);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cross_mailbox_denied),
	    cmocka_unit_test(test_logon_refusals),
	    cmocka_unit_test(test_unknown_user_salt),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
