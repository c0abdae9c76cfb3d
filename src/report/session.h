/* session.h: one operator session: a scenario, its children and its
 * measurements.  Shared by the console and `mailbench run`.
 *
 * Starting the load runs `mailbench init` first when the data directory
 * is not initialised for the choice (progress and ETA from its output),
 * then `mailbench store` (waits for "listening on"), then `mailbench load`
 * against the store's port.  The storage test (`mailbench storage-test`)
 * starts and stops on its own.  A 1 Hz timer samples the machine (CPU,
 * context switches: MB_SRC_HOST counters) and appends one row per second
 * to the series from the children's latest stats lines; each counter comes
 * only from the process the counters table names as its source.
 * Histograms from the load engine are merged exactly, over the whole run
 * and after warm-up.  Stopping the load stops the load engine, then the
 * store; the run's summary is then final (and saved in DATA/runs/).
 * Invariants: a child that exits unasked fails the run with its stderr
 * tail; destroying the session leaves no child behind.
 */
#ifndef MB_REPORT_SESSION_H
#define MB_REPORT_SESSION_H

#include <stdbool.h>
#include <uv.h>

#include "core/scenario.h"
#include "report/report.h"
#include "report/series.h"
#include "report/thresholds.h"

/* Seconds of the live window. */
#define MB_LIVE_WINDOW_S 10.0

struct mb_session_params {
	char scenario[MB_PATH_MAX]; /* "online", "cached" or a .cfg path */
	int users;		    /* 0: the scenario's */
	double scale;		    /* 0: the scenario's */
	double accel;		    /* 0: the scenario's */
	int compression;	    /* -1: the scenario's, 0 off, 1 on */
	double duration_s;	    /* 0: until stopped */
	double warmup_s;	    /* < 0: the scenario's */
	char data_dir[MB_PATH_MAX];
	char log_dir[MB_PATH_MAX]; /* "": logs inside the data directory */
	int stress_threads;	   /* 0: the storage settings' first count */
	double stress_duration_s;  /* 0: until stopped */
	double stress_size_gb;	   /* 0: the storage settings' database size */
	bool save_runs;		   /* save summaries in DATA/runs/ */
};

enum mb_session_state {
	MB_SS_IDLE = 0,
	MB_SS_INIT,	/* initialising the data directory */
	MB_SS_STARTING, /* store started, waiting for it to listen */
	MB_SS_RUNNING,	/* load running */
	MB_SS_STOPPING,
	MB_SS_DONE,   /* stopped cleanly; summary final */
	MB_SS_FAILED, /* a child failed; summary final, marked failed */
};

struct mb_session;

struct mb_session_events {
	void (*on_change)(void *arg, struct mb_session *s); /* state or figures changed */
	void (*on_message)(void *arg, struct mb_session *s, const char *msg); /* status/errors */
};

void mb_session_params_default(struct mb_session_params *p);
int mb_session_create(uv_loop_t *loop, const struct mb_session_events *ev, void *arg,
		      struct mb_session **out);
/* Stops every child at once (SIGKILL after nothing); run the loop after. */
void mb_session_destroy(struct mb_session *s);
/* The program children run (tests); default this program. */
int mb_session_set_program(struct mb_session *s, const char *path);

/* Load the scenario, storage settings and thresholds for p.  Refused
 * (MB_EBUSY) while children run.  MB_ECONFIG: err says where. */
int mb_session_configure(struct mb_session *s, const struct mb_session_params *p,
			 struct mb_cfg_error *err);
const struct mb_session_params *mb_session_params(const struct mb_session *s);
const struct mb_scenario *mb_session_scenario(const struct mb_session *s);
const struct mb_storage_cfg *mb_session_storage_cfg(const struct mb_session *s);
/* Effective users, scale, accel, compression, warm-up of the session. */
int mb_session_users(const struct mb_session *s);
double mb_session_scale(const struct mb_session *s);
double mb_session_accel(const struct mb_session *s);
bool mb_session_compression(const struct mb_session *s);
double mb_session_warmup(const struct mb_session *s);

struct mb_thresholds *mb_session_thresholds(struct mb_session *s);
/* Save the thresholds to DATA/thresholds.cfg. */
int mb_session_save_thresholds(struct mb_session *s);

/* True when DATA is initialised for this scenario, users and scale. */
bool mb_session_initialised(const struct mb_session *s);

int mb_session_start_load(struct mb_session *s);
int mb_session_stop_load(struct mb_session *s);
/* Re-initialise DATA from scratch (`mailbench init --restart`: its
 * mailboxes are replaced), then start as mb_session_start_load. */
int mb_session_reinit_and_start(struct mb_session *s);
int mb_session_start_stress(struct mb_session *s, int threads);
int mb_session_stop_stress(struct mb_session *s);
/* Stop everything (quit). */
void mb_session_stop_all(struct mb_session *s);

enum mb_session_state mb_session_state(const struct mb_session *s);
const char *mb_session_state_str(enum mb_session_state st);
bool mb_session_load_active(const struct mb_session *s); /* INIT..STOPPING */
bool mb_session_stress_active(const struct mb_session *s);
int mb_session_stress_threads(const struct mb_session *s);
/* Thread count of the next storage test start (1..256). */
void mb_session_set_stress_threads(struct mb_session *s, int threads);
/* Children alive. */
int mb_session_children(const struct mb_session *s);
/* Init progress 0..100 and ETA in seconds (< 0: unknown); false unless
 * initialising. */
bool mb_session_init_progress(const struct mb_session *s, double *pct, double *eta_s);
/* Seconds since the load started (0 before). */
double mb_session_elapsed(const struct mb_session *s);
/* Last status or error message. */
const char *mb_session_message(const struct mb_session *s);
bool mb_session_failed(const struct mb_session *s);
/* The last stderr lines of the child that failed ("" if none). */
const char *mb_session_failure_detail(const struct mb_session *s);

const struct mb_series *mb_session_series(const struct mb_session *s);
/* Series time at which the load engine started (0 when it did not). */
double mb_session_load_offset(const struct mb_session *s);
const struct mb_histset *mb_session_hists(const struct mb_session *s);
/* Live values (MB_LIVE_WINDOW_S window) and run averages after warm-up. */
void mb_session_live(const struct mb_session *s, double *v, bool *has);
void mb_session_average(const struct mb_session *s, double *v, bool *has);
/* The summary of the current (or last) run. */
int mb_session_summary(const struct mb_session *s, struct mb_run_summary *out);
/* Path of the last saved summary ("" if none). */
const char *mb_session_saved_path(const struct mb_session *s);
/* Storage test live figures: p95/p99 of db reads and log writes from its
 * histograms (has false when not measured). */
void mb_session_stress_latency(const struct mb_session *s, struct mb_latency *read,
			       struct mb_latency *logw);
/* Header strings of this machine/run. */
const char *mb_session_platform(const struct mb_session *s);
int mb_session_smt(const struct mb_session *s);

/* Histogram name conventions of the stats stream. */
#define MB_HIST_RPC "rpc"		/* load engine: RPC round trip */
#define MB_HIST_ACTION_PREFIX "action." /* load engine: action response, + action key */
#define MB_HIST_STRESS_READ "db_read"	/* storage test */
#define MB_HIST_STRESS_LOG "log_write"

#endif
