/* session_measure.c: the session's measurements: the children's stats
 * streams (core/stats.h) into the latest counters of each source, the run's
 * histograms (whole run, after warm-up, the storage test's, the store's
 * under "store." names), the per-window latency timeline and the load
 * engine's counts (lx, summed by mb_load_stats_merge_json); a real
 * server's counters from /proc (srvmon.h); the 1 Hz tick that appends one
 * row to the series; the run averages.
 * Invariants: the series gets exactly one row per tick while the load or
 * the storage test runs; a counter's value comes only from its source
 * process's last stats line, and only if that line is at most STALE_S old;
 * a window enters the run averages only when it lies wholly after its
 * source's warm-up, weighted by its length; nothing is carried over from a
 * previous run (mb__reset_measurements). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/score.h"
#include "load/dist.h"
#include "report/session_int.h"

/* a source's last stats line older than this: its counters are n/a */
#define STALE_S 2.5

static void merge_hists(struct mb_session *s, json_t *h, bool warm)
{
	if (!json_is_object(h))
		return;
	mb_histset_merge_json(s->hists, h);
	if (warm)
		mb_histset_merge_json(s->hists_warm, h);
}

static bool has_number(json_t *o, const char *key)
{
	return json_is_number(json_object_get(o, key));
}

/* The load engine's "x" holds the counts of its window (written by
 * mb_load_stats_counts_json): summed into lx by its reader.  Returns the
 * window's deliveries, or -1 when the window has no counts. */
static double sum_load_counts(struct mb_session *s, json_t *x)
{
	if (!json_is_object(json_object_get(x, "actions")))
		return -1;
	uint64_t before = s->lx->n.deliveries;
	if (mb_load_stats_merge_json(s->lx, NULL, x) != 0)
		return -1;
	s->has_x = true;
	json_t *un = json_object_get(x, "unsupported");
	for (size_t k = 0; json_is_array(un) && k < json_array_size(un); k++)
		for (int i = 0; i < MB_ACTION_COUNT; i++)
			if (json_is_string(json_array_get(un, k)) &&
			    !strcmp(json_string_value(json_array_get(un, k)), mb_actions[i].key))
				s->unsupported |= 1u << i;
	if (has_number(x, "msgs_sent"))
		s->has_msgs_sent = true;
	if (has_number(x, "connections_lost") || has_number(x, "reconnects") ||
	    has_number(x, "connect_failures") || has_number(x, "logon_failures"))
		s->has_conn = true;
	bool dl = has_number(x, "deliveries");
	if (dl)
		s->has_deliveries = true;
	/* simulated user-days: cumulative, counted by the load engine from
	 * each user's first logon to the stop (users still ramping up do not
	 * count), so it matches the counts summed over the whole run */
	json_t *ud = json_object_get(x, "user_days");
	if (json_is_number(ud)) {
		s->user_days = json_number_value(ud);
		s->has_user_days = true;
	}
	return dl ? (double)(s->lx->n.deliveries - before) : -1;
}

/* Cached mode: how long past the warm-up the measured window may wait
 * for the users' first downloads. */
static double first_sync_wait_max(const struct mb_session *s)
{
	double w = mb_session_warmup(s);
	double d = s->p.duration_s > 0 ? (s->p.duration_s - w) / 2 : 300;
	return d > 0 ? d : 0;
}

double mb_session_measure_from(const struct mb_session *s)
{
	if (s->load_t0 <= 0)
		return 0;
	double w = mb_session_warmup(s);
	if (s->sc.mode != MB_MODE_CACHED)
		return w;
	double latest = w + first_sync_wait_max(s);
	double done = s->first_syncs_at > 0 ? s->first_syncs_at - s->load_t0 : -1;
	if (done >= 0 && done < latest)
		return done > w ? done : w;
	return latest;
}

uint64_t mb_session_first_downloads(const struct mb_session *s) { return s->lx->n.first_syncs; }

/* The warm-up of a source ends at (monotonic seconds); 0: not started. */
static double warm_end(const struct mb_session *s, enum mb_counter_source src)
{
	if (src == MB_SRC_STRESS)
		return s->stress_t0 > 0 ? s->stress_t0 + (s->have_st ? s->st.warmup_s : 0) : 0;
	return s->load_t0 > 0 ? s->load_t0 + mb_session_measure_from(s) : 0;
}

/* A window of dt seconds that ended at `at`: into the run averages when it
 * lies after the warm-up. */
