/* test_check.c: the integrity check finds what it must: a clean data
 * directory passes (two storage groups, several databases, long values,
 * free pages); a flipped byte is reported as a checksum failure naming the
 * file and page; keys out of order (with a valid checksum) are reported
 * naming the tree and page; a wrong free-page count and a leaked page are
 * reported; a page read through the engine with a bad checksum gives
 * MB_ECORRUPT, never data; a database of an earlier format is refused
 * by name. */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "core/error.h"
#include "db/db.h"
#include "db/dbint.h"
#include "dbtest.h"

#define PS 4096

/* The storage group in dir, with a 4 MiB cache (made when create). */
static struct mb_sg *open_group(const char *dir, bool create)
{
	struct mb_sg_options o;
	mb_sg_options_init(&o);
	o.dir = dir;
	o.create = create;
	o.cache_mb = 4;
	struct mb_sg *sg;
	assert_int_equal(mb_sg_open(&o, &sg), 0);
	return sg;
}

static void make_group(const char *dir, int ndb)
{
	struct mb_sg *sg = open_group(dir, true);
	for (int d = 0; d < ndb; d++) {
		char name[32];
		snprintf(name, sizeof(name), "db%02d.mdb", d + 1);
		struct mb_db *db;
		struct mb_tree *t, *u;
		assert_int_equal(mb_db_open(sg, name, PS, MB_DB_CREATE, &db), 0);
		assert_int_equal(mb_db_begin(db), 0);
		assert_int_equal(mb_tree_open(db, "t", MB_TREE_CREATE, &t), 0);
		assert_int_equal(mb_tree_open(db, "u", MB_TREE_CREATE, &u), 0);
		uint8_t v[9000];
		for (uint32_t i = 0; i < 2000; i++) {
			uint8_t k[4];
			mb_key_u32(k, i);
			size_t len = i % 100 == 0 ? sizeof(v) : 50;
			dbt_fill(v, len, i, 0);
			assert_int_equal(mb_tree_put(t, k, 4, v, len, 0), 0);
			if (i % 4 == 0)
				assert_int_equal(mb_tree_put(u, k, 4, v, 10, 0), 0);
		}
		for (uint32_t i = 0; i < 2000; i += 3) {
			uint8_t k[4];
			mb_key_u32(k, i);
			assert_int_equal(mb_tree_del(t, k, 4), 0);
		}
		assert_int_equal(mb_db_commit(db), 0);
		assert_int_equal(mb_db_close(db), 0);
	}
	assert_int_equal(mb_sg_close(sg), 0);
}

static int check(const char *dir, struct mb_check_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	return mb_db_check_dir(dir, NULL, 4, NULL, NULL, rep);
}

/* find a leaf page of the given tree root's subtree that has >= 2 keys */
static uint32_t find_leaf(const char *path)
{
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	uint8_t p[PS];
	for (uint32_t pg = 2;; pg++) {
		assert_int_equal(pread(fd, p, PS, (off_t)pg * PS), PS);
		if (p[PG_OFF_TYPE] == PT_LEAF && rd16(p + PG_OFF_NKEYS) >= 2 &&
		    rd16(p + PG_OFF_NKEYS) < 100) {
			close(fd);
			return pg;
		}
	}
}

static void rw_page(const char *path, uint32_t pg, uint8_t *p, bool write)
{
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	if (write)
		assert_int_equal(pwrite(fd, p, PS, (off_t)pg * PS), PS);
	else
		assert_int_equal(pread(fd, p, PS, (off_t)pg * PS), PS);
	fsync(fd);
	close(fd);
}

