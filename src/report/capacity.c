/* capacity.c: the capacity search (see capacity.h).
 * Each step is one session run; a 250 ms poll timer notices its end, so
 * the next run never starts from inside a session callback.
 * Invariants: lo < hi once a step failed; lo is always a passing load
 * (0 before one passed); the search never runs two sessions at once. */
#include "report/capacity.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "core/error.h"
#include "core/sampler.h"
#include "report/report.h"
#include "report/session.h"

#define POLL_MS 250
#define SAT_FRAC 0.20	   /* saturated in more than this share of windows */
#define FAIL_FRAC 0.01	   /* failed actions above this share fail a step */
#define PREP_ACCEL 0.001   /* the preparation run: users log on, next to no load */
#define LOOP_BOUND_PCT 90  /* the store's network thread is the limit from here */
#define STEAL_NOTE_PCT 5   /* steal time worth naming beside the resource */
#define IOWAIT_DISK_PCT 10 /* I/O wait that names the disk */

struct mb_capacity {
	uv_loop_t *loop;
	struct mb_capacity_events ev;
	void *arg;
	struct mb_session *s;
	uv_timer_t poll;
	bool closing;
	struct mb_capacity_params p;
	struct mb_scenario sc;
	enum mb_capacity_state state;
	bool waiting;	/* a session run is under way */
	bool preparing; /* ... and it is the preparation run */
	bool stopped;	/* stopped by the operator */
	struct mb_capacity_step cur;
	double cur_t0;
	struct mb_capacity_step steps[MB_CAPACITY_MAX_STEPS];
	size_t nsteps;
	double lo, hi; /* passing / failing UE (0: none yet) */
	bool hi_saturated;
	double ops_per_ue; /* of the lightest passing step; 0 n/a */
	double t0, t1;
	char started[32];
	char answer[1024];
	char limiting[256];
	char message[1024];
	char program[MB_PATH_MAX];
};

static const char *const lim_key[] = {"score", "latency", "p95", "cpu"};
static const char *const lim_unit[] = {"ms", "ms", "ms", "%"};

void mb_capacity_params_default(struct mb_capacity_params *p)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->data_dir, sizeof(p->data_dir), "%s", MB_DEFAULT_DATA_DIR);
	p->compression = -1;
	p->from_ue = 8000;
	p->to_ue = 2048000;
	p->warmup_s = 15;
	p->measure_s = 30;
	p->bisect_measure_s = 60;
	p->max_steps = 16;
	p->confirm = 1;
	p->steal_limit_pct = 2;
	p->far_over = MB_CAPACITY_FAR_OVER;
	p->tolerance = 0.10;
	p->max_time_s = 840;
}

int mb_capacity_limit_parse(const char *text, struct mb_capacity_limit *out, char *why,
			    size_t whylen)
{
	const char *eq = strchr(text, '=');
	for (int k = 0; eq && k < 4; k++) {
		if (strlen(lim_key[k]) != (size_t)(eq - text) ||
		    strncmp(text, lim_key[k], (size_t)(eq - text)))
			continue;
		char *end;
		double v = strtod(eq + 1, &end);
		while (*end == ' ')
			end++;
		if (*end && strcmp(end, lim_unit[k]))
			break;
		if (!(v > 0) || !isfinite(v) || (k == MB_LIM_CPU && v > 100))
			break;
		out->kind = (enum mb_capacity_limit_kind)k;
		out->value = v;
		return 0;
	}
	snprintf(why, whylen,
		 "'%s': expected score=MSms, latency=MSms, p95=MSms or cpu=PCT%% (a positive "
		 "number; cpu at most 100)",
		 text);
	return MB_EINVAL;
}

void mb_capacity_limit_text(const struct mb_capacity_limit *l, char *buf, size_t len)
{
	snprintf(buf, len, "%s=%g%s", lim_key[l->kind], l->value, lim_unit[l->kind]);
}

int mb_capacity_fd_users(void)
{
	struct rlimit rl;
	long fds = 1024;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		fds = (long)rl.rlim_cur;
	/* one connection per user in the load engine (and the store), and a
	 * margin for databases, logs and pipes */
	long users = fds - 256;
	/* and the load engine's CPU budget here: beyond a few hundred
	 * connections its logons and timers compete with the store for the
	 * same cores (calibrated on a 2-CPU machine: 500 users at 16x
	 * saturated it, 200 users at 400x did not) */
	if (users > MB_CAPACITY_CPU_USERS)
		users = MB_CAPACITY_CPU_USERS;
	return users < 1 ? 1 : (int)users;
}

static void emit_change(struct mb_capacity *c)
{
	if (c->ev.on_change)
		c->ev.on_change(c->arg, c);
}

static void msg(struct mb_capacity *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void msg(struct mb_capacity *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->message, sizeof(c->message), fmt, ap);
	va_end(ap);
	if (c->ev.on_message)
		c->ev.on_message(c->arg, c, c->message);
}

