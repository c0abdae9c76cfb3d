/* sampler.c: process and machine figures from /proc and /sys (see sampler.h).
 *
 * Invariants: every figure is read from the kernel at the time of the call;
 * nothing is cached or estimated.  A process sample's CPU time comes from
 * /proc/PID/stat (the kernel sums all threads, live and exited); its
 * context switches are summed over /proc/PID/task/[*]/status (threads that
 * exited between two samples drop out, so rates are clamped at zero).
 */
#include "core/sampler.h"
#include "core/error.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* Read a small file whole into buf (NUL-terminated). */
static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;

	if (fd < 0)
		return mb_from_errno(errno);
	while (got + 1 < len) {
		ssize_t n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int rc = mb_from_errno(errno);
			close(fd);
			return rc;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	close(fd);
	return 0;
}

/* Value of "Key:\t123 kB" lines of a status file; -1 when absent. */
static int64_t status_field(const char *text, const char *key)
{
	size_t kl = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, kl) == 0 && p[kl] == ':') {
			char *end;
			long long v = strtoll(p + kl + 1, &end, 10);
			if (end == p + kl + 1)
				return -1;
			return v;
		}
	}
	return -1;
}

int mb_proc_sample(pid_t pid, struct mb_proc_sample *out)
{
	char path[64], buf[8192];
	char pidstr[24];
	int rc;

	memset(out, 0, sizeof(*out));
	if (pid == 0)
		snprintf(pidstr, sizeof(pidstr), "self");
	else
		snprintf(pidstr, sizeof(pidstr), "%ld", (long)pid);
	out->t = mb_now_s();

	/* CPU time: fields 14 (utime) and 15 (stime) after the ")" of comm. */
	snprintf(path, sizeof(path), "/proc/%s/stat", pidstr);
	if ((rc = read_file(path, buf, sizeof(buf))) != 0)
		return rc;
	char *p = strrchr(buf, ')');
	if (!p)
		return MB_EPROTO;
	p++;
	unsigned long long utime = 0, stime = 0;
	long nthreads = 0;
	/* state(3) ppid pgrp session tty tpgid flags minflt cminflt majflt
	 * cmajflt utime(14) stime(15) cutime cstime priority nice
	 * num_threads(20) */
	if (sscanf(p, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %ld",
		   &utime, &stime, &nthreads) != 3)
		return MB_EPROTO;
	long hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0)
		hz = 100;
	out->cpu_s = (double)(utime + stime) / (double)hz;
	out->threads = (int)nthreads;

	/* Virtual size and RSS of the whole process. */
	snprintf(path, sizeof(path), "/proc/%s/status", pidstr);
	if ((rc = read_file(path, buf, sizeof(buf))) != 0)
		return rc;
	int64_t vm = status_field(buf, "VmSize"), rss = status_field(buf, "VmRSS");
	out->vsize_bytes = vm > 0 ? (uint64_t)vm * 1024 : 0;
	out->rss_bytes = rss > 0 ? (uint64_t)rss * 1024 : 0;

	/* Context switches, summed over the threads. */
	snprintf(path, sizeof(path), "/proc/%s/task", pidstr);
	DIR *d = opendir(path);
	if (!d)
		return mb_from_errno(errno);
	struct dirent *de;
	int seen = 0;
	while ((de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		char tpath[320];
		snprintf(tpath, sizeof(tpath), "/proc/%s/task/%s/status", pidstr, de->d_name);
		if (read_file(tpath, buf, sizeof(buf)) != 0)
			continue; /* the thread exited meanwhile */
		int64_t v = status_field(buf, "voluntary_ctxt_switches");
		int64_t nv = status_field(buf, "nonvoluntary_ctxt_switches");
		if (v >= 0)
			out->vol_cs += (uint64_t)v;
		if (nv >= 0)
			out->invol_cs += (uint64_t)nv;
		seen++;
	}
	closedir(d);
	if (seen == 0)
		return MB_ENOTFOUND;
	return 0;
}

int mb_host_sample(struct mb_host_sample *out)
{
	char *line = NULL;
	size_t cap = 0;
	bool have_cpu = false, have_ctxt = false;

	memset(out, 0, sizeof(*out));
	out->t = mb_now_s();
	/* line by line: the intr line before ctxt can be very long */
	FILE *f = fopen("/proc/stat", "re");
	if (!f)
		return mb_from_errno(errno);
	while (getline(&line, &cap, f) > 0) {
		unsigned long long v[8] = {0};
		/* cpu user nice system idle iowait irq softirq steal [guest guest_nice] */
		if (!have_cpu && sscanf(line, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
					&v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) >= 4) {
			out->busy_ticks = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
			out->total_ticks = out->busy_ticks + v[3] + v[4];
			out->steal_ticks = v[7];
			out->iowait_ticks = v[4];
			have_cpu = true;
		} else if (sscanf(line, "ctxt %llu", &v[0]) == 1) {
			out->ctxt = v[0];
			have_ctxt = true;
		}
	}
	free(line);
	fclose(f);
	return have_cpu && have_ctxt ? 0 : MB_EPROTO;
}

