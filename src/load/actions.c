/* actions.c: every user action as a sequence of batched RPCs, in online
 * and in cached mode, plus the internal tasks (logon, cached-mode sync,
 * keepalive).
 *
 * Each task is a phase machine: act_X(u, NULL) builds the first RPC;
 * act_X(u, reply) consumes the reply of the phase in flight (u->step),
 * then builds the next RPC or finishes.  Online users do every view as
 * RPCs; cached-mode users (u->rep != NULL) read their replica locally
 * (counted as local reads, no RPC), upload local changes with SyncUpload
 * and MoveCopyMessages, and still send mail, check free/busy and log on
 * through the store.  Creates the store acknowledged are written to the
 * ack log ('+'), hard deletes as '~' before the request and '-' once
 * acknowledged.  Returns: 1 an RPC is in flight, 0 done, < 0 failed.
 */
#include "load/user.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/content.h"
#include "core/error.h"
#include "load/engine.h"

/* client-chosen handles */
enum { H_TABLE = 1, H_MSG = 2, H_NEW = 3, H_TABLE2 = 4, H_HIER = 5 };

#define PAGE_ROWS 50
#define MEETING_BODY 4096
#define SYNC_MAX 32

/* ---- request builder ----------------------------------------------------- */

void mb_rb_reset(struct mb_rb *rb)
{
	rb->nops = rb->nprops = rb->nstrs = rb->ntags = rb->nmids = rb->nchanges = 0;
	rb->npool = 0;
}

struct mb_op *mb_rb_op(struct mb_rb *rb, uint8_t code)
{
	if (rb->nops >= MB_RB_OPS)
		rb->nops = MB_RB_OPS - 1; /* never: batches are small; stay in bounds */
	struct mb_op *op = &rb->ops[rb->nops++];
	memset(op, 0, sizeof(*op));
	op->code = code;
	return op;
}

static struct mb_prop *rb_props(struct mb_rb *rb, int n)
{
	if (rb->nprops + n > MB_RB_PROPS)
		rb->nprops = 0;
	struct mb_prop *p = &rb->props[rb->nprops];
	rb->nprops += n;
	return p;
}

static uint32_t *rb_tags(struct mb_rb *rb, int n)
{
	if (rb->ntags + n > MB_RB_PROPS)
		rb->ntags = 0;
	uint32_t *t = &rb->tags[rb->ntags];
	rb->ntags += n;
	return t;
}

static uint64_t *rb_mids(struct mb_rb *rb, int n)
{
	if (rb->nmids + n > MB_PROTO_MAX_IDS)
		rb->nmids = 0;
	uint64_t *m = &rb->mids[rb->nmids];
	rb->nmids += n;
	return m;
}

static struct mb_bytes rb_printf(struct mb_rb *rb, const char *fmt, ...)
{
	if (rb->npool > MB_RB_POOL - 256)
		rb->npool = 0;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(rb->pool + rb->npool, MB_RB_POOL - rb->npool, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= MB_RB_POOL - rb->npool)
		n = (int)(MB_RB_POOL - rb->npool - 1);
	struct mb_bytes b = {(const uint8_t *)rb->pool + rb->npool, (uint32_t)n};
	rb->npool += (size_t)n + 1;
	return b;
}

/* ---- small helpers ------------------------------------------------------------ */

static const struct mb_engine_shared *ES(const struct mb_user *u)
{
	return mb_shard_shared(u->sh);
}