static void on_session_message(void *arg, struct mb_session *s, const char *m)
{
	(void)s;
	struct mb_capacity *c = arg;
	/* the session's own messages: passed on as they are */
	if (c->ev.on_message)
		c->ev.on_message(c->arg, c, m);
}

static void on_poll(uv_timer_t *t);

int mb_capacity_create(uv_loop_t *loop, const struct mb_capacity_events *ev, void *arg,
		       struct mb_capacity **out)
{
	struct mb_capacity *c = calloc(1, sizeof(*c));
	if (!c)
		return MB_ENOMEM;
	c->loop = loop;
	if (ev)
		c->ev = *ev;
	c->arg = arg;
	mb_capacity_params_default(&c->p);
	uv_timer_init(loop, &c->poll);
	c->poll.data = c;
	*out = c;
	return 0;
}

static void on_poll_closed(uv_handle_t *h) { free(h->data); }

void mb_capacity_destroy(struct mb_capacity *c)
{
	if (!c)
		return;
	if (c->s)
		mb_session_destroy(c->s);
	c->s = NULL;
	uv_close((uv_handle_t *)&c->poll, on_poll_closed);
}

enum mb_capacity_state mb_capacity_state(const struct mb_capacity *c) { return c->state; }

const char *mb_capacity_state_str(enum mb_capacity_state st)
{
	static const char *const n[] = {"idle", "preparing", "stepping", "done", "failed"};
	return (unsigned)st < 5 ? n[st] : "?";
}

bool mb_capacity_active(const struct mb_capacity *c)
{
	return c->state == MB_CAP_PREPARING || c->state == MB_CAP_STEPPING;
}

size_t mb_capacity_step_count(const struct mb_capacity *c) { return c->nsteps; }

const struct mb_capacity_step *mb_capacity_step_at(const struct mb_capacity *c, size_t i)
{
	return i < c->nsteps ? &c->steps[i] : NULL;
}

bool mb_capacity_current(const struct mb_capacity *c, struct mb_capacity_step *out,
			 double *elapsed_s)
{
	if (!c->waiting || c->preparing)
		return false;
	*out = c->cur;
	*elapsed_s = mb_now_s() - c->cur_t0;
	return true;
}

const char *mb_capacity_answer(const struct mb_capacity *c) { return c->answer; }
const struct mb_capacity_params *mb_capacity_params(const struct mb_capacity *c) { return &c->p; }

/* ---- running one step ---- */

static int session_params(const struct mb_capacity *c, int users, double accel, double duration,
			  double warmup, struct mb_session_params *sp)
{
	mb_session_params_default(sp);
	snprintf(sp->scenario, sizeof(sp->scenario), "%s", c->p.scenario);
	snprintf(sp->data_dir, sizeof(sp->data_dir), "%s", c->p.data_dir);
	snprintf(sp->target, sizeof(sp->target), "%s", c->p.target);
	sp->users = users;
	sp->accel = accel;
	sp->scale = c->p.scale;
	sp->compression = c->p.compression;
	sp->duration_s = duration;
	sp->warmup_s = warmup;
	sp->save_runs = false;
	return 0;
}

static int run_session(struct mb_capacity *c, int users, double accel, double duration,
		       double warmup)
{
	struct mb_session_params sp;
	session_params(c, users, accel, duration, warmup, &sp);
	struct mb_cfg_error err;
	memset(&err, 0, sizeof(err));
	int rc = mb_session_configure(c->s, &sp, &err);
	if (rc) {
		char m[8192];
		mb_cfg_error_format(&err, m, sizeof(m));
		msg(c, "%s", m);
		return rc;
	}
	rc = mb_session_start_load(c->s);
	if (rc)
		return rc;
	c->waiting = true;
	return 0;
}

static void start_step(struct mb_capacity *c, double ue, const char *phase, bool repeat)
{
	char ph[sizeof(c->cur.phase)]; /* phase may be c->cur.phase (a run again) */
	snprintf(ph, sizeof(ph), "%s", phase);
	memset(&c->cur, 0, sizeof(c->cur));
	memcpy(c->cur.phase, ph, sizeof(ph));
	phase = c->cur.phase;
	c->cur.repeat = repeat;
	int users = (int)floor(ue);
	if (users > c->p.max_users)
		users = c->p.max_users;
	if (users < 1)
		users = 1;
	c->cur.users = users;
	c->cur.accel = ue / users;
	c->cur.ue = ue;
	c->cur.rpc_ops_expected_per_s = -1;
	c->cur.measure_s = strcmp(phase, "bisect") ? c->p.measure_s : c->p.bisect_measure_s;
	c->cur_t0 = mb_now_s();
	c->preparing = false;
	c->state = MB_CAP_STEPPING;
	msg(c, "step %zu (%s%s): %.0f UE = %d users x accel %.3g, %g s warm-up + %g s measured",
	    c->nsteps + 1, phase, repeat ? ", again" : "", ue, users, c->cur.accel, c->p.warmup_s,
	    c->cur.measure_s);
	if (run_session(c, users, c->cur.accel, c->p.warmup_s + c->cur.measure_s, c->p.warmup_s)) {
		c->state = MB_CAP_FAILED;
		snprintf(c->answer, sizeof(c->answer),
			 "the search failed: step %zu could not start: %s", c->nsteps + 1,
			 mb_session_message(c->s));
	}
	emit_change(c);
}

