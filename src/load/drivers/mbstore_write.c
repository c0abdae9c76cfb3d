/* drivers/mbstore_write.c: the mbstore driver's writing steps: resolve
 * names, send (mb__mbs_compose, attachments, submit), move, delete (ids logged '~'
 * before the request, '-' once acknowledged), free/busy, create appointment
 * and create contact (a new item: online Create, Set, Save; cached an
 * import into the upload pass's context; acknowledged creates logged '+').
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

/* ---- steps: mail ------------------------------------------------------------------ */

/* Check names: ResolveNames of the recipients (users, then lists)
 * against the global address list, one request (NSPI's
 * NspiResolveNames: Outlook resolves what the user typed). */
int mb__mbs_emit_resolve(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res)
{
	(void)res;
	struct mb__rb *rb = RB(u);
	const struct mb_target_env *env = u->env;
	int nu = s->nusers, nl = s->nlists;
	/* at most 64 names per ResolveNames (docs/PROTOCOL.md) */
	if (nu > 64)
		nu = 64;
	if (nl > 64 - nu)
		nl = 64 - nu;
	if (nu + nl == 0)
		return 0;
	struct mb_bytes *names = mb__rb_strs(rb, nu + nl);
	if (!names)
		return MB_ETOOBIG;
	for (int i = 0; i < nu; i++)
		names[i] = mb_str(mb_topology_user(env->accounts, (int)s->users[i])->name);
	for (int i = 0; i < nl; i++)
		names[nu + i] = mb_str(mb_topology_list(env->accounts, (int)s->lists[i])->name);
	struct mb_op *op = mb__rb_op(rb, MB_OP_RESOLVE_NAMES);
	op->u.resolve.n = (uint16_t)(nu + nl);
	op->u.resolve.names = names;
	return mb__mbs_send_rpc(u);
}

int mb__mbs_took_resolve(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res)
{
	(void)u;
	(void)res;
	const struct mb_op_reply *o = mb__mbs_find_op(r, MB_OP_RESOLVE_NAMES, 0);
	if (!o || o->status != 0)
		return mb__mbs_op_status(o);
	for (int i = 0; i < o->u.resolve.n; i++)
		if (o->u.resolve.v[i].status != 0)
			return o->u.resolve.v[i].status; /* a name the directory does not know */
	return 0;
}

/* (Open the quoted original,) CreateMessage in Sent Items, compose
 * (SetProperties: class, subject, recipients, body of the send mix's
 * format), the attachments, Submit: one request.  Once the submission is
 * acknowledged, a reply or forward marks its original (emit_verb): a
 * second request.
 *
 * Cached mode against a server of major version below 8 (Exchange 2003 is
 * 6.5), as MS-OXCFXICS 3.3.4.3.3.2.1.2 "Avoiding Duplicate Uploads"
 * describes it: the client copies its local message into a new server
 * message and submits it (the first upload; the server keeps no copy once
 * it is sent: PidTagDeleteAfterSubmit, MS-OXOMSG 3.3.5.1.3), moves its own
 * item to its local Sent Items, and the next upload of Sent Items sends it
 * again as a new item (the second upload: CreateMessage(Sent Items) for
 * RopSynchronizationImportMessageChange, SetProperties, the attachments,
 * SaveChangesMessage), in the action's request as every cached upload here
 * (docs/workload.md). */
