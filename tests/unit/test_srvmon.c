/* test_srvmon.c: unit tests of a server's counters from /proc
 * (report/srvmon.h), on the test process's own children: the process tree
 * of a root is summed (a grandchild spawned after the first sample
 * included), a process born within the interval counts whole, one already
 * running when first seen only from its baseline, a dead server is
 * MB_ENOTFOUND, a missing cgroup is refused.  No absolute times are
 * asserted, only sums and bounds implied by the work the children did. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first */
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "core/sampler.h"
#include "report/srvmon.h"

#include "burn.h"

#define WRITE_BYTES (1 << 20)

/* A worker: burns CPU, writes WRITE_BYTES to /dev/null, (optionally forks
 * a grandchild that does the same), says "ready" on fd, then waits to be
 * killed. */
static pid_t worker(int ready_fd, bool grandchild)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	if (grandchild)
		worker(ready_fd, false);
	burn(0.15);
	int fd = open("/dev/null", O_WRONLY);
	static char buf[65536];
	for (int i = 0; i < WRITE_BYTES / (int)sizeof(buf); i++)
		if (write(fd, buf, sizeof(buf)) < 0)
			break;
	close(fd);
	if (write(ready_fd, "r", 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

static void wait_ready(int fd, int n)
{
	char c;
	for (int i = 0; i < n; i++)
		assert_int_equal(read(fd, &c, 1), 1);
}

static void test_children_summed(void **state)
{
	(void)state;
	int p[2], g[2];
	assert_int_equal(pipe(p), 0);
	assert_int_equal(pipe(g), 0);
	struct mb_srvmon *m;
	assert_int_equal(mb_srvmon_create(&m), 0);
	/* the root: a child that spawns the workers later */
	pid_t root = fork();
	if (root == 0) {
		char c;
		if (read(g[0], &c, 1) != 1) /* "go" */
			_exit(1);
		worker(p[1], true); /* a child with a grandchild */
		worker(p[1], false);
		for (;;)
			pause();
	}
	mb_srvmon_set_roots(m, &root, 1);
	double v[MB_COUNTER_COUNT];
	bool has[MB_COUNTER_COUNT];
	memset(has, 0, sizeof(has));
	char why[512];
	struct mb_srvmon_totals t0, t1;
	assert_int_equal(mb_srvmon_sample(m, &t0, v, has, why, sizeof(why)), 0);
	assert_int_equal(t0.procs, 1);
	assert_false(has[MB_C_PROCESSOR_PCT]); /* a baseline only */
	assert_true(has[MB_C_STORE_VIRTUAL_MB]);
	assert_int_equal(write(g[1], "g", 1), 1);
	wait_ready(p[0], 3);
	/* each worker's own figures, read directly */
	pid_t pids[MB_SRVMON_MAX_PROCS];
	memset(has, 0, sizeof(has));
	assert_int_equal(mb_srvmon_sample(m, &t1, v, has, why, sizeof(why)), 0);
	assert_int_equal(t1.procs, 4); /* the root, two workers, one grandchild */
	int n = mb_srvmon_pids(m, pids, MB_SRVMON_MAX_PROCS);
	assert_int_equal(n, 4);
	double each = 0;
	for (int i = 0; i < n; i++) {
		struct mb_proc_sample ps;
		assert_int_equal(mb_proc_sample(pids[i], &ps), 0);
		each += ps.cpu_s;
	}
	/* three workers burned 0.15 s each, born within the interval: whole */
	assert_true(t1.d_cpu_s >= 3 * 0.15 * 0.9);
	assert_true(t1.d_cpu_s <= each + 0.05);
	assert_true(t1.cpu_s >= each - 0.05);
	assert_true(has[MB_C_PROCESSOR_PCT] && v[MB_C_PROCESSOR_PCT] > 0);
	assert_true(has[MB_C_CONTEXT_SWITCHES]);
	if (t1.io_ok) {
		assert_true(t1.wchar >= 3ull * WRITE_BYTES);
		assert_true(has[MB_C_DISK_MB]);
	} else {
		assert_false(has[MB_C_DISK_MB]);
		assert_non_null(strstr(why, "/proc/PID/io"));
	}
	assert_true(t1.vsize_bytes > t0.vsize_bytes);
	/* nothing new: the next interval counts (almost) nothing */
	struct mb_srvmon_totals t2;
	assert_int_equal(mb_srvmon_sample(m, &t2, v, has, why, sizeof(why)), 0);
	assert_true(t2.d_cpu_s < 0.1);
	/* the server gone: nothing alive */
	for (int i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	while (waitpid(root, NULL, 0) < 0)
		;
	usleep(50000);
	assert_int_equal(mb_srvmon_sample(m, &t2, v, has, why, sizeof(why)), MB_ENOTFOUND);
	mb_srvmon_destroy(m);
	close(p[0]);
	close(p[1]);
	close(g[0]);
	close(g[1]);
}

/* A process that had run before it was first seen counts from there. */
static void test_baseline_of_running(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t w = worker(p[1], false);
	wait_ready(p[0], 1);
	struct mb_srvmon *m;
	assert_int_equal(mb_srvmon_create(&m), 0);
	mb_srvmon_set_roots(m, &w, 1);
	struct mb_srvmon_totals t;
	assert_int_equal(mb_srvmon_sample(m, &t, NULL, NULL, NULL, 0), 0);
	assert_true(t.cpu_s >= 0.15 * 0.9);
	assert_true(t.d_cpu_s == 0);
	assert_int_equal(mb_srvmon_sample(m, &t, NULL, NULL, NULL, 0), 0);
	assert_true(t.d_cpu_s < 0.1); /* not its 0.15 s from before */
	/* reset: a baseline again */
	mb_srvmon_reset(m);
	assert_int_equal(mb_srvmon_sample(m, &t, NULL, NULL, NULL, 0), 0);
	assert_true(t.d_cpu_s == 0);
	kill(w, SIGKILL);
	waitpid(w, NULL, 0);
	mb_srvmon_destroy(m);
	close(p[0]);
	close(p[1]);
}

static void test_bad_inputs(void **state)
{
	(void)state;
	struct mb_srvmon *m;
	assert_int_equal(mb_srvmon_create(&m), 0);
	assert_int_equal(mb_srvmon_set_cgroup(m, "/nonexistent/mailbench"), MB_ENOTFOUND);
	/* no roots: nothing to measure */
	char why[256];
	assert_int_equal(mb_srvmon_sample(m, NULL, NULL, NULL, why, sizeof(why)), MB_ENOTFOUND);
	/* the data directory of disk transfers: a tmpfs says why it is n/a */
	mb_srvmon_set_disk(m, "/proc");
	pid_t self = getpid();
	mb_srvmon_set_roots(m, &self, 1);
	assert_int_equal(mb_srvmon_sample(m, NULL, NULL, NULL, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "disk transfers"));
	mb_srvmon_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_children_summed),
	    cmocka_unit_test(test_baseline_of_running),
	    cmocka_unit_test(test_bad_inputs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
