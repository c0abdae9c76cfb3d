# src/proto/local.mk: sources and tests of this part (included by Makefile.am).
noinst_LIBRARIES += src/proto/libmbproto.a
src_proto_libmbproto_a_SOURCES =
