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
	const char *data;          /* data directory (required) */
	const char *listen_host;   /* default "127.0.0.1" */
	int port;                  /* 0: pick a free port */
	int stats_fd;              /* -1: no stats stream */
	int compression;           /* 1 on, 0 off (never granted) */
	uint32_t compress_min;     /* threshold, bytes (default 256) */
	int cache_mb;              /* 0: the topology's scaled cache */
	int max_connections;       /* default 20000 */
	uint32_t max_frame;        /* default MB_PROTO_MAX_FRAME */
	int idle_timeout_s;        /* default 1800 */
	int auth_delay_ms;         /* refusal delay, default 250 */
	bool install_signals;      /* SIGTERM/SIGINT stop the store (the command) */
};
void mb_store_opts_init(struct mb_store_opts *o);

struct mb_store;
/* Errors are explained in err (e.g. "DATA/topology.json: ..."). */
int mb_store_create(const struct mb_store_opts *o, struct mb_store **out, char *err,
		    size_t errlen);
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

/* ---- scaling (init and store agree on these) ---- */

/* Mailbox configuration of the scenario at scale: message counts scaled
 * (at least 1 each), the folder structure and message size kept. */
void mb_store_scaled_mailbox(const struct mb_scenario *sc, double scale, struct mb_topo_info *out);
/* Database cache that keeps the published cache-to-data ratio for `users`
 * users at `scale`: db_cache_mb x scale x users / published users, at
 * least MB_STORE_MIN_CACHE_MB (so that concurrent transactions fit). */
#define MB_STORE_MIN_CACHE_MB 16
int mb_store_scaled_cache_mb(const struct mb_scenario *sc, int users, double scale);

/* ---- the ack-log check's question, for the load engine ---- */

/* Open the data directory read-mostly (runs recovery like the store; the
 * store must not be running), answer "does message mid exist in mailbox",
 * close.  One open serves many lookups. */
struct mb_store_probe;
int mb_store_probe_open(const char *data, struct mb_store_probe **out, char *err, size_t errlen);
int mb_store_probe_exists(struct mb_store_probe *p, uint32_t mailbox, uint64_t mid, bool *exists);
void mb_store_probe_close(struct mb_store_probe *p);

#endif
