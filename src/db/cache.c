/* cache.c: the database cache (buffer pool) and page checksums (CRC-32).
 *
 * Frames are allocated on demand up to the byte limit and found through a
 * hash of (file, page).  Eviction is CLOCK with a small use count: a page
 * enters with count 0 and each hit adds one (max REF_MAX); the hand
 * decrements, so pages seen once (a scan) go first and a hot page survives
 * a scan of several times the cache size.  Dirty, pinned, in-I/O and
 * transaction-held frames are never evicted; a lazy-writer thread writes
 * dirty pages back (when dirty bytes pass a quarter of the cache, or when a
 * thread is starved of frames) so the thread needing a frame does not write.
 * WAL rule: a page is written only when its LSN <= its log's durable LSN;
 * while a transaction holds a frame, only the committed image kept aside is
 * ever written (no-steal).
 *
 * Write-back pool: the lazy writer only CHOOSES pages; the writes are done
 * by a pool of write-back threads (MB_CACHE_WRITERS_DEFAULT, 8; or the
 * count given to mb_cache_create_ex; or MAILBENCH_CACHE_WRITERS in the
 * environment), so up to that many page writes are in flight at once and
 * write-back keeps up when the device's write latency rises under many
 * readers (one blocking writer ran at 1/latency: the cache filled with
 * dirty frames, the clock then evicted B+tree root and internal pages and
 * reads per transaction tripled).  WB_SLOTS slots, each with its own
 * aligned buffer, carry a page from the writer to a write-back thread:
 * under the mutex the writer checks the WAL rule and !txn_held, copies the
 * frame's committed image into a free slot, sets frame->writing and adds a
 * pin (so the frame is neither evicted, nor picked twice, nor dropped by
 * cache_file_remove) and queues the slot; a write-back thread seals and
 * writes the COPY without the mutex, then calls write_done under it (the
 * frame turns clean only if no commit changed it meanwhile, modseq; a
 * failure counts in write_errors and sets cf->write_error, as before) and
 * frees the slot.  A database read or write that fails beyond retrying
 * (EIO, EROFS: db_io_fatal in dbint.h) also puts the file's log in the
 * ERROR state (log_fail); ENOSPC leaves the page dirty for a later try.  A frame stays dirty until
 * its write is done, so a checkpoint's cache_file_flush (which waits while a frame is writing)
 * covers every in-flight write-back before it syncs the file.
 * (Giving internal pages an extra clock sweep was tried: no measurable
 * change once write-back keeps up, so eviction is plain CLOCK.)
 * Locking: one mutex protects the hash, the frame states, the slot queue and
 * the counters; no I/O is done under it.  Page contents are read/written
 * without it by the single owner thread of the page's database; the writer
 * copies a page under the mutex, and the owner changes bytes only while
 * txn_held is set (which it sets under the mutex), so the two never race.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <isa-l/crc.h>

#include "core/error.h"
#include "db/dbint.h"

/* The zlib CRC-32 (crc32_gzip_refl(0, p, n) == crc32(0, p, n)), computed by
 * ISA-L with carry-less multiplication: ~0.6 us per 32 KB page instead of ~9. */
uint32_t mb_page_crc(const uint8_t *page, uint32_t size)
{
	return crc32_gzip_refl(0, page + 4, size - 4);
}

/* A database file failed beyond retrying (db_io_fatal): the group's log
 * goes to the ERROR state, so the group is recovered from its log rather
 * than checkpointed past pages that may not be on disk.  Lock not held. */
static void cf_fail(struct cfile *cf, int r, const char *op, uint32_t pgno)
{
	char what[160];
	const char *path = mb_file_path(cf->file);
	const char *base = path ? strrchr(path, '/') : NULL;
	snprintf(what, sizeof(what), "database %s failed: %s page %u", op,
		 base	? base + 1
		 : path ? path
			: "?",
		 pgno);
	if (cf->log)
		log_fail(cf->log, r, what);
}

void mb_page_seal(uint8_t *page, uint32_t size)
{
	wr32(page + PG_OFF_CRC, mb_page_crc(page, size));
}

bool mb_page_all_zero(const uint8_t *page, uint32_t size)
{
	static const uint8_t z[64];
	for (uint32_t i = 0; i < size; i += 64)
		if (memcmp(page + i, z, 64))
			return false;
	return true;
}