static bool limit_holds(const struct mb_capacity *c, struct mb_capacity_step *st,
			const struct mb_capacity_limit *l)
{
	double v;
	bool has;
	switch (l->kind) {
	case MB_LIM_SCORE:
		v = st->score_ms, has = st->has_score;
		break;
	case MB_LIM_LATENCY:
		v = st->client_latency_ms, has = st->has_rpc;
		break;
	case MB_LIM_P95:
		v = st->rpc_p95_ms, has = st->has_rpc;
		break;
	default:
		v = st->store_cpu_pct, has = st->has_cpu;
		break;
	}
	char lt[64];
	mb_capacity_limit_text(l, lt, sizeof(lt));
	(void)c;
	if (!has) {
		snprintf(st->limited_by, sizeof(st->limited_by), "%s: not measured in the window",
			 lt);
		return false;
	}
	if (v > l->value) {
		st->over_x = l->value > 0 ? v / l->value : 0;
		snprintf(st->limited_by, sizeof(st->limited_by), "%s %g%s over %s",
			 lim_key[l->kind], round(v * 10) / 10, lim_unit[l->kind], lt);
		return false;
	}
	return true;
}

void mb_capacity_name_resource(const struct mb_capacity_step *st,
			       const struct mb_capacity_limit *failed, char *buf, size_t len)
{
	int cpus = 1;
	mb_online_cpus(&cpus);
	if (st->saturated) {
		snprintf(buf, len,
			 "the load engine (saturated in %.0f%% of its windows: it could "
			 "not offer the load on time)",
			 st->saturated_frac * 100);
	} else if (failed && failed->kind == MB_LIM_CPU) {
		snprintf(buf, len, "store CPU (%.0f%% of %d CPUs)", st->store_cpu_pct, cpus);
	} else if (st->has_loop && st->loop_cpu_pct >= LOOP_BOUND_PCT) {
		snprintf(buf, len,
			 "the store's network thread (%.0f%% of one core; the store %.0f%% of %d "
			 "CPUs)",
			 st->loop_cpu_pct, st->store_cpu_pct, cpus);
	} else if (st->has_cpu && st->store_cpu_pct >= 60) {
		snprintf(buf, len, "store CPU (%.0f%% of %d CPUs)", st->store_cpu_pct, cpus);
	} else if (st->has_mcpu && st->machine_cpu_pct >= 85) {
		snprintf(
		    buf, len,
		    "machine CPU (%.0f%%: the store %.0f%% and the load engine %.0f%% share %d "
		    "CPUs)",
		    st->machine_cpu_pct, st->store_cpu_pct, st->load_cpu_pct, cpus);
	} else if (st->has_iowait && st->iowait_pct >= IOWAIT_DISK_PCT) {
		snprintf(buf, len,
			 "disk (the machine waited on I/O %.0f%% of its time; store CPU %.0f%%, "
			 "machine CPU %.0f%%)",
			 st->iowait_pct, st->store_cpu_pct, st->machine_cpu_pct);
	} else {
		snprintf(buf, len,
			 "disk or the store's queues (store CPU %.0f%%, machine CPU %.0f%%: "
			 "neither is near its limit)",
			 st->store_cpu_pct, st->machine_cpu_pct);
	}
	/* a virtual machine whose host takes CPU time from it runs slower than
	 * its CPUs: the same search finds a lower knee */
	size_t n = strlen(buf);
	if (!st->saturated && st->has_steal && st->steal_pct >= STEAL_NOTE_PCT && n < len)
		snprintf(buf + n, len - n,
			 "; the hypervisor took %.0f%% of the machine's CPU time (steal)",
			 st->steal_pct);
}

const char *mb_capacity_step_marks(const struct mb_capacity_step *st)
{
	static const char *const m[] = {"", " (run again)", " (disturbed: steal)",
					" (run again) (disturbed: steal)"};
	return m[(st->repeat ? 1 : 0) + (st->disturbed ? 2 : 0)];
}

/* True when every run at load ue was disturbed (and there was one). */
static bool all_disturbed(const struct mb_capacity *c, double ue)
{
	size_t n = 0;
	for (size_t i = 0; i < c->nsteps; i++) {
		if (c->steps[i].ue != ue)
			continue;
		if (!c->steps[i].disturbed)
			return false;
		n++;
	}
	return n > 0;
}

