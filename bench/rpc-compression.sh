#!/bin/bash
# bench/rpc-compression.sh: the RPC traffic of a run under the wire
# protocol's LZ77+DIRECT2 (MS-OXCRPC's own), against the same format with
# a one-probe match search and against LZ4, on the same payloads.
# Initialises a data directory, starts `mailbench store --dump-payloads`
# on loopback and `mailbench load` against it (one scenario, a set seed),
# stops both, and prints what bench/mb-rpccodec measures on the dump: bytes
# on the wire per kind without compression and under each codec, the cut
# of each, and last the LZ77+DIRECT2 encoders' bytes against LZ4's.
#
# One command: bench/rpc-compression.sh [BUILD_DIR].  SCENARIO (online),
# USERS, SCALE, ACCEL, DURATION (the scenario's run defaults: 1,000 users,
# scale 0.04, accel 8, 300 s, as bench/fidelity.sh), SEED (1) and MIN (the
# scenario's compression_min_bytes) override; DATA keeps the data and the
# dump there (default a new directory under $TMPDIR, removed at the end).
# The whole session is measured, ramp-up included.  Not run by make check.
set -u
B=${1:-${MB_BUILDDIR:-.}}
MAILBENCH=${MAILBENCH:-$B/mailbench}
CODEC=${CODEC:-$B/bench/mb-rpccodec}
command -v jq >/dev/null 2>&1 || { echo "rpc-compression.sh: needs jq" >&2; exit 77; }
for x in "$MAILBENCH" "$CODEC"; do
	[ -x "$x" ] || { echo "rpc-compression.sh: no $x (run make)" >&2; exit 2; }
done
sc=${SCENARIO:-online}
W=${DATA:-$(mktemp -d "${TMPDIR:-/tmp}/mb-rpccomp.XXXXXX")}
mkdir -p "$W"
STORE=
cleanup() {
	[ -n "$STORE" ] && kill -KILL "$STORE" 2>/dev/null
	[ -n "${DATA:-}" ] || rm -rf "$W"
}
trap cleanup EXIT INT TERM
show() { "$MAILBENCH" scenario show "$sc" --json | jq -r "$1"; }
users=${USERS:-$(show .run.users)}
scale=${SCALE:-$(show .run.scale)}
accel=${ACCEL:-$(show .run.accel)}
dur=${DURATION:-$(show .run.duration_s)}
min=${MIN:-$(show .run.compression_min_bytes)}
for v in "$users" "$scale" "$accel" "$dur" "$min"; do
	if [ -z "$v" ] || [ "$v" = null ]; then
		echo "rpc-compression.sh: cannot read the scenario's run defaults" >&2
		exit 2
	fi
done

echo "rpc-compression: init $sc, $users users, scale $scale ..." >&2
rm -rf "$W/data"
"$MAILBENCH" init -s "$sc" --users "$users" --scale "$scale" --data "$W/data" \
	>"$W/init.out" 2>&1 || { tail -5 "$W/init.out" >&2; exit 3; }
rm -f "$W/dump"
"$MAILBENCH" store --data "$W/data" --listen 127.0.0.1:0 --compress-min "$min" \
	--dump-payloads "$W/dump" >"$W/store.out" 2>"$W/store.err" &
STORE=$!
port=
for _ in $(seq 1 300); do
	port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$W/store.out")
	[ -n "$port" ] && break
	kill -0 "$STORE" 2>/dev/null || break
	sleep 0.1
done
[ -n "$port" ] || { echo "rpc-compression.sh: the store did not start:" >&2; cat "$W/store.err" >&2; exit 3; }
echo "rpc-compression: load $sc, x$accel, $dur s, seed ${SEED:-1} ..." >&2
"$MAILBENCH" load -s "$sc" --target "127.0.0.1:$port" --topology "$W/data/topology.json" \
	--users "$users" --accel "$accel" --duration "$dur" --seed "${SEED:-1}" \
	--compression on >"$W/load.out" 2>"$W/load.err"
rc=$?
kill -TERM "$STORE"
wait "$STORE"
src=$?
STORE=
if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
	echo "rpc-compression.sh: the load engine failed (exit $rc):" >&2
	tail -5 "$W/load.err" >&2
	exit 3
fi
[ "$src" -eq 0 ] || { echo "rpc-compression.sh: the store exited $src:" >&2; tail -5 "$W/store.err" >&2; exit 3; }
echo "$sc: $users users x$accel, scale $scale, $dur s, seed ${SEED:-1}"
"$CODEC" --min "$min" "$W/dump"
