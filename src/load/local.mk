# src/load/local.mk: the load engine (scheduler, simulated users, actions,
# ack log, `mailbench load`) and its tests; also the shared content
# generator, which lives in core (the lowest layer) so that `mailbench init`
# can call it too.
noinst_LIBRARIES += src/load/libmbload.a
src_load_libmbload_a_SOURCES = \
	src/load/sched.c src/load/sched.h \
	src/load/loadstats.c src/load/loadstats.h \
	src/load/replica.c src/load/replica.h \
	src/load/engine.c src/load/engine.h src/load/user.h \
	src/load/user.c src/load/actions.c src/load/cmd_load.c \
	src/load/ackcheck.c src/load/ackcheck.h
src_core_libmbcore_a_SOURCES += src/core/content.c src/core/content.h

check_PROGRAMS += tests/unit/test_content
TESTS += tests/unit/test_content
tests_unit_test_content_SOURCES = tests/unit/test_content.c
tests_unit_test_content_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_content_LDADD = $(MBTEST_LIBS)

check_PROGRAMS += tests/unit/test_sched
TESTS += tests/unit/test_sched
tests_unit_test_sched_SOURCES = tests/unit/test_sched.c
tests_unit_test_sched_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_sched_LDADD = $(MBTEST_LIBS)

check_PROGRAMS += tests/unit/test_loadhist
TESTS += tests/unit/test_loadhist
tests_unit_test_loadhist_SOURCES = tests/unit/test_loadhist.c
tests_unit_test_loadhist_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_loadhist_LDADD = $(MBTEST_LIBS)

check_PROGRAMS += tests/unit/test_replica
TESTS += tests/unit/test_replica
tests_unit_test_replica_SOURCES = tests/unit/test_replica.c
tests_unit_test_replica_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_replica_LDADD = $(MBTEST_LIBS)

TESTS += tests/integration/load_actions.sh tests/integration/crash_ack.sh
EXTRA_DIST += tests/integration/load_actions.sh tests/integration/crash_ack.sh \
	tests/integration/load_lib.sh bench/load-density.sh
