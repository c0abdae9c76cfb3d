# tests/fuzz/local.mk: files of tests/fuzz (included by Makefile.am).
