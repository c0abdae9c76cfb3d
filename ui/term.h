/* term.h: the terminal layer of the console (ncursesw).
 *
 * Init puts the terminal in cbreak/noecho/nodelay mode with keypad keys and
 * no cursor; colours are used when the terminal has them and NO_COLOR is
 * unset (https://no-color.org), otherwise every colour pair falls back to a
 * monochrome attribute (bold, reverse, underline), so meaning never rests
 * on colour alone.  Invariant: the terminal is restored on every exit path:
 * mb_term_end(), atexit, and the handlers of SIGSEGV, SIGABRT, SIGBUS,
 * SIGFPE, SIGTERM, SIGINT and SIGHUP (the fatal ones write the reset
 * sequences and restore the saved termios with async-signal-safe calls,
 * run the crash hook, then re-raise).  Keys are read without blocking.
 */
#ifndef MB_UI_TERM_H
#define MB_UI_TERM_H

#include <stdbool.h>

enum mb_style {
	MB_ST_NORMAL = 0,
	MB_ST_TITLE,  /* title bar */
	MB_ST_HEAD,   /* table heading */
	MB_ST_PASS,   /* row within its threshold */
	MB_ST_FAIL,   /* row outside its threshold */
	MB_ST_WARN,   /* warnings (saturation, errors) */
	MB_ST_SEL,    /* selected line */
	MB_ST_FKEY,   /* function bar key */
	MB_ST_FLABEL, /* function bar label */
	MB_ST_DIM,    /* published, secondary text */
	MB_ST_LIVE,   /* live figures */
	MB_ST_COUNT
};

/* Initialise; colour only if wanted, available and NO_COLOR unset. */
int mb_term_init(bool want_color);
/* Restore the terminal (idempotent). */
void mb_term_end(void);
bool mb_term_active(void);
bool mb_term_color(void);
bool mb_term_utf8(void);
/* The curses attribute of a style (colour pair or monochrome fallback). */
int mb_term_attr(enum mb_style st);
/* Next key, or -1 when none is pending (never blocks). */
int mb_term_key(void);
/* Resize curses to the terminal's current size (after SIGWINCH). */
void mb_term_resize(void);
/* Called from fatal signal handlers and atexit, before the terminal is
 * restored (must be async-signal-safe, e.g. mb_sup_emergency_kill). */
void mb_term_set_crash_hook(void (*hook)(void));

#endif
