/* db.c: storage groups, databases, pages in transactions, commit records,
 * checkpoints and crash recovery (see db.h for the model).
 *
 * Invariants:
 *  - a page changes only inside its database's transaction, after
 *    cache_txn_hold() kept its committed image (no-steal);
 *  - a commit turns every changed page into one log record (a delta of
 *    bytes 16.., or the whole page when its committed LSN is at or below the
 *    redo point of the newest checkpoint begun: torn-page protection), and the
 *    pages take the record's end LSN;
 *  - a checkpoint with redo R completes only after every page dirty before R
 *    is written and synced; log segments wholly below R are then removed;
 *  - recovery applies a record to a page only when the page's LSN is below
 *    the record's end, so replay is idempotent.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/hist.h"
#include "db/dbint.h"

struct mb_sg {
	char *dir, *log_dir;
	struct mb_io *io;
	bool own_io;
	struct mb_cache *cache;
	bool own_cache;
	struct mb_log *log;
	int lockfd;
	bool direct;
	pthread_mutex_t lock; /* dbs list */
	struct mb_db *dbs;
	pthread_mutex_t ckpt_lock;
	_Atomic uint64_t redo_started;
	pthread_t ckthr;
	pthread_mutex_t cklock;
	pthread_cond_t ckcond;
	bool ckstop, ckwant, ckstarted;
	uint64_t recovered;
	/* a database closed with pages it could not write: its changes exist only
	 * in the log, so no later checkpoint may move the redo point past them */
	_Atomic int ckpt_block;
};

/* tree handles are released by btree.c */
void bt_close_all(struct mb_db *db);

void mb_val_free(struct mb_val *v)
{
	free(v->data);
	v->data = NULL;
	v->len = v->cap = 0;
}

int db_seterr(struct mb_db *db, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(db->errmsg, sizeof(db->errmsg), fmt, ap);
	va_end(ap);
	return code;
}

struct mb_log *sg_log(struct mb_sg *sg)
{
	return sg->log;
}

const char *sg_dir(struct mb_sg *sg)
{
	return sg->dir;
}

struct mb_io *mb_sg_io(struct mb_sg *sg)
{
	return sg->io;
}

struct mb_cache *mb_sg_cache(struct mb_sg *sg)
{
	return sg->cache;
}

int sg_for_each_db(struct mb_sg *sg, int (*fn)(void *arg, struct mb_db *db), void *arg)
{
	pthread_mutex_lock(&sg->lock);
	int r = 0;
	for (struct mb_db *d = sg->dbs; d && r == 0; d = d->next)
		r = fn(arg, d);
	pthread_mutex_unlock(&sg->lock);
	return r;
}

/* ------------------------------ pages -------------------------------- */

int pg_get(struct mb_db *db, uint32_t pgno, struct frame **out)
{
	char why[256] = "";
	int r = cache_get(db->cf, pgno, CG_READ, out, why, sizeof(why));
	if (r < 0)
		return db_seterr(db, r, "%s: %s", db->path, why[0] ? why : mb_strerror(r));
	return 0;
}

int pg_write(struct mb_db *db, struct frame *fr)
{
	if (!db->in_txn)
		return db_seterr(db, MB_ESTATE, "%s: write outside a transaction", db->name);
	if (fr->txn_held)
		return 0;
	int r = cache_txn_hold(fr);
	if (r < 0)
		return r;
	fr->txn_next = db->txn_pages;
	db->txn_pages = fr;
	return 0;
}

