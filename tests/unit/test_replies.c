/* test_replies.c: a reply's memory lives until the reply is encoded.  A
 * request's operations all run before its reply is written (src/store/net.c,
 * finish_req), so what an operation's reply points at must be in the
 * request's arena (or the topology), never in a worker's scratch values,
 * the cache's pages or a handle, which a later operation of the same
 * request reuses or frees.  Each reply kind (OpenMessage, GetProperties of
 * stored, draft and handle values, QueryRows with bodies, streams and
 * attachments, the address book, folders, calendar, free/busy, sync
 * download and upload, submit, move) is read alone, then again in one
 * request whose later operations reuse the same worker's buffers, run on
 * another worker, replace or release the handles, save, upload and log
 * off; the replies must be byte for byte the same.  GetProperties of a
 * draft followed by its Release was a use-after-free (caught here under
 * AddressSanitizer before the values were copied). */
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

/* ---- dumping replies ---- */
struct sb {
	char *p;
	size_t n, cap;
};
static void sb_add(struct sb *s, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int k = vsnprintf(s->p ? s->p + s->n : NULL, s->p ? s->cap - s->n : 0, fmt, ap);
		va_end(ap);
		if (s->p && (size_t)k < s->cap - s->n) {
			s->n += (size_t)k;
			return;
		}
		s->cap = (s->cap + (size_t)k + 1) * 2;
		s->p = realloc(s->p, s->cap);
	}
}
static void sb_bytes(struct sb *s, struct mb_bytes b)
{
	sb_add(s, "[%u:", b.len);
	for (uint32_t i = 0; i < b.len; i++)
		sb_add(s, "%02x", b.p[i]);
	sb_add(s, "]");
}
static void sb_props(struct sb *s, const struct mb_prop *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint16_t t = MB_PTAG_TYPE(p[i].tag);
		sb_add(s, " %08x=", p[i].tag);
		if (t == MB_PT_STRING || t == MB_PT_BINARY)
			sb_bytes(s, p[i].v.b);
		else if (t == MB_PT_MV_STRING) {
			sb_add(s, "{");
			for (uint16_t j = 0; j < p[i].v.mv.n; j++)
				sb_bytes(s, p[i].v.mv.v[j]);
			sb_add(s, "}");
		} else
			sb_add(s, "%lld", (long long)p[i].v.i);
	}
}
/* A reply op as text (caller frees). */
static char *dump(const struct mb_op_reply *r)
{
	struct sb s = {0};
	sb_add(&s, "code %02x status %d:", r->code, r->status);
	if (r->status)
		return s.p;
	switch (r->code) {
	case MB_OP_OPEN_FOLDER:
		sb_add(&s, "%llx %llx", (unsigned long long)r->u.folder.fid,
		       (unsigned long long)r->u.folder.parent);
		sb_bytes(&s, r->u.folder.name);
		sb_add(&s, "%u %u %u", r->u.folder.count, r->u.folder.unread,
		       r->u.folder.subfolders);
		break;
	case MB_OP_QUERY_ROWS:
	case MB_OP_CALENDAR_RANGE:
	case MB_OP_LIST_CONTACTS:
		sb_add(&s, "%u x %u more %u", r->u.rows.nrows, r->u.rows.ncols, r->u.rows.more);
		sb_props(&s, r->u.rows.vals, r->u.rows.nrows * r->u.rows.ncols);
		break;
	case MB_OP_OPEN_MESSAGE:
	case MB_OP_GET_PROPS:
	case MB_OP_OPEN_ATTACH:
		sb_props(&s, r->u.props.props, r->u.props.n);
		break;
	case MB_OP_READ_STREAM:
	case MB_OP_FT_GET_BUFFER:
		sb_bytes(&s, r->u.stream.data);
		break;
	case MB_OP_RESOLVE_NAMES:
		for (uint16_t i = 0; i < r->u.resolve.n; i++) {
			sb_add(&s, " %d/%u", r->u.resolve.v[i].status, r->u.resolve.v[i].type);
			sb_bytes(&s, r->u.resolve.v[i].name);
			sb_bytes(&s, r->u.resolve.v[i].display);
		}
		break;
	case MB_OP_FREEBUSY:
		for (uint32_t i = 0; i < r->u.freebusy.n; i++)
			sb_add(&s, " %lld-%lld/%u", (long long)r->u.freebusy.blocks[i].start,
			       (long long)r->u.freebusy.blocks[i].end,
			       r->u.freebusy.blocks[i].status);
		break;
	case MB_OP_SYNC_DOWNLOAD:
		sb_add(&s, "wm %llu more %u n %u", (unsigned long long)r->u.sync_down.watermark,
		       r->u.sync_down.more, r->u.sync_down.n);
		for (uint32_t i = 0; i < r->u.sync_down.n; i++) {
			const struct mb_sync_item *it = &r->u.sync_down.items[i];
			sb_add(&s, " <%llu %llu %u", (unsigned long long)it->mid,
			       (unsigned long long)it->cn, it->deleted);
			sb_props(&s, it->props, it->nprops);
			sb_add(&s, ">");
		}
		break;
	case MB_OP_SUBMIT:
		sb_add(&s, "%llu db %u", (unsigned long long)r->u.submit.mid,
		       r->u.submit.databases);
		for (uint32_t i = 0; i < r->u.submit.n; i++)
			sb_add(&s, " %u/%llu", r->u.submit.dl[i].mailbox,
			       (unsigned long long)r->u.submit.dl[i].mid);
		break;
	case MB_OP_MOVE_COPY:
		for (uint32_t i = 0; i < r->u.moved.n; i++)
			sb_add(&s, " %llu", (unsigned long long)r->u.moved.mids[i]);
		break;
	case MB_OP_SYNC_UPLOAD:
		sb_add(&s, "cn %llu", (unsigned long long)r->u.sync_up.cn);
		for (uint32_t i = 0; i < r->u.sync_up.n; i++)
			sb_add(&s, " %llu", (unsigned long long)r->u.sync_up.mids[i]);
		break;
	default:
		sb_add(&s, "rows %u", r->u.table.rows);
	}
	return s.p;
}

