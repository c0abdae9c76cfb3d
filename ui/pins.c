/* pins.c: pinned saved runs (the runs screen).
 *
 * Up to MB_MAX_PINS saved runs are pinned; the first is also the
 * overview's pinned column (c->pinned aliases pins[0]).  Under the list
 * of saved runs the runs screen shows the pinned runs as columns beside
 * the live run (the session's current or last run), each with its
 * difference against it, normalised as runcmp.h says, and a warning line
 * for every pinned run of another scenario or target.  With no live run,
 * the first pinned run is the reference.
 * Invariant: pins[0..npins) are owned copies; c->pinned == pins[0] or
 * NULL. */
#include "ui/pins.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curses.h>

#include "report/runcmp.h"
#include "ui/term.h"

static void sync(struct mb_console *c)
{
	c->pinned = c->npins > 0 ? c->pins[0] : NULL;
	snprintf(c->pinned_path, sizeof(c->pinned_path), "%s", c->npins > 0 ? c->pin_path[0] : "");
}

int mb_pins_find(const struct mb_console *c, const char *path)
{
	for (int i = 0; i < c->npins; i++)
		if (!strcmp(c->pin_path[i], path))
			return i;
	return -1;
}

void mb_pins_toggle(struct mb_console *c, const char *path, const struct mb_run_summary *s)
{
	int i = mb_pins_find(c, path);
	if (i >= 0) {
		free(c->pins[i]);
		memmove(&c->pins[i], &c->pins[i + 1],
			(size_t)(c->npins - i - 1) * sizeof(c->pins[0]));
		memmove(c->pin_path[i], c->pin_path[i + 1],
			(size_t)(c->npins - i - 1) * sizeof(c->pin_path[0]));
		c->npins--;
		sync(c);
		mb_console_status(c, false, "unpinned %s", s->id);
		return;
	}
	if (c->npins == MB_MAX_PINS) {
		mb_console_status(c, true, "at most %d pinned runs: unpin one first", MB_MAX_PINS);
		return;
	}
	struct mb_run_summary *p = malloc(sizeof(*p));
	if (!p)
		return;
	*p = *s;
	c->pins[c->npins] = p;
	snprintf(c->pin_path[c->npins], sizeof(c->pin_path[0]), "%s", path);
	c->npins++;
	sync(c);
	mb_console_status(c, false, "pinned %s (%d pinned; the first is the overview's column)",
			  s->id, c->npins);
}

void mb_pins_free(struct mb_console *c)
{
	for (int i = 0; i < c->npins; i++)
		free(c->pins[i]);
	c->npins = 0;
	sync(c);
}

int mb_pins_draw(struct mb_console *c, int top, int h)
{
	if (c->npins == 0 || h < 4)
		return 0;
	struct mb_run_summary *live = calloc(1, sizeof(*live));
	if (!live)
		return 0;
	const struct mb_run_summary *runs[MB_MAX_PINS + 1];
	size_t n = 0;
	bool have_live = mb_session_summary(c->s, live) == 0 && live->started[0] &&
			 (mb_session_load_active(c->s) || live->measured_s > 0);
	if (have_live) {
		snprintf(live->id, sizeof(live->id), "live");
		runs[n++] = live;
	}
	for (int i = 0; i < c->npins; i++)
		runs[n++] = c->pins[i];
	struct mb_runcmp_input in = {NULL, runs, NULL, n, 0};
	int y = top;
	char warn[4096];
	mb_w_text(y++, 0, COLS, MB_ST_HEAD,
		  have_live ? "pinned runs against the live run (run 1 = live; differences in %, "
			      "/UE: per user-equivalent)"
			    : "pinned runs (no live run yet: run 1, the first pinned, is the "
			      "reference)");
	if (mb_runcmp_warnings(&in, warn, sizeof(warn)) > 0) {
		for (char *l = strtok(warn, "\n"); l && y < top + h - 2; l = strtok(NULL, "\n"))
			mb_w_text(y++, 0, COLS, MB_ST_WARN, l);
	}
	struct mb_table *t;
	if (mb_runcmp_build(&in, &t) == 0) {
		mb_w_table(y, 0, top + h - y, COLS, t, 0, -1);
		mb_table_destroy(t);
	}
	free(live);
	return h;
}