int pg_alloc(struct mb_db *db, uint8_t type, struct frame **out)
{
	struct frame *h, *fr;
	int r = pg_get(db, 0, &h);
	if (r < 0)
		return r;
	if ((r = pg_write(db, h)) < 0)
		goto out;
	uint32_t head = rd32(h->data + HP_OFF_FREEHEAD);
	if (head) {
		if ((r = pg_get(db, head, &fr)) < 0)
			goto out;
		if (fr->data[PG_OFF_TYPE] != PT_FREE) {
			cache_put(fr);
			r = db_seterr(db, MB_ECORRUPT, "%s: page %u: on the free list but of type %u",
				      db->path, head, fr->data[PG_OFF_TYPE]);
			goto out;
		}
		if ((r = pg_write(db, fr)) < 0) {
			cache_put(fr);
			goto out;
		}
		wr32(h->data + HP_OFF_FREEHEAD, rd32(fr->data + PG_OFF_NEXT));
		wr32(h->data + HP_OFF_FREECOUNT, rd32(h->data + HP_OFF_FREECOUNT) - 1);
	} else {
		uint32_t pgno = rd32(h->data + HP_OFF_PAGECOUNT);
		if (pgno == UINT32_MAX) {
			r = MB_EFULL;
			goto out;
		}
		char why[256] = "";
		r = cache_get(db->cf, pgno, CG_NEW, &fr, why, sizeof(why));
		if (r < 0) {
			r = db_seterr(db, r, "%s: %s", db->path, why);
			goto out;
		}
		if ((r = pg_write(db, fr)) < 0) {
			cache_put(fr);
			goto out;
		}
		wr32(h->data + HP_OFF_PAGECOUNT, pgno + 1);
	}
	memset(fr->data + PG_DELTA_FROM, 0, db->page_size - PG_DELTA_FROM);
	fr->data[PG_OFF_TYPE] = type;
	if (type == PT_LEAF || type == PT_INTERNAL)
		wr16(fr->data + PG_OFF_CELLLO, (uint16_t)(db->page_size == 65536 ? 65535 : db->page_size));
	*out = fr;
out:
	cache_put(h);
	return r;
}

int pg_free(struct mb_db *db, uint32_t pgno)
{
	struct frame *h, *fr;
	int r = pg_get(db, 0, &h);
	if (r < 0)
		return r;
	if ((r = pg_write(db, h)) < 0)
		goto out;
	if ((r = pg_get(db, pgno, &fr)) < 0)
		goto out;
	if ((r = pg_write(db, fr)) == 0) {
		memset(fr->data + PG_DELTA_FROM, 0, db->page_size - PG_DELTA_FROM);
		fr->data[PG_OFF_TYPE] = PT_FREE;
		wr32(fr->data + PG_OFF_NEXT, rd32(h->data + HP_OFF_FREEHEAD));
		wr32(h->data + HP_OFF_FREEHEAD, pgno);
		wr32(h->data + HP_OFF_FREECOUNT, rd32(h->data + HP_OFF_FREECOUNT) + 1);
	}
	cache_put(fr);
out:
	cache_put(h);
	return r;
}

/* --------------------------- transactions ---------------------------- */

int mb_db_begin(struct mb_db *db)
{
	if (db->in_txn)
		return db_seterr(db, MB_ESTATE, "%s: a transaction is already open", db->name);
	int e = log_error(db->sg->log);
	if (e)
		return db_seterr(db, MB_ERDONLY, "%s: the log failed (%s): read-only until reopened",
				 db->name, mb_strerror(e));
	db->in_txn = true;
	db->txn_pages = NULL;
	return 0;
}

bool mb_db_in_txn(const struct mb_db *db)
{
	return db->in_txn;
}

static void txn_release_all(struct mb_db *db, uint64_t lsn)
{
	struct frame *f = db->txn_pages;
	while (f) {
		struct frame *n = f->txn_next;
		f->txn_next = NULL;
		cache_txn_release(f, lsn);
		f = n;
	}
	db->txn_pages = NULL;
	db->in_txn = false;
	db->modcount++;
}

int mb_db_abort(struct mb_db *db)
{
	if (!db->in_txn)
		return db_seterr(db, MB_ESTATE, "%s: no transaction", db->name);
	txn_release_all(db, 0);
	return 0;
}

