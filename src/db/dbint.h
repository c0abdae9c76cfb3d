/* dbint.h: internals shared by the storage engine's modules (not for
 * callers outside src/db and its tests).
 *
 * Page format (every page, little-endian):
 *   0  u32 CRC-32 (the zlib polynomial; computed with ISA-L) of bytes 4..size
 *   4  u32 page number (detects misdirected writes)
 *   8  u64 LSN: end of the last log record applied to the page
 *   16 u8  type (PT_*)      17 u8 flags     18 u16 nkeys (node; free-list
 *          trunk: the free pages it lists) / unused
 *   20 u32 next: right sibling (leaf), next page (overflow), next trunk
 *          (free list)
 *   24 u32 prev: left sibling (leaf), leftmost child (internal),
 *          bytes used (overflow)
 *   28 u16 cell_lo: start of the cell area (node)   30 u16 frag: dead bytes
 *   32 ... slots (node: u16 cell offsets, sorted by key) / data (overflow)
 *          / u32 page numbers (free-list trunk, nkeys of them)
 * Bytes 0..15 (crc, pgno, lsn) are maintained by the engine and never part
 * of a logged delta.  Page 0 is the database header, page 1 the root of the
 * catalog tree (tree name -> root page number).
 *
 * Log record (a contiguous byte stream, LSN = byte offset in it, cut in
 * MB_LOG_SEGMENT_SIZE segment files named %016llx.seg after their index):
 *   0 u32 crc32 of bytes 4..len   4 u32 len (total)   8 u64 LSN of the record
 *   16 u32 type   20 u32 count of page images
 *   TXN payload: u8 name length, the database file name, then per page:
 *     u32 pgno, u8 kind (1 full image of bytes 16.., 2 delta), u32 data bytes,
 *     data (delta: repeated u16 offset, u16 length, bytes).
 */
#ifndef MB_DB_DBINT_H
#define MB_DB_DBINT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "db/db.h"
#include "db/io.h"

/* page types */
enum { PT_ZERO = 0, PT_HEADER = 1, PT_LEAF = 2, PT_INTERNAL = 3, PT_OVERFLOW = 4, PT_FREE = 5 };

#define PG_HDR 32
#define PG_OFF_CRC 0
#define PG_OFF_PGNO 4
#define PG_OFF_LSN 8
#define PG_OFF_TYPE 16
#define PG_OFF_FLAGS 17
#define PG_OFF_NKEYS 18
#define PG_OFF_NEXT 20
#define PG_OFF_PREV 24
#define PG_OFF_CELLLO 28
#define PG_OFF_FRAG 30
#define PG_DELTA_FROM 16 /* logged bytes start here */

/* header page (page 0) fields after the common header */
/* Format 2: the store's rows hold string properties as UTF-16LE (format 1,
 * refused with its own message: UTF-8).  Format 3: free-list trunks list
 * free pages (pager.c); a format 2 file is read as format 3 (its trunks
 * list none) and becomes format 3, in the same transaction, when a trunk
 * first lists a page, so an engine that knows only format 2 refuses it
 * rather than misreading its free list. */
#define HP_MAGIC "MBDB0003"
#define HP_MAGIC_V2 "MBDB0002"
#define HP_MAGIC_V1 "MBDB0001"
#define HP_OFF_MAGIC 32
#define HP_OFF_PAGESIZE 40
#define HP_OFF_PAGECOUNT 44
#define HP_OFF_FREEHEAD 48
#define HP_OFF_FREECOUNT 52
#define HP_OFF_CATALOG 56
#define HP_OFF_BULK 60 /* u32: bulk builds committed (bulk.c) */
#define CATALOG_ROOT 1

static inline uint16_t rd16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return v;
}
static inline uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}
static inline uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}
static inline void wr16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void wr32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void wr64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* key order of the B+tree (and of its checker): bytewise, a prefix first */
static inline int kcmp(const void *a, size_t al, const void *b, size_t bl)
{
	size_t n = al < bl ? al : bl;
	int c = memcmp(a, b, n);
	if (c)
		return c;
	return al < bl ? -1 : al > bl;
}

