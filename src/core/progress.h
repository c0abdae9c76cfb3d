/* progress.h: the progress line of a long job (`mailbench init`, `mailbench
 * lab init-imap`): bar, percent, items done of total, items per second,
 * the caller's detail and the ETA, on one stream.
 *
 * On a terminal the line is redrawn in place ("\r") at every update; on
 * anything else a full line is written when the percent reaches a new tenth,
 * when `every_s` seconds passed since the last line, and at the final
 * update, so logs stay short.  The rate counts only items done after the
 * first update at or after `warmup_s` (work resumed from an earlier run is
 * skipped quickly and must not inflate the rate); ETA is "--:--" until
 * there is a rate.  Times are the caller's monotonic seconds (mb_now_s), so
 * the printer itself reads no clock.
 */
#ifndef MB_CORE_PROGRESS_H
#define MB_CORE_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct mb_progress;

struct mb_progress_opts {
	FILE *out;	   /* the stream (stderr) */
	bool tty;	   /* redraw in place (isatty of out's descriptor) */
	const char *label; /* prefix of the non-terminal lines ("init") */
	const char *noun;  /* what is counted ("items") */
	double warmup_s;   /* rate baseline: first update at or after this time */
	double every_s;	   /* non-terminal: a line at least this often (0: only tenths) */
};

/* Start at time now_s. */
int mb_progress_create(const struct mb_progress_opts *o, double now_s, struct mb_progress **out);
/* Show done of total at now_s; extra (may be NULL or "") goes before the ETA;
 * final forces a line (non-terminal). */
void mb_progress_update(struct mb_progress *p, double now_s, uint64_t done, uint64_t total,
			const char *extra, bool final);
/* Ends the terminal line (a newline when something was drawn) and frees. */
void mb_progress_destroy(struct mb_progress *p);

/* A duration as "1h02m", "3m07s" or "--:--" (negative or over 100 hours). */
void mb_progress_fmt_dur(double s, char *buf, size_t len);

#endif
