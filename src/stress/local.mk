# src/stress/local.mk: sources and tests of this part (included by Makefile.am).
noinst_LIBRARIES += src/stress/libmbstress.a
src_stress_libmbstress_a_SOURCES =