int mb_page_verify(const uint8_t *page, uint32_t size, uint32_t pgno, char *why, size_t whylen)
{
	uint32_t want = rd32(page + PG_OFF_CRC), got = mb_page_crc(page, size);
	if (want != got) {
		if (why)
			snprintf(why, whylen,
				 "page %u: checksum mismatch (stored %08x, computed %08x)%s", pgno,
				 want, got, mb_page_all_zero(page, size) ? " (all zero)" : "");
		return MB_ECORRUPT;
	}
	if (rd32(page + PG_OFF_PGNO) != pgno) {
		if (why)
			snprintf(why, whylen, "page %u: holds page number %u (misdirected write)",
				 pgno, rd32(page + PG_OFF_PGNO));
		return MB_ECORRUPT;
	}
	return 0;
}

/* clock use count ceiling: a page hit this often survives this many sweeps */
#define REF_MAX 5
#define WRITER_BUF (32u << 10) /* the largest page the lazy writer handles */
/* write-back slots (runs of pages chosen and copied, queued or being
 * written): a slot holds up to WB_RUN_BYTES of consecutive pages of one
 * file, written with one I/O (a new message's long value is a run of new
 * pages; one write per page cost a system call and, in a VM, an exit each) */
#define WB_SLOTS 32
#define WB_RUN_BYTES (128u << 10)
#define WB_RUN_MAX (WB_RUN_BYTES / 4096)
#define WB_THREADS_MAX WB_SLOTS

/* consecutive pages on their way from the lazy writer to a write-back thread */
struct wb_slot {
	uint8_t *buf;		     /* WB_RUN_BYTES, MB_IO_ALIGN aligned */
	struct frame *f[WB_RUN_MAX]; /* pinned, writing */
	uint64_t seq[WB_RUN_MAX];
	bool held[WB_RUN_MAX];
	int n;
	struct mb_file *file; /* captured under the lock */
	uint64_t off;
	uint32_t size; /* of one page */
};

struct mb_cache {
	pthread_mutex_t lock;
	pthread_cond_t cond;  /* frame state changes (I/O done, unpinned, cleaned) */
	pthread_cond_t wcond; /* wakes the lazy writer */
	uint64_t limit, in_use, dirty_bytes;
	struct frame **frames;
	size_t nframes, cap;
	struct frame **hash;
	size_t hmask;
	size_t hand, whand;
	int starved, waiters;
	bool stop;
	uint32_t next_id;
	struct mb_cache_stats st;
	pthread_t writer;
	/* write-back pool: free slot stack, FIFO of queued slots */
	pthread_cond_t qcond; /* wakes the write-back threads */
	struct wb_slot slot[WB_SLOTS];
	int freel[WB_SLOTS], nfree;
	int queue[WB_SLOTS], qhead, nqueued;
	unsigned nthreads;
	pthread_t *wthreads;
};

static size_t hslot(const struct mb_cache *c, uint32_t id, uint32_t pgno)
{
	uint64_t h =
	    ((uint64_t)id * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)pgno * 0xC2B2AE3D27D4EB4Full);
	h ^= h >> 29;
	return (size_t)h & c->hmask;
}

static struct frame *hfind(struct mb_cache *c, struct cfile *cf, uint32_t pgno)
{
	for (struct frame *f = c->hash[hslot(c, cf->id, pgno)]; f; f = f->hnext)
		if (f->cf == cf && f->pgno == pgno)
			return f;
	return NULL;
}

static void hinsert(struct mb_cache *c, struct frame *f)
{
	size_t s = hslot(c, f->cf->id, f->pgno);
	f->hnext = c->hash[s];
	c->hash[s] = f;
}

static void hremove(struct mb_cache *c, struct frame *f)
{
	struct frame **pp = &c->hash[hslot(c, f->cf->id, f->pgno)];
	while (*pp && *pp != f)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = f->hnext;
	f->hnext = NULL;
	f->cf = NULL;
	f->valid = false;
}

static void *writer_main(void *arg);
static void *wb_main(void *arg);

static unsigned writers_default(void)
{
	const char *e = getenv("MAILBENCH_CACHE_WRITERS");
	if (e && *e) {
		char *end;
		long v = strtol(e, &end, 10);
		if (*end == '\0' && v >= 1 && v <= WB_THREADS_MAX)
			return (unsigned)v;
	}
	return MB_CACHE_WRITERS_DEFAULT;
}

