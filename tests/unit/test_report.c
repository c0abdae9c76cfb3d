/* test_report.c: unit tests of the report part's data code: time series
 * (live window, run average after warm-up, gaps), histogram sets (exact
 * merge through the stats stream's encoding), thresholds (evaluation,
 * libconfig load with errors naming file+line+field, save/load round
 * trip), run summaries (verdict, JSON writer and reader round trip, saved
 * runs listing) and the CSV writer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/hist.h"
#include "report/faults.h"
#include "report/report.h"
#include "report/series.h"
#include "report/thresholds.h"

static char tmpdir[256];

static int setup(void **state)
{
	(void)state;
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	snprintf(tmpdir, sizeof(tmpdir), "%s/test_report.XXXXXX", base);
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void push_row(struct mb_series *s, double t, double rpc, bool rpc_has)
{
	double v[MB_COUNTER_COUNT] = {0};
	bool h[MB_COUNTER_COUNT] = {0};
	v[MB_C_RPC_OPS] = rpc;
	h[MB_C_RPC_OPS] = rpc_has;
	v[MB_C_USERS] = 10;
	h[MB_C_USERS] = true;
	assert_int_equal(mb_series_push(s, t, v, h), 0);
}

static void test_series_window_average(void **state)
{
	(void)state;
	struct mb_series *s;
	assert_int_equal(mb_series_create(&s), 0);
	double out;
	assert_int_equal(mb_series_window(s, MB_C_RPC_OPS, 10, &out), MB_ENOTFOUND);
	for (int t = 1; t <= 20; t++)
		push_row(s, t, t * 10.0, t != 15); /* second 15 not measured */
	assert_int_equal(mb_series_len(s), 20);
	/* live window: t in (10, 20], second 15 missing: 11..20 without 15 */
	assert_int_equal(mb_series_window(s, MB_C_RPC_OPS, 10, &out), 0);
	double sum = 0;
	int n = 0;
	for (int t = 11; t <= 20; t++)
		if (t != 15) {
			sum += t * 10.0;
			n++;
		}
	assert_float_equal(out, sum / n, 1e-9);
	/* run average after a 5 s warm-up: t >= 5 */
	assert_int_equal(mb_series_average(s, MB_C_RPC_OPS, 5, &out), 0);
	sum = 0;
	n = 0;
	for (int t = 5; t <= 20; t++)
		if (t != 15) {
			sum += t * 10.0;
			n++;
		}
	assert_float_equal(out, sum / n, 1e-9);
	assert_float_equal(mb_series_measured_s(s, 5), 16, 1e-9);
	/* never measured: n/a, not zero */
	assert_int_equal(mb_series_average(s, MB_C_DB_CACHE_MB, 0, &out), MB_ENOTFOUND);
	/* a warm-up longer than the run: nothing to average */
	assert_int_equal(mb_series_average(s, MB_C_RPC_OPS, 100, &out), MB_ENOTFOUND);
	double vals[25];
	bool has[25];
	mb_series_tail(s, MB_C_RPC_OPS, 25, vals, has);
	assert_false(has[0]); /* before the series started */
	assert_true(has[24]);
	assert_float_equal(vals[24], 200, 1e-9);
	assert_false(has[24 - 5]); /* second 15 */
	mb_series_reset(s);
	assert_int_equal(mb_series_len(s), 0);
	mb_series_destroy(s);
}

