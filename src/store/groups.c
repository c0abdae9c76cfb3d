/* groups.c: the store's storage groups and databases: opening them, the
 * ERROR state of a group, its report (stderr; the stats stream shows
 * ls->sgst) and its recovery in place, and closing them at shutdown.
 *
 * Invariants:
 *  - A storage group in the ERROR state is reported and recovered in place:
 *    every worker pauses between requests, the group's databases and the
 *    group are closed and reopened (crash recovery), and the workers
 *    resume; while it cannot be reopened its databases answer with the
 *    error (dbw.offline_rc, written only while the workers are paused).
 *  - Checked from the loop thread's sweep (net.c), never while stopping.
 *
 * Group states (struct sg_state, loop.h):
 *
 *        ok --log or database I/O fails--> error --reopen ok--> ok
 *                                            |  ^
 *                              reopen fails  v  | reopen ok (retried every 2 s)
 *                                           offline
 */
#include "config.h"

#include "store/groups.h"
#include "store/loop.h"
#include "store/workers.h"
#include "core/error.h"

#include <stdio.h>
#include <string.h>

#define RECOVER_EVERY_MS 2000

int mb__groups_open(struct mb_store *st, int g, char *err, size_t errlen)
{
	char dir[4200], logdir[4200];
	struct mb_sg_options so;
	const struct mb_topo_info *ti = mb_topology_info(st->topo);
	snprintf(dir, sizeof(dir), "%s/sg%d", st->o.data, g);
	mb_topology_log_dir(st->o.data, ti->log_dir, g, logdir, sizeof(logdir));
	mb_sg_options_init(&so);
	so.dir = dir;
	so.log_dir = logdir;
	so.io = st->io;
	so.cache = st->cache;
	int rc = mb_sg_open(&so, &st->sgs[g - 1]);
	if (rc)
		snprintf(err, errlen, "%s: cannot open the storage group: %s (%s)", dir,
			 mb_strerror(rc), mb_errname(rc));
	return rc;
}

int mb__groups_open_db(struct mb_store *st, struct dbw *w, char *err, size_t errlen)
{
	char name[32];
	snprintf(name, sizeof(name), "db%02d.mdb", w->index);
	int rc = mb_db_open(st->sgs[w->sg - 1], name, 0, 0, &w->db);
	if (!rc)
		rc = mb_schema_open(w->db, false, &w->schema);
	if (!rc && !w->tmp)
		rc = mb_buf_create(1 << 16, &w->tmp);
	if (rc && w->db)
		snprintf(err, errlen, "%s/sg%d/%s: cannot open: %s (%s)", st->o.data, w->sg, name,
			 mb_db_errmsg(w->db), mb_errname(rc));
	else if (rc) {
		char why[512];
		mb_db_open_errmsg(rc, why, sizeof(why));
		snprintf(err, errlen, "cannot open: %s (%s)", why, mb_errname(rc));
	}
	return rc;
}

static void close_group_dbs(struct mb_store *st, int g)
{
	for (int d = 0; d < st->ndb; d++) {
		struct dbw *w = &st->w[d];
		if (w->sg != g)
			continue;
		if (w->schema)
			mb_schema_close(w->schema);
		if (w->db)
			mb_db_close(w->db);
		w->schema = NULL;
		w->db = NULL;
	}
}

/* Workers paused: close group g and its databases, reopen (recovery). */
static int recover_group(struct mb_store *st, int g, char *err, size_t errlen)
{
	close_group_dbs(st, g);
	if (st->sgs[g - 1])
		mb_sg_close(st->sgs[g - 1]); /* reports the error that stopped it */
	st->sgs[g - 1] = NULL;
	int rc = mb__groups_open(st, g, err, errlen);
	for (int d = 0; d < st->ndb && !rc; d++)
		if (st->w[d].sg == g)
			rc = mb__groups_open_db(st, &st->w[d], err, errlen);
	if (rc) {
		close_group_dbs(st, g);
		if (st->sgs[g - 1])
			mb_sg_close(st->sgs[g - 1]);
		st->sgs[g - 1] = NULL;
		for (int d = 0; d < st->ndb; d++)
			if (st->w[d].sg == g)
				st->w[d].offline_rc = rc;
	}
	return rc;
}

