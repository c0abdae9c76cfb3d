/* screens/overview.c: the overview screen: the comparison table (the
 * scenario's published columns beside this run's live and average
 * figures, report/compare.h), its legend naming every column in full, and
 * sparklines of the last 3 minutes.  The meters sit beside the table only
 * when its header cells fit uncut there, else below it.  < and > (or
 * Left/Right) choose the published column the difference is taken against.
 * Invariant: every figure drawn is read from the session (a child's
 * measurement) or the scenario's published data.
 */
#include <curses.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/compare.h"
#include "core/table.h"
#include "ui/console.h"
#include "ui/sgstate.h"
#include "ui/term.h"

#define LEGEND_MAX 24

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

/* The legend of the overview: the long heading of every shown column
 * (published headings in full, this run's platform/engine/client mode),
 * the threshold column excepted.  Returns the number of lines. */
static int overview_legend(const struct mb_table *t, const struct mb_table_layout *l, int w,
			   char out[][MB_W_WRAP_W], int max)
{
	int n = 0;
	for (int i = 0; i < l->ncols && n < max; i++) {
		int col = l->col[i];
		const char *lg = mb_table_heading(t, col, true);
		if (!lg[0] || !strncmp(mb_table_heading(t, col, false), "threshold", 9))
			continue;
		n += mb_w_wrap(lg, w, out + n, max - n);
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
		n += mb_w_wrap(buf, w, out + n, max - n);
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
	mb_session_engine(c->s, engine, sizeof(engine));
	mb_session_client_mode(c->s, mode, sizeof(mode));
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
	in.load = mb_session_load_desc(c->s); /* the load hosts and ranks, when several */
	in.protocol = mb_compare_protocol_target(mb_session_target(c->s));
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
	char(*legend)[MB_W_WRAP_W] = calloc(LEGEND_MAX, MB_W_WRAP_W);
	int nleg = legend ? overview_legend(t, &l, table_w, legend, LEGEND_MAX) : 0;
	const char *unmeasured = mb_session_unmeasured(c->s);
	if (legend && unmeasured[0] && nleg < LEGEND_MAX) /* why the store's rows are n/a */
		snprintf(legend[nleg++], MB_W_WRAP_W, "n/a: %s", unmeasured);
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
	if (c->scroll[MB_SCR_overview] > maxscroll)
		c->scroll[MB_SCR_overview] = maxscroll;
	int scroll = c->scroll[MB_SCR_overview];
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
	int sg_errors = lh[MB_C_STORE_SG_ERRORS] ? (int)(live[MB_C_STORE_SG_ERRORS] + 0.5) : 0;
	char line[512], v1[32], v2[32], v3[32], v4[32], sgw[1024];
	/* which group, which error, since when; or back after how long (sgstate.h) */
	bool sg_bad = false;
	bool sg_any = mb_sg_state_line(c->s, sgw, sizeof(sgw), &sg_bad);
	if (sg_errors && !sg_bad) {
		snprintf(sgw, sizeof(sgw),
			 "STORAGE GROUP ERROR: %d group%s refusing writes (recovering)", sg_errors,
			 sg_errors == 1 ? "" : "s");
		sg_any = sg_bad = true;
	}
	/* the one LoadSim score of the run (core/score.h), as the table, the
	 * JSON and the verdict have it; the load engine's running figure only
	 * before the run has one */
	bool score_has = ah[MB_C_LOADSIM_SCORE_MS] || lh[MB_C_LOADSIM_SCORE_MS];
	double score =
	    ah[MB_C_LOADSIM_SCORE_MS] ? avg[MB_C_LOADSIM_SCORE_MS] : live[MB_C_LOADSIM_SCORE_MS];
	mb_format_value(MB_C_LOADSIM_SCORE_MS, score_has, score, v1, sizeof(v1));
	mb_format_value(MB_C_USERS, lh[MB_C_USERS], live[MB_C_USERS], v2, sizeof(v2));
	mb_format_value(MB_C_MACHINE_CPU_PCT, lh[MB_C_MACHINE_CPU_PCT], live[MB_C_MACHINE_CPU_PCT],
			v3, sizeof(v3));
	mb_format_value(MB_C_LOAD_CPU_PCT, lh[MB_C_LOAD_CPU_PCT], live[MB_C_LOAD_CPU_PCT], v4,
			sizeof(v4));
	enum mb_verdict sv =
	    mb_threshold_eval(&in.th->counter[MB_C_LOADSIM_SCORE_MS], score_has, score);
	int score_st = sv == MB_VERDICT_FAIL   ? MB_ST_FAIL
		       : sv == MB_VERDICT_PASS ? MB_ST_PASS
					       : MB_ST_LIVE;
	double wu = mb_session_measure_from(c->s), el = mb_session_elapsed(c->s);
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
			if (el >= mb_session_warmup(c->s)) /* cached: first downloads running */
				snprintf(line, sizeof(line), "warm-up: first downloads %llu/%d",
					 (unsigned long long)mb_session_first_downloads(c->s),
					 mb_session_users(c->s));
			else
				snprintf(line, sizeof(line), "warm-up: %.0f s left", wu - el);
			mb_w_text(y++, x, side_w, MB_ST_DIM, line);
		}
		if (saturated)
			mb_w_text(y++, x, side_w, MB_ST_WARN, "LOAD ENGINE SATURATED: misleading");
		if (sg_any) {
			char sl[6][MB_SG_LINE_W];
			bool b;
			int n = mb_sg_state_lines(c->s, sl, 6, &b);
			if (!n)
				mb_w_text(y++, x, side_w, MB_ST_FAIL, sgw);
			for (int i = 0; i < n && y < top + h - 2; i++)
				mb_w_text(y++, x, side_w, b ? MB_ST_FAIL : MB_ST_PASS, sl[i]);
		}
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
		if (sg_bad) {
			mb_w_text(y + 1, 0, COLS, MB_ST_FAIL, sgw);
		} else if (sg_any) {
			mb_w_text(y + 1, 0, COLS, MB_ST_PASS, sgw);
		} else if (saturated) {
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
static bool overview_key(struct mb_console *c, int key)
{
	const struct mb_scenario *sc = mb_session_scenario(c->s);
	if (sc && sc->column_count > 0 &&
	    (key == '<' || key == KEY_LEFT || key == '>' || key == KEY_RIGHT)) {
		int d = key == '<' || key == KEY_LEFT ? -1 : 1;
		c->diff_col = (c->diff_col + d + sc->column_count) % sc->column_count;
		return true;
	}
	return false;
}

const struct mb_screen mb_screen_overview = {
    .name = "Overview",
    .help = "< >         overview: published column the difference is taken against",
    .draw = draw_overview,
    .on_key = overview_key,
};
