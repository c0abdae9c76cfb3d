/* ops.c: execution of the protocol's operations on a database owner thread.
 *
 * Invariants:
 *  - An op runs on the thread that owns the database it touches: the
 *    session's home database, the free/busy target's database, or, for
 *    SubmitMessage, each recipient database in turn (phases); when the next
 *    op needs another database the request is queued there and this thread
 *    returns at once (never waits for another database).
 *  - Access: every folder id must name the session's own mailbox
 *    (MB_EACCES otherwise); only FreeBusy reads another mailbox.
 *  - Writes: one transaction per op (per database for deliveries), committed
 *    with mb_db_commit_async; pending counts the commits, so the reply waits
 *    until they are durable; a failed op aborts its transaction.
 *  - Everything a reply points at is copied into the request's arena.
 */
#include "store/store_int.h"
#include "core/error.h"
#include "core/sampler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- handles ---- */

static void handle_clear(struct handle *h)
{
	for (uint16_t i = 0; i < h->nprops; i++) {
		struct mb_prop *p = &h->props[i].p;
		uint16_t t = MB_PTAG_TYPE(p->tag);
		if (t == MB_PT_STRING || t == MB_PT_BINARY)
			free((void *)p->v.b.p);
		else if (t == MB_PT_MV_STRING) {
			for (uint16_t j = 0; j < p->v.mv.n; j++)
				free((void *)p->v.mv.v[j].p);
			free(p->v.mv.v);
		}
	}
	free(h->props);
	memset(h, 0, sizeof(*h));
}

void mb_session_clear(struct session *s)
{
	if (s->handles) {
		for (int i = 0; i < MB_MAX_HANDLES; i++) {
			if (s->handles[i]) {
				handle_clear(s->handles[i]);
				free(s->handles[i]);
			}
		}
		free(s->handles);
		s->handles = NULL;
	}
}

static struct handle *handle_find(struct session *s, uint32_t id)
{
	if (!s->handles || id == 0)
		return NULL;
	for (int i = 0; i < MB_MAX_HANDLES; i++)
		if (s->handles[i] && s->handles[i]->id == id)
			return s->handles[i];
	return NULL;
}

static void handle_release(struct session *s, struct handle *h)
{
	for (int i = 0; i < MB_MAX_HANDLES; i++) {
		if (s->handles[i] == h) {
			handle_clear(h);
			free(h);
			s->handles[i] = NULL;
			return;
		}
	}
}

/* A fresh handle under id (an old one with that id is released).  Each
 * handle is its own allocation, so an idle session holds only what it
 * uses. */
static int handle_new(struct session *s, uint32_t id, uint8_t kind, struct handle **out)
{
	if (id == 0)
		return MB_EINVAL;
	if (!s->handles) {
		s->handles = calloc(MB_MAX_HANDLES, sizeof(struct handle *));
		if (!s->handles)
			return MB_ENOMEM;
	}
	struct handle *h = handle_find(s, id);
	if (h) {
		handle_clear(h);
	} else {
		int slot = -1;
		for (int i = 0; i < MB_MAX_HANDLES && slot < 0; i++)
			if (!s->handles[i])
				slot = i;
		if (slot < 0)
			return MB_EFULL;
		h = calloc(1, sizeof(*h));
		if (!h)
			return MB_ENOMEM;
		s->handles[slot] = h;
	}
	h->id = id;
	h->kind = kind;
	*out = h;
	return 0;
}

static void *dup_bytes(const void *p, size_t n)
{
	void *d = malloc(n ? n : 1);
	if (d && n)
		memcpy(d, p, n);
	return d;
}

/* Set (copy) a property on a draft/open message handle. */
static int handle_set_prop(struct handle *h, const struct mb_prop *p)
{
	struct draft_prop *dp = NULL;
	for (uint16_t i = 0; i < h->nprops; i++)
		if (h->props[i].p.tag == p->tag)
			dp = &h->props[i];
	if (!dp) {
		if (h->nprops >= MB_PROTO_MAX_PROPS)
			return MB_EFULL;
		void *n = realloc(h->props, (size_t)(h->nprops + 1) * sizeof(*h->props));
		if (!n)
			return MB_ENOMEM;
		h->props = n;
		dp = &h->props[h->nprops++];
	} else {
		/* free the old value by clearing a one-prop copy */
		struct handle tmp;
		memset(&tmp, 0, sizeof(tmp));
		tmp.nprops = 1;
		tmp.props = malloc(sizeof(*tmp.props));
		if (!tmp.props)
			return MB_ENOMEM;
		tmp.props[0] = *dp;
		handle_clear(&tmp);
	}
	memset(dp, 0, sizeof(*dp));
	dp->p.tag = p->tag;
	switch (MB_PTAG_TYPE(p->tag)) {
	case MB_PT_STRING:
	case MB_PT_BINARY:
		dp->p.v.b.p = dup_bytes(p->v.b.p, p->v.b.len);
		dp->p.v.b.len = p->v.b.len;
		if (!dp->p.v.b.p)
			return MB_ENOMEM;
		break;
	case MB_PT_MV_STRING:
		dp->p.v.mv.v = calloc(p->v.mv.n ? p->v.mv.n : 1, sizeof(struct mb_bytes));
		if (!dp->p.v.mv.v)
			return MB_ENOMEM;
		dp->p.v.mv.n = p->v.mv.n;
		for (uint16_t j = 0; j < p->v.mv.n; j++) {
			dp->p.v.mv.v[j].p = dup_bytes(p->v.mv.v[j].p, p->v.mv.v[j].len);
			dp->p.v.mv.v[j].len = p->v.mv.v[j].len;
			if (!dp->p.v.mv.v[j].p)
				return MB_ENOMEM;
		}
		break;
	default:
		dp->p.v.i = p->v.i;
	}
	return 0;
}

static const struct mb_prop *handle_prop(const struct handle *h, uint32_t tag)
{
	for (uint16_t i = 0; i < h->nprops; i++)
		if (h->props[i].p.tag == tag)
			return &h->props[i].p;
	return NULL;
}

/* ---- commits ---- */

struct commit_ctx {
	struct req *r;
	uint32_t deliveries_db;
	uint32_t deliveries_rcpt;
};

