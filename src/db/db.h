/* db.h: the mailbench storage engine (ESE/SQLite-style), public API.
 *
 * Objects
 *   mb_cache  the database cache (buffer pool) of a given size in bytes.  It
 *             may be shared by every storage group of a process (the store
 *             makes ONE cache, like ESE's single database cache) or be
 *             private to one group (mb_sg_options.cache == NULL).  Frames are
 *             allocated on demand up to the limit, so "cache size in use"
 *             grows with the working set; pages of 4, 8 and 32 KB share it.
 *             A lazy-writer thread per cache chooses dirty pages and a
 *             small pool of write-back threads writes them, several at
 *             once (never the thread that needs a frame, unless nothing
 *             else can free one).  Eviction: CLOCK with a small use count
 *             (new pages enter cold, so a scan of several times the cache
 *             size does not flush the hot set).
 *   mb_sg     a storage group: a directory of databases sharing one
 *             write-ahead log (DIR/log/ or LOG_DIR) of 1 MiB segment files,
 *             with a group-commit log-writer thread and a checkpointer.
 *             Opening a group runs crash recovery.
 *   mb_db     one database file (DIR/NAME, e.g. db01.mdb) of fixed-size pages
 *             (4096, 8192 or 32768 bytes, chosen at creation; default 32 KB).
 *             Every page carries its number, the LSN of the last log record
 *             applied to it and a CRC-32 checksum (ISA-L); a torn or corrupt page
 *             is reported as MB_ECORRUPT (mb_db_errmsg names file and page),
 *             never returned as data.  Opening a database is cheap (one page
 *             read; creating one writes and syncs two pages), so thousands of
 *             small databases are fine.
 *   mb_tree   a named B+tree inside a database: byte-string keys (1 ..
 *             MB_KEY_MAX bytes, ordered by memcmp, shorter first on a tie),
 *             values of any length (0 .. MB_VALUE_MAX; values larger than
 *             about a quarter page live in overflow page chains).
 *   mb_cursor an ordered position in a tree: first/last/seek(>=)/seek_le
 *             (<=)/next/prev, optionally bounded to a key range.
 *
 * CONCURRENCY MODEL (shared-nothing per database)
 *   - A database handle, its trees and cursors are used by ONE thread at a
 *     time (the store runs one owner thread per database; the storage test
 *     one thread per database).  The B+tree has no latches.  Different
 *     databases may be used by different threads at the same time, even in
 *     the same storage group.
 *   - The cache, the I/O layer (io.h) and a storage group's log writer ARE
 *     thread-safe: all owner threads share them.  mb_sg_* functions may be
 *     called from any thread, but mb_sg_close only after every database of
 *     the group is closed.
 *   - Async commit callbacks run on the group's log-writer thread: keep them
 *     short (e.g. queue the reply and uv_async_send()); they must not call
 *     back into the engine.
 *
 * TRANSACTIONS AND DURABILITY
 *   Every write (put, del, tree create/drop) happens inside a transaction of
 *   its database: mb_db_begin .. mb_db_commit / mb_db_commit_async /
 *   mb_db_abort.  One transaction per database at a time; reads need none
 *   and see the transaction's own writes.  A transaction changes pages in
 *   the cache only (no-steal: the committed image is kept aside and only
 *   that is ever written to the database file); at commit its page changes
 *   (byte-range deltas; the whole page the first time a page changes after a
 *   checkpoint, so torn pages are repaired by recovery) become one
 *   checksummed log record.  mb_db_commit returns 0 only once that record is
 *   on disk (its sectors written and fdatasynced, db/log.c).  Concurrent commits of
 *   all databases of the group share log writes (group commit).
 *   mb_db_commit_async returns at once (the transaction is closed, the next
 *   one may begin) and calls cb(arg, status) when the record is durable
 *   (status 0) or can never be (status < 0).  Commits complete in log order.
 *   After a failed log write or sync, or a database read, write or sync
 *   that fails beyond retrying (EIO, EROFS, any failed fsync; ENOSPC on a
 *   page write is retried), the group is in the ERROR state: every
 *   later commit fails with MB_ERDONLY (and pending ones with the I/O error);
 *   close and reopen the group to recover to the last durable state.
 *   Abort restores the pages as they were at begin.
 *   A transaction must fit in the cache (MB_EFULL otherwise); keep them to
 *   one mail operation.
 *
 * HOW TO BUILD A SCHEMA ON IT (for the store)
 *   One tree per table/index, composite keys in big-endian so that memcmp
 *   order is numeric order (mb_key_u32/u64 below), e.g.
 *     "folders":  key = mailbox_id(u32) folder_id(u64)      value = props
 *     "messages": key = folder_id(u64) message_id(u64)      value = props
 *     "bodies":   key = message_id(u64)                     value = body (MBs ok)
 *     "by_time":  key = folder_id(u64) ~received(u64) msg_id(u64) value = ""
 *     "by_cn":    key = folder_id(u64) change_number(u64)   value = msg_id
 *   Range scans: mb_cursor_range(c, prefix_lo, prefix_hi) then next() until
 *   MB_ENOTFOUND.  Open tree handles once per database (mb_tree_open is a
 *   catalog lookup) and keep them; one mb_val reused for every get avoids
 *   allocations.  Write one message in one transaction (the message row, the
 *   body, both index entries, the folder counters), then commit (async from a
 *   network thread).
 *
 * Errors: 0 or a negative MB_E* code (core/error.h).  MB_ENOTFOUND for a
 * missing key or a cursor past its end; MB_ECORRUPT for a bad page;
 * MB_ESTATE for a write outside a transaction; MB_ERDONLY after a failed log
 * sync; MB_ETOOBIG for an over-long key or value.
 */
