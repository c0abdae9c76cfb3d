/* test_mpi.c: the Open MPI window reduction (src/load/mpi.c), run by
 * tests/integration/mpi_hist.sh under `mpirun -n 3`.  A fixed set of
 * samples is split across the ranks (sample i on rank i % size); after one
 * window the merged set on rank 0 must equal, bucket for bucket, the set of
 * one process that recorded every sample; so must the counts, the health
 * gathered from every rank, the stop request of one rank (seen by all) and
 * the ack-log lines (every rank's, in rank order). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "load/dist.h"
#include "load/mpi.h"
#include "load/sched.h"

/* a driver's operations (what the engine's shards set) */
enum { NOPS = 5 };
static const char *const op_names[NOPS] = {"Logon", "Open", "Query", "Save", "Submit"};

static int stats_create(struct mb_load_stats **s)
{
	int rc = mb_load_stats_create(s);
	return rc ? rc : mb_load_stats_set_ops(*s, op_names, NOPS);
}

static struct mb_dist *dist;

static void fill_part(struct mb_load_stats *s, int part, int parts, int n)
{
	uint64_t seed = 7;
	for (int i = 0; i < n; i++) {
		uint64_t v = 1000 + (uint64_t)mb_rng_exp(&seed, 4e6);
		if (i == 5)
			v = 1; /* below the first bucket: min must survive */
		if (i == 6)
			v = 300000000000ull; /* beyond the last: max too */
		if (i % parts != part)
			continue;
		mb_hist_record(s->rpc, v);
		mb_hist_record(s->rpc_by_op[i % NOPS], v);
		mb_hist_record(s->action[i % MB_ACTION_COUNT], v + 17);
		mb_hist_record(s->loop_lag, v / 30);
		s->scheduled[i % MB_ACTION_COUNT]++;
		s->done[i % MB_ACTION_COUNT]++;
		s->n.rpcs++;
		s->n.deliveries += 2;
	}
}

static void test_window_exact(void **state)
{
	(void)state;
	const struct mb_dist_ops *o = &mb_mpi_dist_ops;
	int rank = o->rank(dist), size = o->size(dist);
	enum { N = 30000 };
	struct mb_load_stats *win, *all;
	assert_int_equal(stats_create(&win), 0);
	assert_int_equal(stats_create(&all), 0);
	fill_part(win, rank, size, N);
	fill_part(all, 0, 1, N);
	struct mb_dist_health mine;
	memset(&mine, 0, sizeof(mine));
	mine.rank = rank;
	mine.pid = (int32_t)getpid();
	mine.users_on = 10 + rank;
	mine.saturated = rank == size - 1;
	mine.stop = rank == 1 % size;
	snprintf(mine.host, sizeof(mine.host), "rank%d", rank);
	struct mb_dist_health *every = calloc((size_t)size, sizeof(*every));
	char acks[64];
	int alen = snprintf(acks, sizeof(acks), "+ %d 1\n- %d 2\n", rank, rank);
	char *acks_all = NULL;
	size_t acks_all_len = 0;
	int stop = 0;
	assert_int_equal(o->barrier(dist), 0);
	assert_int_equal(
	    o->window(dist, win, &mine, every, acks, (size_t)alen, &acks_all, &acks_all_len, &stop),
	    0);
	assert_int_equal(stop, 1); /* one rank asked: every rank stops */
	if (rank == 0) {
		assert_int_equal(mb_hist_count(win->rpc), N);
		json_t *ha, *hb, *xa, *xb;
		assert_int_equal(mb_load_stats_hists_json(win, &ha), 0);
		assert_int_equal(mb_load_stats_hists_json(all, &hb), 0);
		assert_int_equal(mb_load_stats_counts_json(win, &xa), 0);
		assert_int_equal(mb_load_stats_counts_json(all, &xb), 0);
		assert_true(json_equal(ha, hb));
		assert_true(json_equal(xa, xb));
		json_decref(ha);
		json_decref(hb);
		json_decref(xa);
		json_decref(xb);
		assert_int_equal(mb_hist_min_ns(win->rpc), 1);
		assert_int_equal(mb_hist_max_ns(win->rpc), 300000000000ull);
		for (double p = 1; p <= 100; p += 0.5)
			assert_int_equal(mb_hist_percentile_ns(win->rpc, p),
					 mb_hist_percentile_ns(all->rpc, p));
		char want[1024] = "";
		for (int r = 0; r < size; r++) {
			char host[32];
			snprintf(host, sizeof(host), "rank%d", r);
			assert_int_equal(every[r].rank, r);
			assert_int_equal(every[r].users_on, 10 + r);
			assert_string_equal(every[r].host, host);
			size_t u = strlen(want);
			snprintf(want + u, sizeof(want) - u, "+ %d 1\n- %d 2\n", r, r);
		}
		assert_int_equal(every[size - 1].saturated, 1);
		assert_int_equal(acks_all_len, strlen(want));
		assert_memory_equal(acks_all, want, acks_all_len);
		printf("merged %d ranks: %llu samples, p50 %llu ns, p99 %llu ns: equal to one "
		       "process\n",
		       size, (unsigned long long)mb_hist_count(win->rpc),
		       (unsigned long long)mb_hist_percentile_ns(win->rpc, 50),
		       (unsigned long long)mb_hist_percentile_ns(win->rpc, 99));
	}
	free(acks_all);
	free(every);
	mb_load_stats_destroy(win);
	mb_load_stats_destroy(all);
}

int main(int argc, char **argv)
{
	if (mb_mpi_dist_ops.init(&argc, &argv, &dist) != 0) {
		fprintf(stderr, "test_mpi: MPI_Init failed\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_window_exact),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	/* a failed assertion on rank 0 must not leave the others waiting */
	mb_mpi_dist_ops.finish(dist, rc ? 1 : 0);
	return rc;
}
