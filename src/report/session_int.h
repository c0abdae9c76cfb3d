/* session_int.h: internal to the session's files (session.c, session_config.c,
 * session_children.c, session_measure.c, session_lab.c, session_summary.c);
 * nothing outside src/report/session*.c includes it.
 *
 * It holds the session's one struct, the roles of its children and the
 * mb__ functions one of those files calls in another.  Invariants: a field
 * is written by the file of its concern (the measurements by
 * session_measure.c, the lab and check fields by session_lab.c, the
 * summary by session_summary.c, the state by session.c and the start_*
 * functions); every other file only reads it. */
#ifndef MB_REPORT_SESSION_INT_H
#define MB_REPORT_SESSION_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/sampler.h"
#include "core/stats.h"
#include "load/loadstats.h"
#include "load/target.h"
#include "report/faults.h"
#include "report/session.h"
#include "report/srvmon.h"
#include "report/supervisor.h"
#include "report/timeline.h"
#include "store/pristine.h"

/* how long the store may take to say it listens */
#define LISTEN_TIMEOUT_MS 60000

/* what a supervised child is to the session (mb_child_data) */
enum child_role { ROLE_INIT = 1, ROLE_STORE, ROLE_LOAD, ROLE_STRESS, ROLE_LAB, ROLE_CHECK };

/* the lab's stop: its servers get 10 s to exit before it kills them */
#define LAB_GRACE_MS 25000u
#define LAB_START_TIMEOUT_MS 60000

struct latest {
	double v[MB_COUNTER_COUNT];
	bool has[MB_COUNTER_COUNT];
	double at; /* our monotonic time of the line, 0 never */
};

struct mb_session {
	struct mb_pristine_info data_info; /* the data state the load started from */
	bool has_data_info;
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
	char fail_tail[2048];  /* stderr tail of the child that failed */
	char store_tail[2048]; /* the embedded store's stderr tail when it exited */
	bool init_restart;     /* next start re-initialises (init --restart) */
	char saved_path[MB_PATH_MAX + 80];
	int stress_threads;
	enum mb_stress_kind stress_kind;

	/* init progress */
	double init_pct, init_t0;

	/* measurements */
	struct mb_series *series;
	struct mb_histset *hists;	 /* whole run */
	struct mb_histset *hists_warm;	 /* after warm-up */
	struct mb_histset *stress_hists; /* storage test, whole test */
	struct mb_timeline *timeline;	 /* per-window latency percentiles */
	struct latest lat[4];		 /* by enum mb_counter_source */
	/* the load engine's window counts ("x"), summed over the run by
	 * mb_load_stats_merge_json (its histograms are not used: "h" goes to
	 * hists); the has_ flags say which keys the windows carried */
	struct mb_load_stats *lx;
	bool has_x;
	bool has_msgs_sent, has_deliveries, has_user_days;
	double user_days;	 /* the load engine's own count, whole run (cumulative) */
	double t0;		 /* load (or series) start, monotonic */
	double load_t0, load_t1; /* load started / stopped */
	double stress_t0;	 /* storage test started */
	/* cached mode: when the load's stats first showed every user's first
	 * download done (monotonic; 0: not yet); mb_session_measure_from */
	double first_syncs_at;
	/* run averages after warm-up: each window weighted by its length
	 * (exact time averages, whatever the phase of the 1 Hz tick) */
	double wsum[MB_COUNTER_COUNT], wdt[MB_COUNTER_COUNT];
	bool series_on;
	struct mb_host_sample host_prev;
	bool host_prev_ok;
	char started[32];
	char platform[MB_TEXT_MAX];
	int smt;
	/* the target */
	struct mb_target_cfg tcfg;
	const struct mb_target_ops *tops;
	bool embedded;		      /* the store the session starts */
	char target_str[MB_TEXT_MAX]; /* driver[:address] */
	char unmeasured[768];	      /* why store (server) counters are n/a */
	uint32_t unsupported;	      /* actions the target cannot run (load engine's word) */
	struct mb_run_summary last;   /* final summary of the last run */
	bool have_last;
	/* fault injection (report/faults.h): the store restarted after a kill
	 * listens on the port it had; the load's ack log is checked at the end */
	struct mb_faults *faults;
	int store_port;
	char ack_log[MB_PATH_MAX + 32];
	bool ack_is_tmp; /* ack_log is ours (removed at the end) */
	/* the load engine on several machines (--load-hosts) */
	struct mb_hostfile hf;
	bool mpi;
	struct mb_load_ranks ranks;
	char load_desc[400];
	int dead_rank; /* the rank mpirun reported dead, or -1 */
	int ack_fd;    /* --load-hosts --ack-log: the file the job's lines go to */
	char dead_how[256];
	/* a real mail server (an IMAP target): the lab this session starts
	 * (--target lab:dovecot), provisioning over IMAP, the check at the
	 * end; its counters from /proc (srvmon.h) */
	bool lab;  /* the session starts the lab */
	bool imap; /* the target speaks IMAP (the lab or imap://) */
	struct mb_child *labc, *check;
	bool lab_up;
	char lab_engine[MB_TEXT_MAX]; /* the servers and their versions (DATA/lab.json) */
	int lab_restarts;
	uv_timer_t check_timer;
	double check_t0;
	int check_tries;
	bool check_done; /* the check ran (or cannot); finish now */
	bool check_ran;
	bool interrupted; /* stop_all: no check, everything down now */
	double ack_must, ack_missing;
	char check_note[256];
	char check_line[512];
	char check_missing[5][160]; /* the last attempt's first "missing:" lines */
	int check_nmissing;
	struct mb_srvmon *srv;
	bool srv_on;	    /* server counters measured (lab, --server-pids/-cgroup) */
	char srv_why[512];  /* what of them is n/a, and why */
	double srv_cmds;    /* the load's protocol commands: count at the last window */
	pid_t srv_seen[64]; /* server masters seen (killed at destroy if left) */
	int nsrv_seen;
	double srv_t;	     /* the last server sample */
	char fail_msg[2048]; /* the first failure of the run (the summary's) */
	bool has_conn;	     /* the load engine's connection counts (in lx) */
};

