# scenarios/local.mk: files of scenarios (included by Makefile.am).