static double delta(uint64_t a, uint64_t b) { return b > a ? (double)(b - a) : 0.0; }

int mb_proc_rates(const struct mb_proc_sample *a, const struct mb_proc_sample *b,
		  struct mb_proc_rates *out)
{
	double dt = b->t - a->t;
	int ncpu;

	if (!(dt > 0))
		return MB_EINVAL;
	if (mb_online_cpus(&ncpu) != 0)
		ncpu = 1;
	double cpu = b->cpu_s - a->cpu_s;
	out->cpu_pct = cpu > 0 ? cpu / dt / ncpu * 100.0 : 0.0;
	out->cs_per_s = (delta(a->vol_cs, b->vol_cs) + delta(a->invol_cs, b->invol_cs)) / dt;
	return 0;
}

int mb_host_rates(const struct mb_host_sample *a, const struct mb_host_sample *b,
		  struct mb_host_rates *out)
{
	double dt = b->t - a->t;

	if (!(dt > 0))
		return MB_EINVAL;
	double total = delta(a->total_ticks, b->total_ticks);
	/* each kind of tick as a share of all the ticks between the samples */
#define SHARE(f) (total > 0 ? delta(a->f, b->f) / total * 100.0 : 0.0)
	out->cpu_pct = SHARE(busy_ticks);
	out->steal_pct = SHARE(steal_ticks);
	out->iowait_pct = SHARE(iowait_ticks);
#undef SHARE
	out->cs_per_s = delta(a->ctxt, b->ctxt) / dt;
	return 0;
}

double mb_thread_cpu_s(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int mb_online_cpus(int *out)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		return MB_ESYS;
	*out = (int)n;
	return 0;
}

int mb_smt_active(bool *out)
{
	char buf[256];

	if (read_file("/sys/devices/system/cpu/smt/active", buf, sizeof(buf)) == 0 &&
	    (buf[0] == '0' || buf[0] == '1')) {
		*out = buf[0] == '1';
		return 0;
	}
	/* Fallback: does cpu0 share its core with a sibling ("0,4" or "0-1")? */
	if (read_file("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list", buf,
		      sizeof(buf)) == 0 &&
	    isdigit((unsigned char)buf[0])) {
		*out = strpbrk(buf, ",-") != NULL;
		return 0;
	}
	return MB_EUNSUPPORTED;
}

int mb_machine_string(char *buf, size_t len)
{
	char model[256] = "n/a", line[512];
	double mem_gib = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			/* x86: "model name"; arm64 and others: "Hardware" or "CPU part" */
			if (strncmp(line, "model name", 10) && strncmp(line, "Hardware", 8))
				continue;
			const char *c = strchr(line, ':');
			if (!c)
				continue;
			c++;
			while (*c == ' ' || *c == '\t')
				c++;
			snprintf(model, sizeof(model), "%.*s", (int)strcspn(c, "\n"), c);
			break;
		}
		fclose(f);
	}
	f = fopen("/proc/meminfo", "r");
	if (f) {
		unsigned long long kb;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "MemTotal: %llu kB", &kb) == 1) {
				mem_gib = (double)kb / 1048576.0;
				break;
			}
		fclose(f);
	}
	int cpus = 0;
	char cpu_s[32] = "n/a", mem_s[32] = "n/a";
	if (mb_online_cpus(&cpus) == 0)
		snprintf(cpu_s, sizeof(cpu_s), "%d", cpus);
	if (mem_gib > 0)
		snprintf(mem_s, sizeof(mem_s), "%.1f", mem_gib);
	int n = snprintf(buf, len, "%s x %s CPUs, %s GiB", model, cpu_s, mem_s);
	if (n < 0 || (size_t)n >= len)
		return MB_ETOOBIG;
	return 0;
}

int mb_platform_string(char *buf, size_t len)
{
	struct utsname u;

	if (uname(&u) != 0)
		return mb_from_errno(errno);
	int n = snprintf(buf, len, "%s %s %s", u.sysname, u.release, u.machine);
	if (n < 0 || (size_t)n >= len)
		return MB_ETOOBIG;
	return 0;
}
