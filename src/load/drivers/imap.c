/* drivers/imap.c: the "imap" target: a real mail server over IMAP4rev1
 * (connection 0: LITERAL+, IDLE, UIDPLUS, MOVE, CONDSTORE/QRESYNC) and SMTP
 * submission (connection 1: ESMTP, PIPELINING, AUTH PLAIN).  The table of
 * action -> commands is docs/imap-target.md.
 *
 * A step is a short script of IMAP commands, one in flight at a time on
 * connection 0 (each measured as "imap.<COMMAND>"); the tagged reply of
 * one command runs the script's next phase.  Untagged responses are taken
 * at any time: EXISTS/EXPUNGE/FETCH/VANISHED update the selected folder;
 * a new EXISTS while idle is a new-mail notification (mb_target_wake).
 *
 * Connection 0 (TLS, when the target is imaps://, is the engine's before
 * the greeting: the driver sees plaintext either way):
 *   GREETING -> [CAPABILITY] -> [--tls starttls: STARTTLS (the capability
 *            must list it) -> TLS handshake (engine) -> CAPABILITY again]
 *            -> AUTHENTICATE PLAIN -> [ENABLE QRESYNC]
 *            -> LIST -> READY <-> IDLE (between steps, INBOX selected)
 *   a step while IDLE: DONE, wait for IDLE's OK, then the step's commands
 * Connection 1 (SEND only, opened on first use and kept; smtps:// is TLS
 * from the first byte):
 *   CONNECTING -> GREETING(220) -> EHLO -> [--tls starttls: STARTTLS(220)
 *              -> TLS handshake (engine) -> EHLO again] -> AUTH PLAIN -> READY
 *   READY -> MAIL FROM + RCPT TO... + DATA (pipelined) -> 354 -> body
 *         -> 250: acknowledged (ack log: '+' per recipient mailbox) -> READY
 *
 * Item ids handed to the behaviour model are (folder << 32) | UID.  A
 * message this run sent carries Message-ID <%016llx@mailbench> (the id in
 * the ack log); the uid -> id map of listed messages lets a delete log '~'
 * and '-' for the messages the check must no longer expect.
 *
 * Cached mode: a replica per folder (UIDVALIDITY, HIGHESTMODSEQ, the UIDs,
 * flags and senders); the first SYNC downloads every folder in full
 * (bodies fetched and counted, not kept), later SYNCs are incremental
 * (SELECT ... (QRESYNC (uidvalidity modseq)): VANISHED and changed flags,
 * then the bodies of new UIDs), on IDLE notifications and on the engine's
 * timer; listings and reads are then served locally (res->local), changes
 * are uploaded as online.  Not supported by the target: free/busy and
 * meeting requests (no shared calendars without Dovecot's ACL plugin set
 * up), journal applications.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "core/error.h"
#include "core/sampler.h"
#include "load/imapparse.h"
#include "load/mailmsg.h"
#include "load/smtpparse.h"
#include "load/target.h"

#include "load/drivers/imap_int.h"

static const char *const imap_op_names[OP_COUNT] = {
#define X_NAME(id, name) name,
    OP_TABLE(X_NAME)
#undef X_NAME
};

/* ---- helpers ---- */

/* ---- steps ---- */

/* ---- SMTP (connection 1) ---- */

/* ---- the steps' scripts ---- */

/* ---- ops ---- */

/* Per loop: the salt of this run's Message-IDs. */
static int imap_shard_init(const struct mb_target_env *env, void **out)
{
	(void)env;
	uint64_t *salt = malloc(sizeof(*salt));
	if (!salt)
		return MB_ENOMEM;
	*salt =
	    mb__imap_mix64(mb_now_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)salt);
	*out = salt;
	return 0;
}

static void imap_shard_fini(void *shard) { free(shard); }

