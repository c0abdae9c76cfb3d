/* io.h: the storage engine's file I/O shim.
 *
 * Two levels:
 *  - struct mb_vfs: a table of raw file operations on file descriptors
 *    (open, close, pread, pwrite, fsync, fdatasync, fallocate, ftruncate,
 *    unlink, rename, fsync of a directory).  mb_vfs_posix() is the real
 *    POSIX implementation; mb_fault_* wraps any vfs and injects failures
 *    (short write, EIO, ENOSPC, fsync failure) on the Nth matching call, for
 *    one file kind or all, so tests reach every error path of the engine.
 *    Raw operations return >= 0 on success or a NEGATIVE errno.
 *  - struct mb_io / struct mb_file: what the engine (and the storage test's
 *    "I/O mode") use.  An mb_io owns a vfs pointer, per-kind counters and
 *    per-kind, per-operation latency histograms; an mb_file is one open file
 *    of one kind (database, log, other).  Functions return 0 or a negative
 *    MB_E* code (core/error.h); reads and writes transfer the whole buffer or
 *    fail (short transfers are retried; a short transfer that cannot make
 *    progress is MB_EIO, MB_ENOSPC or MB_ERANGE for reads past end of file).
 *
 * Direct I/O: mb_io_open(..., MB_IO_DIRECT) opens with O_DIRECT, so every
 * counted transfer is a real disk transfer.  Buffers, offsets and lengths
 * must then be multiples of MB_IO_ALIGN (use mb_io_alloc()).  Where the file
 * system refuses O_DIRECT (EINVAL, e.g. tmpfs) the file is opened buffered
 * instead, with posix_fadvise(RANDOM) (and DONTNEED after writes), and ONE
 * notice per process is printed on stderr; mb_file_is_direct() tells which.
 *
 * Thread safety: an mb_io and its mb_files may be used by any number of
 * threads at once (pread/pwrite at explicit offsets; counters are atomics;
 * each histogram has its own mutex).  mb_file_close() must not race with I/O
 * on the same file.  The fault wrapper is thread-safe too.
 *
 * Counters (what the store's and the storage test's counters read):
 *   reads/writes/syncs and read/written bytes per kind (MB_FILE_DB ->
 *   "database reads/s, writes/s, disk transfers/s"; MB_FILE_LOG -> "log
 *   writes/s"; bytes of both -> "disk bytes/s").  A read or write is counted
 *   once per call that succeeded, with its bytes; a failed call counts in
 *   errors.  Latency histograms (core/hist.h, nanoseconds) per kind and per
 *   operation (read, write, sync): "database read latency" is
 *   (MB_FILE_DB, MB_IO_OP_READ); "log write latency" is (MB_FILE_LOG,
 *   MB_IO_OP_WRITE) for files opened MB_IO_DSYNC, where a write is durable
 *   when it returns; the engine's own log writes are each a write +
 *   fdatasync (one to three per flush, one more where a flush crosses
 *   into the next segment, db/log.c), and their combined
 *   latency is mb_sg_logwrite_hist_take() (db.h).
 */
#ifndef MB_DB_IO_H
#define MB_DB_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mb_hist;

/* Alignment of O_DIRECT buffers, offsets and lengths. */
#define MB_IO_ALIGN 4096

/* What a file is; counters, histograms and fault rules are per kind. */
enum mb_file_kind {
	MB_FILE_DB = 0,	   /* database pages */
	MB_FILE_LOG = 1,   /* transaction log segments */
	MB_FILE_OTHER = 2, /* checkpoint file, check reports, anything else */
	MB_FILE_KIND_COUNT
};

/* Operations timed in the histograms. */
enum mb_io_op { MB_IO_OP_READ = 0, MB_IO_OP_WRITE = 1, MB_IO_OP_SYNC = 2, MB_IO_OP_COUNT };

/* ------------------------------------------------------------------ */
/* Raw operations table.  Every function returns >= 0 (bytes for
 * pread/pwrite, 0 otherwise; the fd for open) or -errno.  ctx is the
 * table's own context.  kind is passed so wrappers can filter on it. */