static void add_window(struct mb_session *s, enum mb_counter_source src, double at, double dt,
		       const double *v, const bool *has)
{
	double we = warm_end(s, src);
	if (we <= 0 || !(dt > 0) || at - dt < we - 0.05)
		return;
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		if (!has[i] || mb_counters[i].source != src)
			continue;
		s->wsum[i] += v[i] * dt;
		s->wdt[i] += dt;
	}
}

static void write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

void mb__on_stats(void *arg, struct mb_child *c, const struct mb_stats_msg *m)
{
	struct mb_session *s = arg;
	enum mb_counter_source src;
	switch (mb__role_of(c)) {
	case ROLE_STORE:
		src = MB_SRC_STORE;
		break;
	case ROLE_LOAD:
		src = MB_SRC_LOAD;
		break;
	case ROLE_STRESS:
		src = MB_SRC_STRESS;
		break;
	default:
		return;
	}
	struct latest *l = &s->lat[src];
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		l->has[i] = m->has[i] && mb_counters[i].source == src;
		l->v[i] = m->value[i];
	}
	l->at = mb_now_s();
	add_window(s, src, l->at, m->dt, m->value, l->has);
	if (src == MB_SRC_STORE) /* storage groups in the ERROR state */
		mb_faults_store_x(s->faults,
				  json_object_get(json_object_get(m->root, "x"), "store"));
	json_t *h = json_object_get(m->root, "h");
	if (src == MB_SRC_LOAD) {
		/* (decided before this window's counts: the window that shows
		 * the last first download done still holds some of it) */
		bool warm = s->load_t0 > 0 && l->at >= warm_end(s, MB_SRC_LOAD);
		const struct mb_hist *rpc = mb_histset_find(s->hists, MB_HIST_RPC);
		double before = rpc ? (double)mb_hist_count(rpc) : 0;
		merge_hists(s, h, warm);
		double dl = sum_load_counts(s, json_object_get(m->root, "x"));
		if (s->first_syncs_at <= 0 && s->load_t0 > 0 && s->sc.mode == MB_MODE_CACHED &&
		    mb_session_users(s) > 0 &&
		    s->lx->n.first_syncs >= (uint64_t)mb_session_users(s))
			s->first_syncs_at = l->at;
		if (s->imap && m->dt > 0) {
			/* an IMAP target's "RPC operations/s" are its protocol
			 * commands (IMAP + SMTP), counted by the load engine */
			rpc = mb_histset_find(s->hists, MB_HIST_RPC);
			struct latest *sl = &s->lat[MB_SRC_STORE];
			double one[MB_COUNTER_COUNT];
			bool onehas[MB_COUNTER_COUNT];
			memset(onehas, 0, sizeof(onehas));
			one[MB_C_RPC_OPS] =
			    ((rpc ? (double)mb_hist_count(rpc) : 0) - before) / m->dt;
			onehas[MB_C_RPC_OPS] = true;
			/* local deliveries: new messages the recipients saw arrive */
			if (dl >= 0) {
				one[MB_C_LOCAL_DELIVERY] = dl / m->dt;
				onehas[MB_C_LOCAL_DELIVERY] = true;
			}
			for (int i = 0; i < MB_COUNTER_COUNT; i++)
				if (onehas[i]) {
					sl->v[i] = one[i];
					sl->has[i] = true;
				}
			sl->at = l->at;
			add_window(s, MB_SRC_STORE, l->at, m->dt, one, onehas);
		}
		mb_timeline_add(s->timeline, l->at - s->t0, h);
		mb_faults_load_x(s->faults, l->at, m->dt, json_object_get(m->root, "x"));
		if (s->mpi) {
			json_t *x = json_object_get(m->root, "x");
			mb_load_ranks_update(&s->ranks, json_object_get(x, "ranks"), warm);
			/* the job's ack lines, gathered by rank 0 wherever it runs */
			json_t *acks = json_object_get(x, "acks");
			if (s->ack_fd >= 0 && json_is_string(acks))
				write_all(s->ack_fd, json_string_value(acks),
					  json_string_length(acks));
		}
	} else if (src == MB_SRC_STRESS && json_is_object(h)) {
		mb_histset_merge_json(s->stress_hists, h);
	} else if (src == MB_SRC_STORE && json_is_object(h)) {
		/* server-side histograms: kept under "store." names */
		const char *key;
		json_t *val;
		json_object_foreach(h, key, val)
		{
			char name[160];
			snprintf(name, sizeof(name), "store.%s", key);
			struct mb_hist *dst = mb_histset_get(s->hists, name);
			if (dst && json_is_string(val))
				mb_hist_decode_merge(dst, json_string_value(val));
		}
	}
}

