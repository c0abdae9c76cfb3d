/* drivers/mbstore_view.c: the mbstore driver's reading steps: a folder view
 * (OpenFolder, GetContentsTable, SetColumns, SortTable, QueryRows, the notification
 * registration; answered from the replica in cached mode), next rows, close,
 * read and mark read (body streamed in STREAM_CHUNK ReadStreams), open
 * attachment, calendar range and the contacts list.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/content.h"
#include "core/error.h"
#include "load/drivers/mbstore_int.h"
#include "load/drivers/reqbuild.h"
#include "load/replica.h"
#include "load/target.h"
#include "proto/proto.h"

/* ---- steps: views ----------------------------------------------------------------- */

/* Cached mode: a folder listed from the replica. */
static int list_local(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res)
{
	struct mbs_user *m = M(u);
	struct mbs_shard *sh = SH(u);
	int slot = mb_replica_slot(m->rep, local_of(u, s->folder));
	res->local = true;
	res->ids = sh->ids;
	res->flags = sh->flags;
	res->who = sh->who;
	res->n = 0;
	if (slot < 0)
		return 0;
	const struct mb_rfolder *f = &m->rep->f[slot];
	for (uint32_t i = 0; i < f->n && res->n < ITEMS && (uint32_t)res->n < s->max_rows; i++) {
		sh->ids[res->n] = f->items[i].mid;
		sh->flags[res->n] = (f->items[i].flags & MB_MSGFLAG_READ) ? MB_ITEM_READ : 0;
		sh->who[res->n] = f->items[i].who;
		res->n++;
	}
	res->count = f->n;
	res->count2 = m->rep->f[MB_RSLOT_DELETED].n;
	return 0;
}

int mb__mbs_emit_list_folder(struct mb_tuser *u, const struct mb_step *s,
			     struct mb_step_result *res)
{
	struct mbs_user *m = M(u);
	if (m->rep)
		return list_local(u, s, res);
	m->view = s->folder == MB_FOLDER_DELETED ? H_TABLE2 : H_TABLE;
	mb__mbs_emit_open_table(u, local_of(u, s->folder), m->view, s->max_rows,
				(s->flags & MB_STEP_F_NOTIFY) != 0);
	if (s->flags &
	    MB_STEP_F_DELETED_COUNT) /* the second OpenFolder: Deleted Items (its size) */
		mb__rb_op(RB(u), MB_OP_OPEN_FOLDER)->u.open_folder.fid = fid_of(u, MB_FID_DELETED);
	return mb__mbs_send_rpc(u);
}

int mb__mbs_took_list(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res)
{
	int rc = mb__mbs_take_rows(u, r, MB_OP_QUERY_ROWS, res);
	if (rc)
		return rc;
	const struct mb_op_reply *fi = mb__mbs_find_op(r, MB_OP_OPEN_FOLDER, 0);
	const struct mb_op_reply *fd = mb__mbs_find_op(r, MB_OP_OPEN_FOLDER, 1);
	res->count = fi && fi->status == 0 ? fi->u.folder.count : 0;
	res->count2 = fd && fd->status == 0 ? fd->u.folder.count : 0;
	return 0;
}

int mb__mbs_emit_close_view(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res)
{
	(void)s;
	(void)res;
	struct mbs_user *m = M(u);
	if (m->rep || !m->view)
		return 0;
	mb__mbs_emit_view_release(u);
	return mb__mbs_send_rpc(u);
}

/* The view's next screen of rows (no view open: none). */
int mb__mbs_emit_next_rows(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res)
{
	struct mbs_user *m = M(u);
	if (m->rep || !m->view) {
		res->local = m->rep != NULL;
		return 0;
	}
	struct mb_op *op = mb__rb_op(RB(u), MB_OP_QUERY_ROWS);
	op->u.query_rows.handle = m->view;
	op->u.query_rows.max_rows = s->max_rows;
	return mb__mbs_send_rpc(u);
}

int mb__mbs_took_next_rows(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res)
{
	return mb__mbs_take_rows(u, r, MB_OP_QUERY_ROWS, res);
}

/* Stream the rest of H_STREAM, STREAM_PACK ReadStreams per request at
 * most (RopReadStream's responses are packed as GetBuffer's are,
 * MS-OXCRPC 3.1.4.2.1.2), no more than its size needs: 1 a request is
 * out, 0 nothing left. */
static int stream_more(struct mb_tuser *u)
{
	struct mbs_user *m = M(u);
	if (m->stream_left == 0)
		return 0;
	for (uint32_t k = 0, n = mb__mbs_stream_rounds(m->stream_left); k < n; k++) {
		struct mb_op *op = mb__rb_op(RB(u), MB_OP_READ_STREAM);
		op->u.read_stream.handle = H_STREAM;
		op->u.read_stream.max = STREAM_CHUNK;
	}
	return mb__mbs_send_rpc(u);
}

