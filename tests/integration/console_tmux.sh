#!/bin/sh
# console_tmux.sh: drives the real console in tmux (send-keys,
# capture-pane) against a real store and load engine on a tiny data
# directory: choose scenario 1, start the load, see a live number in every
# published row, edit a threshold (saved to DATA/thresholds.cfg), stop,
# pin the saved run, quit, and find no mailbench process left.  Runs at
# 160x45 in colour, at 80x24 (the table scrolls) and with NO_COLOR (no
# colour escapes on screen).  Exit 77 when tmux or a child command is
# missing.  Also: the overview's legend (full published headings, this
# run's client mode; scrolled into view on short screens), uncut header
# cells at 160 columns, a saved threshold reloaded by the next console, a
# live resize, the topology screen (storage groups, databases, users),
# quitting with q (asks on every screen while a run is
# active; n keeps the run) and by SIGTERM during a run.  Bounded: every wait has a timeout;
# cleanup by trap.
set -u
MAILBENCH=${MAILBENCH:-$(pwd)/mailbench}
command -v tmux >/dev/null 2>&1 || { echo "SKIP: tmux not installed"; exit 77; }
for c in init store load; do
	if ! "$MAILBENCH" "$c" --help >/dev/null 2>&1; then
		echo "SKIP: 'mailbench $c' is not available in this build"
		exit 77
	fi
done

