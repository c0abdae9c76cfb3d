# src/store/local.mk: the mailbox store (schema over the storage engine,
# operations, delivery, server, `mailbench init` and `mailbench store`),
# its unit tests, the integration test and its client tool.
noinst_LIBRARIES += src/store/libmbstore.a
src_store_libmbstore_a_SOURCES = \
	src/store/schema.h src/store/schema.c \
	src/store/store.h src/store/store_int.h \
	src/store/ops.c src/store/server.c \
	src/store/init.c src/store/cmd_store.c

# a command-line client of the store for the integration tests
noinst_PROGRAMS += tests/integration/mb-client
tests_integration_mb_client_SOURCES = tests/integration/mb-client.c tests/opbatch.h
tests_integration_mb_client_LDADD = $(MB_LIBS) $(MB_EXT_LIBS)

TESTS += tests/integration/store_basic.sh
EXTRA_DIST += tests/integration/store_basic.sh

check_PROGRAMS += tests/unit/test_delivery
TESTS += tests/unit/test_delivery
tests_unit_test_delivery_SOURCES = tests/unit/test_delivery.c tests/unit/storetest.h \
	tests/opbatch.h
tests_unit_test_delivery_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_delivery_LDADD = $(MBTEST_LIBS)

check_PROGRAMS += tests/unit/test_acl
TESTS += tests/unit/test_acl
tests_unit_test_acl_SOURCES = tests/unit/test_acl.c tests/unit/storetest.h
tests_unit_test_acl_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_acl_LDADD = $(MBTEST_LIBS)

check_PROGRAMS += tests/unit/test_schema
TESTS += tests/unit/test_schema
tests_unit_test_schema_SOURCES = tests/unit/test_schema.c
tests_unit_test_schema_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_schema_LDADD = $(MBTEST_LIBS)

# load driver of bench/store-ops.sh (not run by make check)
noinst_PROGRAMS += bench/mb-storebench
bench_mb_storebench_SOURCES = bench/mb-storebench.c tests/opbatch.h
bench_mb_storebench_LDADD = $(MB_LIBS) $(MB_EXT_LIBS)
EXTRA_DIST += bench/store-ops.sh

check_PROGRAMS += tests/unit/test_server
TESTS += tests/unit/test_server
tests_unit_test_server_SOURCES = tests/unit/test_server.c tests/unit/storetest.h
tests_unit_test_server_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_server_LDADD = $(MBTEST_LIBS)
