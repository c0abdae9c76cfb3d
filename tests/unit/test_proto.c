/* test_proto.c: unit tests of the wire codec (src/proto/proto.c).
 * Every op's request and reply is encoded, framed, checked, decoded and
 * compared field by field; malformed frames (bad magic, lengths, counts,
 * truncation at every byte, oversize, trailing bytes, corrupt compressed payloads) must be
 * refused with MB_EPROTO / MB_ETOOBIG / MB_EAGAIN and never crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "proto/proto.h"

static uint32_t tags3[] = {MB_PR_SUBJECT, MB_PR_BODY, MB_PR_MID};
static uint64_t mids3[] = {7, 8, 1ULL << 40};

static struct mb_prop sample_props[5];
static struct mb_bytes mv[2];

static void init_props(void)
{
	mv[0] = mb_str("user0002");
	mv[1] = mb_str("list001");
	sample_props[0] = mb_prop_str(MB_PR_SUBJECT, "hello");
	sample_props[1] = mb_prop_str(MB_PR_BODY, "a body of text");
	sample_props[2] = mb_prop_i64(MB_PR_DELIVERY_TIME, -12345678901LL);
	sample_props[3] = mb_prop_i64(MB_PR_MESSAGE_FLAGS, 1);
	memset(&sample_props[4], 0, sizeof(sample_props[4]));
	sample_props[4].tag = MB_PR_RECIPIENTS;
	sample_props[4].v.mv.n = 2;
	sample_props[4].v.mv.v = mv;
}

static void assert_props_eq(const struct mb_prop *a, const struct mb_prop *b, int n)
{
	for (int i = 0; i < n; i++) {
		assert_int_equal(a[i].tag, b[i].tag);
		switch (MB_PTAG_TYPE(a[i].tag)) {
		case MB_PT_STRING:
		case MB_PT_BINARY:
			assert_true(mb_bytes_eq(a[i].v.b, b[i].v.b));
			break;
		case MB_PT_MV_STRING:
			assert_int_equal(a[i].v.mv.n, b[i].v.mv.n);
			for (int j = 0; j < a[i].v.mv.n; j++)
				assert_true(mb_bytes_eq(a[i].v.mv.v[j], b[i].v.mv.v[j]));
			break;
		default:
			assert_true(a[i].v.i == b[i].v.i);
		}
	}
}

/* One request with every op code. */
static int build_all_ops(struct mb_op *ops)
{
	static struct mb_sync_change ch[3];
	int n = 0;
	memset(ops, 0, sizeof(struct mb_op) * 40);
	ops[n].code = MB_OP_LOGON_CHALLENGE;
	ops[n].u.challenge.user = mb_str("user0001");
	ops[n++].u.challenge.flags = 3;
	ops[n].code = MB_OP_LOGON;
	ops[n].u.logon.user = mb_str("user0001");
	ops[n].u.logon.mailbox = mb_str("");
	memset(ops[n].u.logon.proof, 0xAB, MB_PROOF_LEN);
	ops[n++].u.logon.flags = 1;
	ops[n++].code = MB_OP_LOGOFF;
	ops[n].code = MB_OP_RELEASE;
	ops[n++].u.release.handle = 9;
	ops[n].code = MB_OP_OPEN_FOLDER;
	ops[n++].u.open_folder.fid = MB_FID(3, MB_FID_INBOX);
	ops[n].code = MB_OP_GET_HIERARCHY_TABLE;
	ops[n].u.get_table.fid = MB_FID(3, MB_FID_ROOT);
	ops[n++].u.get_table.handle = 1;
	ops[n].code = MB_OP_GET_CONTENTS_TABLE;
	ops[n].u.get_table.fid = MB_FID(3, MB_FID_INBOX);
	ops[n++].u.get_table.handle = 2;
	ops[n].code = MB_OP_SET_COLUMNS;
	ops[n].u.set_columns.handle = 2;
	ops[n].u.set_columns.n = 3;
	ops[n++].u.set_columns.tags = tags3;
	ops[n].code = MB_OP_QUERY_ROWS;
	ops[n].u.query_rows.handle = 2;
	ops[n].u.query_rows.flags = MB_QR_F_RESTART;
	ops[n++].u.query_rows.max_rows = 50;
	ops[n].code = MB_OP_OPEN_MESSAGE;
	ops[n].u.open_message.fid = MB_FID(3, MB_FID_INBOX);
	ops[n].u.open_message.mid = 77;
	ops[n++].u.open_message.handle = 3;
	ops[n].code = MB_OP_GET_PROPS;
	ops[n].u.get_props.handle = 3;
	ops[n].u.get_props.n = 3;
	ops[n++].u.get_props.tags = tags3;
	ops[n].code = MB_OP_CREATE_MESSAGE;
	ops[n].u.create_message.fid = MB_FID(3, MB_FID_SENT);
	ops[n++].u.create_message.handle = 4;
	ops[n].code = MB_OP_SET_PROPS;
	ops[n].u.set_props.handle = 4;
	ops[n].u.set_props.n = 5;
	ops[n++].u.set_props.props = sample_props;
	ops[n].code = MB_OP_SAVE_CHANGES;
	ops[n++].u.save.handle = 4;
	ops[n].code = MB_OP_SUBMIT;
	ops[n++].u.save.handle = 4;
	ops[n].code = MB_OP_DELETE_MESSAGES;
	ops[n].u.del.fid = MB_FID(3, MB_FID_INBOX);
	ops[n].u.del.n = 3;
	ops[n++].u.del.mids = mids3;
	ops[n].code = MB_OP_MOVE_COPY;
	ops[n].u.move_copy.src_fid = MB_FID(3, MB_FID_INBOX);
	ops[n].u.move_copy.dst_fid = MB_FID(3, MB_FID_DELETED);
	ops[n].u.move_copy.flags = MB_MC_F_COPY;
	ops[n].u.move_copy.n = 3;
	ops[n++].u.move_copy.mids = mids3;
	ops[n].code = MB_OP_CALENDAR_RANGE;
	ops[n].u.calendar.start = -5;
	ops[n].u.calendar.end = 1LL << 45;
	ops[n++].u.calendar.max_rows = 100;
	ops[n].code = MB_OP_FREEBUSY;
	ops[n].u.freebusy.user = mb_str("user0009");
	ops[n].u.freebusy.start = 100;
	ops[n++].u.freebusy.end = 200;
	ops[n].code = MB_OP_CREATE_CONTACT;
	ops[n].u.create_contact.n = 2;
	ops[n++].u.create_contact.props = sample_props;
	ops[n].code = MB_OP_LIST_CONTACTS;
	ops[n].u.list_contacts.start = 10;
	ops[n++].u.list_contacts.max_rows = 20;
	ops[n].code = MB_OP_SYNC_DOWNLOAD;
	ops[n].u.sync_down.fid = MB_FID(3, MB_FID_INBOX);
	ops[n].u.sync_down.since_cn = 99;
	ops[n].u.sync_down.flags = MB_SD_F_BODY;
	ops[n].u.sync_down.handle = 13;
	ops[n++].u.sync_down.max = 10;
	memset(ch, 0, sizeof(ch));
	ch[0].kind = MB_SYNC_CREATE;
	ch[0].nprops = 5;
	ch[0].props = sample_props;
	ch[1].kind = MB_SYNC_DELETE;
	ch[1].mid = 5;
	ch[2].kind = MB_SYNC_SET_FLAGS;
	ch[2].mid = 6;
	ch[2].flags = 1;
	ops[n].code = MB_OP_SYNC_UPLOAD;
	ops[n].u.sync_up.fid = MB_FID(3, MB_FID_INBOX);
	ops[n].u.sync_up.handle = 14;
	ops[n].u.sync_up.n = 3;
	ops[n++].u.sync_up.changes = ch;
	/* 23.. attachments, streams, notifications, address book */
	static struct mb_bytes names[2];
	names[0] = mb_str("user0002");
	names[1] = mb_str("list007");
	ops[n].code = MB_OP_CREATE_ATTACH;
	ops[n].u.attach.msg = 4;
	ops[n++].u.attach.handle = 5;
	ops[n].code = MB_OP_SAVE_ATTACH;
	ops[n++].u.save.handle = 5;
	ops[n].code = MB_OP_GET_ATTACH_TABLE;
	ops[n].u.attach.msg = 3;
	ops[n++].u.attach.handle = 6;
	ops[n].code = MB_OP_OPEN_ATTACH;
	ops[n].u.attach.msg = 3;
	ops[n].u.attach.num = 2;
	ops[n++].u.attach.handle = 7;
	ops[n].code = MB_OP_OPEN_STREAM;
	ops[n].u.open_stream.obj = 7;
	ops[n].u.open_stream.tag = MB_PR_ATTACH_DATA_BIN;
	ops[n++].u.open_stream.handle = 8;
	ops[n].code = MB_OP_READ_STREAM;
	ops[n].u.read_stream.handle = 8;
	ops[n++].u.read_stream.max = 4096;
	ops[n].code = MB_OP_REGISTER_NOTIFY;
	ops[n].u.get_table.fid = MB_FID(3, MB_FID_INBOX);
	ops[n++].u.get_table.handle = 9;
	ops[n].code = MB_OP_RESOLVE_NAMES;
	ops[n].u.resolve.n = 2;
	ops[n++].u.resolve.names = names;
	ops[n].code = MB_OP_GET_AB_TABLE;
	ops[n++].u.ab_table.handle = 10;
	/* 32.. the ICS download context */
	ops[n].code = MB_OP_SYNC_CONFIGURE;
	ops[n].u.sync_cfg.fid = MB_FID(3, MB_FID_SENT);
	ops[n++].u.sync_cfg.handle = 11;
	ops[n].code = MB_OP_SYNC_STATE_BEGIN;
	ops[n].u.sync_state.handle = 11;
	ops[n].u.sync_state.tag = MB_META_CNSET_SEEN;
	ops[n++].u.sync_state.size = 3;
	ops[n].code = MB_OP_SYNC_STATE_CONTINUE;
	ops[n].u.sync_state.handle = 11;
	ops[n++].u.sync_state.data = mb_str("abc");
	ops[n].code = MB_OP_SYNC_STATE_END;
	ops[n++].u.sync_state.handle = 12;
	/* 36 */
	ops[n].code = MB_OP_SORT_TABLE;
	ops[n].u.sort_table.handle = 2;
	ops[n].u.sort_table.n = 2;
	ops[n].u.sort_table.keys[0] = (struct mb_sort_key){MB_PR_DELIVERY_TIME, MB_SORT_DESC};
	ops[n++].u.sort_table.keys[1] = (struct mb_sort_key){MB_PR_SUBJECT, MB_SORT_ASC};
	/* 37.. the ICS upload context */
	ops[n].code = MB_OP_SYNC_OPEN_COLLECTOR;
	ops[n].u.sync_cfg.fid = MB_FID(3, MB_FID_CALENDAR);
	ops[n++].u.sync_cfg.handle = 14;
	ops[n].code = MB_OP_SYNC_GET_STATE;
	ops[n].u.sync_xfer.handle = 14;
	ops[n++].u.sync_xfer.out = 15;
	ops[n].code = MB_OP_FT_GET_BUFFER;
	ops[n].u.read_stream.handle = 15;
	ops[n++].u.read_stream.max = 28672;
	return n;
}

