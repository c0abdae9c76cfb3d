/* user.c: one simulated user: its connections, its schedule, and the run
 * of its actions as steps of the behaviour model through the driver.
 *
 * The user is a state machine on its shard's libuv loop (states drawn in
 * user.h): WAIT -> CONNECTING -> LOGON -> IDLE <-> BUSY, and CLOSING back
 * to WAIT (reconnect with exponential backoff and jitter after a refused
 * or lost connection, or a later logon after a logoff).  Actions arrive on
 * the user's timer as a Poisson process (sched.h) and queue (at most
 * MB_PEND_MAX; beyond, an arrival is counted as failed, never dropped
 * silently) until the user is idle and logged on.  An action runs as
 * behave.c's steps; each step goes to the driver (ops->step) and its
 * result comes back at once or through mb_target_step_done().  Every
 * request's round trip and every action's response time go into the
 * shard's measurement set.  This file also implements the services
 * target.h offers drivers (writing, connections, measurement, ack log).
 * TLS (target.h, "TLS"): a connection with a session (c->tls) feeds the
 * ciphertext it reads to core/tls.c and frames the plaintext that comes
 * out; writes are encrypted and the ciphertext goes out through the same
 * write path as plain bytes (bytes_sent/bytes_received count the wire).
 *   connect_cb -> [implicit: tls_begin -> handshake records in read_cb]
 *              -> conn_up (ops->connected; connection 0: the logon)
 *   mb_target_starttls -> tls_begin -> handshake -> ops->secured
 *   conn_close -> [close_notify, best effort] -> uv_close -> close_cb
 *                 (the session is freed there)
 * A failed handshake or certificate fails that connection only (connection
 * 0: a connect failure, then the usual backoff); the run's first TLS error
 * is kept for the summary (mb_engine_tls_error).
 * Invariant: the read path never frees a connection's receive buffer
 * while it is being parsed (only the close callback does).
 */
#include "load/user.h"

#include <errno.h>
#include <stdatomic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/error.h"

#define BACKOFF_MIN_S 0.1
#define BACKOFF_MAX_S 10.0
#define KEEPALIVE_NS                                                                               \
	(300ull * 1000000000ull) /* wall: the store closes idle connections at 30 min */

static const struct mb_engine_shared *ES(const struct mb_user *u) { return u->sh->es; }

static const struct mb_target_ops *OPS(const struct mb_user *u) { return u->sh->es->ops; }

static bool no_io(const struct mb_user *u) { return (OPS(u)->flags & MB_TARGET_F_NO_IO) != 0; }

/* Cached mode with a driver that syncs: periodic sync instead of keepalive. */
static bool syncs(const struct mb_user *u) { return ES(u)->env.cached && OPS(u)->sync_due; }

static void close_conn(struct mb_user *u);
static void try_run(struct mb_user *u);
static void finish_task(struct mb_user *u, int rc);
static void start_task(struct mb_user *u, int task);

static uint64_t ms_of(double s) { return s <= 0 ? 0 : (uint64_t)(s * 1000.0 + 0.5); }

/* ---- connections ------------------------------------------------------------ */

/* One timer per user (libuv's timer heap holds one node per user): it
 * fires at the earlier of the next action's arrival and the connection
 * deadline, and timer_cb runs whichever are due. */
static void timer_cb(uv_timer_t *t);

static void rearm(struct mb_user *u)
{
	if (u->sh->stopping)
		return;
	uint64_t due = UINT64_MAX;
	if (u->sched_on)
		due = u->next_due_ns;
	if (u->conn_due_ns && u->conn_due_ns < due)
		due = u->conn_due_ns;
	if (u->wake_ns && u->wake_ns < due)
		due = u->wake_ns;
	if (due == UINT64_MAX) {
		uv_timer_stop(&u->timer);
		return;
	}
	uint64_t now = mb_now_ns();
	uint64_t wait = due > now ? (due - now) / 1000000u : 0;
	/* at least 1 ms: a timer due at once would run again in the same pass
	 * of libuv's timer loop, and a saturated loop would never stop */
	uv_timer_start(&u->timer, timer_cb, wait ? wait : 1, 0);
}

