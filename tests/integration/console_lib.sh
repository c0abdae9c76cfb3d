#!/bin/sh
# console_lib.sh: what every console test in tmux shares (sourced).  The
# caller sets TM (the tmux command with its own socket) and names its
# session "mb"; it may define its own fail() after sourcing this file (to
# print more), which wait_for then uses.
#   screen        the pane as text
#   keys K...     send keys, then give the console KEYS_PAUSE s (0.3)
#   wait_for S N  wait up to N s for S on the screen, else fail
#   fail MSG      print MSG and the screen, exit 1
fail() {
	echo "FAIL: $*"
	echo "---- screen ----"
	$TM capture-pane -p -t mb 2>/dev/null
	exit 1
}
screen() { $TM capture-pane -p -t mb; }
keys() {
	$TM send-keys -t mb "$@"
	sleep "${KEYS_PAUSE:-0.3}"
}
wait_for() {
	n=0
	while [ "$n" -lt $(($2 * 4)) ]; do
		if screen | grep -q -- "$1"; then return 0; fi
		sleep 0.25
		n=$((n + 1))
	done
	fail "'$1' did not appear within $2 s"
}
