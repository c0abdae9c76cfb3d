/* screens/capacity.c: the capacity screen.  Enter starts (or stops) a capacity
 * search (report/capacity.h) with the console's scenario, data directory,
 * scale and compression; its first load is the console's users x accel,
 * its largest 16 times that, real users at most the console's users.  <
 * and > choose the limit, [ and ] the step window, both before a start.
 * The curve (the limited figure against user-equivalents, log scale) is
 * drawn with braille dots (ASCII '*' without UTF-8) as the steps finish,
 * the limit as a dashed line; the steps and the answer are listed under
 * it.  The search runs its own session, so the console's load and
 * storage test must be stopped first; the search's JSON is saved in
 * DATA/capacity/ when it ends.
 * Invariant: the plot shows finished steps only, from their summaries. */
#include "ui/screens/capacity.h"

#include <curses.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/error.h"
#include "report/capacity.h"
#include "ui/term.h"

static const struct mb_capacity_limit presets[] = {
    {MB_LIM_SCORE, 1000}, {MB_LIM_SCORE, 500}, {MB_LIM_LATENCY, 100}, {MB_LIM_CPU, 80}};
#define NPRESETS (int)(sizeof(presets) / sizeof(presets[0]))
static const double windows[][2] = {{8, 15}, {15, 30}, {3, 5}};
#define NWINDOWS (int)(sizeof(windows) / sizeof(windows[0]))

static void cap_params(struct mb_console *c, struct mb_capacity_params *p)
{
	const struct mb_session_params *sp = mb_session_params(c->s);
	mb_capacity_params_default(p);
	snprintf(p->scenario, sizeof(p->scenario), "%s", sp->scenario);
	snprintf(p->data_dir, sizeof(p->data_dir), "%s", sp->data_dir);
	p->scale = mb_session_scale(c->s);
	p->compression = mb_session_compression(c->s);
	p->limit[0] = presets[c->cap_limit % NPRESETS];
	p->nlimits = 1;
	p->max_users = mb_session_users(c->s);
	p->from_ue = mb_session_users(c->s) * mb_session_accel(c->s);
	p->to_ue = p->from_ue * 16;
	p->warmup_s = windows[c->cap_window % NWINDOWS][0];
	p->measure_s = windows[c->cap_window % NWINDOWS][1];
	p->bisect_measure_s = 2 * p->measure_s; /* as the command's defaults */
}

static void save_json(struct mb_console *c)
{
	const struct mb_capacity_params *p = mb_capacity_params(c->cap);
	char dir[4200], path[4300];
	snprintf(dir, sizeof(dir), "%s/capacity", p->data_dir);
	if (mkdir(dir, 0755) && errno != EEXIST)
		return;
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	char id[32];
	strftime(id, sizeof(id), "%Y%m%d-%H%M%S", &tm);
	snprintf(path, sizeof(path), "%s/%s-console.json", dir, id);
	if (mb_capacity_write(c->cap, path) == 0)
		snprintf(c->cap_saved, sizeof(c->cap_saved), "%s", path);
}

static void on_cap_change(void *arg, struct mb_capacity *cap)
{
	struct mb_console *c = arg;
	if (!mb_capacity_active(cap) && !c->cap_saved[0] && mb_capacity_step_count(cap) > 0)
		save_json(c);
}

static void on_cap_message(void *arg, struct mb_capacity *cap, const char *m)
{
	struct mb_console *c = arg;
	(void)cap;
	mb_console_status(c, false, "capacity: %s", m);
}

