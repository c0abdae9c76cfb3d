/* test_cache.c: unit tests of the database cache (internal API, dbint.h):
 * hits and misses (reads of long-value pages counted apart), the byte
 * limit, scan resistance (a hot set survives a
 * scan of three times the cache), pinned frames never evicted, the lazy
 * writer cleaning dirty pages on its own (only once their LSN is durable),
 * a corrupt page reported with its number, several threads reading at
 * once with consistent counters, and the write-back pool: with 1 and 8
 * write-back threads every committed image reaches the disk (never a
 * transaction's uncommitted bytes), 8 threads do keep several writes in
 * flight (a slow vfs counts them), and failed write-backs are counted with
 * the pages left dirty until a later flush succeeds; the largest write:
 * a checkpoint's flush writes a run of consecutive pages with one I/O,
 * or one I/O per page (or per 16 KB) when the cache is told so, and the
 * lazy writer then writes each page by itself. */
#include "config.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/error.h"
#include "db/db.h"
#include "db/dbint.h"
#include "dbtest.h"

#define PS 4096
#define NPAGES 2000

struct env {
	char *dir;
	struct mb_io *io;
	struct mb_log *log;
	struct mb_cache *c;
	struct mb_file *f;
	struct cfile *cf;
};

static void env_init(struct env *e)
{
	e->dir = dbt_tmpdir();
	assert_int_equal(mb_io_create(NULL, &e->io), 0);
	assert_int_equal(log_open(e->io, e->dir, &e->log), 0);
	assert_int_equal(log_start(e->log, 0), 0);
	assert_int_equal(mb_cache_create(2u << 20, &e->c), 0); /* 512 frames of 4 KB */
	char p[4200];
	snprintf(p, sizeof(p), "%s/pages.mdb", e->dir);
	assert_int_equal(mb_io_open(e->io, p, MB_IO_CREATE | MB_IO_DIRECT, MB_FILE_DB, &e->f), 0);
	uint8_t *buf = mb_io_alloc(PS * 100);
	for (uint32_t base = 0; base < NPAGES; base += 100) {
		memset(buf, 0, PS * 100);
		for (uint32_t i = 0; i < 100; i++) {
			uint8_t *pg = buf + (size_t)i * PS;
			wr32(pg + PG_OFF_PGNO, base + i);
			if (base + i >= NPAGES - 100) /* the last 100: long-value pages */
				pg[PG_OFF_TYPE] = PT_OVERFLOW;
			wr32(pg + PG_HDR, base + i); /* payload: its own number */
			mb_page_seal(pg, PS);
		}
		assert_int_equal(mb_file_write(e->f, buf, PS * 100, (uint64_t)base * PS), 0);
	}
	mb_io_free(buf);
	assert_int_equal(cache_file_add(e->c, e->f, PS, e->log, &e->cf), 0);
}

static void env_done(struct env *e)
{
	cache_file_remove(e->c, e->cf);
	mb_cache_destroy(e->c);
	log_close(e->log);
	mb_file_close(e->f);
	mb_io_destroy(e->io);
	dbt_rmrf(e->dir);
	free(e->dir);
}

static void touch(struct env *e, uint32_t pg)
{
	struct frame *f;
	char why[200];
	assert_int_equal(cache_get(e->cf, pg, CG_READ, &f, why, sizeof(why)), 0);
	assert_int_equal(rd32(f->data + PG_HDR), pg);
	cache_put(f);
}