static void test_clean_and_corrupt(void **state)
{
	char *data = dbt_tmpdir();
	char g1[4200], g2[4200], path[4300];
	snprintf(g1, sizeof(g1), "%s/sg1", data);
	snprintf(g2, sizeof(g2), "%s/sg2", data);
	make_group(g1, 2);
	make_group(g2, 1);
	struct mb_check_report rep;
	assert_int_equal(check(data, &rep), 0);
	assert_int_equal(rep.groups, 2);
	assert_int_equal(rep.databases, 3);
	assert_int_equal(rep.trees, 3 * 3); /* catalog + t + u */
	assert_true(rep.free_pages > 0);
	assert_int_equal(rep.long_values, 3 * 20 - 3 * 7); /* every 100th, minus deleted */
	assert_int_equal(rep.problems, 0);
	/* one group on its own */
	assert_int_equal(check(g2, &rep), 0);
	assert_int_equal(rep.databases, 1);

	/* keys out of order, checksum valid */
	snprintf(path, sizeof(path), "%s/db02.mdb", g1);
	uint32_t pg = find_leaf(path);
	uint8_t p[PS];
	rw_page(path, pg, p, false);
	uint16_t s0 = rd16(p + PG_HDR), s1 = rd16(p + PG_HDR + 2);
	wr16(p + PG_HDR, s1);
	wr16(p + PG_HDR + 2, s0);
	mb_page_seal(p, PS);
	rw_page(path, pg, p, true);
	assert_int_equal(check(data, &rep), MB_ECORRUPT);
	char want[64];
	snprintf(want, sizeof(want), "page %u", pg);
	assert_non_null(strstr(rep.first_problem, want));
	assert_non_null(strstr(rep.first_problem, "tree '"));
	assert_non_null(strstr(rep.first_problem, "db02.mdb"));
	/* restore, then flip one byte: checksum failure */
	wr16(p + PG_HDR, s0);
	wr16(p + PG_HDR + 2, s1);
	mb_page_seal(p, PS);
	p[PS - 7] ^= 0x40;
	rw_page(path, pg, p, true);
	assert_int_equal(check(data, &rep), MB_ECORRUPT);
	assert_non_null(strstr(rep.first_problem, want));
	assert_non_null(strstr(rep.first_problem, "checksum"));
	/* the engine refuses to return the page as data */
	{
		struct mb_sg_options o;
		mb_sg_options_init(&o);
		o.dir = g1;
		struct mb_sg *sg;
		struct mb_db *db;
		struct mb_tree *t, *u;
		assert_int_equal(mb_sg_open(&o, &sg), 0);
		assert_int_equal(mb_db_open(sg, "db02.mdb", 0, 0, &db), 0);
		assert_int_equal(mb_tree_open(db, "t", 0, &t), 0);
		assert_int_equal(mb_tree_open(db, "u", 0, &u), 0);
		struct mb_cursor *c1, *c2;
		mb_cursor_open(t, &c1);
		mb_cursor_open(u, &c2);
		int r1 = mb_cursor_first(c1), r2 = mb_cursor_first(c2);
		while (r1 == 0)
			r1 = mb_cursor_next(c1);
		while (r2 == 0)
			r2 = mb_cursor_next(c2);
		assert_true(r1 == MB_ECORRUPT || r2 == MB_ECORRUPT);
		assert_non_null(strstr(mb_db_errmsg(db), want));
		mb_db_close(db);
		mb_sg_close(sg);
	}
	p[PS - 7] ^= 0x40;
	rw_page(path, pg, p, true);
	assert_int_equal(check(data, &rep), 0);

	/* free-space accounting: header says one free page more */
	snprintf(path, sizeof(path), "%s/db01.mdb", g2);
	rw_page(path, 0, p, false);
	wr32(p + HP_OFF_FREECOUNT, rd32(p + HP_OFF_FREECOUNT) + 1);
	mb_page_seal(p, PS);
	rw_page(path, 0, p, true);
	assert_int_equal(check(data, &rep), MB_ECORRUPT);
	assert_non_null(strstr(rep.first_problem, "free list"));
	wr32(p + HP_OFF_FREECOUNT, rd32(p + HP_OFF_FREECOUNT) - 1);
	/* a leaked page: the file claims one page more than is used */
	wr32(p + HP_OFF_PAGECOUNT, rd32(p + HP_OFF_PAGECOUNT) + 1);
	mb_page_seal(p, PS);
	rw_page(path, 0, p, true);
	uint8_t z[PS];
	memset(z, 0, PS);
	wr32(z + PG_OFF_PGNO, rd32(p + HP_OFF_PAGECOUNT) - 1);
	mb_page_seal(z, PS);
	rw_page(path, rd32(p + HP_OFF_PAGECOUNT) - 1, z, true);
	assert_int_equal(check(data, &rep), MB_ECORRUPT);
	assert_non_null(strstr(rep.first_problem, "neither in a tree nor free"));

	/* a directory without groups, and a missing one */
	assert_int_equal(check("/nonexistent-mailbench", &rep), MB_ENOTFOUND);
	dbt_rmrf(data);
	free(data);
}

