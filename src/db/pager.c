/* pager.c: database files and their pages: create, open and close a
 * database of a storage group, and get, change, allocate and free its pages
 * through the cache (see pager.h; transactions are txn.c, the group and its
 * log group.c).
 *
 * Invariants:
 *  - a page changes only inside its database's transaction, after
 *    cache_txn_hold() kept its committed image (no-steal); pg_write puts the
 *    frame on the transaction's list once, pg_release_all ends them all
 *    (commit with the record's LSN, or abort);
 *  - page 0 is the header (page count, free-list head and count), page 1 the
 *    catalog root; free pages are reused before the file grows;
 *  - the free list is a chain of trunk pages (type PT_FREE, linked by
 *    PG_OFF_NEXT from the header's head), each listing up to
 *    (page size - PG_HDR) / 4 free page numbers (PG_OFF_NKEYS of them,
 *    after the page header); the header's free count counts trunks and
 *    listed pages.  Freeing a page writes its number into the head trunk,
 *    so freeing does not dirty the page freed (the B+tree still reads an
 *    overflow chain to learn its pages; only when the head trunk is full
 *    does the freed page become the new head); a trunk with no entries is
 *    itself the next page allocated.  A chain written before trunks held
 *    entries (format 2) is a chain of trunks with none;
 *  - a new database file is written and synced under NAME.tmp and renamed,
 *    so a crash never leaves a half-made database;
 *  - the pager never calls up into the layers built on it: btree.c and
 *    bulk.c register a close hook (db_on_close) that mb_db_close runs
 *    first.
 *
 * Life of a database handle:
 *
 *   db_open_file --> open --mb_db_begin--> in txn --commit/abort--> open
 *                     |
 *                     +--mb_db_close: hooks (bulk, trees), dirty frames
 *                        written, file synced --> freed
 *   (a close that cannot write its pages blocks later checkpoints of the
 *   group: the changes then exist only in the log)
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "core/error.h"
#include "db/dbint.h"
#include "db/group.h"
#include "db/pager.h"

int db_seterr(struct mb_db *db, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(db->errmsg, sizeof(db->errmsg), fmt, ap);
	va_end(ap);
	return code;
}

void db_on_close(struct mb_db *db, enum db_hook which, void (*fn)(struct mb_db *db))
{
	db->close_hook[which] = fn;
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

static uint32_t trunk_cap(const struct mb_db *db) { return (db->page_size - PG_HDR) / 4; }

/* The trunk page at pgno (pinned): 0, or MB_ECORRUPT when it is not one. */
static int trunk_get(struct mb_db *db, uint32_t pgno, struct frame **out)
{
	int r = pg_get(db, pgno, out);
	if (r < 0)
		return r;
	uint8_t t = (*out)->data[PG_OFF_TYPE];
	uint16_t n = rd16((*out)->data + PG_OFF_NKEYS);
	if (t != PT_FREE || n > trunk_cap(db)) {
		cache_put(*out);
		return db_seterr(db, MB_ECORRUPT,
				 "%s: page %u: on the free list but of type %u with %u entries",
				 db->path, pgno, t, n);
	}
	return 0;
}

/* The header (pinned, changed in the transaction) and the free list's
 * head trunk (pinned; NULL when the list is empty): 0 or an error, with
 * nothing pinned. */
static int free_list_head(struct mb_db *db, struct frame **h, struct frame **tr)
{
	*tr = NULL;
	int r = pg_get(db, 0, h);
	if (r < 0)
		return r;
	uint32_t head = rd32((*h)->data + HP_OFF_FREEHEAD);
	if ((r = pg_write(db, *h)) < 0 || (head && (r = trunk_get(db, head, tr)) < 0)) {
		cache_put(*h);
		return r;
	}
	return 0;
}

