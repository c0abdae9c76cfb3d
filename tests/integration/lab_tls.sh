#!/bin/sh
# lab_tls.sh: the load engine, the provisioning and the check over TLS
# against the lab's real Dovecot and Postfix (`mailbench lab dovecot
# --tls`: a self-signed certificate, imaps and smtps listeners, STARTTLS
# on the imap and smtp ports):
#  - init over imaps://, then a 20-user load over imaps:// + smtps:// and
#    one over imap:// + smtp:// with --tls starttls (20 s each, --tls-ca
#    the lab's certificate); each run acknowledges messages and `check`
#    (over imaps://, then STARTTLS) finds every one of them;
#  - Dovecot's log shows the logins over TLS (each run adds TLS logins:
#    the STARTTLS run's are TLS too), Postfix's log TLS sessions;
#  - without --tls-ca (the system's CA store does not know the lab's
#    certificate) the load and the check exit 3 naming the certificate
#    failure; --tls-insecure connects and says so;
#  - the blocking SMTP client (src/lab/mailc.c, mb-mail send) submits over
#    smtps:// and over STARTTLS on the plain port (each message arrives,
#    read back over imaps://), refuses the untrusted certificate without
#    --tls-ca and submits with --tls-insecure.
# Exit 77 without dovecot/postfix/jq or root.  Bounded by timeouts.
set -u
. "$(dirname "$0")/lab_lib.sh"
MBMAIL=${MB_BUILDDIR:-$(pwd)}/tests/integration/mb-mail
lab_setup labtls
fail() {
	echo "FAIL: $*"
	for f in "$T"/*.out "$T"/*.err "$D"/lab/dovecot.log "$D"/lab/postfix.log; do
		[ -f "$f" ] && { echo "---- $f"; tail -25 "$f"; }
	done
	exit 1
}

lab_start 20 --tls
if [ -z "${MB_LAB_IMAPS:-}" ] || [ -z "${MB_LAB_SMTPS:-}" ] || [ ! -f "${MB_LAB_TLS_CA:-}" ]; then
	fail "lab.env names no imaps/smtps URL or certificate"
fi
IMAP=${MB_LAB_IMAP:?} SMTP=${MB_LAB_SMTP:?}
jq -e '.imaps and .smtps and .tls_ca' "$D/lab.json" >/dev/null || fail "lab.json: no TLS keys"
mode=$(stat -c %a "$D/lab/tls-key.pem")
[ "$mode" = 600 ] || fail "the private key has mode $mode"
CA=$MB_LAB_TLS_CA

timeout 120 "$MAILBENCH" init -s online --target "$MB_LAB_IMAPS" --tls-ca "$CA" --data "$D" \
	--users 20 --scale 0.1 >"$T/init.out" 2>&1 || fail "init over imaps"

tls_logins() { grep -c 'imap-login: Info: Login: .*, TLS' "$D/lab/dovecot.log"; }

# run NAME LOAD-OPTIONS...: a 20 s load, its acks, then the check
run() {
	name=$1
	shift
	before=$(tls_logins)
	timeout 120 "$MAILBENCH" load -s online --topology "$D/accounts.json" --users 20 \
		--accel 100 --duration 20 --ramp 2 --ack-log "$T/$name.ack" "$@" \
		>"$T/$name.out" 2>"$T/$name.err" || fail "$name: load exited $?"
	cat "$T/$name.out"
	acks=$(grep -c '^+' "$T/$name.ack")
	[ "$acks" -gt 0 ] || fail "$name: no message acknowledged"
	grep -q 'logons [1-9]' "$T/$name.out" || fail "$name: no logon"
	grep -q 'TLS failure' "$T/$name.err" && fail "$name: a TLS failure"
	after=$(tls_logins)
	[ "$after" -ge $((before + 20)) ] || fail "$name: $((after - before)) TLS logins in Dovecot's log"
	echo "$name: $acks acknowledged, $((after - before)) TLS logins"
}

echo "== imaps + smtps"
run implicit --target "$MB_LAB_IMAPS" --submit "$MB_LAB_SMTPS" --tls-ca "$CA"
timeout 120 "$MAILBENCH" check --target "$MB_LAB_IMAPS" --tls-ca "$CA" --ack-log "$T/implicit.ack" \
	--data "$D" >"$T/check1.out" 2>&1 || fail "check over imaps"
cat "$T/check1.out"
grep -q ' 0 missing' "$T/check1.out" || fail "check over imaps: messages missing"

echo "== STARTTLS"
run starttls --target "$IMAP" --submit "$SMTP" --tls starttls --tls-ca "$CA"
timeout 120 "$MAILBENCH" check --target "$IMAP" --tls starttls --tls-ca "$CA" \
	--ack-log "$T/starttls.ack" --data "$D" >"$T/check2.out" 2>&1 || fail "check over STARTTLS"
cat "$T/check2.out"
grep -q ' 0 missing' "$T/check2.out" || fail "check over STARTTLS: messages missing"
grep -q 'TLS connection established' "$D/lab/postfix.log" || fail "no TLS session in Postfix's log"

echo "== the system's CA store: the lab's certificate is not trusted"
timeout 60 "$MAILBENCH" load -s online --topology "$D/accounts.json" --users 5 --accel 100 \
	--duration 5 --target "$MB_LAB_IMAPS" --submit "$MB_LAB_SMTPS" >"$T/badca.out" 2>"$T/badca.err"
rc=$?
cat "$T/badca.err"
[ "$rc" = 3 ] || fail "load with an untrusted certificate exited $rc, not 3"
grep -q 'certificate verify failed' "$T/badca.err" || fail "load: no certificate error named"
timeout 60 "$MAILBENCH" check --target "$MB_LAB_IMAPS" --ack-log "$T/implicit.ack" --data "$D" \
	>"$T/badcheck.out" 2>&1
rc=$?
cat "$T/badcheck.out"
[ "$rc" = 3 ] || fail "check with an untrusted certificate exited $rc, not 3"
grep -q 'certificate verify failed' "$T/badcheck.out" || fail "check: no certificate error named"

echo "== the SMTP client of mb-mail (src/lab/mailc.c) over TLS"
u0=$(jq -r '.users[0].name' "$D/accounts.json")
p0=$(jq -r '.users[0].password' "$D/accounts.json")
u1=$(jq -r '.users[1].name' "$D/accounts.json")
p1=$(jq -r '.users[1].password' "$D/accounts.json")
# mbsend NAME URL MB-MAIL-OPTIONS...: one message from user 0 to user 1
mbsend() {
	name=$1 url=$2
	shift 2
	timeout 30 "$MBMAIL" "$@" send "$url" "$u0" "$p0" "$u0@mailbench.test" "$name@test" \
		"$u1@mailbench.test" >"$T/$name.out" 2>&1
}
mbsend tls-smtps "$MB_LAB_SMTPS" --tls-ca "$CA" || fail "mb-mail over smtps: $(cat "$T/tls-smtps.out")"
mbsend tls-starttls "$SMTP" --tls starttls --tls-ca "$CA" ||
	fail "mb-mail with STARTTLS: $(cat "$T/tls-starttls.out")"
mbsend tls-insecure "$MB_LAB_SMTPS" --tls-insecure ||
	fail "mb-mail --tls-insecure: $(cat "$T/tls-insecure.out")"
mbsend tls-badca "$MB_LAB_SMTPS" && fail "mb-mail trusted the lab's certificate without --tls-ca"
grep -q 'certificate verify failed' "$T/tls-badca.out" || fail "mb-mail: no certificate error named"
for m in tls-smtps tls-starttls tls-insecure; do
	grep -q "queued as" "$T/$m.out" || fail "$m: no queue id: $(cat "$T/$m.out")"
	n=0
	for _ in $(seq 1 100); do
		n=$("$MBMAIL" --tls-ca "$CA" count "$MB_LAB_IMAPS" "$u1" "$p1" "$m@test" 2>/dev/null || echo 0)
		[ "$n" = 1 ] && break
		sleep 0.1
	done
	[ "$n" = 1 ] || fail "$m: $u1 has $n copies of the message (want 1)"
done
echo "mb-mail: submitted over smtps://, STARTTLS and --tls-insecure; each message arrived once"

echo "== --tls-insecure"
timeout 60 "$MAILBENCH" load -s online --topology "$D/accounts.json" --users 5 --accel 100 \
	--duration 5 --target "$MB_LAB_IMAPS" --submit "$MB_LAB_SMTPS" --tls-insecure \
	>"$T/insecure.out" 2>"$T/insecure.err" || fail "load --tls-insecure exited $?"
grep -q 'without certificate verification' "$T/insecure.err" || fail "--tls-insecure not said"
grep -q 'logons [1-9]' "$T/insecure.out" || fail "--tls-insecure: no logon"
echo "PASS"
