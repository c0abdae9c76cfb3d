/* dist.h: the seam between `mailbench load` and a distributed load engine
 * (`mailbench load --mpi` under mpirun, src/load/mpi.c), and the pure parts
 * both sides share.
 *
 * A job of K ranks drives the users [first, last] of the topology: rank r
 * runs one contiguous slice, balanced by count (mb_dist_slice: n/K users
 * each, the first n%K slices one more), on its own libuv loops.  Once per
 * second every rank packs its window (mb_dist_pack: a fixed layout of
 * uint64 that adds up element-wise, plus histogram extremes that combine
 * by maximum) and the job reduces it to rank 0 (MPI_SUM, MPI_MAX), which
 * unpacks the sum (mb_dist_unpack) into one window equal to the exact
 * merge of every rank's window: histogram buckets add, so percentiles are
 * those of one histogram that saw every sample, never averages.  Each
 * rank's self-health of the window (struct mb_dist_health) is gathered to
 * rank 0, which writes the one stats stream and names a saturated rank.
 * The windows are aligned by the reduction itself (every rank's tick
 * waits for the others), so clock offsets between hosts do not matter.
 *
 * The program registers the implementation (mb_dist_register) when it was
 * built with MPI, so only the MPI archive and the program link MPI; the
 * load command asks mb_dist_get() and refuses --mpi when it is NULL.
 */
#ifndef MB_LOAD_DIST_H
#define MB_LOAD_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "load/loadstats.h"

/* One rank's users: [first, last] (inclusive), users = last - first + 1. */
struct mb_dist_slice {
	int first, last, users;
};

/* Slice `rank` of `ranks` over the users [first, last]; a rank beyond the
 * users gets users = 0 (MB_ERANGE: ranks > users). */
int mb_dist_slice(int first, int last, int ranks, int rank, struct mb_dist_slice *out);

/* Descriptors a load process keeps besides its users' connections: its
 * loops (epoll, async and signal pipes), stdio, the ack log and spool,
 * the topology while read, and an MPI rank's own channels. */
#define MB_DIST_FD_RESERVE 96

/* Users one load process can hold when each holds `conns` connections
 * and the process may open fd_limit descriptors: (fd_limit - reserve) /
 * conns; conns 0 (a target without I/O): no bound (INT32_MAX). 0 when the
 * limit leaves no room for one user. */
int mb_dist_users_per_proc(long fd_limit, int conns);
/* Load processes needed for `users` users of `conns` connections each:
 * the fewest K whose largest slice (mb_dist_slice: ceil(users / K))
 * fits one process; 1 without I/O.  MB_ERANGE when not even one user
 * fits, MB_EINVAL for users < 1 or conns < 0. */
int mb_dist_procs_for_fds(long users, int conns, long fd_limit, int *procs);
/* The open-file limit a load process can reach: the hard RLIMIT_NOFILE
 * (the load engine raises its soft limit to it), capped at 2^20. */
long mb_dist_fd_limit(void);

#define MB_DIST_HOST_MAX 64

/* One rank's self-health over one window (fixed size: gathered as bytes). */
struct mb_dist_health {
	int32_t rank;
	int32_t pid;
	int32_t first_user, last_user; /* its slice */
	int32_t users_on;	       /* logged on now */
	int32_t saturated;	       /* this window: loop lag or timers behind */
	int32_t ncpu;		       /* online CPUs of its host */
	int32_t stop;		       /* it asks the job to stop */
	double cpu_core_pct;	       /* its process CPU, % of one core */
	double lag_p99_ms;	       /* loop lag p99 of the window, -1: none */
	double user_days;	       /* cumulative simulated user-days */
	uint64_t connect_failures;     /* this window */
	double window_cpu_ms;	       /* CPU its previous window exchange took */
	char host[MB_DIST_HOST_MAX];
};

/* The flat layout of a load stats window: sums (element-wise addition)
 * and extremes (element-wise maximum). */
size_t mb_dist_sums_len(void);
size_t mb_dist_ext_len(void);
void mb_dist_pack(const struct mb_load_stats *s, uint64_t *sums, uint64_t *ext);
/* s += the window that sums/ext describe. */
void mb_dist_unpack(struct mb_load_stats *s, const uint64_t *sums, const uint64_t *ext);

struct mb_dist;

/* A distributed engine's operations.  All but rank/size are collective:
 * every rank calls them, in the same order. */
struct mb_dist_ops {
	const char *name;
	/* Join the job (MPI_Init); a failure here is reported on stderr. */
	int (*init)(int *argc, char ***argv, struct mb_dist **out);
	int (*rank)(const struct mb_dist *d);
	int (*size)(const struct mb_dist *d);
	/* Wait for every rank (before the first window). */
	int (*barrier)(struct mb_dist *d);
	/* One window.  win: this rank's window; on rank 0 it becomes the merge
	 * of every rank's.  mine: this rank's health; all (rank 0 only, size
	 * entries): every rank's.  acks/acks_len: this rank's new ack-log lines;
	 * on rank 0 *acks_all (malloc'd, caller frees) / *acks_all_len: every
	 * rank's, in rank order.  *stop: some rank asked to stop. */
	int (*window)(struct mb_dist *d, struct mb_load_stats *win,
		      const struct mb_dist_health *mine, struct mb_dist_health *all,
		      const char *acks, size_t acks_len, char **acks_all, size_t *acks_all_len,
		      int *stop);
	/* Leave the job: MPI_Finalize when code is 0; otherwise abort the job
	 * with code (the other ranks are killed, mpirun names this rank). */
	void (*finish)(struct mb_dist *d, int code);
};

void mb_dist_register(const struct mb_dist_ops *ops);
/* The registered implementation, or NULL (built without MPI). */
const struct mb_dist_ops *mb_dist_get(void);

#endif
