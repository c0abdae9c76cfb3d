/* loadhosts.h: the load engine on several machines, as the supervisor sees
 * it (`mailbench run --load-hosts FILE [--load-procs K]`): the Open MPI
 * hostfile, the mpirun command line, the ranks' slices as the job reports
 * them, and their place in the run summary.
 *
 * Hostfile: Open MPI's format, one host a line ("NAME [slots=N]
 * [max_slots=N]"), '#' starts a comment.  The supervisor starts
 *   mpirun --hostfile FILE -n K --oversubscribe [--allow-run-as-root]
 *          PROGRAM load --mpi ... --stats-fd 1
 * (mpirun forwards rank 0's stdout, so the job's one stats stream comes on
 * it; SIGUSR1, which mpirun forwards to every rank, stops the job at one
 * window).  The ranks report their slices in each stats line ("x"
 * "ranks"); a rank that dies is named from mpirun's own report ("process
 * rank N ... exited on signal S") and that table.
 */
#ifndef MB_REPORT_LOADHOSTS_H
#define MB_REPORT_LOADHOSTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define MB_LOAD_HOSTS_MAX 64
#define MB_LOAD_RANKS_MAX 64
#define MB_LOAD_HOST_LEN 64

struct mb_hostfile {
	int count;
	char host[MB_LOAD_HOSTS_MAX][MB_LOAD_HOST_LEN];
	int slots[MB_LOAD_HOSTS_MAX]; /* 0: not given */
	int total_slots;	      /* sum of slots, each host at least 1 */
	bool local_only;	      /* every host is this machine (loopback) */
};

/* Read a hostfile; errors name the file and line in err (MB_ECONFIG), or
 * say why it cannot be read (MB_EIO). */
int mb_hostfile_read(const char *path, struct mb_hostfile *out, char *err, size_t errlen);

/* One rank of the job as it reported itself. */
struct mb_load_rank {
	int rank;
	char host[MB_LOAD_HOST_LEN];
	long pid;
	int first, last; /* its users */
	int saturated_s; /* windows it reported saturated (after warm-up) */
};

/* What a run records about its load engine's ranks. */
struct mb_load_ranks {
	int ranks;	 /* 0: one load process, no MPI */
	char hosts[256]; /* "vm" / "a, b, c" (the hostfile's) */
	int listed;	 /* entries of rank[] filled */
	struct mb_load_rank rank[MB_LOAD_RANKS_MAX];
};

/* Take the ranks of one stats line's x "ranks" into r (slices, pids,
 * hosts); count saturated windows when `counted`. */
void mb_load_ranks_update(struct mb_load_ranks *r, json_t *x_ranks, bool counted);
/* "3 ranks on vm" (empty string when r->ranks == 0). */
void mb_load_ranks_desc(const struct mb_load_ranks *r, char *buf, size_t len);
/* The ranks that reported saturation, named ("rank 2 (vm, users 20-29)
 * saturated 4 s"), or "" when none. */
void mb_load_ranks_saturated(const struct mb_load_ranks *r, char *buf, size_t len);
/* Rank n named for a message: "rank 1 (vm, pid 123, users 10-19)". */
void mb_load_ranks_name(const struct mb_load_ranks *r, int n, char *buf, size_t len);
/* From mpirun's report line: the rank it names (or -1) and how it ended
 * ("exited on signal 9 (Killed)"); false when the line is not one. */
bool mb_mpirun_parse_failure(const char *line, int *rank, char *how, size_t howlen);

/* The summary's "load" object (NULL when r->ranks == 0) and back. */
json_t *mb_load_ranks_json(const struct mb_load_ranks *r);
void mb_load_ranks_from_json(const json_t *j, struct mb_load_ranks *r);

/* The mpirun program: $MAILBENCH_MPIRUN, else the one configure found. */
const char *mb_mpirun_program(void);

#endif
