#!/bin/sh
# console_fault.sh: the console's fault key, driven in tmux against a real
# store and load engine: start the load, press f, choose 1 (kill -9 the
# store), see the fault acknowledged and the store restarted while the load
# keeps running; press f, 6 (database file I/O errors) and see each storage
# group's error, cause and time out of service, then its recovery in place;
# stop the load, and find the faults, their recovery times and
# the ack-log check (0 acknowledged writes lost) in the saved run; quit and
# find no mailbench process left.  Exit 77 without tmux or jq.  Bounded.
set -u
MAILBENCH=${MAILBENCH:-$(pwd)/mailbench}
command -v tmux >/dev/null 2>&1 || { echo "SKIP: tmux not installed"; exit 77; }
command -v jq >/dev/null 2>&1 || { echo "SKIP: jq not installed"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/mb-cfault.XXXXXX")
TM="tmux -S $T/tmux.sock"
cleanup() {
	$TM kill-server >/dev/null 2>&1
	for p in $(pgrep -f "$T/" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
. "$(dirname "$0")/console_lib.sh"

$TM new-session -d -s mb -x 160 -y 45 \
	"env TERM=xterm-256color $MAILBENCH console -s online --data $T/data --users 10 --accel 200 --scale 0.01; echo \$? >$T/exit; sleep 60"
wait_for "F1Help" 10
# f before a load runs: refused with a hint
keys f
wait_for "injects a fault into a running load" 5
keys l
wait_for "load running" 180
sleep 4
keys f
wait_for "Inject a fault into the running load" 5
keys 1
wait_for "store restarted after an injected kill" 20
sleep 6
screen | grep -q "load running" || fail "the load did not survive the store's restart"
# database file I/O errors for 10 s: each group out of service is shown
# with its error, its cause and since when; then back in service, with how
# long it was out (no absolute time is asserted, only the shape)
keys f
wait_for "6  database file I/O errors" 5
keys 6
wait_for "STORAGE GROUP ERROR: [0-9]* groups* refusing writes: sg[0-9]* MB_EIO (input/output error: database [a-z]* failed: db[0-9]*.mdb page [0-9]*) since [0-9:]*, [0-9]* s" 40
wait_for "sg[0-9]* back in service at [0-9:]*: recovered in place after [0-9.]* s out (MB_EIO: database" 60
screen | grep -q "load running" || fail "the load stopped during the database faults"
# the fault's recovery is the first action done after it, with every group
# back: give the load time for one (an ASan build on a loaded machine is slow)
sleep 8
keys l
wait_for "load done" 60
# the newest saved run (file names are the program's own: no blanks)
# shellcheck disable=SC2012
run=$(ls -t "$T"/data/runs/*.json 2>/dev/null | head -n 1)
[ -n "$run" ] || fail "no saved run"
jq -e '.health.faults | length == 2' "$run" >/dev/null || fail "not two faults in the saved run"
jq -e '(.health.faults[1].spec | test("^io-error@.*:eio:db$")) and .health.faults[1].recovery_s >= 0' \
	"$run" >/dev/null || fail "database fault: $(jq -c '.health.faults[1]' "$run")"
jq -e '.health.faults[0].spec | test("^kill-store@")' "$run" >/dev/null || fail "fault spec"
jq -e '.health.faults[0].recovery_s >= 0' "$run" >/dev/null || fail "no recovery time"
jq -e '.health.ack_check.ran and .health.ack_check.lost == 0' "$run" >/dev/null ||
	fail "ack check: $(jq -c '.health.ack_check' "$run")"
echo "console fault key: kill-store recovered in $(jq '.health.faults[0].recovery_s' "$run") s," \
	"database I/O errors in $(jq '.health.faults[1].recovery_s' "$run") s," \
	"$(jq '.health.ack_check.checked' "$run") acknowledged writes checked, 0 lost"
keys q
n=0
while [ ! -s "$T/exit" ] && [ "$n" -lt 60 ]; do sleep 0.5; n=$((n + 1)); done
[ "$(cat "$T/exit" 2>/dev/null)" = 0 ] || fail "the console did not quit cleanly"
left=$(pgrep -a -x mailbench 2>/dev/null | grep -cF "$T/")
[ "$left" -eq 0 ] || fail "$left mailbench process(es) left"
echo "console_fault: OK"
exit 0
