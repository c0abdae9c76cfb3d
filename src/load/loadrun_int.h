/* loadrun_int.h: what `mailbench load`'s two files share (cmd_load.c: the
 * command, its options, timers and signals; loadout.c: what a run writes:
 * the per-second stats line and the end summary): the run's state.
 * Nothing else includes it.
 */
#ifndef MB_LOAD_LOADRUN_INT_H
#define MB_LOAD_LOADRUN_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "core/sampler.h"
#include "core/scenario.h"
#include "core/stats.h"
#include "load/distload.h"
#include "load/engine.h"
#include "load/loadstats.h"

struct run {
	struct mb_engine *eng;
	const struct mb_scenario *sc;
	struct mb_stats_writer *w;
	struct mb_load_stats *total, *win;
	uv_timer_t tick, end;
	uv_signal_t sigint, sigterm, sigusr1;
	struct mb_distload *dist;   /* --mpi: the job; NULL alone */
	struct mb_distload_sums ds; /* --mpi, rank 0: the job's last window */
	bool want_stop;		    /* --mpi: this rank asks the job to stop */
	bool dist_stop;		    /* --mpi: the job stops */
	int stopping;		    /* stop_all ran: later signals are absorbed */
	double t_last, t0;
	struct mb_proc_sample ps_last;
	bool have_ps;
	int users;
	int first, count; /* the user range run here */
	double accel;
	int stopped_by_signal;
	int write_failed;
	uint64_t saturated_windows, windows;
	uint64_t logons_all, done_all, failed_all; /* the whole run, warm-up included */
	double warmup_s;			   /* totals (summary) start after this */
	bool warm;				   /* the warmup is over */
	double ud_warm;				   /* user-days at the end of the warmup */
	struct mb_proc_sample ps_warm;		   /* process sample at the end of the warmup */
	bool have_ps_warm;
	int users_on_last; /* users logged on at the last sample while running */
};

/* loadout.c: collect the window and write its stats line (final: the
 * last one); the end summary on stdout. */
void mb__load_sample(struct run *r, bool final);
void mb__load_print_summary(struct run *r);

#endif
