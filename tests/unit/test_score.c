/* test_score.c: unit tests of the one LoadSim score (core/score.h).
 * The score is the p95 of the merged response times of the weighted
 * actions: checked against the exact order statistic of all samples of the
 * weighted actions, shown to differ from the mean of per-action p95s (the
 * old, inconsistent figure), and unweighted actions are left out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first */
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/hist.h"
#include "core/score.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void test_merged_p95(void **state)
{
	(void)state;
	struct mb_hist *h[MB_ACTION_COUNT] = {0};
	double w[MB_ACTION_COUNT] = {0};
	assert_int_equal(mb_hist_create(&h[MB_A_SEND_MAIL]), 0);
	assert_int_equal(mb_hist_create(&h[MB_A_BROWSE_MAIL]), 0);
	assert_int_equal(mb_hist_create(&h[MB_A_LOGOFF]), 0);
	w[MB_A_SEND_MAIL] = 12;
	w[MB_A_BROWSE_MAIL] = 20;
	w[MB_A_LOGOFF] = 0; /* not weighted: its samples must not count */
	static uint64_t all[1100];
	size_t n = 0;
	/* 1,000 fast browses (10 ms) and 100 slow sends (200-299 ms) */
	for (int i = 0; i < 1000; i++) {
		mb_hist_record(h[MB_A_BROWSE_MAIL], 10000000ull);
		all[n++] = 10000000ull;
	}
	for (int i = 0; i < 100; i++) {
		uint64_t v = 200000000ull + (uint64_t)i * 1000000ull;
		mb_hist_record(h[MB_A_SEND_MAIL], v);
		all[n++] = v;
	}
	for (int i = 0; i < 500; i++)
		mb_hist_record(h[MB_A_LOGOFF], 5000000000ull);
	qsort(all, n, sizeof(all[0]), cmp_u64);
	uint64_t exact = all[(size_t)(0.95 * (double)n + 0.5) - 1];
	uint64_t got = 0;
	const struct mb_hist *ch[MB_ACTION_COUNT];
	for (int i = 0; i < MB_ACTION_COUNT; i++)
		ch[i] = h[i];
	assert_int_equal(mb_score_ns(ch, w, &got), 0);
	double rel = (double)got / (double)exact;
	assert_true(rel > 0.99 && rel < 1.01);
	/* the mean of the per-action p95s would be ~ (10 + 295) / 2 ms: not the score */
	assert_true(got < 260000000ull);
	/* giving logoff a weight brings its 5 s samples in */
	w[MB_A_LOGOFF] = 3;
	assert_int_equal(mb_score_ns(ch, w, &got), 0);
	assert_true(got > 4900000000ull);
	for (int i = 0; i < MB_ACTION_COUNT; i++)
		mb_hist_destroy(h[i]);
}

static void test_none(void **state)
{
	(void)state;
	const struct mb_hist *h[MB_ACTION_COUNT] = {0};
	double w[MB_ACTION_COUNT] = {0};
	uint64_t got = 7;
	assert_int_equal(mb_score_ns(h, w, &got), MB_ENOTFOUND);
	assert_int_equal(got, 7);
	/* samples of an unweighted action only: still no score */
	struct mb_hist *x = NULL;
	assert_int_equal(mb_hist_create(&x), 0);
	mb_hist_record(x, 1000000);
	h[MB_A_JOURNAL_APPS] = x;
	assert_int_equal(mb_score_ns(h, w, &got), MB_ENOTFOUND);
	mb_hist_destroy(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_merged_p95),
	    cmocka_unit_test(test_none),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
