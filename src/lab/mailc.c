/* mailc.c: the blocking IMAP client (see mailc.h) and the connection core
 * under it and the SMTP client (smtpc.c): connect with timeout, write all,
 * read some (mailc_int.h);
 * the parsers do the framing.  With TLS (mb_imapc_tls, mb_smtpc_tls: one
 * setting per protocol for the process) the core runs a core/tls.c
 * session over the socket: mb__mc_write encrypts and sends the ciphertext,
 * mb__mc_fill reads ciphertext until the session gives plaintext; the
 * handshake (mb__mc_tls) blocks with the same timeout. */
#include "config.h"

#include "lab/mailc.h"
#include "lab/mailc_int.h"

#include "core/error.h"
#include "core/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <openssl/evp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

int mb_mail_url(const char *url, const char *scheme, char *host, size_t hostlen, int *port)
{
	const char *p = strstr(url, "://");
	if (p) {
		size_t sl = strlen(scheme), n = (size_t)(p - url);
		/* the scheme, or its TLS form (imaps, smtps: the caller asks mb_mail_url_tls) */
		if (strncmp(url, scheme, sl) || !(n == sl || (n == sl + 1 && url[sl] == 's')))
			return MB_EINVAL;
		p += 3;
	} else {
		p = url;
	}
	const char *colon = strrchr(p, ':');
	if (!colon || colon == p || (size_t)(colon - p) >= hostlen)
		return MB_EINVAL;
	char *end;
	long v = strtol(colon + 1, &end, 10);
	if (*end || v < 1 || v > 65535)
		return MB_EINVAL;
	memcpy(host, p, (size_t)(colon - p));
	host[colon - p] = 0;
	*port = (int)v;
	return 0;
}

int mb_mail_url_tls(const char *url)
{
	const char *p = strstr(url, "://");
	return p && p > url && p[-1] == 's';
}

int mb__mc_fail(struct conn *c, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return code;
}

int mb__mc_open(struct conn *c, const char *host, int port, int timeout_ms)
{
	struct addrinfo hints, *ai = NULL;
	char ps[16];
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(ps, sizeof(ps), "%d", port);
	c->fd = -1;
	c->timeout_ms = timeout_ms > 0 ? timeout_ms : 30000;
	int g = getaddrinfo(host, ps, &hints, &ai);
	if (g)
		return mb__mc_fail(c, MB_ENOTFOUND, "%s: %s", host, gai_strerror(g));
	int rc = MB_ECLOSED;
	for (struct addrinfo *a = ai; a; a = a->ai_next) {
		int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			continue;
		if (connect(fd, a->ai_addr, a->ai_addrlen) && errno != EINPROGRESS) {
			close(fd);
			continue;
		}
		struct pollfd pf = {fd, POLLOUT, 0};
		int soerr = 0;
		socklen_t sl = sizeof(soerr);
		if (poll(&pf, 1, c->timeout_ms) != 1 ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) || soerr) {
			close(fd);
			mb__mc_fail(c, MB_ECLOSED, "connect %s:%d: %s", host, port,
				    soerr ? strerror(soerr) : "timed out");
			continue;
		}
		c->fd = fd;
		rc = 0;
		break;
	}
	freeaddrinfo(ai);
	if (rc && !c->err[0])
		mb__mc_fail(c, rc, "connect %s:%d failed", host, port);
	return rc;
}

static int raw_send(struct conn *c, const char *p, size_t len)
{
	while (len) {
		ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pf = {c->fd, POLLOUT, 0};
			if (poll(&pf, 1, c->timeout_ms) != 1)
				return mb__mc_fail(c, MB_ETIMEDOUT, "write timed out");
			continue;
		}
		return mb__mc_fail(c, MB_ECLOSED, "write: %s", strerror(errno));
	}
	return 0;
}

/* The session's ciphertext onto the socket. */
static int tls_send(struct conn *c)
{
	char buf[16384];
	size_t n;
	while ((n = mb_tls_out_take(c->tls, buf, sizeof(buf))) > 0) {
		int rc = raw_send(c, buf, n);
		if (rc)
			return rc;
	}
	return 0;
}

int mb__mc_write(struct conn *c, const char *p, size_t len)
{
	if (!c->tls)
		return raw_send(c, p, len);
	int rc = mb_tls_write(c->tls, p, len);
	if (rc)
		return mb__mc_fail(c, rc, "%s", mb_tls_error(c->tls));
	return tls_send(c);
}