/* Send ops[0..n); every status must be 0 unless allowed; dumps of each. */
static char **call(struct mb_client *c, struct mb_op *ops, int n)
{
	struct mb_reply rep;
	assert_int_equal(mb_client_call(c, ops, (uint16_t)n, &rep), 0);
	assert_int_equal(rep.nops, n);
	char **d = calloc((size_t)n, sizeof(*d));
	for (int i = 0; i < n; i++) {
		d[i] = dump(&rep.ops[i]);
		if (rep.ops[i].status)
			fprintf(stderr, "op %d: %s\n", i, d[i]);
		assert_int_equal(rep.ops[i].status, 0);
	}
	return d;
}
static void freed(char **d, int n)
{
	for (int i = 0; i < n; i++)
		free(d[i]);
	free(d);
}
/* one op alone, its dump */
static char *alone(struct mb_client *c, struct mb_op op)
{
	char **d = call(c, &op, 1);
	char *s = d[0];
	free(d);
	return s;
}
static void same(const char *want, const char *got, const char *what)
{
	if (strcmp(want, got)) {
		fprintf(stderr, "MISMATCH %s\n want %.300s\n got  %.300s\n", what, want, got);
		fail();
	}
}

/* ---- the data ---- */
static uint8_t body1[30000], body2[30000], att1[20000];
static uint64_t mid1, mid2, mid3; /* in user 0's Inbox; mid3 has an attachment */

