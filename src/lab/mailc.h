/* mailc.h: small blocking IMAP and SMTP clients for the commands that are
 * not the load engine: provisioning (`init --target imap://`), the check
 * over IMAP, and the tests.  They use the load engine's parsers
 * (load/imapparse.h, load/smtpparse.h), so what they accept is what the
 * drivers accept.  One connection each, poll() with a timeout on every
 * read and write; any failure leaves a one-line message in *_error().
 *
 * IMAP client states: CONNECTED (greeting read) -> AUTHENTICATED (login)
 * -> [SELECTED] -> closed.  Commands are tagged "mN"; untagged responses
 * that arrive before the tagged reply go to the command's callback.
 */
#ifndef MB_LAB_MAILC_H
#define MB_LAB_MAILC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "load/imapparse.h"

/* "imap://HOST:PORT", "smtp://HOST:PORT" (also "HOST:PORT" with the given
 * default scheme).  0 or MB_EINVAL. */
int mb_mail_url(const char *url, const char *scheme, char *host, size_t hostlen, int *port);
/* Whether url's scheme is the TLS form (imaps://, smtps://), which
 * mb_mail_url also accepts. */
int mb_mail_url_tls(const char *url);

struct mb_imapc;

/* TLS of the IMAP connections opened after this call (the process's
 * provisioning or check: one setting for all): mode is enum mb_tls_mode
 * (core/tls.h; MB_TLS_IMPLICIT for imaps://, MB_TLS_STARTTLS: STARTTLS
 * after the greeting's capabilities, then CAPABILITY again); ca and
 * insecure as the load engine's --tls-ca and --tls-insecure.  0, or
 * MB_ETLS with err filled (a CA file that does not load). */
int mb_imapc_tls(int mode, const char *ca, bool insecure, char *err, size_t errlen);

typedef void (*mb_imapc_cb)(void *arg, const struct mb_imap_resp *r);

int mb_imapc_connect(const char *host, int port, int timeout_ms, struct mb_imapc **out, char *err,
		     size_t errlen);
void mb_imapc_close(struct mb_imapc *c); /* LOGOUT when possible, then close */
const char *mb_imapc_error(const struct mb_imapc *c);
int mb_imapc_has_cap(const struct mb_imapc *c, const char *cap);
/* AUTHENTICATE PLAIN (with SASL-IR when offered), else LOGIN.  MB_EAUTH
 * when the server says NO. */
int mb_imapc_login(struct mb_imapc *c, const char *user, const char *pass);
/* Send "TAG " + the printf'd command + CRLF, read to the tagged reply.
 * 0 on OK; MB_ENOTFOUND on NO (text in error), MB_EPROTO on BAD. */
int mb_imapc_cmd(struct mb_imapc *c, mb_imapc_cb cb, void *arg, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* APPEND msg to mailbox with flags ("" or "\\Seen ..."); *uid from
 * APPENDUID when the server has UIDPLUS (else 0). */
int mb_imapc_append(struct mb_imapc *c, const char *mailbox, const char *flags, const char *msg,
		    size_t len, uint64_t *uid);
/* Ensure a mailbox exists (CREATE; "already exists" is fine). */
int mb_imapc_create(struct mb_imapc *c, const char *mailbox);
/* Message count of mailbox (STATUS MESSAGES). */
int mb_imapc_count(struct mb_imapc *c, const char *mailbox, uint32_t *count);

struct mb_smtpc;

/* TLS of the SMTP connections opened after this call, as mb_imapc_tls:
 * MB_TLS_IMPLICIT for smtps:// (TLS before the greeting), MB_TLS_STARTTLS:
 * STARTTLS after EHLO, then EHLO again over TLS (a server that does not
 * offer it fails the connect).  0, or MB_ETLS with err filled. */
int mb_smtpc_tls(int mode, const char *ca, bool insecure, char *err, size_t errlen);

int mb_smtpc_connect(const char *host, int port, int timeout_ms, struct mb_smtpc **out, char *err,
		     size_t errlen);
void mb_smtpc_close(struct mb_smtpc *c); /* QUIT, then close */
const char *mb_smtpc_error(const struct mb_smtpc *c);
/* AUTH PLAIN.  MB_EAUTH when refused. */
int mb_smtpc_auth(struct mb_smtpc *c, const char *user, const char *pass);
/* Submit msg (dot-stuffed here) from sender to rcpts (pipelined when the
 * server offers PIPELINING).  0 when the server answered 250 after DATA
 * (the message is acknowledged: accepted[] says which recipients it took;
 * queue_id gets the text after "queued as", when given). */
int mb_smtpc_send(struct mb_smtpc *c, const char *sender, const char *const *rcpts, int n,
		  const char *msg, size_t len, int *accepted, char *queue_id, size_t idlen);

#endif
