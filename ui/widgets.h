/* widgets.h: drawing primitives of the console, on stdscr.
 *
 * Comparison table (a report/table.h table, coloured by row verdict,
 * scrolled), sparkline, bar, progress bar with ETA, function bar, dialog
 * box and a one-line text input.  Widgets draw inside the rectangle they
 * are given and never outside it; they hold no state except the text input.
 */
#ifndef MB_UI_WIDGETS_H
#define MB_UI_WIDGETS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/table.h"

/* Text clipped to w columns at (y, x) with a style. */
void mb_w_text(int y, int x, int w, int style, const char *text);
/* Draw rows [scroll, ...) of table t in h lines (heading included) and w
 * columns; selected is a table row drawn highlighted (-1: none).  Returns
 * the number of table rows shown. */
int mb_w_table(int y, int x, int h, int w, const struct mb_table *t, int scroll, int selected);
/* Sparkline of n values (has[i] false: a gap) scaled to their maximum. */
void mb_w_sparkline(int y, int x, int w, const double *vals, const bool *has, size_t n);
/* A horizontal bar filled to frac (0..1). */
void mb_w_bar(int y, int x, int w, double frac, int style);
/* "[#####     ]  42%  eta 1:05" in w columns; eta_s < 0: unknown. */
void mb_w_progress(int y, int x, int w, double pct, double eta_s);

/* Split text into lines of at most w columns (at spaces when possible);
 * continuation lines are indented by 4.  Returns the number of lines. */
#define MB_W_WRAP_W 512
int mb_w_wrap(const char *text, int w, char out[][MB_W_WRAP_W], int max);

struct mb_fkey {
	const char *key;   /* "F1" */
	const char *label; /* "Help" */
};
/* htop-style function bar on line y. */
void mb_w_funcbar(int y, int w, const struct mb_fkey *keys, size_t n);
/* A centred box with a title and lines; returns its inner top line. */
int mb_w_dialog(const char *title, const char *const *lines, size_t n, int minw);

/* One-line text input. */
struct mb_input {
	char buf[256];
	size_t len;
	bool active;
};
void mb_input_start(struct mb_input *in, const char *initial);
/* Feed a key: 1 when Enter finished, -1 when Esc cancelled, 0 otherwise. */
int mb_input_key(struct mb_input *in, int key);
void mb_input_draw(const struct mb_input *in, int y, int x, int w);

#endif
