/* drivers/mbstore_req.c: the bottom of the mbstore driver: sending the
 * batch the builder holds (with the releases a previous step left), reply
 * decoding (an operation's reply, rows into the step result) and the
 * batches several steps encode (open a table, release a view, compose a
 * message, acknowledge a create).
 * Invariant: the builder is empty again when send returns (reqbuild.h).
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

/* ---- request builder ------------------------------------------------------------ */

/* The request being built is dropped: empty, and the upload contexts it
 * would have opened are not open. */
void mb__mbs_drop_request(struct mb_tuser *u)
{
	struct mbs_user *m = M(u);
	m->up_open &= ~m->up_new;
	m->up_new = 0;
	mb__rb_reset(RB(u));
}

/* Encode the builder as one request and send it: 1, or < 0. */
int mb__mbs_send_rpc(struct mb_tuser *u)
{
	struct mbs_shard *sh = SH(u);
	struct mbs_user *m = M(u);
	struct mb__rb *rb = &sh->rb;
	if (mb__rb_error(rb)) {
		/* something did not fit: the action fails, nothing is sent */
		int err = mb__rb_error(rb);
		mb__mbs_drop_request(u);
		return err;
	}
	if (rb->nops == 0) {
		mb__mbs_drop_request(u);
		return MB_EINVAL;
	}
	if (m->nrel && rb->nops + m->nrel <= MB_RB_OPS) {
		/* Outlook sends its pending releases with its next RPC, first */
		memmove(rb->ops + m->nrel, rb->ops, (size_t)rb->nops * sizeof(rb->ops[0]));
		for (int i = 0; i < m->nrel; i++) {
			memset(&rb->ops[i], 0, sizeof(rb->ops[i]));
			rb->ops[i].code = MB_OP_RELEASE;
			rb->ops[i].u.release.handle = m->rel[i];
		}
		rb->nops += m->nrel;
		m->nrel = 0;
	} else if (m->nrel) {
		/* No room in front of a full request: the releases wait for
		 * the next one, except those of a handle this request opens
		 * again (the store releases the old one then), which would
		 * release the new one. */
		for (int i = 0; i < rb->nops; i++) {
			int64_t h = mb_op_opens_handle(&rb->ops[i]);
			if (h >= 0 && h <= UINT8_MAX)
				mb__mbs_keep_open(u, (uint8_t)h);
		}
	}
	struct mb_request req = {.seq = ++m->seq, .nops = (uint16_t)rb->nops, .ops = rb->ops};
	struct mb_codec_opts opts = {
	    .lz77 = m->compress ? sh->lz77 : NULL, .min_bytes = m->compress_min, .max_frame = 0};
	mb_buf_reset(sh->enc);
	size_t wire = 0;
	int rc = mb_request_encode(sh->enc, sh->enc_tmp, &req, &opts, &wire);
	if (rc != 0) {
		mb__mbs_drop_request(u);
		return rc;
	}
	m->up_new = 0; /* the contexts it opens are open once it is out */
	mb_target_request(u, 0, mb_op_index(rb->ops[0].code), rb->nops);
	for (int i = 0; i < rb->nops; i++)
		mb_target_count_op(u, mb_op_index(rb->ops[i].code));
	mb__rb_reset(rb);
	m->busy = true;
	rc = mb_target_write(u, 0, mb_buf_data(sh->enc), mb_buf_len(sh->enc));
	return rc == 0 ? 1 : rc;
}

/* OpenMessage of message mid in local folder `local` under H_MSG, which
 * names that message from now on. */
void mb__mbs_emit_open_message(struct mb_tuser *u, uint32_t local, uint64_t mid)
{
	struct mb_op *op = mb__rb_op(RB(u), MB_OP_OPEN_MESSAGE);
	op->u.open_message.fid = fid_of(u, local);
	op->u.open_message.mid = mid;
	op->u.open_message.handle = H_MSG;
	M(u)->open_mid = mid;
}

/* SetProperties of p[0..n) on handle h, then SaveChangesMessage. */
void mb__mbs_emit_save(struct mb__rb *rb, uint32_t h, struct mb_prop *p, uint16_t n)
{
	struct mb_op *op = mb__rb_op(rb, MB_OP_SET_PROPS);
	op->u.set_props.handle = h;
	op->u.set_props.n = n;
	op->u.set_props.props = p;
	mb__rb_op(rb, MB_OP_SAVE_CHANGES)->u.save.handle = h;
}

/* Release handle h with the next request. */
void mb__mbs_release_later(struct mb_tuser *u, uint8_t h)
{
	struct mbs_user *m = M(u);
	for (int i = 0; i < m->nrel; i++)
		if (m->rel[i] == h)
			return;
	if (m->nrel < RELEASES_MAX)
		m->rel[m->nrel++] = h;
}

