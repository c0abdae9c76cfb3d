/* test_log.c: unit tests of the write-ahead log (internal API, dbint.h):
 * group commit (many threads' commits share log writes), async completion
 * in LSN order, records spanning 1 MiB segment files read back intact,
 * checkpoints recycling the segments before their redo point (their old
 * records never read as valid at their new place), and a torn
 * tail (a partial record after the last good one) cut on reopen so that
 * appending resumes at the last valid record, and the sectors: how many
 * writes each kind of flush takes, the shadow copy of the partial sector,
 * a torn partial sector read back from its shadow, and the sector a log
 * was written in recorded in its checkpoint file and kept on reopen. */
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

/* ---- sectors and the shadow sector ---- */

static uint64_t log_writes(struct mb_io *io)
{
	struct mb_io_stats st;
	mb_io_stats_get(io, &st);
	return st.kind[MB_FILE_LOG].writes;
}

/* Append one record of len payload bytes (type 3, filled by its count)
 * and wait until it is durable; the log writes that took. */
static uint64_t put_wait(struct mb_io *io, struct mb_log *l, uint32_t count, size_t len,
			 uint64_t *end)
{
	uint8_t p[4096];
	assert_true(len <= sizeof(p));
	dbt_fill(p, len, count, 0);
	uint64_t w0 = log_writes(io);
	assert_int_equal(log_append(l, 3, count, p, len, end), 0);
	assert_int_equal(log_wait(l, *end), 0);
	return log_writes(io) - w0;
}

static void read_seg0(const char *dir, uint8_t *buf, size_t len)
{
	char seg[4200];
	snprintf(seg, sizeof(seg), "%s/%016llx.seg", dir, 0ull);
	int fd = open(seg, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, len, 0), (ssize_t)len);
	close(fd);
}

static void garble_seg0(const char *dir, uint64_t off, size_t len)
{
	char seg[4200];
	uint8_t junk[MB_LOG_SECTOR_MAX];
	memset(junk, 0xA5, sizeof(junk));
	assert_true(len <= sizeof(junk));
	snprintf(seg, sizeof(seg), "%s/%016llx.seg", dir, 0ull);
	int fd = open(seg, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, junk, len, (off_t)off), (ssize_t)len);
	close(fd);
}

/* A log in a fresh directory with sector sec (0: the default), started. */
struct lfx {
	char *dir;
	struct mb_io *io;
	struct mb_log *l;
	uint32_t sec;
};

static void lfx_begin(struct lfx *f, uint32_t sec)
{
	f->dir = dbt_tmpdir();
	f->sec = sec;
	assert_int_equal(mb_io_create(NULL, &f->io), 0);
	assert_int_equal(log_open(f->io, f->dir, &f->l), 0);
	log_set_sector(f->l, sec);
	assert_int_equal(log_start(f->l, 0), 0);
}

/* Close the log and open it again (what a restart reads: files garbled
 * while it was idle stay garbled), scan it from 0 (every record checked
 * by scan_cb) and start it at its end when start. */
static struct scan lfx_reopen(struct lfx *f, uint64_t *end, bool start)
{
	struct scan sc = {0};
	log_close(f->l);
	assert_int_equal(log_open(f->io, f->dir, &f->l), 0);
	log_set_sector(f->l, f->sec);
	assert_int_equal(log_scan(f->l, 0, scan_cb, &sc, end, NULL), 0);
	assert_int_equal(sc.bad, 0);
	if (start)
		assert_int_equal(log_start(f->l, *end), 0);
	return sc;
}

static void lfx_end(struct lfx *f)
{
	log_close(f->l);
	mb_io_destroy(f->io);
	dbt_rmrf(f->dir);
	free(f->dir);
}

/* The log is written in 512-byte sectors as ESE writes its log: the
 * partial last sector with a shadow copy after it, written in one write
 * when no shadow was down and in two when one was (the sector, then its
 * shadow); a write that fills sectors while a shadow is down writes the
 * sector under the shadow alone first.  And a torn partial sector reads
 * back from its shadow: no acknowledged record is lost. */
