/* session.c: children, 1 Hz sampling and run summaries (see session.h).
 * Invariants: the series gets exactly one row per tick while the load or
 * the storage test runs; a counter's value comes only from its source
 * process's last stats line, and only if that line is at most
 * STALE_S old; nothing is carried over from a previous run. */
#include "report/session.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "core/error.h"
#include "core/sampler.h"
#include "core/stats.h"
#include "report/compare.h"
#include "report/supervisor.h"

#define STALE_S 2.5
#define LISTEN_TIMEOUT_MS 60000

enum child_role { ROLE_INIT = 1, ROLE_STORE, ROLE_LOAD, ROLE_STRESS };

struct latest {
	double v[MB_COUNTER_COUNT];
	bool has[MB_COUNTER_COUNT];
	double at; /* our monotonic time of the line, 0 never */
};

struct mb_session {
	uv_loop_t *loop;
	struct mb_session_events ev;
	void *arg;
	struct mb_sup *sup;
	uv_timer_t tick, listen_timer, duration_timer;
	int closing_handles;

	struct mb_session_params p;
	bool configured;
	struct mb_scenario sc;
	struct mb_storage_cfg st;
	bool have_st;
	struct mb_thresholds th;

	enum mb_session_state state;
	struct mb_child *init, *store, *load, *stress;
	bool failed;
	char message[2048];
	char fail_tail[2048]; /* stderr tail of the child that failed */
	bool init_restart;    /* next start re-initialises (init --restart) */
	char saved_path[MB_PATH_MAX + 80];
	int stress_threads;

	/* init progress */
	double init_pct, init_t0;

	/* measurements */
	struct mb_series *series;
	struct mb_histset *hists;	 /* whole run */
	struct mb_histset *hists_warm;	 /* after warm-up */
	struct mb_histset *stress_hists; /* storage test, whole test */
	struct latest lat[4];		 /* by enum mb_counter_source */
	/* the load engine's window counts ("x"), summed over the run */
	bool has_x;
	double act_sched[MB_ACTION_COUNT], act_done[MB_ACTION_COUNT], act_failed[MB_ACTION_COUNT];
	bool has_msgs_sent, has_deliveries, has_user_days;
	double msgs_sent, deliveries;
	double user_days; /* the load engine's own count, whole run (cumulative) */
	double t0;		 /* load (or series) start, monotonic */
	double load_t0, load_t1; /* load started / stopped */
	double stress_t0;	 /* storage test started */
	/* run averages after warm-up: each window weighted by its length
	 * (exact time averages, whatever the phase of the 1 Hz tick) */
	double wsum[MB_COUNTER_COUNT], wdt[MB_COUNTER_COUNT];
	bool series_on;
	struct mb_host_sample host_prev;
	bool host_prev_ok;
	char started[32];
	char platform[MB_TEXT_MAX];
	int smt;
	struct mb_run_summary last; /* final summary of the last run */
	bool have_last;
};

static void emit_change(struct mb_session *s)
{
	if (s->ev.on_change)
		s->ev.on_change(s->arg, s);
}

static void emit_msg(struct mb_session *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void emit_msg(struct mb_session *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->message, sizeof(s->message), fmt, ap);
	va_end(ap);
	if (s->ev.on_message)
		s->ev.on_message(s->arg, s, s->message);
}

void mb_session_params_default(struct mb_session_params *p)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->scenario, sizeof(p->scenario), "online");
	p->compression = -1;
	p->warmup_s = -1;
	snprintf(p->data_dir, sizeof(p->data_dir), "%s", MB_DEFAULT_DATA_DIR);
	p->save_runs = true;
}

/* ---- children ---- */

static enum child_role role_of(struct mb_child *c)
{
	return (enum child_role)(intptr_t)mb_child_data(c);
}

static void parse_progress(struct mb_session *s, const char *line)
{
	/* the last "NN%" or "NN.N%" on the line */
	const char *pct = NULL;
	for (const char *q = strchr(line, '%'); q; q = strchr(q + 1, '%'))
		pct = q;
	if (!pct)
		return;
	const char *b = pct;
	while (b > line && (isdigit((unsigned char)b[-1]) || b[-1] == '.'))
		b--;
	if (b == pct)
		return;
	double v = strtod(b, NULL);
	if (v >= 0 && v <= 100) {
		s->init_pct = v;
		emit_change(s);
	}
}

static void on_line(void *arg, struct mb_child *c, enum mb_child_stream st, const char *line)
{
	struct mb_session *s = arg;
	if (role_of(c) == ROLE_INIT)
		parse_progress(s, line);
	(void)st;
}

