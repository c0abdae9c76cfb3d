/* net.c: the store's network side, on the loop thread: the listener,
 * connections, framing, handing a decoded request to its database's worker
 * (queue.c), replies and notifications once it is done, timeouts and
 * shutdown of the connections (see net.h; the loop's state is loop.h).
 *
 * Invariants:
 *  - The loop thread owns every connection; a connection has at most one
 *    request in flight and does not read while it has (so its memory is
 *    bounded by one frame); an idle connection holds no buffers.
 *  - Reads land in one loop-wide buffer; only the bytes of an incomplete
 *    frame are kept per connection.
 *  - A malformed frame header gets an ERROR frame and the connection is
 *    closed; a malformed payload gets an ERROR frame and the connection
 *    stays open; nothing malformed reaches a worker.
 *  - Replies are written only after their request's commits are durable
 *    (pending reached zero); notifications go out with them.
 *  - Exhaustion: open connections stay below the descriptor cap (accept is
 *    paused there and resumes when one closes); a connection not logged on
 *    may send frames of at most prelogon_frame bytes; the bytes of partial
 *    frames of all connections stay within partial_budget (the connection
 *    that passes it is closed); logon, and each frame once begun, must
 *    complete within their timeouts (slowloris).  Each refusal is counted.
 *
 * A connection:
 *
 *   accepted --frame complete--> busy (request at a worker) --done--> reply
 *      ^  |                                                            |
 *      |  +--timeout / bad header / budget spent--> closing <--error---+
 *      +---------------------- reading again <-------------------------+
 *   closing: unlinked at once (from the connections and from its
 *   mailbox's notification list, and never put back: notify_register
 *   refuses it, as a reply whose write fails closes the connection inside
 *   finish_req); the handle is closed when no request of it is in flight
 *   (finish_req closes it then)
 */
#include "config.h"

#include "store/loop.h"
#include "store/groups.h"
#include "store/net.h"
#include "core/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void dump_payload(struct loop_state *ls, char kind, const void *p, size_t len);

#define SLOW_CLIENT_S 60
#define MAX_INFLIGHT_BYTES (512u << 20) /* request payloads in flight, all connections */

/* ---- connections ---- */

void mb__net_inflight_change(struct loop_state *ls, int delta)
{
	double t = mb_now_s();
	ls->inflight_area += ls->inflight * (t - ls->inflight_t);
	ls->inflight_t = t;
	ls->inflight += delta;
}

static void notify_unregister(struct loop_state *ls, struct conn *c)
{
	if (!c->notify_mailbox)
		return;
	if (c->nprev)
		c->nprev->nnext = c->nnext;
	else
		ls->by_mailbox[c->notify_mailbox] = c->nnext;
	if (c->nnext)
		c->nnext->nprev = c->nprev;
	c->nprev = c->nnext = NULL;
	c->notify_mailbox = 0;
}

static void notify_register(struct loop_state *ls, struct conn *c, uint32_t mailbox)
{
	/* a closing connection left its list for good (mb__net_conn_close):
	 * it is freed once its handle closes */
	if (c->closing || c->notify_mailbox == mailbox)
		return;
	notify_unregister(ls, c);
	if (mailbox == 0 || (int)mailbox >= ls->nmailboxes)
		return;
	c->notify_mailbox = mailbox;
	c->nprev = NULL;
	c->nnext = ls->by_mailbox[mailbox];
	if (c->nnext)
		c->nnext->nprev = c;
	ls->by_mailbox[mailbox] = c;
}

static void accept_one(struct mb_store *st);

static void on_closed(uv_handle_t *h)
{
	struct conn *c = h->data;
	struct loop_state *ls = c->st->loop_state;
	struct mb_store *st = c->st;
	ls->partial_bytes -= c->rx_held;
	ls->nopen--;
	mb_buf_destroy(c->rx);
	mb_session_clear(&c->sess);
	free(c);
	/* a descriptor is free again: take the connection libuv holds */
	if (ls->accept_paused && ls->nopen < ls->conn_cap && !ls->stopping) {
		ls->accept_paused = false;
		accept_one(st);
	}
}