/* The buffers and arena of one round trip (out, tmp, scratch, a). */
static void bufs_create(struct mb_buf **out, struct mb_buf **tmp, struct mb_buf **scratch,
			struct mb_arena **a, size_t arena)
{
	mb_buf_create(0, out);
	mb_buf_create(0, tmp);
	mb_buf_create(0, scratch);
	mb_arena_create(arena, a);
}

static void bufs_destroy(struct mb_buf *out, struct mb_buf *tmp, struct mb_buf *scratch,
			 struct mb_arena *a)
{
	mb_buf_destroy(out);
	mb_buf_destroy(tmp);
	mb_buf_destroy(scratch);
	mb_arena_destroy(a);
}

static void frame_roundtrip(struct mb_buf *frame, struct mb_buf *scratch, uint8_t kind,
			    const uint8_t **payload, size_t *len)
{
	struct mb_frame_hdr h;
	size_t total;
	assert_int_equal(mb_frame_check(mb_buf_data(frame), mb_buf_len(frame), 0, &h, &total), 0);
	assert_int_equal(total, mb_buf_len(frame));
	assert_int_equal(h.kind, kind);
	assert_int_equal(mb_frame_payload(&h, mb_buf_data(frame), scratch, payload, len), 0);
}

static void test_op_table(void **state)
{
	(void)state;
	for (int i = 0; i < MB_OP_COUNT; i++) {
		int code = mb_op_code_at(i);
		assert_true(code > 0);
		assert_int_equal(mb_op_index(code), i);
		assert_non_null(mb_op_name(code));
	}
	assert_int_equal(mb_op_index(0xEE), -1);
	assert_null(mb_op_name(0xEE));
}

