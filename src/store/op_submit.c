/* op_submit.c: SubmitMessage in phases, each on the database that owns
 * its data: phase 0 on the sender's home database (recipients resolved and
 * deduplicated, the message saved as submitted and unsent, the deliveries
 * planned per database), then phase k delivers to every recipient of
 * database k (one transaction; with two or more recipients there, the
 * body and attachments stored once for all: single-instance storage, as
 * Exchange's store kept one copy per database), then the last phase, back on the home database,
 * marks the message sent, in its own transaction: what MAPI's spooler does when the transport is
 * done with a message (IMsgStore::FinishedMsg -> IMAPISupport::DoSentMail, MS-OXOMSG 3.2.4.1: the
 * submitted message moves to the folder PidTagSentMailSvrEID names once sent), or deletes it when
 * the message has PidTagDeleteAfterSubmit set (MS-OXOMSG 3.3.5.1.3: a
 * cached-mode client keeps its own Sent Items copy and uploads it, see
 * drivers/mbstore_write.c).  This store keeps
 * the submitted message in Sent Items from the start (it has no Outbox),
 * flagged MB_MSGFLAG_SUBMIT | MB_MSGFLAG_UNSENT until that last phase.
 * ops.c's executor moves the request between databases.
 *
 *   phase 0 (home) --> phase 1 (dbs[0]) --> ... --> phase ndb
 *     --> phase ndb+1 (home: sent) --> reply
 *   (a failed phase ends the submit with its error)
 */
#include "config.h"

#include "store/ops_int.h"
#include "core/error.h"
#include "store/addrprops.h"

#include <stdlib.h>
#include <string.h>

/* Room for a message's props with the address groups the store adds. */
#define DPROPS_MAX (MB_PROTO_MAX_PROPS + 8 + MB_ADDR_SENDER_PROPS + MB_ADDR_RECIPIENT_PROPS)

static int add_rcpt(struct submit_state *sub, int user, bool named, int cap)
{
	for (int i = 0; i < sub->nrcpt; i++)
		if (sub->rcpt[i] == user) {
			sub->named[i] = sub->named[i] || named;
			return 0;
		}
	if (sub->nrcpt >= cap)
		return MB_ETOOBIG;
	sub->named[sub->nrcpt] = named;
	sub->rcpt[sub->nrcpt++] = user;
	return 0;
}

/* Tags the store sets on a submitted message, whatever the client set. */
static bool stamped(uint32_t t)
{
	return t == MB_PR_SENDER_NAME || t == MB_PR_DELIVERY_TIME || t == MB_PR_MESSAGE_FLAGS ||
	       mb_addr_is_prop(t);
}

/* SubmitMessage, phase 0 (home database): resolve recipients, save the
 * message (in Sent Items, submitted and unsent), plan the deliveries. */
