#!/bin/bash
# tests/integration/crash_ack.sh: no acknowledged write is lost when the
# store is killed.  A tiny data directory, a real store on a random
# loopback port, the load engine at high acceleration writing an ack log;
# the store is SIGKILLed mid-load and restarted on the same port (the load
# engine reconnects with backoff), the load is stopped, and
# `mailbench check --ack-log` must find every acknowledged create that was
# not deleted, and no acknowledged delete, and its content check no
# inconsistent body, attachment or single-instance count.  Each step waits
# for its event (acks before the kill, the store listening again, acks
# after it), bounded by generous limits, never for a fixed time; on
# failure the logs are printed.
set -u
MAILBENCH=${MAILBENCH:-./mailbench}
T=$(mktemp -d "${TMPDIR:-/tmp}/mb-crash.XXXXXX")
LOAD_PID=
. "$(dirname "$0")/load_lib.sh"
trap load_cleanup EXIT
load_need
fail() {
	echo "FAIL: $*"
	for f in store.log load.out load.err check.out; do
		[ -f "$T/$f" ] && { echo "--- $f"; tail -30 "$T/$f"; }
	done
	exit 1
}
# acknowledged creates in the ack log so far
acks() {
	local c
	c=$(grep -c '^+' "$T/ack.log" 2>/dev/null)
	echo "${c:-0}"
}

timeout 120 "$MAILBENCH" init -s online --users 16 --scale 0.02 --data "$T/data" >"$T/init.log" 2>&1 \
	|| { cat "$T/init.log"; fail "init"; }
store_start "$T/data" || fail "store start"
port=$STORE_PORT

# heavy on writes: sends (deliveries), inbox passes (moves, hard deletes),
# appointments and contacts
cat >"$T/lab-crash.cfg" <<CFG
base = "online";
actions_per_day = {
	send_mail = 600; process_inbox = 600; browse_mail = 50; check_free_busy = 0;
	request_meeting = 100; make_appointment = 300; browse_calendar = 0;
	journal_applications = 0; logoff = 0; browse_contacts = 0; create_contact = 300;
};
CFG
timeout 900 "$MAILBENCH" load -s "$T/lab-crash.cfg" --target "127.0.0.1:$port" \
	--topology "$T/data/topology.json" --users 16 --accel 40 --duration 600 --ramp 0.5 \
	--threads 2 --ack-log "$T/ack.log" >"$T/load.out" 2>"$T/load.err" &
LOAD_PID=$!
# 100 acknowledged creates (up to 60 s on a loaded machine)
n=0
while [ "$(acks)" -lt 100 ] && [ "$n" -lt 600 ]; do
	kill -0 "$LOAD_PID" 2>/dev/null || fail "load died"
	sleep 0.1
	n=$((n + 1))
done
[ "$(acks)" -gt 0 ] || fail "no acknowledged creates before the crash"
store_kill
before=$(acks) # none can come while the store is down
sleep 1
# restart on the same port: recovery, then the load engine reconnects
for _ in $(seq 1 50); do
	"$MB_STORE_BIN" store --data "$T/data" --listen "127.0.0.1:$port" >>"$T/store.log" 2>&1 &
	STORE_PID=$!
	# recovery may take long on a loaded machine: wait while it lives
	for _ in $(seq 1 600); do
		port_open "$port" && break 2
		kill -0 "$STORE_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$STORE_PID" 2>/dev/null
	wait "$STORE_PID" 2>/dev/null
	STORE_PID=
	sleep 0.2
done
[ -n "$STORE_PID" ] || fail "store restart"
# 100 new acknowledged creates: the load engine reconnected (its backoff
# reaches 10 s between tries; up to 90 s)
n=0
while [ "$(acks)" -lt $((before + 100)) ] && [ "$n" -lt 900 ]; do
	kill -0 "$LOAD_PID" 2>/dev/null || fail "load died after the restart"
	sleep 0.1
	n=$((n + 1))
done
kill -TERM "$LOAD_PID"
timeout 60 tail --pid="$LOAD_PID" -f /dev/null
wait "$LOAD_PID"
rc=$?
LOAD_PID=
cat "$T/load.out"
[ "$rc" -eq 0 ] || fail "load exited $rc"
grep -q "lost [1-9]" "$T/load.out" || fail "the load engine did not see the connections drop"
grep -q "reconnects [1-9]" "$T/load.out" || fail "the load engine did not reconnect"
after=$(acks)
[ "$after" -gt "$before" ] || fail "no acknowledged creates after the restart"
store_stop
timeout 120 "$MAILBENCH" check --data "$T/data" --ack-log "$T/ack.log" >"$T/check.out" 2>&1
rc=$?
cat "$T/check.out"
[ "$rc" -eq 0 ] || fail "check --ack-log exited $rc"
# the store's content after the SIGKILL: every body, attachment and
# single-instance count consistent (how many deliveries shared their
# content depends on the run; test_schema proves the sharing)
grep -q "single-instance contents): 0 problem(s)" "$T/check.out" \
	|| fail "content check: problems, or it did not run"
# the ack check needs the topology: without topology.json it is bad
# input (exit 2), named
mv "$T/data/topology.json" "$T/topology.json"
timeout 120 "$MAILBENCH" check --data "$T/data" --ack-log "$T/ack.log" >"$T/check2.out" 2>&1
rc=$?
mv "$T/topology.json" "$T/data/topology.json"
[ "$rc" -eq 2 ] || fail "check --ack-log without topology.json exited $rc (want 2)"
grep -q "topology.json: no such file" "$T/check2.out" || fail "no topology.json: $(cat "$T/check2.out")"
echo "ok: $after acknowledged creates, $(grep -c '^-' "$T/ack.log") deletes verified after a SIGKILL"