static void finish(struct mb_capacity *c, enum mb_capacity_state st)
{
	c->state = st;
	c->t1 = mb_now_s();
	if (st == MB_CAP_FAILED) {
		emit_change(c);
		return;
	}
	char lt[256] = "";
	size_t o = 0;
	for (int k = 0; k < c->p.nlimits; k++) {
		char one[64];
		mb_capacity_limit_text(&c->p.limit[k], one, sizeof(one));
		o += (size_t)snprintf(lt + o, sizeof(lt) - o, "%s%s", k ? ", " : "", one);
	}
	const struct mb_capacity_step *best = NULL, *fail = NULL;
	for (size_t i = 0; i < c->nsteps; i++) {
		const struct mb_capacity_step *s = &c->steps[i];
		if (s->pass && s->ue == c->lo)
			best = s;
		if (!s->pass && s->ue == c->hi)
			fail = s;
	}
	char bt[256] = "";
	if (best)
		snprintf(bt, sizeof(bt),
			 "%.0f UE (%d users x accel %.3g; score %s%.0f ms, store CPU %.0f%%)",
			 best->ue, best->users, best->accel, best->has_score ? "" : "n/a ",
			 best->score_ms, best->store_cpu_pct);
	const char *stop = c->stopped ? " (search stopped early)" : "";
	char dist[200] = "";
	if (fail && !c->hi_saturated && all_disturbed(c, c->hi))
		snprintf(dist, sizeof(dist),
			 " Every run at %.0f UE was disturbed (the machine's steal at or above "
			 "--steal-limit %g%%): the knee may be low.",
			 c->hi, c->p.steal_limit_pct);
	if (!best && fail && c->hi_saturated) {
		snprintf(c->limiting, sizeof(c->limiting), "the load engine");
		snprintf(c->answer, sizeof(c->answer),
			 "No answer about the server: at the first step, %.0f UE, the load engine "
			 "saturated (%s), so the server's limit was not reached; try fewer real "
			 "users (--max-users) or a smaller --from%s.",
			 fail->ue, fail->limited_by, stop);
	} else if (!best && fail) {
		snprintf(c->limiting, sizeof(c->limiting), "%s", fail->limited_by);
		snprintf(c->answer, sizeof(c->answer),
			 "No load passed %s: the first step, %.0f UE, failed (%s); the knee lies "
			 "below it (try a smaller --from)%s.%s",
			 lt, fail->ue, fail->limited_by, stop, dist);
	} else if (best && fail && c->hi_saturated) {
		snprintf(c->limiting, sizeof(c->limiting), "the load engine");
		snprintf(c->answer, sizeof(c->answer),
			 "Largest load under %s: %s. At %.0f UE the load engine saturated (%s), so "
			 "the server's own limit was not reached: limiting resource: the load "
			 "engine, not the server%s.",
			 lt, bt, fail->ue, fail->limited_by, stop);
	} else if (best && fail) {
		char res[256];
		const struct mb_capacity_limit *fl = NULL;
		for (int k = 0; k < c->p.nlimits; k++)
			if (strstr(fail->limited_by, lim_key[c->p.limit[k].kind]) ==
			    fail->limited_by)
				fl = &c->p.limit[k];
		mb_capacity_name_resource(fail, fl, res, sizeof(res));
		snprintf(c->limiting, sizeof(c->limiting), "%s", res);
		snprintf(c->answer, sizeof(c->answer),
			 "Largest load under %s: %s. The limit failed at %.0f UE (%s): limiting "
			 "resource: %s%s.%s",
			 lt, bt, fail->ue, fail->limited_by, res, stop, dist);
	} else if (best) {
		snprintf(c->limiting, sizeof(c->limiting), "none reached");
		snprintf(
		    c->answer, sizeof(c->answer),
		    "Largest load under %s: %s, the largest load tried (--to %.0f); the knee lies "
		    "above it%s.",
		    lt, bt, c->p.to_ue, stop);
	} else {
		snprintf(c->answer, sizeof(c->answer), "No step finished%s.", stop);
	}
	msg(c, "%s", c->answer);
	emit_change(c);
}

/* True when another step of measure_s may start: not stopped, within
 * --max-steps and, with its warm-up and a margin, within --max-time. */
static bool room_for_step(const struct mb_capacity *c, double measure_s)
{
	double elapsed = mb_now_s() - c->t0;
	return !c->stopped && (int)c->nsteps < c->p.max_steps &&
	       !(c->p.max_time_s > 0 && elapsed + c->p.warmup_s + measure_s + 10 > c->p.max_time_s);
}

/* Runs of the last step's load so far: the repeat steps at the end and
 * the run they repeat. */
static size_t runs_of_last_load(const struct mb_capacity *c)
{
	size_t n = 0;
	while (n < c->nsteps && c->steps[c->nsteps - 1 - n].repeat)
		n++;
	return n < c->nsteps ? n + 1 : n;
}

bool mb_capacity_disturbed(const struct mb_capacity_step *st, double steal_limit_pct,
			   double far_over)
{
	return st->has_steal && st->steal_pct >= steal_limit_pct &&
	       (st->pass || far_over <= 0 || st->over_x < far_over);
}

