#!/bin/sh
# db-commit.sh: durable commits per second with 1, 8 and 64 concurrent
# committers (one database each, one storage group, so all share one log),
# and commits per log write: group commit must put many commits in one
# write+fdatasync at 64.  The peer is fio: synchronous 4 KB sequential
# writes with fdatasync after each (the cost of one log write), in the same
# run; the ratio printed is engine commits/s at 64 / fio fdatasync writes/s.
# Not a test: run it by hand from the build directory:
#   sh /path/to/bench/db-commit.sh
# Knobs: SECS (5), TMPDIR.
set -eu
SECS=${SECS:-5}
here=$(cd "$(dirname "$0")" && pwd)
HELPER=${MB_BUILDDIR:-.}/bench/mb-dbbench
[ -x "$HELPER" ] || HELPER=$here/mb-dbbench
[ -x "$HELPER" ] || { echo "build first: make bench/mb-dbbench (run from the build directory)"; exit 2; }
D=$(mktemp -d "${TMPDIR:-/tmp}/mbbench.XXXXXX")
trap 'rm -rf "$D"' EXIT INT TERM

fio_iops=n/a
if command -v fio >/dev/null; then
	fio --name=logwrite --filename="$D/fio.log" --size=64m --rw=write --bs=4k \
		--ioengine=psync --fdatasync=1 --runtime="$SECS" --time_based \
		--output-format=terse --terse-version=3 >"$D/fio.out"
	# terse v3: field 49 is the write IOPS
	fio_iops=$(awk -F';' '{print $49}' "$D/fio.out")
	rm -f "$D/fio.log"
	echo "fio 4 KB write + fdatasync: $fio_iops writes/s"
fi
for n in 1 8 64; do
	"$HELPER" commit "$D/sg$n" "$n" "$SECS" >"$D/c$n.out"
	cps=$(awk '$1=="commits_per_s"{print $2}' "$D/c$n.out")
	lw=$(awk '$1=="log_writes_per_s"{print $2}' "$D/c$n.out")
	cpw=$(awk '$1=="commits_per_log_write"{print $2}' "$D/c$n.out")
	echo "committers $n: $cps commits/s, $lw log writes/s, $cpw commits per log write"
	eval "cps$n=$cps; cpw$n=$cpw"
done
# cps64 and cpw64 are set by the eval above
# shellcheck disable=SC2154
awk -v c="$cps64" -v w="$cpw64" -v f="$fio_iops" 'BEGIN {
	if (f == "n/a") printf "64 committers: %.0f commits/s, %.1f commits per log write (fio n/a)\n", c, w;
	else printf "RATIO 64 committers: %.0f commits/s / fio %.0f fdatasync writes/s = %.2f; %.1f commits per log write\n", c, f, c / f, w }'