/* checksum of a page: mb_page_crc (db.h) */
/* set the crc field */
void mb_page_seal(uint8_t *page, uint32_t size);
/* 0, or MB_ECORRUPT with why filled (checksum, page number) */
int mb_page_verify(const uint8_t *page, uint32_t size, uint32_t pgno, char *why, size_t whylen);
bool mb_page_all_zero(const uint8_t *page, uint32_t size);

/* ------------------------------ cache -------------------------------- */
struct frame {
	uint8_t *data;	  /* page_size bytes, MB_IO_ALIGN aligned */
	uint8_t *before;  /* committed image while txn_held */
	struct cfile *cf; /* NULL when the frame holds nothing */
	uint32_t pgno;
	uint32_t size; /* bytes of data */
	int pins;
	uint8_t ref; /* clock use count 0..REF_MAX (cache.c) */
	bool valid, reading, writing, dirty, txn_held;
	int error;		/* read failed (frame being dropped) */
	uint64_t lsn;		/* page LSN of the content in data (committed part) */
	uint64_t modseq;	/* bumps on each commit/apply to the page */
	struct frame *hnext;	/* hash chain */
	size_t slot;		/* index in the cache's frame vector */
	struct frame *txn_next; /* the owning transaction's list */
};

/* a file registered with the cache */
struct cfile {
	struct mb_cache *cache;
	struct mb_file *file;
	uint32_t id;
	uint32_t page_size;
	const _Atomic uint64_t *durable_lsn; /* WAL rule: write a page only when its LSN <= this */
	struct mb_log *log;		     /* to force the log when a write-back waits on it */
	int write_error;
};

int cache_file_add(struct mb_cache *c, struct mb_file *f, uint32_t page_size, struct mb_log *log,
		   struct cfile **out);
/* write every dirty frame of the file, then drop its frames and free cf */
int cache_file_remove(struct mb_cache *c, struct cfile *cf);
/* write every dirty frame of the file (committed images); 0 or first error */
int cache_file_flush(struct mb_cache *c, struct cfile *cf);

#define CG_READ 0
#define CG_NEW 1       /* no read: the page is new (zero-filled unless cached) */
#define CG_ALLOW_BAD 2 /* recovery: a page past EOF or failing its checksum reads as zeros */
/* Pin a page.  MB_ECORRUPT (why filled), MB_ERANGE (past end of file), I/O errors. */
int cache_get(struct cfile *cf, uint32_t pgno, int mode, struct frame **out, char *why,
	      size_t whylen);
void cache_put(struct frame *fr);
/* make the frame writable by the owner's transaction: keeps the committed
 * image aside (no-steal) and an extra pin until txn_end */
int cache_txn_hold(struct frame *fr);
/* end of the transaction for this frame: commit (lsn != 0: the new image is
 * committed with this LSN and becomes dirty) or abort (lsn == 0: restore) */
void cache_txn_release(struct frame *fr, uint64_t lsn);

/* ------------------------------- log --------------------------------- */
struct mb_log;
struct mb_bulk;
int log_open(struct mb_io *io, const char *dir, struct mb_log **out);
void log_close(struct mb_log *l);
/* recovery reading: callback per valid record from lsn on; returns the end */
typedef int (*log_rec_cb)(void *arg, uint64_t lsn, uint64_t end, uint32_t type,
			  const uint8_t *payload, size_t len, uint32_t count);
int log_scan(struct mb_log *l, uint64_t from, log_rec_cb cb, void *arg, uint64_t *end,
	     uint64_t *records);
/* after the scan: start appending at end (zeroes the torn tail), start the writer */
int log_start(struct mb_log *l, uint64_t end);
/* The sector the log is written in (before log_read_checkpoint, log_scan
 * and log_start; 0: MB_LOG_SECTOR_SIZE).  The checkpoint file records the
 * log's sector: log_read_checkpoint takes the recorded one in place of the
 * default, and returns MB_ECONFIG when a different one was set here. */
void log_set_sector(struct mb_log *l, uint32_t sec);
/* the sector in force (tests) */
uint32_t log_sector(const struct mb_log *l);
/* append a record; *end = its end LSN (the page LSN of its pages) */
int log_append(struct mb_log *l, uint32_t type, uint32_t count, const uint8_t *payload, size_t len,
	       uint64_t *end);
