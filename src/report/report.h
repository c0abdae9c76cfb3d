/* report.h: the summary of a run, its JSON and CSV forms, saved runs.
 *
 * A run summary is what a finished (or stopped) run measured: scenario and
 * parameters, the counters-table figures as run averages after warm-up,
 * latency percentiles and the LoadSim-style score from the merged
 * histograms, per-action figures, per-user-day figures, thresholds and
 * verdicts.  The same JSON (schema in docs/run-json.md) is written by
 * `mailbench run --json` and saved by the console in DATA/runs/, and read
 * back to pin a saved run as an overview column.  Invariant: every figure
 * comes from a child's measurement; unmeasured figures are absent (null in
 * JSON), never zero.
 */
#ifndef MB_REPORT_REPORT_H
#define MB_REPORT_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/counters.h"
#include "core/scenario.h"
#include "report/loadhosts.h"
#include "report/norm.h"
#include "report/series.h"
#include "report/thresholds.h"

#define MB_RUN_SCHEMA "mailbench-run/1"

struct mb_latency {
	bool has;
	uint64_t count;
	double mean_ms, p50_ms, p95_ms, p99_ms, max_ms;
};

struct mb_action_figures {
	bool has_counts;
	double scheduled, done, failed; /* counts over the whole run */
	double cut;			/* queued or running at the stop */
	bool has_per_user_day;
	double per_user_day;	   /* done / users / simulated days */
	struct mb_latency latency; /* response time, after warm-up */
	bool unsupported;	   /* not supported by the target: never run, never failed */
};

/* The published rows set against one published column (the scenario's
 * last, as `mailbench run` prints it), normalised (report/norm.h). */
struct mb_run_comparison {
	bool has;
	char column[16]; /* published column id */
	enum mb_norm_mode mode;
	double user_equivalents, published_users;
	struct mb_norm_cmp row[MB_PUBLISHED_COUNT];
};

/* One injected fault (`run --fault`, the console's fault key) and the
 * recovery after it; times in seconds since the load started. */
#define MB_RUN_MAX_FAULTS 16
struct mb_fault_figures {
	char spec[64]; /* as given: "kill-store@30s" */
	double at_s;   /* injected */
	double end_s;  /* its cause removed (at_s for an instant fault) */
	bool has_recovery;
	double recovery_s;    /* end_s .. the first successful action after it */
	double failed_during; /* actions failed from at_s until the recovery */
	char note[160];	      /* what was done ("store killed (pid 123), restarted") */
};

#define MB_RUN_FAIL_CAUSES 6

/* What went wrong during the run and how it came back. */
struct mb_run_health {
	int sg_error_groups; /* storage groups that were in the ERROR state */
	char sg_errors[256]; /* "sg1 MB_ENOSPC (no space left on device)" */
	int nfaults;
	struct mb_fault_figures faults[MB_RUN_MAX_FAULTS];
	bool ack_checked; /* the ack-log check ran at the end (runs with a fault) */
	double acks_checked, acks_lost;
	char ack_note[256];
	/* the load engine's connections over the run (JSON health.connections) */
	bool has_conn;
	double conn_lost, reconnects, connect_failures, logon_failures;
	int server_restarts; /* servers the Dovecot lab restarted during the run */
	/* failed actions of the run by cause, most first (JSON
	 * health.failed_actions_by_cause): "overrun" or an error code's name */
	int nfail_causes;
	struct mb_fail_cause {
		char cause[24];
		char what[72];
		double n;
	} fail_causes[MB_RUN_FAIL_CAUSES];
};

