/* ops.c: execution of a request's operations on a database owner thread:
 * the executor (which database runs the next op, the SubmitMessage phases,
 * the per-op timing), the dispatch to each op, and the session, folder,
 * table and message operations.  The other operations: op_submit.c,
 * op_calendar.c, op_sync.c, op_attach.c, op_book.c; what they share:
 * opcommon.c, handles.c (ops_int.h).
 *
 * Invariants:
 *  - An op runs on the thread that owns the database it touches: the
 *    session's home database, the free/busy target's database, or, for
 *    SubmitMessage, each recipient database in turn (phases); when the next
 *    op needs another database, mb_ops_execute returns that database and
 *    the worker queues the request there (this thread never waits for
 *    another database, and never queues a request itself).
 *  - Access: every folder id must name the session's own mailbox
 *    (MB_EACCES otherwise); only FreeBusy reads another mailbox.
 *  - Writes: one transaction per op (per database for deliveries), committed
 *    with mb_db_commit_async; pending counts the commits, so the reply waits
 *    until they are durable; a failed op aborts its transaction.
 *  - Everything a reply points at is copied into the request's arena.
 */
#include "config.h"

#include "store/ops_int.h"
#include "core/error.h"
#include "core/sampler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint32_t contents_cols[] = {MB_PR_MID,	     MB_PR_SUBJECT,
					 MB_PR_SENDER_NAME,  MB_PR_DELIVERY_TIME,
					 MB_PR_MESSAGE_SIZE, MB_PR_MESSAGE_FLAGS};
static const uint32_t hier_cols[] = {MB_PR_FID, MB_PR_DISPLAY_NAME, MB_PR_CONTENT_COUNT,
				     MB_PR_CONTENT_UNREAD};
static const uint32_t summary_cols[] = {
    MB_PR_MID,	      MB_PR_MESSAGE_CLASS, MB_PR_SUBJECT,      MB_PR_SENDER_NAME,
    MB_PR_DISPLAY_TO, MB_PR_DELIVERY_TIME, MB_PR_MESSAGE_SIZE, MB_PR_MESSAGE_FLAGS};

static int op_challenge(struct mb_store *st, struct session *s, struct mb_op *op,
			struct mb_op_reply *res)
{
	int idx;
	struct mb_bytes u = op->u.challenge.user;
	int rc = mb_auth_random(s->nonce, MB_NONCE_LEN);
	if (rc)
		return rc;
	s->nonce_valid = true;
	memcpy(res->u.challenge.nonce, s->nonce, MB_NONCE_LEN);
	res->u.challenge.iterations = MB_PBKDF2_ITERATIONS;
	if (mb_topology_find_user(st->topo, (const char *)u.p, u.len, &idx) == 0) {
		const struct mb_topo_user *tu = mb_topology_user(st->topo, idx);
		memcpy(res->u.challenge.salt, tu->salt, MB_SALT_LEN);
		res->u.challenge.iterations = tu->iterations;
	} else {
		/* a stable fake salt: unknown names look like known ones; keyed
		 * by the data directory's secret (made at init), so nobody
		 * without it can compute what a non-name's salt would be */
		uint8_t key[MB_KEY_LEN], proof[MB_PROOF_LEN], zero[MB_NONCE_LEN];
		memcpy(key, st->salt_secret, sizeof(key));
		memset(zero, 0, sizeof(zero));
		mb_auth_proof(key, zero, (const char *)u.p, u.len > MB_PROTO_MAX_NAME ? 0 : u.len,
			      proof);
		memcpy(res->u.challenge.salt, proof, MB_SALT_LEN);
	}
	return 0;
}

