/* server.c: the store's network side and threads: libuv loop, connections,
 * per-database owner threads, the done queue, notifications, counters on
 * the stats stream, shutdown; plus the scaling rules and the probe.
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
 *  - Shutdown: stop accepting, answer new requests MB_EBUSY, wait for the
 *    in-flight ones, stop the workers, close databases, checkpoint, close.
 */
#include "config.h"

#include "store/store_int.h"
#include "core/error.h"
#include "core/hist.h"
#include "core/sampler.h"
#include "core/stats.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK (256u << 10)
#define MAX_OUT_BYTES (1u << 20)     /* queued replies before we stop reading */
#define SLOW_CLIENT_S 60
#define SWEEP_MS 5000
#define MAX_INFLIGHT_BYTES (512u << 20) /* request payloads in flight, all connections */

struct conn {
	uv_tcp_t tcp;
	struct mb_store *st;
	struct conn *prev, *next;       /* all connections */
	struct conn *nprev, *nnext;     /* per-mailbox notification list */
	uint32_t notify_mailbox;        /* registered under this mailbox, 0 none */
	struct mb_buf *rx;              /* partial frame bytes, NULL when none */
	struct session sess;
	bool busy;                      /* a request in flight */
	bool closing;
	bool reading;
	bool close_after_write;
	bool lz4;                       /* compression granted (loop's copy) */
	size_t out_bytes;
	uint64_t last_active_ms;
	uint64_t stuck_since_ms;        /* out_bytes > 0 since */
	uint32_t id;
};

struct wreq {
	uv_write_t w;
	struct conn *c;
	size_t len;
	uint8_t data[];
};

struct loop_state {
	uv_loop_t loop;
	uv_tcp_t listener;
	uv_async_t done_async;
	uv_async_t stop_async;
	uv_timer_t stats_timer;
	uv_timer_t sweep_timer;
	uv_signal_t sigterm, sigint;
	bool signals;
	bool stopping;
	int port;
	struct conn *conns;
	int nconns;
	uint32_t next_id;
	struct conn **by_mailbox;       /* notification lists, index mailbox */
	int nmailboxes;
	uint8_t *readbuf;
	struct mb_buf *enc, *tmp, *zbuf;
	/* counters owned by the loop */
	uint64_t bytes_in, bytes_out;
	uint64_t rpcs, ops;
	uint64_t op_count[MB_OP_COUNT];
	uint64_t op_errors[MB_OP_COUNT];
	uint64_t frame_errors, conns_refused;
	int inflight;
	size_t inflight_bytes;
	double inflight_area;           /* sum of inflight x seconds */
	double inflight_t;              /* time of the last change */
	struct mb_hist *op_hist[MB_OP_COUNT];
	struct mb_hist *rpc_hist;
	/* stats stream */
	struct mb_stats_writer *stats;
	struct mb_proc_sample ps_prev;
	double t_prev;
	uint64_t prev_bytes, prev_rpcs, prev_ops, prev_ddb, prev_drcpt;
	struct mb_io_stats io_prev;
	struct mb_cache_stats cache_prev;
	uint64_t prev_log_writes;
};

static uint64_t now_ms(void)
{
	return mb_now_ns() / 1000000;
}

/* ---- scaling ---- */

static int scaled_count(int n, double scale)
{
	if (n <= 0)
		return 0;
	int v = (int)(n * scale + 0.5);
	return v < 1 ? 1 : v;
}

void mb_store_scaled_mailbox(const struct mb_scenario *sc, double scale, struct mb_topo_info *out)
{
	out->inbox_messages = scaled_count(sc->inbox_messages, scale);
	out->deleted_items_messages = scaled_count(sc->deleted_items_messages, scale);
	out->new_folders = sc->new_folders;
	out->messages_per_folder = scaled_count(sc->messages_per_folder, scale);
	out->calendar_appointments = scaled_count(sc->calendar_appointments, scale);
	out->contacts = scaled_count(sc->contacts, scale);
	out->avg_message_kb = sc->avg_message_kb;
}

int mb_store_scaled_cache_mb(const struct mb_scenario *sc, int users, double scale)
{
	double mb = (double)sc->db_cache_mb * scale * (double)users /
		    (double)(sc->users > 0 ? sc->users : users);
	int v = (int)(mb + 0.5);
	return v < MB_STORE_MIN_CACHE_MB ? MB_STORE_MIN_CACHE_MB : v;
}

void mb_store_opts_init(struct mb_store_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->listen_host = "127.0.0.1";
	o->stats_fd = -1;
	o->compression = 1;
	o->compress_min = 256;
	o->max_connections = 20000;
	o->max_frame = MB_PROTO_MAX_FRAME;
	o->idle_timeout_s = 1800;
	o->auth_delay_ms = 250;
}

/* ---- worker threads ---- */