/* Every op of build_all_ops: the handle it makes (the numbers given there),
 * or -1; each op code is in build_all_ops, so a new op code must be
 * classified here too. */
static void test_op_opens_handle(void **state)
{
	(void)state;
	static const struct {
		int code;
		int64_t h;
	} makes[] = {
	    {MB_OP_GET_HIERARCHY_TABLE, 1}, {MB_OP_GET_CONTENTS_TABLE, 2},
	    {MB_OP_OPEN_MESSAGE, 3},	    {MB_OP_CREATE_MESSAGE, 4},
	    {MB_OP_CREATE_ATTACH, 5},	    {MB_OP_GET_ATTACH_TABLE, 6},
	    {MB_OP_OPEN_ATTACH, 7},	    {MB_OP_OPEN_STREAM, 8},
	    {MB_OP_REGISTER_NOTIFY, 9},	    {MB_OP_GET_AB_TABLE, 10},
	    {MB_OP_SYNC_CONFIGURE, 11},	    {MB_OP_SYNC_OPEN_COLLECTOR, 14},
	    {MB_OP_SYNC_GET_STATE, 15},
	};
	struct mb_op ops[48];
	int n = build_all_ops(ops), found = 0;
	assert_int_equal(n, MB_OP_COUNT);
	for (int i = 0; i < n; i++) {
		int64_t want = -1;
		for (size_t k = 0; k < sizeof(makes) / sizeof(makes[0]); k++)
			if (makes[k].code == ops[i].code) {
				want = makes[k].h;
				found++;
			}
		assert_int_equal(mb_op_opens_handle(&ops[i]), want);
	}
	assert_int_equal(found, (int)(sizeof(makes) / sizeof(makes[0])));
}

static void test_request_every_op(void **state)
{
	(void)state;
	struct mb_op ops[48];
	int n = build_all_ops(ops);
	struct mb_buf *out, *tmp, *scratch;
	struct mb_arena *a;
	struct mb_request req = {42, (uint16_t)n, ops}, got;
	const uint8_t *p;
	size_t len;

	assert_int_equal(n, MB_OP_COUNT);
	bufs_create(&out, &tmp, &scratch, &a, 1 << 20);
	assert_int_equal(mb_request_encode(out, tmp, &req, NULL, NULL), 0);
	frame_roundtrip(out, scratch, MB_FRAME_REQUEST, &p, &len);
	assert_int_equal(mb_request_decode(p, len, 42, a, &got), 0);
	assert_int_equal(got.nops, n);
	for (int i = 0; i < n; i++)
		assert_int_equal(got.ops[i].code, ops[i].code);
	assert_true(mb_bytes_eq_str(got.ops[0].u.challenge.user, "user0001"));
	assert_int_equal(got.ops[0].u.challenge.flags, 3);
	assert_memory_equal(got.ops[1].u.logon.proof, ops[1].u.logon.proof, MB_PROOF_LEN);
	assert_int_equal(got.ops[1].u.logon.mailbox.len, 0);
	assert_int_equal(got.ops[3].u.release.handle, 9);
	assert_true(got.ops[4].u.open_folder.fid == MB_FID(3, MB_FID_INBOX));
	assert_int_equal(got.ops[6].u.get_table.handle, 2);
	assert_int_equal(got.ops[7].u.set_columns.n, 3);
	assert_memory_equal(got.ops[7].u.set_columns.tags, tags3, sizeof(tags3));
	assert_int_equal(got.ops[8].u.query_rows.max_rows, 50);
	assert_true(got.ops[9].u.open_message.mid == 77);
	assert_int_equal(got.ops[10].u.get_props.tags[1], MB_PR_BODY);
	assert_int_equal(got.ops[12].u.set_props.n, 5);
	assert_props_eq(got.ops[12].u.set_props.props, sample_props, 5);
	assert_int_equal(got.ops[14].u.save.handle, 4);
	assert_memory_equal(got.ops[15].u.del.mids, mids3, sizeof(mids3));
	assert_int_equal(got.ops[16].u.move_copy.flags, MB_MC_F_COPY);
	assert_true(got.ops[16].u.move_copy.dst_fid == MB_FID(3, MB_FID_DELETED));
	assert_true(got.ops[17].u.calendar.start == -5);
	assert_true(got.ops[17].u.calendar.end == 1LL << 45);
	assert_true(mb_bytes_eq_str(got.ops[18].u.freebusy.user, "user0009"));
	assert_props_eq(got.ops[19].u.create_contact.props, sample_props, 2);
	assert_int_equal(got.ops[20].u.list_contacts.start, 10);
	assert_true(got.ops[21].u.sync_down.since_cn == 99);
	assert_int_equal(got.ops[22].u.sync_up.n, 3);
	assert_int_equal(got.ops[22].u.sync_up.handle, 14);
	assert_props_eq(got.ops[22].u.sync_up.changes[0].props, sample_props, 5);
	assert_true(got.ops[22].u.sync_up.changes[1].mid == 5);
	assert_int_equal(got.ops[22].u.sync_up.changes[2].flags, 1);
	assert_int_equal(got.ops[23].u.attach.msg, 4);
	assert_int_equal(got.ops[23].u.attach.handle, 5);
	assert_int_equal(got.ops[24].u.save.handle, 5);
	assert_int_equal(got.ops[25].u.attach.handle, 6);
	assert_int_equal(got.ops[26].u.attach.num, 2);
	assert_int_equal(got.ops[27].u.open_stream.tag, MB_PR_ATTACH_DATA_BIN);
	assert_int_equal(got.ops[27].u.open_stream.obj, 7);
	assert_int_equal(got.ops[28].u.read_stream.max, 4096);
	assert_true(got.ops[29].u.get_table.fid == MB_FID(3, MB_FID_INBOX));
	assert_int_equal(got.ops[30].u.resolve.n, 2);
	assert_true(mb_bytes_eq_str(got.ops[30].u.resolve.names[1], "list007"));
	assert_int_equal(got.ops[31].u.ab_table.handle, 10);
	assert_int_equal(got.ops[21].u.sync_down.handle, 13);
	assert_true(got.ops[32].u.sync_cfg.fid == MB_FID(3, MB_FID_SENT));
	assert_int_equal(got.ops[32].u.sync_cfg.handle, 11);
	assert_int_equal(got.ops[33].u.sync_state.tag, MB_META_CNSET_SEEN);
	assert_int_equal(got.ops[33].u.sync_state.size, 3);
	assert_true(mb_bytes_eq_str(got.ops[34].u.sync_state.data, "abc"));
	assert_int_equal(got.ops[35].u.sync_state.handle, 12);
	assert_int_equal(got.ops[36].u.sort_table.handle, 2);
	assert_int_equal(got.ops[36].u.sort_table.n, 2);
	assert_int_equal(got.ops[36].u.sort_table.keys[0].tag, MB_PR_DELIVERY_TIME);
	assert_int_equal(got.ops[36].u.sort_table.keys[0].order, MB_SORT_DESC);
	assert_int_equal(got.ops[36].u.sort_table.keys[1].tag, MB_PR_SUBJECT);
	assert_int_equal(got.ops[36].u.sort_table.keys[1].order, MB_SORT_ASC);
	assert_true(got.ops[37].u.sync_cfg.fid == MB_FID(3, MB_FID_CALENDAR));
	assert_int_equal(got.ops[37].u.sync_cfg.handle, 14);
	assert_int_equal(got.ops[38].u.sync_xfer.handle, 14);
	assert_int_equal(got.ops[38].u.sync_xfer.out, 15);
	assert_int_equal(got.ops[39].u.read_stream.handle, 15);
	assert_int_equal(got.ops[39].u.read_stream.max, 28672);

	/* truncation at every length is refused, never a crash */
	size_t full = len;
	uint8_t *copy = malloc(full);
	memcpy(copy, p, full);
	for (size_t cut = 0; cut < full; cut++) {
		mb_arena_reset(a);
		assert_int_not_equal(mb_request_decode(copy, cut, 1, a, &got), 0);
	}
	/* trailing garbage */
	uint8_t *longer = malloc(full + 1);
	memcpy(longer, copy, full);
	longer[full] = 0;
	mb_arena_reset(a);
	assert_int_equal(mb_request_decode(longer, full + 1, 1, a, &got), MB_EPROTO);
	free(longer);
	free(copy);
	bufs_destroy(out, tmp, scratch, a);
}