int mb_cache_create(uint64_t bytes, struct mb_cache **out)
{
	return mb_cache_create_ex(bytes, 0, out);
}

static void stop_threads(struct mb_cache *c, bool writer, unsigned nwb)
{
	pthread_mutex_lock(&c->lock);
	c->stop = true;
	pthread_cond_broadcast(&c->wcond);
	pthread_cond_broadcast(&c->qcond);
	pthread_mutex_unlock(&c->lock);
	if (writer)
		pthread_join(c->writer, NULL);
	for (unsigned i = 0; i < nwb; i++)
		pthread_join(c->wthreads[i], NULL);
}

static void cache_free(struct mb_cache *c)
{
	for (size_t i = 0; i < c->nframes; i++) {
		mb_io_free(c->frames[i]->data);
		free(c->frames[i]->before);
		free(c->frames[i]);
	}
	free(c->frames);
	free(c->hash);
	for (int i = 0; i < WB_SLOTS; i++)
		mb_io_free(c->slot[i].buf);
	free(c->wthreads);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->cond);
	pthread_cond_destroy(&c->wcond);
	pthread_cond_destroy(&c->qcond);
	free(c);
}

int mb_cache_create_ex(uint64_t bytes, unsigned writers, struct mb_cache **out)
{
	if (writers == 0)
		writers = writers_default();
	if (writers > WB_THREADS_MAX)
		writers = WB_THREADS_MAX;
	if (bytes < 64u * 32768u)
		bytes = 64u * 32768u;
	struct mb_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return MB_ENOMEM;
	c->limit = bytes;
	c->st.bytes_limit = bytes;
	size_t nb = 1024;
	while (nb < bytes / 32768 * 2)
		nb <<= 1;
	c->hash = calloc(nb, sizeof(*c->hash));
	c->hmask = nb - 1;
	for (int i = 0; i < WB_SLOTS; i++) {
		c->slot[i].buf = mb_io_alloc(WB_RUN_BYTES);
		c->freel[i] = i;
	}
	c->nfree = WB_SLOTS;
	c->wthreads = calloc(writers, sizeof(*c->wthreads));
	/* adaptive: spin briefly before sleeping, the critical sections are a
	 * few hundred instructions and a sleeping waiter costs two switches */
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(&c->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->wcond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&c->qcond, NULL);
	bool ok = c->hash != NULL && c->wthreads != NULL;
	for (int i = 0; i < WB_SLOTS; i++)
		ok = ok && c->slot[i].buf;
	unsigned started = 0;
	while (ok && started < writers) {
		if (pthread_create(&c->wthreads[started], NULL, wb_main, c) != 0)
			ok = false;
		else
			started++;
	}
	if (!ok) {
		stop_threads(c, false, started);
		cache_free(c);
		return MB_ENOMEM;
	}
	if (pthread_create(&c->writer, NULL, writer_main, c) != 0) {
		stop_threads(c, false, started);
		cache_free(c);
		return MB_ENOMEM;
	}
	c->nthreads = writers;
	*out = c;
	return 0;
}

void mb_cache_destroy(struct mb_cache *c)
{
	if (!c)
		return;
	/* the write-back threads drain the queue before they exit */
	stop_threads(c, true, c->nthreads);
	cache_free(c);
}

void mb_cache_stats_get(struct mb_cache *c, struct mb_cache_stats *out)
{
	pthread_mutex_lock(&c->lock);
	*out = c->st;
	out->frames = c->nframes;
	out->bytes_in_use = c->in_use;
	pthread_mutex_unlock(&c->lock);
}

static struct frame *frame_new(struct mb_cache *c, uint32_t size)
{
	if (c->nframes == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 256;
		struct frame **nf = realloc(c->frames, ncap * sizeof(*nf));
		if (!nf)
			return NULL;
		c->frames = nf;
		c->cap = ncap;
	}
	struct frame *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->data = mb_io_alloc(size);
	if (!f->data) {
		free(f);
		return NULL;
	}
	f->size = size;
	f->slot = c->nframes;
	c->frames[c->nframes++] = f;
	c->in_use += size;
	return f;
}

static void frame_delete(struct mb_cache *c, struct frame *f)
{
	size_t s = f->slot;
	c->frames[s] = c->frames[--c->nframes];
	c->frames[s]->slot = s;
	c->in_use -= f->size;
	mb_io_free(f->data);
	free(f);
}