static uint64_t fid_of(const struct mb_user *u, uint32_t local)
{
	return ((uint64_t)u->mailbox << 32) | local;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int send_rpc(struct mb_user *u)
{
	int rc = mb_user_send(u);
	return rc == 0 ? 1 : rc;
}

static const struct mb_op_reply *find_op(const struct mb_reply *r, uint8_t code, int nth)
{
	for (int i = 0; r && i < r->nops; i++)
		if (r->ops[i].code == code && nth-- == 0)
			return &r->ops[i];
	return NULL;
}

/* The MB_PR_MID column of the rows that reply op code returned, into
 * mids[0..*n) (at most MB_CTX_ITEMS); the op's error if it failed. */
static int take_mids(const struct mb_reply *r, uint8_t code, uint64_t *mids, int *n)
{
	const struct mb_op_reply *q = find_op(r, code, 0);
	if (!q || q->status != 0)
		return q ? q->status : MB_EPROTO;
	*n = 0;
	for (uint32_t i = 0; i < q->u.rows.nrows && *n < MB_CTX_ITEMS; i++) {
		const struct mb_prop *row = &q->u.rows.vals[(size_t)i * q->u.rows.ncols];
		const struct mb_prop *m = mb_props_find(row, q->u.rows.ncols, MB_PR_MID);
		if (m && MB_PTAG_TYPE(m->tag) == MB_PT_I64)
			mids[(*n)++] = (uint64_t)m->v.i;
	}
	return 0;
}

static const char *user_name(const struct mb_user *u, uint32_t idx)
{
	return mb_topology_user(ES(u)->topo, (int)idx)->name;
}

static uint32_t pick_folder(struct mb_user *u)
{
	if (u->nfolders == 0)
		return MB_FID_INBOX;
	return u->folders[mb_rng_range(&u->rng, 0, u->nfolders - 1)];
}

static int32_t sender_index(const struct mb_user *u, struct mb_bytes name)
{
	int32_t idx = mb_engine_find_user(ES(u), (const char *)name.p, name.len);
	return idx < ES(u)->nusers ? idx : -1;
}

/* Set the properties of a new message of this kind on handle h:
 * class, subject, recipients (PR_RECIPIENTS), body. */
static void compose(struct mb_user *u, uint32_t h, enum mb_msg_kind kind, int32_t reply_to,
		    int64_t start, int64_t end)
{
	struct mb_shard *sh = u->sh;
	struct mb_rb *rb = &sh->rb;
	const struct mb_engine_shared *es = ES(u);
	struct mb_msg_plan plan;
	mb_sched_plan_msg(&es->sp, &u->rng, kind, &plan);
	uint32_t users[32], lists[8];
	int nu = 0, nl = 0;
	if (plan.direct > 32)
		plan.direct = 32;
	if (plan.lists > 8)
		plan.lists = 8;
	if (kind == MB_MSG_REPLY && reply_to >= 0 && (uint32_t)reply_to != u->idx) {
		users[nu++] = (uint32_t)reply_to;
	} else {
		mb_sched_pick_recipients(&u->rng, &plan, u->idx, (uint32_t)es->nusers,
					 (uint32_t)es->nlists, users, &nu, lists, &nl);
	}
	if (nu + nl == 0) /* a single simulated user: write to oneself */
		users[nu++] = u->idx;
	/* a meeting request is addressed by its caller to the attendees whose
	 * free/busy it checked (u->ctx->attendees): left as they are here */
	struct mb_bytes *names = &rb->strs[rb->nstrs];
	rb->nstrs += nu + nl;
	for (int i = 0; i < nu; i++)
		names[i] = mb_str(user_name(u, users[i]));
	for (int i = 0; i < nl; i++)
		names[nu + i] = mb_str(mb_topology_list(es->topo, (int)lists[i])->name);

	uint64_t seed = mb_rng_next(&u->rng);
	size_t avg = kind == MB_MSG_MEETING ? MEETING_BODY : es->avg_body;
	size_t blen = mb_content_size(seed, avg);
	if (blen > sh->body_cap)
		blen = sh->body_cap;
	mb_content_fill(seed, sh->body, blen);
	char subj[96];
	mb_content_subject(seed, subj, sizeof(subj));

	struct mb_op *op = mb_rb_op(rb, MB_OP_SET_PROPS);
	op->u.set_props.handle = h;
	int np = kind == MB_MSG_MEETING ? 6 : 4;
	struct mb_prop *p = rb_props(rb, np);
	static const char *const cls[] = {"IPM.Note", "IPM.Note", "IPM.Note",
					  "IPM.Schedule.Meeting.Request"};
	static const char *const pre[] = {"", "RE: ", "FW: ", ""};
	p[0] = mb_prop_str(MB_PR_MESSAGE_CLASS, cls[kind]);
	p[1].tag = MB_PR_SUBJECT;
	p[1].v.b = rb_printf(rb, "%s%s", pre[kind], subj);
	p[2].tag = MB_PR_RECIPIENTS;
	p[2].v.mv.n = (uint16_t)(nu + nl);
	p[2].v.mv.v = names;
	p[3] = mb_prop_bytes(MB_PR_BODY, sh->body, (uint32_t)blen);
	if (kind == MB_MSG_MEETING) {
		p[4] = mb_prop_i64(MB_PR_START_DATE, start);
		p[5] = mb_prop_i64(MB_PR_END_DATE, end);
	}
	op->u.set_props.n = (uint16_t)np;
	op->u.set_props.props = p;
}

/* CreateMessage in Sent Items, compose, Submit: one RPC. */
static void emit_send(struct mb_user *u, enum mb_msg_kind kind, int32_t reply_to, uint64_t orig_mid,
		      int64_t start, int64_t end)
{
	struct mb_rb *rb = &u->sh->rb;
	if (orig_mid) {
		/* open the original (quoted in the reply or forward) */
		struct mb_op *o = mb_rb_op(rb, MB_OP_OPEN_MESSAGE);
		o->u.open_message.fid = fid_of(u, MB_FID_INBOX);
		o->u.open_message.mid = orig_mid;
		o->u.open_message.handle = H_MSG;
	}
	struct mb_op *op = mb_rb_op(rb, MB_OP_CREATE_MESSAGE);
	op->u.create_message.fid = fid_of(u, MB_FID_SENT);
	op->u.create_message.handle = H_NEW;
	compose(u, H_NEW, kind, reply_to, start, end);
	mb_rb_op(rb, MB_OP_SUBMIT)->u.save.handle = H_NEW; /* submitting releases it */
	if (orig_mid)
		mb_rb_op(rb, MB_OP_RELEASE)->u.release.handle = H_MSG;
}

/* Account a Submit reply: messages sent, deliveries, ack log. */
static int took_submit(struct mb_user *u, const struct mb_reply *r)
{
	const struct mb_op_reply *s = find_op(r, MB_OP_SUBMIT, 0);
	if (!s || s->status != 0)
		return s ? s->status : MB_EPROTO;
	u->sh->st->n.msgs_sent++;
	u->sh->st->n.deliveries += s->u.submit.n;
	mb_user_ack_deliveries(u, s);
	if (u->rep)
		u->rep->dirty |= 1u << MB_RSLOT_SENT;
	return 0;
}

static void emit_open_table(struct mb_user *u, uint32_t local, uint32_t h, int max_rows)
{
	struct mb_rb *rb = &u->sh->rb;
	mb_rb_op(rb, MB_OP_OPEN_FOLDER)->u.open_folder.fid = fid_of(u, local);
	struct mb_op *op = mb_rb_op(rb, MB_OP_GET_CONTENTS_TABLE);
	op->u.get_table.fid = fid_of(u, local);
	op->u.get_table.handle = h;
	op = mb_rb_op(rb, MB_OP_SET_COLUMNS);
	uint32_t *t = rb_tags(rb, 5);
	t[0] = MB_PR_MID;
	t[1] = MB_PR_MESSAGE_FLAGS;
	t[2] = MB_PR_SENDER_NAME;
	t[3] = MB_PR_SUBJECT;
	t[4] = MB_PR_MESSAGE_SIZE;
	op->u.set_columns.handle = h;
	op->u.set_columns.n = 5;
	op->u.set_columns.tags = t;
	op = mb_rb_op(rb, MB_OP_QUERY_ROWS);
	op->u.query_rows.handle = h;
	op->u.query_rows.flags = MB_QR_F_RESTART;
	op->u.query_rows.max_rows = (uint32_t)max_rows;
}

/* Read one message: open, get the body (and a few properties), release. */
static void emit_read(struct mb_user *u, uint32_t local, uint64_t mid, bool mark_read)
{
	struct mb_rb *rb = &u->sh->rb;
	struct mb_op *op = mb_rb_op(rb, MB_OP_OPEN_MESSAGE);
	op->u.open_message.fid = fid_of(u, local);
	op->u.open_message.mid = mid;
	op->u.open_message.handle = H_MSG;
	op = mb_rb_op(rb, MB_OP_GET_PROPS);
	uint32_t *t = rb_tags(rb, 4);
	t[0] = MB_PR_BODY;
	t[1] = MB_PR_SUBJECT;
	t[2] = MB_PR_RECIPIENTS;
	t[3] = MB_PR_MESSAGE_FLAGS;
	op->u.get_props.handle = H_MSG;
	op->u.get_props.n = 4;
	op->u.get_props.tags = t;
	if (mark_read) {
		op = mb_rb_op(rb, MB_OP_SET_PROPS);
		struct mb_prop *p = rb_props(rb, 1);
		p[0] = mb_prop_i64(MB_PR_MESSAGE_FLAGS, MB_MSGFLAG_READ);
		op->u.set_props.handle = H_MSG;
		op->u.set_props.n = 1;
		op->u.set_props.props = p;
		mb_rb_op(rb, MB_OP_SAVE_CHANGES)->u.save.handle = H_MSG;
	}
	mb_rb_op(rb, MB_OP_RELEASE)->u.release.handle = H_MSG;
}

/* An appointment (or journal entry) as properties. */
static struct mb_prop *appointment_props(struct mb_user *u, const char *cls, int *n)
{
	struct mb_rb *rb = &u->sh->rb;
	uint64_t seed = mb_rng_next(&u->rng);
	char subj[96];
	mb_content_subject(seed, subj, sizeof(subj));
	int64_t start = now_ms() + (int64_t)mb_rng_range(&u->rng, 1, 5 * 24) * 3600 * 1000;
	int64_t end = start + (int64_t)mb_rng_range(&u->rng, 1, 4) * 30 * 60 * 1000;
	size_t blen = mb_content_size(seed, 2048);
	if (blen > u->sh->body_cap)
		blen = u->sh->body_cap;
	mb_content_fill(seed, u->sh->body, blen);
	struct mb_prop *p = rb_props(rb, 7);
	p[0] = mb_prop_str(MB_PR_MESSAGE_CLASS, cls);
	p[1].tag = MB_PR_SUBJECT;
	p[1].v.b = rb_printf(rb, "%s", subj);
	p[2] = mb_prop_i64(MB_PR_START_DATE, start);
	p[3] = mb_prop_i64(MB_PR_END_DATE, end);
	p[4] = mb_prop_i64(MB_PR_BUSY_STATUS, 2);
	p[5].tag = MB_PR_LOCATION;
	p[5].v.b = rb_printf(rb, "Room %d", mb_rng_range(&u->rng, 1, 40));
	p[6] = mb_prop_bytes(MB_PR_BODY, u->sh->body, (uint32_t)blen);
	*n = 7;
	return p;
}

/* Save a new item in folder `local`: online Create+Set+Save, cached
 * SyncUpload CREATE. */
static void emit_create_item(struct mb_user *u, uint32_t local, struct mb_prop *p, int n)
{
	struct mb_rb *rb = &u->sh->rb;
	if (u->rep) {
		struct mb_op *op = mb_rb_op(rb, MB_OP_SYNC_UPLOAD);
		struct mb_sync_change *c = &rb->changes[rb->nchanges++];
		memset(c, 0, sizeof(*c));
		c->kind = MB_SYNC_CREATE;
		c->nprops = (uint16_t)n;
		c->props = p;
		op->u.sync_up.fid = fid_of(u, local);
		op->u.sync_up.n = 1;
		op->u.sync_up.changes = c;
		return;
	}
	struct mb_op *op = mb_rb_op(rb, MB_OP_CREATE_MESSAGE);
	op->u.create_message.fid = fid_of(u, local);
	op->u.create_message.handle = H_NEW;
	op = mb_rb_op(rb, MB_OP_SET_PROPS);
	op->u.set_props.handle = H_NEW;
	op->u.set_props.n = (uint16_t)n;
	op->u.set_props.props = p;
	mb_rb_op(rb, MB_OP_SAVE_CHANGES)->u.save.handle = H_NEW;
	mb_rb_op(rb, MB_OP_RELEASE)->u.release.handle = H_NEW;
}

/* Ack the message that reply op code (SaveChanges, CreateContact) saved. */
static int ack_saved(struct mb_user *u, const struct mb_reply *r, uint8_t code)
{
	const struct mb_op_reply *o = find_op(r, code, 0);
	if (!o || o->status != 0)
		return o ? o->status : MB_EPROTO;
	uint64_t mid = o->u.saved.mid;
	mb_user_ack(u, '+', u->mailbox, &mid, 1);
	return 0;
}

/* Ack what emit_create_item created. */
static int took_create(struct mb_user *u, const struct mb_reply *r, int slot)
{
	if (u->rep) {
		const struct mb_op_reply *o = find_op(r, MB_OP_SYNC_UPLOAD, 0);
		if (!o || o->status != 0)
			return o ? o->status : MB_EPROTO;
		mb_user_ack(u, '+', u->mailbox, o->u.sync_up.mids, (int)o->u.sync_up.n);
		for (uint32_t i = 0; i < o->u.sync_up.n; i++)
			mb_replica_upsert(u->rep, slot, o->u.sync_up.mids[i], MB_MSGFLAG_READ, 0, -1);
		return 0;
	}
	return ack_saved(u, r, MB_OP_SAVE_CHANGES);
}

/* ---- logon --------------------------------------------------------------------- */

static int task_logon(struct mb_user *u, const struct mb_reply *r)
{
	struct mb_rb *rb = &u->sh->rb;
	const struct mb_engine_shared *es = ES(u);
	const struct mb_topo_user *tu = mb_topology_user(es->topo, (int)u->idx);
	uint32_t flags = (es->compression ? MB_LOGON_F_LZ4 : 0) | (es->notify ? MB_LOGON_F_NOTIFY : 0);
	if (!r) {
		struct mb_op *op = mb_rb_op(rb, MB_OP_LOGON_CHALLENGE);
		op->u.challenge.user = mb_str(tu->name);
		op->u.challenge.flags = flags;
		u->step = 1;
		u->lz4 = false;
		return send_rpc(u);
	}
	if (u->step == 1) {
		const struct mb_op_reply *c = find_op(r, MB_OP_LOGON_CHALLENGE, 0);
		if (!c || c->status != 0)
			return c ? c->status : MB_EPROTO;
		struct mb_op *op = mb_rb_op(rb, MB_OP_LOGON);
		op->u.logon.user = mb_str(tu->name);
		op->u.logon.flags = flags;
		if (mb_auth_proof(tu->key, c->u.challenge.nonce, tu->name, strlen(tu->name),
				  op->u.logon.proof) != 0)
			return MB_EAUTH;
		/* Outlook's first view: the Inbox and the folder hierarchy */
		mb_rb_op(rb, MB_OP_OPEN_FOLDER)->u.open_folder.fid = fid_of(u, MB_FID_INBOX);
		op = mb_rb_op(rb, MB_OP_GET_HIERARCHY_TABLE);
		op->u.get_table.fid = fid_of(u, MB_FID_ROOT);
		op->u.get_table.handle = H_HIER;
		op = mb_rb_op(rb, MB_OP_QUERY_ROWS);
		op->u.query_rows.handle = H_HIER;
		op->u.query_rows.flags = MB_QR_F_RESTART;
		op->u.query_rows.max_rows = 64;
		mb_rb_op(rb, MB_OP_RELEASE)->u.release.handle = H_HIER;
		u->step = 2;
		return send_rpc(u);
	}
	const struct mb_op_reply *l = find_op(r, MB_OP_LOGON, 0);
	if (!l || l->status != 0)
		return l ? l->status : MB_EPROTO;
	u->lz4 = (l->u.logon.flags & MB_LOGON_F_LZ4) != 0;
	u->compress_min = l->u.logon.compress_min;
	const struct mb_op_reply *q = find_op(r, MB_OP_QUERY_ROWS, 0);
	if (q && q->status == 0) {
		u->nfolders = 0;
		for (uint32_t i = 0; i < q->u.rows.nrows; i++) {
			const struct mb_prop *row = &q->u.rows.vals[(size_t)i * q->u.rows.ncols];
			const struct mb_prop *f = mb_props_find(row, q->u.rows.ncols, MB_PR_FID);
			if (!f)
				continue;
			uint32_t local = (uint32_t)(f->v.i & 0xffffffffu);
			if (local >= MB_FID_FIRST_USER && u->nfolders < 12)
				u->folders[u->nfolders++] = local;
			if (u->rep && local >= MB_FID_FIRST_USER)
				mb_replica_slot(u->rep, local);
		}
	}
	return 0;
}

/* ---- cached mode: sync ---------------------------------------------------------- */

static int task_sync(struct mb_user *u, const struct mb_reply *r)
{
	struct mb_replica *rep = u->rep;
	struct mb_uctx *c = u->ctx;
	struct mb_rb *rb = &u->sh->rb;
	if (r && u->step == 1) {
		/* headers of every asked folder */
		int k = 0;
		for (int s = 0; s < rep->nfolders; s++) {
			if (!(c->sync_mask & (1u << s)))
				continue;
			const struct mb_op_reply *o = find_op(r, MB_OP_SYNC_DOWNLOAD, k++);
			if (!o || o->status != 0)
				return o ? o->status : MB_EPROTO;
			u->sh->st->n.syncs++;
			u->sh->st->n.sync_items += o->u.sync_down.n;
			for (uint32_t i = 0; i < o->u.sync_down.n; i++) {
				const struct mb_sync_item *it = &o->u.sync_down.items[i];
				if (it->deleted) {
					mb_replica_remove(rep, s, it->mid);
					continue;
				}
				const struct mb_prop *fl = mb_props_find(it->props, it->nprops, MB_PR_MESSAGE_FLAGS);
				const struct mb_prop *sz = mb_props_find(it->props, it->nprops, MB_PR_MESSAGE_SIZE);
				const struct mb_prop *sn = mb_props_find(it->props, it->nprops, MB_PR_SENDER_NAME);
				int32_t who = sn && MB_PTAG_TYPE(sn->tag) == MB_PT_STRING ? sender_index(u, sn->v.b) : -1;
				mb_replica_upsert(rep, s, it->mid, fl ? (uint32_t)fl->v.i : 0,
						  sz ? (uint32_t)sz->v.i : 0, who);
				/* the item itself (body) comes next */
				if (c->n < MB_CTX_ITEMS && s != MB_RSLOT_CONTACTS) {
					c->mids[c->n] = it->mid;
					c->slot[c->n] = (uint8_t)s;
					c->n++;
				}
			}
			rep->f[s].watermark = o->u.sync_down.watermark;
			if (!o->u.sync_down.more)
				rep->dirty &= ~(1u << s);
		}
		c->i = 0;
		u->step = 2;
	} else if (r && u->step == 2) {
		/* bodies arrived; nothing to keep (see replica.h) */
	}
	if (u->step == 2 && c->i < c->n) {
		for (int k = 0; k < 4 && c->i < c->n; k++, c->i++) {
			struct mb_op *op = mb_rb_op(rb, MB_OP_OPEN_MESSAGE);
			op->u.open_message.fid = fid_of(u, rep->f[c->slot[c->i]].local);
			op->u.open_message.mid = c->mids[c->i];
			op->u.open_message.handle = H_MSG + (uint32_t)k * 8;
			op = mb_rb_op(rb, MB_OP_GET_PROPS);
			uint32_t *t = rb_tags(rb, 1);
			t[0] = MB_PR_BODY;
			op->u.get_props.handle = H_MSG + (uint32_t)k * 8;
			op->u.get_props.n = 1;
			op->u.get_props.tags = t;
			mb_rb_op(rb, MB_OP_RELEASE)->u.release.handle = H_MSG + (uint32_t)k * 8;
		}
		return send_rpc(u);
	}
	if (!rep->dirty) {
		rep->synced = true;
		return 0;
	}
	/* ask every dirty folder for its changes since the watermark */
	c->n = 0;
	c->sync_mask = 0;
	for (int s = 0; s < rep->nfolders; s++) {
		if (!(rep->dirty & (1u << s)))
			continue;
		struct mb_op *op = mb_rb_op(rb, MB_OP_SYNC_DOWNLOAD);
		op->u.sync_down.fid = fid_of(u, rep->f[s].local);
		op->u.sync_down.since_cn = rep->f[s].watermark;
		op->u.sync_down.flags = 0;
		op->u.sync_down.max = SYNC_MAX;
		c->sync_mask |= 1u << s;
	}
	u->step = 1;
	return send_rpc(u);
}

/* ---- keepalive ------------------------------------------------------------------ */

static int task_keepalive(struct mb_user *u, const struct mb_reply *r)
{
	if (r)
		return 0;
	mb_rb_op(&u->sh->rb, MB_OP_OPEN_FOLDER)->u.open_folder.fid = fid_of(u, MB_FID_INBOX);
	return send_rpc(u);
}

/* ---- send mail ------------------------------------------------------------------ */

static int act_send_mail(struct mb_user *u, const struct mb_reply *r)
{
	if (r)
		return took_submit(u, r);
	emit_send(u, MB_MSG_NEW, -1, 0, 0, 0);
	return send_rpc(u);
}

/* ---- process inbox --------------------------------------------------------------- */

enum { PI_LIST = 1, PI_READ, PI_REPLY, PI_DISPOSE, PI_EMPTY_LIST, PI_EMPTY_DEL, PI_END };

static void choose_replies(struct mb_user *u, int nrows_any, const uint64_t *any_mids,
			   const int32_t *any_who)
{
	struct mb_uctx *c = u->ctx;
	int want = mb_sched_inbox_replies(&ES(u)->sp, &u->rng);
	if (want > MB_CTX_REPLIES)
		want = MB_CTX_REPLIES;
	c->nreplies = want;
	for (int j = 0; j < want; j++) {
		if (nrows_any > 0) {
			int k = mb_rng_range(&u->rng, 0, nrows_any - 1);
			c->rmid[j] = any_mids[k];
			c->rwho[j] = any_who[k];
		} else {
			c->rmid[j] = 0;
			c->rwho[j] = -1;
		}
	}
	c->replies = 0;
}

static int dispose_threshold(const struct mb_user *u)
{
	const struct mb_topo_info *ti = mb_topology_info(ES(u)->topo);
	/* Deleted Items stays small (the profile holds 1 message): emptied
	 * when it holds a few more than twice its configured size */
	int d = ti->deleted_items_messages * 2 + 2;
	return d < 4 ? 4 : d;
}

static int act_process_inbox(struct mb_user *u, const struct mb_reply *r)
{
	struct mb_uctx *c = u->ctx;
	struct mb_rb *rb = &u->sh->rb;
	struct mb_load_stats *st = u->sh->st;
	const struct mb_topo_info *ti = mb_topology_info(ES(u)->topo);
	if (r) {
		switch (u->step) {
		case PI_LIST: {
			const struct mb_op_reply *fi = find_op(r, MB_OP_OPEN_FOLDER, 0);
			const struct mb_op_reply *fd = find_op(r, MB_OP_OPEN_FOLDER, 1);
			const struct mb_op_reply *q = find_op(r, MB_OP_QUERY_ROWS, 0);
			if (!q || q->status != 0)
				return q ? q->status : MB_EPROTO;
			c->inbox_count = fi && fi->status == 0 ? fi->u.folder.count : 0;
			c->deleted_count = fd && fd->status == 0 ? fd->u.folder.count : 0;
			uint64_t any[PAGE_ROWS];
			int32_t who[PAGE_ROWS];
			int nany = 0;
			c->n = 0;
			for (uint32_t i = 0; i < q->u.rows.nrows && nany < PAGE_ROWS; i++) {
				const struct mb_prop *row = &q->u.rows.vals[(size_t)i * q->u.rows.ncols];
				const struct mb_prop *m = mb_props_find(row, q->u.rows.ncols, MB_PR_MID);
				const struct mb_prop *f = mb_props_find(row, q->u.rows.ncols, MB_PR_MESSAGE_FLAGS);
				const struct mb_prop *s = mb_props_find(row, q->u.rows.ncols, MB_PR_SENDER_NAME);
				if (!m || MB_PTAG_TYPE(m->tag) != MB_PT_I64)
					continue;
				bool unread = f && MB_PTAG_TYPE(f->tag) == MB_PT_I32 && !(f->v.i & MB_MSGFLAG_READ);
				any[nany] = (uint64_t)m->v.i;
				who[nany] = s && MB_PTAG_TYPE(s->tag) == MB_PT_STRING ? sender_index(u, s->v.b) : -1;
				nany++;
				if (unread)
					c->mids[c->n++] = (uint64_t)m->v.i;
			}
			/* reply to or forward what is new, else older mail */
			if (c->n > 0) {
				int32_t w[PAGE_ROWS];
				for (int i = 0; i < c->n; i++) {
					w[i] = -1;
					for (int k = 0; k < nany; k++)
						if (any[k] == c->mids[i])
							w[i] = who[k];
				}
				choose_replies(u, c->n, c->mids, w);
			} else {
				choose_replies(u, nany, any, who);
			}
			c->i = 0;
			u->step = PI_READ;
			break;
		}
		case PI_READ:
			c->i++;
			break;
		case PI_REPLY: {
			int rc = took_submit(u, r);
			if (rc != 0)
				return rc;
			c->replies++;
			break;
		}
		case PI_DISPOSE:
			u->step = c->deleted_count + (uint32_t)c->n > (uint32_t)dispose_threshold(u)
					  ? PI_EMPTY_LIST
					  : PI_END;
			if (u->rep && u->step == PI_EMPTY_LIST)
				u->step = PI_EMPTY_DEL; /* cached: the replica lists it */
			c->i = 0;
			break;
		case PI_EMPTY_LIST: {
			int rc = take_mids(r, MB_OP_QUERY_ROWS, c->mids, &c->ndel);
			if (rc)
				return rc;
			u->step = PI_EMPTY_DEL;
			c->i = 1; /* listed */
			break;
		}
		case PI_EMPTY_DEL: {
			if (u->rep) {
				const struct mb_op_reply *o = find_op(r, MB_OP_SYNC_UPLOAD, 0);
				if (!o || o->status != 0)
					return o ? o->status : MB_EPROTO;
				for (uint32_t i = 0; i < o->u.sync_up.n; i++)
					if (o->u.sync_up.mids[i]) {
						mb_user_ack(u, '-', u->mailbox, &o->u.sync_up.mids[i], 1);
						mb_replica_remove(u->rep, MB_RSLOT_DELETED, o->u.sync_up.mids[i]);
					}
			} else {
				const struct mb_op_reply *o = find_op(r, MB_OP_DELETE_MESSAGES, 0);
				if (!o || o->status != 0)
					return o ? o->status : MB_EPROTO;
				/* every id was in the folder: all are gone for sure */
				if (o->u.count.n == (uint32_t)c->ndel)
					mb_user_ack(u, '-', u->mailbox, c->mids, c->ndel);
			}
			u->step = PI_END;
			break;
		}
		default:
			break;
		}
	}
	for (;;) {
		switch (u->step) {
		case 0:
			if (u->rep) {
				/* cached: the Inbox is local */
				struct mb_rfolder *f = &u->rep->f[MB_RSLOT_INBOX];
				uint64_t any[PAGE_ROWS];
				int32_t who[PAGE_ROWS];
				int nany = 0;
				int32_t w[MB_CTX_ITEMS];
				c->n = 0;
				for (uint32_t i = 0; i < f->n; i++) {
					if (nany < PAGE_ROWS) {
						any[nany] = f->items[i].mid;
						who[nany++] = f->items[i].who;
					}
					if (!(f->items[i].flags & MB_MSGFLAG_READ) && c->n < PAGE_ROWS) {
						w[c->n] = f->items[i].who;
						c->mids[c->n++] = f->items[i].mid;
					}
				}
				c->inbox_count = f->n;
				c->deleted_count = u->rep->f[MB_RSLOT_DELETED].n;
				st->n.local_reads += (uint64_t)(1 + c->n);
				if (c->n > 0)
					choose_replies(u, c->n, c->mids, w);
				else
					choose_replies(u, nany, any, who);
				u->step = PI_REPLY;
				continue;
			}
			emit_open_table(u, MB_FID_INBOX, H_TABLE, PAGE_ROWS);
			/* the second OpenFolder: Deleted Items (its size) */
			mb_rb_op(rb, MB_OP_OPEN_FOLDER)->u.open_folder.fid = fid_of(u, MB_FID_DELETED);
			u->step = PI_LIST;
			return send_rpc(u);
		case PI_READ:
			if (c->i < c->n) {
				emit_read(u, MB_FID_INBOX, c->mids[c->i], true);
				return send_rpc(u);
			}
			u->step = PI_REPLY;
			continue;
		case PI_REPLY:
			if (c->replies < c->nreplies) {
				/* a reply to an unknown sender is addressed by the plan */
				enum mb_msg_kind k = mb_sched_reply_kind(&ES(u)->sp, &u->rng);
				emit_send(u, k, c->rwho[c->replies], u->rep ? 0 : c->rmid[c->replies], 0, 0);
				return send_rpc(u);
			}
			u->step = PI_DISPOSE;
			if (c->n == 0) {
				u->step = c->deleted_count > (uint32_t)dispose_threshold(u) ? PI_EMPTY_LIST : PI_END;
				if (u->rep && u->step == PI_EMPTY_LIST)
					u->step = PI_EMPTY_DEL;
				c->i = 0;
				continue;
			}
			{
				/* processed mail: most leaves the Inbox (Deleted Items or a
				 * folder) while the Inbox is above its configured size */
				bool full = c->inbox_count > (uint32_t)ti->inbox_messages;
				int ndel = 0, nmov = 0;
				uint64_t *del = rb_mids(rb, c->n), *mov = rb_mids(rb, c->n);
				for (int i = 0; i < c->n; i++) {
					double x = mb_rng_unit(&u->rng);
					if (!full && x < 0.4)
						continue; /* stays, read */
					if (mb_rng_unit(&u->rng) < 0.1 && u->nfolders > 0)
						mov[nmov++] = c->mids[i];
					else
						del[ndel++] = c->mids[i];
				}
				uint32_t folder = pick_folder(u);
				if (u->rep) {
					struct mb_op *op = mb_rb_op(rb, MB_OP_SYNC_UPLOAD);
					struct mb_sync_change *ch = &rb->changes[0];
					int nc = c->n < MB_CTX_ITEMS ? c->n : MB_CTX_ITEMS;
					for (int i = 0; i < nc; i++) {
						memset(&ch[i], 0, sizeof(ch[i]));
						ch[i].kind = MB_SYNC_SET_FLAGS;
						ch[i].mid = c->mids[i];
						ch[i].flags = MB_MSGFLAG_READ;
						mb_replica_upsert(u->rep, MB_RSLOT_INBOX, c->mids[i], MB_MSGFLAG_READ, 0, -1);
					}
					rb->nchanges = nc;
					op->u.sync_up.fid = fid_of(u, MB_FID_INBOX);
					op->u.sync_up.n = (uint32_t)nc;
					op->u.sync_up.changes = ch;
					for (int i = 0; i < ndel; i++) {
						mb_replica_remove(u->rep, MB_RSLOT_INBOX, del[i]);
						mb_replica_upsert(u->rep, MB_RSLOT_DELETED, del[i], MB_MSGFLAG_READ, 0, -1);
					}
					int fs = mb_replica_slot(u->rep, folder);
					for (int i = 0; i < nmov; i++) {
						mb_replica_remove(u->rep, MB_RSLOT_INBOX, mov[i]);
						if (fs >= 0)
							mb_replica_upsert(u->rep, fs, mov[i], MB_MSGFLAG_READ, 0, -1);
					}
				}
				if (ndel) {
					struct mb_op *op = mb_rb_op(rb, MB_OP_MOVE_COPY);
					op->u.move_copy.src_fid = fid_of(u, MB_FID_INBOX);
					op->u.move_copy.dst_fid = fid_of(u, MB_FID_DELETED);
					op->u.move_copy.n = (uint32_t)ndel;
					op->u.move_copy.mids = del;
				}
				if (nmov) {
					struct mb_op *op = mb_rb_op(rb, MB_OP_MOVE_COPY);
					op->u.move_copy.src_fid = fid_of(u, MB_FID_INBOX);
					op->u.move_copy.dst_fid = fid_of(u, folder);
					op->u.move_copy.n = (uint32_t)nmov;
					op->u.move_copy.mids = mov;
				}
				if (!u->rep)
					mb_rb_op(rb, MB_OP_RELEASE)->u.release.handle = H_TABLE;
				if (rb->nops == 0) {
					u->step = PI_END;
					continue;
				}
				c->deleted_count += (uint32_t)ndel;
				return send_rpc(u);
			}
		case PI_EMPTY_LIST: {
			emit_open_table(u, MB_FID_DELETED, H_TABLE2, 200);
			u->step = PI_EMPTY_LIST;
			return send_rpc(u);
		}
		case PI_EMPTY_DEL: {
			if (u->rep) {
				struct mb_rfolder *f = &u->rep->f[MB_RSLOT_DELETED];
				c->ndel = 0;
				for (uint32_t i = 0; i < f->n && c->ndel < MB_CTX_ITEMS; i++)
					c->mids[c->ndel++] = f->items[i].mid;
				if (c->ndel == 0) {
					u->step = PI_END;
					continue;
				}
				mb_user_ack(u, '~', u->mailbox, c->mids, c->ndel);
				struct mb_op *op = mb_rb_op(rb, MB_OP_SYNC_UPLOAD);
				struct mb_sync_change *ch = &rb->changes[0];
				for (int i = 0; i < c->ndel; i++) {
					memset(&ch[i], 0, sizeof(ch[i]));
					ch[i].kind = MB_SYNC_DELETE;
					ch[i].mid = c->mids[i];
				}
				rb->nchanges = c->ndel;
				op->u.sync_up.fid = fid_of(u, MB_FID_DELETED);
				op->u.sync_up.n = (uint32_t)c->ndel;
				op->u.sync_up.changes = ch;
				return send_rpc(u);
			}
			if (c->i == 0) { /* not listed yet */
				u->step = PI_EMPTY_LIST;
				continue;
			}
			if (c->ndel == 0) {
				mb_rb_op(rb, MB_OP_RELEASE)->u.release.handle = H_TABLE2;
				u->step = PI_END;
				return send_rpc(u);
			}
			mb_user_ack(u, '~', u->mailbox, c->mids, c->ndel);
			struct mb_op *op = mb_rb_op(rb, MB_OP_DELETE_MESSAGES);
			uint64_t *m = rb_mids(rb, c->ndel);
			memcpy(m, c->mids, (size_t)c->ndel * sizeof(uint64_t));
			op->u.del.fid = fid_of(u, MB_FID_DELETED);
			op->u.del.n = (uint32_t)c->ndel;
			op->u.del.mids = m;
			mb_rb_op(rb, MB_OP_RELEASE)->u.release.handle = H_TABLE2;
			return send_rpc(u);
		}
		case PI_END:
		default:
			return 0;
		}
	}
}

/* ---- browse mail ------------------------------------------------------------------ */

static int act_browse_mail(struct mb_user *u, const struct mb_reply *r)
{
	struct mb_uctx *c = u->ctx;
	struct mb_rb *rb = &u->sh->rb;
	const struct mb_sched_params *sp = &ES(u)->sp;
	if (u->rep) {
		/* cached: folders and messages are read from the replica */
		int folders = mb_rng_range(&u->rng, 1, 2 * sp->browse_folders - 1);
		for (int i = 0; i < folders; i++)
			u->sh->st->n.local_reads += 1 + (uint64_t)mb_rng_range(&u->rng, 1, 2 * sp->browse_reads - 1);
		return 0;
	}
	if (!r) {
		c->folders = mb_rng_range(&u->rng, 1, 2 * sp->browse_folders - 1);
		u->step = 1;
	} else if (u->step == 2) {
		int rc = take_mids(r, MB_OP_QUERY_ROWS, c->mids, &c->n);
		if (rc)
			return rc;
		c->reads = c->n ? mb_rng_range(&u->rng, 1, 2 * sp->browse_reads - 1) : 0;
		u->step = 3;
	} else if (u->step == 3) {
		c->reads--;
	}
	for (;;) {
		if (u->step == 1) {
			if (c->folders-- <= 0)
				return 0;
			c->fid = mb_rng_unit(&u->rng) < 0.5 ? MB_FID_INBOX : pick_folder(u);
			emit_open_table(u, (uint32_t)c->fid, H_TABLE, 30);
			u->step = 2;
			return send_rpc(u);
		}
		if (u->step == 3) {
			if (c->reads > 0) {
				emit_read(u, (uint32_t)c->fid, c->mids[mb_rng_range(&u->rng, 0, c->n - 1)], false);
				return send_rpc(u);
			}
			mb_rb_op(rb, MB_OP_RELEASE)->u.release.handle = H_TABLE;
			u->step = 4;
			return send_rpc(u);
		}
		if (u->step == 4) {
			u->step = 1;
			continue;
		}
		return 0;
	}
}

/* ---- free/busy and meetings ----------------------------------------------------------- */

static void emit_freebusy(struct mb_user *u, const uint32_t *who, int n)
{
	int64_t start = now_ms();
	for (int i = 0; i < n; i++) {
		struct mb_op *op = mb_rb_op(&u->sh->rb, MB_OP_FREEBUSY);
		op->u.freebusy.user = mb_str(user_name(u, who[i]));
		op->u.freebusy.start = start;
		op->u.freebusy.end = start + 7LL * 24 * 3600 * 1000;
	}
}

static int act_check_freebusy(struct mb_user *u, const struct mb_reply *r)
{
	if (r) {
		const struct mb_op_reply *o = find_op(r, MB_OP_FREEBUSY, 0);
		return o ? o->status : MB_EPROTO;
	}
	struct mb_msg_plan plan = {MB_MSG_MEETING, mb_rng_range(&u->rng, 1, 5), 0};
	uint32_t who[8];
	int nu, nl;
	mb_sched_pick_recipients(&u->rng, &plan, u->idx, (uint32_t)ES(u)->nusers, 0, who, &nu, NULL, &nl);
	if (nu == 0)
		who[nu++] = u->idx;
	emit_freebusy(u, who, nu);
	if (!u->rep) { /* online: the own calendar beside it */
		struct mb_op *op = mb_rb_op(&u->sh->rb, MB_OP_CALENDAR_RANGE);
		op->u.calendar.start = now_ms();
		op->u.calendar.end = op->u.calendar.start + 7LL * 24 * 3600 * 1000;
		op->u.calendar.max_rows = 100;
	} else {
		u->sh->st->n.local_reads++;
	}
	return send_rpc(u);
}

static int act_request_meeting(struct mb_user *u, const struct mb_reply *r)
{
	struct mb_uctx *c = u->ctx;
	struct mb_rb *rb = &u->sh->rb;
	if (!r) {
		/* attendees first: their free/busy */
		struct mb_msg_plan plan;
		mb_sched_plan_msg(&ES(u)->sp, &u->rng, MB_MSG_MEETING, &plan);
		int nu, nl;
		if (plan.direct > 8)
			plan.direct = 8;
		mb_sched_pick_recipients(&u->rng, &plan, u->idx, (uint32_t)ES(u)->nusers, 0, c->attendees,
					 &nu, NULL, &nl);
		if (nu == 0)
			c->attendees[nu++] = u->idx;
		c->nattendees = nu;
		emit_freebusy(u, c->attendees, nu);
		u->step = 1;
		return send_rpc(u);
	}
	if (u->step == 1) {
		const struct mb_op_reply *o = find_op(r, MB_OP_FREEBUSY, 0);
		if (!o || o->status != 0)
			return o ? o->status : MB_EPROTO;
		int n;
		struct mb_prop *p = appointment_props(u, "IPM.Appointment", &n);
		c->fid = (uint64_t)p[2].v.i; /* remember start for the request */
		emit_create_item(u, MB_FID_CALENDAR, p, n);
		u->step = 2;
		return send_rpc(u);
	}
	if (u->step == 2) {
		int rc = took_create(u, r, MB_RSLOT_CALENDAR);
		if (rc != 0)
			return rc;
		/* the request to the attendees: compose() plans recipients of
		 * its own; they are replaced by the attendees chosen above */
		struct mb_op *op = mb_rb_op(rb, MB_OP_CREATE_MESSAGE);
		op->u.create_message.fid = fid_of(u, MB_FID_SENT);
		op->u.create_message.handle = H_NEW;
		int64_t start = (int64_t)c->fid;
		compose(u, H_NEW, MB_MSG_MEETING, -1, start, start + 3600 * 1000);
		/* replace the planned recipients by the attendees */
		struct mb_op *sp = &rb->ops[rb->nops - 1];
		struct mb_prop *rp = (struct mb_prop *)&sp->u.set_props.props[2];
		struct mb_bytes *names = &rb->strs[rb->nstrs];
		rb->nstrs += c->nattendees;
		for (int i = 0; i < c->nattendees; i++)
			names[i] = mb_str(user_name(u, c->attendees[i]));
		rp->v.mv.n = (uint16_t)c->nattendees;
		rp->v.mv.v = names;
		mb_rb_op(rb, MB_OP_SUBMIT)->u.save.handle = H_NEW; /* submitting releases it */
		u->step = 3;
		return send_rpc(u);
	}
	return took_submit(u, r);
}

static int act_make_appointment(struct mb_user *u, const struct mb_reply *r)
{
	if (r && u->step == 2)
		return took_create(u, r, MB_RSLOT_CALENDAR);
	if (!r && !u->rep) {
		/* online: look at the week first */
		struct mb_op *op = mb_rb_op(&u->sh->rb, MB_OP_CALENDAR_RANGE);
		op->u.calendar.start = now_ms();
		op->u.calendar.end = op->u.calendar.start + 7LL * 24 * 3600 * 1000;
		op->u.calendar.max_rows = 100;
		u->step = 1;
		return send_rpc(u);
	}
	if (!r)
		u->sh->st->n.local_reads++; /* cached: the week is local */
	int n;
	struct mb_prop *p = appointment_props(u, "IPM.Appointment", &n);
	emit_create_item(u, MB_FID_CALENDAR, p, n);
	u->step = 2;
	return send_rpc(u);
}

/* Steps 1 and on of browsing a list (calendar, contacts): at step 1 take
 * the message ids of reply op code and pick how many to open (mean_reads on
 * average), then open one of them, at random, per RPC; 0 when done. */
static int read_some(struct mb_user *u, const struct mb_reply *r, uint8_t code, int mean_reads,
		     uint32_t local)
{
	struct mb_uctx *c = u->ctx;
	if (u->step == 1) {
		int rc = take_mids(r, code, c->mids, &c->n);
		if (rc)
			return rc;
		c->reads = c->n ? mb_rng_range(&u->rng, 1, 2 * mean_reads - 1) : 0;
		u->step = 2;
	} else {
		c->reads--;
	}
	if (c->reads <= 0)
		return 0;
	emit_read(u, local, c->mids[mb_rng_range(&u->rng, 0, c->n - 1)], false);
	return send_rpc(u);
}

static int act_browse_calendar(struct mb_user *u, const struct mb_reply *r)
{
	struct mb_rb *rb = &u->sh->rb;
	if (u->rep) {
		u->sh->st->n.local_reads += 1 + (uint64_t)ES(u)->sp.calendar_reads;
		return 0;
	}
	if (!r) {
		mb_rb_op(rb, MB_OP_OPEN_FOLDER)->u.open_folder.fid = fid_of(u, MB_FID_CALENDAR);
		struct mb_op *op = mb_rb_op(rb, MB_OP_CALENDAR_RANGE);
		op->u.calendar.start = now_ms() - 24LL * 3600 * 1000;
		op->u.calendar.end = now_ms() + 30LL * 24 * 3600 * 1000;
		op->u.calendar.max_rows = 100;
		u->step = 1;
		return send_rpc(u);
	}
	return read_some(u, r, MB_OP_CALENDAR_RANGE, ES(u)->sp.calendar_reads, MB_FID_CALENDAR);
}

/* ---- journal, logoff, contacts ------------------------------------------------------- */

static int act_journal(struct mb_user *u, const struct mb_reply *r)
{
	/* journal applications: an activity entry logged to the journal
	 * (the first user folder; the Inbox when there is none) */
	uint32_t local = u->nfolders ? u->folders[0] : MB_FID_INBOX;
	if (r) {
		int slot = u->rep ? mb_replica_slot(u->rep, local) : 0;
		return took_create(u, r, slot < 0 ? 0 : slot);
	}
	int n;
	struct mb_prop *p = appointment_props(u, "IPM.Activity", &n);
	emit_create_item(u, local, p, n);
	return send_rpc(u);
}

static int act_logoff(struct mb_user *u, const struct mb_reply *r)
{
	if (r) {
		const struct mb_op_reply *o = find_op(r, MB_OP_LOGOFF, 0);
		if (!o || o->status != 0)
			return o ? o->status : MB_EPROTO;
		u->logged_off = true; /* the connection closes; logon again later */
		return 0;
	}
	mb_rb_op(&u->sh->rb, MB_OP_LOGOFF);
	return send_rpc(u);
}

static int act_browse_contacts(struct mb_user *u, const struct mb_reply *r)
{
	if (u->rep) {
		u->sh->st->n.local_reads += 1 + (uint64_t)ES(u)->sp.contacts_reads;
		return 0;
	}
	if (!r) {
		struct mb_op *op = mb_rb_op(&u->sh->rb, MB_OP_LIST_CONTACTS);
		int total = mb_topology_info(ES(u)->topo)->contacts;
		op->u.list_contacts.start = (uint32_t)mb_rng_range(&u->rng, 0, total > 30 ? total - 30 : 0);
		op->u.list_contacts.max_rows = 30;
		u->step = 1;
		return send_rpc(u);
	}
	return read_some(u, r, MB_OP_LIST_CONTACTS, ES(u)->sp.contacts_reads, MB_FID_CONTACTS);
}

static int act_create_contact(struct mb_user *u, const struct mb_reply *r)
{
	struct mb_rb *rb = &u->sh->rb;
	if (r) {
		if (u->rep)
			return took_create(u, r, MB_RSLOT_CONTACTS);
		return ack_saved(u, r, MB_OP_CREATE_CONTACT);
	}
	uint64_t seed = mb_rng_next(&u->rng);
	char name[64];
	mb_content_subject(seed, name, 40);
	struct mb_prop *p = rb_props(rb, 3);
	p[0] = mb_prop_str(MB_PR_MESSAGE_CLASS, "IPM.Contact");
	p[1].tag = MB_PR_DISPLAY_NAME;
	p[1].v.b = rb_printf(rb, "%s", name);
	p[2].tag = MB_PR_EMAIL_ADDRESS;
	p[2].v.b = rb_printf(rb, "contact%llu@example.org", (unsigned long long)(seed % 1000000));
	if (u->rep) {
		emit_create_item(u, MB_FID_CONTACTS, p, 3);
	} else {
		struct mb_op *op = mb_rb_op(rb, MB_OP_CREATE_CONTACT);
		op->u.create_contact.n = 3;
		op->u.create_contact.props = p;
	}
	return send_rpc(u);
}

/* ---- dispatch ------------------------------------------------------------------------ */

typedef int (*act_fn)(struct mb_user *u, const struct mb_reply *r);

static act_fn fn_of(int task)
{
	switch (task) {
	case MB_A_SEND_MAIL:
		return act_send_mail;
	case MB_A_PROCESS_INBOX:
		return act_process_inbox;
	case MB_A_BROWSE_MAIL:
		return act_browse_mail;
	case MB_A_CHECK_FREEBUSY:
		return act_check_freebusy;
	case MB_A_REQUEST_MEETING:
		return act_request_meeting;
	case MB_A_MAKE_APPOINTMENT:
		return act_make_appointment;
	case MB_A_BROWSE_CALENDAR:
		return act_browse_calendar;
	case MB_A_JOURNAL_APPS:
		return act_journal;
	case MB_A_LOGOFF:
		return act_logoff;
	case MB_A_BROWSE_CONTACTS:
		return act_browse_contacts;
	case MB_A_CREATE_CONTACT:
		return act_create_contact;
	case MB_TASK_LOGON:
		return task_logon;
	case MB_TASK_SYNC:
		return task_sync;
	case MB_TASK_KEEPALIVE:
		return task_keepalive;
	default:
		return NULL;
	}
}

int mb_act_start(struct mb_user *u)
{
	act_fn f = fn_of(u->task);
	return f ? f(u, NULL) : MB_EINVAL;
}

int mb_act_next(struct mb_user *u, const struct mb_reply *r)
{
	act_fn f = fn_of(u->task);
	return f ? f(u, r) : MB_EINVAL;
}

void mb_act_event(struct mb_user *u, const struct mb_event *ev)
{
	if (ev->type != MB_EVENT_NEW_MAIL || !u->rep)
		return;
	int slot = mb_replica_slot(u->rep, (uint32_t)(ev->fid & 0xffffffffu));
	if (slot >= 0)
		u->rep->dirty |= 1u << slot;
}
