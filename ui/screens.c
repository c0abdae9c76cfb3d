/* screens.c: the console's screens and their keys (the screen manager).
 *
 * Screens: overview (comparison table, its legend naming every column in
 * full, sparklines; the meters sit beside the table only when its header
 * cells fit uncut there, else below it), storage (storage
 * test beside the published 4/8/12-thread rows), actions (per action
 * scheduled/done/failed and response percentiles), thresholds (edit live),
 * runs (saved runs, pin one), scenario (choice and parameters) and help.
 * Line 0 is the title bar, line LINES-2 the status line, LINES-1 the
 * function bar.  Invariant: every figure drawn is read from the session (a
 * child's measurement) or the scenario's published data; nothing is drawn
 * outside the screen whatever its size.
 */
#include "ui/console.h"

#include <curses.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "core/error.h"
#include "report/compare.h"
#include "report/table.h"
#include "ui/term.h"

static const char *const screen_names[MB_SCR_COUNT] = {
    "Overview", "Storage", "Actions", "Thresholds", "Runs", "Scenario", "Help"};

void mb_console_status(struct mb_console *c, bool error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->status, sizeof(c->status), fmt, ap);
	va_end(ap);
	c->status_error = error;
}

void mb_console_reload_runs(struct mb_console *c)
{
	struct mb_run_list *l = NULL;
	if (mb_run_list_load(mb_session_params(c->s)->data_dir, &l) == 0) {
		mb_run_list_destroy(c->runs);
		c->runs = l;
	}
}

void mb_console_quit(struct mb_console *c)
{
	c->quitting = true;
	c->confirm_quit = false;
	mb_session_stop_all(c->s);
	mb_console_status(c, false, "stopping every child, then quitting");
}

