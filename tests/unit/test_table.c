/* test_table.c: unit tests of the shared table code (report/table.h) and
 * the comparison table (report/compare.h): number formatting, layout,
 * condensing to a width, truncation, and the comparison table built from
 * the real scenario 1 file with measured-looking inputs (no child needed:
 * this tests formatting only), and its legend (full published headings,
 * this run's platform/engine/client mode) and use of spare width; the
 * per-action table (report/acttable.h); the storage comparison
 * (report/stortable.h): its published rows exact, its two views and JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "report/acttable.h"
#include "report/compare.h"
#include "report/norm.h"
#include "report/report.h"
#include "report/stortable.h"
#include "core/table.h"

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
	/* 4 header rows, the normalisation row, a separator, the 13 published
	 * rows in order */
	assert_int_equal(mb_table_rows(t), 5 + 1 + MB_PUBLISHED_COUNT);
	assert_string_equal(mb_table_heading(t, 0, false), "(a)");
	assert_string_equal(mb_table_heading(t, 6, false), "vs (c)");
	for (int i = 0; i < MB_PUBLISHED_COUNT; i++) {
		int r = 6 + i;
		assert_int_equal(mb_table_tag(t, r), i);
		assert_int_equal(mb_table_row_style(t, r), MB_ROW_NORMAL);
	}
	int cpu = 6 + MB_C_PROCESSOR_PCT, rpc = 6 + MB_C_RPC_OPS, users = 6 + MB_C_USERS;
	assert_string_equal(mb_table_cell(t, cpu, 0), "75.0");
	assert_string_equal(mb_table_cell(t, cpu, 4), "42.3");	/* live, 1 decimal */
	assert_string_equal(mb_table_cell(t, cpu, 5), "n/a");	/* no average yet */
	assert_string_equal(mb_table_cell(t, cpu, 6), "0.56x"); /* raw: live vs (c) 75 */
	assert_string_equal(mb_table_cell(t, 4, 6), "raw");	/* no users: raw */
	assert_string_equal(mb_table_cell(t, cpu, 7), "<= 80.0");
	assert_int_equal(mb_table_verdict(t, cpu), MB_VERDICT_PASS);
	assert_string_equal(mb_table_cell(t, rpc, 4), "940");
	assert_string_equal(mb_table_cell(t, rpc, 5), "470");
	assert_string_equal(mb_table_cell(t, rpc, 6), "0.50x"); /* average vs 940 */
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

/* Per user-equivalent: 400 users x accel 20 = 8,000 UE against 8,000
 * published users compares rates one to one; 400 x 10 = 4,000 UE at half
 * the rate is the same per UE; gauges are as-is or n/c. */
static void test_compare_per_ue(void **state)
{
	(void)state;
	struct mb_scenario *sc = calloc(1, sizeof(*sc));
	struct mb_cfg_error err;
	assert_int_equal(mb_scenario_load("online", sc, &err), 0);
	struct mb_thresholds th;
	mb_thresholds_init(&th, sc, NULL);
	double avg[MB_COUNTER_COUNT] = {0};
	bool ah[MB_COUNTER_COUNT] = {0};
	avg[MB_C_RPC_OPS] = 470; /* (c) 940 at 8,000 users */
	ah[MB_C_RPC_OPS] = true;
	avg[MB_C_NETWORK] = 802; /* (c) 1,604 */
	ah[MB_C_NETWORK] = true;
	avg[MB_C_CLIENT_LATENCY] = 47.5; /* (c) 95, as measured */
	ah[MB_C_CLIENT_LATENCY] = true;
	avg[MB_C_PROCESSOR_PCT] = 10;
	ah[MB_C_PROCESSOR_PCT] = true;
	struct mb_compare_input in = {0};
	in.sc = sc;
	in.th = &th;
	in.diff_col = 2;
	in.avg = avg;
	in.avg_has = ah;
	in.platform = "Linux test";
	in.engine = "mailbench";
	in.client_mode = "online, compression on";
	in.users = 400;
	in.accel = 10;
	in.scale = 0.02;
	struct mb_table *t;
	assert_int_equal(mb_compare_build(&in, &t), 0);
	/* 4 published + avg + diff + threshold */
	int c_avg = 4, c_diff = 5;
	assert_string_equal(mb_table_cell(t, 4, c_diff), "per 1k UE");
	assert_string_equal(mb_table_cell(t, 4, c_avg), "4,000 UE");
	int base = 6;
	assert_string_equal(mb_table_cell(t, base + MB_C_RPC_OPS, c_diff), "1.00x");
	assert_string_equal(mb_table_cell(t, base + MB_C_NETWORK, c_diff), "1.00x");
	assert_string_equal(mb_table_cell(t, base + MB_C_CLIENT_LATENCY, c_diff), "0.50x");
	assert_string_equal(mb_table_cell(t, base + MB_C_PROCESSOR_PCT, c_diff), "n/c");
	assert_string_equal(mb_table_cell(t, base + MB_C_USERS, c_diff), "base");
	assert_string_equal(mb_table_cell(t, base + MB_C_LOG_WRITES, c_diff), "n/a");
	/* the legend says which normalisation and why n/c */
	const char *lg = mb_table_heading(t, c_diff, true);
	assert_non_null(strstr(lg, "per 1,000 user-equivalents"));
	assert_non_null(strstr(lg, "4000 UE"));
	assert_non_null(strstr(lg, "n/c % processor time"));
	mb_table_destroy(t);
	free(sc);
}

