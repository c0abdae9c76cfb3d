/* acttable.c: the per-action table (acttable.h), for the console and
 * `mailbench run`.  Columns, in priority order when narrow: done, failed,
 * profile and /user-day, the percentiles, then scheduled and cut give way
 * first. */
#include "report/acttable.h"

#include <stdio.h>

#include "core/error.h"

enum { A_PROFILE, A_PER_DAY, A_SCHED, A_DONE, A_FAILED, A_CUT, A_P50, A_P95, A_P99, A_N };

int mb_acttable_build(const struct mb_run_summary *sum, const struct mb_scenario *sc,
		      const struct mb_latency *lat, struct mb_table **out)
{
	struct mb_table *t;
	int rc = mb_table_create(A_N, &t);
	if (rc)
		return rc;
	/* the profile beside what was done per user-day */
	static const char *const heads[A_N] = {"profile", "/user-day", "sched",	 "done",  "failed",
					       "cut",	  "p50 ms",    "p95 ms", "p99 ms"};
	static const int prio[A_N] = {8, 8, 1, 10, 9, 0, 7, 7, 6};
	for (int i = 0; i < A_N; i++) {
		mb_table_set_heading(t, i, heads[i], NULL);
		mb_table_set_priority(t, i, prio[i]);
	}
	char buf[64];
	for (int a = 0; a < MB_ACTION_COUNT; a++) {
		int r;
		mb_table_add_row(t, mb_actions[a].label, MB_ROW_NORMAL, &r);
		snprintf(buf, sizeof(buf), "%g", sc ? sc->actions_per_day[a] : 0.0);
		mb_table_set_cell(t, r, A_PROFILE, sc ? buf : "n/a");
		const struct mb_action_figures *f = &sum->actions[a];
		if (f->unsupported) {
			/* never run, never failed: the target cannot do it */
			mb_table_set_cell(t, r, A_PER_DAY, "not supported by the target");
			continue;
		}
		double vals[4] = {f->scheduled, f->done, f->failed, f->cut};
		static const int cols[4] = {A_SCHED, A_DONE, A_FAILED, A_CUT};
		for (int k = 0; k < 4; k++) {
			if (f->has_counts)
				mb_format_number(vals[k], 0, buf, sizeof(buf));
			else
				snprintf(buf, sizeof(buf), "n/a");
			mb_table_set_cell(t, r, cols[k], buf);
		}
		if (f->has_per_user_day)
			snprintf(buf, sizeof(buf), "%.2f", f->per_user_day);
		else
			snprintf(buf, sizeof(buf), "n/a");
		mb_table_set_cell(t, r, A_PER_DAY, buf);
		if (f->has_counts && f->failed > 0)
			mb_table_set_verdict(t, r, MB_VERDICT_FAIL);
		const struct mb_latency *L = lat ? &lat[a] : &f->latency;
		double pv[3] = {L->p50_ms, L->p95_ms, L->p99_ms};
		for (int k = 0; k < 3; k++) {
			if (L->has)
				snprintf(buf, sizeof(buf), "%.1f", pv[k]);
			else
				snprintf(buf, sizeof(buf), "n/a");
			mb_table_set_cell(t, r, A_P50 + k, buf);
		}
	}
	*out = t;
	return 0;
}
