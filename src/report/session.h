/* session.h: one operator session: a scenario, its children and its
 * measurements.  Shared by the console and `mailbench run`.
 *
 * The pipeline depends on the target (the scenario's target.* keys, or
 * --target).  The embedded target (driver mbstore, no address): starting
 * the load runs `mailbench init` first when the data directory is not
 * initialised for the choice (progress and ETA from its output), then
 * `mailbench store` (waits for "listening on"), then `mailbench load`
 * against the store's port.  An external target (an address, or a driver
 * that is not the embedded store): `mailbench load` only, against the
 * target's accounts: a store started elsewhere (mbstore:ADDR:PORT) with
 * DATA/topology.json (its keys), any other target with its accounts file
 * (target.accounts, else DATA/accounts.json); the store's counters are
 * then n/a, and the summary says why.  The storage test (`mailbench
 * storage-test`) starts and stops on its own.  A 1 Hz timer samples the machine (CPU, context
 * switches: MB_SRC_HOST counters) and appends one row per second to the series from the children's
 * latest stats lines; each counter comes only from the process the counters table names as its
 * source. Histograms from the load engine are merged exactly, over the whole run and after warm-up.
 * Stopping the load stops the load engine, then the store; the run's summary is then final (and
 * saved in DATA/runs/). Invariants: a child that exits unasked fails the run with its stderr tail;
 * destroying the session leaves no child behind.
 */
#ifndef MB_REPORT_SESSION_H
#define MB_REPORT_SESSION_H

#include <stdbool.h>
#include <uv.h>

#include "core/scenario.h"
#include "report/loadhosts.h"
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
	char target[MB_TEXT_MAX];  /* --target: DRIVER, DRIVER:ADDR:PORT or ADDR:PORT; "": the
				      scenario's */
	int seed;		   /* load engine seed; < 0: the scenario's run.seed */
	double cache_mb;	   /* database cache, MiB; 0: the scenario's */
	bool reuse;		   /* run on DATA as the last run left it */
	/* the load engine on several machines (Open MPI): "" for one process */
	char load_hosts[MB_PATH_MAX]; /* an mpirun hostfile */
	int load_procs;		      /* ranks; 0: one per hostfile slot */
	char listen[128];	      /* the store's ADDR:PORT; "": 127.0.0.1:0 */
	char ack_log[MB_PATH_MAX];    /* the load engine's ack log; "": none */
	/* a real mail server: its submission address (smtp://HOST:PORT or
	 * HOST:PORT; "": the scenario's), its processes for the server
	 * counters (PID[,PID...], trees walked each second; or a cgroup) */
	char submit[MB_TEXT_MAX];
	/* TLS to a real mail server (core/options.h MB_OPTION_TLS*) */
	int tls; /* index into mb_tls_modes: 1 starttls */
	char tls_ca[256];
	bool tls_insecure;
	char server_pids[256];
	char server_cgroup[MB_PATH_MAX];
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
struct mb_sg_view;

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
/* Whether the target has RPC compression (the embedded store's protocol:
 * yes; imap, null: no); the run's client mode as the header shows it
 * ("online, compression on", or its compression n/a with the reason). */
bool mb_session_compression_applies(const struct mb_session *s);
void mb_session_client_mode(const struct mb_session *s, char *buf, size_t len);
double mb_session_warmup(const struct mb_session *s);
/* Seconds after the load started at which the measured window starts:
 * the warm-up; in cached mode no earlier than the moment every user's
 * first download of its mailbox was done (the headers of every folder,
 * and a steady-state measurement leaves that one-time download out), but no
 * later than the warm-up plus half the rest of the run (300 s for a run
 * without an end).  While cached users are still downloading: that
 * latest start.  0 before the load started. */
double mb_session_measure_from(const struct mb_session *s);
/* Cached mode: users whose first download is done, so far. */
uint64_t mb_session_first_downloads(const struct mb_session *s);
/* The store's database cache (MiB): --cache-mb, else the scenario's
 * run.cache_mb, else the published cache-to-data ratio at this size. */