struct mb_vfs {
	void *ctx;
	int (*open)(void *ctx, const char *path, int oflags, mode_t mode, enum mb_file_kind kind);
	int (*close)(void *ctx, int fd);
	ssize_t (*pread)(void *ctx, int fd, enum mb_file_kind kind, void *buf, size_t len,
			 off_t off);
	ssize_t (*pwrite)(void *ctx, int fd, enum mb_file_kind kind, const void *buf, size_t len,
			  off_t off);
	/* datasync: fdatasync when true, fsync when false. */
	int (*sync)(void *ctx, int fd, enum mb_file_kind kind, bool datasync);
	int (*fallocate)(void *ctx, int fd, enum mb_file_kind kind, off_t off, off_t len);
	int (*ftruncate)(void *ctx, int fd, enum mb_file_kind kind, off_t len);
	int (*unlink)(void *ctx, const char *path);
	int (*rename)(void *ctx, const char *from, const char *to);
	/* fsync the directory itself (after create, rename, unlink). */
	int (*sync_dir)(void *ctx, const char *dir);
	/* Bytes an unprivileged user may still write in path's file system
	 * (statvfs: f_bavail x f_frsize).  May be NULL: not known. */
	int (*free_space)(void *ctx, const char *path, uint64_t *out);
};

/* The real POSIX table (static, never freed). */
const struct mb_vfs *mb_vfs_posix(void);

/* ------------------------------------------------------------------ */
/* Fault injection: a vfs wrapping another one.  A rule fires on the Nth
 * call (1-based) that matches its operation and kind, counted from when it
 * was armed; a sticky rule keeps failing every matching call after that.
 *   MB_FAULT_EIO          the call fails with EIO (read, write or sync)
 *   MB_FAULT_ENOSPC       a write fails with ENOSPC (nothing written)
 *   MB_FAULT_SHORT_WRITE  a write transfers only the first half of its
 *                         bytes (rounded down to MB_IO_ALIGN for direct files,
 *                         so possibly 0), then the device is "full": the
 *                         rest (the caller's retry) fails with ENOSPC
 *   MB_FAULT_SYNC         fsync/fdatasync fails with EIO (the data written
 *                         since the last good sync must be assumed lost)
 *   MB_FAULT_EMFILE       an open fails with EMFILE (no descriptor left)
 *   MB_FAULT_DELAY        the call sleeps delay_us first, then goes through
 *                         (a slow disk)
 *   MB_FAULT_LOW_DISK     free_space answers free_bytes (a nearly full file
 *                         system, without filling one); other calls pass
 * Arming replaces the previous rule; mb_fault_disarm() makes it transparent. */
enum mb_fault_type {
	MB_FAULT_NONE = 0,
	MB_FAULT_EIO,
	MB_FAULT_ENOSPC,
	MB_FAULT_SHORT_WRITE,
	MB_FAULT_SYNC,
	MB_FAULT_EMFILE,
	MB_FAULT_DELAY,
	MB_FAULT_LOW_DISK,
};

enum mb_fault_op {
	MB_FAULT_ON_READ,
	MB_FAULT_ON_WRITE,
	MB_FAULT_ON_SYNC,
	MB_FAULT_ON_ANY, /* reads, writes and syncs */
	MB_FAULT_ON_OPEN,
};

struct mb_fault_rule {
	enum mb_fault_type type;
	enum mb_fault_op op; /* which calls count (EIO may hit reads, writes or syncs) */
	int kind;	     /* an enum mb_file_kind, or -1 for every kind */
	uint64_t nth;	     /* fire on the nth matching call (1 = the next one) */
	bool sticky;	     /* keep failing after the first firing */
	uint32_t delay_us;   /* MB_FAULT_DELAY */
	uint64_t free_bytes; /* MB_FAULT_LOW_DISK */
};

struct mb_fault;
/* Wrap inner (NULL: mb_vfs_posix()). */
int mb_fault_create(const struct mb_vfs *inner, struct mb_fault **out);
void mb_fault_destroy(struct mb_fault *f);
/* The wrapping table, valid until mb_fault_destroy; pass it to mb_io_create. */
const struct mb_vfs *mb_fault_vfs(struct mb_fault *f);
void mb_fault_arm(struct mb_fault *f, const struct mb_fault_rule *rule);
void mb_fault_disarm(struct mb_fault *f);
/* How many calls have failed because of the armed rules so far. */
uint64_t mb_fault_fired(const struct mb_fault *f);