static void fmt_hms(double s, char *buf, size_t len)
{
	long t = (long)s;
	snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

/* ---- title and bars ---- */

static void draw_title(struct mb_console *c)
{
	const struct mb_scenario *sc = mb_session_scenario(c->s);
	char buf[512], el[32];
	enum mb_session_state st = mb_session_state(c->s);
	fmt_hms(mb_session_elapsed(c->s), el, sizeof(el));
	bool run = st == MB_SS_RUNNING || st == MB_SS_STOPPING;
	char full[512];
	snprintf(full, sizeof(full),
		 " mailbench | %s | %s | load %s%s%s%s | %d users x%g accel scale %g",
		 screen_names[c->screen], sc ? sc->title : "no scenario", mb_session_state_str(st),
		 run ? " " : "", run ? el : "",
		 mb_session_stress_active(c->s) ? " | storage test on" : "", mb_session_users(c->s),
		 mb_session_accel(c->s), mb_session_scale(c->s));
	if ((int)strlen(full) <= COLS || !sc)
		snprintf(buf, sizeof(buf), "%s", full);
	else /* narrow: the same facts, shorter */
		snprintf(buf, sizeof(buf), " %s | S%d %s | load %s%s%s%s | %d users x%g sc %g",
			 screen_names[c->screen], sc->number, sc->name, mb_session_state_str(st),
			 run ? " " : "", run ? el : "",
			 mb_session_stress_active(c->s) ? " | stor.test" : "",
			 mb_session_users(c->s), mb_session_accel(c->s), mb_session_scale(c->s));
	attrset(mb_term_attr(MB_ST_TITLE));
	move(0, 0);
	for (int i = 0; i < COLS; i++)
		addch(' ');
	mvaddnstr(0, 0, buf, COLS);
	attrset(A_NORMAL);
}

static void draw_bottom(struct mb_console *c)
{
	/* full words when there is room; F3/F4 say what they will do */
	bool wide = COLS >= 110;
	bool load = mb_session_load_active(c->s), stress = mb_session_stress_active(c->s);
	const struct mb_fkey keys[] = {
	    {"F1", "Help"},
	    {"F2", wide ? "Scenario" : "Scenar"},
	    {"F3", load ? (wide ? "Stop load" : "StopLd") : (wide ? "Start load" : "Load")},
	    {"F4",
	     stress ? (wide ? "Stop storage" : "StopSt") : (wide ? "Storage test" : "Storag")},
	    {"F5", wide ? "Thresholds" : "Thresh"},
	    {"F6", "Runs"},
	    {"Tab", wide ? "Next screen" : "Screen"},
	    {"F10", "Quit"}};
	const char *msg = c->status[0] ? c->status : mb_session_message(c->s);
	int st = c->status_error || (!c->status[0] && mb_session_failed(c->s)) ? MB_ST_WARN
									       : MB_ST_NORMAL;
	move(LINES - 2, 0);
	clrtoeol();
	mb_w_text(LINES - 2, 0, COLS, st, msg);
	mb_w_funcbar(LINES - 1, COLS, keys, sizeof(keys) / sizeof(keys[0]));
}

/* ---- overview ---- */

#define SPARK_SPAN_S 180

/* "name value ▁▂▅..." : the last SPARK_SPAN_S seconds, each column the mean
 * of the measured seconds it covers. */
static void spark_row(struct mb_console *c, int y, int x, int w, enum mb_counter_id id,
		      const char *name, const double *live, const bool *has)
{
	char val[32], lab[64];
	mb_format_value(id, has[id], live[id], val, sizeof(val));
	snprintf(lab, sizeof(lab), "%-8s %8s ", name, val);
	mb_w_text(y, x, w, MB_ST_NORMAL, lab);
	int lw = (int)strlen(lab);
	int sw = w - lw;
	if (sw <= 0)
		return;
	if (sw > 256)
		sw = 256;
	int k = (SPARK_SPAN_S + sw - 1) / sw;
	size_t n = (size_t)sw * (size_t)k;
	double *vals = malloc(n * sizeof(*vals));
	bool *vh = malloc(n * sizeof(*vh));
	double col[256];
	bool colh[256];
	if (!vals || !vh) {
		free(vals);
		free(vh);
		return;
	}
	mb_series_tail(mb_session_series(c->s), id, n, vals, vh);
	for (int i = 0; i < sw; i++) {
		double sum = 0;
		int m = 0;
		for (int j = 0; j < k; j++) {
			size_t at = (size_t)i * (size_t)k + (size_t)j;
			if (vh[at]) {
				sum += vals[at];
				m++;
			}
		}
		colh[i] = m > 0;
		col[i] = m > 0 ? sum / m : 0;
	}
	free(vals);
	free(vh);
	mb_w_sparkline(y, x + lw, sw, col, colh, (size_t)sw);
}

static void init_progress_line(struct mb_console *c, int y, int x, int w)
{
	double pct, eta;
	if (!mb_session_init_progress(c->s, &pct, &eta))
		return;
	mb_w_text(y, x, w, MB_ST_WARN, "initialising the data directory:");
	mb_w_progress(y + 1, x, w, pct, eta);
}

#define LEGEND_MAX 24
#define LEGEND_W 512

/* Split text into lines of at most w columns (at spaces when possible);
 * continuation lines are indented by 4.  Returns the number of lines. */
static int wrap_legend(const char *text, int w, char out[][LEGEND_W], int max)
{
	int n = 0;
	const char *p = text;
	if (w < 20)
		w = 20;
	while (*p && n < max) {
		int ind = n > 0 && p != text ? 4 : 0;
		int room = w - ind;
		if (room > LEGEND_W - 8)
			room = LEGEND_W - 8;
		int l = (int)strlen(p);
		if (l > room) {
			l = room;
			for (int k = room; k > room / 2; k--)
				if (p[k] == ' ') {
					l = k;
					break;
				}
		}
		snprintf(out[n++], LEGEND_W, "%*s%.*s", ind, "", l, p);
		p += l;
		while (*p == ' ')
			p++;
	}
	return n;
}

/* The legend of the overview: the long heading of every shown column
 * (published headings in full, this run's platform/engine/client mode),
 * the threshold column excepted.  Returns the number of lines. */
static int overview_legend(const struct mb_table *t, const struct mb_table_layout *l, int w,
			   char out[][LEGEND_W], int max)
{
	int n = 0;
	for (int i = 0; i < l->ncols && n < max; i++) {
		int col = l->col[i];
		const char *lg = mb_table_heading(t, col, true);
		if (!lg[0] || !strncmp(mb_table_heading(t, col, false), "threshold", 9))
			continue;
		n += wrap_legend(lg, w, out + n, max - n);
	}
	/* columns dropped to fit are named too */
	if (l->ncols < mb_table_cols(t) && n < max) {
		char buf[256] = "not shown at this width:";
		for (int c = 0; c < mb_table_cols(t); c++) {
			bool shown = false;
			for (int i = 0; i < l->ncols; i++)
				shown |= l->col[i] == c;
			if (!shown && strlen(buf) + 16 < sizeof(buf)) {
				strcat(buf, " ");
				strncat(buf, mb_table_heading(t, c, false), 12);
			}
		}
		n += wrap_legend(buf, w, out + n, max - n);
	}
	return n;
}

static void draw_overview(struct mb_console *c, int top, int h)
{
	const struct mb_scenario *sc = mb_session_scenario(c->s);
	if (!sc) {
		mb_w_text(top, 0, COLS, MB_ST_WARN, "no scenario loaded: F2 to choose one");
		return;
	}
	double live[MB_COUNTER_COUNT], avg[MB_COUNTER_COUNT];
	bool lh[MB_COUNTER_COUNT], ah[MB_COUNTER_COUNT];
	mb_session_live(c->s, live, lh);
	mb_session_average(c->s, avg, ah);
	char engine[MB_TEXT_MAX], mode[MB_TEXT_MAX];
	mb_compare_engine_str(sc, engine, sizeof(engine));
	mb_compare_mode_str(sc->mode, mb_session_compression(c->s), mode, sizeof(mode));
	struct mb_compare_input in;
	memset(&in, 0, sizeof(in));
	in.sc = sc;
	in.th = mb_session_thresholds(c->s);
	in.diff_col = c->diff_col < sc->column_count ? c->diff_col : -1;
	in.live = live;
	in.live_has = lh;
	in.avg = avg;
	in.avg_has = ah;
	in.pinned = c->pinned;
	in.platform = mb_session_platform(c->s);
	in.engine = engine;
	in.client_mode = mode;
	in.smt = mb_session_smt(c->s);
	in.users = mb_session_users(c->s);
	in.scale = mb_session_scale(c->s);
	in.accel = mb_session_accel(c->s);
	struct mb_table *t;
	if (mb_compare_build(&in, &t))
		return;
	struct mb_table_layout l;
	int side_w = 40;
	int rows = mb_table_rows(t);
	/* the side panel only when the whole table, header cells uncut, fits
	 * beside it; otherwise the table takes the full width (more room for
	 * the header cells) and the meters go below it */
	mb_table_layout(t, COLS - side_w - 2, &l);
	bool side = l.ncols == mb_table_cols(t) && !l.cut;
	int table_w = side ? COLS - side_w - 2 : COLS;
	mb_table_layout(t, table_w, &l);
	char(*legend)[LEGEND_W] = calloc(LEGEND_MAX, LEGEND_W);
	int nleg = legend ? overview_legend(t, &l, table_w, legend, LEGEND_MAX) : 0;
	int below = side ? 0 : 2;
	int th = h - below;
	/* scrolled content under the heading: the rows, a blank line, the legend */
	int content = rows + (nleg ? 1 + nleg : 0);
	/* room for everything: the meters right under the rows, then the legend */
	bool roomy = !side && 1 + rows + 4 + nleg <= h;
	if (roomy)
		content = rows;
	int maxscroll = content - (th - 1);
	if (maxscroll < 0)
		maxscroll = 0;
	/* Down past the last row scrolls no further than the content */
	if (c->scroll[MB_SCR_OVERVIEW] > maxscroll)
		c->scroll[MB_SCR_OVERVIEW] = maxscroll;
	int scroll = c->scroll[MB_SCR_OVERVIEW];
	int shown = mb_w_table(top, 0, th, table_w, t, scroll, -1);
	int used = shown;
	for (int idx = scroll > rows ? scroll : rows; idx < scroll + th - 1 && idx < content;
	     idx++) {
		if (idx > rows)
			mb_w_text(top + 1 + (idx - scroll), 0, table_w, MB_ST_DIM,
				  legend[idx - rows - 1]);
		used = idx - scroll + 1;
	}
	if (roomy)
		for (int i = 0; i < nleg; i++)
			mb_w_text(top + 1 + rows + 4 + i, 0, table_w, MB_ST_DIM, legend[i]);
	free(legend);
	mb_table_destroy(t);

	bool saturated = lh[MB_C_LOAD_SATURATED] && live[MB_C_LOAD_SATURATED] > 0;
	char line[512], v1[32], v2[32], v3[32], v4[32];
	mb_format_value(MB_C_LOADSIM_SCORE_MS, lh[MB_C_LOADSIM_SCORE_MS],
			live[MB_C_LOADSIM_SCORE_MS], v1, sizeof(v1));
	mb_format_value(MB_C_USERS, lh[MB_C_USERS], live[MB_C_USERS], v2, sizeof(v2));
	mb_format_value(MB_C_MACHINE_CPU_PCT, lh[MB_C_MACHINE_CPU_PCT], live[MB_C_MACHINE_CPU_PCT],
			v3, sizeof(v3));
	mb_format_value(MB_C_LOAD_CPU_PCT, lh[MB_C_LOAD_CPU_PCT], live[MB_C_LOAD_CPU_PCT], v4,
			sizeof(v4));
	enum mb_verdict sv =
	    mb_threshold_eval(&in.th->counter[MB_C_LOADSIM_SCORE_MS], lh[MB_C_LOADSIM_SCORE_MS],
			      live[MB_C_LOADSIM_SCORE_MS]);
	int score_st = sv == MB_VERDICT_FAIL   ? MB_ST_FAIL
		       : sv == MB_VERDICT_PASS ? MB_ST_PASS
					       : MB_ST_LIVE;
	double wu = mb_session_warmup(c->s), el = mb_session_elapsed(c->s);
	bool warming = mb_session_state(c->s) == MB_SS_RUNNING && el < wu;
	if (side) {
		int x = COLS - side_w, y = top;
		mb_w_text(y++, x, side_w, MB_ST_HEAD, "live, and the last 3 minutes");
		spark_row(c, y++, x, side_w, MB_C_PROCESSOR_PCT, "cpu %", live, lh);
		spark_row(c, y++, x, side_w, MB_C_RPC_OPS, "rpc op/s", live, lh);
		spark_row(c, y++, x, side_w, MB_C_CLIENT_LATENCY, "lat ms", live, lh);
		y++;
		snprintf(line, sizeof(line), "LoadSim score  %s ms", v1);
		mb_w_text(y++, x, side_w, score_st, line);
		snprintf(line, sizeof(line), "users on       %s", v2);
		mb_w_text(y++, x, side_w, MB_ST_NORMAL, line);
		snprintf(line, sizeof(line), "accel factor   x%g", mb_session_accel(c->s));
		mb_w_text(y++, x, side_w, MB_ST_NORMAL, line);
		snprintf(line, sizeof(line), "machine cpu    %s %%", v3);
		mb_w_text(y++, x, side_w, MB_ST_NORMAL, line);
		snprintf(line, sizeof(line), "load eng. cpu  %s %%", v4);
		mb_w_text(y++, x, side_w, MB_ST_NORMAL, line);
		if (warming) {
			snprintf(line, sizeof(line), "warm-up: %.0f s left", wu - el);
			mb_w_text(y++, x, side_w, MB_ST_DIM, line);
		}
		if (saturated)
			mb_w_text(y++, x, side_w, MB_ST_WARN, "LOAD ENGINE SATURATED: misleading");
		y++;
		init_progress_line(c, y, x, side_w);
		if (sc->column_count > 0 && in.diff_col >= 0) {
			snprintf(line, sizeof(line), "diff vs (%s)  </> to change",
				 sc->columns[in.diff_col].id);
			mb_w_text(top + h - 1, x, side_w, MB_ST_DIM, line);
		}
	} else {
		int y = top + used + (roomy ? 2 : 1);
		int w3 = COLS / 3;
		spark_row(c, y, 0, w3 - 1, MB_C_PROCESSOR_PCT, "cpu %", live, lh);
		spark_row(c, y, w3, w3 - 1, MB_C_RPC_OPS, "rpc/s", live, lh);
		spark_row(c, y, 2 * w3, COLS - 2 * w3, MB_C_CLIENT_LATENCY, "lat ms", live, lh);
		double pct, eta;
		if (saturated) {
			mb_w_text(y + 1, 0, COLS, MB_ST_WARN,
				  "LOAD ENGINE SATURATED: results are misleading");
		} else if (mb_session_init_progress(c->s, &pct, &eta)) {
			mb_w_text(y + 1, 0, 6, MB_ST_WARN, "init ");
			mb_w_progress(y + 1, 5, COLS - 5, pct, eta);
		} else {
			char wl[48] = "", dl[48] = "";
			if (warming)
				snprintf(wl, sizeof(wl), "  warm-up %.0f s left", wu - el);
			if (sc->column_count > 0 && in.diff_col >= 0 && COLS >= 120)
				snprintf(dl, sizeof(dl), "  diff vs (%s): < >",
					 sc->columns[in.diff_col].id);
			if (COLS >= 100)
				snprintf(line, sizeof(line),
					 "score %s ms  users on %s  accel x%g  cpu(all) %s%%  load "
					 "eng. %s%%%s%s%s",
					 v1, v2, mb_session_accel(c->s), v3, v4, wl, dl,
					 scroll < maxscroll ? "  (Down: more)" : "");
			else
				snprintf(line, sizeof(line), "score %s ms  on %s  cpu %s%%%s%s", v1,
					 v2, v3, warming ? "  warm-up" : "",
					 scroll < maxscroll ? "  (Down: more)" : "");
			mb_w_text(y + 1, 0, COLS, MB_ST_NORMAL, line);
			/* the score in its threshold's colour */
			mb_w_text(y + 1, 6, (int)strlen(v1), score_st, v1);
		}
	}
}

/* ---- storage ---- */

static void draw_storage(struct mb_console *c, int top, int h)
{
	const struct mb_storage_cfg *st = mb_session_storage_cfg(c->s);
	const struct mb_thresholds *th = mb_session_thresholds(c->s);
	int nref = st ? st->ref_count : 0;
	int ncols = nref + 2;
	struct mb_table *t;
	if (mb_table_create(ncols, &t))
		return;
	char sh[64], lg[300], buf[64];
	for (int i = 0; i < nref; i++) {
		snprintf(sh, sizeof(sh), "pub %d", st->ref[i].threads);
		snprintf(lg, sizeof(lg), "published: %s", st->ref_heading);
		mb_table_set_heading(t, i, sh, lg);
		mb_table_set_priority(t, i, 10 - i);
	}
	mb_table_set_heading(t, nref, "live", "this test, last 10 seconds");
	mb_table_set_priority(t, nref, 100);
	mb_table_set_heading(t, nref + 1, "test avg",
			     "this test: average after its warm-up; p95/p99 since it started");
	mb_table_set_priority(t, nref + 1, 90);
	double live[MB_COUNTER_COUNT], avg[MB_COUNTER_COUNT];
	bool lh[MB_COUNTER_COUNT], ah[MB_COUNTER_COUNT];
	mb_session_live(c->s, live, lh);
	mb_session_average(c->s, avg, ah);
	struct mb_latency rd, lw;
	mb_session_stress_latency(c->s, &rd, &lw);
	bool running = mb_session_stress_active(c->s);
	enum {
		R_THREADS,
		R_IOPS,
		R_READ,
		R_READ95,
		R_READ99,
		R_LOG,
		R_LOG95,
		R_LOG99,
		R_VERDICT,
		R_N
	};
	static const char *const labels[R_N] = {
	    "threads",		"total IOPS",	      "db read avg (ms)",   "db read p95 (ms)",
	    "db read p99 (ms)", "log write avg (ms)", "log write p95 (ms)", "log write p99 (ms)",
	    "verdict"};
	for (int r = 0; r < R_N; r++)
		mb_table_add_row(t, labels[r], MB_ROW_NORMAL, NULL);
	for (int i = 0; i < nref; i++) {
		const struct mb_storage_ref *ref = &st->ref[i];
		snprintf(buf, sizeof(buf), "%d", ref->threads);
		mb_table_set_cell(t, R_THREADS, i, buf);
		mb_format_number(ref->iops, 0, buf, sizeof(buf));
		mb_table_set_cell(t, R_IOPS, i, buf);
		snprintf(buf, sizeof(buf), "%.2f", ref->db_read_ms);
		mb_table_set_cell(t, R_READ, i, buf);
		snprintf(buf, sizeof(buf), "%.2f", ref->log_write_ms);
		mb_table_set_cell(t, R_LOG, i, buf);
		/* the published rows give averages only */
		for (int r = R_READ95; r <= R_LOG99; r++)
			if (r != R_LOG)
				mb_table_set_cell(t, r, i, "n/a");
		mb_table_set_cell(t, R_VERDICT, i,
				  mb_verdict_str(mb_storage_verdict(th, true, ref->db_read_ms, true,
								    ref->log_write_ms)));
	}
	for (int k = 0; k < 2; k++) {
		int col = nref + k;
		const double *v = k == 0 ? live : avg;
		const bool *hv = k == 0 ? lh : ah;
		snprintf(buf, sizeof(buf), "%d", mb_session_stress_threads(c->s));
		mb_table_set_cell(t, R_THREADS, col, running || hv[MB_C_STRESS_IOPS] ? buf : "n/a");
		mb_format_value(MB_C_STRESS_IOPS, hv[MB_C_STRESS_IOPS], v[MB_C_STRESS_IOPS], buf,
				sizeof(buf));
		mb_table_set_cell(t, R_IOPS, col, buf);
		mb_format_value(MB_C_STRESS_READ_MS, hv[MB_C_STRESS_READ_MS],
				v[MB_C_STRESS_READ_MS], buf, sizeof(buf));
		mb_table_set_cell(t, R_READ, col, buf);
		mb_format_value(MB_C_STRESS_LOG_MS, hv[MB_C_STRESS_LOG_MS], v[MB_C_STRESS_LOG_MS],
				buf, sizeof(buf));
		mb_table_set_cell(t, R_LOG, col, buf);
		enum mb_verdict vd =
		    mb_storage_verdict(th, hv[MB_C_STRESS_READ_MS], v[MB_C_STRESS_READ_MS],
				       hv[MB_C_STRESS_LOG_MS], v[MB_C_STRESS_LOG_MS]);
		mb_table_set_cell(t, R_VERDICT, col, mb_verdict_str(vd));
		if (k == 0)
			mb_table_set_verdict(t, R_VERDICT, vd);
	}
	/* percentiles: from the merged histograms of the whole test */
	for (int k = 0; k < 2; k++) {
		int col = nref + k;
		const struct mb_latency *L = &rd;
		int r95 = R_READ95, r99 = R_READ99;
		for (int which = 0; which < 2; which++) {
			if (which == 1) {
				L = &lw;
				r95 = R_LOG95;
				r99 = R_LOG99;
			}
			if (k == 0) {
				/* percentiles are kept for the whole test only */
				mb_table_set_cell(t, r95, col, "n/a");
				mb_table_set_cell(t, r99, col, "n/a");
				continue;
			}
			if (L->has)
				snprintf(buf, sizeof(buf), "%.2f", L->p95_ms);
			else
				snprintf(buf, sizeof(buf), "n/a");
			mb_table_set_cell(t, r95, col, buf);
			if (L->has)
				snprintf(buf, sizeof(buf), "%.2f", L->p99_ms);
			else
				snprintf(buf, sizeof(buf), "n/a");
			mb_table_set_cell(t, r99, col, buf);
		}
	}
	int shown = mb_w_table(top, 0, h - 4, COLS, t, 0, -1);
	mb_table_destroy(t);
	int y = top + shown + 2;
	char line[512];
	snprintf(line, sizeof(line), "storage test %s, %d threads", running ? "RUNNING" : "stopped",
		 mb_session_stress_threads(c->s));
	mb_w_text(y++, 0, COLS, running ? MB_ST_LIVE : MB_ST_NORMAL, line);
	char leg[8][LEGEND_W];
	int n = 0;
	snprintf(line, sizeof(line),
		 "t or F4 starts/stops it, + and - change the threads; passes with db read avg < "
		 "%.1f ms and log write avg < %.1f ms (F5 edits)",
		 th->storage_read_ms_max, th->storage_log_ms_max);
	n += wrap_legend(line, COLS, leg + n, 8 - n);
	if (st && st->ref_heading[0]) {
		snprintf(line, sizeof(line), "pub N: published, N threads: %s", st->ref_heading);
		n += wrap_legend(line, COLS, leg + n, 8 - n);
	}
	n += wrap_legend("live: this test, last 10 seconds; test avg: average after its warm-up, "
			 "p95/p99 since it started",
			 COLS, leg + n, 8 - n);
	for (int i = 0; i < n && y < top + h; i++)
		mb_w_text(y++, 0, COLS, MB_ST_DIM, leg[i]);
}

/* ---- actions ---- */

static void draw_actions(struct mb_console *c, int top, int h)
{
	struct mb_run_summary *sum = calloc(1, sizeof(*sum));
	if (!sum)
		return;
	mb_session_summary(c->s, sum);
	struct mb_table *t;
	if (mb_table_create(8, &t)) {
		free(sum);
		return;
	}
	/* the profile beside what was done per user-day; sched gives way first */
	enum { A_PROFILE, A_PER_DAY, A_SCHED, A_DONE, A_FAILED, A_P50, A_P95, A_P99 };
	static const char *const heads[] = {"profile", "/user-day", "sched",  "done",
					    "failed",  "p50 ms",    "p95 ms", "p99 ms"};
	static const int prio[] = {8, 8, 1, 10, 9, 7, 7, 6};
	for (int i = 0; i < 8; i++) {
		mb_table_set_heading(t, i, heads[i], NULL);
		mb_table_set_priority(t, i, prio[i]);
	}
	const struct mb_histset *hs = mb_session_hists(c->s);
	const struct mb_scenario *sc = mb_session_scenario(c->s);
	char buf[64];
	for (int a = 0; a < MB_ACTION_COUNT; a++) {
		int r;
		mb_table_add_row(t, mb_actions[a].label, MB_ROW_NORMAL, &r);
		snprintf(buf, sizeof(buf), "%g", sc ? sc->actions_per_day[a] : 0.0);
		mb_table_set_cell(t, r, A_PROFILE, sc ? buf : "n/a");
		const struct mb_action_figures *f = &sum->actions[a];
		double vals[3] = {f->scheduled, f->done, f->failed};
		for (int k = 0; k < 3; k++) {
			if (f->has_counts)
				mb_format_number(vals[k], 0, buf, sizeof(buf));
			else
				snprintf(buf, sizeof(buf), "n/a");
			mb_table_set_cell(t, r, A_SCHED + k, buf);
		}
		if (f->has_per_user_day)
			snprintf(buf, sizeof(buf), "%.2f", f->per_user_day);
		else
			snprintf(buf, sizeof(buf), "n/a");
		mb_table_set_cell(t, r, A_PER_DAY, buf);
		if (f->has_counts && f->failed > 0)
			mb_table_set_verdict(t, r, MB_VERDICT_FAIL);
		char name[128];
		snprintf(name, sizeof(name), "%s%s", MB_HIST_ACTION_PREFIX, mb_actions[a].key);
		struct mb_latency L;
		mb_latency_from_hist(mb_histset_find(hs, name), &L);
		double pv[3] = {L.p50_ms, L.p95_ms, L.p99_ms};
		for (int k = 0; k < 3; k++) {
			if (L.has)
				snprintf(buf, sizeof(buf), "%.1f", pv[k]);
			else
				snprintf(buf, sizeof(buf), "n/a");
			mb_table_set_cell(t, r, A_P50 + k, buf);
		}
	}
	int shown = mb_w_table(top, 0, h - 3, COLS, t, c->scroll[MB_SCR_ACTIONS], -1);
	mb_table_destroy(t);
	char line[256];
	if (sum->has_messages_sent || sum->has_messages_received) {
		char a[32] = "n/a", b[32] = "n/a";
		if (sum->has_messages_sent)
			snprintf(a, sizeof(a), "%.2f", sum->messages_sent_per_user_day);
		if (sum->has_messages_received)
			snprintf(b, sizeof(b), "%.2f", sum->messages_received_per_user_day);
		snprintf(line, sizeof(line),
			 "per user-day: messages sent %s (profile %g), received %s (profile %g)", a,
			 sc ? sc->messages_sent_per_day : 0.0, b,
			 sc ? sc->messages_received_per_day : 0.0);
	} else {
		snprintf(line, sizeof(line), "per user-day: messages sent n/a, received n/a");
	}
	mb_w_text(top + shown + 2, 0, COLS, MB_ST_NORMAL, line);
	mb_w_text(top + shown + 3, 0, COLS, MB_ST_DIM,
		  "profile: the scenario's actions per user-day; figures since the load started");
	free(sum);
}

/* ---- thresholds ---- */

#define TH_ROWS (MB_COUNTER_COUNT + 2)

static void draw_thresholds(struct mb_console *c, int top, int h)
{
	struct mb_thresholds *th = mb_session_thresholds(c->s);
	struct mb_table *t;
	if (mb_table_create(3, &t))
		return;
	mb_table_set_heading(t, 0, "threshold", NULL);
	mb_table_set_heading(t, 1, "live", NULL);
	mb_table_set_heading(t, 2, "verdict", NULL);
	mb_table_set_priority(t, 0, 10);
	mb_table_set_priority(t, 1, 9);
	mb_table_set_priority(t, 2, 8);
	double live[MB_COUNTER_COUNT];
	bool lh[MB_COUNTER_COUNT];
	mb_session_live(c->s, live, lh);
	char buf[64];
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		int r;
		mb_table_add_row(t, mb_counters[i].label, MB_ROW_NORMAL, &r);
		mb_threshold_text(&th->counter[i], (enum mb_counter_id)i, buf, sizeof(buf));
		mb_table_set_cell(t, r, 0, buf[0] ? buf : "none");
		mb_format_value((enum mb_counter_id)i, lh[i], live[i], buf, sizeof(buf));
		mb_table_set_cell(t, r, 1, buf);
		enum mb_verdict v = mb_threshold_eval(&th->counter[i], lh[i], live[i]);
		mb_table_set_cell(t, r, 2, mb_verdict_str(v));
		mb_table_set_verdict(t, r, v);
	}
	int r;
	mb_table_add_row(t, "storage: db read avg (ms)", MB_ROW_NORMAL, &r);
	snprintf(buf, sizeof(buf), "< %.2f", th->storage_read_ms_max);
	mb_table_set_cell(t, r, 0, buf);
	mb_format_value(MB_C_STRESS_READ_MS, lh[MB_C_STRESS_READ_MS], live[MB_C_STRESS_READ_MS],
			buf, sizeof(buf));
	mb_table_set_cell(t, r, 1, buf);
	mb_table_add_row(t, "storage: log write avg (ms)", MB_ROW_NORMAL, &r);
	snprintf(buf, sizeof(buf), "< %.2f", th->storage_log_ms_max);
	mb_table_set_cell(t, r, 0, buf);
	mb_format_value(MB_C_STRESS_LOG_MS, lh[MB_C_STRESS_LOG_MS], live[MB_C_STRESS_LOG_MS], buf,
			sizeof(buf));
	mb_table_set_cell(t, r, 1, buf);

	int sel = c->sel[MB_SCR_THRESHOLDS];
	int vis = h - 3;
	if (sel < c->scroll[MB_SCR_THRESHOLDS])
		c->scroll[MB_SCR_THRESHOLDS] = sel;
	if (sel >= c->scroll[MB_SCR_THRESHOLDS] + vis)
		c->scroll[MB_SCR_THRESHOLDS] = sel - vis + 1;
	mb_w_table(top, 0, vis + 1, COLS, t, c->scroll[MB_SCR_THRESHOLDS], sel);
	mb_table_destroy(t);
	mb_w_text(top + h - 1, 0, COLS, MB_ST_DIM,
		  "Enter edits (<= 80, > 5, none; storage: ms), saved in DATA/thresholds.cfg");
}