static int op_logon(struct mb_store *st, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	struct session *s = r->sess;
	struct mb_bytes u = op->u.logon.user;
	int idx;
	bool had_nonce = s->nonce_valid;

	s->nonce_valid = false; /* one attempt per challenge */
	if (!had_nonce || mb_topology_find_user(st->topo, (const char *)u.p, u.len, &idx)) {
		r->delay_ms = st->o.auth_delay_ms;
		return MB_EAUTH;
	}
	const struct mb_topo_user *tu = mb_topology_user(st->topo, idx);
	if (mb_auth_verify(tu->key, s->nonce, (const char *)u.p, u.len, op->u.logon.proof)) {
		r->delay_ms = st->o.auth_delay_ms;
		return MB_EAUTH;
	}
	struct mb_bytes mbx = op->u.logon.mailbox;
	if (mbx.len && !mb_bytes_eq(mbx, u))
		return MB_EACCES;
	mb_session_clear(s);
	s->logged_on = true;
	s->user = idx;
	s->mailbox = tu->mailbox;
	s->db = tu->db;
	s->flags = 0;
	if ((op->u.logon.flags & MB_LOGON_F_LZ77) && st->o.compression)
		s->flags |= MB_LOGON_F_LZ77;
	if (op->u.logon.flags & MB_LOGON_F_NOTIFY)
		s->flags |= MB_LOGON_F_NOTIFY;
	res->u.logon.mailbox = tu->mailbox;
	res->u.logon.flags = s->flags;
	res->u.logon.compress_min = st->o.compress_min;
	return 0;
}

static int op_open_folder(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	uint32_t local;
	struct mb_folder_rec f;
	int rc = mb__own_folder(r, op->u.open_folder.fid, &local);
	if (rc)
		return rc;
	rc = mb_schema_folder_get(w->schema, r->sess->mailbox, local, &f);
	if (rc)
		return rc;
	rc = mb__ar_bytes(r, f.name, strlen(f.name), &res->u.folder.name);
	if (rc)
		return rc;
	res->u.folder.fid = op->u.open_folder.fid;
	res->u.folder.parent = f.parent ? MB_FID(r->sess->mailbox, f.parent) : 0;
	res->u.folder.count = f.count;
	res->u.folder.unread = f.unread;
	res->u.folder.subfolders = f.subfolders;
	res->u.folder.cn = f.cn;
	return 0;
}

static int op_get_table(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res,
			bool contents)
{
	uint32_t local;
	struct mb_folder_rec f;
	struct handle *h;
	int rc = mb__own_folder(r, op->u.get_table.fid, &local);
	if (rc)
		return rc;
	rc = mb_schema_folder_get(w->schema, r->sess->mailbox, local, &f);
	if (rc)
		return rc;
	rc = mb__handle_new(r->sess, op->u.get_table.handle, contents ? H_CONTENTS : H_HIERARCHY,
			    &h);
	if (rc)
		return rc;
	h->folder = local;
	if (contents) {
		h->ncols = sizeof(contents_cols) / sizeof(contents_cols[0]);
		memcpy(h->cols, contents_cols, sizeof(contents_cols));
		res->u.table.rows = f.count;
	} else {
		uint32_t n = 0;
		h->ncols = sizeof(hier_cols) / sizeof(hier_cols[0]);
		memcpy(h->cols, hier_cols, sizeof(hier_cols));
		rc = mb_schema_folder_children(w->schema, r->sess->mailbox, local, 0,
					       mb__count_folder, &n);
		res->u.table.rows = n;
	}
	return rc;
}

static int op_set_columns(struct req *r, struct mb_op *op)
{
	struct handle *h = mb__handle_find(r->sess, op->u.set_columns.handle);
	if (!h)
		return MB_ENOTFOUND;
	if (h->kind != H_CONTENTS && h->kind != H_HIERARCHY && h->kind != H_ATTACH_TABLE &&
	    h->kind != H_AB_TABLE)
		return MB_ESTATE;
	h->ncols = op->u.set_columns.n;
	memcpy(h->cols, op->u.set_columns.tags, (size_t)h->ncols * sizeof(uint32_t));
	return 0;
}

/* SortTable (RopSortTable, [MS-OXCTABL] 2.2.2.13, 3.2.5.3): a contents
 * table sorts on its delivery-time index, newest first (Outlook's Inbox
 * view, "Received" descending) or oldest first; another column, or more
 * than one key, is MB_EUNSUPPORTED (as a server answers ecTooComplex).
 * The cursor goes back to the first row in the new order. */
