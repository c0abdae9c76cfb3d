/* test_bulk.c: the bulk builder (src/db/bulk.c).
 *
 * The same deterministic batches of puts, overwrites and deletes (keys
 * prefixed by the batch number, random order inside a batch, values from
 * empty to several overflow pages) go into one database incrementally (a
 * transaction per batch) and into another by a bulk build (a flush per
 * batch); every tree must then hold the same keys and values, and the
 * integrity check must pass, also after reopening.  The rules of the
 * staging state are checked, and crashes: a writer SIGKILLed in the middle
 * of a build, or right after it committed, leaves a database the check
 * accepts, with empty trees (then built again) or with the whole build. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "core/error.h"
#include "db/bulk.h"
#include "db/db.h"
#include "dbtest.h"

#define NTREES 3
static const char *const names[NTREES] = {"alpha", "beta", "gamma"};

struct env {
	char *dir;
	struct mb_sg *sg;
	struct mb_db *db;
	struct mb_tree *t[NTREES];
};

static void env_open(struct env *e, const char *sub, uint32_t ps, bool create_trees)
{
	char d[4200];
	snprintf(d, sizeof(d), "%s/%s", e->dir, sub);
	struct mb_sg_options o;
	mb_sg_options_init(&o);
	o.dir = d;
	o.create = true;
	o.cache_mb = 16;
	assert_int_equal(mb_sg_open(&o, &e->sg), 0);
	assert_int_equal(mb_db_open(e->sg, "db01.mdb", ps, MB_DB_CREATE, &e->db), 0);
	if (create_trees)
		assert_int_equal(mb_db_begin(e->db), 0);
	for (int i = 0; i < NTREES; i++)
		assert_int_equal(
		    mb_tree_open(e->db, names[i], create_trees ? MB_TREE_CREATE : 0, &e->t[i]), 0);
	if (create_trees)
		assert_int_equal(mb_db_commit(e->db), 0);
}

static void env_close(struct env *e)
{
	assert_int_equal(mb_db_close(e->db), 0);
	assert_int_equal(mb_sg_close(e->sg), 0);
	e->db = NULL;
	e->sg = NULL;
}

static size_t val_len(uint64_t r, uint32_t ps)
{
	switch (r % 8) {
	case 0:
		return 0;
	case 1:
	case 2:
	case 3:
		return r % 100;
	case 4:
		return ps / 4 - 20 + (r >> 8) % 40; /* around the overflow threshold */
	case 5:
		return ps + (r >> 8) % (3 * ps); /* a few overflow pages */
	default:
		return (r >> 8) % 600;
	}
}

/* Batch bt of the workload into e: puts (some overwritten, some deleted).
 * bulk: through the open build (flush after), else one transaction. */
static void batch(struct env *e, int bt, bool bulk, struct mb_bulk *b, uint32_t ps)
{
	uint64_t s = 0x1234 + (uint64_t)bt;
	uint8_t *v = malloc(5 * ps);
	assert_non_null(v);
	if (!bulk)
		assert_int_equal(mb_db_begin(e->db), 0);
	int n = 20 + (int)(dbt_rand(&s) % 60);
	for (int i = 0; i < n; i++) {
		uint64_t r = dbt_rand(&s);
		int ti = (int)(r % NTREES);
		uint8_t key[16];
		uint32_t sub = (uint32_t)(dbt_rand(&s) % 50);
		size_t kl = 4 + 4 + (r >> 40) % 8;
		memset(key, 0, sizeof(key));
		key[0] = (uint8_t)(bt >> 24);
		key[1] = (uint8_t)(bt >> 16);
		key[2] = (uint8_t)(bt >> 8);
		key[3] = (uint8_t)bt;
		key[4] = (uint8_t)(sub >> 24);
		key[7] = (uint8_t)sub;
		size_t vl = val_len(dbt_rand(&s), ps);
		dbt_fill(v, vl, (uint64_t)bt * 1000 + (uint64_t)i, 1);
		int op = (int)((r >> 20) % 10);
		if (op == 0) {
			int rc = mb_tree_del(e->t[ti], key, kl);
			assert_true(rc == 0 || rc == MB_ENOTFOUND);
		} else {
			assert_int_equal(mb_tree_put(e->t[ti], key, kl, v, vl, 0), 0);
		}
		if (op == 1) { /* read back what was just written */
			struct mb_val got = MB_VAL_INIT;
			assert_int_equal(mb_tree_get(e->t[ti], key, kl, &got), 0);
			assert_int_equal(got.len, vl);
			if (vl)
				assert_memory_equal(got.data, v, vl);
			size_t l;
			assert_int_equal(mb_tree_get_len(e->t[ti], key, kl, &l), 0);
			assert_int_equal(l, vl);
			mb_val_free(&got);
		}
	}
	free(v);
	if (bulk)
		assert_int_equal(mb_bulk_flush(b), 0);
	else
		assert_int_equal(mb_db_commit(e->db), 0);
}