static void test_histset_exact_merge(void **state)
{
	(void)state;
	struct mb_hist *a, *b, *all;
	assert_int_equal(mb_hist_create(&a), 0);
	assert_int_equal(mb_hist_create(&b), 0);
	assert_int_equal(mb_hist_create(&all), 0);
	for (uint64_t i = 1; i <= 1000; i++) {
		uint64_t ns = i * 37000 + (i % 7) * 1000;
		mb_hist_record(i % 3 ? a : b, ns);
		mb_hist_record(all, ns);
	}
	char *ea, *eb;
	assert_int_equal(mb_hist_encode(a, &ea), 0);
	assert_int_equal(mb_hist_encode(b, &eb), 0);
	struct mb_histset *hs;
	assert_int_equal(mb_histset_create(&hs), 0);
	json_t *w1 = json_pack("{s:s,s:s}", "rpc", ea, "action.send_mail", ea);
	json_t *w2 = json_pack("{s:s,s:i}", "rpc", eb, "bogus", 3);
	assert_int_equal(mb_histset_merge_json(hs, w1), 0);
	assert_int_equal(mb_histset_merge_json(hs, w2), 0);
	assert_int_equal(mb_histset_bad(hs), 1);
	const struct mb_hist *m = mb_histset_find(hs, "rpc");
	assert_non_null(m);
	assert_int_equal(mb_hist_count(m), 1000);
	for (double p = 1; p <= 100; p += 7)
		assert_int_equal(mb_hist_percentile_ns(m, p), mb_hist_percentile_ns(all, p));
	assert_int_equal(mb_hist_max_ns(m), mb_hist_max_ns(all));
	struct mb_hist *acts;
	assert_int_equal(mb_hist_create(&acts), 0);
	mb_histset_merge_prefix(hs, "action.", acts);
	assert_int_equal(mb_hist_count(acts), mb_hist_count(a));
	struct mb_latency l;
	mb_latency_from_hist(m, &l);
	assert_true(l.has);
	assert_float_equal(l.mean_ms, mb_hist_mean_ns(all) / 1e6, 1e-9);
	mb_latency_from_hist(NULL, &l);
	assert_false(l.has);
	json_decref(w1);
	json_decref(w2);
	free(ea);
	free(eb);
	mb_hist_destroy(a);
	mb_hist_destroy(b);
	mb_hist_destroy(all);
	mb_hist_destroy(acts);
	mb_histset_destroy(hs);
}