static void commit_cb(void *arg, int status)
{
	struct commit_ctx *cc = arg;
	struct mb_store *st = cc->r->st;
	if (status) {
		atomic_store(&cc->r->commit_err, status);
		atomic_fetch_add(&st->c.commit_errors, 1);
	} else {
		atomic_fetch_add(&st->c.commits, 1);
		atomic_fetch_add(&st->c.deliveries_db, cc->deliveries_db);
		atomic_fetch_add(&st->c.deliveries_rcpt, cc->deliveries_rcpt);
	}
	struct req *r = cc->r;
	free(cc);
	mb_req_release(r);
}

static int txn_begin(struct dbw *w)
{
	return mb_db_begin(w->db);
}

/* Commit the open transaction asynchronously (or abort it when rc != 0). */
static int txn_end(struct dbw *w, struct req *r, int rc, uint32_t ddb, uint32_t drcpt)
{
	if (rc) {
		mb_db_abort(w->db);
		return rc;
	}
	struct commit_ctx *cc = malloc(sizeof(*cc));
	if (!cc) {
		mb_db_abort(w->db);
		return MB_ENOMEM;
	}
	cc->r = r;
	cc->deliveries_db = ddb;
	cc->deliveries_rcpt = drcpt;
	atomic_fetch_add(&r->pending, 1);
	rc = mb_db_commit_async(w->db, commit_cb, cc);
	if (rc) {
		/* the callback will not run */
		atomic_fetch_sub(&r->pending, 1);
		free(cc);
	}
	return rc;
}

/* ---- helpers ---- */

static void *ar(struct req *r, size_t n)
{
	return mb_arena_alloc(r->arena, n);
}

/* A copy of p[0..n) in the reply arena, as out; MB_ETOOBIG when full. */
static int ar_bytes(struct req *r, const void *p, size_t n, struct mb_bytes *out)
{
	uint8_t *b = ar(r, n ? n : 1);
	if (!b)
		return MB_ETOOBIG;
	if (n)
		memcpy(b, p, n);
	out->p = b;
	out->len = (uint32_t)n;
	return 0;
}

/* Room for n rows of nc columns in res (rows.ncols, rows.vals). */
static int ar_rows(struct req *r, struct mb_op_reply *res, uint32_t n, uint16_t nc)
{
	res->u.rows.ncols = nc;
	res->u.rows.vals = ar(r, (size_t)(n ? n : 1) * nc * sizeof(struct mb_prop));
	return res->u.rows.vals ? 0 : MB_ETOOBIG;
}

static int own_folder(struct req *r, uint64_t fid, uint32_t *local)
{
	if (MB_FID_MAILBOX(fid) != r->sess->mailbox)
		return MB_EACCES;
	*local = MB_FID_LOCAL(fid);
	return 0;
}

/* Copy a stored row's props into the arena and decode them. */
static int row_props(struct req *r, const struct mb_msg_rec *rec, struct mb_prop **props,
		     uint16_t *n)
{
	uint8_t *copy = ar(r, rec->props_len ? rec->props_len : 1);
	if (!copy)
		return MB_ETOOBIG;
	memcpy(copy, rec->props, rec->props_len);
	return mb_props_decode(copy, rec->props_len, r->arena, props, n);
}

static int budget(struct req *r, size_t n)
{
	if (n > r->reply_budget)
		return MB_ETOOBIG;
	r->reply_budget -= n;
	return 0;
}

/* Value of column tag for a stored message; body read when asked. */
static int msg_column(struct dbw *w, struct req *r, uint32_t mailbox, const struct mb_msg_rec *rec,
		      const struct mb_prop *props, uint16_t nprops, uint32_t tag,
		      struct mb_prop *out)
{
	memset(out, 0, sizeof(*out));
	out->tag = tag;
	switch (tag) {
	case MB_PR_MID:
		out->v.i = (int64_t)rec->mid;
		return 0;
	case MB_PR_FID:
		out->v.i = (int64_t)MB_FID(mailbox, rec->folder);
		return 0;
	case MB_PR_DELIVERY_TIME:
		out->v.i = rec->time;
		return 0;
	case MB_PR_MESSAGE_FLAGS:
		out->v.i = rec->flags;
		return 0;
	case MB_PR_MESSAGE_SIZE:
		out->v.i = rec->size;
		return 0;
	case MB_PR_CHANGE_NUM:
		out->v.i = (int64_t)rec->cn;
		return 0;
	case MB_PR_START_DATE:
	case MB_PR_END_DATE:
	case MB_PR_BUSY_STATUS:
		if (!rec->appointment)
			break;
		out->v.i = tag == MB_PR_START_DATE ? rec->start
			   : tag == MB_PR_END_DATE ? rec->end
						   : (int64_t)rec->busy;
		return 0;
	case MB_PR_BODY: {
		int rc = mb_schema_msg_body(w->schema, mailbox, rec->mid, &w->val2);
		if (rc)
			return rc;
		rc = budget(r, w->val2.len);
		if (rc)
			return rc;
		return ar_bytes(r, w->val2.data, w->val2.len, &out->v.b);
	}
	default: {
		const struct mb_prop *p = mb_props_find(props, nprops, tag);
		if (p) {
			*out = *p;
			return budget(r, mb_prop_wire_size(p));
		}
	}
	}
	out->tag = (tag & 0xFFFF0000u) | MB_PT_ERROR;
	out->v.i = MB_ENOTFOUND;
	return 0;
}

static const uint32_t contents_cols[] = {MB_PR_MID, MB_PR_SUBJECT, MB_PR_SENDER_NAME,
					 MB_PR_DELIVERY_TIME, MB_PR_MESSAGE_SIZE,
					 MB_PR_MESSAGE_FLAGS};
static const uint32_t hier_cols[] = {MB_PR_FID, MB_PR_DISPLAY_NAME, MB_PR_CONTENT_COUNT,
				     MB_PR_CONTENT_UNREAD};
static const uint32_t summary_cols[] = {MB_PR_MID,         MB_PR_MESSAGE_CLASS,
					MB_PR_SUBJECT,     MB_PR_SENDER_NAME,
					MB_PR_DISPLAY_TO,  MB_PR_DELIVERY_TIME,
					MB_PR_MESSAGE_SIZE, MB_PR_MESSAGE_FLAGS};