int mb__submit_begin(struct dbw *w, struct req *r, struct handle *h)
{
	struct mb_store *st = r->st;
	struct mb_prop *props;
	uint16_t n;
	int rc = mb__handle_merged(w, r, h, true, &props, &n);
	if (rc)
		return rc;
	const struct mb_prop *rp = mb_props_find(props, n, MB_PR_RECIPIENTS);
	if (!rp || rp->v.mv.n == 0)
		return MB_EINVAL;
	int cap = MB_PROTO_MAX_IDS;
	struct submit_state *sub = mb__ar(r, sizeof(*sub));
	if (!sub)
		return MB_ETOOBIG;
	sub->rcpt = mb__ar(r, (size_t)cap * sizeof(int));
	sub->named = mb__ar(r, (size_t)cap * sizeof(bool));
	if (!sub->rcpt || !sub->named)
		return MB_ETOOBIG;
	for (uint16_t i = 0; i < rp->v.mv.n && !rc; i++) {
		struct mb_bytes nm = rp->v.mv.v[i];
		int idx;
		if (mb_topology_find_user(st->topo, (const char *)nm.p, nm.len, &idx) == 0) {
			rc = add_rcpt(sub, idx, true, cap);
		} else if (mb_topology_find_list(st->topo, (const char *)nm.p, nm.len, &idx) == 0) {
			const struct mb_topo_list *l = mb_topology_list(st->topo, idx);
			for (int m = 0; m < l->nmembers && !rc; m++)
				rc = add_rcpt(sub, (int)l->members[m], false, cap);
		} else {
			rc = MB_ENOTFOUND;
		}
	}
	if (rc)
		return rc;
	/* databases in increasing order */
	sub->dbs = mb__ar(r, (size_t)st->ndb * sizeof(int));
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
	/* what it adds must fit above the free-space reserve (reserve.c;
	 * nothing is written yet): the Sent Items copy whole; the body and
	 * attachments once per recipient database (single-instance); the
	 * other properties per recipient.  The properties are the merged
	 * ones: a stored message opened and submitted has its stored body */
	const struct mb_prop *bp = mb_props_find(props, n, MB_PR_BODY);
	uint64_t body = bp ? mb__props_bytes(bp, 1) : 0;
	uint64_t content = body + mb__handle_attach_bytes(h);
	uint64_t others = mb__props_bytes(props, n) - body;
	rc = mb__reserve_check(st, content * (uint64_t)(1 + sub->ndb) +
				       others * (uint64_t)(1 + sub->nrcpt));
	if (rc)
		return rc;
	sub->dl = mb__ar(r, (size_t)sub->nrcpt * sizeof(struct mb_delivery));
	if (!sub->dl)
		return MB_ETOOBIG;

	/* the message as delivered: the sender's name and address properties
	 * (addrprops.h), the time of sending */
	const struct mb_topo_user *me = mb_topology_user(st->topo, r->sess->user);
	struct mb_prop *dprops =
	    mb__ar(r, (size_t)(n + 4 + MB_ADDR_SENDER_PROPS) * sizeof(*dprops));
	struct mb_addr *from = mb__ar(r, sizeof(*from));
	if (!dprops || !from)
		return MB_ETOOBIG;
	uint16_t dn = 0;
	for (uint16_t i = 0; i < n; i++) {
		uint32_t t = props[i].tag;
		if (t == MB_PR_DELETE_AFTER_SUBMIT) {
			sub->delete_after = props[i].v.i != 0;
			continue;
		}
		if (stamped(t))
			continue;
		dprops[dn++] = props[i];
	}
	int64_t now = mb_wall_ms();
	dprops[dn++] = mb_prop_str(MB_PR_SENDER_NAME, me->name);
	dprops[dn++] = mb_prop_i64(MB_PR_DELIVERY_TIME, now);
	mb_addr_build(from, me->name);
	dn = (uint16_t)(dn + mb_addr_sender_props(from, now, dprops + dn));
	if (!mb_props_find(dprops, dn, MB_PR_MESSAGE_CLASS))
		dprops[dn++] = mb_prop_str(MB_PR_MESSAGE_CLASS, "IPM.Note");
	sub->props = dprops;
	sub->nprops = dn;

	/* Sent Items copy, read */
	struct mb_prop rest[DPROPS_MAX], sent[DPROPS_MAX];
	uint16_t nrest;
	struct mb_msg_in in;
	if (dn + 1 > DPROPS_MAX)
		return MB_ETOOBIG;
	memcpy(sent, dprops, dn * sizeof(*sent));
	sent[dn] = mb_prop_i64(MB_PR_MESSAGE_FLAGS,
			       MB_MSGFLAG_READ | MB_MSGFLAG_SUBMIT | MB_MSGFLAG_UNSENT);
	mb__msg_in_from_props(&in, sent, (uint16_t)(dn + 1), rest, &nrest, mb_wall_ms());
	/* a stored row holds at most MB_PROTO_MAX_PROPS properties: each
	 * recipient's copy has the recipient group more than this one, so a
	 * message whose copies would not fit is refused before anything is
	 * written */
	if (nrest + MB_ADDR_RECIPIENT_PROPS > MB_PROTO_MAX_PROPS)
		return MB_ETOOBIG;
	sub->body = in.body;
	sub->body_len = in.body_len;
	/* the attachments travel with the request (delivery runs on other
	 * database threads): copies in its arena */
	if (h->natt) {
		uint16_t na = h->natt > MB_SCHEMA_MAX_ATTACH ? MB_SCHEMA_MAX_ATTACH : h->natt;
		sub->attach = mb__ar(r, na * sizeof(*sub->attach));
		if (!sub->attach)
			return MB_ETOOBIG;
		for (uint16_t i = 0; i < na; i++) {
			struct mb_bytes nm, data;
			if (mb__ar_bytes(r, h->att[i].name, strlen(h->att[i].name), &nm) ||
			    mb__ar_bytes(r, h->att[i].data, h->att[i].len, &data))
				return MB_ETOOBIG;
			sub->attach[i].kind = h->att[i].kind;
			sub->attach[i].name = nm;
			sub->attach[i].data = data.p;
			sub->attach[i].len = data.len;
		}
		sub->nattach = na;
	}
	in.attach = sub->attach;
	in.nattach = sub->nattach;
	rc = mb__txn_begin(w);
	if (rc)
		return rc;
	rc = mb_schema_msg_add(w->schema, r->sess->mailbox, MB_FID_SENT, &in, w->tmp,
			       &sub->sent_mid, NULL);
	rc = mb__txn_end(w, r, rc, 0, 0);
	if (rc)
		return rc;
	sub->phase = 1;
	r->sub = sub;
	return 0;
}