/* Some bytes off the socket into buf: *got > 0, or an error. */
static int raw_recv(struct conn *c, char *buf, size_t cap, size_t *got);

/* Ciphertext in until the session has plaintext for rbuf. */
static int tls_fill(struct conn *c)
{
	char buf[16384];
	for (;;) {
		long n = mb_tls_read(c->tls, c->rbuf, sizeof(c->rbuf));
		if (n > 0) {
			c->rlen = (size_t)n;
			return tls_send(c); /* e.g. a key update's reply */
		}
		if (n == MB_ECLOSED)
			return mb__mc_fail(c, MB_ECLOSED, "the server closed the TLS session");
		if (n < 0)
			return mb__mc_fail(c, MB_ETLS, "%s", mb_tls_error(c->tls));
		size_t got;
		int rc = raw_recv(c, buf, sizeof(buf), &got);
		if (rc)
			return rc;
		if (mb_tls_feed(c->tls, buf, got))
			return mb__mc_fail(c, MB_ENOMEM, "out of memory");
	}
}

static struct mb_mc_tls_cfg imap_tls;

int mb__mc_tls_cfg_set(struct mb_mc_tls_cfg *t, int mode, const char *ca, bool insecure, char *err,
		       size_t errlen)
{
	mb_tls_ctx_destroy(t->ctx);
	t->ctx = NULL;
	t->mode = mode;
	if (mode == MB_TLS_NONE)
		return 0;
	int rc = mb_tls_ctx_client(ca, insecure, &t->ctx, err, errlen);
	if (rc)
		t->mode = MB_TLS_NONE;
	return rc;
}

/* The TLS handshake on the open socket (implicit, or after STARTTLS). */
int mb__mc_tls(struct conn *c, const struct mb_mc_tls_cfg *t, const char *host)
{
	if (!t->ctx)
		return mb__mc_fail(c, MB_ETLS, "TLS is not set up");
	if (mb_tls_create(t->ctx, host, &c->tls))
		return mb__mc_fail(c, MB_ENOMEM, "out of memory");
	char buf[16384];
	for (;;) {
		int rc = mb_tls_step(c->tls);
		int wr = tls_send(c);
		if (rc < 0)
			return mb__mc_fail(c, MB_ETLS, "%s", mb_tls_error(c->tls));
		if (wr)
			return wr;
		if (rc == 1)
			return 0;
		size_t got;
		if ((rc = raw_recv(c, buf, sizeof(buf), &got)))
			return rc;
		if (mb_tls_feed(c->tls, buf, got))
			return mb__mc_fail(c, MB_ENOMEM, "out of memory");
	}
}

int mb_imapc_tls(int mode, const char *ca, bool insecure, char *err, size_t errlen)
{
	return mb__mc_tls_cfg_set(&imap_tls, mode, ca, insecure, err, errlen);
}

/* Send cmd (LOGOUT, QUIT) and close_notify as far as the socket takes
 * them now, then close the socket and end the session. */
void mb__mc_close(struct conn *c, const char *cmd, size_t len)
{
	if (c->fd >= 0) {
		if (c->tls) {
			if (mb_tls_open(c->tls) && mb_tls_write(c->tls, cmd, len) == 0)
				mb_tls_shutdown(c->tls);
			char buf[16384];
			size_t k;
			while ((k = mb_tls_out_take(c->tls, buf, sizeof(buf))) > 0)
				(void)!send(c->fd, buf, k, MSG_NOSIGNAL | MSG_DONTWAIT);
		} else {
			(void)!send(c->fd, cmd, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		}
		close(c->fd);
		c->fd = -1;
	}
	mb_tls_destroy(c->tls);
	c->tls = NULL;
}

/* Make unread bytes available: 0, or an error. */
int mb__mc_fill(struct conn *c)
{
	if (c->rpos < c->rlen)
		return 0;
	c->rpos = c->rlen = 0;
	if (c->tls)
		return tls_fill(c);
	return raw_recv(c, c->rbuf, sizeof(c->rbuf), &c->rlen);
}

static int raw_recv(struct conn *c, char *buf, size_t cap, size_t *got)
{
	for (;;) {
		ssize_t n = recv(c->fd, buf, cap, 0);
		if (n > 0) {
			*got = (size_t)n;
			return 0;
		}
		if (n == 0)
			return mb__mc_fail(c, MB_ECLOSED, "the server closed the connection");
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			struct pollfd pf = {c->fd, POLLIN, 0};
			if (poll(&pf, 1, c->timeout_ms) != 1)
				return mb__mc_fail(c, MB_ETIMEDOUT, "no answer within %d ms",
						   c->timeout_ms);
			continue;
		}
		return mb__mc_fail(c, MB_ECLOSED, "read: %s", strerror(errno));
	}
}

