/* user.h: internals of the load engine shared by engine.c, user.c and
 * conn.c: a
 * loop shard (one libuv loop, its users, the driver's per-loop state) and
 * a simulated user (a small state machine: one timer for its two
 * deadlines, its connections, the running action's behaviour state).  Nothing here knows a
 * protocol: the bytes belong to the driver (target.h).
 *
 * A user's states (u->state):
 *
 *              ramp / backoff / logoff timer
 *     +--------+ ------------------------> +------------+
 *     |  WAIT  |                           | CONNECTING |
 *     +--------+ <--- close_cb ---+        +------------+
 *         ^                       |              | connected
 *         |                 +---------+          v
 *         |   lost / logoff | CLOSING | <--- +-------+
 *         |   ------------> +---------+      | LOGON |  (logon task)
 *         |                      ^           +-------+
 *         |                      |   lost        | logged on
 *         |                      +-------+       v
 *         |                      |  +------+  action due  +------+
 *         |                      +--| IDLE | -----------> | BUSY |
 *         |                         +------+ <----------- +------+
 *         |                                   action done
 *   stop: any state -> STOPPED (pending and running actions counted as cut)
 *
 * CONNECTING covers TCP and, with implicit TLS, the handshake ("connected"
 * is TLS open; a failed handshake is a failed connect); a STARTTLS
 * handshake happens inside LOGON (user.c, "TLS").
 *
 * Invariants: at most one action or task runs per user; a user's
 * connections, timers and behaviour state are touched only by its shard's
 * loop thread; a user holds a behaviour state only while an action runs
 * (taken from its shard's free list, returned when the action ends).
 */
#ifndef MB_LOAD_USER_H
#define MB_LOAD_USER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "core/scenario.h"
#include "core/tls.h"
#include "core/topology.h"
#include "load/behave.h"
#include "load/loadstats.h"
#include "load/sched.h"
#include "load/target.h"
#include "proto/proto.h" /* struct mb_buf: byte buffers (no protocol) */

enum mb_ustate {
	MB_U_WAIT = 0, /* not connected: waiting for ramp, backoff or logoff */
	MB_U_CONNECTING,
	MB_U_LOGON,   /* logon task running */
	MB_U_IDLE,    /* logged on, nothing running */
	MB_U_BUSY,    /* an action or task is running */
	MB_U_CLOSING, /* connection closing; reconnect decided in close cb */
	MB_U_STOPPED,
};

#define MB_PEND_MAX 16

struct mb_user;

/* One connection of a user. */
struct mb_conn {
	uv_tcp_t tcp;
	struct mb_user *u;
	struct mb_buf *rx;     /* partial message, or NULL */
	uint64_t rpc_start_ns; /* request in flight, or 0 */
	uint8_t op;	       /* its first operation (histogram) */
	uint8_t idx;
	bool open; /* handle initialised, not yet closed */
	bool closing;
	bool tls_ready;	    /* the TLS session is open (and reported) */
	struct mb_tls *tls; /* TLS session (handshake or open), or NULL: plain */
};

struct mb_user {
	struct mb_tuser t;	 /* what the driver sees: first */
	struct mb_conn c0;	 /* the mail connection */
	struct mb_conn *xc;	 /* connections 1.. (ops->conns > 1), or NULL */
	uv_timer_t timer;	 /* one per user, at the earliest of next_due_ns
				  * (the next action's arrival), conn_due_ns and wake_ns */
	uint64_t conn_due_ns;	 /* ramp, backoff, logoff, sync, keepalive; 0: none */
	uint32_t conn_period_ms; /* the latter's period while logged on, 0: once */
	bool sched_on;		 /* an arrival is due at next_due_ns */
	struct mb_shard *sh;
	uint64_t sched_rng; /* the schedule's own stream: one seed gives
			     * the same arrivals whatever the actions draw */
	uint8_t state;	    /* enum mb_ustate */
	uint8_t task;	    /* running action or MB_TASK_*, or NONE */
	uint8_t backoff;    /* consecutive failed attempts */
	uint8_t npend;
	bool on;	   /* counted in users_on */
	bool ever_on;	   /* logged on once (later ones are reconnects) */
	bool lost;	   /* the close is after a lost connection */
	bool logged_off;   /* the close is a logoff */
	bool in_step;	   /* a driver step call is on the stack */
	uint8_t step_kind; /* step in flight (enum mb_step_kind) */
	uint64_t act_start_ns;
	uint64_t next_due_ns; /* next arrival (monotonic ns) */
	uint64_t last_rpc_ns;
	uint64_t started_ns; /* first logon attempt */
	uint64_t wake_ns;    /* the driver asked a wake then (mb_target_wake_at), 0: none */
	uint8_t next_action;
	uint8_t pend_action[MB_PEND_MAX];
	uint64_t pend_due[MB_PEND_MAX];
	struct mb_behave *bh; /* running action's behaviour state */
};