/* OpenStream + first ReadStream of property tag of object obj. */
static void emit_stream_open(struct mb_tuser *u, uint32_t obj, uint32_t tag)
{
	struct mb__rb *rb = RB(u);
	struct mb_op *op = mb__rb_op(rb, MB_OP_OPEN_STREAM);
	op->u.open_stream.obj = obj;
	op->u.open_stream.tag = tag;
	op->u.open_stream.handle = H_STREAM;
	op = mb__rb_op(rb, MB_OP_READ_STREAM);
	op->u.read_stream.handle = H_STREAM;
	op->u.read_stream.max = STREAM_CHUNK;
}

/* What the stream ops of a reply leave to read: 0 or < 0. */
static int stream_took(struct mb_tuser *u, const struct mb_reply *r)
{
	struct mbs_user *m = M(u);
	const struct mb_op_reply *o = mb__mbs_find_op(r, MB_OP_OPEN_STREAM, 0);
	if (o) {
		if (o->status != 0)
			return o->status;
		m->stream_left = o->u.table.rows;
	}
	for (int k = 0;; k++) {
		const struct mb_op_reply *d = mb__mbs_find_op(r, MB_OP_READ_STREAM, k);
		if (k > 0 && !d)
			return 0;
		if (!d || d->status != 0) {
			m->stream_left = 0;
			return mb__mbs_op_status(d);
		}
		uint32_t got = d->u.stream.data.len;
		m->stream_left = got == 0 || got >= m->stream_left ? 0 : m->stream_left - got;
	}
}

/* Read one message as Outlook opens it in the reading pane:
 *   OpenMessage, GetPropertiesSpecific (the header: subject, sender,
 *   recipients, flags, size, has-attachments), OpenStream(PR_BODY) and
 *   ReadStream, [GetAttachmentTable + QueryRows when the view showed
 *   attachments], [mark read: SetProperties(PR_MESSAGE_FLAGS) +
 *   SaveChangesMessage]; then ReadStream per request until the body is
 *   in; the handles are released with the next request (the message stays
 *   open meanwhile: an attachment opened next needs no second OpenMessage). */
/* Mark message handle h read: SetProperties(PR_MESSAGE_FLAGS) + SaveChangesMessage. */
static void emit_mark_read(struct mb__rb *rb, uint32_t h)
{
	struct mb_prop *p = mb__rb_props(rb, 1);
	p[0] = mb_prop_i64(MB_PR_MESSAGE_FLAGS, MB_MSGFLAG_READ);
	mb__mbs_emit_save(rb, h, p, 1);
}

int mb__mbs_emit_read(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res)
{
	struct mbs_user *m = M(u);
	if (m->rep) { /* the replica holds it */
		res->local = true;
		u->st->n.local_reads++;
		return 0;
	}
	struct mb__rb *rb = RB(u);
	bool mark = s->kind == MB_STEP_MARK_READ || (s->flags & MB_STEP_F_MARK_READ);
	mb__mbs_keep_open(u, H_MSG); /* reopened under the same handle */
	mb__mbs_emit_open_message(u, local_of(u, s->folder), s->item);
	if (s->kind == MB_STEP_MARK_READ) {
		/* only the read flag */
		emit_mark_read(rb, H_MSG);
		m->stream_left = 0;
		m->atts = 0;
		return mb__mbs_send_rpc(u);
	}
	struct mb_op *op = mb__rb_op(rb, MB_OP_GET_PROPS);
	uint32_t *t = mb__rb_tags(rb, 6);
	t[0] = MB_PR_SUBJECT;
	t[1] = MB_PR_SENDER_NAME;
	t[2] = MB_PR_RECIPIENTS;
	t[3] = MB_PR_MESSAGE_FLAGS;
	t[4] = MB_PR_MESSAGE_SIZE;
	t[5] = MB_PR_HASATTACH;
	op->u.get_props.handle = H_MSG;
	op->u.get_props.n = 6;
	op->u.get_props.tags = t;
	emit_stream_open(u, H_MSG, MB_PR_BODY);
	if (s->flags & MB_STEP_F_ATTACH) {
		op = mb__rb_op(rb, MB_OP_GET_ATTACH_TABLE);
		op->u.attach.msg = H_MSG;
		op->u.attach.handle = H_ATABLE;
		op = mb__rb_op(rb, MB_OP_QUERY_ROWS);
		op->u.query_rows.handle = H_ATABLE;
		op->u.query_rows.flags = MB_QR_F_RESTART;
		op->u.query_rows.max_rows = 32;
	}
	if (mark) {
		emit_mark_read(rb, H_MSG);
	}
	m->phase = 1;
	m->atts = 0;
	m->stream_left = 0;
	return mb__mbs_send_rpc(u);
}