struct mb_run_summary {
	char id[64];	  /* "20261129-211500-online" */
	char started[32]; /* ISO 8601 UTC */
	char scenario[MB_NAME_MAX];
	char title[MB_TEXT_MAX];
	int scenario_number;
	enum mb_client_mode mode;
	/* parameters */
	int users;
	double scale, accel;
	bool compression;
	double duration_s, warmup_s, measured_s; /* warmup_s: where the measured window began */
	/* cached mode: users whose first download of the mailbox was done, and
	 * when the last one was (seconds after the load started; -1: not all
	 * were, and the measured window began at the latest start instead) */
	bool has_first_downloads;
	uint64_t first_downloads;
	double first_downloads_s;
	bool storage_test;
	double cache_mb; /* the store's database cache, MiB (0: unknown) */
	long seed;	 /* the load engine's seed (-1: unknown) */
	/* the data directory's state at the start (store/pristine.h) */
	struct {
		bool has;
		bool reused;		     /* --reuse: as the last run left it */
		bool restored, saved;	     /* restored from / saved as the pristine copy */
		int links, reflinks, copies; /* files hard-linked / cloned / copied */
		double bytes;		     /* bytes of the state the run started from */
		double db_bytes;	     /* of which database files */
		char fingerprint[17];	     /* of that state */
	} data;
	/* header rows */
	char platform[MB_TEXT_MAX];
	char engine[MB_TEXT_MAX];
	char client_mode[MB_TEXT_MAX];
	int smt; /* 1 on, 0 off, -1 unknown */
	/* the target */
	char target[MB_TEXT_MAX]; /* driver[:ADDR:PORT] */
	bool embedded;		  /* mailbench's own store, started by the run */
	char unmeasured[768];	  /* why some counters are n/a ("" none) */
	/* the counters table, run averages after warm-up */
	double avg[MB_COUNTER_COUNT];
	bool has[MB_COUNTER_COUNT];
	/* latency */
	struct mb_latency rpc_latency;	  /* load engine RPC round trips */
	struct mb_latency action_latency; /* all actions merged */
	bool has_score;
	double score_ms; /* LoadSim-style score */
	struct mb_action_figures actions[MB_ACTION_COUNT];
	struct mb_run_comparison comparison; /* written, not read back */
	bool has_messages_sent, has_messages_received;
	double messages_sent_per_user_day, messages_received_per_user_day;
	/* thresholds and verdicts */
	struct mb_thresholds thresholds;
	enum mb_verdict verdict[MB_COUNTER_COUNT];
	enum mb_verdict storage_verdict; /* storage test limits (if it ran) */
	enum mb_verdict overall;
	bool failed; /* a child died or could not start */
	char failure[1024];
	struct mb_run_health health;
	char reason[768]; /* why the verdict is fail ("" otherwise): the report's first line */
	/* the load engine on several machines (load.ranks 0: one process) */
	struct mb_load_ranks load;
	bool invalid; /* a load rank was saturated: the figures do not count */
	char invalid_why[1024];
};

/* Counter verdicts, the storage test's (when it ran) and the overall
 * verdict from avg/has and thresholds.  Failed actions are a counter of
 * their own (actions_failed_pct: failed / done x 100 over the run, from the
 * action counts), judged by its threshold like any other; a storage group
 * in the ERROR state or an acknowledged write lost fails the run whatever
 * the thresholds.  reason names every cause of a fail verdict. */
void mb_summary_evaluate(struct mb_run_summary *s);
/* Latency figures of a histogram (empty: has false). */
void mb_latency_from_hist(const struct mb_hist *h, struct mb_latency *out);

/* Fill s->comparison against published column col of sc from s->avg. */
void mb_summary_compare(struct mb_run_summary *s, const struct mb_scenario *sc, int col);

/* JSON (new reference) of a summary; NULL on ENOMEM. */
json_t *mb_summary_to_json(const struct mb_run_summary *s);
/* Read back what mb_summary_to_json wrote.  MB_EPROTO names the field in
 * why (may be NULL). */
int mb_summary_from_json(const json_t *j, struct mb_run_summary *out, char *why, size_t whylen);
/* Write j (not consumed) to path atomically: PATH.tmp, then rename; two
 * spaces of indent, reals to 10 significant digits.  0 or MB_EIO (then no
 * PATH.tmp is left). */
int mb_json_write_file(const json_t *j, const char *path);
/* Write JSON to path atomically (temporary file, rename). */
int mb_summary_write(const struct mb_run_summary *s, const char *path);
int mb_summary_read(const char *path, struct mb_run_summary *out, char *why, size_t whylen);
/* Save into DIR/runs/ID.json (creates DIR/runs); the path into path_out. */
int mb_summary_save(const struct mb_run_summary *s, const char *data_dir, char *path_out,
		    size_t len);

/* Saved runs of a data directory, newest first. */
struct mb_run_list;
int mb_run_list_load(const char *data_dir, struct mb_run_list **out);
void mb_run_list_destroy(struct mb_run_list *l);
size_t mb_run_list_count(const struct mb_run_list *l);
const struct mb_run_summary *mb_run_list_at(const struct mb_run_list *l, size_t i);
const char *mb_run_list_path(const struct mb_run_list *l, size_t i);

/* CSV: header "t_s,counter,value", then one row per second per measured
 * counter, in table order; t_s is the series time minus t_offset. */
int mb_csv_write(FILE *f, const struct mb_series *s, double t_offset);
int mb_csv_write_file(const struct mb_series *s, double t_offset, const char *path);

/* A counter's value with its decimals and thousands separators ("8,000",
 * "19.9"); "n/a" when !has. */
void mb_format_value(enum mb_counter_id id, bool has, double v, char *buf, size_t len);
/* Any number with given decimals and thousands separators. */
void mb_format_number(double v, int decimals, char *buf, size_t len);
/* A short label of a run for a column heading ("online 50u 21:15"). */
void mb_summary_label(const struct mb_run_summary *s, char *buf, size_t len);
/* The run's RPC compression as shown: "on" or "off", or "n/a" for a
 * target without it (imap, the lab, null), whose `compression` is false. */
const char *mb_summary_compression(const struct mb_run_summary *s);

#endif
