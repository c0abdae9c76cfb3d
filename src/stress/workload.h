/* workload.h: the storage test's pure logic: workload generator, pass/fail
 * verdict, Jetstress tuning-window check and the auto-tune stopping rule.
 *
 * Nothing here does I/O or reads a clock, so every rule is unit-tested
 * (tests/unit/test_stress.c).  The generator is deterministic for a seed:
 * the same seed yields the same sequence of steps.  Percentages are of
 * transactions (transactions mode) or of database I/Os (I/O mode).
 */
#ifndef MB_STRESS_WORKLOAD_H
#define MB_STRESS_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/options.h"
#include "core/threshold.h"
#include "core/rng.h"

/* Random numbers: core/rng.h (one 8-byte state per thread). */

/* ---- the workload generator ---- */
enum mb_stress_op {
	MB_SOP_INSERT = 0,
	MB_SOP_REPLACE,
	MB_SOP_DELETE,
	MB_SOP_SEEK,
	MB_SOP_COUNT,
	/* I/O mode */
	MB_SOP_READ = MB_SOP_COUNT,
	MB_SOP_WRITE,
};

struct mb_stress_mix {
	double insert_pct, replace_pct, delete_pct, seek_pct; /* sum 100 */
	double lazy_commit_pct;				      /* of commits */
	double read_pct;				      /* I/O mode: of db I/Os */
};

/* One step of a thread's workload. */
struct mb_stress_step {
	enum mb_stress_op op;
	bool lazy;	 /* transactions mode: commit without waiting for the log */
	uint64_t target; /* key (transactions mode) or page number (I/O mode) */
	unsigned db;	 /* which database/file */
};

struct mb_stress_gen;
/* keys: the key (or page) space [first, first + count) of each database;
 * dbs: number of databases; io_mode: steps are reads/writes, not
 * transactions.  MB_EINVAL when the mix does not sum to 100 (+-0.01) or a
 * percentage is out of 0..100. */
int mb_stress_gen_create(const struct mb_stress_mix *mix, bool io_mode, unsigned dbs,
			 uint64_t first, uint64_t count, uint64_t seed, struct mb_stress_gen **out);
void mb_stress_gen_destroy(struct mb_stress_gen *g);
void mb_stress_gen_next(struct mb_stress_gen *g, struct mb_stress_step *out);
/* Let the generator target only database db (a thread that owns one). */
void mb_stress_gen_pin_db(struct mb_stress_gen *g, unsigned db);
/* Check a mix: 0 or MB_EINVAL with a message in why. */
int mb_stress_mix_check(const struct mb_stress_mix *mix, bool io_mode, char *why, size_t len);

/* ---- figures of one measurement (one thread count) ---- */
struct mb_lat {
	double avg, p95, p99, max; /* milliseconds */
	uint64_t count;		   /* 0: no sample, the figures are n/a */
};

struct mb_stress_figures {
	int threads;
	double seconds; /* measured window */
	double iops;	/* db reads + db writes + log writes per second */
	double db_read_iops, db_write_iops, log_write_iops;
	double db_read_bytes_s, db_write_bytes_s, log_write_bytes_s;
	struct mb_lat db_read, db_write, log_write;
	uint64_t errors;       /* I/O errors and checksum mismatches */
	uint64_t transactions; /* transactions mode: committed transactions */
};

/* The two latency thresholds (core/threshold.h: the counters
 * stress_db_read_ms and stress_log_write_ms of the threshold set). */
struct mb_stress_limits {
	struct mb_threshold db_read;   /* default "< 20" */
	struct mb_threshold log_write; /* default "< 10" */
};

/* Pass when there were no errors, some I/O was measured, and each measured
 * average meets its threshold.  why gets the first reason for a failure
 * (or "" on pass).  Returns true on pass. */
bool mb_stress_verdict(const struct mb_stress_figures *f, const struct mb_stress_limits *lim,
		       char *why, size_t len);

/* Jetstress's tuning window: db reads:writes in [1.5, 2.0] and db:log
 * transfers in [8, 12].  Ratios are set to -1 when the divisor is 0.
 * Returns true when both are inside; note gets a sentence saying which one
 * is outside (or "" when inside). */
bool mb_stress_window_check(const struct mb_stress_figures *f, double *rw_ratio,
			    double *dblog_ratio, char *note, size_t len);

/* ---- auto-tune ---- */
struct mb_tune_step {
	int threads;
	double iops;
	bool pass;
};

#define MB_TUNE_MIN_GAIN 0.05			  /* IOPS "stop growing" below +5% */
#define MB_TUNE_MAX_THREADS MB_STRESS_THREADS_MAX /* core/options.h: one range */

/* The stopping rule.  steps[0..n-1] are the measurements so far, in order
 * (thread counts rising).  Returns true when tuning should go on and sets
 * *next to the next thread count; returns false when it should stop.  It
 * stops when the last step failed a threshold, when its IOPS grew less
 * than min_gain over the best earlier passing step, or when the next count
 * would exceed max_threads.  *best is the index of the chosen step (or -1
 * when no step passed): the smallest passing count whose IOPS is within
 * min_gain of the highest passing IOPS, i.e. the knee. */
bool mb_stress_tune_next(const struct mb_tune_step *steps, int n, int max_threads, double min_gain,
			 int *next, int *best);
/* The thread count after cur in the auto-tune ladder: 1, 2, 4, 6, 8, 12,
 * 16, 24, 32, 48, 64 (doubling to 4, then steps of half the count). */
int mb_stress_tune_ladder(int cur);

#endif
