/* loadout.c: what a `mailbench load` run writes: once per second on
 * --stats-fd one stats line (counters of source MB_SRC_LOAD in "c", the
 * window's histograms in "h", per-action and per-operation counts and
 * bytes in "x", with the target, the user range and what the target
 * cannot run; with --mpi, rank 0 writes the job's reduced window), and
 * without --stats-fd the summary table at the end.  Per-user-day figures
 * use the users' time up to the stop, after the warm-up.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/counters.h"
#include "core/error.h"
#include "core/score.h"
#include "core/table.h"
#include "load/target.h"
#include "load/loadrun_int.h"

/* Simulated user-days so far: this engine's, or (--mpi, rank 0) the job's. */
static double run_user_days(struct run *r)
{
	return r->dist ? r->ds.user_days : mb_engine_user_days(r->eng);
}

/* --mpi: this rank's window goes to the job; on rank 0, r->win becomes the
 * job's window and r->ds its sums.  Returns true on rank 0 (which goes on
 * to write the stats line), false on the others. */
static bool dist_window(struct run *r)
{
	double lag = mb_hist_count(r->win->loop_lag) > 0
			 ? (double)mb_hist_percentile_ns(r->win->loop_lag, 99) / 1e6
			 : -1;
	json_decref(r->ds.ranks);
	free(r->ds.acks);
	r->ds.ranks = NULL;
	r->ds.acks = NULL;
	bool stop = false;
	if (mb_distload_window(r->dist, r->win, mb_load_stats_saturated(r->win), lag,
			       mb_engine_users_on(r->eng), mb_engine_user_days(r->eng),
			       r->want_stop, &r->ds, &stop) != 0) {
		fprintf(stderr, "mailbench load: rank %d: the window exchange failed\n",
			mb_distload_rank(r->dist));
		mb_distload_end(r->dist, MB_EXIT_RUNTIME);
	}
	r->dist_stop |= stop;
	return mb_distload_rank(r->dist) == 0;
}

static void add_extra(struct run *r, json_t *x)
{
	double ud = run_user_days(r);
	json_object_set_new(x, "accel", json_real(r->accel));
	json_object_set_new(x, "mode",
			    json_string(r->sc->mode == MB_MODE_CACHED ? "cached" : "online"));
	json_object_set_new(x, "users_configured", json_integer(r->count));
	json_object_set_new(x, "user_range", json_pack("[ii]", r->first, r->first + r->count - 1));
	json_object_set_new(x, "users_population", json_integer(r->users));
	json_object_set_new(x, "target", json_string(mb_engine_target(r->eng)->name));
	json_t *un = json_array();
	for (int a = 0; a < MB_ACTION_COUNT; a++)
		if (mb_engine_unsupported(r->eng) >> a & 1u)
			json_array_append_new(un, json_string(mb_actions[a].key));
	json_object_set_new(x, "unsupported", un);
	json_object_set_new(x, "user_struct_bytes",
			    json_integer((json_int_t)mb_engine_user_struct_bytes(r->eng)));
	if (r->have_ps)
		json_object_set_new(x, "rss_bytes", json_integer((json_int_t)r->ps_last.rss_bytes));
	json_object_set_new(x, "user_days", json_real(ud));
	if (r->dist) {
		json_object_set_new(x, "mpi_ranks", json_integer(mb_distload_size(r->dist)));
		json_object_set_new(x, "saturated_ranks", json_integer(r->ds.saturated_ranks));
		if (r->ds.ranks)
			json_object_set_new(x, "ranks", json_incref(r->ds.ranks));
		if (r->ds.acks) /* --ack-log -: the supervisor writes them */
			json_object_set_new(x, "acks", json_stringn(r->ds.acks, r->ds.acks_len));
	}
	if (ud > 0) {
		json_object_set_new(x, "sent_per_user_day",
				    json_real((double)r->total->n.msgs_sent / ud));
		json_object_set_new(x, "received_per_user_day",
				    json_real((double)r->total->n.deliveries / ud));
	}
}