static void test_sectors_and_shadow(void **state)
{
	(void)state;
	const size_t S = MB_LOG_SECTOR_SIZE;
	struct lfx f;
	uint64_t ends[8], end;
	lfx_begin(&f, 0);
	/* the first write also creates the segment (one write of zeroes) */
	assert_int_equal(put_wait(f.io, f.l, 1, 60, &ends[0]), 2);
	/* a record that stays in the partial sector: the sector, its shadow */
	assert_int_equal(put_wait(f.io, f.l, 2, 60, &ends[1]), 2);
	assert_true(ends[1] < S);
	uint8_t disk[4 * MB_LOG_SECTOR_SIZE];
	read_seg0(f.dir, disk, sizeof(disk));
	assert_memory_equal(disk, disk + S, S); /* sector 1 is sector 0's shadow */
	/* one that fills sector 0 and ends in sector 1: sector 0 alone (its
	 * shadow is down), its copy over the shadow, then sector 1 with its
	 * shadow in one write */
	assert_int_equal(put_wait(f.io, f.l, 3, 500, &ends[2]), 3);
	assert_true(ends[2] > S && ends[2] < 2 * S);
	read_seg0(f.dir, disk, sizeof(disk));
	assert_memory_equal(disk + S, disk + 2 * S, S);
	/* several sectors at once, a shadow down: the sector under it, the
	 * rest, the new partial sector with its shadow */
	assert_int_equal(put_wait(f.io, f.l, 4, 1300, &ends[3]), 3);
	assert_true(ends[3] > 3 * S && ends[3] < 4 * S);

	/* the next write tore the partial sector (sector 3): its shadow holds
	 * what was acknowledged, and the scan reads it from there; log_start
	 * writes the repaired sector back and appending goes on */
	garble_seg0(f.dir, 3 * S, S);
	assert_int_equal(lfx_reopen(&f, &end, true).n, 4);
	assert_true(end == ends[3]);
	assert_int_equal(put_wait(f.io, f.l, 5, 4, &ends[4]), 2); /* fits in sector 3 */
	assert_int_equal(lfx_reopen(&f, &end, true).n, 5);
	assert_true(end == ends[4]);

	/* a torn sector whose shadow is torn too: the records in it are cut
	 * (the scan stops at the last whole record before it), never misread */
	uint64_t s3 = ends[4] - ends[4] % S;
	garble_seg0(f.dir, s3, S);
	garble_seg0(f.dir, s3 + S, S);
	assert_true(lfx_reopen(&f, &end, false).n < 5);
	assert_true(end <= s3);
	lfx_end(&f);
}

/* The same repair with the 4 KiB sectors of the storage test's log. */
static void test_shadow_4k(void **state)
{
	(void)state;
	const size_t S = MB_LOG_SECTOR_MAX;
	struct lfx f;
	uint64_t ends[4], end;
	lfx_begin(&f, (uint32_t)S);
	for (uint32_t i = 0; i < 4; i++)
		put_wait(f.io, f.l, i + 1, 1500, &ends[i]); /* 6,096 bytes: into sector 1 */
	assert_true(ends[3] > S && ends[3] < 2 * S);
	garble_seg0(f.dir, S + 100, 400); /* torn inside sector 1 */
	assert_int_equal(lfx_reopen(&f, &end, true).n, 4);
	assert_true(end == ends[3]);
	lfx_end(&f);
}

/* The checkpoint file records the log's sector, so a reopen that does not
 * name one reads the log in the sector it was written in (a torn 4 KiB
 * sector still repaired from its 4 KiB shadow), and one that names
 * another is refused before anything is read or written. */
