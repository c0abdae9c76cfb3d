/* recover.c: checkpoints (on demand and on the group's checkpointer thread)
 * and crash recovery (replay of the log from the last checkpoint's redo
 * point when a group opens); see recover.h.
 *
 * Invariants:
 *  - a checkpoint with redo R completes only after every page dirty before R
 *    is written and synced; log segments wholly below R are then removed;
 *  - no checkpoint runs while a database closed with pages it could not
 *    write (sg->ckpt_block): its changes exist only in the log;
 *  - recovery applies a record to a page only when the page's LSN is below
 *    the record's end, so replay is idempotent;
 *  - a record for a database that cannot be opened is skipped with a
 *    message on stderr (the rest of the group recovers).
 *
 * Checkpointer thread:
 *
 *   waiting --log passed checkpoint_bytes (ckpt_trigger)--> checkpointing
 *      ^                                                        |
 *      +--------------------------------------------------------+
 *   waiting/checkpointing --ckpt_stop--> joined
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"
#include "db/dbint.h"
#include "db/group.h"
#include "db/pager.h"
#include "db/recover.h"

int mb_sg_checkpoint(struct mb_sg *sg)
{
	int blocked = atomic_load(&sg->ckpt_block);
	if (blocked)
		return blocked;
	/* never move the redo point of a group in the ERROR state: pages may
	 * be missing from its files; its log is what recovers them */
	if ((blocked = log_error(sg->log)) != 0)
		return blocked;
	pthread_mutex_lock(&sg->ckpt_lock);
	uint64_t redo = log_append_lsn(sg->log);
	atomic_store(&sg->redo_started, redo);
	int r = log_wait(sg->log, redo);
	if (r == 0) {
		pthread_mutex_lock(&sg->lock);
		for (struct mb_db *d = sg->dbs; d && r == 0; d = d->next) {
			r = cache_file_flush(sg->cache, d->cf);
			if (r == 0 && (r = mb_file_sync(d->file, true)) < 0) {
				/* the pages of this file since its last good sync may be
				 * lost (a later fsync could succeed without them): the
				 * group is recovered from its log, never checkpointed */
				char what[160];
				snprintf(what, sizeof(what), "database sync failed: %s", d->name);
				log_fail(sg->log, r, what);
			}
		}
		pthread_mutex_unlock(&sg->lock);
	}
	if (r == 0)
		r = log_write_checkpoint(sg->log, redo);
	if (r == 0)
		r = log_remove_before(sg->log, redo);
	pthread_mutex_unlock(&sg->ckpt_lock);
	return r;
}

static void ckpt_trigger(void *arg)
{
	struct mb_sg *sg = arg;
	pthread_mutex_lock(&sg->cklock);
	sg->ckwant = true;
	pthread_cond_signal(&sg->ckcond);
	pthread_mutex_unlock(&sg->cklock);
}

static void *ckpt_main(void *arg)
{
	struct mb_sg *sg = arg;
	pthread_mutex_lock(&sg->cklock);
	while (!sg->ckstop) {
		if (!sg->ckwant) {
			pthread_cond_wait(&sg->ckcond, &sg->cklock);
			continue;
		}
		sg->ckwant = false;
		pthread_mutex_unlock(&sg->cklock);
		mb_sg_checkpoint(sg);
		pthread_mutex_lock(&sg->cklock);
	}
	pthread_mutex_unlock(&sg->cklock);
	return NULL;
}

int ckpt_start(struct mb_sg *sg, uint64_t checkpoint_bytes)
{
	if (checkpoint_bytes != UINT64_MAX)
		log_set_ckpt_trigger(sg->log, checkpoint_bytes, ckpt_trigger, sg);
	if (pthread_create(&sg->ckthr, NULL, ckpt_main, sg) != 0)
		return MB_ESYS;
	sg->ckstarted = true;
	return 0;
}

void ckpt_stop(struct mb_sg *sg)
{
	if (!sg->ckstarted)
		return;
	pthread_mutex_lock(&sg->cklock);
	sg->ckstop = true;
	pthread_cond_signal(&sg->ckcond);
	pthread_mutex_unlock(&sg->cklock);
	pthread_join(sg->ckthr, NULL);
	sg->ckstarted = false;
}

/* ------------------------------ recovery ----------------------------- */

struct replay {
	struct mb_sg *sg;
	struct mb_db *dbs[64];
	char *names[64];
	int n;
	char *missing[8];
	int nmissing;
	int err;
};