void mb__load_sample(struct run *r, bool final)
{
	double now = mb_now_s();
	double dt = now - r->t_last;
	if (dt <= 0)
		dt = 1e-3;
	r->t_last = now;
	mb_load_stats_reset(r->win);
	mb_engine_collect(r->eng, r->win);
	if (r->dist && !dist_window(r))
		return; /* not rank 0: the job's figures are rank 0's to write */
	/* the window that ends the warmup is still part of it */
	bool counted = r->warm;
	if (!r->warm && now - r->t0 >= r->warmup_s) {
		r->warm = true;
		r->ud_warm = run_user_days(r);
		r->have_ps_warm = mb_proc_sample(0, &r->ps_warm) == 0;
	}
	if (counted)
		mb_load_stats_merge(r->total, r->win);
	r->logons_all += r->win->n.logons;
	r->done_all += mb_load_stats_done(r->win);
	r->failed_all += mb_load_stats_failed(r->win);

	double v[MB_COUNTER_COUNT] = {0};
	bool has[MB_COUNTER_COUNT] = {false};
	v[MB_C_USERS] = r->dist ? r->ds.users_on : mb_engine_users_on(r->eng);
	has[MB_C_USERS] = true;
	if (!final)
		r->users_on_last = (int)v[MB_C_USERS];
	if (mb_hist_count(r->win->rpc) > 0) {
		v[MB_C_CLIENT_LATENCY] = mb_hist_mean_ns(r->win->rpc) / 1e6;
		has[MB_C_CLIENT_LATENCY] = true;
	}
	double score;
	if (mb_load_stats_score_ns(r->total, r->sc->actions_per_day, &score) == 0) {
		v[MB_C_LOADSIM_SCORE_MS] = score / 1e6;
		has[MB_C_LOADSIM_SCORE_MS] = true;
	}
	v[MB_C_ACTIONS] = (double)mb_load_stats_done(r->win) / dt;
	has[MB_C_ACTIONS] = true;
	v[MB_C_ACTIONS_FAILED] = (double)mb_load_stats_failed(r->win) / dt;
	has[MB_C_ACTIONS_FAILED] = true;
	if (r->done_all || r->failed_all) {
		v[MB_C_ACTIONS_FAILED_PCT] =
		    r->done_all ? 100.0 * (double)r->failed_all / (double)r->done_all : 100.0;
		has[MB_C_ACTIONS_FAILED_PCT] = true;
	}
	bool saturated = mb_load_stats_saturated(r->win);
	if (mb_hist_count(r->win->loop_lag) > 0) {
		v[MB_C_LOOP_LAG_MS] = (double)mb_hist_percentile_ns(r->win->loop_lag, 99) / 1e6;
		has[MB_C_LOOP_LAG_MS] = true;
	}
	if (r->dist) /* the job: saturated when any rank is */
		saturated = r->ds.saturated;
	v[MB_C_LOAD_SATURATED] = saturated ? 1 : 0;
	has[MB_C_LOAD_SATURATED] = true;
	if (counted) {
		r->windows++;
		r->saturated_windows += saturated;
	}
	struct mb_proc_sample ps;
	if (mb_proc_sample(0, &ps) == 0) {
		struct mb_proc_rates pr;
		if (r->dist) { /* the job: every rank's CPU over the load hosts' */
			v[MB_C_LOAD_CPU_PCT] = r->ds.cpu_pct;
			has[MB_C_LOAD_CPU_PCT] = r->ds.has_cpu;
		} else if (r->have_ps && mb_proc_rates(&r->ps_last, &ps, &pr) == 0) {
			v[MB_C_LOAD_CPU_PCT] = pr.cpu_pct;
			has[MB_C_LOAD_CPU_PCT] = true;
		}
		r->ps_last = ps;
		r->have_ps = true;
	}
	if (!r->w)
		return;
	json_t *h = NULL, *x = NULL;
	if (mb_load_stats_hists_json(r->win, &h) != 0 ||
	    mb_load_stats_counts_json(r->win, &x) != 0) {
		json_decref(h);
		return;
	}
	add_extra(r, x);
	if (mb_stats_write(r->w, dt, v, has, h, x) != 0)
		r->write_failed = 1;
	json_decref(h);
	json_decref(x);
}

