/* cache_int.h: the cache's state, shared by cache.c (frames, hash,
 * eviction, get and put) and writeback.c (the lazy writer, the write-back
 * threads, a checkpoint's flush); nothing outside src/db.  The lookups
 * both use are static inline here, so neither file calls the other back.
 */
#ifndef MB_DB_CACHE_INT_H
#define MB_DB_CACHE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "db/dbint.h"

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
_Static_assert(WRITER_BUF <= WB_RUN_BYTES, "a slot holds the largest page the writer takes");
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
	bool interrupt;		    /* mb_cache_interrupt: starved getters fail at once */
	_Atomic uint32_t write_max; /* mb_cache_set_write_max: largest write, bytes */
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

/* Pages one write may carry: at most run_bytes and the configured largest
 * write (mb_cache_set_write_max), at least one page. */
static inline size_t mb__cache_run_pages(struct mb_cache *c, uint32_t run_bytes, uint32_t page_size)
{
	uint32_t b = atomic_load(&c->write_max);
	return mb_write_pages(b < run_bytes ? b : run_bytes, page_size);
}

static inline size_t hslot(const struct mb_cache *c, uint32_t id, uint32_t pgno)
{
	uint64_t h =
	    ((uint64_t)id * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)pgno * 0xC2B2AE3D27D4EB4Full);
	h ^= h >> 29;
	return (size_t)h & c->hmask;
}

static inline struct frame *hfind(struct mb_cache *c, struct cfile *cf, uint32_t pgno)
{
	for (struct frame *f = c->hash[hslot(c, cf->id, pgno)]; f; f = f->hnext)
		if (f->cf == cf && f->pgno == pgno)
			return f;
	return NULL;
}

static inline void timed_wait(pthread_cond_t *cv, pthread_mutex_t *m, long ms)
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

/* writeback.c: the lazy writer's and a write-back thread's main (arg:
 * the cache); a file that failed beyond retrying (its log to ERROR). */
void *mb__cache_writer_main(void *arg);
void *mb__cache_wb_main(void *arg);
void mb__cache_fail(struct cfile *cf, int r, const char *op, uint32_t pgno);

#endif