/* every tree of a and b: the same keys and values */
static void same_content(struct env *a, struct env *b, uint64_t *rows)
{
	struct mb_val va = MB_VAL_INIT, vb = MB_VAL_INIT;
	*rows = 0;
	for (int i = 0; i < NTREES; i++) {
		struct mb_cursor *ca, *cb;
		assert_int_equal(mb_cursor_open(a->t[i], &ca), 0);
		assert_int_equal(mb_cursor_open(b->t[i], &cb), 0);
		int ra = mb_cursor_first(ca), rb = mb_cursor_first(cb);
		while (ra == 0 && rb == 0) {
			const void *ka, *kb;
			size_t la, lb;
			assert_int_equal(mb_cursor_key(ca, &ka, &la), 0);
			assert_int_equal(mb_cursor_key(cb, &kb, &lb), 0);
			assert_int_equal(la, lb);
			assert_memory_equal(ka, kb, la);
			assert_int_equal(mb_cursor_value(ca, &va), 0);
			assert_int_equal(mb_cursor_value(cb, &vb), 0);
			assert_int_equal(va.len, vb.len);
			if (va.len)
				assert_memory_equal(va.data, vb.data, va.len);
			(*rows)++;
			ra = mb_cursor_next(ca);
			rb = mb_cursor_next(cb);
		}
		assert_int_equal(ra, MB_ENOTFOUND);
		assert_int_equal(rb, MB_ENOTFOUND);
		mb_cursor_close(ca);
		mb_cursor_close(cb);
	}
	mb_val_free(&va);
	mb_val_free(&vb);
}

static void check_clean(struct env *e)
{
	struct mb_check_report rep;
	memset(&rep, 0, sizeof(rep));
	int rc = mb_db_check(e->db, NULL, NULL, &rep);
	if (rc)
		print_message("check: %s\n", rep.first_problem);
	assert_int_equal(rc, 0);
	assert_int_equal(rep.problems, 0);
}

static void build_bulk(struct env *e, int batches, uint32_t ps)
{
	struct mb_bulk *b;
	assert_int_equal(mb_bulk_begin(e->db, &b), 0);
	for (int bt = 0; bt < batches; bt++)
		batch(e, bt, true, b, ps);
	assert_int_equal(mb_bulk_finish(b), 0);
}

static void equal_at(uint32_t ps, int batches)
{
	struct env inc = {0}, bul = {0};
	inc.dir = bul.dir = dbt_tmpdir();
	assert_non_null(inc.dir);
	env_open(&inc, "inc", ps, true);
	env_open(&bul, "bulk", ps, true);
	for (int bt = 0; bt < batches; bt++)
		batch(&inc, bt, false, NULL, ps);
	build_bulk(&bul, batches, ps);
	uint64_t rows;
	same_content(&inc, &bul, &rows);
	assert_true(rows > (uint64_t)batches * 10);
	check_clean(&bul);
	uint64_t ti, fi, tb, fb;
	mb_db_pages(inc.db, &ti, &fi);
	mb_db_pages(bul.db, &tb, &fb);
	print_message(
	    "page %u: %llu rows; pages incremental %llu (%llu free), bulk %llu (%llu free)\n", ps,
	    (unsigned long long)rows, (unsigned long long)ti, (unsigned long long)fi,
	    (unsigned long long)tb, (unsigned long long)fb);
	/* the trees stay writable the ordinary way */
	assert_int_equal(mb_db_begin(bul.db), 0);
	assert_int_equal(mb_tree_put(bul.t[0], "\x7f", 1, "x", 1, 0), 0);
	assert_int_equal(mb_db_commit(bul.db), 0);
	assert_int_equal(mb_db_begin(inc.db), 0);
	assert_int_equal(mb_tree_put(inc.t[0], "\x7f", 1, "x", 1, 0), 0);
	assert_int_equal(mb_db_commit(inc.db), 0);
	env_close(&bul);
	/* reopened (the build is durable without the cache) */
	env_open(&bul, "bulk", ps, false);
	same_content(&inc, &bul, &rows);
	check_clean(&bul);
	env_close(&bul);
	env_close(&inc);
	struct mb_check_report rep;
	memset(&rep, 0, sizeof(rep));
	assert_int_equal(mb_db_check_dir(inc.dir, NULL, 16, NULL, NULL, &rep), 0);
	assert_int_equal(rep.problems, 0);
	dbt_rmrf(inc.dir);
	free(inc.dir);
}

