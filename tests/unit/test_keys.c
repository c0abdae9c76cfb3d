/* test_keys.c: unit tests of the console's key table and screen objects
 * (ui/screen.h): every screen of the table has an object that draws and a
 * title; no key or alternative is taken by two rows; function bar places
 * are distinct; every row the help screen lists has a help line; and the
 * generated dispatch shows a SCREEN row's screen and runs Tab's cycle
 * (which leaves the help screen out).  No terminal is needed: nothing here
 * draws. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <curses.h>
#include <string.h>

#include "ui/console.h"
#include "ui/screen.h"

struct row {
	int key, alt, bar;
	const char *keys, *help;
};

#define S_(id, key, alt, keys, bar, label, shrt, help) {key, alt, bar, keys, help},
#define A_(id, key, alt, keys, bar, label, shrt, on, help) {key, alt, bar, keys, help},
static const struct row rows[] = {MB_KEY_TABLE(S_, A_)};
#define NROWS (int)(sizeof(rows) / sizeof(rows[0]))

static void test_screens(void **state)
{
	(void)state;
	for (int i = 0; i < MB_SCR_COUNT; i++) {
		const struct mb_screen *s = mb_screen((enum mb_screen_id)i);
		assert_non_null(s);
		assert_non_null(s->name);
		assert_non_null(s->draw);
	}
}

static void test_unique_keys(void **state)
{
	(void)state;
	for (int i = 0; i < NROWS; i++)
		for (int j = 0; j < NROWS; j++) {
			if (i == j)
				continue;
			assert_int_not_equal(rows[i].key, rows[j].key);
			if (rows[i].alt)
				assert_int_not_equal(rows[i].alt, rows[j].key);
			if (rows[i].alt && rows[j].alt)
				assert_int_not_equal(rows[i].alt, rows[j].alt);
			if (rows[i].bar)
				assert_int_not_equal(rows[i].bar, rows[j].bar);
		}
}

static void test_help_rows(void **state)
{
	(void)state;
	const char *keys, *help;
	int n = 0;
	while (mb_key_row(n, &keys, &help)) {
		assert_true(n < NROWS);
		if (keys)
			assert_non_null(help);
		if (rows[n].bar)
			assert_non_null(keys); /* a key on the bar is on the help screen */
		n++;
	}
	assert_int_equal(n, NROWS);
}

static void test_dispatch(void **state)
{
	(void)state;
	static struct mb_console c;
	memset(&c, 0, sizeof(c));
	c.screen = MB_SCR_overview;
	assert_true(mb_keys_dispatch(&c, 'a'));
	assert_int_equal(c.screen, MB_SCR_actions);
	assert_true(mb_keys_dispatch(&c, '?'));
	assert_int_equal(c.screen, MB_SCR_help);
	assert_true(mb_keys_dispatch(&c, 27)); /* Esc: the overview */
	assert_int_equal(c.screen, MB_SCR_overview);
	assert_true(mb_keys_dispatch(&c, '\t'));
	assert_int_equal(c.screen, MB_SCR_storage);
	/* a screen's own key is not the table's */
	assert_false(mb_keys_dispatch(&c, '+'));
	assert_int_equal(c.screen, MB_SCR_storage);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_screens),
	    cmocka_unit_test(test_unique_keys),
	    cmocka_unit_test(test_help_rows),
	    cmocka_unit_test(test_dispatch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
