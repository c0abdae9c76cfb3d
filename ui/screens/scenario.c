/* screens/scenario.c: the scenario screen: the run's parameters (the
 * console's options marked MB_OPT_CONSOLE, edited with the command line's
 * names, ranges and messages: Enter edits, Left/Right/Space switch), whether
 * the data directory is initialised for the choice (I re-initialises it),
 * and the chosen scenario's published topology, mailbox profile and
 * actions per user-day.  A change is refused while the load or the storage
 * test runs; a refused change leaves the old parameters.
 */
#include <curses.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/opt.h"
#include "core/options.h"
#include "ui/console.h"
#include "ui/term.h"

/* The editor's fields are the console's options marked MB_OPT_CONSOLE
 * (mb_console_fields): the same entries as its command line, so the same
 * names, ranges and messages.  Their offsets are into struct
 * mb_session_params (the first member of the console's args). */
#define MAX_FIELDS 16
static int field_count(void)
{
	int n, k = 0;
	const struct mb_opt *o = mb_console_fields(&n);
	for (int i = 0; i < n; i++)
		if (o[i].flags & MB_OPT_CONSOLE)
			k++;
	return k < MAX_FIELDS ? k : MAX_FIELDS;
}

static const struct mb_opt *field_opt(int f)
{
	int n, k = 0;
	const struct mb_opt *o = mb_console_fields(&n);
	for (int i = 0; i < n; i++)
		if ((o[i].flags & MB_OPT_CONSOLE) && k++ == f)
			return &o[i];
	return NULL;
}

static bool is_field(const struct mb_opt *o, size_t off) { return o && o->off == off; }

/* The session's parameters with the effective values where a parameter
 * means "the scenario's". */
static void effective(struct mb_console *c, struct mb_session_params *e)
{
	*e = *mb_session_params(c->s);
	e->users = mb_session_users(c->s);
	e->scale = mb_session_scale(c->s);
	e->accel = mb_session_accel(c->s);
	e->compression = mb_session_compression(c->s) ? 1 : 0;
	if (mb_session_scenario(c->s)) {
		e->cache_mb = mb_session_cache_mb(c->s);
		e->seed = (int)mb_session_seed(c->s);
	}
}

static void field_value(struct mb_console *c, int f, char *buf, size_t len)
{
	const struct mb_opt *o = field_opt(f);
	struct mb_session_params e;
	buf[0] = '\0';
	if (!o)
		return;
	effective(c, &e);
	mb_opt_text(o, &e, buf, len);
	if (is_field(o, offsetof(struct mb_session_params, target))) {
		/* the target choice: embedded store | Dovecot lab | external URL */
		char t[MB_TEXT_MAX];
		snprintf(t, sizeof(t), "%s", buf);
		if (!t[0] || !strcmp(t, "mbstore"))
			snprintf(buf, len,
				 "embedded store  (Left/Right: Dovecot lab, external URL)");
		else if (!strcmp(t, "lab:dovecot"))
			snprintf(buf, len,
				 "Dovecot lab  (started, provisioned and stopped with the run)");
		else
			snprintf(buf, len, "external URL %s  (Enter edits; submit: SMTP)", t);
		return;
	}
	if (!buf[0] && o->dtext)
		snprintf(buf, len, "(%s)", o->dtext);
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
	const struct mb_opt *o = field_opt(f);
	struct mb_session_params np = *mb_session_params(c->s);
	if (is_field(o, offsetof(struct mb_session_params, scenario))) {
		snprintf(np.scenario, sizeof(np.scenario), "%s",
			 strcmp(np.scenario, "online") ? "online" : "cached");
	} else if (is_field(o, offsetof(struct mb_session_params, target))) {
		/* embedded store -> Dovecot lab -> external URL (the last one typed) */
		static char external[MB_TEXT_MAX] = "imap://127.0.0.1:143";
		const char *const ring[3] = {"", "lab:dovecot", external};
		int k = !np.target[0] || !strcmp(np.target, "mbstore") ? 0
			: !strcmp(np.target, "lab:dovecot")	       ? 1
								       : 2;
		if (k == 2)
			snprintf(external, sizeof(external), "%s", np.target);
		snprintf(np.target, sizeof(np.target), "%s", ring[(k + (dir < 0 ? 2 : 1)) % 3]);
	} else if (o && o->type == MB_OT_FLAG) {
		bool *v = (bool *)(void *)((char *)&np + o->off);
		*v = !*v;
	} else if (o && o->type == MB_OT_ENUM) {
		struct mb_session_params e;
		int n = 0, *v = (int *)(void *)((char *)&e + o->off);
		effective(c, &e);
		while (o->choices[n])
			n++;
		*(int *)(void *)((char *)&np + o->off) =
		    ((*v < 0 ? 0 : *v) + (dir < 0 ? n - 1 : 1)) % n;
	} else {
		return;
	}
	apply_params(c, &np);
}

