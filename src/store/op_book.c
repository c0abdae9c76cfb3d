/* op_book.c: the global address list (ResolveNames, the address-list
 * table and its rows: the topology's users, then its distribution lists)
 * and new-mail notification registration.
 */
#include "config.h"

#include "store/ops_int.h"
#include "core/error.h"

#include <stdlib.h>
#include <string.h>

static const uint32_t ab_cols[] = {MB_PR_DISPLAY_NAME, MB_PR_EMAIL_ADDRESS, MB_PR_OBJECT_TYPE};

int mb__op_register_notify(struct dbw *w, struct req *r, struct mb_op *op)
{
	uint32_t local;
	struct mb_folder_rec f;
	int rc = mb__own_folder(r, op->u.get_table.fid, &local);
	if (!rc)
		rc = mb_schema_folder_get(w->schema, r->sess->mailbox, local, &f);
	if (rc)
		return rc;
	struct handle *h;
	rc = mb__handle_new(r->sess, op->u.get_table.handle, H_NOTIFY, &h);
	if (rc)
		return rc;
	h->folder = local;
	/* new-mail events are pushed to the session from now on */
	r->sess->flags |= MB_LOGON_F_NOTIFY;
	return 0;
}

/* ResolveNames: each name against the global address list (the
 * topology's users, then its distribution lists), exact match. */
int mb__op_resolve(struct mb_store *st, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	uint16_t n = op->u.resolve.n;
	struct mb_resolved *v = mb__ar(r, (size_t)(n ? n : 1) * sizeof(*v));
	if (!v)
		return MB_ETOOBIG;
	for (uint16_t i = 0; i < n; i++) {
		struct mb_bytes nm = op->u.resolve.names[i];
		int idx;
		memset(&v[i], 0, sizeof(v[i]));
		if (mb_topology_find_user(st->topo, (const char *)nm.p, nm.len, &idx) == 0) {
			const char *name = mb_topology_user(st->topo, idx)->name;
			v[i].type = MB_OBJECT_USER;
			v[i].name = mb_str(name);
			v[i].display = v[i].name;
		} else if (mb_topology_find_list(st->topo, (const char *)nm.p, nm.len, &idx) == 0) {
			const char *name = mb_topology_list(st->topo, idx)->name;
			v[i].type = MB_OBJECT_LIST;
			v[i].name = mb_str(name);
			v[i].display = v[i].name;
		} else {
			v[i].status = MB_ENOTFOUND;
		}
	}
	res->u.resolve.n = n;
	res->u.resolve.v = v;
	return 0;
}

int mb__op_get_ab_table(struct mb_store *st, struct req *r, struct mb_op *op,
			struct mb_op_reply *res)
{
	struct handle *h;
	int rc = mb__handle_new(r->sess, op->u.ab_table.handle, H_AB_TABLE, &h);
	if (rc)
		return rc;
	h->spos = 0;
	h->ncols = sizeof(ab_cols) / sizeof(ab_cols[0]);
	memcpy(h->cols, ab_cols, sizeof(ab_cols));
	res->u.table.rows =
	    (uint32_t)(mb_topology_user_count(st->topo) + mb_topology_list_count(st->topo));
	return 0;
}

/* QueryRows on the address list. */
int mb__book_query_rows(struct req *r, struct handle *h, uint32_t max, struct mb_op_reply *res)
{
	struct mb_store *st = r->st;
	int rc = 0;
	bool more = false;
	int nu = mb_topology_user_count(st->topo), nl = mb_topology_list_count(st->topo);
	uint32_t total = (uint32_t)(nu + nl);
	uint32_t left = total > h->spos ? total - h->spos : 0;
	uint32_t n = left < max ? left : max;
	more = left > n;
	if (mb__ar_rows(r, res, n, h->ncols))
		return MB_ETOOBIG;
	for (uint32_t i = 0; i < n && !rc; i++) {
		uint32_t k = h->spos + i;
		bool user = k < (uint32_t)nu;
		const char *name = user ? mb_topology_user(st->topo, (int)k)->name
					: mb_topology_list(st->topo, (int)(k - (uint32_t)nu))->name;
		for (uint16_t c = 0; c < h->ncols && !rc; c++) {
			struct mb_prop *p = &res->u.rows.vals[(size_t)i * h->ncols + c];
			memset(p, 0, sizeof(*p));
			p->tag = h->cols[c];
			if (h->cols[c] == MB_PR_DISPLAY_NAME || h->cols[c] == MB_PR_EMAIL_ADDRESS) {
				rc = mb__ar_bytes(r, name, strlen(name), &p->v.b);
				if (!rc)
					rc = mb__budget(r, strlen(name) + 8);
			} else if (h->cols[c] == MB_PR_OBJECT_TYPE) {
				p->v.i = user ? MB_OBJECT_USER : MB_OBJECT_LIST;
			} else {
				p->tag = (h->cols[c] & 0xFFFF0000u) | MB_PT_ERROR;
				p->v.i = MB_ENOTFOUND;
			}
		}
	}
	if (!rc)
		h->spos += n;
	res->u.rows.nrows = n;
	res->u.rows.more = more ? 1 : 0;
	return rc;
}
