/* runcmp.h: several saved runs side by side, with their differences.
 *
 * One model serves `mailbench compare` (text, JSON, CSV), the HTML report
 * and the console's runs screen.  Runs are columns; one of them is the
 * reference and every other run gets a difference column against it.
 * Differences are normalised as the comparison table's "vs" column is:
 * (run - reference) / |reference| in percent.  When the two runs offered
 * different loads (user-equivalents = users x acceleration), counters
 * that grow with the load (the store's rates and its processor time) are
 * compared per user-equivalent, and the cell says so ("/UE"); latencies,
 * sizes and gauges are compared as they are.  Runs of another scenario or
 * another target than the reference are compared all the same, with a
 * warning (their user profiles or servers differ).
 * Invariant: a difference is computed only where both runs measured the
 * counter and the reference is not zero; elsewhere "n/a".
 */
#ifndef MB_REPORT_RUNCMP_H
#define MB_REPORT_RUNCMP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "report/report.h"
#include "core/table.h"

/* Columns: published (when sc), runs, differences; so at most this many
 * runs fit beside the published columns. */
#define MB_RUNCMP_MAX_RUNS 8

/* Extra rows after the published counters (not in the counters table). */
enum mb_runcmp_extra {
	MB_RX_UE = 0,  /* user-equivalents: users x acceleration */
	MB_RX_SCORE,   /* LoadSim score (ms) */
	MB_RX_RPC_P95, /* RPC round trip p95 (ms) */
	MB_RX_RPC_P99, /* RPC round trip p99 (ms) */
	MB_RX_FAILED,  /* failed actions (count) */
	MB_RX_COUNT
};

struct mb_runcmp_input {
	const struct mb_scenario *sc;		  /* NULL: no published columns */
	const struct mb_run_summary *const *runs; /* n runs */
	const char *const *targets; /* per run, NULL or "" when unknown; may be NULL */
	size_t n;
	size_t ref; /* the reference run */
};

/* The target a run JSON records ("target": a string, or an object whose
 * "target" member names it); NULL when it records none. */
const char *mb_runcmp_target_of(const json_t *run, char *buf, size_t len);
/* User-equivalents of a run: users x acceleration. */
double mb_runcmp_ue(const struct mb_run_summary *r);
/* Value of an extra row of a run (false: not measured). */
bool mb_runcmp_extra(const struct mb_run_summary *r, enum mb_runcmp_extra x, double *v);
/* Difference of r against ref in percent, for counter id (id >= 0) or
 * extra row x (id < 0).  False when not computable; *per_ue tells
 * whether it was normalised per user-equivalent. */
bool mb_runcmp_diff(const struct mb_run_summary *ref, const struct mb_run_summary *r, int id,
		    enum mb_runcmp_extra x, double *pct, bool *per_ue);

/* Warnings (scenario, client mode or target differs from the
 * reference), one per line into buf; returns their count. */
int mb_runcmp_warnings(const struct mb_runcmp_input *in, char *buf, size_t len);

/* The table: header rows (platform, engine, client mode, SMT, scenario,
 * target), the published counter rows (tag: counter id), then the extra
 * rows (tag: 1000 + extra).  Columns: published, runs, differences. */
int mb_runcmp_build(const struct mb_runcmp_input *in, struct mb_table **out);
/* Machine-readable form: runs (parameters and figures), differences,
 * warnings.  NULL on ENOMEM. */
json_t *mb_runcmp_json(const struct mb_runcmp_input *in);
/* CSV: "row,KEY..." with one line per row of the table. */
int mb_runcmp_csv(const struct mb_table *t, FILE *f);

#endif
