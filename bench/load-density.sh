#!/bin/bash
# bench/load-density.sh: how many scenario-1 (online) users one load-engine
# core drives at accel 1, and what each costs in memory.
#
# One command: bench/load-density.sh [BUILD_DIR].  Two series, each user
# count a `mailbench load --threads 1 --accel 1` (one loop: one core) with
# a ramp, then a steady window that the summary keeps (--warmup: the ramp
# and 2 s more):
#   1. the null target (every step completes at once, no I/O: the engine
#      alone), NULL_LIST users (default up to 50,000), on accounts written
#      by `init --accounts-only` (no databases);
#   2. the embedded store, a real `mailbench store` on a random loopback
#      port initialised with max(STORE_LIST) users (smallest mailboxes,
#      about 0.9 MB each on disk; the pristine copy is removed), STORE_LIST
#      users (default up to 10,000: the store is one process, so a count
#      past its open-file limit is shown as n/a).
# Per count: users logged on at the end, the load engine's RSS, RSS per
# user (whole RSS / users: fixed buffers and the whole topology included)
# and RSS growth per added user since the previous count, loop lag
# p50/p99/max of the steady window, the engine's CPU (% of one core), and
# actions scheduled / done / failed / cut (scheduled = done + failed +
# cut).  Peers measured in the same run: beside every count, one null user
# in a process of its own over the same window (started once the engine's
# loop runs), whose loop lag p99 is the machine's own scheduling noise (the
# floor any loop sees here: x_floor is the ratio); and for each store
# count the null target at the same count (what the mbstore driver and
# the wire add per user).  The
# published LoadSim 2003 density (1,000 simulated users per client machine)
# is printed as published, not measured.  The headline comes last.
# NULL_LIST, STORE_LIST, RAMP, STEADY, SCALE override the defaults;
# ACCOUNTS=FILE reuses an accounts file of at least max(NULL_LIST) users
# (`init --accounts-only` takes about 2 minutes for 50,000 here).
# Not run by `make check` (tests/integration/load_density.sh bounds the
# memory per user at 5,000 null users).
set -u
B=${1:-${MB_BUILDDIR:-.}}
MAILBENCH=${MAILBENCH:-$B/mailbench}
NULL_LIST=${NULL_LIST:-"1000 5000 10000 20000 50000"}
STORE_LIST=${STORE_LIST:-"1000 5000 10000"}
RAMP=${RAMP:-20}
STEADY=${STEADY:-20}
SCALE=${SCALE:-0.0001}
LAG_MS=5
GOAL_BYTES=4096
FD_RESERVE=96 # the load process's own descriptors (src/load/dist.h)

maxof() { local m=0 n; for n in "$@"; do [ "$n" -gt "$m" ] && m=$n; done; echo "$m"; }
# shellcheck disable=SC2086 # the lists are words
max_null=$(maxof $NULL_LIST)
# shellcheck disable=SC2086
max_store=$(maxof $STORE_LIST)
ulimit -n "$(ulimit -Hn)" 2>/dev/null
fdlim=$(ulimit -n)
[ "$fdlim" = unlimited ] && fdlim=1048576
T=$(mktemp -d "${TMPDIR:-/tmp}/mb-density.XXXXXX")
STORE_PID=
LOAD_PID=
PROBE_PID=
cleanup() {
	[ -n "$LOAD_PID" ] && kill -KILL "$LOAD_PID" 2>/dev/null
	[ -n "$PROBE_PID" ] && kill -KILL "$PROBE_PID" 2>/dev/null
	if [ -n "$STORE_PID" ]; then
		kill -TERM "$STORE_PID" 2>/dev/null
		wait "$STORE_PID" 2>/dev/null
	fi
	rm -rf "$T"
}
trap cleanup EXIT
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# lagof FILE: a load summary's loop lag p99 (ms), or n/a
lagof() { sed -n 's/^load engine: loop lag.*p99 \([0-9.]*\) ms.*/\1/p' "$1" | grep . || echo n/a; }