/* rx changed: keep the partial-frame accounting and its start time. */
static void rx_account(struct conn *c)
{
	struct loop_state *ls = c->st->loop_state;
	size_t held = c->rx ? mb_buf_len(c->rx) : 0;
	ls->partial_bytes += held;
	ls->partial_bytes -= c->rx_held;
	c->rx_held = held;
	if (!held)
		c->frame_start_ms = 0;
	else if (!c->frame_start_ms)
		c->frame_start_ms = mb_now_ms();
}

void mb__net_conn_close(struct conn *c)
{
	struct loop_state *ls = c->st->loop_state;
	if (c->closing)
		return;
	c->closing = true;
	notify_unregister(ls, c);
	if (c->prev)
		c->prev->next = c->next;
	else
		ls->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	ls->nconns--;
	if (c->reading)
		uv_read_stop((uv_stream_t *)&c->tcp);
	c->reading = false;
	/* a request in flight keeps the memory alive until it returns */
	if (!c->busy)
		uv_close((uv_handle_t *)&c->tcp, on_closed);
}

static void on_written(uv_write_t *w, int status);
static void conn_try_process(struct conn *c);

static void conn_send(struct conn *c, const uint8_t *p, size_t len)
{
	struct loop_state *ls = c->st->loop_state;
	if (c->closing)
		return;
	if (c->out_bytes == 0) {
		/* nothing queued: write straight from the caller's buffer; only
		 * what the socket does not take is copied and queued (a queued
		 * uv_write costs a copy and an epoll_ctl per reply) */
		uv_buf_t b0 = uv_buf_init((char *)p, (unsigned)len);
		int n = uv_try_write((uv_stream_t *)&c->tcp, &b0, 1);
		if (n > 0) {
			ls->bytes_out += (uint64_t)n;
			p += n;
			len -= (size_t)n;
			if (len == 0)
				return;
		} else if (n != UV_EAGAIN && n != UV_ENOSYS) {
			mb__net_conn_close(c);
			return;
		}
	}
	struct wreq *wr = malloc(sizeof(*wr) + len);
	if (!wr) {
		mb__net_conn_close(c);
		return;
	}
	memcpy(wr->data, p, len);
	wr->c = c;
	wr->len = len;
	uv_buf_t b = uv_buf_init((char *)wr->data, (unsigned)len);
	if (c->out_bytes == 0)
		c->stuck_since_ms = mb_now_ms();
	c->out_bytes += len;
	ls->bytes_out += len;
	if (uv_write(&wr->w, (uv_stream_t *)&c->tcp, &b, 1, on_written)) {
		c->out_bytes -= len;
		free(wr);
		mb__net_conn_close(c);
	}
}

static void on_written(uv_write_t *w, int status)
{
	struct wreq *wr = (struct wreq *)w;
	struct conn *c = wr->c;
	c->out_bytes -= wr->len;
	c->stuck_since_ms = mb_now_ms();
	free(wr);
	if (c->closing)
		return;
	if (status < 0) {
		mb__net_conn_close(c);
		return;
	}
	if (c->close_after_write && c->out_bytes == 0) {
		mb__net_conn_close(c);
		return;
	}
	if (!c->busy && !c->reading && c->out_bytes < MAX_OUT_BYTES)
		mb__net_start_reading(c);
}

/* Close once everything queued is written (at once when it already is:
 * conn_send writes synchronously when it can). */
static void close_when_written(struct conn *c)
{
	c->close_after_write = true;
	if (c->out_bytes == 0)
		mb__net_conn_close(c);
}

