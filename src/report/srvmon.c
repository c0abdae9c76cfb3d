/* srvmon.c: a mail server's counters from /proc (see srvmon.h).
 * Invariant: a process's figures count once per interval, keyed by pid
 * and start time (a reused pid is another process). */
#include "report/srvmon.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/error.h"
#include "core/sampler.h"
#include "lab/lab.h"

struct proc_fig {
	pid_t pid;
	unsigned long long start; /* clock ticks after boot */
	double cpu_s;
	uint64_t cs, read_bytes, write_bytes;
};

struct mb_srvmon {
	pid_t roots[16];
	int nroots;
	char cgroup[512];
	bool has_cgroup;
	char disk_path[1024];
	/* previous sample */
	struct proc_fig *prev;
	int nprev;
	bool have_prev;
	double prev_t;
	double prev_uptime_ticks;
	bool disk_prev_ok;
	uint64_t disk_ios_prev, disk_sect_prev;
	pid_t last[MB_SRVMON_MAX_PROCS];
	int nlast;
};

int mb_srvmon_create(struct mb_srvmon **out)
{
	struct mb_srvmon *m = calloc(1, sizeof(*m));
	if (!m)
		return MB_ENOMEM;
	*out = m;
	return 0;
}

void mb_srvmon_destroy(struct mb_srvmon *m)
{
	if (!m)
		return;
	free(m->prev);
	free(m);
}

void mb_srvmon_set_roots(struct mb_srvmon *m, const pid_t *roots, int n)
{
	if (n > (int)(sizeof(m->roots) / sizeof(m->roots[0])))
		n = (int)(sizeof(m->roots) / sizeof(m->roots[0]));
	for (int i = 0; i < n; i++)
		m->roots[i] = roots[i];
	m->nroots = n < 0 ? 0 : n;
}

int mb_srvmon_set_cgroup(struct mb_srvmon *m, const char *path)
{
	if (path[0] == '/')
		snprintf(m->cgroup, sizeof(m->cgroup), "%s", path);
	else
		snprintf(m->cgroup, sizeof(m->cgroup), "/sys/fs/cgroup/%s", path);
	char p[600];
	snprintf(p, sizeof(p), "%s/cgroup.procs", m->cgroup);
	if (access(p, R_OK) != 0) {
		m->has_cgroup = false;
		return MB_ENOTFOUND;
	}
	m->has_cgroup = true;
	return 0;
}

void mb_srvmon_reset(struct mb_srvmon *m)
{
	m->have_prev = false;
	m->disk_prev_ok = false;
	m->nprev = 0;
}

void mb_srvmon_set_disk(struct mb_srvmon *m, const char *path)
{
	snprintf(m->disk_path, sizeof(m->disk_path), "%s", path ? path : "");
	m->disk_prev_ok = false;
}

int mb_srvmon_pids(const struct mb_srvmon *m, pid_t *out, int max)
{
	int n = m->nlast < max ? m->nlast : max;
	memcpy(out, m->last, (size_t)n * sizeof(*out));
	return n;
}

static int cgroup_pids(const char *dir, pid_t *out, int max)
{
	char p[600];
	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	FILE *f = fopen(p, "r");
	if (!f)
		return 0;
	int n = 0;
	long v;
	while (n < max && fscanf(f, "%ld", &v) == 1)
		out[n++] = (pid_t)v;
	fclose(f);
	return n;
}

/* Start time (field 22 of /proc/PID/stat); 0 on failure. */
static int proc_start(pid_t pid, unsigned long long *start)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return MB_ENOTFOUND;
	size_t got = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[got] = '\0';
	char *rp = strrchr(buf, ')');
	if (!rp)
		return MB_EPROTO;
	/* after ")": field 3 (state) ... field 22 (starttime) */
	char *q = rp + 2;
	for (int field = 3; field < 22 && q; field++) {
		q = strchr(q, ' ');
		if (q)
			q++;
	}
	if (!q)
		return MB_EPROTO;
	*start = strtoull(q, NULL, 10);
	return 0;
}

