/* test_dist.c: the distributed load engine's pure parts (src/load/dist.h):
 * user slices are contiguous, cover the range once and are balanced by
 * count; the flat window layout, added element-wise (and its extremes
 * combined by maximum) as the MPI reduction does, unpacks into exactly the
 * merge of the windows (every histogram bucket, min, max, sum and count). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "load/dist.h"
#include "load/sched.h"

/* a driver's operations (what the engine's shards set) */
enum { NOPS = 5 };
static const char *const op_names[NOPS] = {"Logon", "Open", "Query", "Save", "Submit"};

static int stats_create(struct mb_load_stats **s)
{
	int rc = mb_load_stats_create(s);
	return rc ? rc : mb_load_stats_set_ops(*s, op_names, NOPS);
}

static void test_slices(void **state)
{
	(void)state;
	static const int cases[][3] = {
	    {0, 999, 3}, {0, 9, 4}, {100, 100, 1}, {5, 12, 8}, {0, 7999, 8}};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		int first = cases[c][0], last = cases[c][1], k = cases[c][2];
		int next = first, lo = 1 << 30, hi = 0;
		for (int r = 0; r < k; r++) {
			struct mb_dist_slice sl;
			assert_int_equal(mb_dist_slice(first, last, k, r, &sl), 0);
			assert_int_equal(sl.first, next);
			assert_int_equal(sl.last - sl.first + 1, sl.users);
			next = sl.last + 1;
			lo = sl.users < lo ? sl.users : lo;
			hi = sl.users > hi ? sl.users : hi;
		}
		assert_int_equal(next, last + 1);
		assert_true(hi - lo <= 1);
	}
	struct mb_dist_slice sl;
	assert_int_equal(mb_dist_slice(0, 999, 3, 0, &sl), 0);
	assert_int_equal(sl.users, 334);
	assert_int_equal(mb_dist_slice(0, 999, 3, 2, &sl), 0);
	assert_int_equal(sl.first, 667);
	assert_int_equal(sl.last, 999);
	assert_int_equal(mb_dist_slice(0, 1, 3, 2, &sl), MB_ERANGE);
	assert_int_equal(sl.users, 0);
	assert_int_equal(mb_dist_slice(0, 9, 0, 0, &sl), MB_EINVAL);
	assert_int_equal(mb_dist_slice(0, 9, 2, 2, &sl), MB_EINVAL);
	assert_int_equal(mb_dist_slice(9, 0, 2, 0, &sl), MB_EINVAL);
}

/* Load processes for a descriptor limit: every slice fits one process,
 * and one process fewer would not do. */
static void test_procs_for_fds(void **state)
{
	(void)state;
	int k = 0;
	assert_int_equal(mb_dist_users_per_proc(20000, 1), 20000 - MB_DIST_FD_RESERVE);
	assert_int_equal(mb_dist_users_per_proc(20000, 2), (20000 - MB_DIST_FD_RESERVE) / 2);
	assert_int_equal(mb_dist_users_per_proc(20000, 0), INT32_MAX);
	assert_int_equal(mb_dist_users_per_proc(MB_DIST_FD_RESERVE, 1), 0);
	assert_int_equal(mb_dist_procs_for_fds(50000, 0, 256, &k), 0); /* no I/O */
	assert_int_equal(k, 1);
	assert_int_equal(mb_dist_procs_for_fds(19904, 1, 20000, &k), 0);
	assert_int_equal(k, 1);
	assert_int_equal(mb_dist_procs_for_fds(19905, 1, 20000, &k), 0);
	assert_int_equal(k, 2);
	assert_int_equal(mb_dist_procs_for_fds(50000, 1, 20000, &k), 0);
	assert_int_equal(k, 3);
	assert_int_equal(mb_dist_procs_for_fds(50000, 2, 20000, &k), 0);
	assert_int_equal(k, 6);
	for (long users = 1; users < 3000; users += 37)
		for (int conns = 1; conns <= 3; conns++) {
			long lim = 400;
			int per = mb_dist_users_per_proc(lim, conns);
			assert_int_equal(mb_dist_procs_for_fds(users, conns, lim, &k), 0);
			struct mb_dist_slice sl;
			int hi = 0;
			for (int r = 0; r < k; r++) {
				mb_dist_slice(0, (int)users - 1, k, r, &sl);
				hi = sl.users > hi ? sl.users : hi;
			}
			assert_true(hi <= per);
			if (k > 1)
				assert_true((users + k - 2) / (k - 1) > per);
		}
	assert_int_equal(mb_dist_procs_for_fds(10, 1, MB_DIST_FD_RESERVE, &k), MB_ERANGE);
	assert_int_equal(mb_dist_procs_for_fds(0, 1, 20000, &k), MB_EINVAL);
	assert_int_equal(mb_dist_procs_for_fds(10, -1, 20000, &k), MB_EINVAL);
	assert_true(mb_dist_fd_limit() >= 1);
}