void mb__mc_b64(const char *in, size_t len, char *out)
{
	EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)in, (int)len);
}

/* ---- IMAP ---- */

struct mb_imapc {
	struct conn c;
	struct mb_imap_parser *p;
	unsigned tagno;
	char caps[2048]; /* " CAP1 CAP2 ... " upper-cased */
};

const char *mb_imapc_error(const struct mb_imapc *c) { return c->c.err[0] ? c->c.err : "no error"; }

static void set_caps(struct mb_imapc *c, const struct mb_imap_node *n)
{
	size_t o = 0;
	c->caps[o++] = ' ';
	for (; n && o + 2 < sizeof(c->caps); n = n->next) {
		for (size_t i = 0; i < n->len && o + 2 < sizeof(c->caps); i++) {
			char ch = n->s[i];
			c->caps[o++] = ch >= 'a' && ch <= 'z' ? (char)(ch - 32) : ch;
		}
		c->caps[o++] = ' ';
	}
	c->caps[o] = 0;
}

int mb_imapc_has_cap(const struct mb_imapc *c, const char *cap)
{
	char k[80];
	snprintf(k, sizeof(k), " %s ", cap);
	for (char *s = k; *s; s++)
		if (*s >= 'a' && *s <= 'z')
			*s = (char)(*s - 32);
	return strstr(c->caps, k) != NULL;
}

/* Read one response. */
static int imap_read(struct mb_imapc *c, const struct mb_imap_resp **r)
{
	for (;;) {
		int rc = mb__mc_fill(&c->c);
		if (rc)
			return rc;
		size_t used;
		rc = mb_imap_parser_feed(c->p, c->c.rbuf + c->c.rpos, c->c.rlen - c->c.rpos, &used);
		c->c.rpos += used;
		if (rc < 0)
			return mb__mc_fail(&c->c, rc, "bad response from the server: %s",
					   mb_imap_parser_error(c->p));
		if (rc == 1) {
			*r = mb_imap_parser_resp(c->p);
			/* capabilities may come in any status response or a CAPABILITY */
			if ((*r)->code && !strcmp((*r)->code, "CAPABILITY"))
				set_caps(c, (*r)->code_args);
			else if ((*r)->kind == MB_IMAP_UNTAGGED &&
				 !strcmp((*r)->name, "CAPABILITY"))
				set_caps(c, (*r)->args);
			return 0;
		}
	}
}

int mb_imapc_connect(const char *host, int port, int timeout_ms, struct mb_imapc **out, char *err,
		     size_t errlen)
{
	struct mb_imapc *c = calloc(1, sizeof(*c));
	const struct mb_imap_resp *r;
	int rc;
	if (!c)
		return MB_ENOMEM;
	c->c.fd = -1;
	int tls_mode = imap_tls.mode;
	const char *scheme = tls_mode == MB_TLS_IMPLICIT ? "imaps" : "imap";
	if ((rc = mb_imap_parser_create(NULL, &c->p)) ||
	    (rc = mb__mc_open(&c->c, host, port, timeout_ms)) ||
	    (tls_mode == MB_TLS_IMPLICIT && (rc = mb__mc_tls(&c->c, &imap_tls, host))) ||
	    (rc = imap_read(c, &r))) {
		snprintf(err, errlen, "%s://%s:%d: %s", scheme, host, port, c->c.err);
		mb_imap_parser_destroy(c->p);
		mb_tls_destroy(c->c.tls);
		if (c->c.fd >= 0)
			close(c->c.fd);
		free(c);
		return rc ? rc : MB_EPROTO;
	}
	if (r->kind != MB_IMAP_UNTAGGED || (strcmp(r->name, "OK") && strcmp(r->name, "PREAUTH"))) {
		snprintf(err, errlen, "imap://%s:%d: not an IMAP greeting: %.80s", host, port,
			 r->raw);
		mb_imapc_close(c);
		return MB_EPROTO;
	}
	if (!c->caps[0] && (rc = mb_imapc_cmd(c, NULL, NULL, "CAPABILITY"))) {
		snprintf(err, errlen, "%s://%s:%d: CAPABILITY: %s", scheme, host, port, c->c.err);
		mb_imapc_close(c);
		return rc;
	}
	if (tls_mode == MB_TLS_STARTTLS) {
		if (!mb_imapc_has_cap(c, "STARTTLS")) {
			snprintf(err, errlen, "imap://%s:%d: the server does not offer STARTTLS",
				 host, port);
			mb_imapc_close(c);
			return MB_ETLS;
		}
		if ((rc = mb_imapc_cmd(c, NULL, NULL, "STARTTLS")) ||
		    (c->c.rpos < c->c.rlen && (rc = MB_EPROTO)) ||
		    (rc = mb__mc_tls(&c->c, &imap_tls, host))) {
			snprintf(err, errlen, "imap://%s:%d: STARTTLS: %s", host, port,
				 c->c.err[0] ? c->c.err : "bytes after the reply");
			mb_imapc_close(c);
			return rc;
		}
		c->caps[0] = 0; /* the capabilities over TLS */
		if ((rc = mb_imapc_cmd(c, NULL, NULL, "CAPABILITY"))) {
			snprintf(err, errlen, "imap://%s:%d: CAPABILITY: %s", host, port, c->c.err);
			mb_imapc_close(c);
			return rc;
		}
	}
	*out = c;
	return 0;
}