static void toggle(struct mb_console *c)
{
	if (c->cap && mb_capacity_active(c->cap)) {
		mb_capacity_stop(c->cap);
		return;
	}
	if (mb_session_load_active(c->s) || mb_session_stress_active(c->s)) {
		mb_console_status(c, true, "stop the load and the storage test first (F3, F4)");
		return;
	}
	if (!c->cap) {
		static const struct mb_capacity_events ev = {on_cap_change, on_cap_message};
		if (mb_capacity_create(c->loop, &ev, c, &c->cap))
			return;
	}
	struct mb_capacity_params p;
	cap_params(c, &p);
	struct mb_cfg_error err;
	memset(&err, 0, sizeof(err));
	c->cap_saved[0] = '\0';
	int rc = mb_capacity_start(c->cap, &p, &err);
	if (rc)
		mb_console_status(c, true, "cannot start the capacity search: %s", mb_strerror(rc));
}

bool mb_capscreen_key(struct mb_console *c, int key)
{
	bool idle = !c->cap || !mb_capacity_active(c->cap);
	switch (key) {
	case '\n':
	case '\r':
	case KEY_ENTER:
		toggle(c);
		return true;
	case '<':
	case '>':
		if (idle)
			c->cap_limit = (c->cap_limit + (key == '<' ? NPRESETS - 1 : 1)) % NPRESETS;
		return true;
	case '[':
	case ']':
		if (idle)
			c->cap_window =
			    (c->cap_window + (key == '[' ? NWINDOWS - 1 : 1)) % NWINDOWS;
		return true;
	default:
		return false;
	}
}

bool mb_capscreen_stop(struct mb_console *c)
{
	if (!c->cap)
		return false;
	mb_capacity_stop(c->cap);
	return mb_capacity_active(c->cap);
}

void mb_capscreen_free(struct mb_console *c)
{
	if (c->cap)
		mb_capacity_destroy(c->cap);
	c->cap = NULL;
}

/* ---- the braille plot ---- */

struct canvas {
	int w, h; /* cells */
	unsigned char *cell;
};

static void dot(struct canvas *cv, int x, int y)
{
	/* dot coordinates: 2 per cell across, 4 down; y grows downwards */
	if (x < 0 || y < 0 || x >= cv->w * 2 || y >= cv->h * 4)
		return;
	static const unsigned char bit[2][4] = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};
	cv->cell[(y / 4) * cv->w + x / 2] |= bit[x % 2][y % 4];
}

static void line(struct canvas *cv, int x0, int y0, int x1, int y1)
{
	int dx = abs(x1 - x0), sx = x0 < x1 ? 1 : -1;
	int dy = -abs(y1 - y0), sy = y0 < y1 ? 1 : -1;
	int err = dx + dy;
	for (;;) {
		dot(cv, x0, y0);
		if (x0 == x1 && y0 == y1)
			break;
		int e2 = 2 * err;
		if (e2 >= dy) {
			err += dy;
			x0 += sx;
		}
		if (e2 <= dx) {
			err += dx;
			y0 += sy;
		}
	}
}

static bool figure(const struct mb_capacity_step *s, enum mb_capacity_limit_kind k, double *v)
{
	switch (k) {
	case MB_LIM_SCORE:
		*v = s->score_ms;
		return s->has_score;
	case MB_LIM_LATENCY:
		*v = s->client_latency_ms;
		return s->has_rpc;
	case MB_LIM_P95:
		*v = s->rpc_p95_ms;
		return s->has_rpc;
	default:
		*v = s->store_cpu_pct;
		return s->has_cpu;
	}
}

static int by_ue(const void *a, const void *b)
{
	const struct mb_capacity_step *x = *(const struct mb_capacity_step *const *)a;
	const struct mb_capacity_step *y = *(const struct mb_capacity_step *const *)b;
	return x->ue < y->ue ? -1 : x->ue > y->ue;
}

