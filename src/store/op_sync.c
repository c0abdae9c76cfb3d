/* op_sync.c: Cached-mode synchronisation (ICS-like): SyncDownload hands
 * out a folder's changes after the client's change number, SyncUpload
 * applies the client's changes (new messages, read flags, deletions).
 *
 * A download context (MS-OXCFXICS 3.3.4.3.1) is a handle of kind H_SYNC:
 * SyncConfigure makes it on one of the session's folders; the client then
 * uploads the four ICS state properties, each as SyncStateBegin (tag,
 * size), SyncStateContinue (bytes) x n, SyncStateEnd; SyncDownload on the
 * handle hands out the changes after the uploaded CnsetSeen and moves the
 * context's mark on (a second SyncDownload continues, as
 * RopFastTransferSourceGetBuffer does).  It keeps IdsetGiven: a message
 * not in it comes with its row's whole property list, one in it with the
 * header columns (sync_item).  With MB_SD_F_CONTENT the body and
 * attachments of each message that comes whole go into the context's
 * FastTransfer stream (content_add; the reply gives its length), which
 * FastTransferGetBuffer on the context reads; the next such SyncDownload
 * replaces it.  Per context:
 *
 *   configured --Begin--> uploading --Continue*--> --End (bytes all in,
 *       ^                                             a valid ID set)--+
 *       +--------------------------------------------------------------+
 *   all four uploaded --SyncDownload--> (the same, mark moved on)
 *
 * A hierarchy context (SyncConfigure with MB_SC_F_HIERARCHY) needs
 * IdsetGiven and CnsetSeen only (MS-OXCFXICS 3.3.4.3.1); its SyncDownload
 * lists the folders under its folder whose change number (the highest of
 * their contents: PidTagLocalCommitTimeMax's role, MS-OXPROPS) is past
 * CnsetSeen, so a client downloads the contents of only those.
 *
 * An upload context (MS-OXCFXICS 3.3.4.3.3, RopSynchronizationOpenCollector)
 * is an H_SYNC handle with sync_coll: SyncOpenCollector makes it on one of
 * the session's folders; the client uploads the initial ICS state
 * (CnsetSeen, CnsetSeenFAI, CnsetRead as above; IdsetGiven belongs to
 * downloads only), imports its changes (SyncUpload on the handle, or a
 * message created in the folder and saved), then asks for the checkpoint
 * state (SyncGetTransferState, for RopSynchronizationGetTransferState: a
 * FastTransfer download context, read with FastTransferGetBuffer):
 *
 *   opened --state x3 (as above)--> ready --SyncUpload / a save in the
 *       folder: its change numbers join CnsetSeen and CnsetRead--> ready
 *   ready --SyncGetTransferState--> (the same; a H_FTSTATE handle holds
 *       the three properties, each tag u32, length u32, the ID set)
 *
 * Invariants: at most one property is being uploaded per context, its
 * bytes at most MB_SYNC_STATE_MAX and at most what Begin declared;
 * SyncDownload on a context without the four properties is MB_ESTATE, as
 * are SyncUpload and SyncGetTransferState on one that is not a ready upload
 * context; an upload context's kept states are valid ID sets.
 */
#include "config.h"

#include "store/ops_int.h"
#include "core/error.h"

#include <stdlib.h>
#include <string.h>

static const uint32_t sync_cols[] = {MB_PR_MESSAGE_CLASS, MB_PR_SUBJECT,      MB_PR_SENDER_NAME,
				     MB_PR_DELIVERY_TIME, MB_PR_MESSAGE_SIZE, MB_PR_MESSAGE_FLAGS,
				     MB_PR_START_DATE,	  MB_PR_END_DATE,     MB_PR_HASATTACH};

enum {
	MB_SYNC_HAS_GIVEN = 1,
	MB_SYNC_HAS_SEEN = 2,
	MB_SYNC_HAS_SEEN_FAI = 4,
	MB_SYNC_HAS_READ = 8,
	MB_SYNC_HAS_ALL = 15
};

