#!/bin/sh
# store_basic.sh: end-to-end test of `mailbench init` and `mailbench store`.
# Initialises a tiny data directory, starts a real store on a random
# loopback port, drives every operation with the real client (mb-client
# smoke), checks refused logons and malformed frames, SIGTERM -> exit 0,
# restarts (recovery), then SIGKILLs the store after acknowledged
# deliveries and checks on the next start that every one survived.
# Bounded in time; cleans up after itself.
set -u
: "${MAILBENCH:?}" "${MB_BUILDDIR:?}"
CLIENT="$MB_BUILDDIR/tests/integration/mb-client"
[ -x "$CLIENT" ] || { echo "mb-client not built"; exit 77; }
# start_store, stop_store
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mb-store.XXXXXX")
cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*"; [ -f "$tmp/store.err" ] && cat "$tmp/store.err"; exit 1; }

timeout 120 "$MAILBENCH" init -s online --users 24 --scale 0.02 --data "$tmp/data" \
	>"$tmp/init.out" 2>&1 || { cat "$tmp/init.out"; fail "init"; }
tail -n 1 "$tmp/init.out"
[ -f "$tmp/data/topology.json" ] || fail "no topology.json"
# a second init with the same options is a no-op
timeout 60 "$MAILBENCH" init -s online --users 24 --scale 0.02 --data "$tmp/data" \
	| grep -q "already initialised" || fail "re-init not detected"
# an initialisation of another version (other mailbox content) is neither
# resumed nor reused: exit 2, the file and field named, nothing touched
cp "$tmp/data/init.state" "$tmp/init.state.now"
sed 's/"version": [0-9]*/"version": 1/' "$tmp/init.state.now" >"$tmp/data/init.state"
grep -q '"version": 1,' "$tmp/data/init.state" || fail "no version in init.state"
cp "$tmp/data/init.state" "$tmp/init.state.v1"
timeout 60 "$MAILBENCH" init -s online --users 24 --scale 0.02 --data "$tmp/data" \
	>"$tmp/initv1.out" 2>&1
[ $? -eq 2 ] || { cat "$tmp/initv1.out"; fail "init of another version not refused"; }
grep -q "init.state: version: .* version 1 " "$tmp/initv1.out" ||
	{ cat "$tmp/initv1.out"; fail "the refusal does not name the file and field"; }
cmp -s "$tmp/data/init.state" "$tmp/init.state.v1" || fail "the refused init changed init.state"
[ -f "$tmp/data/topology.json" ] || fail "the refused init removed topology.json"
# nor served: its rows are laid out otherwise (exit 2, file and field named)
timeout 60 "$MAILBENCH" store --data "$tmp/data" --listen 127.0.0.1:0 \
	>"$tmp/storev1.out" 2>&1
[ $? -eq 2 ] || { cat "$tmp/storev1.out"; fail "a store on another version not refused"; }
grep -q "init.state: version: .* version 1 .*init --restart" "$tmp/storev1.out" ||
	{ cat "$tmp/storev1.out"; fail "the store's refusal does not name the file and field"; }
