/* runner.h: runs one measurement phase of the storage test.
 *
 * A mode (I/O mode, transactions mode) supplies a worker: per-thread start
 * and stop hooks and a step function that does one unit of work and
 * records its own I/O into the thread's accounting slot.  The runner
 * starts N worker threads (plus an optional auxiliary thread, the log
 * writer of I/O mode), drains the accountant once per second, calls the
 * tick callback with the last second's figures, and after the warm-up (the
 * transient phase) accumulates the stable measurement.  Invariant: the
 * result window covers exactly [warmup, warmup + duration) of the phase; I/O
 * completing after the end is drained and discarded.  The phase ends early
 * on the first recorded error or when mb_stress_interrupt() was called.
 */
#ifndef MB_STRESS_RUNNER_H
#define MB_STRESS_RUNNER_H

#include <stdbool.h>

#include "stress/acct.h"

struct mb_stress_worker {
	void *ctx;
	/* idx 0..threads-1 for workers, -1 for the auxiliary thread. */
	int (*thread_start)(void *ctx, int idx, struct mb_stress_slot *slot, void **ts);
	/* One unit of work; a negative return ends this thread (and the phase). */
	int (*step)(void *ts);
	void (*thread_stop)(void *ts);
	/* Optional auxiliary thread (NULL: none). */
	int (*aux_step)(void *ts);
};

struct mb_stress_tick {
	double t;  /* seconds since the phase started */
	bool warm; /* true once the stable measurement runs */
	int threads;
	const struct mb_stress_figures *sec;   /* the last second */
	const struct mb_stress_window *secwin; /* its histograms */
};
typedef void (*mb_stress_tick_cb)(void *arg, const struct mb_stress_tick *tick);

/* Run a phase (duration_s 0: until interrupted); *result receives the stable window's figures (it
 * is added to, so pass a fresh or reset window) and *measured_s its length. */
int mb_stress_run_phase(const struct mb_stress_worker *w, struct mb_stress_acct *acct, int threads,
			double warmup_s, double duration_s, mb_stress_tick_cb cb, void *arg,
			struct mb_stress_window *result, double *measured_s);

/* Ask a running phase to end (async-signal-safe). */
void mb_stress_interrupt(void);
bool mb_stress_interrupted(void);

/* Monotonic nanoseconds: the same clock as mb_now_ns() of core/sampler.h. */
uint64_t mb_stress_now_ns(void);

#endif
