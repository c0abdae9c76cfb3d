/* io.c: the file I/O shim (see io.h): the POSIX vfs, counted and timed
 * whole-buffer I/O over it, and the O_DIRECT fallback.
 * Invariants: counters are atomics and each histogram has its own mutex, so
 * any thread may do I/O; an mb_file is immutable after mb_io_open. */
#include "config.h"

#include "db/io.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "core/hist.h"
#include "core/sampler.h"

/* ---------------------------- POSIX vfs ------------------------------ */

static int px_open(void *ctx, const char *path, int oflags, mode_t mode, enum mb_file_kind kind)
{
	int fd = open(path, oflags | O_CLOEXEC, mode);
	return fd < 0 ? -errno : fd;
}

static int px_close(void *ctx, int fd) { return close(fd) < 0 ? -errno : 0; }

static ssize_t px_pread(void *ctx, int fd, enum mb_file_kind kind, void *buf, size_t len, off_t off)
{
	ssize_t n = pread(fd, buf, len, off);
	return n < 0 ? -errno : n;
}

static ssize_t px_pwrite(void *ctx, int fd, enum mb_file_kind kind, const void *buf, size_t len,
			 off_t off)
{
	ssize_t n = pwrite(fd, buf, len, off);
	return n < 0 ? -errno : n;
}

static int px_sync(void *ctx, int fd, enum mb_file_kind kind, bool datasync)
{
	int r = datasync ? fdatasync(fd) : fsync(fd);
	return r < 0 ? -errno : 0;
}

static int px_fallocate(void *ctx, int fd, enum mb_file_kind kind, off_t off, off_t len)
{
	int r = posix_fallocate(fd, off, len);
	return -r;
}

static int px_ftruncate(void *ctx, int fd, enum mb_file_kind kind, off_t len)
{
	return ftruncate(fd, len) < 0 ? -errno : 0;
}

static int px_unlink(void *ctx, const char *path) { return unlink(path) < 0 ? -errno : 0; }

static int px_rename(void *ctx, const char *from, const char *to)
{
	return rename(from, to) < 0 ? -errno : 0;
}

static int px_sync_dir(void *ctx, const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = fsync(fd) < 0 ? -errno : 0;
	close(fd);
	return r;
}

static int px_free_space(void *ctx, const char *path, uint64_t *out)
{
	struct statvfs sv;
	if (statvfs(path, &sv) < 0)
		return -errno;
	*out = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
	return 0;
}

static const struct mb_vfs posix_vfs = {
    .ctx = NULL,
    .open = px_open,
    .close = px_close,
    .pread = px_pread,
    .pwrite = px_pwrite,
    .sync = px_sync,
    .fallocate = px_fallocate,
    .ftruncate = px_ftruncate,
    .unlink = px_unlink,
    .rename = px_rename,
    .sync_dir = px_sync_dir,
    .free_space = px_free_space,
};

const struct mb_vfs *mb_vfs_posix(void) { return &posix_vfs; }

/* ------------------------------ mb_io -------------------------------- */

struct kind_counters {
	atomic_uint_fast64_t reads, writes, syncs, read_bytes, write_bytes, errors;
};

struct locked_hist {
	pthread_mutex_t lock;
	struct mb_hist *h;
};

/* Each (kind, op) histogram is split in shards so that threads doing I/O at
 * the same time rarely share a mutex; a thread always uses the same shard.
 * Readers merge every shard. */
#define HIST_SHARDS 8

struct mb_io {
	const struct mb_vfs *vfs;
	struct kind_counters k[MB_FILE_KIND_COUNT];
	struct locked_hist hist[MB_FILE_KIND_COUNT][MB_IO_OP_COUNT][HIST_SHARDS];
};

static atomic_uint next_shard;
static _Thread_local unsigned my_shard = UINT32_MAX;

static unsigned shard(void)
{
	if (my_shard == UINT32_MAX)
		my_shard = atomic_fetch_add(&next_shard, 1) % HIST_SHARDS;
	return my_shard;
}

struct mb_file {
	struct mb_io *io;
	int fd;
	enum mb_file_kind kind;
	bool direct;
	bool fadvise; /* buffered fallback of a DIRECT request */
	char *path;
};

uint64_t mb_io_now_ns(void) { return mb_now_ns(); }

