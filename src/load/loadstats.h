/* loadstats.h: what the load engine measures, as one mergeable set.
 *
 * A set holds latency histograms (every RPC round trip; RPC round trips by
 * the first operation of the request, named by the target driver; action response times per action;
 * the event-loop lag; how late user timers fire) and plain counts (actions
 * scheduled/done/failed/late per action, operations by code, RPCs, bytes on
 * the wire, reconnects, messages sent and delivered...).  Every scheduled
 * action ends up exactly once as done, failed or cut (still queued or
 * running at the stop).  Each loop thread
 * records into its own set; the stats thread merges sets exactly
 * (histogram buckets and counts add) and encodes a window for the stats
 * stream ("h" and "x" of src/core/stats.h).  Not thread-safe: the owner
 * serialises access (the engine merges under a per-loop mutex).
 */
#ifndef MB_LOAD_LOADSTATS_H
#define MB_LOAD_LOADSTATS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "core/hist.h"
#include "core/scenario.h"

/* Plain counts, X(field, json key). */
#define MB_LOAD_COUNT_TABLE(X)                                                                     \
	X(rpcs, "rpcs")                                                                            \
	X(ops, "ops")                                                                              \
	X(bytes_sent, "bytes_sent")                                                                \
	X(bytes_received, "bytes_received")                                                        \
	X(logons, "logons")                                                                        \
	X(logon_failures, "logon_failures")                                                        \
	X(connect_failures, "connect_failures")                                                    \
	X(connections_lost, "connections_lost")                                                    \
	X(reconnects, "reconnects")                                                                \
	X(op_errors, "op_errors")                                                                  \
	X(msgs_sent, "msgs_sent")                                                                  \
	X(deliveries, "deliveries")                                                                \
	X(notifications, "notifications")                                                          \
	X(notify_fetches, "notify_fetches")                                                        \
	X(syncs, "syncs")                                                                          \
	X(sync_items, "sync_items")                                                                \
	X(first_syncs, "first_syncs")                                                              \
	X(local_reads, "local_reads")                                                              \
	X(overruns, "overruns")                                                                    \
	X(acks_create, "acks_create")                                                              \
	X(acks_delete, "acks_delete")

struct mb_load_counts {
#define MB_X_LC(f, k) uint64_t f;
	MB_LOAD_COUNT_TABLE(MB_X_LC)
#undef MB_X_LC
};

/* Why actions failed: index 0 an arrival that found MB_PEND_MAX actions
 * of its user waiting (an overrun), -rc for an error code of the table,
 * MB_ERROR_COUNT for a code outside it. */
#define MB_LOAD_FAIL_CAUSES (MB_ERROR_COUNT + 1)
#define MB_LOAD_FAIL_OVERRUN 0
int mb_load_fail_cause(int rc);
/* "overrun", the code's name ("MB_EFULL"), or "MB_E?"; what it means. */
const char *mb_load_fail_cause_name(int cause);
const char *mb_load_fail_cause_text(int cause);

/* Operations a target driver may name (target.h). */
#define MB_LOAD_OPS_MAX 64
/* The actions, then the engine's tasks (logon, sync, keepalive: behave.h) */
#define MB_LOAD_TASKS (MB_ACTION_COUNT + 3)

struct mb_load_stats {
	const char *const *op_names;		    /* the driver's (borrowed), or NULL */
	int nops;				    /* rpc_by_op[0..nops) exist */
	struct mb_hist *rpc;			    /* every RPC round trip */
	struct mb_hist *rpc_by_op[MB_LOAD_OPS_MAX]; /* by the request's first op */
	struct mb_hist *action[MB_ACTION_COUNT];    /* action response time */
	struct mb_hist *loop_lag;		    /* event-loop lag */
	struct mb_hist *timer_late;		    /* user timers firing late */
	uint64_t scheduled[MB_ACTION_COUNT];
	uint64_t done[MB_ACTION_COUNT];
	uint64_t failed[MB_ACTION_COUNT];
	uint64_t failed_by[MB_LOAD_FAIL_CAUSES]; /* failed actions by cause (sums to failed) */
	uint64_t late[MB_ACTION_COUNT];		 /* started > MB_LOAD_LATE_NS behind */
	double first_ok_t;			 /* monotonic seconds (core/sampler.h's
						    clock, shared by every process) of the
						    first action done in the window, 0 none */
	uint64_t cut[MB_ACTION_COUNT];		 /* queued or running when the run
						  * stopped: neither done nor failed */
	uint64_t op_count[MB_LOAD_OPS_MAX];	 /* operations sent, by op */
	uint64_t task_rpcs[MB_LOAD_TASKS];	 /* requests sent, by the action (or engine
						  * task: logon, sync, keepalive) that sent them */
	uint64_t task_ops[MB_LOAD_TASKS];	 /* operations sent, the same */
	struct mb_load_counts n;
};

/* An action that starts this long after its scheduled time is late. */
#define MB_LOAD_LATE_NS (1000ull * 1000 * 1000)

/* A loop is saturated (its figures are misleading) when, in a window, its
 * lag p99 exceeds MB_LOAD_LAG_SATURATED_NS or user timers fire more than
 * MB_LOAD_LATE_SATURATED_NS late (p99). */
#define MB_LOAD_LAG_SATURATED_NS (50ull * 1000000u)
#define MB_LOAD_LATE_SATURATED_NS (1000ull * 1000000u)
bool mb_load_stats_saturated(const struct mb_load_stats *win);

int mb_load_stats_create(struct mb_load_stats **out);
/* Name the operations (a driver's op_names, which must outlive s) and
 * create their histograms; a merge adopts the source's names. */
int mb_load_stats_set_ops(struct mb_load_stats *s, const char *const *names, int n);
void mb_load_stats_destroy(struct mb_load_stats *s);
void mb_load_stats_reset(struct mb_load_stats *s);
/* dst += src, exactly. */
void mb_load_stats_merge(struct mb_load_stats *dst, const struct mb_load_stats *src);

/* Total actions done / failed over all actions. */
uint64_t mb_load_stats_done(const struct mb_load_stats *s);
uint64_t mb_load_stats_failed(const struct mb_load_stats *s);

/* The LoadSim score of what s holds (mb_score_ns in core/score.h: p95 of
 * the merged response times of the actions with weights[a] > 0, the
 * scenario's actions per day).  MB_ENOTFOUND when no such action has
 * completed. */
int mb_load_stats_score_ns(const struct mb_load_stats *s, const double *weights, double *out_ns);

/* Histograms as a JSON object for the stats stream's "h": keys "rpc",
 * "rpc.<OpName>", "action.<action key>", "loop_lag", "timer_late"; empty
 * histograms are left out.  Counts as a JSON object for "x". */
int mb_load_stats_hists_json(const struct mb_load_stats *s, json_t **out);
int mb_load_stats_counts_json(const struct mb_load_stats *s, json_t **out);
/* Add what mb_load_stats_hists_json / counts_json wrote back into s (the
 * supervisor's side, and the round-trip test). MB_EPROTO on bad input. */
int mb_load_stats_merge_json(struct mb_load_stats *s, json_t *hists, json_t *counts);

#endif