static void threshold_edit_start(struct mb_console *c)
{
	int sel = c->sel[MB_SCR_THRESHOLDS];
	struct mb_thresholds *th = mb_session_thresholds(c->s);
	char buf[64];
	if (sel < MB_COUNTER_COUNT)
		mb_threshold_text(&th->counter[sel], (enum mb_counter_id)sel, buf, sizeof(buf));
	else
		snprintf(buf, sizeof(buf), "%g",
			 sel == MB_COUNTER_COUNT ? th->storage_read_ms_max
						 : th->storage_log_ms_max);
	mb_input_start(&c->input, buf);
	c->input_target = MB_IN_THRESHOLD;
	c->input_index = sel;
}

static void threshold_edit_done(struct mb_console *c)
{
	struct mb_thresholds *th = mb_session_thresholds(c->s);
	struct mb_thresholds old = *th;
	int sel = c->input_index;
	const char *text = c->input.buf;
	while (*text == ' ')
		text++;
	if (sel < MB_COUNTER_COUNT) {
		struct mb_threshold nt = {MB_CMP_NONE, 0};
		if (*text && strcmp(text, "none") && mb_threshold_parse(text, &nt)) {
			mb_console_status(c, true,
					  "not a threshold: '%s' (write e.g. <= 80 or none)", text);
			return;
		}
		th->counter[sel] = nt;
	} else {
		char *end;
		double v = strtod(text, &end);
		while (*end == ' ')
			end++;
		if (*end || !(v > 0)) {
			mb_console_status(c, true, "not a positive number of ms: '%s'", text);
			return;
		}
		if (sel == MB_COUNTER_COUNT)
			th->storage_read_ms_max = v;
		else
			th->storage_log_ms_max = v;
	}
	int rc = mb_session_save_thresholds(c->s);
	if (rc) {
		*th = old;
		mb_console_status(c, true, "cannot save %s/thresholds.cfg: %s",
				  mb_session_params(c->s)->data_dir, mb_strerror(rc));
		return;
	}
	mb_console_status(c, false, "threshold saved to %s/thresholds.cfg",
			  mb_session_params(c->s)->data_dir);
}

