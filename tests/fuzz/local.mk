# tests/fuzz/local.mk: the frame-decoder and IMAP-parser fuzz harnesses (libFuzzer, built by
# tests/fuzz/run.sh with clang, not by make) and its seed corpus.
EXTRA_DIST += tests/fuzz/fuzz_frame.c tests/fuzz/run.sh tests/fuzz/corpus \
	tests/fuzz/fuzz_imap.c tests/fuzz/corpus-imap
