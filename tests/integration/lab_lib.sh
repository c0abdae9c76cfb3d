# tests/integration/lab_lib.sh: helpers of the tests that run the Dovecot
# shellcheck shell=sh
# lab (`mailbench lab dovecot`): the prerequisites, a temporary directory
# and the lab in the background.  Sourced after `set -u`; the caller
# defines fail() (its log files differ) before calling lab_start.
# Invariant: the lab started here is remembered in LAB_PID and stopped
# (SIGTERM, then SIGKILL) by the EXIT trap, which also removes $T.

MAILBENCH=${MAILBENCH:-$(pwd)/mailbench}
PATH=$PATH:/usr/sbin:/sbin
LAB_PID=

# lab_setup NAME: exit 77 without dovecot, postfix, jq or root; then the
# temporary directory T (readable by the servers' users) and D=$T/data.
lab_setup() {
	command -v dovecot >/dev/null 2>&1 || { echo "SKIP: dovecot not installed"; exit 77; }
	command -v postfix >/dev/null 2>&1 || { echo "SKIP: postfix not installed"; exit 77; }
	command -v jq >/dev/null 2>&1 || { echo "SKIP: jq not installed"; exit 77; }
	[ "$(id -u)" = 0 ] || { echo "SKIP: the lab needs root (Postfix)"; exit 77; }
	T=$(mktemp -d "${TMPDIR:-/tmp}/mb-$1.XXXXXX")
	chmod 755 "$T"
	D=$T/data
	trap lab_cleanup EXIT INT TERM
}

lab_cleanup() {
	[ -n "$LAB_PID" ] && kill -TERM "$LAB_PID" 2>/dev/null && sleep 3
	[ -n "$LAB_PID" ] && kill -9 "$LAB_PID" 2>/dev/null
	rm -rf "$T"
}

# lab_start USERS [LAB OPTIONS]: the lab for USERS users, its output in
# $T/lab.out; waits (30 s at most) for DATA/lab.env and reads it
# (MB_LAB_IMAP, MB_LAB_SMTP, ...; with --tls MB_LAB_IMAPS, MB_LAB_SMTPS,
# MB_LAB_TLS_CA).
lab_start() {
	n=$1
	shift
	"$MAILBENCH" lab dovecot --data "$D" --users "$n" "$@" >"$T/lab.out" 2>&1 &
	LAB_PID=$!
	i=0
	while [ ! -f "$D/lab.env" ] && [ $i -lt 300 ]; do
		kill -0 "$LAB_PID" 2>/dev/null || fail "the lab exited at start"
		sleep 0.1
		i=$((i + 1))
	done
	[ -f "$D/lab.env" ] || fail "the lab did not come up in 30 s"
	# shellcheck disable=SC1091
	. "$D/lab.env"
}

# wait_bounded PID SECONDS: wait for PID (a child of this shell) at most
# SECONDS; its exit status, or 137 after a kill.  A process still there
# then is described first, with its children (a `timeout` wrapper's
# command): state, kernel stack, and the ptrace tracer of each (how a
# sanitizer's exit-time leak check shows up) with, given gdb, its
# backtraces; so a stuck exit in CI says where it was stuck.
wait_bounded() {
	wb=0
	while kill -0 "$1" 2>/dev/null && [ "$wb" -lt "$(($2 * 10))" ]; do
		sleep 0.1
		wb=$((wb + 1))
	done
	if kill -0 "$1" 2>/dev/null; then
		echo "---- pid $1 still running after $2 s:"
		for p in "$1" $(pgrep -P "$1"); do
			echo "-- $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
			grep -E '^(State|TracerPid|Threads)' "/proc/$p/status" 2>/dev/null
			cat "/proc/$p/stack" 2>/dev/null
			tracer=$(sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$p/status" 2>/dev/null)
			case "$tracer" in "" | 0) continue ;; esac
			echo "-- its tracer $tracer: $(tr '\0' ' ' <"/proc/$tracer/cmdline" 2>/dev/null)"
			grep -E '^State' "/proc/$tracer/status" 2>/dev/null
			cat "/proc/$tracer/stack" 2>/dev/null
			command -v gdb >/dev/null 2>&1 &&
				timeout 30 gdb -p "$tracer" -batch -ex 'thread apply all bt' 2>&1 | grep '^#' | head -40
		done
		kill -9 "$1" $(pgrep -P "$1") 2>/dev/null
	fi
	wait "$1"
}
