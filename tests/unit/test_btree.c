/* test_btree.c: unit tests of the B+tree (and the pager under it):
 * put/get/del semantics, long values, transactions (abort restores),
 * cursors and ranges, many named trees, and a long random operation
 * sequence checked against an in-memory reference model, including after
 * closing and reopening the storage group, with the integrity check as the
 * final oracle.  MB_TEST_OPS scales the random sequence (default 200000). */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/error.h"
#include "db/db.h"
#include "dbtest.h"

static struct mb_sg *open_sg(const char *dir, uint32_t cache_mb)
{
	struct mb_sg_options o;
	mb_sg_options_init(&o);
	o.dir = dir;
	o.create = true;
	o.cache_mb = cache_mb;
	struct mb_sg *sg = NULL;
	assert_int_equal(mb_sg_open(&o, &sg), 0);
	return sg;
}

static void check_clean(struct mb_db *db)
{
	struct mb_check_report rep;
	memset(&rep, 0, sizeof(rep));
	int r = mb_db_check(db, NULL, NULL, &rep);
	if (r != 0)
		fprintf(stderr, "check: %s\n", rep.first_problem);
	assert_int_equal(r, 0);
	assert_int_equal(rep.problems, 0);
}

static void test_basic(void **state)
{
	char *dir = dbt_tmpdir();
	struct mb_sg *sg = open_sg(dir, 8);
	struct mb_db *db;
	assert_int_equal(mb_db_open(sg, "db01.mdb", 4096, MB_DB_CREATE, &db), 0);
	assert_int_equal(mb_db_page_size(db), 4096);
	struct mb_tree *t;
	assert_int_equal(mb_tree_open(db, "t", 0, &t), MB_ENOTFOUND);
	assert_int_equal(mb_tree_open(db, "t", MB_TREE_CREATE, &t), MB_ESTATE);
	assert_int_equal(mb_db_begin(db), 0);
	assert_int_equal(mb_tree_open(db, "t", MB_TREE_CREATE, &t), 0);
	assert_int_equal(mb_tree_put(t, "a", 1, "1", 1, 0), 0);
	assert_int_equal(mb_tree_put(t, "b", 1, "22", 2, 0), 0);
	assert_int_equal(mb_tree_put(t, "a", 1, "x", 1, MB_PUT_NOOVERWRITE), MB_EEXIST);
	assert_int_equal(mb_tree_put(t, "c", 1, "x", 1, MB_PUT_UPDATE), MB_ENOTFOUND);
	assert_int_equal(mb_tree_put(t, "", 0, "x", 1, 0), MB_EINVAL);
	assert_int_equal(mb_db_commit(db), 0);

	struct mb_val v = MB_VAL_INIT;
	assert_int_equal(mb_tree_get(t, "b", 1, &v), 0);
	assert_int_equal(v.len, 2);
	assert_memory_equal(v.data, "22", 2);
	assert_int_equal(mb_tree_put(t, "z", 1, "x", 1, 0), MB_ESTATE);

	/* abort restores */
	assert_int_equal(mb_db_begin(db), 0);
	assert_int_equal(mb_tree_del(t, "a", 1), 0);
	assert_int_equal(mb_tree_put(t, "b", 1, "333", 3, 0), 0);
	assert_int_equal(mb_tree_get(t, "a", 1, &v), MB_ENOTFOUND);
	assert_int_equal(mb_db_abort(db), 0);
	assert_int_equal(mb_tree_get(t, "a", 1, &v), 0);
	assert_int_equal(mb_tree_get(t, "b", 1, &v), 0);
	assert_int_equal(v.len, 2);

	/* long value of 3 MB, then replaced by a short one (pages freed) */
	size_t big = 3u << 20;
	uint8_t *b = malloc(big);
	dbt_fill(b, big, 7, 1);
	assert_int_equal(mb_db_begin(db), 0);
	assert_int_equal(mb_tree_put(t, "long", 4, b, big, 0), 0);
	assert_int_equal(mb_db_commit(db), 0);
	size_t len = 0;
	assert_int_equal(mb_tree_get_len(t, "long", 4, &len), 0);
	assert_int_equal(len, big);
	assert_int_equal(mb_tree_get(t, "long", 4, &v), 0);
	assert_int_equal(v.len, big);
	assert_memory_equal(v.data, b, big);
	check_clean(db);
	uint64_t total, freep;
	assert_int_equal(mb_db_begin(db), 0);
	assert_int_equal(mb_tree_put(t, "long", 4, "s", 1, 0), 0);
	assert_int_equal(mb_db_commit(db), 0);
	mb_db_pages(db, &total, &freep);
	assert_true(freep >= big / 4096);
	check_clean(db);
	free(b);
	mb_val_free(&v);
	assert_int_equal(mb_db_close(db), 0);
	assert_int_equal(mb_sg_close(sg), 0);

	/* reopen: committed data there, aborted changes not */
	sg = open_sg(dir, 8);
	assert_int_equal(mb_db_open(sg, "db01.mdb", 0, 0, &db), 0);
	assert_int_equal(mb_db_page_size(db), 4096);
	assert_int_equal(mb_tree_open(db, "t", 0, &t), 0);
	assert_int_equal(mb_tree_get(t, "long", 4, &v), 0);
	assert_int_equal(v.len, 1);
	assert_int_equal(mb_tree_get(t, "a", 1, &v), 0);
	mb_val_free(&v);
	check_clean(db);
	assert_int_equal(mb_db_close(db), 0);
	assert_int_equal(mb_sg_close(sg), 0);
	dbt_rmrf(dir);
	free(dir);
}

