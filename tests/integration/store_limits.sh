#!/bin/sh
# $BIG is a command prefix (or nothing), split on purpose:
# shellcheck disable=SC2086
# store_limits.sh: the store under exhaustion, as a hostile client would
# push it (issue: fd exhaustion left a storage group read-only; memory
# before logon was unbounded; a slow client held a connection forever).
#  1. Under `prlimit --nofile=256`, 400 idle connections: the store caps
#     connections below the limit (accept paused), keeps serving a
#     logged-on client (deliveries across log segments), accepts again when
#     they close, and no storage group enters the ERROR state.
#  2. 1,000 connections not logged on, each announcing a 4 MiB frame and
#     sending its body: refused at the header (pre-logon frame limit); the
#     store's peak RSS stays under its documented bound.
#  3. Slowloris: one byte every 0.2 s before logon and inside a frame after
#     logon: closed by the logon and frame timeouts, and counted.
#  4. Bytes held by logged-on sessions' handles: 6 sessions fill drafts with
#     1 MiB values under --held-session-mb 16 --held-store-mb 40: the store
#     holds at most 40 MiB for them (its RSS grows by no more than that and
#     the requests' buffers), refuses the rest (MB_EFULL, counted) and goes
#     on answering, and has the bytes back once they close.
# Also: init leaves no file or directory readable by others.
# Bounded in time; cleans up after itself.
set -u
: "${MAILBENCH:?}" "${MB_BUILDDIR:?}"
CLIENT="$MB_BUILDDIR/tests/integration/mb-client"
[ -x "$CLIENT" ] || { echo "mb-client not built"; exit 77; }
command -v prlimit >/dev/null || { echo "prlimit missing: skip"; exit 77; }
command -v jq >/dev/null || { echo "jq missing: skip"; exit 77; }
# start_store, stop_store
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mb-limits.XXXXXX")
cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
fail() {
	echo "FAIL: $*"
	for f in store.out store.err client.out; do
		[ -f "$tmp/$f" ] && { echo "--- $f"; tail -n 30 "$tmp/$f"; }
	done
	exit 1
}
# the client holds hundreds of sockets
BIG=
prlimit --nofile=4096 -- true 2>/dev/null && BIG="prlimit --nofile=4096 --"

# the last stats line's store detail
last_store() { tail -n 1 "$tmp/stats" | jq -c '.x.store'; }

timeout 120 "$MAILBENCH" init -s online --users 24 --scale 0.02 --data "$tmp/data" \
	>"$tmp/init.out" 2>&1 || { cat "$tmp/init.out"; fail "init"; }

# 0. the data directory is the owner's alone: files 0600, directories 0700
loose=$(find "$tmp/data" -perm /077 | head -n 5)
[ -z "$loose" ] || fail "readable by others: $loose"
echo "data directory: files 0600, directories 0700"

# 1. descriptors
start_store --nofile 256 --stats "$tmp/stats"
cap=$(sed -n 's/^connections: at most \([0-9]*\).*/\1/p' "$tmp/store.out")
{ [ -n "$cap" ] && [ "$cap" -lt 256 ]; } || fail "connection cap '$cap' not below the fd limit"
timeout 120 $BIG "$CLIENT" "$addr" "$tmp/data" exhaust user0001 400 >"$tmp/client.out" 2>&1 ||
	fail "exhaust"
cat "$tmp/client.out"
sleep 1.5 # one more stats line
s=$(last_store)
echo "store after exhaustion: $(echo "$s" | jq -c '{connections, limits, refused, groups}')"
[ "$(echo "$s" | jq '.groups | map(select(.state != "ok")) | length')" = 0 ] ||
	fail "a storage group is in the ERROR state"
[ "$(echo "$s" | jq '.refused.fd_cap')" -ge 1 ] || fail "accept never paused at the fd cap"
grep -q "ERROR state" "$tmp/store.err" && fail "ERROR state reported"
stop_store
echo "fd cap: accept paused at $cap connections, logged-on client served, no group error"