/* ---- runs ---- */

static void draw_runs(struct mb_console *c, int top, int h)
{
	if (!c->runs)
		mb_console_reload_runs(c);
	size_t n = c->runs ? mb_run_list_count(c->runs) : 0;
	if (n == 0) {
		mb_w_text(top, 0, COLS, MB_ST_NORMAL,
			  "no saved runs yet: a run is saved in DATA/runs/ when the load stops");
		return;
	}
	struct mb_table *t;
	if (mb_table_create(9, &t))
		return;
	static const char *const heads[] = {"scenario", "users",    "scale", "accel",  "compr",
					    "measured", "rpc op/s", "cpu %", "verdict"};
	for (int i = 0; i < 9; i++) {
		mb_table_set_heading(t, i, heads[i], NULL);
		mb_table_set_priority(t, i, 10 - i);
	}
	mb_table_set_priority(t, 8, 9);
	char buf[64];
	for (size_t i = 0; i < n; i++) {
		const struct mb_run_summary *s = mb_run_list_at(c->runs, i);
		int r;
		char lab[96];
		bool pinned = c->pinned && !strcmp(c->pinned_path, mb_run_list_path(c->runs, i));
		snprintf(lab, sizeof(lab), "%s%s", pinned ? "* " : "", s->id);
		mb_table_add_row(t, lab, MB_ROW_NORMAL, &r);
		mb_table_set_cell(t, r, 0, s->scenario);
		snprintf(buf, sizeof(buf), "%d", s->users);
		mb_table_set_cell(t, r, 1, buf);
		snprintf(buf, sizeof(buf), "%g", s->scale);
		mb_table_set_cell(t, r, 2, buf);
		snprintf(buf, sizeof(buf), "%g", s->accel);
		mb_table_set_cell(t, r, 3, buf);
		mb_table_set_cell(t, r, 4, s->compression ? "on" : "off");
		snprintf(buf, sizeof(buf), "%.0f s", s->measured_s);
		mb_table_set_cell(t, r, 5, buf);
		mb_format_value(MB_C_RPC_OPS, s->has[MB_C_RPC_OPS], s->avg[MB_C_RPC_OPS], buf,
				sizeof(buf));
		mb_table_set_cell(t, r, 6, buf);
		mb_format_value(MB_C_PROCESSOR_PCT, s->has[MB_C_PROCESSOR_PCT],
				s->avg[MB_C_PROCESSOR_PCT], buf, sizeof(buf));
		mb_table_set_cell(t, r, 7, buf);
		mb_table_set_cell(t, r, 8, s->failed ? "failed" : mb_verdict_str(s->overall));
		mb_table_set_verdict(t, r, s->overall);
	}
	int sel = c->sel[MB_SCR_RUNS];
	if (sel >= (int)n)
		sel = c->sel[MB_SCR_RUNS] = (int)n - 1;
	int vis = h - 3;
	if (sel < c->scroll[MB_SCR_RUNS])
		c->scroll[MB_SCR_RUNS] = sel;
	if (sel >= c->scroll[MB_SCR_RUNS] + vis)
		c->scroll[MB_SCR_RUNS] = sel - vis + 1;
	mb_w_table(top, 0, vis + 1, COLS, t, c->scroll[MB_SCR_RUNS], sel);
	mb_table_destroy(t);
	mb_w_text(top + h - 1, 0, COLS, MB_ST_DIM,
		  "Enter or p: pin/unpin the selected run as an overview column (* = pinned)");
}

