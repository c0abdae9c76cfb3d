# src/report/local.mk: the report part: the supervisor of child processes,
# the session (scenario, children, 1 Hz sampling), time series, thresholds,
# the comparison table shared by the console and `mailbench run`, JSON/CSV
# writers and saved runs; and the `mailbench run` command.
noinst_LIBRARIES += src/report/libmbreport.a
src_report_libmbreport_a_SOURCES = \
	src/report/supervisor.c src/report/supervisor.h \
	src/report/series.c src/report/series.h \
	src/report/thresholds.c src/report/thresholds.h \
	src/report/report.c src/report/report.h \
	src/report/table.c src/report/table.h \
	src/report/compare.c src/report/compare.h \
	src/report/session.c src/report/session.h \
	src/report/runopts.c src/report/runopts.h \
	src/report/cmd_run.c

check_PROGRAMS += tests/unit/test_table tests/unit/test_report tests/unit/test_supervisor
TESTS += tests/unit/test_table tests/unit/test_report tests/unit/test_supervisor
tests_unit_test_table_SOURCES = tests/unit/test_table.c
tests_unit_test_table_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_table_LDADD = $(MBTEST_LIBS)
tests_unit_test_report_SOURCES = tests/unit/test_report.c
tests_unit_test_report_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_report_LDADD = $(MBTEST_LIBS)
tests_unit_test_supervisor_SOURCES = tests/unit/test_supervisor.c
tests_unit_test_supervisor_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_supervisor_LDADD = $(MBTEST_LIBS)

TESTS += tests/integration/run_headless.sh
EXTRA_DIST += tests/integration/run_headless.sh bench/console-cpu.sh docs/run-json.md
