/* log.c: a storage group's write-ahead log with group commit.
 *
 * The log is one byte stream (LSN = offset) cut into MB_LOG_SEGMENT_SIZE
 * segment files.  Committers append whole records to an in-memory buffer
 * under the mutex; ONE writer thread swaps the buffer out, writes it to the
 * segment(s), then advances the durable LSN, wakes the synchronous waiters
 * and runs the async callbacks in LSN order.  Whatever accumulates while a
 * flush is in flight goes out in the next one: that is group commit.
 *
 * Sectors.  A flush is written in whole sectors (log_set_sector; 512 bytes
 * by default) the way ESE writes its log (ESE's source, LOG_WRITE_BUFFER::
 * ErrLGIWritePartialSector and ErrLGIWriteFullSectors, logwrite.cxx of
 * microsoft/Extensible-Storage-Engine; its "log writes" counter counts each
 * of these writes): the partial sector at the end goes with a shadow copy
 * in the sector after it, and the next flush rewrites that sector in place.
 * Each write is made durable (fdatasync) before the next one starts, as
 * ESE's write-through log writes were, so their order is the disk's:
 *
 *   flush, no shadow down:  [full sectors] [partial + shadow]      1-2 writes
 *   flush, a shadow down:   [the shadowed sector] [the rest or its copy]
 *                           [partial + shadow]                     2-3 writes
 *   only a partial sector, a shadow down: [partial] [shadow]       2 writes
 *
 * (a write that crosses into the next segment file is one more: a
 * segment's last sector has its shadow in the next segment's first).
 * While a sector holding acknowledged bytes is rewritten, its shadow holds
 * them: the scan reads a sector whose record does not check from its
 * shadow (rd_try_shadow) and log_start writes it back, before anything
 * touches the shadow.  Scope: this guards a torn sector as ESE's did, where
 * writes reach the disk in sectors (ESE's were unbuffered).  These files
 * are written through the page cache, which writes a file-system block
 * (4 KiB) whole, so with 512-byte sectors the block of the partial sector
 * is written again with its unchanged bytes by the writes that follow;
 * those keep the acknowledged bytes where a disk writes its sectors
 * atomically, as before sectors came in.  The LSNs are the stream's:
 * sectors, padding and shadows never change where a record is.  The
 * checkpoint file records the sector, so a log is always read and written
 * in the sector it was created with (log_read_checkpoint).
 *
 * Invariants: durable_lsn only grows and never passes what was written and
 * synced; tail holds the bytes of the partial sector at the durable end,
 * and shadow says its copy is in the next sector; after a failed write or
 * sync the log is in the ERROR state: the
 * durable LSN stops, every waiter gets the error, every later append
 * MB_ERDONLY.  The database side puts the log in the same state with
 * log_fail() when a database file fails beyond retrying (EIO on a read or
 * a write, a failed fsync: pages written since the last good sync may be
 * gone, so no later checkpoint may move the redo point past them; the
 * group is recovered from the log instead).  A checkpoint file (written via rename) names the redo
 * LSN; segments wholly below it are recycled (renamed past the newest, up to SPARE_SEGMENTS) or
 * removed.  New segments are zero-filled once.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <isa-l/crc.h>

#include "core/error.h"
#include "core/hist.h"
#include "db/dbint.h"

#define SEG MB_LOG_SEGMENT_SIZE
/* An append buffer holds its records from BUF_HEAD on, with room before
 * them for the partial sector's bytes already on disk and after them for
 * the last sector's padding and shadow copy, so the writer builds a
 * flush's image in place and never allocates (a shortage fails the append
 * that needed the room, not the log). */
#define BUF_HEAD MB_LOG_SECTOR_MAX
#define BUF_ROOM (3 * MB_LOG_SECTOR_MAX)

struct waiter {
	uint64_t lsn;
	mb_commit_cb cb;
	void *arg;
	uint64_t t0;
};

struct mb_log {
	struct mb_io *io;
	char *dir;
	pthread_mutex_t lock;
	pthread_cond_t wake, done;
	uint8_t *buf, *spare; /* records at BUF_HEAD, room for a flush's image */
	size_t len, cap, spare_cap;
	uint64_t buf_lsn, append_lsn;
	uint32_t buf_records;
	_Atomic uint64_t durable;
	int error;
	char error_what[160]; /* what failed first (mb_sg_error_what) */
	bool stop, started;
	struct waiter *q;
	size_t qhead, qlen, qcap;
	struct mb_file *seg;
	uint64_t seg_idx;
	/* the writer's sectors (write_flush): the bytes of the partial sector
	 * at the durable end, whether its shadow copy is down */
	size_t sec;	/* the sector (log_set_sector, else the checkpoint's) */
	bool sec_asked; /* log_set_sector named one (not the default) */
	bool sec_known; /* asked, recorded, or the log is new: checkpoints record it */
	uint8_t tail[MB_LOG_SECTOR_MAX];
	size_t tail_len;
	bool shadow;
	/* the scan's repair of a torn partial sector from its shadow: the
	 * sector's stream position and its bytes (log_start writes it back) */
	bool repaired;
	uint64_t repair_pos;
	uint8_t repair[MB_LOG_SECTOR_MAX];
	/* guards creating, recycling and removing segment files (the writer
	 * opens or creates the segment it needs; a checkpoint renames old
	 * segments to indices beyond every existing one) */
	pthread_mutex_t seglock;
	pthread_t thr;
	uint64_t commits, writes, bytes, ckpt_redo, ckpts, nsegs;
	uint64_t transient_waits; /* segment opens retried (EMFILE, ENOMEM) */
	struct mb_hist *commit_h, *write_h;
	uint64_t ckpt_bytes, last_trigger;
	void (*ckpt_fn)(void *);
	void *ckpt_arg;
};