static struct mb_db *replay_db(struct replay *rp, const char *name)
{
	for (int i = 0; i < rp->n; i++)
		if (!strcmp(rp->names[i], name))
			return rp->dbs[i];
	for (int i = 0; i < rp->nmissing; i++)
		if (!strcmp(rp->missing[i], name))
			return NULL;
	if (rp->n == 64) {
		/* keep the table small: close the oldest (its pages get flushed) */
		mb_db_close(rp->dbs[0]);
		free(rp->names[0]);
		memmove(rp->dbs, rp->dbs + 1, 63 * sizeof(rp->dbs[0]));
		memmove(rp->names, rp->names + 1, 63 * sizeof(rp->names[0]));
		rp->n--;
	}
	struct mb_db *db;
	int r = db_open_file(rp->sg, name, 0, 0, true, &db);
	if (r < 0 && r != MB_ENOTFOUND && r != MB_ECORRUPT) {
		/* not a deleted file or a bad header: an I/O error (EIO, no
		 * descriptor, ...).  Skipping its records would let the checkpoint
		 * after the replay discard them for good: the recovery fails
		 * instead (retried) */
		fprintf(stderr, "mailbench: recovery: %s/%s: %s; recovery stops\n", rp->sg->dir,
			name, mb_strerror(r));
		rp->err = r;
		return NULL;
	}
	if (r < 0) {
		fprintf(stderr, "mailbench: recovery: %s/%s: %s; its log records are skipped\n",
			rp->sg->dir, name, mb_strerror(r));
		if (rp->nmissing < 8)
			rp->missing[rp->nmissing++] = strdup(name);
		return NULL;
	}
	rp->names[rp->n] = strdup(name);
	rp->dbs[rp->n++] = db;
	return db;
}

static int replay_rec(void *arg, uint64_t lsn, uint64_t end, uint32_t type, const uint8_t *p,
		      size_t len, uint32_t count)
{
	struct replay *rp = arg;
	if (type != LOG_TXN || len < 1)
		return 0;
	size_t nlen = p[0];
	if (1 + nlen > len)
		return 0;
	char name[256];
	memcpy(name, p + 1, nlen);
	name[nlen] = 0;
	struct mb_db *db = replay_db(rp, name);
	if (!db)
		return rp->err; /* 0: a deleted or damaged database, its records skipped */
	size_t pos = 1 + nlen;
	uint32_t ps = db->page_size;
	for (uint32_t i = 0; i < count && pos + 9 <= len; i++) {
		uint32_t pgno = rd32(p + pos);
		uint8_t kind = p[pos + 4];
		uint32_t dl = rd32(p + pos + 5);
		pos += 9;
		if (pos + dl > len)
			break;
		struct frame *f;
		char why[256] = "";
		int r = cache_get(db->cf, pgno, CG_ALLOW_BAD, &f, why, sizeof(why));
		if (r < 0) {
			fprintf(stderr, "mailbench: recovery: %s: %s\n", db->path, why);
			rp->err = r;
			return r;
		}
		if (f->lsn < end) {
			db->in_txn = true;
			r = pg_write(db, f);
			if (r == 0) {
				if (kind == 1 && dl == ps - PG_DELTA_FROM) {
					memcpy(f->data + PG_DELTA_FROM, p + pos, dl);
				} else {
					size_t q = 0;
					while (q + 4 <= dl) {
						uint16_t off = rd16(p + pos + q),
							 n = rd16(p + pos + q + 2);
						if (off < PG_DELTA_FROM || (uint32_t)off + n > ps ||
						    q + 4 + n > dl)
							break;
						memcpy(f->data + off, p + pos + q + 4, n);
						q += 4 + (size_t)n;
					}
				}
				wr32(f->data + PG_OFF_PGNO, pgno);
				pg_release_all(db, end);
			}
			db->in_txn = false;
		}
		cache_put(f);
		pos += dl;
	}
	return 0;
}

int sg_replay(struct mb_sg *sg, uint64_t redo)
{
	struct replay rp = {.sg = sg};
	uint64_t e2, n = 0;
	atomic_store(&sg->redo_started, redo);
	int r = log_scan(sg->log, redo, replay_rec, &rp, &e2, &n);
	sg->recovered = n;
	if (r == 0)
		r = mb_sg_checkpoint(sg);
	for (int i = 0; i < rp.n; i++) {
		int r2 = mb_db_close(rp.dbs[i]);
		if (r == 0)
			r = r2;
		free(rp.names[i]);
	}
	for (int i = 0; i < rp.nmissing; i++)
		free(rp.missing[i]);
	return r;
}
