# tests/fuzz/local.mk: the fuzz harnesses (the frame decoder, the IMAP and SMTP
# parsers, the store's operations; libFuzzer, built by tests/fuzz/run.sh with
# clang, not by make) and their seed corpora.
EXTRA_DIST += tests/fuzz/fuzz_frame.c tests/fuzz/run.sh tests/fuzz/corpus \
	tests/fuzz/fuzz_imap.c tests/fuzz/corpus-imap \
	tests/fuzz/fuzz_smtp.c tests/fuzz/corpus-smtp tests/fuzz/fuzz_store.c tests/fuzz/pieces.h