/* Keep handle h open after all (its release was pending): 1 it was. */
int mb__mbs_keep_open(struct mb_tuser *u, uint8_t h)
{
	struct mbs_user *m = M(u);
	for (int i = 0; i < m->nrel; i++)
		if (m->rel[i] == h) {
			m->rel[i] = m->rel[--m->nrel];
			return 1;
		}
	return 0;
}

/* ---- reply helpers -------------------------------------------------------------- */

const struct mb_op_reply *mb__mbs_find_op(const struct mb_reply *r, uint8_t code, int nth)
{
	for (int i = 0; r && i < r->nops; i++)
		if (r->ops[i].code == code && nth-- == 0)
			return &r->ops[i];
	return NULL;
}

int mb__mbs_op_status(const struct mb_op_reply *o) { return !o ? MB_EPROTO : o->status; }

/* The rows that reply op code returned, into the shard's result arrays
 * (ids, read flags, senders); the op's error if it failed. */
int mb__mbs_take_rows(struct mb_tuser *u, const struct mb_reply *r, uint8_t code,
		      struct mb_step_result *res)
{
	struct mbs_shard *sh = SH(u);
	const struct mb_op_reply *q = mb__mbs_find_op(r, code, 0);
	if (!q || q->status != 0)
		return mb__mbs_op_status(q);
	res->n = 0;
	res->ids = sh->ids;
	res->flags = sh->flags;
	res->who = sh->who;
	for (uint32_t i = 0; i < q->u.rows.nrows && res->n < ITEMS; i++) {
		const struct mb_prop *row = &q->u.rows.vals[(size_t)i * q->u.rows.ncols];
		const struct mb_prop *mp = mb_props_find(row, q->u.rows.ncols, MB_PR_MID);
		if (!mp || MB_PTAG_TYPE(mp->tag) != MB_PT_I64)
			continue;
		const struct mb_prop *f = mb_props_find(row, q->u.rows.ncols, MB_PR_MESSAGE_FLAGS);
		const struct mb_prop *s = mb_props_find(row, q->u.rows.ncols, MB_PR_SENDER_NAME);
		const struct mb_prop *a = mb_props_find(row, q->u.rows.ncols, MB_PR_HASATTACH);
		sh->ids[res->n] = (uint64_t)mp->v.i;
		/* unknown flags count as read: only what is known new is new */
		sh->flags[res->n] =
		    f && MB_PTAG_TYPE(f->tag) == MB_PT_I32 && !(f->v.i & MB_MSGFLAG_READ)
			? 0
			: MB_ITEM_READ;
		if (a && MB_PTAG_TYPE(a->tag) == MB_PT_BOOL && a->v.i)
			sh->flags[res->n] |= MB_ITEM_ATTACH;
		sh->who[res->n] = s && MB_PTAG_TYPE(s->tag) == MB_PT_STRING
				      ? mb_target_find_user(u, (const char *)s->v.b.p, s->v.b.len)
				      : -1;
		res->n++;
	}
	res->more = q->u.rows.more != 0;
	return 0;
}

/* ---- encoders of common batches --------------------------------------------------- */

/* A folder view: OpenFolder, GetContentsTable, SetColumns (the view's
 * columns: id, flags, sender, subject, size, has-attachments), SortTable
 * (received, newest first: Outlook's default view of a mail folder),
 * QueryRows of the first screen, and with notify RegisterNotification on
 * the folder ([MS-OXCTABL] 4.1: the columns, the sort and the first rows in
 * one request). */
/* GetContentsTable(local) as handle h, SetColumns of a view's columns,
 * SortTable by delivery time, newest first. */
void mb__mbs_emit_view_table(struct mb_tuser *u, uint32_t local, uint32_t h)
{
	struct mb__rb *rb = RB(u);
	struct mb_op *op = mb__rb_op(rb, MB_OP_GET_CONTENTS_TABLE);
	op->u.get_table.fid = fid_of(u, local);
	op->u.get_table.handle = h;
	op = mb__rb_op(rb, MB_OP_SET_COLUMNS);
	uint32_t *t = mb__rb_tags(rb, 6);
	t[0] = MB_PR_MID;
	t[1] = MB_PR_MESSAGE_FLAGS;
	t[2] = MB_PR_SENDER_NAME;
	t[3] = MB_PR_SUBJECT;
	t[4] = MB_PR_MESSAGE_SIZE;
	t[5] = MB_PR_HASATTACH;
	op->u.set_columns.handle = h;
	op->u.set_columns.n = 6;
	op->u.set_columns.tags = t;
	op = mb__rb_op(rb, MB_OP_SORT_TABLE);
	op->u.sort_table.handle = h;
	op->u.sort_table.n = 1;
	op->u.sort_table.keys[0] = (struct mb_sort_key){MB_PR_DELIVERY_TIME, MB_SORT_DESC};
}

