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
#include <getopt.h>
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
	if (c->quitting && mb_session_children(c->s) == 0)
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

static void console_usage(FILE *f)
{
	fprintf(f, "usage: mailbench [console] [OPTIONS]\n\n"
		   "The ncurses console: choose scenario 1 (online) or 2 (cached), start the\n"
		   "store and the load engine (F3) or the storage test (F4), and watch the\n"
		   "published comparison tables beside this run's live figures.\n\n");
	mb_runopts_help(f);
	fprintf(f,
		"      --no-color          monochrome (also when NO_COLOR is set)\n"
		"  -h, --help              this help\n\n"
		"Keys: F1/? help, F2/s scenario, F3/l load, F4/t storage test, F5/h thresholds,\n"
		"F6/r runs, Tab next screen, F10/q quit.\n");
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

int mb_cmd_console(int argc, char **argv)
{
	struct mb_session_params p;
	mb_session_params_default(&p);
	bool color = true;
	enum { O_NOCOLOR = 3000 };
	static const struct option extra[] = {{"no-color", no_argument, NULL, O_NOCOLOR},
					      {"help", no_argument, NULL, 'h'},
					      {NULL, 0, NULL, 0}};
	struct option opts[MB_RUNOPTS_MAX + 4];
	mb_runopts_table(opts, extra);
	optind = 1;
	opterr = 0;
	int ch;
	while ((ch = getopt_long(argc, argv, ":" MB_RUNOPTS_SHORT "h", opts, NULL)) != -1) {
		int rc = mb_runopts_parse("console", ch, optarg, &p);
		if (rc == 0)
			continue;
		if (rc != MB_ENOTFOUND)
			return MB_EXIT_USAGE;
		switch (ch) {
		case O_NOCOLOR:
			color = false;
			break;
		case 'h':
			console_usage(stdout);
			return MB_EXIT_OK;
		case ':':
			fprintf(stderr, "mailbench console: %s needs a value\n", argv[optind - 1]);
			return MB_EXIT_USAGE;
		default:
			fprintf(stderr, "mailbench console: unknown option '%s'\n",
				argv[optind - 1]);
			console_usage(stderr);
			return MB_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "mailbench console: unexpected argument '%s'\n", argv[optind]);
		return MB_EXIT_USAGE;
	}
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
	mb_session_destroy(c->s);
	uv_run(&a->loop, UV_RUN_DEFAULT);
	uv_loop_close(&a->loop);
	mb_run_list_destroy(c->runs);
	free(c->pinned);
	free(a);
	if (failed) {
		fprintf(stderr, "mailbench console: the last run failed: %s\n", last);
	}
	return MB_EXIT_OK;
}
