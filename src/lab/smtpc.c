/* smtpc.c: the blocking SMTP submission client (see mailc.h) over the
 * connection core of mailc.c (mailc_int.h): EHLO, STARTTLS or implicit
 * TLS, AUTH PLAIN, and one message to several recipients (pipelined when
 * the server offers PIPELINING), dot-stuffed.
 * SMTP client states: CONNECTED (greeting and EHLO) -> [AUTHENTICATED]
 * -> MAIL/RCPT/DATA per message -> QUIT -> closed.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "core/tls.h"
#include "lab/mailc.h"
#include "lab/mailc_int.h"
#include "load/smtpparse.h"

static struct mb_mc_tls_cfg smtp_tls;

int mb_smtpc_tls(int mode, const char *ca, bool insecure, char *err, size_t errlen)
{
	return mb__mc_tls_cfg_set(&smtp_tls, mode, ca, insecure, err, errlen);
}

struct mb_smtpc {
	struct conn c;
	struct mb_smtp_parser *p;
	int pipelining;
	char host[256];
};

const char *mb_smtpc_error(const struct mb_smtpc *c) { return c->c.err[0] ? c->c.err : "no error"; }

static int smtp_read(struct mb_smtpc *c, const struct mb_smtp_reply **r)
{
	for (;;) {
		int rc = mb__mc_fill(&c->c);
		if (rc)
			return rc;
		size_t used;
		rc = mb_smtp_parser_feed(c->p, c->c.rbuf + c->c.rpos, c->c.rlen - c->c.rpos, &used);
		c->c.rpos += used;
		if (rc < 0)
			return mb__mc_fail(&c->c, rc, "bad reply from the server: %s",
					   mb_smtp_parser_error(c->p));
		if (rc == 1) {
			*r = mb_smtp_parser_reply(c->p);
			return 0;
		}
	}
}

static int smtp_expect(struct mb_smtpc *c, int want_class, const char *what, int *code)
{
	const struct mb_smtp_reply *r;
	int rc = smtp_read(c, &r);
	if (rc)
		return rc;
	if (code)
		*code = r->code;
	if (r->code / 100 != want_class)
		return mb__mc_fail(&c->c, r->code / 100 == 5 ? MB_EACCES : MB_EAGAIN, "%s: %d %s",
				   what, r->code, r->line[0]);
	return 0;
}

/* EHLO and its 250 reply (the extensions it offers in *r). */
static int smtp_ehlo(struct mb_smtpc *c, const struct mb_smtp_reply **r)
{
	int rc = mb__mc_write(&c->c, "EHLO mailbench.load\r\n", 21);
	if (!rc)
		rc = smtp_read(c, r);
	if (!rc && (*r)->code != 250)
		rc = mb__mc_fail(&c->c, MB_EPROTO, "EHLO: %d %s", (*r)->code, (*r)->line[0]);
	return rc;
}

int mb_smtpc_connect(const char *host, int port, int timeout_ms, struct mb_smtpc **out, char *err,
		     size_t errlen)
{
	struct mb_smtpc *c = calloc(1, sizeof(*c));
	const struct mb_smtp_reply *r;
	int rc, mode = smtp_tls.mode;
	if (!c)
		return MB_ENOMEM;
	c->c.fd = -1;
	snprintf(c->host, sizeof(c->host), "%s", host);
	if ((rc = mb_smtp_parser_create(&c->p)) ||
	    (rc = mb__mc_open(&c->c, host, port, timeout_ms)) ||
	    (mode == MB_TLS_IMPLICIT && (rc = mb__mc_tls(&c->c, &smtp_tls, host))) ||
	    (rc = smtp_expect(c, 2, "greeting", NULL)) || (rc = smtp_ehlo(c, &r)))
		goto fail;
	if (mode == MB_TLS_STARTTLS) {
		/* STARTTLS, its 220 as the last plaintext, the handshake, EHLO again */
		if (!mb_smtp_ehlo_has(r, "STARTTLS")) {
			rc = mb__mc_fail(&c->c, MB_ETLS, "the server does not offer STARTTLS");
			goto fail;
		}
		if ((rc = mb__mc_write(&c->c, "STARTTLS\r\n", 10)) ||
		    (rc = smtp_expect(c, 2, "STARTTLS", NULL)))
			goto fail;
		if (c->c.rpos < c->c.rlen) {
			rc = mb__mc_fail(&c->c, MB_EPROTO, "STARTTLS: bytes after the reply");
			goto fail;
		}
		mb_smtp_parser_reset(c->p);
		if ((rc = mb__mc_tls(&c->c, &smtp_tls, host)) || (rc = smtp_ehlo(c, &r)))
			goto fail;
	}
	c->pipelining = mb_smtp_ehlo_has(r, "PIPELINING") != NULL;
	*out = c;
	return 0;
fail:
	snprintf(err, errlen, "smtp%s://%s:%d: %s", mode == MB_TLS_IMPLICIT ? "s" : "", host, port,
		 c->c.err[0] ? c->c.err : "failed");
	mb_smtpc_close(c);
	return rc ? rc : MB_EPROTO;
}

