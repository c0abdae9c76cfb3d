/* test_log.c: unit tests of the write-ahead log (internal API, dbint.h):
 * group commit (many threads' commits share log writes), async completion
 * in LSN order, records spanning 1 MiB segment files read back intact,
 * checkpoints recycling the segments before their redo point (their old
 * records never read as valid at their new place), and a torn
 * tail (a partial record after the last good one) cut on reopen so that
 * appending resumes at the last valid record. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/error.h"
#include "db/db.h"
#include "db/dbint.h"
#include "dbtest.h"

static int count_segments(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (strstr(e->d_name, ".seg"))
			n++;
	if (d)
		closedir(d);
	return n;
}

struct thr {
	struct mb_log *l;
	int n;
	int err;
};

static void *committer(void *arg)
{
	struct thr *t = arg;
	uint8_t rec[100];
	memset(rec, 1, sizeof(rec));
	for (int i = 0; i < t->n; i++) {
		uint64_t end;
		if (log_append(t->l, 7, 0, rec, sizeof(rec), &end) || log_wait(t->l, end))
			t->err++;
	}
	return NULL;
}

static void test_group_commit(void **state)
{
	char *dir = dbt_tmpdir();
	struct mb_io *io;
	struct mb_log *l;
	assert_int_equal(mb_io_create(NULL, &io), 0);
	assert_int_equal(log_open(io, dir, &l), 0);
	assert_int_equal(log_start(l, 0), 0);
	pthread_t th[16];
	struct thr t[16];
	for (int i = 0; i < 16; i++) {
		t[i] = (struct thr){l, 100, 0};
		pthread_create(&th[i], NULL, committer, &t[i]);
	}
	for (int i = 0; i < 16; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(t[i].err, 0);
	}
	struct mb_sg_stats st = {0};
	log_stats(l, &st);
	printf("# 16 committers: %llu commits in %llu log writes\n", (unsigned long long)st.commits,
	       (unsigned long long)st.log_writes);
	assert_int_equal(st.commits, 1600);
	assert_true(st.log_writes < st.commits);
	assert_int_equal(st.durable_lsn, 1600 * (LOG_REC_HDR + 100));
	struct mb_io_stats ios;
	mb_io_stats_get(io, &ios);
	assert_true(ios.kind[MB_FILE_LOG].syncs >= st.log_writes);
	log_close(l);
	mb_io_destroy(io);
	dbt_rmrf(dir);
	free(dir);
}

struct order {
	pthread_mutex_t m;
	uint64_t last;
	int n, bad;
};

static void on_durable(void *arg, int status)
{
	struct order *o = arg;
	pthread_mutex_lock(&o->m);
	o->n++;
	if (status)
		o->bad++;
	pthread_mutex_unlock(&o->m);
}

struct scan {
	int n;
	uint64_t bytes;
	int bad;
};

static int scan_cb(void *arg, uint64_t lsn, uint64_t end, uint32_t type, const uint8_t *p,
		   size_t len, uint32_t count)
{
	struct scan *s = arg;
	uint8_t *want = malloc(len ? len : 1);
	dbt_fill(want, len, count, 0);
	if (memcmp(want, p, len) || type != 3)
		s->bad++;
	free(want);
	s->n++;
	s->bytes += len;
	return 0;
}

static void test_segments_async_torn(void **state)
{
	char *dir = dbt_tmpdir();
	struct mb_io *io;
	struct mb_log *l;
	assert_int_equal(mb_io_create(NULL, &io), 0);
	assert_int_equal(log_open(io, dir, &l), 0);
	assert_int_equal(log_start(l, 0), 0);
	/* 40 records of 100 KB, async: 4 MB, 4+ segments */
	struct order o = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0};
	size_t len = 100000;
	uint8_t *p = malloc(len);
	uint64_t ends[40], end = 0;
	for (uint32_t i = 0; i < 40; i++) {
		dbt_fill(p, len, i, 0);
		assert_int_equal(log_append(l, 3, i, p, len, &ends[i]), 0);
		assert_int_equal(log_wait_async(l, ends[i], on_durable, &o, mb_io_now_ns()), 0);
	}
	assert_int_equal(log_wait(l, ends[39]), 0);
	int got = 0, bad = 0;
	for (int i = 0; i < 1000 && got < 40; i++) {
		pthread_mutex_lock(&o.m);
		got = o.n;
		bad = o.bad;
		pthread_mutex_unlock(&o.m);
		if (got < 40)
			usleep(1000);
	}
	assert_int_equal(got, 40);
	assert_int_equal(bad, 0);
	assert_true(count_segments(dir) >= 4);
	struct scan s = {0};
	assert_int_equal(log_scan(l, 0, scan_cb, &s, &end, NULL), 0);
	assert_int_equal(s.n, 40);
	assert_int_equal(s.bad, 0);
	assert_int_equal(end, ends[39]);
	/* checkpoint at record 30: earlier segments are recycled (renamed past
	 * the newest, so the count stays) and nothing before redo reads back */
	int before = count_segments(dir);
	assert_int_equal(log_write_checkpoint(l, ends[29]), 0);
	assert_int_equal(log_remove_before(l, ends[29]), 0);
	int after = count_segments(dir);
	assert_true(after <= before);
	char seg0[4200];
	snprintf(seg0, sizeof(seg0), "%s/%016llx.seg", dir, 0ull);
	assert_int_equal(access(seg0, F_OK), -1);
	s = (struct scan){0};
	assert_int_equal(log_scan(l, 0, scan_cb, &s, &end, NULL), 0);
	assert_int_equal(s.n, 0);
	uint64_t redo;
	assert_int_equal(log_read_checkpoint(l, &redo), 0);
	assert_int_equal(redo, ends[29]);
	s = (struct scan){0};
	assert_int_equal(log_scan(l, redo, scan_cb, &s, &end, NULL), 0);
	assert_int_equal(s.n, 10);
	log_close(l);

	/* a torn tail: half a record after the last good one */
	char seg[4200];
	snprintf(seg, sizeof(seg), "%s/%016llx.seg", dir, (unsigned long long)(end >> 20));
	int fd = open(seg, O_RDWR);
	assert_true(fd >= 0);
	uint8_t torn[600];
	memset(torn, 0x5A, sizeof(torn));
	wr32(torn + 4, 5000);	/* claims 5000 bytes */
	wr64(torn + 8, end);	/* at the right LSN */
	wr32(torn, 0xDEADBEEF); /* but its checksum is wrong / it is cut */
	size_t room = (1u << 20) - (end & ((1u << 20) - 1));
	assert_int_equal(pwrite(fd, torn, room < sizeof(torn) ? room : sizeof(torn),
				(off_t)(end & ((1u << 20) - 1))),
			 (ssize_t)(room < sizeof(torn) ? room : sizeof(torn)));
	close(fd);
	assert_int_equal(log_open(io, dir, &l), 0);
	uint64_t end2;
	s = (struct scan){0};
	assert_int_equal(log_scan(l, redo, scan_cb, &s, &end2, NULL), 0);
	assert_int_equal(end2, end); /* cut at the last valid record */
	assert_int_equal(s.n, 10);
	assert_int_equal(log_start(l, end2), 0);
	dbt_fill(p, 500, 77, 0);
	uint64_t e3;
	assert_int_equal(log_append(l, 3, 77, p, 500, &e3), 0);
	assert_int_equal(log_wait(l, e3), 0);
	log_close(l);
	assert_int_equal(log_open(io, dir, &l), 0);
	s = (struct scan){0};
	assert_int_equal(log_scan(l, redo, scan_cb, &s, &end2, NULL), 0);
	assert_int_equal(s.n, 11);
	assert_int_equal(s.bad, 0);
	assert_int_equal(end2, e3);
	log_close(l);
	free(p);
	mb_io_destroy(io);
	dbt_rmrf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_group_commit),
	    cmocka_unit_test(test_segments_async_torn),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