static uint8_t state_bit(uint32_t tag)
{
	switch (tag) {
	case MB_META_IDSET_GIVEN:
		return MB_SYNC_HAS_GIVEN;
	case MB_META_CNSET_SEEN:
		return MB_SYNC_HAS_SEEN;
	case MB_META_CNSET_SEEN_FAI:
		return MB_SYNC_HAS_SEEN_FAI;
	case MB_META_CNSET_READ:
		return MB_SYNC_HAS_READ;
	}
	return 0;
}

/* The index in an upload context's cstate of a state property, or -1. */
static int cstate_index(uint32_t tag)
{
	switch (tag) {
	case MB_META_CNSET_SEEN:
		return MB_CS_SEEN;
	case MB_META_CNSET_SEEN_FAI:
		return MB_CS_SEEN_FAI;
	case MB_META_CNSET_READ:
		return MB_CS_READ;
	}
	return -1;
}

#define MB_SYNC_COLL_READY (MB_SYNC_HAS_SEEN | MB_SYNC_HAS_SEEN_FAI | MB_SYNC_HAS_READ)

/* v as n little-endian bytes at p. */
static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static int sync_handle(struct req *r, uint32_t id, struct handle **out)
{
	struct handle *h = mb__handle_find(r->sess, id);
	if (!h)
		return MB_ENOTFOUND;
	if (h->kind != H_SYNC)
		return MB_ESTATE;
	*out = h;
	return 0;
}

int mb__op_sync_configure(struct req *r, struct mb_op *op)
{
	uint32_t local;
	struct handle *h;
	int rc = mb__own_folder(r, op->u.sync_cfg.fid, &local);
	if (!rc && (op->u.sync_cfg.flags & ~(uint32_t)MB_SC_F_HIERARCHY))
		rc = MB_EINVAL;
	if (!rc)
		rc = mb__handle_new(r->sess, op->u.sync_cfg.handle, H_SYNC, &h);
	if (!rc) {
		h->folder = local;
		h->sync_hier = (op->u.sync_cfg.flags & MB_SC_F_HIERARCHY) != 0;
	}
	return rc;
}

int mb__op_sync_open_collector(struct req *r, struct mb_op *op)
{
	uint32_t local;
	struct handle *h;
	int rc = mb__own_folder(r, op->u.sync_cfg.fid, &local);
	if (!rc && op->u.sync_cfg.flags)
		rc = MB_EINVAL;
	if (!rc)
		rc = mb__handle_new(r->sess, op->u.sync_cfg.handle, H_SYNC, &h);
	if (!rc) {
		h->folder = local;
		h->sync_coll = true;
	}
	return rc;
}

/* Whether h is an upload context with its three state properties in. */
static bool coll_ready(const struct handle *h)
{
	return h->kind == H_SYNC && h->sync_coll &&
	       (h->state_has & MB_SYNC_COLL_READY) == MB_SYNC_COLL_READY;
}

/* The upload context id, ready for imports (its state all in). */
static int collector(struct req *r, uint32_t id, struct handle **out)
{
	int rc = sync_handle(r, id, out);
	if (!rc && (!coll_ready(*out) || (*out)->state_tag))
		rc = MB_ESTATE;
	return rc;
}

/* Add the change numbers [lo, hi] to one kept state of session s's upload
 * context h (MB_EFULL when the larger state would pass the session's held
 * bytes: the state is left as it was). */
