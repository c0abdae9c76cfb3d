/* conn.c: a simulated user's connections: TCP to the target's addresses,
 * reading and framing (the driver's frame/on_message), writing (try-write,
 * then a queued write), TLS (implicit or STARTTLS, through core/tls.c), and
 * closing.  It implements the connection services target.h offers drivers
 * (mb_target_write, _connect, _tls_mode, _starttls, _close).
 *
 * What happens to connection 0 (the mail connection) is the user's
 * business: it is reported up through the shard's event table
 * (struct mb_conn_events, set by user.c), never by calling user.c, so the
 * files stay layered (user.c -> conn.c).  A connection's life:
 *
 *   mb__conn_open -> connect_cb -> [implicit TLS: tls_begin, handshake
 *        |              |           records in read_cb -> tls_input]
 *        |              +-- failed: connection 0 ev->connect_failed,
 *        |                          others ops->connected(MB_ECLOSED)
 *        v
 *   conn_up: ops->connected; connection 0: ev->up (the user logs on)
 *   mb_target_starttls -> tls_begin -> handshake -> ops->secured
 *   read/frame/write error: connection 0 ev->lost, others close
 *   mb__conn_close -> [close_notify, best effort] -> uv_close -> close_cb
 *        (buffers and the TLS session are freed there; connection 0:
 *        ev->closed, others ops->disconnected)
 *
 * bytes_sent / bytes_received count the wire (ciphertext under TLS).  A
 * failed handshake or certificate fails that connection only; the run's
 * first TLS error is kept for the summary (mb_engine_tls_error).
 * Invariant: the read path never frees a connection's receive buffer
 * while it is being parsed (only the close callback does).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "load/user.h"

static int tls_flush(struct mb_conn *c);

static void close_cb(uv_handle_t *h)
{
	struct mb_conn *c = h->data;
	struct mb_user *u = c->u;
	c->open = c->closing = false;
	mb_tls_destroy(c->tls);
	c->tls = NULL;
	c->tls_ready = false;
	mb_buf_destroy(c->rx);
	c->rx = NULL;
	c->rpc_start_ns = 0;
	if (c->idx == 0) {
		u->sh->ev->closed(u);
		return;
	}
	u->t.conn_open &= (uint16_t) ~(1u << c->idx);
	if (mb_user_ops(u)->disconnected && !u->sh->stopping)
		mb_user_ops(u)->disconnected(&u->t, c->idx);
}

void mb__conn_close(struct mb_conn *c)
{
	if (!c || !c->open || c->closing)
		return;
	if (c->tls && c->tls_ready) { /* close_notify: goes out if the socket takes it now */
		mb_tls_shutdown(c->tls);
		(void)tls_flush(c);
	}
	c->closing = true;
	uv_read_stop((uv_stream_t *)&c->tcp);
	uv_close((uv_handle_t *)&c->tcp, close_cb);
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	struct mb_conn *c = h->data;
	(void)suggested;
	buf->base = c->u->sh->rxbuf;
	buf->len = c->u->sh->rxcap;
}

static bool conn_alive(const struct mb_user *u, const struct mb_conn *c)
{
	return u->state != MB_U_CLOSING && c->open && !c->closing;
}

/* The connection cannot go on: connection 0 is the user's, others close. */
static void conn_fail(struct mb_user *u, struct mb_conn *c)
{
	if (c->idx == 0)
		u->sh->ev->lost(u);
	else
		mb__conn_close(c); /* e.g. the submission server said goodbye */
}

/* Frame and hand over plaintext bytes (as read, or out of TLS). */
static void deliver(struct mb_user *u, struct mb_conn *c, const uint8_t *data, size_t len)
{
	const struct mb_target_ops *ops = mb_user_ops(u);
	bool from_rx = false;
	if (c->rx && mb_buf_len(c->rx) > 0) {
		if (mb_buf_append(c->rx, data, len) != 0) {
			u->sh->ev->lost(u);
			return;
		}
		data = mb_buf_data(c->rx);
		len = mb_buf_len(c->rx);
		from_rx = true;
	}
	size_t off = 0;
	while (off < len && conn_alive(u, c)) {
		long m = ops->frame(&u->t, c->idx, data + off, len - off);
		if (m == 0)
			break;
		if (m < 0 || (size_t)m > len - off) {
			u->sh->ev->lost(u);
			break;
		}
		if (ops->on_message(&u->t, c->idx, data + off, (size_t)m) < 0) {
			u->sh->ev->lost(u);
			break;
		}
		off += (size_t)m;
	}
	if (!conn_alive(u, c))
		return; /* close_cb frees rx */
	if (from_rx) {
		mb_buf_consume(c->rx, off);
		if (mb_buf_len(c->rx) == 0) {
			mb_buf_destroy(c->rx); /* keep idle users small */
			c->rx = NULL;
		}
	} else if (off < len) {
		if (!c->rx && mb_buf_create(len - off, &c->rx) != 0) {
			u->sh->ev->lost(u);
			return;
		}
		if (mb_buf_append(c->rx, data + off, len - off) != 0)
			u->sh->ev->lost(u);
	}
}

