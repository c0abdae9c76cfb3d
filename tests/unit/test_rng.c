/* test_rng.c: the one generator (core/rng.h): a state reproduces its
 * sequence, nearby seeds give unrelated ones, and the ranges hold
 * (unit in [0, 1), below in [0, n), range in [lo, hi], their means). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "core/clock.h"
#include "core/rng.h"

static void test_reproducible(void **state)
{
	(void)state;
	uint64_t a, b;
	mb_rng_seed(&a, 42);
	mb_rng_seed(&b, 42);
	for (int i = 0; i < 1000; i++)
		assert_true(mb_rng_next(&a) == mb_rng_next(&b));
	/* seeds 42 and 43: no common value in the first 1000 draws' positions */
	mb_rng_seed(&a, 42);
	mb_rng_seed(&b, 43);
	int same = 0;
	for (int i = 0; i < 1000; i++)
		same += mb_rng_next(&a) == mb_rng_next(&b);
	assert_int_equal(same, 0);
}

static void test_ranges(void **state)
{
	(void)state;
	uint64_t s;
	mb_rng_seed(&s, 7);
	const int n = 200000;
	double sum = 0;
	long below = 0, range = 0;
	int lo_seen = 0, hi_seen = 0;
	for (int i = 0; i < n; i++) {
		double u = mb_rng_unit(&s);
		assert_true(u >= 0.0 && u < 1.0);
		sum += u;
		uint64_t b = mb_rng_below(&s, 10);
		assert_true(b < 10);
		below += (long)b;
		int r = mb_rng_range(&s, 2, 6);
		assert_true(r >= 2 && r <= 6);
		lo_seen |= r == 2;
		hi_seen |= r == 6;
		range += r;
	}
	assert_true(lo_seen && hi_seen);
	assert_true(fabs(sum / n - 0.5) < 0.01);
	assert_true(fabs((double)below / n - 4.5) < 0.05);
	assert_true(fabs((double)range / n - 4.0) < 0.05);
	assert_true(mb_rng_below(&s, 0) == 0);
	double e = 0;
	for (int i = 0; i < n; i++)
		e += mb_rng_exp(&s, 3.0);
	assert_true(fabs(e / n - 3.0) < 0.05);
}

/* The monotonic clock never goes back; its three units agree. */
static void test_clock(void **state)
{
	(void)state;
	uint64_t prev = mb_now_ns();
	for (int i = 0; i < 1000; i++) {
		uint64_t t = mb_now_ns();
		assert_true(t >= prev);
		prev = t;
	}
	int64_t ms = mb_now_ms();
	double s = mb_now_s();
	assert_true(fabs(s * 1000.0 - (double)ms) < 1000.0);
	assert_true(mb_wall_ms() > 1500000000000LL); /* after 2017 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reproducible),
	    cmocka_unit_test(test_ranges),
	    cmocka_unit_test(test_clock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
