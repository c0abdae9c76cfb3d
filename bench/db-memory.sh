#!/bin/sh
# db-memory.sh: the database cache bounds memory: a process with a
# CACHE_MB (256) MiB cache scans every key and value of a larger database
# (SIZE_MB, default 1024 MiB: smaller than the 4 GB of the goal to keep the
# run short; set SIZE_MB=4096 for the full figure) and its peak resident
# set must stay under CACHE_MB + 64 MiB.  The peer is fio reading the same
# file sequentially with O_DIRECT (the scan rate ratio is printed); the
# headline printed LAST is the peak RSS against the limit.
# Not a test: run it by hand from the build directory:
#   sh /path/to/bench/db-memory.sh
set -eu
SIZE_MB=${SIZE_MB:-1024}
CACHE_MB=${CACHE_MB:-256}
here=$(cd "$(dirname "$0")" && pwd)
HELPER=${MB_BUILDDIR:-.}/bench/mb-dbbench
[ -x "$HELPER" ] || HELPER=$here/mb-dbbench
[ -x "$HELPER" ] || { echo "build first: make bench/mb-dbbench (run from the build directory)"; exit 2; }
D=$(mktemp -d "${TMPDIR:-/tmp}/mbbench.XXXXXX")
trap 'rm -rf "$D"' EXIT INT TERM
echo "filling a ${SIZE_MB} MiB database of 32 KB pages in $D ..."
nice "$HELPER" fill "$D" "$SIZE_MB" 32768 | sed 's/^/  /'
"$HELPER" scan "$D" "$CACHE_MB" >"$D/scan.out"
sed 's/^/  /' "$D/scan.out"
rate=$(awk '$1=="scan_mib_per_s"{print $2}' "$D/scan.out")
rss=$(awk '$1=="peak_rss_mib"{print $2}' "$D/scan.out")
if command -v fio >/dev/null; then
	fio --name=seqread --filename="$D/db01.mdb" --readonly --rw=read --bs=32k --direct=1 \
		--ioengine=psync --output-format=terse --terse-version=3 >"$D/fio.out"
	fbw=$(awk -F';' '{print $7}' "$D/fio.out") # KiB/s
	awk -v r="$rate" -v f="$fbw" 'BEGIN { printf "scan rate vs fio sequential O_DIRECT read: %.1f / %.1f MiB/s = %.2f\n", r, f / 1024, r / (f / 1024) }'
fi
awk -v r="$rss" -v c="$CACHE_MB" 'BEGIN {
	lim = c + 64; printf "PEAK RSS %.1f MiB with a %d MiB cache scanning the database: limit %d MiB: %s\n", r, c, lim, (r < lim) ? "PASS" : "FAIL" }'
