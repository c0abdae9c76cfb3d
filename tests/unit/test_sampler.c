/* test_sampler.c: unit tests of the /proc sampler (core/sampler.h), run
 * against the test process itself: burning CPU raises cpu_s, threads that
 * sleep raise the summed voluntary switches, touching fresh memory raises
 * RSS.  No absolute times are asserted, only directions and lower bounds
 * implied by the work done. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first */
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "core/sampler.h"

#include "burn.h"

static void test_self_sample(void **state)
{
	(void)state;
	struct mb_proc_sample a, b;
	assert_int_equal(mb_proc_sample(0, &a), 0);
	assert_int_equal(mb_proc_sample(getpid(), &b), 0);
	assert_true(a.threads >= 1);
	assert_true(a.vsize_bytes > 0);
	assert_true(a.rss_bytes > 0);
	assert_true(a.vsize_bytes >= a.rss_bytes);
	assert_true(b.t >= a.t);
	assert_true(b.cpu_s >= a.cpu_s);
	assert_true(b.vol_cs + b.invol_cs >= a.vol_cs + a.invol_cs);
}

static void test_cpu_rises(void **state)
{
	(void)state;
	struct mb_proc_sample a, b;
	struct mb_proc_rates r;
	assert_int_equal(mb_proc_sample(0, &a), 0);
	burn(0.3);
	assert_int_equal(mb_proc_sample(0, &b), 0);
	/* 0.3 s of CPU burnt; the kernel counts in clock ticks */
	assert_true(b.cpu_s - a.cpu_s >= 0.2);
	assert_int_equal(mb_proc_rates(&a, &b, &r), 0);
	int ncpu;
	assert_int_equal(mb_online_cpus(&ncpu), 0);
	assert_true(r.cpu_pct > 0.0);
	assert_true(r.cpu_pct <= 100.0 * 1.5); /* one thread: at most one CPU (+ tick slack) */
	assert_true(r.cs_per_s >= 0.0);
	/* equal or reversed times are rejected */
	assert_int_equal(mb_proc_rates(&a, &a, &r), MB_EINVAL);
	assert_int_equal(mb_proc_rates(&b, &a, &r), MB_EINVAL);
}

#define NTHREADS 4
#define NSLEEPS 200
static pthread_barrier_t barrier_done, barrier_go;
static void *sleeper(void *arg)
{
	(void)arg;
	struct timespec ts = {0, 100000}; /* 100 us */
	for (int i = 0; i < NSLEEPS; i++) {
		nanosleep(&ts, NULL);
		sched_yield();
	}
	pthread_barrier_wait(&barrier_done); /* slept: main samples now */
	pthread_barrier_wait(&barrier_go);   /* stay alive until sampled */
	return NULL;
}

static void test_switches_rise(void **state)
{
	(void)state;
	struct mb_proc_sample a, b;
	pthread_t t[NTHREADS];
	assert_int_equal(mb_proc_sample(0, &a), 0);
	assert_int_equal(pthread_barrier_init(&barrier_done, NULL, NTHREADS + 1), 0);
	assert_int_equal(pthread_barrier_init(&barrier_go, NULL, NTHREADS + 1), 0);
	for (int i = 0; i < NTHREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, sleeper, NULL), 0);
	pthread_barrier_wait(&barrier_done);
	assert_int_equal(mb_proc_sample(0, &b), 0);
	pthread_barrier_wait(&barrier_go);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&barrier_done);
	pthread_barrier_destroy(&barrier_go);
	assert_int_equal(b.threads, a.threads + NTHREADS);
	/* the sleepers' voluntary switches are summed in: each blocked at
	 * least once (in nanosleep, then at the barrier).  Not one per
	 * nanosleep: on an idle machine a 100 us sleep does not always end in
	 * a counted switch (seen in CI) */
	assert_true(b.vol_cs - a.vol_cs >= NTHREADS);
	struct mb_proc_rates r;
	assert_int_equal(mb_proc_rates(&a, &b, &r), 0);
	assert_true(r.cs_per_s > 0.0);
}

