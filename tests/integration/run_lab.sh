#!/bin/sh
# run_lab.sh: `mailbench run --target lab:dovecot` in one step, for scenario
# 1 (online) and scenario 2 (cached): the run starts the lab (real Dovecot
# and Postfix on random loopback ports) under its data directory,
# provisions the mailboxes over IMAP, runs the load for 60 s with the imap
# driver and SMTP submission, checks every acknowledged message over IMAP
# and stops the lab.  Dovecot is SIGKILLed once in the middle of each run:
# the lab restarts it, the load engine reconnects with backoff, the run
# records the lost connections and the restart (health.connections), and
# the check finds 0 acknowledged messages missing (health.ack_check).  The
# server counters come from /proc (processor time, context switches,
# virtual bytes); "RPC operations/s" is labelled protocol commands/s; the
# engine row names Dovecot and Postfix with their versions, and RPC
# compression is n/a.
# Then a run interrupted by SIGINT during its load: it stops, leaving no
# Dovecot or Postfix process.  Exit 77 without dovecot/postfix/jq or root.
set -u
. "$(dirname "$0")/lab_lib.sh"
lab_setup runlab
fail() {
	echo "FAIL: $*"
	for f in "$T"/*.out "$T"/*.err "$D"/lab/dovecot.log; do
		[ -f "$f" ] && { echo "---- $f"; tail -30 "$f"; }
	done
	# a message acknowledged but missing: what Postfix and Dovecot did with it
	sed -n 's/.*missing: .*<\([0-9a-f]*\)@mailbench>.*/\1/p' "$T"/*.err | sort -u | while read -r id; do
		echo "---- $id in the servers' logs"
		grep -h "$id" "$D"/lab/postfix.log "$D"/lab/dovecot.log 2>/dev/null | tail -20
		q=$(sed -n "s/.*postfix\/cleanup\[[0-9]*\]: \([0-9A-F]*\): message-id=<$id@.*/\1/p" \
			"$D"/lab/postfix.log 2>/dev/null)
		for qid in $q; do grep -h " $qid: " "$D"/lab/postfix.log | tail -20; done
	done
	[ -f "$D"/lab/postfix.log ] && { echo "---- postfix: not sent"; grep "status=" "$D"/lab/postfix.log |
		grep -v "status=sent" | tail -20; }
	exit 1
}

# the lab's server PIDs as its lab.env says now (kept for lab_left)
SEEN=
lab_seen() {
	[ -f "$D/lab.env" ] || return 0
	# shellcheck disable=SC1091
	. "$D/lab.env"
	SEEN="$SEEN $MB_LAB_DOVECOT_PID $MB_LAB_POSTFIX_PID $(echo "$MB_LAB_SERVER_PIDS" | tr ',' ' ')"
}

# which of them still run a server program (a pid reused by anything else
# does not count, nor a zombie: it runs nothing and its parent reaps it);
# a server signalled as the run ended is given up to 10 s to go
lab_left() {
	i=0
	while :; do
		left=$(lab_left_now)
		[ -z "$left" ] || [ "$i" -ge 40 ] && break
		sleep 0.25
		i=$((i + 1))
	done
	echo "$left"
}
lab_left_now() {
	for p in $SEEN; do
		c=$(cat "/proc/$p/comm" 2>/dev/null) || continue
		st=$(sed 's/.*) \([A-Z]\).*/\1/' "/proc/$p/stat" 2>/dev/null) || continue
		[ "$st" = Z ] && continue
		case "$c" in
		dovecot | imap* | lmtp | auth | anvil | log | config | stats | master | qmgr | pickup | \
			smtpd | cleanup | trivial-rewrite | proxymap | postdrop | sendmail | postfix*)
			echo "$p($c)" ;;
		esac
	done | tr '\n' ' '
}

# wait_for FILE PATTERN SECONDS PID: PATTERN in FILE while PID runs
wait_for() {
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null && [ $i -lt $(($3 * 10)) ]; do
		kill -0 "$4" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	grep -q "$2" "$1" 2>/dev/null
}