int mb__mbs_emit_send(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res)
{
	(void)res;
	struct mb__rb *rb = RB(u);
	struct mbs_user *m = M(u);
	bool cached = m->rep != NULL;
	m->phase = 0;
	m->verb_mid = s->item;
	m->verb_fwd = s->msg_kind == MB_MSG_FORWARD;
	if (s->item && !cached) /* the original, quoted; it stays open for its verb */
		mb__mbs_emit_open_message(u, MB_FID_INBOX, s->item);
	/* the draft: CreateMessage, SetProperties, the attachments */
	int first = rb->nops;
	struct mb_op *op = mb__rb_op(rb, MB_OP_CREATE_MESSAGE);
	op->u.create_message.fid = fid_of(u, MB_FID_SENT);
	op->u.create_message.handle = H_NEW;
	struct mb_prop das = mb_prop_i64(MB_PR_DELETE_AFTER_SUBMIT, 1);
	mb__mbs_compose(u, H_NEW, s, cached ? &das : NULL);
	mb__mbs_compose_attachments(u, H_NEW, s);
	int end = rb->nops;
	mb__rb_op(rb, MB_OP_SUBMIT)->u.save.handle = H_NEW; /* submitting releases it */
	if (cached && !mb__rb_error(rb)) {
		/* the second upload, an ICS upload of Sent Items: the draft's
		 * ops again (same handles, the same content already in the
		 * builder), read instead of PidTagDeleteAfterSubmit, then saved */
		uint32_t hc;
		int rc = mb__mbs_upload_open(u, MB_FID_SENT, &hc);
		if (rc)
			return rc;
		for (int i = first; i < end; i++) {
			const struct mb_op *d = &rb->ops[i];
			op = mb__rb_op(rb, d->code);
			*op = *d;
			if (i == first + 1 &&
			    d->code == MB_OP_SET_PROPS) { /* compose's: das last */
				uint16_t n = d->u.set_props.n;
				struct mb_prop *p = mb__rb_props(rb, n);
				memcpy(p, d->u.set_props.props, n * sizeof(*p));
				p[n - 1] = mb_prop_i64(MB_PR_MESSAGE_FLAGS, MB_MSGFLAG_READ);
				op->u.set_props.props = p;
			}
		}
		mb__rb_op(rb, MB_OP_SAVE_CHANGES)->u.save.handle = H_NEW;
		mb__rb_op(rb, MB_OP_RELEASE)->u.release.handle = H_NEW;
		mb__mbs_upload_done(u, hc);
	}
	return mb__mbs_send_rpc(u);
}

/* The original of an acknowledged reply or forward marked, the send's
 * second request, as Outlook marks it once the message is submitted
 * (PidTagLastVerbExecuted, its time, PidTagIconIndex [VERB]):
 * SetProperties + SaveChangesMessage on the original, then its Release;
 * online it is open under H_MSG from the first request, cached the local
 * original's change is uploaded in the pass's context on the Inbox, an
 * import of an existing item (RopSynchronizationImportMessageChange of its
 * id: OpenMessage here). */
static int emit_verb(struct mb_tuser *u)
{
	struct mbs_user *m = M(u);
	struct mb__rb *rb = RB(u);
	uint32_t hc = 0;
	if (m->rep) {
		int rc = mb__mbs_upload_open(u, MB_FID_INBOX, &hc);
		if (rc)
			return rc;
		mb__mbs_emit_open_message(u, MB_FID_INBOX, m->verb_mid);
	}
	struct mb_prop *p = mb__rb_props(rb, 3);
	p[0] = mb_prop_i64(MB_PR_LAST_VERB_EXECUTED,
			   m->verb_fwd ? MB_VERB_FORWARD : MB_VERB_REPLY_TO_SENDER);
	p[1] = mb_prop_i64(MB_PR_LAST_VERB_EXECUTION_TIME, mb_wall_ms());
	p[2] = mb_prop_i64(MB_PR_ICON_INDEX, m->verb_fwd ? MB_ICON_FORWARDED : MB_ICON_REPLIED);
	mb__mbs_emit_save(rb, H_MSG, p, 3);
	mb__rb_op(rb, MB_OP_RELEASE)->u.release.handle = H_MSG;
	if (m->rep)
		mb__mbs_upload_done(u, hc);
	m->phase = 1;
	return mb__mbs_send_rpc(u);
}

/* A Submit reply: messages sent, deliveries; the sender's copy in Sent
 * Items (cached: the uploaded one, into the replica; the submitted one is
 * gone), then each recipient's copy, into the ack log; then a reply's
 * original gets its verb (emit_verb; phase 1 is that request's reply).
 * A failed submission leaves the original unmarked. */