static void test_threshold_eval(void **state)
{
	(void)state;
	struct mb_threshold t = {MB_CMP_LT, 80};
	assert_int_equal(mb_threshold_eval(&t, true, 79.9), MB_VERDICT_PASS);
	assert_int_equal(mb_threshold_eval(&t, true, 80), MB_VERDICT_FAIL);
	assert_int_equal(mb_threshold_eval(&t, false, 1), MB_VERDICT_NONE);
	t.cmp = MB_CMP_LE;
	assert_int_equal(mb_threshold_eval(&t, true, 80), MB_VERDICT_PASS);
	t.cmp = MB_CMP_GT;
	assert_int_equal(mb_threshold_eval(&t, true, 80), MB_VERDICT_FAIL);
	t.cmp = MB_CMP_GE;
	assert_int_equal(mb_threshold_eval(&t, true, 80), MB_VERDICT_PASS);
	t.cmp = MB_CMP_NONE;
	assert_int_equal(mb_threshold_eval(&t, true, 1e9), MB_VERDICT_NONE);
	struct mb_thresholds th;
	mb_thresholds_init(&th, NULL, NULL);
	assert_int_equal(mb_storage_verdict(&th, true, 1.2, true, 0.9), MB_VERDICT_PASS);
	assert_int_equal(mb_storage_verdict(&th, true, 25, true, 0.9), MB_VERDICT_FAIL);
	assert_int_equal(mb_storage_verdict(&th, false, 0, false, 0), MB_VERDICT_NONE);
	char buf[32];
	th.counter[MB_C_PROCESSOR_PCT] = (struct mb_threshold){MB_CMP_LE, 80};
	mb_threshold_text(&th.counter[MB_C_PROCESSOR_PCT], MB_C_PROCESSOR_PCT, buf, sizeof(buf));
	assert_string_equal(buf, "<= 80.0");
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_thresholds_file(void **state)
{
	(void)state;
	char path[400];
	struct mb_thresholds th, copy;
	struct mb_cfg_error err;
	mb_thresholds_init(&th, NULL, NULL);
	snprintf(path, sizeof(path), "%s/thresholds.cfg", tmpdir);
	unlink(path);
	assert_int_equal(mb_thresholds_load(&th, path, &err), MB_ENOTFOUND);
	write_file(path, "counters = {\n  processor_pct = { cmp = \"<=\"; value = 80; };\n"
			 "  rpc_ops_per_s = { cmp = \">\"; value = 900.5; };\n};\n"
			 "storage = { db_read_avg_ms_max = 15.0; };\n");
	assert_int_equal(mb_thresholds_load(&th, path, &err), 0);
	assert_int_equal(th.counter[MB_C_PROCESSOR_PCT].cmp, MB_CMP_LE);
	assert_float_equal(th.counter[MB_C_PROCESSOR_PCT].value, 80, 0);
	assert_int_equal(th.counter[MB_C_RPC_OPS].cmp, MB_CMP_GT);
	/* an older file's storage limits are the two counters' "< X" */
	assert_int_equal(th.counter[MB_C_STRESS_READ_MS].cmp, MB_CMP_LT);
	assert_float_equal(th.counter[MB_C_STRESS_READ_MS].value, 15, 0);
	assert_float_equal(th.counter[MB_C_STRESS_LOG_MS].value, 10, 0);
	/* errors name the file, the line and the field, and change nothing */
	copy = th;
	write_file(path, "counters = {\n  processor_pct = { cmp = \"<=\"; value = 70; };\n"
			 "  no_such_counter = { cmp = \"<\"; value = 1; };\n};\n");
	assert_int_equal(mb_thresholds_load(&th, path, &err), MB_ECONFIG);
	assert_int_equal(err.line, 3);
	assert_string_equal(err.field, "counters.no_such_counter");
	assert_memory_equal(&th, &copy, sizeof(th));
	write_file(path, "counters = {\n  users = { cmp = \"~\"; value = 1; };\n};\n");
	assert_int_equal(mb_thresholds_load(&th, path, &err), MB_ECONFIG);
	assert_string_equal(err.field, "counters.users");
	write_file(path, "counters = { users = { cmp = \"<\" ; ");
	assert_int_equal(mb_thresholds_load(&th, path, &err), MB_ECONFIG);
	assert_true(err.line >= 1);
	/* save and load back: identical */
	th.counter[MB_C_CLIENT_LATENCY] = (struct mb_threshold){MB_CMP_LT, 0.1};
	th.counter[MB_C_STRESS_LOG_MS] = (struct mb_threshold){MB_CMP_LE, 3.25};
	assert_int_equal(mb_thresholds_save(&th, path), 0);
	struct mb_thresholds back;
	mb_thresholds_init(&back, NULL, NULL);
	assert_int_equal(mb_thresholds_load(&back, path, &err), 0);
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		assert_int_equal(back.counter[i].cmp, th.counter[i].cmp);
		if (th.counter[i].cmp != MB_CMP_NONE)
			assert_float_equal(back.counter[i].value, th.counter[i].value, 0);
	}
	assert_int_equal(back.counter[MB_C_STRESS_LOG_MS].cmp, MB_CMP_LE);
	assert_float_equal(back.counter[MB_C_STRESS_LOG_MS].value, 3.25, 0);
}