/* The rules: every published row has one; rates per UE. */
static void test_norm_rules(void **state)
{
	(void)state;
	for (int id = 0; id < MB_PUBLISHED_COUNT; id++) {
		const struct mb_norm_rule *r = mb_norm_rule((enum mb_counter_id)id);
		assert_non_null(r);
		if (r->kind == MB_NORM_NOT_COMPARABLE)
			assert_non_null(r->reason);
		if (mb_counters[id].kind == MB_RATE)
			assert_int_equal(r->kind, MB_NORM_PER_UE);
	}
	assert_null(mb_norm_rule(MB_C_ACTIONS));
	struct mb_norm_cmp c;
	/* 20 Kbit/s for 100 UE = 200 per 1,000; published 1,600 for 8,000 = 200 */
	mb_norm_compare(MB_C_NETWORK, MB_NORM_MODE_PER_UE, true, 20, 100, true, 1600, 8000, &c);
	assert_true(c.has_ratio);
	assert_true(fabs(c.ratio - 1.0) < 1e-9);
	assert_true(fabs(c.run - 200) < 1e-9 && fabs(c.published - 200) < 1e-9);
	/* raw mode compares as measured */
	mb_norm_compare(MB_C_NETWORK, MB_NORM_MODE_RAW, true, 20, 100, true, 1600, 8000, &c);
	assert_true(fabs(c.ratio - 20.0 / 1600) < 1e-9);
	/* unmeasured: no ratio */
	mb_norm_compare(MB_C_NETWORK, MB_NORM_MODE_PER_UE, false, 0, 100, true, 1600, 8000, &c);
	assert_false(c.has_ratio);
	char buf[16];
	mb_norm_cell(&c, buf, sizeof(buf));
	assert_string_equal(buf, "n/a");
	assert_int_equal(mb_norm_mode_of(0, 8), MB_NORM_MODE_RAW);
	assert_int_equal(mb_norm_mode_of(10, 8), MB_NORM_MODE_PER_UE);
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
	in.engine = "mailbench 0.1.0, 4 KB pages, a page per write, 12 db/3 sg";
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

/* The per-action table (report/acttable.h): the counts and percentiles of
 * the summary, "n/a" where not measured, the FAIL verdict on a row with
 * failures, and an unsupported action said so on its row. */
static void test_acttable(void **state)
{
	(void)state;
	struct mb_run_summary *sum = calloc(1, sizeof(*sum));
	assert_non_null(sum);
	struct mb_action_figures *a = &sum->actions[0];
	a->has_counts = true;
	a->scheduled = 1200;
	a->done = 1190;
	a->failed = 3;
	a->cut = 7;
	a->has_per_user_day = true;
	a->per_user_day = 11.5;
	a->latency.has = true;
	a->latency.p50_ms = 12.34;
	a->latency.p95_ms = 80;
	a->latency.p99_ms = 140;
	sum->actions[1].unsupported = true;
	struct mb_table *t;
	assert_int_equal(mb_acttable_build(sum, NULL, NULL, &t), 0);
	assert_int_equal(mb_table_rows(t), MB_ACTION_COUNT);
	assert_string_equal(mb_table_row_label(t, 0), mb_actions[0].label);
	assert_string_equal(mb_table_cell(t, 0, 0), "n/a"); /* no scenario: no profile */
	assert_string_equal(mb_table_cell(t, 0, 1), "11.50");
	assert_string_equal(mb_table_cell(t, 0, 2), "1,200");
	assert_string_equal(mb_table_cell(t, 0, 4), "3");
	assert_string_equal(mb_table_cell(t, 0, 5), "7");
	assert_string_equal(mb_table_cell(t, 0, 6), "12.3");
	assert_string_equal(mb_table_cell(t, 0, 8), "140.0");
	assert_int_equal(mb_table_verdict(t, 0), MB_VERDICT_FAIL);
	assert_string_equal(mb_table_cell(t, 1, 1), "not supported by the target");
	assert_string_equal(mb_table_cell(t, 2, 3), "n/a");
	assert_int_not_equal(mb_table_verdict(t, 2), MB_VERDICT_FAIL);
	mb_table_destroy(t);
	/* the console's latencies replace the summary's */
	struct mb_latency lat[MB_ACTION_COUNT];
	memset(lat, 0, sizeof(lat));
	assert_int_equal(mb_acttable_build(sum, NULL, lat, &t), 0);
	assert_string_equal(mb_table_cell(t, 0, 6), "n/a");
	mb_table_destroy(t);
	free(sum);
}

/* The row of the table whose label is label, or -1. */
static int row_of(const struct mb_table *t, const char *label)
{
	for (int r = 0; r < mb_table_rows(t); r++)
		if (!strcmp(mb_table_row_label(t, r), label))
			return r;
	return -1;
}

static void test_stortable(void **state)
{
	(void)state;
	struct mb_storage_cfg *st = calloc(1, sizeof(*st));
	assert_non_null(st);
	struct mb_cfg_error err;
	assert_int_equal(mb_storage_cfg_load("storage", st, &err), 0);
	struct mb_thresholds th;
	mb_thresholds_init(&th, NULL, st);
	struct mb_stortable *m;
	assert_int_equal(mb_stortable_create(st, &th, &m), 0);
	/* the published rows, exactly as published */
	assert_int_equal(mb_stortable_count(m), 3);
	const struct mb_stor_series *p = mb_stortable_series(m, 0);
	assert_true(p->published);
	assert_true(p->v[MB_SM_THREADS] == 4 && p->v[MB_SM_IOPS] == 5580);
	assert_true(p->v[MB_SM_READ_AVG] == 1.16 && p->v[MB_SM_LOG_AVG] == 0.99);
	p = mb_stortable_series(m, 2);
	assert_true(p->v[MB_SM_THREADS] == 12 && p->v[MB_SM_IOPS] == 14351);
	assert_true(p->v[MB_SM_READ_AVG] == 1.42 && p->v[MB_SM_LOG_AVG] == 0.98);
	assert_int_equal(p->verdict, MB_VERDICT_PASS);
	/* a measured run at 4 threads over the read threshold; one at 2 */
	struct mb_stor_series s;
	memset(&s, 0, sizeof(s));
	snprintf(s.name, sizeof(s.name), "live");
	s.colour = true;
	s.has[MB_SM_THREADS] = s.has[MB_SM_IOPS] = s.has[MB_SM_READ_AVG] = true;
	s.v[MB_SM_THREADS] = 4;
	s.v[MB_SM_IOPS] = 1234;
	s.v[MB_SM_READ_AVG] = 25;
	assert_int_equal(mb_stortable_add(m, &s), 0);
	assert_int_equal(mb_stortable_series(m, 3)->verdict, MB_VERDICT_FAIL);
	s.colour = false;
	s.v[MB_SM_THREADS] = 2;
	s.v[MB_SM_READ_AVG] = 1;
	s.has[MB_SM_LOG_AVG] = true;
	s.v[MB_SM_LOG_AVG] = 0.5;
	assert_int_equal(mb_stortable_add(m, &s), 0);
	assert_int_equal(mb_stortable_series(m, 4)->verdict, MB_VERDICT_PASS);
	char buf[64];
	mb_stortable_cell(m, 0, MB_SM_IOPS, buf, sizeof(buf));
	assert_string_equal(buf, "5,580");
	mb_stortable_cell(m, 0, MB_SM_READ_P95, buf, sizeof(buf));
	assert_string_equal(buf, "n/a");
	/* the console's view: measures as rows, series as columns */
	static const enum mb_stor_measure rows[] = {MB_SM_THREADS, MB_SM_IOPS, MB_SM_READ_AVG,
						    MB_SM_LOG_AVG, MB_SM_VERDICT};
	struct mb_table *t;
	assert_int_equal(mb_stortable_by_measure(m, rows, 5, &t), 0);
	assert_int_equal(mb_table_cols(t), 5);
	assert_int_equal(mb_table_rows(t), 5);
	assert_string_equal(mb_table_heading(t, 0, false), "pub 4");
	assert_string_equal(mb_table_cell(t, 1, 2), "14,351");
	assert_string_equal(mb_table_cell(t, 2, 0), "1.16");
	assert_string_equal(mb_table_cell(t, 3, 3), "n/a");
	assert_string_equal(mb_table_cell(t, 4, 3), "fail");
	assert_int_equal(mb_table_verdict(t, 4), MB_VERDICT_FAIL); /* the live column's */
	mb_table_destroy(t);
	/* storage-test's view: measured thread counts with the published
	 * figures beside them, then the published counts not measured */
	static const enum mb_stor_measure cols[] = {MB_SM_IOPS, MB_SM_READ_AVG, MB_SM_VERDICT};
	assert_int_equal(mb_stortable_by_threads(m, cols, 3, &t), 0);
	assert_int_equal(mb_table_cols(t), 6);
	assert_int_equal(mb_table_rows(t), 4); /* 4, 2, then 8 and 12 */
	int r4 = row_of(t, "4"), r2 = row_of(t, "2"), r8 = row_of(t, "8");
	assert_true(r4 == 0 && r2 == 1 && r8 == 2 && row_of(t, "12") == 3);
	assert_string_equal(mb_table_cell(t, r4, 0), "1,234");
	assert_string_equal(mb_table_cell(t, r4, 2), "fail");
	assert_string_equal(mb_table_cell(t, r4, 3), "5,580");
	assert_string_equal(mb_table_cell(t, r4, 4), "1.16");
	assert_string_equal(mb_table_cell(t, r2, 3), "-");
	assert_string_equal(mb_table_cell(t, r8, 0), "(not measured)");
	assert_string_equal(mb_table_cell(t, r8, 3), "10,147");
	assert_int_equal(mb_table_verdict(t, r4), MB_VERDICT_FAIL);
	mb_table_destroy(t);
	/* the JSON keeps the published numbers exact */
	json_t *j = mb_stortable_published_json(m);
	assert_non_null(j);
	json_t *rw = json_object_get(j, "rows");
	assert_int_equal(json_array_size(rw), 3);
	assert_true(json_number_value(json_object_get(json_array_get(rw, 1), "iops")) == 10147);
	assert_true(json_number_value(json_object_get(json_array_get(rw, 1), "db_read_ms")) ==
		    1.29);
	assert_string_equal(json_string_value(json_object_get(j, "heading")), st->ref_heading);
	json_decref(j);
	mb_stortable_destroy(m);
	free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_format_number),
	    cmocka_unit_test(test_layout_wide),
	    cmocka_unit_test(test_condense),
	    cmocka_unit_test(test_header_cells_shrink_first),
	    cmocka_unit_test(test_compare_scenario1),
	    cmocka_unit_test(test_compare_per_ue),
	    cmocka_unit_test(test_norm_rules),
	    cmocka_unit_test(test_compare_legend),
	    cmocka_unit_test(test_spare_width),
	    cmocka_unit_test(test_acttable),
	    cmocka_unit_test(test_stortable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
