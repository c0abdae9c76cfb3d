#!/bin/sh
# db-read-vs-fio.sh: random 32 KB page reads through the storage engine's
# database cache (THREADS threads, each one read at a time, so queue depth
# THREADS) on a database much larger than the cache, against fio reading the
# same file with the same block size, O_DIRECT, THREADS jobs (psync,
# iodepth 1), in the same run.  Prints both rates and the ratio LAST
# (goal >= 0.9).  Not a test: run it by hand from the build directory:
#   sh /path/to/bench/db-read-vs-fio.sh
# Knobs (environment): SIZE_MB (1536), THREADS (8), SECS (10), CACHE_MB (64),
# TMPDIR (where the database goes; needs SIZE_MB + a little free space).
set -eu
SIZE_MB=${SIZE_MB:-1536}
THREADS=${THREADS:-8}
SECS=${SECS:-10}
CACHE_MB=${CACHE_MB:-64}
here=$(cd "$(dirname "$0")" && pwd)
HELPER=${MB_BUILDDIR:-.}/bench/mb-dbbench
[ -x "$HELPER" ] || HELPER=$here/mb-dbbench
[ -x "$HELPER" ] || { echo "build first: make bench/mb-dbbench (run from the build directory)"; exit 2; }
command -v fio >/dev/null || { echo "fio is not installed"; exit 2; }
D=$(mktemp -d "${TMPDIR:-/tmp}/mbbench.XXXXXX")
trap 'rm -rf "$D"' EXIT INT TERM

echo "filling a ${SIZE_MB} MiB database of 32 KB pages in $D ..."
nice "$HELPER" fill "$D" "$SIZE_MB" 32768 | sed 's/^/  /'

echo "fio: randread bs=32k direct=1 numjobs=$THREADS iodepth=1 psync, ${SECS}s"
fio --name=randread --filename="$D/db01.mdb" --readonly --rw=randread --bs=32k \
	--direct=1 --ioengine=psync --iodepth=1 --numjobs="$THREADS" --runtime="$SECS" \
	--time_based --group_reporting --output-format=terse --terse-version=3 >"$D/fio.out"
# terse v3: field 8 is the read IOPS
fio_iops=$(awk -F';' '{print $8}' "$D/fio.out")
echo "  fio read IOPS: $fio_iops"

echo "engine: $THREADS threads, random page pin/unpin through a ${CACHE_MB} MiB cache, ${SECS}s"
"$HELPER" read "$D" "$THREADS" "$SECS" "$CACHE_MB" >"$D/eng.out"
sed 's/^/  /' "$D/eng.out"
eng=$(awk '$1=="page_requests_per_s"{print $2}' "$D/eng.out")
disk=$(awk '$1=="disk_reads_per_s"{print $2}' "$D/eng.out")
awk -v e="$eng" -v d="$disk" -v f="$fio_iops" 'BEGIN {
	printf "engine disk reads/s vs fio IOPS: %.0f / %.0f = %.3f\n", d, f, d / f;
	printf "RATIO engine page reads/s (through the cache) / fio IOPS: %.0f / %.0f = %.3f (goal >= 0.9)\n", e, f, e / f }'
