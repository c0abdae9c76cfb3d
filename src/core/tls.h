/* tls.h: TLS (the system's OpenSSL) over any byte transport, through a
 * pair of memory BIOs: the caller moves ciphertext between the peer and
 * the session (mb_tls_feed in, mb_tls_out_* out) and plaintext between
 * the session and its protocol (mb_tls_read, mb_tls_write).  No socket is
 * touched here, so the same session runs on a libuv stream (the load
 * engine, load/user.c), on a blocking socket (lab/mailc.c) or against an
 * in-memory peer (tests/unit/test_tls.c).
 *
 * A session's states:
 *   HANDSHAKE --(peer's Finished, certificate verified)--> OPEN
 *   HANDSHAKE --(alert, bad certificate, bad record)-----> FAILED
 *   OPEN --(mb_tls_shutdown: close_notify queued)--------> CLOSED
 *   OPEN --(peer's close_notify: mb_tls_read MB_ECLOSED)-> CLOSED
 *   OPEN --(bad record)----------------------------------> FAILED
 * mb_tls_step() drives the handshake: call it after each mb_tls_feed
 * until it returns 1 (open); plaintext written before then is kept and
 * sent once the session is open.  After FAILED every call returns
 * MB_ETLS and mb_tls_error() says why ("certificate verify failed:
 * self-signed certificate", ...).
 *
 * Invariants: a context is read-only once created and may be shared by
 * the sessions of one thread (OpenSSL's SSL_CTX is reference-counted and
 * thread-safe for this use); a session belongs to one thread.  Nothing
 * here blocks.
 */
#ifndef MB_CORE_TLS_H
#define MB_CORE_TLS_H

#include <stdbool.h>
#include <stddef.h>

/* How a connection speaks TLS. */
enum mb_tls_mode {
	MB_TLS_NONE = 0,
	MB_TLS_IMPLICIT, /* from the first byte (imaps://, smtps://) */
	MB_TLS_STARTTLS, /* plain, then the protocol's STARTTLS */
};

struct mb_tls_ctx;
struct mb_tls;

/* A client context: verification against cafile (a PEM CA or the server's
 * own certificate) when given, else the system's CA store; insecure skips
 * verification.  0, or MB_ETLS with err filled. */
int mb_tls_ctx_client(const char *cafile, bool insecure, struct mb_tls_ctx **out, char *err,
		      size_t errlen);
/* A server context from PEM files (the tests' in-memory peer). */
int mb_tls_ctx_server(const char *certfile, const char *keyfile, struct mb_tls_ctx **out, char *err,
		      size_t errlen);
void mb_tls_ctx_destroy(struct mb_tls_ctx *ctx);

/* A session on ctx; host: the name or IP address the certificate must
 * carry (client contexts; also sent as SNI when a name). */
int mb_tls_create(struct mb_tls_ctx *ctx, const char *host, struct mb_tls **out);
void mb_tls_destroy(struct mb_tls *t);

/* Ciphertext from the peer: 0, MB_ENOMEM. */
int mb_tls_feed(struct mb_tls *t, const void *p, size_t len);
/* Drive the handshake: 1 open, 0 more bytes needed (send mb_tls_out_*
 * first), MB_ETLS failed. */
int mb_tls_step(struct mb_tls *t);
/* Whether the session is open (handshake done, not failed or closed). */
bool mb_tls_open(const struct mb_tls *t);
/* Plaintext from the peer: > 0 bytes, 0 none yet, MB_ECLOSED the peer
 * sent close_notify, MB_ETLS failed. */
long mb_tls_read(struct mb_tls *t, void *buf, size_t cap);
/* Plaintext to the peer (kept until the handshake is done): 0, MB_ENOMEM,
 * MB_ETLS. */
int mb_tls_write(struct mb_tls *t, const void *p, size_t len);
/* Queue close_notify (once; nothing may be written after). */
void mb_tls_shutdown(struct mb_tls *t);
/* Ciphertext waiting for the peer: its length, and take up to cap bytes
 * of it (returns how many). */
size_t mb_tls_out_pending(const struct mb_tls *t);
size_t mb_tls_out_take(struct mb_tls *t, void *buf, size_t cap);
/* Why the session failed (or "no error"). */
const char *mb_tls_error(const struct mb_tls *t);
/* The negotiated protocol and cipher ("TLSv1.3 TLS_AES_256_GCM_SHA384"). */
void mb_tls_describe(const struct mb_tls *t, char *buf, size_t cap);

/* Write a self-signed certificate (RSA 2048, SHA-256, valid 10 years,
 * subjectAltName DNS:localhost, IP:127.0.0.1, IP:::1) for cn to certfile
 * and its private key to keyfile (mode 0600).  0, MB_EIO, MB_ETLS. */
int mb_tls_selfsigned(const char *cn, const char *certfile, const char *keyfile, char *err,
		      size_t errlen);

#endif