/* The storage test's latency limits are ordinary counter thresholds. */
static void test_storage_thresholds(void **state)
{
	(void)state;
	struct mb_storage_cfg st;
	memset(&st, 0, sizeof(st));
	st.db_read_avg_ms_max = 5;
	st.log_write_avg_ms_max = 2;
	struct mb_thresholds th;
	mb_thresholds_init(&th, NULL, &st);
	assert_int_equal(th.counter[MB_C_STRESS_READ_MS].cmp, MB_CMP_LT);
	assert_float_equal(th.counter[MB_C_STRESS_READ_MS].value, 5, 0);
	assert_float_equal(th.counter[MB_C_STRESS_LOG_MS].value, 2, 0);
	/* the scenario's threshold on the counter wins over the storage file */
	struct mb_scenario *sc = calloc(1, sizeof(*sc));
	assert_non_null(sc);
	sc->thresholds[MB_C_STRESS_READ_MS] = (struct mb_threshold){MB_CMP_LE, 5};
	mb_thresholds_init(&th, sc, &st);
	free(sc);
	assert_int_equal(th.counter[MB_C_STRESS_READ_MS].cmp, MB_CMP_LE);
	assert_int_equal(mb_storage_verdict(&th, true, 5, true, 1), MB_VERDICT_PASS);
	assert_int_equal(mb_storage_verdict(&th, true, 5, true, 2), MB_VERDICT_FAIL);
	/* one measured and passing is no verdict; one failing is a fail */
	assert_int_equal(mb_storage_verdict(&th, true, 1, false, 0), MB_VERDICT_NONE);
	assert_int_equal(mb_storage_verdict(&th, false, 0, true, 9), MB_VERDICT_FAIL);
	/* none: that latency never fails */
	th.counter[MB_C_STRESS_LOG_MS] = (struct mb_threshold){MB_CMP_NONE, 0};
	assert_int_equal(mb_storage_verdict(&th, true, 1, true, 1e9), MB_VERDICT_NONE);
	/* the command line's form: X is "< X", or any threshold, or none */
	struct mb_threshold t;
	assert_int_equal(mb_threshold_parse_limit("1e9", 0, 1e12, &t), 0);
	assert_true(t.cmp == MB_CMP_LT && t.value == 1e9);
	assert_int_equal(mb_threshold_parse_limit("<= 5", 0, 1e12, &t), 0);
	assert_true(t.cmp == MB_CMP_LE && t.value == 5);
	assert_int_equal(mb_threshold_parse_limit("none", 0, 1e12, &t), 0);
	assert_int_equal(t.cmp, MB_CMP_NONE);
	assert_int_equal(mb_threshold_parse_limit("0", 0, 1e12, &t), MB_EINVAL);
	assert_int_equal(mb_threshold_parse_limit("2e12", 0, 1e12, &t), MB_EINVAL);
	assert_int_equal(mb_threshold_parse_limit("5 ms", 0, 1e12, &t), MB_EINVAL);
	assert_int_equal(mb_threshold_parse_limit("~ 5", 0, 1e12, &t), MB_EINVAL);
	/* and the thresholds file carries them as counters */
	char path[400];
	snprintf(path, sizeof(path), "%s/thresholds-st.cfg", tmpdir);
	th.counter[MB_C_STRESS_READ_MS] = (struct mb_threshold){MB_CMP_LE, 7.5};
	assert_int_equal(mb_thresholds_save(&th, path), 0);
	struct mb_thresholds back;
	struct mb_cfg_error err;
	mb_thresholds_init(&back, NULL, NULL);
	assert_int_equal(mb_thresholds_load(&back, path, &err), 0);
	assert_int_equal(back.counter[MB_C_STRESS_READ_MS].cmp, MB_CMP_LE);
	assert_float_equal(back.counter[MB_C_STRESS_READ_MS].value, 7.5, 0);
	assert_int_equal(back.counter[MB_C_STRESS_LOG_MS].cmp, MB_CMP_NONE);
}