static int proc_io(pid_t pid, uint64_t *rchar, uint64_t *wchar, uint64_t *rb, uint64_t *wb)
{
	char path[64], key[32];
	unsigned long long val;
	snprintf(path, sizeof(path), "/proc/%d/io", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return MB_EACCES;
	int got = 0;
	while (fscanf(f, "%31[^:]: %llu\n", key, &val) == 2) {
		if (!strcmp(key, "rchar"))
			*rchar = val, got++;
		else if (!strcmp(key, "wchar"))
			*wchar = val, got++;
		else if (!strcmp(key, "read_bytes"))
			*rb = val, got++;
		else if (!strcmp(key, "write_bytes"))
			*wb = val, got++;
	}
	fclose(f);
	return got == 4 ? 0 : MB_EACCES;
}

static double uptime_ticks(void)
{
	FILE *f = fopen("/proc/uptime", "r");
	double up = 0;
	if (f) {
		if (fscanf(f, "%lf", &up) != 1)
			up = 0;
		fclose(f);
	}
	long hz = sysconf(_SC_CLK_TCK);
	return up * (double)(hz > 0 ? hz : 100);
}

/* Completed I/Os and sectors of the block device holding path. */
static int disk_figures(const char *path, uint64_t *ios, uint64_t *sectors, char *dev,
			size_t devlen, char *why, size_t whylen)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		snprintf(why, whylen, "%.200s: %s", path, strerror(errno));
		return MB_ENOTFOUND;
	}
	unsigned maj = major(st.st_dev), min = minor(st.st_dev);
	FILE *f = fopen("/proc/diskstats", "r");
	if (!f) {
		snprintf(why, whylen, "/proc/diskstats: %s", strerror(errno));
		return MB_ENOTFOUND;
	}
	char line[512];
	int rc = MB_ENOTFOUND;
	while (fgets(line, sizeof(line), f)) {
		unsigned a, b;
		char name[64];
		unsigned long long rd, rdm, rs, rt, wr, wrm, ws;
		if (sscanf(line, " %u %u %63s %llu %llu %llu %llu %llu %llu %llu", &a, &b, name,
			   &rd, &rdm, &rs, &rt, &wr, &wrm, &ws) == 10 &&
		    a == maj && b == min) {
			*ios = rd + wr;
			*sectors = rs + ws;
			snprintf(dev, devlen, "%s", name);
			rc = 0;
			break;
		}
	}
	fclose(f);
	if (rc)
		snprintf(why, whylen,
			 "the data directory is on no block device (%u:%u: tmpfs or overlay)", maj,
			 min);
	return rc;
}

static const struct proc_fig *find_prev(const struct mb_srvmon *m, pid_t pid,
					unsigned long long start)
{
	for (int i = 0; i < m->nprev; i++)
		if (m->prev[i].pid == pid && m->prev[i].start == start)
			return &m->prev[i];
	return NULL;
}

static void add_why(char *why, size_t len, const char *fmt, const char *what)
{
	size_t o = strlen(why);
	if (o + 3 < len)
		snprintf(why + o, len - o, "%s", o ? "; " : "");
	o = strlen(why);
	if (o + 1 < len)
		snprintf(why + o, len - o, fmt, what);
}