/* the same, and cb(arg, status) on the writer thread once it is durable (or
 * can never be): registered atomically with the append */
int log_append_cb(struct mb_log *l, uint32_t type, uint32_t count, const uint8_t *payload,
		  size_t len, uint64_t *end, mb_commit_cb cb, void *arg, uint64_t t0);
uint64_t log_append_lsn(struct mb_log *l);
/* wait until durable >= lsn; the group's error when it cannot be */
int log_wait(struct mb_log *l, uint64_t lsn);
/* cb(arg, status) on the writer thread once durable >= lsn */
int log_wait_async(struct mb_log *l, uint64_t lsn, mb_commit_cb cb, void *arg, uint64_t t0);
/* note a synchronous commit's latency (ns) */
void log_note_commit(struct mb_log *l, uint64_t t0);
const _Atomic uint64_t *log_durable_ptr(struct mb_log *l);
int log_error(struct mb_log *l);
/* Put the log in the ERROR state with err (no-op when already there): every
 * waiter gets err, later appends MB_ERDONLY; what names the failure. */
void log_fail(struct mb_log *l, int err, const char *what);
void log_error_what(struct mb_log *l, char *buf, size_t len);
/* Is a database file error final for the group (log_fail) rather than
 * retried?  ENOSPC (a full disk may empty) and shortages are retried. */
static inline bool db_io_fatal(int r)
{
	return r < 0 && r != MB_ENOSPC && r != MB_ENOMEM && r != MB_EMFILE && r != MB_EAGAIN &&
	       r != MB_ERANGE && r != MB_ECORRUPT;
}
/* checkpoint support */
int log_read_checkpoint(struct mb_log *l, uint64_t *redo);
int log_write_checkpoint(struct mb_log *l, uint64_t redo);
int log_remove_before(struct mb_log *l, uint64_t redo);
/* wake fn(arg) from the writer when checkpoint_bytes of log accumulate */
void log_set_ckpt_trigger(struct mb_log *l, uint64_t bytes, void (*fn)(void *), void *arg);
void log_stats(struct mb_log *l, struct mb_sg_stats *out);
void log_commit_hist_take(struct mb_log *l, struct mb_hist *dst);
void log_write_hist_take(struct mb_log *l, struct mb_hist *dst);

#define LOG_REC_HDR 24
#define LOG_TXN 1

/* ------------------------------ database ----------------------------- */
/* close hooks of the layers built on the pager (pager.h db_on_close) */
enum db_hook { DB_HOOK_BULK, DB_HOOK_TREES, DB_HOOKS };

struct mb_db {
	struct mb_sg *sg;
	char *name;
	char *path;
	struct mb_file *file;
	struct cfile *cf;
	uint32_t page_size;
	bool recovery; /* internal handle used by recovery */
	bool in_txn;
	struct frame *txn_pages;
	uint64_t modcount; /* bumps on every write (cursors re-seek) */
	uint8_t *scratch;  /* commit record / split buffers */
	size_t scratch_cap;
	uint8_t *tmp; /* one page of scratch for node rebuilds */
	struct mb_tree *trees;
	struct mb_bulk *bulk; /* a bulk build in progress (bulk.c), or NULL */
	struct mb_db *next;   /* group's list */
	void (*close_hook[DB_HOOKS])(struct mb_db *db); /* run first by mb_db_close */
	char errmsg[512];
};

/* pages, databases and groups: pager.h, group.h */

/* bulk build (bulk.c): the tree operations while db->bulk is set */
int bulk_tree_put(struct mb_bulk *b, uint32_t root, const void *key, size_t klen, const void *val,
		  size_t vlen, int flags);
int bulk_tree_get(struct mb_bulk *b, uint32_t root, const void *key, size_t klen,
		  struct mb_val *out, size_t *lenp);
int bulk_tree_del(struct mb_bulk *b, uint32_t root, const void *key, size_t klen);

/* btree internals used by check.c */
int mb__bt_create_root(struct mb_db *db, uint32_t *root);
int mb__bt_free_tree(struct mb_db *db, uint32_t root);
int mb__cat_lookup(struct mb_db *db, const char *name, uint32_t *root);

#endif