static void send_error(struct conn *c, uint32_t seq, int code, const char *msg)
{
	struct loop_state *ls = c->st->loop_state;
	mb_buf_reset(ls->enc);
	if (mb_error_encode(ls->enc, ls->tmp, seq, code, msg, NULL) == 0)
		conn_send(c, mb_buf_data(ls->enc), mb_buf_len(ls->enc));
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	struct conn *c = h->data;
	struct loop_state *ls = c->st->loop_state;
	(void)suggested;
	buf->base = (char *)ls->readbuf;
	/* before logon a read takes no more than the pre-logon frame limit,
	 * so a refused frame never costs more than that */
	buf->len = c->busy || c->sess.logged_on || c->st->o.prelogon_frame >= READ_CHUNK
		       ? READ_CHUNK
		       : c->st->o.prelogon_frame + MB_FRAME_HDR;
}

static void dispatch(struct conn *c, const struct mb_frame_hdr *hdr, const uint8_t *frame,
		     size_t total)
{
	struct mb_store *st = c->st;
	struct loop_state *ls = st->loop_state;
	const uint8_t *p;
	size_t len;

	c->last_active_ms = mb_now_ms();
	if (hdr->kind != MB_FRAME_REQUEST) {
		ls->frame_errors++;
		send_error(c, hdr->seq, MB_EPROTO, "only REQUEST frames are accepted");
		return;
	}
	if ((hdr->flags & MB_FRAME_F_LZ77) && !c->compress) {
		/* a small frame can claim megabytes: decompressed only for a
		 * session that asked for compression and was granted it */
		ls->frame_errors++;
		send_error(c, hdr->seq, MB_EPROTO, "compression was not granted to this session");
		return;
	}
	int rc = mb_frame_payload(hdr, frame, ls->zbuf, &p, &len);
	if (rc) {
		ls->frame_errors++;
		send_error(c, hdr->seq, rc, "payload does not decompress");
		return;
	}
	dump_payload(ls, 'Q', p, len);
	if (ls->stopping) {
		send_error(c, hdr->seq, MB_EBUSY, "the store is shutting down");
		return;
	}
	if (ls->inflight_bytes + len > MAX_INFLIGHT_BYTES) {
		send_error(c, hdr->seq, MB_EBUSY, "the store is overloaded: try again");
		return;
	}
	struct req *r = calloc(1, sizeof(*r));
	if (!r || mb_arena_create(MB_REQ_ARENA, &r->arena) ||
	    !(r->payload = malloc(len ? len : 1))) {
		if (r) {
			mb_arena_destroy(r->arena);
			free(r);
		}
		send_error(c, hdr->seq, MB_ENOMEM, NULL);
		return;
	}
	memcpy(r->payload, p, len);
	r->payload_len = len;
	r->wire_in = total;
	r->st = st;
	r->conn = c;
	r->sess = &c->sess;
	r->t_recv = mb_now_ns();
	r->reply_budget = MB_REPLY_BUDGET;
	rc = mb_request_decode(r->payload, len, hdr->seq, r->arena, &r->rq);
	if (!rc) {
		r->res = mb_arena_alloc(r->arena, r->rq.nops * sizeof(struct mb_op_reply));
		r->op_ns = mb_arena_alloc(r->arena, r->rq.nops * sizeof(uint64_t));
		if (!r->res || !r->op_ns)
			rc = MB_ETOOBIG;
	}
	if (rc) {
		ls->frame_errors++;
		send_error(c, hdr->seq, rc, rc == MB_EPROTO ? "malformed request" : NULL);
		free(r->payload);
		mb_arena_destroy(r->arena);
		free(r);
		return;
	}
	atomic_store(&r->pending, 1);
	c->busy = true;
	ls->inflight_bytes += r->payload_len;
	mb__net_inflight_change(ls, 1);
	int db = c->sess.logged_on ? c->sess.db : (int)(c->id % (uint32_t)st->ndb) + 1;
	r->cur_db = db;
	mb_store_enqueue(st, db, r);
}

