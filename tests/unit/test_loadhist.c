/* test_loadhist.c: the load engine's measurement set (src/load/loadstats.h):
 * histograms and counts of several loops merge exactly (percentiles of the
 * merge equal those of one set that saw every value), survive the stats
 * stream's JSON encoding ("h" and "x") exactly, and the LoadSim-style score
 * is the frequency-weighted mean of the per-action 95th percentiles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "load/loadstats.h"
#include "load/sched.h"

/* a driver's operation names (target.h) */
#define NOPS 5
static const char *const op_names[NOPS] = {"Logon", "QueryRows", "imap.SELECT", "imap.FETCH",
					   "smtp.DATA"};

static int mk(struct mb_load_stats **s)
{
	int rc = mb_load_stats_create(s);
	return rc ? rc : mb_load_stats_set_ops(*s, op_names, NOPS);
}

static void fill(struct mb_load_stats *s, uint64_t seed, int n)
{
	for (int i = 0; i < n; i++) {
		uint64_t v = 1000 + (uint64_t)(mb_rng_exp(&seed, 2e6));
		mb_hist_record(s->rpc, v);
		mb_hist_record(s->rpc_by_op[i % NOPS], v);
		int a = i % 3;
		mb_hist_record(s->action[a], v * (uint64_t)(a + 1));
		s->done[a]++;
		s->scheduled[a]++;
		s->op_count[i % NOPS]++;
		mb_hist_record(s->loop_lag, v / 100);
	}
	s->failed[1] += 3;
	s->failed_by[MB_LOAD_FAIL_OVERRUN] += 1;
	s->failed_by[mb_load_fail_cause(MB_ETIMEDOUT)] += 2;
	s->late[2] += 2;
	s->cut[3] += 4;
	s->n.rpcs += (uint64_t)n;
	s->n.bytes_sent += 1000u * (uint64_t)n;
	s->n.deliveries += 7;
}

static void test_merge_exact(void **state)
{
	(void)state;
	struct mb_load_stats *a, *b, *all, *m;
	assert_int_equal(mk(&a), 0);
	assert_int_equal(mk(&b), 0);
	assert_int_equal(mk(&all), 0);
	assert_int_equal(mk(&m), 0);
	fill(a, 1, 5000);
	fill(b, 2, 7000);
	fill(all, 1, 5000);
	fill(all, 2, 7000);
	mb_load_stats_merge(m, a);
	mb_load_stats_merge(m, b);
	assert_int_equal(mb_hist_count(m->rpc), 12000);
	for (double p = 50; p <= 99.9; p += 7.3)
		assert_int_equal(mb_hist_percentile_ns(m->rpc, p),
				 mb_hist_percentile_ns(all->rpc, p));
	for (int i = 0; i < 3; i++) {
		assert_int_equal(m->done[i], all->done[i]);
		assert_int_equal(mb_hist_percentile_ns(m->action[i], 95),
				 mb_hist_percentile_ns(all->action[i], 95));
	}
	assert_int_equal(m->failed[1], 6);
	assert_int_equal(m->n.rpcs, 12000);
	assert_int_equal(mb_load_stats_done(m), 12000);
	assert_int_equal(mb_load_stats_failed(m), 6);
	mb_load_stats_reset(m);
	assert_int_equal(mb_hist_count(m->rpc), 0);
	assert_int_equal(mb_load_stats_done(m), 0);
	assert_int_equal(m->n.rpcs, 0);
	mb_load_stats_destroy(a);
	mb_load_stats_destroy(b);
	mb_load_stats_destroy(all);
	mb_load_stats_destroy(m);
}

/* Every error code of the table has a cause of its own, named by the table;
 * codes outside it share one; an overrun is none of them. */
static void test_fail_causes(void **state)
{
	(void)state;
	assert_int_equal(mb_load_fail_cause(MB_EFULL), -MB_EFULL);
	assert_string_equal(mb_load_fail_cause_name(mb_load_fail_cause(MB_EFULL)), "MB_EFULL");
	assert_string_equal(mb_load_fail_cause_name(mb_load_fail_cause(MB_ETLS)), "MB_ETLS");
	assert_string_equal(mb_load_fail_cause_name(MB_LOAD_FAIL_OVERRUN), "overrun");
	assert_int_equal(mb_load_fail_cause(-MB_ERROR_COUNT), MB_ERROR_COUNT);
	assert_int_equal(mb_load_fail_cause(-1000), MB_ERROR_COUNT);
	assert_int_equal(mb_load_fail_cause(5), MB_ERROR_COUNT);
	assert_true(mb_load_fail_cause(MB_EINVAL) != MB_LOAD_FAIL_OVERRUN);
	/* the table's codes are 0 .. -(MB_ERROR_COUNT - 1), all named */
	for (int c = 0; c > -MB_ERROR_COUNT; c--)
		assert_string_not_equal(mb_errname(c), "MB_E?");
	assert_string_equal(mb_errname(-MB_ERROR_COUNT), "MB_E?");
	for (int i = 0; i < MB_LOAD_FAIL_CAUSES; i++) {
		assert_non_null(mb_load_fail_cause_text(i));
		assert_true(strlen(mb_load_fail_cause_name(i)) < 24); /* mb_fail_cause.cause */
	}
}

