/* cmd_console.c: `mailbench console` (and `mailbench` with no command):
 * the ncurses console on a libuv loop.  A uv_poll on stdin reads keys
 * (nodelay: never a blocking getch()), a uv_timer redraws at 1 Hz (and a
 * key or a session change redraws at once, at most every 50 ms), a
 * uv_signal handles SIGWINCH, and SIGTERM/SIGINT/SIGHUP stop the children
 * and quit.  Takes the options of `mailbench run` that preselect the run.
 * Invariant: the terminal is restored and no child is left on every exit
 * path (quit, signal, crash: see ui/term.h and report/supervisor.h). */
#include "config.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "cmd.h"
#include "core/error.h"
#include "report/runopts.h"
#include "report/supervisor.h"
#include "ui/console.h"
#include "ui/pins.h"
#include "ui/screens/capacity.h"
#include "ui/storcols.h"
#include "ui/term.h"

#define REDRAW_MS 1000
#define MIN_REDRAW_MS 50

struct app {
	uv_loop_t loop;
	struct mb_console c;
	uv_poll_t in;
	uv_timer_t redraw, soon, poll;
	uv_signal_t winch, term, intr, hup;
	bool dirty;
	uint64_t last_draw;
	enum mb_session_state last_state;
	bool last_stress;
};

static void draw(struct app *a)
{
	mb_console_draw(&a->c);
	a->last_draw = uv_now(&a->loop);
	a->dirty = false;
}

static void on_soon(uv_timer_t *t) { draw(t->data); }

static void want_draw(struct app *a)
{
	if (a->dirty)
		return;
	a->dirty = true;
	uint64_t since = uv_now(&a->loop) - a->last_draw;
	uv_timer_start(&a->soon, on_soon, since >= MIN_REDRAW_MS ? 0 : MIN_REDRAW_MS - since, 0);
}

static void on_redraw(uv_timer_t *t) { draw(t->data); }

static void on_stdin(uv_poll_t *p, int status, int events)
{
	struct app *a = p->data;
	(void)events;
	if (status < 0) {
		uv_poll_stop(p);
		return;
	}
	int k, n = 0;
	while ((k = mb_term_key()) != -1 && n++ < 64)
		mb_console_key(&a->c, k);
	want_draw(a);
}

static void on_poll(uv_timer_t *t)
{
	struct app *a = t->data;
	struct mb_console *c = &a->c;
	if (c->restart_threads && !mb_session_stress_active(c->s)) {
		int n = c->restart_threads;
		c->restart_threads = 0;
		mb_session_start_stress(c->s, n);
		want_draw(a);
	}
	if (c->quitting && mb_session_children(c->s) == 0 && !mb_capscreen_stop(c))
		uv_stop(&a->loop);
}

static void on_winch(uv_signal_t *h, int sig)
{
	struct app *a = h->data;
	(void)sig;
	mb_term_resize();
	draw(a);
}

static void on_quit_signal(uv_signal_t *h, int sig)
{
	struct app *a = h->data;
	(void)sig;
	if (a->c.quitting) {
		mb_sup_emergency_kill();
		uv_stop(&a->loop);
		return;
	}
	mb_console_quit(&a->c);
	want_draw(a);
}

/* Figures change every second: the 1 Hz redraw shows them.  A change of
 * state (or of a child) redraws at once. */
static void on_change(void *arg, struct mb_session *s)
{
	struct app *a = arg;
	enum mb_session_state st = mb_session_state(s);
	bool stress = mb_session_stress_active(s);
	if (st == a->last_state && stress == a->last_stress)
		return;
	if (st != a->last_state && (st == MB_SS_DONE || st == MB_SS_FAILED))
		mb_console_reload_runs(&a->c);
	if (a->last_stress && !stress)
		mb_stor_capture(&a->c); /* its result stays as a column */
	if (mb_session_failed(s) && !a->c.quitting &&
	    (st != a->last_state || stress != a->last_stress))
		a->c.show_failure = true;
	a->last_state = st;
	a->last_stress = stress;
	want_draw(a);
}

static void on_message(void *arg, struct mb_session *s, const char *msg)
{
	struct app *a = arg;
	(void)s;
	(void)msg;
	a->c.status[0] = '\0'; /* the session's message shows */
	want_draw(a);
}

static void close_all(struct app *a)
{
	uv_close((uv_handle_t *)&a->in, NULL);
	uv_close((uv_handle_t *)&a->redraw, NULL);
	uv_close((uv_handle_t *)&a->soon, NULL);
	uv_close((uv_handle_t *)&a->poll, NULL);
	uv_close((uv_handle_t *)&a->winch, NULL);
	uv_close((uv_handle_t *)&a->term, NULL);
	uv_close((uv_handle_t *)&a->intr, NULL);
	uv_close((uv_handle_t *)&a->hup, NULL);
}

struct console_args {
	struct mb_session_params p; /* first: MB_RUNOPTS, and the editor's fields */
	bool no_color;
};