/* A frame of the given size, not in the hash, or NULL when none can be
 * freed now.  Called with the lock held. */
static struct frame *frame_get_free(struct mb_cache *c, uint32_t size)
{
	if (c->in_use + size <= c->limit)
		return frame_new(c, size);
	size_t steps = c->nframes * 4 + 8;
	bool saw_dirty = false;
	for (size_t i = 0; i < steps && c->nframes; i++) {
		if (c->hand >= c->nframes)
			c->hand = 0;
		struct frame *f = c->frames[c->hand++];
		if (f->pins || f->reading || f->writing || f->txn_held)
			continue;
		if (f->dirty) {
			saw_dirty = true;
			continue;
		}
		if (f->cf && f->ref) {
			f->ref--;
			continue;
		}
		if (f->cf) {
			hremove(c, f);
			c->st.evictions++;
		}
		if (f->size == size)
			return f;
		frame_delete(c, f);
		if (c->in_use + size <= c->limit)
			return frame_new(c, size);
	}
	if (saw_dirty || c->st.dirty_pages) {
		c->starved = 1;
		pthread_cond_signal(&c->wcond);
	}
	return NULL;
}

static void timed_wait(pthread_cond_t *cv, pthread_mutex_t *m, long ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec += ms * 1000000L;
	while (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(cv, m, &ts);
}

int cache_get(struct cfile *cf, uint32_t pgno, int mode, struct frame **out, char *why,
	      size_t whylen)
{
	struct mb_cache *c = cf->cache;
	int tries = 0;
	pthread_mutex_lock(&c->lock);
	for (;;) {
		struct frame *f = hfind(c, cf, pgno);
		if (f) {
			if (f->reading) {
				c->waiters++;
				pthread_cond_wait(&c->cond, &c->lock);
				c->waiters--;
				continue;
			}
			f->pins++;
			if (f->ref < REF_MAX)
				f->ref++;
			c->st.hits++;
			pthread_mutex_unlock(&c->lock);
			*out = f;
			return 0;
		}
		f = frame_get_free(c, cf->page_size);
		if (!f) {
			if (++tries > 1000) {
				pthread_mutex_unlock(&c->lock);
				if (why)
					snprintf(why, whylen,
						 "page %u: no free frame in the database cache "
						 "(all pinned or dirty)",
						 pgno);
				return MB_EFULL;
			}
			c->waiters++;
			timed_wait(&c->cond, &c->lock, 5);
			c->waiters--;
			continue;
		}
		c->st.misses++;
		f->cf = cf;
		f->pgno = pgno;
		f->pins = 1;
		f->ref = 0;
		f->dirty = f->writing = f->txn_held = false;
		f->lsn = 0;
		f->modseq = 0;
		f->error = 0;
		hinsert(c, f);
		if (mode & CG_NEW) {
			memset(f->data, 0, f->size);
			wr32(f->data + PG_OFF_PGNO, pgno);
			f->valid = true;
			f->reading = false;
			pthread_mutex_unlock(&c->lock);
			*out = f;
			return 0;
		}
		f->reading = true;
		f->valid = false;
		pthread_mutex_unlock(&c->lock);

		int r = mb_file_read(cf->file, f->data, f->size, (uint64_t)pgno * f->size);
		if (r == 0 && !((mode & CG_ALLOW_BAD) && mb_page_all_zero(f->data, f->size)))
			r = mb_page_verify(f->data, f->size, pgno, why, whylen);
		else if (r == MB_ERANGE && why)
			snprintf(why, whylen, "page %u: beyond the end of the file", pgno);
		else if (r < 0 && why)
			snprintf(why, whylen, "page %u: read failed: %s", pgno, mb_strerror(r));
		if (r < 0 && (mode & CG_ALLOW_BAD) && (r == MB_ERANGE || r == MB_ECORRUPT)) {
			memset(f->data, 0, f->size);
			wr32(f->data + PG_OFF_PGNO, pgno);
			r = 0;
		}
		pthread_mutex_lock(&c->lock);
		f->reading = false;
		if (r < 0) {
			hremove(c, f);
			f->pins = 0;
			pthread_cond_broadcast(&c->cond);
			pthread_mutex_unlock(&c->lock);
			if (db_io_fatal(r))
				cf_fail(cf, r, "read", pgno);
			return r;
		}
		c->st.reads++;
		f->lsn = rd64(f->data + PG_OFF_LSN);
		f->valid = true;
		if (c->waiters)
			pthread_cond_broadcast(&c->cond);
		pthread_mutex_unlock(&c->lock);
		*out = f;
		return 0;
	}
}

void cache_put(struct frame *fr)
{
	struct mb_cache *c = fr->cf->cache;
	pthread_mutex_lock(&c->lock);
	fr->pins--;
	if (c->waiters && fr->pins == 0)
		pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

int cache_txn_hold(struct frame *fr)
{
	if (fr->txn_held)
		return 0;
	uint8_t *b = malloc(fr->size);
	if (!b)
		return MB_ENOMEM;
	memcpy(b, fr->data, fr->size);
	struct mb_cache *c = fr->cf->cache;
	pthread_mutex_lock(&c->lock);
	fr->before = b;
	fr->txn_held = true;
	fr->pins++;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

void cache_txn_release(struct frame *fr, uint64_t lsn)
{
	struct mb_cache *c = fr->cf->cache;
	pthread_mutex_lock(&c->lock);
	if (lsn) {
		wr64(fr->data + PG_OFF_LSN, lsn);
		fr->lsn = lsn;
		fr->modseq++;
		if (!fr->dirty) {
			fr->dirty = true;
			c->st.dirty_pages++;
			c->dirty_bytes += fr->size;
		}
	} else {
		memcpy(fr->data, fr->before, fr->size);
	}
	free(fr->before);
	fr->before = NULL;
	fr->txn_held = false;
	fr->pins--;
	bool wake = c->dirty_bytes > c->limit / 4;
	if (c->waiters)
		pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	if (wake)
		pthread_cond_signal(&c->wcond);
}

/* Copy a dirty frame for writing (lock held): the committed image. */
static void copy_for_write(struct frame *f, uint8_t *dst)
{
	memcpy(dst, f->txn_held ? f->before : f->data, f->size);
	f->writing = true;
	f->pins++;
}

/* After a write (lock held). */
static void write_done(struct mb_cache *c, struct frame *f, bool was_held, uint64_t modseq, int r)
{
	f->writing = false;
	f->pins--;
	if (r == 0) {
		c->st.writes++;
		if (!was_held && !f->txn_held && f->modseq == modseq && f->dirty) {
			f->dirty = false;
			c->st.dirty_pages--;
			c->dirty_bytes -= f->size;
		}
	} else {
		c->st.write_errors++;
		f->cf->write_error = r;
	}
}

/* May the lazy writer write frame f now (lock held)? */
static bool wb_eligible(const struct mb_cache *c, const struct frame *f)
{
	if (!f->cf || !f->dirty || f->writing || f->reading || f->txn_held || f->size > WRITER_BUF)
		return false;
	if (f->lsn > atomic_load(f->cf->durable_lsn))
		return false;
	/* hot page: let it absorb more changes first */
	return !(f->ref && !c->starved && c->dirty_bytes < c->limit / 2);
}

/* Queue a dirty frame for write-back (lock held, a slot free), with the
 * eligible dirty pages that follow it in its file: copy their committed
 * images into the slot; the frames stay pinned and writing until a
 * write-back thread has written the copy (wb_main). */
static void wb_enqueue(struct mb_cache *c, struct frame *f)
{
	int i = c->freel[--c->nfree];
	struct wb_slot *w = &c->slot[i];
	w->file = f->cf->file;
	w->size = f->size;
	w->off = (uint64_t)f->pgno * f->size;
	w->n = 0;
	int max = (int)(WB_RUN_BYTES / f->size);
	for (struct frame *g = f; g && w->n < max; g = hfind(c, f->cf, g->pgno + 1)) {
		if (g != f && (!wb_eligible(c, g) || g->size != f->size))
			break;
		w->held[w->n] = g->txn_held;
		w->seq[w->n] = g->modseq;
		copy_for_write(g, w->buf + (size_t)w->n * f->size);
		w->f[w->n++] = g;
		if (g->pgno == UINT32_MAX)
			break;
	}
	c->queue[(c->qhead + c->nqueued) % WB_SLOTS] = i;
	c->nqueued++;
}

/* A write-back thread: takes queued slots in order, writes each copy
 * without the lock, then finishes the frame under it.  Exits at stop once
 * the queue is empty (nothing queued is ever dropped). */
static void *wb_main(void *arg)
{
	struct mb_cache *c = arg;
	pthread_mutex_lock(&c->lock);
	for (;;) {
		if (c->nqueued == 0) {
			if (c->stop)
				break;
			pthread_cond_wait(&c->qcond, &c->lock);
			continue;
		}
		int i = c->queue[c->qhead];
		c->qhead = (c->qhead + 1) % WB_SLOTS;
		c->nqueued--;
		struct wb_slot *w = &c->slot[i];
		pthread_mutex_unlock(&c->lock);
		for (int k = 0; k < w->n; k++)
			mb_page_seal(w->buf + (size_t)k * w->size, w->size);
		int r = mb_file_write(w->file, w->buf, (size_t)w->n * w->size, w->off);
		if (db_io_fatal(r)) /* the frames are pinned: their cf stays */
			cf_fail(w->f[0]->cf, r, "write", (uint32_t)(w->off / w->size));
		pthread_mutex_lock(&c->lock);
		for (int k = 0; k < w->n; k++) {
			write_done(c, w->f[k], w->held[k], w->seq[k], r);
			w->f[k] = NULL;
		}
		w->n = 0;
		w->file = NULL;
		c->freel[c->nfree++] = i;
		/* waiters on the frame (flush, remove, starved getters) */
		pthread_cond_broadcast(&c->cond);
		/* the lazy writer refills when a write-back thread would go idle or
		 * half the slots are free (not per page: its scan holds the lock) */
		if (c->nqueued == 0 || c->nfree >= WB_SLOTS / 2)
			pthread_cond_signal(&c->wcond);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* The lazy writer: chooses dirty pages (WAL rule, no-steal, not hot unless
 * needed) and queues them to the write-back threads, keeping up to
 * WB_SLOTS pages chosen and nthreads writes in flight. */
static void *writer_main(void *arg)
{
	struct mb_cache *c = arg;
	pthread_mutex_lock(&c->lock);
	while (!c->stop) {
		bool over = c->dirty_bytes > c->limit / 4;
		if (!over && !c->starved) {
			timed_wait(&c->wcond, &c->lock, 100);
			continue;
		}
		if (c->nfree == 0) {
			/* every slot queued or in flight: a completion signals */
			timed_wait(&c->wcond, &c->lock, 10);
			continue;
		}
		int n = 0;
		size_t steps = c->nframes;
		for (size_t i = 0; i < steps && c->nfree > 0; i++) {
			if (c->whand >= c->nframes)
				c->whand = 0;
			struct frame *f = c->frames[c->whand++];
			if (!wb_eligible(c, f))
				continue;
			wb_enqueue(c, f);
			n++;
		}
		if (n == 0) {
			c->starved = 0;
			timed_wait(&c->wcond, &c->lock, 10);
			continue;
		}
		pthread_cond_broadcast(&c->qcond);
		c->starved = 0;
		/* wait for a slot to free (or for the next trigger) before scanning
		 * again, so the scan is not repeated per completed page */
		timed_wait(&c->wcond, &c->lock, 10);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

int cache_file_add(struct mb_cache *c, struct mb_file *f, uint32_t page_size, struct mb_log *log,
		   struct cfile **out)
{
	struct cfile *cf = calloc(1, sizeof(*cf));
	if (!cf)
		return MB_ENOMEM;
	cf->cache = c;
	cf->file = f;
	cf->page_size = page_size;
	cf->log = log;
	cf->durable_lsn = log_durable_ptr(log);
	pthread_mutex_lock(&c->lock);
	cf->id = ++c->next_id;
	pthread_mutex_unlock(&c->lock);
	*out = cf;
	return 0;
}

/* A checkpoint's run of consecutive pages, copied and marked writing. */
#define FLUSH_RUN_BYTES (1u << 20)
struct flush_run {
	uint8_t *buf;
	struct frame **f;
	uint64_t *seq;
	bool *held;
	uint32_t first;
	size_t n, max;
};

static int cmp_pgno(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Write the run (lock not held) and finish its frames; *err keeps the first error. */
static void run_write(struct mb_cache *c, struct cfile *cf, struct flush_run *run, int *err)
{
	if (!run->n)
		return;
	for (size_t k = 0; k < run->n; k++)
		mb_page_seal(run->buf + k * cf->page_size, cf->page_size);
	int r = mb_file_write(cf->file, run->buf, run->n * cf->page_size,
			      (uint64_t)run->first * cf->page_size);
	if (db_io_fatal(r))
		cf_fail(cf, r, "write", run->first);
	pthread_mutex_lock(&c->lock);
	for (size_t k = 0; k < run->n; k++)
		write_done(c, run->f[k], run->held[k], run->seq[k], r);
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	if (r < 0 && !*err)
		*err = r;
	run->n = 0;
}

int cache_file_flush(struct mb_cache *c, struct cfile *cf)
{
	/* the pages dirty now */
	size_t n = 0, cap = 0;
	uint32_t *pg = NULL;
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->nframes; i++) {
		struct frame *f = c->frames[i];
		if (f->cf != cf || !f->dirty)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			uint32_t *np = realloc(pg, cap * sizeof(*pg));
			if (!np) {
				pthread_mutex_unlock(&c->lock);
				free(pg);
				return MB_ENOMEM;
			}
			pg = np;
		}
		pg[n++] = f->pgno;
	}
	pthread_mutex_unlock(&c->lock);
	if (n == 0)
		return 0;
	/* in file order, runs of consecutive pages one write each */
	qsort(pg, n, sizeof(*pg), cmp_pgno);
	struct flush_run run;
	memset(&run, 0, sizeof(run));
	run.max = FLUSH_RUN_BYTES / cf->page_size;
	run.buf = mb_io_alloc(FLUSH_RUN_BYTES);
	run.f = calloc(run.max, sizeof(*run.f));
	run.seq = calloc(run.max, sizeof(*run.seq));
	run.held = calloc(run.max, sizeof(*run.held));
	if (!run.buf || !run.f || !run.seq || !run.held) {
		mb_io_free(run.buf);
		free(run.f);
		free(run.seq);
		free(run.held);
		free(pg);
		return MB_ENOMEM;
	}
	int err = 0;
	for (size_t i = 0; i < n; i++) {
		if (run.n && (pg[i] != run.first + run.n || run.n == run.max))
			run_write(c, cf, &run, &err);
		pthread_mutex_lock(&c->lock);
		struct frame *f = hfind(c, cf, pg[i]);
		while (f && f->writing) {
			c->waiters++;
			pthread_cond_wait(&c->cond, &c->lock);
			c->waiters--;
			f = hfind(c, cf, pg[i]);
		}
		if (!f || !f->dirty) {
			pthread_mutex_unlock(&c->lock);
			continue;
		}
		/* the committed image and its LSN */
		uint64_t lsn = f->txn_held ? rd64(f->before + PG_OFF_LSN) : f->lsn;
		if (lsn > atomic_load(cf->durable_lsn)) {
			pthread_mutex_unlock(&c->lock);
			run_write(c, cf, &run, &err); /* never wait with frames held */
			int r = log_wait(cf->log, lsn);
			if (r < 0) {
				err = err ? err : r;
				continue;
			}
			i--; /* retry this page */
			continue;
		}
		if (!run.n)
			run.first = pg[i];
		run.held[run.n] = f->txn_held;
		run.seq[run.n] = f->modseq;
		copy_for_write(f, run.buf + (size_t)run.n * cf->page_size);
		run.f[run.n++] = f;
		pthread_mutex_unlock(&c->lock);
	}
	run_write(c, cf, &run, &err);
	mb_io_free(run.buf);
	free(run.f);
	free(run.seq);
	free(run.held);
	free(pg);
	return err;
}

int cache_file_remove(struct mb_cache *c, struct cfile *cf)
{
	int r = cache_file_flush(c, cf);
	pthread_mutex_lock(&c->lock);
	for (;;) {
		bool busy = false;
		for (size_t i = 0; i < c->nframes; i++) {
			struct frame *f = c->frames[i];
			if (f->cf != cf)
				continue;
			if (f->writing || f->reading) {
				busy = true;
				continue;
			}
			if (f->dirty) {
				/* not written (error): dropped; the log still has it */
				f->dirty = false;
				c->st.dirty_pages--;
				c->dirty_bytes -= f->size;
			}
			if (f->txn_held) {
				free(f->before);
				f->before = NULL;
				f->txn_held = false;
			}
			f->pins = 0;
			hremove(c, f);
		}
		if (!busy)
			break;
		c->waiters++;
		timed_wait(&c->cond, &c->lock, 5);
		c->waiters--;
	}
	pthread_mutex_unlock(&c->lock);
	free(cf);
	return r;
}