static int scratch_reserve(struct mb_db *db, size_t need)
{
	if (need <= db->scratch_cap)
		return 0;
	size_t n = db->scratch_cap ? db->scratch_cap : 65536;
	while (n < need)
		n *= 2;
	uint8_t *p = realloc(db->scratch, n);
	if (!p)
		return MB_ENOMEM;
	db->scratch = p;
	db->scratch_cap = n;
	return 0;
}

/* Append the page's change to the scratch at *pos; false when unchanged. */
static bool encode_page(struct mb_db *db, struct frame *f, uint64_t redo, size_t *pos)
{
	uint32_t ps = db->page_size;
	const uint8_t *a = f->before, *b = f->data;
	uint8_t *out = db->scratch + *pos;
	bool full = rd64(a + PG_OFF_LSN) <= redo;
	size_t n = 9;
	if (!full) {
		uint32_t i = PG_DELTA_FROM;
		bool any = false;
		while (i < ps) {
			/* skip equal 8-byte words */
			while (i + 8 <= ps && !memcmp(a + i, b + i, 8))
				i += 8;
			while (i < ps && a[i] == b[i])
				i++;
			if (i >= ps)
				break;
			uint32_t s = i, gap = 0, e = i;
			while (i < ps && gap < 16) {
				if (a[i] != b[i]) {
					e = i + 1;
					gap = 0;
				} else {
					gap++;
				}
				i++;
			}
			uint32_t len = e - s;
			if (n + 4 + len > ps / 2) {
				full = true;
				break;
			}
			wr16(out + n, (uint16_t)s);
			wr16(out + n + 2, (uint16_t)len);
			memcpy(out + n + 4, b + s, len);
			n += 4 + len;
			any = true;
			i = e;
		}
		if (!full && !any)
			return false;
	}
	if (full) {
		n = 9;
		memcpy(out + n, b + PG_DELTA_FROM, ps - PG_DELTA_FROM);
		n += ps - PG_DELTA_FROM;
	}
	wr32(out, f->pgno);
	out[4] = full ? 1 : 2;
	wr32(out + 5, (uint32_t)(n - 9));
	*pos += n;
	return true;
}

/* cb: the async completion, registered atomically with the record (so a
 * log failure right after the append still reaches it); when the
 * transaction changed nothing, *end is the log's end and cb is NOT queued
 * (*queued false) */
static int commit_common(struct mb_db *db, uint64_t *end, mb_commit_cb cb, void *arg,
			 uint64_t t0, bool *queued)
{
	*queued = false;
	if (!db->in_txn)
		return db_seterr(db, MB_ESTATE, "%s: no transaction", db->name);
	size_t nlen = strlen(db->name), npages = 0;
	for (struct frame *f = db->txn_pages; f; f = f->txn_next)
		npages++;
	int r = scratch_reserve(db, 1 + nlen + npages * (db->page_size + 9));
	if (r < 0) {
		txn_release_all(db, 0);
		return r;
	}
	size_t pos = 0;
	db->scratch[pos++] = (uint8_t)nlen;
	memcpy(db->scratch + pos, db->name, nlen);
	pos += nlen;
	uint64_t redo = atomic_load(&db->sg->redo_started);
	uint32_t count = 0;
	for (struct frame *f = db->txn_pages; f; f = f->txn_next)
		if (encode_page(db, f, redo, &pos))
			count++;
	if (count == 0) {
		txn_release_all(db, 0);
		*end = log_append_lsn(db->sg->log);
		return 0;
	}
	r = log_append_cb(db->sg->log, LOG_TXN, count, db->scratch, pos, end, cb, arg, t0);
	if (r < 0) {
		txn_release_all(db, 0);
		return db_seterr(db, r, "%s: commit refused: %s", db->name, mb_strerror(r));
	}
	*queued = cb != NULL;
	uint64_t redo2 = atomic_load(&db->sg->redo_started);
	if (redo2 != redo) {
		/* a checkpoint began between choosing full images and appending:
		 * log the pages again under the new redo point (full images where
		 * now needed; deltas are absolute bytes, so replaying both is
		 * harmless), so torn-page protection holds from the new redo on.
		 * The first record alone already holds the whole transaction. */
		pos = 1 + nlen;
		count = 0;
		for (struct frame *f = db->txn_pages; f; f = f->txn_next)
			if (encode_page(db, f, redo2, &pos))
				count++;
		uint64_t end2;
		if (log_append(db->sg->log, LOG_TXN, count, db->scratch, pos, &end2) == 0)
			*end = end2;
	}
	txn_release_all(db, *end);
	return 0;
}