/* What a real server's counters cannot show, and why. */
void mb__server_unmeasured(struct mb_session *s, const char *why)
{
	snprintf(
	    s->unmeasured, sizeof(s->unmeasured),
	    "server counters from /proc of its processes%s, protocol commands and local "
	    "deliveries as the load engine saw them; %.300s%snetwork usage, log writes, database "
	    "cache size and RPC requests have no server-side source outside the embedded store",
	    s->lab ? " (the lab's Dovecot and Postfix, process trees walked each second)" : "",
	    why[0] ? why : "", why[0] ? "; " : "");
}

/* A real server's counters (srvmon.h) into the store's slot. */
static void sample_server(struct mb_session *s, double now)
{
	if (s->lab) {
		pid_t roots[2];
		int n = mb__lab_roots(s, roots, 2);
		if (n)
			mb_srvmon_set_roots(s->srv, roots, n);
	}
	double v[MB_COUNTER_COUNT];
	bool has[MB_COUNTER_COUNT];
	memset(has, 0, sizeof(has));
	memset(v, 0, sizeof(v));
	char why[512];
	int rc = mb_srvmon_sample(s->srv, NULL, v, has, why, sizeof(why));
	double prev = s->srv_t;
	s->srv_t = now;
	mb__server_unmeasured(s, rc ? "no process of the server alive at the last sample" : why);
	if (rc)
		return;
	struct latest *l = &s->lat[MB_SRC_STORE];
	for (int i = 0; i < MB_COUNTER_COUNT; i++)
		if (has[i]) {
			l->v[i] = v[i];
			l->has[i] = true;
		}
	l->at = now;
	if (prev > 0)
		add_window(s, MB_SRC_STORE, now, now - prev, v, has);
}

void mb__on_tick(uv_timer_t *t)
{
	struct mb_session *s = t->data;
	double now = mb_now_s();
	double v[MB_COUNTER_COUNT];
	bool has[MB_COUNTER_COUNT];
	memset(has, 0, sizeof(has));
	memset(v, 0, sizeof(v));
	struct mb_host_sample hs;
	if (mb_host_sample(&hs) == 0) {
		struct mb_host_rates hr;
		if (s->host_prev_ok && mb_host_rates(&s->host_prev, &hs, &hr) == 0) {
			const struct {
				enum mb_counter_id id;
				double v;
			} host[] = {{MB_C_MACHINE_CPU_PCT, hr.cpu_pct},
				    {MB_C_MACHINE_STEAL_PCT, hr.steal_pct},
				    {MB_C_MACHINE_IOWAIT_PCT, hr.iowait_pct},
				    {MB_C_SYSTEM_CONTEXT_SWITCHES, hr.cs_per_s}};
			for (size_t k = 0; k < sizeof(host) / sizeof(host[0]); k++) {
				v[host[k].id] = host[k].v;
				has[host[k].id] = true;
			}
		}
		if (s->host_prev_ok && s->series_on) {
			/* the machine: averaged with the load (or the storage test
			 * when it runs alone) */
			double dt = (double)(hs.total_ticks - s->host_prev.total_ticks);
			long hz = sysconf(_SC_CLK_TCK);
			int cpus = 1;
			mb_online_cpus(&cpus);
			dt = hz > 0 && cpus > 0 ? dt / (double)hz / cpus : 1.0;
			enum mb_counter_source ref = s->load_t0 > 0 ? MB_SRC_LOAD : MB_SRC_STRESS;
			double we = warm_end(s, ref);
			if (we > 0 && now - dt >= we - 0.05) {
				for (int i = 0; i < MB_COUNTER_COUNT; i++) {
					if (has[i] && mb_counters[i].source == MB_SRC_HOST) {
						s->wsum[i] += v[i] * dt;
						s->wdt[i] += dt;
					}
				}
			}
		}
		s->host_prev = hs;
		s->host_prev_ok = true;
	}
	if (!s->series_on)
		return;
	if (s->srv_on && s->state == MB_SS_RUNNING && s->load)
		sample_server(s, now);
	for (int src = MB_SRC_STORE; src <= MB_SRC_STRESS; src++) {
		const struct latest *l = &s->lat[src];
		if (l->at <= 0 || now - l->at > STALE_S)
			continue;
		for (int i = 0; i < MB_COUNTER_COUNT; i++) {
			if (l->has[i]) {
				v[i] = l->v[i];
				has[i] = true;
			}
		}
	}
	mb_series_push(s->series, now - s->t0, v, has);
	mb__emit_change(s);
}

