# tests/integration/lib.sh: helpers shared by the integration tests.
# shellcheck shell=sh
#
# Sourced.  The store helpers start `mailbench store` over "$tmp/data" on
# 127.0.0.1:0 and read its address from its "listening on" line.  The
# caller sets MAILBENCH and tmp (its temporary directory), defines fail()
# (message, exit 1) and traps EXIT to kill "$pid".  Invariant: pid is the
# running store's process id (empty when none runs), addr its address.

pid=
addr=

# start_store [--nofile N] [--stats FILE] [store args]: start the store
# (under `prlimit --nofile=N`; with --stats-fd 3 into FILE) and wait for its
# address (at most 30 s).  Output in $tmp/store.out and $tmp/store.err.
start_store() {
	: "${tmp:?}" "${MAILBENCH:?}"
	pre=
	stats=/dev/null
	statsarg=
	while :; do
		case "${1:-}" in
		--nofile) pre="prlimit --nofile=$2 --"; shift 2 ;;
		--stats) stats=$2; statsarg="--stats-fd 3"; shift 2 ;;
		*) break ;;
		esac
	done
	# The previous store's output is removed first: the shell truncates the
	# file only once the new store's process runs, so a check made before
	# that read the old "listening on" line (a stale or empty address: the
	# race that made "smoke after restart" fail on a loaded machine).
	rm -f "$tmp/store.out" "$tmp/store.err"
	# shellcheck disable=SC2086 # $pre and $statsarg are split on purpose
	$pre "$MAILBENCH" store --data "$tmp/data" --listen 127.0.0.1:0 $statsarg "$@" \
		>"$tmp/store.out" 2>"$tmp/store.err" 3>"$stats" &
	pid=$!
	i=0
	addr=
	while :; do
		addr=$(sed -n 's/^listening on \(..*\)$/\1/p' "$tmp/store.out" 2>/dev/null)
		[ -n "$addr" ] && break
		i=$((i + 1))
		[ $i -gt 300 ] && fail "store did not start"
		kill -0 "$pid" 2>/dev/null || fail "store exited at start"
		sleep 0.1
	done
	echo "store pid $pid on $addr: $(grep '^connections:' "$tmp/store.out")"
}

# stop_store: SIGTERM the store; it must stop within 30 s with exit 0.
stop_store() {
	kill -TERM "$pid"
	i=0
	while kill -0 "$pid" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 300 ] && fail "store did not stop on SIGTERM"
		sleep 0.1
	done
	wait "$pid"
	rc=$?
	pid=
	[ "$rc" -eq 0 ] || fail "store exited $rc after SIGTERM"
	echo "store stopped on SIGTERM, exit 0"
}
