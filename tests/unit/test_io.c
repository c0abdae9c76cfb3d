/* test_io.c: unit tests of the file I/O shim: whole-buffer reads and
 * writes, O_DIRECT with aligned buffers (or the announced fallback),
 * per-kind counters and latency histograms, thread safety of the
 * counters, and every fault the injecting wrapper offers (EIO on the Nth
 * read, ENOSPC, short write then full device, fsync failure, kind filter,
 * sticky rules, disarm; a low-disk rule answers the free space and fails
 * nothing), and the unsharing of a hard-linked file before it
 * is opened for writing (the pristine copy's links). */
#include "config.h"

#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/error.h"
#include "core/hist.h"
#include "db/io.h"
#include "dbtest.h"

static void test_rw_counters(void **state)
{
	char *dir = dbt_tmpdir();
	char path[4200];
	snprintf(path, sizeof(path), "%s/f.mdb", dir);
	struct mb_io *io;
	assert_int_equal(mb_io_create(NULL, &io), 0);
	struct mb_file *f;
	assert_int_equal(mb_io_open(io, path, MB_IO_CREATE | MB_IO_DIRECT, MB_FILE_DB, &f), 0);
	/* /tmp is ext4 here; elsewhere the fallback must still work */
	uint8_t *b = mb_io_alloc(8192), *c = mb_io_alloc(8192);
	assert_non_null(b);
	assert_int_equal((uintptr_t)b % MB_IO_ALIGN, 0);
	dbt_fill(b, 8192, 1, 1);
	assert_int_equal(mb_file_write(f, b, 8192, 4096), 0);
	assert_int_equal(mb_file_sync(f, true), 0);
	assert_int_equal(mb_file_read(f, c, 8192, 4096), 0);
	assert_memory_equal(b, c, 8192);
	assert_int_equal(mb_file_read(f, c, 4096, 12288), MB_ERANGE);
	uint64_t size;
	assert_int_equal(mb_file_size(f, &size), 0);
	assert_int_equal(size, 12288);
	struct mb_io_stats st;
	mb_io_stats_get(io, &st);
	assert_int_equal(st.kind[MB_FILE_DB].writes, 1);
	assert_int_equal(st.kind[MB_FILE_DB].reads, 1);
	assert_int_equal(st.kind[MB_FILE_DB].write_bytes, 8192);
	assert_int_equal(st.kind[MB_FILE_DB].read_bytes, 8192);
	assert_int_equal(st.kind[MB_FILE_DB].syncs, 1);
	assert_int_equal(st.kind[MB_FILE_DB].errors, 1);
	assert_int_equal(st.kind[MB_FILE_LOG].writes, 0);
	struct mb_hist *h;
	assert_int_equal(mb_hist_create(&h), 0);
	mb_io_hist_take(io, MB_FILE_DB, MB_IO_OP_READ, h);
	assert_int_equal(mb_hist_count(h), 1);
	assert_true(mb_hist_max_ns(h) > 0);
	mb_hist_reset(h);
	mb_io_hist_take(io, MB_FILE_DB, MB_IO_OP_READ, h);
	assert_int_equal(mb_hist_count(h), 0); /* take reset it */
	mb_hist_destroy(h);
	assert_int_equal(mb_file_close(f), 0);
	/* a log file with O_DSYNC, buffered, any alignment */
	snprintf(path, sizeof(path), "%s/l.seg", dir);
	assert_int_equal(mb_io_open(io, path, MB_IO_CREATE | MB_IO_DSYNC, MB_FILE_LOG, &f), 0);
	assert_int_equal(mb_file_write(f, "hello", 5, 3), 0);
	assert_int_equal(mb_file_allocate(f, 0, 1 << 20), 0);
	assert_int_equal(mb_file_size(f, &size), 0);
	assert_int_equal(size, 1 << 20);
	mb_io_stats_get(io, &st);
	assert_int_equal(st.kind[MB_FILE_LOG].writes, 1);
	assert_int_equal(st.kind[MB_FILE_LOG].write_bytes, 5);
	assert_int_equal(mb_file_close(f), 0);
	assert_int_equal(mb_io_open(io, path, MB_IO_CREATE | MB_IO_EXCL, MB_FILE_LOG, &f),
			 MB_EEXIST);
	assert_int_equal(mb_io_unlink(io, path), 0);
	assert_int_equal(mb_io_open(io, path, 0, MB_FILE_LOG, &f), MB_ENOTFOUND);
	mb_io_free(b);
	mb_io_free(c);
	mb_io_destroy(io);
	dbt_rmrf(dir);
	free(dir);
}

struct thr {
	struct mb_file *f;
	int n;
};

static void *reader(void *arg)
{
	struct thr *t = arg;
	uint8_t *b = mb_io_alloc(4096);
	for (int i = 0; i < t->n; i++)
		if (mb_file_read(t->f, b, 4096, (uint64_t)(i % 16) * 4096) != 0)
			abort();
	mb_io_free(b);
	return NULL;
}