void mb_store_enqueue(struct mb_store *st, int db, struct req *r)
{
	struct dbw *w = &st->w[db - 1];
	r->next = NULL;
	pthread_mutex_lock(&w->mu);
	if (w->tail)
		w->tail->next = r;
	else
		w->head = r;
	w->tail = r;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

void mb_req_release(struct req *r)
{
	if (atomic_fetch_sub(&r->pending, 1) != 1)
		return;
	struct mb_store *st = r->st;
	struct loop_state *ls = st->loop_state;
	r->next = NULL;
	pthread_mutex_lock(&st->done_mu);
	if (st->done_tail)
		st->done_tail->next = r;
	else
		st->done_head = r;
	st->done_tail = r;
	pthread_mutex_unlock(&st->done_mu);
	uv_async_send(&ls->done_async);
}

static void *worker_main(void *arg)
{
	struct dbw *w = arg;
	for (;;) {
		pthread_mutex_lock(&w->mu);
		while (!w->head && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		struct req *r = w->head;
		if (!r) {
			pthread_mutex_unlock(&w->mu);
			break;
		}
		w->head = r->next;
		if (!w->head)
			w->tail = NULL;
		pthread_mutex_unlock(&w->mu);
		mb_ops_execute(w, r);
	}
	return NULL;
}

/* ---- connections ---- */

static void inflight_change(struct loop_state *ls, int delta)
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
	if (c->notify_mailbox == mailbox)
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

static void on_closed(uv_handle_t *h)
{
	struct conn *c = h->data;
	mb_buf_destroy(c->rx);
	mb_session_clear(&c->sess);
	free(c);
}

static void conn_close(struct conn *c)
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
static void start_reading(struct conn *c);

static void conn_send(struct conn *c, const uint8_t *p, size_t len)
{
	struct loop_state *ls = c->st->loop_state;
	if (c->closing)
		return;
	struct wreq *wr = malloc(sizeof(*wr) + len);
	if (!wr) {
		conn_close(c);
		return;
	}
	memcpy(wr->data, p, len);
	wr->c = c;
	wr->len = len;
	uv_buf_t b = uv_buf_init((char *)wr->data, (unsigned)len);
	if (c->out_bytes == 0)
		c->stuck_since_ms = now_ms();
	c->out_bytes += len;
	ls->bytes_out += len;
	if (uv_write(&wr->w, (uv_stream_t *)&c->tcp, &b, 1, on_written)) {
		c->out_bytes -= len;
		free(wr);
		conn_close(c);
	}
}

static void on_written(uv_write_t *w, int status)
{
	struct wreq *wr = (struct wreq *)w;
	struct conn *c = wr->c;
	c->out_bytes -= wr->len;
	c->stuck_since_ms = now_ms();
	free(wr);
	if (c->closing)
		return;
	if (status < 0) {
		conn_close(c);
		return;
	}
	if (c->close_after_write && c->out_bytes == 0) {
		conn_close(c);
		return;
	}
	if (!c->busy && !c->reading && c->out_bytes < MAX_OUT_BYTES)
		start_reading(c);
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
	buf->len = READ_CHUNK;
}

static void dispatch(struct conn *c, const struct mb_frame_hdr *hdr, const uint8_t *frame,
		     size_t total)
{
	struct mb_store *st = c->st;
	struct loop_state *ls = st->loop_state;
	const uint8_t *p;
	size_t len;

	c->last_active_ms = now_ms();
	if (hdr->kind != MB_FRAME_REQUEST) {
		ls->frame_errors++;
		send_error(c, hdr->seq, MB_EPROTO, "only REQUEST frames are accepted");
		return;
	}
	int rc = mb_frame_payload(hdr, frame, ls->zbuf, &p, &len);
	if (rc) {
		ls->frame_errors++;
		send_error(c, hdr->seq, rc, "payload does not decompress");
		return;
	}
	if (ls->stopping) {
		send_error(c, hdr->seq, MB_EBUSY, "the store is shutting down");
		return;
	}
	if (ls->inflight_bytes + len > MAX_INFLIGHT_BYTES) {
		send_error(c, hdr->seq, MB_EBUSY, "the store is overloaded: try again");
		return;
	}
	struct req *r = calloc(1, sizeof(*r));
	if (!r || mb_arena_create(MB_REQ_ARENA, &r->arena) || !(r->payload = malloc(len ? len : 1))) {
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
	inflight_change(ls, 1);
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
		int rc = mb_frame_check(mb_buf_data(c->rx), mb_buf_len(c->rx), c->st->o.max_frame, &hdr,
					&total);
		if (rc == MB_EAGAIN)
			break;
		if (rc) {
			ls->frame_errors++;
			send_error(c, mb_buf_len(c->rx) >= 12 ? hdr.seq : 0, rc,
				   rc == MB_ETOOBIG ? "frame too large" : "bad frame header");
			c->close_after_write = true;
			mb_buf_reset(c->rx);
			if (c->reading) {
				uv_read_stop((uv_stream_t *)&c->tcp);
				c->reading = false;
			}
			return;
		}
		dispatch(c, &hdr, mb_buf_data(c->rx), total);
		mb_buf_consume(c->rx, total);
	}
	if (c->rx && mb_buf_len(c->rx) == 0) {
		mb_buf_destroy(c->rx);
		c->rx = NULL;
	}
	if (c->busy && c->reading) {
		uv_read_stop((uv_stream_t *)&c->tcp);
		c->reading = false;
	}
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct conn *c = s->data;
	struct loop_state *ls = c->st->loop_state;
	if (n < 0) {
		conn_close(c);
		return;
	}
	if (n == 0)
		return;
	ls->bytes_in += (uint64_t)n;
	c->last_active_ms = now_ms();
	if (!c->rx && mb_buf_create(0, &c->rx)) {
		conn_close(c);
		return;
	}
	if (mb_buf_append(c->rx, buf->base, (size_t)n)) {
		conn_close(c);
		return;
	}
	conn_try_process(c);
}

static void start_reading(struct conn *c)
{
	if (c->reading || c->closing || c->close_after_write)
		return;
	if (uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, on_read) == 0)
		c->reading = true;
	conn_try_process(c);
}

static void on_connection(uv_stream_t *server, int status)
{
	struct mb_store *st = server->data;
	struct loop_state *ls = st->loop_state;
	if (status < 0)
		return;
	struct conn *c = calloc(1, sizeof(*c));
	if (!c)
		return;
	c->st = st;
	uv_tcp_init(&ls->loop, &c->tcp);
	c->tcp.data = c;
	if (uv_accept(server, (uv_stream_t *)&c->tcp)) {
		uv_close((uv_handle_t *)&c->tcp, on_closed);
		return;
	}
	uv_tcp_nodelay(&c->tcp, 1);
	c->id = ls->next_id++;
	c->last_active_ms = now_ms();
	c->next = ls->conns;
	if (ls->conns)
		ls->conns->prev = c;
	ls->conns = c;
	ls->nconns++;
	if (ls->nconns > st->o.max_connections || ls->stopping) {
		ls->conns_refused++;
		send_error(c, 0, ls->stopping ? MB_EBUSY : MB_EFULL,
			   ls->stopping ? "the store is shutting down" : "too many connections");
		c->close_after_write = true;
		return;
	}
	start_reading(c);
}

/* ---- completion ---- */

static void free_req(struct req *r)
{
	free(r->payload);
	mb_arena_destroy(r->arena);
	free(r);
}

static void send_notifications(struct loop_state *ls, struct req *r)
{
	for (int i = 0; i < r->nevents; i++) {
		uint32_t mbx = r->events[i].mailbox;
		if ((int)mbx >= ls->nmailboxes)
			continue;
		for (struct conn *c = ls->by_mailbox[mbx]; c; c = c->nnext) {
			if (c->out_bytes > MAX_OUT_BYTES)
				continue; /* a client that does not read loses events */
			struct mb_notify n = {1, &r->events[i].ev};
			struct mb_codec_opts o = {c->lz4, c->st->o.compress_min, 0};
			mb_buf_reset(ls->enc);
			if (mb_notify_encode(ls->enc, ls->tmp, &n, &o, NULL) == 0)
				conn_send(c, mb_buf_data(ls->enc), mb_buf_len(ls->enc));
		}
	}
}

static void finish_req(struct req *r)
{
	struct mb_store *st = r->st;
	struct loop_state *ls = st->loop_state;
	struct conn *c = r->conn;
	int cerr = atomic_load(&r->commit_err);

	inflight_change(ls, -1);
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
		send_error(c, r->rq.seq, cerr, "a commit failed: the writes of this request may be lost");
	} else {
		struct mb_reply rep = {r->rq.seq, r->rq.nops, r->res};
		struct mb_codec_opts o = {(c->sess.flags & MB_LOGON_F_LZ4) != 0, st->o.compress_min,
					  0};
		/* the Logon reply itself goes uncompressed: the client learns of
		 * compression from it */
		for (uint16_t i = 0; i < r->rq.nops; i++)
			if (r->rq.ops[i].code == MB_OP_LOGON)
				o.lz4 = false;
		mb_buf_reset(ls->enc);
		int rc = mb_reply_encode(ls->enc, ls->tmp, &rep, &o, NULL);
		if (rc)
			send_error(c, r->rq.seq, rc, "reply too large");
		else
			conn_send(c, mb_buf_data(ls->enc), mb_buf_len(ls->enc));
	}
	c->lz4 = c->sess.logged_on && (c->sess.flags & MB_LOGON_F_LZ4);
	/* notification registration follows the session */
	if (c->sess.logged_on && (c->sess.flags & MB_LOGON_F_NOTIFY))
		notify_register(ls, c, c->sess.mailbox);
	else
		notify_unregister(ls, c);
	send_notifications(ls, r);
	free_req(r);
	if (c->out_bytes < MAX_OUT_BYTES)
		start_reading(c);
	if (ls->stopping && ls->inflight == 0)
		uv_stop(&ls->loop);
}