/* The per-action table, through the table model (core/table.h): counts
 * as plain integers (scripts read the columns), times in ms or "n/a". */
enum { C_SCHED, C_DONE, C_FAILED, C_LATE, C_CUT, C_P50, C_P95, C_P99, C_N };

static void print_actions(struct run *r)
{
	static const char *const head[C_N] = {"scheduled", "done",   "failed", "late",
					      "cut",	   "p50 ms", "p95 ms", "p99 ms"};
	struct mb_load_stats *t = r->total;
	struct mb_table *tb;
	if (mb_table_create(C_N, &tb) != 0) {
		fprintf(stderr, "mailbench load: out of memory for the action table\n");
		return;
	}
	mb_table_set_label_heading(tb, "action");
	for (int c = 0; c < C_N; c++)
		mb_table_set_heading(tb, c, head[c], NULL);
	for (int a = 0; a < MB_ACTION_COUNT; a++) {
		bool unsupported = mb_engine_unsupported(r->eng) >> a & 1u;
		if (!unsupported && !t->scheduled[a] && !t->done[a] && !t->failed[a] &&
		    r->sc->actions_per_day[a] <= 0)
			continue;
		int row;
		if (mb_table_add_row(tb, mb_actions[a].label, MB_ROW_NORMAL, &row) != 0)
			break;
		if (unsupported) {
			mb_table_set_cell(tb, row, C_SCHED, "not supported by the target");
			continue;
		}
		const uint64_t n[C_P50] = {t->scheduled[a], t->done[a], t->failed[a], t->late[a],
					   t->cut[a]};
		char buf[32];
		for (int c = C_SCHED; c < C_P50; c++) {
			snprintf(buf, sizeof(buf), "%llu", (unsigned long long)n[c]);
			mb_table_set_cell(tb, row, c, buf);
		}
		static const int pct[3] = {50, 95, 99};
		bool timed = mb_hist_count(t->action[a]) > 0;
		for (int k = 0; k < 3; k++) {
			if (timed)
				snprintf(buf, sizeof(buf), "%.1f",
					 mb_hist_percentile_ns(t->action[a], pct[k]) / 1e6);
			else
				snprintf(buf, sizeof(buf), "n/a");
			mb_table_set_cell(tb, row, C_P50 + k, buf);
		}
		if (t->failed[a])
			mb_table_set_verdict(tb, row, MB_VERDICT_FAIL);
	}
	mb_table_print(tb, stdout, 160);
	mb_table_destroy(tb);
}

