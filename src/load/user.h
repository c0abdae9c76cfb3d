/* user.h: internals of the load engine shared by engine.c, user.c and
 * actions.c: a loop shard (one libuv loop, its users and the buffers they
 * share) and a simulated user (a small state machine: two timers, one TCP
 * connection, the step of the current action).
 *
 * Invariants: a user has at most one RPC in flight; everything a request
 * needs is built in the shard's request builder and encoded at once, so
 * the builder is free again when send returns; receive and decode buffers
 * belong to the shard (a user keeps a buffer only while a frame is half
 * received); per-action context is allocated while an action runs.
 */
#ifndef MB_LOAD_USER_H
#define MB_LOAD_USER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "core/scenario.h"
#include "core/topology.h"
#include "load/loadstats.h"
#include "load/replica.h"
#include "load/sched.h"
#include "proto/proto.h"

struct mb_engine;

/* internal tasks beside the scenario actions */
enum {
	MB_TASK_LOGON = MB_ACTION_COUNT, /* challenge, logon, folder hierarchy */
	MB_TASK_SYNC,                    /* cached mode: download changes */
	MB_TASK_KEEPALIVE,               /* keep an idle connection open */
	MB_TASK_NONE = 255,
};

enum mb_ustate {
	MB_U_WAIT = 0,   /* not connected: waiting for ramp, backoff or logoff */
	MB_U_CONNECTING,
	MB_U_LOGON,      /* logon task running */
	MB_U_IDLE,       /* logged on, no RPC in flight */
	MB_U_BUSY,       /* an action or task is running */
	MB_U_CLOSING,    /* connection closing; reconnect decided in close cb */
	MB_U_STOPPED,
};

#define MB_PEND_MAX 16
#define MB_CTX_ITEMS 512
#define MB_CTX_REPLIES 16

/* Context of a running action (malloc'd while it runs). */
struct mb_uctx {
	int n, i;                         /* items and cursor */
	uint64_t mids[MB_CTX_ITEMS];
	uint8_t slot[MB_CTX_ITEMS];       /* SYNC: replica slot of mids[i] */
	uint64_t rmid[MB_CTX_REPLIES];    /* messages to reply to / forward */
	int32_t rwho[MB_CTX_REPLIES];     /* their senders' user index, -1 unknown */
	int nreplies;
	int replies;                      /* replies/forwards left to send */
	int reads;                        /* reads left */
	int folders;                      /* folders left to browse */
	uint64_t fid;
	int nattendees;
	uint32_t attendees[8];
	uint32_t deleted_count;           /* Deleted Items count at the start */
	uint32_t inbox_count;
	int ndel;                         /* ids sent for a hard delete */
	uint32_t sync_mask;               /* SYNC: slots asked in the last RPC */
};

struct mb_user {
	uv_tcp_t tcp;
	uv_timer_t sched_timer;           /* next action arrival */
	uv_timer_t conn_timer;            /* ramp, backoff, logoff, sync, keepalive */
	struct mb_shard *sh;
	uint32_t idx;                     /* topology user index */
	uint32_t mailbox;
	uint64_t rng;
	uint8_t state;                    /* enum mb_ustate */
	uint8_t task;                     /* running action or MB_TASK_*, or NONE */
	uint8_t step;
	uint8_t backoff;                  /* consecutive failed attempts */
	uint8_t npend;
	uint8_t nfolders;                 /* user folders known (<= 12) */
	bool tcp_open;
	bool on;                          /* counted in users_on */
	bool lz4;                         /* compression granted */
	bool ever_on;                     /* logged on once (later ones are reconnects) */
	bool lost;                        /* the close is after a lost connection */
	bool logged_off;                  /* the close is a logoff */
	uint8_t first_op;                 /* first op code of the RPC in flight */
	uint32_t seq;
	uint32_t compress_min;
	uint32_t folders[12];             /* user folders' local numbers */
	uint64_t rpc_start_ns;
	uint64_t act_start_ns;
	uint64_t next_due_ns;             /* next arrival (monotonic ns) */
	uint64_t last_rpc_ns;
	uint64_t started_ns;              /* first logon attempt */
	uint8_t next_action;
	uint8_t pend_action[MB_PEND_MAX];
	uint64_t pend_due[MB_PEND_MAX];
	struct mb_buf *rx;                /* partial frame, or NULL */
	struct mb_uctx *ctx;
	struct mb_replica *rep;           /* cached mode */
};