static void test_reply_every_op(void **state)
{
	(void)state;
	struct mb_op_reply r[MB_OP_COUNT + 1];
	struct mb_prop rows[6];
	struct mb_delivery dl[2] = {{5, 100}, {6, 200}};
	struct mb_busy_block bb[1] = {{10, 20, 2}};
	struct mb_sync_item items[2];
	memset(r, 0, sizeof(r));
	for (int i = 0; i < MB_OP_COUNT; i++)
		r[i].code = (uint8_t)mb_op_code_at(i);
	memset(r[MB_OPI_LOGON_CHALLENGE].u.challenge.nonce, 1, MB_NONCE_LEN);
	memset(r[MB_OPI_LOGON_CHALLENGE].u.challenge.salt, 2, MB_SALT_LEN);
	r[MB_OPI_LOGON_CHALLENGE].u.challenge.iterations = 2048;
	r[MB_OPI_LOGON].u.logon.mailbox = 3;
	r[MB_OPI_LOGON].u.logon.flags = 1;
	r[MB_OPI_LOGON].u.logon.compress_min = 1024;
	r[MB_OPI_OPEN_FOLDER].u.folder.fid = MB_FID(3, 2);
	r[MB_OPI_OPEN_FOLDER].u.folder.name = mb_str("Inbox");
	r[MB_OPI_OPEN_FOLDER].u.folder.count = 100;
	r[MB_OPI_OPEN_FOLDER].u.folder.cn = 555;
	r[MB_OPI_GET_CONTENTS_TABLE].u.table.rows = 100;
	for (int i = 0; i < 6; i++)
		rows[i] = mb_prop_i64(MB_PR_MID, i);
	r[MB_OPI_QUERY_ROWS].u.rows.ncols = 2;
	r[MB_OPI_QUERY_ROWS].u.rows.nrows = 3;
	r[MB_OPI_QUERY_ROWS].u.rows.more = 1;
	r[MB_OPI_QUERY_ROWS].u.rows.vals = rows;
	r[MB_OPI_CALENDAR_RANGE].u.rows.ncols = 3;
	r[MB_OPI_CALENDAR_RANGE].u.rows.nrows = 2;
	r[MB_OPI_CALENDAR_RANGE].u.rows.vals = rows;
	r[MB_OPI_LIST_CONTACTS].u.rows.ncols = 1;
	r[MB_OPI_LIST_CONTACTS].u.rows.nrows = 1;
	r[MB_OPI_LIST_CONTACTS].u.rows.vals = rows;
	r[MB_OPI_OPEN_MESSAGE].u.props.n = 5;
	r[MB_OPI_OPEN_MESSAGE].u.props.props = sample_props;
	r[MB_OPI_GET_PROPS].u.props.n = 2;
	r[MB_OPI_GET_PROPS].u.props.props = sample_props;
	r[MB_OPI_SAVE_CHANGES].u.saved.mid = 9;
	r[MB_OPI_SAVE_CHANGES].u.saved.cn = 10;
	r[MB_OPI_CREATE_CONTACT].u.saved.mid = 11;
	r[MB_OPI_SUBMIT].u.submit.mid = 12;
	r[MB_OPI_SUBMIT].u.submit.databases = 2;
	r[MB_OPI_SUBMIT].u.submit.n = 2;
	r[MB_OPI_SUBMIT].u.submit.dl = dl;
	r[MB_OPI_DELETE_MESSAGES].u.count.n = 3;
	r[MB_OPI_MOVE_COPY].u.moved.n = 3;
	r[MB_OPI_MOVE_COPY].u.moved.mids = mids3;
	r[MB_OPI_FREEBUSY].u.freebusy.n = 1;
	r[MB_OPI_FREEBUSY].u.freebusy.blocks = bb;
	memset(items, 0, sizeof(items));
	items[0].mid = 1;
	items[0].cn = 2;
	items[0].nprops = 5;
	items[0].props = sample_props;
	items[1].mid = 3;
	items[1].cn = 4;
	items[1].deleted = 1;
	r[MB_OPI_SYNC_DOWNLOAD].u.sync_down.watermark = 4;
	r[MB_OPI_SYNC_DOWNLOAD].u.sync_down.more = 1;
	r[MB_OPI_SYNC_DOWNLOAD].u.sync_down.content = 70000;
	r[MB_OPI_SYNC_DOWNLOAD].u.sync_down.n = 2;
	r[MB_OPI_SYNC_DOWNLOAD].u.sync_down.items = items;
	r[MB_OPI_SYNC_UPLOAD].u.sync_up.cn = 77;
	r[MB_OPI_SYNC_UPLOAD].u.sync_up.n = 3;
	r[MB_OPI_SYNC_UPLOAD].u.sync_up.mids = mids3;
	r[MB_OPI_CREATE_ATTACH].u.table.rows = 1;
	r[MB_OPI_GET_ATTACH_TABLE].u.table.rows = 2;
	r[MB_OPI_OPEN_STREAM].u.table.rows = 12345;
	r[MB_OPI_GET_AB_TABLE].u.table.rows = 1100;
	r[MB_OPI_OPEN_ATTACH].u.props.n = 2;
	r[MB_OPI_OPEN_ATTACH].u.props.props = sample_props;
	r[MB_OPI_READ_STREAM].u.stream.data = mb_str("stream bytes");
	r[MB_OPI_SYNC_GET_STATE].u.table.rows = 27;
	r[MB_OPI_FT_GET_BUFFER].u.stream.data = mb_str("state bytes");
	struct mb_resolved rv[2] = {{0, MB_OBJECT_USER, mb_str("user0002"), mb_str("User 2")},
				    {MB_ENOTFOUND, 0, mb_str(""), mb_str("")}};
	r[MB_OPI_RESOLVE_NAMES].u.resolve.n = 2;
	r[MB_OPI_RESOLVE_NAMES].u.resolve.v = rv;
	/* an error result has an empty body */
	r[MB_OP_COUNT].code = MB_OP_OPEN_FOLDER;
	r[MB_OP_COUNT].status = MB_EACCES;

	struct mb_reply rep = {7, MB_OP_COUNT + 1, r}, got;
	struct mb_buf *out, *tmp, *scratch;
	struct mb_arena *a;
	const uint8_t *p;
	size_t len;
	bufs_create(&out, &tmp, &scratch, &a, 1 << 20);
	assert_int_equal(mb_reply_encode(out, tmp, &rep, NULL, NULL), 0);
	frame_roundtrip(out, scratch, MB_FRAME_REPLY, &p, &len);
	assert_int_equal(mb_reply_decode(p, len, 7, a, &got), 0);
	assert_int_equal(got.nops, MB_OP_COUNT + 1);
	struct mb_op_reply *g = got.ops;
	assert_memory_equal(g[MB_OPI_LOGON_CHALLENGE].u.challenge.salt,
			    r[MB_OPI_LOGON_CHALLENGE].u.challenge.salt, MB_SALT_LEN);
	assert_int_equal(g[MB_OPI_LOGON_CHALLENGE].u.challenge.iterations, 2048);
	assert_int_equal(g[MB_OPI_LOGON].u.logon.compress_min, 1024);
	assert_true(mb_bytes_eq_str(g[MB_OPI_OPEN_FOLDER].u.folder.name, "Inbox"));
	assert_true(g[MB_OPI_OPEN_FOLDER].u.folder.cn == 555);
	assert_int_equal(g[MB_OPI_GET_CONTENTS_TABLE].u.table.rows, 100);
	assert_int_equal(g[MB_OPI_QUERY_ROWS].u.rows.nrows, 3);
	assert_int_equal(g[MB_OPI_QUERY_ROWS].u.rows.more, 1);
	assert_props_eq(g[MB_OPI_QUERY_ROWS].u.rows.vals, rows, 6);
	assert_int_equal(g[MB_OPI_CALENDAR_RANGE].u.rows.ncols, 3);
	assert_props_eq(g[MB_OPI_OPEN_MESSAGE].u.props.props, sample_props, 5);
	assert_true(g[MB_OPI_SAVE_CHANGES].u.saved.cn == 10);
	assert_true(g[MB_OPI_CREATE_CONTACT].u.saved.mid == 11);
	assert_int_equal(g[MB_OPI_SUBMIT].u.submit.n, 2);
	assert_true(g[MB_OPI_SUBMIT].u.submit.dl[1].mid == 200);
	assert_int_equal(g[MB_OPI_SUBMIT].u.submit.dl[1].mailbox, 6);
	assert_int_equal(g[MB_OPI_DELETE_MESSAGES].u.count.n, 3);
	assert_memory_equal(g[MB_OPI_MOVE_COPY].u.moved.mids, mids3, sizeof(mids3));
	assert_int_equal(g[MB_OPI_FREEBUSY].u.freebusy.blocks[0].status, 2);
	assert_int_equal(g[MB_OPI_SYNC_DOWNLOAD].u.sync_down.n, 2);
	assert_int_equal(g[MB_OPI_SYNC_DOWNLOAD].u.sync_down.content, 70000);
	assert_int_equal(g[MB_OPI_SYNC_DOWNLOAD].u.sync_down.items[1].deleted, 1);
	assert_props_eq(g[MB_OPI_SYNC_DOWNLOAD].u.sync_down.items[0].props, sample_props, 5);
	assert_true(g[MB_OPI_SYNC_UPLOAD].u.sync_up.cn == 77);
	assert_int_equal(g[MB_OP_COUNT].status, MB_EACCES);
	assert_int_equal(g[MB_OPI_CREATE_ATTACH].u.table.rows, 1);
	assert_int_equal(g[MB_OPI_OPEN_STREAM].u.table.rows, 12345);
	assert_int_equal(g[MB_OPI_GET_AB_TABLE].u.table.rows, 1100);
	assert_props_eq(g[MB_OPI_OPEN_ATTACH].u.props.props, sample_props, 2);
	assert_true(mb_bytes_eq_str(g[MB_OPI_READ_STREAM].u.stream.data, "stream bytes"));
	assert_int_equal(g[MB_OPI_SYNC_GET_STATE].u.table.rows, 27);
	assert_true(mb_bytes_eq_str(g[MB_OPI_FT_GET_BUFFER].u.stream.data, "state bytes"));
	assert_int_equal(g[MB_OPI_RESOLVE_NAMES].u.resolve.n, 2);
	assert_int_equal(g[MB_OPI_RESOLVE_NAMES].u.resolve.v[0].type, MB_OBJECT_USER);
	assert_true(mb_bytes_eq_str(g[MB_OPI_RESOLVE_NAMES].u.resolve.v[0].display, "User 2"));
	assert_int_equal(g[MB_OPI_RESOLVE_NAMES].u.resolve.v[1].status, MB_ENOTFOUND);

	for (size_t cut = 0; cut < len; cut++) {
		mb_arena_reset(a);
		assert_int_not_equal(mb_reply_decode(p, cut, 1, a, &got), 0);
	}
	bufs_destroy(out, tmp, scratch, a);
}

