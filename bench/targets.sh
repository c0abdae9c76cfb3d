#!/bin/bash
# bench/targets.sh: the same scenario against mailbench's embedded store and
# against the Dovecot + Postfix lab, side by side: server CPU seconds per
# 1,000 user actions, deliveries per server CPU-second, the LoadSim score
# (weighted p95 action time) and the RPC/command round-trip percentiles, and
# last one line with the ratios (lab / embedded).
#
# One command, as root, from the build directory after `make`:
#   bench/targets.sh [BUILD_DIR]
# SCENARIO (online), USERS (20), SCALE (0.1), ACCEL (100), DURATION (60)
# override the defaults.  Server CPU is read from /proc: the store process;
# for the lab every Dovecot and Postfix process (the masters' own and their
# reaped children's time, plus every live descendant), sampled before and
# after the load run.  Deliveries are the load engine's received messages
# (per recipient mailbox).  Needs dovecot-imapd, dovecot-lmtpd, postfix and
# jq.  Not run by `make check`.
set -u
B=${1:-${MB_BUILDDIR:-.}}
MAILBENCH=${MAILBENCH:-$B/mailbench}
SCENARIO=${SCENARIO:-online}
USERS=${USERS:-20}
SCALE=${SCALE:-0.1}
ACCEL=${ACCEL:-100}
DURATION=${DURATION:-60}
PATH=$PATH:/usr/sbin:/sbin
for c in dovecot postfix jq; do
	command -v "$c" >/dev/null 2>&1 || { echo "targets.sh: $c not installed"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "targets.sh: the lab needs root"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/mb-targets.XXXXXX")
chmod 755 "$T"
store_pid=
lab_pid=
cleanup() {
	[ -n "$store_pid" ] && kill -TERM "$store_pid" 2>/dev/null
	[ -n "$lab_pid" ] && kill -TERM "$lab_pid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
tick=$(getconf CLK_TCK)

# cpu_of PID...: CPU seconds of the processes and of their descendants
cpu_of() {
	local roots="$*" all p
	all=$roots
	# descendants: repeat until none is new
	for _ in 1 2 3 4 5; do
		for p in /proc/[0-9]*; do
			p=${p#/proc/}
			case " $all " in *" $p "*) continue ;; esac
			pp=$(awk '{sub(/.*\) /, ""); print $2}' "/proc/$p/stat" 2>/dev/null) || continue
			case " $all " in *" $pp "*) all="$all $p" ;; esac
		done
	done
	local sum=0
	for p in $all; do
		# utime stime cutime cstime (fields 14-17); cutime/cstime only of
		# the roots (their reaped children), live descendants by their own
		local f
		f=$(awk '{sub(/.*\) /, ""); print $12, $13, $14, $15}' "/proc/$p/stat" 2>/dev/null) || continue
		# shellcheck disable=SC2086
		set -- $f
		case " $roots " in
		*" $p "*) sum=$((sum + $1 + $2 + $3 + $4)) ;;
		*) sum=$((sum + $1 + $2)) ;;
		esac
	done
	echo "$sum"
}

# run_load NAME TARGET-ARGS...: the load run; prints its summary into $T/NAME.out
run_load() {
	local name=$1
	shift
	timeout $((DURATION * 3 + 120)) "$MAILBENCH" load -s "$SCENARIO" --users "$USERS" --accel "$ACCEL" \
		--duration "$DURATION" --ramp 2 "$@" >"$T/$name.out" 2>"$T/$name.err" || {
		echo "targets.sh: $name load run failed:"
		tail -5 "$T/$name.err"
		exit 3
	}
}