#ifndef MB_DB_DB_H
#define MB_DB_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/io.h"

struct mb_hist;
struct mb_cache;
struct mb_sg;
struct mb_db;
struct mb_tree;
struct mb_cursor;

#define MB_PAGE_SIZE_DEFAULT 32768
#define MB_KEY_MAX 512		       /* bytes */
#define MB_VALUE_MAX (64u << 20)       /* bytes */
#define MB_TREE_NAME_MAX 64	       /* bytes, without the NUL */
#define MB_LOG_SEGMENT_SIZE (1u << 20) /* bytes per log segment file */
/* The log is written in sectors, with a shadow copy of the partial last
 * sector (db/log.c), as ESE writes its log.  The default is the sector of
 * Exchange 2003's ESE, the volume's (512 bytes on the published server's
 * disks); ESE's newer log format (Exchange 2016's) writes 4 KiB segments. */
#define MB_LOG_SECTOR_SIZE 512u
#define MB_LOG_SECTOR_MAX 4096u

/* ---- growable value buffer: reuse one across gets to avoid mallocs ---- */
struct mb_val {
	void *data; /* malloc'd by the engine, grown as needed */
	size_t len; /* bytes of the value */
	size_t cap;
};
#define MB_VAL_INIT                                                                                \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}
void mb_val_free(struct mb_val *v);

/* Big-endian key encoders (memcmp order == numeric order); return p + n. */
static inline unsigned char *mb_key_u32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
	return p + 4;
}
static inline unsigned char *mb_key_u64(unsigned char *p, uint64_t v)
{
	mb_key_u32(p, (uint32_t)(v >> 32));
	return mb_key_u32(p + 4, (uint32_t)v);
}
static inline uint32_t mb_key_get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t mb_key_get_u64(const unsigned char *p)
{
	return (uint64_t)mb_key_get_u32(p) << 32 | mb_key_get_u32(p + 4);
}

/* ------------------------- page checksum ----------------------------- */
/* The engine's page checksum: CRC-32 (the zlib polynomial, computed with
 * ISA-L) of bytes 4..size of a page, whose first 4 bytes hold it.  Also
 * used by the storage test's I/O-mode files (one implementation). */
uint32_t mb_page_crc(const uint8_t *page, uint32_t size);

/* ---------------------------- cache ---------------------------------- */
/* bytes: the most memory the frames may use (at least 64 pages of 32 KB).
 * Write-back threads: MAILBENCH_CACHE_WRITERS from the environment (1..32)
 * or MB_CACHE_WRITERS_DEFAULT. */
int mb_cache_create(uint64_t bytes, struct mb_cache **out);
/* The same with writers write-back threads (page writes in flight at once;
 * 0: the default above, at most 32). */
