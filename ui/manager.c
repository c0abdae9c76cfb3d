/* manager.c: the console's screen manager: the frame (title bar on line
 * 0, the current screen in lines 1 .. LINES-3, the status line on LINES-2,
 * the function bar on LINES-1) and the dialogs over it (run failed, fault
 * menu, re-initialise, quit, quitting), and the order a key goes through:
 * an open dialog, then a text input, then the key table (ui/keys.c), then
 * the current screen's on_key.  The screens are objects (ui/screen.h), one
 * file each under ui/screens/.  Invariant: nothing is drawn outside the
 * terminal whatever its size (below 40x10 only a notice); every figure
 * drawn is read from the session or the scenario's published data.
 */
#include <curses.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "ui/console.h"
#include "ui/screens/capacity.h"
#include "ui/term.h"

void mb_console_status(struct mb_console *c, bool error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->status, sizeof(c->status), fmt, ap);
	va_end(ap);
	c->status_error = error;
}

void mb_console_reload_runs(struct mb_console *c)
{
	struct mb_run_list *l = NULL;
	if (mb_run_list_load(mb_session_params(c->s)->data_dir, &l) == 0) {
		mb_run_list_destroy(c->runs);
		c->runs = l;
	}
}

void mb_console_quit(struct mb_console *c)
{
	c->quitting = true;
	c->confirm_quit = false;
	mb_session_stop_all(c->s);
	mb_capscreen_stop(c);
	mb_console_status(c, false, "stopping every child, then quitting");
}