/* Request builder: ops of one batch and the memory they point to. */
#define MB_RB_OPS 64
#define MB_RB_PROPS 256
#define MB_RB_STRS 256
#define MB_RB_POOL 8192
struct mb_rb {
	struct mb_op ops[MB_RB_OPS];
	int nops;
	struct mb_prop props[MB_RB_PROPS];
	int nprops;
	struct mb_bytes strs[MB_RB_STRS];
	int nstrs;
	uint32_t tags[MB_RB_PROPS];
	int ntags;
	uint64_t mids[MB_PROTO_MAX_IDS];
	int nmids;
	struct mb_sync_change changes[MB_CTX_ITEMS];
	int nchanges;
	char pool[MB_RB_POOL];
	size_t npool;
};

struct mb_shard {
	uv_loop_t loop;
	uv_thread_t thread;
	uv_async_t stop_async;
	uv_timer_t tick;                  /* loop lag and publishing */
	struct mb_engine *eng;
	int id;
	struct mb_user *users;
	int nusers;
	bool stopping;
	bool inited;                      /* loop and shard handles initialised */
	/* shared by the shard's users */
	char *rxbuf;
	size_t rxcap;
	struct mb_arena *arena;
	struct mb_buf *scratch;
	struct mb_buf *enc, *enc_tmp;
	char *body;
	size_t body_cap;
	struct mb_rb rb;
	uint64_t tick_expected_ns;
	int ticks;
	/* measurements: recorded by the loop; published under mu */
	struct mb_load_stats *st;
	uv_mutex_t mu;
	struct mb_load_stats *pub;
	atomic_int users_on;
	_Atomic double started_sum_s;     /* sum of started users' start times */
	atomic_int started;
};

/* What the engine shares with its shards (read-only after create). */
struct mb_engine_shared {
	const struct mb_scenario *sc;
	const struct mb_topology *topo;
	struct mb_sched_params sp;
	struct sockaddr_storage addr;
	int nusers;                       /* simulated users */
	int nlists;
	double ramp_s;
	int ack_fd;
	bool compression, notify, cached;
	uint64_t seed;
	uint64_t t0_ns;
	double sync_period_s;             /* cached: wall seconds between syncs */
	size_t avg_body;                  /* bytes */
	int32_t *name_index;              /* open-addressing hash: user name -> index */
	uint32_t name_cap;                /* power of two */
};

/* Topology user index of a logon name, or -1 (engine.c; O(1)). */
int32_t mb_engine_find_user(const struct mb_engine_shared *es, const char *name, size_t len);

/* user.c */
const struct mb_engine_shared *mb_shard_shared(const struct mb_shard *sh);
void mb_user_init(struct mb_shard *sh, struct mb_user *u, uint32_t idx);
void mb_user_begin(struct mb_user *u, double delay_s);
void mb_user_stop(struct mb_user *u);
/* Encode the shard's builder as one request and send it. */
int mb_user_send(struct mb_user *u);
/* Append an ack-log line set for this user: kind '+', '-' or '~'. */
void mb_user_ack(struct mb_user *u, char kind, uint32_t mailbox, const uint64_t *mids, int n);
void mb_user_ack_deliveries(struct mb_user *u, const struct mb_op_reply *submit);

/* actions.c: the step functions.  start builds the first RPC of a task
 * (or finishes it locally); next consumes a reply and builds the next RPC.
 * Both return 1 when an RPC was sent, 0 when the task is complete, a
 * negative MB_E* when it failed. */
int mb_act_start(struct mb_user *u);
int mb_act_next(struct mb_user *u, const struct mb_reply *r);
/* Request builder helpers (actions.c). */
void mb_rb_reset(struct mb_rb *rb);
struct mb_op *mb_rb_op(struct mb_rb *rb, uint8_t code);
/* A new-mail event pushed by the store (cached mode marks the folder). */
void mb_act_event(struct mb_user *u, const struct mb_event *ev);

#endif