static void test_hits_limit_scan(void **state)
{
	struct env e;
	env_init(&e);
	struct mb_cache_stats s0, s1;
	touch(&e, 5);
	touch(&e, 5);
	mb_cache_stats_get(e.c, &s0);
	assert_int_equal(s0.misses, 1);
	assert_int_equal(s0.hits, 1);
	assert_int_equal(s0.reads, 1);
	assert_int_equal(s0.reads_lv, 0);
	/* hot set: 50 pages, used often */
	for (int r = 0; r < 6; r++)
		for (uint32_t p = 0; p < 50; p++)
			touch(&e, p);
	/* a scan of 1500 other pages (3x the cache) */
	for (uint32_t p = 500; p < 2000; p++)
		touch(&e, p);
	mb_cache_stats_get(e.c, &s0);
	assert_true(s0.bytes_in_use <= s0.bytes_limit);
	assert_true(s0.evictions >= 1000);
	/* of its reads, the 100 long-value pages, each read once */
	assert_int_equal(s0.reads_lv, 100);
	for (uint32_t p = 0; p < 50; p++)
		touch(&e, p);
	mb_cache_stats_get(e.c, &s1);
	printf("# hot set after a 3x scan: %llu misses of 50\n",
	       (unsigned long long)(s1.misses - s0.misses));
	assert_true(s1.misses - s0.misses <= 5);
	/* pinned frames survive any amount of eviction */
	struct frame *pin[10];
	char why[200];
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(cache_get(e.cf, 1000 + i, CG_READ, &pin[i], why, sizeof(why)), 0);
	for (uint32_t p = 0; p < 2000; p++)
		touch(&e, p);
	for (uint32_t i = 0; i < 10; i++) {
		assert_int_equal(pin[i]->pgno, 1000 + i);
		assert_int_equal(rd32(pin[i]->data + PG_HDR), 1000 + i);
		cache_put(pin[i]);
	}
	env_done(&e);
}

static void test_lazy_writer(void **state)
{
	struct env e;
	env_init(&e);
	uint64_t end;
	uint8_t rec[8] = {0};
	assert_int_equal(log_append(e.log, 99, 0, rec, sizeof(rec), &end), 0);
	/* 300 pages dirty (1.2 MB > a quarter of the cache), LSN not durable yet
	 * is impossible to observe reliably, so make it durable first */
	assert_int_equal(log_wait(e.log, end), 0);
	char why[200];
	for (uint32_t p = 0; p < 300; p++) {
		struct frame *f;
		assert_int_equal(cache_get(e.cf, p, CG_READ, &f, why, sizeof(why)), 0);
		assert_int_equal(cache_txn_hold(f), 0);
		wr32(f->data + PG_HDR + 4, 0xC0FFEE00 + p);
		cache_txn_release(f, end);
		cache_put(f);
	}
	struct mb_cache_stats s;
	mb_cache_stats_get(e.c, &s);
	assert_true(s.dirty_pages > 0);
	for (int i = 0; i < 500; i++) {
		mb_cache_stats_get(e.c, &s);
		if (s.dirty_pages * PS <= s.bytes_limit / 4)
			break;
		usleep(10000);
	}
	printf("# lazy writer: %llu writes, %llu dirty left\n", (unsigned long long)s.writes,
	       (unsigned long long)s.dirty_pages);
	assert_true(s.writes > 0);
	assert_true(s.dirty_pages * PS <= s.bytes_limit / 4);
	/* an explicit flush writes the rest; the disk has the new contents */
	assert_int_equal(cache_file_flush(e.c, e.cf), 0);
	mb_cache_stats_get(e.c, &s);
	assert_int_equal(s.dirty_pages, 0);
	uint8_t *b = mb_io_alloc(PS);
	for (uint32_t p = 0; p < 300; p += 37) {
		assert_int_equal(mb_file_read(e.f, b, PS, (uint64_t)p * PS), 0);
		assert_int_equal(mb_page_verify(b, PS, p, NULL, 0), 0);
		assert_int_equal(rd32(b + PG_HDR + 4), 0xC0FFEE00 + p);
		assert_int_equal(rd64(b + PG_OFF_LSN), end);
	}
	/* an aborted change restores the page and leaves it clean */
	struct frame *f;
	assert_int_equal(cache_get(e.cf, 400, CG_READ, &f, why, sizeof(why)), 0);
	assert_int_equal(cache_txn_hold(f), 0);
	wr32(f->data + PG_HDR, 12345);
	cache_txn_release(f, 0);
	assert_int_equal(rd32(f->data + PG_HDR), 400);
	assert_false(f->dirty);
	cache_put(f);
	/* a corrupt page on disk is an error naming the page */
	assert_int_equal(mb_file_read(e.f, b, PS, 1500ull * PS), 0);
	b[100] ^= 1;
	assert_int_equal(mb_file_write(e.f, b, PS, 1500ull * PS), 0);
	assert_int_equal(cache_get(e.cf, 1500, CG_READ, &f, why, sizeof(why)), MB_ECORRUPT);
	assert_non_null(strstr(why, "page 1500"));
	assert_int_equal(cache_get(e.cf, NPAGES + 5, CG_READ, &f, why, sizeof(why)), MB_ERANGE);
	mb_io_free(b);
	env_done(&e);
}

