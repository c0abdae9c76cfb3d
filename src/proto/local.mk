# src/proto/local.mk: the wire protocol (codec, LZ77+DIRECT2 framing, logon crypto,
# blocking client) and its unit tests.
noinst_LIBRARIES += src/proto/libmbproto.a
src_proto_libmbproto_a_SOURCES = \
	src/proto/proto.h src/proto/proto.c src/proto/proto_int.h \
	src/proto/lz77.h src/proto/lz77.c \
	src/proto/proto_req.c src/proto/proto_reply.c \
	src/proto/buf.c src/proto/auth.c src/proto/idset.c \
	src/proto/client.h src/proto/client.c

MB_UNIT_TESTS += tests/unit/test_proto
MB_UNIT_TESTS += tests/unit/test_compress
MB_UNIT_TESTS += tests/unit/test_auth