/* The connection deadline in delay_ms, then every period_ms (0: once). */
static void set_conn_timer(struct mb_user *u, uint64_t delay_ms, uint64_t period_ms)
{
	u->conn_due_ns = mb_now_ns() + delay_ms * 1000000u;
	u->conn_period_ms = (uint32_t)period_ms;
	rearm(u);
}

static void stop_conn_timer(struct mb_user *u)
{
	u->conn_due_ns = 0;
	u->conn_period_ms = 0;
	rearm(u);
}

static void schedule_reconnect(struct mb_user *u, double delay_s)
{
	u->state = MB_U_WAIT;
	set_conn_timer(u, ms_of(delay_s), 0);
}

static double backoff_delay(struct mb_user *u)
{
	double d = BACKOFF_MIN_S * pow(2.0, u->backoff < 20 ? u->backoff : 20);
	if (d > BACKOFF_MAX_S)
		d = BACKOFF_MAX_S;
	if (u->backoff < 255)
		u->backoff++;
	return d * (0.5 + mb_rng_unit(&u->t.rng)); /* jitter: no reconnect storms */
}

/* The mail connection is closed: decide when to log on again. */
static void session_closed(struct mb_user *u)
{
	struct mb_shard *sh = u->sh;
	if (OPS(u)->disconnected)
		OPS(u)->disconnected(&u->t, 0);
	u->t.conn_open &= (uint16_t)~1u;
	if (sh->stopping) {
		u->state = MB_U_STOPPED;
		return;
	}
	if (u->logged_off) {
		u->logged_off = false;
		double off = mb_rng_exp(&u->t.rng, ES(u)->sp.logoff_mean_s) / ES(u)->sp.accel;
		schedule_reconnect(u, off);
	} else {
		schedule_reconnect(u, backoff_delay(u));
	}
}

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
		session_closed(u);
		return;
	}
	u->t.conn_open &= (uint16_t) ~(1u << c->idx);
	if (OPS(u)->disconnected && !u->sh->stopping)
		OPS(u)->disconnected(&u->t, c->idx);
}

static int tls_flush(struct mb_conn *c);

static void conn_close(struct mb_conn *c)
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

static void close_conn(struct mb_user *u)
{
	if (u->state == MB_U_CLOSING || u->state == MB_U_WAIT || u->state == MB_U_STOPPED)
		return;
	if (u->on) {
		u->on = false;
		atomic_fetch_sub(&u->sh->users_on, 1);
	}
	u->state = MB_U_CLOSING; /* first: finish_task must not close again */
	if (u->task != MB_TASK_NONE)
		finish_task(u, MB_ECLOSED);
	stop_conn_timer(u);
	for (int i = 1; i < OPS(u)->conns; i++)
		conn_close(mb_user_conn(u, i));
	if (no_io(u))
		session_closed(u);
	else
		conn_close(&u->c0);
}

static void lost(struct mb_user *u)
{
	if (u->state == MB_U_CLOSING || u->state == MB_U_WAIT || u->state == MB_U_STOPPED)
		return;
	u->sh->st->n.connections_lost++;
	u->lost = true;
	close_conn(u);
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
		lost(u);
	else
		conn_close(c); /* e.g. the submission server said goodbye */
}

/* Frame and hand over plaintext bytes (as read, or out of TLS). */
static void deliver(struct mb_user *u, struct mb_conn *c, const uint8_t *data, size_t len)
{
	const struct mb_target_ops *ops = OPS(u);
	bool from_rx = false;
	if (c->rx && mb_buf_len(c->rx) > 0) {
		if (mb_buf_append(c->rx, data, len) != 0) {
			lost(u);
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
			lost(u);
			break;
		}
		if (ops->on_message(&u->t, c->idx, data + off, (size_t)m) < 0) {
			lost(u);
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
			lost(u);
			return;
		}
		if (mb_buf_append(c->rx, data + off, len - off) != 0)
			lost(u);
	}
}

/* ---- TLS on a connection ------------------------------------------------------ */

