/* html.h: the stakeholder report: one self-contained HTML file.
 *
 * Input documents are the JSON files mailbench writes: run summaries
 * (`mailbench-run/1`, docs/run-json.md, with their optional "series"),
 * capacity searches (`mailbench-capacity/1`, docs/capacity-json.md) and
 * storage-test results (tool "mailbench storage-test").  The page holds
 * the header facts of every run, the comparison table (published columns,
 * the runs as columns, their normalised differences: runcmp.h), charts of
 * the main counters over time, the per-action table, the storage-test
 * results beside the published thread-count rows, the capacity curve, and
 * the published findings checked where the runs allow it.
 *
 * Charts are drawn by uPlot, vendored under vendor/uplot/ (its release
 * file, licence and version) and inlined into the page, so the file opens
 * with no network.  The page's own script only hands the data to uPlot;
 * when every chart is drawn it sets data-charts="N" on <body> (and
 * data-errors when a script error occurred), which the tests read.
 * Invariant: every figure in the page comes from the input documents; a
 * figure they lack reads "n/a".
 */
#ifndef MB_REPORT_HTML_H
#define MB_REPORT_HTML_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* The directory the vendored libraries are read from: $MAILBENCH_VENDOR,
 * else the source tree's vendor/ when run from the build tree, else
 * $(pkgdatadir)/vendor. */

/* Write the report of n documents (names[i]: shown as the document's
 * source) to out.  MB_EPROTO: a document is of no known kind (why names
 * it); MB_ENOTFOUND: the vendored chart library is missing (why says
 * where it was looked for). */
int mb_html_report(json_t *const *docs, const char *const *names, size_t n, FILE *out, char *why,
		   size_t whylen);
/* The same into path (written atomically). */
int mb_html_report_file(json_t *const *docs, const char *const *names, size_t n, const char *path,
			char *why, size_t whylen);

#endif
