/* screens/storage.c: the storage screen: the storage test (live, and its
 * average after the warm-up) beside the published 4/8/12-thread rows and
 * the columns kept from this session's earlier tests (ui/storcols.h).  t
 * or F4 starts/stops it (ui/keys.c); + and - (Left/Right) step the
 * threads, restarting a running test; A, R and C start an auto-tune, a
 * soft recovery or a checksum test, as `storage-test --threads auto` /
 * `--type ...` would.  Invariant: percentiles are shown for the whole
 * test only (live: n/a), from its merged histograms.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/options.h"
#include "report/stortable.h"
#include "core/table.h"
#include "ui/console.h"
#include "ui/storcols.h"
#include "ui/term.h"

/* The console's rows of the storage comparison. */
static const enum mb_stor_measure rows[] = {MB_SM_THREADS,  MB_SM_IOPS,	    MB_SM_READ_AVG,
					    MB_SM_READ_P95, MB_SM_READ_P99, MB_SM_LOG_AVG,
					    MB_SM_LOG_P95,  MB_SM_LOG_P99,  MB_SM_VERDICT};

/* This test's live window (k 0) or average after its warm-up (k 1). */
static void this_test(struct mb_console *c, int k, struct mb_stor_series *s)
{
	double v[MB_COUNTER_COUNT];
	bool hv[MB_COUNTER_COUNT];
	if (k == 0)
		mb_session_live(c->s, v, hv);
	else
		mb_session_average(c->s, v, hv);
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", k == 0 ? "live" : "test avg");
	snprintf(s->longname, sizeof(s->longname), "%s",
		 k == 0 ? "this test, last 10 seconds"
			: "this test: average after its warm-up; p95/p99 since it started");
	s->prio = k == 0 ? 100 : 90;
	s->colour = k == 0;
	s->has[MB_SM_THREADS] = mb_session_stress_active(c->s) || hv[MB_C_STRESS_IOPS];
	s->v[MB_SM_THREADS] = mb_session_stress_threads(c->s);
	s->has[MB_SM_IOPS] = hv[MB_C_STRESS_IOPS];
	s->v[MB_SM_IOPS] = v[MB_C_STRESS_IOPS];
	s->has[MB_SM_READ_AVG] = hv[MB_C_STRESS_READ_MS];
	s->v[MB_SM_READ_AVG] = v[MB_C_STRESS_READ_MS];
	s->has[MB_SM_LOG_AVG] = hv[MB_C_STRESS_LOG_MS];
	s->v[MB_SM_LOG_AVG] = v[MB_C_STRESS_LOG_MS];
	if (k == 0)
		return; /* percentiles are kept for the whole test only */
	/* percentiles: from the merged histograms of the whole test */
	struct mb_latency rd, lw;
	mb_session_stress_latency(c->s, &rd, &lw);
	s->has[MB_SM_READ_P95] = s->has[MB_SM_READ_P99] = rd.has;
	s->v[MB_SM_READ_P95] = rd.p95_ms;
	s->v[MB_SM_READ_P99] = rd.p99_ms;
	s->has[MB_SM_LOG_P95] = s->has[MB_SM_LOG_P99] = lw.has;
	s->v[MB_SM_LOG_P95] = lw.p95_ms;
	s->v[MB_SM_LOG_P99] = lw.p99_ms;
}

