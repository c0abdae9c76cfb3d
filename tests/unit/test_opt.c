/* test_opt.c: unit tests of the option-table engine (core/opt.h) and of
 * the command table (src/commands.c).
 *
 * Engine: single values of every command-line type at and beyond their
 * range edges (mb_opt_set), their text form (mb_opt_text), a command
 * row's parse (required flags, unknown flags, missing values, operands,
 * --help, --check-args, short flags) and the child argv builder (values
 * checked against the child's table).  Table: every command's flags are
 * unique, every default is given or marked, and every numeric flag of
 * every command is run in-process through lo-1, lo, hi, hi+1 (an
 * excluded lo is refused); every choice flag takes its choices and refuses
 * another word.  tests/integration/opt_ranges.sh does the same through
 * the program. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first */
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "core/error.h"
#include "core/opt.h"
#include "core/options.h"

struct t_args {
	int n;
	double x, y;
	int mode;
	bool mode_set;
	char path[16];
	const char *file;
	int list[4];
	int nlist;
	bool flag;
};

static const char *const t_modes[] = {"fast", "slow", NULL};

#define TA struct t_args
static const struct mb_opt t_opts[] = {
    {.path = "n",
     .flag = "n",
     .sflag = 'n',
     .metavar = "N",
     .type = MB_OT_INT,
     .off = offsetof(TA, n),
     .def = 5,
     .min = 1,
     .max = 10,
     .help = "a count"},
    {.path = "x",
     .flag = "x",
     .metavar = "X",
     .type = MB_OT_DOUBLE,
     .off = offsetof(TA, x),
     .min = 0,
     .max = 1,
     .flags = MB_OPT_LO_OPEN,
     .help = "a fraction"},
    {.path = "y",
     .flag = "y",
     .metavar = "Y",
     .type = MB_OT_DOUBLE,
     .off = offsetof(TA, y),
     .def = -1,
     .min = 0,
     .max = 100,
     .help = "a number"},
    {.path = "mode",
     .flag = "mode",
     .type = MB_OT_ENUM,
     .off = offsetof(TA, mode),
     .choices = t_modes,
     .def = -1,
     .aux = offsetof(TA, mode_set),
     .flags = MB_OPT_HAS,
     .help = "a choice"},
    {.path = "path",
     .flag = "path",
     .sflag = 'p',
     .metavar = "P",
     .type = MB_OT_STRING,
     .off = offsetof(TA, path),
     .size = 16,
     .sdef = "here",
     .flags = MB_OPT_NONEMPTY,
     .help = "a path"},
    {.path = "file",
     .flag = "file",
     .metavar = "F",
     .type = MB_OT_ARG,
     .off = offsetof(TA, file),
     .flags = MB_OPT_REQ | MB_OPT_NONEMPTY,
     .help = "a file"},
    {.path = "list",
     .flag = "list",
     .metavar = "L",
     .type = MB_OT_INT_LIST,
     .off = offsetof(TA, list),
     .size = 4,
     .aux = offsetof(TA, nlist),
     .min = 1,
     .max = 8,
     .flags = MB_OPT_AUTO,
     .help = "a list"},
    {.path = "flag",
     .flag = "flag",
     .sflag = 'f',
     .type = MB_OT_FLAG,
     .off = offsetof(TA, flag),
     .help = "a flag"},
};

static int t_ran;
static int t_run(void *args, int argc, char **argv)
{
	(void)args;
	(void)argv;
	t_ran++;
	return argc;
}

static const struct mb_cmd_entry t_entry = {
    .name = "t",
    .usage = "--file F [OPTIONS]",
    .summary = "a test command",
    .opts = t_opts,
    .nopts = (int)(sizeof(t_opts) / sizeof(t_opts[0])),
    .args_size = sizeof(struct t_args),
    .run = t_run,
};

static int set(int i, const char *v, struct t_args *a)
{
	char why[256];
	return mb_opt_set(&t_opts[i], a, v, why, sizeof(why));
}

