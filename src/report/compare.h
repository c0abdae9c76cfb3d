/* compare.h: the comparison table of a scenario (overview screen and the
 * table `mailbench run` prints), built once from measured figures.
 *
 * Rows: the header rows (server platform, engine, client mode, SMT), then
 * the published counter rows in the counters-table order.  Columns: the
 * scenario's published columns, a pinned saved run (optional), this run's
 * live value (10 s window, optional), run average (after warm-up), the
 * difference to a chosen published column, and the threshold.  Rows carry
 * the verdict of their threshold against live (or, when live is not
 * measured, e.g. after the run stopped, the average).  Long headings (mb_table_heading(t, c, true))
 * are the legend: a published column's full heading, this run's full platform, engine, client mode,
 * SMT, users, scale and accel.  Beside a live column the run-average column's header cells read "as
 * live" (same run).  Invariant: every run figure comes from the input arrays; an unmeasured one
 * reads "n/a".
 */
#ifndef MB_REPORT_COMPARE_H
#define MB_REPORT_COMPARE_H

#include "report/report.h"
#include "core/table.h"
#include "report/thresholds.h"

struct mb_compare_input {
	const struct mb_scenario *sc;
	const struct mb_thresholds *th;
	int diff_col;	    /* published column index, -1: none */
	const double *live; /* NULL: no live column */
	const bool *live_has;
	const double *avg; /* NULL: no run-average column */
	const bool *avg_has;
	const struct mb_run_summary *pinned; /* NULL: none */
	const char *platform, *engine, *client_mode;
	int smt;   /* 1, 0, -1 unknown */
	int users; /* > 0: named in the run's legend with scale and accel */
	double scale, accel;
	const char *load; /* non-empty: the load hosts and ranks ("load: 3 ranks on vm") */
	bool protocol;	  /* an IMAP/SMTP target: "RPC operations/s" are protocol commands/s */
};

/* A counter's row label: RPC operations are protocol commands against a
 * real mail server (protocol true). */
const char *mb_compare_label(enum mb_counter_id id, bool protocol);
/* Does this target string name a real mail server (imap..., lab:...)? */
bool mb_compare_protocol_target(const char *target);
/* Does the target it names have RPC payload compression (mailbench's own
 * store, embedded or elsewhere; "" is the embedded one), unlike a real
 * mail server or the null target?  The one rule for live sessions and
 * saved runs alike (a saved run keeps only its target string). */
bool mb_compare_target_compresses(const char *target);

/* Build the table (rows tagged with their counter id, -1 for header rows). */
int mb_compare_build(const struct mb_compare_input *in, struct mb_table **out);

/* The legend text of published column col: its heading, then the header
 * fields (platform, engine, client, SMT) the heading does not name. */
void mb_compare_column_legend(const struct mb_scenario *sc, int col, char *buf, size_t len);
/* "platform; engine; client mode; SMT x[; N users, scale F, accel xA]" of
 * this run. */
void mb_compare_run_desc(const struct mb_compare_input *in, char *buf, size_t len);

/* Engine and client-mode header strings of this run. */
void mb_compare_engine_str(const struct mb_scenario *sc, char *buf, size_t len);
void mb_compare_mode_str(enum mb_client_mode mode, bool compression, char *buf, size_t len);

#endif
