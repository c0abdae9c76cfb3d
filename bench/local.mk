# bench/local.mk: files of bench (included by Makefile.am).
