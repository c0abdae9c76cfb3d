/* drivers/mbstore.c: the target driver of mailbench's own store: its
 * MAPI-style wire protocol (src/proto/proto.h), in online and in cached
 * mode (a local replica per user, src/load/replica.h).
 *
 * Framing: length-prefixed frames (mb_frame_check); a frame is a reply to
 * the request in flight (its sequence number), a new-mail notification, or
 * an error (the store no longer trusts the stream: connection lost).
 * Each step maps to one request batch (two for the logon, several for a
 * sync, a read or an attachment whose stream exceeds one ReadStream): the
 * table steps[] below pairs the function that encodes a step with the one
 * that decodes its reply into the step result.  The sequences follow
 * Outlook 2003 (docs/workload.md): a view is OpenFolder, GetContentsTable,
 * SetColumns, SortTable, QueryRows (and RegisterNotification); a read is OpenMessage,
 * GetPropertiesSpecific, OpenStream + ReadStream of the body (and the
 * attachment table); handles a step leaves open are released first thing
 * in the user's next request (m->rel), as Outlook queues its releases.  Cached-mode
 * users answer list steps from their replica (no request), upload local
 * changes with SyncUpload and keep the replica in step with what they did.
 * Acknowledged creates go to the ack log as '+', hard deletes as '~'
 * before the request and '-' once acknowledged.
 *
 * Per-user state: struct mbs_user (sequence number, compression, the user
 * folders' local numbers, the replica; a delete's ids are allocated
 * only while that step runs, a sync's state once the first sync runs).  Per-loop state: the
 * request builder, the codec buffers, the body buffer and the result
 * arrays.  Invariant: one request in flight per user; the builder is
 * empty again when send returns.
 *
 * Files: this one holds the ops table, the step table and the reply
 * dispatch; the steps and helpers are in mbstore_*.c (layers:
 * mbstore_int.h).
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
#include "proto/lz77.h"
#include "proto/proto.h"

/* ---- the step table ------------------------------------------------------------------- */

/* emit: encode the step (1 a request is out, 0 done locally, < 0 failed);
 * took: decode its reply (1 another request is out, 0 done, < 0 failed). */
struct step_map {
	int (*emit)(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res);
	int (*took)(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res);
};

static const struct step_map steps[MB_STEP_KIND_COUNT] = {
    [MB_STEP_LOGON] = {mb__mbs_emit_logon, mb__mbs_took_logon},
    [MB_STEP_LOGOFF] = {mb__mbs_emit_logoff, mb__mbs_took_logoff},
    [MB_STEP_KEEPALIVE] = {mb__mbs_emit_keepalive, mb__mbs_took_nothing},
    [MB_STEP_SYNC] = {mb__mbs_emit_sync, mb__mbs_took_sync},
    [MB_STEP_LIST_FOLDER] = {mb__mbs_emit_list_folder, mb__mbs_took_list},
    [MB_STEP_CLOSE_VIEW] = {mb__mbs_emit_close_view, mb__mbs_took_nothing},
    [MB_STEP_NEXT_ROWS] = {mb__mbs_emit_next_rows, mb__mbs_took_next_rows},
    [MB_STEP_READ] = {mb__mbs_emit_read, mb__mbs_took_read},
    [MB_STEP_OPEN_ATTACHMENT] = {mb__mbs_emit_open_attachment, mb__mbs_took_open_attachment},
    [MB_STEP_MARK_READ] = {mb__mbs_emit_read, mb__mbs_took_read},
    [MB_STEP_RESOLVE_NAMES] = {mb__mbs_emit_resolve, mb__mbs_took_resolve},
    [MB_STEP_SEND] = {mb__mbs_emit_send, mb__mbs_took_send},
    [MB_STEP_MOVE] = {mb__mbs_emit_move, mb__mbs_took_nothing},
    [MB_STEP_DELETE] = {mb__mbs_emit_delete, mb__mbs_took_delete},
    [MB_STEP_FREEBUSY] = {mb__mbs_emit_freebusy, mb__mbs_took_freebusy},
    [MB_STEP_CALENDAR_RANGE] = {mb__mbs_emit_calendar, mb__mbs_took_calendar},
    [MB_STEP_CREATE_APPOINTMENT] = {mb__mbs_emit_create_appointment, mb__mbs_took_create},
    [MB_STEP_LIST_CONTACTS] = {mb__mbs_emit_list_contacts, mb__mbs_took_list_contacts},
    [MB_STEP_CREATE_CONTACT] = {mb__mbs_emit_create_contact, mb__mbs_took_create_contact},
};

