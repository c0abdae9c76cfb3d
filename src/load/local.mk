# src/load/local.mk: the load engine (scheduler, simulated users, the
# behaviour model, the target interface and its drivers, `mailbench load`)
# and its tests (its benchmarks: bench/local.mk).
noinst_LIBRARIES += src/load/libmbload.a
src_load_libmbload_a_SOURCES = \
	src/load/sched.c src/load/sched.h \
	src/load/loadstats.c src/load/loadstats.h \
	src/load/replica.c src/load/replica.h \
	src/load/engine.c src/load/engine.h src/load/user.h \
	src/load/target.h src/load/target.c \
	src/load/behave.c src/load/behave.h \
	src/load/drivers/mbstore.c src/load/drivers/mbstore_int.h \
	src/load/drivers/mbstore_req.c src/load/drivers/mbstore_session.c \
	src/load/drivers/mbstore_view.c src/load/drivers/mbstore_write.c src/load/drivers/null.c \
	src/load/drivers/reqbuild.c src/load/drivers/reqbuild.h \
	src/load/user.c src/load/conn.c src/load/usersvc.c src/load/cmd_load.c src/load/loadout.c src/load/loadrun_int.h \
	src/load/dist.c src/load/dist.h \
	src/load/distload.c src/load/distload.h
MB_UNIT_TESTS += tests/unit/test_sched
MB_UNIT_TESTS += tests/unit/test_loadhist
MB_UNIT_TESTS += tests/unit/test_replica

TESTS += tests/integration/load_actions.sh tests/integration/crash_ack.sh \
	tests/integration/load_density.sh tests/integration/load_fdsplit.sh
EXTRA_DIST += tests/integration/load_actions.sh tests/integration/crash_ack.sh \
	tests/integration/load_density.sh tests/integration/load_fdsplit.sh \
	tests/integration/load_lib.sh

MB_UNIT_TESTS += tests/unit/test_engine
MB_UNIT_TESTS += tests/unit/test_sequences
tests_unit_test_sequences_SOURCES = tests/unit/test_sequences.c tests/unit/storetest.h
MB_UNIT_TESTS += tests/unit/test_behave

# IMAP and SMTP protocol modules (pure parsers and encoders) of the IMAP and
# SMTP targets, and their tests.
src_load_libmbload_a_SOURCES += \
	src/load/crlf.c src/load/crlf.h \
	src/load/imapparse.c src/load/imapparse.h \
	src/load/smtpparse.c src/load/smtpparse.h \
	src/load/mailmsg.c src/load/mailmsg.h

MB_UNIT_TESTS += tests/unit/test_imapparse tests/unit/test_smtpparse
MB_UNIT_TESTS += tests/unit/test_crlf

# The IMAP + SMTP target (a driver of the target interface).
src_load_libmbload_a_SOURCES += src/load/drivers/imap.c src/load/drivers/imap_int.h \
	src/load/drivers/imap_script.c src/load/drivers/imap_smtp.c src/load/drivers/imap_cmd.c

# The distributed load engine's pure parts (slices, flat window layout).
MB_UNIT_TESTS += tests/unit/test_dist

# The Open MPI load engine: its own archive, linked only by the program and
# test_mpi (run under mpirun by tests/integration/mpi_hist.sh, not by
# check-valgrind: Open MPI's start-up is not memcheck-clean).
EXTRA_DIST += src/load/mpi.c src/load/mpi.h tests/unit/test_mpi.c \
	tests/integration/mpi_hist.sh tests/integration/mpi_load.sh \
	tests/integration/mpi_lib.sh tests/lsan-mpi.supp
TESTS += tests/integration/mpi_hist.sh tests/integration/mpi_load.sh
if HAVE_MPI
noinst_LIBRARIES += src/load/libmbmpi.a
src_load_libmbmpi_a_SOURCES = src/load/mpi.c src/load/mpi.h
src_load_libmbmpi_a_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
MB_MPI_LIBS = src/load/libmbmpi.a
MB_MPI_EXT_LIBS = $(MPI_LIBS)
# built by make check, run only under mpirun (mpi_hist.sh): not a TESTS entry
check_PROGRAMS += tests/unit/test_mpi
tests_unit_test_mpi_CFLAGS = $(MBTEST_CFLAGS) $(MPI_CFLAGS)
tests_unit_test_mpi_LDADD = src/load/libmbmpi.a $(MBTEST_LIBS) $(MPI_LIBS)
else
MB_MPI_LIBS =
MB_MPI_EXT_LIBS =
endif

# the mbstore driver's request builder (overflow is an error, never a reuse)
MB_UNIT_TESTS += tests/unit/test_reqbuild