static void seg_path(const struct mb_log *l, uint64_t idx, char *p, size_t n)
{
	snprintf(p, n, "%s/%016" PRIx64 ".seg", l->dir, idx);
}

static int count_segs(struct mb_log *l, uint64_t *minidx, uint64_t *maxidx)
{
	DIR *d = opendir(l->dir);
	if (!d)
		return mb_from_errno(errno);
	struct dirent *e;
	uint64_t n = 0, mn = UINT64_MAX, mx = 0;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len != 20 || strcmp(e->d_name + 16, ".seg"))
			continue;
		uint64_t idx = strtoull(e->d_name, NULL, 16);
		n++;
		if (idx < mn)
			mn = idx;
		if (idx > mx)
			mx = idx;
	}
	closedir(d);
	pthread_mutex_lock(&l->lock);
	l->nsegs = n;
	pthread_mutex_unlock(&l->lock);
	if (minidx)
		*minidx = mn;
	if (maxidx)
		*maxidx = mx;
	return 0;
}

int log_open(struct mb_io *io, const char *dir, struct mb_log **out)
{
	struct mb_log *l = calloc(1, sizeof(*l));
	if (!l)
		return MB_ENOMEM;
	l->io = io;
	l->dir = strdup(dir);
	l->seg_idx = UINT64_MAX;
	l->sec = MB_LOG_SECTOR_SIZE;
	pthread_mutex_init(&l->lock, NULL);
	pthread_mutex_init(&l->seglock, NULL);
	pthread_cond_init(&l->wake, NULL);
	pthread_cond_init(&l->done, NULL);
	if (!l->dir || mb_hist_create(&l->commit_h) < 0 || mb_hist_create(&l->write_h) < 0) {
		log_close(l);
		return MB_ENOMEM;
	}
	int r = count_segs(l, NULL, NULL);
	if (r < 0) {
		log_close(l);
		return r;
	}
	*out = l;
	return 0;
}

static void fail_all(struct mb_log *l, struct waiter **cbs, size_t *ncbs);
static int queue_push(struct mb_log *l, uint64_t lsn, mb_commit_cb cb, void *arg, uint64_t t0);

void log_close(struct mb_log *l)
{
	if (!l)
		return;
	if (l->started) {
		pthread_mutex_lock(&l->lock);
		l->stop = true;
		pthread_cond_broadcast(&l->wake);
		pthread_mutex_unlock(&l->lock);
		pthread_join(l->thr, NULL);
	}
	mb_file_close(l->seg);
	free(l->buf);
	free(l->spare);
	free(l->q);
	mb_hist_destroy(l->commit_h);
	mb_hist_destroy(l->write_h);
	pthread_mutex_destroy(&l->lock);
	pthread_mutex_destroy(&l->seglock);
	pthread_cond_destroy(&l->wake);
	pthread_cond_destroy(&l->done);
	free(l->dir);
	free(l);
}

/* ---------------------------- reading -------------------------------- */

struct reader {
	struct mb_log *l;
	uint8_t *seg;
	uint64_t idx;
	size_t have; /* valid bytes of the loaded segment */
	bool loaded;
	uint64_t bytes;
	/* a sector read from its shadow instead (patch_on): its position */
	bool patch_on;
	uint64_t patch_pos;
	uint8_t patch[MB_LOG_SECTOR_MAX];
};

static int rd_load(struct reader *r, uint64_t idx)
{
	if (r->loaded && r->idx == idx)
		return 0;
	char p[4096];
	seg_path(r->l, idx, p, sizeof(p));
	struct mb_file *f;
	r->loaded = false;
	if (mb_io_open(r->l->io, p, MB_IO_RDONLY, MB_FILE_LOG, &f) < 0)
		return MB_ENOTFOUND;
	uint64_t size = 0;
	mb_file_size(f, &size);
	if (size > SEG)
		size = SEG;
	int e = size ? mb_file_read(f, r->seg, size, 0) : 0;
	mb_file_close(f);
	if (e < 0)
		return e;
	r->bytes += size;
	r->idx = idx;
	r->have = size;
	r->loaded = true;
	return 0;
}

/* copy n bytes of the stream at lsn as on disk; MB_ENOTFOUND when not there */
static int rd_raw(struct reader *r, uint64_t lsn, size_t n, uint8_t *dst)
{
	while (n) {
		int e = rd_load(r, lsn / SEG);
		if (e < 0)
			return e;
		size_t off = lsn % SEG, k = SEG - off;
		if (k > n)
			k = n;
		if (off + k > r->have)
			return MB_ENOTFOUND;
		memcpy(dst, r->seg + off, k);
		dst += k;
		lsn += k;
		n -= k;
	}
	return 0;
}