static void runs_pin(struct mb_console *c)
{
	if (!c->runs || mb_run_list_count(c->runs) == 0)
		return;
	int sel = c->sel[MB_SCR_RUNS];
	const char *path = mb_run_list_path(c->runs, (size_t)sel);
	if (c->pinned && !strcmp(c->pinned_path, path)) {
		free(c->pinned);
		c->pinned = NULL;
		c->pinned_path[0] = '\0';
		mb_console_status(c, false, "unpinned");
		return;
	}
	if (!c->pinned)
		c->pinned = malloc(sizeof(*c->pinned));
	if (!c->pinned)
		return;
	*c->pinned = *mb_run_list_at(c->runs, (size_t)sel);
	snprintf(c->pinned_path, sizeof(c->pinned_path), "%s", path);
	mb_console_status(c, false, "pinned %s as a column of the overview", c->pinned->id);
}

/* ---- scenario ---- */

enum { F_SCENARIO, F_USERS, F_SCALE, F_ACCEL, F_COMPRESSION, F_DATA, F_LOGDIR, F_COUNT };
static const char *const field_names[F_COUNT] = {"scenario",	"users",    "scale",  "accel",
						 "compression", "data dir", "log dir"};

static void field_value(struct mb_console *c, int f, char *buf, size_t len)
{
	const struct mb_session_params *p = mb_session_params(c->s);
	switch (f) {
	case F_SCENARIO:
		snprintf(buf, len, "%s", p->scenario);
		break;
	case F_USERS:
		snprintf(buf, len, "%d", mb_session_users(c->s));
		break;
	case F_SCALE:
		snprintf(buf, len, "%g", mb_session_scale(c->s));
		break;
	case F_ACCEL:
		snprintf(buf, len, "%g", mb_session_accel(c->s));
		break;
	case F_COMPRESSION:
		snprintf(buf, len, "%s", mb_session_compression(c->s) ? "on" : "off");
		break;
	case F_DATA:
		snprintf(buf, len, "%s", p->data_dir);
		break;
	case F_LOGDIR:
		snprintf(buf, len, "%s", p->log_dir[0] ? p->log_dir : "(in the data dir)");
		break;
	}
}