int mb_io_create(const struct mb_vfs *vfs, struct mb_io **out)
{
	struct mb_io *io = calloc(1, sizeof(*io));
	if (!io)
		return MB_ENOMEM;
	io->vfs = vfs ? vfs : &posix_vfs;
	for (int k = 0; k < MB_FILE_KIND_COUNT; k++) {
		for (int o = 0; o < MB_IO_OP_COUNT; o++) {
			for (int s = 0; s < HIST_SHARDS; s++) {
				pthread_mutex_init(&io->hist[k][o][s].lock, NULL);
				if (mb_hist_create(&io->hist[k][o][s].h) < 0) {
					mb_io_destroy(io);
					return MB_ENOMEM;
				}
			}
		}
	}
	*out = io;
	return 0;
}

void mb_io_destroy(struct mb_io *io)
{
	if (!io)
		return;
	for (int k = 0; k < MB_FILE_KIND_COUNT; k++) {
		for (int o = 0; o < MB_IO_OP_COUNT; o++) {
			for (int s = 0; s < HIST_SHARDS; s++) {
				mb_hist_destroy(io->hist[k][o][s].h);
				pthread_mutex_destroy(&io->hist[k][o][s].lock);
			}
		}
	}
	free(io);
}

const struct mb_vfs *mb_io_vfs(const struct mb_io *io) { return io->vfs; }

static void record(struct mb_io *io, enum mb_file_kind k, enum mb_io_op op, uint64_t t0)
{
	uint64_t dt = mb_io_now_ns() - t0;
	struct locked_hist *lh = &io->hist[k][op][shard()];
	pthread_mutex_lock(&lh->lock);
	mb_hist_record(lh->h, dt);
	pthread_mutex_unlock(&lh->lock);
}

/* Merge every shard of one histogram into dst, emptying them when reset. */
static void hist_collect(struct mb_io *io, enum mb_file_kind kind, enum mb_io_op op,
			 struct mb_hist *dst, bool reset)
{
	for (int s = 0; s < HIST_SHARDS; s++) {
		struct locked_hist *lh = &io->hist[kind][op][s];
		pthread_mutex_lock(&lh->lock);
		mb_hist_merge(dst, lh->h);
		if (reset)
			mb_hist_reset(lh->h);
		pthread_mutex_unlock(&lh->lock);
	}
}

void mb_io_hist_merge(struct mb_io *io, enum mb_file_kind kind, enum mb_io_op op,
		      struct mb_hist *dst)
{
	hist_collect(io, kind, op, dst, false);
}

void mb_io_hist_take(struct mb_io *io, enum mb_file_kind kind, enum mb_io_op op,
		     struct mb_hist *dst)
{
	hist_collect(io, kind, op, dst, true);
}

void mb_io_stats_get(const struct mb_io *io, struct mb_io_stats *out)
{
	for (int k = 0; k < MB_FILE_KIND_COUNT; k++) {
		const struct kind_counters *c = &io->k[k];
		out->kind[k].reads = atomic_load(&c->reads);
		out->kind[k].writes = atomic_load(&c->writes);
		out->kind[k].syncs = atomic_load(&c->syncs);
		out->kind[k].read_bytes = atomic_load(&c->read_bytes);
		out->kind[k].write_bytes = atomic_load(&c->write_bytes);
		out->kind[k].errors = atomic_load(&c->errors);
	}
}

int mb_io_copy_file(const char *src, const char *dst, bool *reflinked)
{
	int s = open(src, O_RDONLY | O_CLOEXEC);
	if (s < 0)
		return mb_from_errno(errno);
	int d = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (d < 0) {
		int e = errno;
		close(s);
		return mb_from_errno(e);
	}
	int rc = 0;
	if (ioctl(d, FICLONE, s) == 0) {
		*reflinked = true;
	} else {
		*reflinked = false;
		bool plain = false;
		for (;;) {
			ssize_t n = copy_file_range(s, NULL, d, NULL, 1 << 30, 0);
			if (n == 0)
				break;
			if (n < 0) {
				if (errno == EINTR)
					continue;
				if (errno == ENOSYS || errno == EXDEV || errno == EINVAL ||
				    errno == EOPNOTSUPP) {
					plain = true;
					break;
				}
				rc = mb_from_errno(errno);
				break;
			}
		}
		if (plain) {
			static char buf[1 << 20];
			if (lseek(s, 0, SEEK_SET) < 0 || ftruncate(d, 0) ||
			    lseek(d, 0, SEEK_SET) < 0)
				rc = mb_from_errno(errno);
			while (!rc) {
				ssize_t n = read(s, buf, sizeof(buf));
				if (n == 0)
					break;
				if (n < 0) {
					if (errno == EINTR)
						continue;
					rc = mb_from_errno(errno);
					break;
				}
				for (ssize_t o = 0; !rc && o < n;) {
					ssize_t w = write(d, buf + o, (size_t)(n - o));
					if (w < 0 && errno != EINTR)
						rc = mb_from_errno(errno);
					else if (w > 0)
						o += w;
				}
			}
		}
	}
	if (!rc && fdatasync(d))
		rc = mb_from_errno(errno);
	if (close(d) && !rc)
		rc = mb_from_errno(errno);
	close(s);
	return rc;
}

