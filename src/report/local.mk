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
	src/report/stortable.c src/report/stortable.h \
	src/report/cmd_storage_test.c src/report/sttest_out.c src/report/sttest_int.h \
	src/report/compare.c src/report/compare.h \
	src/report/acttable.c src/report/acttable.h \
	src/report/norm.c src/report/norm.h \
	src/report/session.c src/report/session.h src/report/session_int.h \
	src/report/session_config.c src/report/session_children.c \
	src/report/session_measure.c src/report/session_lab.c src/report/session_summary.c \
	src/report/faults.c src/report/faults.h \
	src/report/runopts.c src/report/runopts.h \
	src/report/timeline.c src/report/timeline.h \
	src/report/runcmp.c src/report/runcmp.h \
	src/report/html.c src/report/html.h src/report/html_int.h \
	src/report/htmlout.c src/report/htmlsec.c \
	src/report/capacity.c src/report/capacity.h \
	src/report/cmd_report.c \
	src/report/cmd_capacity.c \
	src/report/cmd_run.c \
	src/report/loadhosts.c src/report/loadhosts.h

MB_UNIT_TESTS += tests/unit/test_table tests/unit/test_report tests/unit/test_supervisor \
	tests/unit/test_runcmp

TESTS += tests/integration/run_headless.sh tests/integration/run_repeat.sh \
	tests/integration/report_html.sh tests/integration/run_faults.sh tests/integration/run_disk.sh \
	tests/integration/run_store_target.sh tests/integration/capacity_confirm.sh
EXTRA_DIST += tests/integration/run_headless.sh tests/integration/run_repeat.sh \
	tests/integration/report_html.sh tests/integration/run_faults.sh tests/integration/run_disk.sh \
	tests/integration/run_store_target.sh tests/integration/capacity_confirm.sh
# the report test keeps its outputs in the build directory for inspection
CLEANFILES += tests/artefacts/report.pdf tests/artefacts/report.html tests/artefacts/report.png

MB_UNIT_TESTS += tests/unit/test_loadhosts

# a real server's counters from /proc (the lab's Dovecot + Postfix, --server-pids, --server-cgroup)
src_report_libmbreport_a_SOURCES += src/report/srvmon.c src/report/srvmon.h
MB_UNIT_TESTS += tests/unit/test_srvmon
TESTS += tests/integration/run_lab.sh tests/integration/console_lab_tmux.sh \
	tests/integration/run_lab_tls.sh tests/integration/run_external.sh
EXTRA_DIST += tests/integration/run_lab.sh tests/integration/console_lab_tmux.sh \
	tests/integration/run_lab_tls.sh tests/integration/run_external.sh
