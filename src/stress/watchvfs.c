/* watchvfs.c: a vfs wrapped around the engine's (or a test's
 * fault-injecting) vfs that remembers which path each descriptor has and
 * the first failed transfer, so that an engine I/O error is reported with
 * its file and offset (storage-test's transactions mode, see txnmode.c).
 * Invariant: every call goes to the inner vfs unchanged; the wrapper only
 * watches (the descriptor -> path table and the first failure under its
 * mutex, the failure count atomic).
 */
#include "stress/watchvfs.h"
#include "core/error.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WATCH_FDS 4096
struct mb_watchvfs {
	struct mb_vfs vfs;
	const struct mb_vfs *inner;
	pthread_mutex_t mu;
	char *path[WATCH_FDS];
	bool have;
	char file[1024];
	uint64_t off;
	int code;
	char what[64];
	atomic_uint_fast64_t errors;
};

static void watch_fail(struct mb_watchvfs *w, int fd, uint64_t off, int neg_errno, const char *what)
{
	atomic_fetch_add(&w->errors, 1);
	pthread_mutex_lock(&w->mu);
	if (!w->have) {
		w->have = true;
		snprintf(w->file, sizeof(w->file), "%s",
			 fd >= 0 && fd < WATCH_FDS && w->path[fd] ? w->path[fd] : "?");
		w->off = off;
		w->code = mb_from_errno(-neg_errno);
		snprintf(w->what, sizeof(w->what), "%s", what);
	}
	pthread_mutex_unlock(&w->mu);
}

static int wv_open(void *ctx, const char *path, int oflags, mode_t mode, enum mb_file_kind kind)
{
	struct mb_watchvfs *w = ctx;
	int fd = w->inner->open(w->inner->ctx, path, oflags, mode, kind);
	if (fd >= 0 && fd < WATCH_FDS) {
		char *p = strdup(path);
		pthread_mutex_lock(&w->mu);
		free(w->path[fd]);
		w->path[fd] = p;
		pthread_mutex_unlock(&w->mu);
	}
	return fd;
}

static int wv_close(void *ctx, int fd)
{
	struct mb_watchvfs *w = ctx;
	if (fd >= 0 && fd < WATCH_FDS) {
		pthread_mutex_lock(&w->mu);
		free(w->path[fd]);
		w->path[fd] = NULL;
		pthread_mutex_unlock(&w->mu);
	}
	return w->inner->close(w->inner->ctx, fd);
}

static ssize_t wv_pread(void *ctx, int fd, enum mb_file_kind kind, void *buf, size_t len, off_t off)
{
	struct mb_watchvfs *w = ctx;
	ssize_t n = w->inner->pread(w->inner->ctx, fd, kind, buf, len, off);
	if (n < 0 && n != -EINTR)
		watch_fail(w, fd, (uint64_t)off, (int)n, "read failed");
	return n;
}

static ssize_t wv_pwrite(void *ctx, int fd, enum mb_file_kind kind, const void *buf, size_t len,
			 off_t off)
{
	struct mb_watchvfs *w = ctx;
	ssize_t n = w->inner->pwrite(w->inner->ctx, fd, kind, buf, len, off);
	if (n < 0 && n != -EINTR)
		watch_fail(w, fd, (uint64_t)off, (int)n, "write failed");
	return n;
}

static int wv_sync(void *ctx, int fd, enum mb_file_kind kind, bool datasync)
{
	struct mb_watchvfs *w = ctx;
	int rc = w->inner->sync(w->inner->ctx, fd, kind, datasync);
	if (rc < 0)
		watch_fail(w, fd, UINT64_MAX, rc, datasync ? "fdatasync failed" : "fsync failed");
	return rc;
}

static int wv_fallocate(void *ctx, int fd, enum mb_file_kind kind, off_t off, off_t len)
{
	struct mb_watchvfs *w = ctx;
	return w->inner->fallocate(w->inner->ctx, fd, kind, off, len);
}

static int wv_ftruncate(void *ctx, int fd, enum mb_file_kind kind, off_t len)
{
	struct mb_watchvfs *w = ctx;
	return w->inner->ftruncate(w->inner->ctx, fd, kind, len);
}

static int wv_unlink(void *ctx, const char *path)
{
	struct mb_watchvfs *w = ctx;
	return w->inner->unlink(w->inner->ctx, path);
}

static int wv_rename(void *ctx, const char *from, const char *to)
{
	struct mb_watchvfs *w = ctx;
	return w->inner->rename(w->inner->ctx, from, to);
}

static int wv_sync_dir(void *ctx, const char *dir)
{
	struct mb_watchvfs *w = ctx;
	return w->inner->sync_dir(w->inner->ctx, dir);
}

static int wv_free_space(void *ctx, const char *path, uint64_t *out)
{
	struct mb_watchvfs *w = ctx;
	if (!w->inner->free_space)
		return -ENOSYS;
	return w->inner->free_space(w->inner->ctx, path, out);
}

struct mb_watchvfs *mb_watchvfs_create(const struct mb_vfs *inner)
{
	struct mb_watchvfs *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->inner = inner ? inner : mb_vfs_posix();
	pthread_mutex_init(&w->mu, NULL);
	atomic_init(&w->errors, 0);
	w->vfs = (struct mb_vfs){w,	    wv_open,   wv_close,     wv_pread,
				 wv_pwrite, wv_sync,   wv_fallocate, wv_ftruncate,
				 wv_unlink, wv_rename, wv_sync_dir,  wv_free_space};
	return w;
}

void mb_watchvfs_destroy(struct mb_watchvfs *w)
{
	if (!w)
		return;
	for (int i = 0; i < WATCH_FDS; i++)
		free(w->path[i]);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

const struct mb_vfs *mb_watchvfs_vfs(const struct mb_watchvfs *w) { return &w->vfs; }

bool mb_watchvfs_first_error(struct mb_watchvfs *w, char *file, size_t flen, uint64_t *off,
			     int *code, char *what, size_t wlen)
{
	pthread_mutex_lock(&w->mu);
	bool have = w->have;
	if (have) {
		snprintf(file, flen, "%s", w->file);
		*off = w->off;
		*code = w->code;
		if (what && wlen)
			snprintf(what, wlen, "%s", w->what);
	}
	pthread_mutex_unlock(&w->mu);
	return have;
}
