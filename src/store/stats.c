/* stats.c: the store's counters on the stats stream, once a second from
 * the loop thread: rates over the last window (RPCs, operations, network,
 * deliveries, database and log I/O, cache), gauges (memory, checkpoint
 * depth, groups in ERROR, refusals, the loop thread's own CPU), the
 * per-operation histograms, and the "store" object of the stream's extra
 * JSON (connections, limits, refused, storage groups out of service).
 *
 * Invariants: every rate is the difference to the previous window's
 * snapshot in loop_state (prev_*, io_prev, cache_prev) over the window's
 * length; histograms are reset after each window; a stream closed by the
 * reader (MB_ECLOSED) is dropped, the store goes on.
 */
#include "config.h"

#include "store/loop.h"
#include "store/net.h"
#include "store/stats.h"
#include "core/error.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void mb__stats_on_timer(uv_timer_t *t)
{
	struct mb_store *st = t->data;
	struct loop_state *ls = st->loop_state;
	double value[MB_COUNTER_COUNT];
	bool has[MB_COUNTER_COUNT];
	memset(has, 0, sizeof(has));
	memset(value, 0, sizeof(value));

	double tn = mb_now_s();
	double dt = tn - ls->t_prev;
	if (dt <= 0)
		return;
#define SET(id, v)                                                                                 \
	do {                                                                                       \
		value[MB_C_##id] = (v);                                                            \
		has[MB_C_##id] = true;                                                             \
	} while (0)
	struct mb_proc_sample ps;
	if (mb_proc_sample(0, &ps) == 0) {
		struct mb_proc_rates pr;
		if (ls->ps_prev.t > 0 && mb_proc_rates(&ls->ps_prev, &ps, &pr) == 0) {
			SET(PROCESSOR_PCT, pr.cpu_pct);
			SET(CONTEXT_SWITCHES, pr.cs_per_s);
		}
		SET(STORE_VIRTUAL_MB, (double)ps.vsize_bytes / 1048576.0);
		SET(STORE_RSS_MB, (double)ps.rss_bytes / 1048576.0);
		ls->ps_prev = ps;
	}
	/* the loop thread's own CPU time (this timer runs on it): the store's
	 * one network thread, whose core is the limit when it reaches 100 */
	double cpu = mb_thread_cpu_s();
	if (ls->loop_cpu_prev > 0 && cpu >= ls->loop_cpu_prev)
		SET(STORE_LOOP_CPU_PCT, (cpu - ls->loop_cpu_prev) / dt * 100.0);
	ls->loop_cpu_prev = cpu;
	uint64_t ddb = atomic_load(&st->c.deliveries_db);
	uint64_t drc = atomic_load(&st->c.deliveries_rcpt);
	SET(LOCAL_DELIVERY, (double)(ddb - ls->prev_ddb) / dt);
	SET(DELIVERY_RECIPIENTS, (double)(drc - ls->prev_drcpt) / dt);
	ls->prev_ddb = ddb;
	ls->prev_drcpt = drc;
	uint64_t bytes = ls->bytes_in + ls->bytes_out;
	SET(NETWORK, (double)(bytes - ls->prev_bytes) * 8.0 / 1000.0 / dt);
	ls->prev_bytes = bytes;
	SET(RPC_OPS, (double)(ls->ops - ls->prev_ops) / dt);
	SET(RPC_PER_S, (double)(ls->rpcs - ls->prev_rpcs) / dt);
	ls->prev_ops = ls->ops;
	ls->prev_rpcs = ls->rpcs;
	mb__net_inflight_change(ls, 0);
	SET(RPC_REQUESTS, ls->inflight_area / dt);
	ls->inflight_area = 0;

	struct mb_io_stats io;
	mb_io_stats_get(st->io, &io);
	const struct mb_io_kind_stats *d = &io.kind[MB_FILE_DB],
				      *dp = &ls->io_prev.kind[MB_FILE_DB];
	const struct mb_io_kind_stats *l = &io.kind[MB_FILE_LOG],
				      *lp = &ls->io_prev.kind[MB_FILE_LOG];
	SET(DB_READS, (double)(d->reads - dp->reads) / dt);
	SET(DB_WRITES, (double)(d->writes - dp->writes) / dt);
	SET(DB_TRANSFERS, (double)(d->reads + d->writes - dp->reads - dp->writes) / dt);
	SET(LOG_WRITES, (double)(l->writes - lp->writes) / dt);
	SET(DISK_MB, (double)(d->read_bytes + d->write_bytes + l->read_bytes + l->write_bytes -
			      dp->read_bytes - dp->write_bytes - lp->read_bytes - lp->write_bytes) /
			 1048576.0 / dt);
	ls->io_prev = io;
	struct mb_cache_stats cs;
	mb_cache_stats_get(st->cache, &cs);
	SET(DB_CACHE_MB, (double)cs.bytes_in_use / 1048576.0);
	/* the configured cache against the database files (fstat-free: stat
	 * of the paths, the handles belong to the database threads) */
	uint64_t dbytes = 0;
	for (int k = 1; k <= st->ndb; k++) {
		char p[4200];
		struct stat sb;
		snprintf(p, sizeof(p), "%s/sg%d/db%02d.mdb", st->o.data, st->w[k - 1].sg, k);
		if (stat(p, &sb) == 0)
			dbytes += (uint64_t)sb.st_size;
	}
	if (dbytes > 0)
		SET(CACHE_DATA_PCT, 100.0 * (double)cs.bytes_limit / (double)dbytes);
	SET(DB_READS_LV, (double)(cs.reads_lv - ls->cache_prev.reads_lv) / dt);
	uint64_t req = cs.hits + cs.misses - ls->cache_prev.hits - ls->cache_prev.misses;
	if (req)
		SET(DB_CACHE_HIT_PCT,
		    100.0 * (double)(cs.hits - ls->cache_prev.hits) / (double)req);
	ls->cache_prev = cs;
	double depth = 0;
	uint64_t commits = 0, lw = 0, lb = 0;
	uint64_t transient = 0;
	int in_error = 0;
	for (int g = 0; g < st->nsg; g++) {
		struct mb_sg_stats ss;
		if (ls->sgst && ls->sgst[g].err)
			in_error++;
		if (!st->sgs[g])
			continue;
		mb_sg_stats_get(st->sgs[g], &ss);
		depth += (double)ss.checkpoint_depth;
		commits += ss.commits;
		lw += ss.log_writes;
		lb += ss.log_bytes;
		transient += ss.transient_waits;
	}
	SET(CHECKPOINT_DEPTH_MB, depth / 1048576.0);
	SET(STORE_SG_ERRORS, in_error);
	SET(CONN_REFUSED_FDCAP, (double)(ls->refused_fdcap - ls->prev_fdcap) / dt);
	SET(CONN_REFUSED_MEMORY, (double)(ls->refused_memory - ls->prev_memory) / dt);
	SET(CONN_REFUSED_TIMEOUT, (double)(ls->refused_timeout - ls->prev_timeout) / dt);
	ls->prev_fdcap = ls->refused_fdcap;
	ls->prev_memory = ls->refused_memory;
	ls->prev_timeout = ls->refused_timeout;
#undef SET
	ls->t_prev = tn;

	if (!ls->stats)
		return;
	json_t *h = json_object();
	json_t *x = json_object();
	json_t *opc = json_object();
	char *enc;
	if (mb_hist_count(ls->rpc_hist) && mb_hist_encode(ls->rpc_hist, &enc) == 0) {
		json_object_set_new(h, "store_rpc", json_string(enc));
		free(enc);
	}
	for (int i = 0; i < MB_OP_COUNT; i++) {
		const char *name = mb_op_name(mb_op_code_at(i));
		json_object_set_new(opc, name,
				    json_pack("{s:I,s:I}", "n", (json_int_t)ls->op_count[i],
					      "errors", (json_int_t)ls->op_errors[i]));
		if (mb_hist_count(ls->op_hist[i]) && mb_hist_encode(ls->op_hist[i], &enc) == 0) {
			char key[80];
			snprintf(key, sizeof(key), "store_op_%s", name);
			json_object_set_new(h, key, json_string(enc));
			free(enc);
		}
		mb_hist_reset(ls->op_hist[i]);
	}
	mb_hist_reset(ls->rpc_hist);
	json_object_set_new(x, "ops", opc);
	json_t *groups = json_array();
	for (int g = 0; g < st->nsg && ls->sgst; g++) {
		const struct sg_state *gs = &ls->sgst[g];
		if (!gs->err && !gs->recoveries)
			continue;
		json_t *o = json_pack("{s:i,s:s,s:I}", "sg", g + 1, "state",
				      !gs->err	    ? "ok"
				      : gs->offline ? "offline"
						    : "error",
				      "recoveries", (json_int_t)gs->recoveries);
		if (gs->err) {
			json_object_set_new(o, "error", json_string(mb_errname(gs->err)));
			json_object_set_new(o, "message", json_string(mb_strerror(gs->err)));
			json_object_set_new(
			    o, "since_s", json_real((double)(mb_now_ms() - gs->since_ms) / 1000.0));
		} else {
			/* the last episode: its error, time out of service, how long ago */
			json_object_set_new(o, "error", json_string(mb_errname(gs->last_err)));
			json_object_set_new(o, "out_s", json_real(gs->last_out_s));
			json_object_set_new(
			    o, "recovered_s",
			    json_real((double)(mb_now_ms() - gs->recovered_ms) / 1000.0));
		}
		if (gs->what[0])
			json_object_set_new(o, "cause", json_string(gs->what));
		json_array_append_new(groups, o);
	}
	const struct mb_topo_info *ti = mb_topology_info(st->topo);
	json_object_set_new(
	    x, "store",
	    json_pack("{s:i,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:s,s:b,s:i,s:i,s:i}", "connections",
		      ls->nconns, "rpcs_total", (json_int_t)ls->rpcs, "ops_total",
		      (json_int_t)ls->ops, "frame_errors", (json_int_t)ls->frame_errors, "commits",
		      (json_int_t)commits, "log_writes_total", (json_int_t)lw, "log_bytes_total",
		      (json_int_t)lb, "deliveries_total", (json_int_t)ddb, "scale", ti->scale,
		      "scenario", ti->scenario, "compression", st->o.compression ? 1 : 0,
		      "databases", st->ndb, "storage_groups", st->nsg, "cache_limit_mb",
		      (int)(cs.bytes_limit >> 20)));
	json_t *sx = json_object_get(x, "store");
	json_object_set_new(sx, "groups", groups);
	json_object_set_new(
	    sx, "limits",
	    json_pack("{s:i,s:i,s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "fd_limit", ls->fd_limit,
		      "conn_cap", ls->conn_cap, "accept_paused", ls->accept_paused, "partial_bytes",
		      (json_int_t)ls->partial_bytes, "partial_budget",
		      (json_int_t)ls->partial_budget, "log_transient_waits", (json_int_t)transient,
		      "prelogon_frame", (json_int_t)st->o.prelogon_frame, "max_frame",
		      (json_int_t)st->o.max_frame, "held_bytes",
		      (json_int_t)atomic_load(&st->held.total), "held_session_max",
		      (json_int_t)st->held.session_max, "held_store_max",
		      (json_int_t)st->held.store_max));
	/* the free-space reserve: looked at now, so the figure is this second's */
	mb__reserve_look(st);
	json_t *lim = json_object_get(sx, "limits");
	json_object_set_new(lim, "min_free", json_integer((json_int_t)st->reserve.min_free));
	json_object_set_new(lim, "disk_free",
			    atomic_load(&st->reserve.known)
				? json_integer((json_int_t)atomic_load(&st->reserve.free))
				: json_null());
	json_object_set_new(lim, "disk_pending",
			    json_integer((json_int_t)atomic_load(&st->reserve.pending)));
	json_object_set_new(lim, "disk_low", json_boolean(atomic_load(&st->reserve.low)));
	json_object_set_new(sx, "refused",
			    json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "fd_cap",
				      (json_int_t)ls->refused_fdcap, "memory",
				      (json_int_t)ls->refused_memory, "timeout",
				      (json_int_t)ls->refused_timeout, "max_connections",
				      (json_int_t)ls->conns_refused, "held",
				      (json_int_t)atomic_load(&st->held.refused), "disk",
				      (json_int_t)atomic_load(&st->reserve.refused)));
	if (mb_stats_write(ls->stats, dt, value, has, h, x) == MB_ECLOSED) {
		mb_stats_writer_destroy(ls->stats);
		ls->stats = NULL;
	}
	json_decref(h);
	json_decref(x);
}