cp "$tmp/init.state.now" "$tmp/data/init.state"
# one content seed, one starting state: two initialisations with --seed 7
# save the same pristine manifest (init state, every file and its size),
# another seed another one; a resume with another seed is refused
for d in s7a s7b s8; do
	seed=${d#s}
	seed=${seed%[ab]}
	timeout 120 "$MAILBENCH" init -s online --users 24 --scale 0.02 --data "$tmp/$d" \
		--seed "$seed" >"$tmp/init-$d.out" 2>&1 || { cat "$tmp/init-$d.out"; fail "init $d"; }
done
cmp -s "$tmp/s7a/pristine/MANIFEST" "$tmp/s7b/pristine/MANIFEST" ||
	fail "two initialisations with one seed differ: $(diff "$tmp/s7a/pristine/MANIFEST" \
		"$tmp/s7b/pristine/MANIFEST" | head -5)"
cmp -s "$tmp/s7a/pristine/MANIFEST" "$tmp/s8/pristine/MANIFEST" &&
	fail "initialisations with seeds 7 and 8 are alike"
timeout 60 "$MAILBENCH" init -s online --users 24 --scale 0.02 --data "$tmp/s7a" --seed 8 \
	>"$tmp/init-s78.out" 2>&1
[ $? -eq 2 ] || fail "an initialisation with seed 7 taken for seed 8"
rm -rf "$tmp/s7a" "$tmp/s7b" "$tmp/s8"

# init is interruptible and resumable: interrupt one, resume it, and a
# resume with other parameters is refused (exit 2) without touching it
"$MAILBENCH" init -s online --users 120 --scale 0.02 --data "$tmp/data2" >"$tmp/init2.out" 2>&1 &
ipid=$!
sleep 0.3
kill -INT "$ipid" 2>/dev/null
wait "$ipid"
irc=$?
echo "interrupted init exited $irc"
if [ "$irc" -ne 0 ]; then
	[ "$irc" -eq 3 ] || fail "interrupted init: exit $irc"
	[ ! -f "$tmp/data2/topology.json" ] || fail "topology.json of an interrupted init"
	timeout 60 "$MAILBENCH" init -s online --users 99 --scale 0.02 --data "$tmp/data2" \
		>/dev/null 2>&1
	[ $? -eq 2 ] || fail "resume with other parameters not refused"
	timeout 120 "$MAILBENCH" init -s online --users 120 --scale 0.02 --data "$tmp/data2" \
		>"$tmp/init3.out" 2>&1 || { cat "$tmp/init3.out"; fail "resume"; }
	grep -q resuming "$tmp/init3.out" || fail "no resume message"
fi
[ -f "$tmp/data2/topology.json" ] || fail "no topology.json after resume"
rm -rf "$tmp/data2"

start_store
timeout 60 "$CLIENT" "$addr" "$tmp/data" smoke >"$tmp/smoke1.out" 2>&1 ||
	{ cat "$tmp/smoke1.out"; fail "smoke"; }
tail -n 1 "$tmp/smoke1.out"
timeout 30 "$CLIENT" "$addr" "$tmp/data" badpass user0003 || fail "badpass"
timeout 30 "$CLIENT" "$addr" "$tmp/data" garbage || fail "garbage"
stop_store

# --dump-payloads: every payload in and out, before compression, in a file
# private to the user; bench/mb-rpccodec reads it back (every record, each
# payload through the wire's LZ77+DIRECT2, decoded again, and LZ4); a file that
# cannot be created is a usage error naming the flag
start_store --dump-payloads "$tmp/dump"
timeout 60 "$CLIENT" "$addr" "$tmp/data" smoke >"$tmp/smoke-dump.out" 2>&1 ||
	{ cat "$tmp/smoke-dump.out"; fail "smoke with --dump-payloads"; }
stop_store
[ "$(stat -c %a "$tmp/dump")" = 600 ] || fail "the dump is not private (mode $(stat -c %a "$tmp/dump"))"
[ "$(head -c 1 "$tmp/dump")" = Q ] || fail "the dump does not start with a request record"
codec="$MB_BUILDDIR/bench/mb-rpccodec"
if [ -x "$codec" ]; then
	"$codec" --min 0 "$tmp/dump" >"$tmp/codec.out" 2>&1 || { cat "$tmp/codec.out"; fail "mb-rpccodec"; }
	# (each kind's uncompressed bytes beyond its 16-byte frame headers: the
	# payloads themselves were written)
	awk '$1 == "requests" && $2 > 10 && $3 > 32 * $2 { q = 1 }
		$1 == "replies" && $2 > 10 && $3 > 32 * $2 { r = 1 }
		END { exit !(q && r) }' "$tmp/codec.out" || { cat "$tmp/codec.out"; fail "the dump's records"; }
fi
"$MAILBENCH" store --data "$tmp/data" --dump-payloads "$tmp/no/such/dir/dump" \
	>/dev/null 2>"$tmp/dump.err"
[ $? -eq 2 ] || fail "an uncreatable --dump-payloads file is not exit 2"
grep -q -- "--dump-payloads: cannot create $tmp/no/such/dir/dump" "$tmp/dump.err" ||
	{ cat "$tmp/dump.err"; fail "the error does not name the flag and the file"; }
echo "payload dump: ok"

# restart (recovery of a clean shutdown), then acknowledged deliveries
# must survive SIGKILL
start_store
timeout 60 "$CLIENT" "$addr" "$tmp/data" smoke >"$tmp/smoke2.out" 2>&1 ||
	{ cat "$tmp/smoke2.out"; fail "smoke after restart"; }
timeout 60 "$CLIENT" "$addr" "$tmp/data" send user0005 20 >"$tmp/acks" || fail "send"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
pid=
timeout 60 "$CLIENT" - "$tmp/data" probe "$tmp/acks" || fail "deliveries lost after SIGKILL"
start_store
timeout 60 "$CLIENT" "$addr" "$tmp/data" logon user0006 || fail "logon after recovery"
stop_store
# the connection limit: a second connection is refused with MB_EFULL
start_store --max-connections 1
timeout 30 "$CLIENT" "$addr" "$tmp/data" smoke >"$tmp/full.out" 2>&1 && fail "limit not enforced"
grep -q "full" "$tmp/full.out" || { cat "$tmp/full.out"; fail "no MB_EFULL refusal"; }
echo "connection limit enforced"
stop_store
echo "store_basic: OK"
exit 0
