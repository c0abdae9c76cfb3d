# src/core/local.mk: the shared core (errors, counters, scenario loader,
# histograms, system sampler, stats stream) and its unit tests.
noinst_LIBRARIES += src/core/libmbcore.a
src_core_libmbcore_a_SOURCES = \
	src/core/error.c src/core/error.h \
	src/core/counters.c src/core/counters.h