/* the same with the patched sector read from its shadow */
static int rd_bytes(struct reader *r, uint64_t lsn, size_t n, uint8_t *dst)
{
	const uint64_t S = r->l->sec;
	int e = rd_raw(r, lsn, n, dst);
	if (e < 0 || !r->patch_on || lsn >= r->patch_pos + S || lsn + n <= r->patch_pos)
		return e;
	uint64_t a = lsn > r->patch_pos ? lsn : r->patch_pos;
	uint64_t b = lsn + n < r->patch_pos + S ? lsn + n : r->patch_pos + S;
	memcpy(dst + (a - lsn), r->patch + (a - r->patch_pos), (size_t)(b - a));
	return 0;
}

/* The record at pos: 0 and its length when whole and valid (in *rec), 1
 * when not (its claimed length in *claim, 0 when its header is unreadable
 * or implausible), < 0 on error. */
static int rd_record(struct reader *r, uint64_t pos, uint8_t **rec, size_t *rcap, uint32_t *len,
		     uint32_t *claim)
{
	uint8_t h[LOG_REC_HDR];
	*claim = 0;
	if (rd_bytes(r, pos, sizeof(h), h) < 0)
		return 1;
	uint32_t n = rd32(h + 4);
	if (n < LOG_REC_HDR || n > MB_VALUE_MAX * 2u + (1u << 20))
		return 1;
	*claim = n; /* even when the LSN below is torn */
	if (rd64(h + 8) != pos)
		return 1;
	if (n > *rcap) {
		uint8_t *nr = realloc(*rec, n);
		if (!nr)
			return MB_ENOMEM;
		*rec = nr;
		*rcap = n;
	}
	if (rd_bytes(r, pos, n, *rec) < 0)
		return 1;
	if (crc32_gzip_refl(0, *rec + 4, n - 4) != rd32(*rec))
		return 1;
	*len = n;
	return 0;
}

/* The record at pos is not valid: was a sector of it torn while its
 * shadow copy held the acknowledged bytes?  The torn sector is the one the
 * record ends in, or the one its header reaches into or starts in; try
 * each with the sector after it (the next segment's first for a segment's
 * last) as its contents.  1 when one makes the record valid (the patch
 * stays on), 0 when none does, < 0 on error (no patch). */
static int rd_try_shadow(struct reader *r, uint64_t pos, uint32_t claim, uint8_t **rec,
			 size_t *rcap, uint32_t *len)
{
	const uint64_t S = r->l->sec;
	uint64_t at[3] = {pos, pos + LOG_REC_HDR - 1, claim ? pos + claim - 1 : pos};
	uint64_t cand[3];
	int nc = 0;
	for (int i = 0; i < 3; i++) {
		uint64_t s = at[i] - at[i] % S;
		bool seen = false;
		for (int j = 0; j < nc; j++)
			seen = seen || cand[j] == s;
		if (!seen)
			cand[nc++] = s;
	}
	for (int i = 0; i < nc; i++) {
		uint64_t s = cand[i];
		if (rd_raw(r, s + S, S, r->patch) < 0)
			continue;
		r->patch_pos = s;
		r->patch_on = true;
		uint32_t c2;
		int e = rd_record(r, pos, rec, rcap, len, &c2);
		if (e == 0)
			return 1;
		r->patch_on = false;
		if (e < 0)
			return e;
	}
	return 0;
}

int log_scan(struct mb_log *l, uint64_t from, log_rec_cb cb, void *arg, uint64_t *end,
	     uint64_t *records)
{
	struct reader r = {.l = l};
	r.seg = malloc(SEG);
	if (!r.seg)
		return MB_ENOMEM;
	uint64_t pos = from, n = 0;
	uint8_t *rec = NULL;
	size_t rcap = 0;
	int err = 0;
	bool tried = false;
	for (;;) {
		uint32_t len = 0, claim = 0;
		int e = rd_record(&r, pos, &rec, &rcap, &len, &claim);
		if (e == 1 && !tried) {
			/* one repair per scan, at the end of the stream only */
			tried = true;
			e = rd_try_shadow(&r, pos, claim, &rec, &rcap, &len);
			e = e == 1 ? 0 : e == 0 ? 1 : e;
		}
		if (e < 0)
			err = e;
		if (e)
			break;
		if (cb) {
			err = cb(arg, pos, pos + len, rd32(rec + 16), rec + LOG_REC_HDR,
				 len - LOG_REC_HDR, rd32(rec + 20));
			if (err < 0)
				break;
		}
		n++;
		pos += len;
	}
	/* the repaired sector, for log_start to write back */
	pthread_mutex_lock(&l->lock);
	l->repaired = r.patch_on;
	if (r.patch_on) {
		l->repair_pos = r.patch_pos;
		memcpy(l->repair, r.patch, l->sec);
	}
	pthread_mutex_unlock(&l->lock);
	free(rec);
	free(r.seg);
	*end = pos;
	if (records)
		*records = n;
	return err;
}

/* ---------------------------- writing -------------------------------- */