/* ---- TLS on a connection ------------------------------------------------------ */

/* Keep the run's first TLS error (any loop; once). */
static void tls_note(struct mb_user *u, struct mb_conn *c)
{
	struct mb_engine_shared *es = (struct mb_engine_shared *)mb_user_es(u); /* the error slot */
	if (c->tls && !strcmp(mb_tls_error(c->tls), "no error"))
		return; /* the socket failed, not TLS */
	int none = 0;
	if (!atomic_compare_exchange_strong(&es->tls_err_state, &none, 1))
		return;
	snprintf(es->tls_err, sizeof(es->tls_err), "%s: %s", es->cfg.address[c->idx],
		 c->tls ? mb_tls_error(c->tls) : "cannot start a TLS session (out of memory)");
	atomic_store(&es->tls_err_state, 2);
}

static void conn_up(struct mb_user *u, struct mb_conn *c);

/* The handshake failed (or a record was bad): that connection fails. */
static void tls_failed(struct mb_user *u, struct mb_conn *c)
{
	const struct mb_target_ops *ops = mb_user_ops(u);
	tls_note(u, c);
	if (c->tls_ready) { /* a bad record on an open session */
		conn_fail(u, c);
		return;
	}
	bool implicit = mb_user_es(u)->cfg.tls[c->idx] == MB_TLS_IMPLICIT;
	if (c->idx == 0 && implicit) {
		u->sh->ev->connect_failed(u);
		return;
	}
	if (implicit) {
		if (ops->connected)
			ops->connected(&u->t, c->idx, MB_ETLS);
	} else if (ops->secured) {
		ops->secured(&u->t, c->idx, MB_ETLS);
	}
	conn_fail(u, c);
}

/* Send the ciphertext the session has for the peer. */
static int raw_write(struct mb_conn *c, const void *data, size_t len);

static int tls_flush(struct mb_conn *c)
{
	char buf[16384];
	size_t n;
	while ((n = mb_tls_out_take(c->tls, buf, sizeof(buf))) > 0) {
		int rc = raw_write(c, buf, n);
		if (rc)
			return rc;
	}
	return 0;
}

/* Start a client session on c and send its ClientHello. */
static int tls_begin(struct mb_user *u, struct mb_conn *c)
{
	const struct mb_engine_shared *es = mb_user_es(u);
	if (!es->tls_ctx)
		return MB_ETLS;
	int rc = mb_tls_create(es->tls_ctx, es->tls_host[c->idx], &c->tls);
	if (rc)
		return rc;
	c->tls_ready = false;
	if (mb_tls_step(c->tls) < 0)
		return MB_ETLS;
	return tls_flush(c);
}

/* Ciphertext from the peer: the handshake, then plaintext to deliver. */
static void tls_input(struct mb_user *u, struct mb_conn *c, const uint8_t *p, size_t n)
{
	struct mb_shard *sh = u->sh;
	if (mb_tls_feed(c->tls, p, n) != 0) {
		conn_fail(u, c);
		return;
	}
	if (!c->tls_ready) {
		int rc = mb_tls_step(c->tls);
		if (tls_flush(c) != 0) {
			conn_fail(u, c);
			return;
		}
		if (rc == 0)
			return;
		if (rc < 0) {
			tls_failed(u, c);
			return;
		}
		c->tls_ready = true;
		if (mb_user_es(u)->cfg.tls[c->idx] == MB_TLS_IMPLICIT)
			conn_up(u, c);
		else if (mb_user_ops(u)->secured)
			mb_user_ops(u)->secured(&u->t, c->idx, 0);
		if (!conn_alive(u, c))
			return;
	}
	/* the ciphertext is in the session's BIO now: rxbuf takes the plaintext */
	for (;;) {
		long m = mb_tls_read(c->tls, sh->rxbuf, sh->rxcap);
		if (m == 0)
			break;
		if (m < 0) {
			if (m == MB_ETLS)
				tls_failed(u, c);
			else
				conn_fail(u, c); /* close_notify */
			return;
		}
		deliver(u, c, (const uint8_t *)sh->rxbuf, (size_t)m);
		if (!conn_alive(u, c))
			return;
	}
	if (tls_flush(c) != 0) /* e.g. a TLS 1.3 key update's reply */
		conn_fail(u, c);
}

static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	struct mb_conn *c = s->data;
	struct mb_user *u = c->u;
	if (nread == 0)
		return;
	if (nread < 0) {
		conn_fail(u, c);
		return;
	}
	u->sh->st->n.bytes_received += (uint64_t)nread;
	if (c->tls)
		tls_input(u, c, (const uint8_t *)buf->base, (size_t)nread);
	else
		deliver(u, c, (const uint8_t *)buf->base, (size_t)nread);
}