/* ---- session.c: the pipeline and its states ---- */
void mb__emit_change(struct mb_session *s);
void mb__emit_msg(struct mb_session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
enum child_role mb__role_of(struct mb_child *c);
/* The run's end: the ack check of a real server first (session_lab.c),
 * then the lab's stop, then DONE or FAILED and the final summary. */
void mb__finish_load(struct mb_session *s);
/* The listen timer: the store (or the lab) did not come up. */
void mb__on_listen_timeout(uv_timer_t *t);
/* The run's duration (plus a backstop) passed: stop the load. */
void mb__on_duration(uv_timer_t *t);

/* ---- session_children.c: each child's command line, spawned ---- */
struct mb_argv;
int mb__spawn(struct mb_session *s, enum child_role role, const char *name, const char *const *args,
	      struct mb_child **out);
/* The init child with av's arguments: 0 and the INIT state, or MB_ECHILD
 * with the load finished as failed. */
int mb__spawn_init(struct mb_session *s, struct mb_argv *av);
void mb__start_init(struct mb_session *s);
void mb__start_store(struct mb_session *s);
void mb__start_load_engine(struct mb_session *s);
extern const struct mb_fault_ops mb__fault_ops; /* .arg: the session */

/* ---- session_config.c: the accounts the load engine logs on with ---- */
void mb__accounts_path(const struct mb_session *s, char *buf, size_t len);
/* Users in an accounts (or topology) file, 0 when it cannot be read. */
int mb__accounts_users(const char *path);
int mb__write_generated_accounts(struct mb_session *s, const char *path);

/* ---- session_measure.c: the stats streams into counters and histograms ---- */
void mb__on_stats(void *arg, struct mb_child *c, const struct mb_stats_msg *m);
void mb__on_tick(uv_timer_t *t);
void mb__reset_measurements(struct mb_session *s);
void mb__server_unmeasured(struct mb_session *s, const char *why);

/* ---- session_lab.c: a real mail server (lab, IMAP provisioning, check) ---- */
/* A line of the lab's or the check's output. */
void mb__lab_line(struct mb_session *s, struct mb_child *c, enum mb_child_stream st,
		  const char *line);
void mb__start_lab(struct mb_session *s);
void mb__start_imap_init(struct mb_session *s);
/* sets check_done when the check cannot run */
void mb__start_check(struct mb_session *s);
/* The lab's masters now (DATA/lab.json), remembered for destroy. */
int mb__lab_roots(struct mb_session *s, pid_t *roots, int max);
/* The lab or the check exited (asked: its stop was requested). */
void mb__lab_exited(struct mb_session *s, bool asked);
void mb__check_exited(struct mb_session *s, struct mb_child *c);

/* ---- session_summary.c: the run's summary ---- */
/* The final summary of a run that ended (s->last), saved in DATA/runs. */
void mb__conclude_run(struct mb_session *s);

#endif