static int op_sort_table(struct req *r, struct mb_op *op)
{
	struct handle *h = mb__handle_find(r->sess, op->u.sort_table.handle);
	if (!h)
		return MB_ENOTFOUND;
	if (h->kind != H_CONTENTS)
		return MB_ESTATE;
	if (op->u.sort_table.n != 1 || op->u.sort_table.keys[0].tag != MB_PR_DELIVERY_TIME)
		return MB_EUNSUPPORTED;
	uint8_t order = op->u.sort_table.keys[0].order;
	if (order != MB_SORT_ASC && order != MB_SORT_DESC)
		return MB_EINVAL;
	h->pos = (struct mb_scan_pos){.ascending = order == MB_SORT_ASC};
	return 0;
}

static int folder_value(uint32_t mailbox, const struct mb_folder_rec *f, uint32_t tag,
			struct mb_prop *out, struct req *r)
{
	memset(out, 0, sizeof(*out));
	out->tag = tag;
	switch (tag) {
	case MB_PR_FID:
		out->v.i = (int64_t)MB_FID(mailbox, f->folder);
		return 0;
	case MB_PR_PARENT_FID:
		out->v.i = (int64_t)MB_FID(mailbox, f->parent);
		return 0;
	case MB_PR_CONTENT_COUNT:
		out->v.i = f->count;
		return 0;
	case MB_PR_CONTENT_UNREAD:
		out->v.i = f->unread;
		return 0;
	case MB_PR_CHANGE_NUM:
		out->v.i = (int64_t)f->cn;
		return 0;
	case MB_PR_DISPLAY_NAME:
		return mb__ar_bytes(r, f->name, strlen(f->name), &out->v.b);
	}
	out->tag = (tag & 0xFFFF0000u) | MB_PT_ERROR;
	out->v.i = MB_ENOTFOUND;
	return 0;
}

static int op_query_rows(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	struct handle *h = mb__handle_find(r->sess, op->u.query_rows.handle);
	uint32_t mailbox = r->sess->mailbox;
	uint32_t max = op->u.query_rows.max_rows;
	int rc = 0;

	if (!h)
		return MB_ENOTFOUND;
	if (max > MB_PROTO_MAX_ROWS)
		max = MB_PROTO_MAX_ROWS;
	if (h->kind == H_ATTACH_TABLE || h->kind == H_AB_TABLE) {
		if (op->u.query_rows.flags & MB_QR_F_RESTART) {
			h->num = 0;
			h->spos = 0;
		}
		return h->kind == H_ATTACH_TABLE ? mb__attach_query_rows(w, r, h, max, res)
						 : mb__book_query_rows(r, h, max, res);
	}
	if (h->kind != H_CONTENTS && h->kind != H_HIERARCHY)
		return MB_ESTATE;
	if (op->u.query_rows.flags & MB_QR_F_RESTART) {
		h->pos = (struct mb_scan_pos){.ascending = h->pos.ascending};
		h->hier_after = 0;
		h->hier_done = false;
	}
	res->u.rows.ncols = h->ncols;
	bool more = false;
	if (h->kind == H_CONTENTS) {
		struct mid_list l = {mb__ar(r, (max ? max : 1) * sizeof(uint64_t)), 0, max, 0};
		if (!l.mids)
			return MB_ETOOBIG;
		struct mb_scan_pos save = h->pos;
		if (max)
			rc = mb_schema_folder_scan(w->schema, mailbox, h->folder, &h->pos, max,
						   mb__collect_mid, &l, &more);
		if (rc)
			return rc;
		if (mb__ar_rows(r, res, l.n, h->ncols))
			return MB_ETOOBIG;
		uint32_t done = 0;
		for (; done < l.n; done++) {
			struct mb_msg_rec rec;
			size_t before = r->reply_budget;
			rc = mb__msg_row(w, r, mailbox, l.mids[done], h->cols, h->ncols,
					 res->u.rows.vals + (size_t)done * h->ncols, &rec);
			if (rc == MB_ETOOBIG && done > 0) {
				/* reply full: stop here, the rest comes next time */
				r->reply_budget = before;
				rc = 0;
				more = true;
				break;
			}
			if (rc)
				break;
		}
		if (rc) {
			h->pos = save;
			return rc;
		}
		if (done < l.n) {
			/* re-position the cursor after the last row returned */
			h->pos = save;
			struct mid_list l2 = {mb__ar(r, done * sizeof(uint64_t) + 8), 0, done, 0};
			bool m2;
			if (done)
				rc = mb_schema_folder_scan(w->schema, mailbox, h->folder, &h->pos,
							   done, mb__collect_mid, &l2, &m2);
		}
		res->u.rows.nrows = done;
	} else {
		struct folder_list l = {mb__ar(r, (max + 1) * sizeof(struct mb_folder_rec)), 0,
					max + 1};
		if (!l.f)
			return MB_ETOOBIG;
		if (!h->hier_done && max)
			rc = mb_schema_folder_children(w->schema, mailbox, h->folder, h->hier_after,
						       mb__collect_folder, &l);
		if (rc)
			return rc;
		uint32_t n = l.n > max ? max : l.n;
		more = l.n > max;
		if (mb__ar_rows(r, res, n, h->ncols))
			return MB_ETOOBIG;
		for (uint32_t i = 0; i < n && !rc; i++)
			for (uint16_t c = 0; c < h->ncols && !rc; c++)
				rc = folder_value(mailbox, &l.f[i], h->cols[c],
						  &res->u.rows.vals[(size_t)i * h->ncols + c], r);
		if (n)
			h->hier_after = l.f[n - 1].folder;
		if (!more && max)
			h->hier_done = true;
		res->u.rows.nrows = n;
	}
	res->u.rows.more = more ? 1 : 0;
	return rc;
}

