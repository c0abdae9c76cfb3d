/* screens/topology.c: the topology screen: how the data directory is laid
 * out, from DATA/topology.json (written by `mailbench init`): the scenario
 * and scale it was made for, its users and distribution lists, and per
 * storage group (its log directory) each database with the users it holds
 * and the size of its file now.  The file is read when the screen is shown
 * (T again re-reads it); Up/Down scroll.  Invariant: every figure is read
 * from the topology file or the database files' sizes (stat), "n/a" where
 * a file is missing; nothing here writes.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/topology.h"
#include "core/table.h"
#include "ui/console.h"
#include "ui/term.h"

struct topo_db {
	int sg, users;
	double file_mb; /* < 0: no file */
};

struct topo_state {
	char error[MB_PATH_MAX + 128]; /* why there is nothing to show, "" when read */
	struct mb_topo_info info;
	int users, lists;
	int ndb;
	struct topo_db *db;
	char log_dir[64][MB_PATH_MAX]; /* the first 64 storage groups' */
};

static void topology_destroy(struct mb_console *c)
{
	struct topo_state *t = c->state[MB_SCR_topology];
	if (t)
		free(t->db);
	free(t);
	c->state[MB_SCR_topology] = NULL;
}

static void topology_build(struct mb_console *c)
{
	topology_destroy(c);
	struct topo_state *t = calloc(1, sizeof(*t));
	if (!t)
		return;
	c->state[MB_SCR_topology] = t;
	const char *data = mb_session_params(c->s)->data_dir;
	char path[MB_PATH_MAX + 32], err[512];
	snprintf(path, sizeof(path), "%s/topology.json", data);
	struct stat sb;
	if (stat(path, &sb)) {
		snprintf(t->error, sizeof(t->error),
			 "%s: not initialised yet (F3 initialises it with the scenario's topology)",
			 data);
		return;
	}
	struct mb_topology *topo;
	if (mb_topology_read(path, &topo, err, sizeof(err))) {
		snprintf(t->error, sizeof(t->error), "%s", err);
		return;
	}
	t->info = *mb_topology_info(topo);
	t->users = mb_topology_user_count(topo);
	t->lists = mb_topology_list_count(topo);
	t->ndb = t->info.databases > 0 ? t->info.databases : 0;
	t->db = calloc((size_t)t->ndb + 1, sizeof(*t->db));
	if (!t->db) {
		t->ndb = 0;
		snprintf(t->error, sizeof(t->error), "out of memory");
		mb_topology_destroy(topo);
		return;
	}
	for (int d = 1; d <= t->ndb; d++) {
		struct topo_db *b = &t->db[d - 1];
		b->sg = mb_topology_db_sg(topo, d);
		b->file_mb = -1;
		if (mb_topology_db_path(data, b->sg, d, path, sizeof(path)) == 0 &&
		    stat(path, &sb) == 0)
			b->file_mb = (double)sb.st_size / (1024.0 * 1024.0);
	}
	for (int i = 0; i < t->users; i++) {
		int d = mb_topology_user(topo, i)->db;
		if (d >= 1 && d <= t->ndb)
			t->db[d - 1].users++;
	}
	for (int g = 1; g <= t->info.storage_groups && g <= 64; g++)
		if (mb_topology_log_dir(data, t->info.log_dir[0] ? t->info.log_dir : NULL, g,
					t->log_dir[g - 1], sizeof(t->log_dir[g - 1])))
			snprintf(t->log_dir[g - 1], sizeof(t->log_dir[g - 1]), "n/a");
	mb_topology_destroy(topo);
}

/* Rows: per storage group a heading row (its users, files and log
 * directory), then one row per database in it. */
