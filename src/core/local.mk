# src/core/local.mk: the shared core (errors, counters, option-table engine, scenario loader,
# histograms, system sampler, clock, the end of signal handling, random numbers, thresholds,
# mailbox profile, content generator, stats stream, topology file, progress line, the table
# model every output prints through) and its unit tests.
noinst_LIBRARIES += src/core/libmbcore.a
src_core_libmbcore_a_SOURCES = \
	src/core/error.c src/core/error.h \
	src/core/tls.c src/core/tls.h \
	src/core/opt.c src/core/optout.c src/core/optcmd.c src/core/opt.h src/core/opt_int.h \
	src/core/options.h \
	src/core/counters.c src/core/counters.h \
	src/core/hist.c src/core/hist.h \
	src/core/score.c src/core/score.h \
	src/core/mix.c src/core/mix.h \
	src/core/sampler.c src/core/sampler.h \
	src/core/clock.c src/core/clock.h \
	src/core/sig.c src/core/sig.h \
	src/core/rng.c src/core/rng.h \
	src/core/threshold.c src/core/threshold.h \
	src/core/mailbox.c src/core/mailbox.h \
	src/core/content.c src/core/content.h \
	src/core/stats.c src/core/stats.h \
	src/core/scenario.c src/core/scenario.h \
	src/core/topology.c src/core/topology.h \
	src/core/progress.c src/core/progress.h \
	src/core/table.c src/core/table.h \
	src/core/cmd_scenario.c src/core/cmd_counters.c

MB_UNIT_TESTS += tests/unit/test_hist
MB_UNIT_TESTS += tests/unit/test_content
MB_UNIT_TESTS += tests/unit/test_rng
MB_UNIT_TESTS += tests/unit/test_tls
MB_UNIT_TESTS += tests/unit/test_score
MB_UNIT_TESTS += tests/unit/test_mix
MB_UNIT_TESTS += tests/unit/test_sampler
MB_UNIT_TESTS += tests/unit/test_stats
MB_UNIT_TESTS += tests/unit/test_scenario
MB_UNIT_TESTS += tests/unit/test_counters
MB_UNIT_TESTS += tests/unit/test_progress
MB_UNIT_TESTS += tests/unit/test_topology

TESTS += tests/integration/scenario_cli.sh
EXTRA_DIST += tests/integration/scenario_cli.sh

TESTS += tests/integration/opt_ranges.sh
EXTRA_DIST += tests/integration/opt_ranges.sh
