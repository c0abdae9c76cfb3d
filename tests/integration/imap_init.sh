#!/bin/sh
# imap_init.sh: provisioning and the check over IMAP against the lab's real
# Dovecot: `mailbench init --target imap://` fills every mailbox as the
# scenario says (scaled), an interrupted init resumes without appending any
# item twice (exact counts per folder afterwards), the operator's maps are
# written, and `mailbench check --target imap:// --ack-log` finds a
# message submitted through Postfix (exit 0) and reports an acknowledged
# message that is not there (exit 1).
# Exit 77 without dovecot/postfix/jq or root.  Bounded by timeouts.
set -u
. "$(dirname "$0")/lab_lib.sh"
MBMAIL=${MB_BUILDDIR:-$(pwd)}/tests/integration/mb-mail
lab_setup imapinit
fail() {
	echo "FAIL: $*"
	for f in "$T"/*.out "$T"/*.err "$D"/lab/dovecot.log; do
		[ -f "$f" ] && { echo "---- $f"; tail -20 "$f"; }
	done
	exit 1
}

lab_start 5

# scale 0.2: inbox 20, deleted 1, 10 folders x 2, 5 appointments, 26 contacts
"$MAILBENCH" init -s online --target "$MB_LAB_IMAP" --submit "$MB_LAB_SMTP" --data "$D" --scale 0.2 \
	--jobs 1 >"$T/init1.out" 2>"$T/init1.err" &
ipid=$!
# interrupt once a mailbox is being filled
i=0
while ! grep -q '"done": "[01]*p' "$D/imap-init.state" 2>/dev/null && [ $i -lt 300 ]; do
	sleep 0.05
	i=$((i + 1))
done
sleep 0.3
kill -INT "$ipid" 2>/dev/null
wait "$ipid"
rc=$?
echo "first init: exit $rc"
grep -q "items each" "$T/init1.out" || fail "no plan line"
if [ "$rc" != 0 ]; then
	grep -q "interrupted; run it again" "$T/init1.err" || fail "interrupted init: $(cat "$T/init1.err")"
	grep -q '"done"' "$D/imap-init.state" || fail "no state file"
fi
timeout 120 "$MAILBENCH" init -s online --target "$MB_LAB_IMAP" --data "$D" --scale 0.2 --jobs 2 \
	>"$T/init2.out" 2>"$T/init2.err" || fail "resumed init exit $?"
grep -q "init: done" "$T/init2.out" || fail "resumed init did not finish"
[ "$rc" = 0 ] || grep -q "resuming" "$T/init2.out" || fail "second init did not resume"
for f in dovecot-passwd postfix-virtual postfix-vmailbox accounts.json; do
	[ -s "$D/$f" ] || fail "$f not written"
done
grep -q "^list001@mailbench.test user" "$D/postfix-virtual" || fail "bad virtual map"

pw() { jq -r ".users[$1].password" "$D/accounts.json"; }
name() { jq -r ".users[$1].name" "$D/accounts.json"; }
for u in 0 1 2 3 4; do
	for spec in INBOX:20 "Deleted Items:1" "Folder 01:2" "Folder 10:2" Calendar:5 Contacts:26; do
		folder=${spec%:*}
		want=${spec##*:}
		got=$("$MBMAIL" status "$MB_LAB_IMAP" "$(name $u)" "$(pw $u)" "$folder") ||
			fail "status $folder"
		[ "$got" = "$want" ] || fail "$(name $u) $folder has $got messages, want $want"
	done
done
echo "every mailbox: exact counts after the resumed init"
# initialised mail is read (docs/workload.md, "Initialised mail is read")
for u in 0 4; do
	got=$("$MBMAIL" unseen "$MB_LAB_IMAP" "$(name $u)" "$(pw $u)") || fail "unseen"
	[ "$got" = 0 ] || fail "$(name $u): $got unseen initialised messages in INBOX"
done
# a state of another version (other contents) is refused, --complete too
cp "$D/imap-init.state" "$T/state.now"
sed 's/"version": [0-9]*/"version": 1/' "$T/state.now" >"$D/imap-init.state"
grep -q '"version": 1,' "$D/imap-init.state" || fail "no version in imap-init.state"
timeout 60 "$MAILBENCH" init -s online --target "$MB_LAB_IMAP" --data "$D" --scale 0.2 \
	--complete >"$T/initv1.out" 2>"$T/initv1.err"
[ $? = 2 ] || fail "an init of another version not refused"
grep -q "imap-init.state: version: .*--restart" "$T/initv1.err" || fail "$(cat "$T/initv1.err")"
cp "$T/state.now" "$D/imap-init.state"

# the check over IMAP: one submitted message acknowledged in user 2's mailbox
"$MBMAIL" send "$MB_LAB_SMTP" "$(name 0)" "$(pw 0)" "$(name 0)@mailbench.test" \
	00000000000000aa@mailbench "$(name 1)@mailbench.test" >/dev/null || fail "submission"
echo "+ 2 170" >"$T/ack.log" # 0xaa
n=0
for _ in $(seq 1 100); do
	n=$("$MBMAIL" count "$MB_LAB_IMAP" "$(name 1)" "$(pw 1)" 00000000000000aa@mailbench || echo 0)
	[ "$n" = 1 ] && break
	sleep 0.1
done
"$MAILBENCH" check --target "$MB_LAB_IMAP" --ack-log "$T/ack.log" --data "$D" >"$T/check1.out" 2>&1 ||
	fail "check of a delivered message: $(cat "$T/check1.out")"
grep -q "1 acknowledged messages, 0 missing" "$T/check1.out" || fail "$(cat "$T/check1.out")"
echo "+ 3 187" >>"$T/ack.log" # 0xbb: never sent
"$MAILBENCH" check --target "$MB_LAB_IMAP" --ack-log "$T/ack.log" --data "$D" >"$T/check2.out" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "check of a missing message exited $rc: $(cat "$T/check2.out")"
grep -q "missing: $(name 2): <00000000000000bb@mailbench>" "$T/check2.out" || fail "$(cat "$T/check2.out")"
echo "x 1 2" >"$T/bad.log"
"$MAILBENCH" check --target "$MB_LAB_IMAP" --ack-log "$T/bad.log" --data "$D" >/dev/null 2>&1
[ $? = 2 ] || fail "a malformed ack log is not exit 2"
echo "check: a delivered message found, a missing one reported (exit 1)"

kill -TERM "$LAB_PID"
wait "$LAB_PID"
LAB_PID=
echo "PASS"
