/* widgets.c: table, sparkline, bars, function bar, dialog and text input
 * (see widgets.h).  Invariant: nothing is drawn outside the given box. */
#include "ui/widgets.h"

#include <curses.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui/term.h"

void mb_w_text(int y, int x, int w, int style, const char *text)
{
	if (w <= 0 || y < 0 || y >= LINES || x >= COLS)
		return;
	if (x + w > COLS)
		w = COLS - x;
	attrset(mb_term_attr((enum mb_style)style));
	mvaddnstr(y, x, text, w);
	attrset(A_NORMAL);
}

static int row_style(const struct mb_table *t, int r)
{
	switch (mb_table_row_style(t, r)) {
	case MB_ROW_HEADER:
		return MB_ST_DIM;
	case MB_ROW_SEPARATOR:
		return MB_ST_DIM;
	default:
		break;
	}
	switch (mb_table_verdict(t, r)) {
	case MB_VERDICT_PASS:
		return MB_ST_PASS;
	case MB_VERDICT_FAIL:
		return MB_ST_FAIL;
	default:
		return MB_ST_NORMAL;
	}
}

int mb_w_table(int y, int x, int h, int w, const struct mb_table *t, int scroll, int selected)
{
	if (h < 1 || w < 20)
		return 0;
	struct mb_table_layout l;
	mb_table_layout(t, w, &l);
	size_t len = (size_t)l.total_w + 1;
	char *buf = malloc(len);
	if (!buf)
		return 0;
	mb_table_format_heading(t, &l, buf, len);
	mb_w_text(y, x, w, MB_ST_HEAD, buf);
	int shown = 0;
	int rows = mb_table_rows(t);
	if (scroll < 0)
		scroll = 0;
	for (int r = scroll; r < rows && shown < h - 1; r++, shown++) {
		mb_table_format_row(t, &l, r, buf, len);
		int st = r == selected ? MB_ST_SEL : row_style(t, r);
		mb_w_text(y + 1 + shown, x, w, st, buf);
		/* a failing row says so in monochrome too: mark it */
		if (mb_table_verdict(t, r) == MB_VERDICT_FAIL && l.label_w > 2 && !mb_term_color())
			mb_w_text(y + 1 + shown, x + l.label_w - 1, 1, MB_ST_FAIL, "!");
	}
	free(buf);
	return shown;
}

void mb_w_sparkline(int y, int x, int w, const double *vals, const bool *has, size_t n)
{
	static const char *const blocks[] = {"\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83",
					     "\xe2\x96\x84", "\xe2\x96\x85", "\xe2\x96\x86",
					     "\xe2\x96\x87", "\xe2\x96\x88"};
	static const char ascii[] = "_.-:=+*#";
	if (w <= 0)
		return;
	size_t start = n > (size_t)w ? n - (size_t)w : 0;
	double max = 0;
	for (size_t i = start; i < n; i++)
		if (has[i] && vals[i] > max)
			max = vals[i];
	attrset(mb_term_attr(MB_ST_LIVE));
	move(y, x);
	for (size_t i = start; i < n; i++) {
		if (!has[i]) {
			addch(' ');
			continue;
		}
		int lvl = max > 0 ? (int)lround(vals[i] / max * 7.0) : 0;
		if (lvl < 0)
			lvl = 0;
		if (lvl > 7)
			lvl = 7;
		if (mb_term_utf8())
			addstr(blocks[lvl]);
		else
			addch((chtype)(unsigned char)ascii[lvl]);
	}
	attrset(A_NORMAL);
}

void mb_w_bar(int y, int x, int w, double frac, int style)
{
	if (w <= 0)
		return;
	if (!(frac >= 0))
		frac = 0;
	if (frac > 1)
		frac = 1;
	int fill = (int)lround(frac * w);
	attrset(mb_term_attr((enum mb_style)style));
	for (int i = 0; i < w; i++)
		mvaddch(y, x + i, i < fill ? (mb_term_color() ? ' ' | A_REVERSE : '#') : ' ');
	attrset(A_NORMAL);
	if (!mb_term_color()) {
		mvaddch(y, x, '[');
		mvaddch(y, x + w - 1, ']');
	}
}

