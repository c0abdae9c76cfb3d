#!/bin/sh
# run_lab_tls.sh: `mailbench run --target lab:dovecot --tls implicit` and
# `--tls starttls` in one step each: the run starts the lab with --tls
# (real Dovecot and Postfix, a self-signed certificate, random loopback
# ports), provisions it, runs a 20-user load and checks every acknowledged
# message, all over TLS with the lab's certificate as the CA (no --tls-ca
# given): over its imaps + smtps ports (implicit), then STARTTLS on its
# plain ports.  Each run: exit 0 or 1 (thresholds), the ack check ran and
# lost nothing, every IMAP login of the run in Dovecot's log is a TLS one
# (at least the 20 users'), Postfix's log has TLS sessions, and the lab is
# stopped.  Exit 77 without dovecot/postfix/jq or root.  Bounded by
# timeouts.
set -u
. "$(dirname "$0")/lab_lib.sh"
lab_setup runlabtls
fail() {
	echo "FAIL: $*"
	for f in "$T"/*.out "$T"/*.err "$D"/lab/dovecot.log "$D"/lab/postfix.log; do
		[ -f "$f" ] && { echo "---- $f"; tail -30 "$f"; }
	done
	exit 1
}

logins() { grep -c "imap-login: Info: Login: $1" "$D/lab/dovecot.log" 2>/dev/null || echo 0; }

# run NAME TLS-MODE SCENARIO SECONDS WANT: a run over TLS; WANT in the
# "lab up" line says which ports it took
run() {
	name=$1 mode=$2 sc=$3 dur=$4 want=$5
	echo "== $name: --tls $mode, $sc, $dur s"
	all0=$(logins '') tls0=$(logins '.*, TLS')
	timeout 240 "$MAILBENCH" run -s "$sc" --target lab:dovecot --tls "$mode" --data "$D" \
		--users 20 --scale 0.1 --accel 100 --duration "$dur" --warmup 5 \
		--json "$T/$name.json" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	cat "$T/$name.out"
	[ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "$name: run exited $rc"
	grep -q "lab up: $want" "$T/$name.err" || fail "$name: the lab's TLS URLs were not taken"
	[ ! -f "$D/lab.env" ] || fail "$name: lab.env left (the lab did not stop cleanly)"
	grep -q "target lab:dovecot" "$T/$name.out" || fail "$name: not the lab target"
	j=$T/$name.json
	[ "$(jq -r '.health.ack_check.ran' "$j")" = true ] || fail "$name: the ack check did not run"
	[ "$(jq -r '.health.ack_check.lost' "$j")" = 0 ] || fail "$name: acknowledged messages lost"
	[ "$(jq -r '.health.ack_check.checked > 0' "$j")" = true ] || fail "$name: nothing acknowledged"
	[ "$(jq -r '.actions.send_mail.done > 0' "$j")" = true ] || fail "$name: no send_mail done"
	all=$(($(logins '') - all0)) tls=$(($(logins '.*, TLS') - tls0))
	[ "$tls" -ge 20 ] || fail "$name: $tls TLS logins in Dovecot's log (want >= 20)"
	[ "$tls" = "$all" ] || fail "$name: $((all - tls)) of $all logins without TLS"
	echo "$name: $(jq -r '.health.ack_check.checked' "$j") acknowledged, 0 lost; $tls logins, all TLS"
}

run implicit implicit online 25 "imaps://127.0.0.1:[0-9]*, smtps://127.0.0.1:"
run starttls starttls cached 15 "imap://127.0.0.1:[0-9]*, smtp://127.0.0.1:[0-9]* with STARTTLS"
grep -q 'TLS connection established' "$D/lab/postfix.log" || fail "no TLS session in Postfix's log"
echo "PASS"