/* Freed pages are listed in trunk pages, so a delete does not dirty the
 * pages it frees: three 1.5 MiB values (about 1,160 overflow pages)
 * deleted in one transaction under a 2 MiB cache (512 frames; before,
 * each freed page became a dirty frame and the delete failed with
 * MB_EFULL); the free count covers them, the check walks the trunks, and
 * new values reuse the pages before the file grows, after a reopen too. */
static void test_free_list_trunks(void **state)
{
	(void)state;
	char *dir = dbt_tmpdir();
	struct mb_sg *sg = open_sg(dir, 2);
	struct mb_db *db;
	struct mb_tree *t;
	assert_int_equal(mb_db_open(sg, "db01.mdb", 4096, MB_DB_CREATE, &db), 0);
	assert_int_equal(mb_db_begin(db), 0);
	assert_int_equal(mb_tree_open(db, "t", MB_TREE_CREATE, &t), 0);
	assert_int_equal(mb_db_commit(db), 0);
	size_t big = 1536u << 10;
	uint8_t *b = malloc(big);
	assert_non_null(b);
	for (int i = 0; i < 3; i++) {
		char k[2] = {(char)('a' + i), 0};
		dbt_fill(b, big, 11, (uint64_t)i);
		assert_int_equal(mb_db_begin(db), 0);
		assert_int_equal(mb_tree_put(t, k, 1, b, big, 0), 0);
		assert_int_equal(mb_db_commit(db), 0);
	}
	uint64_t total0, free0, total1, free1, total2, free2;
	mb_db_pages(db, &total0, &free0);
	assert_int_equal(mb_db_begin(db), 0);
	for (int i = 0; i < 3; i++) {
		char k[2] = {(char)('a' + i), 0};
		assert_int_equal(mb_tree_del(t, k, 1), 0);
	}
	assert_int_equal(mb_db_commit(db), 0);
	mb_db_pages(db, &total1, &free1);
	assert_int_equal(total1, total0);
	assert_true(free1 >= free0 + 3 * (big / 4096));
	check_clean(db);
	/* the freed pages come back before the file grows */
	for (int i = 0; i < 2; i++) {
		char k[2] = {(char)('x' + i), 0};
		dbt_fill(b, big, 13, (uint64_t)i);
		assert_int_equal(mb_db_begin(db), 0);
		assert_int_equal(mb_tree_put(t, k, 1, b, big, 0), 0);
		assert_int_equal(mb_db_commit(db), 0);
	}
	mb_db_pages(db, &total2, &free2);
	assert_int_equal(total2, total1);
	assert_true(free2 <= free1 - 2 * (big / 4096));
	check_clean(db);
	assert_int_equal(mb_db_close(db), 0);
	assert_int_equal(mb_sg_close(sg), 0);
	sg = open_sg(dir, 2);
	assert_int_equal(mb_db_open(sg, "db01.mdb", 0, 0, &db), 0);
	assert_int_equal(mb_tree_open(db, "t", 0, &t), 0);
	struct mb_val v = MB_VAL_INIT;
	assert_int_equal(mb_tree_get(t, "y", 1, &v), 0);
	dbt_fill(b, big, 13, 1);
	assert_int_equal(v.len, big);
	assert_memory_equal(v.data, b, big);
	assert_int_equal(mb_tree_get(t, "a", 1, &v), MB_ENOTFOUND);
	check_clean(db);
	mb_val_free(&v);
	free(b);
	assert_int_equal(mb_db_close(db), 0);
	assert_int_equal(mb_sg_close(sg), 0);
	dbt_rmrf(dir);
	free(dir);
}

