/* user.c: one simulated user: its schedule, its logon and reconnects, and
 * the run of its actions as steps of the behaviour model through the
 * driver.  Its connections are conn.c's, which reports what happens to the
 * mail connection through the shard's event table (user_events below).
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
 * action's response time goes into the shard's measurement set.  This
 * file also implements the step, wake and logoff services of target.h.
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

/* Cached mode with a driver that syncs: periodic sync instead of keepalive. */
static bool syncs(const struct mb_user *u)
{
	return mb_user_es(u)->env.cached && mb_user_ops(u)->sync_due;
}

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
	if (mb_user_ops(u)->disconnected)
		mb_user_ops(u)->disconnected(&u->t, 0);
	u->t.conn_open &= (uint16_t)~1u;
	if (sh->stopping) {
		u->state = MB_U_STOPPED;
		return;
	}
	if (u->logged_off) {
		u->logged_off = false;
		double off = mb_rng_exp(&u->t.rng, mb_user_es(u)->sp.logoff_mean_s) /
			     mb_user_es(u)->sp.accel;
		schedule_reconnect(u, off);
	} else {
		schedule_reconnect(u, backoff_delay(u));
	}
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
	for (int i = 1; i < mb_user_ops(u)->conns; i++)
		mb__conn_close(mb_user_conn(u, i));
	if (mb_user_no_io(u))
		session_closed(u);
	else
		mb__conn_close(&u->c0);
}

static void lost(struct mb_user *u)
{
	if (u->state == MB_U_CLOSING || u->state == MB_U_WAIT || u->state == MB_U_STOPPED)
		return;
	u->sh->st->n.connections_lost++;
	u->lost = true;
	close_conn(u);
}

static void do_connect(struct mb_user *u)
{
	struct mb_shard *sh = u->sh;
	if (!u->started_ns) {
		u->started_ns = mb_now_ns();
		double prev = atomic_load(&sh->started_sum_s);
		atomic_store(&sh->started_sum_s,
			     prev + (double)(u->started_ns - mb_user_es(u)->t0_ns) / 1e9);
		atomic_fetch_add(&sh->started, 1);
	}
	if (mb_user_no_io(u)) {
		u->t.conn_open |= 1;
		u->state = MB_U_LOGON;
		start_task(u, MB_TASK_LOGON);
		return;
	}
	int rc = mb__conn_open(u, &u->c0);
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
	if (syncs(u) && mb_user_ops(u)->tick)
		mb_user_ops(u)->tick(&u->t);
	if (u->state == MB_U_IDLE) {
		if (!syncs(u) && mb_now_ns() - u->last_rpc_ns > KEEPALIVE_NS)
			start_task(u, MB_TASK_KEEPALIVE);
		else
			try_run(u);
	}
}

/* ---- what conn.c reports about the mail connection ------------------------------ */

static void ev_up(struct mb_user *u)
{
	if (u->state == MB_U_CONNECTING) {
		u->state = MB_U_LOGON;
		start_task(u, MB_TASK_LOGON);
	}
}

static void ev_connect_failed(struct mb_user *u)
{
	u->sh->st->n.connect_failures++;
	u->lost = true;
	close_conn(u);
}

static const struct mb_conn_events user_events = {
    .up = ev_up, .lost = lost, .connect_failed = ev_connect_failed, .closed = session_closed};

/* ---- actions and tasks: steps through the driver -------------------------------- */

/* Feed res (NULL at the start) to the model and run its steps until one
 * is in flight or the action ends. */
static void run_steps(struct mb_user *u, const struct mb_step_result *res)
{
	struct mb_shard *sh = u->sh;
	const struct mb_target_ops *ops = mb_user_ops(u);
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
			sh->st->failed_by[mb_load_fail_cause(rc)]++;
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
		double period =
		    syncs(u) ? mb_user_es(u)->env.sync_period_s : (double)KEEPALIVE_NS / 1e9;
		set_conn_timer(u, ms_of(period), ms_of(period));
		if (syncs(u) && mb_user_ops(u)->tick)
			mb_user_ops(u)->tick(&u->t);
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
	if ((syncs(u) ||
	     (mb_user_ops(u)->sync_due && (mb_user_ops(u)->flags & MB_TARGET_F_PUSH))) &&
	    mb_user_ops(u)->sync_due(&u->t, u->npend > 0)) {
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
	if (mb_sched_next(&mb_user_es(u)->sp, &u->sched_rng, &gap, &a) != 0)
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
		sh->st->failed_by[MB_LOAD_FAIL_OVERRUN]++;
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
	sh->ev = &user_events;
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
	for (int i = 1; i < mb_user_ops(u)->conns; i++)
		mb__conn_close(mb_user_conn(u, i));
	if (u->c0.open && !u->c0.closing) {
		u->state = MB_U_CLOSING;
		mb__conn_close(&u->c0);
	} else if (!u->c0.open) {
		u->state = MB_U_STOPPED;
	}
	uv_close((uv_handle_t *)&u->timer, NULL);
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
