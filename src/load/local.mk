# src/load/local.mk: sources and tests of this part (included by Makefile.am).
noinst_LIBRARIES += src/load/libmbload.a
src_load_libmbload_a_SOURCES =