int mb_db_commit(struct mb_db *db)
{
	uint64_t t0 = mb_io_now_ns(), end;
	bool queued;
	int r = commit_common(db, &end, NULL, NULL, 0, &queued);
	if (r < 0)
		return r;
	r = log_wait(db->sg->log, end);
	if (r < 0)
		return db_seterr(db, r, "%s: commit not durable: %s", db->name, mb_strerror(r));
	log_note_commit(db->sg->log, t0);
	return 0;
}

int mb_db_commit_async(struct mb_db *db, mb_commit_cb cb, void *arg)
{
	uint64_t t0 = mb_io_now_ns(), end;
	bool queued;
	int r = commit_common(db, &end, cb, arg, t0, &queued);
	if (r < 0 || queued)
		return r;
	/* nothing changed: complete after what was committed before */
	return log_wait_async(db->sg->log, end, cb, arg, t0);
}

/* ----------------------------- databases ----------------------------- */

static int db_create_file(struct mb_sg *sg, const char *path, uint32_t ps)
{
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	struct mb_file *f;
	int r = mb_io_open(sg->io, tmp, MB_IO_CREATE | MB_IO_TRUNC | (sg->direct ? MB_IO_DIRECT : 0),
			   MB_FILE_DB, &f);
	if (r < 0)
		return r;
	uint8_t *p = mb_io_alloc(2 * ps);
	if (!p) {
		mb_file_close(f);
		return MB_ENOMEM;
	}
	memset(p, 0, 2 * ps);
	p[PG_OFF_TYPE] = PT_HEADER;
	memcpy(p + HP_OFF_MAGIC, HP_MAGIC, 8);
	wr32(p + HP_OFF_PAGESIZE, ps);
	wr32(p + HP_OFF_PAGECOUNT, 2);
	wr32(p + HP_OFF_CATALOG, CATALOG_ROOT);
	mb_page_seal(p, ps);
	uint8_t *c = p + ps;
	wr32(c + PG_OFF_PGNO, CATALOG_ROOT);
	c[PG_OFF_TYPE] = PT_LEAF;
	wr16(c + PG_OFF_CELLLO, (uint16_t)ps);
	mb_page_seal(c, ps);
	r = mb_file_write(f, p, 2 * ps, 0);
	if (r == 0)
		r = mb_file_sync(f, false);
	mb_file_close(f);
	mb_io_free(p);
	if (r == 0)
		r = mb_io_rename(sg->io, tmp, path);
	if (r == 0)
		r = mb_io_sync_dir(sg->io, sg->dir);
	if (r < 0)
		mb_io_unlink(sg->io, tmp);
	return r;
}