static int imap_user_init(struct mb_tuser *u)
{
	struct imap_user *iu = u->priv;
	int rc = mb_imap_parser_create(NULL, &iu->p);
	if (!rc)
		rc = mb_smtp_parser_create(&iu->sp);
	iu->selected = -1;
	return rc;
}

static void imap_user_fini(struct mb_tuser *u)
{
	struct imap_user *iu = u->priv;
	mb_imap_parser_destroy(iu->p);
	mb_smtp_parser_destroy(iu->sp);
	for (int i = 0; i < iu->nrcpt; i++)
		free(iu->rcpt[i]);
	free(iu->rcpt);
	free(iu->rcpt_ok);
	free(iu->msg);
	free(iu->rep);
}

static void imap_connected(struct mb_tuser *u, int conn, int status)
{
	struct imap_user *iu = u->priv;
	if (conn == 0) {
		iu->c0 = status ? C_DOWN : C_GREETING;
		iu->secured0 = 0;
		iu->has_starttls = 0;
		mb_imap_parser_reset(iu->p);
		iu->scan0 = 0;
		iu->selected = -1;
		if (!status)
			mb_target_request(u, 0, OP_GREETING, 1); /* connect to greeting */
		return;
	}
	if (status) {
		mb__imap_smtp_fail(u, status);
		return;
	}
	mb_smtp_parser_reset(iu->sp);
	iu->secured1 = 0;
	iu->c1 = S_GREETING;
	mb_target_request(u, 1, OP_S_GREETING, 1);
}

/* STARTTLS's handshake ended: the session starts over on TLS. */
static void imap_secured(struct mb_tuser *u, int conn, int status)
{
	struct imap_user *iu = u->priv;
	if (conn == 0) {
		if (status) {
			mb__imap_finish(u, status); /* the logon fails; the engine closes */
			return;
		}
		iu->secured0 = 1;
		iu->c0 = C_CAPA; /* capabilities may differ over TLS */
		if (mb__imap_cmd(u, OP_CAPABILITY, "CAPABILITY") < 0)
			mb__imap_finish(u, MB_ECLOSED);
		return;
	}
	if (status) {
		mb__imap_smtp_fail(u, status);
		return;
	}
	iu->secured1 = 1;
	iu->c1 = S_EHLO;
	int rc = mb__imap_smtp_line(u, OP_S_EHLO, "EHLO mailbench.load\r\n");
	if (rc < 0)
		mb__imap_smtp_fail(u, rc);
}

static void imap_disconnected(struct mb_tuser *u, int conn)
{
	struct imap_user *iu = u->priv;
	if (conn == 0) {
		iu->c0 = C_DOWN;
		iu->selected = -1;
		iu->scan0 = 0;
		mb_imap_parser_reset(iu->p);
		iu->stepping = 0; /* the engine fails the step in flight */
	} else {
		int was = iu->c1;
		iu->c1 = S_DOWN;
		mb_smtp_parser_reset(iu->sp);
		if (was != S_READY && was != S_DOWN && iu->stepping && iu->s.kind == MB_STEP_SEND &&
		    iu->phase == 0)
			mb__imap_finish(u, MB_ECLOSED);
	}
}

static long imap_frame(struct mb_tuser *u, int conn, const uint8_t *p, size_t len)
{
	struct imap_user *iu = u->priv;
	if (conn == 1)
		return mb_smtp_frame((const char *)p, len);
	long n = mb_imap_frame((const char *)p, len, &iu->scan0);
	return n;
}

