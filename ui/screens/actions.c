/* screens/actions.c: the actions screen: the per-action table
 * (report/acttable.h, the one `mailbench run` prints) from the session's
 * summary, its percentiles from the histograms since the load started, and
 * the messages sent and received per user-day under it.  Up/Down scroll.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/acttable.h"
#include "core/table.h"
#include "ui/console.h"
#include "ui/term.h"

static void draw_actions(struct mb_console *c, int top, int h)
{
	struct mb_run_summary *sum = calloc(1, sizeof(*sum));
	if (!sum)
		return;
	mb_session_summary(c->s, sum);
	/* the percentiles since the load started (the summary's are after
	 * the warm-up) */
	const struct mb_histset *hs = mb_session_hists(c->s);
	const struct mb_scenario *sc = mb_session_scenario(c->s);
	struct mb_latency lat[MB_ACTION_COUNT];
	for (int a = 0; a < MB_ACTION_COUNT; a++) {
		char name[128];
		snprintf(name, sizeof(name), "%s%s", MB_HIST_ACTION_PREFIX, mb_actions[a].key);
		mb_latency_from_hist(mb_histset_find(hs, name), &lat[a]);
	}
	struct mb_table *t;
	if (mb_acttable_build(sum, sc, lat, &t)) {
		free(sum);
		return;
	}
	int shown = mb_w_table(top, 0, h - 3, COLS, t, c->scroll[MB_SCR_actions], -1);
	mb_table_destroy(t);
	char line[256];
	if (sum->has_messages_sent || sum->has_messages_received) {
		char a[32] = "n/a", b[32] = "n/a";
		if (sum->has_messages_sent)
			snprintf(a, sizeof(a), "%.2f", sum->messages_sent_per_user_day);
		if (sum->has_messages_received)
			snprintf(b, sizeof(b), "%.2f", sum->messages_received_per_user_day);
		snprintf(line, sizeof(line),
			 "per user-day: messages sent %s (profile %g), received %s (profile %g)", a,
			 sc ? sc->messages_sent_per_day : 0.0, b,
			 sc ? sc->messages_received_per_day : 0.0);
	} else {
		snprintf(line, sizeof(line), "per user-day: messages sent n/a, received n/a");
	}
	mb_w_text(top + shown + 2, 0, COLS, MB_ST_NORMAL, line);
	mb_w_text(top + shown + 3, 0, COLS, MB_ST_DIM,
		  "profile: the scenario's actions per user-day; figures since the load started");
	free(sum);
}
const struct mb_screen mb_screen_actions = {
    .name = "Actions",
    .draw = draw_actions,
};