/* Make pages [first, first + n) dirty, their LSN durable. */
static void dirty_run(struct env *e, uint32_t first, uint32_t n)
{
	uint64_t end;
	uint8_t rec[8] = {0};
	char why[200];
	assert_int_equal(log_append(e->log, 99, 0, rec, sizeof(rec), &end), 0);
	assert_int_equal(log_wait(e->log, end), 0);
	for (uint32_t p = first; p < first + n; p++) {
		struct frame *f;
		assert_int_equal(cache_get(e->cf, p, CG_READ, &f, why, sizeof(why)), 0);
		assert_int_equal(cache_txn_hold(f), 0);
		wr32(f->data + PG_HDR + 4, 0xBEEF0000 + p);
		cache_txn_release(f, end);
		cache_put(f);
	}
}

static uint64_t db_write_calls(struct env *e)
{
	struct mb_io_stats st;
	mb_io_stats_get(e->io, &st);
	return st.kind[MB_FILE_DB].writes;
}

/* A flush of 64 consecutive dirty pages: one write by default, one per
 * page at a write_max of a page (or less), one per 4 pages at 16 KB;
 * every page reaches the disk either way. */
static void test_write_max(void **state)
{
	struct env e;
	env_init(&e);
	static const struct {
		uint32_t max, writes;
	} cases[] = {{MB_CACHE_WRITE_MAX_DEFAULT, 1}, {PS, 64}, {1, 64}, {4 * PS, 16}};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		mb_cache_set_write_max(e.c, cases[k].max);
		uint32_t first = 100 + (uint32_t)k * 64;
		dirty_run(&e, first, 64); /* 256 KB: below the lazy writer's quarter */
		struct mb_cache_stats s0, s1;
		mb_cache_stats_get(e.c, &s0);
		uint64_t w0 = db_write_calls(&e);
		assert_int_equal(cache_file_flush(e.c, e.cf), 0);
		mb_cache_stats_get(e.c, &s1);
		printf("# write_max %u: %llu pages in %llu writes\n", cases[k].max,
		       (unsigned long long)(s1.writes - s0.writes),
		       (unsigned long long)(db_write_calls(&e) - w0));
		assert_int_equal(s1.writes - s0.writes, 64);
		assert_int_equal(db_write_calls(&e) - w0, cases[k].writes);
		assert_int_equal(s1.dirty_pages, 0);
	}
	uint8_t *b = mb_io_alloc(PS);
	for (uint32_t p = 100; p < 100 + 4 * 64; p += 7) {
		assert_int_equal(mb_file_read(e.f, b, PS, (uint64_t)p * PS), 0);
		assert_int_equal(mb_page_verify(b, PS, p, NULL, 0), 0);
		assert_int_equal(rd32(b + PG_HDR + 4), 0xBEEF0000 + p);
	}
	mb_io_free(b);
	/* the lazy writer at one page per write: 300 consecutive dirty pages
	 * (above a quarter of the cache), every write call one page */
	mb_cache_set_write_max(e.c, PS);
	struct mb_cache_stats s0, s;
	mb_cache_stats_get(e.c, &s0);
	uint64_t w0 = db_write_calls(&e);
	dirty_run(&e, 1000, 300);
	for (int i = 0; i < 500; i++) {
		mb_cache_stats_get(e.c, &s);
		if (s.dirty_pages * PS <= s.bytes_limit / 4 && s.writes > s0.writes)
			break;
		usleep(10000);
	}
	assert_true(s.dirty_pages * PS <= s.bytes_limit / 4);
	/* the writer is idle below the quarter; settled when two samples 20 ms
	 * apart agree (a write call counts before its pages do) */
	uint64_t pages = 0, calls = 0;
	for (int i = 0; i < 500; i++) {
		mb_cache_stats_get(e.c, &s);
		uint64_t p1 = s.writes - s0.writes, c1 = db_write_calls(&e) - w0;
		usleep(20000);
		mb_cache_stats_get(e.c, &s);
		pages = s.writes - s0.writes;
		calls = db_write_calls(&e) - w0;
		if (pages == p1 && calls == c1)
			break;
	}
	printf("# lazy writer, a page per write: %llu pages in %llu writes\n",
	       (unsigned long long)pages, (unsigned long long)calls);
	assert_true(pages > 0);
	assert_int_equal(pages, calls);
	env_done(&e);
}

