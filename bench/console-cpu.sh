#!/bin/sh
# console-cpu.sh: the console's own CPU at its 1 Hz redraw while the store,
# the load engine and the storage test run under it (goal: at most 2% of
# one core).  The console runs in tmux on a small data directory; its CPU
# time (utime+stime of its own pid, children excluded) is read from /proc
# over a measurement window.  The peer, measured in the same window, is
# top(1) refreshing every second in a second tmux window: the ratio says
# how the console compares with a plain 1 Hz terminal monitor.
# Usage: bench/console-cpu.sh [SECONDS]   (MAILBENCH=path/to/mailbench)
# Prints the headline figure last.
set -u
MAILBENCH=${MAILBENCH:-$(pwd)/mailbench}
SECS=${1:-30}
command -v tmux >/dev/null 2>&1 || { echo "tmux is needed"; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/mb-bench.XXXXXX")
SOCK="$T/tmux.sock"
TM="tmux -S $SOCK"
cleanup() {
	$TM kill-server >/dev/null 2>&1
	for p in $(pgrep -f "$T/" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

screen() { $TM capture-pane -p -t mb; }
wait_for() {
	n=0
	while [ "$n" -lt $(($2 * 4)) ]; do
		screen | grep -q -- "$1" && return 0
		sleep 0.25
		n=$((n + 1))
	done
	echo "'$1' did not appear within $2 s"
	screen
	exit 1
}
# CPU seconds (utime + stime) of one pid
cpu_s() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"
}

$TM new-session -d -s mb -x 160 -y 45 \
	"$MAILBENCH console -s online --data $T/data --users 50 --accel 20 --scale 0.01 --storage-size 0.1; sleep 30"
$TM new-window -d -t mb -n top "top -d 1"
sleep 1
# by process name: the tmux server's command line holds the same words
cpid=""
for p in $(pgrep -f "console -s online --data $T/data"); do
	[ "$(cat /proc/"$p"/comm 2>/dev/null)" = mailbench ] && cpid=$p
done
tpid=$(pgrep -x top | tail -1)
{ [ -n "$cpid" ] && [ -n "$tpid" ]; } || { echo "cannot find the processes"; exit 1; }
echo "console pid $cpid ($(cat /proc/"$cpid"/comm)), top pid $tpid"
$TM send-keys -t mb l
wait_for "load running" 240
$TM send-keys -t mb t
wait_for "storage test on" 60
$TM send-keys -t mb o
sleep 5 # past the first samples
c0=$(cpu_s "$cpid")
t0=$(cpu_s "$tpid")
s0=$(date +%s.%N)
sleep "$SECS"
c1=$(cpu_s "$cpid")
t1=$(cpu_s "$tpid")
s1=$(date +%s.%N)
screen | grep -q "storage test on" || { echo "the storage test stopped early"; screen; exit 1; }
screen | grep -q "load running" || { echo "the load stopped early"; screen; exit 1; }
$TM send-keys -t mb q
sleep 0.5
$TM send-keys -t mb y
n=0
while pgrep -f "$T/data" >/dev/null 2>&1 && [ "$n" -lt 60 ]; do sleep 0.5; n=$((n + 1)); done
awk -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" -v s0="$s0" -v s1="$s1" 'BEGIN {
	wall = s1 - s0
	c = (c1 - c0) / wall * 100
	t = (t1 - t0) / wall * 100
	printf "window: %.1f s with store, load engine and storage test running\n", wall
	printf "peer (top -d 1): %.2f%% of one core\n", t
	if (t > 0)
		printf "console / top: %.2f\n", c / t
	printf "console CPU: %.2f%% of one core at 1 Hz (goal <= 2%%)\n", c
}'
