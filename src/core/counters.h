/* counters.h: every counter of mailbench, declared once.
 *
 * The store, the load engine, the storage test, the console's tables, the
 * JSON and CSV writers and the docs all iterate MB_COUNTER_TABLE; nothing
 * else names a counter's label, unit or definition.  The first
 * MB_PUBLISHED_COUNT rows are the rows of the published comparison tables,
 * in the published order; the rest are measured beside them.
 *
 * Values travel on the stats stream under their JSON key, already in the
 * table's unit: a RATE is per second over the sender's sample window, a
 * GAUGE is the value now (or averaged over the window where the definition
 * says so).  A value that could not be measured is not sent at all, and
 * consumers show "n/a".
 */
#ifndef MB_CORE_COUNTERS_H
#define MB_CORE_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>

enum mb_counter_kind { MB_RATE, MB_GAUGE };
/* Which process measures the counter. */
enum mb_counter_source { MB_SRC_STORE, MB_SRC_LOAD, MB_SRC_STRESS, MB_SRC_HOST };

/* X(ID, json_key, label, unit, kind, source, decimals, definition) */
#define MB_COUNTER_TABLE(X)                                                                        \
	/* ---- the published rows, in the published order ---- */                                 \
	X(USERS, "users", "users", "", MB_GAUGE, MB_SRC_LOAD, 0, "simulated users logged on now")  \
	X(PROCESSOR_PCT, "processor_pct", "% processor time", "%", MB_GAUGE, MB_SRC_STORE, 1,      \
	  "store process CPU time (all threads) / wall time / online CPUs x 100")                  \
	X(CONTEXT_SWITCHES, "context_switches_per_s", "context switches/s", "/s", MB_RATE,         \
	  MB_SRC_STORE, 0,                                                                         \
	  "store process voluntary + involuntary context switches per second, all threads")        \
	X(LOCAL_DELIVERY, "local_delivery_rate", "local delivery rate", "msg/s", MB_RATE,          \
	  MB_SRC_STORE, 1, "messages delivered per second, counted once per message per database") \
	X(NETWORK, "network_kbit_per_s", "network usage (Kbit/s)", "Kbit/s", MB_RATE,              \
	  MB_SRC_STORE, 0,                                                                         \
	  "bytes sent + received on the store's client connections, on the wire, x 8 / 1000 per "  \
	  "second")                                                                                \
	X(DB_TRANSFERS, "db_transfers_per_s", "database disk transfers/s", "/s", MB_RATE,          \
	  MB_SRC_STORE, 0,                                                                         \
	  "read + write I/Os the storage engine issues to database files per second")              \
	X(LOG_WRITES, "log_writes_per_s", "log writes/s", "/s", MB_RATE, MB_SRC_STORE, 0,          \
	  "write I/Os to transaction log files per second")                                        \
	X(DISK_MB, "disk_mb_per_s", "disk bytes/s (MB)", "MiB/s", MB_RATE, MB_SRC_STORE, 1,        \
	  "database + log bytes transferred per second, MiB")                                      \
	X(DB_CACHE_MB, "db_cache_mb", "database cache size (MB)", "MiB", MB_GAUGE, MB_SRC_STORE,   \
	  0, "the database cache in use, MiB")                                                     \
	X(RPC_OPS, "rpc_ops_per_s", "RPC operations/s", "/s", MB_RATE, MB_SRC_STORE, 0,            \
	  "operations (ROPs) completed per second; one RPC may carry several")                     \
	X(RPC_REQUESTS, "rpc_requests", "RPC requests", "", MB_GAUGE, MB_SRC_STORE, 1,             \
	  "RPCs in progress inside the store, averaged over the sample window")                    \
	X(CLIENT_LATENCY, "client_latency_ms", "client latency (ms)", "ms", MB_GAUGE, MB_SRC_LOAD, \
	  1, "mean RPC round trip measured by the load engine")                                    \
	X(STORE_VIRTUAL_MB, "store_virtual_mb", "store virtual bytes (MB)", "MiB", MB_GAUGE,       \
	  MB_SRC_STORE, 0, "the store process's virtual size (VmSize), MiB")                       \
	/* ---- measured beside the published rows ---- */                                         \
	X(MACHINE_CPU_PCT, "machine_cpu_pct", "machine processor time", "%", MB_GAUGE,             \
	  MB_SRC_HOST, 1, "whole-machine CPU busy time / wall time x 100")                         \
	X(MACHINE_STEAL_PCT, "machine_steal_pct", "machine steal time", "%", MB_GAUGE,             \
	  MB_SRC_HOST, 1,                                                                          \
	  "CPU time the hypervisor gave to other guests / wall time x 100 (0 on bare metal)")      \
	X(MACHINE_IOWAIT_PCT, "machine_iowait_pct", "machine I/O wait", "%", MB_GAUGE,             \
	  MB_SRC_HOST, 1, "CPU time idle with disk I/O outstanding (iowait) / wall time x 100")    \
	X(LOAD_CPU_PCT, "load_cpu_pct", "load engine processor time", "%", MB_GAUGE, MB_SRC_LOAD,  \
	  1, "load engine process CPU time / wall time / online CPUs x 100")                       \
	X(SYSTEM_CONTEXT_SWITCHES, "system_context_switches_per_s", "system context switches/s",   \
	  "/s", MB_RATE, MB_SRC_HOST, 0, "context switches per second of the whole machine")       \
	X(DELIVERY_RECIPIENTS, "delivery_recipients_per_s", "deliveries per recipient/s", "msg/s", \
	  MB_RATE, MB_SRC_STORE, 1,                                                                \
	  "messages delivered per second, counted once per recipient mailbox")                     \
	X(RPC_PER_S, "rpc_per_s", "RPCs/s", "/s", MB_RATE, MB_SRC_STORE, 0,                        \
	  "RPC requests (frames) completed per second")                                            \
	X(DB_READS, "db_reads_per_s", "database reads/s", "/s", MB_RATE, MB_SRC_STORE, 0,          \
	  "read I/Os to database files per second")                                                \
	X(DB_WRITES, "db_writes_per_s", "database writes/s", "/s", MB_RATE, MB_SRC_STORE, 0,       \
	  "write I/Os to database files per second")                                               \
	X(DB_READS_LV, "db_reads_lv_per_s", "database reads of long values/s", "/s", MB_RATE,      \
	  MB_SRC_STORE, 0,                                                                         \
	  "of the database reads, those of long-value pages (message bodies, attachments, large "  \
	  "property rows) per second")                                                             \
	X(DB_CACHE_HIT_PCT, "db_cache_hit_pct", "database cache hit ratio", "%", MB_GAUGE,         \
	  MB_SRC_STORE, 1,                                                                         \
	  "page requests served from the database cache / all page requests x 100")                \
	X(CACHE_DATA_PCT, "cache_data_pct", "cache-to-data ratio (%)", "%", MB_GAUGE,              \
	  MB_SRC_STORE, 2,                                                                         \
	  "configured database cache / bytes of the database files x 100 (published: 896 MB for "  \
	  "8,000 x 25 MB)")                                                                        \
	X(CHECKPOINT_DEPTH_MB, "checkpoint_depth_mb", "checkpoint depth (MB)", "MiB", MB_GAUGE,    \
	  MB_SRC_STORE, 1, "log bytes written since the last checkpoint, MiB")                     \
	X(STORE_LOOP_CPU_PCT, "store_loop_cpu_pct", "store network thread CPU (% of a core)", "%", \
	  MB_GAUGE, MB_SRC_STORE, 1,                                                               \
	  "the store's network (event loop) thread CPU time / wall time x 100: 100 is a whole "    \
	  "core, the most one thread can use")                                                     \
	X(STORE_RSS_MB, "store_rss_mb", "store resident memory (MB)", "MiB", MB_GAUGE,             \
	  MB_SRC_STORE, 0, "the store process's resident set (VmRSS), MiB")                        \
	X(STORE_SG_ERRORS, "store_sg_errors", "storage groups in error", "", MB_GAUGE,             \
	  MB_SRC_STORE, 0,                                                                         \
	  "storage groups in the ERROR state (writes refused until recovered in place)")           \
	X(CONN_REFUSED_FDCAP, "conn_refused_fd_cap_per_s", "connections refused: fd cap/s", "/s",  \
	  MB_RATE, MB_SRC_STORE, 2,                                                                \
	  "times per second the store paused accepting at its descriptor cap")                     \
	X(CONN_REFUSED_MEMORY, "conn_refused_memory_per_s",                                        \
	  "connections refused: memory budget/s", "/s", MB_RATE, MB_SRC_STORE, 2,                  \
	  "connections closed per second for a frame over the pre-logon limit or the "             \
	  "partial-frame budget")                                                                  \
	X(CONN_REFUSED_TIMEOUT, "conn_refused_timeout_per_s", "connections refused: timeout/s",    \
	  "/s", MB_RATE, MB_SRC_STORE, 2,                                                          \
	  "connections closed per second for a logon or frame timeout (slowloris)")                \
	X(LOADSIM_SCORE_MS, "loadsim_score_ms", "LoadSim score (ms)", "ms", MB_GAUGE, MB_SRC_LOAD, \
	  0,                                                                                       \
	  "95th percentile of the response times of the weighted actions since the warm-up "       \
	  "(core/score.h)")                                                                        \
	X(ACTIONS, "actions_per_s", "actions/s", "/s", MB_RATE, MB_SRC_LOAD, 2,                    \
	  "user actions completed per second")                                                     \
	X(ACTIONS_FAILED, "actions_failed_per_s", "failed actions/s", "/s", MB_RATE, MB_SRC_LOAD,  \
	  2, "user actions that failed per second")                                                \
	X(ACTIONS_FAILED_PCT, "actions_failed_pct", "failed actions (% of done)", "%", MB_GAUGE,   \
	  MB_SRC_LOAD, 2,                                                                          \
	  "actions failed / actions done x 100 over the whole run (the run's verdict; live: "      \
	  "since the start)")                                                                      \
	X(LOOP_LAG_MS, "loop_lag_ms", "load engine loop lag p99 (ms)", "ms", MB_GAUGE,             \
	  MB_SRC_LOAD, 1, "99th percentile of the load engine's event-loop lag over the window")   \
	X(LOAD_SATURATED, "load_saturated", "load engine saturated", "", MB_GAUGE, MB_SRC_LOAD, 0, \
	  "1 when the load engine runs behind its schedule (results misleading)")                  \
	X(STRESS_IOPS, "stress_iops", "storage test IOPS", "/s", MB_RATE, MB_SRC_STRESS, 0,        \
	  "storage test database reads + writes + log writes per second")                          \
	X(STRESS_READ_MS, "stress_db_read_ms", "storage test db read avg (ms)", "ms", MB_GAUGE,    \
	  MB_SRC_STRESS, 2, "storage test mean database read latency over the window")             \
	X(STRESS_LOG_MS, "stress_log_write_ms", "storage test log write avg (ms)", "ms", MB_GAUGE, \
	  MB_SRC_STRESS, 2, "storage test mean log write latency over the window")

enum mb_counter_id {
#define MB_X_ID(id, key, label, unit, kind, src, dec, def) MB_C_##id,
	MB_COUNTER_TABLE(MB_X_ID)
#undef MB_X_ID
	    MB_COUNTER_COUNT
};

/* The published rows are the first ones, up to and including this id. */
#define MB_PUBLISHED_COUNT (MB_C_STORE_VIRTUAL_MB + 1)

struct mb_counter_def {
	enum mb_counter_id id;
	const char *key;   /* stable snake_case JSON key */
	const char *label; /* the published row label */
	const char *unit;
	enum mb_counter_kind kind;
	enum mb_counter_source source;
	int decimals;		/* digits after the point when shown */
	const char *definition; /* one line: how it is measured */
};

/* The table, MB_COUNTER_COUNT entries, in declaration order. */
extern const struct mb_counter_def mb_counters[MB_COUNTER_COUNT];

/* Find a counter by JSON key; 0 and *out set, or MB_ENOTFOUND. */
int mb_counter_find(const char *key, enum mb_counter_id *out);
static inline bool mb_counter_published(enum mb_counter_id id)
{
	return (int)id < MB_PUBLISHED_COUNT;
}

#endif