/* ------------------------------------------------------------------ */
/* Counted, timed I/O. */
struct mb_io;
struct mb_file;

/* vfs NULL: mb_vfs_posix().  The vfs must outlive the mb_io. */
int mb_io_create(const struct mb_vfs *vfs, struct mb_io **out);
void mb_io_destroy(struct mb_io *io);
const struct mb_vfs *mb_io_vfs(const struct mb_io *io);

/* mb_io_open flags */
#define MB_IO_RDONLY 0x01 /* read only (default: read/write) */
#define MB_IO_CREATE 0x02 /* create when missing (mode 0600) */
#define MB_IO_EXCL 0x04	  /* with CREATE: fail with MB_EEXIST when present */
#define MB_IO_DIRECT 0x08 /* O_DIRECT, with the buffered fallback described above */
#define MB_IO_DSYNC 0x10  /* O_DSYNC: every write is durable when it returns */
#define MB_IO_TRUNC 0x20  /* truncate to 0 */

int mb_io_open(struct mb_io *io, const char *path, int flags, enum mb_file_kind kind,
	       struct mb_file **out);
/* Close (no implicit sync). NULL is ignored. */
int mb_file_close(struct mb_file *f);

/* Read exactly len bytes at off.  MB_ERANGE when the file ends first. */
int mb_file_read(struct mb_file *f, void *buf, size_t len, uint64_t off);
/* Write exactly len bytes at off (extends the file as needed). */
int mb_file_write(struct mb_file *f, const void *buf, size_t len, uint64_t off);
/* fdatasync (datasync true) or fsync. */
int mb_file_sync(struct mb_file *f, bool datasync);
/* Current size in bytes (fstat). */
int mb_file_size(struct mb_file *f, uint64_t *out);
int mb_file_truncate(struct mb_file *f, uint64_t len);
/* Reserve [off, off+len) (fallocate; falls back to ftruncate growth when the
 * file system does not support it). */
int mb_file_allocate(struct mb_file *f, uint64_t off, uint64_t len);

bool mb_file_is_direct(const struct mb_file *f);
enum mb_file_kind mb_file_kind(const struct mb_file *f);
const char *mb_file_path(const struct mb_file *f);
struct mb_io *mb_file_io(const struct mb_file *f);

/* Path operations through the same vfs (counted nowhere). */
/* Copy src to dst (created 0600 or truncated): a reflink where the file
 * system can (*reflinked), else copy_file_range or read/write; dst is
 * fdatasync'd.  Plain system calls, outside any vfs. */
int mb_io_copy_file(const char *src, const char *dst, bool *reflinked);
int mb_io_unlink(struct mb_io *io, const char *path);
int mb_io_rename(struct mb_io *io, const char *from, const char *to);
int mb_io_sync_dir(struct mb_io *io, const char *dir);
/* Bytes still free for an unprivileged user in path's file system, through
 * the vfs.  MB_EUNSUPPORTED when the vfs cannot tell. */
int mb_io_free_space(struct mb_io *io, const char *path, uint64_t *out);

/* Buffers aligned to MB_IO_ALIGN (len rounded up); free with mb_io_free.
 * NULL when out of memory. */
void *mb_io_alloc(size_t len);
void mb_io_free(void *p);

/* Counters, cumulative since mb_io_create, one set per file kind. */
struct mb_io_kind_stats {
	uint64_t reads, writes, syncs;
	uint64_t read_bytes, write_bytes;
	uint64_t errors;
};
struct mb_io_stats {
	struct mb_io_kind_stats kind[MB_FILE_KIND_COUNT];
};
void mb_io_stats_get(const struct mb_io *io, struct mb_io_stats *out);

/* dst += the histogram of (kind, op) since creation or the last
 * mb_io_hist_take().  take also resets it (for per-window histograms:
 * exactly one consumer should take).  Thread-safe. */
void mb_io_hist_merge(struct mb_io *io, enum mb_file_kind kind, enum mb_io_op op,
		      struct mb_hist *dst);
void mb_io_hist_take(struct mb_io *io, enum mb_file_kind kind, enum mb_io_op op,
		     struct mb_hist *dst);

/* Monotonic clock in nanoseconds (the one used for every latency here);
 * the same clock as mb_now_ns in core/sampler.h. */
uint64_t mb_io_now_ns(void);

#endif