static int op_open_message(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	uint32_t local;
	struct mb_msg_rec rec;
	struct handle *h;
	int rc = mb__own_folder(r, op->u.open_message.fid, &local);
	if (rc)
		return rc;
	uint16_t n = sizeof(summary_cols) / sizeof(summary_cols[0]);
	struct mb_prop *vals = mb__ar(r, n * sizeof(*vals));
	if (!vals)
		return MB_ETOOBIG;
	rc = mb__msg_row(w, r, r->sess->mailbox, op->u.open_message.mid, summary_cols, n, vals,
			 &rec);
	if (rc)
		return rc;
	if (rec.folder != local)
		return MB_ENOTFOUND;
	rc = mb__handle_new(r->sess, op->u.open_message.handle, H_MESSAGE, &h);
	if (rc)
		return rc;
	h->folder = local;
	h->mid = op->u.open_message.mid;
	res->u.props.n = n;
	res->u.props.props = vals;
	return 0;
}

/* A copy of p in the reply arena, as out. */
static int ar_prop(struct req *r, const struct mb_prop *p, struct mb_prop *out)
{
	uint16_t t = MB_PTAG_TYPE(p->tag);
	*out = *p;
	if (t == MB_PT_STRING || t == MB_PT_BINARY)
		return mb__ar_bytes(r, p->v.b.p, p->v.b.len, &out->v.b);
	if (t != MB_PT_MV_STRING)
		return 0;
	out->v.mv.v = mb__ar(r, (size_t)(p->v.mv.n ? p->v.mv.n : 1) * sizeof(struct mb_bytes));
	if (!out->v.mv.v)
		return MB_ETOOBIG;
	int rc = 0;
	for (uint16_t j = 0; j < p->v.mv.n && !rc; j++)
		rc = mb__ar_bytes(r, p->v.mv.v[j].p, p->v.mv.v[j].len, &out->v.mv.v[j]);
	return rc;
}