static void merge_hists(struct mb_session *s, json_t *h, bool warm)
{
	if (!json_is_object(h))
		return;
	mb_histset_merge_json(s->hists, h);
	if (warm)
		mb_histset_merge_json(s->hists_warm, h);
}

static void x_add(json_t *o, const char *key, double *dst, bool *has)
{
	json_t *v = json_object_get(o, key);
	if (json_is_number(v)) {
		*dst += json_number_value(v);
		if (has)
			*has = true;
	}
}

/* The load engine's "x" holds the counts of its window: sum them. */
static void sum_load_counts(struct mb_session *s, json_t *x)
{
	json_t *acts = json_object_get(x, "actions");
	if (!json_is_object(acts))
		return;
	s->has_x = true;
	for (int i = 0; i < MB_ACTION_COUNT; i++) {
		json_t *a = json_object_get(acts, mb_actions[i].key);
		x_add(a, "scheduled", &s->act_sched[i], NULL);
		x_add(a, "done", &s->act_done[i], NULL);
		x_add(a, "failed", &s->act_failed[i], NULL);
	}
	x_add(x, "msgs_sent", &s->msgs_sent, &s->has_msgs_sent);
	x_add(x, "deliveries", &s->deliveries, &s->has_deliveries);
	/* simulated user-days: cumulative, counted by the load engine from
	 * each user's first logon to the stop (users still ramping up do not
	 * count), so it matches the counts summed over the whole run */
	json_t *ud = json_object_get(x, "user_days");
	if (json_is_number(ud)) {
		s->user_days = json_number_value(ud);
		s->has_user_days = true;
	}
}