/* A database of the earlier format (1: the store's rows held UTF-8
 * strings) is refused at open with a message naming the file and the
 * format (MB_EUNSUPPORTED), as is one of a later format; a header that is
 * not mailbench's at all is MB_ECORRUPT, "not a mailbench database". */
static void test_earlier_format(void **state)
{
	(void)state;
	char *data = dbt_tmpdir();
	char g[4200], path[4300];
	snprintf(g, sizeof(g), "%s/sg1", data);
	make_group(g, 1);
	snprintf(path, sizeof(path), "%s/db01.mdb", g);
	static const struct {
		const char *magic;
		int rc;
		const char *says;
	} cases[] = {
	    {HP_MAGIC_V1, MB_EUNSUPPORTED, "written by an earlier mailbench (database format 1)"},
	    {"NOTMBDB!", MB_ECORRUPT, "not a mailbench database"},
	    {"MBDB0004", MB_EUNSUPPORTED, "written by a later mailbench (database format 0004)"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t p[PS];
		rw_page(path, 0, p, false);
		memcpy(p + HP_OFF_MAGIC, cases[i].magic, 8);
		rw_page(path, 0, p, true);
		struct mb_sg *sg = open_group(g, false);
		struct mb_db *db = NULL;
		char why[512];
		assert_int_equal(mb_db_open(sg, "db01.mdb", 0, 0, &db), cases[i].rc);
		assert_null(db);
		mb_db_open_errmsg(cases[i].rc, why, sizeof(why));
		assert_non_null(strstr(why, cases[i].says));
		assert_non_null(strstr(why, path));
		assert_int_equal(mb_sg_close(sg), 0);
	}
	dbt_rmrf(data);
	free(data);
}

/* A database of format 2 (free-list trunks that list nothing) opens as
 * it is; the first transaction whose freed pages a trunk lists makes it
 * format 3 (an engine that knows only format 2 would misread its free
 * list), and it checks clean. */
static void test_format_2_becomes_3(void **state)
{
	(void)state;
	char *data = dbt_tmpdir();
	char g[4200], path[4300];
	snprintf(g, sizeof(g), "%s/sg1", data);
	snprintf(path, sizeof(path), "%s/db01.mdb", g);
	struct mb_db *db;
	struct mb_tree *t;
	uint8_t v[40000];
	dbt_fill(v, sizeof(v), 5, 0);
	struct mb_sg *sg = open_group(g, true);
	assert_int_equal(mb_db_open(sg, "db01.mdb", PS, MB_DB_CREATE, &db), 0);
	assert_int_equal(mb_db_begin(db), 0);
	assert_int_equal(mb_tree_open(db, "t", MB_TREE_CREATE, &t), 0);
	assert_int_equal(mb_tree_put(t, "big", 3, v, sizeof(v), 0), 0);
	assert_int_equal(mb_db_commit(db), 0);
	assert_int_equal(mb_db_close(db), 0);
	assert_int_equal(mb_sg_close(sg), 0);
	uint8_t p[PS];
	rw_page(path, 0, p, false);
	assert_memory_equal(p + HP_OFF_MAGIC, HP_MAGIC, 8);
	assert_int_equal(rd32(p + HP_OFF_FREEHEAD), 0);
	memcpy(p + HP_OFF_MAGIC, HP_MAGIC_V2, 8);
	mb_page_seal(p, PS);
	rw_page(path, 0, p, true);

	sg = open_group(g, false);
	assert_int_equal(mb_db_open(sg, "db01.mdb", 0, 0, &db), 0);
	assert_int_equal(mb_tree_open(db, "t", 0, &t), 0);
	assert_int_equal(mb_db_begin(db), 0);
	assert_int_equal(mb_tree_del(t, "big", 3), 0);
	assert_int_equal(mb_db_commit(db), 0);
	assert_int_equal(mb_db_close(db), 0);
	assert_int_equal(mb_sg_close(sg), 0);
	rw_page(path, 0, p, false);
	assert_memory_equal(p + HP_OFF_MAGIC, HP_MAGIC, 8);
	assert_true(rd32(p + HP_OFF_FREECOUNT) >= sizeof(v) / PS);
	struct mb_check_report rep;
	assert_int_equal(check(data, &rep), 0);
	dbt_rmrf(data);
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_clean_and_corrupt),
	    cmocka_unit_test(test_earlier_format),
	    cmocka_unit_test(test_format_2_becomes_3),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
