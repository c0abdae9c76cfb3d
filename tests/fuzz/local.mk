# tests/fuzz/local.mk: the frame-decoder fuzz harness (libFuzzer, built by
# tests/fuzz/run.sh with clang, not by make) and its seed corpus.
EXTRA_DIST += tests/fuzz/fuzz_frame.c tests/fuzz/run.sh tests/fuzz/corpus