bool mb_capacity_run_again(const struct mb_capacity_step *runs, size_t n, int confirm)
{
	if (n == 0 || runs[n - 1].pass || runs[n - 1].saturated || confirm < 0)
		return false;
	size_t counted = 0;
	for (size_t i = 0; i < n; i++)
		counted += !runs[i].disturbed;
	return counted < (size_t)confirm + 1 &&
	       n < (size_t)confirm + 1 + MB_CAPACITY_DISTURBED_RUNS;
}

static void step_done(struct mb_capacity *c)
{
	if (c->stopped) {
		/* a step cut short measured nothing worth a verdict */
		finish(c, MB_CAP_DONE);
		return;
	}
	struct mb_run_summary *sum = calloc(1, sizeof(*sum));
	if (!sum || mb_session_summary(c->s, sum)) {
		free(sum);
		snprintf(c->answer, sizeof(c->answer), "the search failed: no summary of step %zu",
			 c->nsteps + 1);
		finish(c, MB_CAP_FAILED);
		return;
	}
	if (sum->failed) {
		snprintf(c->answer, sizeof(c->answer),
			 "the search failed at step %zu (%.0f UE): %.700s", c->nsteps + 1,
			 c->cur.ue, sum->failure);
		free(sum);
		finish(c, c->stopped ? MB_CAP_DONE : MB_CAP_FAILED);
		return;
	}
	struct mb_capacity_step *st = &c->cur;
	st->seconds = mb_now_s() - c->cur_t0;
	snprintf(st->run_id, sizeof(st->run_id), "%s", sum->id);
	st->has_score = sum->has_score;
	st->score_ms = sum->score_ms;
	st->has_rpc = sum->rpc_latency.has;
	st->rpc_p50_ms = sum->rpc_latency.p50_ms;
	st->rpc_p95_ms = sum->rpc_latency.p95_ms;
	st->rpc_p99_ms = sum->rpc_latency.p99_ms;
	st->client_latency_ms = sum->has[MB_C_CLIENT_LATENCY] ? sum->avg[MB_C_CLIENT_LATENCY]
							      : sum->rpc_latency.mean_ms;
	st->has_cpu = sum->has[MB_C_PROCESSOR_PCT];
	st->store_cpu_pct = sum->avg[MB_C_PROCESSOR_PCT];
	st->has_mcpu = sum->has[MB_C_MACHINE_CPU_PCT];
	st->machine_cpu_pct = sum->avg[MB_C_MACHINE_CPU_PCT];
	st->has_lcpu = sum->has[MB_C_LOAD_CPU_PCT];
	st->load_cpu_pct = sum->avg[MB_C_LOAD_CPU_PCT];
	st->has_loop = sum->has[MB_C_STORE_LOOP_CPU_PCT];
	st->loop_cpu_pct = sum->avg[MB_C_STORE_LOOP_CPU_PCT];
	st->has_steal = sum->has[MB_C_MACHINE_STEAL_PCT];
	st->steal_pct = sum->avg[MB_C_MACHINE_STEAL_PCT];
	st->has_iowait = sum->has[MB_C_MACHINE_IOWAIT_PCT];
	st->iowait_pct = sum->avg[MB_C_MACHINE_IOWAIT_PCT];
	st->has_ops = sum->has[MB_C_RPC_OPS];
	st->rpc_ops_per_s = sum->avg[MB_C_RPC_OPS];
	for (int a = 0; a < MB_ACTION_COUNT; a++) {
		st->actions_scheduled += sum->actions[a].scheduled;
		st->actions_done += sum->actions[a].done;
		st->failed_actions += sum->actions[a].failed;
	}
	st->saturated_frac = sum->has[MB_C_LOAD_SATURATED] ? sum->avg[MB_C_LOAD_SATURATED] : 0;
	st->saturated = st->saturated_frac > SAT_FRAC;
	if (sum->health.nfail_causes > 0) {
		snprintf(st->fail_cause, sizeof(st->fail_cause), "%s",
			 sum->health.fail_causes[0].cause);
		st->fail_cause_n = sum->health.fail_causes[0].n;
	}
	free(sum);
	/* the verdict: every limit, failed actions, then the load engine */
	st->pass = true;
	for (int k = 0; k < c->p.nlimits && st->pass; k++)
		st->pass = limit_holds(c, st, &c->p.limit[k]);
	double tried = st->actions_done + st->failed_actions;
	if (st->pass && tried > 0 && st->failed_actions > FAIL_FRAC * tried) {
		st->pass = false;
		st->over_x = st->failed_actions / tried / FAIL_FRAC;
		snprintf(st->limited_by, sizeof(st->limited_by),
			 "failed actions %.1f%% over 1%%%s%s%s", st->failed_actions / tried * 100,
			 st->fail_cause[0] ? " (mostly " : "", st->fail_cause,
			 st->fail_cause[0] ? ")" : "");
	}
	if (st->saturated) {
		/* never the server's limit, whatever the latency did */
		st->pass = false;
		snprintf(st->limited_by, sizeof(st->limited_by),
			 "load engine saturated in %.0f%% of its windows",
			 st->saturated_frac * 100);
	}
	st->disturbed = mb_capacity_disturbed(st, c->p.steal_limit_pct, c->p.far_over);
	if (st->pass && st->has_ops && c->ops_per_ue <= 0)
		c->ops_per_ue = st->rpc_ops_per_s / st->ue;
	if (c->ops_per_ue > 0)
		st->rpc_ops_expected_per_s = c->ops_per_ue * st->ue;
	if (c->nsteps < MB_CAPACITY_MAX_STEPS)
		c->steps[c->nsteps++] = *st;
	/* a failure the server caused is confirmed by running the same load
	 * again (--confirm): a passing disturbance of the machine (a disk
	 * stall, the hypervisor) does not set the knee.  A run the hypervisor
	 * disturbed (steal) does not count as one of the failures.  A
	 * saturated load engine is never the server's limit, so it is not
	 * repeated. */
	size_t runs = runs_of_last_load(c);
	bool again = mb_capacity_run_again(&c->steps[c->nsteps - runs], runs, c->p.confirm) &&
		     room_for_step(c, st->measure_s);
	char why[128] = "";
	if (again && st->disturbed)
		snprintf(why, sizeof(why),
			 "; running the same load again: the hypervisor took %.1f%% of the "
			 "machine's CPU time (steal, --steal-limit %g%%)",
			 st->steal_pct, c->p.steal_limit_pct);
	else if (again)
		snprintf(why, sizeof(why),
			 "; running the same load again to confirm it (--confirm)");
	else if (!st->pass && !st->saturated && !st->disturbed && st->has_steal &&
		 st->steal_pct >= c->p.steal_limit_pct)
		snprintf(why, sizeof(why),
			 "; counted although the hypervisor took %.1f%% (steal): %.1f times "
			 "its limit (--steal-far-over) is more than steal explains",
			 st->steal_pct, st->over_x);
	msg(c, "step %zu: %.0f UE: %s%s%s%s", c->nsteps, st->ue, st->pass ? "within the limit" : "",
	    st->pass ? "" : "over: ", st->limited_by, why);
	if (again) {
		emit_change(c);
		start_step(c, st->ue, st->phase, true);
		return;
	}
	if (st->pass) {
		if (st->ue > c->lo)
			c->lo = st->ue;
	} else if (c->hi == 0 || st->ue < c->hi) {
		c->hi = st->ue;
		c->hi_saturated = st->saturated;
	}
	emit_change(c);

	/* the next load */
	if (!room_for_step(c, c->hi == 0 ? c->p.measure_s : c->p.bisect_measure_s)) {
		finish(c, MB_CAP_DONE);
		return;
	}
	if (c->hi == 0) {
		if (st->ue >= c->p.to_ue) {
			finish(c, MB_CAP_DONE);
			return;
		}
		double next = st->ue * 2 < c->p.to_ue ? st->ue * 2 : c->p.to_ue;
		start_step(c, next, "ramp", false);
		return;
	}
	if (c->lo == 0 || (c->hi - c->lo) <= c->p.tolerance * c->lo) {
		finish(c, MB_CAP_DONE);
		return;
	}
	start_step(c, round((c->lo + c->hi) / 2), "bisect", false);
}