static void test_notify_and_error(void **state)
{
	(void)state;
	struct mb_event ev[2] = {{MB_EVENT_NEW_MAIL, MB_FID(1, 2), 5, 6, 700},
				 {MB_EVENT_NEW_MAIL, MB_FID(1, 2), 7, 8, 900}};
	struct mb_notify n = {2, ev}, got;
	struct mb_buf *out, *tmp, *scratch;
	struct mb_arena *a;
	const uint8_t *p;
	size_t len;
	bufs_create(&out, &tmp, &scratch, &a, 1 << 16);
	assert_int_equal(mb_notify_encode(out, tmp, &n, NULL, NULL), 0);
	frame_roundtrip(out, scratch, MB_FRAME_NOTIFY, &p, &len);
	assert_int_equal(mb_notify_decode(p, len, a, &got), 0);
	assert_int_equal(got.n, 2);
	assert_int_equal(got.events[1].size, 900);
	assert_true(got.events[0].fid == MB_FID(1, 2));

	mb_buf_reset(out);
	assert_int_equal(mb_error_encode(out, tmp, 9, MB_EPROTO, "bad frame", NULL), 0);
	frame_roundtrip(out, scratch, MB_FRAME_ERROR, &p, &len);
	struct mb_frame_error e;
	assert_int_equal(mb_error_decode(p, len, &e), 0);
	assert_int_equal(e.code, MB_EPROTO);
	assert_true(mb_bytes_eq_str(e.message, "bad frame"));
	bufs_destroy(out, tmp, scratch, a);
}