static const uint32_t sync_cols[] = {MB_PR_MESSAGE_CLASS, MB_PR_SUBJECT, MB_PR_SENDER_NAME,
				     MB_PR_DELIVERY_TIME, MB_PR_MESSAGE_SIZE, MB_PR_MESSAGE_FLAGS,
				     MB_PR_START_DATE,    MB_PR_END_DATE};
static const uint32_t cal_cols[] = {MB_PR_MID,      MB_PR_SUBJECT,     MB_PR_START_DATE,
				    MB_PR_END_DATE, MB_PR_BUSY_STATUS, MB_PR_LOCATION};
static const uint32_t contact_cols[] = {MB_PR_MID, MB_PR_DISPLAY_NAME, MB_PR_EMAIL_ADDRESS};

/* Fill ncols values of message mid into vals. */
static int msg_row(struct dbw *w, struct req *r, uint32_t mailbox, uint64_t mid,
		   const uint32_t *cols, uint16_t ncols, struct mb_prop *vals, struct mb_msg_rec *rec)
{
	struct mb_prop *props = NULL;
	uint16_t nprops = 0;
	int rc = mb_schema_msg_get(w->schema, mailbox, mid, &w->val, rec);
	if (rc)
		return rc;
	rc = row_props(r, rec, &props, &nprops);
	for (uint16_t c = 0; c < ncols && !rc; c++)
		rc = msg_column(w, r, mailbox, rec, props, nprops, cols[c], &vals[c]);
	return rc;
}

/* ---- collecting scans ---- */

struct mid_list {
	uint64_t *mids;
	uint32_t n, cap;
	uint32_t skip;
};
static int collect_mid(void *arg, uint64_t mid)
{
	struct mid_list *l = arg;
	if (l->skip) {
		l->skip--;
		return 0;
	}
	if (l->n < l->cap)
		l->mids[l->n++] = mid;
	return l->n >= l->cap;
}

struct folder_list {
	struct mb_folder_rec *f;
	uint32_t n, cap;
};
static int collect_folder(void *arg, const struct mb_folder_rec *f)
{
	struct folder_list *l = arg;
	if (l->n < l->cap)
		l->f[l->n++] = *f;
	return l->n >= l->cap;
}
static int count_folder(void *arg, const struct mb_folder_rec *f)
{
	(void)f;
	(*(uint32_t *)arg)++;
	return 0;
}

struct change {
	uint64_t cn, mid;
	bool deleted;
};
struct change_list {
	struct change *c;
	uint32_t n, cap;
};
static int collect_change(void *arg, uint64_t cn, uint64_t mid, bool deleted)
{
	struct change_list *l = arg;
	l->c[l->n].cn = cn;
	l->c[l->n].mid = mid;
	l->c[l->n].deleted = deleted;
	l->n++;
	return l->n >= l->cap;
}

struct appt {
	uint64_t mid;
	int64_t start, end;
	uint32_t busy;
};
struct appt_list {
	struct appt *a;
	uint32_t n, cap;
};
static int collect_appt(void *arg, uint64_t mid, int64_t start, int64_t end, uint32_t busy)
{
	struct appt_list *l = arg;
	l->a[l->n].mid = mid;
	l->a[l->n].start = start;
	l->a[l->n].end = end;
	l->a[l->n].busy = busy;
	l->n++;
	return l->n >= l->cap;
}

/* ---- message input from properties ---- */

static void msg_in_from_props(struct mb_msg_in *in, const struct mb_prop *props, uint16_t n,
			      struct mb_prop *rest, uint16_t *nrest, int64_t default_time)
{
	memset(in, 0, sizeof(*in));
	in->time = default_time;
	*nrest = 0;
	for (uint16_t i = 0; i < n; i++) {
		const struct mb_prop *p = &props[i];
		switch (p->tag) {
		case MB_PR_BODY:
			in->body = p->v.b.p;
			in->body_len = p->v.b.len;
			break;
		case MB_PR_DELIVERY_TIME:
			in->time = p->v.i;
			break;
		case MB_PR_MESSAGE_FLAGS:
			in->flags = (uint32_t)p->v.i;
			break;
		case MB_PR_START_DATE:
			in->start = p->v.i;
			in->appointment = true;
			break;
		case MB_PR_END_DATE:
			in->end = p->v.i;
			in->appointment = true;
			break;
		case MB_PR_BUSY_STATUS:
			in->busy = (uint32_t)p->v.i;
			break;
		case MB_PR_MID:
		case MB_PR_FID:
		case MB_PR_MESSAGE_SIZE:
		case MB_PR_CHANGE_NUM:
			break; /* computed, never stored from clients */
		default:
			rest[(*nrest)++] = *p;
		}
	}
	if (in->appointment && in->end < in->start)
		in->end = in->start;
	in->props = rest;
	in->nprops = *nrest;
}

/* Message contents of a handle: stored props merged with the handle's
 * changes (handle wins), as one array in the arena. */
static int handle_merged(struct dbw *w, struct req *r, struct handle *h, struct mb_prop **out,
			 uint16_t *nout)
{
	struct mb_prop *stored = NULL;
	uint16_t nstored = 0;
	struct mb_msg_rec rec;
	int rc = 0;
	uint32_t mailbox = r->sess->mailbox;

	memset(&rec, 0, sizeof(rec));
	if (h->kind == H_MESSAGE) {
		rc = mb_schema_msg_get(w->schema, mailbox, h->mid, &w->val, &rec);
		if (!rc)
			rc = row_props(r, &rec, &stored, &nstored);
		if (rc)
			return rc;
	}
	struct mb_prop *m = ar(r, (size_t)(nstored + h->nprops + 8) * sizeof(*m));
	if (!m)
		return MB_ETOOBIG;
	uint16_t n = 0;
	for (uint16_t i = 0; i < nstored; i++)
		if (!handle_prop(h, stored[i].tag))
			m[n++] = stored[i];
	if (h->kind == H_MESSAGE) {
		/* fixed fields the stored row keeps outside props */
		static const uint32_t fixed[] = {MB_PR_DELIVERY_TIME, MB_PR_MESSAGE_FLAGS,
						 MB_PR_START_DATE, MB_PR_END_DATE,
						 MB_PR_BUSY_STATUS, MB_PR_BODY};
		for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
			if (handle_prop(h, fixed[i]))
				continue;
			struct mb_prop v;
			rc = msg_column(w, r, mailbox, &rec, NULL, 0, fixed[i], &v);
			if (rc)
				return rc;
			if (MB_PTAG_TYPE(v.tag) != MB_PT_ERROR)
				m[n++] = v;
		}
	}
	for (uint16_t i = 0; i < h->nprops; i++)
		m[n++] = h->props[i].p;
	*out = m;
	*nout = n;
	return 0;
}