static void apply_params(struct mb_console *c, const struct mb_session_params *np)
{
	if (mb_session_load_active(c->s) || mb_session_stress_active(c->s)) {
		mb_console_status(
		    c, true, "stop the load and the storage test before changing the scenario");
		return;
	}
	struct mb_session_params old = *mb_session_params(c->s);
	struct mb_cfg_error err;
	memset(&err, 0, sizeof(err));
	int rc = mb_session_configure(c->s, np, &err);
	if (rc) {
		char msg[1024];
		mb_cfg_error_format(&err, msg, sizeof(msg));
		mb_session_configure(c->s, &old, &err);
		mb_console_status(c, true, "%s", msg);
		return;
	}
	if (strcmp(old.data_dir, np->data_dir)) {
		mb_console_reload_runs(c);
	}
	/* another scenario: diff against its last published column again */
	const struct mb_scenario *sc = mb_session_scenario(c->s);
	if (strcmp(old.scenario, np->scenario))
		c->diff_col = sc->column_count > 0 ? sc->column_count - 1 : 0;
	mb_console_status(c, false, "scenario set: %s", mb_session_scenario(c->s)->title);
}

static void field_cycle(struct mb_console *c, int f, int dir)
{
	struct mb_session_params np = *mb_session_params(c->s);
	if (f == F_SCENARIO) {
		snprintf(np.scenario, sizeof(np.scenario), "%s",
			 strcmp(np.scenario, "online") ? "online" : "cached");
		(void)dir;
	} else if (f == F_COMPRESSION) {
		np.compression = mb_session_compression(c->s) ? 0 : 1;
	} else {
		return;
	}
	apply_params(c, &np);
}

static void field_edit_start(struct mb_console *c)
{
	int f = c->sel[MB_SCR_SCENARIO];
	if (f == F_SCENARIO || f == F_COMPRESSION) {
		if (f == F_COMPRESSION) {
			field_cycle(c, f, 1);
			return;
		}
	}
	char buf[MB_PATH_MAX];
	field_value(c, f, buf, sizeof(buf));
	if (f == F_LOGDIR && !mb_session_params(c->s)->log_dir[0])
		buf[0] = '\0';
	mb_input_start(&c->input, buf);
	c->input_target = MB_IN_FIELD;
	c->input_index = f;
}

static void field_edit_done(struct mb_console *c)
{
	struct mb_session_params np = *mb_session_params(c->s);
	const char *v = c->input.buf;
	char *end;
	switch (c->input_index) {
	case F_SCENARIO:
		if (!*v || strlen(v) >= sizeof(np.scenario)) {
			mb_console_status(c, true, "scenario: give online, cached or a .cfg path");
			return;
		}
		snprintf(np.scenario, sizeof(np.scenario), "%s", v);
		break;
	case F_USERS: {
		long u = strtol(v, &end, 10);
		if (*end || u < 1 || u > 10000000) {
			mb_console_status(c, true, "users: a count 1..10000000");
			return;
		}
		np.users = (int)u;
		break;
	}
	case F_SCALE: {
		double d = strtod(v, &end);
		if (*end || !(d > 0) || d > 1) {
			mb_console_status(c, true, "scale: a factor in (0, 1]");
			return;
		}
		np.scale = d;
		break;
	}
	case F_ACCEL: {
		double d = strtod(v, &end);
		if (*end || !(d > 0) || d > 100000) {
			mb_console_status(c, true, "accel: a factor in (0, 100000]");
			return;
		}
		np.accel = d;
		break;
	}
	case F_DATA:
		if (!*v || strlen(v) >= sizeof(np.data_dir)) {
			mb_console_status(c, true, "data dir: a path");
			return;
		}
		snprintf(np.data_dir, sizeof(np.data_dir), "%s", v);
		break;
	case F_LOGDIR:
		if (strlen(v) >= sizeof(np.log_dir))
			return;
		snprintf(np.log_dir, sizeof(np.log_dir), "%s", v);
		break;
	default:
		return;
	}
	apply_params(c, &np);
}