static size_t mkkey(uint8_t *k, uint32_t id)
{
	k[0] = (uint8_t)(id >> 24);
	k[1] = (uint8_t)(id >> 16);
	k[2] = (uint8_t)(id >> 8);
	k[3] = (uint8_t)id;
	size_t n = 4 + id % 13;
	memset(k + 4, 'k', n - 4);
	return n;
}

static void test_cursor(void **state)
{
	char *dir = dbt_tmpdir();
	struct mb_sg *sg = open_sg(dir, 8);
	struct mb_db *db;
	struct mb_tree *t;
	assert_int_equal(mb_db_open(sg, "db01.mdb", 4096, MB_DB_CREATE, &db), 0);
	assert_int_equal(mb_db_begin(db), 0);
	assert_int_equal(mb_tree_open(db, "c", MB_TREE_CREATE, &t), 0);
	uint8_t k[32];
	for (uint32_t i = 0; i < 5000; i += 2) {
		size_t n = mkkey(k, i);
		assert_int_equal(mb_tree_put(t, k, n, &i, sizeof(i), 0), 0);
	}
	assert_int_equal(mb_db_commit(db), 0);
	struct mb_cursor *c;
	assert_int_equal(mb_cursor_open(t, &c), 0);
	const void *key;
	size_t kl;
	/* full forward and backward scans */
	uint32_t expect = 0, count = 0;
	for (int r = mb_cursor_first(c); r == 0; r = mb_cursor_next(c)) {
		assert_int_equal(mb_cursor_key(c, &key, &kl), 0);
		assert_int_equal(mb_key_get_u32(key), expect);
		expect += 2;
		count++;
	}
	assert_int_equal(count, 2500);
	expect = 4998;
	for (int r = mb_cursor_last(c); r == 0; r = mb_cursor_prev(c)) {
		assert_int_equal(mb_cursor_key(c, &key, &kl), 0);
		assert_int_equal(mb_key_get_u32(key), expect);
		expect -= 2;
	}
	/* seek >= and <= on absent keys */
	size_t n = mkkey(k, 1001);
	assert_int_equal(mb_cursor_seek(c, k, n), 0);
	mb_cursor_key(c, &key, &kl);
	assert_int_equal(mb_key_get_u32(key), 1002);
	assert_int_equal(mb_cursor_seek_le(c, k, n), 0);
	mb_cursor_key(c, &key, &kl);
	assert_int_equal(mb_key_get_u32(key), 1000);
	/* a range [100, 200) */
	uint8_t lo[4], hi[4];
	mb_key_u32(lo, 100);
	mb_key_u32(hi, 200);
	count = 0;
	for (int r = mb_cursor_range(c, lo, 4, hi, 4); r == 0; r = mb_cursor_next(c))
		count++;
	assert_int_equal(count, 50);
	assert_int_equal(mb_cursor_last(c), 0);
	mb_cursor_key(c, &key, &kl);
	assert_int_equal(mb_key_get_u32(key), 198);
	/* delete every other entry through the cursor while walking */
	assert_int_equal(mb_cursor_range(c, NULL, 0, NULL, 0), 0);
	assert_int_equal(mb_db_begin(db), 0);
	int i = 0, r;
	for (r = 0; r == 0; r = mb_cursor_next(c)) {
		if (i++ % 2 == 0)
			assert_int_equal(mb_cursor_del(c), 0);
	}
	assert_int_equal(r, MB_ENOTFOUND);
	assert_int_equal(mb_db_commit(db), 0);
	count = 0;
	for (r = mb_cursor_first(c); r == 0; r = mb_cursor_next(c)) {
		mb_cursor_key(c, &key, &kl);
		assert_int_equal(mb_key_get_u32(key) % 4, 2);
		count++;
	}
	assert_int_equal(count, 1250);
	check_clean(db);
	/* delete everything: merges down to an empty root */
	assert_int_equal(mb_db_begin(db), 0);
	for (r = mb_cursor_first(c); r == 0; r = mb_cursor_next(c))
		assert_int_equal(mb_cursor_del(c), 0);
	assert_int_equal(mb_db_commit(db), 0);
	assert_int_equal(mb_cursor_first(c), MB_ENOTFOUND);
	check_clean(db);
	uint64_t total, freep;
	mb_db_pages(db, &total, &freep);
	assert_true(freep + 4 >= total); /* header, catalog, root, maybe one more */
	mb_cursor_close(c);
	assert_int_equal(mb_db_close(db), 0);
	assert_int_equal(mb_sg_close(sg), 0);
	dbt_rmrf(dir);
	free(dir);
}

