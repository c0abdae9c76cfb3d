/* thresholds.h: pass/fail thresholds of a run and their verdicts.
 *
 * A threshold set starts from the scenario's thresholds (and the storage
 * test's limits), then DATA/thresholds.cfg (libconfig, written by the
 * console) overlays it.  The file format:
 *
 *   counters = { processor_pct = { cmp = "<="; value = 80.0; }; ... };
 *   storage = { db_read_avg_ms_max = 20.0; log_write_avg_ms_max = 10.0; };
 *
 * Keys are counters-table keys; cmp is one of "<", "<=", ">", ">=", "none".
 * Invariant: a counter without a threshold, or without a measurement, has
 * no verdict; the overall verdict fails when any measured counter fails.
 */
#ifndef MB_REPORT_THRESHOLDS_H
#define MB_REPORT_THRESHOLDS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/counters.h"
#include "core/scenario.h"

struct mb_thresholds {
	struct mb_threshold counter[MB_COUNTER_COUNT];
	double storage_read_ms_max; /* storage test: database read avg limit */
	double storage_log_ms_max;  /* storage test: log write avg limit */
};

enum mb_verdict { MB_VERDICT_NONE = 0, MB_VERDICT_PASS, MB_VERDICT_FAIL };

/* From the scenario (sc may be NULL) and the storage settings (may be NULL;
 * then 20 ms and 10 ms, Jetstress's defaults). */
void mb_thresholds_init(struct mb_thresholds *t, const struct mb_scenario *sc,
			const struct mb_storage_cfg *st);
/* Overlay a thresholds file.  MB_ENOTFOUND when it does not exist (t
 * unchanged); MB_ECONFIG with err filled when it is malformed (t unchanged). */
int mb_thresholds_load(struct mb_thresholds *t, const char *path, struct mb_cfg_error *err);
/* Write every threshold to path atomically (temporary file, rename). */
int mb_thresholds_save(const struct mb_thresholds *t, const char *path);

enum mb_verdict mb_threshold_eval(const struct mb_threshold *th, bool has, double v);
/* "<=", ..., "" for MB_CMP_NONE. */
const char *mb_cmp_str(enum mb_cmp c);
int mb_cmp_parse(const char *s, enum mb_cmp *out);
/* "<= 80" (with the counter's decimals) or "" into buf. */
void mb_threshold_text(const struct mb_threshold *th, enum mb_counter_id id, char *buf, size_t len);
const char *mb_verdict_str(enum mb_verdict v);

/* Storage test verdict from the measured averages (has false: none). */
enum mb_verdict mb_storage_verdict(const struct mb_thresholds *t, bool has_read, double read_ms,
				   bool has_log, double log_ms);

#endif
