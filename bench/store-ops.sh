#!/bin/sh
# store-ops.sh: store operations per second and store CPU per operation on
# loopback, 1,000 connections issuing the scenario-1 action mix, and the
# store's memory per idle connection.  One command:
#   bench/store-ops.sh [BUILDDIR] [CONNS] [SECONDS]
# It initialises a data directory (scenario online, CONNS users, the
# scenario's default scale) under $TMPDIR, starts `mailbench store`, and
# runs bench/mb-storebench against it (each run logs CONNS connections on,
# one user each, and measures the store process from /proc):
#   users   the action rate of 8,000 scenario-1 users (the published
#           load), compression on: the store's CPU % at that load
#   paced   140 actions/s (about the published 940 RPC operations/s),
#           compression on, then off (the peer: same store, same data):
#           CPU per operation and network bytes per operation
#   max     every connection busy, no think time: the most operations/s
# It prints the ratio against the peer and the headline figures LAST.
# Not run by `make check`; takes about two minutes; uses ~1.5 GB of disk.
set -eu
BUILD=${1:-${MB_BUILDDIR:-$(pwd)}}
CONNS=${2:-1000}
SECS=${3:-20}
MB="$BUILD/mailbench"
DRV="$BUILD/bench/mb-storebench"
[ -x "$MB" ] && [ -x "$DRV" ] || { echo "build mailbench and bench/mb-storebench first (make)"; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mb-storebench.XXXXXX")
pid=
cleanup() { [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
ulimit -n 8192 2>/dev/null || true

echo "== init: scenario online, $CONNS users (default scale)"
"$MB" init -s online --users "$CONNS" --data "$tmp/data" 2>/dev/null | tail -n 1

"$MB" store --data "$tmp/data" --listen 127.0.0.1:0 >"$tmp/store.out" 2>"$tmp/store.err" &
pid=$!
i=0
until grep -q '^listening on' "$tmp/store.out" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 200 ] && { cat "$tmp/store.err"; exit 3; }
	sleep 0.05
done
addr=$(sed -n 's/^listening on //p' "$tmp/store.out")
run() { # name rate seconds lz4
	echo "== $1: rate $2, ${3}s, compression $4"
	nice -n 5 "$DRV" "$addr" "$tmp/data" "$pid" "$CONNS" "$2" "$3" "$4" >"$tmp/$1.json" ||
		{ cat "$tmp/$1.json"; echo "driver failed"; exit 3; }
	cat "$tmp/$1.json"
}
run users u8000 "$SECS" 1
run on 140 "$SECS" 1
run off 140 "$SECS" 0
run max 0 10 1
kill -TERM "$pid"; wait "$pid" || true; pid=

f() { sed -n "s/.*\"$2\":\([-0-9.e+]*\).*/\1/p" "$tmp/$1.json"; }
echo
echo "peer (same run): network bytes per operation, compression on / off:" \
	"$(f on bytes_per_op) / $(f off bytes_per_op) =" \
	"$(echo "$(f on bytes_per_op) $(f off bytes_per_op)" | awk '{printf "%.2f", $1/$2}')"
echo "paced: $(f on ops_per_s) ops/s, $(f on cpu_us_per_op) us store CPU per operation," \
	"$(f on store_cpu_pct)% of $(f on online_cpus) CPUs, client RTT mean $(f on rtt_mean_ms) ms p95 $(f on rtt_p95_ms) ms"
echo "published reference (not measured here): 75% of 4 CPUs at 940 ops/s = 3192 us CPU per operation"
echo "max: $(f max ops_per_s) ops/s ($(f max rpcs_per_s) RPCs/s) at $(f max store_cpu_pct)% store CPU," \
	"$(f max cpu_us_per_op) us per operation"
echo "memory per idle logged-on connection: $(f users bytes_per_idle_conn) bytes (goal < 16384)"
echo "HEADLINE: 8,000 scenario-1 users' load ($(f users actions_per_s) actions/s, $(f users ops_per_s) ops/s) over $CONNS connections:" \
	"store CPU $(f users store_cpu_pct)% of this machine (goal <= 5%), $(f users cpu_us_per_op) us per operation"