for sc in online cached; do
	echo "== $sc"
	timeout -k 30 300 "$MAILBENCH" run -s "$sc" --target lab:dovecot --data "$D" --users 20 --scale 0.1 \
		--accel 100 --duration 60 --warmup 10 --ack-log "$T/$sc.ack" --json "$T/$sc.json" \
		>"$T/$sc.out" 2>"$T/$sc.err" &
	rpid=$!
	wait_for "$T/$sc.err" "load started" 120 "$rpid" || fail "$sc: the load did not start"
	sleep 25
	lab_seen
	kill -9 "$MB_LAB_DOVECOT_PID" || fail "$sc: no dovecot to kill"
	echo "killed dovecot $MB_LAB_DOVECOT_PID mid-run"
	sleep 10
	lab_seen
	wait_bounded "$rpid" 330
	rc=$?
	cat "$T/$sc.out"
	# 0, or 1 when the failed actions around the kill exceed the threshold
	[ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "$sc run exited $rc"
	left=$(lab_left)
	[ -z "$left" ] || fail "$sc: lab processes left: $left"
	[ ! -f "$D/lab.env" ] || fail "$sc: lab.env left (the lab did not stop cleanly)"
	grep -q "target lab:dovecot" "$T/$sc.out" || fail "$sc: not the lab target"
	grep -q "dovecot exited (signal 9); restarting" "$T/$sc.err" || fail "$sc: the lab did not restart dovecot"
	grep -q "^protocol commands/s" "$T/$sc.out" || fail "$sc: RPC operations not relabelled"
	grep -q "check free/busy .*not supported by the target" "$T/$sc.out" || fail "$sc: free/busy"
	j=$T/$sc.json
	[ "$(jq -r '.health.ack_check.ran' "$j")" = true ] || fail "$sc: the ack check did not run"
	# the engine row names the servers that served the run, with the
	# versions their own commands print, not the embedded store's settings
	dv=$(dovecot --version | cut -d' ' -f1)
	pf=$(postconf -h mail_version)
	eng=$(jq -r '.header.engine' "$j")
	[ "$eng" = "Dovecot $dv, Postfix $pf (the lab: maildir, performance login)" ] ||
		fail "$sc: engine row '$eng'"
	grep -q "; Dovecot $dv, Postfix $pf (the lab" "$T/$sc.out" || fail "$sc: engine not in the table's legend"
	[ "$(jq -r '.parameters.compression' "$j")" = false ] || fail "$sc: RPC compression said in force"
	grep -q "accel 100, compression n/a, " "$T/$sc.out" || fail "$sc: the run line's compression"
	jq -r '.header.client_mode' "$j" | grep -q "compression n/a (the imap target" ||
		fail "$sc: client mode '$(jq -r '.header.client_mode' "$j")'"
	[ "$(jq -r '.health.ack_check.lost' "$j")" = 0 ] || fail "$sc: acknowledged messages lost"
	[ "$(jq -r '.health.ack_check.checked > 0' "$j")" = true ] || fail "$sc: nothing acknowledged"
	[ "$(jq -r '.health.connections.lost >= 1' "$j")" = true ] || fail "$sc: no lost connection recorded"
	[ "$(jq -r '.health.connections.server_restarts >= 1' "$j")" = true ] || fail "$sc: no restart recorded"
	for k in processor_pct context_switches_per_s store_virtual_mb rpc_ops_per_s; do
		[ "$(jq -r ".counters.$k // 0 | . > 0" "$j")" = true ] ||
			fail "$sc: server counter $k not measured"
	done
	for a in send_mail process_inbox; do
		[ "$(jq -r ".actions.$a.done > 0" "$j")" = true ] || fail "$sc: no $a done"
	done
done

echo "== SIGINT during the load"
# The outer bound is only a safety net: it outlasts wait_for's 120 s plus
# the SIGINT's orderly stop.  Once its report is out, run ignores SIGTERM
# (its clean-up must not be cut), so -k: a process stuck at its exit is
# killed (exit 137, a failure) instead of stalling the suite.
timeout -k 30 400 "$MAILBENCH" run -s online --target lab:dovecot --data "$D" --users 20 --scale 0.1 \
	--accel 100 --duration 600 >"$T/int.out" 2>"$T/int.err" &
rpid=$!
wait_for "$T/int.err" "load started" 120 "$rpid" || fail "interrupted run: the load did not start"
sleep 3
lab_seen
kill -INT "$rpid"
wait_bounded "$rpid" 120
rc=$?
[ "$rc" = 3 ] || fail "interrupted run exited $rc (want 3)"
left=$(lab_left)
[ -z "$left" ] || fail "interrupted run: lab processes left: $left"
[ -n "$SEEN" ] || fail "no server PIDs were seen"
echo "PASS"
