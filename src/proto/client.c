/* client.c: the blocking protocol client (see client.h).
 * Invariants: one request in flight; received bytes accumulate in rx until
 * a whole frame is there; NOTIFY frames are queued (at most
 * CLIENT_EVENT_QUEUE events, older ones dropped) and never mistaken for a
 * reply; every wait uses poll() with the client's timeout. */
#include "proto/client.h"
#include "core/error.h"
#include "core/clock.h"
#include "proto/lz77.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#define CLIENT_EVENT_QUEUE 1024

struct mb_client {
	int fd;
	int timeout_ms;
	uint32_t seq;
	struct mb_buf *rx;	   /* received, not yet consumed bytes */
	struct mb_buf *tx;	   /* frame being sent */
	struct mb_buf *tmp;	   /* payload scratch for encoding */
	struct mb_buf *payload;	   /* the last frame's payload (decompressed) */
	struct mb_buf *zbuf;	   /* decompression scratch */
	struct mb_arena *arena;	   /* decoded replies */
	struct mb_arena *narena;   /* decoded notifications */
	struct mb_codec_opts opts; /* opts.lz77: the encoder, from a logon that granted it */
	uint32_t mailbox;
	uint64_t sent, received;
	struct mb_event events[CLIENT_EVENT_QUEUE];
	int ev_head, ev_count;
};

int mb_client_connect(const char *host, int port, int timeout_ms, struct mb_client **out)
{
	struct addrinfo hints, *res = NULL;
	char ps[16];
	int rc, fd = -1;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(ps, sizeof(ps), "%d", port);
	if (port <= 0 || port > 65535)
		return MB_EINVAL;
	if (getaddrinfo(host, ps, &hints, &res) != 0)
		return MB_ENOTFOUND;
	if (timeout_ms <= 0)
		timeout_ms = 10000;
	rc = MB_ECLOSED;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		int fl = fcntl(fd, F_GETFL);
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 || errno == EINPROGRESS) {
			struct pollfd pf = {fd, POLLOUT, 0};
			int err = 0;
			socklen_t el = sizeof(err);
			if (poll(&pf, 1, timeout_ms) == 1 &&
			    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0) {
				fcntl(fd, F_SETFL, fl);
				rc = 0;
				break;
			}
			rc = MB_ETIMEDOUT;
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (rc)
		return rc;
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

	struct mb_client *c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return MB_ENOMEM;
	}
	c->fd = fd;
	c->timeout_ms = timeout_ms;
	if (mb_buf_create(4096, &c->rx) || mb_buf_create(4096, &c->tx) ||
	    mb_buf_create(4096, &c->tmp) || mb_buf_create(0, &c->payload) ||
	    mb_buf_create(0, &c->zbuf) || mb_arena_create(64u << 20, &c->arena) ||
	    mb_arena_create(1u << 20, &c->narena)) {
		mb_client_destroy(c);
		return MB_ENOMEM;
	}
	c->opts.min_bytes = MB_PROTO_DEFAULT_COMPRESS_MIN;
	*out = c;
	return 0;
}

int mb_client_connect_addr(const char *addr_port, int timeout_ms, struct mb_client **out)
{
	char host[256];
	const char *colon = strrchr(addr_port, ':');
	char *end;

	if (!colon || (size_t)(colon - addr_port) >= sizeof(host) || colon == addr_port)
		return MB_EINVAL;
	memcpy(host, addr_port, (size_t)(colon - addr_port));
	host[colon - addr_port] = '\0';
	/* [::1]:port */
	char *h = host;
	if (h[0] == '[' && h[strlen(h) - 1] == ']') {
		h[strlen(h) - 1] = '\0';
		h++;
	}
	long port = strtol(colon + 1, &end, 10);
	if (*end || port <= 0 || port > 65535)
		return MB_EINVAL;
	return mb_client_connect(h, (int)port, timeout_ms, out);
}

void mb_client_destroy(struct mb_client *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	mb_buf_destroy(c->rx);
	mb_buf_destroy(c->tx);
	mb_buf_destroy(c->tmp);
	mb_buf_destroy(c->payload);
	mb_buf_destroy(c->zbuf);
	mb_lz77_destroy(c->opts.lz77);
	mb_arena_destroy(c->arena);
	mb_arena_destroy(c->narena);
	free(c);
}