static void test_rss_rises(void **state)
{
	(void)state;
	struct mb_proc_sample a, b, c;
	const size_t len = 64u << 20;
	assert_int_equal(mb_proc_sample(0, &a), 0);
	char *p = malloc(len);
	assert_non_null(p);
	assert_int_equal(mb_proc_sample(0, &b), 0);
	assert_true(b.vsize_bytes >= a.vsize_bytes + len - (1u << 20));
	long page = sysconf(_SC_PAGESIZE);
	volatile char *vp = p; /* the stores must happen */
	for (size_t i = 0; i < len; i += (size_t)page)
		vp[i] = (char)i;
	assert_int_equal(mb_proc_sample(0, &c), 0);
	assert_true(c.rss_bytes >= b.rss_bytes + len * 3 / 4);
	free(p);
}

static void test_other_process(void **state)
{
	(void)state;
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char c;
		close(fds[1]);
		burn(0.2);
		(void)!read(fds[0], &c, 1); /* wait until the parent sampled */
		_exit(0);
	}
	close(fds[0]);
	struct mb_proc_sample s;
	/* the child burns at least 0.2 s of its own CPU time */
	double deadline = mb_now_s() + 60.0;
	do {
		assert_int_equal(mb_proc_sample(pid, &s), 0);
		if (s.cpu_s >= 0.15)
			break;
		usleep(20000);
	} while (mb_now_s() < deadline);
	assert_true(s.cpu_s >= 0.15);
	assert_int_equal(s.threads, 1);
	close(fds[1]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	/* a reaped process is gone */
	assert_int_equal(mb_proc_sample(pid, &s), MB_ENOTFOUND);
}

static void test_host(void **state)
{
	(void)state;
	struct mb_host_sample a, b;
	struct mb_host_rates r;
	assert_int_equal(mb_host_sample(&a), 0);
	assert_true(a.total_ticks >= a.busy_ticks);
	assert_true(a.ctxt > 0);
	burn(0.2);
	usleep(10000);
	assert_int_equal(mb_host_sample(&b), 0);
	assert_true(b.total_ticks > a.total_ticks);
	assert_true(b.busy_ticks > a.busy_ticks);
	assert_true(b.ctxt > a.ctxt);
	assert_int_equal(mb_host_rates(&a, &b, &r), 0);
	assert_true(r.cpu_pct > 0.0 && r.cpu_pct <= 100.0);
	/* steal is a part of the busy time */
	assert_true(b.steal_ticks <= b.busy_ticks && b.steal_ticks >= a.steal_ticks);
	assert_true(r.steal_pct >= 0.0 && r.steal_pct <= r.cpu_pct);
	assert_true(r.cs_per_s > 0.0);
	assert_int_equal(mb_host_rates(&b, &a, &r), MB_EINVAL);
}

static void test_machine(void **state)
{
	(void)state;
	int n;
	assert_int_equal(mb_online_cpus(&n), 0);
	assert_int_equal(n, (int)sysconf(_SC_NPROCESSORS_ONLN));
	bool smt;
	int rc = mb_smt_active(&smt);
	assert_true(rc == 0 || rc == MB_EUNSUPPORTED);
	FILE *f = fopen("/sys/devices/system/cpu/smt/active", "r");
	if (f) {
		int v = -1;
		if (fscanf(f, "%d", &v) == 1) {
			assert_int_equal(rc, 0);
			assert_int_equal(smt, v == 1);
		}
		fclose(f);
	}
	char buf[256];
	assert_int_equal(mb_platform_string(buf, sizeof(buf)), 0);
	assert_true(strncmp(buf, "Linux ", 6) == 0);
	assert_int_equal(mb_platform_string(buf, 4), MB_ETOOBIG);

	uint64_t t0 = mb_now_ns();
	double s0 = mb_now_s();
	usleep(2000);
	assert_true(mb_now_ns() - t0 >= 2000000);
	assert_true(mb_now_s() - s0 >= 0.002);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_self_sample),	  cmocka_unit_test(test_cpu_rises),
	    cmocka_unit_test(test_switches_rise), cmocka_unit_test(test_rss_rises),
	    cmocka_unit_test(test_other_process), cmocka_unit_test(test_host),
	    cmocka_unit_test(test_machine),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