struct names {
	int n;
	char last[80];
	bool sorted;
};

static void name_cb(void *arg, const char *name)
{
	struct names *nm = arg;
	if (nm->n && strcmp(nm->last, name) >= 0)
		nm->sorted = false;
	snprintf(nm->last, sizeof(nm->last), "%s", name);
	nm->n++;
}

static void test_many_trees(void **state)
{
	char *dir = dbt_tmpdir();
	struct mb_sg *sg = open_sg(dir, 8);
	struct mb_db *db;
	assert_int_equal(mb_db_open(sg, "db01.mdb", 8192, MB_DB_CREATE, &db), 0);
	assert_int_equal(mb_db_begin(db), 0);
	for (int i = 0; i < 60; i++) {
		char name[32];
		snprintf(name, sizeof(name), "tree%03d", i);
		struct mb_tree *t;
		assert_int_equal(mb_tree_open(db, name, MB_TREE_CREATE, &t), 0);
		for (uint32_t j = 0; j < 300; j++) {
			uint8_t k[4];
			mb_key_u32(k, j);
			assert_int_equal(mb_tree_put(t, k, 4, name, strlen(name), 0), 0);
		}
		mb_tree_close(t);
	}
	assert_int_equal(mb_db_commit(db), 0);
	struct names nm = {.sorted = true};
	assert_int_equal(mb_tree_list(db, name_cb, &nm), 0);
	assert_int_equal(nm.n, 60);
	assert_true(nm.sorted);
	uint64_t total, f0, f1;
	mb_db_pages(db, &total, &f0);
	assert_int_equal(mb_db_begin(db), 0);
	for (int i = 0; i < 60; i += 2) {
		char name[32];
		snprintf(name, sizeof(name), "tree%03d", i);
		assert_int_equal(mb_tree_drop(db, name), 0);
	}
	assert_int_equal(mb_db_commit(db), 0);
	mb_db_pages(db, &total, &f1);
	assert_true(f1 > f0);
	nm = (struct names){.sorted = true};
	assert_int_equal(mb_tree_list(db, name_cb, &nm), 0);
	assert_int_equal(nm.n, 30);
	struct mb_tree *t;
	assert_int_equal(mb_tree_open(db, "tree001", 0, &t), 0);
	struct mb_val v = MB_VAL_INIT;
	uint8_t k[4];
	mb_key_u32(k, 299);
	assert_int_equal(mb_tree_get(t, k, 4, &v), 0);
	assert_memory_equal(v.data, "tree001", 7);
	mb_val_free(&v);
	check_clean(db);
	assert_int_equal(mb_db_close(db), 0);
	assert_int_equal(mb_sg_close(sg), 0);
	dbt_rmrf(dir);
	free(dir);
}