/* Open the segment file idx for writing: an existing one (recycled by a
 * checkpoint: its old records carry other LSNs, so they never read as
 * valid), or a new one filled with zeros and synced, so that later
 * fdatasyncs flush data only (no extent conversion in the file system). */
static int seg_open(struct mb_log *l, uint64_t idx)
{
	if (l->seg && l->seg_idx == idx)
		return 0;
	if (l->seg) {
		mb_file_close(l->seg);
		l->seg = NULL;
	}
	char p[4096];
	seg_path(l, idx, p, sizeof(p));
	struct mb_file *f;
	pthread_mutex_lock(&l->seglock);
	int r = mb_io_open(l->io, p, 0, MB_FILE_LOG, &f);
	if (r == MB_ENOTFOUND) {
		r = mb_io_open(l->io, p, MB_IO_CREATE, MB_FILE_LOG, &f);
		if (r < 0)
			goto out;
		uint8_t *z = calloc(1, SEG);
		r = z ? mb_file_write(f, z, SEG, 0) : MB_ENOMEM;
		free(z);
		if (r == 0)
			r = mb_file_sync(f, false);
		if (r == 0)
			r = mb_io_sync_dir(l->io, l->dir);
		if (r < 0) {
			mb_file_close(f);
			goto out;
		}
		pthread_mutex_lock(&l->lock);
		l->nsegs++;
		pthread_mutex_unlock(&l->lock);
	} else if (r < 0) {
		goto out;
	}
	l->seg = f;
	l->seg_idx = idx;
out:
	pthread_mutex_unlock(&l->seglock);
	return r;
}

/* A transient shortage (no file descriptor, no memory) while opening a
 * segment is not a failed write: nothing was written, so the writer waits
 * and tries again (up to TRANSIENT_RETRY_MS, doubling from 1 ms to 100 ms)
 * instead of putting the group in the ERROR state; the commits wait. */
#define TRANSIENT_RETRY_MS 30000
static bool transient(int r) { return r == MB_EMFILE || r == MB_ENOMEM; }

static int seg_open_retry(struct mb_log *l, uint64_t idx)
{
	int r = seg_open(l, idx);
	uint64_t waited_us = 0, step = 1000;
	bool retried = false;
	while (transient(r) && waited_us < TRANSIENT_RETRY_MS * 1000ull) {
		pthread_mutex_lock(&l->lock);
		bool stop = l->stop;
		if (!retried)
			l->transient_waits++;
		pthread_mutex_unlock(&l->lock);
		if (stop)
			break;
		retried = true;
		struct timespec ts = {0, (long)step * 1000};
		nanosleep(&ts, NULL);
		waited_us += step;
		step = step * 2 > 100000 ? 100000 : step * 2;
		r = seg_open(l, idx);
	}
	if (r == 0 && retried) {
		/* the attempt that failed may have created the file: its
		 * directory entry must be durable too */
		do {
			r = mb_io_sync_dir(l->io, l->dir);
			if (transient(r)) {
				struct timespec ts = {0, 10000000};
				nanosleep(&ts, NULL);
				waited_us += 10000;
			}
		} while (transient(r) && waited_us < TRANSIENT_RETRY_MS * 1000ull);
	}
	return r;
}

/* One log write: n bytes at stream position lsn (split where a segment
 * ends), each piece written and then made durable before the next write
 * starts (ESE wrote its log write-through: the order of its writes is the
 * order they reach the disk, which the shadow sector needs). */
static int write_at(struct mb_log *l, uint64_t lsn, const uint8_t *p, size_t n)
{
	while (n) {
		uint64_t idx = lsn / SEG;
		size_t off = lsn % SEG, k = SEG - off;
		if (k > n)
			k = n;
		int r = seg_open_retry(l, idx);
		if (r < 0)
			return r;
		uint64_t t0 = mb_io_now_ns();
		r = mb_file_write(l->seg, p, k, off);
		if (r == 0)
			r = mb_file_sync(l->seg, true);
		if (r < 0)
			return r;
		/* the log write latency: one write and its sync */
		uint64_t t1 = mb_io_now_ns();
		pthread_mutex_lock(&l->lock);
		mb_hist_record(l->write_h, t1 - t0);
		pthread_mutex_unlock(&l->lock);
		p += k;
		lsn += k;
		n -= k;
	}
	return 0;
}

/* The sector sec written at first, then (once that is durable) at second:
 * a sector and its shadow, in the order that keeps one good copy. */
static int write_copies(struct mb_log *l, uint64_t first, uint64_t second, const uint8_t *sec)
{
	int r = write_at(l, first, sec, l->sec);
	return r ? r : write_at(l, second, sec, l->sec);
}

/* Write a buffer's records (dlen bytes of whole records at buf + BUF_HEAD,
 * stream position start, which is where the durable stream ends) in whole
 * sectors, as ESE's log writer does (see the file comment):
 *   - the sectors that fill up are written; when a shadow sector is down,
 *     the first of them (the partial sector it shadows) goes alone, then
 *     the rest (with one full sector only, its copy overwrites the shadow);
 *   - the partial sector at the end is written with its shadow copy in the
 *     next sector: one write of both when no shadow was down, else the
 *     sector and then its shadow in two writes, so the acknowledged bytes
 *     of the sector are on disk in one place or the other at every moment.
 * The bytes of the partial sector already on disk come from l->tail. */