void mb__mbs_emit_open_table(struct mb_tuser *u, uint32_t local, uint32_t h, uint32_t max_rows,
			     bool notify)
{
	struct mb__rb *rb = RB(u);
	mb__rb_op(rb, MB_OP_OPEN_FOLDER)->u.open_folder.fid = fid_of(u, local);
	mb__mbs_emit_view_table(u, local, h);
	struct mb_op *op;
	if (notify) {
		op = mb__rb_op(rb, MB_OP_REGISTER_NOTIFY);
		op->u.get_table.fid = fid_of(u, local);
		op->u.get_table.handle = H_VNOTIFY;
		M(u)->vnotify = true;
	}
	op = mb__rb_op(rb, MB_OP_QUERY_ROWS);
	op->u.query_rows.handle = h;
	op->u.query_rows.flags = MB_QR_F_RESTART;
	op->u.query_rows.max_rows = max_rows;
}

/* Release the open view (and its notification registration). */
void mb__mbs_emit_view_release(struct mb_tuser *u)
{
	struct mbs_user *m = M(u);
	mb__rb_op(RB(u), MB_OP_RELEASE)->u.release.handle = m->view;
	m->view = 0;
	if (m->vnotify)
		mb__rb_op(RB(u), MB_OP_RELEASE)->u.release.handle = H_VNOTIFY;
	m->vnotify = false;
}

/* Set the properties of a new message of this kind on handle h: class,
 * subject, recipients (PR_RECIPIENTS), body (and times of a meeting), and
 * `extra` when not NULL (in the same SetProperties). */
void mb__mbs_compose(struct mb_tuser *u, uint32_t h, const struct mb_step *s,
		     const struct mb_prop *extra)
{
	struct mbs_shard *sh = SH(u);
	struct mb__rb *rb = &sh->rb;
	const struct mb_target_env *env = u->env;
	int nu = s->nusers, nl = s->nlists;
	struct mb_bytes *names = mb__rb_strs(rb, nu + nl);
	if (!names)
		return; /* more recipients than a batch holds: the send fails (MB_ETOOBIG) */
	for (int i = 0; i < nu; i++)
		names[i] = mb_str(mb_topology_user(env->accounts, (int)s->users[i])->name);
	for (int i = 0; i < nl; i++)
		names[nu + i] = mb_str(mb_topology_list(env->accounts, (int)s->lists[i])->name);
	size_t blen = s->size < sh->body_cap ? s->size : sh->body_cap;
	enum mb_content_kind bk =
	    s->body_kind < MB_CK_COUNT ? (enum mb_content_kind)s->body_kind : MB_CK_TEXT;
	mb_content_fill_kind(bk, s->seed, sh->body, blen);
	char subj[96];
	mb_content_subject(s->seed, subj, sizeof(subj));

	bool meeting = s->msg_kind == MB_MSG_MEETING;
	struct mb_op *op = mb__rb_op(rb, MB_OP_SET_PROPS);
	op->u.set_props.handle = h;
	int np = meeting ? 6 : 4;
	struct mb_prop *p = mb__rb_props(rb, np + (extra ? 1 : 0));
	static const char *const cls[] = {"IPM.Note", "IPM.Note", "IPM.Note",
					  "IPM.Schedule.Meeting.Request"};
	static const char *const pre[] = {"", "RE: ", "FW: ", ""};
	int k = s->msg_kind < MB_MSG_KIND_COUNT ? s->msg_kind : 0;
	p[0] = mb_prop_str(MB_PR_MESSAGE_CLASS, cls[k]);
	p[1].tag = MB_PR_SUBJECT;
	p[1].v.b = mb__rb_printf(rb, "%s%s", pre[k], subj);
	p[2].tag = MB_PR_RECIPIENTS;
	p[2].v.mv.n = (uint16_t)(nu + nl);
	p[2].v.mv.v = names;
	p[3] = mb_prop_bytes(MB_PR_BODY, sh->body, (uint32_t)blen);
	if (meeting) {
		p[4] = mb_prop_i64(MB_PR_START_DATE, s->start_ms);
		p[5] = mb_prop_i64(MB_PR_END_DATE, s->end_ms);
	}
	if (extra)
		p[np++] = *extra;
	op->u.set_props.n = (uint16_t)np;
	op->u.set_props.props = p;
}

