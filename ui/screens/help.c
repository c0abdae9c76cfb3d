/* screens/help.c: the help screen, generated: the key table's rows
 * (ui/screen.h: keys and what they do, in table order), then each
 * screen's own keys (its help line), then what the figures mean.
 * Up/Down scroll when the terminal is short.  Invariant: no key is named
 * here by hand; a key the table does not list is not on this screen.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "ui/console.h"
#include "ui/term.h"

#define HELP_MAX 96

static const char *const notes[] = {
    "live: mean of the last 10 s; run avg: mean after the warm-up; n/a: not measured.",
    "The legend under the overview's table names every column in full (published",
    "headings; this run's platform, engine, client mode); Down scrolls to it.",
    "Rows are coloured by their thresholds (monochrome: '!' marks a failing row).",
    "Every figure comes from the store, the load engine, the storage test or",
    "this machine's /proc, measured during this run.",
};

static void draw_help(struct mb_console *c, int top, int h)
{
	char(*l)[MB_W_WRAP_W] = calloc(HELP_MAX, MB_W_WRAP_W);
	if (!l)
		return;
	int n = 0, w = COLS - 1;
	snprintf(l[n++], MB_W_WRAP_W,
		 "mailbench " PACKAGE_VERSION " console: the published comparison tables, live.");
	n++;
	const char *keys, *help;
	char line[MB_W_WRAP_W];
	for (int i = 0; mb_key_row(i, &keys, &help) && n < HELP_MAX; i++)
		if (keys && help) {
			/* the help text wrapped beside its keys */
			int k = mb_w_wrap(help, w - 12, l + n, HELP_MAX - n);
			for (int j = 0; j < k; j++) {
				snprintf(line, sizeof(line), "%-11s %s", j ? "" : keys,
					 l[n + j] + strspn(l[n + j], " "));
				snprintf(l[n + j], MB_W_WRAP_W, "%s", line);
			}
			n += k;
		}
	for (int s = 0; s < MB_SCR_COUNT && n < HELP_MAX; s++)
		if (mb_screen((enum mb_screen_id)s)->help)
			n += mb_w_wrap(mb_screen((enum mb_screen_id)s)->help, w, l + n,
				       HELP_MAX - n);
	if (n < HELP_MAX)
		n++;
	for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]) && n < HELP_MAX; i++)
		snprintf(l[n++], MB_W_WRAP_W, "%s", notes[i]);
	int *scroll = &c->scroll[MB_SCR_help];
	if (*scroll > n - h)
		*scroll = n - h > 0 ? n - h : 0;
	for (int i = 0; i < h && *scroll + i < n; i++)
		mb_w_text(top + i, 1, w, *scroll + i == 0 ? MB_ST_HEAD : MB_ST_NORMAL,
			  l[*scroll + i]);
	free(l);
}

const struct mb_screen mb_screen_help = {
    .name = "Help",
    .draw = draw_help,
};