/* ---- the operations ---- */

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
		/* a stable fake salt: unknown names look like known ones */
		uint8_t key[MB_KEY_LEN], proof[MB_PROOF_LEN], zero[MB_NONCE_LEN];
		memset(key, 0x6b, sizeof(key));
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
	if ((op->u.logon.flags & MB_LOGON_F_LZ4) && st->o.compression)
		s->flags |= MB_LOGON_F_LZ4;
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
	int rc = own_folder(r, op->u.open_folder.fid, &local);
	if (rc)
		return rc;
	rc = mb_schema_folder_get(w->schema, r->sess->mailbox, local, &f);
	if (rc)
		return rc;
	rc = ar_bytes(r, f.name, strlen(f.name), &res->u.folder.name);
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
	int rc = own_folder(r, op->u.get_table.fid, &local);
	if (rc)
		return rc;
	rc = mb_schema_folder_get(w->schema, r->sess->mailbox, local, &f);
	if (rc)
		return rc;
	rc = handle_new(r->sess, op->u.get_table.handle, contents ? H_CONTENTS : H_HIERARCHY, &h);
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
		rc = mb_schema_folder_children(w->schema, r->sess->mailbox, local, 0, count_folder,
					       &n);
		res->u.table.rows = n;
	}
	return rc;
}

static int op_set_columns(struct req *r, struct mb_op *op)
{
	struct handle *h = handle_find(r->sess, op->u.set_columns.handle);
	if (!h)
		return MB_ENOTFOUND;
	if (h->kind != H_CONTENTS && h->kind != H_HIERARCHY)
		return MB_ESTATE;
	h->ncols = op->u.set_columns.n;
	memcpy(h->cols, op->u.set_columns.tags, (size_t)h->ncols * sizeof(uint32_t));
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
		return ar_bytes(r, f->name, strlen(f->name), &out->v.b);
	}
	out->tag = (tag & 0xFFFF0000u) | MB_PT_ERROR;
	out->v.i = MB_ENOTFOUND;
	return 0;
}