/* The warm-up of a source ends at (monotonic seconds); 0: not started. */
static double warm_end(const struct mb_session *s, enum mb_counter_source src)
{
	if (src == MB_SRC_STRESS)
		return s->stress_t0 > 0 ? s->stress_t0 + (s->have_st ? s->st.warmup_s : 0) : 0;
	return s->load_t0 > 0 ? s->load_t0 + mb_session_warmup(s) : 0;
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

static void on_stats(void *arg, struct mb_child *c, const struct mb_stats_msg *m)
{
	struct mb_session *s = arg;
	enum mb_counter_source src;
	switch (role_of(c)) {
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
	json_t *h = json_object_get(m->root, "h");
	if (src == MB_SRC_LOAD) {
		bool warm = s->load_t0 > 0 && l->at - s->load_t0 >= mb_session_warmup(s);
		merge_hists(s, h, warm);
		sum_load_counts(s, json_object_get(m->root, "x"));
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

static int spawn(struct mb_session *s, enum child_role role, const char *name,
		 const char *const *args, struct mb_child **out)
{
	int rc = mb_sup_spawn(s->sup, name, args, out);
	if (rc) {
		emit_msg(s, "cannot start %s: %s", name, mb_strerror(rc));
		return rc;
	}
	mb_child_set_data(*out, (void *)(intptr_t)role);
	return 0;
}

static void fmt_num(char *buf, size_t len, double v) { snprintf(buf, len, "%.10g", v); }

static void finish_load(struct mb_session *s);
static void on_duration(uv_timer_t *t);

static void start_load_engine(struct mb_session *s)
{
	char target[64], topo[MB_PATH_MAX + 32], users[32], accel[32];
	snprintf(target, sizeof(target), "127.0.0.1:%d", mb_child_port(s->store));
	snprintf(topo, sizeof(topo), "%s/topology.json", s->p.data_dir);
	snprintf(users, sizeof(users), "%d", mb_session_users(s));
	fmt_num(accel, sizeof(accel), mb_session_accel(s));
	const char *args[24];
	int n = 0;
	args[n++] = "load";
	args[n++] = "-s";
	args[n++] = s->sc.path[0] ? s->sc.path : s->p.scenario;
	args[n++] = "--target";
	args[n++] = target;
	args[n++] = "--topology";
	args[n++] = topo;
	args[n++] = "--users";
	args[n++] = users;
	args[n++] = "--accel";
	args[n++] = accel;
	args[n++] = "--compression";
	args[n++] = mb_session_compression(s) ? "on" : "off";
	/* the session stops the load itself (duration timer or operator) */
	args[n++] = "--duration";
	args[n++] = "0";
	char ramp[32];
	if (s->p.warmup_s >= 0 && s->p.warmup_s < s->sc.ramp_s) {
		/* logons ramp up within the warm-up, so averages exclude them */
		fmt_num(ramp, sizeof(ramp), s->p.warmup_s);
		args[n++] = "--ramp";
		args[n++] = ramp;
	}
	args[n++] = "--stats-fd";
	args[n++] = MB_SUP_STATS_FD_STR;
	args[n] = NULL;
	if (spawn(s, ROLE_LOAD, "load", args, &s->load)) {
		s->failed = true;
		s->state = MB_SS_STOPPING;
		mb_child_stop(s->store, MB_SUP_GRACE_MS);
		emit_change(s);
		return;
	}
	s->state = MB_SS_RUNNING;
	s->load_t0 = mb_now_s();
	/* the duration counts from the load's start, not the initialisation */
	if (s->p.duration_s > 0)
		uv_timer_start(&s->duration_timer, on_duration,
			       (uint64_t)(s->p.duration_s * 1000.0), 0);
	emit_msg(s, "load started: %d users, accel %g, store on port %d", mb_session_users(s),
		 mb_session_accel(s), mb_child_port(s->store));
	emit_change(s);
}

static void on_listening(void *arg, struct mb_child *c, const char *addr, int port)
{
	struct mb_session *s = arg;
	(void)addr;
	(void)port;
	if (c != s->store || s->state != MB_SS_STARTING)
		return;
	uv_timer_stop(&s->listen_timer);
	start_load_engine(s);
}

static void on_listen_timeout(uv_timer_t *t);

static void start_store(struct mb_session *s)
{
	const char *args[16];
	int n = 0;
	args[n++] = "store";
	args[n++] = "--data";
	args[n++] = s->p.data_dir;
	args[n++] = "--listen";
	args[n++] = "127.0.0.1:0";
	/* the log directory is recorded in the topology by init */
	args[n++] = "--compression";
	args[n++] = mb_session_compression(s) ? "on" : "off";
	args[n++] = "--stats-fd";
	args[n++] = MB_SUP_STATS_FD_STR;
	args[n] = NULL;
	if (spawn(s, ROLE_STORE, "store", args, &s->store)) {
		s->failed = true;
		finish_load(s);
		return;
	}
	s->state = MB_SS_STARTING;
	emit_msg(s, "store starting");
	uv_timer_start(&s->listen_timer, on_listen_timeout, LISTEN_TIMEOUT_MS, 0);
	emit_change(s);
}

static void on_listen_timeout(uv_timer_t *t)
{
	struct mb_session *s = t->data;
	if (s->state != MB_SS_STARTING)
		return;
	s->failed = true;
	emit_msg(s, "store did not report listening within %d s", LISTEN_TIMEOUT_MS / 1000);
	s->state = MB_SS_STOPPING;
	mb_child_stop(s->store, MB_SUP_GRACE_MS);
	emit_change(s);
}

static void start_init(struct mb_session *s)
{
	char users[32], scale[32];
	snprintf(users, sizeof(users), "%d", mb_session_users(s));
	fmt_num(scale, sizeof(scale), mb_session_scale(s));
	const char *args[20];
	int n = 0;
	args[n++] = "init";
	args[n++] = "-s";
	args[n++] = s->sc.path[0] ? s->sc.path : s->p.scenario;
	args[n++] = "--data";
	args[n++] = s->p.data_dir;
	args[n++] = "--users";
	args[n++] = users;
	args[n++] = "--scale";
	args[n++] = scale;
	if (s->init_restart) {
		/* asked by the operator: replace an initialisation made with
		 * other parameters */
		args[n++] = "--restart";
		s->init_restart = false;
	}
	if (s->p.log_dir[0]) {
		args[n++] = "--log-dir";
		args[n++] = s->p.log_dir;
	}
	args[n] = NULL;
	if (spawn(s, ROLE_INIT, "init", args, &s->init)) {
		s->failed = true;
		finish_load(s);
		return;
	}
	s->state = MB_SS_INIT;
	s->init_pct = 0;
	s->init_t0 = mb_now_s();
	emit_msg(s, "initialising %s (%d users, scale %g)", s->p.data_dir, mb_session_users(s),
		 mb_session_scale(s));
	emit_change(s);
}

static void build_summary(const struct mb_session *s, struct mb_run_summary *o);

static void finish_load(struct mb_session *s)
{
	if (s->load_t0 > 0 && s->load_t1 == 0)
		s->load_t1 = mb_now_s();
	s->state = s->failed ? MB_SS_FAILED : MB_SS_DONE;
	uv_timer_stop(&s->duration_timer);
	uv_timer_stop(&s->listen_timer);
	if (s->load_t0 > 0) {
		build_summary(s, &s->last);
		s->have_last = true;
		if (s->p.save_runs) {
			int rc = mb_summary_save(&s->last, s->p.data_dir, s->saved_path,
						 sizeof(s->saved_path));
			if (rc)
				emit_msg(s, "cannot save the run summary in %s/runs: %s",
					 s->p.data_dir, mb_strerror(rc));
			else if (!s->failed)
				emit_msg(s, "load stopped: run %s saved (F6 lists saved runs)",
					 s->last.id);
		} else if (!s->failed) {
			emit_msg(s, "load stopped");
		}
	}
	if (!s->stress)
		s->series_on = false;
	emit_change(s);
}

static void child_failed(struct mb_session *s, struct mb_child *c)
{
	char desc[1200], tail[2048];
	mb_child_describe_exit(c, desc, sizeof(desc));
	mb_child_stderr_tail(c, tail, sizeof(tail));
	memcpy(s->fail_tail, tail, sizeof(s->fail_tail));
	s->failed = true;
	emit_msg(s, "%s", desc);
}

static void on_exit_cb(void *arg, struct mb_child *c)
{
	struct mb_session *s = arg;
	enum child_role role = role_of(c);
	bool clean = mb_child_exit_status(c) == 0 && mb_child_term_signal(c) == 0;
	bool asked = mb_child_stop_requested(c);
	/* init ends by itself; so may the load (its own duration), and the
	 * storage test (exit 1: its thresholds failed, a verdict, not a crash) */
	bool normal_end = clean && (role == ROLE_INIT || role == ROLE_LOAD);
	if (role == ROLE_STRESS && mb_child_term_signal(c) == 0 &&
	    (mb_child_exit_status(c) == 0 || mb_child_exit_status(c) == 1))
		normal_end = true;
	if (!asked && !normal_end)
		child_failed(s, c);
	switch (role) {
	case ROLE_INIT:
		s->init = NULL;
		if (s->state == MB_SS_INIT) {
			if (clean && !s->failed)
				start_store(s);
			else
				finish_load(s);
		}
		break;
	case ROLE_STORE:
		s->store = NULL;
		if (s->load) {
			mb_child_stop(s->load, MB_SUP_GRACE_MS);
			s->state = MB_SS_STOPPING;
		} else if (s->state != MB_SS_IDLE) {
			finish_load(s);
		}
		break;
	case ROLE_LOAD:
		s->load = NULL;
		s->load_t1 = mb_now_s();
		if (s->store) {
			s->state = MB_SS_STOPPING;
			mb_child_stop(s->store, MB_SUP_GRACE_MS);
		} else {
			finish_load(s);
		}
		break;
	case ROLE_STRESS:
		s->stress = NULL;
		if (!mb_session_load_active(s))
			s->series_on = false;
		break;
	}
	mb_child_release(c);
	emit_change(s);
}

/* ---- sampling ---- */

static void on_tick(uv_timer_t *t)
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
			for (int i = 0; i < MB_COUNTER_COUNT; i++) {
				if (mb_counters[i].source != MB_SRC_HOST)
					continue;
				if (i == MB_C_MACHINE_CPU_PCT) {
					v[i] = hr.cpu_pct;
					has[i] = true;
				} else if (i == MB_C_SYSTEM_CONTEXT_SWITCHES) {
					v[i] = hr.cs_per_s;
					has[i] = true;
				}
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
	emit_change(s);
}

static void on_duration(uv_timer_t *t)
{
	struct mb_session *s = t->data;
	emit_msg(s, "duration reached: stopping");
	mb_session_stop_load(s);
	if (s->stress)
		mb_session_stop_stress(s);
}

/* ---- life cycle ---- */

int mb_session_create(uv_loop_t *loop, const struct mb_session_events *ev, void *arg,
		      struct mb_session **out)
{
	struct mb_session *s = calloc(1, sizeof(*s));
	if (!s)
		return MB_ENOMEM;
	s->loop = loop;
	if (ev)
		s->ev = *ev;
	s->arg = arg;
	static const struct mb_sup_ops ops = {on_stats, on_line, on_listening, on_exit_cb};
	int rc = mb_sup_create(loop, &ops, s, &s->sup);
	if (!rc)
		rc = mb_series_create(&s->series);
	if (!rc)
		rc = mb_histset_create(&s->hists);
	if (!rc)
		rc = mb_histset_create(&s->hists_warm);
	if (!rc)
		rc = mb_histset_create(&s->stress_hists);
	if (rc) {
		mb_sup_destroy(s->sup);
		mb_series_destroy(s->series);
		mb_histset_destroy(s->hists);
		mb_histset_destroy(s->hists_warm);
		mb_histset_destroy(s->stress_hists);
		free(s);
		return rc;
	}
	mb_session_params_default(&s->p);
	mb_thresholds_init(&s->th, NULL, NULL);
	uv_timer_init(loop, &s->tick);
	uv_timer_init(loop, &s->listen_timer);
	uv_timer_init(loop, &s->duration_timer);
	s->tick.data = s->listen_timer.data = s->duration_timer.data = s;
	uv_timer_start(&s->tick, on_tick, 1000, 1000);
	if (mb_platform_string(s->platform, sizeof(s->platform)))
		snprintf(s->platform, sizeof(s->platform), "n/a");
	bool smt;
	s->smt = mb_smt_active(&smt) == 0 ? smt : -1;
	*out = s;
	return 0;
}

static void on_timer_closed(uv_handle_t *h)
{
	struct mb_session *s = h->data;
	if (--s->closing_handles == 0)
		free(s);
}

void mb_session_destroy(struct mb_session *s)
{
	if (!s)
		return;
	mb_sup_destroy(s->sup);
	s->sup = NULL;
	mb_series_destroy(s->series);
	mb_histset_destroy(s->hists);
	mb_histset_destroy(s->hists_warm);
	mb_histset_destroy(s->stress_hists);
	s->closing_handles = 3;
	uv_close((uv_handle_t *)&s->tick, on_timer_closed);
	uv_close((uv_handle_t *)&s->listen_timer, on_timer_closed);
	uv_close((uv_handle_t *)&s->duration_timer, on_timer_closed);
}

int mb_session_set_program(struct mb_session *s, const char *path)
{
	return mb_sup_set_program(s->sup, path);
}

int mb_session_configure(struct mb_session *s, const struct mb_session_params *p,
			 struct mb_cfg_error *err)
{
	if (mb_session_children(s) > 0)
		return MB_EBUSY;
	struct mb_scenario *sc = malloc(sizeof(*sc));
	if (!sc)
		return MB_ENOMEM;
	int rc = mb_scenario_load(p->scenario, sc, err);
	if (rc) {
		free(sc);
		return rc;
	}
	s->sc = *sc;
	free(sc);
	s->have_st = mb_storage_cfg_load("storage", &s->st, NULL) == 0;
	s->p = *p;
	s->configured = true;
	mb_thresholds_init(&s->th, &s->sc, s->have_st ? &s->st : NULL);
	char path[MB_PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/thresholds.cfg", p->data_dir);
	rc = mb_thresholds_load(&s->th, path, err);
	if (rc == MB_ENOTFOUND)
		rc = 0;
	if (!s->stress)
		s->stress_threads = p->stress_threads > 0		   ? p->stress_threads
				    : s->have_st && s->st.thread_count > 0 ? s->st.threads[0]
									   : 4;
	return rc;
}

const struct mb_session_params *mb_session_params(const struct mb_session *s) { return &s->p; }

const struct mb_scenario *mb_session_scenario(const struct mb_session *s)
{
	return s->configured ? &s->sc : NULL;
}

const struct mb_storage_cfg *mb_session_storage_cfg(const struct mb_session *s)
{
	return s->have_st ? &s->st : NULL;
}

int mb_session_users(const struct mb_session *s)
{
	return s->p.users > 0 ? s->p.users : s->sc.run_users > 0 ? s->sc.run_users : s->sc.users;
}

double mb_session_scale(const struct mb_session *s)
{
	return s->p.scale > 0 ? s->p.scale : s->sc.scale;
}

double mb_session_accel(const struct mb_session *s)
{
	return s->p.accel > 0 ? s->p.accel : s->sc.accel;
}

bool mb_session_compression(const struct mb_session *s)
{
	return s->p.compression >= 0 ? s->p.compression != 0 : s->sc.compression;
}

double mb_session_warmup(const struct mb_session *s)
{
	return s->p.warmup_s >= 0 ? s->p.warmup_s : s->sc.warmup_s;
}

struct mb_thresholds *mb_session_thresholds(struct mb_session *s) { return &s->th; }

int mb_session_save_thresholds(struct mb_session *s)
{
	char path[MB_PATH_MAX + 32];
	if (mkdir(s->p.data_dir, 0755) && errno != EEXIST)
		return mb_from_errno(errno);
	snprintf(path, sizeof(path), "%s/thresholds.cfg", s->p.data_dir);
	return mb_thresholds_save(&s->th, path);
}

bool mb_session_initialised(const struct mb_session *s)
{
	char path[MB_PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/topology.json", s->p.data_dir);
	json_t *j = json_load_file(path, 0, NULL);
	if (!j)
		return false;
	bool ok = true;
	/* When the topology records what it was made for, it must match. */
	json_t *users = json_object_get(j, "users");
	if (json_is_array(users) && (int)json_array_size(users) < mb_session_users(s))
		ok = false;
	if (json_is_integer(users) && json_integer_value(users) < mb_session_users(s))
		ok = false;
	json_t *scale = json_object_get(j, "scale");
	if (json_is_number(scale) && fabs(json_number_value(scale) - mb_session_scale(s)) > 1e-9)
		ok = false;
	json_decref(j);
	/* an interrupted initialisation says so in init.state */
	snprintf(path, sizeof(path), "%s/init.state", s->p.data_dir);
	json_t *st = json_load_file(path, 0, NULL);
	if (st && json_is_false(json_object_get(st, "complete")))
		ok = false;
	json_decref(st);
	return ok;
}

/* A new load run: its histograms, counts and start stamp; the series
 * too unless the storage test is already sampling into it. */
static void reset_measurements(struct mb_session *s)
{
	if (!s->stress) {
		mb_series_reset(s->series);
		s->t0 = mb_now_s();
	}
	s->series_on = true;
	mb_histset_reset(s->hists);
	mb_histset_reset(s->hists_warm);
	memset(&s->lat[MB_SRC_STORE], 0, sizeof(s->lat[MB_SRC_STORE]));
	memset(&s->lat[MB_SRC_LOAD], 0, sizeof(s->lat[MB_SRC_LOAD]));
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		if (mb_counters[i].source != MB_SRC_STRESS)
			s->wsum[i] = s->wdt[i] = 0;
	}
	s->has_x = s->has_msgs_sent = s->has_deliveries = s->has_user_days = false;
	s->user_days = 0;
	memset(s->act_sched, 0, sizeof(s->act_sched));
	memset(s->act_done, 0, sizeof(s->act_done));
	memset(s->act_failed, 0, sizeof(s->act_failed));
	s->msgs_sent = s->deliveries = 0;
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(s->started, sizeof(s->started), "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int mb_session_start_load(struct mb_session *s)
{
	if (!s->configured)
		return MB_ESTATE;
	if (mb_session_load_active(s))
		return MB_EBUSY;
	s->failed = false;
	s->fail_tail[0] = '\0';
	s->load_t0 = s->load_t1 = 0;
	s->saved_path[0] = '\0';
	if (mkdir(s->p.data_dir, 0755) && errno != EEXIST) {
		emit_msg(s, "cannot create %s: %s", s->p.data_dir, strerror(errno));
		return mb_from_errno(errno);
	}
	reset_measurements(s);
	if (mb_session_initialised(s) && !s->init_restart)
		start_store(s);
	else
		start_init(s);
	return s->failed ? MB_ECHILD : 0;
}

int mb_session_reinit_and_start(struct mb_session *s)
{
	if (mb_session_load_active(s) || s->stress)
		return MB_EBUSY;
	s->init_restart = true;
	int rc = mb_session_start_load(s);
	s->init_restart = false;
	return rc;
}

int mb_session_stop_load(struct mb_session *s)
{
	switch (s->state) {
	case MB_SS_INIT:
		s->state = MB_SS_STOPPING;
		if (s->init)
			mb_child_stop(s->init, MB_SUP_GRACE_MS);
		break;
	case MB_SS_STARTING:
	case MB_SS_RUNNING:
		s->state = MB_SS_STOPPING;
		if (s->load) {
			s->load_t1 = mb_now_s();
			mb_child_stop(s->load, MB_SUP_GRACE_MS);
		} else if (s->store) {
			mb_child_stop(s->store, MB_SUP_GRACE_MS);
		}
		break;
	default:
		return 0;
	}
	emit_msg(s, "stopping the load");
	emit_change(s);
	return 0;
}

int mb_session_start_stress(struct mb_session *s, int threads)
{
	if (!s->configured)
		return MB_ESTATE;
	if (s->stress)
		return MB_EBUSY;
	if (threads > 0)
		s->stress_threads = threads;
	if (mkdir(s->p.data_dir, 0755) && errno != EEXIST)
		return mb_from_errno(errno);
	char th[16], dur[32], json[MB_PATH_MAX + 32], size[32];
	snprintf(th, sizeof(th), "%d", s->stress_threads);
	/* 0: until stopped */
	fmt_num(dur, sizeof(dur), s->p.stress_duration_s > 0 ? s->p.stress_duration_s : 0);
	char rmax[32], lmax[32];
	fmt_num(rmax, sizeof(rmax), s->th.storage_read_ms_max);
	fmt_num(lmax, sizeof(lmax), s->th.storage_log_ms_max);
	snprintf(json, sizeof(json), "%s/stress-last.json", s->p.data_dir);
	const char *args[28];
	int n = 0;
	args[n++] = "storage-test";
	args[n++] = "--data";
	args[n++] = s->p.data_dir;
	if (s->p.log_dir[0]) {
		args[n++] = "--log-dir";
		args[n++] = s->p.log_dir;
	}
	args[n++] = "--threads";
	args[n++] = th;
	if (s->p.stress_size_gb > 0) {
		fmt_num(size, sizeof(size), s->p.stress_size_gb);
		args[n++] = "--size";
		args[n++] = size;
	}
	args[n++] = "--duration";
	args[n++] = dur;
	args[n++] = "--read-ms-max";
	args[n++] = rmax;
	args[n++] = "--log-ms-max";
	args[n++] = lmax;
	args[n++] = "--json";
	args[n++] = json;
	args[n++] = "--stats-fd";
	args[n++] = MB_SUP_STATS_FD_STR;
	args[n] = NULL;
	mb_histset_reset(s->stress_hists);
	memset(&s->lat[MB_SRC_STRESS], 0, sizeof(s->lat[MB_SRC_STRESS]));
	if (!mb_session_load_active(s)) {
		/* sampling starts with the storage test */
		mb_series_reset(s->series);
		s->t0 = mb_now_s();
		s->series_on = true;
	}
	s->stress_t0 = mb_now_s();
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		if (mb_counters[i].source == MB_SRC_STRESS ||
		    (mb_counters[i].source == MB_SRC_HOST && !mb_session_load_active(s)))
			s->wsum[i] = s->wdt[i] = 0;
	}
	int rc = spawn(s, ROLE_STRESS, "storage-test", args, &s->stress);
	if (rc) {
		if (!mb_session_load_active(s))
			s->series_on = false;
		return rc;
	}
	emit_msg(s, "storage test started: %d threads", s->stress_threads);
	emit_change(s);
	return 0;
}

int mb_session_stop_stress(struct mb_session *s)
{
	if (!s->stress)
		return 0;
	mb_child_stop(s->stress, MB_SUP_GRACE_MS);
	emit_msg(s, "stopping the storage test");
	return 0;
}

void mb_session_stop_all(struct mb_session *s)
{
	mb_session_stop_load(s);
	mb_session_stop_stress(s);
	mb_sup_stop_all(s->sup, MB_SUP_GRACE_MS);
}

enum mb_session_state mb_session_state(const struct mb_session *s) { return s->state; }

const char *mb_session_state_str(enum mb_session_state st)
{
	static const char *const n[] = {"idle",	    "initialising", "starting", "running",
					"stopping", "done",	    "failed"};
	return (unsigned)st < 7 ? n[st] : "?";
}

bool mb_session_load_active(const struct mb_session *s)
{
	return s->state >= MB_SS_INIT && s->state <= MB_SS_STOPPING;
}

bool mb_session_stress_active(const struct mb_session *s) { return s->stress != NULL; }

int mb_session_stress_threads(const struct mb_session *s) { return s->stress_threads; }

void mb_session_set_stress_threads(struct mb_session *s, int threads)
{
	if (threads >= 1 && threads <= 256)
		s->stress_threads = threads;
}

int mb_session_children(const struct mb_session *s) { return s->sup ? mb_sup_live(s->sup) : 0; }

bool mb_session_init_progress(const struct mb_session *s, double *pct, double *eta_s)
{
	if (s->state != MB_SS_INIT)
		return false;
	*pct = s->init_pct;
	double el = mb_now_s() - s->init_t0;
	*eta_s = s->init_pct > 0.5 ? el * (100.0 - s->init_pct) / s->init_pct : -1;
	return true;
}

double mb_session_elapsed(const struct mb_session *s)
{
	if (s->load_t0 <= 0)
		return 0;
	return (s->load_t1 > 0 ? s->load_t1 : mb_now_s()) - s->load_t0;
}

const char *mb_session_message(const struct mb_session *s) { return s->message; }

const char *mb_session_failure_detail(const struct mb_session *s)
{
	return s->failed ? s->fail_tail : "";
}

bool mb_session_failed(const struct mb_session *s) { return s->failed; }

const struct mb_series *mb_session_series(const struct mb_session *s) { return s->series; }

const struct mb_histset *mb_session_hists(const struct mb_session *s) { return s->hists; }

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

void mb_session_average(const struct mb_session *s, double *v, bool *has)
{
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		has[i] = s->wdt[i] > 0;
		v[i] = has[i] ? s->wsum[i] / s->wdt[i] : 0;
	}
}

static void build_summary(const struct mb_session *s, struct mb_run_summary *o)
{
	memset(o, 0, sizeof(*o));
	char stamp[32];
	snprintf(stamp, sizeof(stamp), "%s", s->started);
	/* id: 20261129-211500-online */
	char compact[32];
	size_t k = 0;
	for (const char *q = stamp; *q && k < sizeof(compact) - 1; q++) {
		if (*q == 'T')
			compact[k++] = '-';
		else if (isdigit((unsigned char)*q))
			compact[k++] = *q;
	}
	compact[k] = '\0';
	snprintf(o->id, sizeof(o->id), "%.20s-%.40s", compact, s->sc.name);
	snprintf(o->started, sizeof(o->started), "%s", s->started);
	snprintf(o->scenario, sizeof(o->scenario), "%s", s->sc.name);
	snprintf(o->title, sizeof(o->title), "%s", s->sc.title);
	o->scenario_number = s->sc.number;
	o->mode = s->sc.mode;
	o->users = mb_session_users(s);
	o->scale = mb_session_scale(s);
	o->accel = mb_session_accel(s);
	o->compression = mb_session_compression(s);
	o->duration_s = mb_session_elapsed(s);
	o->warmup_s = mb_session_warmup(s);
	/* seconds of the store's and the load engine's windows after warm-up */
	o->measured_s = 0;
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		enum mb_counter_source src = mb_counters[i].source;
		if ((src == MB_SRC_STORE || src == MB_SRC_LOAD) && s->wdt[i] > o->measured_s)
			o->measured_s = s->wdt[i];
	}
	o->storage_test = s->stress != NULL || mb_histset_count(s->stress_hists) > 0;
	snprintf(o->platform, sizeof(o->platform), "%s", s->platform);
	mb_compare_engine_str(&s->sc, o->engine, sizeof(o->engine));
	mb_compare_mode_str(s->sc.mode, o->compression, o->client_mode, sizeof(o->client_mode));
	o->smt = s->smt;
	mb_session_average(s, o->avg, o->has);

	const struct mb_hist *h = mb_histset_find(s->hists_warm, MB_HIST_RPC);
	mb_latency_from_hist(h, &o->rpc_latency);
	struct mb_hist *all = NULL;
	if (mb_hist_create(&all) == 0) {
		mb_histset_merge_prefix(s->hists_warm, MB_HIST_ACTION_PREFIX, all);
		mb_latency_from_hist(all, &o->action_latency);
		if (o->action_latency.has) {
			/* the LoadSim-style score: p95 of all action responses, each
			 * action weighted by how often it ran */
			o->has_score = true;
			o->score_ms = o->action_latency.p95_ms;
		}
		mb_hist_destroy(all);
	}
	/* per-user-day figures: counts over the whole run / the load engine's
	 * user-days over the whole run (n/a when it did not report them) */
	double days = s->has_user_days ? s->user_days : 0;
	for (int i = 0; i < MB_ACTION_COUNT; i++) {
		struct mb_action_figures *a = &o->actions[i];
		char name[128];
		snprintf(name, sizeof(name), "%s%s", MB_HIST_ACTION_PREFIX, mb_actions[i].key);
		mb_latency_from_hist(mb_histset_find(s->hists_warm, name), &a->latency);
		if (s->has_x) {
			a->has_counts = true;
			a->scheduled = s->act_sched[i];
			a->done = s->act_done[i];
			a->failed = s->act_failed[i];
			if (days > 0) {
				a->has_per_user_day = true;
				a->per_user_day = a->done / days;
			}
		}
	}
	if (days > 0 && s->has_msgs_sent) {
		o->has_messages_sent = true;
		o->messages_sent_per_user_day = s->msgs_sent / days;
	}
	if (days > 0 && s->has_deliveries) {
		o->has_messages_received = true;
		o->messages_received_per_user_day = s->deliveries / days;
	}
	o->thresholds = s->th;
	o->failed = s->failed;
	if (s->failed)
		snprintf(o->failure, sizeof(o->failure), "%.1000s", s->message);
	mb_summary_evaluate(o);
}

int mb_session_summary(const struct mb_session *s, struct mb_run_summary *out)
{
	if (!s->configured)
		return MB_ESTATE;
	if (!mb_session_load_active(s) && s->have_last) {
		*out = s->last;
		out->thresholds = s->th;
		mb_summary_evaluate(out);
		return 0;
	}
	build_summary(s, out);
	return 0;
}

const char *mb_session_saved_path(const struct mb_session *s) { return s->saved_path; }

void mb_session_stress_latency(const struct mb_session *s, struct mb_latency *read,
			       struct mb_latency *logw)
{
	mb_latency_from_hist(mb_histset_find(s->stress_hists, MB_HIST_STRESS_READ), read);
	mb_latency_from_hist(mb_histset_find(s->stress_hists, MB_HIST_STRESS_LOG), logw);
}

const char *mb_session_platform(const struct mb_session *s) { return s->platform; }

int mb_session_smt(const struct mb_session *s) { return s->smt; }
