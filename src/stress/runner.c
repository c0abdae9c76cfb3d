/* runner.c: one measurement phase: worker threads, per-second drain, warm-up
 * then stable window (see runner.h).  Invariant: the result window holds
 * exactly the I/O drained at ticks between the warm-up boundary and the end
 * boundary, and `measured_s` is the wall time between those two drains. */
#include "stress/runner.h"
#include "core/error.h"
#include "core/sampler.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t g_interrupt;

void mb_stress_interrupt(void) { g_interrupt = 1; }

bool mb_stress_interrupted(void) { return g_interrupt != 0; }

uint64_t mb_stress_now_ns(void) { return mb_now_ns(); }

struct phase {
	const struct mb_stress_worker *w;
	struct mb_stress_acct *acct;
	atomic_bool stop;
	atomic_int failed;
};

struct thr {
	struct phase *p;
	int idx;
	pthread_t tid;
	bool started;
	struct mb_stress_slot *slot;
};

static void *thread_main(void *arg)
{
	struct thr *t = arg;
	struct phase *p = t->p;
	void *ts = NULL;
	int rc = p->w->thread_start(p->w->ctx, t->idx, t->slot, &ts);
	if (rc) {
		atomic_fetch_add(&p->failed, 1);
		return NULL;
	}
	int (*step)(void *) = t->idx < 0 ? p->w->aux_step : p->w->step;
	while (!atomic_load_explicit(&p->stop, memory_order_relaxed)) {
		if (step(ts) < 0) {
			atomic_fetch_add(&p->failed, 1);
			break;
		}
	}
	if (p->w->thread_stop)
		p->w->thread_stop(ts);
	return NULL;
}

static void sleep_until(uint64_t when)
{
	struct timespec ts = {(time_t)(when / 1000000000ULL), (long)(when % 1000000000ULL)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
		if (g_interrupt)
			return;
	}
}

int mb_stress_run_phase(const struct mb_stress_worker *w, struct mb_stress_acct *acct, int threads,
			double warmup_s, double duration_s, mb_stress_tick_cb cb, void *arg,
			struct mb_stress_window *result, double *measured_s)
{
	*measured_s = 0.0;
	if (threads < 1 || duration_s < 0 || warmup_s < 0)
		return MB_EINVAL;
	struct phase p = {.w = w, .acct = acct};
	atomic_init(&p.stop, false);
	atomic_init(&p.failed, 0);
	int nthr = threads + (w->aux_step ? 1 : 0);
	struct thr *t = calloc((size_t)nthr, sizeof(*t));
	struct mb_stress_window *sec = NULL, *junk = NULL;
	int rc = 0;
	if (!t)
		return MB_ENOMEM;
	if ((rc = mb_stress_window_create(&sec)) || (rc = mb_stress_window_create(&junk)))
		goto out;
	/* drop whatever an earlier phase left behind */
	mb_stress_acct_drain(acct, junk);
	for (int i = 0; i < nthr; i++) {
		t[i].p = &p;
		t[i].idx = i < threads ? i : -1;
		if ((rc = mb_stress_acct_slot(acct, &t[i].slot)))
			goto stop;
	}
	uint64_t t0 = mb_stress_now_ns();
	for (int i = 0; i < nthr; i++) {
		if (pthread_create(&t[i].tid, NULL, thread_main, &t[i])) {
			rc = MB_ESYS;
			goto stop;
		}
		t[i].started = true;
	}
	uint64_t warm_at = t0 + (uint64_t)(warmup_s * 1e9);
	/* duration 0: until interrupted */
	uint64_t end_at = duration_s > 0 ? warm_at + (uint64_t)(duration_s * 1e9) : UINT64_MAX;
	uint64_t last = t0, warm_drain = 0, end_drain = 0;
	bool warm = warmup_s <= 0;
	if (warm)
		warm_drain = t0;
	while (!g_interrupt) {
		uint64_t next = last + 1000000000ULL;
		if (!warm && next > warm_at)
			next = warm_at;
		if (next > end_at)
			next = end_at;
		/* sleep in short slices so an error or ^C ends the phase soon */
		uint64_t now;
		while ((now = mb_stress_now_ns()) < next && !g_interrupt &&
		       !mb_stress_acct_errors(acct) && !atomic_load(&p.failed)) {
			uint64_t slice = now + 100000000ULL;
			sleep_until(slice < next ? slice : next);
		}
		now = mb_stress_now_ns();
		mb_stress_window_reset(sec);
		mb_stress_acct_drain(acct, sec);
		double dt = (double)(now - last) / 1e9;
		struct mb_stress_figures f;
		mb_stress_window_figures(sec, dt, threads, &f);
		if (warm)
			mb_stress_window_merge(result, sec);
		if (cb) {
			struct mb_stress_tick tk = {(double)(now - t0) / 1e9, warm, threads, &f,
						    sec};
			cb(arg, &tk);
		}
		last = now;
		if (!warm && now >= warm_at) {
			warm = true;
			warm_drain = now;
			/* the measured window is the full duration from the moment
			 * the warm-up really ended (a late wake-up on a loaded
			 * machine would otherwise shorten it) */
			if (duration_s > 0)
				end_at = now + (uint64_t)(duration_s * 1e9);
		}
		if (now >= end_at || mb_stress_acct_errors(acct) || atomic_load(&p.failed)) {
			end_drain = now;
			break;
		}
	}
	if (!end_drain)
		end_drain = mb_stress_now_ns();
	if (warm && end_drain > warm_drain)
		*measured_s = (double)(end_drain - warm_drain) / 1e9;
stop:
	atomic_store(&p.stop, true);
	for (int i = 0; i < nthr; i++)
		if (t[i].started)
			pthread_join(t[i].tid, NULL);
	/* I/O that completed after the end is not part of the measurement */
	mb_stress_acct_drain(acct, junk);
	if (!rc && atomic_load(&p.failed) && !mb_stress_acct_errors(acct))
		rc = MB_ESYS;
out:
	mb_stress_window_destroy(sec);
	mb_stress_window_destroy(junk);
	free(t);
	return rc;
}