static void test_json_roundtrip(void **state)
{
	(void)state;
	struct mb_load_stats *a, *b, *sum;
	assert_int_equal(mk(&a), 0);
	assert_int_equal(mk(&b), 0);
	assert_int_equal(mk(&sum), 0);
	fill(a, 3, 3000);
	fill(b, 4, 2000);
	/* two windows encoded, decoded into one set (the supervisor's side) */
	for (int w = 0; w < 2; w++) {
		struct mb_load_stats *s = w ? b : a;
		json_t *h, *x;
		assert_int_equal(mb_load_stats_hists_json(s, &h), 0);
		assert_int_equal(mb_load_stats_counts_json(s, &x), 0);
		assert_non_null(json_object_get(h, "rpc"));
		assert_non_null(json_object_get(h, "action.send_mail"));
		assert_null(json_object_get(h, "action.logoff")); /* empty: left out */
		assert_non_null(json_object_get(json_object_get(x, "actions"), "send_mail"));
		/* through text, as on the stream */
		char *text = json_dumps(h, JSON_COMPACT);
		json_t *h2 = json_loads(text, 0, NULL);
		free(text);
		assert_int_equal(mb_load_stats_merge_json(sum, h2, x), 0);
		json_decref(h);
		json_decref(h2);
		json_decref(x);
	}
	mb_load_stats_merge(a, b);
	assert_int_equal(mb_hist_count(sum->rpc), mb_hist_count(a->rpc));
	assert_int_equal(mb_hist_percentile_ns(sum->rpc, 99), mb_hist_percentile_ns(a->rpc, 99));
	assert_true(fabs(mb_hist_mean_ns(sum->rpc) - mb_hist_mean_ns(a->rpc)) < 1e-6);
	for (int i = 0; i < NOPS; i++) {
		assert_int_equal(sum->op_count[i], a->op_count[i]);
		assert_int_equal(mb_hist_count(sum->rpc_by_op[i]), mb_hist_count(a->rpc_by_op[i]));
	}
	for (int i = 0; i < MB_ACTION_COUNT; i++) {
		assert_int_equal(sum->done[i], a->done[i]);
		assert_int_equal(sum->failed[i], a->failed[i]);
		assert_int_equal(sum->late[i], a->late[i]);
		assert_int_equal(sum->cut[i], a->cut[i]);
	}
	for (int i = 0; i < MB_LOAD_FAIL_CAUSES; i++)
		assert_int_equal(sum->failed_by[i], a->failed_by[i]);
	assert_int_equal(sum->failed_by[MB_LOAD_FAIL_OVERRUN], 2);
	assert_int_equal(sum->failed_by[mb_load_fail_cause(MB_ETIMEDOUT)], 4);
	assert_int_equal(sum->cut[3], 8);
	assert_int_equal(sum->n.bytes_sent, a->n.bytes_sent);
	assert_int_equal(sum->n.deliveries, 14);
	/* bad input is refused, not crashed on */
	json_t *bad = json_pack("{ss}", "rpc", "garbage");
	assert_true(mb_load_stats_merge_json(sum, bad, NULL) < 0);
	json_decref(bad);
	mb_load_stats_destroy(a);
	mb_load_stats_destroy(b);
	mb_load_stats_destroy(sum);
}

static void test_score(void **state)
{
	(void)state;
	struct mb_load_stats *s;
	assert_int_equal(mk(&s), 0);
	double w[MB_ACTION_COUNT] = {0};
	double score;
	assert_true(mb_load_stats_score_ns(s, w, &score) < 0);
	/* action 0: all 10 ms; action 1: all 100 ms; weights 3 and 1 */
	for (int i = 0; i < 1000; i++) {
		mb_hist_record(s->action[0], 10000000);
		mb_hist_record(s->action[1], 100000000);
	}
	w[0] = 3;
	w[1] = 1;
	w[2] = 5; /* no samples: nothing added */
	/* the one score (core/score.h): p95 of the weighted actions' merged
	 * response times, so each action weighs by how often it ran: half of
	 * the 2,000 samples are 100 ms */
	assert_int_equal(mb_load_stats_score_ns(s, w, &score), 0);
	double want = 100e6;
	assert_true(fabs(score - want) < 0.01 * want);
	/* an action of weight 0 does not count */
	w[1] = 0;
	assert_int_equal(mb_load_stats_score_ns(s, w, &score), 0);
	want = 10e6;
	assert_true(fabs(score - want) < 0.01 * want);
	mb_load_stats_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_merge_exact),
	    cmocka_unit_test(test_fail_causes),
	    cmocka_unit_test(test_json_roundtrip),
	    cmocka_unit_test(test_score),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
