# src/db/local.mk: the storage engine (I/O shim, cache, log, B+tree,
# recovery, check), its unit tests and benchmark helpers (included by
# Makefile.am).
noinst_LIBRARIES += src/db/libmbdb.a
src_db_libmbdb_a_SOURCES = \
	src/db/io.c src/db/io.h \
	src/db/db.h src/db/dbint.h \
	src/db/cache.c src/db/log.c src/db/db.c src/db/btree.c

DB_TESTS = tests/unit/test_io tests/unit/test_btree
check_PROGRAMS += $(DB_TESTS)
TESTS += $(DB_TESTS)
tests_unit_test_io_SOURCES = tests/unit/test_io.c
tests_unit_test_io_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_io_LDADD = $(MBTEST_LIBS)
tests_unit_test_btree_SOURCES = tests/unit/test_btree.c tests/unit/dbtest.h
tests_unit_test_btree_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_btree_LDADD = $(MBTEST_LIBS)
