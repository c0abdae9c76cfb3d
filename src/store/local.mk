# src/store/local.mk: the mailbox store (schema over the storage engine,
# server, delivery, `mailbench init` and `mailbench store`) and its tests.
noinst_LIBRARIES += src/store/libmbstore.a
src_store_libmbstore_a_SOURCES = \
	src/store/schema.h src/store/schema.c
