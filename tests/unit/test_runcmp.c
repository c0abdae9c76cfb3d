/* test_runcmp.c: unit tests of the report part's comparison, timeline,
 * capacity-limit and HTML code: differences normalised per
 * user-equivalent only for load-proportional counters and only when the
 * loads differ, warnings on another scenario or target, the table's
 * columns; per-window percentiles from encoded histograms and the run
 * JSON's series member; --limit parsing (units, ranges); the HTML report's
 * sections, escaping and chart data (uPlot from the source tree). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/hist.h"
#include "report/capacity.h"
#include "report/html.h"
#include "report/runcmp.h"
#include "report/timeline.h"

static void summary(struct mb_run_summary *s, const char *id, const char *sc, int users,
		    double accel, double net, double lat)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->id, sizeof(s->id), "%s", id);
	snprintf(s->scenario, sizeof(s->scenario), "%s", sc);
	snprintf(s->started, sizeof(s->started), "2026-12-01T10:00:00Z");
	s->mode = strcmp(sc, "cached") ? MB_MODE_ONLINE : MB_MODE_CACHED;
	s->users = users;
	s->accel = accel;
	s->scale = 0.04;
	s->smt = -1;
	s->avg[MB_C_NETWORK] = net;
	s->has[MB_C_NETWORK] = true;
	s->avg[MB_C_CLIENT_LATENCY] = lat;
	s->has[MB_C_CLIENT_LATENCY] = true;
}

static void test_diff_normalised(void **state)
{
	(void)state;
	struct mb_run_summary a, b, c;
	summary(&a, "a", "online", 100, 8, 1000, 10);
	summary(&b, "b", "online", 100, 8, 500, 12);  /* same load */
	summary(&c, "c", "online", 200, 8, 1000, 20); /* twice the load */
	double pct;
	bool per_ue;
	assert_true(mb_runcmp_diff(&a, &b, MB_C_NETWORK, 0, &pct, &per_ue));
	assert_false(per_ue);
	assert_true(fabs(pct - -50.0) < 1e-9);
	/* twice the load, the same network: half per user-equivalent */
	assert_true(mb_runcmp_diff(&a, &c, MB_C_NETWORK, 0, &pct, &per_ue));
	assert_true(per_ue);
	assert_true(fabs(pct - -50.0) < 1e-9);
	/* a latency is compared as it is */
	assert_true(mb_runcmp_diff(&a, &c, MB_C_CLIENT_LATENCY, 0, &pct, &per_ue));
	assert_false(per_ue);
	assert_true(fabs(pct - 100.0) < 1e-9);
	/* not measured in one run: no difference */
	assert_false(mb_runcmp_diff(&a, &c, MB_C_DB_TRANSFERS, 0, &pct, &per_ue));
	/* extra rows: user-equivalents */
	assert_true(mb_runcmp_diff(&a, &c, -1, MB_RX_UE, &pct, &per_ue));
	assert_true(fabs(pct - 100.0) < 1e-9);
}

static void test_warnings_and_table(void **state)
{
	(void)state;
	struct mb_run_summary a, b, c;
	summary(&a, "a", "online", 100, 8, 1000, 10);
	summary(&b, "b", "cached", 100, 8, 900, 10);
	summary(&c, "c", "online", 100, 8, 1000, 10);
	const struct mb_run_summary *runs[] = {&a, &b, &c};
	const char *targets[] = {"mbstore 127.0.0.1:1", "mbstore 127.0.0.1:1", "imap 127.0.0.1:2"};
	struct mb_runcmp_input in = {NULL, runs, targets, 3, 0};
	char buf[4096];
	assert_int_equal(mb_runcmp_warnings(&in, buf, sizeof(buf)), 2);
	assert_non_null(strstr(buf, "run 2 (b, cached) is of another scenario"));
	assert_non_null(strstr(buf, "run 3 (c) ran against target imap"));
	struct mb_table *t;
	assert_int_equal(mb_runcmp_build(&in, &t), 0);
	/* 3 runs, 2 differences */
	assert_int_equal(mb_table_cols(t), 5);
	assert_string_equal(mb_table_heading(t, 3, false), "2 vs 1");
	int found = 0;
	for (int r = 0; r < mb_table_rows(t); r++) {
		if (mb_table_tag(t, r) == MB_C_NETWORK) {
			assert_string_equal(mb_table_cell(t, r, 3), "-10%");
			assert_string_equal(mb_table_cell(t, r, 4), "+0%");
			found++;
		}
	}
	assert_int_equal(found, 1);
	json_t *j = mb_runcmp_json(&in);
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(j, "warnings")), 2);
	json_t *d = json_array_get(json_object_get(j, "differences"), 0);
	assert_true(
	    fabs(json_real_value(json_object_get(json_object_get(d, "pct"), "network_kbit_per_s")) -
		 -10.0) < 1e-9);
	json_decref(j);
	mb_table_destroy(t);
	/* more runs than fit is refused */
	in.n = MB_RUNCMP_MAX_RUNS + 1;
	assert_int_equal(mb_runcmp_build(&in, &t), MB_EINVAL);
}