static int op_query_rows(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	struct handle *h = handle_find(r->sess, op->u.query_rows.handle);
	uint32_t mailbox = r->sess->mailbox;
	uint32_t max = op->u.query_rows.max_rows;
	int rc = 0;

	if (!h)
		return MB_ENOTFOUND;
	if (h->kind != H_CONTENTS && h->kind != H_HIERARCHY)
		return MB_ESTATE;
	if (max > MB_PROTO_MAX_ROWS)
		max = MB_PROTO_MAX_ROWS;
	if (op->u.query_rows.flags & MB_QR_F_RESTART) {
		memset(&h->pos, 0, sizeof(h->pos));
		h->hier_after = 0;
		h->hier_done = false;
	}
	res->u.rows.ncols = h->ncols;
	bool more = false;
	if (h->kind == H_CONTENTS) {
		struct mid_list l = {ar(r, (max ? max : 1) * sizeof(uint64_t)), 0, max, 0};
		if (!l.mids)
			return MB_ETOOBIG;
		struct mb_scan_pos save = h->pos;
		if (max)
			rc = mb_schema_folder_scan(w->schema, mailbox, h->folder, &h->pos, max,
						   collect_mid, &l, &more);
		if (rc)
			return rc;
		if (ar_rows(r, res, l.n, h->ncols))
			return MB_ETOOBIG;
		uint32_t done = 0;
		for (; done < l.n; done++) {
			struct mb_msg_rec rec;
			size_t before = r->reply_budget;
			rc = msg_row(w, r, mailbox, l.mids[done], h->cols, h->ncols,
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
			struct mid_list l2 = {ar(r, done * sizeof(uint64_t) + 8), 0, done, 0};
			bool m2;
			if (done)
				rc = mb_schema_folder_scan(w->schema, mailbox, h->folder, &h->pos, done,
							   collect_mid, &l2, &m2);
		}
		res->u.rows.nrows = done;
	} else {
		struct folder_list l = {ar(r, (max + 1) * sizeof(struct mb_folder_rec)), 0, max + 1};
		if (!l.f)
			return MB_ETOOBIG;
		if (!h->hier_done && max)
			rc = mb_schema_folder_children(w->schema, mailbox, h->folder, h->hier_after,
						       collect_folder, &l);
		if (rc)
			return rc;
		uint32_t n = l.n > max ? max : l.n;
		more = l.n > max;
		if (ar_rows(r, res, n, h->ncols))
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
	int rc = own_folder(r, op->u.open_message.fid, &local);
	if (rc)
		return rc;
	uint16_t n = sizeof(summary_cols) / sizeof(summary_cols[0]);
	struct mb_prop *vals = ar(r, n * sizeof(*vals));
	if (!vals)
		return MB_ETOOBIG;
	rc = msg_row(w, r, r->sess->mailbox, op->u.open_message.mid, summary_cols, n, vals, &rec);
	if (rc)
		return rc;
	if (rec.folder != local)
		return MB_ENOTFOUND;
	rc = handle_new(r->sess, op->u.open_message.handle, H_MESSAGE, &h);
	if (rc)
		return rc;
	h->folder = local;
	h->mid = op->u.open_message.mid;
	res->u.props.n = n;
	res->u.props.props = vals;
	return 0;
}

static int op_get_props(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	struct handle *h = handle_find(r->sess, op->u.get_props.handle);
	uint16_t n = op->u.get_props.n;
	int rc = 0;

	if (!h)
		return MB_ENOTFOUND;
	if (h->kind != H_MESSAGE && h->kind != H_DRAFT)
		return MB_ESTATE;
	struct mb_prop *vals = ar(r, (size_t)(n ? n : 1) * sizeof(*vals));
	if (!vals)
		return MB_ETOOBIG;
	struct mb_msg_rec rec;
	struct mb_prop *props = NULL;
	uint16_t nprops = 0;
	if (h->kind == H_MESSAGE) {
		rc = mb_schema_msg_get(w->schema, r->sess->mailbox, h->mid, &w->val, &rec);
		if (!rc)
			rc = row_props(r, &rec, &props, &nprops);
		if (rc)
			return rc;
	}
	for (uint16_t i = 0; i < n && !rc; i++) {
		const struct mb_prop *p = handle_prop(h, op->u.get_props.tags[i]);
		if (p) {
			vals[i] = *p;
			rc = budget(r, mb_prop_wire_size(p));
		} else if (h->kind == H_MESSAGE) {
			rc = msg_column(w, r, r->sess->mailbox, &rec, props, nprops,
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
	int rc = own_folder(r, op->u.create_message.fid, &local);
	if (rc)
		return rc;
	rc = mb_schema_folder_get(w->schema, r->sess->mailbox, local, &f);
	if (rc)
		return rc;
	rc = handle_new(r->sess, op->u.create_message.handle, H_DRAFT, &h);
	if (rc)
		return rc;
	h->folder = local;
	return 0;
}

static int op_set_props(struct req *r, struct mb_op *op)
{
	struct handle *h = handle_find(r->sess, op->u.set_props.handle);
	int rc = 0;
	if (!h)
		return MB_ENOTFOUND;
	if (h->kind != H_MESSAGE && h->kind != H_DRAFT)
		return MB_ESTATE;
	for (uint16_t i = 0; i < op->u.set_props.n && !rc; i++)
		rc = handle_set_prop(h, &op->u.set_props.props[i]);
	return rc;
}

static int op_save(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	struct handle *h = handle_find(r->sess, op->u.save.handle);
	struct mb_prop *props, rest[MB_PROTO_MAX_PROPS + 8];
	uint16_t n, nrest;
	struct mb_msg_in in;
	uint64_t mid = 0, cn = 0;
	int rc;

	if (!h)
		return MB_ENOTFOUND;
	if (h->kind != H_MESSAGE && h->kind != H_DRAFT)
		return MB_ESTATE;
	rc = handle_merged(w, r, h, &props, &n);
	if (rc)
		return rc;
	if (n > MB_PROTO_MAX_PROPS + 8)
		return MB_ETOOBIG;
	msg_in_from_props(&in, props, n, rest, &nrest, now_ms());
	rc = txn_begin(w);
	if (rc)
		return rc;
	if (h->kind == H_DRAFT) {
		rc = mb_schema_msg_add(w->schema, r->sess->mailbox, h->folder, &in, w->tmp, &mid, &cn);
	} else {
		mid = h->mid;
		rc = mb_schema_msg_update(w->schema, r->sess->mailbox, mid, &in, w->tmp, &cn);
	}
	rc = txn_end(w, r, rc, 0, 0);
	if (rc)
		return rc;
	/* the handle now names the saved message, with no pending changes */
	uint32_t id = h->id, folder = h->folder;
	handle_clear(h);
	h->id = id;
	h->kind = H_MESSAGE;
	h->folder = folder;
	h->mid = mid;
	res->u.saved.mid = mid;
	res->u.saved.cn = cn;
	return 0;
}

static int add_rcpt(struct mb_store *st, struct submit_state *sub, int user, int cap)
{
	for (int i = 0; i < sub->nrcpt; i++)
		if (sub->rcpt[i] == user)
			return 0;
	if (sub->nrcpt >= cap)
		return MB_ETOOBIG;
	sub->rcpt[sub->nrcpt++] = user;
	(void)st;
	return 0;
}

/* SubmitMessage, phase 0 (home database): resolve recipients, save the
 * Sent Items copy, plan the deliveries. */
static int submit_begin(struct dbw *w, struct req *r, struct handle *h)
{
	struct mb_store *st = r->st;
	struct mb_prop *props;
	uint16_t n;
	int rc = handle_merged(w, r, h, &props, &n);
	if (rc)
		return rc;
	const struct mb_prop *rp = mb_props_find(props, n, MB_PR_RECIPIENTS);
	if (!rp || rp->v.mv.n == 0)
		return MB_EINVAL;
	int cap = MB_PROTO_MAX_IDS;
	struct submit_state *sub = ar(r, sizeof(*sub));
	if (!sub)
		return MB_ETOOBIG;
	sub->rcpt = ar(r, (size_t)cap * sizeof(int));
	if (!sub->rcpt)
		return MB_ETOOBIG;
	for (uint16_t i = 0; i < rp->v.mv.n && !rc; i++) {
		struct mb_bytes nm = rp->v.mv.v[i];
		int idx;
		if (mb_topology_find_user(st->topo, (const char *)nm.p, nm.len, &idx) == 0) {
			rc = add_rcpt(st, sub, idx, cap);
		} else if (mb_topology_find_list(st->topo, (const char *)nm.p, nm.len, &idx) == 0) {
			const struct mb_topo_list *l = mb_topology_list(st->topo, idx);
			for (int m = 0; m < l->nmembers && !rc; m++)
				rc = add_rcpt(st, sub, (int)l->members[m], cap);
		} else {
			rc = MB_ENOTFOUND;
		}
	}
	if (rc)
		return rc;
	/* databases in increasing order */
	sub->dbs = ar(r, (size_t)st->ndb * sizeof(int));
	if (!sub->dbs)
		return MB_ETOOBIG;
	for (int d = 1; d <= st->ndb; d++) {
		for (int i = 0; i < sub->nrcpt; i++) {
			if (mb_topology_user(st->topo, sub->rcpt[i])->db == d) {
				sub->dbs[sub->ndb++] = d;
				break;
			}
		}
	}
	sub->dl = ar(r, (size_t)sub->nrcpt * sizeof(struct mb_delivery));
	if (!sub->dl)
		return MB_ETOOBIG;

	/* the message as delivered: the sender's name, the time of sending */
	const struct mb_topo_user *me = mb_topology_user(st->topo, r->sess->user);
	struct mb_prop *dprops = ar(r, (size_t)(n + 4) * sizeof(*dprops));
	if (!dprops)
		return MB_ETOOBIG;
	uint16_t dn = 0;
	for (uint16_t i = 0; i < n; i++) {
		uint32_t t = props[i].tag;
		if (t == MB_PR_SENDER_NAME || t == MB_PR_DELIVERY_TIME || t == MB_PR_MESSAGE_FLAGS)
			continue;
		dprops[dn++] = props[i];
	}
	dprops[dn++] = mb_prop_str(MB_PR_SENDER_NAME, me->name);
	dprops[dn++] = mb_prop_i64(MB_PR_DELIVERY_TIME, now_ms());
	if (!mb_props_find(dprops, dn, MB_PR_MESSAGE_CLASS))
		dprops[dn++] = mb_prop_str(MB_PR_MESSAGE_CLASS, "IPM.Note");
	sub->props = dprops;
	sub->nprops = dn;

	/* Sent Items copy, read */
	struct mb_prop rest[MB_PROTO_MAX_PROPS + 8], sent[MB_PROTO_MAX_PROPS + 8];
	uint16_t nrest;
	struct mb_msg_in in;
	if (dn + 1 > MB_PROTO_MAX_PROPS + 8)
		return MB_ETOOBIG;
	memcpy(sent, dprops, dn * sizeof(*sent));
	sent[dn] = mb_prop_i64(MB_PR_MESSAGE_FLAGS, MB_MSGFLAG_READ);
	msg_in_from_props(&in, sent, (uint16_t)(dn + 1), rest, &nrest, now_ms());
	sub->body = in.body;
	sub->body_len = in.body_len;
	rc = txn_begin(w);
	if (rc)
		return rc;
	rc = mb_schema_msg_add(w->schema, r->sess->mailbox, MB_FID_SENT, &in, w->tmp, &sub->sent_mid,
			       NULL);
	rc = txn_end(w, r, rc, 0, 0);
	if (rc)
		return rc;
	sub->phase = 1;
	r->sub = sub;
	return 0;
}

/* SubmitMessage, a delivery phase on the database that runs it. */
static int submit_deliver(struct dbw *w, struct req *r)
{
	struct submit_state *sub = r->sub;
	struct mb_store *st = r->st;
	struct mb_prop rest[MB_PROTO_MAX_PROPS + 8];
	uint16_t nrest;
	struct mb_msg_in in;
	uint32_t count = 0;
	int rc;

	if (sub->nprops > MB_PROTO_MAX_PROPS + 8)
		return MB_ETOOBIG;
	msg_in_from_props(&in, sub->props, sub->nprops, rest, &nrest, now_ms());
	in.flags = 0; /* unread */
	rc = txn_begin(w);
	if (rc)
		return rc;
	int first = sub->ndl;
	for (int i = 0; i < sub->nrcpt && !rc; i++) {
		const struct mb_topo_user *u = mb_topology_user(st->topo, sub->rcpt[i]);
		if (u->db != w->index)
			continue;
		uint64_t mid, cn;
		rc = mb_schema_msg_add(w->schema, u->mailbox, MB_FID_INBOX, &in, w->tmp, &mid, &cn);
		if (rc)
			break;
		sub->dl[sub->ndl].mailbox = u->mailbox;
		sub->dl[sub->ndl].mid = mid;
		sub->ndl++;
		count++;
		if (r->nevents == r->cap_events) {
			int nc = r->cap_events ? r->cap_events * 2 : 16;
			struct mb_event_out *ne = ar(r, (size_t)nc * sizeof(*ne));
			if (!ne) {
				rc = MB_ETOOBIG;
				break;
			}
			if (r->nevents)
				memcpy(ne, r->events, (size_t)r->nevents * sizeof(*ne));
			r->events = ne;
			r->cap_events = nc;
		}
		struct mb_event_out *e = &r->events[r->nevents++];
		e->mailbox = u->mailbox;
		e->ev.type = MB_EVENT_NEW_MAIL;
		e->ev.fid = MB_FID(u->mailbox, MB_FID_INBOX);
		e->ev.mid = mid;
		e->ev.cn = cn;
		e->ev.size = in.body_len;
	}
	rc = txn_end(w, r, rc, count ? 1 : 0, count);
	if (rc) {
		sub->ndl = first;
		r->nevents = 0;
	}
	return rc;
}

static int op_delete(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	uint32_t local, n = 0;
	int rc = own_folder(r, op->u.del.fid, &local);
	if (rc)
		return rc;
	rc = txn_begin(w);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < op->u.del.n && !rc; i++) {
		struct mb_msg_rec rec;
		int g = mb_schema_msg_get(w->schema, r->sess->mailbox, op->u.del.mids[i], &w->val, &rec);
		if (g == MB_ENOTFOUND || (!g && rec.folder != local))
			continue;
		rc = g;
		if (!rc)
			rc = mb_schema_msg_delete(w->schema, r->sess->mailbox, op->u.del.mids[i]);
		if (!rc)
			n++;
	}
	rc = txn_end(w, r, rc, 0, 0);
	if (!rc)
		res->u.count.n = n;
	return rc;
}

static int op_move_copy(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	uint32_t src, dst;
	int rc = own_folder(r, op->u.move_copy.src_fid, &src);
	if (!rc)
		rc = own_folder(r, op->u.move_copy.dst_fid, &dst);
	if (rc)
		return rc;
	struct mb_folder_rec f;
	rc = mb_schema_folder_get(w->schema, r->sess->mailbox, dst, &f);
	if (rc)
		return rc;
	uint32_t n = op->u.move_copy.n;
	uint64_t *out = ar(r, (size_t)(n ? n : 1) * sizeof(uint64_t));
	if (!out)
		return MB_ETOOBIG;
	bool copy = (op->u.move_copy.flags & MB_MC_F_COPY) != 0;
	rc = txn_begin(w);
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
		if (!rc)
			rc = mb_schema_msg_move(w->schema, r->sess->mailbox, mid, dst, copy, w->tmp,
						&out[i]);
	}
	rc = txn_end(w, r, rc, 0, 0);
	if (!rc) {
		res->u.moved.n = n;
		res->u.moved.mids = out;
	}
	return rc;
}

static int op_calendar(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	uint32_t max = op->u.calendar.max_rows;
	if (max > MB_PROTO_MAX_ROWS)
		max = MB_PROTO_MAX_ROWS;
	struct appt_list l = {ar(r, (max ? max : 1) * sizeof(struct appt)), 0, max};
	if (!l.a)
		return MB_ETOOBIG;
	int rc = 0;
	if (max)
		rc = mb_schema_calendar_range(w->schema, r->sess->mailbox, op->u.calendar.start,
					      op->u.calendar.end, max, collect_appt, &l);
	if (rc)
		return rc;
	uint16_t nc = sizeof(cal_cols) / sizeof(cal_cols[0]);
	if (ar_rows(r, res, l.n, nc))
		return MB_ETOOBIG;
	for (uint32_t i = 0; i < l.n && !rc; i++) {
		struct mb_msg_rec rec;
		rc = msg_row(w, r, r->sess->mailbox, l.a[i].mid, cal_cols, nc,
			     res->u.rows.vals + (size_t)i * nc, &rec);
	}
	res->u.rows.nrows = l.n;
	res->u.rows.more = l.n == max && max ? 1 : 0;
	return rc;
}

static int op_freebusy(struct dbw *w, struct req *r, uint32_t mailbox, struct mb_op *op,
		       struct mb_op_reply *res)
{
	uint32_t max = 1024;
	struct appt_list l = {ar(r, max * sizeof(struct appt)), 0, max};
	if (!l.a)
		return MB_ETOOBIG;
	int rc = mb_schema_calendar_range(w->schema, mailbox, op->u.freebusy.start,
					  op->u.freebusy.end, max, collect_appt, &l);
	if (rc)
		return rc;
	res->u.freebusy.blocks = ar(r, (size_t)(l.n ? l.n : 1) * sizeof(struct mb_busy_block));
	if (!res->u.freebusy.blocks)
		return MB_ETOOBIG;
	for (uint32_t i = 0; i < l.n; i++) {
		res->u.freebusy.blocks[i].start = l.a[i].start;
		res->u.freebusy.blocks[i].end = l.a[i].end;
		res->u.freebusy.blocks[i].status = l.a[i].busy;
	}
	res->u.freebusy.n = l.n;
	return 0;
}

static int op_create_contact(struct dbw *w, struct req *r, struct mb_op *op,
			     struct mb_op_reply *res)
{
	struct mb_prop props[MB_PROTO_MAX_PROPS + 1], rest[MB_PROTO_MAX_PROPS + 1];
	uint16_t n = 0, nrest;
	struct mb_msg_in in;
	for (uint16_t i = 0; i < op->u.create_contact.n; i++)
		if (op->u.create_contact.props[i].tag != MB_PR_MESSAGE_CLASS)
			props[n++] = op->u.create_contact.props[i];
	props[n++] = mb_prop_str(MB_PR_MESSAGE_CLASS, "IPM.Contact");
	msg_in_from_props(&in, props, n, rest, &nrest, now_ms());
	in.flags = MB_MSGFLAG_READ;
	in.appointment = false;
	int rc = txn_begin(w);
	if (rc)
		return rc;
	rc = mb_schema_msg_add(w->schema, r->sess->mailbox, MB_FID_CONTACTS, &in, w->tmp,
			       &res->u.saved.mid, &res->u.saved.cn);
	return txn_end(w, r, rc, 0, 0);
}

static int op_list_contacts(struct dbw *w, struct req *r, struct mb_op *op,
			    struct mb_op_reply *res)
{
	uint32_t max = op->u.list_contacts.max_rows;
	if (max > MB_PROTO_MAX_ROWS)
		max = MB_PROTO_MAX_ROWS;
	struct mid_list l = {ar(r, (max ? max : 1) * sizeof(uint64_t)), 0, max,
			     op->u.list_contacts.start};
	struct mb_scan_pos pos;
	bool more = false;
	int rc = 0;
	if (!l.mids)
		return MB_ETOOBIG;
	memset(&pos, 0, sizeof(pos));
	if (max) {
		/* skip start rows, then take max (the scan's own count includes skipped) */
		uint64_t want = (uint64_t)op->u.list_contacts.start + max;
		rc = mb_schema_folder_scan(w->schema, r->sess->mailbox, MB_FID_CONTACTS, &pos,
					   want > UINT32_MAX ? UINT32_MAX : (uint32_t)want,
					   collect_mid, &l, &more);
	}
	if (rc)
		return rc;
	uint16_t nc = sizeof(contact_cols) / sizeof(contact_cols[0]);
	if (ar_rows(r, res, l.n, nc))
		return MB_ETOOBIG;
	for (uint32_t i = 0; i < l.n && !rc; i++) {
		struct mb_msg_rec rec;
		rc = msg_row(w, r, r->sess->mailbox, l.mids[i], contact_cols, nc,
			     res->u.rows.vals + (size_t)i * nc, &rec);
	}
	res->u.rows.nrows = l.n;
	res->u.rows.more = more ? 1 : 0;
	return rc;
}

static int op_sync_down(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	uint32_t local;
	int rc = own_folder(r, op->u.sync_down.fid, &local);
	if (rc)
		return rc;
	struct mb_folder_rec f;
	rc = mb_schema_folder_get(w->schema, r->sess->mailbox, local, &f);
	if (rc)
		return rc;
	uint32_t max = op->u.sync_down.max;
	if (max == 0 || max > MB_PROTO_MAX_ROWS)
		max = MB_PROTO_MAX_ROWS;
	struct change_list l = {ar(r, max * sizeof(struct change)), 0, max};
	bool more = false;
	if (!l.c)
		return MB_ETOOBIG;
	rc = mb_schema_folder_changes(w->schema, r->sess->mailbox, local, op->u.sync_down.since_cn,
				      max, collect_change, &l, &more);
	if (rc)
		return rc;
	struct mb_sync_item *items = ar(r, (size_t)(l.n ? l.n : 1) * sizeof(*items));
	if (!items)
		return MB_ETOOBIG;
	bool body = (op->u.sync_down.flags & MB_SD_F_BODY) != 0;
	uint16_t nc = sizeof(sync_cols) / sizeof(sync_cols[0]);
	uint32_t n = 0;
	for (; n < l.n && !rc; n++) {
		struct mb_sync_item *it = &items[n];
		it->mid = l.c[n].mid;
		it->cn = l.c[n].cn;
		it->deleted = l.c[n].deleted;
		if (it->deleted) {
			rc = budget(r, 17);
			continue;
		}
		uint16_t want = (uint16_t)(nc + (body ? 1 : 0));
		struct mb_prop *vals = ar(r, want * sizeof(*vals));
		struct mb_msg_rec rec;
		if (!vals) {
			rc = MB_ETOOBIG;
			break;
		}
		size_t before = r->reply_budget;
		rc = msg_row(w, r, r->sess->mailbox, it->mid, sync_cols, nc, vals, &rec);
		if (!rc && body)
			rc = msg_column(w, r, r->sess->mailbox, &rec, NULL, 0, MB_PR_BODY, &vals[nc]);
		if (rc == MB_ETOOBIG && n > 0) {
			r->reply_budget = before;
			rc = 0;
			more = true;
			break;
		}
		/* keep only the values that exist */
		uint16_t k = 0;
		for (uint16_t i = 0; i < want; i++)
			if (MB_PTAG_TYPE(vals[i].tag) != MB_PT_ERROR)
				vals[k++] = vals[i];
		it->props = vals;
		it->nprops = k;
	}
	if (rc)
		return rc;
	res->u.sync_down.n = n;
	res->u.sync_down.items = items;
	res->u.sync_down.more = more ? 1 : 0;
	res->u.sync_down.watermark = more ? items[n - 1].cn
					  : (f.cn > op->u.sync_down.since_cn ? f.cn
									     : op->u.sync_down.since_cn);
	return 0;
}

static int op_sync_up(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	uint32_t local;
	int rc = own_folder(r, op->u.sync_up.fid, &local);
	if (rc)
		return rc;
	uint32_t n = op->u.sync_up.n;
	uint64_t *mids = ar(r, (size_t)(n ? n : 1) * sizeof(uint64_t));
	if (!mids)
		return MB_ETOOBIG;
	rc = txn_begin(w);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < n && !rc; i++) {
		struct mb_sync_change *c = &op->u.sync_up.changes[i];
		struct mb_msg_rec rec;
		mids[i] = 0;
		if (c->kind == MB_SYNC_CREATE) {
			struct mb_prop rest[MB_PROTO_MAX_PROPS];
			uint16_t nrest;
			struct mb_msg_in in;
			msg_in_from_props(&in, c->props, c->nprops, rest, &nrest, now_ms());
			rc = mb_schema_msg_add(w->schema, r->sess->mailbox, local, &in, w->tmp, &mids[i],
					       NULL);
			continue;
		}
		int g = mb_schema_msg_get(w->schema, r->sess->mailbox, c->mid, &w->val, &rec);
		if (g == MB_ENOTFOUND || (!g && rec.folder != local))
			continue;
		rc = g;
		if (rc)
			break;
		mids[i] = c->mid;
		if (c->kind == MB_SYNC_DELETE)
			rc = mb_schema_msg_delete(w->schema, r->sess->mailbox, c->mid);
		else
			rc = mb_schema_msg_set_flags(w->schema, r->sess->mailbox, c->mid, c->flags,
						     NULL);
	}
	struct mb_mailbox_rec m;
	if (!rc)
		rc = mb_schema_mailbox_get(w->schema, r->sess->mailbox, &m);
	rc = txn_end(w, r, rc, 0, 0);
	if (rc)
		return rc;
	res->u.sync_up.cn = m.next_cn - 1;
	res->u.sync_up.n = n;
	res->u.sync_up.mids = mids;
	return 0;
}

/* ---- dispatch ---- */

/* Which database must run op i of r: 0 = any. */
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
		struct handle *h = handle_find(s, op->u.release.handle);
		if (!h)
			return MB_ENOTFOUND;
		handle_release(s, h);
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
		return op_calendar(w, r, op, res);
	case MB_OP_FREEBUSY: {
		int idx;
		struct mb_bytes u = op->u.freebusy.user;
		if (mb_topology_find_user(st->topo, (const char *)u.p, u.len, &idx))
			return MB_ENOTFOUND;
		return op_freebusy(w, r, mb_topology_user(st->topo, idx)->mailbox, op, res);
	}
	case MB_OP_CREATE_CONTACT:
		return op_create_contact(w, r, op, res);
	case MB_OP_LIST_CONTACTS:
		return op_list_contacts(w, r, op, res);
	case MB_OP_SYNC_DOWNLOAD:
		return op_sync_down(w, r, op, res);
	case MB_OP_SYNC_UPLOAD:
		return op_sync_up(w, r, op, res);
	}
	return MB_EPROTO;
}

