/* table.h: a text table with a label column: the one table model that the
 * console, `run`, `load`, `storage-test` and `compare` build and print
 * (text here; CSV by mb_table_csv; JSON writers walk the same cells).
 *
 * Cells are strings; rows are header rows (text, e.g. server platform),
 * separators or counter rows carrying a verdict (for colour).  Layout fits
 * the table into a width: header-row cells narrow first (from 40 down to 8
 * characters; width left over goes back to the cut ones), then columns are
 * dropped lowest priority first (the label column keeps a quarter of the
 * width), then the label column shrinks (never below 12); cells that do not fit are cut with '~'
 * (the long headings, printed as a legend, carry the full text).  Invariant: every formatted line
 * is exactly layout.total_w characters (ASCII), so screens can draw and scroll it cell-aligned.
 */
#ifndef MB_REPORT_TABLE_H
#define MB_REPORT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/threshold.h" /* enum mb_verdict */

#define MB_TABLE_MAX_COLS 24
#define MB_TABLE_CELL_MAX 64

enum mb_row_style { MB_ROW_NORMAL = 0, MB_ROW_HEADER, MB_ROW_SEPARATOR };

struct mb_table;

struct mb_table_layout {
	int label_w;
	int ncols;		    /* columns shown */
	int col[MB_TABLE_MAX_COLS]; /* their indices, in table order */
	int w[MB_TABLE_MAX_COLS];   /* their widths */
	int total_w;
	bool cut; /* some shown column's cells are cut (header rows) */
};

int mb_table_create(int ncols, struct mb_table **out);
void mb_table_destroy(struct mb_table *t);
int mb_table_cols(const struct mb_table *t);
/* Short heading (on the heading line) and long one (legend below). */
int mb_table_set_heading(struct mb_table *t, int col, const char *shortname, const char *longname);
const char *mb_table_heading(const struct mb_table *t, int col, bool long_form);
/* The label column's heading (default ""). */
void mb_table_set_label_heading(struct mb_table *t, const char *text);
/* Higher priority survives longer when narrow (default 0). */
void mb_table_set_priority(struct mb_table *t, int col, int prio);
int mb_table_add_row(struct mb_table *t, const char *label, enum mb_row_style style, int *row_out);
int mb_table_rows(const struct mb_table *t);
enum mb_row_style mb_table_row_style(const struct mb_table *t, int row);
int mb_table_set_cell(struct mb_table *t, int row, int col, const char *text);
const char *mb_table_cell(const struct mb_table *t, int row, int col);
const char *mb_table_row_label(const struct mb_table *t, int row);
void mb_table_set_verdict(struct mb_table *t, int row, enum mb_verdict v);
enum mb_verdict mb_table_verdict(const struct mb_table *t, int row);
/* Optional user tag per row (e.g. the counter id); -1 by default. */
void mb_table_set_tag(struct mb_table *t, int row, int tag);
int mb_table_tag(const struct mb_table *t, int row);

/* Fit into width (>= 20). */
int mb_table_layout(const struct mb_table *t, int width, struct mb_table_layout *out);
/* The heading line / one row / a rule, exactly total_w chars, into buf. */
void mb_table_format_heading(const struct mb_table *t, const struct mb_table_layout *l, char *buf,
			     size_t len);
void mb_table_format_row(const struct mb_table *t, const struct mb_table_layout *l, int row,
			 char *buf, size_t len);
/* Start offset and width of a shown column (for colouring a cell). */
int mb_table_col_offset(const struct mb_table_layout *l, int shown_index);
/* The whole table as text: heading, rule, rows, then the legend of long
 * headings of the shown columns. */
void mb_table_print(const struct mb_table *t, FILE *f, int width);
/* The table as CSV (RFC 4180 quoting): a heading line ("row", then the
 * columns' short headings), then one line per row that is not a
 * separator: its key, then its cells, numbers without thousands
 * separators.  key (NULL: the label with '_' for ' ') names a row from
 * its tag.  0 or MB_EIO. */
int mb_table_csv(const struct mb_table *t, FILE *f,
		 const char *(*key)(const struct mb_table *t, int row, void *arg), void *arg);

#endif