# figures NAME CPU_TICKS: one row
figures() {
	local name=$1 ticks=$2 f=$T/$1.out
	local actions udays rcv score p50 p95 p99
	actions=$(awk '/^action /{on=1; next} on && NF>=9 && $(NF-7) ~ /^[0-9]+$/ {s+=$(NF-7)} /^LoadSim/{on=0} END{print s+0}' "$f")
	udays=$(sed -n 's/.*, \([0-9.]*\) simulated user-days.*/\1/p' "$f")
	rcv=$(sed -n 's/.*received \([0-9.]*\) (scenario.*/\1/p' "$f")
	score=$(sed -n 's/^LoadSim score (weighted p95): \([0-9.]*\) ms.*/\1/p' "$f")
	p50=$(sed -n 's/^RPC round trip: .*p50 \([0-9.]*\),.*/\1/p' "$f")
	p95=$(sed -n 's/^RPC round trip: .*p95 \([0-9.]*\),.*/\1/p' "$f")
	p99=$(sed -n 's/^RPC round trip: .*p99 \([0-9.]*\) ms.*/\1/p' "$f")
	awk -v n="$name" -v t="$ticks" -v hz="$tick" -v a="$actions" -v u="$udays" -v r="$rcv" \
		-v s="$score" -v p50="$p50" -v p95="$p95" -v p99="$p99" 'BEGIN {
		cpu = t / hz; del = r * u;
		printf "%-9s %8.2f %10d %12.3f %10.1f %9.1f %8.2f %8.2f %8.2f\n", n, cpu, a,
			a ? cpu / a * 1000 : 0, cpu ? del / cpu : 0, s, p50, p95, p99
		printf "%s %f %f %f\n", n, a ? cpu / a * 1000 : 0, cpu ? del / cpu : 0, s > "/dev/stderr"
	}' 2>>"$T/rows"
}

echo "targets.sh: $SCENARIO, $USERS users, scale $SCALE, accel $ACCEL, ${DURATION}s per target"

# ---- embedded store
"$MAILBENCH" init -s "$SCENARIO" --users "$USERS" --scale "$SCALE" --data "$T/store" >"$T/init-store.out" 2>&1 ||
	{ echo "targets.sh: init failed"; exit 3; }
port=
for _ in 1 2 3 4 5 6 7 8; do
	port=$((20000 + RANDOM % 30000))
	(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
	"$MAILBENCH" store --data "$T/store" --listen "127.0.0.1:$port" >"$T/store.log" 2>&1 &
	store_pid=$!
	for _ in $(seq 1 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break 2
		sleep 0.1
	done
	kill -9 "$store_pid" 2>/dev/null
	store_pid=
done
[ -n "$store_pid" ] || { echo "targets.sh: the store did not start"; exit 3; }
c0=$(cpu_of "$store_pid")
run_load embedded --target "127.0.0.1:$port" --topology "$T/store/topology.json"
c1=$(cpu_of "$store_pid")
kill -TERM "$store_pid"
wait "$store_pid" 2>/dev/null
store_pid=

# ---- the Dovecot + Postfix lab
"$MAILBENCH" lab dovecot --data "$T/lab" --users "$USERS" -s "$SCENARIO" >"$T/lab.out" 2>&1 &
lab_pid=$!
for _ in $(seq 1 300); do [ -f "$T/lab/lab.env" ] && break; sleep 0.1; done
[ -f "$T/lab/lab.env" ] || { echo "targets.sh: the lab did not start"; cat "$T/lab.out"; exit 3; }
# shellcheck disable=SC1091
. "$T/lab/lab.env"
"$MAILBENCH" init --target "$MB_LAB_IMAP" --data "$T/lab" -s "$SCENARIO" --scale "$SCALE" \
	>"$T/init-lab.out" 2>&1 || { echo "targets.sh: init over IMAP failed"; exit 3; }
d0=$(cpu_of "$MB_LAB_DOVECOT_PID" "$MB_LAB_POSTFIX_PID")
run_load dovecot --target "$MB_LAB_IMAP" --submit "$MB_LAB_SMTP" --topology "$T/lab/accounts.json"
d1=$(cpu_of "$MB_LAB_DOVECOT_PID" "$MB_LAB_POSTFIX_PID")
login=$MB_LAB_LOGIN_MODE

echo
echo "server CPU from /proc; dovecot = Dovecot + Postfix processes (login processes: $login)"
printf "%-9s %8s %10s %12s %10s %9s %8s %8s %8s\n" target "cpu s" actions "cpu s/1k act" "dlv/cpu s" \
	"score ms" "p50 ms" "p95 ms" "p99 ms"
figures embedded $((c1 - c0))
figures dovecot $((d1 - d0))
awk '{v[$1, 1] = $2; v[$1, 2] = $3; v[$1, 3] = $4}
	END {
		r1 = v["embedded", 1] ? v["dovecot", 1] / v["embedded", 1] : 0
		r2 = v["embedded", 2] ? v["dovecot", 2] / v["embedded", 2] : 0
		r3 = v["embedded", 3] ? v["dovecot", 3] / v["embedded", 3] : 0
		printf "ratios dovecot/embedded: server CPU per 1,000 actions %.2fx, deliveries per server CPU-second %.2fx, score %.2fx\n", r1, r2, r3
	}' "$T/rows"
