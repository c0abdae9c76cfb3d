# src/report/local.mk: sources and tests of this part (included by Makefile.am).
noinst_LIBRARIES += src/report/libmbreport.a
src_report_libmbreport_a_SOURCES =