static void draw_scenario(struct mb_console *c, int top, int h)
{
	int y = top;
	char buf[MB_PATH_MAX + 64], val[MB_PATH_MAX];
	mb_w_text(y++, 0, COLS, MB_ST_HEAD,
		  "Run parameters (Up/Down, Enter edits, Left/Right switches)");
	for (int f = 0; f < F_COUNT && y < top + h; f++) {
		field_value(c, f, val, sizeof(val));
		snprintf(buf, sizeof(buf), "  %-12s %s", field_names[f], val);
		mb_w_text(y, 0, COLS, f == c->sel[MB_SCR_SCENARIO] ? MB_ST_SEL : MB_ST_NORMAL, buf);
		if (c->input.active && c->input_target == MB_IN_FIELD && c->input_index == f)
			mb_input_draw(&c->input, y, 15, COLS - 16);
		y++;
	}
	const struct mb_scenario *sc = mb_session_scenario(c->s);
	if (!sc)
		return;
	bool init = mb_session_initialised(c->s);
	snprintf(buf, sizeof(buf), "  data dir initialised for this choice: %s%s",
		 init ? "yes" : "no",
		 init ? "  (I re-initialises it)" : "  (F3 initialises it; I replaces another)");
	mb_w_text(y++, 0, COLS, init ? MB_ST_NORMAL : MB_ST_WARN, buf);
	double pct, eta;
	if (mb_session_init_progress(c->s, &pct, &eta)) {
		mb_w_progress(y++, 2, COLS - 4, pct, eta);
	}
	y++;
	if (y >= top + h)
		return;
	mb_w_text(y++, 0, COLS, MB_ST_HEAD, sc->title);
	char lines[8][256];
	int nl = 0;
	snprintf(lines[nl++], 256,
		 "published topology: %d users, %d databases in %d storage groups, %d MB cache, %g "
		 "MB mailboxes, %d KB pages",
		 sc->users, sc->databases, sc->storage_groups, sc->db_cache_mb, sc->mailbox_mb,
		 sc->page_kb);
	snprintf(lines[nl++], 256,
		 "mailbox: inbox %d, deleted %d, %d folders x %d, %d appointments, %d contacts, %d "
		 "KB messages",
		 sc->inbox_messages, sc->deleted_items_messages, sc->new_folders,
		 sc->messages_per_folder, sc->calendar_appointments, sc->contacts,
		 sc->avg_message_kb);
	snprintf(lines[nl++], 256,
		 "distribution lists: %d per site, members %d min, %d avg, %d max", sc->dl_per_site,
		 sc->dl_min_members, sc->dl_avg_members, sc->dl_max_members);
	snprintf(lines[nl++], 256,
		 "run: duration %g s, warm-up %g s, ramp %g s, compression %s by default",
		 sc->duration_s, sc->warmup_s, sc->ramp_s, sc->compression ? "on" : "off");
	double accel = mb_session_accel(c->s);
	snprintf(lines[nl++], 256,
		 "this run: %d users, ~%.1f MB mailboxes (scale %g), an 8-hour day in %.1f min "
		 "(x%g)",
		 mb_session_users(c->s), sc->mailbox_mb * mb_session_scale(c->s),
		 mb_session_scale(c->s), accel > 0 ? 480.0 / accel : 0.0, accel);
	for (int i = 0; i < nl && y < top + h; i++)
		mb_w_text(y++, 2, COLS - 2, i == nl - 1 ? MB_ST_LIVE : MB_ST_NORMAL, lines[i]);
	if (y >= top + h)
		return;
	mb_w_text(y++, 2, COLS - 2, MB_ST_HEAD, "actions per 8-hour day");
	int colw = 30;
	int per_line = (COLS - 2) / colw;
	if (per_line < 1)
		per_line = 1;
	for (int a = 0; a < MB_ACTION_COUNT && y < top + h; a += per_line) {
		move(y, 2);
		for (int k = 0; k < per_line && a + k < MB_ACTION_COUNT; k++) {
			snprintf(buf, sizeof(buf), "%-22s %6g", mb_actions[a + k].label,
				 sc->actions_per_day[a + k]);
			mb_w_text(y, 2 + k * colw, colw - 1, MB_ST_NORMAL, buf);
		}
		y++;
	}
	if (y < top + h) {
		snprintf(buf, sizeof(buf), "messages per user-day: sent %g, received %g",
			 sc->messages_sent_per_day, sc->messages_received_per_day);
		mb_w_text(y++, 2, COLS - 2, MB_ST_NORMAL, buf);
	}
}

/* ---- help ---- */

static void draw_help(struct mb_console *c, int top, int h)
{
	static const char *const lines[] = {
	    "mailbench " PACKAGE_VERSION " console: the published comparison tables, live.",
	    "",
	    "F1 or ?     this help                 F2 or s   scenario and parameters",
	    "F3 or l     start/stop the load (init if needed, store first, then load)",
	    "F4 or t     start/stop the storage test    + / -  storage test threads",
	    "F5 or h     thresholds (Enter edits)  F6 or r   saved runs (Enter pins)",
	    "o           overview                  a         actions   g  storage",
	    "Tab         next screen               Up/Down, PgUp/PgDn  select, scroll",
	    "< >         overview: published column the difference is taken against",
	    "F10 or q    quit (asks while a run is active); Esc closes a dialog",
	    "+ / - or Left/Right   storage screen: threads (restarts a running test)",
	    "I           scenario screen: re-initialise the data directory from scratch",
	    "",
	    "live: mean of the last 10 s; run avg: mean after the warm-up; n/a: not measured.",
	    "The legend under the overview's table names every column in full (published",
	    "headings; this run's platform, engine, client mode); Down scrolls to it.",
	    "Rows are coloured by their thresholds (monochrome: '!' marks a failing row).",
	    "Every figure comes from the store, the load engine, the storage test or",
	    "this machine's /proc, measured during this run.",
	};
	(void)c;
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]) && (int)i < h; i++)
		mb_w_text(top + (int)i, 1, COLS - 1, i == 0 ? MB_ST_HEAD : MB_ST_NORMAL, lines[i]);
}

/* ---- manager ---- */

void mb_console_draw(struct mb_console *c)
{
	erase();
	if (LINES < 10 || COLS < 40) {
		mvaddnstr(0, 0, "mailbench: terminal too small (at least 40x10)", COLS);
		refresh();
		return;
	}
	draw_title(c);
	int top = 1, h = LINES - 3;
	switch (c->screen) {
	case MB_SCR_OVERVIEW:
		draw_overview(c, top, h);
		break;
	case MB_SCR_STORAGE:
		draw_storage(c, top, h);
		break;
	case MB_SCR_ACTIONS:
		draw_actions(c, top, h);
		break;
	case MB_SCR_THRESHOLDS:
		draw_thresholds(c, top, h);
		break;
	case MB_SCR_RUNS:
		draw_runs(c, top, h);
		break;
	case MB_SCR_SCENARIO:
		draw_scenario(c, top, h);
		break;
	case MB_SCR_HELP:
	case MB_SCR_COUNT:
		draw_help(c, top, h);
		break;
	}
	draw_bottom(c);
	if (c->input.active && c->input_target == MB_IN_THRESHOLD) {
		char title[160];
		int i = c->input_index;
		snprintf(title, sizeof(title), "threshold: %s",
			 i < MB_COUNTER_COUNT	 ? mb_counters[i].label
			 : i == MB_COUNTER_COUNT ? "storage db read avg (ms)"
						 : "storage log write avg (ms)");
		const char *const l[] = {"", "",
					 i < MB_COUNTER_COUNT
					     ? "e.g. <= 80, > 5 or none; Enter saves, Esc cancels"
					     : "a limit in ms; Enter saves, Esc cancels"};
		int y = mb_w_dialog(title, l, 3, 50);
		mb_input_draw(&c->input, y, (COLS - 46) / 2, 44);
	}
	if (c->show_failure && !c->confirm_quit && !c->quitting) {
		const char *l[12];
		size_t n = 0;
		static char tail[2048];
		snprintf(tail, sizeof(tail), "%s", mb_session_failure_detail(c->s));
		l[n++] = mb_session_message(c->s);
		l[n++] = "";
		l[n++] = tail[0] ? "last lines of its error output:" : "(no error output)";
		/* the last lines, at most 8 */
		char *lines[64];
		size_t k = 0;
		for (char *p = strtok(tail, "\n"); p && k < 64; p = strtok(NULL, "\n"))
			lines[k++] = p;
		for (size_t i = k > 8 ? k - 8 : 0; i < k; i++)
			l[n++] = lines[i];
		l[n++] = "(any key closes; the run is marked failed)";
		mb_w_dialog("run failed", l, n, 50);
	}
	if (c->confirm_reinit) {
		static const char *const l[] = {
		    "Re-initialise the data directory from scratch?",
		    "Its mailboxes and runs' data are replaced (init --restart),",
		    "then the store and the load start.  (y/n)"};
		mb_w_dialog("re-initialise", l, 3, 40);
	}
	if (c->confirm_quit) {
		static const char *const l[] = {"A run is active.",
						"Stop every child and quit? (y/n)"};
		mb_w_dialog("quit", l, 2, 40);
	}
	if (c->quitting) {
		char line[96];
		snprintf(line, sizeof(line), "%d child process(es) still stopping...",
			 mb_session_children(c->s));
		const char *l[] = {line};
		mb_w_dialog("quitting", l, 1, 40);
	}
	refresh();
}