int mb__mbs_took_send(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res)
{
	(void)res;
	struct mbs_user *m = M(u);
	if (m->phase == 1) /* the original's verb */
		return mb__mbs_op_status(mb__mbs_find_op(r, MB_OP_SAVE_CHANGES, 0));
	const struct mb_op_reply *s = mb__mbs_find_op(r, MB_OP_SUBMIT, 0);
	if (!s || s->status != 0) {
		if (m->verb_mid && !m->rep)
			mb__mbs_release_later(u, H_MSG); /* the original, not marked */
		return mb__mbs_op_status(s);
	}
	struct mbs_shard *sh = SH(u);
	struct mb_replica *rep = m->rep;
	u->st->n.msgs_sent++;
	u->st->n.deliveries += s->u.submit.n;
	const struct mb_op_reply *sv = rep ? mb__mbs_find_op(r, MB_OP_SAVE_CHANGES, 0) : NULL;
	bool kept = sv && sv->status == 0;
	/* one ack-log write for the whole delivery, whatever became of the
	 * sender's copy (cached: the second upload's) */
	int n = 0;
	if (!rep || kept) {
		sh->ids[n] = kept ? sv->u.saved.mid : s->u.submit.mid;
		sh->flags[n++] = mailbox_of(u);
	}
	for (uint32_t i = 0; i < s->u.submit.n && n < ITEMS; i++) {
		sh->ids[n] = s->u.submit.dl[i].mid;
		sh->flags[n++] = s->u.submit.dl[i].mailbox;
	}
	mb_target_ack_many(u, '+', sh->flags, sh->ids, n);
	if (kept)
		mb_replica_upsert(rep, MB_RSLOT_SENT, sv->u.saved.mid, MB_MSGFLAG_READ, 0, -1);
	if (rep && !kept)
		return mb__mbs_op_status(sv);
	if (!m->verb_mid)
		return 0;
	if (!rep) { /* online: the original opened with the send, or not */
		int rc = mb__mbs_op_status(mb__mbs_find_op(r, MB_OP_OPEN_MESSAGE, 0));
		if (rc)
			return rc;
	}
	return emit_verb(u);
}

int mb__mbs_emit_move(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res)
{
	(void)res;
	struct mbs_user *m = M(u);
	struct mb__rb *rb = RB(u);
	uint32_t src = local_of(u, s->folder), dst = local_of(u, s->dst);
	if (m->rep) {
		int ss = mb_replica_slot(m->rep, src);
		if (s->nread > 0) {
			uint32_t hc;
			int rc = mb__mbs_upload_open(u, src, &hc);
			if (rc)
				return rc;
			struct mb_op *op = mb__rb_op(rb, MB_OP_SYNC_UPLOAD);
			int nc = s->nread < ITEMS ? s->nread : ITEMS;
			struct mb_sync_change *ch = mb__rb_changes(rb, nc);
			for (int i = 0; i < nc; i++) {
				memset(&ch[i], 0, sizeof(ch[i]));
				ch[i].kind = MB_SYNC_SET_FLAGS;
				ch[i].mid = s->read[i];
				ch[i].flags = MB_MSGFLAG_READ;
				if (ss >= 0)
					mb_replica_upsert(m->rep, ss, s->read[i], MB_MSGFLAG_READ,
							  0, -1);
			}
			op->u.sync_up.fid = fid_of(u, src);
			op->u.sync_up.handle = hc;
			op->u.sync_up.n = (uint32_t)nc;
			op->u.sync_up.changes = ch;
			mb__mbs_upload_done(u, hc);
		}
		for (int i = 0; i < s->nids; i++) {
			if (ss >= 0)
				mb_replica_remove(m->rep, ss, s->ids[i]);
			mb_replica_upsert(m->rep, MB_RSLOT_DELETED, s->ids[i], MB_MSGFLAG_READ, 0,
					  -1);
		}
		int fs = mb_replica_slot(m->rep, dst);
		for (int i = 0; i < s->nmore; i++) {
			if (ss >= 0)
				mb_replica_remove(m->rep, ss, s->more[i]);
			if (fs >= 0)
				mb_replica_upsert(m->rep, fs, s->more[i], MB_MSGFLAG_READ, 0, -1);
		}
	}
	if (s->nids) {
		struct mb_op *op = mb__rb_op(rb, MB_OP_MOVE_COPY);
		uint64_t *ids = mb__rb_mids(rb, s->nids);
		if (!ids)
			return mb__mbs_send_rpc(u); /* MB_ETOOBIG */
		memcpy(ids, s->ids, (size_t)s->nids * sizeof(uint64_t));
		op->u.move_copy.src_fid = fid_of(u, src);
		op->u.move_copy.dst_fid = fid_of(u, MB_FID_DELETED);
		op->u.move_copy.n = (uint32_t)s->nids;
		op->u.move_copy.mids = ids;
	}
	if (s->nmore) {
		struct mb_op *op = mb__rb_op(rb, MB_OP_MOVE_COPY);
		uint64_t *ids = mb__rb_mids(rb, s->nmore);
		if (!ids)
			return mb__mbs_send_rpc(u); /* MB_ETOOBIG */
		memcpy(ids, s->more, (size_t)s->nmore * sizeof(uint64_t));
		op->u.move_copy.src_fid = fid_of(u, src);
		op->u.move_copy.dst_fid = fid_of(u, dst);
		op->u.move_copy.n = (uint32_t)s->nmore;
		op->u.move_copy.mids = ids;
	}
	if ((s->flags & MB_STEP_F_CLOSE_VIEW) && m->view && !m->rep)
		mb__mbs_emit_view_release(u);
	if (rb->nops == 0)
		return 0;
	return mb__mbs_send_rpc(u);
}