/* An untagged response: the selected folder's state, listings, notifications. */
static void untagged(struct mb_tuser *u, const struct mb_imap_resp *r)
{
	struct imap_user *iu = u->priv;
	uint64_t v;
	if (r->has_number && !strcmp(r->name, "EXISTS")) {
		if (iu->c0 == C_IDLE && r->number > iu->exists) {
			iu->notified = 1;
			u->st->n.notifications++;
			if (iu->rep && iu->nrep)
				iu->rep[MB_FOLDER_INBOX].dirty = 1;
			mb_target_wake(u);
		}
		iu->exists = (uint32_t)r->number;
		return;
	}
	if (r->has_number && !strcmp(r->name, "EXPUNGE")) {
		if (iu->exists)
			iu->exists--;
		return;
	}
	if (r->code && !strcmp(r->code, "UIDVALIDITY")) {
		if (!mb_imap_node_u64(r->code_args, &v))
			iu->sel_uidvalidity = (uint32_t)v;
		return;
	}
	if (r->code && !strcmp(r->code, "HIGHESTMODSEQ")) {
		if (!mb_imap_node_u64(r->code_args, &v))
			iu->sel_modseq = v;
		return;
	}
	if (r->code && !strcmp(r->code, "CAPABILITY")) {
		iu->has_idle = mb_imap_has_cap(r->code_args, "IDLE");
		return;
	}
	if (!strcmp(r->name, "LIST") && r->args && r->args->next && r->args->next->next) {
		const struct mb_imap_node *nm = r->args->next->next;
		if (nm->len == 9 && !strncmp(nm->s, "Folder ", 7))
			iu->nuser_folders++;
		return;
	}
	if (!strcmp(r->name, "STATUS") && r->args && r->args->next) {
		if (!mb_imap_node_u64(mb_imap_fetch_item(r->args->next, "MESSAGES"), &v))
			iu->count2 = (uint32_t)v;
		return;
	}
	if (!strcmp(r->name, "VANISHED") && iu->rep && iu->selected >= 0 &&
	    iu->selected < iu->nrep) {
		/* the replica forgets the vanished UIDs (ranges a:b, lists) */
		struct folder_rep *fr = &iu->rep[iu->selected];
		const struct mb_imap_node *set = r->args;
		if (set && set->type == MB_IMAP_LIST)
			set = set->next; /* (EARLIER) */
		if (!set)
			return;
		char buf[4096];
		size_t l = set->len < sizeof(buf) - 1 ? set->len : sizeof(buf) - 1;
		memcpy(buf, set->s, l);
		buf[l] = 0;
		for (char *save = NULL, *t = strtok_r(buf, ",", &save); t;
		     t = strtok_r(NULL, ",", &save)) {
			unsigned long a = strtoul(t, NULL, 10), b = a;
			char *c = strchr(t, ':');
			if (c)
				b = strtoul(c + 1, NULL, 10);
			int w = 0;
			for (int i = 0; i < fr->n; i++)
				if (fr->uid[i] < a || fr->uid[i] > b) {
					fr->uid[w] = fr->uid[i];
					fr->seen[w] = fr->seen[i];
					fr->who[w] = fr->who[i];
					w++;
				}
			fr->n = w;
		}
		return;
	}
	if (r->has_number && !strcmp(r->name, "FETCH") && r->args &&
	    r->args->type == MB_IMAP_LIST) {
		uint64_t uid = 0;
		if (mb_imap_node_u64(mb_imap_fetch_item(r->args, "UID"), &uid))
			return;
		const struct mb_imap_node *fl = mb_imap_fetch_item(r->args, "FLAGS");
		int seen = 0;
		if (fl && fl->type == MB_IMAP_LIST)
			for (const struct mb_imap_node *x = fl->child; x; x = x->next)
				seen |= mb_imap_node_is(x, "\\Seen");
		int32_t who = -1;
		uint64_t mid = 0;
		const struct mb_imap_node *env = mb_imap_fetch_item(r->args, "ENVELOPE");
		if (env && env->type == MB_IMAP_LIST) {
			/* date subject from sender reply-to to cc bcc in-reply-to message-id */
			const struct mb_imap_node *e = env->child;
			const struct mb_imap_node *from = e && e->next ? e->next->next : NULL;
			if (from && from->type == MB_IMAP_LIST && from->child &&
			    from->child->type == MB_IMAP_LIST) {
				const struct mb_imap_node *a =
				    from->child->child; /* name adl mailbox host */
				const struct mb_imap_node *mbx =
				    a && a->next ? a->next->next : NULL;
				if (mbx && mbx->type == MB_IMAP_STRING)
					who = mb_target_find_user(u, mbx->s, mbx->len);
			}
			const struct mb_imap_node *mi = e;
			for (int k = 0; k < 9 && mi; k++)
				mi = mi->next;
			if (mi && mi->type == MB_IMAP_STRING && mi->len > 18 && mi->s[0] == '<') {
				char hex[17];
				memcpy(hex, mi->s + 1, 16);
				hex[16] = 0;
				if (mi->s[17] == '@')
					mid = strtoull(hex, NULL, 16);
			}
		}
		int f = iu->selected;
		uint64_t key = ((uint64_t)(f < 0 ? 0 : f) << 32) | (uint32_t)uid;
		if (mid)
			mb__imap_map_put(iu, key, mid);
		if (iu->stepping && iu->s.kind == MB_STEP_SYNC && iu->rep && f >= 0 &&
		    f < iu->nrep) {
			struct folder_rep *fr = &iu->rep[f];
			int at = -1;
			for (int i = 0; i < fr->n && at < 0; i++)
				if (fr->uid[i] == (uint32_t)uid)
					at = i;
			if (at < 0 && fr->n < ROWS_MAX)
				at = fr->n++;
			else if (at < 0) {
				memmove(fr->uid, fr->uid + 1, (ROWS_MAX - 1) * sizeof(fr->uid[0]));
				memmove(fr->seen, fr->seen + 1, ROWS_MAX - 1);
				memmove(fr->who, fr->who + 1, (ROWS_MAX - 1) * sizeof(fr->who[0]));
				at = ROWS_MAX - 1;
			}
			fr->uid[at] = (uint32_t)uid;
			fr->seen[at] = (uint8_t)seen;
			u->st->n.sync_items++;
			if (env)
				fr->who[at] = who;
			if ((uint32_t)uid > fr->maxuid)
				fr->maxuid = (uint32_t)uid;
			return;
		}
		if (iu->stepping && iu->phase == 2 && iu->n < ROWS_MAX &&
		    (iu->s.kind == MB_STEP_LIST_FOLDER || iu->s.kind == MB_STEP_CALENDAR_RANGE ||
		     iu->s.kind == MB_STEP_LIST_CONTACTS)) {
			iu->rids[iu->n] = key;
			iu->rflags[iu->n] = seen ? MB_ITEM_READ : 0;
			iu->rwho[iu->n] = who;
			iu->n++;
		}
	}
}