static void fmt_hms(double s, char *buf, size_t len)
{
	long t = (long)s;
	snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

/* ---- title and bars ---- */

static void draw_title(struct mb_console *c)
{
	const struct mb_scenario *sc = mb_session_scenario(c->s);
	char buf[512], el[32];
	enum mb_session_state st = mb_session_state(c->s);
	fmt_hms(mb_session_elapsed(c->s), el, sizeof(el));
	bool run = st == MB_SS_RUNNING || st == MB_SS_STOPPING;
	char full[512];
	snprintf(full, sizeof(full),
		 " mailbench | %s | %s | load %s%s%s%s | %d users x%g accel scale %g",
		 mb_screen(c->screen)->name, sc ? sc->title : "no scenario",
		 mb_session_state_str(st), run ? " " : "", run ? el : "",
		 mb_session_stress_active(c->s) ? " | storage test on" : "", mb_session_users(c->s),
		 mb_session_accel(c->s), mb_session_scale(c->s));
	if ((int)strlen(full) <= COLS || !sc)
		snprintf(buf, sizeof(buf), "%s", full);
	else /* narrow: the same facts, shorter */
		snprintf(buf, sizeof(buf), " %s | S%d %s | load %s%s%s%s | %d users x%g sc %g",
			 mb_screen(c->screen)->name, sc->number, sc->name, mb_session_state_str(st),
			 run ? " " : "", run ? el : "",
			 mb_session_stress_active(c->s) ? " | stor.test" : "",
			 mb_session_users(c->s), mb_session_accel(c->s), mb_session_scale(c->s));
	attrset(mb_term_attr(MB_ST_TITLE));
	move(0, 0);
	for (int i = 0; i < COLS; i++)
		addch(' ');
	mvaddnstr(0, 0, buf, COLS);
	attrset(A_NORMAL);
}

static void draw_bottom(struct mb_console *c)
{
	const char *msg = c->status[0] ? c->status : mb_session_message(c->s);
	int st = c->status_error || (!c->status[0] && mb_session_failed(c->s)) ? MB_ST_WARN
									       : MB_ST_NORMAL;
	move(LINES - 2, 0);
	clrtoeol();
	mb_w_text(LINES - 2, 0, COLS, st, msg);
	mb_keys_bar(c, LINES - 1);
}

void mb_console_draw(struct mb_console *c)
{
	erase();
	if (LINES < 10 || COLS < 40) {
		mvaddnstr(0, 0, "mailbench: terminal too small (at least 40x10)", COLS);
		refresh();
		return;
	}
	draw_title(c);
	int top = 1, h = LINES - 3;
	mb_screen(c->screen)->draw(c, top, h);
	draw_bottom(c);
	if (c->show_failure && !c->confirm_quit && !c->quitting) {
		const char *l[12];
		size_t n = 0;
		static char tail[2048];
		snprintf(tail, sizeof(tail), "%s", mb_session_failure_detail(c->s));
		l[n++] = mb_session_message(c->s);
		l[n++] = "";
		l[n++] = tail[0] ? "last lines of its error output:" : "(no error output)";
		/* the last lines, at most 8 */
		char *lines[64];
		size_t k = 0;
		for (char *p = strtok(tail, "\n"); p && k < 64; p = strtok(NULL, "\n"))
			lines[k++] = p;
		for (size_t i = k > 8 ? k - 8 : 0; i < k; i++)
			l[n++] = lines[i];
		l[n++] = "(any key closes; the run is marked failed)";
		mb_w_dialog("run failed", l, n, 50);
	}
	if (c->fault_menu) {
		static const char *const l[] = {
		    "Inject a fault into the running load (recovery is measured):",
		    "1  kill -9 the store (restarted, it recovers from its logs)",
		    "2  disk full (fill the data directory's file system for 20 s)",
		    "3  log I/O errors for 10 s     4  slow disk (+20 ms) for 10 s",
		    "5  the store stops reading for 5 s",
		    "6  database file I/O errors (reads, writes) for 10 s",
		    "7  disk below the store's free-space reserve for 10 s   Esc: cancel"};
		mb_w_dialog("fault", l, 7, 50);
	}
	if (c->confirm_reinit) {
		static const char *const l[] = {
		    "Re-initialise the data directory from scratch?",
		    "Its mailboxes and runs' data are replaced (init --restart),",
		    "then the store and the load start.  (y/n)"};
		mb_w_dialog("re-initialise", l, 3, 40);
	}
	if (c->confirm_quit) {
		static const char *const l[] = {"A run is active.",
						"Stop every child and quit? (y/n)"};
		mb_w_dialog("quit", l, 2, 40);
	}
	if (c->quitting) {
		char line[96];
		snprintf(line, sizeof(line), "%d child process(es) still stopping...",
			 mb_session_children(c->s));
		const char *l[] = {line};
		mb_w_dialog("quitting", l, 1, 40);
	}
	refresh();
}

void mb_console_key(struct mb_console *c, int key)
{
	if (c->quitting)
		return;
	if (c->show_failure) {
		c->show_failure = false;
		return;
	}
	if (c->confirm_reinit) {
		c->confirm_reinit = false;
		if (key == 'y' || key == 'Y') {
			int rc = mb_session_reinit_and_start(c->s);
			if (rc)
				mb_console_status(c, true, "cannot re-initialise: %s",
						  mb_strerror(rc));
			else
				c->screen = MB_SCR_overview;
		}
		return;
	}
	if (c->fault_menu) {
		static const char *const specs[] = {
		    "kill-store@0s", "disk-full@0s",	   "io-error@0s", "slow-disk@0s",
		    "net-drop@0s",   "io-error@0s:eio:db", "low-disk@0s"};
		c->fault_menu = false;
		if (key >= '1' && key <= '7') {
			char err[256];
			if (mb_session_inject_fault(c->s, specs[key - '1'], err, sizeof(err)))
				mb_console_status(c, true, "%s", err);
			else
				mb_console_status(c, false,
						  "fault injected: %.*s (recovery in the run's "
						  "summary)",
						  (int)strcspn(specs[key - '1'], "@"),
						  specs[key - '1']);
		}
		return;
	}
	if (c->confirm_quit) {
		if (key == 'y' || key == 'Y')
			mb_console_quit(c);
		else if (key == 'n' || key == 'N' || key == 27 || key == 'q')
			c->confirm_quit = false;
		return;
	}
	if (c->input.active) {
		int r = mb_input_key(&c->input, key);
		if (r == 1 && c->input_done)
			c->input_done(c);
		if (r != 0) {
			c->input_target = MB_IN_NONE;
			c->input_done = NULL;
		}
		return;
	}
	if (mb_keys_dispatch(c, key))
		return;
	const struct mb_screen *s = mb_screen(c->screen);
	if (s->on_key)
		s->on_key(c, key);
}

void mb_console_free_screens(struct mb_console *c)
{
	for (int i = 0; i < MB_SCR_COUNT; i++)
		if (mb_screen((enum mb_screen_id)i)->destroy)
			mb_screen((enum mb_screen_id)i)->destroy(c);
}
