#!/bin/bash
# bench/load-density.sh: how many scenario-1 (online) users one load-engine
# core drives at accel 1 while its event-loop lag p99 stays under 5 ms, and
# the load engine's memory per simulated user.
#
# One command: bench/load-density.sh [BUILD_DIR].  Initialises a data
# directory with MAX users (the smallest mailboxes init makes, about 0.9 MB
# each: mind the disk for large N_LIST), starts a real store on a random loopback
# port, then runs `mailbench load --threads 1 --accel 1` for each user
# count of N_LIST (ramp-up, then a steady window).  Per count it reports
# the loop-lag p99 (worst 1-s window of the steady part), the load
# engine's CPU and RSS, and memory per user from the RSS slope between
# counts; then the largest count again at accel 10 (ten times the action
# rate: what ten times as many users at accel 1 would ask of the loop).
# N_LIST, RAMP, STEADY, SCALE override the defaults.  The peer is the published LoadSim 2003 density (1,000 simulated
# users per client machine), printed as a ratio; the headline comes last.
# Raises the open-file limit (each user holds one connection, and the
# store holds the other end).  Not run by `make check`.
set -u
B=${1:-${MB_BUILDDIR:-.}}
MAILBENCH=${MAILBENCH:-$B/mailbench}
N_LIST=${N_LIST:-"1000 4000"}
RAMP=${RAMP:-20}
STEADY=${STEADY:-20}
SCALE=${SCALE:-0.0001}
LAG_MS=5
max=0
for n in $N_LIST; do [ "$n" -gt "$max" ] && max=$n; done

# each process (store, load engine) holds one descriptor per user
need=$((max + 1000))
ulimit -n "$need" 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$need" ]; then
	echo "load-density: the open-file limit $(ulimit -n) is below $need ($max users);" \
		"raise the hard limit (ulimit -Hn, as root) and rerun" >&2
	exit 2
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/mb-density.XXXXXX")
STORE_PID=
LOAD_PID=
cleanup() {
	[ -n "$LOAD_PID" ] && kill -KILL "$LOAD_PID" 2>/dev/null
	if [ -n "$STORE_PID" ]; then
		kill -TERM "$STORE_PID" 2>/dev/null
		sleep 1
		kill -KILL "$STORE_PID" 2>/dev/null
	fi
	rm -rf "$T"
}
trap cleanup EXIT
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

echo "load-density: initialising $max users (scale $SCALE) under $T ..." >&2
nice "$MAILBENCH" init -s online --users "$max" --scale "$SCALE" --data "$T/data" >"$T/init.log" 2>&1 \
	|| { cat "$T/init.log"; exit 3; }
for try in 1 2 3 4 5; do
	PORT=$((20000 + RANDOM % 30000))
	port_open "$PORT" && continue
	"$MAILBENCH" store --data "$T/data" --listen "127.0.0.1:$PORT" \
		--max-connections $((max + 100)) >"$T/store.log" 2>&1 &
	STORE_PID=$!
	for i in $(seq 1 100); do port_open "$PORT" && break; sleep 0.1; done
	port_open "$PORT" && break
	kill -KILL "$STORE_PID" 2>/dev/null; STORE_PID=
done
[ -n "$STORE_PID" ] || { echo "cannot start the store"; cat "$T/store.log"; exit 3; }


# measure N ACCEL: run the load engine on one core, the ramp left out of
# its summary (--warmup); sets lag (p99 ms), on, rss (bytes), cpu
measure() {
	local n=$1 accel=$2 total=$((RAMP + STEADY)) out="$T/load.$1.$2.out"
	"$MAILBENCH" load -s online --target "127.0.0.1:$PORT" --topology "$T/data/topology.json" \
		--users "$n" --accel "$accel" --threads 1 --ramp "$RAMP" --duration "$total" \
		--warmup "$((RAMP + 5))" >"$out" 2>&1 &
	LOAD_PID=$!
	wait "$LOAD_PID"
	LOAD_PID=
	local l
	l=$(grep "^load engine: loop lag" "$out")
	lag50=$(sed -n 's/.*p50 \([0-9.]*\) ms.*/\1/p' <<<"$l")
	lag=$(sed -n 's/.*p99 \([0-9.]*\) ms.*/\1/p' <<<"$l")
	lagmax=$(sed -n 's/.*max \([0-9.]*\) ms.*/\1/p' <<<"$l")
	cpu=$(sed -n 's/^load engine CPU: \([0-9.]*\)%.*/\1/p' "$out")
	rss=$(sed -n 's/^memory: RSS \([0-9.]*\) MiB.*/\1/p' "$out")
	rss=$(awk -v r="${rss:-0}" 'BEGIN{printf "%.0f", r*1048576}')
	on=$(sed -n 's/^users logged on at the end: \([0-9]*\) of.*/\1/p' "$out")
	failed=$(awk '/^[a-z].* [0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ / { f += $(NF-4) } END { print f + 0 }' "$out")
	printf "%8d %6s %10s %8s %8s %8s %14s %10s %10s %8s\n" "$n" "$accel" "${on:-0}" "${lag50:-n/a}" \
		"${lag:-n/a}" "${lagmax:-n/a}" "${cpu:-n/a}" \
		"$(awk -v r="$rss" 'BEGIN{printf "%.1f", r/1048576}')" \
		"$(awk -v r="$rss" -v n="$n" 'BEGIN{printf "%.0f", r/n}')" "$failed"
	[ -n "$lag" ] || lag=999999
}

echo "steady state after the ramp; loop lag in ms; CPU in % of one core"
printf "%8s %6s %10s %8s %8s %8s %14s %10s %10s %8s\n" users accel logged_on lag_p50 lag_p99 lag_max \
	cpu_%_of_core rss_mib rss/user failed
best=0
prev_n=0
prev_rss=0
slope=""
for n in $N_LIST; do
	measure "$n" 1
	ok=$(awk -v l="$lag" -v m="$LAG_MS" 'BEGIN{print (l < m) ? 1 : 0}')
	[ "$ok" = 1 ] && [ "${on:-0}" -ge $((n * 99 / 100)) ] && best=$n
	if [ "$prev_n" -gt 0 ]; then
		slope=$(awk -v a="$prev_rss" -v b="$rss" -v m="$prev_n" -v n="$n" 'BEGIN{printf "%.0f", (b-a)/(n-m)}')
	fi
	prev_n=$n
	prev_rss=$rss
	rss1=$rss
done
measure "$max" 10
echo
echo "memory per simulated user at $max users, accel 1: $(awk -v r="$rss1" -v n="$max" 'BEGIN{printf "%.0f", r/n}') bytes" \
	"(whole RSS / users: an upper bound, fixed buffers included; goal <= 8192)"
echo "RSS growth per added user between the last two counts: ${slope:-n/a} bytes (noisy: transient reply buffers)"
echo "at accel 10, $max users ask the loop for the actions of $((max * 10)) users at accel 1: loop lag p99 $lag ms"
echo "published peer: LoadSim 2003, 1,000 simulated users per client machine"
echo "ratio to the peer: $(awk -v b="$best" 'BEGIN{printf "%.1f", b/1000}') x (one core here vs one LoadSim client machine)"
echo "headline: $best scenario-1 users measured on one load-engine core at accel 1 with loop lag p99 < ${LAG_MS} ms (largest count tried: $max; goal 50,000)"
