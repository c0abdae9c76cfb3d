#!/bin/sh
# imap_driver.sh: the imap target driver (src/load/drivers/imap.c) against
# the lab's real Dovecot and Postfix, one simulated user at a time through
# the driver's ops table (tests/integration/mb-imapdrv provides the
# engine's services over blocking sockets): every supported step in online
# mode, then in cached mode (full sync, incremental sync, local listings,
# uploaded changes); a reply's original is flagged \Answered; free/busy is
# "not supported by the target"; every
# submission acknowledged at 250 goes into the ack log with its recipient
# mailboxes, and `mailbench check --target imap://` finds them all.
# Exit 77 without dovecot/postfix/jq or root.  Bounded by timeouts.
set -u
. "$(dirname "$0")/lab_lib.sh"
B=${MB_BUILDDIR:-$(pwd)}/tests/integration
lab_setup imapdrv
fail() {
	echo "FAIL: $*"
	for f in "$T"/*.out "$D"/lab/dovecot.log "$D"/lab/postfix.log; do
		[ -f "$f" ] && { echo "---- $f"; tail -25 "$f"; }
	done
	exit 1
}

lab_start 6
timeout 120 "$MAILBENCH" init -s online --target "$MB_LAB_IMAP" --data "$D" --scale 0.2 >"$T/init.out" 2>&1 ||
	fail "init"
imap=${MB_LAB_IMAP#imap://}
smtp=${MB_LAB_SMTP#smtp://}
timeout 60 "$B/mb-imapdrv" "$D/accounts.json" "$imap" "$smtp" 0 "$T/ack.log" online \
	>"$T/online.out" 2>&1 || fail "online steps"
cat "$T/online.out"
# the reply flagged its original \Answered: Maildir's R on the file that
# Dovecot's uidlist names for the original's UID in the user's INBOX
read -r ouser ouid <<EOF
$(sed -n 's/^original \([^ ]*\) INBOX uid \([0-9]*\)$/\1 \2/p' "$T/online.out")
EOF
[ -n "$ouid" ] || fail "mb-imapdrv did not name the reply's original"
md=$(find "$D" -type d -path "*/$ouser/Maildir" | head -n 1)
[ -n "$md" ] || fail "no Maildir for $ouser"
base=$(sed -n "s/^$ouid .*:\(.*\)$/\1/p" "$md/dovecot-uidlist")
[ -n "$base" ] || fail "uid $ouid is not in $md/dovecot-uidlist"
find "$md/cur" -name "$base:2,*R*" | grep -q . ||
	fail "the reply's original ($ouser INBOX uid $ouid, $base) is not flagged \\Answered"
find "$md/cur" -name '*:2,*R*' | grep -v -q "/$base:" &&
	fail "another message of $ouser's INBOX is flagged \\Answered"
timeout 60 "$B/mb-imapdrv" "$D/accounts.json" "$imap" "$smtp" 1 "$T/ack.log" cached \
	>"$T/cached.out" 2>&1 || fail "cached steps"
grep "sync\|local 1" "$T/cached.out" | head -5
for op in imap.SELECT imap.FETCH imap.APPEND imap.MOVE imap.EXPUNGE smtp.DATA; do
	grep -q "^op $op " "$T/online.out" || fail "no $op round trips"
done
grep -q "^op imap.ENABLE " "$T/cached.out" || fail "cached mode did not ENABLE QRESYNC"
grep -q "step list inbox .* local 1" "$T/cached.out" || fail "cached listing not local"
acks=$(grep -c '^+ ' "$T/ack.log")
[ "$acks" -ge 4 ] || fail "only $acks acknowledgements"
sleep 1 # LMTP delivery after the 250
timeout 60 "$MAILBENCH" check --target "$MB_LAB_IMAP" --ack-log "$T/ack.log" --data "$D" \
	>"$T/check.out" 2>&1 || fail "check: $(cat "$T/check.out")"
cat "$T/check.out"
grep -q " 0 missing" "$T/check.out" || fail "acknowledged messages missing"
kill -TERM "$LAB_PID"
wait "$LAB_PID"
LAB_PID=
echo "PASS"
