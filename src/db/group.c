/* group.c: storage groups: open (directory, lock file, I/O layer, cache,
 * log, crash recovery, checkpointer), close, and the group's accessors and
 * statistics (see db.h for the model; struct mb_sg is in group.h).
 *
 * Invariants:
 *  - one process holds a group: DIR/LOCK is flock()ed for its lifetime;
 *  - opening runs recovery before the group is usable and checkpoints after
 *    it; closing closes every database still open, stops the checkpointer
 *    and checkpoints when the log is healthy.
 *
 *   mb_sg_open: lock --> log opened --> replay from redo (recover.c) -->
 *               checkpointer started --> open --mb_sg_close--> closed
 *   (the log's writer failing puts the group in ERROR: mb_sg_error; commits
 *   refused until closed and reopened, which recovers)
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/hist.h"
#include "db/dbint.h"
#include "db/group.h"
#include "db/pager.h"
#include "db/recover.h"

struct mb_log *sg_log(struct mb_sg *sg) { return sg->log; }

const char *sg_dir(struct mb_sg *sg) { return sg->dir; }

struct mb_io *mb_sg_io(struct mb_sg *sg) { return sg->io; }

struct mb_cache *mb_sg_cache(struct mb_sg *sg) { return sg->cache; }

int sg_for_each_db(struct mb_sg *sg, int (*fn)(void *arg, struct mb_db *db), void *arg)
{
	pthread_mutex_lock(&sg->lock);
	int r = 0;
	for (struct mb_db *d = sg->dbs; d && r == 0; d = d->next)
		r = fn(arg, d);
	pthread_mutex_unlock(&sg->lock);
	return r;
}

int mb_sg_flush(struct mb_sg *sg) { return log_wait(sg->log, log_append_lsn(sg->log)); }

int mb_sg_error(const struct mb_sg *sg) { return log_error(sg->log); }

void mb_sg_error_what(const struct mb_sg *sg, char *buf, size_t len)
{
	log_error_what(sg->log, buf, len);
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

static int mkdir_p(const char *path)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = 0;
			if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
				return mb_from_errno(errno);
			*p = '/';
		}
	}
	if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
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
	if (o->log_sector && (o->log_sector < 512 || o->log_sector > MB_LOG_SECTOR_MAX ||
			      (o->log_sector & (o->log_sector - 1))))
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
		sg->lockfd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
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
	if (r == 0)
		log_set_sector(sg->log, o->log_sector);
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
		r = sg_replay(sg, redo);
	}
	if (r == 0) {
		atomic_store(&sg->redo_started, redo);
		r = ckpt_start(sg, o->checkpoint_bytes ? o->checkpoint_bytes : (32u << 20));
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
	ckpt_stop(sg);
	int r = log_error(sg->log);
	if (r == 0)
		r = mb_sg_checkpoint(sg);
	sg_free(sg);
	return r;
}
