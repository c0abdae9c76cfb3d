/* drivers/mbstore_session.c: the mbstore driver's session steps: logon
 * (challenge, then logon: two batches), logoff, keepalive, and the
 * cached-mode sync (the end of a due upload pass, else the download of what
 * changed, in rounds of at most SYNC_MAX messages, each new item's
 * content read from its context's FastTransfer stream; the sync's state
 * between its requests lives in m->sync), and online the same step as the
 * fetch of pushed new-mail notifications (the Inbox view's new rows);
 * cached mode's upload passes (mbstore_int.h: an upload context per
 * folder and pass, ended with its checkpoint by the sync or a logoff):
 *
 *   no pass --a change: its folder's context opened--> pass open
 *   pass open --a change (a new folder: its context too)--> pass open,
 *       due 15 simulated s on (60 after the first at most)
 *   pass open --due: the sync step / a logoff: the checkpoints--> no pass
 *   any --logon (a new session)--> no pass
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/content.h"
#include "core/error.h"
#include "load/drivers/mbstore_int.h"
#include "load/drivers/reqbuild.h"
#include "load/replica.h"
#include "load/target.h"
#include "proto/proto.h"

static void upload_close_all(struct mb_tuser *u);

/* ---- steps: logon, logoff, keepalive ------------------------------------------------ */

static uint32_t logon_flags(const struct mb_tuser *u)
{
	return (u->env->compression ? MB_LOGON_F_LZ77 : 0) |
	       (u->env->notify ? MB_LOGON_F_NOTIFY : 0);
}

int mb__mbs_emit_logon(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res)
{
	(void)s;
	(void)res;
	struct mb_op *op = mb__rb_op(RB(u), MB_OP_LOGON_CHALLENGE);
	op->u.challenge.user = mb_str(mb_target_account(u)->name);
	op->u.challenge.flags = logon_flags(u);
	M(u)->phase = 1;
	M(u)->compress = false;
	M(u)->up_open = 0; /* a new session: no upload context */
	M(u)->up_first_ns = M(u)->up_due_ns = 0;
	return mb__mbs_send_rpc(u);
}

int mb__mbs_took_logon(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res)
{
	struct mbs_user *m = M(u);
	struct mb__rb *rb = RB(u);
	const struct mb_topo_user *tu = mb_target_account(u);
	if (m->phase == 1) {
		const struct mb_op_reply *c = mb__mbs_find_op(r, MB_OP_LOGON_CHALLENGE, 0);
		if (!c || c->status != 0)
			return mb__mbs_op_status(c);
		struct mb_op *op = mb__rb_op(rb, MB_OP_LOGON);
		op->u.logon.user = mb_str(tu->name);
		op->u.logon.flags = logon_flags(u);
		if (mb_auth_proof(tu->key, c->u.challenge.nonce, tu->name, strlen(tu->name),
				  op->u.logon.proof) != 0)
			return MB_EAUTH;
		/* Outlook's first view: the Inbox and the folder hierarchy */
		mb__rb_op(rb, MB_OP_OPEN_FOLDER)->u.open_folder.fid = fid_of(u, MB_FID_INBOX);
		op = mb__rb_op(rb, MB_OP_GET_HIERARCHY_TABLE);
		op->u.get_table.fid = fid_of(u, MB_FID_ROOT);
		op->u.get_table.handle = H_HIER;
		op = mb__rb_op(rb, MB_OP_QUERY_ROWS);
		op->u.query_rows.handle = H_HIER;
		op->u.query_rows.flags = MB_QR_F_RESTART;
		op->u.query_rows.max_rows = 64;
		mb__rb_op(rb, MB_OP_RELEASE)->u.release.handle = H_HIER;
		if (u->env->notify) {
			/* new-mail notifications of the session (the Inbox) */
			op = mb__rb_op(rb, MB_OP_REGISTER_NOTIFY);
			op->u.get_table.fid = fid_of(u, MB_FID_INBOX);
			op->u.get_table.handle = H_INOTIFY;
		}
		m->phase = 2;
		return mb__mbs_send_rpc(u);
	}
	const struct mb_op_reply *l = mb__mbs_find_op(r, MB_OP_LOGON, 0);
	if (!l || l->status != 0)
		return mb__mbs_op_status(l);
	m->compress = (l->u.logon.flags & MB_LOGON_F_LZ77) != 0;
	m->compress_min = l->u.logon.compress_min;
	const struct mb_op_reply *q = mb__mbs_find_op(r, MB_OP_QUERY_ROWS, 0);
	if (q && q->status == 0) {
		m->nfolders = 0;
		for (uint32_t i = 0; i < q->u.rows.nrows; i++) {
			const struct mb_prop *row = &q->u.rows.vals[(size_t)i * q->u.rows.ncols];
			const struct mb_prop *f = mb_props_find(row, q->u.rows.ncols, MB_PR_FID);
			if (!f)
				continue;
			uint32_t local = (uint32_t)(f->v.i & 0xffffffffu);
			if (local >= MB_FID_FIRST_USER && m->nfolders < FOLDERS_MAX)
				m->folders[m->nfolders++] = local;
			if (m->rep && local >= MB_FID_FIRST_USER)
				mb_replica_slot(m->rep, local);
		}
	}
	res->count = m->nfolders;
	return 0;
}