static int write_flush(struct mb_log *l, uint64_t start, uint8_t *buf, size_t dlen)
{
	const size_t S = l->sec;
	size_t pre = start % S;
	uint64_t pos = start - pre;
	size_t total = pre + dlen, full = total / S, part = total % S;
	/* the image, built around the records in the buffer's room: the tail
	 * before them, the partial sector padded and room for its copy after
	 * (pre < BUF_HEAD; (full + 2) * S - total <= BUF_ROOM - BUF_HEAD) */
	size_t need = (full + 2) * S;
	uint8_t *img = buf + BUF_HEAD - pre;
	memcpy(img, l->tail, pre);
	memset(img + total, 0, need - total);
	int r = 0;
	if (full) {
		if (l->shadow && full == 1) {
			r = write_copies(l, pos, pos + S, img);
		} else if (l->shadow) {
			r = write_at(l, pos, img, S);
			if (!r)
				r = write_at(l, pos + S, img + S, (full - 1) * S);
		} else {
			r = write_at(l, pos, img, full * S);
		}
		if (r)
			return r;
		l->shadow = false;
		pos += full * S;
	}
	l->tail_len = part;
	if (!part)
		return 0;
	uint8_t *sec = img + full * S;
	memcpy(l->tail, sec, part);
	/* (a segment's last sector has its shadow in the next segment's first:
	 * then the one write is two, one per file) */
	if (l->shadow) {
		r = write_copies(l, pos, pos + S, sec);
	} else {
		memcpy(sec + S, sec, S);
		r = write_at(l, pos, sec, 2 * S);
	}
	l->shadow = true;
	return r;
}

static void fail_all(struct mb_log *l, struct waiter **cbs, size_t *ncbs)
{
	/* lock held: every queued async waiter fails */
	*cbs = malloc((l->qlen ? l->qlen : 1) * sizeof(**cbs));
	*ncbs = 0;
	while (l->qlen) {
		if (*cbs)
			(*cbs)[(*ncbs)++] = l->q[l->qhead];
		l->qhead = (l->qhead + 1) % l->qcap;
		l->qlen--;
	}
}

