/* test_table.c: unit tests of the shared table code (report/table.h) and
 * the comparison table (report/compare.h): number formatting, layout,
 * condensing to a width, truncation, and the comparison table built from
 * the real scenario 1 file with measured-looking inputs (no child needed:
 * this tests formatting only), and its legend (full published headings,
 * this run's platform/engine/client mode) and use of spare width. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "report/compare.h"
#include "report/report.h"
#include "report/table.h"

static void test_format_number(void **state)
{
	(void)state;
	char b[64];
	mb_format_number(8000, 0, b, sizeof(b));
	assert_string_equal(b, "8,000");
	mb_format_number(19.9, 1, b, sizeof(b));
	assert_string_equal(b, "19.9");
	mb_format_number(-1234.5, 1, b, sizeof(b));
	assert_string_equal(b, "-1,234.5");
	mb_format_number(1234567, 0, b, sizeof(b));
	assert_string_equal(b, "1,234,567");
	mb_format_number(999, 0, b, sizeof(b));
	assert_string_equal(b, "999");
	mb_format_number(-0.01, 1, b, sizeof(b));
	assert_string_equal(b, "0.0");
	mb_format_value(MB_C_USERS, false, 5, b, sizeof(b));
	assert_string_equal(b, "n/a");
	mb_format_value(MB_C_PROCESSOR_PCT, true, 75, b, sizeof(b));
	assert_string_equal(b, "75.0");
}

static struct mb_table *sample(void)
{
	struct mb_table *t;
	assert_int_equal(mb_table_create(4, &t), 0);
	mb_table_set_heading(t, 0, "(a)", "(a) first published");
	mb_table_set_heading(t, 1, "(b)", "(b) second");
	mb_table_set_heading(t, 2, "live", "live");
	mb_table_set_heading(t, 3, "avg", "average");
	mb_table_set_priority(t, 0, 1);
	mb_table_set_priority(t, 1, 2);
	mb_table_set_priority(t, 2, 100);
	mb_table_set_priority(t, 3, 90);
	int r;
	assert_int_equal(mb_table_add_row(t, "server platform", MB_ROW_HEADER, &r), 0);
	mb_table_set_cell(t, r, 0, "Windows 2000 SP3 with a long name");
	mb_table_set_cell(t, r, 2, "Linux");
	mb_table_add_row(t, "", MB_ROW_SEPARATOR, NULL);
	mb_table_add_row(t, "context switches/s", MB_ROW_NORMAL, &r);
	mb_table_set_cell(t, r, 0, "8,300");
	mb_table_set_cell(t, r, 1, "7,833");
	mb_table_set_cell(t, r, 2, "12,001");
	mb_table_set_cell(t, r, 3, "n/a");
	mb_table_set_verdict(t, r, MB_VERDICT_FAIL);
	return t;
}

static void test_layout_wide(void **state)
{
	(void)state;
	struct mb_table *t = sample();
	struct mb_table_layout l;
	mb_table_layout(t, 200, &l);
	assert_int_equal(l.ncols, 4);
	assert_int_equal(l.label_w, (int)strlen("context switches/s"));
	char buf[512];
	mb_table_format_heading(t, &l, buf, sizeof(buf));
	assert_int_equal((int)strlen(buf), l.total_w);
	for (int r = 0; r < mb_table_rows(t); r++) {
		mb_table_format_row(t, &l, r, buf, sizeof(buf));
		assert_int_equal((int)strlen(buf), l.total_w);
	}
	mb_table_format_row(t, &l, 2, buf, sizeof(buf));
	assert_non_null(strstr(buf, "12,001"));
	assert_non_null(strstr(buf, "8,300"));
	/* the separator row is a rule */
	mb_table_format_row(t, &l, 1, buf, sizeof(buf));
	assert_int_equal(strspn(buf, "-"), strlen(buf));
	assert_int_equal(mb_table_verdict(t, 2), MB_VERDICT_FAIL);
	mb_table_destroy(t);
}

