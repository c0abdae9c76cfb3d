#!/bin/sh
# store-memory.sh: the store's memory against its documented bound
# (docs/ARCHITECTURE.md, "Memory bounds"):
#   RSS <= fixed part (128 MiB) + database cache + connections x 3 KB
#          + min(partial-frame budget 256 MiB, connections x frame limit)
#          + min(512 MiB, requests in flight x (4 MiB payload + 3 MiB reply))
# Measured with real processes on a small data directory:
#   1. the store just started (the fixed part plus what recovery touched);
#   2. 1,000 connections that never log on, each announcing a 4 MiB frame
#      and sending its body (the pre-logon limit refuses them at the header);
#   3. U logged-on users of scenario 1 for S seconds at a high acceleration
#      (the cache fills, every worker thread runs).
# Peak RSS is the store's VmHWM from /proc.  Prints one line per phase and
# the bound of each.  Usage: bench/store-memory.sh [USERS] [SECONDS]
# (MAILBENCH=path/to/mailbench, MB_CLIENT=path/to/tests/integration/mb-client)
set -u
MAILBENCH=${MAILBENCH:-$(pwd)/mailbench}
CLIENT=${MB_CLIENT:-$(dirname "$MAILBENCH")/tests/integration/mb-client}
USERS=${1:-200}
SECS=${2:-60}
CACHE=16
[ -x "$CLIENT" ] || { echo "mb-client not found (make check builds it): $CLIENT"; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/mb-mem.XXXXXX")
pid=
cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	for p in $(pgrep -f "$T/" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
BIG=
prlimit --nofile=4096 -- true 2>/dev/null && BIG="prlimit --nofile=4096 --"

kb() { awk -v k="$1" '$1 == k ":" {print $2}' "/proc/$pid/status"; }
mib() { echo $((($1 + 1023) / 1024)); }

"$MAILBENCH" init -s online --users "$USERS" --scale 0.02 --data "$T/data" >"$T/init.out" 2>&1 ||
	{ cat "$T/init.out"; exit 3; }
"$MAILBENCH" store --data "$T/data" --cache-mb "$CACHE" --listen 127.0.0.1:0 >"$T/store.out" \
	2>"$T/store.err" &
pid=$!
i=0
until grep -q '^listening on' "$T/store.out" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 200 ] && { cat "$T/store.err"; exit 3; }; sleep 0.1
done
addr=$(sed -n 's/^listening on //p' "$T/store.out")
sleep 1
base=$(mib "$(kb VmRSS)")
fixed=128
echo "store started:            RSS ${base} MiB (bound: fixed ${fixed} MiB + cache ${CACHE} MiB = $((fixed + CACHE)) MiB)"

$BIG "$CLIENT" "$addr" "$T/data" flood 1000 4194304 >"$T/flood.out" 2>&1
flood=$(mib "$(kb VmHWM)")
fb=$((fixed + CACHE + 1000 * 3 / 1024 + 1000 * 64 / 1024))
echo "1,000 pre-logon floods:   peak RSS ${flood} MiB (bound: ${fixed} + ${CACHE} + 1000 x (3 KB + 64 KiB) = ${fb} MiB; $(cut -d: -f2 "$T/flood.out"))"

port=${addr##*:}
"$MAILBENCH" load -s online --target "$addr" --topology "$T/data/topology.json" --users "$USERS" \
	--accel 200 --ramp 5 --duration "$SECS" >"$T/load.out" 2>&1
loadpeak=$(mib "$(kb VmHWM)")
now=$(mib "$(kb VmRSS)")
part=$((USERS * 4)); [ "$part" -gt 256 ] && part=256
req=$((USERS * 7)); [ "$req" -gt 512 ] && req=512
lb=$((fixed + CACHE + USERS * 3 / 1024 + part + req))
echo "$USERS users for $SECS s: peak RSS ${loadpeak} MiB, now ${now} MiB (bound: ${fixed} + ${CACHE} + $USERS x 3 KB + ${part} partial + ${req} requests = ${lb} MiB)"
grep -E "^actions:|^connections:" "$T/load.out" | head -2
kill -TERM "$pid"; wait "$pid" 2>/dev/null; pid=
echo "port $port; data $T/data (removed)"