/* SubmitMessage, a delivery phase on the database that runs it. */
int mb__submit_deliver(struct dbw *w, struct req *r)
{
	struct submit_state *sub = r->sub;
	struct mb_store *st = r->st;
	struct mb_prop rest[DPROPS_MAX], rprops[DPROPS_MAX];
	uint16_t nrest;
	struct mb_msg_in in;
	struct mb_addr to;
	uint32_t count = 0;
	int64_t now = mb_wall_ms();
	int rc;

	if (sub->nprops + MB_ADDR_RECIPIENT_PROPS > DPROPS_MAX)
		return MB_ETOOBIG;
	memcpy(rprops, sub->props, sub->nprops * sizeof(*rprops));
	rc = mb__txn_begin(w);
	if (rc)
		return rc;
	int first = sub->ndl, here = 0;
	for (int i = 0; i < sub->nrcpt; i++)
		here += mb_topology_user(st->topo, sub->rcpt[i])->db == w->index;
	/* single-instance storage: with two or more recipients here, the
	 * body and attachments are stored once for all of them */
	struct mb_schema_content content = {0};
	for (int i = 0; i < sub->nrcpt && !rc; i++) {
		const struct mb_topo_user *u = mb_topology_user(st->topo, sub->rcpt[i]);
		if (u->db != w->index)
			continue;
		/* the row of this recipient: the message and its recipient group */
		mb_addr_build(&to, u->name);
		int nr = mb_addr_recipient_props(&to, sub->named[i], rprops + sub->nprops);
		mb__msg_in_from_props(&in, rprops, (uint16_t)(sub->nprops + nr), rest, &nrest, now);
		in.flags = 0; /* unread */
		in.attach = sub->attach;
		in.nattach = sub->nattach;
		uint64_t mid, cn;
		if (here > 1)
			rc = mb_schema_msg_add_shared(w->schema, u->mailbox, MB_FID_INBOX, &in,
						      &content, w->tmp, &mid, &cn);
		else
			rc = mb_schema_msg_add(w->schema, u->mailbox, MB_FID_INBOX, &in, w->tmp,
					       &mid, &cn);
		if (rc)
			break;
		sub->dl[sub->ndl].mailbox = u->mailbox;
		sub->dl[sub->ndl].mid = mid;
		sub->ndl++;
		count++;
		if (r->nevents == r->cap_events) {
			int nc = r->cap_events ? r->cap_events * 2 : 16;
			struct mb_event_out *ne = mb__ar(r, (size_t)nc * sizeof(*ne));
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
	rc = mb__txn_end(w, r, rc, count ? 1 : 0, count);
	if (rc) {
		sub->ndl = first;
		r->nevents = 0;
	}
	return rc;
}

/* SubmitMessage, the last phase (home database): the deliveries are done,
 * the message is sent (DoSentMail): marked sent, or deleted. */
int mb__submit_finish(struct dbw *w, struct req *r)
{
	int rc = mb__txn_begin(w);
	if (rc)
		return rc;
	if (r->sub->delete_after)
		rc = mb_schema_msg_delete(w->schema, r->sess->mailbox, r->sub->sent_mid);
	else
		rc = mb_schema_msg_set_flags(w->schema, r->sess->mailbox, r->sub->sent_mid,
					     MB_MSGFLAG_READ, NULL);
	return mb__txn_end(w, r, rc, 0, 0);
}