void mb_imapc_close(struct mb_imapc *c)
{
	if (!c)
		return;
	char cmd[32];
	int n = snprintf(cmd, sizeof(cmd), "m%u LOGOUT\r\n", ++c->tagno);
	mb__mc_close(&c->c, cmd, (size_t)n);
	mb_imap_parser_destroy(c->p);
	free(c);
}

/* Read to the tagged reply of tag. */
static int imap_wait(struct mb_imapc *c, const char *tag, mb_imapc_cb cb, void *arg,
		     const struct mb_imap_resp **cont)
{
	for (;;) {
		const struct mb_imap_resp *r;
		int rc = imap_read(c, &r);
		if (rc)
			return rc;
		if (r->kind == MB_IMAP_CONTINUE) {
			if (cont) {
				*cont = r;
				return 1;
			}
			return mb__mc_fail(&c->c, MB_EPROTO, "unexpected continuation: %.80s",
					   r->raw);
		}
		if (r->kind == MB_IMAP_UNTAGGED) {
			if (!strcmp(r->name, "BYE"))
				return mb__mc_fail(&c->c, MB_ECLOSED, "server said BYE: %s",
						   r->text);
			if (cb)
				cb(arg, r);
			continue;
		}
		if (strcmp(r->tag, tag))
			return mb__mc_fail(&c->c, MB_EPROTO, "reply to an unknown tag %s", r->tag);
		if (cb && r->code)
			cb(arg, r); /* APPENDUID, COPYUID, ... */
		if (!strcmp(r->name, "OK"))
			return 0;
		return mb__mc_fail(&c->c, !strcmp(r->name, "NO") ? MB_ENOTFOUND : MB_EPROTO,
				   "%s %s%s%s%s", r->name, r->code ? "[" : "",
				   r->code ? r->code : "", r->code ? "] " : "", r->text);
	}
}

int mb_imapc_cmd(struct mb_imapc *c, mb_imapc_cb cb, void *arg, const char *fmt, ...)
{
	char buf[8192], tag[16];
	va_list ap;
	snprintf(tag, sizeof(tag), "m%u", ++c->tagno);
	int n = snprintf(buf, sizeof(buf), "%s ", tag);
	va_start(ap, fmt);
	int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 2, fmt, ap);
	va_end(ap);
	if (m < 0 || (size_t)(n + m) >= sizeof(buf) - 2)
		return mb__mc_fail(&c->c, MB_ETOOBIG, "command too long");
	n += m;
	buf[n++] = '\r';
	buf[n++] = '\n';
	int rc = mb__mc_write(&c->c, buf, (size_t)n);
	return rc ? rc : imap_wait(c, tag, cb, arg, NULL);
}