int mb__mbs_emit_delete(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res)
{
	(void)res;
	struct mbs_user *m = M(u);
	struct mb__rb *rb = RB(u);
	int n = s->nids < ITEMS ? s->nids : ITEMS;
	if (n <= 0)
		return 0;
	free(m->del);
	m->del = malloc((size_t)n * sizeof(uint64_t));
	if (!m->del)
		return MB_ENOMEM;
	memcpy(m->del, s->ids, (size_t)n * sizeof(uint64_t));
	m->ndel = n;
	uint32_t local = local_of(u, s->folder);
	mb_target_ack(u, '~', mailbox_of(u), m->del, n);
	if (m->rep) {
		uint32_t hc;
		int rc = mb__mbs_upload_open(u, local, &hc);
		if (rc)
			return rc;
		struct mb_op *op = mb__rb_op(rb, MB_OP_SYNC_UPLOAD);
		struct mb_sync_change *ch = mb__rb_changes(rb, n);
		for (int i = 0; i < n; i++) {
			memset(&ch[i], 0, sizeof(ch[i]));
			ch[i].kind = MB_SYNC_DELETE;
			ch[i].mid = m->del[i];
		}
		op->u.sync_up.fid = fid_of(u, local);
		op->u.sync_up.handle = hc;
		op->u.sync_up.n = (uint32_t)n;
		op->u.sync_up.changes = ch;
		mb__mbs_upload_done(u, hc);
		return mb__mbs_send_rpc(u);
	}
	struct mb_op *op = mb__rb_op(rb, MB_OP_DELETE_MESSAGES);
	uint64_t *ids = mb__rb_mids(rb, n);
	if (!ids)
		return mb__mbs_send_rpc(u); /* MB_ETOOBIG */
	memcpy(ids, m->del, (size_t)n * sizeof(uint64_t));
	op->u.del.fid = fid_of(u, local);
	op->u.del.n = (uint32_t)n;
	op->u.del.mids = ids;
	if ((s->flags & MB_STEP_F_CLOSE_VIEW) && m->view)
		mb__mbs_emit_view_release(u);
	return mb__mbs_send_rpc(u);
}

int mb__mbs_took_delete(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res)
{
	struct mbs_user *m = M(u);
	int rc = 0;
	if (m->rep) {
		const struct mb_op_reply *o = mb__mbs_find_op(r, MB_OP_SYNC_UPLOAD, 0);
		if (!o || o->status != 0) {
			rc = mb__mbs_op_status(o);
		} else {
			for (uint32_t i = 0; i < o->u.sync_up.n; i++)
				if (o->u.sync_up.mids[i]) {
					mb_target_ack(u, '-', mailbox_of(u), &o->u.sync_up.mids[i],
						      1);
					mb_replica_remove(m->rep, MB_RSLOT_DELETED,
							  o->u.sync_up.mids[i]);
					res->done++;
				}
		}
	} else {
		const struct mb_op_reply *o = mb__mbs_find_op(r, MB_OP_DELETE_MESSAGES, 0);
		if (!o || o->status != 0) {
			rc = mb__mbs_op_status(o);
		} else {
			res->done = o->u.count.n;
			/* every id was in the folder: all are gone for sure */
			if (o->u.count.n == (uint32_t)m->ndel)
				mb_target_ack(u, '-', mailbox_of(u), m->del, m->ndel);
		}
	}
	free(m->del);
	m->del = NULL;
	m->ndel = 0;
	return rc;
}

/* Save a new item in folder `local`: online Create+Set+Save, cached
 * SyncUpload CREATE in an upload context (mb__mbs_upload_open). */
