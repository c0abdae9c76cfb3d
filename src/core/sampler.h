/* sampler.h: process and machine figures read from /proc.
 *
 * A process sample sums CPU time and context switches over all threads of
 * the process (/proc/PID/stat and /proc/PID/task/[*]/status), and reads its
 * virtual size and RSS (/proc/PID/status).  A machine sample reads the cpu
 * line and ctxt of /proc/stat.  Rates come from two samples:
 * mb_proc_rates() and mb_host_rates().  Nothing here caches state: callers
 * keep the previous sample.
 */
#ifndef MB_CORE_SAMPLER_H
#define MB_CORE_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/clock.h" /* the samplers' clock (mb_now_s, mb_now_ns) */

struct mb_proc_sample {
	double t;	      /* monotonic seconds when taken */
	double cpu_s;	      /* user + system CPU seconds, all threads */
	uint64_t vol_cs;      /* voluntary context switches, all threads */
	uint64_t invol_cs;    /* involuntary context switches, all threads */
	uint64_t vsize_bytes; /* VmSize */
	uint64_t rss_bytes;   /* VmRSS */
	int threads;
};

struct mb_host_sample {
	double t;
	uint64_t busy_ticks;   /* user+nice+system+irq+softirq+steal */
	uint64_t total_ticks;  /* busy + idle + iowait */
	uint64_t steal_ticks;  /* taken by the hypervisor for other guests */
	uint64_t iowait_ticks; /* idle with disk I/O outstanding */
	uint64_t ctxt;	       /* context switches since boot */
};

struct mb_proc_rates {
	double cpu_pct;	 /* cpu time / wall / online CPUs x 100 */
	double cs_per_s; /* (vol + invol) per second */
};

struct mb_host_rates {
	double cpu_pct;	   /* busy / total x 100 */
	double steal_pct;  /* steal / total x 100 (0 on bare metal) */
	double iowait_pct; /* iowait / total x 100 */
	double cs_per_s;
};

/* pid 0 means this process. */
int mb_proc_sample(pid_t pid, struct mb_proc_sample *out);
int mb_host_sample(struct mb_host_sample *out);
int mb_proc_rates(const struct mb_proc_sample *a, const struct mb_proc_sample *b,
		  struct mb_proc_rates *out);
int mb_host_rates(const struct mb_host_sample *a, const struct mb_host_sample *b,
		  struct mb_host_rates *out);

/* CPU seconds the calling thread has used (CLOCK_THREAD_CPUTIME_ID); 0 when
 * the clock cannot be read. */
double mb_thread_cpu_s(void);

int mb_online_cpus(int *out);
/* SMT (Hyper-Threading) on: *out = true/false; MB_EUNSUPPORTED when unknown. */
int mb_smt_active(bool *out);
/* Kernel release and machine ("Linux 6.1.0 x86_64") for the header rows. */
int mb_platform_string(char *buf, size_t len);
/* The machine for the header rows: processor model, online processors and
 * memory ("Intel(R) Xeon(R) ... x 2 CPUs, 23.5 GiB"), from /proc/cpuinfo and
 * /proc/meminfo; "n/a" parts where they cannot be read. */
int mb_machine_string(char *buf, size_t len);

#endif