/* A bar with its extent always visible: "[" fill "]". */
static void framed_bar(int y, int x, int w, double frac, int style)
{
	if (w < 3) {
		mb_w_bar(y, x, w, frac, style);
		return;
	}
	mvaddch(y, x, '[');
	mvaddch(y, x + w - 1, ']');
	if (!(frac >= 0))
		frac = 0;
	if (frac > 1)
		frac = 1;
	int in = w - 2, fill = (int)lround(frac * in);
	attrset(mb_term_attr((enum mb_style)style));
	for (int i = 0; i < in; i++)
		mvaddch(y, x + 1 + i, i < fill ? (mb_term_color() ? ' ' | A_REVERSE : '#') : '.');
	attrset(A_NORMAL);
}

void mb_w_progress(int y, int x, int w, double pct, double eta_s)
{
	char tail[48];
	if (eta_s >= 0)
		snprintf(tail, sizeof(tail), " %5.1f%%  eta %d:%02d", pct, (int)eta_s / 60,
			 (int)eta_s % 60);
	else
		snprintf(tail, sizeof(tail), " %5.1f%%  eta n/a", pct);
	int tw = (int)strlen(tail);
	int bw = w - tw;
	if (bw < 4) {
		mb_w_text(y, x, w, MB_ST_NORMAL, tail);
		return;
	}
	framed_bar(y, x, bw, pct / 100.0, MB_ST_PASS);
	mb_w_text(y, x + bw, tw, MB_ST_NORMAL, tail);
}

void mb_w_funcbar(int y, int w, const struct mb_fkey *keys, size_t n)
{
	int x = 0;
	move(y, 0);
	for (size_t i = 0; i < n && x < w; i++) {
		int kl = (int)strlen(keys[i].key);
		mb_w_text(y, x, w - x, MB_ST_FKEY, keys[i].key);
		x += kl;
		char lab[32];
		if (strlen(keys[i].label) < 7)
			snprintf(lab, sizeof(lab), "%-7s", keys[i].label);
		else
			snprintf(lab, sizeof(lab), "%s ", keys[i].label);
		int ll = (int)strlen(lab);
		mb_w_text(y, x, w - x, MB_ST_FLABEL, lab);
		x += ll;
	}
	if (x < w) {
		attrset(mb_term_attr(MB_ST_FLABEL));
		for (; x < w; x++)
			mvaddch(y, x, ' ');
		attrset(A_NORMAL);
	}
}

#define DIALOG_MAX_LINES 40

/* Split text into pieces of at most width chars, at spaces when possible. */
static size_t wrap(const char *text, int width, const char **start, int *len, size_t max)
{
	size_t n = 0;
	const char *p = text;
	if (!*p && n < max) {
		start[n] = p;
		len[n++] = 0;
		return n;
	}
	while (*p && n < max) {
		int l = (int)strlen(p);
		if (l > width) {
			l = width;
			for (int k = width; k > width / 2; k--) {
				if (p[k] == ' ') {
					l = k;
					break;
				}
			}
		}
		start[n] = p;
		len[n++] = l;
		p += l;
		while (*p == ' ')
			p++;
	}
	return n;
}