static int op_get_props(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	struct handle *h = mb__handle_find(r->sess, op->u.get_props.handle);
	uint16_t n = op->u.get_props.n;
	int rc = 0;

	if (!h)
		return MB_ENOTFOUND;
	if (h->kind != H_MESSAGE && h->kind != H_DRAFT)
		return MB_ESTATE;
	struct mb_prop *vals = mb__ar(r, (size_t)(n ? n : 1) * sizeof(*vals));
	if (!vals)
		return MB_ETOOBIG;
	struct mb_msg_rec rec;
	struct mb_prop *props = NULL;
	uint16_t nprops = 0;
	if (h->kind == H_MESSAGE) {
		rc = mb_schema_msg_get(w->schema, r->sess->mailbox, h->mid, &w->val, &rec);
		if (!rc)
			rc = mb__row_props(r, &rec, &props, &nprops);
		if (rc)
			return rc;
	}
	for (uint16_t i = 0; i < n && !rc; i++) {
		const struct mb_prop *p = mb__handle_prop(h, op->u.get_props.tags[i]);
		if (p) {
			/* a copy: a Release or SetProperties later in the request
			 * frees the handle's bytes before the reply is encoded */
			rc = mb__budget(r, mb_prop_wire_size(p));
			if (!rc)
				rc = ar_prop(r, p, &vals[i]);
		} else if (h->kind == H_MESSAGE) {
			rc = mb__msg_column(w, r, r->sess->mailbox, &rec, props, nprops,
					    op->u.get_props.tags[i], &vals[i]);
		} else {
			vals[i].tag = (op->u.get_props.tags[i] & 0xFFFF0000u) | MB_PT_ERROR;
			vals[i].v.i = MB_ENOTFOUND;
		}
	}
	res->u.props.n = n;
	res->u.props.props = vals;
	return rc;
}

static int op_create_message(struct dbw *w, struct req *r, struct mb_op *op)
{
	uint32_t local;
	struct mb_folder_rec f;
	struct handle *h;
	int rc = mb__own_folder(r, op->u.create_message.fid, &local);
	if (rc)
		return rc;
	rc = mb_schema_folder_get(w->schema, r->sess->mailbox, local, &f);
	if (rc)
		return rc;
	rc = mb__handle_new(r->sess, op->u.create_message.handle, H_DRAFT, &h);
	if (rc)
		return rc;
	h->folder = local;
	return 0;
}

static int op_set_props(struct req *r, struct mb_op *op)
{
	struct handle *h = mb__handle_find(r->sess, op->u.set_props.handle);
	int rc = 0;
	if (!h)
		return MB_ENOTFOUND;
	if (h->kind != H_MESSAGE && h->kind != H_DRAFT && h->kind != H_ATTACH_DRAFT)
		return MB_ESTATE;
	/* Before any is set: the new tags must fit the handle's properties,
	 * and what the values add (a tag's last value) less what they replace
	 * (its value now) the session's held bytes; a refusal changes nothing */
	const struct mb_prop *in = op->u.set_props.props;
	uint16_t n = op->u.set_props.n, fresh = 0;
	size_t add = 0, drop = 0;
	for (uint16_t i = 0; i < n; i++) {
		bool earlier = false, later = false;
		for (uint16_t j = 0; j < n; j++)
			if (j != i && in[j].tag == in[i].tag)
				*(j < i ? &earlier : &later) = true;
		if (!later)
			add += mb__props_bytes(&in[i], 1);
		if (!earlier) {
			const struct mb_prop *old = mb__handle_prop(h, in[i].tag);
			if (old)
				drop += mb__props_bytes(old, 1);
			else
				fresh++;
		}
	}
	if (h->nprops + fresh > MB_PROTO_MAX_PROPS)
		return MB_EFULL;
	rc = mb__held_room(r->sess, add > drop ? add - drop : 0);
	for (uint16_t i = 0; i < n && !rc; i++)
		rc = mb__handle_set_prop(h, &in[i]);
	return rc;
}

/* The attachments saved into draft h, as in->attach (att: room for
 * MB_SCHEMA_MAX_ATTACH; pointers into the handle). */
static void draft_attachments(const struct handle *h, struct mb_attach_in *att,
			      struct mb_msg_in *in)
{
	uint16_t n = h->natt > MB_SCHEMA_MAX_ATTACH ? MB_SCHEMA_MAX_ATTACH : h->natt;
	for (uint16_t i = 0; i < n; i++) {
		att[i].kind = h->att[i].kind;
		att[i].name = mb_str(h->att[i].name);
		att[i].data = h->att[i].data;
		att[i].len = h->att[i].len;
	}
	in->attach = att;
	in->nattach = n;
}