static int imap_on_message(struct mb_tuser *u, int conn, const uint8_t *msg, size_t len)
{
	struct imap_user *iu = u->priv;
	size_t used;
	if (conn == 1) {
		int rc = mb_smtp_parser_feed(iu->sp, (const char *)msg, len, &used);
		if (rc != 1) {
			mb__imap_smtp_fail(u, MB_EPROTO);
			return 0;
		}
		rc = mb__imap_smtp_reply(u, mb_smtp_parser_reply(iu->sp));
		if (rc < 0)
			mb__imap_smtp_fail(u, rc);
		return 0;
	}
	iu->scan0 = 0;
	int rc = mb_imap_parser_feed(iu->p, (const char *)msg, len, &used);
	if (rc != 1)
		return MB_EPROTO; /* the engine logs and reconnects */
	const struct mb_imap_resp *r = mb_imap_parser_resp(iu->p);
	if (r->kind == MB_IMAP_UNTAGGED) {
		if (!strcmp(r->name, "BYE"))
			return iu->stepping && iu->s.kind == MB_STEP_LOGOFF ? 0 : MB_ECLOSED;
		if (iu->c0 == C_GREETING) {
			mb_target_reply(u, 0);
			if (strcmp(r->name, "OK"))
				return MB_EPROTO;
			iu->c0 = C_CAPA;
			if (r->code && !strcmp(r->code, "CAPABILITY"))
				goto caps;
			return mb__imap_cmd(u, OP_CAPABILITY, "CAPABILITY");
		}
		if (!strcmp(r->name, "CAPABILITY")) {
			iu->has_idle = mb_imap_has_cap(r->args, "IDLE");
			iu->has_move = mb_imap_has_cap(r->args, "MOVE");
			iu->has_uidplus = mb_imap_has_cap(r->args, "UIDPLUS");
			iu->has_literalplus = mb_imap_has_cap(r->args, "LITERAL+");
			iu->qresync = mb_imap_has_cap(r->args, "QRESYNC");
			iu->has_starttls = mb_imap_has_cap(r->args, "STARTTLS");
			return 0;
		}
		untagged(u, r);
		return 0;
	}
	if (r->kind == MB_IMAP_CONTINUE) {
		if (iu->c0 == C_IDLE_START) {
			iu->c0 = C_IDLE;
			return 0;
		}
		return 0; /* LITERAL+ makes continuations unneeded */
	}
	/* tagged */
	if (strcmp(r->tag, iu->tag))
		return MB_EPROTO;
	mb_target_reply(u, 0);
	int ok = !strcmp(r->name, "OK");
	switch (iu->c0) {
	case C_CAPA:
		if (!ok)
			return MB_EPROTO;
	caps:
		if (r->code && !strcmp(r->code, "CAPABILITY")) {
			iu->has_idle = mb_imap_has_cap(r->code_args, "IDLE");
			iu->has_literalplus = mb_imap_has_cap(r->code_args, "LITERAL+");
			iu->has_starttls = mb_imap_has_cap(r->code_args, "STARTTLS");
		}
		if (mb_target_tls_mode(u, 0) == MB_TLS_STARTTLS && !iu->secured0) {
			if (!iu->has_starttls) {
				mb__imap_finish(u, MB_ETLS); /* the server does not offer it */
				return 0;
			}
			iu->c0 = C_STARTTLS;
			return mb__imap_cmd(u, OP_STARTTLS, "STARTTLS");
		}
		{
			const struct mb_topo_user *me = mb_target_account(u);
			char raw[300], enc[420];
			int n =
			    snprintf(raw, sizeof(raw), "%c%s%c%s", 0, me->name, 0, me->password);
			EVP_EncodeBlock((unsigned char *)enc, (const unsigned char *)raw, n);
			iu->c0 = C_AUTH;
			return mb__imap_cmd(u, OP_AUTHENTICATE, "AUTHENTICATE PLAIN %s", enc);
		}
	case C_STARTTLS:
		if (!ok) {
			mb__imap_finish(u, MB_ETLS);
			return 0;
		}
		iu->c0 = C_TLS; /* the engine handshakes; imap_secured goes on */
		return mb_target_starttls(u, 0);
	case C_AUTH:
		if (!ok) {
			mb__imap_finish(u, MB_EAUTH);
			return 0;
		}
		if (r->code && !strcmp(r->code, "CAPABILITY")) {
			const struct mb_imap_node *c = r->code_args;
			iu->has_idle = mb_imap_has_cap(c, "IDLE");
			iu->has_move = mb_imap_has_cap(c, "MOVE");
			iu->has_uidplus = mb_imap_has_cap(c, "UIDPLUS");
			iu->has_literalplus = mb_imap_has_cap(c, "LITERAL+");
			iu->qresync =
			    mb_imap_has_cap(c, "QRESYNC") && mb_imap_has_cap(c, "CONDSTORE");
		}
		if (!iu->has_move || !iu->has_literalplus) {
			mb__imap_finish(u, MB_EUNSUPPORTED); /* MOVE and LITERAL+ are required */
			return 0;
		}
		if (iu->qresync && u->env->cached) {
			iu->c0 = C_ENABLE;
			return mb__imap_cmd(u, OP_ENABLE, "ENABLE QRESYNC");
		}
		iu->qresync = 0;
		/* fall through */
	case C_ENABLE:
		if (iu->c0 == C_ENABLE && !ok)
			iu->qresync = 0;
		iu->c0 = C_LIST;
		iu->nuser_folders = 0;
		return mb__imap_cmd(u, OP_LIST, "LIST \"\" \"*\"");
	case C_LIST:
		if (!ok)
			return MB_EPROTO;
		iu->count = (uint32_t)iu->nuser_folders;
		if (u->env->cached && !iu->rep) {
			iu->nrep = mb__imap_nfolders(iu);
			iu->rep = calloc((size_t)iu->nrep, sizeof(*iu->rep));
			if (!iu->rep)
				return MB_ENOMEM;
			for (int i = 0; i < iu->nrep; i++)
				iu->rep[i].dirty = 1;
		}
		u->nfolders = (uint16_t)iu->nuser_folders;
		if (iu->c0 != C_DOWN)
			iu->c0 = C_READY;
		iu->n = 0;
		mb__imap_finish(u, 0); /* LOGON done: count = user folders */
		return 0;
	case C_UNIDLE:
		/* IDLE ended: now the step waiting for it */
		if (iu->c0 != C_DOWN)
			iu->c0 = C_READY;
		rc = mb__imap_step_run(u);
		if (rc < 0 && iu->stepping)
			mb__imap_finish(u, rc);
		return 0;
	case C_CMD: {
		rc = mb__imap_step_next(u, ok, r);
		if (rc == 1) {
			if (iu->c0 != C_DOWN)
				iu->c0 = C_READY;
			mb__imap_finish(u, 0);
			mb__imap_maybe_idle(u);
		} else if (rc < 0) {
			if (iu->c0 != C_DOWN)
				iu->c0 = C_READY;
			mb__imap_finish(u, rc);
		}
		return 0;
	}
	default:
		return 0;
	}
}