static void *writer_main(void *arg)
{
	struct mb_log *l = arg;
	pthread_mutex_lock(&l->lock);
	for (;;) {
		bool ready = l->qlen && l->q[l->qhead].lsn <= atomic_load(&l->durable);
		if (l->len == 0 && !ready && !(l->error && l->qlen)) {
			if (l->stop)
				break;
			pthread_cond_wait(&l->wake, &l->lock);
			continue;
		}
		int r = l->error;
		uint64_t start = l->buf_lsn;
		size_t dlen = l->len;
		uint32_t nrec = l->buf_records;
		uint8_t *data = l->buf;
		if (dlen && !r) {
			size_t dcap = l->cap;
			l->buf = l->spare;
			l->cap = l->spare_cap;
			l->spare = NULL;
			l->spare_cap = 0;
			l->len = 0;
			l->buf_records = 0;
			l->buf_lsn = l->append_lsn;
			pthread_mutex_unlock(&l->lock);
			r = write_flush(l, start, data, dlen);
			pthread_mutex_lock(&l->lock);
			if (!l->spare) {
				l->spare = data;
				l->spare_cap = dcap;
			} else {
				free(data);
			}
			if (r == 0) {
				atomic_store(&l->durable, start + dlen);
				l->commits += nrec;
				l->writes++;
				l->bytes += dlen;
			} else {
				l->error = r;
				snprintf(l->error_what, sizeof(l->error_what), "log write or sync");
			}
		} else if (dlen && r) {
			l->len = 0;
			l->buf_records = 0;
		}
		/* completions */
		struct waiter *cbs = NULL;
		size_t ncbs = 0;
		if (l->error) {
			fail_all(l, &cbs, &ncbs);
		} else {
			uint64_t d = atomic_load(&l->durable);
			size_t k = 0;
			while (k < l->qlen && l->q[(l->qhead + k) % l->qcap].lsn <= d)
				k++;
			if (k) {
				cbs = malloc(k * sizeof(*cbs));
				for (size_t i = 0; i < k && cbs; i++)
					cbs[ncbs++] = l->q[(l->qhead + i) % l->qcap];
				if (cbs) {
					l->qhead = (l->qhead + k) % l->qcap;
					l->qlen -= k;
				}
			}
		}
		uint64_t now = mb_io_now_ns();
		for (size_t i = 0; i < ncbs; i++)
			if (!l->error)
				mb_hist_record(l->commit_h, now - cbs[i].t0);
		int status = l->error;
		pthread_cond_broadcast(&l->done);
		bool trig = false;
		if (l->ckpt_fn && !l->error &&
		    atomic_load(&l->durable) - l->last_trigger >= l->ckpt_bytes) {
			l->last_trigger = atomic_load(&l->durable);
			trig = true;
		}
		pthread_mutex_unlock(&l->lock);
		for (size_t i = 0; i < ncbs; i++)
			cbs[i].cb(cbs[i].arg, status);
		free(cbs);
		if (trig)
			l->ckpt_fn(l->ckpt_arg);
		pthread_mutex_lock(&l->lock);
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

void log_set_sector(struct mb_log *l, uint32_t sec)
{
	l->sec = sec ? sec : MB_LOG_SECTOR_SIZE;
	l->sec_asked = sec != 0;
	l->sec_known = sec != 0;
}

uint32_t log_sector(const struct mb_log *l) { return (uint32_t)l->sec; }

int log_start(struct mb_log *l, uint64_t end)
{
	const size_t S = l->sec;
	/* cut the torn tail: zero the rest of the last segment, drop later ones */
	uint64_t idx = end / SEG, mn, mx;
	int r = count_segs(l, &mn, &mx);
	if (r < 0)
		return r;
	if (l->nsegs && mx > idx) {
		for (uint64_t i = idx + 1; i <= mx; i++) {
			char p[4096];
			seg_path(l, i, p, sizeof(p));
			mb_io_unlink(l->io, p);
		}
		mb_io_sync_dir(l->io, l->dir);
		count_segs(l, NULL, NULL);
	}
	/* Then the tail of the stream from the end on is zeroed, so nothing of
	 * a lost flush reads as records later, and the partial sector at the
	 * end (the writer's tail) is written clean with its shadow copy, so
	 * the next flush may rewrite it in place.  Every rewrite of a sector
	 * holding acknowledged bytes happens while another good copy of them
	 * is on disk: the sector the scan read from its shadow is written
	 * back before anything touches that shadow, and an intact partial
	 * sector gets its shadow before it is rewritten. */
	l->tail_len = end % S;
	l->shadow = false;
	uint64_t P = end - l->tail_len;
	uint8_t sec[MB_LOG_SECTOR_MAX];
	if (l->repaired && l->repair_pos < end && l->repair_pos != P) {
		/* a whole sector before the end (its record ended on its last
		 * byte): back in place before the zeroes reach its shadow */
		r = write_at(l, l->repair_pos, l->repair, S);
		if (r < 0)
			return r;
	}
	bool repaired_tail = l->repaired && l->repair_pos == P && l->tail_len;
	l->repaired = false;
	uint64_t zero_from = end;
	if (l->tail_len) {
		memset(sec, 0, S);
		if (repaired_tail)
			memcpy(sec, l->repair, l->tail_len);
		else if ((r = seg_open(l, P / SEG)) < 0 ||
			 (r = mb_file_read(l->seg, sec, l->tail_len, P % SEG)) < 0)
			return r;
		memcpy(l->tail, sec, l->tail_len);
		/* the good copy first: the repaired sector, or the shadow of an
		 * intact one; then the other */
		r = repaired_tail ? write_copies(l, P, P + S, sec) : write_copies(l, P + S, P, sec);
		if (r < 0)
			return r;
		l->shadow = true;
		zero_from = P + 2 * S;
	}
	if (zero_from / SEG == idx && zero_from % SEG) {
		r = seg_open(l, idx);
		if (r < 0)
			return r;
		size_t off = zero_from % SEG;
		uint8_t *z = calloc(1, SEG - off);
		if (!z)
			return MB_ENOMEM;
		r = mb_file_write(l->seg, z, SEG - off, off);
		free(z);
		if (r == 0)
			r = mb_file_sync(l->seg, true);
		if (r < 0)
			return r;
	}
	l->append_lsn = l->buf_lsn = end;
	atomic_store(&l->durable, end);
	l->last_trigger = end;
	if (pthread_create(&l->thr, NULL, writer_main, l) != 0)
		return MB_ESYS;
	l->started = true;
	return 0;
}

int log_append(struct mb_log *l, uint32_t type, uint32_t count, const uint8_t *payload, size_t len,
	       uint64_t *end)
{
	return log_append_cb(l, type, count, payload, len, end, NULL, NULL, 0);
}

int log_append_cb(struct mb_log *l, uint32_t type, uint32_t count, const uint8_t *payload,
		  size_t len, uint64_t *end, mb_commit_cb cb, void *arg, uint64_t t0)
{
	size_t total = LOG_REC_HDR + len;
	if (total > UINT32_MAX / 2)
		return MB_ETOOBIG;
	pthread_mutex_lock(&l->lock);
	if (l->error) {
		pthread_mutex_unlock(&l->lock);
		return MB_ERDONLY;
	}
	if (cb && l->qlen == l->qcap && queue_push(l, 0, NULL, NULL, 0) == 0)
		l->qlen--; /* grow the queue first, so the push below cannot fail */
	if (cb && l->qlen == l->qcap) {
		pthread_mutex_unlock(&l->lock);
		return MB_ENOMEM;
	}
	if (l->len + total + BUF_ROOM > l->cap || !l->buf) {
		size_t ncap = l->cap ? l->cap : (256u << 10);
		while (ncap < l->len + total + BUF_ROOM)
			ncap *= 2;
		uint8_t *nb = realloc(l->buf, ncap);
		if (!nb) {
			pthread_mutex_unlock(&l->lock);
			return MB_ENOMEM;
		}
		l->buf = nb;
		l->cap = ncap;
	}
	uint8_t *h = l->buf + BUF_HEAD + l->len;
	wr32(h + 4, (uint32_t)total);
	wr64(h + 8, l->append_lsn);
	wr32(h + 16, type);
	wr32(h + 20, count);
	memcpy(h + LOG_REC_HDR, payload, len);
	wr32(h, crc32_gzip_refl(0, h + 4, (uint64_t)(total - 4)));
	l->len += total;
	l->append_lsn += total;
	l->buf_records++;
	*end = l->append_lsn;
	if (cb)
		queue_push(l, *end, cb, arg, t0);
	pthread_cond_signal(&l->wake);
	pthread_mutex_unlock(&l->lock);
	return 0;
}

uint64_t log_append_lsn(struct mb_log *l)
{
	pthread_mutex_lock(&l->lock);
	uint64_t v = l->append_lsn;
	pthread_mutex_unlock(&l->lock);
	return v;
}

int log_wait(struct mb_log *l, uint64_t lsn)
{
	pthread_mutex_lock(&l->lock);
	while (atomic_load(&l->durable) < lsn && !l->error) {
		pthread_cond_signal(&l->wake);
		pthread_cond_wait(&l->done, &l->lock);
	}
	int r = atomic_load(&l->durable) >= lsn ? 0 : l->error;
	pthread_mutex_unlock(&l->lock);
	return r;
}

/* lock held: queue a completion */
static int queue_push(struct mb_log *l, uint64_t lsn, mb_commit_cb cb, void *arg, uint64_t t0)
{
	if (l->qlen == l->qcap) {
		size_t ncap = l->qcap ? l->qcap * 2 : 64;
		struct waiter *nq = malloc(ncap * sizeof(*nq));
		if (!nq)
			return MB_ENOMEM;
		for (size_t i = 0; i < l->qlen; i++)
			nq[i] = l->q[(l->qhead + i) % l->qcap];
		free(l->q);
		l->q = nq;
		l->qcap = ncap;
		l->qhead = 0;
	}
	l->q[(l->qhead + l->qlen) % l->qcap] = (struct waiter){lsn, cb, arg, t0};
	l->qlen++;
	return 0;
}

int log_wait_async(struct mb_log *l, uint64_t lsn, mb_commit_cb cb, void *arg, uint64_t t0)
{
	pthread_mutex_lock(&l->lock);
	if (l->error) {
		pthread_mutex_unlock(&l->lock);
		return MB_ERDONLY;
	}
	int r = queue_push(l, lsn, cb, arg, t0);
	pthread_cond_signal(&l->wake);
	pthread_mutex_unlock(&l->lock);
	return r;
}

void log_note_commit(struct mb_log *l, uint64_t t0)
{
	pthread_mutex_lock(&l->lock);
	mb_hist_record(l->commit_h, mb_io_now_ns() - t0);
	pthread_mutex_unlock(&l->lock);
}

const _Atomic uint64_t *log_durable_ptr(struct mb_log *l) { return &l->durable; }

void log_fail(struct mb_log *l, int err, const char *what)
{
	if (!l || err >= 0)
		return;
	pthread_mutex_lock(&l->lock);
	if (!l->error) {
		l->error = err;
		snprintf(l->error_what, sizeof(l->error_what), "%s", what ? what : "");
		/* the writer fails every waiter and stops advancing durable */
		pthread_cond_broadcast(&l->wake);
		pthread_cond_broadcast(&l->done);
	}
	pthread_mutex_unlock(&l->lock);
}

void log_error_what(struct mb_log *l, char *buf, size_t len)
{
	pthread_mutex_lock(&l->lock);
	snprintf(buf, len, "%s", l->error ? l->error_what : "");
	pthread_mutex_unlock(&l->lock);
}

int log_error(struct mb_log *l)
{
	pthread_mutex_lock(&l->lock);
	int e = l->error;
	pthread_mutex_unlock(&l->lock);
	return e;
}

/* ---------------------------- checkpoints ---------------------------- */

/* The checkpoint file, 32 bytes: the magic, the redo LSN (8 bytes), the
 * log's sector (4; 0 when not known: files written before it was recorded,
 * and the logs they belong to, unless a sector is named), 4
 * zero bytes, the CRC-32 of the 24 before it (4), 4 zero bytes. */
#define CKPT_MAGIC "MBCKPT01"

int log_read_checkpoint(struct mb_log *l, uint64_t *redo)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/checkpoint", l->dir);
	struct mb_file *f;
	int r = mb_io_open(l->io, p, MB_IO_RDONLY, MB_FILE_OTHER, &f);
	if (r == MB_ENOTFOUND)
		l->sec_known = true; /* a new log: written in the sector set */
	if (r < 0)
		return r;
	uint8_t b[32];
	r = mb_file_read(f, b, sizeof(b), 0);
	mb_file_close(f);
	if (r < 0)
		return r == MB_ERANGE ? MB_ECORRUPT : r;
	if (memcmp(b, CKPT_MAGIC, 8) || rd32(b + 24) != crc32_gzip_refl(0, b, 24))
		return MB_ECORRUPT;
	/* the sector the log was written in (0 in a file from before it was
	 * recorded: the one set stays) */
	uint32_t sec = rd32(b + 16);
	if (sec && (sec < 512 || sec > MB_LOG_SECTOR_MAX || (sec & (sec - 1))))
		return MB_ECORRUPT;
	if (sec && sec != l->sec) {
		if (l->sec_asked)
			return MB_ECONFIG;
		l->sec = sec;
	}
	if (sec)
		l->sec_known = true;
	*redo = rd64(b + 8);
	l->ckpt_redo = *redo;
	return 0;
}

int log_write_checkpoint(struct mb_log *l, uint64_t redo)
{
	char p[4096], t[4096];
	snprintf(p, sizeof(p), "%s/checkpoint", l->dir);
	snprintf(t, sizeof(t), "%s/checkpoint.tmp", l->dir);
	uint8_t b[32] = {0};
	memcpy(b, CKPT_MAGIC, 8);
	wr64(b + 8, redo);
	/* a log opened from a file that recorded none, with none named, may
	 * have been written in another sector: it stays unrecorded */
	wr32(b + 16, l->sec_known ? (uint32_t)l->sec : 0);
	wr32(b + 24, crc32_gzip_refl(0, b, 24));
	struct mb_file *f;
	int r = mb_io_open(l->io, t, MB_IO_CREATE | MB_IO_TRUNC, MB_FILE_OTHER, &f);
	if (r < 0)
		return r;
	r = mb_file_write(f, b, sizeof(b), 0);
	if (r == 0)
		r = mb_file_sync(f, false);
	mb_file_close(f);
	if (r == 0)
		r = mb_io_rename(l->io, t, p);
	if (r == 0)
		r = mb_io_sync_dir(l->io, l->dir);
	if (r == 0) {
		pthread_mutex_lock(&l->lock);
		l->ckpt_redo = redo;
		l->ckpts++;
		pthread_mutex_unlock(&l->lock);
	}
	return r;
}

/* spare segment files kept for reuse beyond the one being written: enough
 * for the default 32 MiB between checkpoints and some more, so a steady
 * load never creates (and zero-fills) new segments; with 16 spares half the
 * segments of each checkpoint interval were new: 1 MiB of zeros written and
 * synced per MiB of log */
#define SPARE_SEGMENTS 48

int log_remove_before(struct mb_log *l, uint64_t redo)
{
	pthread_mutex_lock(&l->seglock);
	uint64_t mn, mx;
	int r = count_segs(l, &mn, &mx);
	if (r < 0 || !l->nsegs) {
		pthread_mutex_unlock(&l->seglock);
		return r;
	}
	/* the writer's segment (seg_idx changes only under seglock) */
	uint64_t cur = l->seg ? l->seg_idx : redo / SEG;
	uint64_t top = mx > cur ? mx : cur;
	uint64_t spares = mx > cur ? mx - cur : 0;
	bool any = false;
	for (uint64_t i = mn; (i + 1) * (uint64_t)SEG <= redo && i < cur && i <= mx; i++) {
		char p[4096], q[4096];
		seg_path(l, i, p, sizeof(p));
		if (spares < SPARE_SEGMENTS) {
			seg_path(l, top + 1, q, sizeof(q));
			if (mb_io_rename(l->io, p, q) == 0) {
				top++;
				spares++;
				any = true;
				continue;
			}
		}
		if (mb_io_unlink(l->io, p) == 0)
			any = true;
	}
	if (any) {
		mb_io_sync_dir(l->io, l->dir);
		count_segs(l, NULL, NULL);
	}
	pthread_mutex_unlock(&l->seglock);
	return 0;
}

void log_set_ckpt_trigger(struct mb_log *l, uint64_t bytes, void (*fn)(void *), void *arg)
{
	pthread_mutex_lock(&l->lock);
	l->ckpt_bytes = bytes;
	l->ckpt_fn = fn;
	l->ckpt_arg = arg;
	pthread_mutex_unlock(&l->lock);
}

void log_stats(struct mb_log *l, struct mb_sg_stats *out)
{
	pthread_mutex_lock(&l->lock);
	out->commits = l->commits;
	out->log_writes = l->writes;
	out->log_bytes = l->bytes;
	out->commits_per_write_x100 = l->writes ? l->commits * 100 / l->writes : 0;
	out->durable_lsn = atomic_load(&l->durable);
	out->checkpoint_lsn = l->ckpt_redo;
	out->checkpoint_depth =
	    out->durable_lsn > l->ckpt_redo ? out->durable_lsn - l->ckpt_redo : 0;
	out->checkpoints = l->ckpts;
	out->log_segments = l->nsegs;
	out->transient_waits = l->transient_waits;
	pthread_mutex_unlock(&l->lock);
}

void log_commit_hist_take(struct mb_log *l, struct mb_hist *dst)
{
	pthread_mutex_lock(&l->lock);
	mb_hist_merge(dst, l->commit_h);
	mb_hist_reset(l->commit_h);
	pthread_mutex_unlock(&l->lock);
}

void log_write_hist_take(struct mb_log *l, struct mb_hist *dst)
{
	pthread_mutex_lock(&l->lock);
	mb_hist_merge(dst, l->write_h);
	mb_hist_reset(l->write_h);
	pthread_mutex_unlock(&l->lock);
}