static void test_condense(void **state)
{
	(void)state;
	struct mb_table *t = sample();
	struct mb_table_layout l;
	mb_table_layout(t, 40, &l);
	assert_true(l.total_w <= 40);
	assert_true(l.ncols < 4);
	/* the highest-priority column (live) survives, the lowest goes first */
	bool live = false, a = false;
	for (int i = 0; i < l.ncols; i++) {
		live |= l.col[i] == 2;
		a |= l.col[i] == 0;
	}
	assert_true(live);
	assert_false(a);
	char buf[128];
	for (int r = 0; r < mb_table_rows(t); r++) {
		mb_table_format_row(t, &l, r, buf, sizeof(buf));
		assert_int_equal((int)strlen(buf), l.total_w);
	}
	/* very narrow: the label is cut with '~' but lines keep their width */
	mb_table_layout(t, 20, &l);
	mb_table_format_row(t, &l, 2, buf, sizeof(buf));
	assert_int_equal((int)strlen(buf), l.total_w);
	assert_non_null(strchr(buf, '~'));
	mb_table_destroy(t);
}

static void test_header_cells_shrink_first(void **state)
{
	(void)state;
	struct mb_table *t = sample();
	struct mb_table_layout l;
	/* wide enough for all columns only if the long header cell is cut */
	mb_table_layout(t, 70, &l);
	assert_int_equal(l.ncols, 4);
	char buf[256];
	mb_table_format_row(t, &l, 0, buf, sizeof(buf));
	assert_non_null(strchr(buf, '~'));
	mb_table_destroy(t);
}

static void test_compare_scenario1(void **state)
{
	(void)state;
	struct mb_scenario *sc = calloc(1, sizeof(*sc));
	struct mb_cfg_error err;
	assert_int_equal(mb_scenario_load("online", sc, &err), 0);
	assert_int_equal(sc->column_count, 4);
	struct mb_thresholds th;
	mb_thresholds_init(&th, sc, NULL);
	th.counter[MB_C_PROCESSOR_PCT].cmp = MB_CMP_LE;
	th.counter[MB_C_PROCESSOR_PCT].value = 80;
	th.counter[MB_C_RPC_OPS].cmp = MB_CMP_GE;
	th.counter[MB_C_RPC_OPS].value = 1000;
	double live[MB_COUNTER_COUNT] = {0}, avg[MB_COUNTER_COUNT] = {0};
	bool lh[MB_COUNTER_COUNT] = {0}, ah[MB_COUNTER_COUNT] = {0};
	live[MB_C_PROCESSOR_PCT] = 42.26;
	lh[MB_C_PROCESSOR_PCT] = true;
	live[MB_C_RPC_OPS] = 940;
	lh[MB_C_RPC_OPS] = true;
	avg[MB_C_RPC_OPS] = 470;
	ah[MB_C_RPC_OPS] = true;
	struct mb_compare_input in = {0};
	in.sc = sc;
	in.th = &th;
	in.diff_col = 2;
	in.live = live;
	in.live_has = lh;
	in.avg = avg;
	in.avg_has = ah;
	in.platform = "Linux test";
	in.engine = "mailbench";
	in.client_mode = "online, compression on";
	in.smt = 0;
	struct mb_table *t;
	assert_int_equal(mb_compare_build(&in, &t), 0);
	/* 4 published + live + avg + diff + threshold */
	assert_int_equal(mb_table_cols(t), 8);
	/* 4 header rows, a separator, the 13 published rows in order */
	assert_int_equal(mb_table_rows(t), 4 + 1 + MB_PUBLISHED_COUNT);
	assert_string_equal(mb_table_heading(t, 0, false), "(a)");
	assert_string_equal(mb_table_heading(t, 6, false), "vs (c)");
	for (int i = 0; i < MB_PUBLISHED_COUNT; i++) {
		int r = 5 + i;
		assert_int_equal(mb_table_tag(t, r), i);
		assert_int_equal(mb_table_row_style(t, r), MB_ROW_NORMAL);
	}
	int cpu = 5 + MB_C_PROCESSOR_PCT, rpc = 5 + MB_C_RPC_OPS, users = 5 + MB_C_USERS;
	assert_string_equal(mb_table_cell(t, cpu, 0), "75.0");
	assert_string_equal(mb_table_cell(t, cpu, 4), "42.3"); /* live, 1 decimal */
	assert_string_equal(mb_table_cell(t, cpu, 5), "n/a");  /* no average yet */
	assert_string_equal(mb_table_cell(t, cpu, 6), "-44%"); /* live vs (c) 75 */
	assert_string_equal(mb_table_cell(t, cpu, 7), "<= 80.0");
	assert_int_equal(mb_table_verdict(t, cpu), MB_VERDICT_PASS);
	assert_string_equal(mb_table_cell(t, rpc, 4), "940");
	assert_string_equal(mb_table_cell(t, rpc, 5), "470");
	assert_string_equal(mb_table_cell(t, rpc, 6), "-50%"); /* average vs 940 */
	assert_int_equal(mb_table_verdict(t, rpc), MB_VERDICT_FAIL);
	assert_string_equal(mb_table_cell(t, users, 4), "n/a");
	assert_int_equal(mb_table_verdict(t, users), MB_VERDICT_NONE);
	assert_string_equal(mb_table_cell(t, 3, 3), "on");  /* SMT of (d) */
	assert_string_equal(mb_table_cell(t, 3, 4), "off"); /* this machine */
	/* 80 columns: condensed, live and average kept */
	struct mb_table_layout l;
	mb_table_layout(t, 80, &l);
	assert_true(l.total_w <= 80);
	bool live_shown = false, avg_shown = false;
	for (int i = 0; i < l.ncols; i++) {
		live_shown |= l.col[i] == 4;
		avg_shown |= l.col[i] == 5;
	}
	assert_true(live_shown && avg_shown);
	mb_table_destroy(t);
	free(sc);
}