static void field_edit_done(struct mb_console *c);

static void field_edit_start(struct mb_console *c)
{
	int f = c->sel[MB_SCR_scenario];
	const struct mb_opt *o = field_opt(f);
	if (!o)
		return;
	if (o->type == MB_OT_ENUM || o->type == MB_OT_FLAG) {
		field_cycle(c, f, 1);
		return;
	}
	char buf[MB_PATH_MAX];
	struct mb_session_params e;
	effective(c, &e);
	mb_opt_text(o, &e, buf, sizeof(buf));
	mb_input_start(&c->input, buf);
	c->input_target = MB_IN_FIELD;
	c->input_index = f;
	c->input_done = field_edit_done;
}

static void field_edit_done(struct mb_console *c)
{
	struct mb_session_params np = *mb_session_params(c->s);
	const struct mb_opt *o = field_opt(c->input_index);
	char why[512];
	if (!o)
		return;
	if (mb_opt_set(o, &np, c->input.buf, why, sizeof(why))) {
		mb_console_status(c, true, "%s: %s", o->path, why);
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
	for (int f = 0; f < field_count() && y < top + h; f++) {
		field_value(c, f, val, sizeof(val));
		snprintf(buf, sizeof(buf), "  %-12s %s", field_opt(f)->path, val);
		mb_w_text(y, 0, COLS, f == c->sel[MB_SCR_scenario] ? MB_ST_SEL : MB_ST_NORMAL, buf);
		if (c->input.active && c->input_target == MB_IN_FIELD && c->input_index == f)
			mb_input_draw(&c->input, y, 15, COLS - 16);
		y++;
	}
	const struct mb_scenario *sc = mb_session_scenario(c->s);
	if (!sc)
		return;
	bool init = mb_session_initialised(c->s);
	if (!mb_session_embedded(c->s)) /* a real server: provisioned over IMAP by F3 */
		snprintf(buf, sizeof(buf),
			 "  target %s: F3 provisions its mailboxes over IMAP "
			 "(resumable), runs the load, then checks every acknowledged message",
			 mb_session_target(c->s));
	else
		snprintf(buf, sizeof(buf), "  data dir initialised for this choice: %s%s",
			 init ? "yes" : "no",
			 init ? "  (I re-initialises it)"
			      : "  (F3 initialises it; I replaces another)");
	mb_w_text(y++, 0, COLS, init || !mb_session_embedded(c->s) ? MB_ST_NORMAL : MB_ST_WARN,
		  buf);
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
		 sc->mailbox.inbox_messages, sc->mailbox.deleted_items_messages,
		 sc->mailbox.new_folders, sc->mailbox.messages_per_folder,
		 sc->mailbox.calendar_appointments, sc->mailbox.contacts,
		 sc->mailbox.avg_message_kb);
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
static bool scenario_key(struct mb_console *c, int key)
{
	if (key == '\n' || key == '\r' || key == KEY_ENTER)
		field_edit_start(c);
	else if (key == KEY_LEFT || key == KEY_RIGHT || key == ' ')
		field_cycle(c, c->sel[MB_SCR_scenario], key == KEY_LEFT ? -1 : 1);
	else if (key == 'I') {
		if (mb_session_load_active(c->s) || mb_session_stress_active(c->s))
			mb_console_status(c, true, "stop the load and the storage test first");
		else
			c->confirm_reinit = true;
	} else
		return false;
	return true;
}

static int scenario_items(struct mb_console *c)
{
	(void)c;
	return field_count();
}

const struct mb_screen mb_screen_scenario = {
    .name = "Scenario",
    .help = "I           scenario screen: re-initialise the data directory from scratch",
    .draw = draw_scenario,
    .on_key = scenario_key,
    .items = scenario_items,
};