void mb__load_print_summary(struct run *r)
{
	struct mb_load_stats *t = r->total;
	double ud = run_user_days(r) - r->ud_warm;
	printf("mailbench load: %s, %d users, accel %g, %.1f s", r->sc->title, r->count, r->accel,
	       mb_now_s() - r->t0);
	if (r->count != r->users)
		printf(" (users %d-%d of %d)", r->first, r->first + r->count - 1, r->users);
	if (r->dist)
		printf(", %d MPI ranks", mb_distload_size(r->dist));
	printf(", target %s", mb_engine_target(r->eng)->name);
	if (r->warmup_s > 0)
		printf(" (figures after a %.0f s warmup)", r->warmup_s);
	printf(", %.2f simulated user-days\n", ud);
	printf("users logged on at the end: %d of %d\n", r->users_on_last, r->count);
	print_actions(r);
	double score;
	if (mb_load_stats_score_ns(t, r->sc->actions_per_day, &score) == 0)
		printf("LoadSim score (weighted p95): %.1f ms\n", score / 1e6);
	else
		printf("LoadSim score (weighted p95): n/a\n");
	if (mb_hist_count(t->rpc))
		printf("RPC round trip: mean %.2f ms, p50 %.2f, p95 %.2f, p99 %.2f ms (%llu RPCs, "
		       "%llu ops, "
		       "%llu ops failed)\n",
		       mb_hist_mean_ns(t->rpc) / 1e6, mb_hist_percentile_ns(t->rpc, 50) / 1e6,
		       mb_hist_percentile_ns(t->rpc, 95) / 1e6,
		       mb_hist_percentile_ns(t->rpc, 99) / 1e6, (unsigned long long)t->n.rpcs,
		       (unsigned long long)t->n.ops, (unsigned long long)t->n.op_errors);
	if (ud > 0)
		printf("messages per user-day: sent %.2f (scenario %.2f), received %.2f (scenario "
		       "%.2f)\n",
		       t->n.msgs_sent / ud, r->sc->messages_sent_per_day, t->n.deliveries / ud,
		       r->sc->messages_received_per_day);
	printf("bytes on the wire: sent %llu, received %llu\n", (unsigned long long)t->n.bytes_sent,
	       (unsigned long long)t->n.bytes_received);
	printf("connections: logons %llu, logon failures %llu, connect failures %llu, lost %llu, "
	       "reconnects %llu\n",
	       (unsigned long long)t->n.logons, (unsigned long long)t->n.logon_failures,
	       (unsigned long long)t->n.connect_failures, (unsigned long long)t->n.connections_lost,
	       (unsigned long long)t->n.reconnects);
	const char *sep = "failed actions by cause: ";
	for (int i = 0; i < MB_LOAD_FAIL_CAUSES; i++) {
		if (!t->failed_by[i])
			continue;
		printf("%s%s %llu (%s)", sep, mb_load_fail_cause_name(i),
		       (unsigned long long)t->failed_by[i], mb_load_fail_cause_text(i));
		sep = "; ";
	}
	if (sep[0] == ';')
		printf("\n");
	if (r->sc->mode == MB_MODE_CACHED)
		printf(
		    "cached mode: syncs %llu (%llu items), local reads %llu, notifications %llu\n",
		    (unsigned long long)t->n.syncs, (unsigned long long)t->n.sync_items,
		    (unsigned long long)t->n.local_reads, (unsigned long long)t->n.notifications);
	else if (t->n.notifications)
		printf("notifications %llu, fetched in %llu requests\n",
		       (unsigned long long)t->n.notifications,
		       (unsigned long long)t->n.notify_fetches);
	if (r->have_ps)
		printf("%smemory: RSS %.1f MiB while running, %.0f bytes per simulated user (user "
		       "state "
		       "%zu bytes)\n",
		       r->dist ? "rank 0: " : "", r->ps_last.rss_bytes / 1048576.0,
		       (double)r->ps_last.rss_bytes /
			   (r->dist ? mb_distload_slice(r->dist)->users : r->count),
		       mb_engine_user_struct_bytes(r->eng));
	if (r->have_ps && r->have_ps_warm && r->ps_last.t > r->ps_warm.t) {
		int ncpu = 1;
		mb_online_cpus(&ncpu);
		printf("%sload engine CPU: %.1f%% of one core\n", r->dist ? "rank 0: " : "",
		       (r->ps_last.cpu_s - r->ps_warm.cpu_s) / (r->ps_last.t - r->ps_warm.t) *
			   100.0);
	}
	if (mb_hist_count(t->loop_lag))
		printf(
		    "load engine: loop lag p50 %.2f ms, p99 %.2f ms, max %.2f ms, saturated %llu "
		    "of %llu s%s\n",
		    mb_hist_percentile_ns(t->loop_lag, 50) / 1e6,
		    mb_hist_percentile_ns(t->loop_lag, 99) / 1e6, mb_hist_max_ns(t->loop_lag) / 1e6,
		    (unsigned long long)r->saturated_windows, (unsigned long long)r->windows,
		    r->saturated_windows ? " (results from a saturated load engine are misleading)"
					 : "");
}