static void test_threads(void **state)
{
	char *dir = dbt_tmpdir();
	char path[4200];
	snprintf(path, sizeof(path), "%s/f.mdb", dir);
	struct mb_io *io;
	assert_int_equal(mb_io_create(NULL, &io), 0);
	struct mb_file *f;
	assert_int_equal(mb_io_open(io, path, MB_IO_CREATE | MB_IO_DIRECT, MB_FILE_DB, &f), 0);
	uint8_t *b = mb_io_alloc(65536);
	memset(b, 1, 65536);
	assert_int_equal(mb_file_write(f, b, 65536, 0), 0);
	pthread_t th[4];
	struct thr t = {f, 500};
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, reader, &t);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	struct mb_io_stats st;
	mb_io_stats_get(io, &st);
	assert_int_equal(st.kind[MB_FILE_DB].reads, 2000);
	assert_int_equal(st.kind[MB_FILE_DB].read_bytes, 2000 * 4096);
	struct mb_hist *h;
	mb_hist_create(&h);
	mb_io_hist_merge(io, MB_FILE_DB, MB_IO_OP_READ, h);
	assert_int_equal(mb_hist_count(h), 2000);
	mb_hist_destroy(h);
	mb_file_close(f);
	mb_io_free(b);
	mb_io_destroy(io);
	dbt_rmrf(dir);
	free(dir);
}

static void test_faults(void **state)
{
	char *dir = dbt_tmpdir();
	char path[4200], lpath[4200];
	snprintf(path, sizeof(path), "%s/f.mdb", dir);
	snprintf(lpath, sizeof(lpath), "%s/f.seg", dir);
	struct mb_fault *ft;
	assert_int_equal(mb_fault_create(NULL, &ft), 0);
	struct mb_io *io;
	assert_int_equal(mb_io_create(mb_fault_vfs(ft), &io), 0);
	struct mb_file *f, *l;
	assert_int_equal(mb_io_open(io, path, MB_IO_CREATE | MB_IO_DIRECT, MB_FILE_DB, &f), 0);
	assert_int_equal(mb_io_open(io, lpath, MB_IO_CREATE, MB_FILE_LOG, &l), 0);
	uint8_t *b = mb_io_alloc(16384);
	memset(b, 7, 16384);
	assert_int_equal(mb_file_write(f, b, 16384, 0), 0);

	/* EIO on the 3rd read, once */
	mb_fault_arm(ft,
		     &(struct mb_fault_rule){MB_FAULT_EIO, MB_FAULT_ON_READ, -1, 3, false, 0, 0});
	assert_int_equal(mb_file_read(f, b, 4096, 0), 0);
	assert_int_equal(mb_file_read(f, b, 4096, 0), 0);
	assert_int_equal(mb_file_read(f, b, 4096, 0), MB_EIO);
	assert_int_equal(mb_file_read(f, b, 4096, 0), 0);
	assert_int_equal(mb_fault_fired(ft), 1);

	/* ENOSPC on log writes only: db writes pass */
	mb_fault_arm(ft, &(struct mb_fault_rule){MB_FAULT_ENOSPC, MB_FAULT_ON_WRITE, MB_FILE_LOG, 1,
						 true, 0, 0});
	assert_int_equal(mb_file_write(f, b, 4096, 0), 0);
	assert_int_equal(mb_file_write(l, b, 100, 0), MB_ENOSPC);
	assert_int_equal(mb_file_write(l, b, 100, 0), MB_ENOSPC);
	mb_fault_disarm(ft);
	assert_int_equal(mb_file_write(l, b, 100, 0), 0);

	/* short write: half goes out, the retry finds the device full */
	mb_fault_arm(ft, &(struct mb_fault_rule){MB_FAULT_SHORT_WRITE, MB_FAULT_ON_WRITE,
						 MB_FILE_LOG, 1, false, 0, 0});
	memset(b, 9, 1000);
	assert_int_equal(mb_file_write(l, b, 1000, 4096), MB_ENOSPC);
	uint64_t size;
	assert_int_equal(mb_file_size(l, &size), 0);
	assert_int_equal(size, 4096 + 500);
	mb_fault_disarm(ft);

	/* short write on a direct file: rounded to the alignment */
	mb_fault_arm(ft, &(struct mb_fault_rule){MB_FAULT_SHORT_WRITE, MB_FAULT_ON_WRITE,
						 MB_FILE_DB, 1, false, 0, 0});
	assert_int_equal(mb_file_write(f, b, 16384, 16384), MB_ENOSPC);
	assert_int_equal(mb_file_size(f, &size), 0);
	assert_int_equal(size, 16384 + (mb_file_is_direct(f) ? 8192 : 8192));
	mb_fault_disarm(ft);

	/* fsync failure on the 2nd sync of a log file */
	mb_fault_arm(ft, &(struct mb_fault_rule){MB_FAULT_SYNC, MB_FAULT_ON_SYNC, MB_FILE_LOG, 2,
						 false, 0, 0});
	assert_int_equal(mb_file_sync(f, true), 0); /* db file: does not count */
	assert_int_equal(mb_file_sync(l, true), 0);
	assert_int_equal(mb_file_sync(l, true), MB_EIO);
	assert_int_equal(mb_file_sync(l, true), 0);
	struct mb_io_stats st;
	mb_io_stats_get(io, &st);
	assert_true(st.kind[MB_FILE_LOG].errors >= 4);
	mb_fault_disarm(ft);

	/* free space: the file system's, or what a low-disk rule says; the
	 * rule fails no I/O */
	uint64_t free_b = 0;
	assert_int_equal(mb_io_free_space(io, dir, &free_b), 0);
	assert_true(free_b > 0);
	mb_fault_arm(ft, &(struct mb_fault_rule){.type = MB_FAULT_LOW_DISK,
						 .op = MB_FAULT_ON_ANY,
						 .kind = -1,
						 .nth = 1,
						 .sticky = true,
						 .free_bytes = 5u << 20});
	assert_int_equal(mb_io_free_space(io, dir, &free_b), 0);
	assert_int_equal(free_b, 5u << 20);
	assert_int_equal(mb_file_write(l, b, 100, 0), 0);
	assert_int_equal(mb_file_read(f, b, 4096, 0), 0);
	assert_int_equal(mb_file_sync(l, true), 0);
	mb_fault_disarm(ft);
	assert_int_equal(mb_io_free_space(io, "/nonexistent-mailbench-dir", &free_b), MB_ENOTFOUND);
	mb_file_close(f);
	mb_file_close(l);
	mb_io_free(b);
	mb_io_destroy(io);
	mb_fault_destroy(ft);
	dbt_rmrf(dir);
	free(dir);
}

