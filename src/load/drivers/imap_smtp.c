/* drivers/imap_smtp.c: the imap target's SMTP submission (connection 1):
 * a SEND step's message built (load/mailmsg.c), its envelope pipelined
 * (MAIL FROM, RCPT TO per recipient, DATA), the body after 354, and the
 * replies.  Connection 1's states are drawn in imap.c.  A message is
 * acknowledged when 250 follows DATA: '+' in the ack log for each mailbox
 * behind an accepted RCPT (250/251) only, and those are the deliveries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "core/error.h"
#include "load/drivers/imap_int.h"

/* Build the message of a SEND (or an appointment/contact for APPEND). */
int mb__imap_build_msg(struct mb_tuser *u, enum mb_mailmsg_kind kind)
{
	struct imap_user *iu = u->priv;
	const struct mb_topo_user *me = mb_target_account(u);
	char from[128], id[32];
	const struct mb_topology *acc = u->env->accounts;
	/* unique across runs too (a run's random stream repeats with its seed) */
	const uint64_t *salt = u->shard;
	iu->mid =
	    mb__imap_mix64((salt ? *salt : 0) ^ u->rng ^ (++iu->counter * 0x9e3779b97f4a7c15ull) ^
			   ((uint64_t)u->idx << 40)) |
	    1;
	snprintf(id, sizeof(id), "%016llx", (unsigned long long)iu->mid);
	snprintf(from, sizeof(from), "%s@mailbench.test", me->name);
	/* recipients: direct users and lists (addresses); mailboxes for the ack */
	for (int i = 0; i < iu->nrcpt; i++)
		free(iu->rcpt[i]);
	free(iu->rcpt);
	free(iu->rcpt_ok);
	iu->nrcpt = 0;
	iu->nrcpt_mb = 0;
	int cap = iu->s.nusers + iu->s.nlists;
	iu->rcpt = calloc((size_t)(cap ? cap : 1), sizeof(char *));
	iu->rcpt_ok = calloc((size_t)(cap ? cap : 1), 1);
	if (!iu->rcpt || !iu->rcpt_ok)
		return MB_ENOMEM;
	for (int i = 0; i < iu->s.nusers && kind == MB_MAILMSG_MAIL; i++) {
		const struct mb_topo_user *r = mb_topology_user(acc, (int)iu->s.users[i]);
		if (!r)
			continue;
		char a[128];
		snprintf(a, sizeof(a), "%s@mailbench.test", r->name);
		if (iu->nrcpt_mb < 512) {
			iu->rcpt_of[iu->nrcpt_mb] = (uint16_t)iu->nrcpt;
			iu->rcpt_mb[iu->nrcpt_mb++] = iu->s.users[i] + 1;
		}
		iu->rcpt[iu->nrcpt++] = strdup(a);
	}
	for (int i = 0; i < iu->s.nlists && kind == MB_MAILMSG_MAIL; i++) {
		const struct mb_topo_list *l = mb_topology_list(acc, (int)iu->s.lists[i]);
		if (!l)
			continue;
		char a[128];
		snprintf(a, sizeof(a), "%s@mailbench.test", l->name);
		/* a member reached twice is kept under its first address: when
		 * that one is refused it goes unchecked (never a false loss) */
		for (int m = 0; m < l->nmembers && iu->nrcpt_mb < 512; m++) {
			int dup = 0;
			for (int k = 0; k < iu->nrcpt_mb && !dup; k++)
				dup = iu->rcpt_mb[k] == l->members[m] + 1;
			if (!dup) {
				iu->rcpt_of[iu->nrcpt_mb] = (uint16_t)iu->nrcpt;
				iu->rcpt_mb[iu->nrcpt_mb++] = l->members[m] + 1;
			}
		}
		iu->rcpt[iu->nrcpt++] = strdup(a);
	}
	struct mb_mailmsg m = {
	    .kind = kind,
	    .id = id,
	    .from = from,
	    .to = (const char *const *)iu->rcpt,
	    .nto = iu->nrcpt,
	    .seed = iu->s.seed,
	    .body_bytes = iu->s.size ? iu->s.size : 1024,
	    .date_s = (int64_t)iu->s.start_ms / 1000,
	    .start_s = iu->s.start_ms / 1000,
	    .end_s = iu->s.end_ms / 1000,
	};
	if (!m.date_s)
		m.date_s = 1700000000 + (int64_t)(iu->counter % 100000);
	free(iu->msg);
	iu->msg = NULL;
	return mb_mailmsg_build(&m, &iu->msg, &iu->msglen);
}

int mb__imap_smtp_line(struct mb_tuser *u, int op, const char *line)
{
	mb_target_request(u, 1, op, 1);
	return mb_target_write(u, 1, line, strlen(line));
}

int mb__imap_smtp_envelope(struct mb_tuser *u)
{
	struct imap_user *iu = u->priv;
	const struct mb_topo_user *me = mb_target_account(u);
	size_t cap = 64 + (size_t)(iu->nrcpt + 2) * 160, o = 0;
	char *b = malloc(cap);
	if (!b)
		return MB_ENOMEM;
	o += (size_t)snprintf(b + o, cap - o, "MAIL FROM:<%s@mailbench.test>\r\n", me->name);
	for (int i = 0; i < iu->nrcpt; i++)
		o += (size_t)snprintf(b + o, cap - o, "RCPT TO:<%s>\r\n", iu->rcpt[i]);
	o += (size_t)snprintf(b + o, cap - o, "DATA\r\n");
	iu->c1 = S_ENVELOPE;
	iu->rcpt_replies = 0;
	mb_target_request(u, 1, OP_S_MAIL, 2 + iu->nrcpt);
	int rc = mb_target_write(u, 1, b, o);
	free(b);
	return rc;
}