/* The legend: long headings carry the full published headings and this
 * run's platform/engine/client mode; header cells get the room there is. */
static void test_compare_legend(void **state)
{
	(void)state;
	struct mb_scenario *sc = calloc(1, sizeof(*sc));
	struct mb_cfg_error err;
	assert_int_equal(mb_scenario_load("online", sc, &err), 0);
	struct mb_thresholds th;
	mb_thresholds_init(&th, sc, NULL);
	double live[MB_COUNTER_COUNT] = {0}, avg[MB_COUNTER_COUNT] = {0};
	bool lh[MB_COUNTER_COUNT] = {0}, ah[MB_COUNTER_COUNT] = {0};
	struct mb_compare_input in = {0};
	in.sc = sc;
	in.th = &th;
	in.diff_col = 3;
	in.live = live;
	in.live_has = lh;
	in.avg = avg;
	in.avg_has = ah;
	in.platform = "Linux 6.1.0-99-a-rather-long-kernel-name x86_64";
	in.engine = "mailbench 0.1.0, 32 KB pages, 12 db/3 sg";
	in.client_mode = "online, compression off";
	in.smt = 0;
	in.users = 50;
	in.scale = 0.04;
	in.accel = 8;
	struct mb_table *t;
	assert_int_equal(mb_compare_build(&in, &t), 0);
	assert_string_equal(mb_table_heading(t, 0, true),
			    "(a) Windows 2000 SP3, Exchange 2000 SP3, Outlook 2000 online");
	/* (d)'s heading names only the difference: the fields are added */
	const char *d = mb_table_heading(t, 3, true);
	assert_non_null(strstr(d, "Hyper-Threading"));
	assert_non_null(strstr(d, "Windows Server 2003"));
	assert_non_null(strstr(d, "Outlook 2003 online"));
	/* the live column names this run in full */
	const char *lv = mb_table_heading(t, 4, true);
	assert_non_null(strstr(lv, in.platform));
	assert_non_null(strstr(lv, in.engine));
	assert_non_null(strstr(lv, "online, compression off"));
	assert_non_null(strstr(lv, "50 users, scale 0.04, accel x8"));
	/* run avg beside live does not repeat the header text */
	assert_string_equal(mb_table_cell(t, 0, 5), "as live");
	/* no threshold set on a published row: that column gives way first */
	struct mb_table_layout l;
	mb_table_layout(t, 80, &l);
	for (int i = 0; i < l.ncols; i++)
		assert_int_not_equal(l.col[i], 7);
	/* 80 columns: row labels stay readable (not cut below a quarter) */
	char buf[512];
	mb_table_format_row(t, &l, 5 + MB_C_DB_TRANSFERS, buf, sizeof(buf));
	assert_int_equal((int)strlen(buf), l.total_w);
	assert_true(l.label_w >= 20);
	/* 200 columns: every published header cell in full */
	mb_table_layout(t, 200, &l);
	assert_int_equal(l.ncols, mb_table_cols(t));
	mb_table_format_row(t, &l, 0, buf, sizeof(buf));
	assert_non_null(strstr(buf, "Windows Server 2003"));
	assert_non_null(strstr(buf, "Windows 2000 SP3"));
	mb_table_format_row(t, &l, 2, buf, sizeof(buf));
	assert_non_null(strstr(buf, "Outlook 2003 online"));
	assert_int_equal((int)strlen(buf), l.total_w);
	/* narrower: cut cells say so */
	mb_table_layout(t, 120, &l);
	assert_true(l.cut);
	assert_true(l.total_w <= 120);
	mb_table_destroy(t);

	/* scenario 2: the client is not in the headings: added */
	assert_int_equal(mb_scenario_load("cached", sc, &err), 0);
	mb_thresholds_init(&th, sc, NULL);
	in.sc = sc;
	in.diff_col = 0;
	in.live = NULL;
	assert_int_equal(mb_compare_build(&in, &t), 0);
	assert_non_null(strstr(mb_table_heading(t, 0, true), "Outlook 2003 cached mode"));
	/* without a live column the average names the run itself */
	int c_avg = sc->column_count;
	/* header cells in the published cells' terms; the legend in full */
	assert_string_equal(mb_table_cell(t, 0, c_avg), "Linux 6.1.0-99-a-rather-long-kernel-name");
	assert_string_equal(mb_table_cell(t, 1, c_avg), "mailbench 0.1.0");
	assert_string_equal(mb_table_cell(t, 2, c_avg), "online, compr. off");
	assert_non_null(strstr(mb_table_heading(t, c_avg, true), in.platform));
	assert_non_null(strstr(mb_table_heading(t, c_avg, true), in.engine));
	assert_non_null(strstr(mb_table_heading(t, c_avg, true), in.client_mode));
	mb_table_destroy(t);
	free(sc);
}