static void test_equal_32k(void **state)
{
	(void)state;
	equal_at(32768, 120);
}

static void test_equal_4k(void **state)
{
	(void)state;
	equal_at(4096, 150);
}

static void test_rules(void **state)
{
	(void)state;
	struct env e = {0};
	e.dir = dbt_tmpdir();
	assert_non_null(e.dir);
	env_open(&e, "r", 8192, true);
	struct mb_bulk *b;
	assert_int_equal(mb_bulk_begin(e.db, &b), 0);
	assert_int_equal(mb_db_begin(e.db), MB_ESTATE);
	struct mb_cursor *c;
	assert_int_equal(mb_cursor_open(e.t[0], &c), MB_ESTATE);
	assert_int_equal(mb_tree_put(e.t[0], "k5", 2, "v", 1, 0), 0);
	assert_int_equal(mb_tree_put(e.t[0], "k5", 2, "w", 1, MB_PUT_NOOVERWRITE), MB_EEXIST);
	assert_int_equal(mb_tree_put(e.t[0], "k6", 2, "w", 1, MB_PUT_UPDATE), MB_ENOTFOUND);
	assert_int_equal(mb_bulk_flush(b), 0);
	struct mb_val v = MB_VAL_INIT;
	/* at or below a flushed key: refused, never a wrong answer */
	assert_int_equal(mb_tree_get(e.t[0], "k5", 2, &v), MB_ESTATE);
	mb_bulk_abort(b);
	/* abort: the database as at begin */
	assert_int_equal(mb_tree_get(e.t[0], "k5", 2, &v), MB_ENOTFOUND);
	check_clean(&e);
	/* a tree that is not empty cannot be bulk-built */
	assert_int_equal(mb_db_begin(e.db), 0);
	assert_int_equal(mb_tree_put(e.t[1], "a", 1, "v", 1, 0), 0);
	assert_int_equal(mb_db_commit(e.db), 0);
	assert_int_equal(mb_bulk_begin(e.db, &b), 0);
	assert_int_equal(mb_tree_put(e.t[1], "b", 1, "v", 1, 0), MB_ESTATE);
	mb_bulk_abort(b);
	mb_val_free(&v);
	env_close(&e);
	dbt_rmrf(e.dir);
	free(e.dir);
}

/* A writer building in bulk, killed at batch kill_at (or, with -1, right
 * after the build committed). */
static void writer(const char *dir, uint32_t ps, int batches, int kill_at)
{
	struct env e = {0};
	e.dir = (char *)dir;
	env_open(&e, "c", ps, true);
	struct mb_bulk *b;
	if (mb_bulk_begin(e.db, &b))
		_exit(10);
	for (int bt = 0; bt < batches; bt++) {
		if (bt == kill_at)
			raise(SIGKILL);
		batch(&e, bt, true, b, ps);
	}
	if (mb_bulk_finish(b))
		_exit(11);
	raise(SIGKILL);
	_exit(12);
}

static void crash_at(uint32_t ps, int kill_at)
{
	const int batches = 80;
	char *dir = dbt_tmpdir();
	assert_non_null(dir);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		writer(dir, ps, batches, kill_at);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	struct env e = {0}, ref = {0};
	e.dir = ref.dir = dir;
	env_open(&e, "c", ps, true); /* recovery; the trees exist already */
	check_clean(&e);
	env_open(&ref, "ref", ps, true);
	for (int bt = 0; bt < batches; bt++)
		batch(&ref, bt, false, NULL, ps);
	uint64_t rows;
	if (kill_at >= 0) {
		/* nothing of the build is visible: empty trees, then built again */
		struct mb_val v = MB_VAL_INIT;
		for (int i = 0; i < NTREES; i++) {
			struct mb_cursor *c;
			assert_int_equal(mb_cursor_open(e.t[i], &c), 0);
			assert_int_equal(mb_cursor_first(c), MB_ENOTFOUND);
			mb_cursor_close(c);
		}
		mb_val_free(&v);
		build_bulk(&e, batches, ps);
	}
	same_content(&ref, &e, &rows);
	check_clean(&e);
	env_close(&ref);
	env_close(&e);
	dbt_rmrf(dir);
	free(dir);
}

static void test_crash_mid_build(void **state)
{
	(void)state;
	crash_at(32768, 50);
	crash_at(4096, 3);
}

static void test_crash_after_commit(void **state)
{
	(void)state;
	crash_at(8192, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_equal_32k),
	    cmocka_unit_test(test_equal_4k),
	    cmocka_unit_test(test_rules),
	    cmocka_unit_test(test_crash_mid_build),
	    cmocka_unit_test(test_crash_after_commit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