/* A file that other hard links share (the pristine copy of a data
 * directory links its databases and logs: store/pristine.h) is made a
 * file of its own before it is opened for writing, so writing it never
 * changes the other link: truncated, it is simply unlinked first;
 * otherwise it is copied beside itself and renamed over its name. */
static int unshare_links(const char *path, bool truncating)
{
	struct stat sb;
	if (stat(path, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_nlink <= 1)
		return 0;
	if (truncating)
		return unlink(path) < 0 ? mb_from_errno(errno) : 0;
	char tmp[4200];
	if (snprintf(tmp, sizeof(tmp), "%s.unshare", path) >= (int)sizeof(tmp))
		return MB_EINVAL;
	bool reflinked;
	int rc = mb_io_copy_file(path, tmp, &reflinked);
	if (!rc && rename(tmp, path) < 0)
		rc = mb_from_errno(errno);
	if (rc) {
		unlink(tmp);
		return rc;
	}
	char dir[4200];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	int r = px_sync_dir(NULL, slash ? dir : ".");
	return r < 0 ? mb_from_errno(-r) : 0;
}

static atomic_int direct_notice_printed;

int mb_io_open(struct mb_io *io, const char *path, int flags, enum mb_file_kind kind,
	       struct mb_file **out)
{
	struct mb_file *f = calloc(1, sizeof(*f));
	if (!f)
		return MB_ENOMEM;
	f->path = strdup(path);
	if (!f->path) {
		free(f);
		return MB_ENOMEM;
	}
	f->io = io;
	f->kind = kind;
	if (!(flags & MB_IO_RDONLY)) {
		int urc = unshare_links(path, flags & MB_IO_TRUNC);
		if (urc) {
			free(f->path);
			free(f);
			return urc;
		}
	}
	int of = (flags & MB_IO_RDONLY) ? O_RDONLY : O_RDWR;
	if (flags & MB_IO_CREATE)
		of |= O_CREAT;
	if (flags & MB_IO_EXCL)
		of |= O_EXCL;
	if (flags & MB_IO_DSYNC)
		of |= O_DSYNC;
	if (flags & MB_IO_TRUNC)
		of |= O_TRUNC;
	int fd;
	if (flags & MB_IO_DIRECT) {
		fd = io->vfs->open(io->vfs->ctx, path, of | O_DIRECT, 0600, kind);
		if (fd == -EINVAL) {
			if (!atomic_exchange(&direct_notice_printed, 1))
				fprintf(
				    stderr,
				    "mailbench: notice: the file system of %s refuses O_DIRECT; "
				    "using buffered I/O with posix_fadvise instead (transfers may "
				    "be served by the page cache)\n",
				    path);
			fd = io->vfs->open(io->vfs->ctx, path, of, 0600, kind);
			if (fd >= 0) {
				f->fadvise = true;
				posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
			}
		} else if (fd >= 0) {
			f->direct = true;
		}
	} else {
		fd = io->vfs->open(io->vfs->ctx, path, of, 0600, kind);
	}
	if (fd < 0) {
		free(f->path);
		free(f);
		return mb_from_errno(-fd);
	}
	f->fd = fd;
	*out = f;
	return 0;
}

int mb_file_close(struct mb_file *f)
{
	if (!f)
		return 0;
	int r = f->io->vfs->close(f->io->vfs->ctx, f->fd);
	free(f->path);
	free(f);
	return r < 0 ? mb_from_errno(-r) : 0;
}

int mb_file_read(struct mb_file *f, void *buf, size_t len, uint64_t off)
{
	struct mb_io *io = f->io;
	struct kind_counters *c = &io->k[f->kind];
	uint64_t t0 = mb_io_now_ns();
	size_t done = 0;
	while (done < len) {
		ssize_t n = io->vfs->pread(io->vfs->ctx, f->fd, f->kind, (char *)buf + done,
					   len - done, (off_t)(off + done));
		if (n == -EINTR)
			continue;
		if (n < 0) {
			atomic_fetch_add(&c->errors, 1);
			return mb_from_errno((int)-n);
		}
		if (n == 0) {
			atomic_fetch_add(&c->errors, 1);
			return MB_ERANGE;
		}
		done += (size_t)n;
	}
	record(io, f->kind, MB_IO_OP_READ, t0);
	atomic_fetch_add(&c->reads, 1);
	atomic_fetch_add(&c->read_bytes, len);
	return 0;
}

int mb_file_write(struct mb_file *f, const void *buf, size_t len, uint64_t off)
{
	struct mb_io *io = f->io;
	struct kind_counters *c = &io->k[f->kind];
	uint64_t t0 = mb_io_now_ns();
	size_t done = 0;
	int stalls = 0;
	while (done < len) {
		ssize_t n = io->vfs->pwrite(io->vfs->ctx, f->fd, f->kind, (const char *)buf + done,
					    len - done, (off_t)(off + done));
		if (n == -EINTR)
			continue;
		if (n < 0) {
			atomic_fetch_add(&c->errors, 1);
			return mb_from_errno((int)-n);
		}
		if (n == 0 && ++stalls > 2) {
			atomic_fetch_add(&c->errors, 1);
			return MB_EIO;
		}
		done += (size_t)n;
	}
	if (f->fadvise)
		posix_fadvise(f->fd, (off_t)off, (off_t)len, POSIX_FADV_DONTNEED);
	record(io, f->kind, MB_IO_OP_WRITE, t0);
	atomic_fetch_add(&c->writes, 1);
	atomic_fetch_add(&c->write_bytes, len);
	return 0;
}

int mb_file_sync(struct mb_file *f, bool datasync)
{
	struct mb_io *io = f->io;
	uint64_t t0 = mb_io_now_ns();
	int r = io->vfs->sync(io->vfs->ctx, f->fd, f->kind, datasync);
	if (r < 0) {
		atomic_fetch_add(&io->k[f->kind].errors, 1);
		return mb_from_errno(-r);
	}
	record(io, f->kind, MB_IO_OP_SYNC, t0);
	atomic_fetch_add(&io->k[f->kind].syncs, 1);
	return 0;
}

int mb_file_size(struct mb_file *f, uint64_t *out)
{
	struct stat st;
	if (fstat(f->fd, &st) < 0)
		return mb_from_errno(errno);
	*out = (uint64_t)st.st_size;
	return 0;
}

int mb_file_truncate(struct mb_file *f, uint64_t len)
{
	int r = f->io->vfs->ftruncate(f->io->vfs->ctx, f->fd, f->kind, (off_t)len);
	return r < 0 ? mb_from_errno(-r) : 0;
}

int mb_file_allocate(struct mb_file *f, uint64_t off, uint64_t len)
{
	int r = f->io->vfs->fallocate(f->io->vfs->ctx, f->fd, f->kind, (off_t)off, (off_t)len);
	if (r == -EOPNOTSUPP || r == -EINVAL) {
		uint64_t size;
		int e = mb_file_size(f, &size);
		if (e < 0)
			return e;
		if (size < off + len)
			return mb_file_truncate(f, off + len);
		return 0;
	}
	return r < 0 ? mb_from_errno(-r) : 0;
}

bool mb_file_is_direct(const struct mb_file *f) { return f->direct; }

enum mb_file_kind mb_file_kind(const struct mb_file *f) { return f->kind; }

const char *mb_file_path(const struct mb_file *f) { return f->path; }

struct mb_io *mb_file_io(const struct mb_file *f) { return f->io; }

int mb_io_unlink(struct mb_io *io, const char *path)
{
	int r = io->vfs->unlink(io->vfs->ctx, path);
	return r < 0 ? mb_from_errno(-r) : 0;
}

int mb_io_rename(struct mb_io *io, const char *from, const char *to)
{
	int r = io->vfs->rename(io->vfs->ctx, from, to);
	return r < 0 ? mb_from_errno(-r) : 0;
}

int mb_io_sync_dir(struct mb_io *io, const char *dir)
{
	int r = io->vfs->sync_dir(io->vfs->ctx, dir);
	return r < 0 ? mb_from_errno(-r) : 0;
}

int mb_io_free_space(struct mb_io *io, const char *path, uint64_t *out)
{
	if (!io->vfs->free_space)
		return MB_EUNSUPPORTED;
	int r = io->vfs->free_space(io->vfs->ctx, path, out);
	if (r == -ENOSYS)
		return MB_EUNSUPPORTED;
	return r < 0 ? mb_from_errno(-r) : 0;
}

void *mb_io_alloc(size_t len)
{
	size_t n = (len + MB_IO_ALIGN - 1) / MB_IO_ALIGN * MB_IO_ALIGN;
	if (n == 0)
		n = MB_IO_ALIGN;
	void *p = NULL;
	if (posix_memalign(&p, MB_IO_ALIGN, n) != 0)
		return NULL;
	return p;
}

void mb_io_free(void *p) { free(p); }

/* --------------------------- fault wrapper --------------------------- */

struct mb_fault {
	struct mb_vfs vfs; /* the wrapping table; ctx points back here */
	const struct mb_vfs *inner;
	pthread_mutex_t lock;
	struct mb_fault_rule rule;
	uint64_t seen;	   /* matching calls since armed */
	bool short_armed;  /* a short write happened: further writes get ENOSPC */
	atomic_bool armed; /* a rule or short_armed: the fast path skips the lock */
	atomic_uint_fast64_t fired;
};

static void fault_sleep(uint32_t us)
{
	struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Decide whether this call fails: returns 0 (pass through) or the fault type. */
static enum mb_fault_type fault_check(struct mb_fault *f, enum mb_fault_op op,
				      enum mb_file_kind kind)
{
	enum mb_fault_type t = MB_FAULT_NONE;
	if (!atomic_load(&f->armed))
		return t;
	pthread_mutex_lock(&f->lock);
	struct mb_fault_rule *r = &f->rule;
	if (r->type != MB_FAULT_NONE &&
	    (r->op == op || (r->op == MB_FAULT_ON_ANY && op != MB_FAULT_ON_OPEN)) &&
	    (r->kind < 0 || r->kind == (int)kind)) {
		f->seen++;
		if (f->seen == r->nth || (r->sticky && f->seen > r->nth))
			t = r->type;
	}
	uint32_t delay = r->delay_us;
	pthread_mutex_unlock(&f->lock);
	if (t == MB_FAULT_DELAY) {
		atomic_fetch_add(&f->fired, 1);
		fault_sleep(delay);
		t = MB_FAULT_NONE;
	}
	return t;
}

static int ft_open(void *ctx, const char *path, int oflags, mode_t mode, enum mb_file_kind kind)
{
	struct mb_fault *f = ctx;
	if (fault_check(f, MB_FAULT_ON_OPEN, kind) == MB_FAULT_EMFILE) {
		atomic_fetch_add(&f->fired, 1);
		return -EMFILE;
	}
	return f->inner->open(f->inner->ctx, path, oflags, mode, kind);
}

static int ft_close(void *ctx, int fd)
{
	struct mb_fault *f = ctx;
	return f->inner->close(f->inner->ctx, fd);
}

static ssize_t ft_pread(void *ctx, int fd, enum mb_file_kind kind, void *buf, size_t len, off_t off)
{
	struct mb_fault *f = ctx;
	enum mb_fault_type t = fault_check(f, MB_FAULT_ON_READ, kind);
	if (t == MB_FAULT_EIO) {
		atomic_fetch_add(&f->fired, 1);
		return -EIO;
	}
	return f->inner->pread(f->inner->ctx, fd, kind, buf, len, off);
}

static ssize_t ft_pwrite(void *ctx, int fd, enum mb_file_kind kind, const void *buf, size_t len,
			 off_t off)
{
	struct mb_fault *f = ctx;
	bool full = false;
	if (atomic_load(&f->armed)) {
		pthread_mutex_lock(&f->lock);
		full = f->short_armed && (f->rule.kind < 0 || f->rule.kind == (int)kind);
		pthread_mutex_unlock(&f->lock);
	}
	if (full) {
		atomic_fetch_add(&f->fired, 1);
		return -ENOSPC;
	}
	enum mb_fault_type t = fault_check(f, MB_FAULT_ON_WRITE, kind);
	switch (t) {
	case MB_FAULT_EIO:
		atomic_fetch_add(&f->fired, 1);
		return -EIO;
	case MB_FAULT_ENOSPC:
		atomic_fetch_add(&f->fired, 1);
		return -ENOSPC;
	case MB_FAULT_SHORT_WRITE: {
		atomic_fetch_add(&f->fired, 1);
		size_t half = len / 2;
		int fl = fcntl(fd, F_GETFL);
		if (fl >= 0 && (fl & O_DIRECT))
			half = half / MB_IO_ALIGN * MB_IO_ALIGN;
		pthread_mutex_lock(&f->lock);
		f->short_armed = true;
		pthread_mutex_unlock(&f->lock);
		if (half == 0)
			return -ENOSPC;
		return f->inner->pwrite(f->inner->ctx, fd, kind, buf, half, off);
	}
	default:
		break;
	}
	return f->inner->pwrite(f->inner->ctx, fd, kind, buf, len, off);
}

static int ft_sync(void *ctx, int fd, enum mb_file_kind kind, bool datasync)
{
	struct mb_fault *f = ctx;
	enum mb_fault_type t = fault_check(f, MB_FAULT_ON_SYNC, kind);
	if (t == MB_FAULT_SYNC || t == MB_FAULT_EIO) {
		atomic_fetch_add(&f->fired, 1);
		return -EIO;
	}
	return f->inner->sync(f->inner->ctx, fd, kind, datasync);
}

static int ft_fallocate(void *ctx, int fd, enum mb_file_kind kind, off_t off, off_t len)
{
	struct mb_fault *f = ctx;
	return f->inner->fallocate(f->inner->ctx, fd, kind, off, len);
}

static int ft_ftruncate(void *ctx, int fd, enum mb_file_kind kind, off_t len)
{
	struct mb_fault *f = ctx;
	return f->inner->ftruncate(f->inner->ctx, fd, kind, len);
}

static int ft_unlink(void *ctx, const char *path)
{
	struct mb_fault *f = ctx;
	return f->inner->unlink(f->inner->ctx, path);
}

static int ft_rename(void *ctx, const char *from, const char *to)
{
	struct mb_fault *f = ctx;
	return f->inner->rename(f->inner->ctx, from, to);
}

static int ft_sync_dir(void *ctx, const char *dir)
{
	struct mb_fault *f = ctx;
	return f->inner->sync_dir(f->inner->ctx, dir);
}

static int ft_free_space(void *ctx, const char *path, uint64_t *out)
{
	struct mb_fault *f = ctx;
	if (atomic_load(&f->armed)) {
		pthread_mutex_lock(&f->lock);
		bool low = f->rule.type == MB_FAULT_LOW_DISK;
		uint64_t v = f->rule.free_bytes;
		pthread_mutex_unlock(&f->lock);
		if (low) {
			atomic_fetch_add(&f->fired, 1);
			*out = v;
			return 0;
		}
	}
	if (!f->inner->free_space)
		return -ENOSYS;
	return f->inner->free_space(f->inner->ctx, path, out);
}

int mb_fault_create(const struct mb_vfs *inner, struct mb_fault **out)
{
	struct mb_fault *f = calloc(1, sizeof(*f));
	if (!f)
		return MB_ENOMEM;
	f->inner = inner ? inner : &posix_vfs;
	pthread_mutex_init(&f->lock, NULL);
	f->vfs = (struct mb_vfs){
	    .ctx = f,
	    .open = ft_open,
	    .close = ft_close,
	    .pread = ft_pread,
	    .pwrite = ft_pwrite,
	    .sync = ft_sync,
	    .fallocate = ft_fallocate,
	    .ftruncate = ft_ftruncate,
	    .unlink = ft_unlink,
	    .rename = ft_rename,
	    .sync_dir = ft_sync_dir,
	    .free_space = ft_free_space,
	};
	*out = f;
	return 0;
}

void mb_fault_destroy(struct mb_fault *f)
{
	if (!f)
		return;
	pthread_mutex_destroy(&f->lock);
	free(f);
}

const struct mb_vfs *mb_fault_vfs(struct mb_fault *f) { return &f->vfs; }

void mb_fault_arm(struct mb_fault *f, const struct mb_fault_rule *rule)
{
	pthread_mutex_lock(&f->lock);
	f->rule = *rule;
	f->seen = 0;
	f->short_armed = false;
	atomic_store(&f->armed, rule->type != MB_FAULT_NONE);
	pthread_mutex_unlock(&f->lock);
}

void mb_fault_disarm(struct mb_fault *f)
{
	pthread_mutex_lock(&f->lock);
	memset(&f->rule, 0, sizeof(f->rule));
	f->seen = 0;
	f->short_armed = false;
	atomic_store(&f->armed, false);
	pthread_mutex_unlock(&f->lock);
}

uint64_t mb_fault_fired(const struct mb_fault *f)
{
	return atomic_load(&((struct mb_fault *)f)->fired);
}
