/* stortable.h: the storage comparison table: the storage test's results
 * beside the published Jetstress rows, built once from the measurements
 * and the published baselines (storage.cfg's published.rows) and drawn by
 * every output: the console's storage screen (ui/screens/storage.c: one
 * row per measure, one column per series), `mailbench storage-test`'s text
 * table (one row per thread count, the published figures beside it) and
 * its JSON (the published rows, each run's verdict).  report/table.h lays
 * the text out for the console and the command.
 *
 * A series is one column of figures: a published row (added by
 * mb_stortable_create, in the file's order, exactly as published) or a
 * measurement (a test, its live window, a kept earlier result).  Each cell
 * is a measure of a series, "n/a" where it was not measured.  Invariant:
 * every series has a verdict, given by the caller (storage-test's rule:
 * errors or no I/O fail too) or evaluated here with the threshold set's
 * two storage counters (mb_storage_verdict), never a pass without a
 * measurement.
 */
#ifndef MB_REPORT_STORTABLE_H
#define MB_REPORT_STORTABLE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/scenario.h"
#include "core/table.h"
#include "report/thresholds.h"

/* The measures of a series, in table order. */
enum mb_stor_measure {
	MB_SM_THREADS,
	MB_SM_IOPS,
	MB_SM_DB_READ_S,
	MB_SM_DB_WRITE_S,
	MB_SM_LOG_WRITE_S,
	MB_SM_READ_AVG,
	MB_SM_READ_P95,
	MB_SM_READ_P99,
	MB_SM_READ_MAX,
	MB_SM_LOG_AVG,
	MB_SM_LOG_P95,
	MB_SM_LOG_P99,
	MB_SM_LOG_MAX,
	MB_SM_MBS,
	MB_SM_ERRORS,
	MB_SM_VERDICT,
	MB_SM_COUNT
};

struct mb_stor_series {
	char name[32];	    /* column heading ("pub 4", "live", ...) */
	char longname[300]; /* legend */
	int prio;	    /* survives longer when narrow */
	bool published;	    /* a published row (set by the model) */
	bool has[MB_SM_COUNT];
	double v[MB_SM_COUNT];
	bool has_verdict; /* the verdict is given; else the model evaluates it */
	enum mb_verdict verdict;
	bool best;   /* auto-tune's chosen count (marked *) */
	bool colour; /* its verdict colours the verdict row (console) */
};

struct mb_stortable;

/* The table with the published rows of st (NULL: none) and the thresholds
 * th (NULL: the defaults) for verdicts. */
int mb_stortable_create(const struct mb_storage_cfg *st, const struct mb_thresholds *th,
			struct mb_stortable **out);
void mb_stortable_destroy(struct mb_stortable *t);
/* Append a measured series (copied; its verdict evaluated unless given). */
int mb_stortable_add(struct mb_stortable *t, const struct mb_stor_series *s);
int mb_stortable_count(const struct mb_stortable *t);
const struct mb_stor_series *mb_stortable_series(const struct mb_stortable *t, int i);
/* The published series of that thread count, or -1. */
int mb_stortable_published(const struct mb_stortable *t, int threads);
/* One cell's text ("n/a" when not measured). */
void mb_stortable_cell(const struct mb_stortable *t, int series, enum mb_stor_measure m, char *buf,
		       size_t len);
/* A measure's row label (console) and short heading (storage-test). */
const char *mb_stor_measure_label(enum mb_stor_measure m);

/* The console's view: one row per given measure, one column per series. */
int mb_stortable_by_measure(const struct mb_stortable *t, const enum mb_stor_measure *rows, int n,
			    struct mb_table **out);
/* storage-test's view: one row per measured series (label: its threads, *
 * for the best), then the published thread counts not measured; columns
 * the given measures, then the published IOPS, read and log averages of
 * the same thread count. */
int mb_stortable_by_threads(const struct mb_stortable *t, const enum mb_stor_measure *cols, int n,
			    struct mb_table **out);
/* The published rows as JSON: {"heading", "rows": [{threads, iops,
 * db_read_ms, log_write_ms}]} (NULL on allocation failure). */
json_t *mb_stortable_published_json(const struct mb_stortable *t);

#endif
