/* test_progress.c: the progress line (core/progress.h): the terminal form
 * redraws with a bar and ends with one newline; the other form writes a
 * line per tenth, per every_s and at the final update; the rate skips the
 * warm-up; durations format as "1h02m", "3m07s", "--:--". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/progress.h"

static char *buf;
static size_t len;

static struct mb_progress *open_p(bool tty, double warmup, double every, FILE **f)
{
	*f = open_memstream(&buf, &len);
	assert_non_null(*f);
	struct mb_progress_opts o = {.out = *f,
				     .tty = tty,
				     .label = "init",
				     .noun = "items",
				     .warmup_s = warmup,
				     .every_s = every};
	struct mb_progress *p = NULL;
	assert_int_equal(mb_progress_create(&o, 100.0, &p), 0);
	return p;
}

static int count(const char *s, char c)
{
	int n = 0;
	for (; *s; s++)
		n += *s == c;
	return n;
}

static void test_tty(void **state)
{
	(void)state;
	FILE *f;
	struct mb_progress *p = open_p(true, 0, 0, &f);
	mb_progress_update(p, 100.0, 0, 200, NULL, false);
	mb_progress_update(p, 110.0, 100, 200, "12 MB", false);
	mb_progress_destroy(p);
	fclose(f);
	assert_int_equal(count(buf, '\r'), 2);
	assert_int_equal(count(buf, '\n'), 1);
	assert_non_null(strstr(buf, "[###############               ]  50.0% 100/200 items 10/s "
				    "12 MB ETA 0m10s "));
	assert_non_null(strstr(buf, "ETA --:--")); /* no rate at the first update */
	free(buf);
}

static void test_lines(void **state)
{
	(void)state;
	FILE *f;
	struct mb_progress *p = open_p(false, 0, 5, &f);
	mb_progress_update(p, 100.0, 0, 1000, NULL, false);   /* tenth 0: a line */
	mb_progress_update(p, 101.0, 10, 1000, NULL, false);  /* same tenth, 1 s: none */
	mb_progress_update(p, 102.0, 150, 1000, NULL, false); /* tenth 1: a line */
	mb_progress_update(p, 107.5, 160, 1000, NULL, false); /* 5.5 s later: a line */
	mb_progress_update(p, 108.0, 170, 1000, NULL, true);  /* final: a line */
	mb_progress_destroy(p);
	fclose(f);
	assert_int_equal(count(buf, '\n'), 4);
	assert_null(strchr(buf, '\r'));
	assert_non_null(strstr(buf, "init:  15.0% 150/1000 items 75/s ETA 0m11s\n"));
	free(buf);
}

static void test_warmup(void **state)
{
	(void)state;
	FILE *f;
	struct mb_progress *p = open_p(false, 1.0, 0, &f);
	mb_progress_update(p, 100.5, 500, 1000, NULL, false); /* resumed work, before warm-up */
	mb_progress_update(p, 101.0, 500, 1000, NULL, false); /* baseline */
	mb_progress_update(p, 111.0, 600, 1000, "x", true);
	mb_progress_destroy(p);
	fclose(f);
	assert_non_null(strstr(buf, "init:  60.0% 600/1000 items 10/s x ETA 0m40s\n"));
	free(buf);
}

static void test_dur(void **state)
{
	(void)state;
	char b[32];
	mb_progress_fmt_dur(-1, b, sizeof(b));
	assert_string_equal(b, "--:--");
	mb_progress_fmt_dur(187, b, sizeof(b));
	assert_string_equal(b, "3m07s");
	mb_progress_fmt_dur(3720, b, sizeof(b));
	assert_string_equal(b, "1h02m");
	mb_progress_fmt_dur(400000, b, sizeof(b));
	assert_string_equal(b, "--:--");
	struct mb_progress *p = NULL;
	assert_int_equal(mb_progress_create(NULL, 0, &p), MB_EINVAL);
	assert_null(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tty),
	    cmocka_unit_test(test_lines),
	    cmocka_unit_test(test_warmup),
	    cmocka_unit_test(test_dur),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