/* The draft h's attachments (the send mix's): per attachment
 * CreateAttachment, SetProperties (file name, data, kind),
 * SaveChangesAttachment. */
void mb__mbs_compose_attachments(struct mb_tuser *u, uint32_t h, const struct mb_step *s)
{
	struct mbs_shard *sh = SH(u);
	struct mb__rb *rb = &sh->rb;
	enum mb_content_kind ak =
	    s->attach_kind < MB_CK_COUNT ? (enum mb_content_kind)s->attach_kind : MB_CK_TEXT;
	size_t off = 0;
	for (int i = 0; i < s->nattach && s->attach_size; i++) {
		size_t len = s->attach_size[i];
		if (len > sh->att_cap - off)
			len = sh->att_cap - off;
		if (len == 0)
			break;
		mb_content_fill_kind(ak, s->seed + 100 + (uint64_t)i, sh->att + off, len);
		struct mb_op *op = mb__rb_op(rb, MB_OP_CREATE_ATTACH);
		op->u.attach.msg = h;
		op->u.attach.handle = H_ATT;
		op = mb__rb_op(rb, MB_OP_SET_PROPS);
		struct mb_prop *p = mb__rb_props(rb, 3);
		p[0].tag = MB_PR_ATTACH_FILENAME;
		p[0].v.b = mb__rb_printf(rb, "attachment%d.%s", i + 1, mb_content_kind_ext(ak));
		p[1] = mb_prop_bytes(MB_PR_ATTACH_DATA_BIN, sh->att + off, (uint32_t)len);
		p[2] = mb_prop_i64(MB_PR_ATTACH_KIND, ak);
		op->u.set_props.handle = H_ATT;
		op->u.set_props.n = 3;
		op->u.set_props.props = p;
		mb__rb_op(rb, MB_OP_SAVE_ATTACH)->u.save.handle = H_ATT;
		off += len;
	}
}

/* An appointment (or journal entry) as properties. */
struct mb_prop *mb__mbs_appointment_props(struct mb_tuser *u, const struct mb_step *s, int *n)
{
	struct mbs_shard *sh = SH(u);
	struct mb__rb *rb = &sh->rb;
	char subj[96];
	mb_content_subject(s->seed, subj, sizeof(subj));
	size_t blen = s->size < sh->body_cap ? s->size : sh->body_cap;
	mb_content_fill(s->seed, sh->body, blen);
	struct mb_prop *p = mb__rb_props(rb, 7);
	p[0] = mb_prop_str(MB_PR_MESSAGE_CLASS,
			   (s->flags & MB_STEP_F_ACTIVITY) ? "IPM.Activity" : "IPM.Appointment");
	p[1].tag = MB_PR_SUBJECT;
	p[1].v.b = mb__rb_printf(rb, "%s", subj);
	p[2] = mb_prop_i64(MB_PR_START_DATE, s->start_ms);
	p[3] = mb_prop_i64(MB_PR_END_DATE, s->end_ms);
	p[4] = mb_prop_i64(MB_PR_BUSY_STATUS, 2);
	p[5].tag = MB_PR_LOCATION;
	p[5].v.b = mb__rb_printf(rb, "Room %u", s->aux);
	p[6] = mb_prop_bytes(MB_PR_BODY, sh->body, (uint32_t)blen);
	*n = 7;
	return p;
}

/* Ack the message that reply op code (SaveChanges, CreateContact) saved. */
int mb__mbs_ack_saved(struct mb_tuser *u, const struct mb_reply *r, uint8_t code)
{
	const struct mb_op_reply *o = mb__mbs_find_op(r, code, 0);
	if (!o || o->status != 0)
		return mb__mbs_op_status(o);
	uint64_t mid = o->u.saved.mid;
	mb_target_ack(u, '+', mailbox_of(u), &mid, 1);
	return 0;
}

/* Ack what emit_create_item created (cached: into replica slot m->slot). */
int mb__mbs_took_create(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res)
{
	struct mbs_user *m = M(u);
	(void)res;
	if (m->rep) {
		const struct mb_op_reply *o = mb__mbs_find_op(r, MB_OP_SYNC_UPLOAD, 0);
		if (!o || o->status != 0)
			return mb__mbs_op_status(o);
		mb_target_ack(u, '+', mailbox_of(u), o->u.sync_up.mids, (int)o->u.sync_up.n);
		for (uint32_t i = 0; i < o->u.sync_up.n; i++)
			mb_replica_upsert(m->rep, m->slot, o->u.sync_up.mids[i], MB_MSGFLAG_READ, 0,
					  -1);
		return 0;
	}
	return mb__mbs_ack_saved(u, r, MB_OP_SAVE_CHANGES);
}
