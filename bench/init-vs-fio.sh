#!/bin/sh
# init-vs-fio.sh: `mailbench init` (bodies MB/s and bytes written to disk
# per byte of body stored) against fio's sequential write on the same file
# system in the same run.  Not a test: run it by hand from the build
# directory:
#   sh /path/to/bench/init-vs-fio.sh
# The device is shared and noisy, so fio and init alternate ROUNDS times;
# the medians are the headline, printed LAST.
# Bytes written are the kernel's write_bytes of the init process and its
# threads (/proc/PID/io of a shell that ran and reaped it), i.e. what it
# sent to the block layer (O_DIRECT and buffered writes alike).
# fio: one job, 1 MiB blocks, O_DIRECT, psync, a new file of FIO_MB, fsync at
# the end (init also writes new files and syncs them).
# Goal: init bodies MB/s >= 0.5 x fio MiB/s and <= 1.5 bytes written per body byte.
# Knobs (environment): USERS (1000), SCALE (scenario default), SCENARIO
# (online), FIO_MB (2048), ROUNDS (3), INIT_ARGS (extra init flags),
# TMPDIR (where the data goes; needs ~2 x the bodies + FIO_MB free).
set -eu
USERS=${USERS:-1000}
SCENARIO=${SCENARIO:-online}
FIO_MB=${FIO_MB:-2048}
ROUNDS=${ROUNDS:-3}
INIT_ARGS=${INIT_ARGS:-}
MB=${MAILBENCH:-${MB_BUILDDIR:-.}/mailbench}
[ -x "$MB" ] || { echo "build first (run from the build directory or set MAILBENCH)"; exit 2; }
command -v fio >/dev/null || { echo "fio is not installed"; exit 2; }
D=$(mktemp -d "${TMPDIR:-/tmp}/mbinit.XXXXXX")
trap 'rm -rf "$D"' EXIT INT TERM
scale_arg=
[ -n "${SCALE:-}" ] && scale_arg="--scale $SCALE"

: >"$D/fio.all"
: >"$D/init.all"
i=0
while [ $i -lt "$ROUNDS" ]; do
	i=$((i + 1))
	fio --name=seqwrite --filename="$D/fio.dat" --rw=write --bs=1M --direct=1 \
		--ioengine=psync --iodepth=1 --size="${FIO_MB}M" --end_fsync=1 \
		--output-format=terse --terse-version=3 >"$D/fio.out"
	rm -f "$D/fio.dat"
	# terse v3: field 48 is the write bandwidth in KiB/s
	fio_mibs=$(awk -F';' '{printf "%.1f", $48 / 1024}' "$D/fio.out")
	echo "$fio_mibs" >>"$D/fio.all"
	rm -rf "$D/data"
	sync
	# shellcheck disable=SC2086 # word splitting of the optional flags is wanted
	sh -c '"$@" >"'"$D"'/init.out" 2>"'"$D"'/init.err"; rc=$?; cat /proc/$$/io >"'"$D"'/init.io"; exit $rc' \
		sh "$MB" init -s "$SCENARIO" --users "$USERS" --data "$D/data" $scale_arg $INIT_ARGS ||
		{ cat "$D/init.err"; echo "init failed"; exit 3; }
	wb=$(awk '$1=="write_bytes:"{print $2}' "$D/init.io")
	# "done: N mailboxes, X MB of bodies (B body bytes) in Y s" (MiB, bytes, seconds)
	line=$(grep 'done:' "$D/init.out")
	mib=$(echo "$line" | sed -n 's/.* \([0-9.]*\) MB of bodies.*/\1/p')
	secs=$(echo "$line" | sed -n 's/.* in \([0-9.]*\) s.*/\1/p')
	bodies=$(echo "$line" | sed -n 's/.*(\([0-9]*\) body bytes).*/\1/p')
	[ -n "$bodies" ] || bodies=$(awk -v m="$mib" 'BEGIN {printf "%.0f", m * 1048576}')
	echo "$mib $secs $wb $bodies" >>"$D/init.all"
	awk -v m="$mib" -v s="$secs" -v w="$wb" -v b="$bodies" -v f="$fio_mibs" 'BEGIN {
		printf "round %d: fio %.0f MiB/s; init %.0f MiB of bodies in %.1f s = %.0f MiB/s (%.2fx fio), %.0f MiB written = %.2f bytes per body byte\n",
			'"$i"', f, m, s, m / s, m / s / f, w / 1048576, w / b }'
	grep -i 'disk' "$D/init.err" | tail -n 1 | sed 's/^/  progress: /' || true
done
du -sm "$D/data" | awk '{print "data directory after the last round: " $1 " MiB"}'
paste "$D/fio.all" "$D/init.all" | awk '{print $2 / $3 / $1}' | sort -n >"$D/ratio.bw"
awk '{print $3 / $4}' "$D/init.all" | sort -n >"$D/ratio.wb"
med() { awk '{v[NR] = $1} END {printf "%.2f", v[int((NR + 1) / 2)]}' "$1"; }
fio_med=$(sort -n "$D/fio.all" | awk '{v[NR] = $1} END {printf "%.0f", v[int((NR + 1) / 2)]}')
init_med=$(awk '{print $1 / $2}' "$D/init.all" | sort -n | awk '{v[NR] = $1} END {printf "%.0f", v[int((NR + 1) / 2)]}')
echo "scenario $SCENARIO, $USERS users; fio: seq write bs=1M direct=1 psync ${FIO_MB} MiB + fsync; $ROUNDS rounds alternating"
echo "median fio ${fio_med} MiB/s, median init bodies ${init_med} MiB/s"
echo "RESULT bytes written per body byte (median): $(med "$D/ratio.wb") (goal <= 1.5)"
echo "RESULT init bodies MB/s / fio sequential write MiB/s (median): $(med "$D/ratio.bw") (goal >= 0.5)"