static int console_main(void *args, int argc, char **argv)
{
	struct console_args *ca = args;
	struct mb_session_params p = ca->p;
	bool color = !ca->no_color;
	(void)argc;
	(void)argv;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr,
			"mailbench console: needs a terminal (use `mailbench run` for scripts)\n");
		return MB_EXIT_USAGE;
	}

	struct app *a = calloc(1, sizeof(*a));
	if (!a || uv_loop_init(&a->loop)) {
		free(a);
		fprintf(stderr, "mailbench console: cannot create the event loop\n");
		return MB_EXIT_RUNTIME;
	}
	struct mb_console *c = &a->c;
	c->loop = &a->loop;
	static const struct mb_session_events ev = {on_change, on_message};
	if (mb_session_create(&a->loop, &ev, a, &c->s)) {
		fprintf(stderr, "mailbench console: cannot create the session\n");
		uv_loop_close(&a->loop);
		free(a);
		return MB_EXIT_RUNTIME;
	}
	struct mb_cfg_error err;
	memset(&err, 0, sizeof(err));
	if (mb_session_configure(c->s, &p, &err)) {
		char msg[8192];
		mb_cfg_error_format(&err, msg, sizeof(msg));
		fprintf(stderr, "mailbench console: %s\n", msg);
		mb_session_destroy(c->s);
		uv_run(&a->loop, UV_RUN_DEFAULT);
		uv_loop_close(&a->loop);
		free(a);
		return MB_EXIT_USAGE;
	}
	const struct mb_scenario *sc = mb_session_scenario(c->s);
	c->diff_col = sc->column_count > 0 ? sc->column_count - 1 : 0;
	mb_console_reload_runs(c);

	mb_term_set_crash_hook(mb_sup_emergency_kill);
	if (mb_term_init(color)) {
		fprintf(stderr, "mailbench console: cannot initialise the terminal\n");
		mb_session_destroy(c->s);
		uv_run(&a->loop, UV_RUN_DEFAULT);
		uv_loop_close(&a->loop);
		free(a);
		return MB_EXIT_RUNTIME;
	}
	mb_console_status(c, false, "%s: F3 starts the load, F4 the storage test, F1 help",
			  COLS >= 100 ? sc->title : sc->name);

	uv_poll_init(&a->loop, &a->in, STDIN_FILENO);
	uv_timer_init(&a->loop, &a->redraw);
	uv_timer_init(&a->loop, &a->soon);
	uv_timer_init(&a->loop, &a->poll);
	uv_signal_init(&a->loop, &a->winch);
	uv_signal_init(&a->loop, &a->term);
	uv_signal_init(&a->loop, &a->intr);
	uv_signal_init(&a->loop, &a->hup);
	a->in.data = a->redraw.data = a->soon.data = a->poll.data = a;
	a->winch.data = a->term.data = a->intr.data = a->hup.data = a;
	uv_poll_start(&a->in, UV_READABLE, on_stdin);
	uv_timer_start(&a->redraw, on_redraw, REDRAW_MS, REDRAW_MS);
	uv_timer_start(&a->poll, on_poll, 200, 200);
	uv_signal_start(&a->winch, on_winch, SIGWINCH);
	uv_signal_start(&a->term, on_quit_signal, SIGTERM);
	uv_signal_start(&a->intr, on_quit_signal, SIGINT);
	uv_signal_start(&a->hup, on_quit_signal, SIGHUP);
	draw(a);

	uv_run(&a->loop, UV_RUN_DEFAULT);

	mb_term_end();
	bool failed = mb_session_failed(c->s);
	char last[2048];
	snprintf(last, sizeof(last), "%s", mb_session_message(c->s));
	close_all(a);
	mb_console_free_screens(c);
	mb_session_destroy(c->s);
	uv_run(&a->loop, UV_RUN_DEFAULT);
	uv_loop_close(&a->loop);
	mb_run_list_destroy(c->runs);
	mb_pins_free(c);
	free(a);
	if (failed) {
		fprintf(stderr, "mailbench console: the last run failed: %s\n", last);
	}
	return MB_EXIT_OK;
}

#define CA struct console_args
static const struct mb_opt console_opts[] = {
    MB_RUNOPTS(CA),
    {.path = "no-color",
     .flag = "no-color",
     .type = MB_OT_FLAG,
     .off = offsetof(CA, no_color),
     .help = "monochrome (also when NO_COLOR is set)"},
};

const struct mb_opt *mb_console_fields(int *n)
{
	*n = (int)(sizeof(console_opts) / sizeof(console_opts[0]));
	return console_opts;
}

const struct mb_cmd_entry mb_cmd_console_entry = {
    .name = "console",
    .usage = "[-s SCENARIO] [--users N] [OPTIONS]",
    .summary = "the ncurses console (default)",
    .about = "The ncurses console (the default command): choose scenario 1 (online) or 2\n"
	     "(cached), start the store and the load engine (F3) or the storage test (F4), and\n"
	     "watch the published comparison tables beside this run's live figures.",
    .epilog = "Keys: F1 or ? help, F2 or s scenario, F3 or l start/stop the load (starting the\n"
	      "store first, initialising the data directory if needed), F4 or t start/stop the\n"
	      "storage test (+ and - change its thread count), F5 or h thresholds, F6 or r saved\n"
	      "runs (Enter pins one as a column), < and > pick the published column to compare\n"
	      "with, f inject a fault into the running load (kill the store, disk full, I/O\n"
	      "errors, slow disk, network drop; recovery goes into the run's summary), T the\n"
	      "data directory's topology (storage groups, databases, users per database), Tab and\n"
	      "arrows to move, F10 or q quit (asks while a run is active).\n"
	      "Quitting stops every child process.",
    .opts = console_opts,
    .nopts = (int)(sizeof(console_opts) / sizeof(console_opts[0])),
    .args_size = sizeof(struct console_args),
    .flags = MB_CMD_DEFAULT,
    .init = mb_runopts_init,
    .run = console_main,
};