static void test_values(void **state)
{
	(void)state;
	struct t_args a;
	char buf[64];
	memset(&a, 0, sizeof(a));
	/* integer: 1..10 */
	assert_int_equal(set(0, "0", &a), MB_EINVAL);
	assert_int_equal(set(0, "1", &a), 0);
	assert_int_equal(a.n, 1);
	assert_int_equal(set(0, "10", &a), 0);
	assert_int_equal(set(0, "11", &a), MB_EINVAL);
	assert_int_equal(set(0, "5x", &a), MB_EINVAL);
	assert_int_equal(set(0, "", &a), MB_EINVAL);
	assert_int_equal(set(0, "99999999999999999999", &a), MB_EINVAL);
	assert_int_equal(a.n, 10); /* failures write nothing */
	/* number in (0, 1] */
	assert_int_equal(set(1, "0", &a), MB_EINVAL);
	assert_int_equal(set(1, "1e-9", &a), 0);
	assert_int_equal(set(1, "1", &a), 0);
	assert_int_equal(set(1, "1.0001", &a), MB_EINVAL);
	assert_int_equal(set(1, "nan", &a), MB_EINVAL);
	assert_int_equal(set(1, "inf", &a), MB_EINVAL);
	/* number in [0, 100] */
	assert_int_equal(set(2, "0", &a), 0);
	assert_int_equal(set(2, "-0.5", &a), MB_EINVAL);
	/* choice */
	assert_int_equal(set(3, "slow", &a), 0);
	assert_int_equal(a.mode, 1);
	assert_true(a.mode_set);
	assert_int_equal(set(3, "medium", &a), MB_EINVAL);
	mb_opt_text(&t_opts[3], &a, buf, sizeof(buf));
	assert_string_equal(buf, "slow");
	/* strings */
	assert_int_equal(set(4, "", &a), MB_EINVAL);
	assert_int_equal(set(4, "0123456789abcdef", &a), MB_EINVAL); /* 16 > 15 */
	assert_int_equal(set(4, "0123456789abcde", &a), 0);
	assert_string_equal(a.path, "0123456789abcde");
	/* list */
	assert_int_equal(set(6, "1,8", &a), 0);
	assert_int_equal(a.nlist, 2);
	mb_opt_text(&t_opts[6], &a, buf, sizeof(buf));
	assert_string_equal(buf, "1,8");
	assert_int_equal(set(6, "auto", &a), 0);
	assert_int_equal(a.nlist, -1);
	assert_int_equal(set(6, "0", &a), MB_EINVAL);
	assert_int_equal(set(6, "9", &a), MB_EINVAL);
	assert_int_equal(set(6, "1,,2", &a), MB_EINVAL);
	assert_int_equal(set(6, "1,2,", &a), MB_EINVAL);
	assert_int_equal(set(6, "1,2,3,4,5", &a), MB_EINVAL);
	assert_int_equal(a.nlist, -1);
	/* the message names the value and the range */
	char why[256];
	assert_int_equal(mb_opt_set(&t_opts[0], &a, "42", why, sizeof(why)), MB_EINVAL);
	assert_string_equal(why, "'42' must be an integer from 1 to 10");
	assert_int_equal(mb_opt_set(&t_opts[1], &a, "0", why, sizeof(why)), MB_EINVAL);
	assert_string_equal(why, "'0' must be a number in (0, 1]");
}

static int parse(int argc, char **argv, struct t_args *out, int *first, bool *help, bool *chk)
{
	void *args = NULL;
	int rc = mb_cmd_parse(&t_entry, argc, argv, &args, first, help, chk);
	if (rc == 0) {
		*out = *(struct t_args *)args;
		free(args);
	}
	return rc;
}