/* Keep the run's first TLS error (any loop; once). */
static void tls_note(struct mb_user *u, struct mb_conn *c)
{
	struct mb_engine_shared *es = (struct mb_engine_shared *)ES(u); /* the error slot */
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
	const struct mb_target_ops *ops = OPS(u);
	tls_note(u, c);
	if (c->tls_ready) { /* a bad record on an open session */
		conn_fail(u, c);
		return;
	}
	bool implicit = ES(u)->cfg.tls[c->idx] == MB_TLS_IMPLICIT;
	if (c->idx == 0 && implicit) {
		u->sh->st->n.connect_failures++;
		u->lost = true;
		close_conn(u);
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
	const struct mb_engine_shared *es = ES(u);
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
		if (ES(u)->cfg.tls[c->idx] == MB_TLS_IMPLICIT)
			conn_up(u, c);
		else if (OPS(u)->secured)
			OPS(u)->secured(&u->t, c->idx, 0);
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
	const struct mb_target_ops *ops = OPS(u);
	free(req);
	if (u->sh->stopping || c->closing)
		return;
	if (c->idx == 0 && u->state != MB_U_CONNECTING)
		return;
	if (status < 0) {
		if (c->idx != 0) {
			if (ops->connected)
				ops->connected(&u->t, c->idx, MB_ECLOSED);
			conn_close(c);
			return;
		}
		u->sh->st->n.connect_failures++;
		u->lost = true;
		close_conn(u);
		return;
	}
	uv_tcp_nodelay(&c->tcp, 1);
	if (uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, read_cb) != 0) {
		conn_fail(u, c);
		return;
	}
	if (ES(u)->cfg.tls[c->idx] == MB_TLS_IMPLICIT) {
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
	const struct mb_target_ops *ops = OPS(u);
	u->t.conn_open |= (uint16_t)(1u << c->idx);
	if (ops->connected)
		ops->connected(&u->t, c->idx, 0);
	if (c->idx == 0 && u->state == MB_U_CONNECTING) {
		u->state = MB_U_LOGON;
		start_task(u, MB_TASK_LOGON);
	}
}

/* Start a TCP connection to the target's address for c. */
static int tcp_open(struct mb_user *u, struct mb_conn *c)
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
	if (uv_tcp_connect(req, &c->tcp, (const struct sockaddr *)&ES(u)->addr[c->idx],
			   connect_cb) != 0) {
		free(req);
		return MB_ECLOSED;
	}
	return 0;
}

static void do_connect(struct mb_user *u)
{
	struct mb_shard *sh = u->sh;
	if (!u->started_ns) {
		u->started_ns = mb_now_ns();
		double prev = atomic_load(&sh->started_sum_s);
		atomic_store(&sh->started_sum_s,
			     prev + (double)(u->started_ns - ES(u)->t0_ns) / 1e9);
		atomic_fetch_add(&sh->started, 1);
	}
	if (no_io(u)) {
		u->t.conn_open |= 1;
		u->state = MB_U_LOGON;
		start_task(u, MB_TASK_LOGON);
		return;
	}
	int rc = tcp_open(u, &u->c0);
	if (rc == MB_ENOMEM) {
		sh->st->n.connect_failures++;
		schedule_reconnect(u, backoff_delay(u));
		return;
	}
	u->state = MB_U_CONNECTING;
	if (rc != 0) {
		sh->st->n.connect_failures++;
		u->lost = true;
		close_conn(u);
	}
}

static void conn_due(struct mb_user *u)
{
	if (u->sh->stopping)
		return;
	if (u->state == MB_U_WAIT) {
		do_connect(u);
		return;
	}
	if (u->state != MB_U_IDLE && u->state != MB_U_BUSY)
		return;
	/* periodic while logged on: cached-mode sync timer and keepalive */
	if (syncs(u) && OPS(u)->tick)
		OPS(u)->tick(&u->t);
	if (u->state == MB_U_IDLE) {
		if (!syncs(u) && mb_now_ns() - u->last_rpc_ns > KEEPALIVE_NS)
			start_task(u, MB_TASK_KEEPALIVE);
		else
			try_run(u);
	}
}