void mb__mbs_emit_create_item(struct mb_tuser *u, uint32_t local, struct mb_prop *p, int n)
{
	struct mb__rb *rb = RB(u);
	if (M(u)->rep) {
		uint32_t hc;
		if (mb__mbs_upload_open(u, local, &hc)) {
			rb->err = MB_ETOOBIG; /* the state did not fit in the request */
			return;
		}
		struct mb_op *op = mb__rb_op(rb, MB_OP_SYNC_UPLOAD);
		struct mb_sync_change *c = mb__rb_changes(rb, 1);
		memset(c, 0, sizeof(*c));
		c->kind = MB_SYNC_CREATE;
		c->nprops = (uint16_t)n;
		c->props = p;
		op->u.sync_up.fid = fid_of(u, local);
		op->u.sync_up.handle = hc;
		op->u.sync_up.n = 1;
		op->u.sync_up.changes = c;
		mb__mbs_upload_done(u, hc);
		return;
	}
	struct mb_op *op = mb__rb_op(rb, MB_OP_CREATE_MESSAGE);
	op->u.create_message.fid = fid_of(u, local);
	op->u.create_message.handle = H_NEW;
	mb__mbs_emit_save(rb, H_NEW, p, (uint16_t)n);
	mb__rb_op(rb, MB_OP_RELEASE)->u.release.handle = H_NEW;
}

/* ---- steps: calendar, contacts --------------------------------------------------------- */

int mb__mbs_emit_freebusy(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res)
{
	(void)res;
	struct mb__rb *rb = RB(u);
	for (int i = 0; i < s->nusers; i++) {
		struct mb_op *op = mb__rb_op(rb, MB_OP_FREEBUSY);
		op->u.freebusy.user =
		    mb_str(mb_topology_user(u->env->accounts, (int)s->users[i])->name);
		op->u.freebusy.start = s->start_ms;
		op->u.freebusy.end = s->end_ms;
	}
	if (s->flags & MB_STEP_F_WITH_CALENDAR) {
		struct mb_op *op = mb__rb_op(rb, MB_OP_CALENDAR_RANGE);
		op->u.calendar.start = s->start_ms;
		op->u.calendar.end = s->end_ms;
		op->u.calendar.max_rows = 100;
	}
	return mb__mbs_send_rpc(u);
}

int mb__mbs_took_freebusy(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res)
{
	(void)u;
	(void)res;
	return mb__mbs_op_status(mb__mbs_find_op(r, MB_OP_FREEBUSY, 0));
}

int mb__mbs_emit_create_appointment(struct mb_tuser *u, const struct mb_step *s,
				    struct mb_step_result *res)
{
	(void)res;
	struct mbs_user *m = M(u);
	uint32_t local = local_of(u, s->folder);
	int n;
	struct mb_prop *p = mb__mbs_appointment_props(u, s, &n);
	if (m->rep) {
		int slot = mb_replica_slot(m->rep, local);
		m->slot = (int16_t)(slot < 0 ? 0 : slot);
	}
	mb__mbs_emit_create_item(u, local, p, n);
	return mb__mbs_send_rpc(u);
}

int mb__mbs_emit_create_contact(struct mb_tuser *u, const struct mb_step *s,
				struct mb_step_result *res)
{
	(void)res;
	struct mbs_user *m = M(u);
	struct mb__rb *rb = RB(u);
	char name[64];
	mb_content_subject(s->seed, name, 40);
	struct mb_prop *p = mb__rb_props(rb, 3);
	p[0] = mb_prop_str(MB_PR_MESSAGE_CLASS, "IPM.Contact");
	p[1].tag = MB_PR_DISPLAY_NAME;
	p[1].v.b = mb__rb_printf(rb, "%s", name);
	p[2].tag = MB_PR_EMAIL_ADDRESS;
	p[2].v.b =
	    mb__rb_printf(rb, "contact%llu@example.org", (unsigned long long)(s->seed % 1000000));
	if (m->rep) {
		m->slot = MB_RSLOT_CONTACTS;
		mb__mbs_emit_create_item(u, MB_FID_CONTACTS, p, 3);
	} else {
		struct mb_op *op = mb__rb_op(rb, MB_OP_CREATE_CONTACT);
		op->u.create_contact.n = 3;
		op->u.create_contact.props = p;
	}
	return mb__mbs_send_rpc(u);
}

int mb__mbs_took_create_contact(struct mb_tuser *u, const struct mb_reply *r,
				struct mb_step_result *res)
{
	if (M(u)->rep)
		return mb__mbs_took_create(u, r, res);
	return mb__mbs_ack_saved(u, r, MB_OP_CREATE_CONTACT);
}
