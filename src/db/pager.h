/* pager.h: database files and their pages (pager.c), for the engine's
 * other files (txn.c, recover.c, group.c, btree.c, bulk.c, check.c).  Not
 * for callers outside src/db and its tests.
 */
#ifndef MB_DB_PAGER_H
#define MB_DB_PAGER_H

#include <stdbool.h>
#include <stdint.h>

#include "db/dbint.h"

/* pages, in the owner's transaction */
int pg_get(struct mb_db *db, uint32_t pgno, struct frame **out);
/* make the page writable in the open transaction (keeps its committed image) */
int pg_write(struct mb_db *db, struct frame *fr);
int pg_alloc(struct mb_db *db, uint8_t type, struct frame **out);
int pg_free(struct mb_db *db, uint32_t pgno);
/* end the transaction's hold on every page it changed: lsn != 0 commits
 * them with that LSN, 0 restores them; the transaction is then closed */
void pg_release_all(struct mb_db *db, uint64_t lsn);

/* set the database's error message; returns code */
int db_seterr(struct mb_db *db, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* open (flags MB_DB_CREATE/EXCL) a database of the group and link it into
 * the group's list; recovery: a handle for replay (no create, no header
 * check beyond the magic) */
int db_open_file(struct mb_sg *sg, const char *name, uint32_t page_size, int flags, bool recovery,
		 struct mb_db **out);

/* register fn to run first in mb_db_close (the layers built on the pager
 * release what they keep on the database; hooks run in enum order) */
void db_on_close(struct mb_db *db, enum db_hook which, void (*fn)(struct mb_db *db));

/* drop every cached frame of the database (writing dirty ones first) */
int db_cache_reset(struct mb_db *db);

#endif