static void test_timeline(void **state)
{
	(void)state;
	struct mb_timeline *tl;
	assert_int_equal(mb_timeline_create(&tl), 0);
	struct mb_hist *h;
	assert_int_equal(mb_hist_create(&h), 0);
	for (int i = 1; i <= 100; i++)
		mb_hist_record(h, (uint64_t)i * 1000000); /* 1..100 ms */
	char *enc;
	assert_int_equal(mb_hist_encode(h, &enc), 0);
	json_t *obj = json_pack("{s:s}", "rpc", enc);
	assert_int_equal(mb_timeline_add(tl, 3.0, obj), 0);
	/* a window without histograms adds no point */
	json_t *empty = json_object();
	assert_int_equal(mb_timeline_add(tl, 4.0, empty), 0);
	assert_int_equal(mb_timeline_len(tl), 1);
	double t, p50, p95, p99, score;
	mb_timeline_at(tl, 0, &t, &p50, &p95, &p99, &score);
	assert_true(fabs(p50 - 50) < 1.0 && fabs(p95 - 95) < 1.5 && fabs(p99 - 99) < 1.5);
	assert_true(isnan(score)); /* no actions in the window */
	struct mb_series *s;
	assert_int_equal(mb_series_create(&s), 0);
	double v[MB_COUNTER_COUNT] = {0};
	bool has[MB_COUNTER_COUNT] = {0};
	v[MB_C_RPC_OPS] = 7;
	has[MB_C_RPC_OPS] = true;
	mb_series_push(s, 2.0, v, has);
	mb_series_push(s, 3.0, v, has);
	json_t *ser = mb_runseries_json(s, tl, 1.0);
	assert_int_equal(json_array_size(json_object_get(ser, "t")), 2);
	assert_true(json_real_value(json_array_get(json_object_get(ser, "t"), 0)) == 1.0);
	json_t *ops = json_object_get(json_object_get(ser, "counters"), "rpc_ops_per_s");
	assert_int_equal(json_array_size(ops), 2);
	/* never measured: no array at all */
	assert_null(json_object_get(json_object_get(ser, "counters"), "network_kbit_per_s"));
	assert_true(json_is_null(
	    json_array_get(json_object_get(json_object_get(ser, "latency"), "score_ms"), 0)));
	json_decref(ser);
	json_decref(obj);
	json_decref(empty);
	free(enc);
	mb_hist_destroy(h);
	mb_series_destroy(s);
	mb_timeline_destroy(tl);
}

static void test_limits(void **state)
{
	(void)state;
	struct mb_capacity_limit l;
	char why[256], txt[64];
	assert_int_equal(mb_capacity_limit_parse("score=1000ms", &l, why, sizeof(why)), 0);
	assert_int_equal(l.kind, MB_LIM_SCORE);
	assert_true(l.value == 1000);
	assert_int_equal(mb_capacity_limit_parse("cpu=80%", &l, why, sizeof(why)), 0);
	assert_int_equal(l.kind, MB_LIM_CPU);
	mb_capacity_limit_text(&l, txt, sizeof(txt));
	assert_string_equal(txt, "cpu=80%");
	assert_int_equal(mb_capacity_limit_parse("latency=20", &l, why, sizeof(why)), 0);
	assert_int_equal(mb_capacity_limit_parse("p95=5ms", &l, why, sizeof(why)), 0);
	assert_int_equal(mb_capacity_limit_parse("cpu=120%", &l, why, sizeof(why)), MB_EINVAL);
	assert_int_equal(mb_capacity_limit_parse("score=1000s", &l, why, sizeof(why)), MB_EINVAL);
	assert_int_equal(mb_capacity_limit_parse("score=-1ms", &l, why, sizeof(why)), MB_EINVAL);
	assert_int_equal(mb_capacity_limit_parse("speed=1", &l, why, sizeof(why)), MB_EINVAL);
	assert_non_null(strstr(why, "speed=1"));
	assert_true(mb_capacity_fd_users() >= 1 && mb_capacity_fd_users() <= MB_CAPACITY_CPU_USERS);
}