static int imap_step(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res)
{
	struct imap_user *iu = u->priv;
	(void)res;
	iu->s = *s;
	/* copy what later phases need */
	iu->nids = s->nids < ROWS_MAX ? s->nids : ROWS_MAX;
	for (int i = 0; i < iu->nids; i++)
		iu->ids[i] = s->ids[i];
	iu->nmore = s->nmore < ROWS_MAX ? s->nmore : ROWS_MAX;
	for (int i = 0; i < iu->nmore; i++)
		iu->more[i] = s->more[i];
	if (s->kind == MB_STEP_MARK_READ && s->item && !iu->nids) {
		iu->ids[0] = s->item;
		iu->nids = 1;
	}
	iu->s.ids = NULL;
	iu->s.more = NULL;
	iu->s.read = NULL;
	iu->n = 0;
	iu->count = iu->count2 = 0;
	iu->stepping = 1;
	if (s->kind == MB_STEP_FREEBUSY) {
		iu->stepping = 0;
		return MB_EUNSUPPORTED;
	}
	if (s->kind == MB_STEP_LOGON) {
		/* the engine opened connection 0; the greeting drives the logon */
		if (iu->c0 == C_READY) {
			res->count = (uint32_t)iu->nuser_folders;
			iu->stepping = 0;
			return 0;
		}
		return 1;
	}
	if (s->kind == MB_STEP_SEND) {
		/* recipients are needed after step() returns: build now */
		int rc = mb__imap_build_msg(u, MB_MAILMSG_MAIL);
		if (rc) {
			iu->stepping = 0;
			return rc;
		}
	}
	if (iu->c0 == C_IDLE) {
		iu->c0 = C_UNIDLE;
		if (mb_target_write(u, 0, "DONE\r\n", 6)) {
			iu->stepping = 0;
			return MB_ECLOSED;
		}
		return 1;
	}
	if (iu->c0 == C_IDLE_START) {
		/* IDLE sent, "+" not yet seen: DONE after it is fine too */
		iu->c0 = C_UNIDLE;
		if (mb_target_write(u, 0, "DONE\r\n", 6)) {
			iu->stepping = 0;
			return MB_ECLOSED;
		}
		return 1;
	}
	if (iu->c0 != C_READY) {
		iu->stepping = 0;
		return MB_ESTATE;
	}
	iu->phase = 0;
	iu->c0 = C_CMD;
	if (u->env->cached && iu->synced_once && mb__imap_local_step(u) == 1) {
		if (iu->c0 != C_DOWN)
			iu->c0 = C_READY;
		iu->stepping = 0;
		res->n = iu->n;
		res->ids = iu->rids;
		res->flags = iu->rflags;
		res->who = iu->rwho;
		res->count = iu->count;
		res->count2 = iu->count2;
		res->local = true;
		return 0;
	}
	int rc = mb__imap_step_next(u, 1, NULL);
	if (rc == 1) {
		if (iu->c0 != C_DOWN)
			iu->c0 = C_READY;
		iu->stepping = 0;
		res->n = iu->n;
		res->ids = iu->rids;
		res->flags = iu->rflags;
		res->who = iu->rwho;
		res->count = iu->count;
		return 0;
	}
	if (rc < 0) {
		if (iu->c0 != C_DOWN)
			iu->c0 = C_READY;
		iu->stepping = 0;
		return rc;
	}
	return 1;
}