int mb_srvmon_sample(struct mb_srvmon *m, struct mb_srvmon_totals *tot, double *v, bool *has,
		     char *why, size_t whylen)
{
	struct mb_srvmon_totals t;
	memset(&t, 0, sizeof(t));
	t.io_ok = true;
	if (why && whylen)
		why[0] = '\0';
	pid_t *pids = malloc(MB_SRVMON_MAX_PROCS * sizeof(*pids));
	struct proc_fig *cur = malloc(MB_SRVMON_MAX_PROCS * sizeof(*cur));
	if (!pids || !cur) {
		free(pids);
		free(cur);
		return MB_ENOMEM;
	}
	int n = m->has_cgroup ? cgroup_pids(m->cgroup, pids, MB_SRVMON_MAX_PROCS)
			      : mb_proc_tree(m->roots, m->nroots, pids, MB_SRVMON_MAX_PROCS);
	double now = mb_now_s(), up = uptime_ticks();
	/* growth since the previous sample, summed */
	double d_cpu = 0;
	uint64_t d_cs = 0, d_rb = 0, d_wb = 0;
	int ncur = 0;
	for (int i = 0; i < n; i++) {
		struct proc_fig f;
		memset(&f, 0, sizeof(f));
		f.pid = pids[i];
		struct mb_proc_sample ps;
		if (proc_start(pids[i], &f.start) || mb_proc_sample(pids[i], &ps))
			continue; /* exited meanwhile */
		f.cpu_s = ps.cpu_s;
		f.cs = ps.vol_cs + ps.invol_cs;
		uint64_t rc = 0, wc = 0;
		if (proc_io(pids[i], &rc, &wc, &f.read_bytes, &f.write_bytes))
			t.io_ok = false;
		t.procs++;
		t.cpu_s += f.cpu_s;
		t.cs += f.cs;
		t.vsize_bytes += ps.vsize_bytes;
		t.rss_bytes += ps.rss_bytes;
		t.read_bytes += f.read_bytes;
		t.write_bytes += f.write_bytes;
		t.rchar += rc;
		t.wchar += wc;
		if (m->have_prev) {
			const struct proc_fig *p = find_prev(m, f.pid, f.start);
			if (p) {
				d_cpu += f.cpu_s > p->cpu_s ? f.cpu_s - p->cpu_s : 0;
				d_cs += f.cs > p->cs ? f.cs - p->cs : 0;
				d_rb +=
				    f.read_bytes > p->read_bytes ? f.read_bytes - p->read_bytes : 0;
				d_wb += f.write_bytes > p->write_bytes
					    ? f.write_bytes - p->write_bytes
					    : 0;
			} else if ((double)f.start >= m->prev_uptime_ticks - 1) {
				/* born within the interval: all of it is new */
				d_cpu += f.cpu_s;
				d_cs += f.cs;
				d_rb += f.read_bytes;
				d_wb += f.write_bytes;
			}
		}
		cur[ncur++] = f;
	}
	free(pids);
	m->nlast = 0;
	for (int i = 0; i < ncur; i++)
		m->last[m->nlast++] = cur[i].pid;
	double dt = now - m->prev_t;
	bool rates = m->have_prev && dt > 0;
	int cpus = 1;
	mb_online_cpus(&cpus);
	if (v && has && ncur > 0) {
		has[MB_C_STORE_VIRTUAL_MB] = true;
		v[MB_C_STORE_VIRTUAL_MB] = (double)t.vsize_bytes / 1048576.0;
		has[MB_C_STORE_RSS_MB] = true;
		v[MB_C_STORE_RSS_MB] = (double)t.rss_bytes / 1048576.0;
		if (rates) {
			has[MB_C_PROCESSOR_PCT] = true;
			v[MB_C_PROCESSOR_PCT] = d_cpu / dt / (cpus > 0 ? cpus : 1) * 100.0;
			has[MB_C_CONTEXT_SWITCHES] = true;
			v[MB_C_CONTEXT_SWITCHES] = (double)d_cs / dt;
			if (t.io_ok) {
				has[MB_C_DISK_MB] = true;
				v[MB_C_DISK_MB] = (double)(d_rb + d_wb) / dt / 1048576.0;
			}
		}
	}
	if (why && !t.io_ok)
		add_why(why, whylen, "%s",
			"disk bytes: /proc/PID/io of a server process is not readable (root or "
			"the server's user can read it)");
	/* disk transfers: the data directory's device, the whole device */
	if (m->disk_path[0]) {
		uint64_t ios = 0, sect = 0;
		char dwhy[256] = "", dev[64] = "";
		if (disk_figures(m->disk_path, &ios, &sect, dev, sizeof(dev), dwhy, sizeof(dwhy)) ==
		    0) {
			if (why)
				add_why(why, whylen,
					"database disk transfers/s: every I/O of %s (the data "
					"directory's device), not only the server's",
					dev);
			if (m->disk_prev_ok && rates && v && has) {
				has[MB_C_DB_TRANSFERS] = true;
				v[MB_C_DB_TRANSFERS] =
				    (double)(ios >= m->disk_ios_prev ? ios - m->disk_ios_prev : 0) /
				    dt;
			}
			m->disk_ios_prev = ios;
			m->disk_sect_prev = sect;
			m->disk_prev_ok = true;
		} else if (why) {
			add_why(why, whylen, "disk transfers: %s", dwhy);
		}
	} else if (why) {
		add_why(why, whylen, "%s", "disk transfers: no data directory given");
	}
	free(m->prev);
	m->prev = cur;
	m->nprev = ncur;
	m->have_prev = true;
	m->prev_t = now;
	m->prev_uptime_ticks = up;
	t.d_cpu_s = d_cpu;
	t.d_cs = d_cs;
	t.d_disk_bytes = d_rb + d_wb;
	if (tot)
		*tot = t;
	return ncur > 0 ? 0 : MB_ENOTFOUND;
}