/* Process whole frames buffered in c->rx while no request is in flight. */
static void conn_try_process(struct conn *c)
{
	struct loop_state *ls = c->st->loop_state;
	while (!c->busy && !c->closing && c->rx && mb_buf_len(c->rx)) {
		struct mb_frame_hdr hdr;
		size_t total;
		uint32_t limit = c->sess.logged_on ? c->st->o.max_frame : c->st->o.prelogon_frame;
		int rc = mb_frame_check(mb_buf_data(c->rx), mb_buf_len(c->rx), limit, &hdr, &total);
		if (rc == MB_EAGAIN)
			break;
		if (rc) {
			ls->frame_errors++;
			if (rc == MB_ETOOBIG && !c->sess.logged_on)
				ls->refused_memory++;
			send_error(c, mb_buf_len(c->rx) >= 12 ? hdr.seq : 0, rc,
				   rc != MB_ETOOBIG    ? "bad frame header"
				   : c->sess.logged_on ? "frame too large"
						       : "frame too large before logon");
			c->close_after_write = true;
			/* the buffer goes now, not when the connection has closed */
			mb_buf_destroy(c->rx);
			c->rx = NULL;
			rx_account(c);
			if (c->reading) {
				uv_read_stop((uv_stream_t *)&c->tcp);
				c->reading = false;
			}
			close_when_written(c);
			return;
		}
		dispatch(c, &hdr, mb_buf_data(c->rx), total);
		mb_buf_consume(c->rx, total);
		c->frame_start_ms = 0; /* what follows is a new frame */
	}
	if (c->rx && mb_buf_len(c->rx) == 0) {
		mb_buf_destroy(c->rx);
		c->rx = NULL;
	}
	rx_account(c);
	/* while a request runs, reading goes on (a client waiting for its
	 * reply sends nothing, and stopping and restarting the read cost two
	 * epoll_ctl calls per request) until bytes of a next frame arrive: then
	 * it stops, so at most one read chunk waits per connection */
	if (c->busy && c->reading && c->rx && mb_buf_len(c->rx)) {
		uv_read_stop((uv_stream_t *)&c->tcp);
		c->reading = false;
	}
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct conn *c = s->data;
	struct loop_state *ls = c->st->loop_state;
	if (n < 0) {
		mb__net_conn_close(c);
		return;
	}
	if (n == 0)
		return;
	ls->bytes_in += (uint64_t)n;
	c->last_active_ms = mb_now_ms();
	if (!c->rx && mb_buf_create(0, &c->rx)) {
		mb__net_conn_close(c);
		return;
	}
	if (mb_buf_append(c->rx, buf->base, (size_t)n)) {
		mb__net_conn_close(c);
		return;
	}
	conn_try_process(c);
	if (!c->closing && c->rx && ls->partial_bytes > ls->partial_budget) {
		/* the budget for partial frames of all connections is spent */
		ls->refused_memory++;
		mb_buf_destroy(c->rx);
		c->rx = NULL;
		rx_account(c);
		send_error(c, 0, MB_EBUSY, "the store's memory budget for partial frames is spent");
		if (c->reading) {
			uv_read_stop((uv_stream_t *)&c->tcp);
			c->reading = false;
		}
		close_when_written(c);
	}
}

void mb__net_start_reading(struct conn *c)
{
	struct loop_state *ls = c->st->loop_state;
	if (c->reading || c->closing || c->close_after_write || ls->dropping)
		return;
	if (uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, on_read) == 0)
		c->reading = true;
	conn_try_process(c);
}

/* Take the connection libuv has accepted.  At the descriptor cap it is
 * left there: libuv then stops polling the listener until uv_accept is
 * called (from on_closed, when a descriptor is free again). */