static int db_open_internal(struct mb_sg *sg, const char *name, uint32_t page_size, int flags,
			    bool recovery, struct mb_db **out)
{
	if (!name || !*name || strchr(name, '/') || strlen(name) > 200)
		return MB_EINVAL;
	if (page_size == 0)
		page_size = MB_PAGE_SIZE_DEFAULT;
	if (page_size != 4096 && page_size != 8192 && page_size != 32768)
		return MB_EINVAL;
	struct mb_db *db = calloc(1, sizeof(*db));
	if (!db)
		return MB_ENOMEM;
	db->sg = sg;
	db->recovery = recovery;
	db->name = strdup(name);
	size_t pl = strlen(sg->dir) + strlen(name) + 2;
	db->path = malloc(pl);
	if (!db->name || !db->path) {
		free(db->name);
		free(db->path);
		free(db);
		return MB_ENOMEM;
	}
	snprintf(db->path, pl, "%s/%s", sg->dir, name);

	pthread_mutex_lock(&sg->lock);
	for (struct mb_db *d = sg->dbs; d; d = d->next) {
		if (!strcmp(d->name, name)) {
			pthread_mutex_unlock(&sg->lock);
			free(db->name);
			free(db->path);
			free(db);
			return MB_EBUSY;
		}
	}
	int r = 0;
	struct stat st;
	if (stat(db->path, &st) < 0) {
		if (!(flags & MB_DB_CREATE) || recovery)
			r = MB_ENOTFOUND;
		else
			r = db_create_file(sg, db->path, page_size);
	} else if ((flags & MB_DB_CREATE) && (flags & MB_DB_EXCL)) {
		r = MB_EEXIST;
	}
	if (r == 0)
		r = mb_io_open(sg->io, db->path, sg->direct ? MB_IO_DIRECT : 0, MB_FILE_DB, &db->file);
	uint8_t *p = NULL;
	if (r == 0) {
		p = mb_io_alloc(4096);
		r = p ? mb_file_read(db->file, p, 4096, 0) : MB_ENOMEM;
		if (r == MB_ERANGE)
			r = MB_ECORRUPT;
	}
	if (r == 0) {
		db->page_size = rd32(p + HP_OFF_PAGESIZE);
		if (memcmp(p + HP_OFF_MAGIC, HP_MAGIC, 8) ||
		    (db->page_size != 4096 && db->page_size != 8192 && db->page_size != 32768)) {
			r = db_seterr(db, MB_ECORRUPT, "%s: not a mailbench database (bad header)",
				      db->path);
		}
	}
	mb_io_free(p);
	if (r == 0)
		r = cache_file_add(sg->cache, db->file, db->page_size, sg->log, &db->cf);
	if (r == 0) {
		db->tmp = malloc(db->page_size);
		if (!db->tmp)
			r = MB_ENOMEM;
	}
	if (r == 0 && !recovery) {
		struct frame *h;
		r = pg_get(db, 0, &h);
		if (r == 0)
			cache_put(h);
	}
	if (r < 0) {
		pthread_mutex_unlock(&sg->lock);
		if (db->cf)
			cache_file_remove(sg->cache, db->cf);
		mb_file_close(db->file);
		free(db->tmp);
		free(db->name);
		free(db->path);
		free(db);
		return r;
	}
	db->next = sg->dbs;
	sg->dbs = db;
	pthread_mutex_unlock(&sg->lock);
	*out = db;
	return 0;
}

int mb_db_open(struct mb_sg *sg, const char *name, uint32_t page_size, int flags,
	       struct mb_db **out)
{
	return db_open_internal(sg, name, page_size, flags, false, out);
}

int mb_db_close(struct mb_db *db)
{
	if (!db)
		return 0;
	struct mb_sg *sg = db->sg;
	if (db->in_txn)
		txn_release_all(db, 0);
	bt_close_all(db);
	pthread_mutex_lock(&sg->lock);
	struct mb_db **pp = &sg->dbs;
	while (*pp && *pp != db)
		pp = &(*pp)->next;
	if (*pp)
		*pp = db->next;
	int r = cache_file_remove(sg->cache, db->cf);
	pthread_mutex_unlock(&sg->lock);
	int r2 = mb_file_sync(db->file, true);
	if ((r < 0 || r2 < 0) && !atomic_load(&sg->ckpt_block))
		atomic_store(&sg->ckpt_block, r < 0 ? r : r2);
	mb_file_close(db->file);
	free(db->scratch);
	free(db->tmp);
	free(db->name);
	free(db->path);
	free(db);
	return r < 0 ? r : r2;
}

uint32_t mb_db_page_size(const struct mb_db *db)
{
	return db->page_size;
}

const char *mb_db_name(const struct mb_db *db)
{
	return db->name;
}

const char *mb_db_errmsg(const struct mb_db *db)
{
	return db->errmsg;
}