struct thr {
	struct env *e;
	uint64_t seed;
	int n;
	int bad;
};

static void *reader(void *arg)
{
	struct thr *t = arg;
	char why[200];
	for (int i = 0; i < t->n; i++) {
		uint32_t p = (uint32_t)(dbt_rand(&t->seed) % NPAGES);
		struct frame *f;
		if (cache_get(t->e->cf, p, CG_READ, &f, why, sizeof(why)) != 0) {
			t->bad++;
			continue;
		}
		if (rd32(f->data + PG_HDR) != p || f->pgno != p)
			t->bad++;
		cache_put(f);
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct env e;
	env_init(&e);
	pthread_t th[4];
	struct thr t[4];
	for (int i = 0; i < 4; i++) {
		t[i] = (struct thr){&e, (uint64_t)i + 1, 5000, 0};
		pthread_create(&th[i], NULL, reader, &t[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(t[i].bad, 0);
	}
	struct mb_cache_stats s;
	mb_cache_stats_get(e.c, &s);
	assert_int_equal(s.hits + s.misses, 20000);
	assert_int_equal(s.misses, s.reads);
	assert_true(s.bytes_in_use <= s.bytes_limit);
	env_done(&e);
}

/* a vfs over POSIX whose database writes take 2 ms and count how many are
 * in flight at once */
static _Atomic int slow_now, slow_max;
static const struct mb_vfs *slow_inner;

static int slow_open(void *ctx, const char *path, int oflags, mode_t mode, enum mb_file_kind kind)
{
	(void)ctx;
	return slow_inner->open(slow_inner->ctx, path, oflags, mode, kind);
}
static int slow_close(void *ctx, int fd)
{
	(void)ctx;
	return slow_inner->close(slow_inner->ctx, fd);
}
static ssize_t slow_pread(void *ctx, int fd, enum mb_file_kind kind, void *buf, size_t len,
			  off_t off)
{
	(void)ctx;
	return slow_inner->pread(slow_inner->ctx, fd, kind, buf, len, off);
}
static ssize_t slow_pwrite(void *ctx, int fd, enum mb_file_kind kind, const void *buf, size_t len,
			   off_t off)
{
	(void)ctx;
	if (kind != MB_FILE_DB)
		return slow_inner->pwrite(slow_inner->ctx, fd, kind, buf, len, off);
	int now = atomic_fetch_add(&slow_now, 1) + 1;
	int m = atomic_load(&slow_max);
	while (now > m && !atomic_compare_exchange_weak(&slow_max, &m, now))
		;
	usleep(2000);
	ssize_t r = slow_inner->pwrite(slow_inner->ctx, fd, kind, buf, len, off);
	atomic_fetch_sub(&slow_now, 1);
	return r;
}
static int slow_sync(void *ctx, int fd, enum mb_file_kind kind, bool datasync)
{
	(void)ctx;
	return slow_inner->sync(slow_inner->ctx, fd, kind, datasync);
}
static int slow_fallocate(void *ctx, int fd, enum mb_file_kind kind, off_t off, off_t len)
{
	(void)ctx;
	return slow_inner->fallocate(slow_inner->ctx, fd, kind, off, len);
}
static int slow_ftruncate(void *ctx, int fd, enum mb_file_kind kind, off_t len)
{
	(void)ctx;
	return slow_inner->ftruncate(slow_inner->ctx, fd, kind, len);
}
static int slow_unlink(void *ctx, const char *path)
{
	(void)ctx;
	return slow_inner->unlink(slow_inner->ctx, path);
}
static int slow_rename(void *ctx, const char *from, const char *to)
{
	(void)ctx;
	return slow_inner->rename(slow_inner->ctx, from, to);
}
static int slow_sync_dir(void *ctx, const char *dir)
{
	(void)ctx;
	return slow_inner->sync_dir(slow_inner->ctx, dir);
}

/* Commit a new value into n pages (LSN made durable first), leaving page
 * "held" modified by an open transaction (uncommitted bytes). */
static void dirty_pages(struct env *e, uint32_t n, uint32_t tag, uint64_t *lsn)
{
	uint64_t end;
	uint8_t rec[8] = {0};
	assert_int_equal(log_append(e->log, 99, 0, rec, sizeof(rec), &end), 0);
	assert_int_equal(log_wait(e->log, end), 0);
	char why[200];
	for (uint32_t p = 0; p < n; p++) {
		struct frame *f;
		assert_int_equal(cache_get(e->cf, p, CG_READ, &f, why, sizeof(why)), 0);
		assert_int_equal(cache_txn_hold(f), 0);
		wr32(f->data + PG_HDR + 4, tag + p);
		cache_txn_release(f, end);
		cache_put(f);
	}
	*lsn = end;
}

static void check_disk(struct env *e, uint32_t n, uint32_t tag, uint64_t lsn)
{
	uint8_t *b = mb_io_alloc(PS);
	for (uint32_t p = 0; p < n; p++) {
		assert_int_equal(mb_file_read(e->f, b, PS, (uint64_t)p * PS), 0);
		assert_int_equal(mb_page_verify(b, PS, p, NULL, 0), 0);
		assert_int_equal(rd32(b + PG_HDR), p);
		assert_int_equal(rd32(b + PG_HDR + 4), tag + p);
		assert_int_equal(rd64(b + PG_OFF_LSN), lsn);
	}
	mb_io_free(b);
}

static void pool_run(unsigned writers)
{
	static const struct mb_vfs slow = {
	    .open = slow_open,
	    .close = slow_close,
	    .pread = slow_pread,
	    .pwrite = slow_pwrite,
	    .sync = slow_sync,
	    .fallocate = slow_fallocate,
	    .ftruncate = slow_ftruncate,
	    .unlink = slow_unlink,
	    .rename = slow_rename,
	    .sync_dir = slow_sync_dir,
	};
	slow_inner = mb_vfs_posix();
	atomic_store(&slow_now, 0);
	atomic_store(&slow_max, 0);
	struct mb_fault *fault;
	assert_int_equal(mb_fault_create(&slow, &fault), 0);
	struct env e;
	e.dir = dbt_tmpdir();
	assert_int_equal(mb_io_create(mb_fault_vfs(fault), &e.io), 0);
	assert_int_equal(log_open(e.io, e.dir, &e.log), 0);
	assert_int_equal(log_start(e.log, 0), 0);
	assert_int_equal(mb_cache_create_ex(2u << 20, writers, &e.c), 0);
	char p[4200];
	snprintf(p, sizeof(p), "%s/pages.mdb", e.dir);
	assert_int_equal(mb_io_open(e.io, p, MB_IO_CREATE | MB_IO_DIRECT, MB_FILE_DB, &e.f), 0);
	uint8_t *buf = mb_io_alloc(PS);
	for (uint32_t pg = 0; pg < 400; pg++) {
		memset(buf, 0, PS);
		wr32(buf + PG_OFF_PGNO, pg);
		wr32(buf + PG_HDR, pg);
		mb_page_seal(buf, PS);
		assert_int_equal(mb_file_write(e.f, buf, PS, (uint64_t)pg * PS), 0);
	}
	mb_io_free(buf);
	assert_int_equal(cache_file_add(e.c, e.f, PS, e.log, &e.cf), 0);

	/* 300 committed pages (over a quarter of the cache): the pool writes
	 * them back on its own while page 0 has uncommitted bytes */
	uint64_t lsn;
	dirty_pages(&e, 300, 0xA0000000u, &lsn);
	struct frame *held;
	char why[200];
	assert_int_equal(cache_get(e.cf, 0, CG_READ, &held, why, sizeof(why)), 0);
	assert_int_equal(cache_txn_hold(held), 0);
	wr32(held->data + PG_HDR + 4, 0xDEADBEEF); /* never committed */
	struct mb_cache_stats s;
	for (int i = 0; i < 1000; i++) {
		mb_cache_stats_get(e.c, &s);
		if (s.dirty_pages * PS <= s.bytes_limit / 4)
			break;
		usleep(5000);
	}
	assert_true(s.writes > 0);
	assert_true(s.dirty_pages * PS <= s.bytes_limit / 4);
	int inflight = atomic_load(&slow_max); /* the pool's writes only so far */
	assert_int_equal(cache_file_flush(e.c, e.cf), 0);
	check_disk(&e, 300, 0xA0000000u, lsn); /* page 0: the committed image */
	cache_txn_release(held, 0);
	cache_put(held);
	printf("# %u write-back threads: %llu writes, at most %d in flight\n", writers,
	       (unsigned long long)s.writes, inflight);
	if (writers == 1)
		assert_int_equal(inflight, 1);
	else
		assert_true(inflight > 1);

	/* failed write-backs: counted, pages stay dirty; a later flush works */
	struct mb_fault_rule rule = {MB_FAULT_EIO, MB_FAULT_ON_WRITE, MB_FILE_DB, 1, true, 0, 0};
	mb_fault_arm(fault, &rule);
	dirty_pages(&e, 300, 0xB0000000u, &lsn);
	for (int i = 0; i < 1000; i++) {
		mb_cache_stats_get(e.c, &s);
		if (s.write_errors > 0)
			break;
		usleep(5000);
	}
	assert_true(s.write_errors > 0);
	assert_true(s.dirty_pages > 0);
	assert_int_equal(cache_file_flush(e.c, e.cf), MB_EIO);
	mb_fault_disarm(fault);
	assert_int_equal(cache_file_flush(e.c, e.cf), 0);
	mb_cache_stats_get(e.c, &s);
	assert_int_equal(s.dirty_pages, 0);
	check_disk(&e, 300, 0xB0000000u, lsn);

	env_done(&e);
	mb_fault_destroy(fault);
}

static void test_writeback_pool(void **state)
{
	(void)state;
	pool_run(1);
	pool_run(8);
}

struct starved {
	struct env *e;
	int rc;
};

static void *starved_get(void *arg)
{
	struct starved *t = arg;
	struct frame *f;
	char why[200];
	t->rc = cache_get(t->e->cf, 1900, CG_READ, &f, why, sizeof(why));
	if (t->rc == 0)
		cache_put(f);
	return NULL;
}

/* Every frame pinned: a getter waits for one (then MB_EFULL); while the
 * cache is interrupted it fails at once with MB_EBUSY, and a waiting one
 * wakes and fails the same way (not MB_EFULL after its wait). */
static void test_interrupt(void **state)
{
	(void)state;
	struct env e;
	env_init(&e);
	struct frame *pin[512];
	char why[200];
	for (uint32_t i = 0; i < 512; i++)
		assert_int_equal(cache_get(e.cf, i, CG_READ, &pin[i], why, sizeof(why)), 0);
	struct starved t = {&e, 1};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, starved_get, &t), 0);
	usleep(50 * 1000);
	mb_cache_interrupt(e.c, true);
	pthread_join(th, NULL);
	assert_int_equal(t.rc, MB_EBUSY);
	struct frame *f;
	assert_int_equal(cache_get(e.cf, 1901, CG_READ, &f, why, sizeof(why)), MB_EBUSY);
	assert_non_null(strstr(why, "pausing"));
	/* a page in the cache is still found */
	assert_int_equal(cache_get(e.cf, 7, CG_READ, &f, why, sizeof(why)), 0);
	cache_put(f);
	mb_cache_interrupt(e.c, false);
	cache_put(pin[0]);
	assert_int_equal(cache_get(e.cf, 1902, CG_READ, &f, why, sizeof(why)), 0);
	cache_put(f);
	for (uint32_t i = 1; i < 512; i++)
		cache_put(pin[i]);
	env_done(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hits_limit_scan), cmocka_unit_test(test_lazy_writer),
	    cmocka_unit_test(test_threads),	    cmocka_unit_test(test_writeback_pool),
	    cmocka_unit_test(test_interrupt),	    cmocka_unit_test(test_write_max),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