static void put32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void test_malformed_frames(void **state)
{
	(void)state;
	uint8_t h[MB_FRAME_HDR + 8];
	struct mb_frame_hdr hdr;
	size_t total;

	memset(h, 0, sizeof(h));
	put32le(h, 8);
	h[4] = MB_PROTO_MAGIC;
	h[5] = MB_PROTO_VERSION;
	h[6] = MB_FRAME_REQUEST;
	put32le(h + 12, 8);
	/* complete */
	assert_int_equal(mb_frame_check(h, sizeof(h), 0, &hdr, &total), 0);
	/* partial header and partial payload */
	for (size_t i = 0; i < sizeof(h); i++)
		assert_int_equal(mb_frame_check(h, i, 0, &hdr, &total), MB_EAGAIN);
	/* bad magic, version, kind, flags */
	h[4] = 'X';
	assert_int_equal(mb_frame_check(h, sizeof(h), 0, &hdr, &total), MB_EPROTO);
	assert_int_equal(mb_frame_check(h, 6, 0, &hdr, &total), MB_EPROTO);
	h[4] = MB_PROTO_MAGIC;
	h[5] = 9;
	assert_int_equal(mb_frame_check(h, sizeof(h), 0, &hdr, &total), MB_EPROTO);
	h[5] = MB_PROTO_VERSION;
	h[6] = 0;
	assert_int_equal(mb_frame_check(h, sizeof(h), 0, &hdr, &total), MB_EPROTO);
	h[6] = 5;
	assert_int_equal(mb_frame_check(h, sizeof(h), 0, &hdr, &total), MB_EPROTO);
	h[6] = MB_FRAME_REQUEST;
	h[7] = 0x80;
	assert_int_equal(mb_frame_check(h, sizeof(h), 0, &hdr, &total), MB_EPROTO);
	h[7] = 0;
	/* raw_len must equal len when not compressed */
	put32le(h + 12, 9);
	assert_int_equal(mb_frame_check(h, sizeof(h), 0, &hdr, &total), MB_EPROTO);
	put32le(h + 12, 8);
	/* oversize: above the protocol maximum and above a caller's limit */
	put32le(h, MB_PROTO_MAX_FRAME + 1);
	put32le(h + 12, MB_PROTO_MAX_FRAME + 1);
	assert_int_equal(mb_frame_check(h, sizeof(h), 0, &hdr, &total), MB_ETOOBIG);
	put32le(h, 8);
	put32le(h + 12, 8);
	assert_int_equal(mb_frame_check(h, sizeof(h), 4, &hdr, &total), MB_ETOOBIG);
	/* compressed claim with garbage payload */
	h[7] = MB_FRAME_F_LZ77;
	put32le(h + 12, 1000);
	memset(h + MB_FRAME_HDR, 0xFF, 8);
	assert_int_equal(mb_frame_check(h, sizeof(h), 0, &hdr, &total), 0);
	struct mb_buf *scratch;
	const uint8_t *p;
	size_t len;
	mb_buf_create(0, &scratch);
	assert_int_equal(mb_frame_payload(&hdr, h, scratch, &p, &len), MB_EPROTO);
	mb_buf_destroy(scratch);
}

static void test_bad_payloads(void **state)
{
	(void)state;
	struct mb_arena *a;
	struct mb_request req;
	mb_arena_create(1 << 20, &a);
	/* zero ops */
	uint8_t z[4] = {0, 0, 0, 0};
	assert_int_equal(mb_request_decode(z, 4, 1, a, &req), MB_EPROTO);
	/* count larger than the maximum */
	uint8_t big[4] = {0xFF, 0xFF, 0, 0};
	assert_int_equal(mb_request_decode(big, 4, 1, a, &req), MB_EPROTO);
	/* one op with a body length past the end */
	uint8_t past[] = {1, 0, 0, 0, MB_OP_RELEASE, 100, 0, 0, 0, 1, 2, 3, 4};
	assert_int_equal(mb_request_decode(past, sizeof(past), 1, a, &req), MB_EPROTO);
	/* unknown op code */
	uint8_t unk[] = {1, 0, 0, 0, 0xEE, 0, 0, 0, 0};
	assert_int_equal(mb_request_decode(unk, sizeof(unk), 1, a, &req), MB_EPROTO);
	/* body longer than the op needs */
	uint8_t extra[] = {1, 0, 0, 0, MB_OP_RELEASE, 5, 0, 0, 0, 1, 2, 3, 4, 5};
	assert_int_equal(mb_request_decode(extra, sizeof(extra), 1, a, &req), MB_EPROTO);
	/* an id count that exceeds the bytes left */
	uint8_t ids[] = {
	    1,	  0,	0, 0, MB_OP_DELETE_MESSAGES, 12, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
	    0xFF, 0xFF, 0, 0};
	assert_int_equal(mb_request_decode(ids, sizeof(ids), 1, a, &req), MB_EPROTO);
	/* a property of unknown type */
	uint8_t prop[] = {1,	0,    0,    0, MB_OP_SET_PROPS, 10, 0, 0, 0, 1, 0, 0, 0, 1, 0,
			  0x99, 0x99, 0x37, 0};
	assert_int_equal(mb_request_decode(prop, sizeof(prop), 1, a, &req), MB_EPROTO);
	/* a string length past the end */
	uint8_t str[] = {1, 0, 0, 0, MB_OP_LOGON_CHALLENGE, 6, 0, 0, 0, 200, 0, 1, 2, 3, 4};
	assert_int_equal(mb_request_decode(str, sizeof(str), 1, a, &req), MB_EPROTO);
	/* more sort keys than MB_PROTO_MAX_SORT */
	uint8_t sort[] = {1, 0, 0, 0, MB_OP_SORT_TABLE,	     6, 0, 0, 0,
			  2, 0, 0, 0, MB_PROTO_MAX_SORT + 1, 0};
	assert_int_equal(mb_request_decode(sort, sizeof(sort), 1, a, &req), MB_EPROTO);
	/* and the encoder refuses to write them */
	struct mb_op so;
	memset(&so, 0, sizeof(so));
	so.code = MB_OP_SORT_TABLE;
	so.u.sort_table.n = MB_PROTO_MAX_SORT + 1;
	struct mb_request sr = {1, 1, &so};
	struct mb_buf *sb;
	mb_buf_create(0, &sb);
	assert_int_equal(mb_request_encode_payload(sb, &sr), MB_ETOOBIG);
	mb_buf_destroy(sb);
	/* a tiny arena refuses instead of overflowing */
	struct mb_arena *tiny;
	mb_arena_create(16, &tiny);
	struct mb_op ops[48];
	int n = build_all_ops(ops);
	struct mb_request r = {1, (uint16_t)n, ops};
	struct mb_buf *b;
	mb_buf_create(0, &b);
	assert_int_equal(mb_request_encode_payload(b, &r), 0);
	assert_int_equal(mb_request_decode(mb_buf_data(b), mb_buf_len(b), 1, tiny, &req),
			 MB_ETOOBIG);
	mb_buf_destroy(b);
	mb_arena_destroy(tiny);
	mb_arena_destroy(a);
}