void mb_db_pages(const struct mb_db *db, uint64_t *total, uint64_t *free_pages)
{
	struct frame *h;
	*total = *free_pages = 0;
	if (pg_get((struct mb_db *)db, 0, &h) < 0)
		return;
	*total = rd32(h->data + HP_OFF_PAGECOUNT);
	*free_pages = rd32(h->data + HP_OFF_FREECOUNT);
	cache_put(h);
}

/* ---------------------------- checkpoints ---------------------------- */

int mb_sg_checkpoint(struct mb_sg *sg)
{
	int blocked = atomic_load(&sg->ckpt_block);
	if (blocked)
		return blocked;
	pthread_mutex_lock(&sg->ckpt_lock);
	uint64_t redo = log_append_lsn(sg->log);
	atomic_store(&sg->redo_started, redo);
	int r = log_wait(sg->log, redo);
	if (r == 0) {
		pthread_mutex_lock(&sg->lock);
		for (struct mb_db *d = sg->dbs; d && r == 0; d = d->next) {
			r = cache_file_flush(sg->cache, d->cf);
			if (r == 0)
				r = mb_file_sync(d->file, true);
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

int mb_sg_flush(struct mb_sg *sg)
{
	return log_wait(sg->log, log_append_lsn(sg->log));
}

int mb_sg_error(const struct mb_sg *sg)
{
	return log_error(sg->log);
}

void mb_sg_stats_get(struct mb_sg *sg, struct mb_sg_stats *out)
{
	memset(out, 0, sizeof(*out));
	log_stats(sg->log, out);
	out->recovered_records = sg->recovered;
}

void mb_sg_commit_hist_take(struct mb_sg *sg, struct mb_hist *dst)
{
	log_commit_hist_take(sg->log, dst);
}

void mb_sg_logwrite_hist_take(struct mb_sg *sg, struct mb_hist *dst)
{
	log_write_hist_take(sg->log, dst);
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
	int r = db_open_internal(rp->sg, name, 0, 0, true, &db);
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
		return 0;
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
						uint16_t off = rd16(p + pos + q), n = rd16(p + pos + q + 2);
						if (off < PG_DELTA_FROM || (uint32_t)off + n > ps ||
						    q + 4 + n > dl)
							break;
						memcpy(f->data + off, p + pos + q + 4, n);
						q += 4 + (size_t)n;
					}
				}
				wr32(f->data + PG_OFF_PGNO, pgno);
				txn_release_all(db, end);
			}
			db->in_txn = false;
		}
		cache_put(f);
		pos += dl;
	}
	return 0;
}

/* ---------------------------- groups --------------------------------- */

static int mkdir_p(const char *path)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = 0;
			if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
				return mb_from_errno(errno);
			*p = '/';
		}
	}
	if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
		return mb_from_errno(errno);
	return 0;
}

void mb_sg_options_init(struct mb_sg_options *o)
{
	memset(o, 0, sizeof(*o));
	o->cache_mb = 64;
	o->checkpoint_bytes = 32u << 20;
}

static void sg_free(struct mb_sg *sg)
{
	if (sg->log)
		log_close(sg->log);
	if (sg->own_cache)
		mb_cache_destroy(sg->cache);
	if (sg->own_io)
		mb_io_destroy(sg->io);
	if (sg->lockfd >= 0)
		close(sg->lockfd);
	pthread_mutex_destroy(&sg->lock);
	pthread_mutex_destroy(&sg->ckpt_lock);
	pthread_mutex_destroy(&sg->cklock);
	pthread_cond_destroy(&sg->ckcond);
	free(sg->dir);
	free(sg->log_dir);
	free(sg);
}

