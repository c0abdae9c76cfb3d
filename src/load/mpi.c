/* mpi.c: the distributed load engine on Open MPI (the mb_dist_ops of
 * dist.h), for `mpirun -n K [--hostfile H] mailbench load --mpi ...`.
 *
 * Only the main thread of a rank calls MPI (MPI_THREAD_FUNNELED); the
 * engine's loop threads never do.  One window is six collectives, in this
 * order on every rank: MPI_Ireduce(MPI_SUM) of the flat window (histogram
 * buckets and counts: exact), MPI_Ireduce(MPI_MAX) of the histogram
 * extremes, MPI_Igather of the ranks' health, MPI_Iallreduce(MPI_MAX) of
 * the stop requests, MPI_Igather of the ack-log lengths, then
 * MPI_Igatherv of the new ack-log lines.  They are non-blocking, and the
 * rank sleeps between MPI_Testall polls: a blocking collective would spin
 * a core for as long as the slowest rank is late.
 * Failure: a rank that cannot go on calls finish(code != 0), which aborts
 * the whole job (MPI_Abort); a rank that dies is noticed by mpirun, which
 * kills the others and names the dead rank.  A rank also dies with its
 * launcher (PR_SET_PDEATHSIG), so a killed mpirun leaves no rank behind.
 */
#include "config.h"

#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "load/dist.h"
#include "load/mpi.h"

struct mb_dist {
	int rank, size;
	uint64_t *sums, *rsums, *ext, *rext;
	size_t nsums, next;
	int *lens, *displs;
};

static int mpi_init(int *argc, char ***argv, struct mb_dist **out)
{
	/* die with the launcher (mpirun or orted): a killed mpirun must not
	 * leave ranks that would drive the store on their own */
	pid_t parent = getppid();
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		return MB_ECHILD;
	int provided = 0;
	if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
		return MB_ESYS;
	struct mb_dist *d = calloc(1, sizeof(*d));
	if (!d) {
		MPI_Abort(MPI_COMM_WORLD, 3);
		return MB_ENOMEM;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &d->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &d->size);
	d->nsums = mb_dist_sums_len();
	d->next = mb_dist_ext_len();
	d->sums = malloc(d->nsums * sizeof(uint64_t));
	d->ext = malloc(d->next * sizeof(uint64_t));
	if (d->rank == 0) {
		d->rsums = malloc(d->nsums * sizeof(uint64_t));
		d->rext = malloc(d->next * sizeof(uint64_t));
		d->lens = calloc((size_t)d->size, sizeof(int));
		d->displs = calloc((size_t)d->size, sizeof(int));
	}
	if (!d->sums || !d->ext ||
	    (d->rank == 0 && (!d->rsums || !d->rext || !d->lens || !d->displs))) {
		fprintf(stderr, "mailbench load: rank %d: out of memory\n", d->rank);
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
	*out = d;
	return 0;
}

static int mpi_rank(const struct mb_dist *d) { return d->rank; }

static int mpi_size(const struct mb_dist *d) { return d->size; }

static int wait_all(MPI_Request *req, int n);

static int mpi_barrier(struct mb_dist *d)
{
	(void)d;
	MPI_Request req;
	if (MPI_Ibarrier(MPI_COMM_WORLD, &req) != MPI_SUCCESS)
		return MB_ESYS;
	return wait_all(&req, 1);
}

/* Complete the requests, polling (which also progresses them) with short
 * sleeps instead of spinning. */
static int wait_all(MPI_Request *req, int n)
{
	struct timespec nap = {0, 200000}; /* 0.2 ms */
	for (int spins = 0;; spins++) {
		int done = 0;
		if (MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
			return MB_ESYS;
		if (done)
			return 0;
		if (spins > 20)
			nanosleep(&nap, NULL);
	}
}

static int mpi_window(struct mb_dist *d, struct mb_load_stats *win,
		      const struct mb_dist_health *mine, struct mb_dist_health *all,
		      const char *acks, size_t acks_len, char **acks_all, size_t *acks_all_len,
		      int *stop)
{
	bool root = d->rank == 0;
	mb_dist_pack(win, d->sums, d->ext);
	int want = mine->stop, any = 0;
	int len = acks_len > (size_t)(1 << 30) ? 1 << 30 : (int)acks_len;
	MPI_Request req[5];
	if (MPI_Ireduce(d->sums, d->rsums, (int)d->nsums, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD,
			&req[0]) != MPI_SUCCESS ||
	    MPI_Ireduce(d->ext, d->rext, (int)d->next, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD,
			&req[1]) != MPI_SUCCESS ||
	    MPI_Igather(mine, (int)sizeof(*mine), MPI_BYTE, all, (int)sizeof(*mine), MPI_BYTE, 0,
			MPI_COMM_WORLD, &req[2]) != MPI_SUCCESS ||
	    MPI_Iallreduce(&want, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req[3]) !=
		MPI_SUCCESS ||
	    MPI_Igather(&len, 1, MPI_INT, d->lens, 1, MPI_INT, 0, MPI_COMM_WORLD, &req[4]) !=
		MPI_SUCCESS ||
	    wait_all(req, 5) != 0)
		return MB_ESYS;
	if (root) {
		mb_load_stats_reset(win);
		mb_dist_unpack(win, d->rsums, d->rext);
	}
	*stop = any;
	char *buf = NULL;
	size_t total = 0;
	if (root) {
		for (int r = 0; r < d->size; r++) {
			d->displs[r] = (int)total;
			total += (size_t)d->lens[r];
		}
		buf = malloc(total + 1);
		if (!buf) {
			fprintf(stderr, "mailbench load: rank 0: out of memory for the ack log\n");
			MPI_Abort(MPI_COMM_WORLD, 3);
		}
	}
	if (MPI_Igatherv(acks, len, MPI_CHAR, buf, d->lens, d->displs, MPI_CHAR, 0, MPI_COMM_WORLD,
			 &req[0]) != MPI_SUCCESS ||
	    wait_all(req, 1) != 0) {
		free(buf);
		return MB_ESYS;
	}
	if (root) {
		*acks_all = buf;
		*acks_all_len = total;
	}
	return 0;
}

static void mpi_finish(struct mb_dist *d, int code)
{
	if (code != 0)
		MPI_Abort(MPI_COMM_WORLD, code);
	MPI_Finalize();
	if (d) {
		free(d->sums);
		free(d->rsums);
		free(d->ext);
		free(d->rext);
		free(d->lens);
		free(d->displs);
		free(d);
	}
}

const struct mb_dist_ops mb_mpi_dist_ops = {
    .name = "mpi",
    .init = mpi_init,
    .rank = mpi_rank,
    .size = mpi_size,
    .barrier = mpi_barrier,
    .window = mpi_window,
    .finish = mpi_finish,
};