int mb_w_dialog(const char *title, const char *const *lines, size_t n, int minw)
{
	int w = minw;
	for (size_t i = 0; i < n; i++)
		if ((int)strlen(lines[i]) + 4 > w)
			w = (int)strlen(lines[i]) + 4;
	if ((int)strlen(title) + 6 > w)
		w = (int)strlen(title) + 6;
	if (w > COLS - 2)
		w = COLS - 2;
	/* long lines wrap inside the box */
	const char *ws[DIALOG_MAX_LINES];
	int wl[DIALOG_MAX_LINES];
	size_t wn = 0;
	for (size_t i = 0; i < n && wn < DIALOG_MAX_LINES; i++)
		wn +=
		    wrap(lines[i], w - 4 > 1 ? w - 4 : 1, ws + wn, wl + wn, DIALOG_MAX_LINES - wn);
	int h = (int)wn + 4;
	if (h > LINES - 2)
		h = LINES - 2;
	int y0 = (LINES - h) / 2, x0 = (COLS - w) / 2;
	attrset(mb_term_attr(MB_ST_SEL));
	for (int r = 0; r < h; r++)
		for (int c = 0; c < w; c++)
			mvaddch(y0 + r, x0 + c, ' ');
	for (int c = 0; c < w; c++) {
		mvaddch(y0, x0 + c, '-');
		mvaddch(y0 + h - 1, x0 + c, '-');
	}
	for (int r = 0; r < h; r++) {
		mvaddch(y0 + r, x0, '|');
		mvaddch(y0 + r, x0 + w - 1, '|');
	}
	mvaddch(y0, x0, '+');
	mvaddch(y0, x0 + w - 1, '+');
	mvaddch(y0 + h - 1, x0, '+');
	mvaddch(y0 + h - 1, x0 + w - 1, '+');
	char t[128];
	snprintf(t, sizeof(t), " %s ", title);
	mvaddnstr(y0, x0 + 2, t, w - 4);
	for (size_t i = 0; i < wn && (int)i < h - 4; i++)
		mvaddnstr(y0 + 2 + (int)i, x0 + 2, ws[i], wl[i]);
	attrset(A_NORMAL);
	return y0 + 2;
}

void mb_input_start(struct mb_input *in, const char *initial)
{
	snprintf(in->buf, sizeof(in->buf), "%s", initial ? initial : "");
	in->len = strlen(in->buf);
	in->active = true;
}

int mb_input_key(struct mb_input *in, int key)
{
	if (key == '\n' || key == '\r' || key == KEY_ENTER) {
		in->active = false;
		return 1;
	}
	if (key == 27) {
		in->active = false;
		return -1;
	}
	if (key == KEY_BACKSPACE || key == 127 || key == 8) {
		if (in->len > 0)
			in->buf[--in->len] = '\0';
		return 0;
	}
	if (key == 21) { /* ^U */
		in->len = 0;
		in->buf[0] = '\0';
		return 0;
	}
	if (key >= 32 && key < 127 && in->len < sizeof(in->buf) - 1) {
		in->buf[in->len++] = (char)key;
		in->buf[in->len] = '\0';
	}
	return 0;
}

void mb_input_draw(const struct mb_input *in, int y, int x, int w)
{
	if (w <= 2)
		return;
	const char *s = in->buf;
	if ((int)in->len > w - 2)
		s += in->len - (size_t)(w - 2);
	attrset(A_REVERSE);
	for (int i = 0; i < w; i++)
		mvaddch(y, x + i, ' ');
	mvaddnstr(y, x, s, w - 1);
	mvaddch(y, x + (int)strlen(s), '_' | A_BLINK);
	attrset(A_NORMAL);
}

/* Split text into lines of at most w columns (at spaces when possible);
 * continuation lines are indented by 4.  Returns the number of lines. */
int mb_w_wrap(const char *text, int w, char out[][MB_W_WRAP_W], int max)
{
	int n = 0;
	const char *p = text;
	if (w < 20)
		w = 20;
	while (*p && n < max) {
		int ind = n > 0 && p != text ? 4 : 0;
		int room = w - ind;
		if (room > MB_W_WRAP_W - 8)
			room = MB_W_WRAP_W - 8;
		int l = (int)strlen(p);
		if (l > room) {
			l = room;
			for (int k = room; k > room / 2; k--)
				if (p[k] == ' ') {
					l = k;
					break;
				}
		}
		snprintf(out[n++], MB_W_WRAP_W, "%*s%.*s", ind, "", l, p);
		p += l;
		while (*p == ' ')
			p++;
	}
	return n;
}