int mb__mbs_emit_logoff(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res)
{
	(void)s;
	(void)res;
	/* Outlook ends its upload pass before it goes (the Logoff releases
	 * the contexts whose checkpoints would not fit: at most one request) */
	if (M(u)->rep && 4 * __builtin_popcount(M(u)->up_open) < MB_RB_OPS)
		upload_close_all(u);
	mb__rb_op(RB(u), MB_OP_LOGOFF);
	return mb__mbs_send_rpc(u);
}

int mb__mbs_took_logoff(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res)
{
	(void)res;
	const struct mb_op_reply *o = mb__mbs_find_op(r, MB_OP_LOGOFF, 0);
	if (!o || o->status != 0)
		return mb__mbs_op_status(o);
	mb_target_logged_off(u); /* the connection closes; logon again later */
	return 0;
}

int mb__mbs_emit_keepalive(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res)
{
	(void)s;
	(void)res;
	mb__rb_op(RB(u), MB_OP_OPEN_FOLDER)->u.open_folder.fid = fid_of(u, MB_FID_INBOX);
	return mb__mbs_send_rpc(u);
}

int mb__mbs_took_nothing(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res)
{
	(void)u;
	(void)r;
	(void)res;
	return 0;
}

/* ---- steps: cached-mode sync ------------------------------------------------------- */

/* One ICS state property into the download context h: SyncStateBegin,
 * SyncStateContinue per STREAM_CHUNK of the encoded ID set, SyncStateEnd
 * (MS-OXCFXICS 3.3.4.3.1, 3.3.5.8.2-4). */
static int emit_state(struct mb__rb *rb, uint32_t h, uint32_t tag, const struct mb_idrange *rg,
		      uint32_t nr)
{
	size_t len = mb_idset_size(rg, nr);
	uint8_t *b = mb__rb_bytes(rb, len);
	if (!b)
		return MB_ETOOBIG;
	mb_idset_encode(rg, nr, b);
	struct mb_op *op = mb__rb_op(rb, MB_OP_SYNC_STATE_BEGIN);
	op->u.sync_state.handle = h;
	op->u.sync_state.tag = tag;
	op->u.sync_state.size = (uint32_t)len;
	for (size_t at = 0; at < len; at += STREAM_CHUNK) {
		op = mb__rb_op(rb, MB_OP_SYNC_STATE_CONTINUE);
		op->u.sync_state.handle = h;
		op->u.sync_state.data.p = b + at;
		op->u.sync_state.data.len =
		    (uint32_t)(len - at < STREAM_CHUNK ? len - at : STREAM_CHUNK);
	}
	mb__rb_op(rb, MB_OP_SYNC_STATE_END)->u.sync_state.handle = h;
	return 0;
}

/* A download context h on fid (SyncConfigure; flags MB_SC_F_*). */
static void emit_configure(struct mb__rb *rb, uint32_t h, uint64_t fid, uint32_t flags)
{
	struct mb_op *op = mb__rb_op(rb, MB_OP_SYNC_CONFIGURE);
	op->u.sync_cfg.fid = fid;
	op->u.sync_cfg.handle = h;
	op->u.sync_cfg.flags = flags;
}

/* The download on context h (at most max changes) and its release; with
 * stream, the whole items' bodies and attachments into the context's
 * FastTransfer stream, and the context stays open to read it. */
