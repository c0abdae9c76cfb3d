/* screens/thresholds.c: the thresholds screen: every counter's threshold,
 * its live value and verdict (the storage test's two latency limits are
 * the thresholds of its counters stress_db_read_ms / stress_log_write_ms);
 * Enter (or e) edits the selected one in a dialog, saved in
 * DATA/thresholds.cfg at once (on a failed save the old value stays).
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/options.h"
#include "core/table.h"
#include "ui/console.h"
#include "ui/term.h"

#define TH_ROWS MB_COUNTER_COUNT

static void draw_thresholds(struct mb_console *c, int top, int h)
{
	struct mb_thresholds *th = mb_session_thresholds(c->s);
	struct mb_table *t;
	if (mb_table_create(3, &t))
		return;
	mb_table_set_heading(t, 0, "threshold", NULL);
	mb_table_set_heading(t, 1, "live", NULL);
	mb_table_set_heading(t, 2, "verdict", NULL);
	mb_table_set_priority(t, 0, 10);
	mb_table_set_priority(t, 1, 9);
	mb_table_set_priority(t, 2, 8);
	double live[MB_COUNTER_COUNT];
	bool lh[MB_COUNTER_COUNT];
	mb_session_live(c->s, live, lh);
	char buf[64];
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		int r;
		mb_table_add_row(t, mb_counters[i].label, MB_ROW_NORMAL, &r);
		mb_threshold_text(&th->counter[i], (enum mb_counter_id)i, buf, sizeof(buf));
		mb_table_set_cell(t, r, 0, buf[0] ? buf : "none");
		mb_format_value((enum mb_counter_id)i, lh[i], live[i], buf, sizeof(buf));
		mb_table_set_cell(t, r, 1, buf);
		enum mb_verdict v = mb_threshold_eval(&th->counter[i], lh[i], live[i]);
		mb_table_set_cell(t, r, 2, mb_verdict_str(v));
		mb_table_set_verdict(t, r, v);
	}

	int sel = c->sel[MB_SCR_thresholds];
	int vis = h - 3;
	if (sel < c->scroll[MB_SCR_thresholds])
		c->scroll[MB_SCR_thresholds] = sel;
	if (sel >= c->scroll[MB_SCR_thresholds] + vis)
		c->scroll[MB_SCR_thresholds] = sel - vis + 1;
	mb_w_table(top, 0, vis + 1, COLS, t, c->scroll[MB_SCR_thresholds], sel);
	mb_table_destroy(t);
	mb_w_text(top + h - 1, 0, COLS, MB_ST_DIM,
		  "Enter edits (<= 80, > 5, none), saved in DATA/thresholds.cfg");
	if (c->input.active && c->input_target == MB_IN_THRESHOLD) {
		char title[160];
		int i = c->input_index;
		snprintf(title, sizeof(title), "threshold: %s", mb_counters[i].label);
		const char *const l[] = {"", "",
					 "e.g. <= 80, > 5 or none; Enter saves, Esc cancels"};
		int y = mb_w_dialog(title, l, 3, 50);
		mb_input_draw(&c->input, y, (COLS - 46) / 2, 44);
	}
}

static void threshold_edit_done(struct mb_console *c);

static void threshold_edit_start(struct mb_console *c)
{
	int sel = c->sel[MB_SCR_thresholds];
	struct mb_thresholds *th = mb_session_thresholds(c->s);
	char buf[64];
	mb_threshold_text(&th->counter[sel], (enum mb_counter_id)sel, buf, sizeof(buf));
	mb_input_start(&c->input, buf);
	c->input_target = MB_IN_THRESHOLD;
	c->input_index = sel;
	c->input_done = threshold_edit_done;
}

static void threshold_edit_done(struct mb_console *c)
{
	struct mb_thresholds *th = mb_session_thresholds(c->s);
	struct mb_thresholds old = *th;
	int sel = c->input_index;
	const char *text = c->input.buf;
	while (*text == ' ')
		text++;
	struct mb_threshold nt = {MB_CMP_NONE, 0};
	if (*text && strcmp(text, "none") && mb_threshold_parse(text, &nt)) {
		mb_console_status(c, true, "not a threshold: '%s' (write e.g. <= 80 or none)",
				  text);
		return;
	}
	th->counter[sel] = nt;
	int rc = mb_session_save_thresholds(c->s);
	if (rc) {
		*th = old;
		mb_console_status(c, true, "cannot save %s/thresholds.cfg: %s",
				  mb_session_params(c->s)->data_dir, mb_strerror(rc));
		return;
	}
	mb_console_status(c, false, "threshold saved to %s/thresholds.cfg",
			  mb_session_params(c->s)->data_dir);
}
static bool thresholds_key(struct mb_console *c, int key)
{
	if (key != '\n' && key != '\r' && key != KEY_ENTER && key != 'e')
		return false;
	threshold_edit_start(c);
	return true;
}

static int thresholds_items(struct mb_console *c)
{
	(void)c;
	return TH_ROWS;
}

const struct mb_screen mb_screen_thresholds = {
    .name = "Thresholds",
    .draw = draw_thresholds,
    .on_key = thresholds_key,
    .items = thresholds_items,
};
