/* writeback.c: the cache's write-back (see cache.c's opening comment for
 * the design): the lazy writer thread chooses dirty pages (the WAL rule,
 * no-steal, hot pages last) and queues copies of their committed images
 * in slots; the write-back threads seal and write each copy without the
 * lock and finish its frames under it; a checkpoint's flush writes a
 * file's dirty pages in sorted runs and waits for those in flight.
 *
 * A slot:  free --(writer: copy, pin, writing)--> queued --(a write-back
 *          thread takes it)--> writing --(write_done under the lock)--> free
 *
 * Invariant: no I/O under the lock; a frame is clean only when the write
 * of the image it still holds has succeeded (modseq unchanged).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "db/dbint.h"
#include "db/cache_int.h"

/* A database file failed beyond retrying (db_io_fatal): the group's log
 * goes to the ERROR state, so the group is recovered from its log rather
 * than checkpointed past pages that may not be on disk.  Lock not held. */
void mb__cache_fail(struct cfile *cf, int r, const char *op, uint32_t pgno)
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
 * write-back thread has written the copy (mb__cache_wb_main). */
static void wb_enqueue(struct mb_cache *c, struct frame *f)
{
	int i = c->freel[--c->nfree];
	struct wb_slot *w = &c->slot[i];
	w->file = f->cf->file;
	w->size = f->size;
	w->off = (uint64_t)f->pgno * f->size;
	w->n = 0;
	int max = (int)mb__cache_run_pages(c, WB_RUN_BYTES, f->size);
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
void *mb__cache_wb_main(void *arg)
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
			mb__cache_fail(w->f[0]->cf, r, "write", (uint32_t)(w->off / w->size));
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
void *mb__cache_writer_main(void *arg)
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
		mb__cache_fail(cf, r, "write", run->first);
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
	run.max = mb__cache_run_pages(c, FLUSH_RUN_BYTES, cf->page_size);
	run.buf = mb_io_alloc(run.max * cf->page_size);
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
