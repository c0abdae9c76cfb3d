/* opcommon.c: what the operations share: their transactions (one per op,
 * committed asynchronously; pending counts the commits), reply space in the
 * request's arena within the reply budget, the session's own folders,
 * message rows and columns, the collecting scans, and a message's contents
 * built from properties.
 *
 * Invariants: everything a reply points at is copied into the request's
 * arena; a failed op aborts its transaction; a commit's callback runs on
 * the log writer's thread and only counts and releases (queue.c).
 */
#include "config.h"

#include "store/ops_int.h"
#include "core/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int mb__txn_begin(struct dbw *w) { return mb_db_begin(w->db); }

/* Commit the open transaction asynchronously (or abort it when rc != 0). */
int mb__txn_end(struct dbw *w, struct req *r, int rc, uint32_t ddb, uint32_t drcpt)
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

void *mb__ar(struct req *r, size_t n) { return mb_arena_alloc(r->arena, n); }

/* A copy of p[0..n) in the reply arena, as out; MB_ETOOBIG when full. */
int mb__ar_bytes(struct req *r, const void *p, size_t n, struct mb_bytes *out)
{
	uint8_t *b = mb__ar(r, n ? n : 1);
	if (!b)
		return MB_ETOOBIG;
	if (n)
		memcpy(b, p, n);
	out->p = b;
	out->len = (uint32_t)n;
	return 0;
}

/* Room for n rows of nc columns in res (rows.ncols, rows.vals). */
int mb__ar_rows(struct req *r, struct mb_op_reply *res, uint32_t n, uint16_t nc)
{
	res->u.rows.ncols = nc;
	res->u.rows.vals = mb__ar(r, (size_t)(n ? n : 1) * nc * sizeof(struct mb_prop));
	return res->u.rows.vals ? 0 : MB_ETOOBIG;
}

int mb__own_folder(struct req *r, uint64_t fid, uint32_t *local)
{
	if (MB_FID_MAILBOX(fid) != r->sess->mailbox)
		return MB_EACCES;
	*local = MB_FID_LOCAL(fid);
	return 0;
}

/* Copy a stored row's props into the arena and decode them. */
int mb__row_props(struct req *r, const struct mb_msg_rec *rec, struct mb_prop **props, uint16_t *n)
{
	uint8_t *copy = mb__ar(r, rec->props_len ? rec->props_len : 1);
	if (!copy)
		return MB_ETOOBIG;
	memcpy(copy, rec->props, rec->props_len);
	return mb_props_decode(copy, rec->props_len, r->arena, props, n);
}

int mb__budget(struct req *r, size_t n)
{
	if (n > r->reply_budget)
		return MB_ETOOBIG;
	r->reply_budget -= n;
	return 0;
}

/* Value of column tag for a stored message; body read when asked. */
int mb__msg_column(struct dbw *w, struct req *r, uint32_t mailbox, const struct mb_msg_rec *rec,
		   const struct mb_prop *props, uint16_t nprops, uint32_t tag, struct mb_prop *out)
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
	case MB_PR_HASATTACH:
		out->v.i = rec->nattach > 0;
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
		int rc = mb_schema_rec_body(w->schema, mailbox, rec, &w->val2);
		if (rc)
			return rc;
		rc = mb__budget(r, w->val2.len);
		if (rc)
			return rc;
		return mb__ar_bytes(r, w->val2.data, w->val2.len, &out->v.b);
	}
	default: {
		const struct mb_prop *p = mb_props_find(props, nprops, tag);
		if (p) {
			*out = *p;
			return mb__budget(r, mb_prop_wire_size(p));
		}
	}
	}
	out->tag = (tag & 0xFFFF0000u) | MB_PT_ERROR;
	out->v.i = MB_ENOTFOUND;
	return 0;
}

/* Fill ncols values of message mid into vals. */
int mb__msg_row(struct dbw *w, struct req *r, uint32_t mailbox, uint64_t mid, const uint32_t *cols,
		uint16_t ncols, struct mb_prop *vals, struct mb_msg_rec *rec)
{
	struct mb_prop *props = NULL;
	uint16_t nprops = 0;
	int rc = mb_schema_msg_get(w->schema, mailbox, mid, &w->val, rec);
	if (rc)
		return rc;
	rc = mb__row_props(r, rec, &props, &nprops);
	for (uint16_t c = 0; c < ncols && !rc; c++)
		rc = mb__msg_column(w, r, mailbox, rec, props, nprops, cols[c], &vals[c]);
	return rc;
}

/* ---- collecting scans ---- */

int mb__collect_mid(void *arg, uint64_t mid)
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

int mb__collect_folder(void *arg, const struct mb_folder_rec *f)
{
	struct folder_list *l = arg;
	if (l->n < l->cap)
		l->f[l->n++] = *f;
	return l->n >= l->cap;
}
int mb__count_folder(void *arg, const struct mb_folder_rec *f)
{
	(void)f;
	(*(uint32_t *)arg)++;
	return 0;
}

int mb__collect_change(void *arg, uint64_t cn, uint64_t mid, bool deleted)
{
	struct change_list *l = arg;
	l->c[l->n].cn = cn;
	l->c[l->n].mid = mid;
	l->c[l->n].deleted = deleted;
	l->n++;
	return l->n >= l->cap;
}

int mb__collect_appt(void *arg, uint64_t mid, int64_t start, int64_t end, uint32_t busy)
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

void mb__msg_in_from_props(struct mb_msg_in *in, const struct mb_prop *props, uint16_t n,
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
 * changes (handle wins), as one array in the arena; the stored body only
 * when with_body. */
int mb__handle_merged(struct dbw *w, struct req *r, struct handle *h, bool with_body,
		      struct mb_prop **out, uint16_t *nout)
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
			rc = mb__row_props(r, &rec, &stored, &nstored);
		if (rc)
			return rc;
	}
	struct mb_prop *m = mb__ar(r, (size_t)(nstored + h->nprops + 8) * sizeof(*m));
	if (!m)
		return MB_ETOOBIG;
	uint16_t n = 0;
	for (uint16_t i = 0; i < nstored; i++)
		if (!mb__handle_prop(h, stored[i].tag))
			m[n++] = stored[i];
	if (h->kind == H_MESSAGE) {
		/* fixed fields the stored row keeps outside props */
		static const uint32_t fixed[] = {MB_PR_DELIVERY_TIME, MB_PR_MESSAGE_FLAGS,
						 MB_PR_START_DATE,    MB_PR_END_DATE,
						 MB_PR_BUSY_STATUS,   MB_PR_BODY};
		for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
			if (mb__handle_prop(h, fixed[i]) || (fixed[i] == MB_PR_BODY && !with_body))
				continue;
			struct mb_prop v;
			rc = mb__msg_column(w, r, mailbox, &rec, NULL, 0, fixed[i], &v);
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