static int cstate_add(struct session *s, struct handle *h, int i, uint64_t lo, uint64_t hi)
{
	uint32_t n, cap = h->cstate_len[i] / 2 + 2; /* a range takes 2 bytes at least */
	struct mb_idrange *rg = malloc((size_t)cap * sizeof(*rg));
	if (!rg)
		return MB_ENOMEM;
	int rc = mb_idset_decode(h->cstate[i], h->cstate_len[i], rg, cap - 1, &n);
	uint8_t *b = NULL;
	size_t len = 0;
	if (!rc) {
		n = mb_idset_add(rg, n, lo, hi);
		len = mb_idset_size(rg, n);
		if (len > MB_SYNC_STATE_MAX)
			rc = MB_ETOOBIG;
		else if (len > h->cstate_len[i] && mb__held_room(s, len - h->cstate_len[i]))
			rc = MB_EFULL;
		else if (!(b = malloc(len)))
			rc = MB_ENOMEM;
		else
			mb_idset_encode(rg, n, b);
	}
	free(rg);
	if (rc)
		return rc;
	free(h->cstate[i]);
	h->cstate[i] = b;
	h->cstate_len[i] = (uint32_t)len;
	return 0;
}

void mb__sync_note_import(struct session *s, struct handle *only, uint32_t folder, uint64_t lo,
			  uint64_t hi)
{
	if (!s->handles || hi < lo)
		return;
	for (int k = 0; k < MB_MAX_HANDLES; k++) {
		struct handle *h = s->handles[k];
		if (!h || !coll_ready(h) || h->folder != folder || (only && h != only))
			continue;
		/* the change numbers the import took join CnsetSeen and CnsetRead
		 * (read changes take numbers of the one series here); a context
		 * that cannot keep them can no longer hand out its state */
		if (cstate_add(s, h, MB_CS_SEEN, lo, hi) || cstate_add(s, h, MB_CS_READ, lo, hi))
			h->state_has &= (uint8_t)~MB_SYNC_COLL_READY;
	}
}

int mb__op_sync_get_state(struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	static const uint32_t tags[MB_CS_COUNT] = {MB_META_CNSET_SEEN, MB_META_CNSET_SEEN_FAI,
						   MB_META_CNSET_READ};
	struct handle *h;
	int rc = collector(r, op->u.sync_xfer.handle, &h);
	if (rc)
		return rc;
	size_t len = 0;
	for (int i = 0; i < MB_CS_COUNT; i++)
		len += 8 + h->cstate_len[i];
	rc = mb__held_room(r->sess, len);
	if (rc)
		return rc;
	uint8_t *b = malloc(len), *p = b;
	if (!b)
		return MB_ENOMEM;
	for (int i = 0; i < MB_CS_COUNT; i++) {
		put_le(p, tags[i], 4);
		put_le(p + 4, h->cstate_len[i], 4);
		p += 8;
		if (h->cstate_len[i])
			memcpy(p, h->cstate[i], h->cstate_len[i]);
		p += h->cstate_len[i];
	}
	/* h is gone if the new handle takes its id */
	struct handle *ft;
	rc = mb__handle_new(r->sess, op->u.sync_xfer.out, H_FTSTATE, &ft);
	if (rc) {
		free(b);
		return rc;
	}
	ft->data = b;
	ft->len = (uint32_t)len;
	res->u.table.rows = (uint32_t)len;
	return 0;
}

int mb__op_ft_get_buffer(struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	struct handle *h = mb__handle_find(r->sess, op->u.read_stream.handle);
	if (!h)
		return MB_ENOTFOUND;
	uint32_t max = op->u.read_stream.max;
	if (h->kind == H_FTSTATE)
		return mb__stream_read(r, h->data, h->len, &h->spos, max, res);
	if (h->kind == H_SYNC && !h->sync_coll && !h->sync_hier) /* a contents download */
		return mb__stream_read(r, h->content, h->clen, &h->cpos, max, res);
	return MB_ESTATE;
}