/* ---------------- random operations against a reference model -------- */

#define NIDS 20000

struct model {
	uint32_t ver[NIDS]; /* 0: absent */
	uint32_t len[NIDS];
};

struct undo {
	uint32_t id, ver, len;
};

static size_t pick_len(uint64_t *rs)
{
	uint64_t r = dbt_rand(rs) % 1000;
	if (r < 700)
		return dbt_rand(rs) % 200;
	if (r < 900)
		return 200 + dbt_rand(rs) % 1800;
	if (r < 995)
		return 2000 + dbt_rand(rs) % 18000;
	return 20000 + dbt_rand(rs) % 80000;
}

static void verify_all(struct mb_tree *t, const struct model *m, uint8_t *buf)
{
	struct mb_cursor *c;
	assert_int_equal(mb_cursor_open(t, &c), 0);
	struct mb_val v = MB_VAL_INIT;
	uint32_t id = 0;
	int r;
	for (r = mb_cursor_first(c); r == 0; r = mb_cursor_next(c)) {
		const void *key;
		size_t kl;
		assert_int_equal(mb_cursor_key(c, &key, &kl), 0);
		uint32_t kid = mb_key_get_u32(key);
		while (id < NIDS && m->ver[id] == 0)
			id++;
		assert_int_equal(kid, id);
		assert_int_equal(mb_cursor_value(c, &v), 0);
		assert_int_equal(v.len, m->len[id]);
		dbt_fill(buf, v.len, id, m->ver[id]);
		assert_memory_equal(v.data, buf, v.len);
		id++;
	}
	assert_int_equal(r, MB_ENOTFOUND);
	while (id < NIDS && m->ver[id] == 0)
		id++;
	assert_int_equal(id, NIDS);
	mb_val_free(&v);
	mb_cursor_close(c);
}

