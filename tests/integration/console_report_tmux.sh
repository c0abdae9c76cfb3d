#!/bin/sh
# $SMALL is a list of flags, split on purpose:
# shellcheck disable=SC2086
# console_report_tmux.sh: the console's runs, storage and capacity screens
# in tmux against real processes on tiny data directories.
#  - runs: two saved runs (scenario 1 and scenario 2) pinned on the runs
#    screen show as columns with their difference ("2 vs 1") and a warning
#    that the second is of another scenario;
#  - storage: a storage test at 4 threads, + moves to 8 (the published
#    step, not 5), + again to 12: the 4 and 8 results stay as columns;
#    with no load, the overview's engine is the storage test's (32 KB pages);
#  - capacity: a search started from the screen with the short step
#    window draws its curve (braille dots) as steps finish, and stops on
#    Enter (unless it has ended by itself) with the answer so far.
# Quitting leaves no mailbench process.  Exit 77 when tmux is missing.
# Bounded: every wait has a timeout; cleanup by trap.
set -u
MAILBENCH=${MAILBENCH:-$(pwd)/mailbench}
command -v tmux >/dev/null 2>&1 || { echo "SKIP: tmux not installed"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/mb-screens.XXXXXX")
TM="tmux -S $T/tmux.sock"
cleanup() {
	$TM kill-server >/dev/null 2>&1
	for p in $(pgrep -f "$T/" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
KEYS_PAUSE=0.4
. "$(dirname "$0")/console_lib.sh"
SMALL="--users 6 --scale 0.01 --accel 50"

# two saved runs: scenario 1 in the console's data directory, scenario 2
# in its own (its own initialisation), saved next to the first
timeout 240 "$MAILBENCH" run -s online $SMALL --duration 8 --warmup 3 --data "$T/data" -q \
	>"$T/online.out" 2>&1 || fail "online run (exit $?)"
timeout 240 "$MAILBENCH" run -s cached $SMALL --duration 8 --warmup 3 --data "$T/cdata" -q \
	>"$T/cached.out" 2>&1 || fail "cached run (exit $?)"
cp "$T"/cdata/runs/*.json "$T/data/runs/" || fail "no saved cached run"

$TM new-session -d -s mb -x 150 -y 48 "env LC_ALL=C.UTF-8 TERM=xterm-256color $MAILBENCH \
	console -s online $SMALL --storage-size 0.05 --data $T/data; sleep 30"
wait_for "F3 starts the load" 15

# ---- runs: pin both, see the differences and the warning
keys F6
wait_for "cached" 5
keys p
keys Down
keys p
wait_for "2 vs 1" 5
screen | grep -q "warning: run 2" || fail "no warning about the other scenario"
screen | grep -q "network usage" || fail "no counter rows in the pinned comparison"
screen | grep -q "^\* " || fail "pinned runs not marked"

# ---- storage: 4 threads, + to 8, + to 12; the 4 and 8 results stay
keys g
wait_for "storage test stopped, 4 threads" 5
keys t
wait_for "storage test RUNNING, 4 threads" 60
# with no load, the overview's engine is the storage test's, not the
# online scenario's store (4 KB pages)
keys o
# in the legend, which wraps at spaces: look in the lines joined
n=0
until screen | tr -s ' \n' '  ' | grep -q "storage test, 32 KB pages"; do
	n=$((n + 1))
	[ "$n" -lt 40 ] || fail "the overview's engine is not the storage test's"
	sleep 0.25
done
keys g
wait_for "storage test RUNNING, 4 threads" 10
# past its warm-up (storage.cfg: 10 s), so the average is measured
sleep 16
keys +
wait_for "storage test RUNNING, 8 threads" 60
wait_for "4 thr" 10
sleep 16
keys +
wait_for "storage test RUNNING, 12 threads" 60
wait_for "8 thr" 10
screen | grep -q "4 thr" || fail "the 4-thread result is gone after +"
keys t
wait_for "storage test stopped" 30

# ---- capacity: short steps, start, two finished steps, the curve, stop
keys c
wait_for "capacity search idle" 5
keys '['
wait_for "3 s warm-up + 5 s measured" 5
keys Enter
wait_for "   1 ramp" 240
# a finished step is a point of the curve: braille dots (U+2800..U+28FF,
# UTF-8 e2 a0..a3 xx) in the plot rows other than the dashed limit line
screen | grep -E '^(0 |          )[ ]*\|' | od -An -tx1 | tr -d ' \n' | grep -q 'e2a[0-3]' ||
	fail "no braille curve on the capacity screen"
screen | grep -q "^limit" || fail "no limit line"
# stop it if it still runs (a busy machine can end it early: a saturated
# load engine ends the search)
screen | grep -q "capacity search stepping" && keys Enter
wait_for "capacity search done" 90
screen | grep -Eq "^(Largest load|No load|No answer|No step)" || fail "no answer on the capacity screen"

keys q
n=0
while $TM has-session -t mb 2>/dev/null && screen | grep -q "mailbench |"; do
	n=$((n + 1))
	[ "$n" -lt 80 ] || fail "the console did not quit"
	sleep 0.25
	screen | grep -q "(y/n)" && keys y
done
sleep 1
# mailbench processes of this test (not tmux's shell, whose command names them too)
left=$(pgrep -x mailbench -a | grep -c "$T/")
[ "$left" -eq 0 ] || fail "$left processes left behind: $(pgrep -x mailbench -a | grep "$T/")"
ls "$T"/data/capacity/*.json >/dev/null 2>&1 || fail "the search was not saved"
echo "PASS: runs pinned with differences, storage 4/8 kept after +, capacity curve drawn"