static void fill_summary(struct mb_run_summary *s, const char *id, const char *started)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->id, sizeof(s->id), "%s", id);
	snprintf(s->started, sizeof(s->started), "%s", started);
	snprintf(s->scenario, sizeof(s->scenario), "online");
	snprintf(s->title, sizeof(s->title), "Scenario 1: Outlook online");
	s->scenario_number = 1;
	s->users = 50;
	s->scale = 0.01;
	s->accel = 10;
	s->compression = true;
	s->duration_s = 60;
	s->warmup_s = 10;
	s->measured_s = 50;
	snprintf(s->platform, sizeof(s->platform), "Linux x86_64");
	snprintf(s->engine, sizeof(s->engine), "mailbench");
	snprintf(s->client_mode, sizeof(s->client_mode), "online, compression on");
	s->smt = -1;
	s->avg[MB_C_RPC_OPS] = 123.5;
	s->has[MB_C_RPC_OPS] = true;
	s->avg[MB_C_PROCESSOR_PCT] = 12.5;
	s->has[MB_C_PROCESSOR_PCT] = true;
	s->rpc_latency = (struct mb_latency){true, 100, 1.5, 1.0, 3.0, 4.0, 9.0};
	s->has_score = true;
	s->score_ms = 42;
	s->actions[MB_A_SEND_MAIL].has_counts = true;
	s->actions[MB_A_SEND_MAIL].scheduled = 10;
	s->actions[MB_A_SEND_MAIL].done = 9;
	s->actions[MB_A_SEND_MAIL].failed = 1;
	s->actions[MB_A_SEND_MAIL].has_per_user_day = true;
	s->actions[MB_A_SEND_MAIL].per_user_day = 11.5;
	s->has_messages_sent = true;
	s->messages_sent_per_user_day = 50.25;
	mb_thresholds_init(&s->thresholds, NULL, NULL);
	s->thresholds.counter[MB_C_PROCESSOR_PCT] = (struct mb_threshold){MB_CMP_LT, 80};
	mb_summary_evaluate(s);
}

static void test_summary_verdict(void **state)
{
	(void)state;
	struct mb_run_summary s;
	fill_summary(&s, "r1", "2026-11-29T21:00:00Z");
	assert_int_equal(s.verdict[MB_C_PROCESSOR_PCT], MB_VERDICT_PASS);
	assert_int_equal(s.overall, MB_VERDICT_PASS);
	s.thresholds.counter[MB_C_RPC_OPS] = (struct mb_threshold){MB_CMP_GE, 900};
	mb_summary_evaluate(&s);
	assert_int_equal(s.verdict[MB_C_RPC_OPS], MB_VERDICT_FAIL);
	assert_int_equal(s.overall, MB_VERDICT_FAIL);
	/* a threshold on an unmeasured counter gives no verdict */
	fill_summary(&s, "r1", "2026-11-29T21:00:00Z");
	s.thresholds.counter[MB_C_DB_CACHE_MB] = (struct mb_threshold){MB_CMP_GT, 1};
	mb_summary_evaluate(&s);
	assert_int_equal(s.verdict[MB_C_DB_CACHE_MB], MB_VERDICT_NONE);
	assert_int_equal(s.overall, MB_VERDICT_PASS);
	/* the storage test, when it ran, fails the run on its limits */
	s.storage_test = true;
	s.has[MB_C_STRESS_READ_MS] = s.has[MB_C_STRESS_LOG_MS] = true;
	s.avg[MB_C_STRESS_READ_MS] = 1.2;
	s.avg[MB_C_STRESS_LOG_MS] = 0.9;
	mb_summary_evaluate(&s);
	assert_int_equal(s.storage_verdict, MB_VERDICT_PASS);
	assert_int_equal(s.overall, MB_VERDICT_PASS);
	s.avg[MB_C_STRESS_READ_MS] = 25;
	mb_summary_evaluate(&s);
	assert_int_equal(s.storage_verdict, MB_VERDICT_FAIL);
	assert_int_equal(s.overall, MB_VERDICT_FAIL);
	s.avg[MB_C_STRESS_READ_MS] = 1.2;
	s.failed = true;
	mb_summary_evaluate(&s);
	assert_int_equal(s.overall, MB_VERDICT_FAIL);
}