/* ---- actions and tasks: steps through the driver -------------------------------- */

/* Feed res (NULL at the start) to the model and run its steps until one
 * is in flight or the action ends. */
static void run_steps(struct mb_user *u, const struct mb_step_result *res)
{
	struct mb_shard *sh = u->sh;
	const struct mb_target_ops *ops = OPS(u);
	struct mb_step_result r;
	for (;;) {
		sh->benv.now_ms = mb_wall_ms();
		struct mb_behave_self me = {
		    .idx = u->t.idx, .nfolders = u->t.nfolders, .rng = &u->t.rng};
		struct mb_step step;
		int rc = mb_behave_next(u->bh, &sh->benv, &me, res, &step);
		sh->st->n.local_reads += u->bh->local_reads;
		u->bh->local_reads = 0;
		if (rc <= 0) {
			finish_task(u, rc);
			return;
		}
		memset(&r, 0, sizeof(r));
		u->step_kind = step.kind;
		u->in_step = true;
		rc = ops->step(&u->t, &step, &r);
		u->in_step = false;
		if (u->task == MB_TASK_NONE || u->state == MB_U_CLOSING || u->state == MB_U_WAIT)
			return; /* the step lost the connection under us */
		if (rc == 1)
			return;
		if (rc < 0) {
			finish_task(u, rc);
			return;
		}
		if (step.kind == MB_STEP_LOGON)
			u->t.nfolders = (uint16_t)r.count;
		res = &r;
	}
}

/* A behaviour state from the shard's free list (allocated only while
 * the number of actions running at once reaches a new high). */
static struct mb_behave *bh_get(struct mb_shard *sh)
{
	if (sh->nbh_free > 0)
		return sh->bh_free[--sh->nbh_free];
	return malloc(sizeof(struct mb_behave));
}

static void bh_put(struct mb_shard *sh, struct mb_behave *b)
{
	if (!b)
		return;
	if (sh->nbh_free == sh->bh_cap) {
		int nc = sh->bh_cap ? sh->bh_cap * 2 : 16;
		struct mb_behave **n = realloc(sh->bh_free, (size_t)nc * sizeof(*n));
		if (!n) {
			free(b);
			return;
		}
		sh->bh_free = n;
		sh->bh_cap = nc;
	}
	sh->bh_free[sh->nbh_free++] = b;
}

void mb_user_pool_free(struct mb_shard *sh)
{
	for (int i = 0; i < sh->nbh_free; i++)
		free(sh->bh_free[i]);
	free(sh->bh_free);
	sh->bh_free = NULL;
	sh->nbh_free = sh->bh_cap = 0;
}

static void start_task(struct mb_user *u, int task)
{
	if (!u->bh) {
		u->bh = bh_get(u->sh);
		if (!u->bh) {
			u->task = (uint8_t)task;
			finish_task(u, MB_ENOMEM);
			return;
		}
	}
	u->task = (uint8_t)task;
	u->act_start_ns = mb_now_ns();
	if (task != MB_TASK_LOGON)
		u->state = MB_U_BUSY;
	mb_behave_begin(u->bh, task);
	run_steps(u, NULL);
}

/* The process's first failed action, said once on stderr (the summary
 * counts failures; this says why one happened). */
static atomic_int first_failure_said;
static void say_first_failure(const struct mb_user *u, int action, const char *why)
{
	if (atomic_exchange(&first_failure_said, 1))
		return;
	fprintf(stderr, "mailbench load: the first failed action: %s of user %d: %s\n",
		mb_actions[action].label, u->t.idx + 1, why);
}

