/* term.c: terminal set-up, styles, keys and restore-on-every-exit (see
 * term.h).  Invariant: `active` is true exactly while curses owns the
 * terminal; the saved termios is the one from before initscr(). */
#include "ui/term.h"

#include <curses.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "core/error.h"

static volatile sig_atomic_t active;
static bool color_on, utf8_on, handlers_set;
static struct termios saved_tio;
static bool saved_ok;
static void (*crash_hook)(void);
static int attrs[MB_ST_COUNT];

void mb_term_set_crash_hook(void (*hook)(void)) { crash_hook = hook; }

static void raw_restore(void)
{
	/* async-signal-safe: leave the alternate screen, show the cursor,
	 * reset attributes, restore the line discipline */
	static const char seq[] = "\033[0m\033[?1049l\033[?25h\r\n";
	if (write(STDOUT_FILENO, seq, sizeof(seq) - 1) < 0) {
		/* nothing more can be done */
	}
	if (saved_ok)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
}

static void fatal_handler(int sig)
{
	if (crash_hook)
		crash_hook();
	if (active) {
		active = 0;
		raw_restore();
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void at_exit(void)
{
	if (crash_hook)
		crash_hook();
	mb_term_end();
}

static void install_handlers(void)
{
	if (handlers_set)
		return;
	handlers_set = true;
	static const int sigs[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = fatal_handler;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESETHAND;
		sigaction(sigs[i], &sa, NULL);
	}
	/* SIGTERM, SIGINT and SIGHUP are handled by the console's event loop
	 * (uv_signal: a clean stop); until it runs, the same fatal path. */
	static const int soft[] = {SIGTERM, SIGINT, SIGHUP};
	for (size_t i = 0; i < sizeof(soft) / sizeof(soft[0]); i++) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = fatal_handler;
		sigemptyset(&sa.sa_mask);
		sigaction(soft[i], &sa, NULL);
	}
	atexit(at_exit);
}

int mb_term_init(bool want_color)
{
	setlocale(LC_ALL, "");
	const char *cs = nl_langinfo(CODESET);
	utf8_on = cs && (!strcmp(cs, "UTF-8") || !strcmp(cs, "utf8"));
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return MB_EUNSUPPORTED;
	saved_ok = tcgetattr(STDIN_FILENO, &saved_tio) == 0;
	install_handlers();
	if (!initscr())
		return MB_EUNSUPPORTED;
	active = 1;
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	intrflush(stdscr, FALSE);
	set_escdelay(25);
	curs_set(0);
	const char *nc = getenv("NO_COLOR");
	color_on = want_color && !(nc && *nc) && has_colors();
	if (color_on) {
		start_color();
		use_default_colors();
		init_pair(1, COLOR_BLACK, COLOR_CYAN); /* title */
		init_pair(2, COLOR_CYAN, -1);	       /* head */
		init_pair(3, COLOR_GREEN, -1);	       /* pass */
		init_pair(4, COLOR_RED, -1);	       /* fail */
		init_pair(5, COLOR_YELLOW, -1);	       /* warn */
		init_pair(6, COLOR_BLACK, COLOR_CYAN); /* selected */
		init_pair(7, COLOR_WHITE, -1);	       /* fkey */
		init_pair(8, COLOR_BLACK, COLOR_CYAN); /* flabel */
		init_pair(9, COLOR_BLUE, -1);	       /* dim */
		init_pair(10, COLOR_WHITE, -1);	       /* live */
		attrs[MB_ST_NORMAL] = A_NORMAL;
		attrs[MB_ST_TITLE] = COLOR_PAIR(1);
		attrs[MB_ST_HEAD] = COLOR_PAIR(2) | A_BOLD;
		attrs[MB_ST_PASS] = COLOR_PAIR(3);
		attrs[MB_ST_FAIL] = COLOR_PAIR(4) | A_BOLD;
		attrs[MB_ST_WARN] = COLOR_PAIR(5) | A_BOLD;
		attrs[MB_ST_SEL] = COLOR_PAIR(6);
		attrs[MB_ST_FKEY] = COLOR_PAIR(7) | A_BOLD;
		attrs[MB_ST_FLABEL] = COLOR_PAIR(8);
		attrs[MB_ST_DIM] = COLOR_PAIR(9) | A_BOLD;
		attrs[MB_ST_LIVE] = COLOR_PAIR(10) | A_BOLD;
	} else {
		attrs[MB_ST_NORMAL] = A_NORMAL;
		attrs[MB_ST_TITLE] = A_REVERSE;
		attrs[MB_ST_HEAD] = A_BOLD | A_UNDERLINE;
		attrs[MB_ST_PASS] = A_NORMAL;
		attrs[MB_ST_FAIL] = A_BOLD | A_UNDERLINE;
		attrs[MB_ST_WARN] = A_BOLD;
		attrs[MB_ST_SEL] = A_REVERSE;
		attrs[MB_ST_FKEY] = A_BOLD;
		attrs[MB_ST_FLABEL] = A_REVERSE;
		attrs[MB_ST_DIM] = A_NORMAL;
		attrs[MB_ST_LIVE] = A_BOLD;
	}
	return 0;
}

void mb_term_end(void)
{
	if (!active)
		return;
	active = 0;
	curs_set(1);
	endwin();
	if (saved_ok)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
}

bool mb_term_active(void) { return active != 0; }

bool mb_term_color(void) { return color_on; }

bool mb_term_utf8(void) { return utf8_on; }

int mb_term_attr(enum mb_style st)
{
	return (unsigned)st < MB_ST_COUNT ? attrs[st] : (int)A_NORMAL;
}

int mb_term_key(void)
{
	if (!active)
		return -1;
	int ch = getch();
	return ch == ERR ? -1 : ch;
}

void mb_term_resize(void)
{
	struct winsize ws;
	if (!active)
		return;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
		resizeterm(ws.ws_row, ws.ws_col);
	clear();
}