/* ---- the ops ---------------------------------------------------------------------------- */

static int mbs_shard_init(const struct mb_target_env *env, void **out)
{
	(void)env;
	struct mbs_shard *sh = calloc(1, sizeof(*sh));
	if (!sh)
		return MB_ENOMEM;
	int rc = 0;
	sh->body_cap = MB_CONTENT_MAX;
	sh->body = malloc(sh->body_cap);
	sh->att_cap = MB_CONTENT_MAX;
	sh->att = malloc(sh->att_cap);
	if (!sh->body || !sh->att)
		rc = MB_ENOMEM;
	if (rc == 0)
		rc = mb_arena_create(4u << 20, &sh->arena);
	if (rc == 0)
		rc = mb_buf_create(64 << 10, &sh->scratch);
	if (rc == 0)
		rc = mb_buf_create(64 << 10, &sh->enc);
	if (rc == 0)
		rc = mb_buf_create(64 << 10, &sh->enc_tmp);
	if (rc == 0)
		rc = mb_lz77_create(MB_LZ77_DEPTH, &sh->lz77);
	*out = sh;
	return rc;
}

static void mbs_shard_fini(void *p)
{
	struct mbs_shard *sh = p;
	if (!sh)
		return;
	free(sh->body);
	free(sh->att);
	mb_arena_destroy(sh->arena);
	mb_buf_destroy(sh->scratch);
	mb_buf_destroy(sh->enc);
	mb_buf_destroy(sh->enc_tmp);
	mb_lz77_destroy(sh->lz77);
	free(sh);
}

static int mbs_user_init(struct mb_tuser *u)
{
	if (u->env->cached)
		return mb_replica_create(&M(u)->rep);
	return 0;
}

static void mbs_user_fini(struct mb_tuser *u)
{
	struct mbs_user *m = M(u);
	mb_replica_destroy(m->rep);
	m->rep = NULL;
	free(m->del);
	m->del = NULL;
	free(m->sync);
	m->sync = NULL;
}

static void mbs_disconnected(struct mb_tuser *u, int conn)
{
	struct mbs_user *m = M(u);
	(void)conn;
	m->busy = false;
	m->view = 0;
	m->vnotify = false;
	m->nrel = 0;
	m->open_mid = 0;
	m->kind = MB_STEP_NONE;
	m->nnew = 0;
	m->itable = false;
	free(m->del);
	m->del = NULL;
	free(m->sync);
	m->sync = NULL;
}

static long mbs_frame(struct mb_tuser *u, int conn, const uint8_t *p, size_t len)
{
	(void)u;
	(void)conn;
	struct mb_frame_hdr hdr;
	size_t total = 0;
	int rc = mb_frame_check(p, len, 0, &hdr, &total);
	if (rc == MB_EAGAIN)
		return 0;
	return rc != 0 ? -1 : (long)total;
}