void mb_ops_execute(struct dbw *w, struct req *r)
{
	struct mb_store *st = r->st;

	while (r->next_op < r->rq.nops) {
		struct mb_op *op = &r->rq.ops[r->next_op];
		struct mb_op_reply *res = &r->res[r->next_op];
		int target = op_target_db(st, r, op);
		if (target && target != w->index) {
			r->cur_db = target;
			mb_store_enqueue(st, target, r);
			return;
		}
		uint64_t t0 = mb_now_ns();
		int rc;
		res->code = op->code;
		if (op->code == MB_OP_SUBMIT) {
			struct handle *h = handle_find(r->sess, op->u.save.handle);
			if (!r->sess->logged_on) {
				rc = MB_ESTATE;
			} else if (!r->sub) {
				if (!h)
					rc = MB_ENOTFOUND;
				else if (h->kind != H_DRAFT)
					rc = MB_ESTATE;
				else
					rc = submit_begin(w, r, h);
				if (!rc && r->sub->ndb > 0) {
					r->op_ns[r->next_op] += mb_now_ns() - t0;
					continue; /* first delivery phase (maybe elsewhere) */
				}
			} else {
				rc = submit_deliver(w, r);
				r->sub->phase++;
				if (!rc && r->sub->phase <= r->sub->ndb) {
					r->op_ns[r->next_op] += mb_now_ns() - t0;
					continue;
				}
			}
			if (!rc) {
				res->u.submit.mid = r->sub->sent_mid;
				res->u.submit.databases = (uint32_t)r->sub->ndb;
				res->u.submit.n = (uint32_t)r->sub->ndl;
				res->u.submit.dl = r->sub->dl;
				/* the draft is gone once sent */
				h = handle_find(r->sess, op->u.save.handle);
				if (h)
					handle_release(r->sess, h);
			}
			r->sub = NULL;
		} else {
			rc = run_op(w, r, op, res);
		}
		if (rc) {
			memset(&res->u, 0, sizeof(res->u));
			res->status = rc;
		}
		r->op_ns[r->next_op] += mb_now_ns() - t0;
		r->next_op++;
	}
	mb_req_release(r);
}