int mb__mbs_took_read(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res)
{
	struct mbs_user *m = M(u);
	if (m->kind == MB_STEP_MARK_READ) {
		mb__mbs_release_later(u, H_MSG);
		return mb__mbs_op_status(mb__mbs_find_op(r, MB_OP_OPEN_MESSAGE, 0));
	}
	if (m->phase == 1) {
		const struct mb_op_reply *o = mb__mbs_find_op(r, MB_OP_OPEN_MESSAGE, 0);
		if (!o || o->status != 0) {
			m->open_mid = 0;
			return mb__mbs_op_status(o);
		}
		const struct mb_op_reply *p = mb__mbs_find_op(r, MB_OP_GET_PROPS, 0);
		const struct mb_prop *h =
		    p && p->status == 0
			? mb_props_find(p->u.props.props, p->u.props.n, MB_PR_HASATTACH)
			: NULL;
		const struct mb_op_reply *q = mb__mbs_find_op(r, MB_OP_QUERY_ROWS, 0);
		if (q && q->status == 0) {
			m->atts = (uint8_t)(q->u.rows.nrows < 255 ? q->u.rows.nrows : 255);
			mb__mbs_release_later(u, H_ATABLE);
		} else if (h && MB_PTAG_TYPE(h->tag) == MB_PT_BOOL && h->v.i) {
			m->atts = 1;
		}
		m->phase = 2;
	}
	int rc = stream_took(u, r);
	if (rc == 0 && m->stream_left > 0)
		return stream_more(u);
	mb__mbs_release_later(u, H_STREAM);
	mb__mbs_release_later(u, H_MSG);
	res->count = m->atts;
	return rc;
}

/* Open attachment s->aux of message s->item and stream its data:
 *   [OpenMessage unless it is still open], OpenAttachment,
 *   OpenStream(PR_ATTACH_DATA_BIN), ReadStream; ReadStream per request. */
int mb__mbs_emit_open_attachment(struct mb_tuser *u, const struct mb_step *s,
				 struct mb_step_result *res)
{
	(void)res;
	struct mbs_user *m = M(u);
	if (m->rep)
		return 0;
	struct mb__rb *rb = RB(u);
	if (!(m->open_mid == s->item && mb__mbs_keep_open(u, H_MSG))) {
		mb__mbs_keep_open(u, H_MSG);
		mb__mbs_emit_open_message(u, local_of(u, s->folder), s->item);
	}
	mb__mbs_keep_open(u, H_STREAM);
	struct mb_op *op = mb__rb_op(rb, MB_OP_OPEN_ATTACH);
	op->u.attach.msg = H_MSG;
	op->u.attach.num = s->aux ? s->aux : 1;
	op->u.attach.handle = H_ATT;
	emit_stream_open(u, H_ATT, MB_PR_ATTACH_DATA_BIN);
	m->stream_left = 0;
	return mb__mbs_send_rpc(u);
}

int mb__mbs_took_open_attachment(struct mb_tuser *u, const struct mb_reply *r,
				 struct mb_step_result *res)
{
	(void)res;
	const struct mb_op_reply *a = mb__mbs_find_op(r, MB_OP_OPEN_ATTACH, 0);
	if (a && a->status != 0)
		return a->status;
	int rc = stream_took(u, r);
	if (rc == 0 && M(u)->stream_left > 0)
		return stream_more(u);
	mb__mbs_release_later(u, H_STREAM);
	mb__mbs_release_later(u, H_ATT);
	mb__mbs_release_later(u, H_MSG);
	return rc;
}

int mb__mbs_emit_calendar(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res)
{
	(void)res;
	struct mb__rb *rb = RB(u);
	if (s->flags & MB_STEP_F_OPEN_FOLDER)
		mb__rb_op(rb, MB_OP_OPEN_FOLDER)->u.open_folder.fid = fid_of(u, MB_FID_CALENDAR);
	struct mb_op *op = mb__rb_op(rb, MB_OP_CALENDAR_RANGE);
	op->u.calendar.start = s->start_ms;
	op->u.calendar.end = s->end_ms;
	op->u.calendar.max_rows = s->max_rows;
	return mb__mbs_send_rpc(u);
}

int mb__mbs_took_calendar(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res)
{
	return mb__mbs_take_rows(u, r, MB_OP_CALENDAR_RANGE, res);
}

int mb__mbs_emit_list_contacts(struct mb_tuser *u, const struct mb_step *s,
			       struct mb_step_result *res)
{
	(void)res;
	struct mb_op *op = mb__rb_op(RB(u), MB_OP_LIST_CONTACTS);
	op->u.list_contacts.start = s->start_row;
	op->u.list_contacts.max_rows = s->max_rows;
	return mb__mbs_send_rpc(u);
}

int mb__mbs_took_list_contacts(struct mb_tuser *u, const struct mb_reply *r,
			       struct mb_step_result *res)
{
	return mb__mbs_take_rows(u, r, MB_OP_LIST_CONTACTS, res);
}
