/* store.h: the mailbox store server (`mailbench store`) and the scaling
 * rules shared with `mailbench init`.
 *
 * A store serves one data directory (DATA/topology.json + DATA/sgN/dbMM.mdb):
 * a libuv loop thread owns the listening socket and every connection; one
 * owner thread per database runs the operations on that database (the
 * shared-nothing model of db/db.h); requests travel between them through
 * mutex-protected queues and come back through uv_async.  A reply that
 * reports a write is sent only once its commits are durable.
 *
 * mb_store_create() opens (and recovers) every storage group and binds the
 * listening socket; mb_store_run() serves until mb_store_stop() (thread-safe,
 * also what SIGTERM does in `mailbench store`), then finishes in-flight
 * requests, checkpoints and closes.  Tests run a store in a thread.
 */
#ifndef MB_STORE_STORE_H
#define MB_STORE_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/scenario.h"
#include "core/topology.h"

struct mb_store_opts {
	const char *data;	 /* data directory (required) */
	const char *listen_host; /* default "127.0.0.1" */
	int port;		 /* 0: pick a free port */
	int stats_fd;		 /* -1: no stats stream */
	int compression;	 /* 1 on, 0 off (never granted) */
	uint32_t compress_min;	 /* threshold, bytes (default 256) */
	double cache_mb;	 /* MiB; 0: the topology's scaled cache */
	int write_max_kb;	 /* largest database write, KB (below a page: one
				    page); 0: the topology's (init's scenario) */
	int max_connections;	 /* default 20000 */
	uint32_t max_frame;	 /* default MB_PROTO_MAX_FRAME */
	int idle_timeout_s;	 /* default 1800 */
	uint32_t prelogon_frame; /* frame limit until logon, default MB_STORE_PRELOGON_FRAME */
	int partial_budget_mb;	 /* partial frames of all connections, MiB (default 256) */
	int logon_timeout_s;	 /* logon must succeed within S of connecting (default 30) */
	int frame_timeout_s;	 /* a frame's header and body within S of its first byte
				    (default 30) */
	int fd_reserve;		 /* descriptors kept for the engine's own files (0: default) */
	int auth_delay_ms;	 /* refusal delay, default 250 */
	/* MiB a session's handles may hold (drafts, open streams, sync states),
	 * and all sessions' together (0: MB_STORE_HELD_SESSION_MB and
	 * MB_STORE_HELD_MB): past them an operation fails with MB_EFULL */
	int held_session_mb;
	int held_store_mb;
	/* MiB that must stay free in the data (and log) directory's file
	 * system: below it operations that add content fail with MB_ELOWDISK
	 * (reserve.c); 0: off.  mb_store_opts_init: MB_STORE_MIN_FREE_MB */
	int min_free_mb;
	bool install_signals; /* SIGTERM/SIGINT stop the store (the command) */
	/* NULL or "": off; else every payload in and out, uncompressed, is
	 * appended to this file (net.c) */
	const char *dump_payloads;
};
void mb_store_opts_init(struct mb_store_opts *o);
#define MB_STORE_PRELOGON_FRAME (64u << 10)
#define MB_STORE_HELD_SESSION_MB 64
#define MB_STORE_HELD_MB 1024
#define MB_STORE_MIN_FREE_MB 256

struct mb_store;
/* Errors are explained in err (e.g. "DATA/topology.json: ..."). */
int mb_store_create(const struct mb_store_opts *o, struct mb_store **out, char *err, size_t errlen);
/* Connections are capped below the process's descriptor limit: the soft
 * RLIMIT_NOFILE (raised to the hard limit where allowed) less the
 * descriptors open at start, less a reserve for the engine's own files
 * (log segments, checkpoints, directory syncs: MB_STORE_FD_RESERVE plus 4
 * per storage group).  At the cap the store stops accepting (the kernel
 * holds new connections in the listen backlog) and accepts again when a
 * connection closes. */
#define MB_STORE_FD_RESERVE 32
/* The cap in effect (after create). */
int mb_store_conn_cap(const struct mb_store *s);
/* The bound port (after create). */
int mb_store_port(const struct mb_store *s);
/* Serve until stopped; then finish in-flight work, checkpoint, close. */
int mb_store_run(struct mb_store *s);
/* Ask a running store to stop (any thread, async-signal-unsafe). */
void mb_store_stop(struct mb_store *s);
void mb_store_destroy(struct mb_store *s);
/* Local deliveries so far: once per message per database, and once per
 * recipient (what the stats stream reports per second). */
void mb_store_delivery_counts(struct mb_store *s, uint64_t *per_db, uint64_t *per_rcpt);

/* ---- the initialisation ---- */

/* What DATA/init.state's "version" says: the content an initialisation
 * writes.  3: initialised mail carries the address properties of a
 * received message (src/store/addrprops.h); 2: every initialised message
 * is read (docs/workload.md, "Initialised mail is read"); 1: three in ten
 * Inbox messages were unread.
 * A data directory of another version is not resumed or reused: `init`
 * says so and wants --restart. */
#define MB_INIT_VERSION 3

/* ---- scaling (init and store agree on these) ---- */

/* Database cache (MiB, not rounded) that keeps the published
 * cache-to-data ratio for `users` users at `scale`: db_cache_mb x scale x
 * users / published users.  The only floor is the cache's own minimum,
 * MB_STORE_MIN_CACHE_MB (64 pages of 32 KB); below about 450 MB of data
 * it raises the ratio, which the cache-to-data ratio counter shows. */
#define MB_STORE_MIN_CACHE_MB 2.0
double mb_store_scaled_cache_mb(const struct mb_scenario *sc, int users, double scale);
/* The accounts and placement of an initialisation: users user0001.. with
 * generated passwords, databases round-robin, the scenario's distribution
 * lists (deterministic).  With MB_GEN_KEYS each user's PBKDF2 salt and key
 * too (what the store checks at logon: 2,048 iterations a user, most of the
 * time of a large generation); without, the accounts of the lab, of
 * `init --accounts-only` and of the null target (users and lists only). */
#define MB_GEN_KEYS 1u
int mb_store_gen_topology(const struct mb_scenario *sc, int users, double scale,
			  const char *log_dir, int cache_mb, unsigned flags,
			  struct mb_topology **out);

/* ---- the ack-log check's question, for the load engine ---- */

/* Open the data directory read-mostly (runs recovery like the store; the
 * store must not be running), answer "does message mid exist in mailbox",
 * close.  One open serves many lookups. */
struct mb_store_probe;
int mb_store_probe_open(const char *data, struct mb_store_probe **out, char *err, size_t errlen);
int mb_store_probe_exists(struct mb_store_probe *p, uint32_t mailbox, uint64_t mid, bool *exists);
void mb_store_probe_close(struct mb_store_probe *p);

#endif