#define MB_CACHE_WRITERS_DEFAULT 8
int mb_cache_create_ex(uint64_t bytes, unsigned writers, struct mb_cache **out);
/* Every group using it must be closed first. */
void mb_cache_destroy(struct mb_cache *c);
/* The largest database write, bytes.  By default (MB_CACHE_WRITE_MAX_DEFAULT)
 * a write carries a run of consecutive dirty pages of one file: up to
 * 128 KiB from the lazy writer, up to 1 MiB from a checkpoint.  A value
 * below a page's size writes every page by itself, as ESE did before
 * Exchange 2007 (no I/O coalescing).  Applies to the writes chosen after
 * the call. */
#define MB_CACHE_WRITE_MAX_DEFAULT (1u << 20)
void mb_cache_set_write_max(struct mb_cache *c, uint32_t bytes);
/* The pages of page_size one write carries at a largest write of bytes:
 * whole pages, at least one (the cache's rule, for those who describe it). */
static inline uint32_t mb_write_pages(uint32_t bytes, uint32_t page_size)
{
	return bytes < page_size ? 1 : bytes / page_size;
}

struct mb_cache_stats {
	uint64_t hits, misses; /* page requests found / not found in the cache */
	uint64_t reads,
	    writes;	       /* pages the cache read / wrote (a write may carry a run of pages) */
	uint64_t reads_lv;     /* of reads: long-value (overflow) pages */
	uint64_t evictions;    /* frames reused for another page */
	uint64_t dirty_pages;  /* gauge: frames dirty now */
	uint64_t frames;       /* gauge: frames allocated now */
	uint64_t bytes_in_use; /* gauge: bytes of allocated frames ("cache size") */
	uint64_t bytes_limit;  /* the configured size */
	uint64_t write_errors; /* failed write-backs (pages stay dirty) */
};
void mb_cache_stats_get(struct mb_cache *c, struct mb_cache_stats *out);
/* While on, a thread that finds no free frame fails at once (MB_EBUSY)
 * instead of waiting for the lazy writer (up to 5 s), and waiting threads
 * wake and fail: a store pausing its database threads between requests
 * (to recover a storage group whose dirty pages cannot be written until it
 * is reopened) is not held up by them. */
void mb_cache_interrupt(struct mb_cache *c, bool on);

/* --------------------------- storage group --------------------------- */
struct mb_sg_options {
	const char *dir;	   /* databases live here (required) */
	const char *log_dir;	   /* NULL: DIR/log */
	struct mb_io *io;	   /* NULL: a private mb_io over the POSIX vfs */
	const struct mb_vfs *vfs;  /* with io == NULL: the vfs of the private io (NULL: POSIX) */
	struct mb_cache *cache;	   /* NULL: a private cache of cache_mb */
	uint32_t cache_mb;	   /* private cache size; default 64 */
	uint64_t checkpoint_bytes; /* log bytes between automatic checkpoints; default 32 MiB,
				      UINT64_MAX: only explicit ones */
	bool create;		   /* create DIR and the log when missing */
	bool no_direct;		   /* buffered database I/O (default: O_DIRECT) */
	uint32_t log_sector;	   /* a new log's sector: 0 = MB_LOG_SECTOR_SIZE, else a
				      power of two from 512 to MB_LOG_SECTOR_MAX; an
				      existing log keeps the one it was written in (0
				      takes it, another is MB_ECONFIG) */
};
void mb_sg_options_init(struct mb_sg_options *o);

/* Open (and recover) a storage group.  Takes a lock on DIR (MB_EBUSY when
 * another process has it open). */
int mb_sg_open(const struct mb_sg_options *o, struct mb_sg **out);
/* Final checkpoint, stop the threads, release.  Databases must be closed. */
int mb_sg_close(struct mb_sg *sg);
/* Write every dirty page of the group, sync the files, record the
 * checkpoint, remove log segments no longer needed. */
int mb_sg_checkpoint(struct mb_sg *sg);
/* Wait until everything committed so far is durable. */
int mb_sg_flush(struct mb_sg *sg);
/* 0, or the error that put the group in the ERROR state. */
int mb_sg_error(const struct mb_sg *sg);
/* What failed first, e.g. "log write or sync", "database read failed:
 * db03.mdb page 17" ("" when in service). */