int mb__op_sync_state(struct req *r, struct mb_op *op)
{
	struct handle *h;
	int rc = sync_handle(r, op->u.sync_state.handle, &h);
	if (rc)
		return rc;
	if (op->code == MB_OP_SYNC_STATE_BEGIN) {
		uint8_t bit = state_bit(op->u.sync_state.tag);
		if (!bit || (h->sync_coll && cstate_index(op->u.sync_state.tag) < 0))
			return MB_EINVAL;
		if (h->state_tag)
			return MB_ESTATE; /* the previous property is not ended */
		if (op->u.sync_state.size > MB_SYNC_STATE_MAX)
			return MB_ETOOBIG;
		rc = mb__held_room(r->sess, op->u.sync_state.size);
		if (rc)
			return rc;
		free(h->data);
		h->data = NULL;
		if (op->u.sync_state.size && !(h->data = malloc(op->u.sync_state.size)))
			return MB_ENOMEM;
		h->state_tag = op->u.sync_state.tag;
		h->len = op->u.sync_state.size;
		h->spos = 0;
		return 0;
	}
	if (!h->state_tag)
		return MB_ESTATE;
	if (op->code == MB_OP_SYNC_STATE_CONTINUE) {
		struct mb_bytes d = op->u.sync_state.data;
		if (d.len > h->len - h->spos)
			return MB_ERANGE; /* more than Begin declared */
		if (d.len)
			memcpy(h->data + h->spos, d.p, d.len);
		h->spos += d.len;
		return 0;
	}
	/* End: the value is whole and an ID set */
	uint32_t tag = h->state_tag, nr;
	uint64_t nids, max;
	h->state_tag = 0;
	rc = h->spos != h->len ? MB_ESTATE : mb_idset_scan(h->data, h->len, &nr, &nids, &max);
	if (!rc && h->sync_coll) { /* an upload context keeps the value */
		int i = cstate_index(tag);
		free(h->cstate[i]);
		h->cstate[i] = h->data;
		h->cstate_len[i] = h->len;
		h->data = NULL;
	} else if (!rc && tag == MB_META_IDSET_GIVEN && !h->sync_hier) {
		/* a contents download keeps the ids the client holds, decoded
		 * once for its downloads (at most 8 bytes of ranges a byte) */
		size_t sz = (size_t)(nr ? nr : 1) * sizeof(*h->given);
		struct mb_idrange *g = NULL;
		rc = mb__held_room(r->sess, sz);
		if (!rc && !(g = malloc(sz)))
			rc = MB_ENOMEM;
		if (!rc)
			rc = mb_idset_decode(h->data, h->len, g, nr, &nr);
		if (rc) {
			free(g);
		} else {
			free(h->given);
			h->given = g;
			h->ngiven = nr;
		}
	}
	free(h->data);
	h->data = NULL;
	h->len = h->spos = 0;
	if (rc)
		return rc;
	if (tag == MB_META_CNSET_SEEN)
		h->seen_cn = max;
	h->state_has |= state_bit(tag);
	return 0;
}

/* The hierarchy download: the folders under top, depth first, whose
 * change number is past since (at most max; more when others remain). */
struct hier_walk {
	struct dbw *w;
	struct req *r;
	uint64_t since, top_cn;
	uint32_t max, n, depth;
	struct mb_sync_item *items;
	bool more;
	int rc;
};

static int hier_visit(void *arg, const struct mb_folder_rec *f);

static int hier_children(struct hier_walk *hw, uint32_t folder)
{
	if (++hw->depth > 16) /* the store makes no deeper trees */
		return MB_ECORRUPT;
	int rc = mb_schema_folder_children(hw->w->schema, hw->r->sess->mailbox, folder, 0,
					   hier_visit, hw);
	hw->depth--;
	return rc ? rc : hw->rc;
}

static int hier_visit(void *arg, const struct mb_folder_rec *f)
{
	struct hier_walk *hw = arg;
	if (f->cn > hw->top_cn)
		hw->top_cn = f->cn;
	if (f->cn > hw->since) {
		if (hw->n == hw->max) {
			hw->more = true;
			return 1;
		}
		uint32_t mbx = hw->r->sess->mailbox;
		struct mb_prop *v = mb__ar(hw->r, 4 * sizeof(*v));
		hw->rc = v ? mb__budget(hw->r, 64) : MB_ETOOBIG;
		if (hw->rc)
			return 1;
		v[0] = (struct mb_prop){MB_PR_FID, {.i = (int64_t)MB_FID(mbx, f->folder)}};
		v[1] = (struct mb_prop){MB_PR_PARENT_FID, {.i = (int64_t)MB_FID(mbx, f->parent)}};
		v[2] = (struct mb_prop){MB_PR_CONTENT_COUNT, {.i = f->count}};
		v[3] = (struct mb_prop){MB_PR_CONTENT_UNREAD, {.i = f->unread}};
		struct mb_sync_item *it = &hw->items[hw->n++];
		memset(it, 0, sizeof(*it));
		it->mid = f->folder;
		it->cn = f->cn;
		it->props = v;
		it->nprops = 4;
	}
	if (f->subfolders && (hw->rc = hier_children(hw, f->folder)))
		return 1;
	return hw->more ? 1 : 0;
}

