/* client.h: a simple blocking client of the mailbench wire protocol.
 *
 * Used by the unit and integration tests, the hidden `mailbench
 * store-client` tool and small utilities; the load engine drives the codec
 * of proto.h from libuv instead.  One connection, one request in flight:
 * mb_client_call() sends a batch and waits for its reply; notification
 * frames that arrive meanwhile are queued (bounded) for
 * mb_client_next_event().  A reply stays valid until the next call on the
 * same client.  Every wait is bounded by the client's timeout.
 */
#ifndef MB_PROTO_CLIENT_H
#define MB_PROTO_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

struct mb_client;

/* Connect to host:port (numeric IPv4/IPv6 or a name); timeout_ms bounds
 * the connect and every later wait (0 = 10 s). */
int mb_client_connect(const char *host, int port, int timeout_ms, struct mb_client **out);
/* Parse "ADDR:PORT" and connect. */
int mb_client_connect_addr(const char *addr_port, int timeout_ms, struct mb_client **out);
void mb_client_destroy(struct mb_client *c);

/* The two-step logon (challenge, then HMAC proof).  flags: MB_LOGON_F_*.
 * On success *reply (optional) holds the Logon result; compression is on
 * from then on when the store accepted it.  A refused logon returns
 * MB_EAUTH. */
int mb_client_logon(struct mb_client *c, const char *user, const char *password, uint32_t flags,
		    struct mb_op_reply *reply);
/* Same with an already derived key (the store's topology secret). */
int mb_client_logon_key(struct mb_client *c, const char *user, const uint8_t key[MB_KEY_LEN],
			const uint8_t salt[MB_SALT_LEN], uint32_t flags, struct mb_op_reply *reply);

/* Send a batch and wait for its reply (seq assigned here).  The reply's
 * variable parts live in the client until the next call.  Returns 0 when a
 * reply arrived (check each op's status), MB_EPROTO/MB_ECLOSED/... else;
 * an ERROR frame from the store returns its code. */
int mb_client_call(struct mb_client *c, const struct mb_op *ops, uint16_t nops,
		   struct mb_reply *reply);

/* Wait up to timeout_ms for a pushed event: 0, or MB_ETIMEDOUT. */
int mb_client_next_event(struct mb_client *c, int timeout_ms, struct mb_event *ev);

/* Raw access for malformed-frame tests: send bytes as they are; receive
 * one frame (header and payload, decompressed) into the client. */
int mb_client_send_raw(struct mb_client *c, const void *p, size_t n);
int mb_client_recv_frame(struct mb_client *c, struct mb_frame_hdr *hdr, const uint8_t **payload,
			 size_t *len);
/* The connection's socket (for tests that write byte by byte). */
int mb_client_fd(const struct mb_client *c);

/* Bytes sent and received on the wire so far. */
uint64_t mb_client_bytes_sent(const struct mb_client *c);
uint64_t mb_client_bytes_received(const struct mb_client *c);
/* The logon result: mailbox id (0 before logon), compression in use. */
uint32_t mb_client_mailbox(const struct mb_client *c);
int mb_client_compressing(const struct mb_client *c);

#endif