void mb_sg_error_what(const struct mb_sg *sg, char *buf, size_t len);
/* Why this thread's last mb_db_open failed (rc), naming the file (e.g. a
 * database of an earlier format), or mb_strerror(rc) when it failed before
 * it had a file (a bad name, no memory). */
void mb_db_open_errmsg(int rc, char *buf, size_t len);
struct mb_io *mb_sg_io(struct mb_sg *sg);
struct mb_cache *mb_sg_cache(struct mb_sg *sg);

struct mb_sg_stats {
	uint64_t commits;    /* transactions made durable */
	uint64_t log_writes; /* log flushes (each one to three sector writes, db/log.c, one more
				 where it crosses a segment) */
	uint64_t log_bytes;  /* bytes of log written */
	uint64_t commits_per_write_x100; /* 100 * commits / log_writes (0 before the first) */
	uint64_t durable_lsn;		 /* log bytes durable so far (the LSN) */
	uint64_t checkpoint_lsn;	 /* redo start of the last checkpoint */
	uint64_t checkpoint_depth;	 /* durable_lsn - checkpoint_lsn, bytes */
	uint64_t checkpoints;		 /* checkpoints completed */
	uint64_t recovered_records;	 /* log records replayed when the group opened */
	uint64_t log_segments;		 /* segment files present */
	uint64_t transient_waits;	 /* log writes that waited out a shortage of file
					    descriptors or memory (never an ERROR state) */
};
void mb_sg_stats_get(struct mb_sg *sg, struct mb_sg_stats *out);
/* dst += commit latencies (begin of commit .. durable), ns; take resets. */
void mb_sg_commit_hist_take(struct mb_sg *sg, struct mb_hist *dst);
/* dst += log write+fdatasync latencies, ns ("log write latency"); take resets. */
void mb_sg_logwrite_hist_take(struct mb_sg *sg, struct mb_hist *dst);

/* ----------------------------- database ------------------------------ */
#define MB_DB_CREATE 0x01 /* create when missing */
#define MB_DB_EXCL 0x02	  /* with CREATE: MB_EEXIST when present */

/* name: a file name inside the group's DIR ("db01.mdb"), no slash.
 * page_size: 4096, 8192 or 32768 (0: MB_PAGE_SIZE_DEFAULT), used at creation;
 * an existing database keeps its own. */
int mb_db_open(struct mb_sg *sg, const char *name, uint32_t page_size, int flags,
	       struct mb_db **out);
/* Aborts an open transaction; closes its trees and cursors; writes the
 * database's dirty pages back (waiting for the log first) and syncs the file,
 * then drops its pages from the cache. */
int mb_db_close(struct mb_db *db);
uint32_t mb_db_page_size(const struct mb_db *db);
const char *mb_db_name(const struct mb_db *db);
/* Pages in the file (including free ones) and free pages. */
void mb_db_pages(const struct mb_db *db, uint64_t *total, uint64_t *free_pages);
/* Message of the last error on this handle (names file, page and tree), ""
 * when none.  Valid until the next call on the handle. */
const char *mb_db_errmsg(const struct mb_db *db);

int mb_db_begin(struct mb_db *db);
int mb_db_commit(struct mb_db *db);
typedef void (*mb_commit_cb)(void *arg, int status);
int mb_db_commit_async(struct mb_db *db, mb_commit_cb cb, void *arg);
int mb_db_abort(struct mb_db *db);
bool mb_db_in_txn(const struct mb_db *db);

/* ------------------------------ trees -------------------------------- */
#define MB_TREE_CREATE 0x01 /* create when missing (needs a transaction) */

int mb_tree_open(struct mb_db *db, const char *name, int flags, struct mb_tree **out);
/* Release a handle (optional: mb_db_close releases all). */
void mb_tree_close(struct mb_tree *t);
/* Delete a tree and free its pages (in a transaction; no open handles). */
int mb_tree_drop(struct mb_db *db, const char *name);
/* Names of the trees, calling cb for each in order. */
int mb_tree_list(struct mb_db *db, void (*cb)(void *arg, const char *name), void *arg);