# measure TARGET TOPOLOGY N: one load-engine core; sets on, rss, per,
# lag50, lag, lagmax, cpu, sched, dn, failed, cut; and floor: the loop lag
# p99 of one null user run beside it over the same window (started when
# the engine's loop thread is up, i.e. after the topology is read)
measure() {
	local target=$1 topo=$2 n=$3 out="$T/load.$RANDOM.out" pout="$T/probe.$RANDOM.out" k
	"$MAILBENCH" load -s online --target "$target" --topology "$topo" --users "$n" --accel 1 \
		--threads 1 --ramp "$RAMP" --duration $((RAMP + STEADY)) --warmup $((RAMP + 2)) \
		>"$out" 2>&1 &
	LOAD_PID=$!
	for k in $(seq 1 1200); do
		[ "$(find "/proc/$LOAD_PID/task" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)" -ge 2 ] && break
		kill -0 "$LOAD_PID" 2>/dev/null || break
		[ "$k" -gt 0 ] && sleep 0.1
	done
	"$MAILBENCH" load -s online --target null --topology "$T/probe/accounts.json" --users 1 --accel 1 \
		--threads 1 --ramp 0 --duration $((RAMP + STEADY)) --warmup $((RAMP + 2)) >"$pout" 2>&1 &
	PROBE_PID=$!
	wait "$LOAD_PID"
	LOAD_PID=
	wait "$PROBE_PID"
	PROBE_PID=
	floor=$(lagof "$pout")
	local l m
	l=$(grep "^load engine: loop lag" "$out")
	lag50=$(sed -n 's/.*p50 \([0-9.]*\) ms.*/\1/p' <<<"$l")
	lag=$(sed -n 's/.*p99 \([0-9.]*\) ms.*/\1/p' <<<"$l")
	lagmax=$(sed -n 's/.*max \([0-9.]*\) ms.*/\1/p' <<<"$l")
	cpu=$(sed -n 's/^load engine CPU: \([0-9.]*\)%.*/\1/p' "$out")
	m=$(grep '^memory: RSS' "$out")
	rss=$(sed -n 's/^memory: RSS \([0-9.]*\) MiB.*/\1/p' <<<"$m" | awk '{printf "%.0f", $1 * 1048576}')
	per=$(sed -n 's/.* \([0-9]*\) bytes per simulated user.*/\1/p' <<<"$m")
	on=$(sed -n 's/^users logged on at the end: \([0-9]*\) of.*/\1/p' "$out")
	# the action rows: label, scheduled, done, failed, late, cut, p50, p95, p99
	read -r sched dn failed cut < <(awk 'function i_(x) { return x ~ /^[0-9]+$/ }
		$1 ~ /^[a-z]/ && NF >= 9 && i_($(NF-7)) && i_($(NF-6)) && i_($(NF-5)) && i_($(NF-3)) {
		s += $(NF-7); d += $(NF-6); f += $(NF-5); c += $(NF-3) }
		END { print s + 0, d + 0, f + 0, c + 0 }' "$out")
	if [ -z "$lag" ] || [ -z "$rss" ]; then
		echo "load-density: no summary from the load engine ($target, $n users):" >&2
		tail -5 "$out" >&2
		lag=n/a lag50=n/a lagmax=n/a rss=0 per=n/a cpu=n/a on=0
	fi
}

# shellcheck disable=SC2059 # one format for the header and the rows
HDR="%-8s %7s %9s %8s %10s %11s %8s %8s %8s %9s %8s %7s %9s %9s %7s %6s\n"
# shellcheck disable=SC2059
header() {
	printf "$HDR" target users logged_on rss_mib bytes/user growth/user lag_p50 lag_p99 lag_max \
		floor_p99 x_floor cpu_% scheduled "done" failed cut
}
# shellcheck disable=SC2059
row() { # TARGET N GROWTH
	printf "$HDR" "$1" "$2" "${on:-0}" "$(awk -v r="$rss" 'BEGIN{printf "%.1f", r/1048576}')" \
		"${per:-n/a}" "$3" "${lag50:-n/a}" "${lag:-n/a}" "${lagmax:-n/a}" "${floor:-n/a}" \
		"$(ratio "$lag" "$floor")" "${cpu:-n/a}" \
		"${sched:-0}" "${dn:-0}" "${failed:-0}" "${cut:-0}"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{if (a != "n/a" && b != "n/a" && b > 0) printf "%.2f", a/b; else print "n/a"}'; }
growth() { # PREV_N PREV_RSS N RSS
	[ "$1" -gt 0 ] && awk -v a="$2" -v b="$4" -v m="$1" -v n="$3" 'BEGIN{printf "%.0f", (b-a)/(n-m)}' ||
		echo "-"
}

if [ -n "${ACCOUNTS:-}" ]; then # accounts of at least max(NULL_LIST) users from an earlier run
	mkdir -p "$T/acc" && cp "$ACCOUNTS" "$T/acc/accounts.json" || exit 2
else
	echo "load-density: accounts of $max_null users (no databases) ..." >&2
	"$MAILBENCH" init -s online --users "$max_null" --accounts-only --data "$T/acc" >"$T/acc.log" 2>&1 ||
		{ cat "$T/acc.log"; exit 3; }
fi

echo "one load-engine core (--threads 1), accel 1; steady window of ${STEADY} s after a ${RAMP} s ramp;"
echo "loop lag in ms; cpu in % of one core; actions of the steady window; open-file limit $fdlim"
"$MAILBENCH" init -s online --users 10 --accounts-only --data "$T/probe" >"$T/probe.log" 2>&1 ||
	{ cat "$T/probe.log"; exit 3; }
echo "floor_p99: the loop lag p99 of one null user run beside each count over the same window (the"
echo "machine's own scheduling noise, the floor any loop sees here: a peer measured in the same run)"

echo
echo "the null target (no I/O): the engine alone"
header
declare -A NPER NLAG
prev_n=0 prev_rss=0
for n in $NULL_LIST; do
	measure null "$T/acc/accounts.json" "$n"
	g=$(growth "$prev_n" "$prev_rss" "$n" "$rss")
	row null "$n" "$g"
	NPER[$n]=$per NLAG[$n]=$lag
	prev_n=$n prev_rss=$rss
	null_last_n=$n null_last_per=$per null_last_lag=$lag null_last_on=$on null_last_g=$g
	null_last_floor=$floor
	null_last_sched=$sched null_last_done=$dn null_last_cpu=$cpu
done

echo
store_best=0
if [ "$max_store" -gt 0 ]; then
	echo "load-density: initialising $max_store users (scale $SCALE) for the store ..." >&2
	nice "$MAILBENCH" init -s online --users "$max_store" --scale "$SCALE" --data "$T/data" \
		>"$T/init.log" 2>&1 || { tail -5 "$T/init.log"; exit 3; }
	rm -rf "$T/data/pristine" # the store runs on DATA; the copy only doubles the disk
	for _ in 1 2 3 4 5; do
		PORT=$((20000 + RANDOM % 30000))
		port_open "$PORT" && continue
		"$MAILBENCH" store --data "$T/data" --listen "127.0.0.1:$PORT" \
			--max-connections $((max_store + 100)) >"$T/store.log" 2>&1 &
		STORE_PID=$!
		for _ in $(seq 1 100); do port_open "$PORT" && break; sleep 0.1; done
		port_open "$PORT" && break
		kill -KILL "$STORE_PID" 2>/dev/null
		STORE_PID=
	done
	[ -n "$STORE_PID" ] || { echo "cannot start the store"; cat "$T/store.log"; exit 3; }
	echo "the embedded store (mbstore driver over loopback TCP, a real store), and its peer: the null"
	echo "target at the same count (ratios: store / null)"
	header
	prev_n=0 prev_rss=0
	for n in $STORE_LIST; do
		if [ $((n + FD_RESERVE)) -gt "$fdlim" ]; then
			printf "%-8s %7s n/a: %d connections exceed one process's open-file limit %s (the store is one process)\n" \
				mbstore "$n" "$n" "$fdlim"
			continue
		fi
		measure "mbstore:127.0.0.1:$PORT" "$T/data/topology.json" "$n"
		g=$(growth "$prev_n" "$prev_rss" "$n" "$rss")
		row mbstore "$n" "$g"
		prev_n=$n prev_rss=$rss
		sp=$per sl=$lag son=$on sfl=$floor
		st_sched=$sched st_done=$dn st_cpu=$cpu st_g=$g
		if [ -n "${NPER[$n]:-}" ]; then
			np=${NPER[$n]} nl=${NLAG[$n]}
		else
			measure null "$T/acc/accounts.json" "$n"
			np=$per nl=$lag
			row null "$n" -
		fi
		printf "%-8s %7s memory per user %sx, loop lag p99 %sx of the null target's\n" ratio "$n" \
			"$(ratio "$sp" "$np")" "$(ratio "$sl" "$nl")"
		ok=$(awk -v l="$sl" -v m="$LAG_MS" 'BEGIN{print (l != "n/a" && l + 0 < m) ? 1 : 0}')
		[ "$ok" = 1 ] && [ "${son:-0}" -ge $((n * 99 / 100)) ] && store_best=$n
		store_last_n=$n store_last_per=$sp store_last_lag=$sl store_last_g=$st_g store_last_floor=$sfl
		store_last_sched=$st_sched store_last_done=$st_done store_last_cpu=$st_cpu
	done
fi

echo
echo "published peer (not measured here): LoadSim 2003, 1,000 simulated users per client machine"
if [ -n "${store_last_n:-}" ]; then
	echo "embedded store: $store_last_n users on one core: $store_last_per bytes per user (growth" \
		"$store_last_g per added user), loop lag p99 $store_last_lag ms" \
		"($(ratio "$store_last_lag" "$store_last_floor")x the floor beside it, $store_last_floor ms)," \
		"CPU $store_last_cpu% of a core, actions scheduled $store_last_sched / done $store_last_done;" \
		"largest count with lag p99 < $LAG_MS ms and 99% logged on: $store_best" \
		"($(awk -v b="$store_best" 'BEGIN{printf "%.1f", b/1000}')x LoadSim's published client)"
fi
null_ok=$(awk -v l="$null_last_lag" -v m="$LAG_MS" -v p="$null_last_per" -v g="$GOAL_BYTES" \
	'BEGIN{print (l != "n/a" && l + 0 < m && p + 0 <= g) ? "meets" : "misses"}')
echo "headline: $null_last_n null-target users on one load-engine core at accel 1 ($null_last_on logged on):" \
	"$null_last_per bytes per user (RSS / users; growth $null_last_g per added user), loop lag p99" \
	"$null_last_lag ms ($(ratio "$null_last_lag" "$null_last_floor")x the floor beside it, $null_last_floor ms)," \
	"CPU $null_last_cpu% of a core, actions scheduled $null_last_sched / done" \
	"$null_last_done; $null_ok the goal (< $GOAL_BYTES bytes per user, lag p99 < $LAG_MS ms)"
