/* console.h: the console's state and its screen manager.
 *
 * One struct mb_console lives for a console session; screens.c draws the
 * current screen from it and the session (never from anything else), and
 * routes keys.  Everything shown comes from the session's measurements or
 * the scenario; "n/a" where nothing was measured.
 */
#ifndef MB_UI_CONSOLE_H
#define MB_UI_CONSOLE_H

#include <stdbool.h>
#include <uv.h>

#include "report/report.h"
#include "report/session.h"
#include "ui/widgets.h"

enum mb_screen_id {
	MB_SCR_OVERVIEW = 0,
	MB_SCR_STORAGE,
	MB_SCR_ACTIONS,
	MB_SCR_THRESHOLDS,
	MB_SCR_RUNS,
	MB_SCR_SCENARIO,
	MB_SCR_HELP,
	MB_SCR_COUNT
};

enum mb_input_target { MB_IN_NONE = 0, MB_IN_THRESHOLD, MB_IN_FIELD };

struct mb_console {
	uv_loop_t *loop;
	struct mb_session *s;
	enum mb_screen_id screen;
	int sel[MB_SCR_COUNT];
	int scroll[MB_SCR_COUNT];
	int diff_col;		       /* published column to diff against */
	struct mb_run_summary *pinned; /* NULL: none */
	char pinned_path[4096];
	struct mb_run_list *runs;
	struct mb_input input;
	enum mb_input_target input_target;
	int input_index;
	bool confirm_quit;
	bool confirm_reinit; /* re-initialise DATA? */
	bool show_failure;   /* the failed child's stderr tail */
	bool quitting;
	bool quit_now;
	char status[1024];
	bool status_error;
	int restart_threads; /* storage test restart pending */
};

/* Draw everything (erase, screen, bars, dialogs, refresh). */
void mb_console_draw(struct mb_console *c);
/* Handle one key. */
void mb_console_key(struct mb_console *c, int key);
/* Show a status message at the bottom. */
void mb_console_status(struct mb_console *c, bool error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Re-read DATA/runs/. */
void mb_console_reload_runs(struct mb_console *c);
/* Start quitting: stop the children; the loop ends when they are gone. */
void mb_console_quit(struct mb_console *c);

#endif