static void on_poll(uv_timer_t *t)
{
	struct mb_capacity *c = t->data;
	if (!c->waiting || mb_session_load_active(c->s) || mb_session_children(c->s) > 0)
		return;
	c->waiting = false;
	if (c->preparing) {
		c->preparing = false;
		if (mb_session_failed(c->s)) {
			snprintf(
			    c->answer, sizeof(c->answer),
			    "the search failed: the preparation (initialising %.300s for %d users) "
			    "failed: %.500s",
			    c->p.data_dir, c->p.max_users, mb_session_message(c->s));
			finish(c, MB_CAP_FAILED);
			return;
		}
		if (c->stopped) {
			finish(c, MB_CAP_DONE);
			return;
		}
		start_step(c, c->p.from_ue, "ramp", false);
		return;
	}
	step_done(c);
}

int mb_capacity_start(struct mb_capacity *c, const struct mb_capacity_params *p,
		      struct mb_cfg_error *err)
{
	if (mb_capacity_active(c))
		return MB_EBUSY;
	if (!(p->from_ue > 0) || !(p->to_ue >= p->from_ue) || !(p->warmup_s >= 0) ||
	    !(p->measure_s > 0) || !(p->bisect_measure_s > 0) || p->max_steps < 1 ||
	    p->confirm < 0 || !(p->tolerance > 0) || !(p->steal_limit_pct >= 0) ||
	    !(p->far_over >= 0))
		return MB_EINVAL;
	int rc = mb_scenario_load(p->scenario, &c->sc, err);
	if (rc)
		return rc;
	if (c->s)
		mb_session_destroy(c->s);
	c->s = NULL;
	static const struct mb_session_events sev = {NULL, on_session_message};
	if ((rc = mb_session_create(c->loop, &sev, c, &c->s)))
		return rc;
	if (c->program[0])
		mb_session_set_program(c->s, c->program);
	c->p = *p;
	if (c->p.nlimits == 0) {
		c->p.limit[0].kind = MB_LIM_SCORE;
		c->p.limit[0].value = 1000;
		c->p.nlimits = 1;
	}
	if (c->p.max_users <= 0)
		c->p.max_users = mb_capacity_fd_users();
	if (c->p.max_users > (int)ceil(c->p.to_ue))
		c->p.max_users = (int)ceil(c->p.to_ue);
	c->nsteps = 0;
	c->lo = c->hi = 0;
	c->hi_saturated = false;
	c->ops_per_ue = 0;
	c->stopped = false;
	c->answer[0] = c->limiting[0] = '\0';
	c->t0 = mb_now_s();
	c->t1 = 0;
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(c->started, sizeof(c->started), "%Y-%m-%dT%H:%M:%SZ", &tm);
	uv_timer_start(&c->poll, on_poll, POLL_MS, POLL_MS);
	/* initialise once, for the most users any step runs */
	struct mb_session_params sp;
	session_params(c, c->p.max_users, PREP_ACCEL, 1, 0, &sp);
	if ((rc = mb_session_configure(c->s, &sp, err)))
		return rc;
	if (!mb_session_initialised(c->s)) {
		c->state = MB_CAP_PREPARING;
		c->preparing = true;
		msg(c, "preparing: initialising %s for %d users", c->p.data_dir, c->p.max_users);
		if ((rc = run_session(c, c->p.max_users, PREP_ACCEL, 1, 0))) {
			c->preparing = false;
			c->state = MB_CAP_FAILED;
			return rc;
		}
		emit_change(c);
		return 0;
	}
	start_step(c, c->p.from_ue, "ramp", false);
	return c->state == MB_CAP_FAILED ? MB_ECHILD : 0;
}