/* What conn.c reports about a user's mail connection (connection 0), to
 * user.c, which owns the user's state: set in the shard by mb_user_init. */
struct mb_conn_events {
	void (*up)(struct mb_user *u);		   /* connected (TCP, and implicit TLS) */
	void (*lost)(struct mb_user *u);	   /* read, write, framing or TLS failure */
	void (*connect_failed)(struct mb_user *u); /* connect or implicit handshake failed */
	void (*closed)(struct mb_user *u);	   /* its close completed (close_cb) */
};

struct mb_shard {
	uv_loop_t loop;
	uv_thread_t thread;
	uv_async_t stop_async;
	uv_timer_t tick; /* loop lag and publishing */
	const struct mb_engine_shared *es;
	const struct mb_conn_events *ev; /* user.c's, for conn.c */
	int id;
	struct mb_user *users;
	char *priv; /* the users' driver state, ops->user_size each */
	int nusers;
	bool stopping;
	bool inited; /* loop and shard handles initialised */
	void *drv;   /* the driver's per-loop state */
	char *rxbuf;
	size_t rxcap;
	struct mb_behave_env benv;  /* the model's view (now_ms set per call) */
	struct mb_behave **bh_free; /* behaviour states of finished actions, kept */
	int nbh_free, bh_cap;	    /*   for the next ones: no allocation per action */
	uint64_t tick_expected_ns;
	int ticks;
	/* measurements: recorded by the loop; published under mu */
	struct mb_load_stats *st;
	uv_mutex_t mu;
	struct mb_load_stats *pub;
	atomic_int users_on;
	_Atomic double started_sum_s; /* sum of started users' start times */
	atomic_int started;
};

/* What the engine shares with its shards (read-only after create). */
struct mb_engine_shared {
	const struct mb_scenario *sc; /* with unsupported actions at rate 0 */
	const struct mb_topology *topo;
	const struct mb_target_ops *ops;
	struct mb_target_cfg cfg;
	struct mb_target_env env;
	struct mb_sched_params sp;
	struct sockaddr_storage addr[MB_TARGET_CONNS_MAX];
	int nusers;	  /* simulated population */
	int first, count; /* users this engine runs: first .. first+count-1 */
	int nlists;
	double ramp_s;
	int ack_fd;
	uint64_t seed;
	uint64_t t0_ns;
	int32_t *name_index;			 /* open-addressing hash: user name -> index */
	uint32_t name_cap;			 /* power of two */
	struct mb_tls_ctx *tls_ctx;		 /* client context when a connection uses TLS */
	char tls_host[MB_TARGET_CONNS_MAX][256]; /* the name certificates must carry */
	/* the run's first TLS failure (written once by whichever loop sees it
	 * first: tls_err_state 0 none, 1 being written, 2 tls_err readable) */
	atomic_int tls_err_state;
	char tls_err[400];
};

/* user.c */
/* Build es->name_index from the topology (engine creation). */
int mb_user_name_index(struct mb_engine_shared *es);
void mb_user_init(struct mb_shard *sh, struct mb_user *u, uint32_t idx, void *priv);
void mb_user_begin(struct mb_user *u, double delay_s);
void mb_user_stop(struct mb_user *u);
/* The shard's kept behaviour states (shard teardown). */
void mb_user_pool_free(struct mb_shard *sh);

/* conn.c */
/* Start a TCP connection to the target's address for c (0, MB_ENOMEM, MB_ECLOSED). */
int mb__conn_open(struct mb_user *u, struct mb_conn *c);
/* Close c (TLS close_notify first, best effort); close_cb finishes it. */
void mb__conn_close(struct mb_conn *c);

/* The user behind a driver's handle (t is the user's first member). */
static inline struct mb_user *mb_user_of(struct mb_tuser *t) { return (struct mb_user *)t; }

/* What u's engine shares, its driver, and whether the driver does no I/O. */
static inline const struct mb_engine_shared *mb_user_es(const struct mb_user *u)
{
	return u->sh->es;
}
static inline const struct mb_target_ops *mb_user_ops(const struct mb_user *u)
{
	return u->sh->es->ops;
}
static inline bool mb_user_no_io(const struct mb_user *u)
{
	return (mb_user_ops(u)->flags & MB_TARGET_F_NO_IO) != 0;
}

/* Connection i of u (0: the first; the driver's others after it), or NULL. */
static inline struct mb_conn *mb_user_conn(struct mb_user *u, int i)
{
	if (i == 0)
		return &u->c0;
	return u->xc && i > 0 && i < u->sh->es->ops->conns ? &u->xc[i - 1] : NULL;
}

#endif