/* Width left over after the header cells were capped goes back to them,
 * evenly; a layout that fits everything reports nothing cut. */
static void test_spare_width(void **state)
{
	(void)state;
	struct mb_table *t = sample();
	struct mb_table_layout l;
	mb_table_layout(t, 200, &l);
	assert_false(l.cut);
	char buf[512];
	mb_table_format_row(t, &l, 0, buf, sizeof(buf));
	assert_non_null(strstr(buf, "Windows 2000 SP3 with a long name"));
	for (int w = 40; w <= 90; w++) {
		mb_table_layout(t, w, &l);
		assert_true(l.total_w <= w);
		mb_table_format_row(t, &l, 0, buf, sizeof(buf));
		assert_int_equal((int)strlen(buf), l.total_w);
	}
	/* at 70 all four columns, the long cell cut but given the spare room */
	mb_table_layout(t, 70, &l);
	assert_int_equal(l.ncols, 4);
	assert_true(l.cut);
	assert_true(l.total_w >= 68);
	mb_table_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_format_number),
	    cmocka_unit_test(test_layout_wide),
	    cmocka_unit_test(test_condense),
	    cmocka_unit_test(test_header_cells_shrink_first),
	    cmocka_unit_test(test_compare_scenario1),
	    cmocka_unit_test(test_compare_legend),
	    cmocka_unit_test(test_spare_width),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
