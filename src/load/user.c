/* user.c: one simulated user's connection, schedule and RPC driver.
 *
 * The user is a state machine on its shard's libuv loop (see user.h):
 * WAIT -> CONNECTING -> LOGON -> IDLE <-> BUSY, and CLOSING back to WAIT
 * (reconnect with exponential backoff after a refused or lost connection,
 * or a later logon after a logoff).  Actions arrive on sched_timer as a
 * Poisson process (sched.h) and queue (at most MB_PEND_MAX; beyond, an
 * arrival is counted as failed, never dropped silently) until the user is
 * idle and logged on.  Every RPC's round trip and every action's response
 * time go into the shard's measurement set.
 * Invariant: at most one RPC in flight; the read path never frees the
 * user's receive buffer while it is being parsed (only close_cb does). */
#include "load/user.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "load/engine.h"

#define BACKOFF_MIN_S 0.1
#define BACKOFF_MAX_S 10.0
#define KEEPALIVE_NS (300ull * 1000000000ull) /* wall: the store closes idle connections at 30 min */

static uint64_t now_ns(void)
{
	return uv_hrtime();
}

static void close_conn(struct mb_user *u);
static void try_run(struct mb_user *u);
static void finish_task(struct mb_user *u, int rc);

static uint64_t ms_of(double s)
{
	return s <= 0 ? 0 : (uint64_t)(s * 1000.0 + 0.5);
}

/* ---- connection --------------------------------------------------------- */

static void conn_timer_cb(uv_timer_t *t);

static void schedule_reconnect(struct mb_user *u, double delay_s)
{
	u->state = MB_U_WAIT;
	uv_timer_start(&u->conn_timer, conn_timer_cb, ms_of(delay_s), 0);
}

static double backoff_delay(struct mb_user *u)
{
	double d = BACKOFF_MIN_S * pow(2.0, u->backoff < 20 ? u->backoff : 20);
	if (d > BACKOFF_MAX_S)
		d = BACKOFF_MAX_S;
	if (u->backoff < 255)
		u->backoff++;
	return d * (0.5 + mb_rng_unit(&u->rng)); /* jitter: no reconnect storms */
}

static void close_cb(uv_handle_t *h)
{
	struct mb_user *u = h->data;
	struct mb_shard *sh = u->sh;
	u->tcp_open = false;
	mb_buf_destroy(u->rx);
	u->rx = NULL;
	if (sh->stopping) {
		u->state = MB_U_STOPPED;
		return;
	}
	const struct mb_engine_shared *es = mb_shard_shared(sh);
	if (u->logged_off) {
		u->logged_off = false;
		double off = mb_rng_exp(&u->rng, es->sp.logoff_mean_s) / es->sp.accel;
		schedule_reconnect(u, off);
	} else {
		schedule_reconnect(u, backoff_delay(u));
	}
}

static void close_conn(struct mb_user *u)
{
	if (!u->tcp_open || u->state == MB_U_CLOSING)
		return;
	if (u->on) {
		u->on = false;
		atomic_fetch_sub(&u->sh->users_on, 1);
	}
	u->state = MB_U_CLOSING; /* first: finish_task must not close again */
	if (u->task != MB_TASK_NONE)
		finish_task(u, MB_ECLOSED);
	uv_timer_stop(&u->conn_timer);
	uv_read_stop((uv_stream_t *)&u->tcp);
	uv_close((uv_handle_t *)&u->tcp, close_cb);
}

static void lost(struct mb_user *u)
{
	if (u->state == MB_U_CLOSING)
		return;
	u->sh->st->n.connections_lost++;
	u->lost = true;
	close_conn(u);
}

static void start_task(struct mb_user *u, int task);

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	struct mb_user *u = h->data;
	(void)suggested;
	buf->base = u->sh->rxbuf;
	buf->len = u->sh->rxcap;
}

