# src/core/local.mk: the shared core (errors, counters, scenario loader,
# histograms, system sampler, stats stream, topology file) and its unit tests.
noinst_LIBRARIES += src/core/libmbcore.a
src_core_libmbcore_a_SOURCES = \
	src/core/error.c src/core/error.h \
	src/core/cli.c src/core/cli.h \
	src/core/counters.c src/core/counters.h \
	src/core/hist.c src/core/hist.h \
	src/core/sampler.c src/core/sampler.h \
	src/core/stats.c src/core/stats.h \
	src/core/scenario.c src/core/scenario.h \
	src/core/topology.c src/core/topology.h \
	src/core/cmd_scenario.c src/core/cmd_counters.c

check_PROGRAMS += tests/unit/test_hist
TESTS += tests/unit/test_hist
tests_unit_test_hist_SOURCES = tests/unit/test_hist.c
tests_unit_test_hist_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_hist_LDADD = $(MBTEST_LIBS)

check_PROGRAMS += tests/unit/test_sampler
TESTS += tests/unit/test_sampler
tests_unit_test_sampler_SOURCES = tests/unit/test_sampler.c
tests_unit_test_sampler_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_sampler_LDADD = $(MBTEST_LIBS)

check_PROGRAMS += tests/unit/test_stats
TESTS += tests/unit/test_stats
tests_unit_test_stats_SOURCES = tests/unit/test_stats.c
tests_unit_test_stats_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_stats_LDADD = $(MBTEST_LIBS)

check_PROGRAMS += tests/unit/test_scenario
TESTS += tests/unit/test_scenario
tests_unit_test_scenario_SOURCES = tests/unit/test_scenario.c
tests_unit_test_scenario_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_scenario_LDADD = $(MBTEST_LIBS)

check_PROGRAMS += tests/unit/test_counters
TESTS += tests/unit/test_counters
tests_unit_test_counters_SOURCES = tests/unit/test_counters.c
tests_unit_test_counters_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_counters_LDADD = $(MBTEST_LIBS)

TESTS += tests/integration/scenario_cli.sh
EXTRA_DIST += tests/integration/scenario_cli.sh
