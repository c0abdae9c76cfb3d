/* test_attach.c: attachments as objects of their own and the address book,
 * end to end against a real store (a thread, real databases): a message
 * sent with two attachments (CreateAttachment, SetProperties,
 * SaveChangesAttachment) reaches its recipient with them; the recipient
 * reads the attachment table, opens an attachment and streams its bytes
 * (OpenStream, ReadStream in pieces) and the body; PR_MESSAGE_SIZE counts
 * them; a copy carries them, a hard delete removes them; the initialised
 * mailboxes hold messages of the scenario's mix with attachments; names
 * resolve against the global address list (users, lists, unknown) and
 * the address-book table pages through all of it; RegisterNotification
 * checks its folder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/content.h"
#include "storetest.h"
#include "tests/opbatch.h"

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

/* Read a whole stream of object handle obj / tag in pieces of step bytes. */
static size_t read_stream(struct mb_client *c, uint32_t obj, uint32_t tag, uint8_t *out, size_t cap,
			  uint32_t step)
{
	struct mb_op o = opbatch_op(MB_OP_OPEN_STREAM);
	struct mb_op_reply r;
	memset(&r, 0, sizeof(r));
	o.u.open_stream.obj = obj;
	o.u.open_stream.tag = tag;
	o.u.open_stream.handle = 50;
	assert_int_equal(storetest_one(c, &o, &r), 0);
	uint32_t size = r.u.table.rows;
	size_t got = 0;
	for (;;) {
		o = opbatch_op(MB_OP_READ_STREAM);
		o.u.read_stream.handle = 50;
		o.u.read_stream.max = step;
		assert_int_equal(storetest_one(c, &o, &r), 0);
		if (r.u.stream.data.len == 0)
			break;
		assert_true(r.u.stream.data.len <= step);
		assert_true(got + r.u.stream.data.len <= cap);
		memcpy(out + got, r.u.stream.data.p, r.u.stream.data.len);
		got += r.u.stream.data.len;
	}
	assert_int_equal(got, size);
	return got;
}