void mb_capacity_stop(struct mb_capacity *c)
{
	if (!mb_capacity_active(c))
		return;
	c->stopped = true;
	if (c->waiting)
		mb_session_stop_all(c->s); /* the poll then finishes */
	else
		finish(c, MB_CAP_DONE);
}

/* ---- JSON ---- */

static json_t *nn(bool has, double v) { return has ? json_real(v) : json_null(); }

json_t *mb_capacity_json(const struct mb_capacity *c)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "schema", json_string(MB_CAPACITY_SCHEMA));
	json_object_set_new(o, "started", json_string(c->started));
	json_object_set_new(o, "scenario",
			    json_pack("{s:s,s:s,s:i,s:s}", "name", c->sc.name, "title", c->sc.title,
				      "number", c->sc.number, "mode",
				      c->sc.mode == MB_MODE_CACHED ? "cached" : "online"));
	/* the target every step ran against, as the session names it */
	const char *tg = c->s ? mb_session_target(c->s) : "";
	json_object_set_new(o, "target", json_string(tg && tg[0] ? tg : c->p.target));
	char plat[MB_TEXT_MAX] = "n/a";
	mb_platform_string(plat, sizeof(plat));
	int cpus = 0;
	mb_online_cpus(&cpus);
	char mach[512] = "n/a";
	mb_machine_string(mach, sizeof(mach));
	json_object_set_new(
	    o, "machine",
	    json_pack("{s:s,s:i,s:s}", "platform", plat, "cpus", cpus, "description", mach));
	json_object_set_new(o, "version", json_string(PACKAGE_VERSION));
	json_t *lims = json_array();
	char lt[256] = "";
	size_t off = 0;
	for (int k = 0; k < c->p.nlimits; k++) {
		char one[64];
		mb_capacity_limit_text(&c->p.limit[k], one, sizeof(one));
		off += (size_t)snprintf(lt + off, sizeof(lt) - off, "%s%s", k ? ", " : "", one);
		json_array_append_new(
		    lims, json_pack("{s:s,s:f,s:s}", "kind", lim_key[c->p.limit[k].kind], "value",
				    c->p.limit[k].value, "unit", lim_unit[c->p.limit[k].kind]));
	}
	json_object_set_new(o, "limit", json_pack("{s:s,s:o}", "text", lt, "limits", lims));
	json_object_set_new(
	    o, "parameters",
	    json_pack("{s:s,s:f,s:o,s:f,s:f,s:i,s:f,s:f,s:f,s:i,s:i,s:f,s:f,s:f,s:f}", "data",
		      c->p.data_dir, "scale", c->p.scale > 0 ? c->p.scale : c->sc.scale,
		      "compression",
		      json_boolean(c->p.compression >= 0 ? c->p.compression : c->sc.compression),
		      "from_ue", c->p.from_ue, "to_ue", c->p.to_ue, "max_users", c->p.max_users,
		      "warmup_s", c->p.warmup_s, "measure_s", c->p.measure_s, "bisect_measure_s",
		      c->p.bisect_measure_s, "max_steps", c->p.max_steps, "confirm", c->p.confirm,
		      "steal_limit_pct", c->p.steal_limit_pct, "steal_far_over", c->p.far_over,
		      "tolerance", c->p.tolerance, "max_time_s", c->p.max_time_s));
	json_t *steps = json_array();
	for (size_t i = 0; i < c->nsteps; i++) {
		const struct mb_capacity_step *s = &c->steps[i];
		json_t *x = json_object();
		json_object_set_new(x, "step", json_integer((json_int_t)i + 1));
		json_object_set_new(x, "phase", json_string(s->phase));
		json_object_set_new(x, "measure_s", json_real(s->measure_s));
		json_object_set_new(x, "users", json_integer(s->users));
		json_object_set_new(x, "accel", json_real(s->accel));
		json_object_set_new(x, "ue", json_real(s->ue));
		json_object_set_new(x, "score_ms", nn(s->has_score, s->score_ms));
		json_object_set_new(x, "client_latency_ms", nn(s->has_rpc, s->client_latency_ms));
		json_object_set_new(x, "rpc_p50_ms", nn(s->has_rpc, s->rpc_p50_ms));
		json_object_set_new(x, "rpc_p95_ms", nn(s->has_rpc, s->rpc_p95_ms));
		json_object_set_new(x, "rpc_p99_ms", nn(s->has_rpc, s->rpc_p99_ms));
		json_object_set_new(x, "store_cpu_pct", nn(s->has_cpu, s->store_cpu_pct));
		json_object_set_new(x, "machine_cpu_pct", nn(s->has_mcpu, s->machine_cpu_pct));
		json_object_set_new(x, "load_cpu_pct", nn(s->has_lcpu, s->load_cpu_pct));
		json_object_set_new(x, "store_loop_cpu_pct", nn(s->has_loop, s->loop_cpu_pct));
		json_object_set_new(x, "machine_steal_pct", nn(s->has_steal, s->steal_pct));
		json_object_set_new(x, "rpc_ops_per_s", nn(s->has_ops, s->rpc_ops_per_s));
		json_object_set_new(x, "rpc_ops_expected_per_s",
				    nn(s->rpc_ops_expected_per_s >= 0, s->rpc_ops_expected_per_s));
		json_object_set_new(x, "actions_scheduled", json_real(s->actions_scheduled));
		json_object_set_new(x, "actions_done", json_real(s->actions_done));
		json_object_set_new(x, "failed_actions", json_real(s->failed_actions));
		json_object_set_new(x, "failed_cause",
				    s->fail_cause[0] ? json_string(s->fail_cause) : json_null());
		json_object_set_new(x, "failed_cause_actions", json_real(s->fail_cause_n));
		json_object_set_new(x, "saturated_fraction", json_real(s->saturated_frac));
		json_object_set_new(x, "saturated", json_boolean(s->saturated));
		json_object_set_new(x, "machine_iowait_pct", nn(s->has_iowait, s->iowait_pct));
		json_object_set_new(x, "repeat", json_boolean(s->repeat));
		json_object_set_new(x, "disturbed", json_boolean(s->disturbed));
		json_object_set_new(x, "over_limit_x", nn(s->over_x > 0, s->over_x));
		json_object_set_new(x, "pass", json_boolean(s->pass));
		json_object_set_new(x, "limited_by",
				    s->limited_by[0] ? json_string(s->limited_by) : json_null());
		json_object_set_new(x, "run_id", json_string(s->run_id));
		json_object_set_new(x, "seconds", json_real(round(s->seconds * 10) / 10));
		json_array_append_new(steps, x);
	}
	json_object_set_new(o, "steps", steps);
	const struct mb_capacity_step *best = NULL;
	for (size_t i = 0; i < c->nsteps; i++)
		if (c->steps[i].pass && c->steps[i].ue == c->lo)
			best = &c->steps[i];
	json_object_set_new(o, "answer",
			    json_pack("{s:s,s:o,s:o,s:o,s:o,s:o,s:s,s:b}", "text", c->answer,
				      "knee_ue", nn(best != NULL, c->lo), "knee_users",
				      best ? json_integer(best->users) : json_null(), "knee_accel",
				      nn(best != NULL, best ? best->accel : 0), "fail_ue",
				      nn(c->hi > 0, c->hi), "load_engine_limited",
				      json_boolean(c->hi_saturated), "limiting", c->limiting,
				      "stopped", c->stopped));
	json_object_set_new(o, "state", json_string(mb_capacity_state_str(c->state)));
	double end = c->t1 > 0 ? c->t1 : mb_now_s();
	json_object_set_new(o, "duration_s", json_real(round((end - c->t0) * 10) / 10));
	return o;
}

int mb_capacity_write(const struct mb_capacity *c, const char *path)
{
	json_t *j = mb_capacity_json(c);
	if (!j)
		return MB_ENOMEM;
	int rc = mb_json_write_file(j, path);
	json_decref(j);
	return rc;
}