# 2. memory before logon (descriptors enough for every connection)
if [ -n "$BIG" ]; then start_store --nofile 4096 --stats "$tmp/stats"; else start_store --stats "$tmp/stats"; fi
timeout 120 $BIG "$CLIENT" "$addr" "$tmp/data" flood 1000 4194304 >"$tmp/client.out" 2>&1 ||
	fail "flood"
cat "$tmp/client.out"
hwm=$(awk '/^VmHWM:/ {print int($2 / 1024)}' "/proc/$pid/status")
sleep 1.5
s=$(last_store)
cache=$(echo "$s" | jq '.cache_limit_mb')
# the documented bound before logon (docs/ARCHITECTURE.md, Memory bounds):
# 128 MiB fixed + the cache + 1,000 x (3 KB + 64 KiB pre-logon frame)
bound=$((128 + cache + 1000 * 67 / 1024))
echo "store peak RSS ${hwm} MiB with 1000 connections not logged on (bound ${bound} MiB)"
[ "$hwm" -le "$bound" ] || fail "peak RSS ${hwm} MiB above the bound ${bound} MiB"
[ "$(echo "$s" | jq '.refused.memory')" -ge 900 ] || fail "pre-logon frames not refused"
timeout 30 "$CLIENT" "$addr" "$tmp/data" logon user0002 >/dev/null || fail "logon after the flood"
stop_store

# 3. slowloris
start_store --stats "$tmp/stats" --logon-timeout 2 --frame-timeout 2
timeout 30 "$CLIENT" "$addr" "$tmp/data" slowloris prelogon 8 || fail "slowloris before logon"
timeout 30 "$CLIENT" "$addr" "$tmp/data" slowloris frame 8 || fail "slowloris inside a frame"
sleep 1.5
[ "$(last_store | jq '.refused.timeout')" -ge 2 ] || fail "timeouts not counted"
stop_store

# 4. bytes held by logged-on sessions (drafts)
start_store --stats "$tmp/stats" --held-session-mb 16 --held-store-mb 40
base=$(awk '/^VmRSS:/ {print int($2 / 1024)}' "/proc/$pid/status")
timeout 120 "$CLIENT" "$addr" "$tmp/data" hold user0003 6 3 >"$tmp/client.out" 2>&1 &
cpid=$!
for _ in $(seq 1 300); do
	grep -q '^held ' "$tmp/client.out" && break
	sleep 0.1
done
rss=$(awk '/^VmRSS:/ {print int($2 / 1024)}' "/proc/$pid/status")
wait "$cpid" || { cat "$tmp/client.out"; fail "hold"; }
cat "$tmp/client.out"
held=$(sed -n 's/^held \([0-9]*\) MiB.*/\1/p' "$tmp/client.out")
{ [ -n "$held" ] && [ "$held" -ge 32 ] && [ "$held" -le 40 ]; } ||
	fail "sessions held '$held' MiB under a store limit of 40"
# without the limits these sessions would hold 6 x 8 drafts x 60 MiB; the
# store's RSS grows by what they hold and the requests' buffers (not under
# AddressSanitizer, whose quarantine keeps up to 256 MiB of freed buffers)
echo "store RSS ${base} -> ${rss} MiB while 6 sessions held ${held} MiB of drafts"
if grep -q __asan_init "$MAILBENCH"; then
	echo "RSS not compared: an AddressSanitizer build"
else
	[ $((rss - base)) -le $((40 + 64)) ] || fail "store RSS grew by $((rss - base)) MiB"
fi
sleep 1.5
s=$(last_store)
echo "store after the sessions closed: $(echo "$s" | jq -c '{refused: .refused.held, held_bytes: .limits.held_bytes}')"
[ "$(echo "$s" | jq '.refused.held')" -ge 6 ] || fail "refusals for held bytes not counted"
[ "$(echo "$s" | jq '.limits.held_bytes')" = 0 ] || fail "closed sessions' bytes not given back"
stop_store
echo "store_limits: OK"
exit 0
