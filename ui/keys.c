/* keys.c: the console's key dispatch, function bar and screen switching,
 * all generated from MB_KEY_TABLE (ui/screen.h), and the actions of its
 * ACTION rows (start/stop the load and the storage test, Tab, Up/Down,
 * the fault menu, quit).
 *
 * A key is looked up in the table first (key or alt, in table order): a
 * SCREEN row shows its screen, an ACTION row runs mb_key_<id>.  A key no
 * row takes goes to the current screen's on_key.  Invariant: nothing here
 * names a screen's own keys; the help screen, the bar and the dispatch
 * cannot disagree because they read the same rows.
 */
#include "ui/screen.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "report/capacity.h"
#include "ui/console.h"
#include "ui/term.h"

struct mb_key {
	int key, alt;
	const char *keys; /* as the help screen names them */
	int bar;	  /* position on the function bar, 0: not there */
	const char *label, *label_short;
	bool (*on)(const struct mb_console *c);
	const char *help;
	int screen; /* SCREEN rows: the id; ACTION rows: -1 */
	void (*run)(struct mb_console *c);
};

static bool load_on(const struct mb_console *c) { return mb_session_load_active(c->s); }
static bool stress_on(const struct mb_console *c) { return mb_session_stress_active(c->s); }

#define KEY_DECL_(id, key, alt, keys, bar, label, shrt, on, help)                                  \
	static void mb_key_##id(struct mb_console *c);
#define SCREEN_NONE_(...)
MB_KEY_TABLE(SCREEN_NONE_, KEY_DECL_)
#undef KEY_DECL_