static void test_parse(void **state)
{
	(void)state;
	struct t_args a;
	int first;
	bool help, chk;
	char *ok[] = {"t", "--file", "f", "-n", "3", "-f", "--mode", "fast", "--list=2,4", NULL};
	assert_int_equal(parse(9, ok, &a, &first, &help, &chk), 0);
	assert_int_equal(a.n, 3);
	assert_true(a.flag);
	assert_int_equal(a.mode, 0);
	assert_int_equal(a.nlist, 2);
	assert_string_equal(a.file, "f");
	/* defaults from the table */
	assert_string_equal(a.path, "here");
	assert_true(a.y == -1);
	char *dflt[] = {"t", "--file", "f", NULL};
	assert_int_equal(parse(3, dflt, &a, &first, &help, &chk), 0);
	assert_int_equal(a.n, 5);
	assert_int_equal(a.mode, -1);
	assert_false(a.mode_set);
	/* usage errors: exit 2 */
	char *noreq[] = {"t", "-n", "3", NULL};
	assert_int_equal(parse(3, noreq, &a, &first, &help, &chk), MB_EXIT_USAGE);
	char *unknown[] = {"t", "--file", "f", "--nope", NULL};
	assert_int_equal(parse(4, unknown, &a, &first, &help, &chk), MB_EXIT_USAGE);
	char *unknown_short[] = {"t", "--file", "f", "-z", NULL};
	assert_int_equal(parse(4, unknown_short, &a, &first, &help, &chk), MB_EXIT_USAGE);
	char *novalue[] = {"t", "--file", "f", "-n", NULL};
	assert_int_equal(parse(4, novalue, &a, &first, &help, &chk), MB_EXIT_USAGE);
	char *range[] = {"t", "--file", "f", "-n", "11", NULL};
	assert_int_equal(parse(5, range, &a, &first, &help, &chk), MB_EXIT_USAGE);
	char *operand[] = {"t", "--file", "f", "extra", NULL};
	assert_int_equal(parse(4, operand, &a, &first, &help, &chk), MB_EXIT_USAGE);
	/* --help and --check-args are reported, not acted on */
	char *h[] = {"t", "--help", NULL};
	assert_int_equal(parse(2, h, &a, &first, &help, &chk), 0);
	assert_true(help);
	char *c[] = {"t", "--file", "f", "--check-args", NULL};
	assert_int_equal(parse(4, c, &a, &first, &help, &chk), 0);
	assert_true(chk);
	/* exec: --check-args and a bad value never reach run */
	t_ran = 0;
	assert_int_equal(mb_cmd_exec(&t_entry, 4, c), MB_EXIT_OK);
	assert_int_equal(mb_cmd_exec(&t_entry, 5, range), MB_EXIT_USAGE);
	assert_int_equal(t_ran, 0);
	assert_int_equal(mb_cmd_exec(&t_entry, 3, dflt), 0);
	assert_int_equal(t_ran, 1);
}

static void test_argv(void **state)
{
	(void)state;
	struct mb_argv av;
	mb_argv_init(&av, &t_entry);
	mb_argv_add(&av, "file", "f");
	mb_argv_addf(&av, "n", "%d", 7);
	mb_argv_add(&av, "flag", NULL);
	const char *const *v = mb_argv_done(&av);
	assert_non_null(v);
	const char *want[] = {"t", "--file", "f", "--n", "7", "--flag", NULL};
	for (int i = 0; want[i]; i++)
		assert_string_equal(v[i], want[i]);
	assert_null(v[6]);
	/* a value out of the child's range is refused here, not by the child */
	mb_argv_init(&av, &t_entry);
	mb_argv_addf(&av, "n", "%d", 11);
	assert_null(mb_argv_done(&av));
	assert_non_null(strstr(av.why, "--n"));
	/* a flag the child does not have */
	mb_argv_init(&av, &t_entry);
	mb_argv_add(&av, "nope", "1");
	assert_null(mb_argv_done(&av));
	/* the real children take what the session gives them */
	mb_argv_init(&av, &mb_cmd_load_entry);
	mb_argv_addf(&av, "users", "%d", MB_USERS_MAX);
	assert_non_null(mb_argv_done(&av));
	mb_argv_init(&av, &mb_cmd_load_entry);
	mb_argv_addf(&av, "users", "%d", MB_USERS_MAX + 1);
	assert_null(mb_argv_done(&av));
}