/* The resource named for a failing step follows the measured figures. */
static void test_resource(void **state)
{
	(void)state;
	struct mb_capacity_step st;
	char buf[256];
	memset(&st, 0, sizeof(st));
	st.has_cpu = st.has_mcpu = st.has_loop = st.has_steal = true;
	st.store_cpu_pct = 55;
	st.machine_cpu_pct = 70;
	st.loop_cpu_pct = 97;
	mb_capacity_name_resource(&st, NULL, buf, sizeof(buf));
	assert_non_null(strstr(buf, "the store's network thread (97% of one core"));
	assert_null(strstr(buf, "steal"));
	/* below 90% of a core: the store's share of all CPUs decides */
	st.loop_cpu_pct = 80;
	st.store_cpu_pct = 64;
	mb_capacity_name_resource(&st, NULL, buf, sizeof(buf));
	assert_true(strncmp(buf, "store CPU (64% of", 17) == 0);
	st.store_cpu_pct = 40;
	st.machine_cpu_pct = 90;
	mb_capacity_name_resource(&st, NULL, buf, sizeof(buf));
	assert_true(strncmp(buf, "machine CPU (90%", 16) == 0);
	st.machine_cpu_pct = 50;
	st.steal_pct = 12;
	mb_capacity_name_resource(&st, NULL, buf, sizeof(buf));
	assert_true(strncmp(buf, "disk or the store's queues", 26) == 0);
	assert_non_null(strstr(buf, "; the hypervisor took 12% of the machine's CPU time (steal)"));
	/* unmeasured figures name nothing they did not see */
	st.has_loop = st.has_steal = false;
	st.loop_cpu_pct = 100;
	mb_capacity_name_resource(&st, NULL, buf, sizeof(buf));
	assert_null(strstr(buf, "network thread"));
	assert_null(strstr(buf, "steal"));
	/* a saturated load engine is never the server's limit */
	st.saturated = true;
	st.saturated_frac = 0.5;
	mb_capacity_name_resource(&st, NULL, buf, sizeof(buf));
	assert_true(strncmp(buf, "the load engine", 15) == 0);
}

/* The runs of one load: a failure counts unless the run was disturbed
 * (steal); --confirm N wants N + 1 counted failures, and disturbed runs
 * buy at most MB_CAPACITY_DISTURBED_RUNS runs more. */
static void test_run_again(void **state)
{
	(void)state;
	struct mb_capacity_step r[8];
	memset(r, 0, sizeof(r));
	assert_false(mb_capacity_run_again(r, 0, 1));
	/* --confirm 1: one undisturbed failure asks for a second run */
	assert_true(mb_capacity_run_again(r, 1, 1));
	assert_false(mb_capacity_run_again(r, 2, 1));
	/* --confirm 0: one undisturbed failure is final */
	assert_false(mb_capacity_run_again(r, 1, 0));
	/* a pass or a saturated load engine ends the runs */
	r[1].pass = true;
	assert_false(mb_capacity_run_again(r, 2, 4));
	r[1].pass = false;
	r[0].saturated = true;
	assert_false(mb_capacity_run_again(r, 1, 1));
	r[0].saturated = false;
	/* a disturbed failure is not counted: --confirm 0 runs again */
	r[0].disturbed = true;
	assert_true(mb_capacity_run_again(r, 1, 0));
	assert_false(mb_capacity_run_again(r, 2, 0)); /* the second was undisturbed */
	/* --confirm 1 with the first disturbed: two undisturbed failures more */
	assert_true(mb_capacity_run_again(r, 2, 1));
	assert_false(mb_capacity_run_again(r, 3, 1));
	/* every run disturbed: the budget ends it after confirm + 1 + 2 runs */
	for (int i = 0; i < 8; i++)
		r[i].disturbed = true;
	assert_true(mb_capacity_run_again(r, 3, 1));
	assert_false(mb_capacity_run_again(r, 1 + 1 + MB_CAPACITY_DISTURBED_RUNS, 1));
	assert_false(mb_capacity_run_again(r, 1 + MB_CAPACITY_DISTURBED_RUNS, 0));
}

