# bench/local.mk: the benchmarks (scripts run by hand, not by make check)
# and their two helper programs, built by `make`, never installed.
EXTRA_DIST += bench/targets.sh

# the storage engine (bench/db-*.sh)
noinst_PROGRAMS += bench/mb-dbbench
bench_mb_dbbench_SOURCES = bench/mb-dbbench.c
bench_mb_dbbench_LDADD = src/db/libmbdb.a src/core/libmbcore.a $(MB_EXT_LIBS)
EXTRA_DIST += bench/db-read-vs-fio.sh bench/db-commit.sh bench/db-memory.sh

# the store: operations, memory, initialisation, and its side of
# bench/dovecot-vs-store.sh (mb-peerbench)
noinst_PROGRAMS += bench/mb-peerbench
bench_mb_peerbench_SOURCES = bench/mb-peerbench.c tests/opbatch.h
bench_mb_peerbench_LDADD = $(MB_LIBS) $(MB_EXT_LIBS)
EXTRA_DIST += bench/store-ops.sh bench/store-memory.sh bench/init-vs-fio.sh \
	bench/dovecot-vs-store.sh

# the RPC payloads of a run, and real files, under the wire's LZ77+DIRECT2 and LZ4
# (bench/rpc-compression.sh)
noinst_PROGRAMS += bench/mb-rpccodec
bench_mb_rpccodec_SOURCES = bench/mb-rpccodec.c
bench_mb_rpccodec_LDADD = src/proto/libmbproto.a src/core/libmbcore.a $(MB_EXT_LIBS) $(LZ4_LIBS)
EXTRA_DIST += bench/rpc-compression.sh

# the load engine, the console and run, the storage test
EXTRA_DIST += bench/load-density.sh bench/mpi-scaling.sh bench/console-cpu.sh bench/fidelity.sh \
	bench/office-ratio.sh \
	bench/bitmap-ratio.sh bench/kind-ratio.py \
	bench/storage-vs-fio.sh