static int sync_hierarchy(struct dbw *w, struct req *r, struct handle *ctx, uint32_t max,
			  struct mb_op_reply *res)
{
	struct hier_walk hw = {w, r, ctx->seen_cn, ctx->seen_cn, max, 0, 0, NULL, false, 0};
	if (!(hw.items = mb__ar(r, (size_t)max * sizeof(*hw.items))))
		return MB_ETOOBIG;
	int rc = hier_children(&hw, ctx->folder);
	if (rc)
		return rc;
	res->u.sync_down.n = hw.n;
	res->u.sync_down.items = hw.items;
	res->u.sync_down.more = hw.more ? 1 : 0;
	/* a cut walk has not seen every folder: keep the mark (the client
	 * asks again) */
	res->u.sync_down.watermark = hw.more ? ctx->seen_cn : hw.top_cn;
	ctx->seen_cn = res->u.sync_down.watermark;
	return 0;
}

/* Whether id is in download context h's IdsetGiven (ascending ranges). */
static bool given_has(const struct handle *h, uint64_t id)
{
	uint32_t lo = 0, hi = h->ngiven;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (id < h->given[mid].lo)
			hi = mid;
		else if (id > h->given[mid].hi)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

/* The properties of download item it, its row read into rec: the header
 * columns (sync_cols), and when full every other property of its row too
 * (the body and the attachments stay objects of their own); the body as
 * well when body.  Only the values that exist are kept. */
static int sync_item(struct dbw *w, struct req *r, struct mb_sync_item *it, bool full, bool body,
		     struct mb_msg_rec *rec)
{
	uint16_t nc = sizeof(sync_cols) / sizeof(sync_cols[0]);
	uint32_t mbx = r->sess->mailbox;
	struct mb_prop *props = NULL;
	uint16_t nprops = 0;
	int rc = mb_schema_msg_get(w->schema, mbx, it->mid, &w->val, rec);
	if (!rc)
		rc = mb__row_props(r, rec, &props, &nprops);
	if (rc)
		return rc;
	size_t want = nc + (full ? nprops : 0) + (body ? 1 : 0);
	if (want > MB_PROTO_MAX_PROPS)
		want = MB_PROTO_MAX_PROPS;
	struct mb_prop *vals = mb__ar(r, want * sizeof(*vals));
	if (!vals)
		return MB_ETOOBIG;
	uint16_t k = 0;
	for (uint16_t c = 0; c < nc && !rc; c++) {
		rc = mb__msg_column(w, r, mbx, rec, props, nprops, sync_cols[c], &vals[k]);
		if (!rc && MB_PTAG_TYPE(vals[k].tag) != MB_PT_ERROR)
			k++;
	}
	for (uint16_t i = 0; full && i < nprops && !rc; i++) {
		bool header = false;
		for (uint16_t c = 0; c < nc && !header; c++)
			header = sync_cols[c] == props[i].tag;
		if (header || k + (body ? 1u : 0u) >= want)
			continue;
		vals[k++] = props[i];
		rc = mb__budget(r, mb_prop_wire_size(&props[i]));
	}
	if (!rc && body) {
		rc = mb__msg_column(w, r, mbx, rec, NULL, 0, MB_PR_BODY, &vals[k]);
		if (!rc && MB_PTAG_TYPE(vals[k].tag) != MB_PT_ERROR)
			k++;
	}
	it->props = vals;
	it->nprops = k;
	return rc;
}

/* Appends n bytes to download context ctx's content stream, which this
 * operation started (the session's held bytes do not count it yet; they
 * will count its allocation, ccap): MB_EFULL when the session cannot hold
 * it.  The allocation doubles while there is room, else grows to fit. */
static int content_put(struct req *r, struct handle *ctx, const void *p, size_t n)
{
	size_t want = (size_t)ctx->clen + n;
	if (want > UINT32_MAX / 2)
		return MB_EFULL;
	if (want > ctx->ccap) {
		size_t cap = ctx->ccap ? ctx->ccap : 4096;
		while (cap < want)
			cap *= 2;
		if (mb__held_room(r->sess, cap))
			cap = want;
		int rc = mb__held_room(r->sess, cap);
		if (rc)
			return rc;
		uint8_t *c = realloc(ctx->content, cap);
		if (!c)
			return MB_ENOMEM;
		ctx->content = c;
		ctx->ccap = (uint32_t)cap;
	}
	if (n)
		memcpy(ctx->content + ctx->clen, p, n);
	ctx->clen += (uint32_t)n;
	return 0;
}

/* Appends the content of message row rec (sync_item read it) to download
 * context ctx's FastTransfer stream, as a messageChangeFull carries it
 * after the message's properties (MS-OXCFXICS 2.2.4.3.13: the body, then
 * each attachment with its data): u64 mid, u32 body length and the body,
 * u8 attachments, each u32 length and its bytes (little-endian).  On an
 * error the stream is as it was. */
static int content_add(struct dbw *w, struct req *r, struct handle *ctx,
		       const struct mb_msg_rec *rec)
{
	uint32_t mbx = r->sess->mailbox, before = ctx->clen;
	uint8_t hdr[12];
	int rc = mb_schema_rec_body(w->schema, mbx, rec, &w->val2);
	if (!rc) {
		put_le(hdr, rec->mid, 8);
		put_le(hdr + 8, w->val2.len, 4);
		rc = content_put(r, ctx, hdr, 12);
	}
	if (!rc)
		rc = content_put(r, ctx, w->val2.data, w->val2.len);
	uint8_t na = rec->nattach;
	if (!rc)
		rc = content_put(r, ctx, &na, 1);
	for (uint16_t a = 1; a <= na && !rc; a++) {
		rc = mb_schema_rec_attach_data(w->schema, mbx, rec, a, &w->val2);
		if (!rc) {
			put_le(hdr, w->val2.len, 4);
			rc = content_put(r, ctx, hdr, 4);
		}
		if (!rc)
			rc = content_put(r, ctx, w->val2.data, w->val2.len);
	}
	if (rc)
		ctx->clen = before;
	return rc;
}

int mb__op_sync_down(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	uint32_t local;
	uint64_t since = op->u.sync_down.since_cn;
	struct handle *ctx = NULL;
	/* the whole items' content into the context's FastTransfer stream,
	 * which this download replaces */
	bool content = (op->u.sync_down.flags & MB_SD_F_CONTENT) != 0;
	int rc;
	if (op->u.sync_down.handle) {
		if ((rc = sync_handle(r, op->u.sync_down.handle, &ctx)))
			return rc;
		uint8_t need =
		    ctx->sync_hier ? MB_SYNC_HAS_GIVEN | MB_SYNC_HAS_SEEN : MB_SYNC_HAS_ALL;
		if ((ctx->state_has & need) != need || ctx->state_tag)
			return MB_ESTATE; /* MS-OXCFXICS 3.3.4.3.1: the state first */
		if (content && ctx->sync_hier)
			return MB_EINVAL;
		if (ctx->sync_hier) {
			uint32_t m = op->u.sync_down.max;
			return sync_hierarchy(
			    w, r, ctx, m == 0 || m > MB_PROTO_MAX_ROWS ? MB_PROTO_MAX_ROWS : m,
			    res);
		}
		local = ctx->folder;
		since = ctx->seen_cn;
	} else if (content) {
		return MB_EINVAL; /* a stream needs a download context */
	} else if ((rc = mb__own_folder(r, op->u.sync_down.fid, &local))) {
		return rc;
	}
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
	rc = mb_schema_folder_changes(w->schema, r->sess->mailbox, local, since, max,
				      mb__collect_change, &l, &more);
	if (rc)
		return rc;
	struct mb_sync_item *items = mb__ar(r, (size_t)(l.n ? l.n : 1) * sizeof(*items));
	if (!items)
		return MB_ETOOBIG;
	bool body = (op->u.sync_down.flags & MB_SD_F_BODY) != 0;
	if (content) {
		free(ctx->content);
		ctx->content = NULL;
		ctx->clen = ctx->cpos = ctx->ccap = 0;
	}
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
		size_t before = r->reply_budget;
		/* an item the client does not hold comes whole: a server MUST
		 * send it as a messageChangeFull, the message's properties
		 * (MS-OXCFXICS 2.2.4.3.11, 2.2.4.3.13); a change to one it
		 * holds, its header */
		bool full = ctx && ctx->given && !given_has(ctx, it->mid);
		struct mb_msg_rec row;
		rc = sync_item(w, r, it, full, body, &row);
		/* its body and attachments follow in the stream; a session
		 * that cannot hold them gets them no sooner than one that
		 * cannot take the reply */
		if (!rc && full && content && (rc = content_add(w, r, ctx, &row)) == MB_EFULL)
			rc = MB_ETOOBIG;
		if (rc == MB_ETOOBIG && n == 0 && full) {
			/* a first item too large to come whole comes with its
			 * header, so the download moves on (its properties and
			 * content stay for OpenMessage and OpenStream) */
			r->reply_budget = before;
			rc = sync_item(w, r, it, false, body, &row);
		}
		if (rc == MB_ETOOBIG && n > 0) {
			r->reply_budget = before;
			rc = 0;
			more = true;
			break;
		}
	}
	if (rc) {
		if (content) /* no reply names what the stream would hold */
			ctx->clen = 0;
		return rc;
	}
	res->u.sync_down.n = n;
	res->u.sync_down.items = items;
	res->u.sync_down.more = more ? 1 : 0;
	res->u.sync_down.content = content ? ctx->clen : 0;
	res->u.sync_down.watermark = more ? items[n - 1].cn : (f.cn > since ? f.cn : since);
	if (ctx)
		ctx->seen_cn = res->u.sync_down.watermark;
	return 0;
}