static void accept_one(struct mb_store *st)
{
	struct loop_state *ls = st->loop_state;
	if (ls->nopen >= ls->conn_cap) {
		if (!ls->accept_paused)
			ls->refused_fdcap++;
		ls->accept_paused = true;
		return;
	}
	struct conn *c = calloc(1, sizeof(*c));
	if (!c)
		return;
	c->st = st;
	c->sess.budget = &st->held;
	uv_tcp_init(&ls->loop, &c->tcp);
	c->tcp.data = c;
	ls->nopen++;
	if (uv_accept((uv_stream_t *)&ls->listener, (uv_stream_t *)&c->tcp)) {
		uv_close((uv_handle_t *)&c->tcp, on_closed);
		return;
	}
	uv_tcp_nodelay(&c->tcp, 1);
	c->id = ls->next_id++;
	c->last_active_ms = c->connected_ms = mb_now_ms();
	c->next = ls->conns;
	if (ls->conns)
		ls->conns->prev = c;
	ls->conns = c;
	ls->nconns++;
	if (ls->nconns > st->o.max_connections || ls->stopping) {
		ls->conns_refused++;
		send_error(c, 0, ls->stopping ? MB_EBUSY : MB_EFULL,
			   ls->stopping ? "the store is shutting down" : "too many connections");
		close_when_written(c);
		return;
	}
	mb__net_start_reading(c);
}

static void on_connection(uv_stream_t *server, int status)
{
	if (status < 0)
		return;
	accept_one(server->data);
}

/* ---- completion ---- */

static void free_req(struct req *r)
{
	free(r->payload);
	mb_arena_destroy(r->arena);
	free(r);
}

/* --dump-payloads: append one payload as it is before compression: kind
 * ('Q' request, 'R' reply, 'N' notification), u32 length little-endian,
 * the bytes.  A failed write stops the dump with one message on stderr; the
 * store goes on.  Nothing when the dump is off. */
static void dump_payload(struct loop_state *ls, char kind, const void *p, size_t len)
{
	if (!ls->dump)
		return;
	uint8_t h[5] = {(uint8_t)kind, (uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16),
			(uint8_t)(len >> 24)};
	if (fwrite(h, 1, sizeof(h), ls->dump) != sizeof(h) ||
	    (len && fwrite(p, 1, len, ls->dump) != len)) {
		fprintf(stderr, "mailbench store: --dump-payloads: %s: the dump stops here\n",
			strerror(errno));
		fclose(ls->dump);
		ls->dump = NULL;
	}
}

static void send_notifications(struct loop_state *ls, struct req *r)
{
	for (int i = 0; i < r->nevents; i++) {
		uint32_t mbx = r->events[i].mailbox;
		if ((int)mbx >= ls->nmailboxes)
			continue;
		struct conn *next;
		for (struct conn *c = ls->by_mailbox[mbx]; c; c = next) {
			/* (a failed send closes c and takes it off the list) */
			next = c->nnext;
			if (c->out_bytes > MAX_OUT_BYTES)
				continue; /* a client that does not read loses events */
			struct mb_notify n = {1, &r->events[i].ev};
			struct mb_codec_opts o = {c->compress ? ls->lz77 : NULL,
						  c->st->o.compress_min, 0};
			mb_buf_reset(ls->enc);
			if (mb_notify_encode(ls->enc, ls->tmp, &n, &o, NULL) == 0) {
				dump_payload(ls, 'N', mb_buf_data(ls->tmp), mb_buf_len(ls->tmp));
				conn_send(c, mb_buf_data(ls->enc), mb_buf_len(ls->enc));
			}
		}
	}
}