static void handle_frame(struct mb_user *u, const struct mb_frame_hdr *hdr, const uint8_t *frame)
{
	struct mb_shard *sh = u->sh;
	const uint8_t *payload;
	size_t len;
	if (mb_frame_payload(hdr, frame, sh->scratch, &payload, &len) != 0) {
		lost(u);
		return;
	}
	mb_arena_reset(sh->arena);
	if (hdr->kind == MB_FRAME_NOTIFY) {
		struct mb_notify n;
		if (mb_notify_decode(payload, len, sh->arena, &n) != 0) {
			lost(u);
			return;
		}
		for (int i = 0; i < n.n; i++) {
			sh->st->n.notifications++;
			mb_act_event(u, &n.events[i]);
		}
		if (u->state == MB_U_IDLE)
			try_run(u);
		return;
	}
	if (hdr->kind == MB_FRAME_ERROR) {
		sh->st->n.op_errors++;
		lost(u); /* the store closes or no longer trusts the stream */
		return;
	}
	if (hdr->kind != MB_FRAME_REPLY || hdr->seq != u->seq || u->task == MB_TASK_NONE) {
		lost(u);
		return;
	}
	struct mb_reply r;
	if (mb_reply_decode(payload, len, hdr->seq, sh->arena, &r) != 0) {
		lost(u);
		return;
	}
	uint64_t rtt = now_ns() - u->rpc_start_ns;
	mb_hist_record(sh->st->rpc, rtt);
	int oi = mb_op_index(u->first_op);
	if (oi >= 0)
		mb_hist_record(sh->st->rpc_by_op[oi], rtt);
	for (int i = 0; i < r.nops; i++)
		if (r.ops[i].status != 0)
			sh->st->n.op_errors++;
	u->rpc_start_ns = 0;
	int rc = mb_act_next(u, &r);
	if (rc != 1)
		finish_task(u, rc);
}

static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	struct mb_user *u = s->data;
	struct mb_shard *sh = u->sh;
	if (nread == 0)
		return;
	if (nread < 0) {
		lost(u);
		return;
	}
	sh->st->n.bytes_received += (uint64_t)nread;
	const uint8_t *data = (const uint8_t *)buf->base;
	size_t len = (size_t)nread;
	bool from_rx = false;
	if (u->rx && mb_buf_len(u->rx) > 0) {
		if (mb_buf_append(u->rx, data, len) != 0) {
			lost(u);
			return;
		}
		data = mb_buf_data(u->rx);
		len = mb_buf_len(u->rx);
		from_rx = true;
	}
	size_t off = 0;
	while (off < len && u->state != MB_U_CLOSING) {
		struct mb_frame_hdr hdr;
		size_t total = 0;
		int rc = mb_frame_check(data + off, len - off, 0, &hdr, &total);
		if (rc == MB_EAGAIN)
			break;
		if (rc != 0) {
			lost(u);
			break;
		}
		handle_frame(u, &hdr, data + off);
		off += total;
	}
	if (u->state == MB_U_CLOSING)
		return; /* close_cb frees rx */
	if (from_rx) {
		mb_buf_consume(u->rx, off);
		if (mb_buf_len(u->rx) == 0) {
			mb_buf_destroy(u->rx); /* keep idle users small */
			u->rx = NULL;
		}
	} else if (off < len) {
		if (!u->rx && mb_buf_create(len - off, &u->rx) != 0) {
			lost(u);
			return;
		}
		if (mb_buf_append(u->rx, data + off, len - off) != 0)
			lost(u);
	}
}

static void connect_cb(uv_connect_t *req, int status)
{
	struct mb_user *u = req->data;
	free(req);
	if (u->sh->stopping || u->state != MB_U_CONNECTING)
		return;
	if (status < 0) {
		u->sh->st->n.connect_failures++;
		u->lost = true;
		close_conn(u);
		return;
	}
	uv_tcp_nodelay(&u->tcp, 1);
	if (uv_read_start((uv_stream_t *)&u->tcp, alloc_cb, read_cb) != 0) {
		lost(u);
		return;
	}
	u->state = MB_U_LOGON;
	start_task(u, MB_TASK_LOGON);
}

