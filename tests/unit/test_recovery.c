/* test_recovery.c: deterministic crash-recovery cases (the randomised
 * SIGKILL test is test_crash): a writer that exits without closing anything
 * loses no commit; replay is idempotent (replaying the whole log over
 * database files that already hold its changes gives the same state); a
 * torn database page (second half garbage) is repaired from the full page
 * image logged after the checkpoint; a recovery that cannot read a database
 * file fails instead of skipping its records; the integrity check passes
 * after each. */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "core/error.h"
#include "db/db.h"
#include "db/dbint.h"
#include "dbtest.h"

#define PS 4096
#define N 3000

static struct mb_sg *open_sg(const char *dir)
{
	struct mb_sg_options o;
	mb_sg_options_init(&o);
	o.dir = dir;
	o.create = true;
	o.cache_mb = 4;
	struct mb_sg *sg = NULL;
	int r = mb_sg_open(&o, &sg);
	if (r)
		fprintf(stderr, "open: %s\n", mb_strerror(r));
	return sg;
}

/* child: N keys in 30 transactions, then exit without closing (a crash) */
static void crashed_writer(const char *dir)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct mb_sg *sg = open_sg(dir);
		struct mb_db *db;
		struct mb_tree *t;
		if (!sg || mb_db_open(sg, "db01.mdb", PS, MB_DB_CREATE, &db) || mb_db_begin(db) ||
		    mb_tree_open(db, "t", MB_TREE_CREATE, &t) || mb_db_commit(db))
			_exit(2);
		uint8_t v[3000];
		for (uint32_t i = 0; i < N; i++) {
			if (i % 100 == 0 && mb_db_begin(db))
				_exit(3);
			uint8_t k[4];
			mb_key_u32(k, i);
			size_t len = 10 + i % 2000;
			dbt_fill(v, len, i, 1);
			if (mb_tree_put(t, k, 4, v, len, 0))
				_exit(4);
			if (i % 100 == 99 && mb_db_commit(db))
				_exit(5);
		}
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static void verify(const char *dir, bool expect_replay)
{
	struct mb_sg *sg = open_sg(dir);
	assert_non_null(sg);
	struct mb_sg_stats st;
	mb_sg_stats_get(sg, &st);
	if (expect_replay)
		assert_true(st.recovered_records > 0);
	struct mb_db *db;
	struct mb_tree *t;
	assert_int_equal(mb_db_open(sg, "db01.mdb", 0, 0, &db), 0);
	assert_int_equal(mb_tree_open(db, "t", 0, &t), 0);
	struct mb_val v = MB_VAL_INIT;
	uint8_t buf[3000];
	for (uint32_t i = 0; i < N; i++) {
		uint8_t k[4];
		mb_key_u32(k, i);
		assert_int_equal(mb_tree_get(t, k, 4, &v), 0);
		assert_int_equal(v.len, 10 + i % 2000);
		dbt_fill(buf, v.len, i, 1);
		assert_memory_equal(v.data, buf, v.len);
	}
	mb_val_free(&v);
	struct mb_check_report rep;
	memset(&rep, 0, sizeof(rep));
	int r = mb_sg_check(sg, NULL, NULL, &rep);
	if (r)
		fprintf(stderr, "check: %s\n", rep.first_problem);
	assert_int_equal(r, 0);
	assert_int_equal(mb_db_close(db), 0);
	assert_int_equal(mb_sg_close(sg), 0);
}

static void sh(const char *fmt, const char *a, const char *b)
{
	char cmd[9000];
	snprintf(cmd, sizeof(cmd), fmt, a, b);
	assert_int_equal(system(cmd), 0);
}

static void test_crash_and_idempotent(void **state)
{
	char *dir = dbt_tmpdir(), *copy = dbt_tmpdir();
	crashed_writer(dir);
	/* keep the crashed state */
	sh("cp -a '%s/.' '%s/'", dir, copy);
	verify(dir, true);
	/* the recovered database file with the crashed state's OLD log and
	 * checkpoint: every record is replayed over pages that have it already */
	sh("cp '%s/db01.mdb' '%s/db01.mdb'", dir, copy);
	verify(copy, true);
	verify(copy, false);
	dbt_rmrf(dir);
	dbt_rmrf(copy);
	free(dir);
	free(copy);
}

static void test_torn_page(void **state)
{
	char *dir = dbt_tmpdir();
	crashed_writer(dir);
	/* tear every tree page of the file that was written: second half garbage */
	char path[4200];
	snprintf(path, sizeof(path), "%s/db01.mdb", dir);
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	off_t size = lseek(fd, 0, SEEK_END);
	uint8_t p[PS];
	int torn = 0;
	for (off_t pg = 1; (pg + 1) * PS <= size; pg++) {
		assert_int_equal(pread(fd, p, PS, pg * PS), PS);
		if (p[PG_OFF_TYPE] != PT_LEAF && p[PG_OFF_TYPE] != PT_INTERNAL)
			continue;
		memset(p + PS / 2, 0xA5, PS / 2);
		assert_int_equal(pwrite(fd, p, PS, pg * PS), PS);
		torn++;
	}
	fsync(fd);
	close(fd);
	printf("# tore %d pages\n", torn);
	assert_true(torn > 0);
	verify(dir, true);
	dbt_rmrf(dir);
	free(dir);
}

/* A recovery whose database file cannot be read (EIO on its header)
 * fails and leaves the log as it was: skipping that database's records
 * would let the checkpoint after the replay discard them for good (acked
 * deletes came back after an in-place recovery that ran during an I/O
 * fault).  The next recovery, the fault gone, finds every commit. */
static void test_recovery_io_error(void **state)
{
	(void)state;
	char *dir = dbt_tmpdir();
	crashed_writer(dir);
	struct mb_fault *ft;
	assert_int_equal(mb_fault_create(NULL, &ft), 0);
	mb_fault_arm(
	    ft, &(struct mb_fault_rule){MB_FAULT_EIO, MB_FAULT_ON_READ, MB_FILE_DB, 1, true, 0, 0});
	struct mb_sg_options o;
	mb_sg_options_init(&o);
	o.dir = dir;
	o.cache_mb = 4;
	o.vfs = mb_fault_vfs(ft);
	struct mb_sg *sg = NULL;
	assert_int_equal(mb_sg_open(&o, &sg), MB_EIO);
	assert_null(sg);
	assert_true(mb_fault_fired(ft) >= 1);
	mb_fault_destroy(ft);
	verify(dir, true);
	dbt_rmrf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_recovery_io_error),
	    cmocka_unit_test(test_crash_and_idempotent),
	    cmocka_unit_test(test_torn_page),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