/* ID sets: ids in any order become merged ranges; what is encoded scans
 * back to the same counts; malformed sets are refused at every cut. */
static void test_idset(void **state)
{
	(void)state;
	uint64_t ids[] = {9, 3, 4, 0, 5, 1000000, 7, 4, 1ull << 40};
	struct mb_idrange rg[9];
	uint32_t n = mb_idset_from_ids(ids, 9, rg);
	assert_int_equal(n, 5); /* 3-5, 7, 9, 1000000, 2^40 */
	assert_true(rg[0].lo == 3 && rg[0].hi == 5);
	assert_true(rg[1].lo == 7 && rg[1].hi == 7);
	assert_true(rg[4].lo == 1ull << 40);
	uint8_t b[64];
	size_t len = mb_idset_encode(rg, n, b);
	assert_int_equal(len, mb_idset_size(rg, n));
	uint32_t nr;
	uint64_t nids, max;
	assert_int_equal(mb_idset_scan(b, len, &nr, &nids, &max), 0);
	assert_int_equal(nr, 5);
	assert_int_equal(nids, 7);
	assert_true(max == 1ull << 40);
	for (size_t cut = 0; cut < len; cut++)
		assert_int_equal(mb_idset_scan(b, cut, &nr, &nids, &max), MB_EPROTO);
	b[len] = 0;
	assert_int_equal(mb_idset_scan(b, len + 1, &nr, &nids, &max), MB_EPROTO);
	/* the empty set is one byte */
	assert_int_equal(mb_idset_encode(NULL, 0, b), 1);
	assert_int_equal(mb_idset_scan(b, 1, &nr, &nids, &max), 0);
	assert_true(nr == 0 && nids == 0 && max == 0);
	/* a range starting at 0, adjacent or overlapping ranges, an overlong varint */
	const uint8_t zero[] = {1, 0, 3};
	const uint8_t adjacent[] = {2, 1, 2, 1, 0};
	const uint8_t overlong[] = {1,	  0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
				    0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0};
	const uint8_t wraps[] = {2,    2,    0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
				 0xFF, 0xFF, 0xFF, 0xFF, 1,    2,    0};
	assert_int_equal(mb_idset_scan(zero, sizeof(zero), &nr, &nids, &max), MB_EPROTO);
	assert_int_equal(mb_idset_scan(adjacent, sizeof(adjacent), &nr, &nids, &max), MB_EPROTO);
	assert_int_equal(mb_idset_scan(overlong, sizeof(overlong), &nr, &nids, &max), MB_EPROTO);
	assert_int_equal(mb_idset_scan(wraps, sizeof(wraps), &nr, &nids, &max), MB_EPROTO);
}

/* mb_idset_add against a bitmap of ids 1..200 under random ranges: the
 * ranges are always the bitmap's runs (merged where they touch), and what
 * they encode decodes to the same ranges. */
static void test_idset_add(void **state)
{
	(void)state;
	bool bit[202];
	struct mb_idrange rg[128], back[128];
	uint32_t n = 0, nb;
	uint8_t b[1024];
	memset(bit, 0, sizeof(bit));
	srand(7);
	for (int step = 0; step < 2000; step++) {
		uint64_t lo = (uint64_t)(rand() % 201), hi = lo + (uint64_t)(rand() % 6);
		if (hi > 200)
			hi = 200;
		if (step % 97 == 0)
			hi = lo - 1 + (lo == 0); /* empty (or [0, 0]: nothing, as 0 is no id) */
		n = mb_idset_add(rg, n, lo, hi);
		for (uint64_t i = lo ? lo : 1; i <= hi; i++)
			bit[i] = true;
		uint32_t k = 0;
		for (uint64_t i = 1; i <= 200; i++) {
			if (!bit[i] || bit[i - 1])
				continue;
			uint64_t j = i;
			while (j + 1 <= 200 && bit[j + 1])
				j++;
			assert_true(k < n);
			assert_true(rg[k].lo == i && rg[k].hi == j);
			k++;
		}
		assert_int_equal(k, n);
		size_t len = mb_idset_encode(rg, n, b);
		assert_int_equal(mb_idset_decode(b, len, back, 128, &nb), 0);
		assert_int_equal(nb, n);
		assert_memory_equal(back, rg, n * sizeof(*rg));
		if (n > 1)
			assert_int_equal(mb_idset_decode(b, len, back, n - 1, &nb), MB_ETOOBIG);
	}
	/* the top of the range of ids */
	n = mb_idset_add(rg, 0, 5, 9);
	n = mb_idset_add(rg, n, UINT64_MAX - 1, UINT64_MAX);
	n = mb_idset_add(rg, n, 10, UINT64_MAX);
	assert_int_equal(n, 1);
	assert_true(rg[0].lo == 5 && rg[0].hi == UINT64_MAX);
}

