#!/bin/bash
# tests/integration/mpi_load.sh: the load engine on Open MPI, on one
# machine (ranks on localhost, loopback only), against a real store:
#  1. the per-user-day counts of a 3-rank job (mpirun -n 3 load --mpi)
#     match one process driving the same users with the same seed;
#  2. `mailbench run --load-hosts hosts.txt --load-procs 3 --ack-log`
#     runs end to end: one table, the JSON lists the 3 ranks and their
#     slices, `check --ack-log` finds nothing lost;
#  3. killing one rank fails the run naming that rank, and no process
#     (mpirun, ranks, store) is left.
# Skips (77) without mpirun or without an MPI build.  About a minute and a half.
set -u
MAILBENCH=${MAILBENCH:-./mailbench}
B=${MB_BUILDDIR:-.}
T=$(mktemp -d "${TMPDIR:-/tmp}/mb-mpi.XXXXXX")
LOAD_PID=
RUN_PID=
. "$(dirname "$0")/load_lib.sh"
. "$(dirname "$0")/mpi_lib.sh"
cleanup() {
	[ -n "$RUN_PID" ] && kill -TERM "$RUN_PID" 2>/dev/null && wait "$RUN_PID" 2>/dev/null
	load_cleanup
}
trap cleanup EXIT
load_need
mpi_need "$B/tests/unit/test_mpi"
fail() { echo "FAIL: $*"; for f in "$T"/*.err "$T"/*.out; do [ -f "$f" ] && { echo "--- $f"; tail -30 "$f"; }; done; exit 1; }
# the JSON field of a file: jfield FILE PYTHON-EXPR (j is the document)
jfield() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }

timeout 120 "$MAILBENCH" init -s online --users 24 --scale 0.02 --data "$T/data" >"$T/init.out" 2>&1 \
	|| fail "init"

# ---- 1. three ranks against one process, same users and seed
store_start "$T/data" || fail "store start"
# 4 simulated user-days: messages sent per user-day is a count of about
# 180 messages whose draws part ways with the timing (replies and
# forwards answer the mail that has arrived), so two runs of one seed
# differ like two samples: at 1 user-day (accel 150, 8 s) by up to 30%
# on a loaded machine, at 4 by up to 12% in 16 tries here
common=(-s online --target "127.0.0.1:$STORE_PORT" --topology "$T/data/topology.json" --users 24
	--accel 300 --duration 16 --ramp 0.5 --threads 1 --seed 7)
timeout 60 "$MAILBENCH" load "${common[@]}" >"$T/one.out" 2>"$T/one.err" || fail "one process"
# shellcheck disable=SC2086
timeout 90 mpirun $MPIRUN_ARGS -n 3 "$MAILBENCH" load --mpi "${common[@]}" >"$T/three.out" 2>"$T/three.err" \
	|| fail "mpirun -n 3 load --mpi"
for r in 0 1 2; do
	grep -q "rank $r of 3 on .*users" "$T/three.err" || fail "rank $r did not report its slice"
done
{ grep -q "users 0-7 (8 users)" "$T/three.err" && grep -q "users 16-23 (8 users)" "$T/three.err"; } \
	|| fail "slices not balanced contiguous thirds"
grep -q "3 MPI ranks" "$T/three.out" || fail "no merged summary from rank 0"
[ "$(grep -c '^mailbench load:' "$T/three.out")" = 1 ] || fail "more than one summary"
# per-user-day counts: every action scheduled, and messages sent per user-day
python3 - "$T/one.out" "$T/three.out" <<'PY' || fail "3 ranks differ from one process"
import re, sys
def read(p):
    t = open(p).read()
    acts = {m.group(1).strip(): int(m.group(2)) for m in
            re.finditer(r'^([a-z/ ]+?)\s+(\d+)\s+\d+\s+\d+\s+\d+\s+\d+\s', t, re.M)}
    days = float(re.search(r'([\d.]+) simulated user-days', t).group(1))
    sent = float(re.search(r'sent ([\d.]+) \(scenario', t).group(1))
    # simulated time follows the run's wall time (three ranks start later
    # and may run longer on a loaded machine): user-days are compared per second
    secs = float(re.search(r', ([\d.]+) s, ', t).group(1))
    return acts, days, sent, days / secs
a1, d1, s1, r1 = read(sys.argv[1]); a3, d3, s3, r3 = read(sys.argv[2])
print("one process: %.2f user-days, sent %.2f/user-day; 3 ranks: %.2f user-days, sent %.2f/user-day" % (d1, s1, d3, s3))
tot1, tot3 = sum(a1.values()) / d1, sum(a3.values()) / d3
print("scheduled actions per user-day: one %.1f, 3 ranks %.1f" % (tot1, tot3))
ok = abs(r1 - r3) / r1 < 0.15 and abs(tot1 - tot3) / tot1 < 0.2 and abs(s1 - s3) / max(s1, 1) < 0.3
sys.exit(0 if ok else 1)
PY
store_stop

# ---- 2. the supervisor launches the job: end to end
echo "localhost slots=3" >"$T/hosts.txt"
rm -rf "$T/data/runs"
timeout 150 "$MAILBENCH" run -s online --users 24 --scale 0.02 --accel 60 --duration 10 --warmup 3 \
	--data "$T/data" --load-hosts "$T/hosts.txt" --load-procs 3 --ack-log "$T/ack.log" \
	--json "$T/run.json" >"$T/run.out" 2>"$T/run.err"
rc=$?
[ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "run --load-hosts exited $rc"
[ "$(grep -c '^users ' "$T/run.out")" = 1 ] || fail "not one table"
grep -q "load: 3 ranks on localhost" "$T/run.out" || fail "the result does not name the load hosts and ranks"
[ "$(jfield "$T/run.json" "j['load']['ranks']")" = 3 ] || fail "JSON: load.ranks"
[ "$(jfield "$T/run.json" "' '.join('%d-%d' % (s['first'], s['last']) for s in j['load']['slices'])")" = "0-7 8-15 16-23" ] \
	|| fail "JSON: the slices"
[ "$(jfield "$T/run.json" "j['header']['load']")" = "3 ranks on localhost" ] || fail "JSON header: load"
[ -s "$T/ack.log" ] || fail "no merged ack log"
"$MAILBENCH" check --data "$T/data" --ack-log "$T/ack.log" >"$T/check.out" 2>"$T/check.err" \
	|| fail "check --ack-log: $(tail -1 "$T/check.out")"
grep -q " 0 lost, 0 resurrected" "$T/check.out" || fail "check: $(cat "$T/check.out")"

# ---- 3. a rank dies: the run fails naming it, nothing is left behind
timeout 120 "$MAILBENCH" run -s online --users 24 --scale 0.02 --accel 60 --duration 60 --warmup 2 \
	--data "$T/data" --load-hosts "$T/hosts.txt" --load-procs 3 --no-save \
	>"$T/kill.out" 2>"$T/kill.err" &
RUN_PID=$!
mpirun_pid=
ranks=
sup=
for _ in $(seq 1 200); do
	[ -n "$sup" ] || sup=$(pgrep -P "$RUN_PID" | head -1) # the run, under timeout
	[ -n "$sup" ] && mpirun_pid=$(pgrep -P "$sup" -f "mpirun --hostfile" | head -1)
	[ -n "$mpirun_pid" ] && ranks=$(pgrep -P "$mpirun_pid" | tr '\n' ' ')
	[ "$(echo "$ranks" | wc -w)" = 3 ] && break
	sleep 0.1
done
[ "$(echo "$ranks" | wc -w)" = 3 ] || fail "the run did not start 3 ranks"
store_pid=$(pgrep -P "$sup" | grep -v "^$mpirun_pid\$" | head -1)
sleep 4 # a few windows: the ranks' slices are known
victim=$(echo "$ranks" | awk '{print $2}')
kill -KILL "$victim"
wait "$RUN_PID"
rc=$?
RUN_PID=
[ "$rc" = 3 ] || fail "a killed rank: run exited $rc, expected 3"
grep -q "load rank [0-2] (.*pid $victim, users [0-9]*-[0-9]*) exited on signal 9" "$T/kill.out" "$T/kill.err" \
	|| fail "the failure does not name the killed rank (pid $victim)"
alive() { kill -0 "$1" 2>/dev/null && ! grep -q zombie "/proc/$1/status" 2>/dev/null; }
for p in $sup $mpirun_pid $ranks $store_pid; do
	# a rank's exit can take seconds (an ASan build checks for leaks)
	for _ in $(seq 100); do alive "$p" || break; sleep 0.1; done
	if alive "$p"; then
		fail "process $p survived the run"
	fi
done
echo "ok: 3 ranks match one process; run --load-hosts end to end, 0 lost; a killed rank named, nothing left"
