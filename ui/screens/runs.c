/* screens/runs.c: the runs screen: the runs saved in DATA/runs/ (re-read
 * when the screen is shown and when a run ends); Enter or p pins or unpins
 * the selected one (up to 4, ui/pins.h), compared with the live run in the
 * lower part; the first pinned is also the overview's column.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/table.h"
#include "ui/console.h"
#include "ui/pins.h"
#include "ui/term.h"

static void draw_runs(struct mb_console *c, int top, int h)
{
	if (!c->runs)
		mb_console_reload_runs(c);
	size_t n = c->runs ? mb_run_list_count(c->runs) : 0;
	if (n == 0) {
		mb_w_text(top, 0, COLS, MB_ST_NORMAL,
			  "no saved runs yet: a run is saved in DATA/runs/ when the load stops");
		return;
	}
	struct mb_table *t;
	if (mb_table_create(9, &t))
		return;
	static const char *const heads[] = {"scenario", "users",    "scale", "accel",  "compr",
					    "measured", "rpc op/s", "cpu %", "verdict"};
	for (int i = 0; i < 9; i++) {
		mb_table_set_heading(t, i, heads[i], NULL);
		mb_table_set_priority(t, i, 10 - i);
	}
	mb_table_set_priority(t, 8, 9);
	char buf[64];
	for (size_t i = 0; i < n; i++) {
		const struct mb_run_summary *s = mb_run_list_at(c->runs, i);
		int r;
		char lab[96];
		bool pinned = mb_pins_find(c, mb_run_list_path(c->runs, i)) >= 0;
		snprintf(lab, sizeof(lab), "%s%s", pinned ? "* " : "", s->id);
		mb_table_add_row(t, lab, MB_ROW_NORMAL, &r);
		mb_table_set_cell(t, r, 0, s->scenario);
		snprintf(buf, sizeof(buf), "%d", s->users);
		mb_table_set_cell(t, r, 1, buf);
		snprintf(buf, sizeof(buf), "%g", s->scale);
		mb_table_set_cell(t, r, 2, buf);
		snprintf(buf, sizeof(buf), "%g", s->accel);
		mb_table_set_cell(t, r, 3, buf);
		mb_table_set_cell(t, r, 4, mb_summary_compression(s));
		snprintf(buf, sizeof(buf), "%.0f s", s->measured_s);
		mb_table_set_cell(t, r, 5, buf);
		mb_format_value(MB_C_RPC_OPS, s->has[MB_C_RPC_OPS], s->avg[MB_C_RPC_OPS], buf,
				sizeof(buf));
		mb_table_set_cell(t, r, 6, buf);
		mb_format_value(MB_C_PROCESSOR_PCT, s->has[MB_C_PROCESSOR_PCT],
				s->avg[MB_C_PROCESSOR_PCT], buf, sizeof(buf));
		mb_table_set_cell(t, r, 7, buf);
		mb_table_set_cell(t, r, 8, s->failed ? "failed" : mb_verdict_str(s->overall));
		mb_table_set_verdict(t, r, s->overall);
	}
	int sel = c->sel[MB_SCR_runs];
	if (sel >= (int)n)
		sel = c->sel[MB_SCR_runs] = (int)n - 1;
	/* the pinned runs' comparison takes the lower part */
	int list_h = c->npins > 0 ? (int)n + 3 < h / 3 ? (int)n + 3 : h / 3 : h;
	if (c->npins > 0)
		mb_pins_draw(c, top + list_h, h - list_h);
	h = list_h;
	int vis = h - 3;
	if (sel < c->scroll[MB_SCR_runs])
		c->scroll[MB_SCR_runs] = sel;
	if (sel >= c->scroll[MB_SCR_runs] + vis)
		c->scroll[MB_SCR_runs] = sel - vis + 1;
	mb_w_table(top, 0, vis + 1, COLS, t, c->scroll[MB_SCR_runs], sel);
	mb_table_destroy(t);
	mb_w_text(top + h - 1, 0, COLS, MB_ST_DIM,
		  "Enter or p: pin/unpin the selected run (* = pinned; up to 4, compared with the "
		  "live run below; the first is also the overview's column)");
}

static void runs_pin(struct mb_console *c)
{
	if (!c->runs || mb_run_list_count(c->runs) == 0)
		return;
	size_t sel = (size_t)c->sel[MB_SCR_runs];
	mb_pins_toggle(c, mb_run_list_path(c->runs, sel), mb_run_list_at(c->runs, sel));
}
static bool runs_key(struct mb_console *c, int key)
{
	if (key != '\n' && key != '\r' && key != KEY_ENTER && key != 'p')
		return false;
	runs_pin(c);
	return true;
}

static int runs_items(struct mb_console *c)
{
	return c->runs ? (int)mb_run_list_count(c->runs) : 0;
}

const struct mb_screen mb_screen_runs = {
    .name = "Runs",
    .help = "p or Enter  runs screen: pin up to 4 runs, compared with the live run",
    .build = mb_console_reload_runs,
    .draw = draw_runs,
    .on_key = runs_key,
    .items = runs_items,
};
