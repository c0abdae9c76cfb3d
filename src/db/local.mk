# src/db/local.mk: the storage engine (I/O shim, cache, log, B+tree,
# recovery, check), its unit tests and benchmark helpers (included by
# Makefile.am).
noinst_LIBRARIES += src/db/libmbdb.a
src_db_libmbdb_a_SOURCES = \
	src/db/io.c src/db/io.h \
	src/db/db.h src/db/dbint.h \
	src/db/cache.c src/db/log.c src/db/db.c src/db/btree.c src/db/check.c

DB_TESTS = tests/unit/test_io tests/unit/test_btree tests/unit/test_crash tests/unit/test_fault tests/unit/test_check \
	tests/unit/test_cache tests/unit/test_log tests/unit/test_recovery
check_PROGRAMS += $(DB_TESTS)
TESTS += $(DB_TESTS)
tests_unit_test_io_SOURCES = tests/unit/test_io.c
tests_unit_test_io_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_io_LDADD = $(MBTEST_LIBS)
tests_unit_test_btree_SOURCES = tests/unit/test_btree.c tests/unit/dbtest.h
tests_unit_test_btree_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_btree_LDADD = $(MBTEST_LIBS)
tests_unit_test_crash_SOURCES = tests/unit/test_crash.c tests/unit/dbtest.h
tests_unit_test_crash_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_crash_LDADD = $(MBTEST_LIBS)
tests_unit_test_fault_SOURCES = tests/unit/test_fault.c tests/unit/dbtest.h
tests_unit_test_fault_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_fault_LDADD = $(MBTEST_LIBS)
tests_unit_test_check_SOURCES = tests/unit/test_check.c tests/unit/dbtest.h
tests_unit_test_check_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_check_LDADD = $(MBTEST_LIBS)

tests_unit_test_cache_SOURCES = tests/unit/test_cache.c tests/unit/dbtest.h
tests_unit_test_cache_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_cache_LDADD = $(MBTEST_LIBS)

tests_unit_test_log_SOURCES = tests/unit/test_log.c tests/unit/dbtest.h
tests_unit_test_log_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_log_LDADD = $(MBTEST_LIBS)
tests_unit_test_recovery_SOURCES = tests/unit/test_recovery.c tests/unit/dbtest.h
tests_unit_test_recovery_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_recovery_LDADD = $(MBTEST_LIBS)

# benchmark helper (bench/db-*.sh); built by `make`, never installed
noinst_PROGRAMS += bench/mb-dbbench
bench_mb_dbbench_SOURCES = bench/mb-dbbench.c
bench_mb_dbbench_LDADD = src/db/libmbdb.a src/core/libmbcore.a $(MB_EXT_LIBS)
EXTRA_DIST += bench/db-read-vs-fio.sh bench/db-commit.sh bench/db-memory.sh \
	tests/integration/check.sh
TESTS += tests/integration/check.sh