static void connect_cb(uv_connect_t *req, int status)
{
	struct mb_conn *c = req->data;
	struct mb_user *u = c->u;
	const struct mb_target_ops *ops = mb_user_ops(u);
	free(req);
	if (u->sh->stopping || c->closing)
		return;
	if (c->idx == 0 && u->state != MB_U_CONNECTING)
		return;
	if (status < 0) {
		if (c->idx != 0) {
			if (ops->connected)
				ops->connected(&u->t, c->idx, MB_ECLOSED);
			mb__conn_close(c);
			return;
		}
		u->sh->ev->connect_failed(u);
		return;
	}
	uv_tcp_nodelay(&c->tcp, 1);
	if (uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, read_cb) != 0) {
		conn_fail(u, c);
		return;
	}
	if (mb_user_es(u)->cfg.tls[c->idx] == MB_TLS_IMPLICIT) {
		/* connected once the handshake is done (tls_input) */
		if (tls_begin(u, c) != 0)
			tls_failed(u, c);
		return;
	}
	conn_up(u, c);
}

/* The connection is up (TCP, and TLS if implicit): tell the driver. */
static void conn_up(struct mb_user *u, struct mb_conn *c)
{
	const struct mb_target_ops *ops = mb_user_ops(u);
	u->t.conn_open |= (uint16_t)(1u << c->idx);
	if (ops->connected)
		ops->connected(&u->t, c->idx, 0);
	if (c->idx == 0)
		u->sh->ev->up(u);
}

/* Start a TCP connection to the target's address for c. */
int mb__conn_open(struct mb_user *u, struct mb_conn *c)
{
	struct mb_shard *sh = u->sh;
	uv_connect_t *req = malloc(sizeof(*req));
	if (!req || uv_tcp_init(&sh->loop, &c->tcp) != 0) {
		free(req);
		return MB_ENOMEM;
	}
	c->tcp.data = c;
	c->open = true;
	c->closing = false;
	req->data = c;
	if (uv_tcp_connect(req, &c->tcp, (const struct sockaddr *)&mb_user_es(u)->addr[c->idx],
			   connect_cb) != 0) {
		free(req);
		return MB_ECLOSED;
	}
	return 0;
}

/* ---- services to drivers (target.h) ----------------------------------------------- */

struct wreq {
	uv_write_t req;
	struct mb_conn *c;
	char data[];
};

static void write_cb(uv_write_t *req, int status)
{
	struct wreq *w = (struct wreq *)req;
	struct mb_conn *c = w->c;
	free(w);
	if (status < 0 && status != UV_ECANCELED) {
		if (c->idx == 0)
			c->u->sh->ev->lost(c->u);
		else
			mb__conn_close(c);
	}
}

int mb_target_write(struct mb_tuser *t, int conn, const void *data, size_t len)
{
	struct mb_user *u = mb_user_of(t);
	if (mb_user_no_io(u)) {
		u->sh->st->n.bytes_sent += len;
		return 0;
	}
	struct mb_conn *c = mb_user_conn(u, conn);
	if (!c || !c->open || c->closing)
		return MB_ECLOSED;
	if (!c->tls)
		return raw_write(c, data, len);
	int rc = mb_tls_write(c->tls, data, len);
	if (rc == MB_ETLS)
		tls_note(u, c);
	return rc ? rc : tls_flush(c);
}

/* Bytes onto the socket as they are (counted as sent). */
static int raw_write(struct mb_conn *c, const void *data, size_t len)
{
	c->u->sh->st->n.bytes_sent += len;
	const char *p = data;
	uv_buf_t b = uv_buf_init((char *)p, (unsigned)len);
	int n = uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
	if (n == UV_EAGAIN || n == UV_ENOSYS)
		n = 0;
	if (n < 0)
		return MB_ECLOSED;
	if ((size_t)n == len)
		return 0;
	struct wreq *w = malloc(sizeof(*w) + (len - (size_t)n));
	if (!w)
		return MB_ENOMEM;
	memcpy(w->data, p + n, len - (size_t)n);
	w->c = c;
	b = uv_buf_init(w->data, (unsigned)(len - (size_t)n));
	if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &b, 1, write_cb) != 0) {
		free(w);
		return MB_ECLOSED;
	}
	return 0;
}

int mb_target_connect(struct mb_tuser *t, int conn)
{
	struct mb_user *u = mb_user_of(t);
	struct mb_conn *c = mb_user_conn(u, conn);
	if (conn == 0 || !c || mb_user_no_io(u))
		return MB_EINVAL;
	if (c->open)
		return MB_EBUSY;
	return mb__conn_open(u, c);
}

int mb_target_tls_mode(const struct mb_tuser *t, int conn)
{
	const struct mb_user *u = (const struct mb_user *)t;
	return conn >= 0 && conn < MB_TARGET_CONNS_MAX ? mb_user_es(u)->cfg.tls[conn] : MB_TLS_NONE;
}

int mb_target_starttls(struct mb_tuser *t, int conn)
{
	struct mb_user *u = mb_user_of(t);
	struct mb_conn *c = mb_user_conn(u, conn);
	if (!c || mb_user_no_io(u) || !conn_alive(u, c))
		return MB_ECLOSED;
	if (c->tls)
		return MB_ESTATE;
	int rc = tls_begin(u, c);
	if (rc == MB_ETLS && c->tls)
		tls_note(u, c);
	return rc;
}

void mb_target_close(struct mb_tuser *t, int conn)
{
	if (conn > 0)
		mb__conn_close(mb_user_conn(mb_user_of(t), conn));
}
