/* capacity.h: the capacity search (`mailbench capacity`, the console's
 * capacity screen).
 *
 * The search steps the offered load up in user-equivalents (UE: users x
 * acceleration; one UE is one user at the scenario's 8-hour-day rate).
 * Real users come first: a step runs min(UE, max_users) users and
 * accelerates only the rest (max_users is the load engine's file-
 * descriptor budget, or --max-users); both are shown.  Each step is one
 * run of the session pipeline (session.h: store and load engine started
 * afresh, a warm-up, then the measured window), evaluated against the
 * limits.  The load doubles from --from until a step fails or --to is
 * reached, then the knee is bisected between the last passing and the
 * first failing load until they are within the tolerance or the step or
 * time budget is spent.  The data directory is initialised once, for
 * max_users, before the first step (a preparation run of 1 s at a
 * negligible rate).
 *
 * States:  IDLE -> PREPARING -> STEPPING -> DONE
 *                      \____________\______-> FAILED (a run failed)
 * stop() moves any state to DONE (the answer so far, marked stopped).
 *
 * A step fails when a limit fails (score, latency, RPC p95 or store CPU)
 * or more than 1% of its actions failed ("failed actions").  A step in
 * which the load engine reported itself saturated (in over 20% of its
 * measured windows) is not a failure of the server: it ends the search
 * from above (it is an upper bound of what this load engine can offer,
 * never of the server) and the answer says the load engine limited it.
 * A failing step runs again at the same load (--confirm N: it fails when
 * N + 1 runs fail).  A run during which the hypervisor took at least
 * --steal-limit of the machine's CPU time (steal) is "disturbed": its
 * failure does not count towards the N + 1, and the load runs again, at
 * most MB_CAPACITY_DISTURBED_RUNS times more.  A load whose every run was
 * disturbed still fails (the budget is spent), and the answer says so.
 * A run that missed its limit MB_CAPACITY_FAR_OVER times over or more is
 * not disturbed whatever the steal: a few percent of the CPU taken by the
 * host does not explain it, and running it again would spend the budget
 * the bisection needs.
 * Invariant: every figure of a step comes from that step's run summary.
 */
#ifndef MB_REPORT_CAPACITY_H
#define MB_REPORT_CAPACITY_H

#include <jansson.h>
#include <stdbool.h>
#include <uv.h>

#include "core/scenario.h"

#define MB_CAPACITY_MAX_LIMITS 4
#define MB_CAPACITY_MAX_STEPS 32
#define MB_CAPACITY_SCHEMA "mailbench-capacity/1"
/* Real users at most by default (the load engine's CPU budget; calibrated). */
#define MB_CAPACITY_CPU_USERS 200
/* Runs of one load beyond --confirm's when runs were disturbed (steal). */
#define MB_CAPACITY_DISTURBED_RUNS 2
/* The default --steal-far-over: a failure this many times over its limit
 * counts even at high steal
 * (calibrated: the 512,000 UE cached runs that spent three searches'
 * budgets scored 15-22 s against 1 s; the disturbed bisection steps that
 * passed when run again had missed by less than 2x). */
#define MB_CAPACITY_FAR_OVER 2.0

enum mb_capacity_limit_kind {
	MB_LIM_SCORE = 0, /* LoadSim score (p95 of action response), ms */
	MB_LIM_LATENCY,	  /* client latency (mean RPC round trip), ms */
	MB_LIM_P95,	  /* RPC round trip p95, ms */
	MB_LIM_CPU,	  /* store processor time, % */
};

struct mb_capacity_limit {
	enum mb_capacity_limit_kind kind;
	double value;
};

struct mb_capacity_params {
	char scenario[MB_PATH_MAX];
	char data_dir[MB_PATH_MAX];
	char target[MB_TEXT_MAX]; /* --target of every step's run; "": the scenario's */
	double scale;		  /* 0: the scenario's */
	int compression;	  /* -1: the scenario's */
	struct mb_capacity_limit limit[MB_CAPACITY_MAX_LIMITS];
	int nlimits;		 /* 0: score=1000ms */
	double from_ue;		 /* first load */
	double to_ue;		 /* largest load tried */
	int max_users;		 /* 0: the fd budget, at most MB_CAPACITY_CPU_USERS */
	double warmup_s;	 /* per step */
	double measure_s;	 /* per ramp step, after the warm-up */
	double bisect_measure_s; /* per bisection step: the steps that place the
				  * knee measure longer (a p95 near the limit
				  * from a short window is mostly noise) */
	int max_steps;		 /* steps in all (ramp + bisection + repeats) */
	int confirm;		 /* a failing step runs again up to this many
				  * times and fails only when every run fails */
	double far_over;	 /* a failure this many times over its limit
				  * is never disturbed (0: any can be) */
	double steal_limit_pct;	 /* a run with the machine's steal at or above
				  * this is disturbed: its failure is not
				  * counted, the load runs again (at most
				  * MB_CAPACITY_DISTURBED_RUNS more times) */
	double tolerance;	 /* bisect until (hi - lo) / lo <= this */
	double max_time_s;	 /* stop stepping after this (0: none) */
};

