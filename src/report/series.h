/* series.h: per-counter time series of a run, and merged histograms.
 *
 * A series holds one row per second (the supervisor's 1 Hz tick): the time
 * since the run started and, per counter of MB_COUNTER_TABLE, a value or
 * nothing (unmeasured that second).  From it come the live window (mean of
 * the last N seconds), the run average (mean of the seconds at or after the
 * warm-up) and the sparklines.  Means only ever cover measured seconds; a
 * counter never measured has no window and no average ("n/a").
 *
 * A histogram set maps names to mb_hist and merges children's encoded
 * window histograms into them exactly (bucket sums).
 */
#ifndef MB_REPORT_SERIES_H
#define MB_REPORT_SERIES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/counters.h"
#include "core/hist.h"

struct mb_series;

int mb_series_create(struct mb_series **out);
void mb_series_destroy(struct mb_series *s);
void mb_series_reset(struct mb_series *s);

/* Append one second: t seconds since the run started (non-decreasing),
 * value[] and has[] indexed by counter id. */
int mb_series_push(struct mb_series *s, double t, const double *value, const bool *has);
size_t mb_series_len(const struct mb_series *s);
double mb_series_time(const struct mb_series *s, size_t i);
/* Value of counter id in row i: true and *out set when measured. */
bool mb_series_get(const struct mb_series *s, size_t i, enum mb_counter_id id, double *out);
/* Mean over rows with t > t_last - seconds; MB_ENOTFOUND when none measured. */
int mb_series_window(const struct mb_series *s, enum mb_counter_id id, double seconds, double *out);
/* Mean over rows with t >= warmup_s; MB_ENOTFOUND when none measured. */
int mb_series_average(const struct mb_series *s, enum mb_counter_id id, double warmup_s,
		      double *out);
/* Seconds of rows at or after warm-up. */
double mb_series_measured_s(const struct mb_series *s, double warmup_s);
/* The last n rows of one counter, oldest first, into vals/has (n entries;
 * missing leading rows are not measured).  Returns n. */
size_t mb_series_tail(const struct mb_series *s, enum mb_counter_id id, size_t n, double *vals,
		      bool *has);

struct mb_histset;
int mb_histset_create(struct mb_histset **out);
void mb_histset_destroy(struct mb_histset *hs);
void mb_histset_reset(struct mb_histset *hs);
/* Merge every "name": "encoded histogram" member of obj (a JSON object).
 * Members that fail to decode are skipped and counted. */
int mb_histset_merge_json(struct mb_histset *hs, json_t *obj);
/* The histogram called name, created empty when absent (NULL on ENOMEM). */
struct mb_hist *mb_histset_get(struct mb_histset *hs, const char *name);
/* The histogram called name, or NULL. */
const struct mb_hist *mb_histset_find(const struct mb_histset *hs, const char *name);
size_t mb_histset_count(const struct mb_histset *hs);
/* Merge every histogram whose name starts with prefix into dst. */
void mb_histset_merge_prefix(const struct mb_histset *hs, const char *prefix, struct mb_hist *dst);
unsigned long mb_histset_bad(const struct mb_histset *hs);

#endif