static int topology_table(const struct topo_state *t, struct mb_table **out)
{
	struct mb_table *tb;
	int rc = mb_table_create(3, &tb);
	if (rc)
		return rc;
	mb_table_set_heading(tb, 0, "users", "users whose mailbox the database holds");
	mb_table_set_heading(tb, 1, "file MB", "size of the database file now");
	mb_table_set_heading(tb, 2, "log directory", "the storage group's log directory");
	mb_table_set_priority(tb, 0, 10);
	mb_table_set_priority(tb, 1, 9);
	mb_table_set_priority(tb, 2, 1);
	char buf[MB_PATH_MAX + 64];
	for (int g = 1; g <= t->info.storage_groups; g++) {
		int users = 0, ndb = 0, r;
		double mb = 0;
		bool all = true;
		for (int d = 0; d < t->ndb; d++)
			if (t->db[d].sg == g) {
				users += t->db[d].users;
				ndb++;
				all &= t->db[d].file_mb >= 0;
				mb += t->db[d].file_mb >= 0 ? t->db[d].file_mb : 0;
			}
		snprintf(buf, sizeof(buf), "storage group %d (%d database%s)", g, ndb,
			 ndb == 1 ? "" : "s");
		mb_table_add_row(tb, buf, MB_ROW_NORMAL, &r);
		snprintf(buf, sizeof(buf), "%d", users);
		mb_table_set_cell(tb, r, 0, buf);
		snprintf(buf, sizeof(buf), "%.1f", mb);
		mb_table_set_cell(tb, r, 1, all ? buf : "n/a");
		mb_table_set_cell(tb, r, 2, g <= 64 ? t->log_dir[g - 1] : "n/a");
		for (int d = 0; d < t->ndb; d++) {
			if (t->db[d].sg != g)
				continue;
			snprintf(buf, sizeof(buf), "  database %02d", d + 1);
			mb_table_add_row(tb, buf, MB_ROW_NORMAL, &r);
			snprintf(buf, sizeof(buf), "%d", t->db[d].users);
			mb_table_set_cell(tb, r, 0, buf);
			snprintf(buf, sizeof(buf), "%.1f", t->db[d].file_mb);
			mb_table_set_cell(tb, r, 1, t->db[d].file_mb >= 0 ? buf : "n/a");
		}
	}
	*out = tb;
	return 0;
}

static void draw_topology(struct mb_console *c, int top, int h)
{
	if (!c->state[MB_SCR_topology])
		topology_build(c);
	const struct topo_state *t = c->state[MB_SCR_topology];
	if (!t)
		return;
	const char *data = mb_session_params(c->s)->data_dir;
	if (t->error[0]) {
		mb_w_text(top, 0, COLS, MB_ST_WARN, t->error);
		return;
	}
	char line[MB_PATH_MAX + 256], when[64] = "n/a";
	time_t created = (time_t)t->info.created;
	struct tm tm;
	if (t->info.created > 0 && gmtime_r(&created, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm);
	int y = top;
	snprintf(line, sizeof(line), "data directory %s (T re-reads it)", data);
	mb_w_text(y++, 0, COLS, MB_ST_HEAD, line);
	snprintf(line, sizeof(line), "initialised %s for scenario %s, scale %g", when,
		 t->info.scenario, t->info.scale);
	mb_w_text(y++, 0, COLS, MB_ST_NORMAL, line);
	snprintf(line, sizeof(line),
		 "%d users, %d distribution lists, %d databases in %d storage groups; database "
		 "cache %d MB, %d KB pages",
		 t->users, t->lists, t->info.databases, t->info.storage_groups, t->info.db_cache_mb,
		 t->info.page_kb);
	mb_w_text(y++, 0, COLS, MB_ST_NORMAL, line);
	y++;
	if (y >= top + h)
		return;
	struct mb_table *tb;
	if (topology_table(t, &tb))
		return;
	int rows = mb_table_rows(tb), vis = top + h - y - 1;
	int *scroll = &c->scroll[MB_SCR_topology];
	if (*scroll > rows - vis)
		*scroll = rows - vis > 0 ? rows - vis : 0;
	mb_w_table(y, 0, top + h - y, COLS, tb, *scroll, -1);
	mb_table_destroy(tb);
}

const struct mb_screen mb_screen_topology = {
    .name = "Topology",
    .build = topology_build,
    .draw = draw_topology,
    .destroy = topology_destroy,
};
