/* mailc_int.h: the blocking connection core shared by the IMAP client
 * (mailc.c, which implements it) and the SMTP client (smtpc.c): a socket
 * with a timeout on every read and write, an optional TLS session over
 * it, and a read buffer the parsers frame from.  Any failure leaves a
 * one-line message in c->err and returns a negative error code. */
#ifndef MB_LAB_MAILC_INT_H
#define MB_LAB_MAILC_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/tls.h"

struct conn {
	int fd;
	int timeout_ms;
	struct mb_tls *tls; /* or NULL: plain */
	char rbuf[65536];
	size_t rpos, rlen;
	char err[512];
};

/* TLS of the connections a protocol's client opens: enum mb_tls_mode,
 * and the client context when not MB_TLS_NONE. */
struct mb_mc_tls_cfg {
	struct mb_tls_ctx *ctx;
	int mode;
};

/* Fill c->err (printf style) and return code. */
int mb__mc_fail(struct conn *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Connect to host:port within timeout_ms (c's fields set). */
int mb__mc_open(struct conn *c, const char *host, int port, int timeout_ms);
/* Write all of p (encrypted when c has a TLS session). */
int mb__mc_write(struct conn *c, const char *p, size_t len);
/* Make unread bytes available in c->rbuf[rpos..rlen): 0, or an error. */
int mb__mc_fill(struct conn *c);
/* Send cmd (LOGOUT, QUIT) and close_notify as the socket takes them now,
 * then close. */
void mb__mc_close(struct conn *c, const char *cmd, size_t len);
/* The TLS handshake on the open socket (implicit, or after STARTTLS). */
int mb__mc_tls(struct conn *c, const struct mb_mc_tls_cfg *t, const char *host);
/* Set a protocol's TLS mode and its client context. */
int mb__mc_tls_cfg_set(struct mb_mc_tls_cfg *t, int mode, const char *ca, bool insecure, char *err,
		       size_t errlen);
/* Base64 of in[0..len) into out (4 * ceil(len / 3) + 1 bytes). */
void mb__mc_b64(const char *in, size_t len, char *out);

#endif