static void draw_storage(struct mb_console *c, int top, int h)
{
	const struct mb_storage_cfg *st = mb_session_storage_cfg(c->s);
	const struct mb_thresholds *th = mb_session_thresholds(c->s);
	bool running = mb_session_stress_active(c->s);
	/* the published rows, the kept results, then this test */
	struct mb_stortable *model;
	if (mb_stortable_create(st, th, &model))
		return;
	struct mb_stor_series s;
	for (int k = 0; k < c->nstor; k++) {
		mb_stor_series(c, k, &s);
		mb_stortable_add(model, &s);
	}
	for (int k = 0; k < 2; k++) {
		this_test(c, k, &s);
		mb_stortable_add(model, &s);
	}
	struct mb_table *t;
	int rc = mb_stortable_by_measure(model, rows, (int)(sizeof(rows) / sizeof(rows[0])), &t);
	mb_stortable_destroy(model);
	if (rc)
		return;
	int shown = mb_w_table(top, 0, h - 4, COLS, t, 0, -1);
	mb_table_destroy(t);
	int y = top + shown + 2;
	char line[512];
	static const char *const kinds[] = {"", " (auto-tune)", " (soft recovery)", " (checksum)"};
	snprintf(line, sizeof(line), "storage test %s, %d threads%s",
		 running ? "RUNNING" : "stopped", mb_session_stress_threads(c->s),
		 kinds[mb_session_stress_kind(c->s)]);
	mb_w_text(y++, 0, COLS, running ? MB_ST_LIVE : MB_ST_NORMAL, line);
	if (c->stor_outcome[0])
		mb_w_text(y++, 0, COLS, MB_ST_NORMAL, c->stor_outcome);
	char leg[8][MB_W_WRAP_W], rdth[48], lgth[48];
	int n = 0;
	mb_threshold_text(&th->counter[MB_C_STRESS_READ_MS], MB_C_STRESS_READ_MS, rdth,
			  sizeof(rdth));
	mb_threshold_text(&th->counter[MB_C_STRESS_LOG_MS], MB_C_STRESS_LOG_MS, lgth, sizeof(lgth));
	snprintf(
	    line, sizeof(line),
	    "t or F4 starts/stops it; + and - step the threads through the published 4, 8, 12, "
	    "then on (each count's result stays as a column); A auto-tune, R soft recovery, "
	    "C checksum; passes with db read avg %s ms and log write avg %s ms (F5 "
	    "edits)",
	    rdth[0] ? rdth : "(none)", lgth[0] ? lgth : "(none)");
	n += mb_w_wrap(line, COLS, leg + n, 8 - n);
	if (st && st->ref_heading[0]) {
		snprintf(line, sizeof(line), "pub N: published, N threads: %s", st->ref_heading);
		n += mb_w_wrap(line, COLS, leg + n, 8 - n);
	}
	n += mb_w_wrap("live: this test, last 10 seconds; test avg: average after its warm-up, "
		       "p95/p99 since it started",
		       COLS, leg + n, 8 - n);
	for (int i = 0; i < n && y < top + h; i++)
		mb_w_text(y++, 0, COLS, MB_ST_DIM, leg[i]);
}
static void stress_threads(struct mb_console *c, int d)
{
	/* the published counts (4, 8, 12), then on */
	int cur = c->restart_threads ? c->restart_threads : mb_session_stress_threads(c->s);
	int n = mb_stor_step(mb_session_storage_cfg(c->s), cur, d);
	if (n < 1 || n > MB_STRESS_THREADS_MAX || n == cur)
		return;
	mb_session_set_stress_kind(c->s, MB_STRESS_FIXED);
	if (mb_session_stress_active(c->s)) {
		/* restarted with the new count once the running test has stopped */
		c->restart_threads = n;
		mb_session_stop_stress(c->s);
		mb_console_status(c, false, "storage test: restarting with %d threads", n);
	} else {
		mb_session_set_stress_threads(c->s, n);
		mb_console_status(c, false, "storage test: %d threads (t or F4 starts it)", n);
	}
}

/* Auto-tune, soft recovery or checksum: started from the storage screen
 * as `mailbench storage-test --threads auto` / `--type ...` would be. */
static void stress_kind_start(struct mb_console *c, enum mb_stress_kind k)
{
	if (mb_session_stress_active(c->s)) {
		mb_console_status(c, true, "a storage test runs: t or F4 stops it first");
		return;
	}
	mb_session_set_stress_kind(c->s, k);
	int rc = mb_session_start_stress(c->s, 0);
	if (rc)
		mb_console_status(c, true, "cannot start the storage test: %s", mb_strerror(rc));
	else
		mb_console_status(c, false, "storage test: %s started",
				  k == MB_STRESS_AUTO		 ? "auto-tune"
				  : k == MB_STRESS_SOFT_RECOVERY ? "soft recovery"
								 : "checksum");
}

static bool storage_key(struct mb_console *c, int key)
{
	if (key == '+' || key == KEY_RIGHT)
		stress_threads(c, 1);
	else if (key == '-' || key == KEY_LEFT)
		stress_threads(c, -1);
	else if (key == 'A' || key == 'R' || key == 'C')
		stress_kind_start(c, key == 'A'	  ? MB_STRESS_AUTO
				     : key == 'R' ? MB_STRESS_SOFT_RECOVERY
						  : MB_STRESS_CHECKSUM);
	else
		return false;
	return true;
}

const struct mb_screen mb_screen_storage = {
    .name = "Storage",
    .help = "+ / - or Left/Right   storage screen: threads (restarts a running test); "
	    "A auto-tune, R soft recovery, C checksum",
    .draw = draw_storage,
    .on_key = storage_key,
};