static void test_summary_json_round_trip(void **state)
{
	(void)state;
	struct mb_run_summary s, back;
	fill_summary(&s, "20261129-210000-online", "2026-11-29T21:00:00Z");
	json_t *j = mb_summary_to_json(&s);
	assert_non_null(j);
	/* every counters-table key is present; unmeasured ones are null */
	json_t *c = json_object_get(j, "counters");
	assert_int_equal(json_object_size(c), MB_COUNTER_COUNT);
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		json_t *v = json_object_get(c, mb_counters[i].key);
		assert_non_null(v);
		assert_true(s.has[i] ? json_is_number(v) : json_is_null(v));
	}
	assert_string_equal(json_string_value(json_object_get(j, "verdict")), "pass");
	assert_true(json_is_null(json_object_get(json_object_get(j, "latency"), "actions")));
	char why[256];
	assert_int_equal(mb_summary_from_json(j, &back, why, sizeof(why)), 0);
	assert_string_equal(back.id, s.id);
	assert_string_equal(back.started, s.started);
	assert_int_equal(back.users, 50);
	assert_float_equal(back.scale, 0.01, 1e-12);
	assert_true(back.compression);
	assert_int_equal(back.smt, -1);
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		assert_int_equal(back.has[i], s.has[i]);
		if (s.has[i])
			assert_float_equal(back.avg[i], s.avg[i], 1e-9);
	}
	assert_true(back.rpc_latency.has);
	assert_float_equal(back.rpc_latency.p99_ms, 4.0, 1e-9);
	assert_int_equal(back.rpc_latency.count, 100);
	assert_false(back.action_latency.has);
	assert_true(back.has_score);
	assert_float_equal(back.actions[MB_A_SEND_MAIL].failed, 1, 0);
	assert_float_equal(back.actions[MB_A_SEND_MAIL].per_user_day, 11.5, 1e-9);
	assert_false(back.actions[MB_A_LOGOFF].has_counts);
	assert_true(back.has_messages_sent);
	assert_false(back.has_messages_received);
	assert_int_equal(back.thresholds.counter[MB_C_PROCESSOR_PCT].cmp, MB_CMP_LT);
	assert_int_equal(back.overall, MB_VERDICT_PASS);
	/* a wrong schema is refused with a reason */
	json_object_set_new(j, "schema", json_string("other/1"));
	assert_int_equal(mb_summary_from_json(j, &back, why, sizeof(why)), MB_EPROTO);
	assert_non_null(strstr(why, "schema"));
	json_decref(j);
}

/* A run's compression as shown: on/off where the target has it, n/a
 * where it has none (imap, the lab, null), and the label says "nocomp"
 * only when it was off. */
static void test_summary_compression(void **state)
{
	(void)state;
	struct mb_run_summary s;
	char label[128];
	fill_summary(&s, "20261129-210000-online", "2026-11-29T21:00:00Z");
	static const struct {
		const char *target;
		bool compression;
		const char *want;
	} cases[] = {{"", true, "on"},
		     {"mbstore", false, "off"},
		     {"mbstore:127.0.0.1:7000", true, "on"},
		     {"lab:dovecot", false, "n/a"},
		     {"imap:127.0.0.1:1430", false, "n/a"},
		     {"null", false, "n/a"}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(s.target, sizeof(s.target), "%s", cases[i].target);
		s.compression = cases[i].compression;
		assert_string_equal(mb_summary_compression(&s), cases[i].want);
		mb_summary_label(&s, label, sizeof(label));
		assert_int_equal(strstr(label, "nocomp") != NULL, !strcmp(cases[i].want, "off"));
	}
}

static void test_saved_runs(void **state)
{
	(void)state;
	struct mb_run_summary s;
	char path[600];
	fill_summary(&s, "older", "2026-11-29T20:00:00Z");
	assert_int_equal(mb_summary_save(&s, tmpdir, path, sizeof(path)), 0);
	fill_summary(&s, "newer", "2026-11-29T21:00:00Z");
	assert_int_equal(mb_summary_save(&s, tmpdir, path, sizeof(path)), 0);
	char junk[600];
	snprintf(junk, sizeof(junk), "%s/runs/junk.json", tmpdir);
	write_file(junk, "{\"not\": \"a run\"}");
	struct mb_run_list *l;
	assert_int_equal(mb_run_list_load(tmpdir, &l), 0);
	assert_int_equal(mb_run_list_count(l), 2);
	assert_string_equal(mb_run_list_at(l, 0)->id, "newer");
	assert_string_equal(mb_run_list_at(l, 1)->id, "older");
	assert_non_null(strstr(mb_run_list_path(l, 0), "/runs/newer.json"));
	mb_run_list_destroy(l);
	struct mb_run_summary back;
	char why[256];
	assert_int_equal(mb_summary_read(path, &back, why, sizeof(why)), 0);
	assert_float_equal(back.avg[MB_C_RPC_OPS], 123.5, 1e-9);
	assert_int_equal(mb_summary_read(junk, &back, why, sizeof(why)), MB_EPROTO);
}