int mb_sg_open(const struct mb_sg_options *o, struct mb_sg **out)
{
	if (!o || !o->dir)
		return MB_EINVAL;
	struct mb_sg *sg = calloc(1, sizeof(*sg));
	if (!sg)
		return MB_ENOMEM;
	sg->lockfd = -1;
	pthread_mutex_init(&sg->lock, NULL);
	pthread_mutex_init(&sg->ckpt_lock, NULL);
	pthread_mutex_init(&sg->cklock, NULL);
	pthread_cond_init(&sg->ckcond, NULL);
	sg->direct = !o->no_direct;
	sg->dir = strdup(o->dir);
	if (o->log_dir) {
		sg->log_dir = strdup(o->log_dir);
	} else if (sg->dir) {
		size_t n = strlen(sg->dir) + 5;
		sg->log_dir = malloc(n);
		if (sg->log_dir)
			snprintf(sg->log_dir, n, "%s/log", sg->dir);
	}
	int r = (sg->dir && sg->log_dir) ? 0 : MB_ENOMEM;
	struct stat st;
	if (r == 0 && stat(sg->dir, &st) < 0)
		r = o->create ? mkdir_p(sg->dir) : MB_ENOTFOUND;
	if (r == 0 && stat(sg->log_dir, &st) < 0)
		r = o->create ? mkdir_p(sg->log_dir) : MB_ENOTFOUND;
	if (r == 0) {
		char lp[4200];
		snprintf(lp, sizeof(lp), "%s/LOCK", sg->dir);
		sg->lockfd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (sg->lockfd < 0)
			r = mb_from_errno(errno);
		else if (flock(sg->lockfd, LOCK_EX | LOCK_NB) < 0)
			r = MB_EBUSY;
	}
	if (r == 0) {
		if (o->io) {
			sg->io = o->io;
		} else {
			r = mb_io_create(o->vfs, &sg->io);
			sg->own_io = r == 0;
		}
	}
	if (r == 0) {
		if (o->cache) {
			sg->cache = o->cache;
		} else {
			r = mb_cache_create((uint64_t)(o->cache_mb ? o->cache_mb : 64) << 20,
					    &sg->cache);
			sg->own_cache = r == 0;
		}
	}
	if (r == 0)
		r = log_open(sg->io, sg->log_dir, &sg->log);
	uint64_t redo = 0, end = 0;
	if (r == 0) {
		r = log_read_checkpoint(sg->log, &redo);
		if (r == MB_ENOTFOUND) {
			redo = 0;
			r = log_write_checkpoint(sg->log, 0);
		}
	}
	if (r == 0)
		r = log_scan(sg->log, redo, NULL, NULL, &end, NULL);
	if (r == 0)
		r = log_start(sg->log, end);
	if (r == 0 && end > redo) {
		/* replay from the checkpoint; durable is already the end */
		struct replay rp = {.sg = sg};
		uint64_t e2, n = 0;
		atomic_store(&sg->redo_started, redo);
		r = log_scan(sg->log, redo, replay_rec, &rp, &e2, &n);
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
	}
	if (r == 0) {
		atomic_store(&sg->redo_started, redo);
		uint64_t cb = o->checkpoint_bytes ? o->checkpoint_bytes : (32u << 20);
		if (cb != UINT64_MAX)
			log_set_ckpt_trigger(sg->log, cb, ckpt_trigger, sg);
		if (pthread_create(&sg->ckthr, NULL, ckpt_main, sg) != 0)
			r = MB_ESYS;
		else
			sg->ckstarted = true;
	}
	if (r < 0) {
		sg_free(sg);
		return r;
	}
	*out = sg;
	return 0;
}

int mb_sg_close(struct mb_sg *sg)
{
	if (!sg)
		return 0;
	for (;;) {
		pthread_mutex_lock(&sg->lock);
		struct mb_db *d = sg->dbs;
		pthread_mutex_unlock(&sg->lock);
		if (!d)
			break;
		mb_db_close(d);
	}
	if (sg->ckstarted) {
		pthread_mutex_lock(&sg->cklock);
		sg->ckstop = true;
		pthread_cond_signal(&sg->ckcond);
		pthread_mutex_unlock(&sg->cklock);
		pthread_join(sg->ckthr, NULL);
	}
	int r = log_error(sg->log);
	if (r == 0)
		r = mb_sg_checkpoint(sg);
	sg_free(sg);
	return r;
}
