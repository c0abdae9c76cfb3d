/* test_fault.c: the engine under injected I/O faults (through the I/O
 * shim's fault wrapper): a failed log sync, ENOSPC and a short write on the
 * log each give the committer a clear error, never a success; the group then
 * refuses writes (MB_ERDONLY) until reopened; after reopening, every commit
 * that was reported durable is there and the integrity check passes.  Also:
 * a database read error reaches the caller as MB_EIO naming file and page;
 * a database read, page write or fsync failing with EIO puts the group in
 * the ERROR state (naming the file; no checkpoint after it) and reopening
 * recovers every durable commit; ENOSPC on a page write is retried. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/error.h"
#include "db/db.h"
#include "dbtest.h"

struct env {
	char *dir;
	struct mb_fault *ft;
	struct mb_sg *sg;
	struct mb_db *db;
	struct mb_tree *t;
};

static void env_open(struct env *e, bool faulty)
{
	struct mb_sg_options o;
	mb_sg_options_init(&o);
	o.dir = e->dir;
	o.create = true;
	o.cache_mb = 4;
	o.vfs = faulty ? mb_fault_vfs(e->ft) : NULL;
	assert_int_equal(mb_sg_open(&o, &e->sg), 0);
	assert_int_equal(mb_db_open(e->sg, "db01.mdb", 4096, MB_DB_CREATE, &e->db), 0);
	assert_int_equal(mb_db_begin(e->db), 0);
	assert_int_equal(mb_tree_open(e->db, "t", MB_TREE_CREATE, &e->t), 0);
	assert_int_equal(mb_db_commit(e->db), 0);
}

static void env_close(struct env *e)
{
	mb_db_close(e->db);
	mb_sg_close(e->sg); /* may report the group's error */
	e->db = NULL;
	e->sg = NULL;
}

static int put_commit(struct env *e, uint32_t i, size_t len)
{
	uint8_t k[4], v[20000];
	mb_key_u32(k, i);
	dbt_fill(v, len, i, 0);
	int r = mb_db_begin(e->db);
	if (r < 0)
		return r;
	r = mb_tree_put(e->t, k, 4, v, len, 0);
	if (r < 0) {
		mb_db_abort(e->db);
		return r;
	}
	return mb_db_commit(e->db);
}

/* all of 1..n present with the right values, and the check clean */
static void verify(struct env *e, uint32_t n)
{
	env_open(e, false);
	struct mb_val v = MB_VAL_INIT;
	uint8_t buf[20000];
	for (uint32_t i = 1; i <= n; i++) {
		uint8_t k[4];
		mb_key_u32(k, i);
		assert_int_equal(mb_tree_get(e->t, k, 4, &v), 0);
		dbt_fill(buf, v.len, i, 0);
		assert_memory_equal(v.data, buf, v.len);
	}
	mb_val_free(&v);
	struct mb_check_report rep;
	memset(&rep, 0, sizeof(rep));
	int r = mb_sg_check(e->sg, NULL, NULL, &rep);
	if (r)
		fprintf(stderr, "check: %s\n", rep.first_problem);
	assert_int_equal(r, 0);
	env_close(e);
}

static void log_fault(enum mb_fault_type type, enum mb_fault_op op, int expect)
{
	struct env e = {0};
	e.dir = dbt_tmpdir();
	assert_int_equal(mb_fault_create(NULL, &e.ft), 0);
	env_open(&e, true);
	uint32_t ok = 0;
	for (uint32_t i = 1; i <= 20; i++) {
		assert_int_equal(put_commit(&e, i, 100 + i * 300), 0);
		ok = i;
	}
	mb_fault_arm(e.ft, &(struct mb_fault_rule){type, op, MB_FILE_LOG, 1, false, 0, 0});
	int r = put_commit(&e, 21, 5000);
	assert_int_equal(r, expect);
	assert_true(mb_fault_fired(e.ft) >= 1);
	assert_int_not_equal(mb_sg_error(e.sg), 0);
	/* the ERROR state: no more writes, even though the fault is gone */
	mb_fault_disarm(e.ft);
	assert_int_equal(mb_db_begin(e.db), MB_ERDONLY);
	assert_true(strlen(mb_db_errmsg(e.db)) > 0);
	env_close(&e);
	/* restart: everything reported durable is there */
	verify(&e, ok);
	mb_fault_destroy(e.ft);
	dbt_rmrf(e.dir);
	free(e.dir);
}