static void finish_task(struct mb_user *u, int rc)
{
	struct mb_shard *sh = u->sh;
	int task = u->task;
	if (task == MB_TASK_NONE)
		return;
	u->task = MB_TASK_NONE;
	u->step_kind = MB_STEP_NONE;
	bh_put(sh, u->bh);
	u->bh = NULL;
	if (task < MB_ACTION_COUNT) {
		if (rc == 0) {
			uint64_t t = mb_now_ns();
			sh->st->done[task]++;
			if (!sh->st->first_ok_t)
				sh->st->first_ok_t = (double)t / 1e9;
			mb_hist_record(sh->st->action[task], t - u->act_start_ns);
		} else {
			sh->st->failed[task]++;
			say_first_failure(u, task, mb_strerror(rc));
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
		double period = syncs(u) ? ES(u)->env.sync_period_s : (double)KEEPALIVE_NS / 1e9;
		set_conn_timer(u, ms_of(period), ms_of(period));
		if (syncs(u) && OPS(u)->tick)
			OPS(u)->tick(&u->t);
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
	/* cached mode: the full download at first logon comes first; online
	 * with pushed notifications, their fetch */
	if ((syncs(u) || (OPS(u)->sync_due && (OPS(u)->flags & MB_TARGET_F_PUSH))) &&
	    OPS(u)->sync_due(&u->t, u->npend > 0)) {
		start_task(u, MB_TASK_SYNC);
		return;
	}
	if (u->npend == 0)
		return;
	int a = u->pend_action[0];
	uint64_t due = u->pend_due[0];
	u->npend--;
	memmove(u->pend_action, u->pend_action + 1, u->npend);
	memmove(u->pend_due, u->pend_due + 1, u->npend * sizeof(u->pend_due[0]));
	uint64_t now = mb_now_ns();
	if (now > due && now - due > MB_LOAD_LATE_NS)
		u->sh->st->late[a]++;
	start_task(u, a);
}

/* ---- schedule ------------------------------------------------------------------- */

static void arm_next(struct mb_user *u)
{
	double gap;
	enum mb_action_id a;
	u->sched_on = false;
	if (mb_sched_next(&ES(u)->sp, &u->sched_rng, &gap, &a) != 0)
		return;
	u->next_due_ns += (uint64_t)(gap * 1e9);
	u->next_action = (uint8_t)a;
	u->sched_on = true;
	rearm(u);
}

static void sched_due(struct mb_user *u)
{
	struct mb_shard *sh = u->sh;
	if (sh->stopping)
		return;
	uint64_t now = mb_now_ns();
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
		say_first_failure(u, a,
				  "due while MB_PEND_MAX (16) actions of the user still waited");
	}
	arm_next(u);
	try_run(u);
}

/* Within a millisecond counts as due: libuv's timers have millisecond
 * resolution and wait the truncated milliseconds. */
#define DUE_SLACK_NS 1000000u

static void timer_cb(uv_timer_t *t)
{
	struct mb_user *u = t->data;
	if (u->sh->stopping)
		return;
	uint64_t now = mb_now_ns() + DUE_SLACK_NS;
	bool conn = u->conn_due_ns && u->conn_due_ns <= now;
	if (conn) /* the next period counts from now, as a repeating timer's */
		u->conn_due_ns = u->conn_period_ms
				     ? now - DUE_SLACK_NS + (uint64_t)u->conn_period_ms * 1000000u
				     : 0;
	bool wake = u->wake_ns && u->wake_ns <= now;
	if (wake)
		u->wake_ns = 0;
	if (u->sched_on && u->next_due_ns <= now)
		sched_due(u);
	if (conn)
		conn_due(u);
	if (wake)
		try_run(u);
	rearm(u);
}

/* ---- public --------------------------------------------------------------------- */

void mb_user_init(struct mb_shard *sh, struct mb_user *u, uint32_t idx, void *priv)
{
	const struct mb_engine_shared *es = sh->es;
	struct mb_conn *xc = u->xc; /* allocated by the engine, kept */
	memset(u, 0, sizeof(*u));
	u->xc = xc;
	u->sh = sh;
	u->t.idx = idx;
	u->t.priv = priv;
	u->t.shard = sh->drv;
	u->t.env = &es->env;
	u->t.st = sh->st;
	/* a well-mixed, independent stream per user: splitmix64 streams whose
	 * states differ by a small multiple of its increment would overlap */
	uint64_t t = es->seed * 0xD1B54A32D192ED03ULL + idx;
	u->t.rng = mb_rng_next(&t);
	u->t.rng ^= mb_rng_next(&t) << 1;
	u->sched_rng = mb_rng_next(&t);
	u->task = MB_TASK_NONE;
	u->state = MB_U_WAIT;
	u->c0.u = u;
	u->c0.tcp.data = &u->c0;
	for (int i = 1; u->xc && i < es->ops->conns; i++) {
		u->xc[i - 1].u = u;
		u->xc[i - 1].idx = (uint8_t)i;
		u->xc[i - 1].tcp.data = &u->xc[i - 1];
	}
	uv_timer_init(&sh->loop, &u->timer);
	u->timer.data = u;
}

void mb_user_begin(struct mb_user *u, double delay_s)
{
	/* the schedule starts with the user's logon attempt */
	u->next_due_ns = mb_now_ns() + (uint64_t)(delay_s * 1e9);
	arm_next(u);
	schedule_reconnect(u, delay_s);
}

void mb_user_stop(struct mb_user *u)
{
	uv_timer_stop(&u->timer);
	u->sched_on = false;
	u->conn_due_ns = 0;
	/* what the stop cuts short is counted, never dropped silently */
	for (int i = 0; i < u->npend; i++)
		u->sh->st->cut[u->pend_action[i]]++;
	u->npend = 0;
	if (u->task < MB_ACTION_COUNT)
		u->sh->st->cut[u->task]++;
	if (u->task != MB_TASK_NONE) {
		bh_put(u->sh, u->bh);
		u->bh = NULL;
		u->task = MB_TASK_NONE;
	}
	for (int i = 1; i < OPS(u)->conns; i++)
		conn_close(mb_user_conn(u, i));
	if (u->c0.open && !u->c0.closing) {
		u->state = MB_U_CLOSING;
		conn_close(&u->c0);
	} else if (!u->c0.open) {
		u->state = MB_U_STOPPED;
	}
	uv_close((uv_handle_t *)&u->timer, NULL);
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
			lost(c->u);
		else
			conn_close(c);
	}
}