int mb_imapc_login(struct mb_imapc *c, const char *user, const char *pass)
{
	int rc;
	if (mb_imapc_has_cap(c, "AUTH=PLAIN") && mb_imapc_has_cap(c, "SASL-IR")) {
		char raw[300], enc[420];
		int n = snprintf(raw, sizeof(raw), "%c%s%c%s", 0, user, 0, pass);
		if (n < 0 || (size_t)n >= sizeof(raw))
			return MB_EINVAL;
		mb__mc_b64(raw, (size_t)n, enc);
		rc = mb_imapc_cmd(c, NULL, NULL, "AUTHENTICATE PLAIN %s", enc);
	} else {
		char cmd[600];
		size_t pos = 0;
		memcpy(cmd, "LOGIN ", 6);
		pos = 6;
		if (mb_imap_put_astring(cmd, sizeof(cmd) - 4, &pos, user, strlen(user)) >
		    sizeof(cmd) / 3)
			return MB_EINVAL;
		cmd[pos++] = ' ';
		mb_imap_put_astring(cmd, sizeof(cmd) - 4, &pos, pass, strlen(pass));
		cmd[pos] = 0;
		rc = mb_imapc_cmd(c, NULL, NULL, "%s", cmd);
	}
	if (rc == MB_ENOTFOUND)
		rc = MB_EAUTH;
	if (!rc && !mb_imapc_has_cap(c, "IMAP4REV1"))
		rc = mb_imapc_cmd(c, NULL, NULL, "CAPABILITY");
	return rc;
}

struct uidarg {
	uint64_t uid;
};

static void on_appenduid(void *arg, const struct mb_imap_resp *r)
{
	struct uidarg *u = arg;
	if (r->kind == MB_IMAP_TAGGED && r->code && !strcmp(r->code, "APPENDUID") && r->code_args)
		mb_imap_node_u64(r->code_args->next, &u->uid);
}

/* A mailbox name as an astring into buf. */
static int mbox(char *buf, size_t cap, const char *name)
{
	size_t pos = 0;
	if (mb_imap_put_astring(buf, cap - 1, &pos, name, strlen(name)) >= cap - 1)
		return MB_ETOOBIG;
	buf[pos] = 0;
	return 0;
}

int mb_imapc_append(struct mb_imapc *c, const char *mailbox, const char *flags, const char *msg,
		    size_t len, uint64_t *uid)
{
	char box[600], head[800], tag[16];
	struct uidarg ua = {0};
	int rc;
	if ((rc = mbox(box, sizeof(box), mailbox)))
		return rc;
	int lplus = mb_imapc_has_cap(c, "LITERAL+");
	snprintf(tag, sizeof(tag), "m%u", ++c->tagno);
	int n = snprintf(head, sizeof(head), "%s APPEND %s (%s) {%zu%s}\r\n", tag, box,
			 flags ? flags : "", len, lplus ? "+" : "");
	if ((rc = mb__mc_write(&c->c, head, (size_t)n)))
		return rc;
	if (!lplus) {
		const struct mb_imap_resp *cont;
		rc = imap_wait(c, tag, NULL, NULL, &cont);
		if (rc != 1)
			return rc ? rc : mb__mc_fail(&c->c, MB_EPROTO, "APPEND: no continuation");
	}
	if ((rc = mb__mc_write(&c->c, msg, len)) || (rc = mb__mc_write(&c->c, "\r\n", 2)))
		return rc;
	rc = imap_wait(c, tag, on_appenduid, &ua, NULL);
	if (!rc && uid)
		*uid = ua.uid;
	return rc;
}

int mb_imapc_create(struct mb_imapc *c, const char *mailbox)
{
	char box[600];
	int rc = mbox(box, sizeof(box), mailbox);
	if (rc)
		return rc;
	rc = mb_imapc_cmd(c, NULL, NULL, "CREATE %s", box);
	if (rc == MB_ENOTFOUND &&
	    (strcasestr(c->c.err, "exists") || strcasestr(c->c.err, "ALREADYEXISTS")))
		rc = 0;
	return rc;
}

struct countarg {
	uint32_t n;
	int seen;
};

static void on_status(void *arg, const struct mb_imap_resp *r)
{
	struct countarg *a = arg;
	uint64_t v;
	if (r->kind == MB_IMAP_UNTAGGED && !strcmp(r->name, "STATUS") && r->args &&
	    mb_imap_node_u64(mb_imap_fetch_item(r->args->next, "MESSAGES"), &v) == 0) {
		a->n = (uint32_t)v;
		a->seen = 1;
	}
}

int mb_imapc_count(struct mb_imapc *c, const char *mailbox, uint32_t *count)
{
	char box[600];
	struct countarg a = {0, 0};
	int rc = mbox(box, sizeof(box), mailbox);
	if (!rc)
		rc = mb_imapc_cmd(c, on_status, &a, "STATUS %s (MESSAGES)", box);
	if (!rc && !a.seen)
		rc = mb__mc_fail(&c->c, MB_EPROTO, "STATUS gave no MESSAGES");
	if (!rc)
		*count = a.n;
	return rc;
}
