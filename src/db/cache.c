/* cache.c: the database cache (buffer pool): frames, the hash, eviction,
 * getting and releasing pages; the lazy writer, its write-back threads and
 * a checkpoint's flush are writeback.c's; page checksums are page.c's.
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

#include "core/error.h"
#include "db/dbint.h"
#include "db/cache_int.h"

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
	atomic_init(&c->write_max, MB_CACHE_WRITE_MAX_DEFAULT);
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
		if (pthread_create(&c->wthreads[started], NULL, mb__cache_wb_main, c) != 0)
			ok = false;
		else
			started++;
	}
	if (!ok) {
		stop_threads(c, false, started);
		cache_free(c);
		return MB_ENOMEM;
	}
	if (pthread_create(&c->writer, NULL, mb__cache_writer_main, c) != 0) {
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

void mb_cache_set_write_max(struct mb_cache *c, uint32_t bytes)
{
	if (c)
		atomic_store(&c->write_max, bytes);
}

void mb_cache_interrupt(struct mb_cache *c, bool on)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->interrupt = on;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
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
		if (!f && (c->interrupt || ++tries > 1000)) {
			/* interrupted: the store is pausing its database threads */
			int rc = c->interrupt ? MB_EBUSY : MB_EFULL;
			pthread_mutex_unlock(&c->lock);
			if (why)
				snprintf(why, whylen,
					 "page %u: no free frame in the database cache%s", pgno,
					 rc == MB_EBUSY ? ", and the store is pausing its database "
							  "threads"
							: " (all pinned or dirty)");
			return rc;
		}
		if (!f) {
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
				mb__cache_fail(cf, r, "read", pgno);
			return r;
		}
		c->st.reads++;
		c->st.reads_lv += f->data[PG_OFF_TYPE] == PT_OVERFLOW;
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