static void test_log_sync_fails(void **state)
{
	log_fault(MB_FAULT_SYNC, MB_FAULT_ON_SYNC, MB_EIO);
}

static void test_log_enospc(void **state)
{
	log_fault(MB_FAULT_ENOSPC, MB_FAULT_ON_WRITE, MB_ENOSPC);
}

static void test_log_short_write(void **state)
{
	log_fault(MB_FAULT_SHORT_WRITE, MB_FAULT_ON_WRITE, MB_ENOSPC);
}

static void test_log_eio_write(void **state) { log_fault(MB_FAULT_EIO, MB_FAULT_ON_WRITE, MB_EIO); }

/* No descriptor left when the log opens its next segment: the writer waits
 * it out; no ERROR state, every commit durable (the store's fd cap keeps
 * this rare; a transient shortage must never stop a group for good). */
static void test_log_emfile_transient(void **state)
{
	(void)state;
	struct env e = {0};
	e.dir = dbt_tmpdir();
	assert_int_equal(mb_fault_create(NULL, &e.ft), 0);
	env_open(&e, true);
	/* the next open of a log file fails (a commit waits for the writer, so
	 * a fault that lasted would only make it wait longer) */
	mb_fault_arm(e.ft, &(struct mb_fault_rule){MB_FAULT_EMFILE, MB_FAULT_ON_OPEN, MB_FILE_LOG,
						   1, false, 0, 0});
	uint32_t n = 0;
	/* 18 KB values: 60 commits write more than one 1 MiB segment */
	for (uint32_t i = 1; i <= 60; i++) {
		assert_int_equal(put_commit(&e, i, 18000), 0);
		n = i;
	}
	assert_int_equal(mb_sg_error(e.sg), 0);
	struct mb_sg_stats ss;
	mb_sg_stats_get(e.sg, &ss);
	assert_true(ss.transient_waits >= 1);
	env_close(&e);
	verify(&e, n);
	mb_fault_destroy(e.ft);
	dbt_rmrf(e.dir);
	free(e.dir);
}

struct acount {
	int ok, failed, last;
};

static void acb(void *arg, int status)
{
	struct acount *a = arg;
	__atomic_store_n(&a->last, status, __ATOMIC_SEQ_CST);
	if (status == 0)
		__atomic_add_fetch(&a->ok, 1, __ATOMIC_SEQ_CST);
	else
		__atomic_add_fetch(&a->failed, 1, __ATOMIC_SEQ_CST);
}

static void test_async_fails(void **state)
{
	struct env e = {0};
	e.dir = dbt_tmpdir();
	assert_int_equal(mb_fault_create(NULL, &e.ft), 0);
	env_open(&e, true);
	struct acount a = {0};
	uint8_t k[4], val[10];
	mb_key_u32(k, 1);
	dbt_fill(val, sizeof(val), 1, 0);
	assert_int_equal(mb_db_begin(e.db), 0);
	assert_int_equal(mb_tree_put(e.t, k, 4, val, sizeof(val), 0), 0);
	assert_int_equal(mb_db_commit_async(e.db, acb, &a), 0);
	assert_int_equal(mb_sg_flush(e.sg), 0);
	for (int i = 0; i < 2000 && __atomic_load_n(&a.ok, __ATOMIC_SEQ_CST) == 0; i++)
		usleep(1000);
	assert_int_equal(a.ok, 1);
	mb_fault_arm(e.ft, &(struct mb_fault_rule){MB_FAULT_SYNC, MB_FAULT_ON_SYNC, MB_FILE_LOG, 1,
						   true, 0, 0});
	mb_key_u32(k, 2);
	assert_int_equal(mb_db_begin(e.db), 0);
	assert_int_equal(mb_tree_put(e.t, k, 4, "y", 1, 0), 0);
	assert_int_equal(mb_db_commit_async(e.db, acb, &a), 0);
	assert_int_not_equal(mb_sg_flush(e.sg), 0);
	/* callbacks run on the log writer just after the waiters wake */
	for (int i = 0; i < 2000 && __atomic_load_n(&a.failed, __ATOMIC_SEQ_CST) == 0; i++)
		usleep(1000);
	/* the callback ran with the error, never with success */
	assert_int_equal(a.ok, 1);
	assert_int_equal(a.failed, 1);
	assert_int_equal(a.last, MB_EIO);
	mb_fault_disarm(e.ft);
	env_close(&e);
	verify(&e, 1);
	mb_fault_destroy(e.ft);
	dbt_rmrf(e.dir);
	free(e.dir);
}