static int op_save(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	struct handle *h = mb__handle_find(r->sess, op->u.save.handle);
	struct mb_prop *props, rest[MB_PROTO_MAX_PROPS + 8];
	uint16_t n, nrest;
	struct mb_msg_in in;
	uint64_t mid = 0, cn = 0;
	int rc;

	if (!h)
		return MB_ENOTFOUND;
	if (h->kind != H_MESSAGE && h->kind != H_DRAFT)
		return MB_ESTATE;
	/* an edit that leaves the body alone (a read flag) does not rewrite it */
	bool body = h->kind == H_DRAFT || mb__handle_prop(h, MB_PR_BODY);
	rc = mb__handle_merged(w, r, h, body, &props, &n);
	if (rc)
		return rc;
	if (n > MB_PROTO_MAX_PROPS + 8)
		return MB_ETOOBIG;
	mb__msg_in_from_props(&in, props, n, rest, &nrest, mb_wall_ms());
	in.keep_body = !body;
	struct mb_attach_in att[MB_SCHEMA_MAX_ATTACH];
	if (h->kind == H_DRAFT)
		draft_attachments(h, att, &in);
	rc = mb__txn_begin(w);
	if (rc)
		return rc;
	if (h->kind == H_DRAFT) {
		rc = mb_schema_msg_add(w->schema, r->sess->mailbox, h->folder, &in, w->tmp, &mid,
				       &cn);
	} else {
		mid = h->mid;
		rc = mb_schema_msg_update(w->schema, r->sess->mailbox, mid, &in, w->tmp, &cn);
	}
	rc = mb__txn_end(w, r, rc, 0, 0);
	if (rc)
		return rc;
	/* a save into a folder under an upload context is an import there
	 * (RopSynchronizationImportMessageChange's message) */
	mb__sync_note_import(r->sess, NULL, h->folder, cn, cn);
	/* the handle now names the saved message, with no pending changes */
	uint32_t id = h->id, folder = h->folder;
	mb__handle_clear(h);
	h->id = id;
	h->kind = H_MESSAGE;
	h->folder = folder;
	h->mid = mid;
	res->u.saved.mid = mid;
	res->u.saved.cn = cn;
	return 0;
}

static int op_delete(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	uint32_t local, n = 0;
	int rc = mb__own_folder(r, op->u.del.fid, &local);
	if (rc)
		return rc;
	rc = mb__txn_begin(w);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < op->u.del.n && !rc; i++) {
		struct mb_msg_rec rec;
		int g = mb_schema_msg_get(w->schema, r->sess->mailbox, op->u.del.mids[i], &w->val,
					  &rec);
		if (g == MB_ENOTFOUND || (!g && rec.folder != local))
			continue;
		rc = g;
		if (!rc)
			rc = mb_schema_msg_delete(w->schema, r->sess->mailbox, op->u.del.mids[i]);
		if (!rc)
			n++;
	}
	rc = mb__txn_end(w, r, rc, 0, 0);
	if (!rc)
		res->u.count.n = n;
	return rc;
}

static int op_move_copy(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	uint32_t src, dst;
	int rc = mb__own_folder(r, op->u.move_copy.src_fid, &src);
	if (!rc)
		rc = mb__own_folder(r, op->u.move_copy.dst_fid, &dst);
	if (rc)
		return rc;
	struct mb_folder_rec f;
	rc = mb_schema_folder_get(w->schema, r->sess->mailbox, dst, &f);
	if (rc)
		return rc;
	uint32_t n = op->u.move_copy.n;
	uint64_t *out = mb__ar(r, (size_t)(n ? n : 1) * sizeof(uint64_t));
	if (!out)
		return MB_ETOOBIG;
	bool copy = (op->u.move_copy.flags & MB_MC_F_COPY) != 0;
	uint64_t copied = 0;
	rc = mb__txn_begin(w);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < n && !rc; i++) {
		struct mb_msg_rec rec;
		uint64_t mid = op->u.move_copy.mids[i];
		out[i] = 0;
		int g = mb_schema_msg_get(w->schema, r->sess->mailbox, mid, &w->val, &rec);
		if (g == MB_ENOTFOUND || (!g && rec.folder != src))
			continue;
		rc = g;
		if (!rc && src == dst && !copy) {
			out[i] = mid;
			continue;
		}
		/* what the copies add must fit above the free-space reserve */
		if (!rc && copy)
			rc = mb__reserve_check(r->st, copied += rec.size);
		if (!rc)
			rc = mb_schema_msg_move(w->schema, r->sess->mailbox, mid, dst, copy, w->tmp,
						&out[i]);
	}
	rc = mb__txn_end(w, r, rc, 0, 0);
	if (!rc) {
		res->u.moved.n = n;
		res->u.moved.mids = out;
	}
	return rc;
}

