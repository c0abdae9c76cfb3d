/* loop.h: the store server's loop-thread state, shared by its files
 * (server.c lifecycle, net.c connections, groups.c storage groups, stats.c
 * the stats stream, control.c control lines).  Not for other parts; the
 * request and worker structures shared with ops.c are in store_int.h.
 *
 * Everything here belongs to the loop thread, except: ctl_mu and
 * drop_pending_s (the control thread writes them), ctl_stop (atomic), and
 * done_async (any thread may send it).
 *
 * Layout: mb_store.loop_state -> struct loop_state
 *   conns (doubly linked, every open connection) --> struct conn
 *   by_mailbox[mailbox] (notification lists)      --> struct conn (nnext)
 *   sgst[g - 1] (one per storage group)           --> struct sg_state
 */
#ifndef MB_STORE_LOOP_H
#define MB_STORE_LOOP_H

#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "core/hist.h"
#include "core/clock.h"
#include "core/sampler.h"
#include "core/stats.h"
#include "store/store_int.h"

#define READ_CHUNK (256u << 10)
#define MAX_OUT_BYTES (1u << 20) /* queued replies before we stop reading */

struct conn {
	uv_tcp_t tcp;
	struct mb_store *st;
	struct conn *prev, *next;   /* all connections */
	struct conn *nprev, *nnext; /* per-mailbox notification list */
	uint32_t notify_mailbox;    /* registered under this mailbox, 0 none */
	struct mb_buf *rx;	    /* partial frame bytes, NULL when none */
	struct session sess;
	bool busy; /* a request in flight */
	bool closing;
	bool reading;
	bool close_after_write;
	bool compress; /* compression granted (loop's copy) */
	size_t out_bytes;
	uint64_t last_active_ms;
	uint64_t stuck_since_ms; /* out_bytes > 0 since */
	uint64_t connected_ms;
	uint64_t frame_start_ms; /* first byte of the partial frame in rx, 0 none */
	size_t rx_held;		 /* bytes of rx counted in partial_bytes */
	uint32_t id;
};

/* A storage group as the store sees it (states drawn in groups.c). */
struct sg_state {
	int err;      /* 0: in service; else what put it out */
	bool offline; /* could not be reopened: databases closed */
	uint64_t since_ms;
	uint64_t next_try_ms;
	uint64_t recoveries;   /* successful in-place recoveries */
	int last_report;       /* the error last printed on stderr */
	char what[160];	       /* what failed (mb_sg_error_what) */
	int last_err;	       /* the error of the last recovered episode */
	double last_out_s;     /* how long that episode kept it out of service */
	uint64_t recovered_ms; /* when it came back */
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
	struct conn **by_mailbox; /* notification lists, index mailbox */
	int nmailboxes;
	uint8_t *readbuf;
	struct mb_buf *enc, *tmp, *zbuf;
	struct mb_lz77 *lz77; /* the loop's payload encoder */
	FILE *dump;	      /* --dump-payloads, or NULL (net.c) */
	/* counters owned by the loop */
	uint64_t bytes_in, bytes_out;
	uint64_t rpcs, ops;
	uint64_t op_count[MB_OP_COUNT];
	uint64_t op_errors[MB_OP_COUNT];
	uint64_t frame_errors, conns_refused;
	/* exhaustion (see the invariants in net.c) */
	int nopen;    /* connection handles not yet closed */
	int conn_cap; /* descriptor cap on nopen */
	int fd_limit;
	bool accept_paused;
	size_t partial_bytes, partial_budget;
	uint64_t refused_fdcap, refused_memory, refused_timeout;
	uint64_t prev_fdcap, prev_memory, prev_timeout;
	struct sg_state *sgst;
	/* control lines (fault injection) */
	pthread_t ctl_th;
	bool ctl_started;
	atomic_bool ctl_stop;
	uv_async_t ctl_async;
	uv_timer_t drop_timer;
	pthread_mutex_t ctl_mu;
	double drop_pending_s; /* under ctl_mu: a net-drop to start */
	bool dropping;
	bool ctl_mu_init;
	int inflight;
	size_t inflight_bytes;
	double inflight_area; /* sum of inflight x seconds */
	double inflight_t;    /* time of the last change */
	struct mb_hist *op_hist[MB_OP_COUNT];
	struct mb_hist *rpc_hist;
	/* stats stream */
	struct mb_stats_writer *stats;
	struct mb_proc_sample ps_prev;
	double loop_cpu_prev; /* this thread's CPU seconds at the last window */
	double t_prev;
	uint64_t prev_bytes, prev_rpcs, prev_ops, prev_ddb, prev_drcpt;
	struct mb_io_stats io_prev;
	struct mb_cache_stats cache_prev;
	uint64_t prev_log_writes;
};

/* Intervals and idle times: mb_now_ms() (core/clock.h, monotonic). */

#endif