static int smtp_body(struct mb_tuser *u)
{
	struct imap_user *iu = u->priv;
	/* dot-stuff: our messages have CRLF lines; a line starting with '.' doubles it */
	char *b = malloc(iu->msglen * 2 + 8);
	size_t o = 0;
	int bol = 1;
	if (!b)
		return MB_ENOMEM;
	for (size_t i = 0; i < iu->msglen; i++) {
		if (bol && iu->msg[i] == '.')
			b[o++] = '.';
		b[o++] = iu->msg[i];
		bol = iu->msg[i] == '\n';
	}
	memcpy(b + o, ".\r\n", 3);
	o += 3;
	iu->c1 = S_BODY;
	mb_target_request(u, 1, OP_S_DATA, 1);
	int rc = mb_target_write(u, 1, b, o);
	free(b);
	return rc;
}

void mb__imap_smtp_fail(struct mb_tuser *u, int rc)
{
	struct imap_user *iu = u->priv;
	iu->c1 = S_DOWN;
	mb_target_close(u, 1);
	if (iu->stepping && iu->s.kind == MB_STEP_SEND && iu->phase == 0)
		mb__imap_finish(u, rc);
}

int mb__imap_smtp_reply(struct mb_tuser *u, const struct mb_smtp_reply *r)
{
	struct imap_user *iu = u->priv;
	const struct mb_topo_user *me = mb_target_account(u);
	switch (iu->c1) {
	case S_GREETING:
		mb_target_reply(u, 1);
		if (r->code != 220)
			return MB_EPROTO;
		iu->c1 = S_EHLO;
		return mb__imap_smtp_line(u, OP_S_EHLO, "EHLO mailbench.load\r\n");
	case S_EHLO: {
		mb_target_reply(u, 1);
		if (r->code != 250)
			return MB_EPROTO;
		if (mb_target_tls_mode(u, 1) == MB_TLS_STARTTLS && !iu->secured1) {
			if (!mb_smtp_ehlo_has(r, "STARTTLS"))
				return MB_ETLS; /* the server does not offer it */
			iu->c1 = S_STARTTLS;
			return mb__imap_smtp_line(u, OP_S_STARTTLS, "STARTTLS\r\n");
		}
		char raw[300], cmdl[500];
		int n = snprintf(raw, sizeof(raw), "%c%s%c%s", 0, me->name, 0, me->password);
		memcpy(cmdl, "AUTH PLAIN ", 11);
		EVP_EncodeBlock((unsigned char *)cmdl + 11, (const unsigned char *)raw, n);
		strcat(cmdl, "\r\n");
		iu->c1 = S_AUTH;
		return mb__imap_smtp_line(u, OP_S_AUTH, cmdl);
	}
	case S_STARTTLS:
		mb_target_reply(u, 1);
		if (r->code != 220)
			return MB_ETLS;
		iu->c1 = S_TLS; /* the engine handshakes; imap_secured goes on */
		return mb_target_starttls(u, 1);
	case S_AUTH:
		mb_target_reply(u, 1);
		if (r->code != 235)
			return MB_EAUTH;
		iu->c1 = S_READY;
		if (iu->stepping && iu->s.kind == MB_STEP_SEND && iu->phase == 0)
			return mb__imap_smtp_envelope(u);
		return 0;
	case S_ENVELOPE:
		/* MAIL, RCPT x n, DATA replies in order */
		iu->rcpt_replies++;
		if (iu->rcpt_replies == 1)
			return r->code == 250 ? 0 : MB_EPROTO;
		if (iu->rcpt_replies <= 1 + iu->nrcpt) {
			/* a refused recipient: the others go on, and only the
			 * accepted ones are acknowledged */
			iu->rcpt_ok[iu->rcpt_replies - 2] = r->code == 250 || r->code == 251;
			return 0;
		}
		mb_target_reply(u, 1); /* the envelope's round trip ends at DATA's reply */
		if (r->code != 354)
			return MB_EPROTO;
		return smtp_body(u);
	case S_BODY:
		mb_target_reply(u, 1);
		if (r->code != 250)
			return MB_EPROTO;
		iu->c1 = S_READY;
		/* acknowledged: every accepted recipient's mailbox gets this id */
		u->st->n.msgs_sent++;
		for (int i = 0; i < iu->nrcpt_mb; i++)
			if (iu->rcpt_ok[iu->rcpt_of[i]]) {
				mb_target_ack(u, '+', iu->rcpt_mb[i], &iu->mid, 1);
				u->st->n.deliveries++;
			}
		/* then the copy in Sent Items */
		iu->phase = 1;
		if (iu->c0 == C_READY || iu->c0 == C_CMD) {
			iu->c0 = C_CMD;
			return mb__imap_append(u, MB_FOLDER_SENT, "\\Seen");
		}
		return 0;
	default:
		return MB_EPROTO;
	}
}