static void do_connect(struct mb_user *u)
{
	struct mb_shard *sh = u->sh;
	const struct mb_engine_shared *es = mb_shard_shared(sh);
	if (!u->started_ns) {
		u->started_ns = now_ns();
		double prev = atomic_load(&sh->started_sum_s);
		atomic_store(&sh->started_sum_s, prev + (double)(u->started_ns - es->t0_ns) / 1e9);
		atomic_fetch_add(&sh->started, 1);
	}
	uv_connect_t *req = malloc(sizeof(*req));
	if (!req || uv_tcp_init(&sh->loop, &u->tcp) != 0) {
		free(req);
		sh->st->n.connect_failures++;
		schedule_reconnect(u, backoff_delay(u));
		return;
	}
	u->tcp.data = u;
	u->tcp_open = true;
	u->state = MB_U_CONNECTING;
	req->data = u;
	if (uv_tcp_connect(req, &u->tcp, (const struct sockaddr *)&es->addr, connect_cb) != 0) {
		free(req);
		sh->st->n.connect_failures++;
		u->lost = true;
		close_conn(u);
	}
}

static void conn_timer_cb(uv_timer_t *t)
{
	struct mb_user *u = t->data;
	struct mb_shard *sh = u->sh;
	if (sh->stopping)
		return;
	if (u->state == MB_U_WAIT) {
		do_connect(u);
		return;
	}
	if (u->state != MB_U_IDLE && u->state != MB_U_BUSY)
		return;
	/* periodic while logged on: cached-mode sync timer and keepalive */
	if (u->rep)
		u->rep->dirty = (1u << u->rep->nfolders) - 1;
	if (u->state == MB_U_IDLE) {
		if (!u->rep && now_ns() - u->last_rpc_ns > KEEPALIVE_NS)
			start_task(u, MB_TASK_KEEPALIVE);
		else
			try_run(u);
	}
}

/* ---- tasks --------------------------------------------------------------- */

static void start_task(struct mb_user *u, int task)
{
	struct mb_shard *sh = u->sh;
	if (!u->ctx) {
		u->ctx = calloc(1, sizeof(*u->ctx));
		if (!u->ctx) {
			u->task = (uint8_t)task;
			finish_task(u, MB_ENOMEM);
			return;
		}
	}
	u->task = (uint8_t)task;
	u->step = 0;
	u->act_start_ns = now_ns();
	if (task != MB_TASK_LOGON)
		u->state = MB_U_BUSY;
	mb_rb_reset(&sh->rb);
	int rc = mb_act_start(u);
	if (rc != 1)
		finish_task(u, rc);
}

static void finish_task(struct mb_user *u, int rc)
{
	struct mb_shard *sh = u->sh;
	const struct mb_engine_shared *es = mb_shard_shared(sh);
	int task = u->task;
	if (task == MB_TASK_NONE)
		return;
	u->task = MB_TASK_NONE;
	free(u->ctx);
	u->ctx = NULL;
	if (task < MB_ACTION_COUNT) {
		if (rc == 0) {
			sh->st->done[task]++;
			mb_hist_record(sh->st->action[task], now_ns() - u->act_start_ns);
		} else {
			sh->st->failed[task]++;
		}
	}
	if (u->state == MB_U_CLOSING)
		return;
	if (task == MB_TASK_LOGON) {
		if (rc != 0) {
			sh->st->n.logon_failures++;
			lost(u);
			return;
		}
		sh->st->n.logons++;
		if (u->ever_on && u->lost)
			sh->st->n.reconnects++;
		u->ever_on = true;
		u->lost = false;
		u->backoff = 0;
		u->state = MB_U_IDLE;
		u->on = true;
		atomic_fetch_add(&sh->users_on, 1);
		double period = u->rep ? es->sync_period_s : (double)KEEPALIVE_NS / 1e9;
		uv_timer_start(&u->conn_timer, conn_timer_cb, ms_of(period), ms_of(period));
		if (u->rep)
			u->rep->dirty = (1u << u->rep->nfolders) - 1;
		try_run(u);
		return;
	}
	if (rc < 0 && (rc == MB_ECLOSED || rc == MB_EPROTO)) {
		lost(u);
		return;
	}
	if (u->logged_off) {
		u->state = MB_U_IDLE;
		close_conn(u);
		return;
	}
	u->state = MB_U_IDLE;
	try_run(u);
}

