/* timeline.h: per-window latency percentiles of a run, for charts.
 *
 * The series (series.h) keeps one value per counter per second; the
 * client latency it holds is the mean RPC round trip.  A timeline keeps,
 * for each load-engine stats window, the p50/p95/p99 of that window's RPC
 * round trips and its LoadSim score (p95 of its action response times),
 * each from the window's own histograms (exact bucket percentiles, never
 * averaged across windows).  Times are series times (seconds since the
 * series started).  A window without RPCs (or actions) has no point for
 * that figure (NaN in the arrays, null in JSON).
 *
 * mb_runseries_attach() adds the series and the timeline to a saved run
 * JSON file as its optional "series" member (docs/run-json.md), which the
 * HTML report (html.h) draws.
 */
#ifndef MB_REPORT_TIMELINE_H
#define MB_REPORT_TIMELINE_H

#include <jansson.h>
#include <stddef.h>

#include "report/series.h"

struct mb_timeline;

int mb_timeline_create(struct mb_timeline **out);
void mb_timeline_destroy(struct mb_timeline *t);
void mb_timeline_reset(struct mb_timeline *t);
/* One load-engine window ending at series time t: h is its "h" object
 * (encoded histograms by name, as on the stats stream). */
int mb_timeline_add(struct mb_timeline *tl, double t, const json_t *h);
size_t mb_timeline_len(const struct mb_timeline *tl);
/* Row i: time and p50/p95/p99 of RPCs, score (NaN: none). */
void mb_timeline_at(const struct mb_timeline *tl, size_t i, double *t, double *p50, double *p95,
		    double *p99, double *score);

/* {"t": [...], "counters": {key: [...]}, "latency": {"t", "p50_ms",
 * "p95_ms", "p99_ms", "score_ms"}} with times minus t_offset (seconds
 * since the load started); NULL on ENOMEM.  tl may be NULL. */
json_t *mb_runseries_json(const struct mb_series *s, const struct mb_timeline *tl, double t_offset);
/* Add that object as "series" to the run JSON file at path (rewritten
 * atomically). */
int mb_runseries_attach(const char *path, const struct mb_series *s, const struct mb_timeline *tl,
			double t_offset);

#endif