int pg_alloc(struct mb_db *db, uint8_t type, struct frame **out)
{
	struct frame *h, *tr, *fr = NULL;
	int r = free_list_head(db, &h, &tr);
	if (r < 0)
		return r;
	uint32_t head = rd32(h->data + HP_OFF_FREEHEAD);
	if (tr) {
		uint16_t n = rd16(tr->data + PG_OFF_NKEYS);
		if (n > 0) {
			/* the last page the head trunk lists: checked and held before
			 * the trunk changes, so a failure changes nothing.  Not read:
			 * its old bytes are overwritten, and a frame made new (zeros,
			 * LSN 0) is logged as a full image, as an extension page is */
			uint32_t pgno = rd32(tr->data + PG_HDR + 4u * (n - 1u));
			char why[256] = "";
			if (pgno < 2 || pgno >= rd32(h->data + HP_OFF_PAGECOUNT) || pgno == head)
				r = db_seterr(db, MB_ECORRUPT,
					      "%s: page %u: lists page %u as free, outside the "
					      "file or itself",
					      db->path, head, pgno);
			else if ((r = cache_get(db->cf, pgno, CG_NEW, &fr, why, sizeof(why))) < 0)
				r = db_seterr(db, r, "%s: %s", db->path, why);
			else if ((r = pg_write(db, fr)) < 0)
				cache_put(fr);
			if (r == 0 && (r = pg_write(db, tr)) < 0)
				cache_put(fr);
			if (r == 0)
				wr16(tr->data + PG_OFF_NKEYS, (uint16_t)(n - 1));
			cache_put(tr);
			if (r < 0)
				goto out;
		} else if ((r = pg_write(db, tr)) < 0) {
			cache_put(tr);
			goto out;
		} else {
			/* an empty trunk: itself, and the next trunk is the head */
			fr = tr;
			wr32(h->data + HP_OFF_FREEHEAD, rd32(tr->data + PG_OFF_NEXT));
		}
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
		wr16(fr->data + PG_OFF_CELLLO,
		     (uint16_t)(db->page_size == 65536 ? 65535 : db->page_size));
	*out = fr;
out:
	cache_put(h);
	return r;
}

int pg_free(struct mb_db *db, uint32_t pgno)
{
	struct frame *h, *tr, *fr;
	int r = free_list_head(db, &h, &tr);
	if (r < 0)
		return r;
	uint32_t head = rd32(h->data + HP_OFF_FREEHEAD);
	if (pgno < 2 || pgno >= rd32(h->data + HP_OFF_PAGECOUNT) || pgno == head) {
		if (tr)
			cache_put(tr);
		r = db_seterr(db, MB_ECORRUPT, "%s: page %u freed: outside the file or a trunk",
			      db->path, pgno);
		goto out;
	}
	if (tr) {
		uint16_t n = rd16(tr->data + PG_OFF_NKEYS);
		if (n < trunk_cap(db)) {
			/* listed in the head trunk: the freed page is not touched;
			 * the file is format 3 from the first listed page on */
			if ((r = pg_write(db, tr)) == 0) {
				wr32(tr->data + PG_HDR + 4u * n, pgno);
				wr16(tr->data + PG_OFF_NKEYS, (uint16_t)(n + 1));
				wr32(h->data + HP_OFF_FREECOUNT,
				     rd32(h->data + HP_OFF_FREECOUNT) + 1);
				memcpy(h->data + HP_OFF_MAGIC, HP_MAGIC, 8);
			}
			cache_put(tr);
			goto out;
		}
		cache_put(tr);
	}
	/* the head trunk is full (or there is none): the page is the new head */
	if ((r = pg_get(db, pgno, &fr)) < 0)
		goto out;
	if ((r = pg_write(db, fr)) == 0) {
		memset(fr->data + PG_DELTA_FROM, 0, db->page_size - PG_DELTA_FROM);
		fr->data[PG_OFF_TYPE] = PT_FREE;
		wr32(fr->data + PG_OFF_NEXT, head);
		wr32(h->data + HP_OFF_FREEHEAD, pgno);
		wr32(h->data + HP_OFF_FREECOUNT, rd32(h->data + HP_OFF_FREECOUNT) + 1);
	}
	cache_put(fr);
out:
	cache_put(h);
	return r;
}

void pg_release_all(struct mb_db *db, uint64_t lsn)
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

/* ----------------------------- databases ----------------------------- */

static int db_create_file(struct mb_sg *sg, const char *path, uint32_t ps)
{
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	struct mb_file *f;
	int r =
	    mb_io_open(sg->io, tmp, MB_IO_CREATE | MB_IO_TRUNC | (sg->direct ? MB_IO_DIRECT : 0),
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

/* Why this thread's last db_open_file failed, naming the file ("" when it
 * failed before it had one): per thread, as errno, since the failed open
 * leaves no mb_db to ask. */
static _Thread_local char open_err[512];

int db_open_file(struct mb_sg *sg, const char *name, uint32_t page_size, int flags, bool recovery,
		 struct mb_db **out)
{
	open_err[0] = '\0';
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
		r = mb_io_open(sg->io, db->path, sg->direct ? MB_IO_DIRECT : 0, MB_FILE_DB,
			       &db->file);
	uint8_t *p = NULL;
	if (r == 0) {
		p = mb_io_alloc(4096);
		r = p ? mb_file_read(db->file, p, 4096, 0) : MB_ENOMEM;
		if (r == MB_ERANGE)
			r = MB_ECORRUPT;
	}
	if (r == 0) {
		db->page_size = rd32(p + HP_OFF_PAGESIZE);
		if (!memcmp(p + HP_OFF_MAGIC, HP_MAGIC_V1, 8)) {
			r = db_seterr(
			    db, MB_EUNSUPPORTED,
			    "%s: written by an earlier mailbench (database format 1); run "
			    "`mailbench init` on a new data directory",
			    db->path);
		} else if (!memcmp(p + HP_OFF_MAGIC, "MBDB", 4) &&
			   memcmp(p + HP_OFF_MAGIC, HP_MAGIC, 8) > 0) {
			r = db_seterr(db, MB_EUNSUPPORTED,
				      "%s: written by a later mailbench (database format %.4s); "
				      "use that version or a new data directory",
				      db->path, (const char *)p + HP_OFF_MAGIC + 4);
		} else if ((memcmp(p + HP_OFF_MAGIC, HP_MAGIC, 8) &&
			    memcmp(p + HP_OFF_MAGIC, HP_MAGIC_V2, 8)) ||
			   (db->page_size != 4096 && db->page_size != 8192 &&
			    db->page_size != 32768)) {
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
		if (db->errmsg[0])
			snprintf(open_err, sizeof(open_err), "%s", db->errmsg);
		else
			snprintf(open_err, sizeof(open_err), "%s: %s", db->path, mb_strerror(r));
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

void mb_db_open_errmsg(int rc, char *buf, size_t len)
{
	snprintf(buf, len, "%s", open_err[0] ? open_err : mb_strerror(rc));
}

int mb_db_open(struct mb_sg *sg, const char *name, uint32_t page_size, int flags,
	       struct mb_db **out)
{
	return db_open_file(sg, name, page_size, flags, false, out);
}

int mb_db_close(struct mb_db *db)
{
	if (!db)
		return 0;
	struct mb_sg *sg = db->sg;
	if (db->in_txn)
		pg_release_all(db, 0);
	/* the layers above first: a bulk build is abandoned, tree handles freed */
	for (int i = 0; i < DB_HOOKS; i++)
		if (db->close_hook[i])
			db->close_hook[i](db);
	pthread_mutex_lock(&sg->lock);
	struct mb_db **pp = &sg->dbs;
	while (*pp && *pp != db)
		pp = &(*pp)->next;
	if (*pp)
		*pp = db->next;
	int r = cache_file_remove(sg->cache, db->cf);
	pthread_mutex_unlock(&sg->lock);
	int r2 = mb_file_sync(db->file, true);
	if (r2 < 0) {
		/* pages of the file since its last good sync may be gone: the
		 * group is recovered from its log (log_fail, dbint.h) */
		char what[160];
		snprintf(what, sizeof(what), "database sync failed: %s", db->name);
		log_fail(sg->log, r2, what);
	}
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

int db_cache_reset(struct mb_db *db)
{
	struct mb_sg *sg = db->sg;
	pthread_mutex_lock(&sg->lock); /* the checkpointer walks d->cf under it */
	int r = cache_file_remove(sg->cache, db->cf);
	db->cf = NULL;
	if (r == 0)
		r = cache_file_add(sg->cache, db->file, db->page_size, sg->log, &db->cf);
	pthread_mutex_unlock(&sg->lock);
	return r;
}

uint32_t mb_db_page_size(const struct mb_db *db) { return db->page_size; }

const char *mb_db_name(const struct mb_db *db) { return db->name; }

const char *mb_db_errmsg(const struct mb_db *db) { return db->errmsg; }

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