static void draw_plot(struct mb_console *c, int top, int h, const struct mb_capacity_params *p)
{
	const struct mb_capacity_limit *lim = &p->limit[0];
	size_t n = c->cap ? mb_capacity_step_count(c->cap) : 0;
	const struct mb_capacity_step *st[MB_CAPACITY_MAX_STEPS];
	double ymax = lim->value * 1.25;
	for (size_t i = 0; i < n; i++) {
		st[i] = mb_capacity_step_at(c->cap, i);
		double v;
		if (figure(st[i], lim->kind, &v) && v * 1.1 > ymax)
			ymax = v * 1.1;
	}
	qsort(st, n, sizeof(st[0]), by_ue);
	const int lw = 10; /* axis labels */
	struct canvas cv = {COLS - lw - 1, h - 1, NULL};
	if (cv.w < 10 || cv.h < 3)
		return;
	cv.cell = calloc((size_t)cv.w * (size_t)cv.h, 1);
	if (!cv.cell)
		return;
	double lx0 = log(p->from_ue), lx1 = log(p->to_ue > p->from_ue ? p->to_ue : p->from_ue * 2);
	int W = cv.w * 2 - 1, H = cv.h * 4 - 1;
#define PX(ue) ((int)lround((log(ue) - lx0) / (lx1 - lx0) * W))
#define PY(v) (H - (int)lround((v) / ymax * H))
	/* the limit: dashed */
	int ly = PY(lim->value);
	for (int x = 0; x <= W; x += 3)
		dot(&cv, x, ly);
	int px = -1, py = -1;
	for (size_t i = 0; i < n; i++) {
		double v;
		if (!figure(st[i], lim->kind, &v))
			continue;
		int x = PX(st[i]->ue), y = PY(v);
		if (px >= 0)
			line(&cv, px, py, x, y);
		/* a point: a small cross */
		dot(&cv, x, y);
		dot(&cv, x + 1, y);
		dot(&cv, x, y + 1);
		dot(&cv, x + 1, y + 1);
		px = x;
		py = y;
	}
	bool utf8 = mb_term_utf8();
	for (int r = 0; r < cv.h; r++) {
		char lab[32] = "";
		if (r == 0)
			snprintf(lab, sizeof(lab), "%.0f %s", ymax,
				 lim->kind == MB_LIM_CPU ? "%" : "ms");
		else if (r == cv.h - 1)
			snprintf(lab, sizeof(lab), "0");
		else if (r == ly / 4)
			snprintf(lab, sizeof(lab), "limit");
		mb_w_text(top + r, 0, lw, r == ly / 4 ? MB_ST_WARN : MB_ST_DIM, lab);
		attrset(mb_term_attr(MB_ST_LIVE));
		move(top + r, lw);
		addch('|');
		for (int x = 0; x < cv.w; x++) {
			unsigned char m = cv.cell[r * cv.w + x];
			if (!m) {
				addch(' ');
			} else if (utf8) {
				unsigned cp = 0x2800u + m;
				char u[4] = {(char)(0xE0 | (cp >> 12)),
					     (char)(0x80 | ((cp >> 6) & 0x3F)),
					     (char)(0x80 | (cp & 0x3F)), 0};
				addstr(u);
			} else {
				addch(r == ly / 4 && m ? '-' : '*');
			}
		}
		attrset(A_NORMAL);
	}
	char axis[256];
	snprintf(axis, sizeof(axis), "%*s%.0f UE%*s%.0f UE (log scale)", lw + 1, "", p->from_ue,
		 cv.w > 40 ? cv.w - 28 : 2, "", p->to_ue);
	mb_w_text(top + cv.h, 0, COLS, MB_ST_DIM, axis);
	free(cv.cell);
#undef PX
#undef PY
}

