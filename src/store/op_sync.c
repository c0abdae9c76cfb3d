/* op_sync.c: Cached-mode synchronisation (ICS-like): SyncDownload hands
 * out a folder's changes after the client's change number, SyncUpload
 * applies the client's changes (new messages, read flags, deletions).
 */
#include "config.h"

#include "store/ops_int.h"
#include "core/error.h"

#include <stdlib.h>
#include <string.h>

static const uint32_t sync_cols[] = {MB_PR_MESSAGE_CLASS, MB_PR_SUBJECT,      MB_PR_SENDER_NAME,
				     MB_PR_DELIVERY_TIME, MB_PR_MESSAGE_SIZE, MB_PR_MESSAGE_FLAGS,
				     MB_PR_START_DATE,	  MB_PR_END_DATE,     MB_PR_HASATTACH};

int mb__op_sync_down(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	uint32_t local;
	int rc = mb__own_folder(r, op->u.sync_down.fid, &local);
	if (rc)
		return rc;
	struct mb_folder_rec f;
	rc = mb_schema_folder_get(w->schema, r->sess->mailbox, local, &f);
	if (rc)
		return rc;
	uint32_t max = op->u.sync_down.max;
	if (max == 0 || max > MB_PROTO_MAX_ROWS)
		max = MB_PROTO_MAX_ROWS;
	struct change_list l = {mb__ar(r, max * sizeof(struct change)), 0, max};
	bool more = false;
	if (!l.c)
		return MB_ETOOBIG;
	rc = mb_schema_folder_changes(w->schema, r->sess->mailbox, local, op->u.sync_down.since_cn,
				      max, mb__collect_change, &l, &more);
	if (rc)
		return rc;
	struct mb_sync_item *items = mb__ar(r, (size_t)(l.n ? l.n : 1) * sizeof(*items));
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
			rc = mb__budget(r, 17);
			continue;
		}
		uint16_t want = (uint16_t)(nc + (body ? 1 : 0));
		struct mb_prop *vals = mb__ar(r, want * sizeof(*vals));
		struct mb_msg_rec rec;
		if (!vals) {
			rc = MB_ETOOBIG;
			break;
		}
		size_t before = r->reply_budget;
		rc = mb__msg_row(w, r, r->sess->mailbox, it->mid, sync_cols, nc, vals, &rec);
		if (!rc && body)
			rc = mb__msg_column(w, r, r->sess->mailbox, &rec, NULL, 0, MB_PR_BODY,
					    &vals[nc]);
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
	res->u.sync_down.watermark =
	    more ? items[n - 1].cn
		 : (f.cn > op->u.sync_down.since_cn ? f.cn : op->u.sync_down.since_cn);
	return 0;
}

int mb__op_sync_up(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	uint32_t local;
	int rc = mb__own_folder(r, op->u.sync_up.fid, &local);
	if (rc)
		return rc;
	uint32_t n = op->u.sync_up.n;
	uint64_t *mids = mb__ar(r, (size_t)(n ? n : 1) * sizeof(uint64_t));
	if (!mids)
		return MB_ETOOBIG;
	rc = mb__txn_begin(w);
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
			mb__msg_in_from_props(&in, c->props, c->nprops, rest, &nrest, mb_wall_ms());
			rc = mb_schema_msg_add(w->schema, r->sess->mailbox, local, &in, w->tmp,
					       &mids[i], NULL);
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
	rc = mb__txn_end(w, r, rc, 0, 0);
	if (rc)
		return rc;
	res->u.sync_up.cn = m.next_cn - 1;
	res->u.sync_up.n = n;
	res->u.sync_up.mids = mids;
	return 0;
}
