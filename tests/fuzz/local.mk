# tests/fuzz/local.mk: the frame-decoder, IMAP-parser and SMTP-parser fuzz harnesses (libFuzzer, built by
# tests/fuzz/run.sh with clang, not by make) and its seed corpus.
EXTRA_DIST += tests/fuzz/fuzz_frame.c tests/fuzz/run.sh tests/fuzz/corpus \
	tests/fuzz/fuzz_imap.c tests/fuzz/corpus-imap \
	tests/fuzz/fuzz_smtp.c tests/fuzz/corpus-smtp