static int mbs_on_message(struct mb_tuser *u, int conn, const uint8_t *msg, size_t len)
{
	struct mbs_shard *sh = SH(u);
	struct mbs_user *m = M(u);
	(void)conn;
	struct mb_frame_hdr hdr;
	size_t total = 0;
	const uint8_t *payload;
	size_t plen;
	if (mb_frame_check(msg, len, 0, &hdr, &total) != 0 ||
	    mb_frame_payload(&hdr, msg, sh->scratch, &payload, &plen) != 0)
		return MB_EPROTO;
	mb_arena_reset(sh->arena);
	if (hdr.kind == MB_FRAME_NOTIFY) {
		struct mb_notify n;
		if (mb_notify_decode(payload, plen, sh->arena, &n) != 0)
			return MB_EPROTO;
		for (int i = 0; i < n.n; i++) {
			u->st->n.notifications++;
			const struct mb_event *ev = &n.events[i];
			if (ev->type != MB_EVENT_NEW_MAIL)
				continue;
			if (!m->rep) { /* online: fetched (the Inbox view's new rows) */
				if (m->nnew < 127)
					m->nnew++;
				continue;
			}
			int slot = mb_replica_slot(m->rep, (uint32_t)(ev->fid & 0xffffffffu));
			if (slot >= 0)
				m->notified |= 1u << slot;
		}
		if (m->rep && m->notified && !m->notify_due_ns) {
			/* cached: the download timer starts with the first
			 * notification; the ones within it are downloaded with it */
			m->notify_due_ns = mb_now_ns() + (uint64_t)(u->env->download_delay_s * 1e9);
			mb_target_wake_at(u, m->notify_due_ns);
		}
		if (!m->rep)
			mb_target_wake(u);
		return 0;
	}
	if (hdr.kind == MB_FRAME_ERROR) {
		u->st->n.op_errors++;
		return MB_EPROTO; /* the store closes or no longer trusts the stream */
	}
	if (hdr.kind != MB_FRAME_REPLY || hdr.seq != m->seq || !m->busy || m->kind == MB_STEP_NONE)
		return MB_EPROTO;
	struct mb_reply r;
	if (mb_reply_decode(payload, plen, hdr.seq, sh->arena, &r) != 0)
		return MB_EPROTO;
	mb_target_reply(u, 0);
	m->busy = false;
	for (int i = 0; i < r.nops; i++)
		if (r.ops[i].status != 0)
			u->st->n.op_errors++;
	struct mb_step_result res;
	memset(&res, 0, sizeof(res));
	int rc = mb__mbs_upload_check(&r);
	if (!rc)
		rc = steps[m->kind].took(u, &r, &res);
	if (rc == 1)
		return 0; /* the step goes on */
	m->kind = MB_STEP_NONE;
	res.status = rc;
	mb_target_step_done(u, &res);
	return 0;
}

static int mbs_step(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res)
{
	struct mbs_user *m = M(u);
	if (s->kind >= MB_STEP_KIND_COUNT || !steps[s->kind].emit)
		return MB_EUNSUPPORTED;
	mb__mbs_drop_request(u); /* what an emit that failed before sending left */
	m->kind = s->kind;
	m->step_flags = s->flags;
	int rc = steps[s->kind].emit(u, s, res);
	if (rc != 1)
		m->kind = MB_STEP_NONE;
	return rc;
}

static bool mbs_sync_due(struct mb_tuser *u, bool pending)
{
	struct mbs_user *m = M(u);
	struct mb_replica *rep = m->rep;
	if (!rep) /* online: the fetch of pushed notifications, at once */
		return m->nnew > 0 && u->env->notify;
	if (m->notify_due_ns && mb_now_ns() + 1000000u >= m->notify_due_ns) {
		/* the download timer ran out (within the timer's millisecond) */
		rep->dirty |= m->notified;
		m->notified = 0;
		m->notify_due_ns = 0;
	}
	/* the full download at first logon comes first; later syncs yield to
	 * actions, but not an upload pass that is due */
	return mb__mbs_upload_due(u) || (rep->dirty && (!rep->synced || !pending)) ||
	       (m->hier_due && !pending);
}

static void mbs_tick(struct mb_tuser *u)
{
	struct mbs_user *m = M(u);
	struct mb_replica *rep = m->rep;
	if (!rep)
		return;
	/* the periodic sync: a hierarchy download says which folders changed
	 * (the notified ones among them: a running download timer finds
	 * nothing left) */
	m->hier_due = true;
	rep->dirty |= m->notified;
	m->notified = 0;
}

static const char *const op_names[] = {
#define MB_X_OPN(id, code, name) name,
    MB_OP_TABLE(MB_X_OPN)
#undef MB_X_OPN
};

#define ALL_ACTIONS ((1u << MB_ACTION_COUNT) - 1)

const struct mb_target_ops mb_target_mbstore = {
    .name = "mbstore",
    .help = "mailbench's own store (MAPI-style RPC over TCP), online and cached mode",
    .actions = ALL_ACTIONS,
    .flags = MB_TARGET_F_PUSH | MB_TARGET_F_CACHED | MB_TARGET_F_EMBEDDED,
    .conns = 1,
    .user_size = sizeof(struct mbs_user),
    .op_names = op_names,
    .nops = MB_OP_COUNT,
    .opts = NULL,
    .steps = MB_STEPS_OPTIONAL,
    .shard_init = mbs_shard_init,
    .shard_fini = mbs_shard_fini,
    .user_init = mbs_user_init,
    .user_fini = mbs_user_fini,
    .connected = NULL,
    .disconnected = mbs_disconnected,
    .frame = mbs_frame,
    .on_message = mbs_on_message,
    .step = mbs_step,
    .sync_due = mbs_sync_due,
    .tick = mbs_tick,
};