/* Every command row: unique flags, sane ranges, help text. */
static void test_table(void **state)
{
	(void)state;
	int ncmd = 0;
	for (int i = 0; mb_commands[i]; i++, ncmd++) {
		const struct mb_cmd_entry *e = mb_commands[i];
		assert_non_null(e->name);
		assert_non_null(e->usage);
		assert_non_null(e->summary);
		assert_non_null(e->run);
		assert_ptr_equal(mb_cmd_find(e->name), e);
		for (int k = 0; k < e->nopts; k++) {
			const struct mb_opt *o = &e->opts[k];
			assert_non_null(o->flag);
			assert_non_null(o->help);
			assert_true(strcmp(o->flag, "help") && strcmp(o->flag, "check-args"));
			assert_true(o->sflag != 'h');
			if (o->type == MB_OT_INT || o->type == MB_OT_DOUBLE ||
			    o->type == MB_OT_INT_LIST)
				assert_true(o->min <= o->max);
			for (int j = 0; j < k; j++) {
				assert_true(strcmp(o->flag, e->opts[j].flag) != 0);
				assert_true(!o->sflag || o->sflag != e->opts[j].sflag);
			}
		}
	}
	assert_true(ncmd >= 10);
	/* one range per option: the flags the commands share agree */
	static const char *const shared[] = {"users",  "scale",	   "accel",	  "stats-fd",
					     "warmup", "cache-mb", "compression", NULL};
	for (int s = 0; shared[s]; s++) {
		const struct mb_opt *first = NULL;
		for (int i = 0; mb_commands[i]; i++) {
			const struct mb_opt *o = mb_cmd_opt(mb_commands[i], shared[s]);
			if (!o)
				continue;
			if (!first)
				first = o;
			assert_true(o->min == first->min && o->max == first->max &&
				    o->type == first->type);
		}
		assert_non_null(first);
	}
}

/* argv for command E with --FLAG VALUE and a valid value for every
 * other required flag. */
static int try_flag(const struct mb_cmd_entry *e, const struct mb_opt *o, const char *value)
{
	char *argv[32];
	char flag[64];
	int n = 0;
	argv[n++] = (char *)e->name;
	snprintf(flag, sizeof(flag), "--%s", o->flag);
	argv[n++] = flag;
	if (value)
		argv[n++] = (char *)value;
	for (int k = 0; k < e->nopts; k++) {
		const struct mb_opt *r = &e->opts[k];
		if (!(r->flags & MB_OPT_REQ) || r == o)
			continue;
		static char req[16][64];
		snprintf(req[k % 16], sizeof(req[0]), "--%s", r->flag);
		argv[n++] = req[k % 16];
		argv[n++] = !strcmp(r->flag, "target") ? "127.0.0.1:1" : "online";
	}
	argv[n] = NULL;
	void *args = NULL;
	int first;
	bool help, chk;
	int rc = mb_cmd_parse(e, n, argv, &args, &first, &help, &chk);
	free(args);
	return rc;
}

static void num(char *buf, size_t len, double v) { snprintf(buf, len, "%.15g", v); }

static void test_every_flag_edges(void **state)
{
	(void)state;
	int cases = 0;
	for (int i = 0; mb_commands[i]; i++) {
		const struct mb_cmd_entry *e = mb_commands[i];
		for (int k = 0; k < e->nopts; k++) {
			const struct mb_opt *o = &e->opts[k];
			char v[64];
			bool open = (o->flags & MB_OPT_LO_OPEN) != 0;
			switch (o->type) {
			case MB_OT_INT:
			case MB_OT_DOUBLE:
			case MB_OT_INT_LIST:
				num(v, sizeof(v), o->min);
				assert_int_equal(try_flag(e, o, v), open ? MB_EXIT_USAGE : 0);
				num(v, sizeof(v), o->max);
				assert_int_equal(try_flag(e, o, v), 0);
				num(v, sizeof(v), o->max + 1);
				assert_int_equal(try_flag(e, o, v), MB_EXIT_USAGE);
				if (!open) {
					num(v, sizeof(v), o->min - 1);
					assert_int_equal(try_flag(e, o, v), MB_EXIT_USAGE);
				}
				assert_int_equal(try_flag(e, o, "x"), MB_EXIT_USAGE);
				cases += 5;
				break;
			case MB_OT_ENUM:
			case MB_OT_SCHOICE:
				for (int c = 0; o->choices[c]; c++, cases++)
					assert_int_equal(try_flag(e, o, o->choices[c]), 0);
				assert_int_equal(try_flag(e, o, "bogus"), MB_EXIT_USAGE);
				cases++;
				break;
			case MB_OT_FLAG:
				assert_int_equal(try_flag(e, o, NULL), 0);
				cases++;
				break;
			default:
				break;
			}
		}
	}
	assert_true(cases > 150);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_values),
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_argv),
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_every_flag_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