/* Value of key into *out (grown as needed).  MB_ENOTFOUND when absent. */
int mb_tree_get(struct mb_tree *t, const void *key, size_t klen, struct mb_val *out);
/* Length of the value only (no long-value read). */
int mb_tree_get_len(struct mb_tree *t, const void *key, size_t klen, size_t *len);

#define MB_PUT_NOOVERWRITE 0x01 /* MB_EEXIST when the key is present */
#define MB_PUT_UPDATE 0x02	/* MB_ENOTFOUND when the key is absent */
int mb_tree_put(struct mb_tree *t, const void *key, size_t klen, const void *val, size_t vlen,
		int flags);
/* MB_ENOTFOUND when absent. */
int mb_tree_del(struct mb_tree *t, const void *key, size_t klen);

/* ----------------------------- cursors ------------------------------- */
/* Cursors stay valid across writes to the tree (they re-find their key). */
int mb_cursor_open(struct mb_tree *t, struct mb_cursor **out);
void mb_cursor_close(struct mb_cursor *c);
/* Bound the cursor to lo <= key < hi (either may be NULL: unbounded); then
 * positions at the first key >= lo.  MB_ENOTFOUND when the range is empty. */
int mb_cursor_range(struct mb_cursor *c, const void *lo, size_t lolen, const void *hi,
		    size_t hilen);
/* Positioning: 0, or MB_ENOTFOUND (no such key; the cursor is unpositioned). */
int mb_cursor_first(struct mb_cursor *c);
int mb_cursor_last(struct mb_cursor *c);
int mb_cursor_seek(struct mb_cursor *c, const void *key, size_t klen);	  /* first >= key */
int mb_cursor_seek_le(struct mb_cursor *c, const void *key, size_t klen); /* last <= key */
int mb_cursor_next(struct mb_cursor *c);
int mb_cursor_prev(struct mb_cursor *c);
/* The current key: pointer valid until the next call on the cursor or tree. */
int mb_cursor_key(struct mb_cursor *c, const void **key, size_t *klen);
int mb_cursor_value(struct mb_cursor *c, struct mb_val *out);
/* Delete the current entry; the cursor then sits before the next key, so
 * mb_cursor_next() moves to it. */
int mb_cursor_del(struct mb_cursor *c);

/* ------------------------- integrity check --------------------------- */
struct mb_check_report {
	uint64_t groups, databases, trees;
	uint64_t pages, free_pages, keys, long_values;
	uint64_t bytes; /* database + log bytes read */
	uint64_t log_segments, log_records;
	uint64_t problems; /* 0 when clean */
	double seconds;
	char first_problem[512]; /* "db01.mdb: tree 'messages': page 17: ..." */
};
/* Called for each problem found (one line, no newline); may be NULL. */
typedef void (*mb_check_cb)(void *arg, const char *msg);

/* Check one open database (through the cache): page checksums, B+tree key
 * order, separators and sibling links, long-value chains, and that every
 * page is used exactly once (tree, overflow or free list).  Adds to *rep.
 * 0 when clean, MB_ECORRUPT when problems were found, other codes when the
 * check could not run. */
int mb_db_check(struct mb_db *db, mb_check_cb cb, void *arg, struct mb_check_report *rep);
/* Check every database of an open storage group, and its log (every record
 * checksum from the checkpoint to the end). */
int mb_sg_check(struct mb_sg *sg, mb_check_cb cb, void *arg, struct mb_check_report *rep);
/* Check a data directory: every storage group under it (DIR itself when it
 * holds *.mdb files or a log/, else each subdirectory that does: DIR/sgN,
 * DIR/stress).  A group's log is GROUP/log, or LOG_ROOT/NAME for the group
 * directory DIR/NAME when log_root is not NULL (init --log-dir).  Each group
 * is opened (which replays its log, as a mount would) with a private cache of
 * cache_mb (0: 64), checked and closed.  MB_EBUSY when a store has it open,
 * MB_ENOTFOUND when DIR is not a directory. */
int mb_db_check_dir(const char *dir, const char *log_root, uint32_t cache_mb, mb_check_cb cb,
		    void *arg, struct mb_check_report *rep);

#endif