static void test_partial_stream(void **state)
{
	(void)state;
	/* two frames arriving byte by byte are found one after the other */
	struct mb_op ops[48];
	int n = build_all_ops(ops);
	struct mb_request r = {1, (uint16_t)n, ops};
	struct mb_buf *out, *tmp, *rx;
	mb_buf_create(0, &out);
	mb_buf_create(0, &tmp);
	mb_buf_create(0, &rx);
	assert_int_equal(mb_request_encode(out, tmp, &r, NULL, NULL), 0);
	r.seq = 2;
	assert_int_equal(mb_request_encode(out, tmp, &r, NULL, NULL), 0);
	int frames = 0;
	for (size_t i = 0; i < mb_buf_len(out); i++) {
		mb_buf_append(rx, mb_buf_data(out) + i, 1);
		struct mb_frame_hdr h;
		size_t total;
		int rc = mb_frame_check(mb_buf_data(rx), mb_buf_len(rx), 0, &h, &total);
		if (rc == 0) {
			frames++;
			assert_int_equal(h.seq, (uint32_t)frames);
			mb_buf_consume(rx, total);
		} else {
			assert_int_equal(rc, MB_EAGAIN);
		}
	}
	assert_int_equal(frames, 2);
	assert_int_equal(mb_buf_len(rx), 0);
	mb_buf_destroy(out);
	mb_buf_destroy(tmp);
	mb_buf_destroy(rx);
}

/* String properties: UTF-8 in memory, UTF-16LE on the wire (PtypString,
 * MS-OXCDATA 2.11.1): ASCII, two- three- and four-byte characters round-trip
 * (the last as a surrogate pair), mb_prop_wire_size is the encoded size,
 * binary values stay bytes; UTF-8 that is not valid is refused when
 * encoding, UTF-16 that is not (an odd length, an unpaired surrogate) when
 * decoding. */
static void test_unicode_strings(void **state)
{
	(void)state;
	struct mb_buf *b;
	struct mb_arena *a;
	assert_int_equal(mb_buf_create(0, &b), 0);
	assert_int_equal(mb_arena_create(1 << 16, &a), 0);

	static const char *texts[] = {"", "A", "caf\xc3\xa9 \xe2\x82\xac 5", "\xf0\x9f\x98\x80!"};
	static const size_t units[] = {0, 1, 8, 3};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct mb_bytes two[2] = {mb_str(texts[i]), mb_str("x")};
		struct mb_prop in[3];
		in[0] = mb_prop_str(MB_PR_SUBJECT, texts[i]);
		memset(&in[1], 0, sizeof(in[1]));
		in[1].tag = MB_PR_RECIPIENTS;
		in[1].v.mv.n = 2;
		in[1].v.mv.v = two;
		in[2] = mb_prop_str(MB_PR_BODY, texts[i]);
		assert_int_equal(mb_prop_wire_size(&in[0]), 8 + 2 * units[i]);
		assert_int_equal(mb_prop_wire_size(&in[1]), 6 + 4 + 2 * units[i] + 4 + 2);
		assert_int_equal(mb_prop_wire_size(&in[2]), 8 + strlen(texts[i]));
		mb_buf_reset(b);
		assert_int_equal(mb_props_encode(b, in, 3), 0);
		size_t want = 2;
		for (int k = 0; k < 3; k++)
			want += mb_prop_wire_size(&in[k]);
		assert_int_equal(mb_buf_len(b), want);
		const uint8_t *w = mb_buf_data(b);
		if (i == 1) /* "A": u32 2, then 0x41 0x00 */
			assert_memory_equal(w + 2 + 4, "\x02\x00\x00\x00\x41\x00", 6);
		if (i == 3) /* U+1F600: D83D DE00 */
			assert_memory_equal(w + 2 + 8, "\x3d\xd8\x00\xde\x21\x00", 6);
		struct mb_prop *out;
		uint16_t n;
		mb_arena_reset(a);
		assert_int_equal(mb_props_decode(w, mb_buf_len(b), a, &out, &n), 0);
		assert_int_equal(n, 3);
		assert_props_eq(in, out, 3);
	}

	static const char *bad8[] = {"\xc0\x80",	 "\x80",
				     "\xed\xa0\x80",	 "ok\xe2\x82",
				     "\xf4\x90\x80\x80", "\xf8\x88\x80\x80\x80",
				     "\xe0\x80\xaf"};
	for (size_t i = 0; i < sizeof(bad8) / sizeof(bad8[0]); i++) {
		struct mb_prop p = mb_prop_str(MB_PR_SUBJECT, bad8[i]);
		mb_buf_reset(b);
		assert_int_equal(mb_props_encode(b, &p, 1), MB_EINVAL);
	}

	/* count 1, PR_SUBJECT, then each value */
	static const struct {
		uint8_t len;
		uint8_t v[6];
	} bad16[] = {
	    {3, {0x41, 0x00, 0x42}},		       /* odd length */
	    {2, {0x3d, 0xd8}},			       /* high surrogate, then the end */
	    {2, {0x00, 0xde}},			       /* low surrogate alone */
	    {4, {0x3d, 0xd8, 0x41, 0x00}},	       /* high surrogate, then not a low one */
	    {6, {0x41, 0x00, 0x3d, 0xd8, 0x3d, 0xd8}}, /* two high surrogates */
	};
	for (size_t i = 0; i < sizeof(bad16) / sizeof(bad16[0]); i++) {
		uint8_t f[2 + 4 + 4 + 6] = {1, 0, 0x1F, 0x00, 0x37, 0x00, bad16[i].len, 0, 0, 0};
		memcpy(f + 10, bad16[i].v, bad16[i].len);
		struct mb_prop *out;
		uint16_t n;
		mb_arena_reset(a);
		assert_int_equal(mb_props_decode(f, 10 + (size_t)bad16[i].len, a, &out, &n),
				 MB_EPROTO);
	}
	mb_arena_destroy(a);
	mb_buf_destroy(b);
}

int main(void)
{
	init_props();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_op_table),
	    cmocka_unit_test(test_op_opens_handle),
	    cmocka_unit_test(test_request_every_op),
	    cmocka_unit_test(test_reply_every_op),
	    cmocka_unit_test(test_notify_and_error),
	    cmocka_unit_test(test_malformed_frames),
	    cmocka_unit_test(test_bad_payloads),
	    cmocka_unit_test(test_partial_stream),
	    cmocka_unit_test(test_idset),
	    cmocka_unit_test(test_idset_add),
	    cmocka_unit_test(test_unicode_strings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
