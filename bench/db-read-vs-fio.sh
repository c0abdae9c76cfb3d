#!/bin/sh
# db-read-vs-fio.sh: random 32 KB page reads through the storage engine's
# database cache (THREADS threads, each one read at a time, so queue depth
# THREADS) on a database much larger than the cache, against fio reading the
# same file with the same block size, O_DIRECT, THREADS jobs (psync,
# iodepth 1), in the same run.  Prints both rates and the ratio LAST
# (goal >= 0.9).  Not a test: run it by hand from the build directory:
#   sh /path/to/bench/db-read-vs-fio.sh
# The device is shared and noisy, so fio and the engine alternate ROUNDS
# times; each round gives a ratio and the MEDIAN ratio is the headline (the
# ratio of the means is printed too).
# Knobs (environment): SIZE_MB (1536), THREADS (8), SECS (3), ROUNDS (5), CACHE_MB (64),
# TMPDIR (where the database goes; needs SIZE_MB + a little free space).
set -eu
SIZE_MB=${SIZE_MB:-1536}
THREADS=${THREADS:-8}
SECS=${SECS:-3}
ROUNDS=${ROUNDS:-5}
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

# the device is shared and noisy: alternate fio and the engine ROUNDS times
# and compare the totals
i=0
: >"$D/fio.all"
: >"$D/eng.all"
while [ $i -lt "$ROUNDS" ]; do
	i=$((i + 1))
	fio --name=randread --filename="$D/db01.mdb" --readonly --rw=randread --bs=32k \
		--direct=1 --ioengine=psync --iodepth=1 --numjobs="$THREADS" --runtime="$SECS" \
		--time_based --group_reporting --output-format=terse --terse-version=3 >"$D/fio.out"
	# terse v3: field 8 is the read IOPS
	awk -F';' '{print $8}' "$D/fio.out" >>"$D/fio.all"
	"$HELPER" read "$D" "$THREADS" "$SECS" "$CACHE_MB" >"$D/eng.out"
	cat "$D/eng.out" >>"$D/eng.all"
	awk -v f="$(tail -n 1 "$D/fio.all")" '$1=="page_requests_per_s"{printf "%.4f\n", $2 / f}' \
		"$D/eng.out" >>"$D/ratio.all"
	printf "round %d: fio %s IOPS, engine %s page reads/s (%s disk reads/s, %s%% cache hits)\n" "$i" \
		"$(tail -n 1 "$D/fio.all")" \
		"$(awk '$1=="page_requests_per_s"{print $2}' "$D/eng.out")" \
		"$(awk '$1=="disk_reads_per_s"{print $2}' "$D/eng.out")" \
		"$(awk '$1=="hit_pct"{print $2}' "$D/eng.out")"
done
fio_iops=$(awk '{s += $1} END {printf "%.0f", s / NR}' "$D/fio.all")
eng=$(awk '$1=="page_requests_per_s"{s += $2; n++} END {printf "%.0f", s / n}' "$D/eng.all")
disk=$(awk '$1=="disk_reads_per_s"{s += $2; n++} END {printf "%.0f", s / n}' "$D/eng.all")
echo "fio: randread bs=32k direct=1 numjobs=$THREADS iodepth=1 psync; engine: $THREADS threads,"
echo "random page pin/unpin through a ${CACHE_MB} MiB cache; $ROUNDS x ${SECS}s each, alternating"
median=$(sort -n "$D/ratio.all" | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
awk -v e="$eng" -v d="$disk" -v f="$fio_iops" 'BEGIN {
	printf "means: engine disk reads/s / fio IOPS: %.0f / %.0f = %.3f\n", d, f, d / f;
	printf "means: engine page reads/s (through the cache) / fio IOPS: %.0f / %.0f = %.3f\n", e, f, e / f }'
echo "RATIO engine page reads/s through the cache / fio IOPS, median of $ROUNDS rounds: $median (goal >= 0.9)"