static void test_csv(void **state)
{
	(void)state;
	struct mb_series *s;
	assert_int_equal(mb_series_create(&s), 0);
	push_row(s, 1, 10, true);
	push_row(s, 2, 20, false);
	char path[400];
	snprintf(path, sizeof(path), "%s/run.csv", tmpdir);
	assert_int_equal(mb_csv_write_file(s, 0.5, path), 0);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char line[256];
	int n = 0, rpc = 0;
	assert_non_null(fgets(line, sizeof(line), f));
	assert_string_equal(line, "t_s,counter,value\n");
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (n == 1)
			assert_memory_equal(line, "0.500,", 6); /* t 1 - offset 0.5 */
		if (strstr(line, ",rpc_ops_per_s,"))
			rpc++;
		assert_int_equal(strchr(line, ',') != NULL, 1);
	}
	fclose(f);
	/* users in both seconds, RPC operations only where measured */
	assert_int_equal(n, 3);
	assert_int_equal(rpc, 1);
	mb_series_destroy(s);
}

/* fault specs: io-error's MODE and FILES in either order, bad ones named */
static void test_fault_specs(void **state)
{
	(void)state;
	struct mb_fault_spec sp;
	char err[256];
	assert_int_equal(mb_fault_parse("io-error@30s", &sp, err, sizeof(err)), 0);
	assert_int_equal(sp.kind, MB_FK_IO_ERROR);
	assert_string_equal(sp.mode, "eio");
	assert_string_equal(sp.files, "log");
	assert_true(sp.at_s == 30 && sp.dur_s == 10);
	assert_int_equal(mb_fault_parse("io-error@1m:fsync:db+4s", &sp, err, sizeof(err)), 0);
	assert_string_equal(sp.mode, "fsync");
	assert_string_equal(sp.files, "db");
	assert_true(sp.at_s == 60 && sp.dur_s == 4);
	assert_int_equal(mb_fault_parse("io-error@2s:all:enospc", &sp, err, sizeof(err)), 0);
	assert_string_equal(sp.mode, "enospc");
	assert_string_equal(sp.files, "all");
	assert_int_equal(mb_fault_parse("io-error@2s:db", &sp, err, sizeof(err)), 0);
	assert_string_equal(sp.mode, "eio");
	assert_string_equal(sp.files, "db");
	static const char *const bad[] = {"io-error@2s:db:log", "io-error@2s:eio:fsync",
					  "io-error@2s:disk",
					  "io-error@2s:eio:", "io-error@2s:,db"};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		err[0] = '\0';
		assert_int_equal(mb_fault_parse(bad[k], &sp, err, sizeof(err)), MB_EINVAL);
		assert_non_null(strstr(err, bad[k]));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_series_window_average),
	    cmocka_unit_test(test_histset_exact_merge),
	    cmocka_unit_test(test_threshold_eval),
	    cmocka_unit_test(test_thresholds_file),
	    cmocka_unit_test(test_storage_thresholds),
	    cmocka_unit_test(test_summary_verdict),
	    cmocka_unit_test(test_summary_json_round_trip),
	    cmocka_unit_test(test_summary_compression),
	    cmocka_unit_test(test_saved_runs),
	    cmocka_unit_test(test_csv),
	    cmocka_unit_test(test_fault_specs),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