int mb__op_sync_up(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	uint32_t local;
	struct handle *ctx = NULL;
	int rc;
	if (op->u.sync_up.handle) {
		if ((rc = collector(r, op->u.sync_up.handle, &ctx)))
			return rc;
		local = ctx->folder;
	} else if ((rc = mb__own_folder(r, op->u.sync_up.fid, &local))) {
		return rc;
	}
	uint32_t n = op->u.sync_up.n;
	uint64_t *mids = mb__ar(r, (size_t)(n ? n : 1) * sizeof(uint64_t));
	if (!mids)
		return MB_ETOOBIG;
	struct mb_mailbox_rec m0 = {0}, m;
	rc = mb__txn_begin(w);
	if (rc)
		return rc;
	if (ctx) /* the import's first change number, for the context's state */
		rc = mb_schema_mailbox_get(w->schema, r->sess->mailbox, &m0);
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
	if (!rc)
		rc = mb_schema_mailbox_get(w->schema, r->sess->mailbox, &m);
	rc = mb__txn_end(w, r, rc, 0, 0);
	if (rc)
		return rc;
	if (ctx)
		mb__sync_note_import(r->sess, ctx, local, m0.next_cn, m.next_cn - 1);
	res->u.sync_up.cn = m.next_cn - 1;
	res->u.sync_up.n = n;
	res->u.sync_up.mids = mids;
	return 0;
}
