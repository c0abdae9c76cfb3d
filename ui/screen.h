/* screen.h: a console screen as an object, and the console's key table.
 *
 * A screen (htop's Panel) is a const struct mb_screen defined in its own
 * file under ui/screens/: its title, the help line of its own keys, build
 * (called when the screen becomes the current one: re-read what it shows),
 * draw (lines top .. top+h-1, never outside), on_key (its own keys, after
 * the key table's), items (how many rows Up/Down select; NULL: Up/Down
 * scroll) and destroy (free what build kept in c->state[id]).
 *
 * MB_KEY_TABLE is the one key table (tmux's key tables): every key of the
 * console, in the help screen's order.  ui/keys.c generates the key
 * dispatch, the function bar and the help screen's key lines from it, and
 * the order of the SCREEN rows is the Tab cycle (the help screen is left
 * out of it).  Adding a screen is one file under ui/screens/ and one
 * SCREEN row here.
 *
 *   SCREEN(id, key, alt, keys, bar, label, short, help)
 *	 the key (or alt) shows screen mb_screen_<id>
 *   ACTION(id, key, alt, keys, bar, label, short, on, help)
 *	 the key (or alt) runs mb_key_<id>(c) (ui/keys.c)
 *
 * keys: how the help screen names the keys (NULL: not listed); bar: the
 * position on the function bar, 1.. (0: not on it); label/short: its text
 * when the terminal is wide / narrow; "off|on" labels show the part after
 * '|' while on(c) holds (F3 says what it will do); help: the help line.
 * Keys are matched in table order; a screen's own keys come after.
 */
#ifndef MB_UI_SCREEN_H
#define MB_UI_SCREEN_H

#include <stdbool.h>

#define MB_KEY_TABLE(SCREEN, ACTION)                                                               \
	SCREEN(overview, 'o', 27, "o", 0, NULL, NULL,                                              \
	       "overview: the published comparison tables, live")                                  \
	SCREEN(storage, 'g', 0, "g", 0, NULL, NULL, "storage test beside the published rows")      \
	SCREEN(actions, 'a', 0, "a", 0, NULL, NULL, "actions: done, failed, percentiles")          \
	SCREEN(thresholds, KEY_F(5), 'h', "F5 or h", 5, "Thresholds", "Thresh",                    \
	       "thresholds (Enter edits)")                                                         \
	SCREEN(runs, KEY_F(6), 'r', "F6 or r", 6, "Runs", "Runs", "saved runs (Enter pins)")       \
	SCREEN(capacity, 'c', 0, "c", 0, NULL, NULL, "capacity search")                            \
	SCREEN(scenario, KEY_F(2), 's', "F2 or s", 2, "Scenario", "Scenar",                        \
	       "scenario and parameters")                                                          \
	SCREEN(topology, 'T', 0, "T", 0, NULL, NULL,                                               \
	       "topology of the data directory: storage groups, databases, users")                 \
	SCREEN(help, KEY_F(1), '?', "F1 or ?", 1, "Help", "Help", "this help")                     \
	ACTION(load, KEY_F(3), 'l', "F3 or l", 3, "Start load|Stop load", "Load|StopLd", load_on,  \
	       "start/stop the load (init if needed, store first, then load)")                     \
	ACTION(stress, KEY_F(4), 't', "F4 or t", 4, "Storage test|Stop storage", "Storag|StopSt",  \
	       stress_on, "start/stop the storage test")                                           \
	ACTION(next, '\t', 0, "Tab", 7, "Next screen", "Screen", NULL,                             \
	       "next screen (Shift-Tab: the one before)")                                          \
	ACTION(prev, KEY_BTAB, 0, NULL, 0, NULL, NULL, NULL, NULL)                                 \
	ACTION(up, KEY_UP, 'k', "Up/Down", 0, NULL, NULL, NULL,                                    \
	       "select, scroll (also k/j; PgUp/PgDn by 10)")                                       \
	ACTION(down, KEY_DOWN, 'j', NULL, 0, NULL, NULL, NULL, NULL)                               \
	ACTION(pgup, KEY_PPAGE, 0, NULL, 0, NULL, NULL, NULL, NULL)                                \
	ACTION(pgdn, KEY_NPAGE, 0, NULL, 0, NULL, NULL, NULL, NULL)                                \
	ACTION(fault, 'f', 0, "f", 0, NULL, NULL, NULL,                                            \
	       "inject a fault into the running load (kill the store, disk full, I/O errors, "     \
	       "slow disk, network drop); recovery goes in the summary")                           \
	ACTION(quit, KEY_F(10), 'q', "F10 or q", 8, "Quit", "Quit", NULL,                          \
	       "quit (asks while a run is active); Esc closes a dialog")                           \
	ACTION(resize, KEY_RESIZE, 0, NULL, 0, NULL, NULL, NULL, NULL)

enum mb_screen_id {
#define MB_SCR_ENUM_(id, ...) MB_SCR_##id,
#define MB_SCR_SKIP_(...)
	MB_KEY_TABLE(MB_SCR_ENUM_, MB_SCR_SKIP_) MB_SCR_COUNT
#undef MB_SCR_ENUM_
};

struct mb_console;

struct mb_screen {
	const char *name; /* the title bar's */
	const char *help; /* its own keys, for the help screen (NULL: none) */
	void (*build)(struct mb_console *c);
	void (*draw)(struct mb_console *c, int top, int h);
	bool (*on_key)(struct mb_console *c, int key); /* true: the key was its */
	int (*items)(struct mb_console *c);
	void (*destroy)(struct mb_console *c);
};

#define MB_SCR_DECL_(id, ...) extern const struct mb_screen mb_screen_##id;
MB_KEY_TABLE(MB_SCR_DECL_, MB_SCR_SKIP_)
#undef MB_SCR_DECL_

/* The screen object of an id. */
const struct mb_screen *mb_screen(enum mb_screen_id id);
/* Make id the current screen (its build runs). */
void mb_screen_show(struct mb_console *c, enum mb_screen_id id);
/* Move the selection (or the scroll) of the current screen by d. */
void mb_screen_move(struct mb_console *c, int d);

/* The key table as the help screen reads it: row i's keys and help line
 * (false past the last row; *keys NULL when the row is not listed). */
bool mb_key_row(int i, const char **keys, const char **help);
/* Run the table's row for key: false when no row takes it. */
bool mb_keys_dispatch(struct mb_console *c, int key);
/* Draw the function bar on line y (the bar rows in position order). */
void mb_keys_bar(struct mb_console *c, int y);

#endif
