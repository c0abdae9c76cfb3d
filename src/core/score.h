/* score.h: the one LoadSim score of a run.
 *
 * Definition (LoadSim's, "Percentile Score" in the Load Simulator
 * documentation, Concepts and Terminology,
 * library.thedatadungeon.com/msdn-2000-04/bores/html/excc10_26.content.htm):
 * the 95th percentile of the response times of the weighted actions over the
 * run.  Here: the actions whose weight (the scenario's count per 8-hour day)
 * is above zero; every response time of those actions counts once, so an
 * action weighs by how often it ran; the percentile is taken on the exact
 * merge of their histograms (never an average of per-action percentiles).
 * The load engine's live counter, the run table, the JSON, the console and
 * the verdict all use this function.
 */
#ifndef MB_CORE_SCORE_H
#define MB_CORE_SCORE_H

#include <stdint.h>

#include "core/hist.h"
#include "core/scenario.h"

#define MB_SCORE_PERCENTILE 95.0

/* hists[a] (NULL allowed: no samples) are the response-time histograms of
 * action a (MB_ACTION_TABLE order) over the run; weights[a] the scenario's
 * actions per day.  *out_ns is the score.  MB_ENOTFOUND when no weighted
 * action has a sample, MB_ENOMEM. */
int mb_score_ns(const struct mb_hist *const hists[MB_ACTION_COUNT], const double *weights,
		uint64_t *out_ns);

#endif