/* A file linked elsewhere (the pristine copy) is unshared when opened for
 * writing: the other link keeps its bytes; opened read-only it is not;
 * opened to be truncated it is unlinked first. */
static void test_unshare(void **state)
{
	(void)state;
	char *dir = dbt_tmpdir();
	char path[4200], other[4200];
	snprintf(path, sizeof(path), "%s/db01.mdb", dir);
	snprintf(other, sizeof(other), "%s/pristine-db01.mdb", dir);
	struct mb_io *io;
	assert_int_equal(mb_io_create(NULL, &io), 0);
	uint8_t *b = mb_io_alloc(8192), *c = mb_io_alloc(8192);
	dbt_fill(b, 8192, 7, 1);
	struct mb_file *f;
	assert_int_equal(mb_io_open(io, path, MB_IO_CREATE, MB_FILE_DB, &f), 0);
	assert_int_equal(mb_file_write(f, b, 8192, 0), 0);
	assert_int_equal(mb_file_close(f), 0);
	assert_int_equal(link(path, other), 0);
	struct stat sb;
	/* read-only: still shared */
	assert_int_equal(mb_io_open(io, path, MB_IO_RDONLY, MB_FILE_DB, &f), 0);
	assert_int_equal(mb_file_close(f), 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_nlink, 2);
	/* for writing: a file of its own with the same bytes */
	assert_int_equal(mb_io_open(io, path, 0, MB_FILE_DB, &f), 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_nlink, 1);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_int_equal(mb_file_read(f, c, 8192, 0), 0);
	assert_memory_equal(b, c, 8192);
	memset(c, 0xee, 8192);
	assert_int_equal(mb_file_write(f, c, 4096, 0), 0);
	assert_int_equal(mb_file_close(f), 0);
	struct mb_file *o;
	assert_int_equal(mb_io_open(io, other, MB_IO_RDONLY, MB_FILE_DB, &o), 0);
	assert_int_equal(mb_file_read(o, c, 8192, 0), 0);
	assert_memory_equal(b, c, 8192); /* the other link as it was */
	assert_int_equal(mb_file_close(o), 0);
	assert_int_equal(stat(other, &sb), 0);
	assert_int_equal(sb.st_nlink, 1);
	/* truncating: unlinked first, the other link keeps its bytes */
	assert_int_equal(link(other, path), -1); /* path exists */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(link(other, path), 0);
	assert_int_equal(mb_io_open(io, path, MB_IO_CREATE | MB_IO_TRUNC, MB_FILE_DB, &f), 0);
	uint64_t size = 1;
	assert_int_equal(mb_file_size(f, &size), 0);
	assert_int_equal(size, 0);
	assert_int_equal(mb_file_close(f), 0);
	assert_int_equal(stat(other, &sb), 0);
	assert_int_equal(sb.st_size, 8192);
	assert_int_equal(sb.st_nlink, 1);
	/* nothing left beside it */
	char tmp[4300];
	snprintf(tmp, sizeof(tmp), "%s.unshare", path);
	assert_int_equal(access(tmp, F_OK), -1);
	mb_io_free(b);
	mb_io_free(c);
	mb_io_destroy(io);
	dbt_rmrf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rw_counters),
	    cmocka_unit_test(test_threads),
	    cmocka_unit_test(test_faults),
	    cmocka_unit_test(test_unshare),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
