# tests/integration/load_lib.sh: helpers of the load-engine integration
# shellcheck shell=bash
# tests: a tiny data directory and a real store on a random loopback port.
# Sourced; the caller sets MAILBENCH and a temporary directory $T, and
# traps EXIT to call load_cleanup.  Invariant: every process started here
# is remembered in STORE_PID and stopped by load_cleanup.

STORE_PID=
# the store may come from another build (e.g. MB_STORE_BIN=... to run an
# ASan load engine against an optimised store)
MB_STORE_BIN=${MB_STORE_BIN:-$MAILBENCH}
STORE_PORT=
LOAD_PID=

load_need() {
	for c in init store load check; do
		"$MAILBENCH" "$c" --help >/dev/null 2>&1 || { echo "skip: no '$c' command yet"; exit 77; }
	done
}

# port_open PORT: true when something listens on 127.0.0.1:PORT
port_open() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# store_kill: SIGKILL the store and reap it
store_kill() {
	kill -KILL "$STORE_PID" 2>/dev/null
	wait "$STORE_PID" 2>/dev/null
	STORE_PID=
}

# store_start DATA [extra args]: start the store on a random free port
store_start() {
	local data=$1; shift
	for _ in 1 2 3 4 5 6 7 8; do
		# below the ephemeral range (32768..): no client socket holds it,
		# and a client retrying a connect to it while the store is down
		# cannot connect to itself (TCP self-connect), so a store
		# restarted on the same port can always bind it again
		STORE_PORT=$((20000 + RANDOM % 12000))
		port_open "$STORE_PORT" && continue
		"$MB_STORE_BIN" store --data "$data" --listen "127.0.0.1:$STORE_PORT" "$@" \
			>>"$T/store.log" 2>&1 &
		STORE_PID=$!
		for _ in $(seq 1 100); do
			if port_open "$STORE_PORT"; then
				return 0
			fi
			kill -0 "$STORE_PID" 2>/dev/null || break
			sleep 0.1
		done
		store_kill
	done
	echo "cannot start the store:"; cat "$T/store.log"
	return 1
}

store_stop() {
	if [ -n "$STORE_PID" ]; then
		kill -TERM "$STORE_PID" 2>/dev/null
		for _ in $(seq 1 100); do
			kill -0 "$STORE_PID" 2>/dev/null || break
			sleep 0.1
		done
		store_kill
	fi
}

load_cleanup() {
	store_stop
	[ -n "$LOAD_PID" ] && kill -KILL "$LOAD_PID" 2>/dev/null
	rm -rf "$T"
}

# row LABEL FILE: the summary row of an action: "scheduled done failed"
row() {
	awk -v l="$1" 'index($0, l" ") == 1 { n = split(substr($0, length(l) + 1), f, " "); print f[1], f[2], f[3]; exit }' "$2"
}
