/* console.h: the console's state and its screen manager.
 *
 * One struct mb_console lives for a console session; ui/manager.c draws
 * the frame and the current screen (a ui/screen.h object, one file per
 * screen under ui/screens/) from it and the session (never from anything
 * else), and ui/keys.c routes keys through the one key table.  Everything shown comes from the
 * session's measurements or the scenario; "n/a" where nothing was measured.
 */
#ifndef MB_UI_CONSOLE_H
#define MB_UI_CONSOLE_H

#include <stdbool.h>
#include <uv.h>

#include "report/report.h"
#include "report/session.h"
#include "ui/screen.h"
#include "ui/widgets.h"

struct mb_capacity;

/* A storage test's result kept on the storage screen (ui/storcols.h). */
struct mb_stor_result {
	int threads;
	bool has_iops, has_read, has_log, has_pct;
	double iops, read_avg, log_avg, read95, read99, log95, log99;
	enum mb_verdict verdict;
};
#define MB_STOR_KEEP 12

enum mb_input_target { MB_IN_NONE = 0, MB_IN_THRESHOLD, MB_IN_FIELD };

struct mb_console {
	uv_loop_t *loop;
	struct mb_session *s;
	enum mb_screen_id screen;
	int sel[MB_SCR_COUNT];
	int scroll[MB_SCR_COUNT];
	void *state[MB_SCR_COUNT];     /* what a screen's build keeps (its destroy frees it) */
	int diff_col;		       /* published column to diff against */
	struct mb_run_summary *pinned; /* NULL: none; else pins[0] (ui/pins.h) */
	char pinned_path[4096];
#define MB_MAX_PINS 4
	struct mb_run_summary *pins[MB_MAX_PINS];
	char pin_path[MB_MAX_PINS][4096];
	int npins;
	struct mb_run_list *runs;
	struct mb_input input;
	enum mb_input_target input_target;
	int input_index;
	void (*input_done)(struct mb_console *c); /* Enter finished the input */
	bool confirm_quit;
	bool confirm_reinit; /* re-initialise DATA? */
	bool fault_menu;     /* f: which fault to inject into the running load */
	bool show_failure;   /* the failed child's stderr tail */
	bool quitting;
	bool quit_now;
	char status[1024];
	bool status_error;
	int restart_threads; /* storage test restart pending */
	/* the storage screen's kept results (ui/storcols.h) */
	struct mb_stor_result stor[MB_STOR_KEEP];
	int nstor;
	char stor_outcome[512];
	/* the capacity screen (ui/capscreen.h) */
	struct mb_capacity *cap;
	int cap_limit, cap_window; /* presets chosen */
	char cap_saved[4400];	   /* where the last search was saved */
};

/* Draw everything (erase, screen, bars, dialogs, refresh). */
void mb_console_draw(struct mb_console *c);
/* Handle one key. */
void mb_console_key(struct mb_console *c, int key);
/* Show a status message at the bottom. */
void mb_console_status(struct mb_console *c, bool error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Free what the screens kept (each screen's destroy). */
void mb_console_free_screens(struct mb_console *c);
/* Re-read DATA/runs/. */
void mb_console_reload_runs(struct mb_console *c);
/* Start quitting: stop the children; the loop ends when they are gone. */
void mb_console_quit(struct mb_console *c);
/* The console's option entries (its command line); the scenario screen
 * edits the ones marked MB_OPT_CONSOLE. */
struct mb_opt;
const struct mb_opt *mb_console_fields(int *n);

#endif