static void finish_req(struct req *r)
{
	struct mb_store *st = r->st;
	struct loop_state *ls = st->loop_state;
	struct conn *c = r->conn;
	int cerr = atomic_load(&r->commit_err);

	mb__net_inflight_change(ls, -1);
	ls->inflight_bytes -= r->payload_len;
	ls->rpcs++;
	ls->ops += r->rq.nops;
	for (uint16_t i = 0; i < r->rq.nops; i++) {
		int oi = mb_op_index(r->rq.ops[i].code);
		if (oi < 0)
			continue;
		ls->op_count[oi]++;
		if (r->res[i].status)
			ls->op_errors[oi]++;
		mb_hist_record(ls->op_hist[oi], r->op_ns[i]);
	}
	mb_hist_record(ls->rpc_hist, mb_now_ns() - r->t_recv);
	c->busy = false;
	if (c->closing) {
		uv_close((uv_handle_t *)&c->tcp, on_closed);
		free_req(r);
		if (ls->stopping && ls->inflight == 0)
			uv_stop(&ls->loop);
		return;
	}
	if (cerr) {
		send_error(c, r->rq.seq, cerr,
			   "a commit failed: the writes of this request may be lost");
	} else {
		struct mb_reply rep = {r->rq.seq, r->rq.nops, r->res};
		struct mb_codec_opts o = {(c->sess.flags & MB_LOGON_F_LZ77) ? ls->lz77 : NULL,
					  st->o.compress_min, 0};
		/* the Logon reply itself goes uncompressed: the client learns of
		 * compression from it */
		for (uint16_t i = 0; i < r->rq.nops; i++)
			if (r->rq.ops[i].code == MB_OP_LOGON)
				o.lz77 = NULL;
		mb_buf_reset(ls->enc);
		int rc = mb_reply_encode(ls->enc, ls->tmp, &rep, &o, NULL);
		if (rc) {
			send_error(c, r->rq.seq, rc, "reply too large");
		} else {
			dump_payload(ls, 'R', mb_buf_data(ls->tmp), mb_buf_len(ls->tmp));
			conn_send(c, mb_buf_data(ls->enc), mb_buf_len(ls->enc));
		}
	}
	c->compress = c->sess.logged_on && (c->sess.flags & MB_LOGON_F_LZ77);
	/* notification registration follows the session */
	if (c->sess.logged_on && (c->sess.flags & MB_LOGON_F_NOTIFY))
		notify_register(ls, c, c->sess.mailbox);
	else
		notify_unregister(ls, c);
	send_notifications(ls, r);
	free_req(r);
	if (c->out_bytes < MAX_OUT_BYTES) {
		mb__net_start_reading(c);
	} else if (c->reading) {
		/* replies pile up: read again once they drain (on_written) */
		uv_read_stop((uv_stream_t *)&c->tcp);
		c->reading = false;
	}
	if (ls->stopping && ls->inflight == 0)
		uv_stop(&ls->loop);
}

static void on_delay_closed(uv_handle_t *h)
{
	struct req *r = h->data;
	finish_req(r);
}

static void on_delay(uv_timer_t *t) { uv_close((uv_handle_t *)t, on_delay_closed); }

void mb__net_on_done(uv_async_t *a)
{
	struct mb_store *st = a->data;
	struct loop_state *ls = st->loop_state;
	pthread_mutex_lock(&st->done_mu);
	struct req *r = st->done_head;
	st->done_head = st->done_tail = NULL;
	pthread_mutex_unlock(&st->done_mu);
	while (r) {
		struct req *next = r->next;
		if (r->delay_ms > 0 && !ls->stopping) {
			uv_timer_init(&ls->loop, &r->delay_timer);
			r->delay_timer.data = r;
			uv_timer_start(&r->delay_timer, on_delay, (uint64_t)r->delay_ms, 0);
		} else {
			finish_req(r);
		}
		r = next;
	}
	if (ls->stopping && ls->inflight == 0)
		uv_stop(&ls->loop);
}

/* ---- periodic work ---- */

/* Close a connection that ran out of time, telling it why. */
static void conn_timeout(struct conn *c, const char *why)
{
	struct loop_state *ls = c->st->loop_state;
	ls->refused_timeout++;
	mb_buf_destroy(c->rx);
	c->rx = NULL;
	rx_account(c);
	if (c->reading) {
		uv_read_stop((uv_stream_t *)&c->tcp);
		c->reading = false;
	}
	send_error(c, 0, MB_ETIMEDOUT, why);
	close_when_written(c);
}