int mb_client_send_raw(struct mb_client *c, const void *p, size_t n)
{
	const uint8_t *b = p;
	int64_t deadline = mb_now_ms() + c->timeout_ms;

	while (n) {
		ssize_t w = send(c->fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			b += w;
			n -= (size_t)w;
			c->sent += (uint64_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			int left = (int)(deadline - mb_now_ms());
			if (left <= 0)
				return MB_ETIMEDOUT;
			struct pollfd pf = {c->fd, POLLOUT, 0};
			poll(&pf, 1, left);
			continue;
		}
		return MB_ECLOSED;
	}
	return 0;
}

/* Read until a whole frame is at the front of rx; copy its payload. */
static int recv_one(struct mb_client *c, struct mb_frame_hdr *hdr, int timeout_ms)
{
	int64_t deadline = mb_now_ms() + timeout_ms;
	size_t total;
	int rc;

	for (;;) {
		rc = mb_frame_check(mb_buf_data(c->rx), mb_buf_len(c->rx), 0, hdr, &total);
		if (rc == 0)
			break;
		if (rc != MB_EAGAIN)
			return rc;
		int left = (int)(deadline - mb_now_ms());
		if (left <= 0)
			return MB_ETIMEDOUT;
		struct pollfd pf = {c->fd, POLLIN, 0};
		int pr = poll(&pf, 1, left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			return MB_ETIMEDOUT;
		uint8_t *dst;
		size_t want = total - mb_buf_len(c->rx);
		if (want < 65536)
			want = 65536;
		rc = mb_buf_reserve(c->rx, want, &dst);
		if (rc)
			return rc;
		ssize_t n = recv(c->fd, dst, want, 0);
		if (n == 0)
			return MB_ECLOSED;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return MB_ECLOSED;
		}
		mb_buf_commit(c->rx, (size_t)n);
		c->received += (uint64_t)n;
	}
	const uint8_t *p;
	size_t len;
	rc = mb_frame_payload(hdr, mb_buf_data(c->rx), c->zbuf, &p, &len);
	if (rc == 0) {
		mb_buf_reset(c->payload);
		rc = mb_buf_append(c->payload, p, len);
	}
	mb_buf_consume(c->rx, total);
	return rc;
}

static void queue_events(struct mb_client *c)
{
	struct mb_notify n;

	mb_arena_reset(c->narena);
	if (mb_notify_decode(mb_buf_data(c->payload), mb_buf_len(c->payload), c->narena, &n))
		return;
	for (uint16_t i = 0; i < n.n; i++) {
		if (c->ev_count == CLIENT_EVENT_QUEUE) {
			c->ev_head = (c->ev_head + 1) % CLIENT_EVENT_QUEUE;
			c->ev_count--;
		}
		c->events[(c->ev_head + c->ev_count) % CLIENT_EVENT_QUEUE] = n.events[i];
		c->ev_count++;
	}
}

int mb_client_recv_frame(struct mb_client *c, struct mb_frame_hdr *hdr, const uint8_t **payload,
			 size_t *len)
{
	int rc = recv_one(c, hdr, c->timeout_ms);
	if (rc)
		return rc;
	*payload = mb_buf_data(c->payload);
	*len = mb_buf_len(c->payload);
	return 0;
}

int mb_client_call(struct mb_client *c, const struct mb_op *ops, uint16_t nops,
		   struct mb_reply *reply)
{
	struct mb_request req = {++c->seq, nops, (struct mb_op *)ops};
	struct mb_frame_hdr hdr;
	int rc;

	mb_buf_reset(c->tx);
	rc = mb_request_encode(c->tx, c->tmp, &req, &c->opts, NULL);
	if (rc)
		return rc;
	rc = mb_client_send_raw(c, mb_buf_data(c->tx), mb_buf_len(c->tx));
	if (rc)
		return rc;
	int64_t deadline = mb_now_ms() + c->timeout_ms;
	for (;;) {
		int left = (int)(deadline - mb_now_ms());
		if (left <= 0)
			return MB_ETIMEDOUT;
		rc = recv_one(c, &hdr, left);
		if (rc)
			return rc;
		if (hdr.kind == MB_FRAME_NOTIFY) {
			queue_events(c);
			continue;
		}
		if (hdr.kind == MB_FRAME_ERROR) {
			struct mb_frame_error e;
			if (mb_error_decode(mb_buf_data(c->payload), mb_buf_len(c->payload), &e))
				return MB_EPROTO;
			return e.code < 0 ? e.code : MB_EPROTO;
		}
		if (hdr.kind != MB_FRAME_REPLY || hdr.seq != req.seq)
			return MB_EPROTO;
		break;
	}
	mb_arena_reset(c->arena);
	rc = mb_reply_decode(mb_buf_data(c->payload), mb_buf_len(c->payload), hdr.seq, c->arena,
			     reply);
	if (rc)
		return rc;
	if (reply->nops != nops)
		return MB_EPROTO;
	return 0;
}

int mb_client_next_event(struct mb_client *c, int timeout_ms, struct mb_event *ev)
{
	int64_t deadline = mb_now_ms() + timeout_ms;
	struct mb_frame_hdr hdr;

	while (c->ev_count == 0) {
		int left = (int)(deadline - mb_now_ms());
		if (left <= 0)
			return MB_ETIMEDOUT;
		int rc = recv_one(c, &hdr, left);
		if (rc)
			return rc;
		if (hdr.kind == MB_FRAME_NOTIFY)
			queue_events(c);
		else
			return MB_EPROTO; /* a reply nobody asked for */
	}
	*ev = c->events[c->ev_head];
	c->ev_head = (c->ev_head + 1) % CLIENT_EVENT_QUEUE;
	c->ev_count--;
	return 0;
}

/* The handshake: challenge, then the proof from the key (given, or derived
 * from the password with the salt and iterations of the challenge). */
static int logon_common(struct mb_client *c, const char *user, const char *password,
			const uint8_t *given_key, uint32_t flags, struct mb_op_reply *reply)
{
	struct mb_op op;
	struct mb_reply rep;
	uint8_t nonce[MB_NONCE_LEN], key[MB_KEY_LEN];
	int rc;

	memset(&op, 0, sizeof(op));
	op.code = MB_OP_LOGON_CHALLENGE;
	op.u.challenge.user = mb_str(user);
	op.u.challenge.flags = flags;
	rc = mb_client_call(c, &op, 1, &rep);
	if (rc)
		return rc;
	if (rep.ops[0].status)
		return rep.ops[0].status;
	memcpy(nonce, rep.ops[0].u.challenge.nonce, MB_NONCE_LEN);
	if (given_key)
		memcpy(key, given_key, MB_KEY_LEN);
	else
		rc = mb_auth_derive(password, rep.ops[0].u.challenge.salt,
				    rep.ops[0].u.challenge.iterations, key);
	if (rc)
		return rc;

	memset(&op, 0, sizeof(op));
	op.code = MB_OP_LOGON;
	op.u.logon.user = mb_str(user);
	op.u.logon.flags = flags;
	rc = mb_auth_proof(key, nonce, user, strlen(user), op.u.logon.proof);
	memset(key, 0, sizeof(key));
	if (rc)
		return rc;
	rc = mb_client_call(c, &op, 1, &rep);
	if (rc)
		return rc;
	if (rep.ops[0].status)
		return rep.ops[0].status;
	c->mailbox = rep.ops[0].u.logon.mailbox;
	if (!(rep.ops[0].u.logon.flags & MB_LOGON_F_LZ77)) {
		mb_lz77_destroy(c->opts.lz77);
		c->opts.lz77 = NULL;
	} else if (!c->opts.lz77 && (rc = mb_lz77_create(MB_LZ77_DEPTH, &c->opts.lz77)) != 0) {
		return rc;
	}
	c->opts.min_bytes = rep.ops[0].u.logon.compress_min;
	if (reply)
		*reply = rep.ops[0];
	return 0;
}

int mb_client_logon_key(struct mb_client *c, const char *user, const uint8_t key[MB_KEY_LEN],
			const uint8_t salt[MB_SALT_LEN], uint32_t flags, struct mb_op_reply *reply)
{
	(void)salt; /* the key already embodies it */
	return logon_common(c, user, NULL, key, flags, reply);
}

int mb_client_logon(struct mb_client *c, const char *user, const char *password, uint32_t flags,
		    struct mb_op_reply *reply)
{
	return logon_common(c, user, password, NULL, flags, reply);
}

uint64_t mb_client_bytes_sent(const struct mb_client *c) { return c->sent; }

uint64_t mb_client_bytes_received(const struct mb_client *c) { return c->received; }

uint32_t mb_client_mailbox(const struct mb_client *c) { return c->mailbox; }

int mb_client_compressing(const struct mb_client *c) { return c->opts.lz77 ? 1 : 0; }

int mb_client_fd(const struct mb_client *c) { return c->fd; }
