#!/bin/sh
# store-ops.sh: store operations per second and store CPU per operation on
# loopback, 1,000 connections issuing the scenario-1 action mix, and the
# store's memory per idle connection.  One command:
#   bench/store-ops.sh [BUILDDIR] [CONNS] [SECONDS]
# It initialises a data directory (scenario online, CONNS users, the
# scenario's default scale) under $TMPDIR, starts `mailbench store`, and
# drives it with the load engine itself (`mailbench load -s online`, one
# thread, one user per connection: the scenario-1 mix of send mail,
# process inbox, browse mail, free/busy, request meeting, make appointment
# and browse calendar), measuring the store process from /proc:
#   idle    the users log on and do nothing (accel 0.001): the store's
#           resident memory per logged-on idle connection
#   users   the action rate of 8,000 scenario-1 users (the published
#           load; accel 8000/CONNS), compression on: the store's CPU %
#   paced   140 actions/s (about the published 940 RPC operations/s),
#           compression on, then off (the peer: same store, same data):
#           CPU per operation and network bytes per operation
#   max     no think time to speak of (accel 100000): the most operations/s
#           (arrivals beyond a user's queue count as overruns)
# It prints the ratio against the peer and the headline figures LAST.
# Not run by `make check`; takes about three minutes; uses ~1.5 GB of disk.
set -eu
BUILD=${1:-${MB_BUILDDIR:-$(pwd)}}
CONNS=${2:-1000}
SECS=${3:-20}
MB="$BUILD/mailbench"
[ -x "$MB" ] || { echo "build mailbench first (make)"; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mb-storeops.XXXXXX")
pid=
cleanup() { [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
# dash and bash both have ulimit -n; the fallback covers any other sh
# shellcheck disable=SC3045
ulimit -n 8192 2>/dev/null || true
RAMP=5
WARM=$((RAMP + 3))
PER_DAY=$(awk '/^actions_per_day/,/^};/ { if ($2 == "=") { v = $3; sub(";", "", v); s += v } } END { print s }' \
	"$(dirname "$0")/../scenarios/online.cfg")

echo "== init: scenario online, $CONNS users (default scale)"
"$MB" init -s online --users "$CONNS" --data "$tmp/data" 2>/dev/null | tail -n 1

"$MB" store --data "$tmp/data" --listen 127.0.0.1:0 --max-connections $((CONNS + 100)) \
	>"$tmp/store.out" 2>"$tmp/store.err" &
pid=$!
i=0
until grep -q '^listening on' "$tmp/store.out" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 200 ] && { cat "$tmp/store.err"; exit 3; }
	sleep 0.05
done
addr=$(sed -n 's/^listening on //p' "$tmp/store.out")
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$pid/stat"; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status"; }

# run NAME ACCEL SECONDS on|off: one load run; the store's CPU over the
# window after the warm-up; figures into $tmp/NAME.env
run() {
	echo "== $1: accel $2, ${3}s after ${WARM}s of logons and warm-up, compression $4"
	nice -n 5 "$MB" load -s online --target "mbstore:$addr" --topology "$tmp/data/topology.json" \
		--users "$CONNS" --threads 1 --accel "$2" --ramp "$RAMP" --warmup "$WARM" \
		--duration $((WARM + $3)) --compression "$4" >"$tmp/$1.out" 2>&1 &
	lp=$!
	sleep "$WARM"
	c0=$(cpu_s)
	r1=$(rss_kb)
	sleep "$3"
	c1=$(cpu_s)
	wait "$lp" || { cat "$tmp/$1.out"; echo "load failed"; exit 3; }
	awk -v c0="$c0" -v c1="$c1" -v s="$3" -v ncpu="$(nproc)" -v r0="$RSS0" -v r1="$r1" -v n="$CONNS" '
		/^RPC round trip:/ { sub(/.*mean /, ""); mean = $1 + 0; p95 = $6 + 0;
			gsub(/[(),]/, ""); for (i = 1; i <= NF; i++) { if ($i == "RPCs") rpcs = $(i - 1);
			if ($i == "ops" && $(i + 1) != "failed") ops = $(i - 1) } }
		/^bytes on the wire:/ { gsub(/,/, ""); bytes = $6 + $8 }
		/^[a-z].* [0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ / { acts += $(NF - 6) }
		END { cpu = c1 - c0
			printf "ops_per_s=%.1f rpcs_per_s=%.1f actions_per_s=%.2f store_cpu_pct=%.2f ", ops / s, rpcs / s, acts / s, 100 * cpu / s / ncpu
			printf "cpu_us_per_op=%.1f bytes_per_op=%.1f rtt_mean_ms=%.3f rtt_p95_ms=%.3f ", ops ? 1e6 * cpu / ops : 0, ops ? bytes / ops : 0, mean, p95
			printf "bytes_per_idle_conn=%.0f online_cpus=%d\n", (r1 - r0) * 1024 / n, ncpu }' \
		"$tmp/$1.out" | tee "$tmp/$1.env"
}
RSS0=$(rss_kb)
run idle 0.001 5 on
run users "$(awk -v n="$CONNS" 'BEGIN { printf "%g", 8000 / n }')" "$SECS" on
run on "$(awk -v n="$CONNS" -v d="$PER_DAY" 'BEGIN { printf "%g", 140 * 28800 / (n * d) }')" "$SECS" on
run off "$(awk -v n="$CONNS" -v d="$PER_DAY" 'BEGIN { printf "%g", 140 * 28800 / (n * d) }')" "$SECS" off
run max 100000 10 on
kill -TERM "$pid"; wait "$pid" || true; pid=

f() { tr ' ' '\n' <"$tmp/$1.env" | sed -n "s/^$2=//p"; }
echo
echo "peer (same run): network bytes per operation, compression on / off:" \
	"$(f on bytes_per_op) / $(f off bytes_per_op) =" \
	"$(echo "$(f on bytes_per_op) $(f off bytes_per_op)" | awk '{ printf "%.2f", ($2 > 0 ? $1 / $2 : 0) }')"
echo "paced: $(f on ops_per_s) ops/s, $(f on cpu_us_per_op) us store CPU per operation," \
	"$(f on store_cpu_pct)% of $(f on online_cpus) CPUs, client RTT mean $(f on rtt_mean_ms) ms p95 $(f on rtt_p95_ms) ms"
echo "published reference (not measured here): 75% of 4 CPUs at 940 ops/s = 3192 us CPU per operation"
echo "max: $(f max ops_per_s) ops/s ($(f max rpcs_per_s) RPCs/s) at $(f max store_cpu_pct)% store CPU," \
	"$(f max cpu_us_per_op) us per operation"
echo "memory per idle logged-on connection: $(f idle bytes_per_idle_conn) bytes (goal < 16384)"
echo "HEADLINE: 8,000 scenario-1 users' load ($(f users actions_per_s) actions/s, $(f users ops_per_s) ops/s) over $CONNS connections:" \
	"store CPU $(f users store_cpu_pct)% of this machine (goal <= 5%), $(f users cpu_us_per_op) us per operation"
