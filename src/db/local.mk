# src/db/local.mk: the storage engine (I/O shim, cache, log, pager,
# transactions, recovery, groups, B+tree, check) and its tests (included by
# Makefile.am; its benchmarks are in bench/local.mk).
noinst_LIBRARIES += src/db/libmbdb.a
src_db_libmbdb_a_SOURCES = \
	src/db/io.c src/db/io.h \
	src/db/db.h src/db/dbint.h \
	src/db/cache.c src/db/cache_int.h src/db/writeback.c src/db/page.c src/db/log.c \
	src/db/pager.c src/db/pager.h src/db/txn.c src/db/recover.c src/db/recover.h \
	src/db/group.c src/db/group.h \
	src/db/btree_int.h src/db/btnode.c src/db/btree.c src/db/btcursor.c src/db/check.c \
	src/db/bulk.h src/db/bulk.c

MB_UNIT_TESTS += tests/unit/test_io tests/unit/test_btree tests/unit/test_crash tests/unit/test_fault \
	tests/unit/test_check tests/unit/test_cache tests/unit/test_log tests/unit/test_recovery \
	tests/unit/test_bulk

EXTRA_DIST += tests/integration/check.sh
TESTS += tests/integration/check.sh
# headers shared by this part's unit tests
EXTRA_DIST += tests/unit/dbtest.h
