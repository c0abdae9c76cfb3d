/* acttable.h: the per-action table (one row per action of the profile:
 * its rate per user-day in the scenario and as run, scheduled / done /
 * failed / cut counts, response-time percentiles), built once from a run
 * summary and drawn by every output: the console's actions screen (ui/)
 * and `mailbench run`'s text summary print the same table (report/table.h
 * renders it for both).  A row with failures carries the FAIL verdict; an
 * action the target cannot do says so on its row.  Invariant: every cell
 * is a figure of the summary (or the given latencies), "n/a" where it was
 * not measured.
 */
#ifndef MB_REPORT_ACTTABLE_H
#define MB_REPORT_ACTTABLE_H

#include "core/scenario.h"
#include "report/report.h"
#include "core/table.h"

/* Build the table of sum's actions; sc (NULL: none) gives the profile
 * column; lat, when not NULL, replaces the summary's response times
 * (MB_ACTION_COUNT entries: the console shows them since the load
 * started).  0 or a negative MB_E* code. */
int mb_acttable_build(const struct mb_run_summary *sum, const struct mb_scenario *sc,
		      const struct mb_latency *lat, struct mb_table **out);

#endif