int mb_target_write(struct mb_tuser *t, int conn, const void *data, size_t len)
{
	struct mb_user *u = mb_user_of(t);
	if (no_io(u)) {
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
	if (conn == 0 || !c || no_io(u))
		return MB_EINVAL;
	if (c->open)
		return MB_EBUSY;
	return tcp_open(u, c);
}

int mb_target_tls_mode(const struct mb_tuser *t, int conn)
{
	const struct mb_user *u = (const struct mb_user *)t;
	return conn >= 0 && conn < MB_TARGET_CONNS_MAX ? ES(u)->cfg.tls[conn] : MB_TLS_NONE;
}

int mb_target_starttls(struct mb_tuser *t, int conn)
{
	struct mb_user *u = mb_user_of(t);
	struct mb_conn *c = mb_user_conn(u, conn);
	if (!c || no_io(u) || !conn_alive(u, c))
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
		conn_close(mb_user_conn(mb_user_of(t), conn));
}

void mb_target_step_done(struct mb_tuser *t, const struct mb_step_result *res)
{
	struct mb_user *u = mb_user_of(t);
	if (u->task == MB_TASK_NONE || u->in_step || u->state == MB_U_CLOSING)
		return;
	if (res->status < 0) {
		finish_task(u, res->status);
		return;
	}
	if (u->step_kind == MB_STEP_LOGON)
		u->t.nfolders = (uint16_t)res->count;
	run_steps(u, res);
}

void mb_target_wake(struct mb_tuser *t)
{
	struct mb_user *u = mb_user_of(t);
	if (u->state == MB_U_IDLE && !u->in_step)
		try_run(u);
}

void mb_target_wake_at(struct mb_tuser *t, uint64_t ns)
{
	struct mb_user *u = mb_user_of(t);
	if (!u->wake_ns || ns < u->wake_ns) {
		u->wake_ns = ns ? ns : 1;
		rearm(u);
	}
}

void mb_target_lost(struct mb_tuser *t) { lost(mb_user_of(t)); }

void mb_target_logged_off(struct mb_tuser *t) { mb_user_of(t)->logged_off = true; }