/* A new load run: its histograms, counts and start stamp; the series
 * too unless the storage test is already sampling into it. */
void mb__reset_measurements(struct mb_session *s)
{
	s->has_data_info = false;
	if (!s->stress) {
		mb_series_reset(s->series);
		s->t0 = mb_now_s();
	}
	s->series_on = true;
	mb_histset_reset(s->hists);
	mb_histset_reset(s->hists_warm);
	mb_timeline_reset(s->timeline);
	memset(&s->lat[MB_SRC_STORE], 0, sizeof(s->lat[MB_SRC_STORE]));
	memset(&s->lat[MB_SRC_LOAD], 0, sizeof(s->lat[MB_SRC_LOAD]));
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		if (mb_counters[i].source != MB_SRC_STRESS)
			s->wsum[i] = s->wdt[i] = 0;
	}
	s->has_x = s->has_msgs_sent = s->has_deliveries = s->has_user_days = false;
	s->unsupported = 0;
	s->user_days = 0;
	s->first_syncs_at = 0;
	mb_load_stats_reset(s->lx);
	s->has_conn = false;
	int ranks = s->ranks.ranks;
	char hosts[sizeof(s->ranks.hosts)];
	memcpy(hosts, s->ranks.hosts, sizeof(hosts));
	memset(&s->ranks, 0, sizeof(s->ranks));
	s->ranks.ranks = ranks;
	memcpy(s->ranks.hosts, hosts, sizeof(hosts));
	s->dead_rank = -1;
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(s->started, sizeof(s->started), "%Y-%m-%dT%H:%M:%SZ", &tm);
}

const struct mb_series *mb_session_series(const struct mb_session *s) { return s->series; }

const struct mb_histset *mb_session_hists(const struct mb_session *s) { return s->hists; }

const struct mb_timeline *mb_session_timeline(const struct mb_session *s) { return s->timeline; }

double mb_session_load_offset(const struct mb_session *s)
{
	return s->load_t0 > 0 ? s->load_t0 - s->t0 : 0;
}

void mb_session_live(const struct mb_session *s, double *v, bool *has)
{
	/* nothing running: nothing live (the run average stays) */
	for (int i = 0; i < MB_COUNTER_COUNT; i++)
		has[i] = s->series_on && mb_series_window(s->series, (enum mb_counter_id)i,
							  MB_LIVE_WINDOW_S, &v[i]) == 0;
}

/* The run's LoadSim score (core/score.h) from the action histograms merged
 * since the warm-up. */
static bool run_score(const struct mb_session *s, double *ms)
{
	const struct mb_hist *h[MB_ACTION_COUNT];
	for (int i = 0; i < MB_ACTION_COUNT; i++) {
		char name[128];
		snprintf(name, sizeof(name), "%s%s", MB_HIST_ACTION_PREFIX, mb_actions[i].key);
		h[i] = mb_histset_find(s->hists_warm, name);
	}
	uint64_t ns;
	if (mb_score_ns(h, s->sc.actions_per_day, &ns) != 0)
		return false;
	*ms = (double)ns / 1e6;
	return true;
}

void mb_session_average(const struct mb_session *s, double *v, bool *has)
{
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		has[i] = s->wdt[i] > 0;
		v[i] = has[i] ? s->wsum[i] / s->wdt[i] : 0;
	}
	/* the score is one value over the run, never a time average of the
	 * load engine's running figure: table, JSON, console and verdict all
	 * read it here */
	double ms;
	has[MB_C_LOADSIM_SCORE_MS] = run_score(s, &ms);
	v[MB_C_LOADSIM_SCORE_MS] = has[MB_C_LOADSIM_SCORE_MS] ? ms : 0;
}

void mb_session_stress_latency(const struct mb_session *s, struct mb_latency *read,
			       struct mb_latency *logw)
{
	mb_latency_from_hist(mb_histset_find(s->stress_hists, MB_HIST_STRESS_READ), read);
	mb_latency_from_hist(mb_histset_find(s->stress_hists, MB_HIST_STRESS_LOG), logw);
}
