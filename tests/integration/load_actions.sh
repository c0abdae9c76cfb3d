#!/bin/bash
# tests/integration/load_actions.sh: every user action of the load engine
# runs its RPC sequence against a real store (tiny data directory, random
# loopback port) and completes without failure, in online mode; then
# cached mode: the full download at logon, incremental syncs on new-mail
# notifications and on the timer, local reads, uploads.  In both modes
# every scheduled action is accounted for (done, failed or cut short at
# the stop), logoffs included.  Bounded: each run
# lasts a few seconds; the whole test well under a minute.
set -u
MAILBENCH=${MAILBENCH:-./mailbench}
T=$(mktemp -d "${TMPDIR:-/tmp}/mb-load.XXXXXX")
. "$(dirname "$0")/load_lib.sh"
trap load_cleanup EXIT
load_need
fail() {
	echo "FAIL: $*"
	for f in "$T"/*.err; do [ -s "$f" ] && { echo "--- $f"; tail -20 "$f"; }; done
	echo "--- store log"
	tail -20 "$T/store.log"
	exit 1
}

# run_load MODE THREADS: the load engine with $T/lab-MODE.cfg, 12 users for
# 8 s at 50x; its summary in $T/MODE.out (printed), and it must exit 0
run_load() {
	timeout 60 "$MAILBENCH" load -s "$T/lab-$1.cfg" --target "127.0.0.1:$STORE_PORT" \
		--topology "$T/data/topology.json" --users 12 --accel 50 --duration 8 --ramp 1 \
		--threads "$2" --ack-log "$T/ack.log" >"$T/$1.out" 2>"$T/$1.err"
	local rc=$?
	[ "$rc" -eq 0 ] || { cat "$T/$1.out" "$T/$1.err"; fail "load $1 exited $rc"; }
	cat "$T/$1.out"
}

# expect_done MODE ACTION...: in $T/MODE.out every ACTION was done, none
# failed but by overrun: an arrival that found MB_PEND_MAX actions of its
# user waiting, which a logged-off period (exponential, two simulated
# minutes on average: 2.4 s at x50) longer than about 8 s brings at these
# rates now and then; it is an accounted outcome of the schedule, not of
# the RPC sequences under test
expect_done() {
	local mode=$1 a over
	shift
	over=$(sed -n 's/^failed actions by cause: overrun \([0-9]*\) ([^;]*$/\1/p' "$T/$mode.out")
	for a in "$@"; do
		# shellcheck disable=SC2046 # split into the row\'s numbers
		set -- $(row "$a" "$T/$mode.out")
		[ $# -eq 3 ] || fail "no row for '$a'"
		[ "$2" -gt 0 ] || fail "$mode '$a': none done ($*)"
		[ "$3" -eq 0 ] || [ "$3" -le "${over:-0}" ] || fail "$mode '$a': $3 failed"
	done
}

# expect_accounted MODE: in $T/MODE.out every scheduled action was done,
# failed or cut short by the stop, exactly once (an exact identity of the
# counts: nothing is dropped silently, e.g. while a user is logged off);
# the row is "label... scheduled done failed late cut p50 p95 p99"
expect_accounted() {
	awk '/^action /{on=1; next} /^LoadSim score/{on=0}
	     on && NF >= 9 && $(NF-7) ~ /^[0-9]+$/ { s=$(NF-7); d=$(NF-6); f=$(NF-5); c=$(NF-3); n++
		  if (s != d + f + c) { print "unaccounted: " $0; bad=1 } }
	     END { exit (bad || n == 0) }' "$T/$1.out" || fail "$1: actions not accounted for"
}

# bad input: a clear error and exit code 2, before anything starts
"$MAILBENCH" load -s online --target nowhere --topology /nonexistent >/dev/null 2>"$T/err"
{ [ $? -eq 2 ] && grep -q -- "--target" "$T/err"; } || fail "bad --target: not exit 2"
"$MAILBENCH" load -s online --target 127.0.0.1:1 --topology /nonexistent >/dev/null 2>"$T/err"
{ [ $? -eq 2 ] && grep -q "nonexistent" "$T/err"; } || fail "unreadable topology: not exit 2"
"$MAILBENCH" load -s online --target 127.0.0.1:1 --topology x --accel -1 >/dev/null 2>"$T/err"
{ [ $? -eq 2 ] && grep -q -- "--accel" "$T/err"; } || fail "bad --accel: not exit 2"

timeout 120 "$MAILBENCH" init -s online --users 12 --scale 0.02 --data "$T/data" >"$T/init.log" 2>&1 \
	|| { cat "$T/init.log"; fail "init"; }
store_start "$T/data" || fail "store start"

# every action at a high rate (per 8-hour day), all in one run; logoff
# less often, so that arrivals while logged off fit the pending queue
cat >"$T/lab-online.cfg" <<CFG
base = "online";
actions_per_day = {
	send_mail = 100; process_inbox = 100; browse_mail = 100; check_free_busy = 100;
	request_meeting = 100; make_appointment = 100; browse_calendar = 100;
	journal_applications = 100; logoff = 40; browse_contacts = 100; create_contact = 100;
};
CFG
run_load online 2
expect_done online "send mail" "process inbox" "browse mail" "check free/busy" \
	"request meeting" "make appointment" "browse calendar" "journal applications" "logoff" \
	"browse contacts" "create contact"
expect_accounted online
grep -q "messages per user-day: sent" "$T/online.out" || fail "no sent/received figures"
grep -q " 0 ops failed)" "$T/online.out" || fail "online: operations failed"
grep -q "^+ " "$T/ack.log" || fail "ack log has no creates"
grep -q "^- " "$T/ack.log" || fail "ack log has no deletes"

# cached mode: mail flows (send + process inbox), so notifications and
# syncs happen; browse calendar and contacts are local
cat >"$T/lab-cached.cfg" <<CFG
base = "cached";
actions_per_day = {
	send_mail = 100; process_inbox = 100; browse_mail = 0; check_free_busy = 60;
	request_meeting = 60; make_appointment = 60; browse_calendar = 100;
	journal_applications = 0; logoff = 40; browse_contacts = 100; create_contact = 60;
};
CFG
run_load cached 1
expect_done cached "send mail" "process inbox" "check free/busy" "request meeting" \
	"make appointment" "browse calendar" "logoff" "browse contacts" "create contact"
expect_accounted cached
grep -q " 0 ops failed)" "$T/cached.out" || fail "cached: operations failed"
line=$(grep "^cached mode:" "$T/cached.out") || fail "no cached-mode line"
# shellcheck disable=SC2046 # split into the row\'s numbers
set -- $(echo "$line" | tr -c '0-9\n' ' ')
# syncs, items, local reads, notifications
[ "$1" -gt 0 ] || fail "no syncs"
[ "$2" -gt 0 ] || fail "no items synced (full download at logon)"
[ "$3" -gt 0 ] || fail "no local reads"
[ "$4" -gt 0 ] || fail "no new-mail notifications"

# the null target: the same engine without I/O; a user range runs its
# slice (logons = its users); the accounts file init wrote serves as well
# (no logoff there, so each user logs on once; at accel 1000 every action
# arrives several times in 3 s whatever the seed's schedule)
cat >"$T/lab-null.cfg" <<CFG
base = "$T/lab-online.cfg";
actions_per_day = { logoff = 0; };
CFG
timeout 60 "$MAILBENCH" load -s "$T/lab-null.cfg" --target null --topology "$T/data/accounts.json" \
	--users 12 --user-range 4-7 --accel 1000 --duration 3 --ramp 0 >"$T/null.out" 2>&1 \
	|| { cat "$T/null.out"; fail "load --target null"; }
grep -q "(users 4-7 of 12), target null" "$T/null.out" || { cat "$T/null.out"; fail "null: no range"; }
grep -q "logons 4," "$T/null.out" || { cat "$T/null.out"; fail "null: not 4 logons"; }
expect_done null "send mail" "process inbox" "browse mail"
# bad targets and ranges: exit 2 naming the flag, before anything starts
for bad in "--target nosuchdriver:1.2.3.4:5" "--target null --user-range 9-3" \
	"--target null --user-range 0-12" "--target null --target-opt nosuch=1"; do
	# shellcheck disable=SC2086
	"$MAILBENCH" load -s online --topology "$T/data/topology.json" --users 12 $bad >/dev/null 2>"$T/err"
	[ $? -eq 2 ] || fail "load $bad: not exit 2"
done
# `run --target null` on an empty data directory: the session writes the
# scenario's accounts (the null target has none of its own) and runs
timeout 60 "$MAILBENCH" run -s online --target null --data "$T/nulldata" --users 6 --scale 0.01 \
	--accel 1000 --duration 4 --warmup 1 --no-save --json "$T/null-run.json" >"$T/null-run.out" 2>&1 ||
	{ cat "$T/null-run.out"; fail "run --target null on an empty data directory"; }
grep -q "generated the accounts of 6 users" "$T/null-run.out" || fail "run --target null: no accounts written"
[ "$(stat -c %a "$T/nulldata/accounts.json")" = 600 ] || fail "generated accounts not 0600"
jq -e '.actions.send_mail.done > 0' "$T/null-run.json" >/dev/null || fail "run --target null: no mail sent"
"$MAILBENCH" run -s online --target bogus --data "$T/data" >/dev/null 2>"$T/err"
{ [ $? -eq 2 ] && grep -q -- "--target" "$T/err"; } || fail "run --target bogus: not exit 2"

# everything acknowledged is there, everything deleted is gone
store_stop
timeout 60 "$MAILBENCH" check --data "$T/data" --ack-log "$T/ack.log" >"$T/check.out" 2>&1 \
	|| { cat "$T/check.out"; fail "check --ack-log"; }
echo "ok"
