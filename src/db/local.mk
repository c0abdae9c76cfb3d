# src/db/local.mk: sources and tests of this part (included by Makefile.am).
noinst_LIBRARIES += src/db/libmbdb.a
src_db_libmbdb_a_SOURCES =
