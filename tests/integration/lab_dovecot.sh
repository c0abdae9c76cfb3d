#!/bin/sh
# lab_dovecot.sh: `mailbench lab dovecot` with the real Dovecot and Postfix:
# the lab starts on free loopback ports from configs under its data
# directory, IMAP login works (with the capabilities the drivers use), a
# message submitted through Postfix (AUTH PLAIN, pipelined) to a user and a
# distribution list arrives once in the recipient's and every list
# member's INBOX, a Dovecot killed with SIGKILL is restarted by the lab,
# and SIGTERM stops everything, leaving no server process.
# Exit 77 when dovecot/postfix are not installed or we are not root
# (Postfix runs only when started by root).  Bounded by timeouts.
set -u
. "$(dirname "$0")/lab_lib.sh"
MBMAIL=${MB_BUILDDIR:-$(pwd)}/tests/integration/mb-mail
lab_setup lab
fail() {
	echo "FAIL: $*"
	for f in "$T"/lab.out "$D"/lab/dovecot.log "$D"/lab/postfix.log; do
		[ -f "$f" ] && { echo "---- $f"; tail -30 "$f"; }
	done
	exit 1
}

lab_start 6
grep -q -- "--target imap://127.0.0.1:" "$T/lab.out" || fail "no --target URL printed"
grep -q "service_count = 0" "$D/lab/dovecot.conf" || fail "no login-process setting in the config"
grep -q "process_min_avail" "$D/lab/dovecot.conf" || fail "no process_min_avail in the config"
case $MB_LAB_LOGIN_MODE in performance*) ;; *) fail "login mode '$MB_LAB_LOGIN_MODE'" ;; esac
grep -q "^127.0.0.1:" "$D/lab/postfix/master.cf" || fail "submission not on loopback"
# its ports lie below the kernel's ephemeral range, where no client's
# connect can take one before the servers bind it
read -r eph_lo _ </proc/sys/net/ipv4/ip_local_port_range
if [ "$eph_lo" -gt 11024 ]; then
	for url in "$MB_LAB_IMAP" "$MB_LAB_SMTP"; do
		[ "${url##*:}" -lt "$eph_lo" ] || fail "$url: a port in the ephemeral range (from $eph_lo)"
	done
fi

pw() { jq -r ".users[$1].password" "$D/accounts.json"; }
name() { jq -r ".users[$1].name" "$D/accounts.json"; }

out=$("$MBMAIL" login "$MB_LAB_IMAP" "$(name 0)" "$(pw 0)") || fail "IMAP login: $out"
echo "$out"
for cap in UIDPLUS IDLE MOVE CONDSTORE QRESYNC LITERAL+; do
	echo "$out" | grep -q "$cap 1" || fail "capability $cap missing"
done
"$MBMAIL" login "$MB_LAB_IMAP" "$(name 0)" wrong-password >/dev/null 2>&1 && fail "a wrong password logged in"

# a list with members; the message goes to user 2 and to that list
list=$(jq -r '.lists[0].name' "$D/accounts.json")
"$MBMAIL" send "$MB_LAB_SMTP" "$(name 0)" "$(pw 0)" "$(name 0)@mailbench.test" lab-t1@test \
	"$(name 1)@mailbench.test" "$list@mailbench.test" >"$T/send.out" 2>&1 ||
	fail "submission: $(cat "$T/send.out")"
grep -q "queued as" "$T/send.out" || fail "no queue id: $(cat "$T/send.out")"
members=$(jq -r '.lists[0].members[]' "$D/accounts.json")
for u in $(name 1) $members; do
	idx=$(jq -r --arg u "$u" '.users | map(.name) | index($u)' "$D/accounts.json")
	n=0
	for _ in $(seq 1 100); do
		n=$("$MBMAIL" count "$MB_LAB_IMAP" "$u" "$(pw "$idx")" lab-t1@test 2>/dev/null || echo 0)
		[ "$n" = 1 ] && break
		sleep 0.1
	done
	[ "$n" = 1 ] || fail "$u has $n copies of the message (want 1)"
done
echo "delivered to $(name 1) and the members of $list: $members"

# Dovecot killed: the lab restarts it
old=$MB_LAB_DOVECOT_PID
kill -9 "$old"
i=0
while [ $i -lt 200 ]; do
	# shellcheck disable=SC1091
	. "$D/lab.env"
	[ "$MB_LAB_DOVECOT_PID" != "$old" ] && "$MBMAIL" login "$MB_LAB_IMAP" "$(name 0)" "$(pw 0)" >/dev/null 2>&1 && break
	sleep 0.1
	i=$((i + 1))
done
[ "$MB_LAB_DOVECOT_PID" != "$old" ] || fail "dovecot was not restarted"
grep -q "dovecot exited (signal 9); restarting" "$T/lab.out" || fail "restart not reported"
echo "dovecot restarted: $old -> $MB_LAB_DOVECOT_PID"

# SIGTERM: everything stops, no server process is left
pids=$(echo "$MB_LAB_SERVER_PIDS" | tr ',' ' ')
kill -TERM "$LAB_PID"
i=0
while kill -0 "$LAB_PID" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
kill -0 "$LAB_PID" 2>/dev/null && fail "the lab did not stop on SIGTERM"
wait "$LAB_PID"
rc=$?
LAB_PID=
[ "$rc" = 0 ] || fail "the lab exited $rc"
for p in $pids; do
	if [ -d "/proc/$p" ] && ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null; then
		fail "server process $p ($(cat "/proc/$p/comm" 2>/dev/null)) left after stop"
	fi
done
[ ! -f "$D/lab.env" ] || fail "lab.env left after stop"
grep -q "lab: stopped" "$T/lab.out" || fail "no stop message"
echo "PASS"