void mb_capscreen_draw(struct mb_console *c, int top, int h)
{
	struct mb_capacity_params p;
	if (c->cap && mb_capacity_step_count(c->cap) + mb_capacity_active(c->cap) > 0)
		p = *mb_capacity_params(c->cap);
	else
		cap_params(c, &p);
	char lt[64], line[1024];
	mb_capacity_limit_text(&p.limit[0], lt, sizeof(lt));
	bool active = c->cap && mb_capacity_active(c->cap);
	snprintf(line, sizeof(line),
		 "capacity search %s | limit %s | %.0f -> %.0f UE, real users <= %d | step %g s "
		 "warm-up + %g s measured (bisection %g s)",
		 active	  ? mb_capacity_state_str(mb_capacity_state(c->cap))
		 : c->cap ? mb_capacity_state_str(mb_capacity_state(c->cap))
			  : "idle",
		 lt, p.from_ue, p.to_ue, p.max_users, p.warmup_s, p.measure_s, p.bisect_measure_s);
	mb_w_text(top, 0, COLS, active ? MB_ST_LIVE : MB_ST_HEAD, line);
	size_t n = c->cap ? mb_capacity_step_count(c->cap) : 0;
	int list = n > 6 ? 7 : (int)n + 1;
	int plot_h = h - 4 - list;
	if (plot_h > 20)
		plot_h = 20;
	if (plot_h >= 5)
		draw_plot(c, top + 1, plot_h, &p);
	int y = top + 1 + (plot_h >= 5 ? plot_h + 1 : 0);
	struct mb_capacity_step cur;
	double el;
	if (c->cap && mb_capacity_current(c->cap, &cur, &el))
		snprintf(line, sizeof(line),
			 "running step %zu (%s): %.0f UE = %d users x accel %.3g, %.0f s", n + 1,
			 cur.phase, cur.ue, cur.users, cur.accel, el);
	else if (c->cap && mb_capacity_answer(c->cap)[0]) {
		/* the answer, wrapped at word boundaries (at most 3 lines) */
		const char *a = mb_capacity_answer(c->cap);
		for (int k = 0; k < 2 && (int)strlen(a) > COLS && COLS > 20; k++) {
			int cut = COLS;
			while (cut > COLS / 2 && a[cut] != ' ')
				cut--;
			snprintf(line, sizeof(line), "%.*s", cut, a);
			mb_w_text(y++, 0, COLS, MB_ST_NORMAL, line);
			a += cut + (a[cut] == ' ');
		}
		snprintf(line, sizeof(line), "%s", a);
	} else
		snprintf(line, sizeof(line),
			 "Enter starts the search (the load and the storage test must be stopped); "
			 "< > limit, [ ] step window");
	mb_w_text(y++, 0, COLS, MB_ST_NORMAL, line);
	if (n > 0) {
		snprintf(line, sizeof(line), "%4s %-6s %6s %8s %9s %8s %8s %8s %s", "step", "phase",
			 "users", "accel", "UE", "score", "p95 ms", "store %", "within limit");
		mb_w_text(y++, 0, COLS, MB_ST_HEAD, line);
	}
	for (size_t i = n > 6 ? n - 6 : 0; i < n && y < top + h; i++) {
		const struct mb_capacity_step *s = mb_capacity_step_at(c->cap, i);
		snprintf(line, sizeof(line), "%4zu %-6s %6d %8.3g %9.0f %8.0f %8.1f %8.1f %s%s%s%s",
			 i + 1, s->phase, s->users, s->accel, s->ue, s->score_ms, s->rpc_p95_ms,
			 s->store_cpu_pct, s->pass ? "yes" : "no", s->pass ? "" : ": ",
			 s->limited_by, mb_capacity_step_marks(s));
		mb_w_text(y++, 0, COLS, s->pass ? MB_ST_PASS : MB_ST_FAIL, line);
	}
	if (c->cap_saved[0] && y < top + h) {
		snprintf(line, sizeof(line), "saved %.900s (mailbench report draws it)",
			 c->cap_saved);
		mb_w_text(y++, 0, COLS, MB_ST_DIM, line);
	}
}

const struct mb_screen mb_screen_capacity = {
    .name = "Capacity",
    .help = "Enter       capacity screen: start/stop the search (< > limit, [ ] step window)",
    .draw = mb_capscreen_draw,
    .on_key = mb_capscreen_key,
    .destroy = mb_capscreen_free,
};