struct mb_capacity_step {
	char phase[8];	  /* "ramp" or "bisect" */
	double measure_s; /* its measured window */
	int users;
	double accel, ue;
	bool has_score, has_rpc;
	double score_ms, rpc_p50_ms, rpc_p95_ms, rpc_p99_ms, client_latency_ms;
	bool has_cpu, has_mcpu, has_lcpu, has_ops, has_loop, has_steal, has_iowait;
	double store_cpu_pct, machine_cpu_pct, load_cpu_pct, rpc_ops_per_s;
	double loop_cpu_pct;	       /* the store's network thread, % of one core */
	double steal_pct;	       /* the machine's steal time (hypervisor) */
	double iowait_pct;	       /* the machine's I/O wait */
	double rpc_ops_expected_per_s; /* ops per UE of the lightest passing step x UE; < 0 n/a */
	double actions_scheduled, actions_done, failed_actions;
	double saturated_frac; /* share of measured windows the load engine was saturated */
	bool saturated;
	bool pass;
	bool repeat;	      /* a run again of the step before, at the same load */
	bool disturbed;	      /* steal at or above --steal-limit during its window,
			       * and not failed MB_CAPACITY_FAR_OVER times over */
	double over_x;	      /* measured / the limit it missed (failed actions: share
			       * / 1%); 0 when it passed or the value was not measured */
	char limited_by[160]; /* why it failed ("" when it passed) */
	char fail_cause[24];  /* the most frequent cause of its failed actions ("" none) */
	double fail_cause_n;  /* failed actions of that cause */
	char run_id[64];
	double seconds; /* wall time of the step, init included */
};

enum mb_capacity_state {
	MB_CAP_IDLE = 0,
	MB_CAP_PREPARING,
	MB_CAP_STEPPING,
	MB_CAP_DONE,
	MB_CAP_FAILED,
};

struct mb_capacity;

struct mb_capacity_events {
	/* a step started, finished, or the state changed */
	void (*on_change)(void *arg, struct mb_capacity *c);
	void (*on_message)(void *arg, struct mb_capacity *c, const char *msg);
};

void mb_capacity_params_default(struct mb_capacity_params *p);
/* "score=1000ms", "latency=200ms", "p95=50ms", "cpu=80%": 0, or MB_EINVAL
 * with a message in why. */
int mb_capacity_limit_parse(const char *text, struct mb_capacity_limit *out, char *why,
			    size_t whylen);
void mb_capacity_limit_text(const struct mb_capacity_limit *l, char *buf, size_t len);
/* Which resource stopped failing step st (failed: the limit it failed, or
 * NULL), in words, into buf: the load engine when it saturated; the store's
 * network thread at 90% of a core or more; store CPU at 60% of the CPUs or
 * more; machine CPU at 85% or more; the disk when the machine waited on I/O
 * 10% of its time or more; else disk or the store's queues.  Steal time of
 * 5% or more is named after it. */
void mb_capacity_name_resource(const struct mb_capacity_step *st,
			       const struct mb_capacity_limit *failed, char *buf, size_t len);
/* Whether a load runs again after runs[0..n-1], its runs so far in
 * order (all failed but perhaps the last): yes while the last failed,
 * was not saturated, fewer than confirm + 1 runs undisturbed and fewer
 * than confirm + 1 + MB_CAPACITY_DISTURBED_RUNS runs in all. */
bool mb_capacity_run_again(const struct mb_capacity_step *runs, size_t n, int confirm);
/* Whether a finished step (verdict and over_x set) was disturbed: the
 * machine's steal at or above steal_limit_pct, and it passed or missed its
 * limit by less than far_over times (0: by any). */
bool mb_capacity_disturbed(const struct mb_capacity_step *st, double steal_limit_pct,
			   double far_over);
/* The marks of a step in a curve line: " (run again)", " (disturbed: steal)". */
const char *mb_capacity_step_marks(const struct mb_capacity_step *st);
/* The real-users budget of the load engine: RLIMIT_NOFILE less a margin,
 * at most MB_CAPACITY_CPU_USERS. */
int mb_capacity_fd_users(void);

int mb_capacity_create(uv_loop_t *loop, const struct mb_capacity_events *ev, void *arg,
		       struct mb_capacity **out);
/* Stops at once (children killed); run the loop after. */
void mb_capacity_destroy(struct mb_capacity *c);
/* Start a search: MB_ECONFIG (err says where) for a bad scenario,
 * MB_EINVAL for inconsistent parameters, MB_EBUSY while one runs. */
int mb_capacity_start(struct mb_capacity *c, const struct mb_capacity_params *p,
		      struct mb_cfg_error *err);
/* Stop after killing the current step's children; the answer so far. */
void mb_capacity_stop(struct mb_capacity *c);

enum mb_capacity_state mb_capacity_state(const struct mb_capacity *c);
const char *mb_capacity_state_str(enum mb_capacity_state st);
bool mb_capacity_active(const struct mb_capacity *c);
size_t mb_capacity_step_count(const struct mb_capacity *c);
const struct mb_capacity_step *mb_capacity_step_at(const struct mb_capacity *c, size_t i);
/* The step running now (users, accel, UE, phase set; figures not yet)
 * and its elapsed seconds; false when none runs. */
bool mb_capacity_current(const struct mb_capacity *c, struct mb_capacity_step *out,
			 double *elapsed_s);
/* The answer ("" until the search ends): largest load under the limit
 * with the limiting resource named. */
const char *mb_capacity_answer(const struct mb_capacity *c);
const struct mb_capacity_params *mb_capacity_params(const struct mb_capacity *c);
/* Everything as JSON (docs/capacity-json.md); NULL on ENOMEM. */
json_t *mb_capacity_json(const struct mb_capacity *c);
int mb_capacity_write(const struct mb_capacity *c, const char *path);

#endif