static bool imap_sync_due(struct mb_tuser *u, bool pending)
{
	struct imap_user *iu = u->priv;
	(void)pending;
	/* only a logged-on session can sync (a step refused for its state
	 * would be asked again at once) */
	if (!u->env->cached || !iu->rep ||
	    (iu->c0 != C_READY && iu->c0 != C_IDLE && iu->c0 != C_IDLE_START))
		return false;
	if (!iu->synced_once)
		return true;
	for (int i = 0; i < iu->nrep; i++)
		if (iu->rep[i].dirty)
			return true;
	return false;
}

static void imap_tick(struct mb_tuser *u)
{
	struct imap_user *iu = u->priv;
	if (iu->rep)
		iu->rep[MB_FOLDER_INBOX].dirty = 1;
}

/* Actions over IMAP + SMTP (docs/imap-target.md); free/busy and meeting
 * requests need shared calendars, journal applications have no IMAP form. */
#define IMAP_ACTIONS                                                                               \
	((1u << MB_A_SEND_MAIL) | (1u << MB_A_PROCESS_INBOX) | (1u << MB_A_BROWSE_MAIL) |          \
	 (1u << MB_A_MAKE_APPOINTMENT) | (1u << MB_A_BROWSE_CALENDAR) | (1u << MB_A_LOGOFF) |      \
	 (1u << MB_A_BROWSE_CONTACTS) | (1u << MB_A_CREATE_CONTACT))

const struct mb_target_ops mb_target_imap = {
    .name = "imap",
    .help = "a real mail server: IMAP4rev1 (address 0) and SMTP submission (address 1)",
    .actions = IMAP_ACTIONS,
    .flags = MB_TARGET_F_PUSH | MB_TARGET_F_CACHED,
    .conns = 2,
    .user_size = sizeof(struct imap_user),
    .op_names = imap_op_names,
    .nops = OP_COUNT,
    .opts = NULL,
    .shard_init = imap_shard_init,
    .shard_fini = imap_shard_fini,
    .user_init = imap_user_init,
    .user_fini = imap_user_fini,
    .connected = imap_connected,
    .secured = imap_secured,
    .disconnected = imap_disconnected,
    .frame = imap_frame,
    .on_message = imap_on_message,
    .step = imap_step,
    .sync_due = imap_sync_due,
    .tick = imap_tick,
};