static int op_target_db(struct mb_store *st, struct req *r, struct mb_op *op)
{
	struct session *s = r->sess;
	if (op->code == MB_OP_LOGON_CHALLENGE || op->code == MB_OP_LOGON ||
	    op->code == MB_OP_LOGOFF || !s->logged_on)
		return 0;
	if (op->code == MB_OP_FREEBUSY) {
		int idx;
		struct mb_bytes u = op->u.freebusy.user;
		if (mb_topology_find_user(st->topo, (const char *)u.p, u.len, &idx) == 0)
			return mb_topology_user(st->topo, idx)->db;
		return 0;
	}
	if (op->code == MB_OP_SUBMIT && r->sub && r->sub->phase >= 1 &&
	    r->sub->phase <= r->sub->ndb)
		return r->sub->dbs[r->sub->phase - 1];
	return s->db;
}

static int run_op(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	struct mb_store *st = r->st;
	struct session *s = r->sess;

	if (!s->logged_on && op->code != MB_OP_LOGON_CHALLENGE && op->code != MB_OP_LOGON)
		return MB_ESTATE;
	switch (op->code) {
	case MB_OP_LOGON_CHALLENGE:
		return op_challenge(st, s, op, res);
	case MB_OP_LOGON:
		return op_logon(st, r, op, res);
	case MB_OP_LOGOFF:
		mb_session_clear(s);
		s->logged_on = false;
		s->flags = 0;
		return 0;
	case MB_OP_RELEASE: {
		struct handle *h = mb__handle_find(s, op->u.release.handle);
		if (!h)
			return MB_ENOTFOUND;
		mb__handle_release(s, h);
		return 0;
	}
	case MB_OP_OPEN_FOLDER:
		return op_open_folder(w, r, op, res);
	case MB_OP_GET_HIERARCHY_TABLE:
		return op_get_table(w, r, op, res, false);
	case MB_OP_GET_CONTENTS_TABLE:
		return op_get_table(w, r, op, res, true);
	case MB_OP_SET_COLUMNS:
		return op_set_columns(r, op);
	case MB_OP_SORT_TABLE:
		return op_sort_table(r, op);
	case MB_OP_QUERY_ROWS:
		return op_query_rows(w, r, op, res);
	case MB_OP_OPEN_MESSAGE:
		return op_open_message(w, r, op, res);
	case MB_OP_GET_PROPS:
		return op_get_props(w, r, op, res);
	case MB_OP_CREATE_MESSAGE:
		return op_create_message(w, r, op);
	case MB_OP_SET_PROPS:
		return op_set_props(r, op);
	case MB_OP_SAVE_CHANGES:
		return op_save(w, r, op, res);
	case MB_OP_DELETE_MESSAGES:
		return op_delete(w, r, op, res);
	case MB_OP_MOVE_COPY:
		return op_move_copy(w, r, op, res);
	case MB_OP_CALENDAR_RANGE:
		return mb__op_calendar(w, r, op, res);
	case MB_OP_FREEBUSY: {
		int idx;
		struct mb_bytes u = op->u.freebusy.user;
		if (mb_topology_find_user(st->topo, (const char *)u.p, u.len, &idx))
			return MB_ENOTFOUND;
		return mb__op_freebusy(w, r, mb_topology_user(st->topo, idx)->mailbox, op, res);
	}
	case MB_OP_CREATE_CONTACT:
		return mb__op_create_contact(w, r, op, res);
	case MB_OP_LIST_CONTACTS:
		return mb__op_list_contacts(w, r, op, res);
	case MB_OP_CREATE_ATTACH:
		return mb__op_create_attach(r, op, res);
	case MB_OP_SAVE_ATTACH:
		return mb__op_save_attach(r, op);
	case MB_OP_GET_ATTACH_TABLE:
		return mb__op_get_attach_table(w, r, op, res);
	case MB_OP_OPEN_ATTACH:
		return mb__op_open_attach(w, r, op, res);
	case MB_OP_OPEN_STREAM:
		return mb__op_open_stream(w, r, op, res);
	case MB_OP_READ_STREAM:
		return mb__op_read_stream(r, op, res);
	case MB_OP_REGISTER_NOTIFY:
		return mb__op_register_notify(w, r, op);
	case MB_OP_RESOLVE_NAMES:
		return mb__op_resolve(st, r, op, res);
	case MB_OP_GET_AB_TABLE:
		return mb__op_get_ab_table(st, r, op, res);
	case MB_OP_SYNC_DOWNLOAD:
		return mb__op_sync_down(w, r, op, res);
	case MB_OP_SYNC_UPLOAD:
		return mb__op_sync_up(w, r, op, res);
	case MB_OP_SYNC_CONFIGURE:
		return mb__op_sync_configure(r, op);
	case MB_OP_SYNC_STATE_BEGIN:
	case MB_OP_SYNC_STATE_CONTINUE:
	case MB_OP_SYNC_STATE_END:
		return mb__op_sync_state(r, op);
	case MB_OP_SYNC_OPEN_COLLECTOR:
		return mb__op_sync_open_collector(r, op);
	case MB_OP_SYNC_GET_STATE:
		return mb__op_sync_get_state(r, op, res);
	case MB_OP_FT_GET_BUFFER:
		return mb__op_ft_get_buffer(r, op, res);
	}
	return MB_EPROTO;
}

