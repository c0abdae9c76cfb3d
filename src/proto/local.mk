# src/proto/local.mk: the wire protocol (codec, LZ4 framing, logon crypto,
# blocking client) and its unit tests.
noinst_LIBRARIES += src/proto/libmbproto.a
src_proto_libmbproto_a_SOURCES = \
	src/proto/proto.h src/proto/proto.c \
	src/proto/buf.c src/proto/auth.c \
	src/proto/client.h src/proto/client.c

check_PROGRAMS += tests/unit/test_proto
TESTS += tests/unit/test_proto
tests_unit_test_proto_SOURCES = tests/unit/test_proto.c
tests_unit_test_proto_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_proto_LDADD = $(MBTEST_LIBS)

check_PROGRAMS += tests/unit/test_compress
TESTS += tests/unit/test_compress
tests_unit_test_compress_SOURCES = tests/unit/test_compress.c
tests_unit_test_compress_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_compress_LDADD = $(MBTEST_LIBS)

check_PROGRAMS += tests/unit/test_auth
TESTS += tests/unit/test_auth
tests_unit_test_auth_SOURCES = tests/unit/test_auth.c
tests_unit_test_auth_CFLAGS = $(MBTEST_CFLAGS)
tests_unit_test_auth_LDADD = $(MBTEST_LIBS)

# the byte-for-byte protocol specification
EXTRA_DIST += docs/PROTOCOL.md