static void test_send_with_attachments(void **state)
{
	(void)state;
	struct mb_client *a = storetest_client(&T, 0, MB_LOGON_F_LZ77);
	assert_non_null(a);
	static uint8_t doc[20000], img[7000];
	mb_content_fill_kind(MB_CK_OFFICE, 1, (char *)doc, sizeof(doc));
	mb_content_fill_kind(MB_CK_IMAGE, 2, (char *)img, sizeof(img));
	struct mb_bytes to[1] = {mb_str(mb_topology_user(T.topo, 1)->name)};
	struct mb_prop mp[3], ap[2][3];
	opbatch_mail_props(mp, "with attachments", "see the attached files", to, 1);
	ap[0][0] = mb_prop_str(MB_PR_ATTACH_FILENAME, "budget.doc");
	ap[0][1] = mb_prop_bytes(MB_PR_ATTACH_DATA_BIN, doc, sizeof(doc));
	ap[0][2] = mb_prop_i64(MB_PR_ATTACH_KIND, MB_CK_OFFICE);
	ap[1][0] = mb_prop_str(MB_PR_ATTACH_FILENAME, "photo.jpg");
	ap[1][1] = mb_prop_bytes(MB_PR_ATTACH_DATA_BIN, img, sizeof(img));
	ap[1][2] = mb_prop_i64(MB_PR_ATTACH_KIND, MB_CK_IMAGE);
	/* create, set, two attachments (create, set, save each), submit */
	struct mb_op ops[9];
	memset(ops, 0, sizeof(ops));
	opbatch_compose_attached(ops, MB_FID(mb_client_mailbox(a), MB_FID_SENT), 7, mp, 3,
				 MB_OP_SUBMIT, 8, &ap[0][0], 3, 2);
	struct mb_reply rep;
	assert_int_equal(mb_client_call(a, ops, 9, &rep), 0);
	for (int i = 0; i < 9; i++)
		assert_int_equal(rep.ops[i].status, 0);
	assert_int_equal(rep.ops[2].u.table.rows, 1); /* attachment numbers */
	assert_int_equal(rep.ops[5].u.table.rows, 2);
	assert_int_equal(rep.ops[8].u.submit.n, 1);
	uint64_t mid = rep.ops[8].u.submit.dl[0].mid;
	uint32_t mbx = rep.ops[8].u.submit.dl[0].mailbox;

	/* the recipient: open, size, attachment table, open one, stream it */
	struct mb_client *b = storetest_client(&T, 1, 0);
	assert_non_null(b);
	uint64_t inbox = MB_FID(mbx, MB_FID_INBOX);
	uint32_t tags[2] = {MB_PR_MESSAGE_SIZE, MB_PR_HASATTACH};
	memset(ops, 0, sizeof(ops));
	opbatch_read(ops, inbox, mid, 1, tags, 2);
	ops[2] = opbatch_op(MB_OP_GET_ATTACH_TABLE);
	ops[2].u.attach.msg = 1;
	ops[2].u.attach.handle = 2;
	ops[3] = opbatch_op(MB_OP_QUERY_ROWS);
	ops[3].u.query_rows.handle = 2;
	ops[3].u.query_rows.max_rows = 10;
	ops[4] = opbatch_op(MB_OP_OPEN_ATTACH);
	ops[4].u.attach.msg = 1;
	ops[4].u.attach.num = 1;
	ops[4].u.attach.handle = 3;
	assert_int_equal(mb_client_call(b, ops, 5, &rep), 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(rep.ops[i].status, 0);
	const struct mb_prop *size =
	    mb_props_find(rep.ops[1].u.props.props, rep.ops[1].u.props.n, MB_PR_MESSAGE_SIZE);
	const struct mb_prop *has =
	    mb_props_find(rep.ops[1].u.props.props, rep.ops[1].u.props.n, MB_PR_HASATTACH);
	assert_true(size->v.i > (int64_t)(sizeof(doc) + sizeof(img)));
	assert_int_equal(has->v.i, 1);
	assert_int_equal(rep.ops[2].u.table.rows, 2);
	assert_int_equal(rep.ops[3].u.rows.nrows, 2);
	assert_int_equal(rep.ops[3].u.rows.more, 0);
	const struct mb_prop *row = rep.ops[3].u.rows.vals;
	uint16_t nc = rep.ops[3].u.rows.ncols;
	assert_int_equal(row[0].v.i, 1);
	assert_true(mb_bytes_eq_str(row[1].v.b, "budget.doc"));
	assert_int_equal(row[2].v.i, sizeof(doc));
	assert_int_equal(row[3].v.i, MB_CK_OFFICE);
	assert_true(mb_bytes_eq_str(row[nc + 1].v.b, "photo.jpg"));
	const struct mb_prop *an =
	    mb_props_find(rep.ops[4].u.props.props, rep.ops[4].u.props.n, MB_PR_ATTACH_SIZE);
	assert_int_equal(an->v.i, sizeof(doc));
	static uint8_t got[32768];
	assert_int_equal(read_stream(b, 3, MB_PR_ATTACH_DATA_BIN, got, sizeof(got), 4096),
			 sizeof(doc));
	assert_memory_equal(got, doc, sizeof(doc));
	/* the body as a stream too */
	size_t bl = read_stream(b, 1, MB_PR_BODY, got, sizeof(got), 5);
	assert_int_equal(bl, strlen("see the attached files"));
	assert_memory_equal(got, "see the attached files", bl);
	/* a stream of a property that has none is refused */
	struct mb_op o = opbatch_op(MB_OP_OPEN_STREAM);
	struct mb_op_reply r;
	memset(&r, 0, sizeof(r));
	o.u.open_stream.obj = 1;
	o.u.open_stream.tag = MB_PR_ATTACH_DATA_BIN;
	o.u.open_stream.handle = 51;
	assert_int_equal(storetest_one(b, &o, &r), MB_EINVAL);
	/* attachment 3 does not exist */
	o = opbatch_op(MB_OP_OPEN_ATTACH);
	o.u.attach.msg = 1;
	o.u.attach.num = 3;
	o.u.attach.handle = 4;
	assert_int_equal(storetest_one(b, &o, &r), MB_ENOTFOUND);

	/* a copy carries the attachments; a hard delete removes them */
	uint64_t copy_mid = 0;
	o = opbatch_op(MB_OP_MOVE_COPY);
	o.u.move_copy.src_fid = inbox;
	o.u.move_copy.dst_fid = MB_FID(mbx, MB_FID_DELETED);
	o.u.move_copy.flags = MB_MC_F_COPY;
	o.u.move_copy.n = 1;
	o.u.move_copy.mids = &mid;
	assert_int_equal(storetest_one(b, &o, &r), 0);
	copy_mid = r.u.moved.mids[0];
	o = opbatch_op(MB_OP_DELETE_MESSAGES);
	o.u.del.fid = inbox;
	o.u.del.n = 1;
	o.u.del.mids = &mid;
	assert_int_equal(storetest_one(b, &o, &r), 0);
	assert_int_equal(r.u.count.n, 1);
	memset(ops, 0, sizeof(ops));
	opbatch_read(ops, MB_FID(mbx, MB_FID_DELETED), copy_mid, 9, tags, 2);
	ops[2] = opbatch_op(MB_OP_OPEN_ATTACH);
	ops[2].u.attach.msg = 9;
	ops[2].u.attach.num = 2;
	ops[2].u.attach.handle = 10;
	assert_int_equal(mb_client_call(b, ops, 3, &rep), 0);
	assert_int_equal(rep.ops[2].status, 0);
	assert_int_equal(read_stream(b, 10, MB_PR_ATTACH_DATA_BIN, got, sizeof(got), 100000),
			 sizeof(img));
	assert_memory_equal(got, img, sizeof(img));
	mb_client_destroy(a);
	mb_client_destroy(b);
}

/* The initialised mailboxes: messages of the mix, some with attachments. */
static void test_initialised_mix(void **state)
{
	(void)state;
	struct mb_client *c = storetest_client(&T, 2, 0);
	assert_non_null(c);
	uint64_t inbox = MB_FID(mb_client_mailbox(c), MB_FID_INBOX);
	uint32_t cols[3] = {MB_PR_MID, MB_PR_MESSAGE_SIZE, MB_PR_HASATTACH};
	struct mb_op ops[4];
	memset(ops, 0, sizeof(ops));
	opbatch_browse(ops, inbox, 1, cols, 3, MB_QR_F_RESTART, 100);
	struct mb_reply rep;
	assert_int_equal(mb_client_call(c, ops, 4, &rep), 0);
	assert_int_equal(rep.ops[3].status, 0);
	uint32_t n = rep.ops[3].u.rows.nrows;
	assert_true(n > 0);
	int with = 0;
	for (uint32_t i = 0; i < n; i++)
		with += rep.ops[3].u.rows.vals[i * 3 + 2].v.i != 0;
	print_message("%u inbox messages, %d with attachments\n", n, with);
	mb_client_destroy(c);
	/* over all 12 mailboxes' inboxes, the mix's 35% with attachments show */
	int total = 0, twith = 0;
	for (int u = 0; u < 12; u++) {
		c = storetest_client(&T, u, 0);
		assert_non_null(c);
		memset(ops, 0, sizeof(ops));
		opbatch_browse(ops, MB_FID(mb_client_mailbox(c), MB_FID_INBOX), 1, cols, 3,
			       MB_QR_F_RESTART, 100);
		assert_int_equal(mb_client_call(c, ops, 4, &rep), 0);
		for (uint32_t i = 0; i < rep.ops[3].u.rows.nrows; i++) {
			total++;
			twith += rep.ops[3].u.rows.vals[i * 3 + 2].v.i != 0;
		}
		mb_client_destroy(c);
	}
	print_message("%d inbox messages, %d with attachments\n", total, twith);
	assert_true(twith > 0 && twith < total);
}

static void test_address_book(void **state)
{
	(void)state;
	struct mb_client *c = storetest_client(&T, 0, 0);
	assert_non_null(c);
	const char *list = mb_topology_list(T.topo, 0)->name;
	struct mb_bytes names[3] = {mb_str(mb_topology_user(T.topo, 5)->name), mb_str(list),
				    mb_str("nobody")};
	struct mb_op o = opbatch_op(MB_OP_RESOLVE_NAMES);
	struct mb_op_reply r;
	memset(&r, 0, sizeof(r));
	o.u.resolve.n = 3;
	o.u.resolve.names = names;
	assert_int_equal(storetest_one(c, &o, &r), 0);
	assert_int_equal(r.u.resolve.n, 3);
	assert_int_equal(r.u.resolve.v[0].status, 0);
	assert_int_equal(r.u.resolve.v[0].type, MB_OBJECT_USER);
	assert_true(mb_bytes_eq_str(r.u.resolve.v[0].name, mb_topology_user(T.topo, 5)->name));
	assert_int_equal(r.u.resolve.v[1].type, MB_OBJECT_LIST);
	assert_int_equal(r.u.resolve.v[2].status, MB_ENOTFOUND);
	/* the whole global address list, in pages of 5 */
	o = opbatch_op(MB_OP_GET_AB_TABLE);
	o.u.ab_table.handle = 4;
	assert_int_equal(storetest_one(c, &o, &r), 0);
	uint32_t total = r.u.table.rows;
	assert_int_equal(
	    total, (uint32_t)(mb_topology_user_count(T.topo) + mb_topology_list_count(T.topo)));
	uint32_t seen = 0, lists = 0;
	for (;;) {
		o = opbatch_op(MB_OP_QUERY_ROWS);
		o.u.query_rows.handle = 4;
		o.u.query_rows.max_rows = 5;
		assert_int_equal(storetest_one(c, &o, &r), 0);
		for (uint32_t i = 0; i < r.u.rows.nrows; i++)
			lists += r.u.rows.vals[i * r.u.rows.ncols + 2].v.i == MB_OBJECT_LIST;
		seen += r.u.rows.nrows;
		if (!r.u.rows.more)
			break;
	}
	assert_int_equal(seen, total);
	assert_int_equal(lists, (uint32_t)mb_topology_list_count(T.topo));
	/* notifications: an own folder is accepted, another mailbox's refused */
	o = opbatch_op(MB_OP_REGISTER_NOTIFY);
	o.u.get_table.fid = MB_FID(mb_client_mailbox(c), MB_FID_INBOX);
	o.u.get_table.handle = 6;
	assert_int_equal(storetest_one(c, &o, &r), 0);
	o.u.get_table.fid = MB_FID(mb_client_mailbox(c) + 1, MB_FID_INBOX);
	assert_int_equal(storetest_one(c, &o, &r), MB_EACCES);
	/* attachments only on drafts */
	o = opbatch_op(MB_OP_CREATE_ATTACH);
	o.u.attach.msg = 4;
	o.u.attach.handle = 7;
	assert_int_equal(storetest_one(c, &o, &r), MB_ESTATE);
	mb_client_destroy(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_send_with_attachments),
	    cmocka_unit_test(test_initialised_mix),
	    cmocka_unit_test(test_address_book),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