#define SCREEN_ROW_(id, key, alt, keys, bar, label, shrt, help)                                    \
	{key, alt, keys, bar, label, shrt, NULL, help, MB_SCR_##id, NULL},
#define ACTION_ROW_(id, key, alt, keys, bar, label, shrt, on, help)                                \
	{key, alt, keys, bar, label, shrt, on, help, -1, mb_key_##id},
static const struct mb_key key_table[] = {MB_KEY_TABLE(SCREEN_ROW_, ACTION_ROW_)};
#undef SCREEN_ROW_
#undef ACTION_ROW_
#define NKEYS (int)(sizeof(key_table) / sizeof(key_table[0]))

#define SCREEN_PTR_(id, ...) &mb_screen_##id,
static const struct mb_screen *const screen_table[MB_SCR_COUNT] = {
    MB_KEY_TABLE(SCREEN_PTR_, SCREEN_NONE_)};
#undef SCREEN_PTR_

const struct mb_screen *mb_screen(enum mb_screen_id id)
{
	return screen_table[id < MB_SCR_COUNT ? id : MB_SCR_help];
}

void mb_screen_show(struct mb_console *c, enum mb_screen_id id)
{
	c->screen = id;
	if (mb_screen(id)->build)
		mb_screen(id)->build(c);
}

void mb_screen_move(struct mb_console *c, int d)
{
	const struct mb_screen *s = mb_screen(c->screen);
	int n = s->items ? s->items(c) : 0;
	if (n == 0) {
		c->scroll[c->screen] += d;
		if (c->scroll[c->screen] < 0)
			c->scroll[c->screen] = 0;
		if (c->scroll[c->screen] > 64)
			c->scroll[c->screen] = 64;
		return;
	}
	int sel = c->sel[c->screen] + d;
	if (sel < 0)
		sel = 0;
	if (sel >= n)
		sel = n - 1;
	c->sel[c->screen] = sel;
}

bool mb_key_row(int i, const char **keys, const char **help)
{
	if (i < 0 || i >= NKEYS)
		return false;
	*keys = key_table[i].keys;
	*help = key_table[i].help;
	return true;
}

/* "off|on" labels: the part that applies now. */
static void label_now(struct mb_console *c, const struct mb_key *k, bool wide, char *buf,
		      size_t len)
{
	const char *l = wide ? k->label : k->label_short;
	const char *bar = strchr(l, '|');
	if (!bar)
		snprintf(buf, len, "%s", l);
	else if (k->on && k->on(c))
		snprintf(buf, len, "%s", bar + 1);
	else
		snprintf(buf, len, "%.*s", (int)(bar - l), l);
}

void mb_keys_bar(struct mb_console *c, int y)
{
	/* full words when there is room; F3/F4 say what they will do */
	bool wide = COLS >= 110;
	struct mb_fkey fk[NKEYS];
	char name[NKEYS][16], label[NKEYS][32];
	size_t n = 0;
	for (int pos = 1; pos <= NKEYS; pos++)
		for (int i = 0; i < NKEYS; i++) {
			const struct mb_key *k = &key_table[i];
			if (k->bar != pos)
				continue;
			snprintf(name[n], sizeof(name[n]), "%.*s", (int)strcspn(k->keys, " "),
				 k->keys);
			label_now(c, k, wide, label[n], sizeof(label[n]));
			fk[n].key = name[n];
			fk[n].label = label[n];
			n++;
		}
	mb_w_funcbar(y, COLS, fk, n);
}

bool mb_keys_dispatch(struct mb_console *c, int key)
{
	for (int i = 0; i < NKEYS; i++) {
		const struct mb_key *k = &key_table[i];
		if (k->key != key && (k->alt == 0 || k->alt != key))
			continue;
		if (k->run)
			k->run(c);
		else
			mb_screen_show(c, (enum mb_screen_id)k->screen);
		return true;
	}
	return false;
}

/* ---- the ACTION rows ---- */

static void mb_key_load(struct mb_console *c)
{
	if (mb_session_load_active(c->s)) {
		mb_session_stop_load(c->s);
		return;
	}
	int rc = mb_session_start_load(c->s);
	if (rc)
		mb_console_status(c, true, "cannot start the load: %s", mb_session_message(c->s));
	else
		c->status[0] = '\0';
	c->screen = MB_SCR_overview;
}

static void mb_key_stress(struct mb_console *c)
{
	if (mb_session_stress_active(c->s)) {
		mb_session_stop_stress(c->s);
		return;
	}
	mb_session_set_stress_kind(c->s, MB_STRESS_FIXED);
	int rc = mb_session_start_stress(c->s, 0);
	if (rc)
		mb_console_status(c, true, "cannot start the storage test: %s", mb_strerror(rc));
	else
		c->status[0] = '\0';
	c->screen = MB_SCR_storage;
}

/* The Tab cycle: the screens in table order, the help screen left out. */
static void cycle(struct mb_console *c, int d)
{
	int n = MB_SCR_COUNT;
	int s = (int)c->screen;
	do
		s = (s + d + n) % n;
	while (s == MB_SCR_help);
	mb_screen_show(c, (enum mb_screen_id)s);
}

static void mb_key_next(struct mb_console *c) { cycle(c, 1); }
static void mb_key_prev(struct mb_console *c) { cycle(c, -1); }
static void mb_key_up(struct mb_console *c) { mb_screen_move(c, -1); }
static void mb_key_down(struct mb_console *c) { mb_screen_move(c, 1); }
static void mb_key_pgup(struct mb_console *c) { mb_screen_move(c, -10); }
static void mb_key_pgdn(struct mb_console *c) { mb_screen_move(c, 10); }
static void mb_key_resize(struct mb_console *c)
{
	(void)c;
	mb_term_resize();
}

static void mb_key_fault(struct mb_console *c)
{
	if (mb_session_state(c->s) == MB_SS_RUNNING)
		c->fault_menu = true;
	else
		mb_console_status(c, true, "f injects a fault into a running load (F3 starts it)");
}

static void mb_key_quit(struct mb_console *c)
{
	if (mb_session_load_active(c->s) || mb_session_stress_active(c->s) ||
	    (c->cap && mb_capacity_active(c->cap)))
		c->confirm_quit = true;
	else
		mb_console_quit(c);
}
