/* thresholds.h: pass/fail thresholds of a run and their verdicts.
 *
 * A threshold set starts from the scenario's thresholds (and the storage
 * test's latency limits: the storage file's thresholds.db_read_avg_ms_max /
 * log_write_avg_ms_max are "< X" on the counters stress_db_read_ms /
 * stress_log_write_ms unless the scenario sets those counters), then
 * DATA/thresholds.cfg (libconfig, written by the console) overlays it.
 * The storage limits are ordinary counter thresholds: one declaration (the
 * counters table), the same parse, text, file entry and verdict as the
 * others.  The file format:
 *
 *   counters = { processor_pct = { cmp = "<="; value = 80.0; }; ... };
 *
 * Keys are counters-table keys; cmp is one of "<", "<=", ">", ">=", "none".
 * An older file's storage = { db_read_avg_ms_max = X; log_write_avg_ms_max
 * = Y; } is still read (as "< X" / "< Y" on the two storage counters).
 * Invariant: a counter without a threshold, or without a measurement, has
 * no verdict; the overall verdict fails when any measured counter fails.
 * A single threshold (parse, text, verdict) is core/threshold.h.
 */
#ifndef MB_REPORT_THRESHOLDS_H
#define MB_REPORT_THRESHOLDS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/counters.h"
#include "core/scenario.h"
#include "core/threshold.h"

struct mb_thresholds {
	struct mb_threshold counter[MB_COUNTER_COUNT];
};

/* From the scenario (sc may be NULL) and the storage settings (may be NULL;
 * then "< 20" and "< 10" ms, Jetstress's defaults). */
void mb_thresholds_init(struct mb_thresholds *t, const struct mb_scenario *sc,
			const struct mb_storage_cfg *st);
/* Overlay a thresholds file.  MB_ENOTFOUND when it does not exist (t
 * unchanged); MB_ECONFIG with err filled when it is malformed (t unchanged). */
int mb_thresholds_load(struct mb_thresholds *t, const char *path, struct mb_cfg_error *err);
/* Write every threshold to path atomically (temporary file, rename). */
int mb_thresholds_save(const struct mb_thresholds *t, const char *path);

/* One threshold's text and verdict: core/threshold.h. */

/* Storage test verdict from the measured averages (has false: none): the
 * verdicts of the two storage counters' thresholds, fail when either
 * fails, pass when both pass. */
enum mb_verdict mb_storage_verdict(const struct mb_thresholds *t, bool has_read, double read_ms,
				   bool has_log, double log_ms);

#endif
