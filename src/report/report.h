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
	bool has_per_user_day;
	double per_user_day;	   /* done / users / simulated days */
	struct mb_latency latency; /* response time, after warm-up */
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
	double duration_s, warmup_s, measured_s;
	bool storage_test;
	/* header rows */
	char platform[MB_TEXT_MAX];
	char engine[MB_TEXT_MAX];
	char client_mode[MB_TEXT_MAX];
	int smt; /* 1 on, 0 off, -1 unknown */
	/* the counters table, run averages after warm-up */
	double avg[MB_COUNTER_COUNT];
	bool has[MB_COUNTER_COUNT];
	/* latency */
	struct mb_latency rpc_latency;	  /* load engine RPC round trips */
	struct mb_latency action_latency; /* all actions merged */
	bool has_score;
	double score_ms; /* LoadSim-style score */
	struct mb_action_figures actions[MB_ACTION_COUNT];
	bool has_messages_sent, has_messages_received;
	double messages_sent_per_user_day, messages_received_per_user_day;
	/* thresholds and verdicts */
	struct mb_thresholds thresholds;
	enum mb_verdict verdict[MB_COUNTER_COUNT];
	enum mb_verdict storage_verdict; /* storage test limits (if it ran) */
	enum mb_verdict overall;
	bool failed; /* a child died or could not start */
	char failure[1024];
};

/* Counter verdicts, the storage test's (when it ran) and the overall
 * verdict from avg/has and thresholds. */
void mb_summary_evaluate(struct mb_run_summary *s);
/* Latency figures of a histogram (empty: has false). */
void mb_latency_from_hist(const struct mb_hist *h, struct mb_latency *out);

/* JSON (new reference) of a summary; NULL on ENOMEM. */
json_t *mb_summary_to_json(const struct mb_run_summary *s);
/* Read back what mb_summary_to_json wrote.  MB_EPROTO names the field in
 * why (may be NULL). */
int mb_summary_from_json(const json_t *j, struct mb_run_summary *out, char *why, size_t whylen);
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

#endif