static void emit_download(struct mb__rb *rb, uint32_t h, uint32_t max, bool stream)
{
	struct mb_op *op = mb__rb_op(rb, MB_OP_SYNC_DOWNLOAD);
	op->u.sync_down.handle = h;
	op->u.sync_down.max = max;
	op->u.sync_down.flags = stream ? MB_SD_F_CONTENT : 0;
	if (!stream)
		mb__rb_op(rb, MB_OP_RELEASE)->u.release.handle = h;
}

/* The highest id the primed OST's IdsetGiven names: every message id. */
#define MB_IDSET_PRIMED UINT64_MAX

/* The download of replica slot s as Outlook's ICS download of a folder
 * (MS-OXCFXICS 3.3.4.3.1): a download context (SyncConfigure), the four
 * ICS state properties (the message ids the replica holds, or on the
 * session's first download every id, the primed OST's; the change
 * numbers it has seen, read changes included, up to its watermark; no
 * FAI messages), the changes (SyncDownload on the context, for
 * RopFastTransferSourceGetBuffer) and the context's release; after the
 * session's first download, the release waits for the whole items'
 * content (the stream read in took_sync's phase 2).  0, 1 when
 * it does not fit in the request beside what is there (only when `first`
 * is false), or an error. */
static int emit_folder_sync(struct mb_tuser *u, int s, bool first)
{
	struct mb_rfolder *f = &M(u)->rep->f[s];
	struct mb__rb *rb = RB(u);
	uint32_t h = H_SYNC + (uint32_t)s;
	uint64_t *ids = malloc(((size_t)f->n + 1) * sizeof(*ids));
	struct mb_idrange *rg = malloc(((size_t)f->n + 1) * sizeof(*rg));
	if (!ids || !rg) {
		free(ids);
		free(rg);
		return MB_ENOMEM;
	}
	uint32_t ngiven = 1;
	if (!M(u)->rep->synced) {
		/* the primed OST (replica.h) holds every item there is: the
		 * session's first download brings headers, not whole items */
		rg[0] = (struct mb_idrange){1, MB_IDSET_PRIMED};
	} else {
		for (uint32_t i = 0; i < f->n; i++)
			ids[i] = f->items[i].mid;
		ngiven = mb_idset_from_ids(ids, f->n, rg);
	}
	size_t glen = mb_idset_size(rg, ngiven);
	/* Configure, Begin/Continue/End x 4, SyncDownload, Release; the state
	 * bytes: the ID set given and three of at most 21 bytes */
	int need = 14 + (int)((glen + STREAM_CHUNK - 1) / STREAM_CHUNK);
	if (!first && (rb->nops + need > MB_RB_OPS || glen + 64 > MB_RB_POOL - rb->npool)) {
		free(ids);
		free(rg);
		return 1;
	}
	emit_configure(rb, h, fid_of(u, f->local), 0);
	int rc = emit_state(rb, h, MB_META_IDSET_GIVEN, rg, ngiven);
	struct mb_idrange seen = {1, f->watermark};
	uint32_t nseen = f->watermark ? 1 : 0;
	if (!rc)
		rc = emit_state(rb, h, MB_META_CNSET_SEEN, &seen, nseen);
	if (!rc)
		rc = emit_state(rb, h, MB_META_CNSET_SEEN_FAI, NULL, 0);
	if (!rc)
		rc = emit_state(rb, h, MB_META_CNSET_READ, &seen, nseen);
	free(ids);
	free(rg);
	bool stream = M(u)->rep->synced;
	emit_download(rb, h, SYNC_MAX, stream);
	if (stream)
		M(u)->sync->stream |= 1u << s;
	return rc;
}

/* The checkpoint state's download of upload context coll (into fts) and
 * the two releases. */
static void emit_upload_close(struct mb__rb *rb, uint32_t coll, uint32_t fts)
{
	struct mb_op *op = mb__rb_op(rb, MB_OP_SYNC_GET_STATE);
	op->u.sync_xfer.handle = coll;
	op->u.sync_xfer.out = fts;
	op = mb__rb_op(rb, MB_OP_FT_GET_BUFFER);
	op->u.read_stream.handle = fts;
	op->u.read_stream.max = STREAM_CHUNK;
	mb__rb_op(rb, MB_OP_RELEASE)->u.release.handle = fts;
	mb__rb_op(rb, MB_OP_RELEASE)->u.release.handle = coll;
}