static uint64_t send_to0(struct mb_client *s, const char *subject, const uint8_t *body, size_t blen,
			 bool attach)
{
	struct mb_bytes to[1] = {mb_str(mb_topology_user(T.topo, 0)->name)};
	struct mb_prop mp[3], ap[3];
	opbatch_mail_props(mp, subject, "x", to, 1);
	mp[1] = mb_prop_bytes(MB_PR_BODY, body, (uint32_t)blen);
	struct mb_op ops[9];
	memset(ops, 0, sizeof(ops));
	ap[0] = mb_prop_str(MB_PR_ATTACH_FILENAME, "att1.bin");
	ap[1] = mb_prop_bytes(MB_PR_ATTACH_DATA_BIN, att1, sizeof(att1));
	ap[2] = mb_prop_i64(MB_PR_ATTACH_KIND, MB_CK_OFFICE);
	int n = opbatch_compose_attached(ops, MB_FID(mb_client_mailbox(s), MB_FID_SENT), 7, mp, 3,
					 MB_OP_SUBMIT, 8, ap, 3, attach ? 1 : 0);
	struct mb_reply rep;
	assert_int_equal(mb_client_call(s, ops, (uint16_t)n, &rep), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(rep.ops[i].status, 0);
	assert_int_equal(rep.ops[n - 1].u.submit.n, 1);
	return rep.ops[n - 1].u.submit.dl[0].mid;
}

static void make_data(void)
{
	static bool done;
	if (done)
		return;
	done = true;
	for (size_t i = 0; i < sizeof(body1); i++) {
		body1[i] = (uint8_t)('a' + i % 26);
		body2[i] = (uint8_t)('A' + (i * 7) % 26);
	}
	for (size_t i = 0; i < sizeof(att1); i++)
		att1[i] = (uint8_t)(i * 31 + 7);
	struct mb_client *s = storetest_client(&T, 1, 0);
	assert_non_null(s);
	mid1 = send_to0(s, "first", body1, sizeof(body1), false);
	mid2 = send_to0(s, "second", body2, sizeof(body2), false);
	mid3 = send_to0(s, "third", body2, 5000, true);
	mb_client_destroy(s);
}

static struct mb_op op_open(uint64_t fid, uint64_t mid, uint32_t h)
{
	struct mb_op o = opbatch_op(MB_OP_OPEN_MESSAGE);
	o.u.open_message.fid = fid;
	o.u.open_message.mid = mid;
	o.u.open_message.handle = h;
	return o;
}
static struct mb_op op_qr(uint32_t h, uint32_t max)
{
	struct mb_op o = opbatch_op(MB_OP_QUERY_ROWS);
	o.u.query_rows.handle = h;
	o.u.query_rows.max_rows = max;
	o.u.query_rows.flags = MB_QR_F_RESTART;
	return o;
}

static uint32_t msg_tags[] = {MB_PR_SUBJECT,	  MB_PR_BODY,	    MB_PR_SENDER_NAME,
			      MB_PR_MESSAGE_SIZE, MB_PR_DISPLAY_TO, MB_PR_MESSAGE_CLASS};
static uint32_t row_cols[] = {MB_PR_MID, MB_PR_SUBJECT, MB_PR_BODY, MB_PR_SENDER_NAME};

/* messages: OpenMessage, GetProps (stored and handle values), QueryRows
 * with bodies, then ops that reuse w->val / w->val2 and free the handles */
static void test_messages(void **state)
{
	(void)state;
	make_data();
	struct mb_client *a = storetest_client(&T, 0, 0);
	assert_non_null(a);
	uint64_t inbox = MB_FID(mb_client_mailbox(a), MB_FID_INBOX);
	/* baselines */
	char *o1 = alone(a, op_open(inbox, mid1, 1));
	char *o2 = alone(a, op_open(inbox, mid2, 2));
	char *g1 = alone(a, opbatch_get_props(1, msg_tags, 6));
	char *g2 = alone(a, opbatch_get_props(2, msg_tags, 6));
	struct mb_op t[3] = {opbatch_op(MB_OP_GET_CONTENTS_TABLE), opbatch_op(MB_OP_SET_COLUMNS),
			     op_qr(3, 50)};
	t[0].u.get_table.fid = inbox;
	t[0].u.get_table.handle = 3;
	t[1].u.set_columns.handle = 3;
	t[1].u.set_columns.n = 4;
	t[1].u.set_columns.tags = row_cols;
	freed(call(a, t, 3), 3);
	char *q = alone(a, op_qr(3, 50));
	/* a handle value on an opened message (SetProps on H_MESSAGE) */
	struct mb_prop hp = mb_prop_bytes(MB_PTAG(0x8100, MB_PT_BINARY), body1, 1000);
	struct mb_op sp = opbatch_op(MB_OP_SET_PROPS);
	sp.u.set_props.handle = 2;
	sp.u.set_props.n = 1;
	sp.u.set_props.props = &hp;
	freed(call(a, &sp, 1), 1);
	uint32_t htag[2] = {MB_PTAG(0x8100, MB_PT_BINARY), MB_PR_BODY};
	char *gh = alone(a, opbatch_get_props(2, htag, 2));

	/* combined: reads, then the same worker reads other values, handles
	 * replaced and released, log off */
	struct mb_op ops[16];
	int n = 0;
	ops[n++] = op_open(inbox, mid1, 1);	      /* 0 */
	ops[n++] = opbatch_get_props(1, msg_tags, 6); /* 1 */
	ops[n++] = op_qr(3, 50);		      /* 2 */
	ops[n++] = opbatch_get_props(2, htag, 2);     /* 3 */
	ops[n++] = op_open(inbox, mid2, 1);	      /* 4: replaces handle 1 */
	ops[n++] = opbatch_get_props(1, msg_tags, 6); /* 5 */
	ops[n++] = opbatch_get_props(2, msg_tags, 6); /* 6 */
	ops[n++] = sp;				      /* 7: replaces the handle value */
	ops[n++] = opbatch_release(2);		      /* 8 */
	ops[n++] = opbatch_release(3);		      /* 9 */
	ops[n++] = op_open(inbox, mid3, 1);	      /* 10 */
	ops[n++] = opbatch_get_props(1, msg_tags, 6); /* 11 */
	ops[n++] = opbatch_op(MB_OP_LOGOFF);	      /* 12 */
	char **d = call(a, ops, n);
	same(o1, d[0], "OpenMessage");
	same(g1, d[1], "GetProps m1");
	same(q, d[2], "QueryRows with bodies");
	same(gh, d[3], "GetProps handle value");
	same(o2, d[4], "OpenMessage m2");
	same(g2, d[5], "GetProps m2");
	freed(d, n);
	free(o1), free(o2), free(g1), free(g2), free(q), free(gh);
	mb_client_destroy(a);
}

/* drafts: values replaced by SetProperties, saved, released, logged off */
static void test_draft(void **state)
{
	(void)state;
	make_data();
	struct mb_client *a = storetest_client(&T, 0, 0);
	assert_non_null(a);
	uint64_t sent = MB_FID(mb_client_mailbox(a), MB_FID_SENT);
	struct mb_bytes names1[2] = {mb_str("alpha"), mb_str("beta")},
			names2[2] = {mb_str("gamma"), mb_str("delta")};
	struct mb_prop x[3], y[3];
	x[0] = mb_prop_str(MB_PR_SUBJECT, "subject one");
	x[1] = mb_prop_bytes(MB_PR_BODY, body1, 20000);
	memset(&x[2], 0, sizeof(x[2]));
	x[2].tag = MB_PR_RECIPIENTS;
	x[2].v.mv.n = 2;
	x[2].v.mv.v = names1;
	y[0] = mb_prop_str(MB_PR_SUBJECT, "SUBJECT TWO");
	y[1] = mb_prop_bytes(MB_PR_BODY, body2, 20000);
	y[2] = x[2];
	y[2].v.mv.v = names2;
	uint32_t tags[3] = {MB_PR_SUBJECT, MB_PR_BODY, MB_PR_RECIPIENTS};
	struct sb wx = {0}, wy = {0};
	sb_add(&wx, "code %02x status 0:", MB_OP_GET_PROPS);
	sb_props(&wx, x, 3);
	sb_add(&wy, "code %02x status 0:", MB_OP_GET_PROPS);
	sb_props(&wy, y, 3);
	struct mb_op ops[12];
	int n = 0;
	ops[n] = opbatch_op(MB_OP_CREATE_MESSAGE);
	ops[n].u.create_message.fid = sent;
	ops[n++].u.create_message.handle = 4;
	ops[n] = opbatch_op(MB_OP_SET_PROPS);
	ops[n].u.set_props.handle = 4;
	ops[n].u.set_props.n = 3;
	ops[n++].u.set_props.props = x;
	ops[n++] = opbatch_get_props(4, tags, 3); /* 2: x */
	ops[n] = ops[1];
	ops[n++].u.set_props.props = y;		  /* 3 */
	ops[n++] = opbatch_get_props(4, tags, 3); /* 4: y */
	ops[n] = opbatch_op(MB_OP_SAVE_CHANGES);
	ops[n++].u.save.handle = 4;		  /* 5: clears the handle */
	ops[n++] = opbatch_get_props(4, tags, 3); /* 6: stored */
	ops[n] = ops[1];
	ops[n++].u.set_props.props = x;		  /* 7: on H_MESSAGE */
	ops[n++] = opbatch_get_props(4, tags, 3); /* 8: x */
	ops[n++] = opbatch_release(4);
	ops[n++] = opbatch_op(MB_OP_LOGOFF);
	char **d = call(a, ops, n);
	same(wx.p, d[2], "draft GetProps x");
	same(wy.p, d[4], "draft GetProps y");
	same(wy.p, d[6], "saved GetProps y");
	same(wx.p, d[8], "message handle GetProps x");
	freed(d, n);
	free(wx.p), free(wy.p);
	mb_client_destroy(a);
}

/* streams, attachments: read, then the handle replaced / released */
static void test_streams(void **state)
{
	(void)state;
	make_data();
	struct mb_client *a = storetest_client(&T, 0, 0);
	assert_non_null(a);
	uint64_t inbox = MB_FID(mb_client_mailbox(a), MB_FID_INBOX);
	struct mb_op_reply r;
	/* baselines for the attachment table and attachment */
	struct mb_op b[3];
	b[0] = op_open(inbox, mid3, 1);
	b[1] = opbatch_op(MB_OP_GET_ATTACH_TABLE);
	b[1].u.attach.msg = 1;
	b[1].u.attach.handle = 2;
	b[2] = opbatch_op(MB_OP_OPEN_ATTACH);
	b[2].u.attach.msg = 1;
	b[2].u.attach.num = 1;
	b[2].u.attach.handle = 3;
	char **bd = call(a, b, 3);
	char *at = alone(a, op_qr(2, 10));
	(void)r;

	struct mb_op ops[20];
	int n = 0;
	ops[n++] = op_open(inbox, mid1, 10);			      /* 0 */
	ops[n++] = opbatch_open_stream(10, MB_PR_BODY, 11);	      /* 1 */
	ops[n++] = opbatch_read_stream(11, 100000);		      /* 2: body1 */
	ops[n++] = op_open(inbox, mid2, 10);			      /* 3 */
	ops[n++] = opbatch_open_stream(10, MB_PR_BODY, 11);	      /* 4: replaces 11 */
	ops[n++] = opbatch_read_stream(11, 12345);		      /* 5: body2[0..12345) */
	ops[n++] = opbatch_release(11);				      /* 6 */
	ops[n++] = b[0];					      /* 7 */
	ops[n++] = b[1];					      /* 8 */
	ops[n++] = op_qr(2, 10);				      /* 9 */
	ops[n++] = b[2];					      /* 10 */
	ops[n++] = opbatch_open_stream(3, MB_PR_ATTACH_DATA_BIN, 12); /* 11 */
	ops[n++] = opbatch_read_stream(12, 100000);		      /* 12: att1 */
	ops[n++] = opbatch_release(12);
	ops[n++] = opbatch_release(3);
	ops[n++] = opbatch_release(2);
	ops[n++] = opbatch_open_stream(1, MB_PR_BODY, 2); /* body of mid3 into 2 */
	ops[n++] = opbatch_read_stream(2, 100000);
	ops[n++] = opbatch_op(MB_OP_LOGOFF);
	char **d = call(a, ops, n);
	struct sb s1 = {0}, s2 = {0}, s3 = {0}, s4 = {0};
	sb_add(&s1, "code %02x status 0:", MB_OP_READ_STREAM);
	sb_bytes(&s1, (struct mb_bytes){body1, sizeof(body1)});
	sb_add(&s2, "code %02x status 0:", MB_OP_READ_STREAM);
	sb_bytes(&s2, (struct mb_bytes){body2, 12345});
	sb_add(&s3, "code %02x status 0:", MB_OP_READ_STREAM);
	sb_bytes(&s3, (struct mb_bytes){att1, sizeof(att1)});
	sb_add(&s4, "code %02x status 0:", MB_OP_READ_STREAM);
	sb_bytes(&s4, (struct mb_bytes){body2, 5000});
	same(s1.p, d[2], "ReadStream body1");
	same(s2.p, d[5], "ReadStream body2");
	same(bd[1], d[8], "GetAttachTable");
	same(at, d[9], "QueryRows attachments");
	same(bd[2], d[10], "OpenAttach");
	same(s3.p, d[12], "ReadStream attachment");
	same(s4.p, d[17], "ReadStream body3");
	freed(d, n);
	freed(bd, 3);
	free(at), free(s1.p), free(s2.p), free(s3.p), free(s4.p);
	mb_client_destroy(a);
}

/* address book, resolve names, folders, hierarchy, contacts, calendar,
 * free/busy of a user on another database, then log off */
static void test_book_folders_calendar(void **state)
{
	(void)state;
	make_data();
	struct mb_client *a = storetest_client(&T, 0, 0);
	assert_non_null(a);
	uint32_t mbx = mb_client_mailbox(a);
	int home = mb_topology_user(T.topo, 0)->db, other = -1;
	for (int i = 1; i < mb_topology_user_count(T.topo) && other < 0; i++)
		if (mb_topology_user(T.topo, i)->db != home)
			other = i;
	assert_true(other > 0);
	struct mb_bytes names[4] = {mb_str(mb_topology_user(T.topo, 1)->name), mb_str("nobody"),
				    mb_str(mb_topology_list(T.topo, 0)->name),
				    mb_str(mb_topology_user(T.topo, other)->name)};
	struct mb_op rn = opbatch_op(MB_OP_RESOLVE_NAMES);
	rn.u.resolve.n = 4;
	rn.u.resolve.names = names;
	struct mb_op ab = opbatch_op(MB_OP_GET_AB_TABLE);
	ab.u.ab_table.handle = 5;
	struct mb_op of = opbatch_op(MB_OP_OPEN_FOLDER);
	of.u.open_folder.fid = MB_FID(mbx, MB_FID_INBOX);
	struct mb_op ht = opbatch_op(MB_OP_GET_HIERARCHY_TABLE);
	ht.u.get_table.fid = MB_FID(mbx, MB_FID_ROOT);
	ht.u.get_table.handle = 6;
	struct mb_op cal = opbatch_op(MB_OP_CALENDAR_RANGE);
	cal.u.calendar.start = 0;
	cal.u.calendar.end = INT64_MAX;
	cal.u.calendar.max_rows = 100;
	struct mb_op fb = opbatch_op(MB_OP_FREEBUSY);
	fb.u.freebusy.user = names[3];
	fb.u.freebusy.start = 0;
	fb.u.freebusy.end = INT64_MAX;
	struct mb_op fb0 = fb;
	fb0.u.freebusy.user = mb_str(mb_topology_user(T.topo, 0)->name);
	struct mb_op lc = opbatch_op(MB_OP_LIST_CONTACTS);
	lc.u.list_contacts.max_rows = 100;
	char *brn = alone(a, rn);
	freed(call(a, &ab, 1), 1);
	char *bab = alone(a, op_qr(5, 1000));
	char *bof = alone(a, of);
	freed(call(a, &ht, 1), 1);
	char *bht = alone(a, op_qr(6, 100));
	char *bcal = alone(a, cal);
	char *bfb = alone(a, fb);
	char *bfb0 = alone(a, fb0);
	char *blc = alone(a, lc);
	fprintf(stderr, "calendar %.120s\nfreebusy %.120s\ncontacts %.120s\n", bcal, bfb, blc);

	struct mb_prop cp[2] = {mb_prop_str(MB_PR_DISPLAY_NAME, "Zed Contact"),
				mb_prop_str(MB_PR_EMAIL_ADDRESS, "zed@example.com")};
	struct mb_op cc = opbatch_op(MB_OP_CREATE_CONTACT);
	cc.u.create_contact.n = 2;
	cc.u.create_contact.props = cp;
	struct mb_op ops[20];
	int n = 0;
	ops[n++] = rn;		   /* 0 */
	ops[n++] = op_qr(5, 1000); /* 1 */
	ops[n++] = of;		   /* 2 */
	ops[n++] = op_qr(6, 100);  /* 3 */
	ops[n++] = cal;		   /* 4 */
	ops[n++] = fb;		   /* 5: another database */
	ops[n++] = lc;		   /* 6 */
	ops[n++] = fb0;		   /* 7 */
	ops[n++] = cal;		   /* 8 */
	ops[n++] = fb;		   /* 9 */
	ops[n++] = cc;		   /* 10 */
	ops[n++] = opbatch_release(5);
	ops[n++] = opbatch_release(6);
	ops[n++] = opbatch_op(MB_OP_LOGOFF);
	char **d = call(a, ops, n);
	same(brn, d[0], "ResolveNames");
	same(bab, d[1], "AB QueryRows");
	same(bof, d[2], "OpenFolder");
	same(bht, d[3], "hierarchy QueryRows");
	same(bcal, d[4], "CalendarRange");
	same(bfb, d[5], "FreeBusy other db");
	same(blc, d[6], "ListContacts");
	same(bfb0, d[7], "FreeBusy own");
	same(bcal, d[8], "CalendarRange again");
	same(bfb, d[9], "FreeBusy again");
	freed(d, n);
	free(brn), free(bab), free(bof), free(bht), free(bcal), free(bfb), free(bfb0), free(blc);
	mb_client_destroy(a);
}

static void state_ops(struct mb_op *ops, int *n, uint32_t h, uint32_t tag, const uint8_t *b,
		      size_t len)
{
	ops[*n] = opbatch_op(MB_OP_SYNC_STATE_BEGIN);
	ops[*n].u.sync_state.handle = h;
	ops[*n].u.sync_state.tag = tag;
	ops[(*n)++].u.sync_state.size = (uint32_t)len;
	ops[*n] = opbatch_op(MB_OP_SYNC_STATE_CONTINUE);
	ops[*n].u.sync_state.handle = h;
	ops[*n].u.sync_state.data.p = b;
	ops[(*n)++].u.sync_state.data.len = (uint32_t)len;
	ops[*n] = opbatch_op(MB_OP_SYNC_STATE_END);
	ops[(*n)++].u.sync_state.handle = h;
}

/* sync: downloads with bodies (by folder, by context, hierarchy), uploads,
 * the checkpoint buffer, then contexts released and logged off */
static void test_sync(void **state)
{
	(void)state;
	make_data();
	struct mb_client *a = storetest_client(&T, 0, 0);
	assert_non_null(a);
	uint32_t mbx = mb_client_mailbox(a);
	uint64_t inbox = MB_FID(mbx, MB_FID_INBOX);
	struct mb_op sd = opbatch_op(MB_OP_SYNC_DOWNLOAD);
	sd.u.sync_down.fid = inbox;
	sd.u.sync_down.flags = MB_SD_F_BODY;
	sd.u.sync_down.max = 1000;
	char *bsd = alone(a, sd);

	static uint8_t given[16], empty[4], hgiven[16];
	struct mb_idrange g = {1, 3}, hg = {MB_FID_INBOX, MB_FID_INBOX};
	size_t glen = mb_idset_encode(&g, 1, given), elen = mb_idset_encode(NULL, 0, empty);
	size_t hglen = mb_idset_encode(&hg, 1, hgiven);
	static struct mb_op ops[64];
	int n = 0;
	ops[n] = opbatch_op(MB_OP_SYNC_CONFIGURE);
	ops[n].u.sync_cfg.fid = inbox;
	ops[n++].u.sync_cfg.handle = 7;
	state_ops(ops, &n, 7, MB_META_IDSET_GIVEN, given, glen);
	state_ops(ops, &n, 7, MB_META_CNSET_SEEN, empty, elen);
	state_ops(ops, &n, 7, MB_META_CNSET_SEEN_FAI, empty, elen);
	state_ops(ops, &n, 7, MB_META_CNSET_READ, empty, elen);
	ops[n] = opbatch_op(MB_OP_SYNC_CONFIGURE);
	ops[n].u.sync_cfg.fid = MB_FID(mbx, MB_FID_ROOT);
	ops[n].u.sync_cfg.flags = MB_SC_F_HIERARCHY;
	ops[n++].u.sync_cfg.handle = 8;
	state_ops(ops, &n, 8, MB_META_IDSET_GIVEN, hgiven, hglen);
	state_ops(ops, &n, 8, MB_META_CNSET_SEEN, empty, elen);
	ops[n] = opbatch_op(MB_OP_SYNC_OPEN_COLLECTOR);
	ops[n].u.sync_cfg.fid = MB_FID(mbx, MB_FID_DELETED);
	ops[n++].u.sync_cfg.handle = 20;
	state_ops(ops, &n, 20, MB_META_CNSET_SEEN, empty, elen);
	state_ops(ops, &n, 20, MB_META_CNSET_SEEN_FAI, empty, elen);
	state_ops(ops, &n, 20, MB_META_CNSET_READ, empty, elen);
	int prep = n;
	freed(call(a, ops, n), n);
	/* baseline: context download and hierarchy download, fresh contexts */
	struct mb_op cd = opbatch_op(MB_OP_SYNC_DOWNLOAD);
	cd.u.sync_down.handle = 7;
	cd.u.sync_down.flags = MB_SD_F_BODY;
	cd.u.sync_down.max = 1000;
	struct mb_op hd = cd;
	hd.u.sync_down.handle = 8;
	char *bcd = alone(a, cd);
	char *bhd = alone(a, hd);
	struct mb_op gs = opbatch_op(MB_OP_SYNC_GET_STATE);
	gs.u.sync_xfer.handle = 20;
	gs.u.sync_xfer.out = 21;
	struct mb_op fg = opbatch_op(MB_OP_FT_GET_BUFFER);
	fg.u.read_stream.handle = 21;
	fg.u.read_stream.max = 28672;
	freed(call(a, &gs, 1), 1);
	char *bfg = alone(a, fg);
	/* again with fresh contexts, in one request with what frees them */
	n = prep;
	ops[n++] = sd; /* prep+0 */
	ops[n++] = cd; /* +1 */
	ops[n++] = hd; /* +2 */
	ops[n++] = gs; /* +3 */
	ops[n++] = fg; /* +4 */
	ops[n++] = opbatch_release(21);
	ops[n++] = gs; /* +6: replaces 21 */
	ops[n++] = fg; /* +7 */
	ops[n++] = opbatch_release(7);
	ops[n++] = opbatch_release(8);
	struct mb_sync_change ch[1];
	memset(ch, 0, sizeof(ch));
	struct mb_prop up[2] = {mb_prop_str(MB_PR_MESSAGE_CLASS, "IPM.Note"),
				mb_prop_str(MB_PR_SUBJECT, "uploaded")};
	ch[0].kind = MB_SYNC_CREATE;
	ch[0].nprops = 2;
	ch[0].props = up;
	ops[n] = opbatch_op(MB_OP_SYNC_UPLOAD);
	ops[n].u.sync_up.handle = 20;
	ops[n].u.sync_up.n = 1;
	ops[n++].u.sync_up.changes = ch; /* +10: changes the collector's state */
	ops[n++] = opbatch_release(20);
	ops[n++] = opbatch_op(MB_OP_LOGOFF);
	char **d = call(a, ops, n);
	same(bsd, d[prep + 0], "SyncDownload body");
	same(bcd, d[prep + 1], "context SyncDownload");
	same(bhd, d[prep + 2], "hierarchy SyncDownload");
	same(bfg, d[prep + 4], "FastTransferGetBuffer");
	same(bfg, d[prep + 7], "FastTransferGetBuffer again");
	freed(d, n);
	free(bsd), free(bcd), free(bhd), free(bfg);
	mb_client_destroy(a);
}

/* submit, move/copy, delete, then log off */
static void test_submit_move(void **state)
{
	(void)state;
	make_data();
	struct mb_client *a = storetest_client(&T, 0, 0);
	assert_non_null(a);
	uint32_t mbx = mb_client_mailbox(a);
	struct mb_bytes to[3] = {mb_str(mb_topology_user(T.topo, 2)->name),
				 mb_str(mb_topology_user(T.topo, 3)->name),
				 mb_str(mb_topology_list(T.topo, 0)->name)};
	struct mb_prop mp[3];
	opbatch_mail_props(mp, "to many", "body", to, 3);
	struct mb_op ops[16];
	memset(ops, 0, sizeof(ops));
	int n = opbatch_compose(ops, MB_FID(mbx, MB_FID_SENT), 7, mp, 3, MB_OP_SUBMIT);
	uint64_t mids[2] = {mid1, mid2};
	ops[n] = opbatch_op(MB_OP_MOVE_COPY);
	ops[n].u.move_copy.src_fid = MB_FID(mbx, MB_FID_INBOX);
	ops[n].u.move_copy.dst_fid = MB_FID(mbx, MB_FID_DELETED);
	ops[n].u.move_copy.flags = MB_MC_F_COPY;
	ops[n].u.move_copy.n = 2;
	ops[n++].u.move_copy.mids = mids; /* 3 */
	n += opbatch_compose(ops + n, MB_FID(mbx, MB_FID_SENT), 7, mp, 3,
			     MB_OP_SUBMIT); /* 4..6: a second submit, handle 7 again */
	ops[n++] = opbatch_op(MB_OP_LOGOFF);
	struct mb_reply rep;
	assert_int_equal(mb_client_call(a, ops, (uint16_t)n, &rep), 0);
	for (int i = 0; i < n; i++) {
		char *s = dump(&rep.ops[i]);
		fprintf(stderr, "%d: %.200s\n", i, s);
		free(s);
		assert_int_equal(rep.ops[i].status, 0);
	}
	assert_true(rep.ops[2].u.submit.n >= 2);
	for (uint32_t i = 0; i < rep.ops[2].u.submit.n; i++)
		assert_true(rep.ops[2].u.submit.dl[i].mid != 0);
	assert_true(rep.ops[3].u.moved.mids[0] != 0 && rep.ops[3].u.moved.mids[1] != 0);
	mb_client_destroy(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_messages), cmocka_unit_test(test_draft),
	    cmocka_unit_test(test_streams),  cmocka_unit_test(test_book_folders_calendar),
	    cmocka_unit_test(test_sync),     cmocka_unit_test(test_submit_move),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
