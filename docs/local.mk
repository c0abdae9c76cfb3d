# docs/local.mk: files of docs (included by Makefile.am).
