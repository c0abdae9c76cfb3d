/* dist.c: user slices, the flat window layout and the registry of the
 * distributed load engine (see dist.h).  Invariant: the flat layout covers
 * every field of struct mb_load_stats; the static assertion below fails
 * when a field is added without being added here. */
#include "load/dist.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>

#include "core/error.h"

#define NHISTS (1 + MB_LOAD_OPS_MAX + MB_ACTION_COUNT + 2)
#define NCOUNTS (sizeof(struct mb_load_counts) / sizeof(uint64_t))
#define NARRAYS (5 * MB_ACTION_COUNT + MB_LOAD_FAIL_CAUSES + MB_LOAD_OPS_MAX + 2 * MB_LOAD_TASKS)

/* Everything from rpc on is in the layout (op_names and nops, the
 * driver's, are the same on every rank of a job), except first_ok_t: a
 * minimum, not a sum, so a job's windows carry rank 0's own. */
_Static_assert(sizeof(struct mb_load_stats) ==
		   offsetof(struct mb_load_stats, rpc) + NHISTS * sizeof(struct mb_hist *) +
		       NARRAYS * sizeof(uint64_t) + sizeof(struct mb_load_counts) + sizeof(double),
	       "struct mb_load_stats changed: update the flat layout in src/load/dist.c");

int mb_dist_slice(int first, int last, int ranks, int rank, struct mb_dist_slice *out)
{
	if (ranks < 1 || rank < 0 || rank >= ranks || first < 0 || last < first)
		return MB_EINVAL;
	int n = last - first + 1, base = n / ranks, extra = n % ranks;
	int start = first + rank * base + (rank < extra ? rank : extra);
	out->users = base + (rank < extra ? 1 : 0);
	out->first = start;
	out->last = start + out->users - 1;
	return ranks > n ? MB_ERANGE : 0;
}

int mb_dist_users_per_proc(long fd_limit, int conns)
{
	if (conns <= 0)
		return INT32_MAX;
	long n = (fd_limit - MB_DIST_FD_RESERVE) / conns;
	return n < 1 ? 0 : n > INT32_MAX ? INT32_MAX : (int)n;
}

int mb_dist_procs_for_fds(long users, int conns, long fd_limit, int *procs)
{
	if (users < 1 || conns < 0)
		return MB_EINVAL;
	long per = mb_dist_users_per_proc(fd_limit, conns);
	if (per < 1)
		return MB_ERANGE;
	*procs = (int)((users + per - 1) / per);
	return 0;
}

long mb_dist_fd_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 1024;
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > (1u << 20))
		return 1L << 20;
	return (long)rl.rlim_max;
}

/* The histograms of a set, in layout order (NULL: an operation the
 * driver does not have). */
static void hists_of(const struct mb_load_stats *s, struct mb_hist **h)
{
	int k = 0;
	h[k++] = s->rpc;
	for (int i = 0; i < MB_LOAD_OPS_MAX; i++)
		h[k++] = i < s->nops ? s->rpc_by_op[i] : NULL;
	for (int i = 0; i < MB_ACTION_COUNT; i++)
		h[k++] = s->action[i];
	h[k++] = s->loop_lag;
	h[k++] = s->timer_late;
}

size_t mb_dist_sums_len(void) { return NHISTS * mb_hist_flat_len() + NARRAYS + NCOUNTS; }

size_t mb_dist_ext_len(void) { return 2 * NHISTS; }

void mb_dist_pack(const struct mb_load_stats *s, uint64_t *sums, uint64_t *ext)
{
	struct mb_hist *h[NHISTS];
	hists_of(s, h);
	size_t hl = mb_hist_flat_len(), o = 0;
	for (int i = 0; i < NHISTS; i++, o += hl) {
		if (h[i]) {
			mb_hist_flat_export(h[i], sums + o, ext + 2 * i);
		} else {
			memset(sums + o, 0, hl * sizeof(uint64_t));
			ext[2 * i] = ext[2 * i + 1] = 0;
		}
	}
	const uint64_t *arrays[] = {s->scheduled, s->done, s->failed, s->late, s->cut};
	for (size_t a = 0; a < sizeof(arrays) / sizeof(arrays[0]); a++, o += MB_ACTION_COUNT)
		memcpy(sums + o, arrays[a], MB_ACTION_COUNT * sizeof(uint64_t));
	memcpy(sums + o, s->failed_by, MB_LOAD_FAIL_CAUSES * sizeof(uint64_t));
	o += MB_LOAD_FAIL_CAUSES;
	memcpy(sums + o, s->op_count, MB_LOAD_OPS_MAX * sizeof(uint64_t));
	o += MB_LOAD_OPS_MAX;
	memcpy(sums + o, s->task_rpcs, MB_LOAD_TASKS * sizeof(uint64_t));
	o += MB_LOAD_TASKS;
	memcpy(sums + o, s->task_ops, MB_LOAD_TASKS * sizeof(uint64_t));
	o += MB_LOAD_TASKS;
	memcpy(sums + o, &s->n, sizeof(s->n));
}

void mb_dist_unpack(struct mb_load_stats *s, const uint64_t *sums, const uint64_t *ext)
{
	struct mb_hist *h[NHISTS];
	hists_of(s, h);
	size_t hl = mb_hist_flat_len(), o = 0;
	for (int i = 0; i < NHISTS; i++, o += hl)
		if (h[i])
			mb_hist_flat_merge(h[i], sums + o, ext + 2 * i);
	uint64_t *arrays[] = {s->scheduled, s->done, s->failed, s->late, s->cut};
	for (size_t a = 0; a < sizeof(arrays) / sizeof(arrays[0]); a++, o += MB_ACTION_COUNT)
		for (int i = 0; i < MB_ACTION_COUNT; i++)
			arrays[a][i] += sums[o + (size_t)i];
	for (int i = 0; i < MB_LOAD_FAIL_CAUSES; i++)
		s->failed_by[i] += sums[o + (size_t)i];
	o += MB_LOAD_FAIL_CAUSES;
	for (int i = 0; i < MB_LOAD_OPS_MAX; i++)
		s->op_count[i] += sums[o + (size_t)i];
	o += MB_LOAD_OPS_MAX;
	for (int i = 0; i < MB_LOAD_TASKS; i++)
		s->task_rpcs[i] += sums[o + (size_t)i];
	o += MB_LOAD_TASKS;
	for (int i = 0; i < MB_LOAD_TASKS; i++)
		s->task_ops[i] += sums[o + (size_t)i];
	o += MB_LOAD_TASKS;
	uint64_t *n = (uint64_t *)&s->n;
	for (size_t i = 0; i < NCOUNTS; i++)
		n[i] += sums[o + i];
}

static const struct mb_dist_ops *registered;

void mb_dist_register(const struct mb_dist_ops *ops) { registered = ops; }

const struct mb_dist_ops *mb_dist_get(void) { return registered; }
