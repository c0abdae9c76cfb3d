# src/store/local.mk: the mailbox store (schema over the storage engine,
# operations, delivery, server, `mailbench init` and `mailbench store`),
# its unit tests, the integration test and its client tool.
noinst_LIBRARIES += src/store/libmbstore.a
src_store_libmbstore_a_SOURCES = \
	src/store/schema.h src/store/schema_int.h src/store/schema.c src/store/schema_msg.c \
	src/store/schema_scan.c \
	src/store/store.h src/store/store_int.h \
	src/store/ops.c src/store/ops_int.h src/store/handles.c src/store/opcommon.c \
	src/store/op_submit.c src/store/op_calendar.c src/store/op_sync.c \
	src/store/op_attach.c src/store/op_book.c src/store/reserve.c \
	src/store/server.c src/store/loop.h \
	src/store/net.c src/store/net.h src/store/queue.c \
	src/store/workers.c src/store/workers.h src/store/groups.c src/store/groups.h \
	src/store/stats.c src/store/stats.h src/store/control.c src/store/control.h \
	src/store/scale.c src/store/probe.c \
	src/store/init.c src/store/init_int.h src/store/init_fill.c src/store/init_topo.c \
	src/store/cmd_store.c \
	src/store/ackcheck.c src/store/ackcheck.h \
	src/store/pristine.c src/store/pristine.h \
	src/store/addrprops.c src/store/addrprops.h

# a command-line client of the store for the integration tests
noinst_PROGRAMS += tests/integration/mb-client
tests_integration_mb_client_SOURCES = tests/integration/mb-client.c tests/opbatch.h
tests_integration_mb_client_LDADD = $(MB_LIBS) $(MB_EXT_LIBS)

TESTS += tests/integration/store_basic.sh tests/integration/init_bulk.sh
EXTRA_DIST += tests/integration/store_basic.sh tests/integration/init_bulk.sh
TESTS += tests/integration/store_limits.sh tests/integration/log_dir.sh
EXTRA_DIST += tests/integration/store_limits.sh tests/integration/log_dir.sh

MB_UNIT_TESTS += tests/unit/test_delivery
MB_UNIT_TESTS += tests/unit/test_attach
MB_UNIT_TESTS += tests/unit/test_paging
MB_UNIT_TESTS += tests/unit/test_acl
MB_UNIT_TESTS += tests/unit/test_sync
MB_UNIT_TESTS += tests/unit/test_schema
MB_UNIT_TESTS += tests/unit/test_addrprops

MB_UNIT_TESTS += tests/unit/test_server
MB_UNIT_TESTS += tests/unit/test_held
MB_UNIT_TESTS += tests/unit/test_reserve
MB_UNIT_TESTS += tests/unit/test_replies
# headers shared by this part's unit tests
EXTRA_DIST += tests/unit/burn.h tests/unit/storetest.h tests/opbatch.h