int mb_ops_execute(struct dbw *w, struct req *r)
{
	struct mb_store *st = r->st;

	while (r->next_op < r->rq.nops) {
		struct mb_op *op = &r->rq.ops[r->next_op];
		struct mb_op_reply *res = &r->res[r->next_op];
		int target = op_target_db(st, r, op);
		if (target && target != w->index)
			return target; /* the caller queues it there */
		uint64_t t0 = mb_now_ns();
		int rc;
		res->code = op->code;
		if (!w->schema && op->code != MB_OP_LOGON_CHALLENGE && op->code != MB_OP_LOGON &&
		    op->code != MB_OP_LOGOFF && op->code != MB_OP_RELEASE) {
			/* the database's storage group is out of service */
			rc = w->offline_rc ? w->offline_rc : MB_EIO;
			r->sub = NULL;
		} else if (r->sess->logged_on &&
			   (rc = mb__reserve_check(st, mb__op_adds_content(r->sess, op)))) {
			/* the disk is below the reserve: refused, nothing changed */
		} else if (op->code == MB_OP_SUBMIT) {
			struct handle *h = mb__handle_find(r->sess, op->u.save.handle);
			if (!r->sess->logged_on) {
				rc = MB_ESTATE;
			} else if (!r->sub) {
				if (!h)
					rc = MB_ENOTFOUND;
				else if (h->kind != H_DRAFT)
					rc = MB_ESTATE;
				else
					rc = mb__submit_begin(w, r, h);
				if (!rc) {
					r->op_ns[r->next_op] += mb_now_ns() - t0;
					continue; /* the deliveries (maybe elsewhere), then sent */
				}
			} else if (r->sub->phase <= r->sub->ndb) {
				rc = mb__submit_deliver(w, r);
				r->sub->phase++;
				if (!rc) {
					r->op_ns[r->next_op] += mb_now_ns() - t0;
					continue;
				}
			} else {
				rc = mb__submit_finish(w, r);
			}
			if (!rc) {
				res->u.submit.mid = r->sub->sent_mid;
				res->u.submit.databases = (uint32_t)r->sub->ndb;
				res->u.submit.n = (uint32_t)r->sub->ndl;
				res->u.submit.dl = r->sub->dl;
				/* the draft is gone once sent */
				h = mb__handle_find(r->sess, op->u.save.handle);
				if (h)
					mb__handle_release(r->sess, h);
			}
			r->sub = NULL;
		} else {
			rc = run_op(w, r, op, res);
		}
		if (rc) {
			memset(&res->u, 0, sizeof(res->u));
			res->status = rc;
		}
		mb__session_account(r->sess);
		r->op_ns[r->next_op] += mb_now_ns() - t0;
		r->next_op++;
	}
	return 0;
}