void mb__groups_check(struct mb_store *st, uint64_t now)
{
	struct loop_state *ls = st->loop_state;
	if (ls->stopping || !ls->sgst)
		return;
	for (int g = 1; g <= st->nsg; g++) {
		struct sg_state *gs = &ls->sgst[g - 1];
		int e = gs->offline ? gs->err : st->sgs[g - 1] ? mb_sg_error(st->sgs[g - 1]) : 0;
		if (!e)
			continue;
		if (!gs->err) {
			gs->err = e;
			gs->since_ms = now;
			gs->next_try_ms = now + 1000;
			mb_sg_error_what(st->sgs[g - 1], gs->what, sizeof(gs->what));
		}
		if (gs->last_report != e) {
			fprintf(
			    stderr,
			    "mailbench store: storage group %d (%s/sg%d) is in the ERROR state: "
			    "%s (%s)%s%s; its writes are refused; recovery is tried every %d s\n",
			    g, st->o.data, g, mb_strerror(e), mb_errname(e),
			    gs->what[0] ? ": " : "", gs->what, RECOVER_EVERY_MS / 1000);
			gs->last_report = e;
		}
		if (now < gs->next_try_ms)
			continue;
		gs->next_try_ms = now + RECOVER_EVERY_MS;
		char err[1024];
		if (!mb__workers_pause(st)) {
			/* a worker is busy: next time, after as long again as the
			 * loop waited now (its connections were not served) */
			gs->next_try_ms = now + 2 * RECOVER_EVERY_MS;
			continue;
		}
		int rc = recover_group(st, g, err, sizeof(err));
		mb__workers_resume(st);
		if (rc == 0) {
			fprintf(stderr,
				"mailbench store: storage group %d recovered in place after %.1f s "
				"out of service (log replayed); back in service\n",
				g, (double)(now - gs->since_ms) / 1000.0);
			gs->recoveries++;
			gs->last_err = gs->err;
			gs->last_out_s = (double)(now - gs->since_ms) / 1000.0;
			gs->recovered_ms = now;
			gs->err = 0;
			gs->offline = false;
			gs->last_report = 0;
			for (int d = 0; d < st->ndb; d++)
				if (st->w[d].sg == g)
					st->w[d].offline_rc = 0;
		} else {
			if (!gs->offline || gs->err != rc)
				fprintf(stderr,
					"mailbench store: storage group %d: recovery failed: %s\n",
					g, err);
			gs->offline = true;
			gs->err = rc;
			gs->last_report = rc;
		}
	}
}

void mb__groups_close_all(struct mb_store *st, int *rc_out)
{
	int rc = 0;
	for (int i = 0; i < st->ndb; i++) {
		struct dbw *w = &st->w[i];
		if (w->schema)
			mb_schema_close(w->schema);
		if (w->db) {
			int r2 = mb_db_close(w->db);
			rc = rc ? rc : r2;
		}
		w->schema = NULL;
		w->db = NULL;
		mb_buf_destroy(w->tmp);
		w->tmp = NULL;
		mb_val_free(&w->val);
		mb_val_free(&w->val2);
	}
	for (int g = 0; g < st->nsg; g++) {
		if (!st->sgs[g])
			continue;
		int r2 = mb_sg_checkpoint(st->sgs[g]);
		rc = rc ? rc : r2;
		r2 = mb_sg_close(st->sgs[g]);
		rc = rc ? rc : r2;
		st->sgs[g] = NULL;
	}
	if (rc_out)
		*rc_out = rc;
}