/* the group's ERROR state after a database file failed, then recovery by
 * reopening: every commit reported durable is there, the check is clean */
static void db_fault_case(struct env *e, enum mb_fault_type type, enum mb_fault_op op, uint32_t *n,
			  const char *what_has)
{
	env_open(e, true);
	for (uint32_t i = *n + 1; i <= *n + 100; i++)
		assert_int_equal(put_commit(e, i, 3000), 0);
	*n += 100;
	if (op == MB_FAULT_ON_READ) {
		/* a page not in the cache: reopen the database, read its catalog */
		mb_db_close(e->db);
		assert_int_equal(mb_db_open(e->sg, "db01.mdb", 0, 0, &e->db), 0);
		mb_fault_arm(e->ft, &(struct mb_fault_rule){type, op, MB_FILE_DB, 1, true, 0, 0});
		struct mb_tree *t;
		assert_int_equal(mb_tree_open(e->db, "t", 0, &t), MB_EIO);
		assert_non_null(strstr(mb_db_errmsg(e->db), "db01.mdb"));
		assert_non_null(strstr(mb_db_errmsg(e->db), "page"));
	} else {
		mb_fault_arm(e->ft, &(struct mb_fault_rule){type, op, MB_FILE_DB, 1, true, 0, 0});
		assert_int_equal(mb_sg_checkpoint(e->sg), MB_EIO);
	}
	assert_true(mb_fault_fired(e->ft) >= 1);
	assert_int_equal(mb_sg_error(e->sg), MB_EIO);
	char what[160];
	mb_sg_error_what(e->sg, what, sizeof(what));
	assert_non_null(strstr(what, what_has));
	assert_non_null(strstr(what, "db01.mdb"));
	/* the cause gone, the group stays out until reopened: no write, and
	 * no checkpoint may move the redo point past pages that may be lost */
	mb_fault_disarm(e->ft);
	assert_int_equal(mb_sg_checkpoint(e->sg), MB_EIO);
	assert_int_equal(mb_db_begin(e->db), MB_ERDONLY);
	env_close(e);
	verify(e, *n);
}

static void test_db_faults(void **state)
{
	struct env e = {0};
	e.dir = dbt_tmpdir();
	assert_int_equal(mb_fault_create(NULL, &e.ft), 0);
	uint32_t n = 0;
	/* a failing page write-back */
	db_fault_case(&e, MB_FAULT_EIO, MB_FAULT_ON_WRITE, &n, "database write failed");
	/* a read error on a page not in the cache */
	db_fault_case(&e, MB_FAULT_EIO, MB_FAULT_ON_READ, &n, "database read failed");
	/* a failed fsync of a database file at a checkpoint (a later fsync could
	 * succeed without the pages the kernel dropped) */
	db_fault_case(&e, MB_FAULT_SYNC, MB_FAULT_ON_SYNC, &n, "database sync failed");
	/* a full disk on a page write is retried: no ERROR state */
	env_open(&e, true);
	for (uint32_t i = n + 1; i <= n + 100; i++)
		assert_int_equal(put_commit(&e, i, 3000), 0);
	n += 100;
	mb_fault_arm(e.ft, &(struct mb_fault_rule){MB_FAULT_ENOSPC, MB_FAULT_ON_WRITE, MB_FILE_DB,
						   1, true, 0, 0});
	assert_int_equal(mb_sg_checkpoint(e.sg), MB_ENOSPC);
	assert_int_equal(mb_sg_error(e.sg), 0);
	mb_fault_disarm(e.ft);
	assert_int_equal(mb_sg_checkpoint(e.sg), 0);
	assert_int_equal(put_commit(&e, ++n, 3000), 0);
	env_close(&e);
	verify(&e, n);
	mb_fault_destroy(e.ft);
	dbt_rmrf(e.dir);
	free(e.dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_log_sync_fails),
	    cmocka_unit_test(test_log_enospc),
	    cmocka_unit_test(test_log_emfile_transient),
	    cmocka_unit_test(test_log_short_write),
	    cmocka_unit_test(test_log_eio_write),
	    cmocka_unit_test(test_async_fails),
	    cmocka_unit_test(test_db_faults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
