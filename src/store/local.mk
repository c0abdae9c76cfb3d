# src/store/local.mk: sources and tests of this part (included by Makefile.am).
noinst_LIBRARIES += src/store/libmbstore.a
src_store_libmbstore_a_SOURCES =
