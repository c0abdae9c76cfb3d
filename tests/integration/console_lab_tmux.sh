#!/bin/sh
# console_lab_tmux.sh: the real console in tmux against the Dovecot lab:
# on the scenario screen the target choice (embedded store | Dovecot lab |
# external URL) is switched to the Dovecot lab, F3 starts it (the lab
# comes up under the data directory, the mailboxes are provisioned over
# IMAP, the load runs), the overview shows live server rows (% processor
# time of Dovecot + Postfix, protocol commands/s) and Dovecot and Postfix
# with their versions as the engine, and quitting (q, y)
# stops everything: no Dovecot or Postfix process of the lab is left.
# Exit 77 without tmux, dovecot, postfix, jq or root.  Bounded: every wait
# has a timeout; cleanup by trap.
set -u
. "$(dirname "$0")/lab_lib.sh"
command -v tmux >/dev/null 2>&1 || { echo "SKIP: tmux not installed"; exit 77; }
lab_setup consolelab
TM="tmux -S $T/tmux.sock"
cleanup() {
	$TM kill-server >/dev/null 2>&1
	lab_cleanup
}
trap cleanup EXIT INT TERM
. "$(dirname "$0")/console_lib.sh"

fail() {
	echo "FAIL: $*"
	echo "---- screen ----"
	$TM capture-pane -p -t mb 2>/dev/null
	f=$D/lab/dovecot.log
	[ -f "$f" ] && { echo "---- $f"; tail -15 "$f"; }
	exit 1
}


# wait_for REGEX SECONDS

SEEN=
lab_seen() {
	[ -f "$D/lab.env" ] || return 0
	# shellcheck disable=SC1091
	. "$D/lab.env"
	SEEN="$SEEN $MB_LAB_DOVECOT_PID $MB_LAB_POSTFIX_PID $(echo "$MB_LAB_SERVER_PIDS" | tr ',' ' ')"
}

$TM new-session -d -s mb -x 160 -y 50 \
	"TERM=xterm-256color $MAILBENCH console -s online --data $D --users 8 --scale 0.1 --accel 150; echo \$? >$T/exit; sleep 60"
wait_for "F1Help" 10
keys s
wait_for "Run parameters" 5
wait_for "target  *embedded store" 5
# the target field: the eighth (scenario, users, scale, accel, compression,
# data, log-dir, target)
keys Down Down Down Down Down Down Down
keys Right
wait_for "target  *Dovecot lab" 5
keys Right
wait_for "target  *external URL imap://" 5
keys Left
wait_for "target  *Dovecot lab" 5
wait_for "F3 provisions its mailboxes over IMAP" 5
keys F3
wait_for "load running" 150
lab_seen
[ -n "$SEEN" ] || fail "no lab.env while the load runs"
# the overview: live server rows
keys o
n=0
while :; do
	screen >"$T/screen"
	if grep -q "^protocol commands/s .*[0-9]" "$T/screen" &&
		grep "^% processor time" "$T/screen" | awk '{ exit !($NF ~ /[0-9]/ || $(NF-1) ~ /[0-9]/) }'; then
		break
	fi
	n=$((n + 1))
	[ "$n" -lt 60 ] || fail "no live server rows"
	sleep 1
done
echo "live rows:"
grep -E "^(users|% processor time|context switches/s|protocol commands/s|client latency|store virtual)" "$T/screen"
# the engine in the legend is the lab's Dovecot (it wraps at spaces: the
# lines joined), not the embedded store's settings
tr -s ' \n' '  ' <"$T/screen" | grep -q "Dovecot [0-9][0-9.]*, Postfix [0-9][0-9.]* (the lab: maildir" ||
	fail "the overview's engine is not the lab's"
tr -s ' \n' '  ' <"$T/screen" | grep -q "KB pages, a page per write" &&
	fail "the overview shows the embedded store's engine"
lab_seen
# quit: asks while a run is active
keys q
wait_for "(y/n)" 5
keys y
n=0
while [ ! -f "$T/exit" ] && [ "$n" -lt 240 ]; do
	sleep 0.25
	n=$((n + 1))
done
[ -f "$T/exit" ] || fail "the console did not quit within 60 s"
[ "$(cat "$T/exit")" = 0 ] || fail "the console exited $(cat "$T/exit")"
for p in $SEEN; do
	c=$(cat "/proc/$p/comm" 2>/dev/null) || continue
	case "$c" in
	dovecot | imap* | lmtp | auth | anvil | log | config | stats | master | qmgr | pickup | \
		smtpd | cleanup | trivial-rewrite | proxymap | postdrop | postfix*)
		fail "a lab process is left: $p ($c)" ;;
	esac
done
[ ! -f "$D/lab.env" ] || fail "lab.env left: the lab did not stop cleanly"
echo "PASS"