static void on_delay_closed(uv_handle_t *h)
{
	struct req *r = h->data;
	finish_req(r);
}

static void on_delay(uv_timer_t *t)
{
	uv_close((uv_handle_t *)t, on_delay_closed);
}

static void on_done(uv_async_t *a)
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

static void on_sweep(uv_timer_t *t)
{
	struct mb_store *st = t->data;
	struct loop_state *ls = st->loop_state;
	uint64_t now = now_ms();
	struct conn *c = ls->conns;
	while (c) {
		struct conn *next = c->next;
		if (c->out_bytes && now - c->stuck_since_ms > SLOW_CLIENT_S * 1000ull)
			conn_close(c); /* does not read its replies */
		else if (!c->busy && !c->out_bytes &&
			 now - c->last_active_ms > (uint64_t)st->o.idle_timeout_s * 1000)
			conn_close(c);
		c = next;
	}
}

static void on_stats(uv_timer_t *t)
{
	struct mb_store *st = t->data;
	struct loop_state *ls = st->loop_state;
	double value[MB_COUNTER_COUNT];
	bool has[MB_COUNTER_COUNT];
	memset(has, 0, sizeof(has));
	memset(value, 0, sizeof(value));

	double tn = mb_now_s();
	double dt = tn - ls->t_prev;
	if (dt <= 0)
		return;
#define SET(id, v)                                                             \
	do {                                                                   \
		value[MB_C_##id] = (v);                                        \
		has[MB_C_##id] = true;                                         \
	} while (0)
	struct mb_proc_sample ps;
	if (mb_proc_sample(0, &ps) == 0) {
		struct mb_proc_rates pr;
		if (ls->ps_prev.t > 0 && mb_proc_rates(&ls->ps_prev, &ps, &pr) == 0) {
			SET(PROCESSOR_PCT, pr.cpu_pct);
			SET(CONTEXT_SWITCHES, pr.cs_per_s);
		}
		SET(STORE_VIRTUAL_MB, (double)ps.vsize_bytes / 1048576.0);
		SET(STORE_RSS_MB, (double)ps.rss_bytes / 1048576.0);
		ls->ps_prev = ps;
	}
	uint64_t ddb = atomic_load(&st->c.deliveries_db);
	uint64_t drc = atomic_load(&st->c.deliveries_rcpt);
	SET(LOCAL_DELIVERY, (double)(ddb - ls->prev_ddb) / dt);
	SET(DELIVERY_RECIPIENTS, (double)(drc - ls->prev_drcpt) / dt);
	ls->prev_ddb = ddb;
	ls->prev_drcpt = drc;
	uint64_t bytes = ls->bytes_in + ls->bytes_out;
	SET(NETWORK, (double)(bytes - ls->prev_bytes) * 8.0 / 1000.0 / dt);
	ls->prev_bytes = bytes;
	SET(RPC_OPS, (double)(ls->ops - ls->prev_ops) / dt);
	SET(RPC_PER_S, (double)(ls->rpcs - ls->prev_rpcs) / dt);
	ls->prev_ops = ls->ops;
	ls->prev_rpcs = ls->rpcs;
	inflight_change(ls, 0);
	SET(RPC_REQUESTS, ls->inflight_area / dt);
	ls->inflight_area = 0;

	struct mb_io_stats io;
	mb_io_stats_get(st->io, &io);
	const struct mb_io_kind_stats *d = &io.kind[MB_FILE_DB], *dp = &ls->io_prev.kind[MB_FILE_DB];
	const struct mb_io_kind_stats *l = &io.kind[MB_FILE_LOG], *lp = &ls->io_prev.kind[MB_FILE_LOG];
	SET(DB_READS, (double)(d->reads - dp->reads) / dt);
	SET(DB_WRITES, (double)(d->writes - dp->writes) / dt);
	SET(DB_TRANSFERS, (double)(d->reads + d->writes - dp->reads - dp->writes) / dt);
	SET(LOG_WRITES, (double)(l->writes - lp->writes) / dt);
	SET(DISK_MB, (double)(d->read_bytes + d->write_bytes + l->read_bytes + l->write_bytes -
			      dp->read_bytes - dp->write_bytes - lp->read_bytes - lp->write_bytes) /
			     1048576.0 / dt);
	ls->io_prev = io;
	struct mb_cache_stats cs;
	mb_cache_stats_get(st->cache, &cs);
	SET(DB_CACHE_MB, (double)cs.bytes_in_use / 1048576.0);
	uint64_t req = cs.hits + cs.misses - ls->cache_prev.hits - ls->cache_prev.misses;
	if (req)
		SET(DB_CACHE_HIT_PCT, 100.0 * (double)(cs.hits - ls->cache_prev.hits) / (double)req);
	ls->cache_prev = cs;
	double depth = 0;
	uint64_t commits = 0, lw = 0;
	for (int g = 0; g < st->nsg; g++) {
		struct mb_sg_stats ss;
		mb_sg_stats_get(st->sgs[g], &ss);
		depth += (double)ss.checkpoint_depth;
		commits += ss.commits;
		lw += ss.log_writes;
	}
	SET(CHECKPOINT_DEPTH_MB, depth / 1048576.0);
#undef SET
	ls->t_prev = tn;

	if (!ls->stats)
		return;
	json_t *h = json_object();
	json_t *x = json_object();
	json_t *opc = json_object();
	char *enc;
	if (mb_hist_count(ls->rpc_hist) && mb_hist_encode(ls->rpc_hist, &enc) == 0) {
		json_object_set_new(h, "store_rpc", json_string(enc));
		free(enc);
	}
	for (int i = 0; i < MB_OP_COUNT; i++) {
		const char *name = mb_op_name(mb_op_code_at(i));
		json_object_set_new(opc, name, json_pack("{s:I,s:I}", "n", (json_int_t)ls->op_count[i],
							 "errors", (json_int_t)ls->op_errors[i]));
		if (mb_hist_count(ls->op_hist[i]) && mb_hist_encode(ls->op_hist[i], &enc) == 0) {
			char key[80];
			snprintf(key, sizeof(key), "store_op_%s", name);
			json_object_set_new(h, key, json_string(enc));
			free(enc);
		}
		mb_hist_reset(ls->op_hist[i]);
	}
	mb_hist_reset(ls->rpc_hist);
	json_object_set_new(x, "ops", opc);
	const struct mb_topo_info *ti = mb_topology_info(st->topo);
	json_object_set_new(
		x, "store",
		json_pack("{s:i,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:s,s:b,s:i,s:i,s:i}", "connections",
			  ls->nconns, "rpcs_total", (json_int_t)ls->rpcs, "ops_total",
			  (json_int_t)ls->ops, "frame_errors", (json_int_t)ls->frame_errors,
			  "commits", (json_int_t)commits, "log_writes_total", (json_int_t)lw,
			  "deliveries_total", (json_int_t)ddb, "scale", ti->scale, "scenario",
			  ti->scenario, "compression", st->o.compression ? 1 : 0, "databases",
			  st->ndb, "storage_groups", st->nsg, "cache_limit_mb",
			  (int)(cs.bytes_limit >> 20)));
	if (mb_stats_write(ls->stats, dt, value, has, h, x) == MB_ECLOSED) {
		mb_stats_writer_destroy(ls->stats);
		ls->stats = NULL;
	}
	json_decref(h);
	json_decref(x);
}

/* ---- lifecycle ---- */

static void begin_stop(struct mb_store *st)
{
	struct loop_state *ls = st->loop_state;
	if (ls->stopping)
		return;
	ls->stopping = true;
	uv_close((uv_handle_t *)&ls->listener, NULL);
	if (ls->inflight == 0)
		uv_stop(&ls->loop);
}

static void on_stop_async(uv_async_t *a)
{
	begin_stop(a->data);
}

static void on_signal(uv_signal_t *s, int sig)
{
	(void)sig;
	begin_stop(s->data);
}

void mb_store_stop(struct mb_store *s)
{
	struct loop_state *ls = s->loop_state;
	uv_async_send(&ls->stop_async);
}

void mb_store_delivery_counts(struct mb_store *s, uint64_t *per_db, uint64_t *per_rcpt)
{
	*per_db = atomic_load(&s->c.deliveries_db);
	*per_rcpt = atomic_load(&s->c.deliveries_rcpt);
}

int mb_store_port(const struct mb_store *s)
{
	const struct loop_state *ls = s->loop_state;
	return ls->port;
}

static void close_storage(struct mb_store *st, int *rc_out)
{
	int rc = 0;
	for (int i = 0; i < st->ndb; i++) {
		struct dbw *w = &st->w[i];
		if (w->schema)
			mb_schema_close(w->schema);
		if (w->db) {
			int r2 = mb_db_close(w->db);
			rc = rc ? rc : r2;
		}
		w->schema = NULL;
		w->db = NULL;
		mb_buf_destroy(w->tmp);
		w->tmp = NULL;
		mb_val_free(&w->val);
		mb_val_free(&w->val2);
	}
	for (int g = 0; g < st->nsg; g++) {
		if (!st->sgs[g])
			continue;
		int r2 = mb_sg_checkpoint(st->sgs[g]);
		rc = rc ? rc : r2;
		r2 = mb_sg_close(st->sgs[g]);
		rc = rc ? rc : r2;
		st->sgs[g] = NULL;
	}
	if (rc_out)
		*rc_out = rc;
}

int mb_store_create(const struct mb_store_opts *o, struct mb_store **out, char *err, size_t errlen)
{
	struct mb_store *st = calloc(1, sizeof(*st));
	struct loop_state *ls = calloc(1, sizeof(*ls));
	char path[4200];
	int rc;

	if (!st || !ls) {
		free(st);
		free(ls);
		snprintf(err, errlen, "out of memory");
		return MB_ENOMEM;
	}
	st->o = *o;
	if (!st->o.listen_host)
		st->o.listen_host = "127.0.0.1";
	if (!st->o.max_frame || st->o.max_frame > MB_PROTO_MAX_FRAME)
		st->o.max_frame = MB_PROTO_MAX_FRAME;
	st->loop_state = ls;
	pthread_mutex_init(&st->done_mu, NULL);
	snprintf(path, sizeof(path), "%s/topology.json", o->data);
	rc = mb_topology_read(path, &st->topo, err, errlen);
	if (rc) {
		if (rc == MB_ENOTFOUND)
			snprintf(err, errlen, "%s: not found (run `mailbench init` first)", path);
		goto fail;
	}
	const struct mb_topo_info *ti = mb_topology_info(st->topo);
	int cache_mb = o->cache_mb > 0 ? o->cache_mb : ti->db_cache_mb;
	rc = mb_io_create(NULL, &st->io);
	if (!rc)
		rc = mb_cache_create((uint64_t)cache_mb << 20, &st->cache);
	if (rc) {
		snprintf(err, errlen, "cannot create the database cache (%d MB): %s", cache_mb,
			 mb_strerror(rc));
		goto fail;
	}
	st->nsg = ti->storage_groups;
	st->ndb = ti->databases;
	st->sgs = calloc((size_t)st->nsg, sizeof(*st->sgs));
	st->w = calloc((size_t)st->ndb, sizeof(*st->w));
	if (!st->sgs || !st->w) {
		rc = MB_ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (int g = 1; g <= st->nsg; g++) {
		char dir[4200], logdir[4200];
		struct mb_sg_options so;
		snprintf(dir, sizeof(dir), "%s/sg%d", o->data, g);
		mb_topology_log_dir(o->data, ti->log_dir, g, logdir, sizeof(logdir));
		mb_sg_options_init(&so);
		so.dir = dir;
		so.log_dir = logdir;
		so.io = st->io;
		so.cache = st->cache;
		rc = mb_sg_open(&so, &st->sgs[g - 1]);
		if (rc) {
			snprintf(err, errlen, "%s: cannot open the storage group: %s", dir,
				 mb_strerror(rc));
			goto fail;
		}
	}
	for (int d = 1; d <= st->ndb; d++) {
		struct dbw *w = &st->w[d - 1];
		char name[32];
		w->st = st;
		w->index = d;
		w->sg = mb_topology_db_sg(st->topo, d);
		snprintf(name, sizeof(name), "db%02d.mdb", d);
		rc = mb_db_open(st->sgs[w->sg - 1], name, 0, 0, &w->db);
		if (!rc)
			rc = mb_schema_open(w->db, false, &w->schema);
		if (!rc)
			rc = mb_buf_create(1 << 16, &w->tmp);
		if (rc) {
			snprintf(err, errlen, "%s/sg%d/%s: cannot open: %s", o->data, w->sg, name,
				 w->db ? mb_db_errmsg(w->db) : mb_strerror(rc));
			goto fail;
		}
		pthread_mutex_init(&w->mu, NULL);
		pthread_cond_init(&w->cv, NULL);
	}

	/* the loop */
	uv_loop_init(&ls->loop);
	ls->readbuf = malloc(READ_CHUNK);
	ls->nmailboxes = mb_topology_user_count(st->topo) + 1;
	ls->by_mailbox = calloc((size_t)ls->nmailboxes, sizeof(*ls->by_mailbox));
	if (!ls->readbuf || !ls->by_mailbox || mb_buf_create(1 << 16, &ls->enc) ||
	    mb_buf_create(1 << 16, &ls->tmp) || mb_buf_create(0, &ls->zbuf) ||
	    mb_hist_create(&ls->rpc_hist)) {
		rc = MB_ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto fail_loop;
	}
	for (int i = 0; i < MB_OP_COUNT; i++)
		if (mb_hist_create(&ls->op_hist[i])) {
			rc = MB_ENOMEM;
			snprintf(err, errlen, "out of memory");
			goto fail_loop;
		}
	uv_tcp_init(&ls->loop, &ls->listener);
	ls->listener.data = st;
	struct sockaddr_storage sa;
	if (uv_ip4_addr(st->o.listen_host, o->port, (struct sockaddr_in *)&sa) &&
	    uv_ip6_addr(st->o.listen_host, o->port, (struct sockaddr_in6 *)&sa)) {
		rc = MB_EINVAL;
		snprintf(err, errlen, "--listen: '%s' is not a numeric IPv4 or IPv6 address",
			 st->o.listen_host);
		goto fail_loop;
	}
	int urc = uv_tcp_bind(&ls->listener, (struct sockaddr *)&sa, 0);
	if (!urc)
		urc = uv_listen((uv_stream_t *)&ls->listener, 4096, on_connection);
	if (urc) {
		rc = MB_ESYS;
		snprintf(err, errlen, "--listen %s:%d: %s", st->o.listen_host, o->port,
			 uv_strerror(urc));
		goto fail_loop;
	}
	struct sockaddr_storage bound;
	int blen = sizeof(bound);
	uv_tcp_getsockname(&ls->listener, (struct sockaddr *)&bound, &blen);
	ls->port = bound.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&bound)->sin6_port)
					       : ntohs(((struct sockaddr_in *)&bound)->sin_port);
	uv_async_init(&ls->loop, &ls->done_async, on_done);
	ls->done_async.data = st;
	uv_async_init(&ls->loop, &ls->stop_async, on_stop_async);
	ls->stop_async.data = st;
	uv_timer_init(&ls->loop, &ls->stats_timer);
	ls->stats_timer.data = st;
	uv_timer_init(&ls->loop, &ls->sweep_timer);
	ls->sweep_timer.data = st;
	if (o->install_signals) {
		uv_signal_init(&ls->loop, &ls->sigterm);
		uv_signal_init(&ls->loop, &ls->sigint);
		ls->sigterm.data = ls->sigint.data = st;
		uv_signal_start(&ls->sigterm, on_signal, SIGTERM);
		uv_signal_start(&ls->sigint, on_signal, SIGINT);
		ls->signals = true;
	}
	if (o->stats_fd >= 0 && mb_stats_writer_create(o->stats_fd, "store", &ls->stats)) {
		rc = MB_EINVAL;
		snprintf(err, errlen, "--stats-fd %d: not writable", o->stats_fd);
		goto fail_loop;
	}
	for (int d = 0; d < st->ndb; d++)
		pthread_create(&st->w[d].th, NULL, worker_main, &st->w[d]);
	*out = st;
	return 0;

fail_loop:
	uv_walk(&ls->loop, (uv_walk_cb)uv_close, NULL);
	uv_run(&ls->loop, UV_RUN_DEFAULT);
	uv_loop_close(&ls->loop);
fail:
	if (st->w)
		close_storage(st, NULL);
	mb_store_destroy(st);
	return rc ? rc : MB_EIO;
}

static void close_walk(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (uv_is_closing(h))
		return;
	if (h->type == UV_TCP && h->data && h->data != arg) {
		struct conn *c = h->data;
		if (c->st == arg)
			return; /* connections are closed through conn_close */
	}
	uv_close(h, NULL);
}

int mb_store_run(struct mb_store *st)
{
	struct loop_state *ls = st->loop_state;
	int rc = 0;

	ls->t_prev = mb_now_s();
	ls->inflight_t = ls->t_prev;
	mb_proc_sample(0, &ls->ps_prev);
	mb_io_stats_get(st->io, &ls->io_prev);
	mb_cache_stats_get(st->cache, &ls->cache_prev);
	uv_timer_start(&ls->stats_timer, on_stats, 1000, 1000);
	uv_timer_start(&ls->sweep_timer, on_sweep, SWEEP_MS, SWEEP_MS);
	uv_run(&ls->loop, UV_RUN_DEFAULT);

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
		conn_close(ls->conns);
	/* workers */
	for (int d = 0; d < st->ndb; d++) {
		struct dbw *w = &st->w[d];
		pthread_mutex_lock(&w->mu);
		w->stop = true;
		pthread_cond_signal(&w->cv);
		pthread_mutex_unlock(&w->mu);
	}
	for (int d = 0; d < st->ndb; d++)
		pthread_join(st->w[d].th, NULL);
	on_stats(&ls->stats_timer); /* the last window, before the groups close */
	close_storage(st, &rc);
	if (ls->stats) {
		mb_stats_write_end(ls->stats);
		mb_stats_writer_destroy(ls->stats);
		ls->stats = NULL;
	}
	uv_walk(&ls->loop, close_walk, st);
	uv_run(&ls->loop, UV_RUN_DEFAULT);
	uv_loop_close(&ls->loop);
	return rc;
}

void mb_store_destroy(struct mb_store *st)
{
	if (!st)
		return;
	struct loop_state *ls = st->loop_state;
	if (st->w) {
		for (int d = 0; d < st->ndb; d++) {
			if (st->w[d].index) {
				pthread_mutex_destroy(&st->w[d].mu);
				pthread_cond_destroy(&st->w[d].cv);
			}
		}
	}
	free(st->w);
	free(st->sgs);
	if (st->cache)
		mb_cache_destroy(st->cache);
	if (st->io)
		mb_io_destroy(st->io);
	mb_topology_destroy(st->topo);
	pthread_mutex_destroy(&st->done_mu);
	if (ls) {
		free(ls->readbuf);
		free(ls->by_mailbox);
		mb_buf_destroy(ls->enc);
		mb_buf_destroy(ls->tmp);
		mb_buf_destroy(ls->zbuf);
		mb_hist_destroy(ls->rpc_hist);
		for (int i = 0; i < MB_OP_COUNT; i++)
			mb_hist_destroy(ls->op_hist[i]);
		if (ls->stats)
			mb_stats_writer_destroy(ls->stats);
		free(ls);
	}
	free(st);
}

/* ---- probe ---- */

struct mb_store_probe {
	struct mb_topology *topo;
	struct mb_cache *cache;
	int nsg, ndb;
	struct mb_sg **sgs;
	struct mb_db **dbs;
	struct mb_schema **schemas;
};

void mb_store_probe_close(struct mb_store_probe *p)
{
	if (!p)
		return;
	for (int d = 0; d < p->ndb; d++) {
		if (p->schemas && p->schemas[d])
			mb_schema_close(p->schemas[d]);
		if (p->dbs && p->dbs[d])
			mb_db_close(p->dbs[d]);
	}
	for (int g = 0; g < p->nsg; g++)
		if (p->sgs && p->sgs[g])
			mb_sg_close(p->sgs[g]);
	if (p->cache)
		mb_cache_destroy(p->cache);
	mb_topology_destroy(p->topo);
	free(p->sgs);
	free(p->dbs);
	free(p->schemas);
	free(p);
}

int mb_store_probe_open(const char *data, struct mb_store_probe **out, char *err, size_t errlen)
{
	struct mb_store_probe *p = calloc(1, sizeof(*p));
	char path[4200];
	int rc;
	if (!p)
		return MB_ENOMEM;
	snprintf(path, sizeof(path), "%s/topology.json", data);
	rc = mb_topology_read(path, &p->topo, err, errlen);
	if (rc)
		goto fail;
	const struct mb_topo_info *ti = mb_topology_info(p->topo);
	p->nsg = ti->storage_groups;
	p->ndb = ti->databases;
	p->sgs = calloc((size_t)p->nsg, sizeof(*p->sgs));
	p->dbs = calloc((size_t)p->ndb, sizeof(*p->dbs));
	p->schemas = calloc((size_t)p->ndb, sizeof(*p->schemas));
	rc = !p->sgs || !p->dbs || !p->schemas ? MB_ENOMEM : mb_cache_create(64u << 20, &p->cache);
	for (int g = 1; g <= p->nsg && !rc; g++) {
		char dir[4200], logdir[4200];
		struct mb_sg_options so;
		snprintf(dir, sizeof(dir), "%s/sg%d", data, g);
		mb_topology_log_dir(data, ti->log_dir, g, logdir, sizeof(logdir));
		mb_sg_options_init(&so);
		so.dir = dir;
		so.log_dir = logdir;
		so.cache = p->cache;
		rc = mb_sg_open(&so, &p->sgs[g - 1]);
		if (rc)
			snprintf(err, errlen, "%s: %s", dir, mb_strerror(rc));
	}
	for (int d = 1; d <= p->ndb && !rc; d++) {
		char name[32];
		snprintf(name, sizeof(name), "db%02d.mdb", d);
		rc = mb_db_open(p->sgs[mb_topology_db_sg(p->topo, d) - 1], name, 0, 0, &p->dbs[d - 1]);
		if (!rc)
			rc = mb_schema_open(p->dbs[d - 1], false, &p->schemas[d - 1]);
		if (rc)
			snprintf(err, errlen, "%s: %s: %s", data, name, mb_strerror(rc));
	}
	if (rc)
		goto fail;
	*out = p;
	return 0;
fail:
	mb_store_probe_close(p);
	return rc;
}

int mb_store_probe_exists(struct mb_store_probe *p, uint32_t mailbox, uint64_t mid, bool *exists)
{
	const struct mb_topo_user *u = mb_topology_user(p->topo, (int)mailbox - 1);
	if (!u)
		return MB_ENOTFOUND;
	return mb_schema_msg_exists(p->schemas[u->db - 1], mailbox, mid, exists);
}