int mb__mbs_upload_open(struct mb_tuser *u, uint32_t local, uint32_t *h)
{
	struct mbs_user *m = M(u);
	struct mb__rb *rb = RB(u);
	int slot = mb_replica_slot(m->rep, local);
	*h = slot >= 0 ? H_COLL + (uint32_t)slot : H_COLL1;
	if (slot >= 0 && (m->up_open & (1u << slot)))
		return 0; /* the pass has this folder's context open */
	uint64_t wm = slot >= 0 ? m->rep->f[slot].watermark : 0;
	struct mb_op *op = mb__rb_op(rb, MB_OP_SYNC_OPEN_COLLECTOR);
	op->u.sync_cfg.fid = fid_of(u, local);
	op->u.sync_cfg.handle = *h;
	struct mb_idrange seen = {1, wm};
	uint32_t nseen = wm ? 1 : 0;
	int rc = emit_state(rb, *h, MB_META_CNSET_SEEN, &seen, nseen);
	if (!rc)
		rc = emit_state(rb, *h, MB_META_CNSET_SEEN_FAI, NULL, 0);
	if (!rc)
		rc = emit_state(rb, *h, MB_META_CNSET_READ, &seen, nseen);
	if (!rc && slot >= 0) {
		m->up_open |= 1u << slot;
		m->up_new |= 1u << slot;
	}
	return rc;
}

void mb__mbs_upload_done(struct mb_tuser *u, uint32_t h)
{
	struct mbs_user *m = M(u);
	if (h == H_COLL1) { /* no pass for it: its checkpoint in this request */
		emit_upload_close(RB(u), H_COLL1, H_FTS1);
		return;
	}
	uint64_t now = mb_now_ns();
	if (!m->up_first_ns)
		m->up_first_ns = now;
	uint64_t due = now + (uint64_t)(u->env->upload_delay_s * 1e9);
	uint64_t max = m->up_first_ns + (uint64_t)(u->env->upload_max_s * 1e9);
	m->up_due_ns = due < max ? due : max;
	mb_target_wake_at(u, m->up_due_ns);
}

bool mb__mbs_upload_due(struct mb_tuser *u)
{
	struct mbs_user *m = M(u);
	if (!m->up_open)
		return false;
	if (mb_now_ns() + 1000000u >= m->up_due_ns) /* within the timer's millisecond */
		return true;
	mb_target_wake_at(u, m->up_due_ns); /* an earlier wake may have taken its place */
	return false;
}

/* End the upload pass: every open context's checkpoint, in the request
 * being built. */
static void upload_close_all(struct mb_tuser *u)
{
	struct mbs_user *m = M(u);
	for (uint32_t s = 0; s < 32; s++)
		if (m->up_open & (1u << s))
			emit_upload_close(RB(u), H_COLL + s, H_FTS + s);
	m->up_open = 0;
	m->up_first_ns = m->up_due_ns = 0;
}

