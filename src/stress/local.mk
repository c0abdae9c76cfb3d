# src/stress/local.mk: the storage test (`mailbench storage-test`): sources,
# unit test, integration test and the fio comparison (included by Makefile.am).
noinst_LIBRARIES += src/stress/libmbstress.a
src_stress_libmbstress_a_SOURCES = \
	src/stress/workload.c src/stress/workload.h \
	src/stress/acct.c src/stress/acct.h \
	src/stress/runner.c src/stress/runner.h \
	src/stress/files.c src/stress/files.h \
	src/stress/iomode.c src/stress/iomode.h \
	src/stress/txnmode.c src/stress/txnmode.h src/stress/txnmode_int.h src/stress/txnrec.c src/stress/watchvfs.c src/stress/watchvfs.h

MB_UNIT_TESTS += tests/unit/test_stress tests/unit/test_watchvfs

TESTS += tests/integration/storage_test.sh
EXTRA_DIST += tests/integration/storage_test.sh