static void try_run(struct mb_user *u)
{
	if (u->state != MB_U_IDLE || u->task != MB_TASK_NONE || u->sh->stopping)
		return;
	/* cached mode: the full download at first logon comes first */
	if (u->rep && (!u->rep->synced || (u->rep->dirty && u->npend == 0))) {
		if (u->rep->dirty) {
			start_task(u, MB_TASK_SYNC);
			return;
		}
	}
	if (u->npend == 0)
		return;
	int a = u->pend_action[0];
	uint64_t due = u->pend_due[0];
	u->npend--;
	memmove(u->pend_action, u->pend_action + 1, u->npend);
	memmove(u->pend_due, u->pend_due + 1, u->npend * sizeof(u->pend_due[0]));
	uint64_t now = now_ns();
	if (now > due && now - due > MB_LOAD_LATE_NS)
		u->sh->st->late[a]++;
	start_task(u, a);
}

/* ---- schedule ------------------------------------------------------------ */

static void sched_cb(uv_timer_t *t);

static void arm_next(struct mb_user *u)
{
	const struct mb_engine_shared *es = mb_shard_shared(u->sh);
	double gap;
	enum mb_action_id a;
	if (mb_sched_next(&es->sp, &u->rng, &gap, &a) != 0)
		return;
	u->next_due_ns += (uint64_t)(gap * 1e9);
	u->next_action = (uint8_t)a;
	uint64_t now = now_ns();
	uint64_t wait = u->next_due_ns > now ? (u->next_due_ns - now) / 1000000u : 0;
	uv_timer_start(&u->sched_timer, sched_cb, wait, 0);
}

static void sched_cb(uv_timer_t *t)
{
	struct mb_user *u = t->data;
	struct mb_shard *sh = u->sh;
	if (sh->stopping)
		return;
	uint64_t now = now_ns();
	mb_hist_record(sh->st->timer_late, now > u->next_due_ns ? now - u->next_due_ns : 0);
	int a = u->next_action;
	sh->st->scheduled[a]++;
	if (u->npend < MB_PEND_MAX) {
		u->pend_action[u->npend] = (uint8_t)a;
		u->pend_due[u->npend] = u->next_due_ns;
		u->npend++;
	} else {
		sh->st->failed[a]++;
		sh->st->n.overruns++;
	}
	arm_next(u);
	try_run(u);
}

/* ---- public ---------------------------------------------------------------- */

void mb_user_init(struct mb_shard *sh, struct mb_user *u, uint32_t idx)
{
	const struct mb_engine_shared *es = mb_shard_shared(sh);
	memset(u, 0, sizeof(*u));
	u->sh = sh;
	u->idx = idx;
	u->mailbox = idx + 1;
	/* a well-mixed, independent stream per user: splitmix64 streams whose
	 * states differ by a small multiple of its increment would overlap */
	uint64_t t = es->seed * 0xD1B54A32D192ED03ULL + idx;
	u->rng = mb_rng_next(&t);
	u->rng ^= mb_rng_next(&t) << 1;
	u->task = MB_TASK_NONE;
	u->state = MB_U_WAIT;
	uv_timer_init(&sh->loop, &u->sched_timer);
	uv_timer_init(&sh->loop, &u->conn_timer);
	u->sched_timer.data = u;
	u->conn_timer.data = u;
	u->tcp.data = u;
}

void mb_user_begin(struct mb_user *u, double delay_s)
{
	/* the schedule starts with the user's logon attempt */
	u->next_due_ns = now_ns() + (uint64_t)(delay_s * 1e9);
	arm_next(u);
	schedule_reconnect(u, delay_s);
}

void mb_user_stop(struct mb_user *u)
{
	uv_timer_stop(&u->sched_timer);
	uv_timer_stop(&u->conn_timer);
	/* what the stop cuts short is counted, never dropped silently */
	for (int i = 0; i < u->npend; i++)
		u->sh->st->cut[u->pend_action[i]]++;
	u->npend = 0;
	if (u->task < MB_ACTION_COUNT)
		u->sh->st->cut[u->task]++;
	if (u->task != MB_TASK_NONE) {
		free(u->ctx);
		u->ctx = NULL;
		u->task = MB_TASK_NONE;
	}
	if (u->tcp_open && u->state != MB_U_CLOSING) {
		uv_read_stop((uv_stream_t *)&u->tcp);
		u->state = MB_U_CLOSING;
		uv_close((uv_handle_t *)&u->tcp, close_cb);
	}
	uv_close((uv_handle_t *)&u->sched_timer, NULL);
	uv_close((uv_handle_t *)&u->conn_timer, NULL);
}

struct wreq {
	uv_write_t req;
	char data[];
};