static int item_count(struct mb_console *c)
{
	switch (c->screen) {
	case MB_SCR_THRESHOLDS:
		return TH_ROWS;
	case MB_SCR_RUNS:
		return c->runs ? (int)mb_run_list_count(c->runs) : 0;
	case MB_SCR_SCENARIO:
		return F_COUNT;
	default:
		return 0;
	}
}

static void move_sel(struct mb_console *c, int d)
{
	int n = item_count(c);
	if (n == 0) {
		c->scroll[c->screen] += d;
		if (c->scroll[c->screen] < 0)
			c->scroll[c->screen] = 0;
		if (c->scroll[c->screen] > 64)
			c->scroll[c->screen] = 64;
		return;
	}
	int s = c->sel[c->screen] + d;
	if (s < 0)
		s = 0;
	if (s >= n)
		s = n - 1;
	c->sel[c->screen] = s;
}

static void toggle_load(struct mb_console *c)
{
	if (mb_session_load_active(c->s)) {
		mb_session_stop_load(c->s);
		return;
	}
	int rc = mb_session_start_load(c->s);
	if (rc)
		mb_console_status(c, true, "cannot start the load: %s", mb_session_message(c->s));
	else
		c->status[0] = '\0';
	c->screen = MB_SCR_OVERVIEW;
}

static void toggle_stress(struct mb_console *c)
{
	if (mb_session_stress_active(c->s)) {
		mb_session_stop_stress(c->s);
		return;
	}
	int rc = mb_session_start_stress(c->s, 0);
	if (rc)
		mb_console_status(c, true, "cannot start the storage test: %s", mb_strerror(rc));
	else
		c->status[0] = '\0';
	c->screen = MB_SCR_STORAGE;
}

static void stress_threads(struct mb_console *c, int d)
{
	int n = (c->restart_threads ? c->restart_threads : mb_session_stress_threads(c->s)) + d;
	if (n < 1 || n > 64)
		return;
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

void mb_console_key(struct mb_console *c, int key)
{
	if (c->quitting)
		return;
	if (c->show_failure) {
		c->show_failure = false;
		return;
	}
	if (c->confirm_reinit) {
		c->confirm_reinit = false;
		if (key == 'y' || key == 'Y') {
			int rc = mb_session_reinit_and_start(c->s);
			if (rc)
				mb_console_status(c, true, "cannot re-initialise: %s",
						  mb_strerror(rc));
			else
				c->screen = MB_SCR_OVERVIEW;
		}
		return;
	}
	if (c->confirm_quit) {
		if (key == 'y' || key == 'Y')
			mb_console_quit(c);
		else if (key == 'n' || key == 'N' || key == 27 || key == 'q')
			c->confirm_quit = false;
		return;
	}
	if (c->input.active) {
		int r = mb_input_key(&c->input, key);
		if (r == 1) {
			if (c->input_target == MB_IN_THRESHOLD)
				threshold_edit_done(c);
			else if (c->input_target == MB_IN_FIELD)
				field_edit_done(c);
			c->input_target = MB_IN_NONE;
		} else if (r == -1) {
			c->input_target = MB_IN_NONE;
		}
		return;
	}
	switch (key) {
	case KEY_F(1):
	case '?':
		c->screen = MB_SCR_HELP;
		return;
	case KEY_F(2):
	case 's':
		c->screen = MB_SCR_SCENARIO;
		return;
	case KEY_F(3):
	case 'l':
		toggle_load(c);
		return;
	case KEY_F(4):
	case 't':
		toggle_stress(c);
		return;
	case KEY_F(5):
	case 'h':
		c->screen = MB_SCR_THRESHOLDS;
		return;
	case KEY_F(6):
	case 'r':
		mb_console_reload_runs(c);
		c->screen = MB_SCR_RUNS;
		return;
	case 'o':
	case 27:
		c->screen = MB_SCR_OVERVIEW;
		return;
	case 'a':
		c->screen = MB_SCR_ACTIONS;
		return;
	case 'g':
		c->screen = MB_SCR_STORAGE;
		return;
	case '\t':
		c->screen = (enum mb_screen_id)((c->screen + 1) % (MB_SCR_COUNT - 1));
		if (c->screen == MB_SCR_RUNS)
			mb_console_reload_runs(c);
		return;
	case KEY_BTAB:
		c->screen =
		    (enum mb_screen_id)((c->screen + MB_SCR_COUNT - 2) % (MB_SCR_COUNT - 1));
		return;
	case KEY_F(10):
	case 'q':
		if (mb_session_load_active(c->s) || mb_session_stress_active(c->s))
			c->confirm_quit = true;
		else
			mb_console_quit(c);
		return;
	case KEY_UP:
	case 'k':
		move_sel(c, -1);
		return;
	case KEY_DOWN:
	case 'j':
		move_sel(c, 1);
		return;
	case KEY_PPAGE:
		move_sel(c, -10);
		return;
	case KEY_NPAGE:
		move_sel(c, 10);
		return;
	case KEY_RESIZE:
		mb_term_resize();
		return;
	default:
		break;
	}
	const struct mb_scenario *sc = mb_session_scenario(c->s);
	switch (c->screen) {
	case MB_SCR_OVERVIEW:
		if (sc && sc->column_count > 0 &&
		    (key == '<' || key == KEY_LEFT || key == '>' || key == KEY_RIGHT)) {
			int d = key == '<' || key == KEY_LEFT ? -1 : 1;
			c->diff_col = (c->diff_col + d + sc->column_count) % sc->column_count;
		}
		break;
	case MB_SCR_STORAGE:
		if (key == '+' || key == KEY_RIGHT)
			stress_threads(c, 1);
		else if (key == '-' || key == KEY_LEFT)
			stress_threads(c, -1);
		break;
	case MB_SCR_THRESHOLDS:
		if (key == '\n' || key == '\r' || key == KEY_ENTER || key == 'e')
			threshold_edit_start(c);
		break;
	case MB_SCR_RUNS:
		if (key == '\n' || key == '\r' || key == KEY_ENTER || key == 'p')
			runs_pin(c);
		break;
	case MB_SCR_SCENARIO:
		if (key == '\n' || key == '\r' || key == KEY_ENTER)
			field_edit_start(c);
		else if (key == KEY_LEFT || key == KEY_RIGHT || key == ' ')
			field_cycle(c, c->sel[MB_SCR_SCENARIO], key == KEY_LEFT ? -1 : 1);
		else if (key == 'I') {
			if (mb_session_load_active(c->s) || mb_session_stress_active(c->s))
				mb_console_status(c, true,
						  "stop the load and the storage test first");
			else
				c->confirm_reinit = true;
		}
		break;
	default:
		break;
	}
}
