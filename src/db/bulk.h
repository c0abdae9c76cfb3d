/* bulk.h: bulk build of a database's B+trees (the load path of
 * `mailbench init`, like a restore: every page written once).
 *
 * A bulk build fills EMPTY trees of one database with rows given in
 * ascending key order per tree, batch by batch, and writes each page once:
 * long values go straight to overflow pages as they are put, B+tree nodes
 * are built bottom-up from sorted rows (leaves ~90% full), pages are
 * written in large sequential runs with O_DIRECT, and nothing goes through
 * the database cache or the log.  At the end the file is synced and ONE
 * ordinary transaction records that the database was bulk-built (the header:
 * page count and build count; each tree's root page: the top node; freed
 * pages), then the group checkpoints.
 *
 * States of a build:
 *
 *     mb_bulk_begin ──► STAGING ──mb_bulk_flush──► STAGING ──mb_bulk_finish──► DONE
 *                          │                                      │
 *                          └──────mb_bulk_abort / crash───────────┴──(before its commit)──► EMPTY
 *
 *  STAGING: mb_tree_put/get/get_len/del on the database's trees act on the
 *    rows staged since the last flush (a hash per tree; get and del see only
 *    those: a key at or below one already flushed gives MB_ESTATE, never a
 *    wrong answer); mb_db_begin and cursors give MB_ESTATE.  mb_bulk_flush
 *    sorts the staged rows and appends them to the trees: every later key of
 *    a tree must be greater than every flushed one (the store's keys start
 *    with the mailbox, so one flush per mailbox in mailbox order).
 *  DONE: the trees hold exactly what an incremental build of the same puts
 *    and deletes would hold (same keys and values; page layout differs).
 *  A crash, an error or mb_bulk_abort before the final commit leaves the
 *    database as it was at mb_bulk_begin (empty trees; pages written beyond
 *    its page count are invisible, and truncated by the next begin): the
 *    caller builds it again.  A crash after the commit is recovered by the
 *    log like any transaction.
 * One thread: the database's owner.  Functions return 0 or MB_E*.
 */
#ifndef MB_DB_BULK_H
#define MB_DB_BULK_H

#include <stdint.h>

#include "db/db.h"

struct mb_bulk;

/* Start a bulk build of db (no transaction open).  Trees are checked to be
 * empty when first used (MB_ESTATE otherwise). */
int mb_bulk_begin(struct mb_db *db, struct mb_bulk **out);
/* Append the staged rows to their trees (see above). */
int mb_bulk_flush(struct mb_bulk *b);
/* Flush, write the last nodes, sync, commit the bulk-built record,
 * checkpoint the group; frees b (also on error, after which the database
 * is as at begin). */
int mb_bulk_finish(struct mb_bulk *b);
/* Drop the build; the database is as at begin.  Frees b. */
void mb_bulk_abort(struct mb_bulk *b);

struct mb_bulk_stats {
	uint64_t rows;	 /* rows appended to trees */
	uint64_t pages;	 /* pages written (nodes + overflow) */
	uint64_t bytes;	 /* bytes written to the database file */
	uint64_t writes; /* write I/Os issued */
};

#endif
