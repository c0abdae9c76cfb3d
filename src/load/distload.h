/* distload.h: the load command's side of the distributed engine
 * (`mailbench load --mpi`, see dist.h): joining the job, this rank's
 * slice, its ack-log spool, and the once-a-second window exchange.
 *
 * Every rank runs the same `mailbench load` with the same arguments.  A
 * rank's engine writes its ack lines to a private spool (an unlinked
 * temporary file, O_APPEND: whole lines); each window sends the complete
 * lines written since the last one to rank 0, which appends every rank's
 * to the one --ack-log file.  Only rank 0 writes the stats stream and the
 * summary; its figures are the job's: the merged window, users logged on
 * and user-days summed, CPU as the load hosts' share, saturated when any
 * rank is (and which ones, in "x" "ranks").
 *
 * States: joined -> (window ...) -> ended.  Every call but the accessors
 * is collective (every rank calls it, in the same order).
 */
#ifndef MB_LOAD_DISTLOAD_H
#define MB_LOAD_DISTLOAD_H

#include <jansson.h>
#include <stdbool.h>

#include "load/dist.h"
#include "load/loadstats.h"

struct mb_distload;

/* What rank 0 learns from one window (zeros on the other ranks). */
struct mb_distload_sums {
	int users_on;	  /* every rank's, summed */
	double user_days; /* every rank's, summed */
	double cpu_pct;	  /* load processes' CPU / the load hosts' CPUs x 100 */
	bool has_cpu;
	bool saturated;	     /* some rank was saturated in this window */
	int saturated_ranks; /* how many */
	json_t *ranks;	     /* [{rank, host, pid, first, last, users, users_on,
			      *   cpu_core_pct, loop_lag_p99_ms, saturated,
			      *   connect_failures}], new reference, rank 0 */
	char *acks;	     /* --ack-log -: every rank's new ack lines (malloc'd,
			      * rank 0), for the stats stream; NULL: none */
	size_t acks_len;
};

/* Join the job and take this rank's slice of the users [first, last].
 * MB_ENOTSUP when the program has no distributed engine; MB_ERANGE when
 * there are more ranks than users (message printed).  The slice is
 * printed on stderr ("rank R of K on HOST: users A-B (N)"). */
int mb_distload_join(int first, int last, struct mb_distload **out);
int mb_distload_rank(const struct mb_distload *d);
int mb_distload_size(const struct mb_distload *d);
const struct mb_dist_slice *mb_distload_slice(const struct mb_distload *d);
/* The fd the engine writes its ack lines to (the rank's spool), or -1.
 * path: the job's ack log (opened by rank 0 only; NULL for none; "-":
 * rank 0 hands the lines out with each window's sums instead, for the
 * stats stream, so a supervisor on another host writes the file). */
int mb_distload_ack_open(struct mb_distload *d, const char *path, int *engine_fd);
/* Collective start: every rank has its engine running. */
int mb_distload_barrier(struct mb_distload *d);
/* One window: win (rank 0: becomes every rank's merge), this rank's
 * local health (saturated, lag p99 in ms or < 0, users on, user-days),
 * want_stop: this rank asks to stop.  *stop: the job stops now. */
int mb_distload_window(struct mb_distload *d, struct mb_load_stats *win, bool saturated,
		       double lag_p99_ms, int users_on, double user_days, bool want_stop,
		       struct mb_distload_sums *out, bool *stop);
/* Leave the job: code 0 finalises; otherwise the whole job is aborted. */
void mb_distload_end(struct mb_distload *d, int code);

#endif