T=$(mktemp -d "${TMPDIR:-/tmp}/mb-console.XXXXXX")
# one tmux server per case (a server exits with its last session)
TM="tmux -S $T/tmux.none.sock"
cleanup() {
	for s in "$T"/tmux.*.sock; do tmux -S "$s" kill-server >/dev/null 2>&1; done
	# anything still running from this test's data directory goes
	for p in $(pgrep -f "$T/" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
. "$(dirname "$0")/console_lib.sh"



# wait_for TEXT SECONDS


LABELS="users
% processor time
context switches/s
local delivery rate
network usage (Kbit/s)
database disk transfers/s
log writes/s
disk bytes/s (MB)
database cache size (MB)
RPC operations/s
RPC requests
client latency (ms)
store virtual bytes (MB)"

# live_values FILE: for each published row seen in the screen dump FILE,
# print "label<TAB>live cell" (the cell under the "live" heading).
live_values() {
	awk -v labels="$LABELS" '
	BEGIN { n = split(labels, L, "\n") }
	/ live / && end == 0 { i = index($0, " live"); if (i) end = i + 4 }
	{
		for (k = 1; k <= n; k++) {
			# labels may be cut to fit (with ~): match their start
			if (index($0, substr(L[k], 1, 11)) == 1 && end > 0) {
				cell = substr($0, 1, end)
				m = split(cell, w, " ")
				printf "%s\t%s\n", L[k], w[m]
			}
		}
	}' "$1"
}

# all_rows_live: every published row has a number in the live column,
# scrolling the overview when the screen is short.
all_rows_live() {
	: >"$T/seen"
	for s in 0 1 2 3 4 5 6; do
		screen >"$T/screen"
		live_values "$T/screen" >>"$T/seen"
		[ "$(cut -f1 "$T/seen" | sort -u | wc -l)" -ge 13 ] && break
		$TM send-keys -t mb Down
		sleep 0.1
	done
	for s in 0 1 2 3 4 5 6; do $TM send-keys -t mb Up; done
	echo "$LABELS" | while IFS= read -r l; do
		v=$(grep -F "$l	" "$T/seen" | tail -1 | cut -f2)
		case "$v" in
		'' | n/a) echo "missing: $l"; return 1 ;;
		esac
	done
}

run_case() {
	name=$1 cols=$2 rows=$3 envset=$4 ending=$5
	echo "== $name (${cols}x$rows${envset:+, $envset})"
	TM="tmux -S $T/tmux.$name.sock"
	rm -f "$T/exit"
	$TM new-session -d -s mb -x "$cols" -y "$rows" \
		"env $envset TERM=xterm-256color $MAILBENCH console -s cached --data $T/data --users 8 --accel 100 --scale 0.01; echo \$? >$T/exit; sleep 60"
	wait_for "F1Help" 10
	# choose scenario 1 on the scenario screen
	keys s
	wait_for "Run parameters" 5
	keys Right
	wait_for "Scenario 1: Outlook online" 5
	# the scenario switch resets users to the scenario's: set 8 again
	keys Down Enter C-u 8 Enter
	wait_for " 8 users" 5
	# a threshold edited by an earlier case was saved: reloaded at start
	if [ -f "$T/data/thresholds.cfg" ]; then
		keys h
		wait_for "% processor time *< 1000" 5
	fi
	# start the load (initialises the data directory the first time)
	keys l
	wait_for "load running" 180
	n=0
	until all_rows_live >"$T/why"; do
		n=$((n + 1))
		[ "$n" -lt 30 ] || fail "not every row got a live value: $(cat "$T/why")"
		sleep 2
	done
	echo "   every published row shows a live value"
	# the legend names every published column in full, and this run
	if [ "$rows" -ge 40 ]; then
		screen >"$T/screen"
	else
		# short screens: Down scrolls the legend into view; keep every
		# screen seen on the way (a slow build redraws late)
		: >"$T/screen"
		for s in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
			$TM send-keys -t mb Down
			sleep 0.25
			screen >>"$T/screen"
		done
		sleep 1.2
		screen >>"$T/screen"
		for s in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
			$TM send-keys -t mb Up
		done
	fi
	# the compared column (d) is always shown; (a) is shown in full unless
	# the width drops it (then the legend says so): a sanitizer build's huge
	# virtual size widens the live column
	grep -q "^(d) as (c) with Hyper-Threading on" "$T/screen" ||
		fail "the legend does not show the heading of the compared column (d)"
	grep -q "^(a) Windows 2000 SP3, Exchange 2000 SP3, Outlook 2000 online" "$T/screen" ||
		grep -q "^not shown at this width: (a)" "$T/screen" ||
		fail "the legend does not show the full published heading of (a)"
	# (wrapped on narrow screens)
	{ grep -q "^live: this run, last 10 seconds: " "$T/screen" &&
		grep -q "online, compression on" "$T/screen"; } ||
		fail "the legend does not name this run's client mode"
	if [ "$cols" -ge 160 ]; then
		# wide: the header cells have room for the published platforms
		grep -q "^server platform .*Windows 2000 SP3 .*Windows Server 2003" "$T/screen" ||
			fail "header cells cut at $cols columns"
		grep -q "^(c) Windows Server 2003, Exchange 2003, Outlook 2003 online" "$T/screen" ||
			fail "the legend does not show the full published heading of (c)"
		grep -q "^(d) as (c) with Hyper-Threading on" "$T/screen" ||
			fail "the legend does not show the heading of (d)"
	fi
	if [ "$name" = colour ]; then
		# live resize: the table condenses to the new width and comes back
		$TM resize-window -t mb -x 80 -y 24
		sleep 1.5
		screen | awk '!/^cpu %/ && length($0) > 80 { bad = 1 } END { exit bad }' ||
			fail "wider than 80 after resize"
		screen | grep -q "^client latency" || fail "table lost on resize"
		$TM resize-window -t mb -x "$cols" -y "$rows"
		sleep 1.5
		screen | grep -q " (d) " || fail "the wide table did not come back"
	fi
	# colour on screen, or none with NO_COLOR
	$TM capture-pane -e -p -t mb >"$T/escapes"
	if [ -n "$envset" ]; then
		grep -q "$(printf '\033')\[3[0-7]m\|$(printf '\033')\[3[0-7];" "$T/escapes" &&
			fail "colour escapes on screen with $envset"
	else
		grep -q "$(printf '\033')\[[0-9;]*3[0-7]m" "$T/escapes" || fail "no colour on screen"
	fi
	# edit a threshold: % processor time < 1000
	keys h
	wait_for "threshold  " 5
	keys Down Enter
	wait_for "Enter saves" 5
	keys C-u "< 1000" Enter
	wait_for "threshold saved" 5
	tr -d ' \n' <"$T/data/thresholds.cfg" | grep -q 'processor_pct:{cmp="<";value=1000.0;}' ||
		fail "thresholds.cfg does not hold the edit"
	screen | grep -q "% processor time *< 1000" || fail "the edited threshold is not shown"
	# stop the load; the run is saved
	keys l
	wait_for "load done" 60
	ls "$T"/data/runs/*.json >/dev/null 2>&1 || fail "no saved run"
	# the topology screen: 8 users in the scenario's storage groups
	keys T
	wait_for "^storage group 1 " 5
	screen | grep -q "^initialised .* for scenario online, scale 0.01" || fail "topology: no scenario line"
	screen | grep -q "^8 users, " || fail "topology: not 8 users"
	screen | grep -q "^  database 01 " || fail "topology: no database row"
	# pin the newest saved run
	keys r
	wait_for "pin/unpin" 5
	keys Enter
	wait_for "pinned" 5
	keys o
	wait_for "Overview" 5
	if [ "$cols" -ge 120 ]; then
		screen | grep -q " pinned " || fail "no pinned column on the overview"
	fi
	case "$ending" in
	quit)
		# no run active: quits without a question
		keys q
		;;
	ask)
		# a run active: q asks on every screen (n keeps the run), y
		# stops every child and quits
		keys l
		wait_for "load running" 60
		for scr in g a h r o; do
			keys "$scr"
			keys q
			wait_for "Stop every child and quit" 5
			keys n
			sleep 0.5
			screen | grep -q "Stop every child and quit" && fail "n did not close the question"
			screen | grep -q "load running" || fail "n stopped the run (screen $scr)"
		done
		keys q
		wait_for "Stop every child and quit" 5
		keys y
		;;
	signal)
		# SIGTERM to the console during a run: children stopped, clean exit
		keys l
		wait_for "load running" 60
		cpid=$(pgrep -a -x mailbench | grep -F "console -s cached --data $T/data" | cut -d' ' -f1)
		[ -n "$cpid" ] || fail "console pid not found"
		kill -TERM "$cpid"
		;;
	esac
	n=0
	while [ ! -s "$T/exit" ] && [ "$n" -lt 60 ]; do sleep 0.5; n=$((n + 1)); done
	[ -s "$T/exit" ] || fail "the console did not quit"
	[ "$(cat "$T/exit")" = 0 ] || fail "the console exited with $(cat "$T/exit")"
	sleep 0.5
	left=$(pgrep -a -x mailbench 2>/dev/null | grep -c -F "$T/")
	[ "$left" -eq 0 ] || fail "$left mailbench process(es) left: $(pgrep -a -x mailbench | grep -F "$T/")"
	$TM kill-session -t mb
	echo "   ok"
}

run_case colour 160 45 "" quit
run_case small 80 24 "" signal
run_case nocolor 100 30 "NO_COLOR=1" ask
echo "PASS"