static void test_sector_recorded(void **state)
{
	(void)state;
	const size_t S = MB_LOG_SECTOR_MAX;
	struct lfx f;
	uint64_t ends[4], end, redo;
	lfx_begin(&f, (uint32_t)S);
	assert_int_equal(log_write_checkpoint(f.l, 0), 0);
	for (uint32_t i = 0; i < 4; i++)
		put_wait(f.io, f.l, i + 1, 1500, &ends[i]);
	assert_true(ends[3] > S && ends[3] < 2 * S);
	garble_seg0(f.dir, S + 100, 400); /* torn inside sector 1 */

	/* another sector named: refused, the checkpoint unread */
	log_close(f.l);
	assert_int_equal(log_open(f.io, f.dir, &f.l), 0);
	log_set_sector(f.l, MB_LOG_SECTOR_SIZE);
	redo = 77;
	assert_int_equal(log_read_checkpoint(f.l, &redo), MB_ECONFIG);
	assert_int_equal(redo, 77);

	/* none named: the recorded 4 KiB, and the torn sector comes back */
	log_close(f.l);
	assert_int_equal(log_open(f.io, f.dir, &f.l), 0);
	log_set_sector(f.l, 0);
	assert_int_equal(log_sector(f.l), MB_LOG_SECTOR_SIZE);
	assert_int_equal(log_read_checkpoint(f.l, &redo), 0);
	assert_int_equal(redo, 0);
	assert_int_equal(log_sector(f.l), S);
	struct scan sc = {0};
	assert_int_equal(log_scan(f.l, 0, scan_cb, &sc, &end, NULL), 0);
	assert_int_equal(sc.bad, 0);
	assert_int_equal(sc.n, 4);
	assert_true(end == ends[3]);
	assert_int_equal(log_start(f.l, end), 0);
	/* and the checkpoints after it go on recording it */
	assert_int_equal(log_write_checkpoint(f.l, 0), 0);
	f.sec = (uint32_t)S;
	assert_int_equal(lfx_reopen(&f, &end, false).n, 4);
	log_close(f.l);
	assert_int_equal(log_open(f.io, f.dir, &f.l), 0);
	log_set_sector(f.l, 0);
	assert_int_equal(log_read_checkpoint(f.l, &redo), 0);
	assert_int_equal(log_sector(f.l), S);
	lfx_end(&f);

	/* a checkpoint file that records none (written before the sector was
	 * recorded) is read in the sector set, and with none named the next
	 * checkpoint records none either: a later open may name the one the
	 * log was written in */
	lfx_begin(&f, 0); /* no checkpoint read: the sector not known */
	assert_int_equal(log_write_checkpoint(f.l, 0), 0);
	log_close(f.l);
	assert_int_equal(log_open(f.io, f.dir, &f.l), 0);
	log_set_sector(f.l, 0);
	assert_int_equal(log_read_checkpoint(f.l, &redo), 0);
	assert_int_equal(log_sector(f.l), MB_LOG_SECTOR_SIZE);
	assert_int_equal(log_write_checkpoint(f.l, 0), 0);
	log_close(f.l);
	assert_int_equal(log_open(f.io, f.dir, &f.l), 0);
	log_set_sector(f.l, (uint32_t)S);
	assert_int_equal(log_read_checkpoint(f.l, &redo), 0);
	assert_int_equal(log_sector(f.l), S);
	lfx_end(&f);
}

/* The edges of the repair: a record whose header reaches into the torn
 * sector; the partial sector at a segment's end, whose shadow is the next
 * segment's first sector; and the reopen, which writes the partial sector
 * clean (bytes of a lost flush after the end cleared) with its shadow. */
static void test_shadow_edges(void **state)
{
	(void)state;
	const size_t S = MB_LOG_SECTOR_SIZE, SEGB = MB_LOG_SEGMENT_SIZE;
	struct lfx f;
	uint64_t ends[3], end;
	lfx_begin(&f, 0);
	/* A ends 10 bytes before sector 1; B's header (its LSN) crosses into it */
	put_wait(f.io, f.l, 1, S - 10 - 24, &ends[0]);
	put_wait(f.io, f.l, 2, 36, &ends[1]);
	assert_true(ends[0] == S - 10 && ends[1] == S + 50);
	garble_seg0(f.dir, S, S);
	assert_int_equal(lfx_reopen(&f, &end, false).n, 2);
	assert_true(end == ends[1]);

	/* the reopen writes the partial sector clean, with its shadow: put
	 * bytes of a "lost flush" after the end first */
	garble_seg0(f.dir, ends[1], 2 * S - ends[1]);
	assert_int_equal(lfx_reopen(&f, &end, true).n, 2);
	assert_true(end == ends[1]);
	uint8_t disk[3 * MB_LOG_SECTOR_SIZE], zero[MB_LOG_SECTOR_SIZE];
	memset(zero, 0, sizeof(zero));
	read_seg0(f.dir, disk, sizeof(disk));
	assert_memory_equal(disk + S, disk + 2 * S, S);
	assert_memory_equal(disk + ends[1], zero, 2 * S - ends[1]);

	/* a record that ends in segment 0's last sector: its shadow is segment
	 * 1's first sector, and a torn last sector reads back from it */
	size_t big = SEGB - S + 100 - (size_t)ends[1] - 24;
	uint8_t *p = malloc(big);
	assert_non_null(p);
	dbt_fill(p, big, 3, 0);
	assert_int_equal(log_append(f.l, 3, 3, p, big, &ends[2]), 0);
	assert_int_equal(log_wait(f.l, ends[2]), 0);
	free(p);
	assert_true(ends[2] == SEGB - S + 100);
	garble_seg0(f.dir, SEGB - S, S);
	assert_int_equal(lfx_reopen(&f, &end, true).n, 3);
	assert_true(end == ends[2]);
	assert_int_equal(lfx_reopen(&f, &end, false).n, 3);
	assert_true(end == ends[2]);
	lfx_end(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_group_commit),       cmocka_unit_test(test_segments_async_torn),
	    cmocka_unit_test(test_sectors_and_shadow), cmocka_unit_test(test_shadow_4k),
	    cmocka_unit_test(test_shadow_edges),       cmocka_unit_test(test_sector_recorded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