static void run_model(uint32_t page_size, long ops)
{
	char *dir = dbt_tmpdir();
	struct mb_sg *sg = open_sg(dir, 8);
	struct mb_db *db;
	struct mb_tree *t;
	assert_int_equal(mb_db_open(sg, "db01.mdb", page_size, MB_DB_CREATE, &db), 0);
	assert_int_equal(mb_db_begin(db), 0);
	assert_int_equal(mb_tree_open(db, "model", MB_TREE_CREATE, &t), 0);
	assert_int_equal(mb_db_commit(db), 0);
	struct model *m = calloc(1, sizeof(*m));
	struct undo *ul = malloc(sizeof(*ul) * 64);
	uint8_t *buf = malloc(200000);
	struct mb_val v = MB_VAL_INIT;
	uint64_t rs = 12345 + page_size;
	long done = 0;
	bool reopened = false;
	uint32_t verseq = 1;
	while (done < ops) {
		int tx = 1 + (int)(dbt_rand(&rs) % 40), nu = 0;
		assert_int_equal(mb_db_begin(db), 0);
		for (int i = 0; i < tx; i++, done++) {
			uint32_t id = (uint32_t)(dbt_rand(&rs) % NIDS);
			uint8_t k[32];
			size_t kl = mkkey(k, id);
			uint64_t op = dbt_rand(&rs) % 100;
			if (op < 50) {
				size_t len = pick_len(&rs);
				uint32_t ver = verseq++;
				dbt_fill(buf, len, id, ver);
				assert_int_equal(mb_tree_put(t, k, kl, buf, len, 0), 0);
				ul[nu++] = (struct undo){id, m->ver[id], m->len[id]};
				m->ver[id] = ver;
				m->len[id] = (uint32_t)len;
			} else if (op < 80) {
				int r = mb_tree_del(t, k, kl);
				assert_int_equal(r, m->ver[id] ? 0 : MB_ENOTFOUND);
				ul[nu++] = (struct undo){id, m->ver[id], m->len[id]};
				m->ver[id] = 0;
			} else if (op < 95) {
				int r = mb_tree_get(t, k, kl, &v);
				if (!m->ver[id]) {
					assert_int_equal(r, MB_ENOTFOUND);
				} else {
					assert_int_equal(r, 0);
					assert_int_equal(v.len, m->len[id]);
					dbt_fill(buf, v.len, id, m->ver[id]);
					assert_memory_equal(v.data, buf, v.len);
				}
			} else {
				struct mb_cursor *c;
				assert_int_equal(mb_cursor_open(t, &c), 0);
				int r = mb_cursor_seek(c, k, kl);
				uint32_t want = id;
				for (int s = 0; s < 10; s++) {
					while (want < NIDS && !m->ver[want])
						want++;
					if (want >= NIDS) {
						assert_int_equal(r, MB_ENOTFOUND);
						break;
					}
					assert_int_equal(r, 0);
					const void *key;
					size_t kl2;
					mb_cursor_key(c, &key, &kl2);
					assert_int_equal(mb_key_get_u32(key), want);
					want++;
					r = mb_cursor_next(c);
				}
				mb_cursor_close(c);
			}
		}
		if (dbt_rand(&rs) % 100 < 5) {
			assert_int_equal(mb_db_abort(db), 0);
			while (nu--) {
				m->ver[ul[nu].id] = ul[nu].ver;
				m->len[ul[nu].id] = ul[nu].len;
			}
		} else {
			assert_int_equal(mb_db_commit(db), 0);
		}
		if (!reopened && done >= ops / 2) {
			reopened = true;
			verify_all(t, m, buf);
			check_clean(db);
			assert_int_equal(mb_db_close(db), 0);
			assert_int_equal(mb_sg_close(sg), 0);
			sg = open_sg(dir, 8);
			assert_int_equal(mb_db_open(sg, "db01.mdb", 0, 0, &db), 0);
			assert_int_equal(mb_tree_open(db, "model", 0, &t), 0);
			verify_all(t, m, buf);
		}
	}
	verify_all(t, m, buf);
	check_clean(db);
	struct mb_cache_stats cs;
	mb_cache_stats_get(mb_sg_cache(sg), &cs);
	struct mb_sg_stats ss;
	mb_sg_stats_get(sg, &ss);
	printf("# model %u: %ld ops, cache hits %llu misses %llu evictions %llu writes %llu, "
	       "commits %llu log writes %llu checkpoints %llu\n",
	       page_size, ops, (unsigned long long)cs.hits, (unsigned long long)cs.misses,
	       (unsigned long long)cs.evictions, (unsigned long long)cs.writes,
	       (unsigned long long)ss.commits, (unsigned long long)ss.log_writes,
	       (unsigned long long)ss.checkpoints);
	assert_int_equal(mb_db_close(db), 0);
	assert_int_equal(mb_sg_close(sg), 0);
	sg = open_sg(dir, 8);
	assert_int_equal(mb_db_open(sg, "db01.mdb", 0, 0, &db), 0);
	assert_int_equal(mb_tree_open(db, "model", 0, &t), 0);
	verify_all(t, m, buf);
	assert_int_equal(mb_db_close(db), 0);
	assert_int_equal(mb_sg_close(sg), 0);
	mb_val_free(&v);
	free(buf);
	free(ul);
	free(m);
	dbt_rmrf(dir);
	free(dir);
}

static long test_ops(void)
{
	const char *e = getenv("MB_TEST_OPS");
	return e ? atol(e) : 200000;
}

static void test_model_4k(void **state) { run_model(4096, test_ops()); }

static void test_model_32k(void **state) { run_model(32768, test_ops() / 4); }

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_basic),      cmocka_unit_test(test_cursor),
	    cmocka_unit_test(test_many_trees), cmocka_unit_test(test_model_4k),
	    cmocka_unit_test(test_model_32k),  cmocka_unit_test(test_free_list_trunks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