int mb__mbs_upload_pass(struct mb_tuser *u)
{
	upload_close_all(u);
	M(u)->phase = 5;
	return mb__mbs_send_rpc(u);
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* One checkpoint (SyncGetTransferState g, FastTransferGetBuffer b): the
 * three state properties, each tag, length, ID set, and nothing more, the
 * whole of it in the one buffer. */
static int check_checkpoint(const struct mb_op_reply *g, const struct mb_op_reply *b)
{
	static const uint32_t tags[3] = {MB_META_CNSET_SEEN, MB_META_CNSET_SEEN_FAI,
					 MB_META_CNSET_READ};
	if (!g || g->status || !b || b->status)
		return !g || g->status ? mb__mbs_op_status(g) : mb__mbs_op_status(b);
	const uint8_t *p = b->u.stream.data.p;
	uint32_t len = b->u.stream.data.len, at = 0;
	if (len != g->u.table.rows)
		return MB_EPROTO;
	for (int i = 0; i < 3; i++) {
		uint32_t nr;
		uint64_t nids, max;
		if (len - at < 8 || get_le32(p + at) != tags[i])
			return MB_EPROTO;
		uint32_t n = get_le32(p + at + 4);
		at += 8;
		if (n > len - at || mb_idset_scan(p + at, n, &nr, &nids, &max))
			return MB_EPROTO;
		at += n;
	}
	return at == len ? 0 : MB_EPROTO;
}

int mb__mbs_upload_check(const struct mb_reply *r)
{
	/* the k-th checkpoint's buffer is the k-th FastTransferGetBuffer: a
	 * request that ends upload passes reads no download stream, and the
	 * requests that read one (took_sync's phase 2) end no pass */
	for (int k = 0;; k++) {
		const struct mb_op_reply *g = mb__mbs_find_op(r, MB_OP_SYNC_GET_STATE, k);
		const struct mb_op_reply *b = mb__mbs_find_op(r, MB_OP_FT_GET_BUFFER, k);
		if (!g)
			return 0;
		int rc = check_checkpoint(g, b);
		if (rc)
			return rc;
	}
}

/* The periodic sync's hierarchy download (MS-OXCFXICS 3.3.4.3.1: a
 * hierarchy download takes IdsetGiven and CnsetSeen): the folders whose
 * contents changed since the last one, each then downloaded as a dirty
 * folder. */
static int hierarchy_ask(struct mb_tuser *u)
{
	struct mbs_user *m = M(u);
	struct mb_replica *rep = m->rep;
	struct mb__rb *rb = RB(u);
	uint64_t ids[MB_REPLICA_MAX_FOLDERS];
	struct mb_idrange rg[MB_REPLICA_MAX_FOLDERS];
	for (int s = 0; s < rep->nfolders; s++)
		ids[s] = rep->f[s].local;
	uint32_t ng = mb_idset_from_ids(ids, (uint32_t)rep->nfolders, rg);
	emit_configure(rb, H_HSYNC, fid_of(u, MB_FID_ROOT), MB_SC_F_HIERARCHY);
	struct mb_idrange seen = {1, rep->hier_watermark};
	int rc = emit_state(rb, H_HSYNC, MB_META_IDSET_GIVEN, rg, ng);
	if (!rc)
		rc =
		    emit_state(rb, H_HSYNC, MB_META_CNSET_SEEN, &seen, rep->hier_watermark ? 1 : 0);
	if (rc)
		return rc;
	emit_download(rb, H_HSYNC, MB_PROTO_MAX_ROWS, false);
	m->hier_due = false;
	m->phase = 4;
	return mb__mbs_send_rpc(u);
}

/* The releases of the download contexts in c->rel, into the request being
 * built. */
static void emit_context_releases(struct mb_tuser *u)
{
	struct mbs_sync *c = M(u)->sync;
	for (int s = 0; c->rel && s < 32; s++)
		if (c->rel & (1u << s))
			mb__rb_op(RB(u), MB_OP_RELEASE)->u.release.handle = H_SYNC + (uint32_t)s;
	c->rel = 0;
}

/* A sync that failed: its open download contexts are released with the
 * user's next request, or with the next sync's when the queue is full;
 * its error, e. */
static int sync_abandon(struct mb_tuser *u, int e)
{
	struct mbs_user *m = M(u);
	struct mbs_sync *c = m->sync;
	uint32_t open = c->stream | c->want;
	if (c->cur >= 0 && c->cur_rel) /* the failed request released it */
		open &= ~(1u << c->cur);
	for (int s = 0; open && s < 32; s++) {
		if (!(open & (1u << s)))
			continue;
		if (m->nrel < RELEASES_MAX)
			mb__mbs_release_later(u, (uint8_t)(H_SYNC + s));
		else
			c->rel |= 1u << s;
	}
	c->stream = c->want = 0;
	c->cur = -1;
	return e;
}

/* Ask every dirty folder for its changes since its watermark, as many
 * folders per request as fit (the others stay dirty for the next round);
 * done when nothing is dirty. */
static int sync_ask(struct mb_tuser *u)
{
	struct mbs_user *m = M(u);
	struct mb_replica *rep = m->rep;
	struct mbs_sync *c = m->sync;
	if (!rep->dirty) {
		if (!rep->synced) /* the first download of the session is done */
			u->st->n.first_syncs++;
		rep->synced = true;
		return 0;
	}
	c->mask = c->stream = c->want = 0;
	c->cur = -1;
	emit_context_releases(u);
	for (int s = 0; s < rep->nfolders; s++) {
		if (!(rep->dirty & (1u << s)))
			continue;
		int rc = emit_folder_sync(u, s, c->mask == 0);
		if (rc < 0)
			return rc;
		if (rc > 0)
			break;
		c->mask |= 1u << s;
	}
	m->phase = 1;
	return mb__mbs_send_rpc(u);
}

/* Online: the fetch of pushed new-mail notifications (MS-OXCNOTIF
 * 3.2.5.5.2, 3.2.5.7: on the push datagram the client calls EcDoRpcExt2,
 * which needs no ROP request, and the RopNotify responses bring the
 * registered table's new rows).  One request: the new rows of the
 * session's Inbox view (QueryRows from its top, one row per new mail, at
 * most a screen), the view opened by the first fetch (GetContentsTable,
 * SetColumns, SortTable) and kept, as Outlook keeps its Inbox view. */
static int notify_fetch(struct mb_tuser *u)
{
	struct mbs_user *m = M(u);
	struct mb__rb *rb = RB(u);
	if (!m->itable)
		mb__mbs_emit_view_table(u, MB_FID_INBOX, H_ITABLE);
	struct mb_op *op = mb__rb_op(rb, MB_OP_QUERY_ROWS);
	op->u.query_rows.handle = H_ITABLE;
	op->u.query_rows.flags = MB_QR_F_RESTART;
	op->u.query_rows.max_rows = m->nnew < NOTIFY_ROWS_MAX ? m->nnew : NOTIFY_ROWS_MAX;
	m->nnew = 0;
	m->phase = 3;
	return mb__mbs_send_rpc(u);
}

int mb__mbs_emit_sync(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res)
{
	(void)s;
	(void)res;
	struct mbs_user *m = M(u);
	if (!m->rep)
		return m->nnew ? notify_fetch(u) : 0;
	if (mb__mbs_upload_due(u)) /* local changes go up before the download */
		return mb__mbs_upload_pass(u);
	if (!m->sync && !(m->sync = calloc(1, sizeof(*m->sync))))
		return MB_ENOMEM;
	if (m->hier_due && m->rep->synced)
		return hierarchy_ask(u);
	return sync_ask(u);
}

int mb__mbs_took_sync(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res)
{
	(void)res;
	struct mbs_user *m = M(u);
	struct mb_replica *rep = m->rep;
	struct mbs_sync *c = m->sync;
	if (m->phase == 5) /* the upload pass's end: its checkpoints (mbstore.c checked them) */
		return 0;
	if (m->phase == 3) { /* online: the notification fetch */
		const struct mb_op_reply *o = mb__mbs_find_op(r, MB_OP_QUERY_ROWS, 0);
		if (!o || o->status != 0)
			return mb__mbs_op_status(o);
		m->itable = true;
		u->st->n.notify_fetches++;
		return 0;
	}
	if (m->phase == 4) { /* the hierarchy: the changed folders become dirty */
		const struct mb_op_reply *o = mb__mbs_find_op(r, MB_OP_SYNC_DOWNLOAD, 0);
		if (!o || o->status != 0)
			return mb__mbs_op_status(o);
		for (uint32_t i = 0; i < o->u.sync_down.n; i++) {
			const struct mb_sync_item *it = &o->u.sync_down.items[i];
			int s =
			    it->mid <= UINT32_MAX ? mb_replica_slot(rep, (uint32_t)it->mid) : -1;
			if (s >= 0 && it->cn > rep->f[s].watermark)
				rep->dirty |= 1u << s;
		}
		/* with more (over 1,024 changed folders) the mark stays: the
		 * next periodic sync asks again */
		if (!o->u.sync_down.more)
			rep->hier_watermark = o->u.sync_down.watermark;
		return sync_ask(u);
	}
	if (m->phase == 1) {
		/* headers of every asked folder */
		int k = 0;
		for (int s = 0; s < rep->nfolders; s++) {
			if (!(c->mask & (1u << s)))
				continue;
			const struct mb_op_reply *o = mb__mbs_find_op(r, MB_OP_SYNC_DOWNLOAD, k++);
			if (!o || o->status != 0)
				return sync_abandon(u, mb__mbs_op_status(o));
			u->st->n.syncs++;
			u->st->n.sync_items += o->u.sync_down.n;
			for (uint32_t i = 0; i < o->u.sync_down.n; i++) {
				const struct mb_sync_item *it = &o->u.sync_down.items[i];
				if (it->deleted) {
					mb_replica_remove(rep, s, it->mid);
					continue;
				}
				const struct mb_prop *fl =
				    mb_props_find(it->props, it->nprops, MB_PR_MESSAGE_FLAGS);
				const struct mb_prop *sz =
				    mb_props_find(it->props, it->nprops, MB_PR_MESSAGE_SIZE);
				const struct mb_prop *sn =
				    mb_props_find(it->props, it->nprops, MB_PR_SENDER_NAME);
				int32_t who = sn && MB_PTAG_TYPE(sn->tag) == MB_PT_STRING
						  ? mb_target_find_user(u, (const char *)sn->v.b.p,
									sn->v.b.len)
						  : -1;
				/* an item the replica does not hold came whole
				 * (not at the first logon: the replica stands for an
				 * OST primed when the mailbox was initialised, see
				 * replica.h), its body and attachments in the
				 * context's stream; one it holds in that folder, the
				 * user's own read-state changes and moves, with its
				 * header only, as Outlook uploads them with the ICS
				 * state and so never downloads them again
				 * (MS-OXCFXICS 3.2.5.9.4.4, 3.2.5.9.4.6) */
				mb_replica_upsert(rep, s, it->mid, fl ? (uint32_t)fl->v.i : 0,
						  sz ? (uint32_t)sz->v.i : 0, who);
			}
			rep->f[s].watermark = o->u.sync_down.watermark;
			if (!o->u.sync_down.more)
				rep->dirty &= ~(1u << s);
			if (!(c->stream & (1u << s)))
				continue;
			if (o->u.sync_down.content > UINT32_MAX - STREAM_CHUNK)
				return sync_abandon(u, MB_EPROTO);
			c->left[s] = o->u.sync_down.content;
			c->stream &= ~(1u << s);
			if (c->left[s])
				c->want |= 1u << s;
			else if (m->nrel < RELEASES_MAX) /* nothing came whole */
				mb__mbs_release_later(u, (uint8_t)(H_SYNC + s));
			else
				c->rel |= 1u << s;
		}
		c->stream = 0;
		c->cur = -1;
		m->phase = 2;
	} else if (m->phase == 2 && c->cur >= 0) {
		/* rounds of a stream: each STREAM_CHUNK bytes, the last one
		 * what was left */
		uint32_t *left = &c->left[c->cur];
		for (int k = 0; k < c->rounds; k++) {
			const struct mb_op_reply *o = mb__mbs_find_op(r, MB_OP_FT_GET_BUFFER, k);
			if (!o || o->status != 0)
				return sync_abandon(u, mb__mbs_op_status(o));
			uint32_t want = *left < STREAM_CHUNK ? *left : STREAM_CHUNK;
			if (o->u.stream.data.len != want) /* not the length SyncDownload said */
				return sync_abandon(u, MB_EPROTO);
			*left -= want;
		}
		if (!*left) /* read, and released after its last round */
			c->want &= ~(1u << c->cur);
		c->cur = -1;
	}
	/* phase 2: the whole items' bodies and attachments, read from each
	 * context's FastTransfer stream as Outlook reads a messageChangeFull
	 * (MS-OXCFXICS 2.2.4.3.13, 3.3.5.7.1): RopFastTransferSourceGetBuffer
	 * rounds of STREAM_CHUNK bytes (an extended buffer holds at most
	 * 32 KB, MS-OXCRPC 3.1.4.2.1), STREAM_PACK per request (packed
	 * responses), as many as SyncDownload said the stream holds; a
	 * context's release after its stream's last round, or, when nothing
	 * came whole, queued for the user's next request as Outlook queues
	 * its releases (with the sync's next request when the queue is
	 * full); nothing of the items is kept (see replica.h) */
	struct mb__rb *rb = RB(u);
	if (c->want || !rep->dirty)
		emit_context_releases(u); /* else with sync_ask's request */
	if (c->want) {
		int s = __builtin_ctz(c->want);
		c->rounds = (int)mb__mbs_stream_rounds(c->left[s]);
		for (int k = 0; k < c->rounds; k++) {
			struct mb_op *op = mb__rb_op(rb, MB_OP_FT_GET_BUFFER);
			op->u.read_stream.handle = H_SYNC + (uint32_t)s;
			op->u.read_stream.max = STREAM_CHUNK;
		}
		c->cur_rel = c->left[s] <= (uint32_t)c->rounds * STREAM_CHUNK; /* its last rounds */
		if (c->cur_rel)
			mb__rb_op(rb, MB_OP_RELEASE)->u.release.handle = H_SYNC + (uint32_t)s;
		c->cur = s;
		return mb__mbs_send_rpc(u);
	}
	if (rb->nops && !rep->dirty) /* the releases alone, the sync's last request */
		return mb__mbs_send_rpc(u);
	return sync_ask(u);
}