void mb_smtpc_close(struct mb_smtpc *c)
{
	if (!c)
		return;
	mb__mc_close(&c->c, "QUIT\r\n", 6);
	mb_smtp_parser_destroy(c->p);
	free(c);
}

int mb_smtpc_auth(struct mb_smtpc *c, const char *user, const char *pass)
{
	char raw[300], cmd[500];
	int n = snprintf(raw, sizeof(raw), "%c%s%c%s", 0, user, 0, pass);
	if (n < 0 || (size_t)n >= sizeof(raw))
		return MB_EINVAL;
	memcpy(cmd, "AUTH PLAIN ", 11);
	mb__mc_b64(raw, (size_t)n, cmd + 11);
	strcat(cmd, "\r\n");
	int rc = mb__mc_write(&c->c, cmd, strlen(cmd));
	if (!rc)
		rc = smtp_expect(c, 2, "AUTH PLAIN", NULL);
	return rc == MB_EACCES ? MB_EAUTH : rc;
}

/* Dot-stuff msg into a malloc'd buffer ending in CRLF . CRLF. */
static char *stuff(const char *msg, size_t len, size_t *out)
{
	char *b = malloc(len * 2 + 8);
	size_t o = 0;
	int bol = 1;
	if (!b)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (bol && msg[i] == '.')
			b[o++] = '.';
		if (msg[i] == '\n' && (i == 0 || msg[i - 1] != '\r'))
			b[o++] = '\r';
		b[o++] = msg[i];
		bol = msg[i] == '\n';
	}
	if (!bol) {
		b[o++] = '\r';
		b[o++] = '\n';
	}
	memcpy(b + o, ".\r\n", 3);
	*out = o + 3;
	return b;
}

int mb_smtpc_send(struct mb_smtpc *c, const char *sender, const char *const *rcpts, int n,
		  const char *msg, size_t len, int *accepted, char *queue_id, size_t idlen)
{
	char line[600];
	int rc, ok = 0, code;
	/* the envelope: pipelined as one write when offered */
	char *env = malloc((size_t)(n + 2) * 320);
	size_t el = 0;
	if (!env)
		return MB_ENOMEM;
	el += (size_t)snprintf(env + el, 320, "MAIL FROM:<%s>\r\n", sender);
	for (int i = 0; i < n; i++)
		el += (size_t)snprintf(env + el, 320, "RCPT TO:<%s>\r\n", rcpts[i]);
	el += (size_t)snprintf(env + el, 320, "DATA\r\n");
	if (c->pipelining) {
		rc = mb__mc_write(&c->c, env, el);
		if (!rc)
			rc = smtp_expect(c, 2, "MAIL FROM", NULL);
		for (int i = 0; i < n && !rc; i++) {
			int r = smtp_expect(c, 2, "RCPT TO", &code);
			if (r && r != MB_EACCES && r != MB_EAGAIN)
				rc = r;
			accepted[i] = r == 0;
			ok += r == 0;
		}
	} else {
		snprintf(line, sizeof(line), "MAIL FROM:<%s>\r\n", sender);
		rc = mb__mc_write(&c->c, line, strlen(line));
		if (!rc)
			rc = smtp_expect(c, 2, "MAIL FROM", NULL);
		for (int i = 0; i < n && !rc; i++) {
			snprintf(line, sizeof(line), "RCPT TO:<%s>\r\n", rcpts[i]);
			rc = mb__mc_write(&c->c, line, strlen(line));
			int r = rc ? rc : smtp_expect(c, 2, "RCPT TO", &code);
			if (r && r != MB_EACCES && r != MB_EAGAIN)
				rc = r;
			accepted[i] = r == 0;
			ok += r == 0;
		}
		if (!rc)
			rc = mb__mc_write(&c->c, "DATA\r\n", 6);
	}
	free(env);
	if (rc)
		return rc;
	/* the reply to DATA: 354 when at least one recipient was taken */
	rc = smtp_expect(c, 3, "DATA", &code);
	if (rc) {
		if (!ok)
			return mb__mc_fail(&c->c, MB_EACCES, "no recipient accepted");
		return rc;
	}
	size_t sl;
	char *body = stuff(msg, len, &sl);
	if (!body)
		return MB_ENOMEM;
	rc = mb__mc_write(&c->c, body, sl);
	free(body);
	if (rc)
		return rc;
	const struct mb_smtp_reply *r;
	if ((rc = smtp_read(c, &r)))
		return rc;
	if (r->code != 250)
		return mb__mc_fail(&c->c, MB_EAGAIN, "after DATA: %d %s", r->code, r->line[0]);
	if (queue_id && idlen) {
		const char *q = strstr(r->line[0], "queued as ");
		snprintf(queue_id, idlen, "%s", q ? q + 10 : "");
	}
	return 0;
}