static void write_cb(uv_write_t *req, int status)
{
	struct mb_user *u = req->data;
	free(req);
	if (status < 0 && status != UV_ECANCELED)
		lost(u);
}

int mb_user_send(struct mb_user *u)
{
	struct mb_shard *sh = u->sh;
	struct mb_rb *rb = &sh->rb;
	if (rb->nops == 0)
		return MB_EINVAL;
	struct mb_request req = {.seq = ++u->seq, .nops = (uint16_t)rb->nops, .ops = rb->ops};
	struct mb_codec_opts opts = {.lz4 = u->lz4, .min_bytes = u->compress_min, .max_frame = 0};
	mb_buf_reset(sh->enc);
	size_t wire = 0;
	int rc = mb_request_encode(sh->enc, sh->enc_tmp, &req, &opts, &wire);
	if (rc != 0) {
		mb_rb_reset(rb);
		return rc;
	}
	sh->st->n.rpcs++;
	sh->st->n.ops += (uint64_t)rb->nops;
	sh->st->n.bytes_sent += wire;
	for (int i = 0; i < rb->nops; i++) {
		int oi = mb_op_index(rb->ops[i].code);
		if (oi >= 0)
			sh->st->op_count[oi]++;
	}
	u->first_op = rb->ops[0].code;
	mb_rb_reset(rb);
	u->rpc_start_ns = now_ns();
	u->last_rpc_ns = u->rpc_start_ns;
	const char *p = (const char *)mb_buf_data(sh->enc);
	size_t len = mb_buf_len(sh->enc);
	uv_buf_t b = uv_buf_init((char *)p, (unsigned)len);
	int n = uv_try_write((uv_stream_t *)&u->tcp, &b, 1);
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
	w->req.data = u;
	b = uv_buf_init(w->data, (unsigned)(len - (size_t)n));
	if (uv_write(&w->req, (uv_stream_t *)&u->tcp, &b, 1, write_cb) != 0) {
		free(w);
		return MB_ECLOSED;
	}
	return 0;
}

/* O_APPEND: each write lands whole; done before the next op */
static void ack_write(int fd, const char *buf, size_t len)
{
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, buf + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
}

/* One ack line into BUF (a zero id is never logged); flushes when nearly full. */
static void ack_add(int fd, char *buf, size_t cap, size_t *len, char kind, uint32_t mailbox,
		    uint64_t mid)
{
	if (!mid)
		return;
	*len += (size_t)snprintf(buf + *len, cap - *len, "%c %u %llu\n", kind, mailbox,
				 (unsigned long long)mid);
	if (*len > cap - 64) {
		ack_write(fd, buf, *len);
		*len = 0;
	}
}

void mb_user_ack(struct mb_user *u, char kind, uint32_t mailbox, const uint64_t *mids, int n)
{
	const struct mb_engine_shared *es = mb_shard_shared(u->sh);
	if (n <= 0)
		return;
	if (kind == '+')
		u->sh->st->n.acks_create += (uint64_t)n;
	else if (kind == '-')
		u->sh->st->n.acks_delete += (uint64_t)n;
	if (es->ack_fd < 0)
		return;
	char buf[4096];
	size_t len = 0;
	for (int i = 0; i < n; i++)
		ack_add(es->ack_fd, buf, sizeof(buf), &len, kind, mailbox, mids[i]);
	ack_write(es->ack_fd, buf, len);
}

void mb_user_ack_deliveries(struct mb_user *u, const struct mb_op_reply *submit)
{
	/* the sender's copy in Sent Items, then each recipient's copy: one write */
	const struct mb_engine_shared *es = mb_shard_shared(u->sh);
	u->sh->st->n.acks_create += 1 + (uint64_t)submit->u.submit.n;
	if (es->ack_fd < 0)
		return;
	char buf[4096];
	size_t len = 0;
	ack_add(es->ack_fd, buf, sizeof(buf), &len, '+', u->mailbox, submit->u.submit.mid);
	for (uint32_t i = 0; i < submit->u.submit.n; i++)
		ack_add(es->ack_fd, buf, sizeof(buf), &len, '+', submit->u.submit.dl[i].mailbox,
			submit->u.submit.dl[i].mid);
	ack_write(es->ack_fd, buf, len);
}
