/* srvmon.h: the counters of a mail server this process did not write
 * (Dovecot + Postfix of the lab, or a server started elsewhere), measured
 * from /proc: processor time, context switches, virtual and resident
 * bytes summed over the server's processes, disk bytes from each
 * process's /proc/PID/io, and disk transfers of the data directory's
 * block device from /proc/diskstats.
 *
 * The server's processes are found again at every sample: the process
 * trees of the roots (the masters: children they spawn later are
 * included), or the processes of a cgroup (its cgroup.procs).  A rate
 * over two samples sums, per process (pid + start time), the growth since
 * the previous sample; a process born within the interval counts whole; a
 * process that was already running when first seen (the first sample, a
 * new root) only sets its baseline; a process that exited within the
 * interval loses its last part (at most one interval of a short-lived
 * process).  Whatever cannot be read is left unmeasured with the reason.
 *
 * States: created -> roots or cgroup set -> sample (first: baseline, no
 * rates) -> sample ... -> destroyed.
 */
#ifndef MB_REPORT_SRVMON_H
#define MB_REPORT_SRVMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/counters.h"

#define MB_SRVMON_MAX_PROCS 4096

struct mb_srvmon;

/* Totals over the server's processes at one sample (cumulative figures
 * are sums of what each process has used since it started). */
struct mb_srvmon_totals {
	int procs;
	double cpu_s;
	uint64_t cs; /* voluntary + involuntary, all threads */
	uint64_t vsize_bytes, rss_bytes;
	bool io_ok;			  /* every process's /proc/PID/io was read */
	uint64_t read_bytes, write_bytes; /* storage layer (/proc/PID/io) */
	uint64_t rchar, wchar;		  /* every read/write, sockets included */
	/* growth counted since the previous sample (0 at the first) */
	double d_cpu_s;
	uint64_t d_cs, d_disk_bytes;
};

int mb_srvmon_create(struct mb_srvmon **out);
void mb_srvmon_destroy(struct mb_srvmon *m);
/* The roots whose process trees are the server (replaces earlier roots;
 * a changed set keeps the baselines of processes seen before). */
void mb_srvmon_set_roots(struct mb_srvmon *m, const pid_t *roots, int n);
/* A cgroup (v2 directory, or relative to /sys/fs/cgroup): its processes
 * are the server.  MB_ENOTFOUND when PATH/cgroup.procs cannot be read. */
int mb_srvmon_set_cgroup(struct mb_srvmon *m, const char *path);
/* Forget the previous sample (the next one is a baseline again). */
void mb_srvmon_reset(struct mb_srvmon *m);
/* The data directory: disk transfers of its block device (diskstats). */
void mb_srvmon_set_disk(struct mb_srvmon *m, const char *path);

/* Sample now: totals (may be NULL) and, from the second sample on, the
 * counters it measures (MB_SRC_STORE rows: processor time, context
 * switches, virtual and resident bytes, disk bytes, disk transfers) into
 * v/has.  why gets the reasons of what is not measured ("" when all is).
 * 0, or MB_ENOTFOUND when no process of the server is alive. */
int mb_srvmon_sample(struct mb_srvmon *m, struct mb_srvmon_totals *tot, double *v, bool *has,
		     char *why, size_t whylen);
/* The pids of the last sample. */
int mb_srvmon_pids(const struct mb_srvmon *m, pid_t *out, int max);

#endif