static void test_disturbed(void **state)
{
	(void)state;
	struct mb_capacity_step st;
	memset(&st, 0, sizeof(st));
	/* no steal measured: never disturbed */
	st.over_x = 1.2;
	assert_false(mb_capacity_disturbed(&st, 2, MB_CAPACITY_FAR_OVER));
	st.has_steal = true;
	st.steal_pct = 1.9;
	assert_false(mb_capacity_disturbed(&st, 2, MB_CAPACITY_FAR_OVER));
	/* at the limit, missed by 1.2x: disturbed */
	st.steal_pct = 2.0;
	assert_true(mb_capacity_disturbed(&st, 2, MB_CAPACITY_FAR_OVER));
	/* missed MB_CAPACITY_FAR_OVER times over: counted whatever the steal */
	st.steal_pct = 24;
	st.over_x = MB_CAPACITY_FAR_OVER;
	assert_false(mb_capacity_disturbed(&st, 2, MB_CAPACITY_FAR_OVER));
	st.over_x = 15;
	assert_false(mb_capacity_disturbed(&st, 2, MB_CAPACITY_FAR_OVER));
	/* a pass at high steal is marked disturbed (over_x is 0 then) */
	st.pass = true;
	st.over_x = 0;
	assert_true(mb_capacity_disturbed(&st, 2, MB_CAPACITY_FAR_OVER));
	/* --steal-far-over 0: any failure can be disturbed */
	st.pass = false;
	st.over_x = 15;
	assert_true(mb_capacity_disturbed(&st, 2, 0));
	assert_true(mb_capacity_disturbed(&st, 2, 20)); /* 15x under a 20x rule */
	st.pass = true;
	/* --steal-limit 100: never */
	st.steal_pct = 99;
	assert_false(mb_capacity_disturbed(&st, 100, MB_CAPACITY_FAR_OVER));
}

static void test_html(void **state)
{
	(void)state;
	char vend[4200];
	snprintf(vend, sizeof(vend), "%s/vendor", MB_SRCDIR);
	setenv("MAILBENCH_VENDOR", vend, 1);
	struct mb_run_summary a;
	summary(&a, "run-<a>", "online", 100, 8, 1000, 10);
	json_t *j = mb_summary_to_json(&a);
	json_object_set_new(j, "series",
			    json_pack("{s:[f,f,f],s:{s:[f,n,f]},s:{s:[],s:[],s:[],s:[],s:[]}}", "t",
				      1.0, 2.0, 3.0, "counters", "rpc_ops_per_s", 5.0, 7.0,
				      "latency", "t", "p50_ms", "p95_ms", "p99_ms", "score_ms"));
	json_t *cap = json_pack("{s:s,s:{s:s},s:[{s:f,s:f,s:b},{s:f,s:f,s:b}],s:{s:s}}", "schema",
				"mailbench-capacity/1", "scenario", "title", "Scenario 1", "steps",
				"ue", 16000.0, "score_ms", 900.0, "pass", 1, "ue", 8000.0,
				"score_ms", 100.0, "pass", 1, "answer", "text", "knee </script>");
	json_t *docs[] = {j, cap};
	const char *names[] = {"a.json", "cap.json"};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	char why[512] = "";
	assert_int_equal(mb_html_report(docs, names, 2, f, why, sizeof(why)), 0);
	fclose(f);
	assert_non_null(strstr(buf, "<!DOCTYPE html>"));
	/* text from the documents is escaped, the data cannot end its script */
	assert_non_null(strstr(buf, "run-&lt;a&gt;"));
	assert_non_null(strstr(buf, "knee &lt;/script&gt;"));
	assert_null(strstr(buf, "run-<a>"));
	/* uPlot is inlined, and nothing is loaded from outside */
	assert_non_null(strstr(buf, "uPlot"));
	assert_null(strstr(buf, "<script src"));
	/* 6 counter charts and 2 capacity charts */
	int plots = 0;
	for (const char *p = buf; (p = strstr(p, "class=\"plot\"")); p++)
		plots++;
	assert_int_equal(plots, 8);
	assert_non_null(strstr(buf, "not checked: needs a run with compression off"));
	free(buf);
	/* a document of no known kind names itself */
	json_t *bad = json_pack("{s:i}", "x", 1);
	const char *bn = "other.json";
	f = open_memstream(&buf, &len);
	assert_int_equal(mb_html_report(&bad, &bn, 1, f, why, sizeof(why)), MB_EPROTO);
	fclose(f);
	free(buf);
	assert_non_null(strstr(why, "other.json"));
	/* the chart library missing: says where it looked */
	setenv("MAILBENCH_VENDOR", "/nonexistent", 1);
	f = open_memstream(&buf, &len);
	assert_int_equal(mb_html_report(docs, names, 1, f, why, sizeof(why)), MB_ENOTFOUND);
	fclose(f);
	free(buf);
	assert_non_null(strstr(why, "/nonexistent/uplot"));
	unsetenv("MAILBENCH_VENDOR");
	json_decref(bad);
	json_decref(j);
	json_decref(cap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_diff_normalised), cmocka_unit_test(test_warnings_and_table),
	    cmocka_unit_test(test_timeline),	    cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_resource),	    cmocka_unit_test(test_run_again),
	    cmocka_unit_test(test_disturbed),	    cmocka_unit_test(test_html),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
