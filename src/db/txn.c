/* txn.c: a database's transactions: begin, abort, and commit, which turns
 * every page the transaction changed into one log record (see db.h
 * "TRANSACTIONS AND DURABILITY"; the pages are pager.c's, the log log.c's).
 *
 * Invariants:
 *  - one transaction per database at a time; a bulk build excludes them;
 *  - a commit turns every changed page into one log record (a delta of
 *    bytes 16.., or the whole page when its committed LSN is at or below the
 *    redo point of the newest checkpoint begun: torn-page protection), and the
 *    pages take the record's end LSN;
 *  - after the group's log failed, begin refuses (MB_ERDONLY) until the
 *    group is reopened.
 *
 *   idle --mb_db_begin--> open --mb_db_abort--> idle (pages restored)
 *                          |
 *                          +--commit: record appended --> idle; durable
 *                             when the log's writer has synced it (sync:
 *                             waited for; async: cb(arg, status))
 */
#include "config.h"

#include <stdlib.h>

#include "core/error.h"
#include "db/dbint.h"
#include "db/group.h"
#include "db/pager.h"

int mb_db_begin(struct mb_db *db)
{
	if (db->bulk)
		return db_seterr(db, MB_ESTATE, "%s: a bulk build is in progress", db->name);
	if (db->in_txn)
		return db_seterr(db, MB_ESTATE, "%s: a transaction is already open", db->name);
	int e = log_error(db->sg->log);
	if (e)
		return db_seterr(db, MB_ERDONLY,
				 "%s: the log failed (%s): read-only until reopened", db->name,
				 mb_strerror(e));
	db->in_txn = true;
	db->txn_pages = NULL;
	return 0;
}

bool mb_db_in_txn(const struct mb_db *db) { return db->in_txn; }

int mb_db_abort(struct mb_db *db)
{
	if (!db->in_txn)
		return db_seterr(db, MB_ESTATE, "%s: no transaction", db->name);
	pg_release_all(db, 0);
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
static int commit_common(struct mb_db *db, uint64_t *end, mb_commit_cb cb, void *arg, uint64_t t0,
			 bool *queued)
{
	*queued = false;
	if (!db->in_txn)
		return db_seterr(db, MB_ESTATE, "%s: no transaction", db->name);
	size_t nlen = strlen(db->name), npages = 0;
	for (struct frame *f = db->txn_pages; f; f = f->txn_next)
		npages++;
	int r = scratch_reserve(db, 1 + nlen + npages * (db->page_size + 9));
	if (r < 0) {
		pg_release_all(db, 0);
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
		pg_release_all(db, 0);
		*end = log_append_lsn(db->sg->log);
		return 0;
	}
	r = log_append_cb(db->sg->log, LOG_TXN, count, db->scratch, pos, end, cb, arg, t0);
	if (r < 0) {
		pg_release_all(db, 0);
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
	pg_release_all(db, *end);
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