void mb__net_on_sweep(uv_timer_t *t)
{
	struct mb_store *st = t->data;
	struct loop_state *ls = st->loop_state;
	uint64_t now = mb_now_ms();
	uint64_t logon_ms = (uint64_t)st->o.logon_timeout_s * 1000;
	uint64_t frame_ms = (uint64_t)st->o.frame_timeout_s * 1000;
	struct conn *c = ls->conns;
	while (c) {
		struct conn *next = c->next;
		if (c->out_bytes && now - c->stuck_since_ms > SLOW_CLIENT_S * 1000ull)
			mb__net_conn_close(c); /* does not read its replies */
		else if (c->close_after_write)
			; /* on its way out */
		else if (!c->busy && !c->sess.logged_on && now - c->connected_ms > logon_ms)
			conn_timeout(c, "logon timeout: no logon within --logon-timeout");
		else if (!c->busy && c->frame_start_ms && now - c->frame_start_ms > frame_ms)
			conn_timeout(c, "frame timeout: a frame's header and body must arrive "
					"within --frame-timeout");
		else if (!c->busy && !c->out_bytes &&
			 now - c->last_active_ms > (uint64_t)st->o.idle_timeout_s * 1000)
			mb__net_conn_close(c);
		c = next;
	}
	mb__groups_check(st, now);
}

int mb__net_listen(struct mb_store *st, char *err, size_t errlen)
{
	struct loop_state *ls = st->loop_state;
	int rc;
	uv_tcp_init(&ls->loop, &ls->listener);
	ls->listener.data = st;
	struct sockaddr_storage sa;
	if (uv_ip4_addr(st->o.listen_host, st->o.port, (struct sockaddr_in *)&sa) &&
	    uv_ip6_addr(st->o.listen_host, st->o.port, (struct sockaddr_in6 *)&sa)) {
		rc = MB_EINVAL;
		snprintf(err, errlen, "--listen: '%s' is not a numeric IPv4 or IPv6 address",
			 st->o.listen_host);
		return rc;
	}
	int urc = uv_tcp_bind(&ls->listener, (struct sockaddr *)&sa, 0);
	if (!urc)
		urc = uv_listen((uv_stream_t *)&ls->listener, 4096, on_connection);
	if (urc) {
		rc = MB_ESYS;
		snprintf(err, errlen, "--listen %s:%d: %s", st->o.listen_host, st->o.port,
			 uv_strerror(urc));
		return rc;
	}
	struct sockaddr_storage bound;
	int blen = sizeof(bound);
	uv_tcp_getsockname(&ls->listener, (struct sockaddr *)&bound, &blen);
	ls->port = bound.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&bound)->sin6_port)
					       : ntohs(((struct sockaddr_in *)&bound)->sin_port);
	return 0;
}

void mb__net_begin_stop(struct mb_store *st)
{
	struct loop_state *ls = st->loop_state;
	if (ls->stopping)
		return;
	ls->stopping = true;
	uv_close((uv_handle_t *)&ls->listener, NULL);
	if (ls->inflight == 0)
		uv_stop(&ls->loop);
}

void mb__net_drain(struct mb_store *st)
{
	struct loop_state *ls = st->loop_state;
	/* stopping: wait for in-flight requests (their replies go out) */
	while (ls->inflight > 0)
		uv_run(&ls->loop, UV_RUN_ONCE);
	/* flush pending writes briefly, then close every connection */
	for (int i = 0; i < 20; i++) {
		bool pending = false;
		for (struct conn *c = ls->conns; c; c = c->next)
			pending |= c->out_bytes > 0;
		if (!pending)
			break;
		uv_run(&ls->loop, UV_RUN_NOWAIT);
		usleep(10000);
	}
	while (ls->conns)
		mb__net_conn_close(ls->conns);
}