double mb_session_cache_mb(const struct mb_session *s);
long mb_session_seed(const struct mb_session *s);

struct mb_thresholds *mb_session_thresholds(struct mb_session *s);
/* Save the thresholds to DATA/thresholds.cfg. */
int mb_session_save_thresholds(struct mb_session *s);

/* The target: driver[:address] as shown; whether it is the embedded
 * store the session starts; why store counters are n/a ("" when not). */
const char *mb_session_target(const struct mb_session *s);
bool mb_session_embedded(const struct mb_session *s);
/* The engine line of the run's column: the embedded store's settings
 * (mb_compare_engine_str), the storage test's when it ran alone, the
 * lab's servers and versions, or the target's address when it was started
 * elsewhere (what this run cannot know is said n/a). */
void mb_session_engine(const struct mb_session *s, char *buf, size_t len);
const char *mb_session_unmeasured(const struct mb_session *s);
/* Actions the load engine reported the target cannot run (bit per action). */
uint32_t mb_session_unsupported(const struct mb_session *s);

/* True when DATA is initialised for this scenario, users and scale. */
bool mb_session_initialised(const struct mb_session *s);

int mb_session_start_load(struct mb_session *s);
int mb_session_stop_load(struct mb_session *s);
/* Re-initialise DATA from scratch (`mailbench init --restart`: its
 * mailboxes are replaced), then start as mb_session_start_load. */
int mb_session_reinit_and_start(struct mb_session *s);
int mb_session_start_stress(struct mb_session *s, int threads);
/* What the next storage test start runs: the thread count (FIXED),
 * auto-tune (AUTO: storage.cfg's duration per count), or the
 * soft-recovery or checksum test types.  Its JSON: DATA/stress-last.json. */
enum mb_stress_kind {
	MB_STRESS_FIXED = 0,
	MB_STRESS_AUTO,
	MB_STRESS_SOFT_RECOVERY,
	MB_STRESS_CHECKSUM
};
void mb_session_set_stress_kind(struct mb_session *s, enum mb_stress_kind k);
enum mb_stress_kind mb_session_stress_kind(const struct mb_session *s);
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
/* Per-window RPC latency percentiles and scores of the run (timeline.h). */
struct mb_timeline;
const struct mb_timeline *mb_session_timeline(const struct mb_session *s);
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
/* The load engine's ranks (ranks 0: one process, not MPI). */
const struct mb_load_ranks *mb_session_load_ranks(const struct mb_session *s);
/* "load: 3 ranks on vm" for the headers of every result ("" alone). */
const char *mb_session_load_desc(const struct mb_session *s);
/* Header strings of this machine/run. */
const char *mb_session_platform(const struct mb_session *s);
int mb_session_smt(const struct mb_session *s);

/* Histogram name conventions of the stats stream. */
#define MB_HIST_RPC "rpc"		/* load engine: RPC round trip */
#define MB_HIST_ACTION_PREFIX "action." /* load engine: action response, + action key */
#define MB_HIST_STRESS_READ "db_read"	/* storage test */
#define MB_HIST_STRESS_LOG "log_write"

/* Fault injection (report/faults.h): plan one for the next load run (a
 * spec with @T), or inject one now into the running load.  0, or MB_EINVAL
 * (err names the part of the spec) / MB_ESTATE. */
int mb_session_add_fault(struct mb_session *s, const char *spec, char *err, size_t errlen);
int mb_session_inject_fault(struct mb_session *s, const char *spec, char *err, size_t errlen);
/* Faults injected in the current (or last) load run. */
int mb_session_fault_count(const struct mb_session *s);
/* Storage groups out of service or recovered in place (faults.h). */
int mb_session_sg_groups(const struct mb_session *s, struct mb_sg_view *out, int max);
/* The load engine's ack log of the current (or last) load run ("" before). */
const char *mb_session_ack_log(const struct mb_session *s);

#endif