/* Fixed samples: sample i of n goes to part i % parts. */
static void fill_part(struct mb_load_stats *s, int part, int parts, int n)
{
	uint64_t seed = 42;
	for (int i = 0; i < n; i++) {
		uint64_t v = 1000 + (uint64_t)mb_rng_exp(&seed, 3e6);
		if (i == 11)
			v = 5; /* below the first bucket */
		if (i == 12)
			v = 400000000000ull; /* beyond the last */
		if (i % parts != part)
			continue;
		mb_hist_record(s->rpc, v);
		mb_hist_record(s->rpc_by_op[i % NOPS], v);
		mb_hist_record(s->action[i % MB_ACTION_COUNT], v * 2);
		mb_hist_record(s->loop_lag, v / 50);
		mb_hist_record(s->timer_late, v / 7);
		s->scheduled[i % MB_ACTION_COUNT]++;
		s->done[i % MB_ACTION_COUNT] += i % 5 != 0;
		s->failed[i % MB_ACTION_COUNT] += i % 5 == 0;
		s->failed_by[(i / 5) % MB_LOAD_FAIL_CAUSES] += i % 5 == 0;
		s->late[i % MB_ACTION_COUNT] += i % 17 == 0;
		s->cut[i % MB_ACTION_COUNT] += i % 23 == 0;
		s->op_count[i % NOPS] += 3;
		s->n.rpcs++;
		s->n.bytes_sent += (uint64_t)i;
		s->n.acks_delete += i % 2;
	}
}

static void assert_same_stats(const struct mb_load_stats *a, const struct mb_load_stats *b)
{
	json_t *ha, *hb, *xa, *xb;
	assert_int_equal(mb_load_stats_hists_json(a, &ha), 0);
	assert_int_equal(mb_load_stats_hists_json(b, &hb), 0);
	assert_int_equal(mb_load_stats_counts_json(a, &xa), 0);
	assert_int_equal(mb_load_stats_counts_json(b, &xb), 0);
	assert_true(json_equal(ha, hb));
	assert_true(json_equal(xa, xb));
	assert_int_equal(mb_hist_min_ns(a->rpc), mb_hist_min_ns(b->rpc));
	assert_int_equal(mb_hist_max_ns(a->rpc), mb_hist_max_ns(b->rpc));
	json_decref(ha);
	json_decref(hb);
	json_decref(xa);
	json_decref(xb);
}

static void test_flat_sum(void **state)
{
	(void)state;
	enum { PARTS = 3, N = 20000 };
	size_t ns = mb_dist_sums_len(), ne = mb_dist_ext_len();
	uint64_t *sum = calloc(ns, 8), *one = calloc(ns, 8), *ext = calloc(ne, 8),
		 *e1 = calloc(ne, 8);
	assert_true(sum && one && ext && e1);
	struct mb_load_stats *all, *got, *part;
	assert_int_equal(stats_create(&all), 0);
	assert_int_equal(stats_create(&got), 0);
	assert_int_equal(stats_create(&part), 0);
	fill_part(all, 0, 1, N);
	for (int p = 0; p <= PARTS; p++) { /* part PARTS is empty */
		mb_load_stats_reset(part);
		fill_part(part, p, p == PARTS ? N + 1 : PARTS, p == PARTS ? 0 : N);
		mb_dist_pack(part, one, e1);
		for (size_t i = 0; i < ns; i++)
			sum[i] += one[i];
		for (size_t i = 0; i < ne; i++)
			ext[i] = e1[i] > ext[i] ? e1[i] : ext[i];
	}
	mb_dist_unpack(got, sum, ext);
	assert_int_equal(mb_hist_count(got->rpc), N);
	assert_same_stats(got, all);
	mb_load_stats_destroy(all);
	mb_load_stats_destroy(got);
	mb_load_stats_destroy(part);
	free(sum);
	free(one);
	free(ext);
	free(e1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_slices),
	    cmocka_unit_test(test_procs_for_fds),
	    cmocka_unit_test(test_flat_sum),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
