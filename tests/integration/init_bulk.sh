#!/bin/sh
# init_bulk.sh: `mailbench init` builds its databases in bulk; the result
# passes `mailbench check`, as an init in ordinary transactions (--no-bulk)
# of the same scenario does; an init SIGKILLed
# part-way resumes (databases whose bulk build did not commit are built
# again) and ends clean and complete.
set -u
: "${MAILBENCH:?}"
T=$(mktemp -d "${TMPDIR:-/tmp}/mbinitbulk.XXXXXX") || exit 99
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }
keys() { sed -n 's/.* \([0-9]*\) keys,.*/\1/p'; }

init() { timeout 120 "$MAILBENCH" init -s online --scale 0.01 --data "$@"; }

init "$T/bulk" --users 48 >"$T/bulk.out" 2>&1 || { cat "$T/bulk.out"; fail "bulk init"; }
grep -q 'done: 48 mailboxes' "$T/bulk.out" || fail "bulk init did not finish"
c1=$(timeout 60 "$MAILBENCH" check --data "$T/bulk") || { echo "$c1"; fail "check after bulk init"; }
echo "$c1" | tail -n 1

init "$T/txn" --users 48 --no-bulk >"$T/txn.out" 2>&1 || { cat "$T/txn.out"; fail "--no-bulk init"; }
c2=$(timeout 60 "$MAILBENCH" check --data "$T/txn") || { echo "$c2"; fail "check after --no-bulk init"; }
k1=$(echo "$c1" | keys)
k2=$(echo "$c2" | keys)
# (row counts depend on the init's random seed, so both must only be
# non-empty; equal content is test_bulk's comparison)
if [ -z "$k1" ] || [ "$k1" -eq 0 ] || [ -z "$k2" ] || [ "$k2" -eq 0 ]; then
	fail "rows: bulk $k1, transactions $k2"
fi

# kill an init part-way (a few times, later each time), then resume
killed=0
for wait_ms in 20 100 300; do
	rm -rf "$T/crash"
	"$MAILBENCH" init -s online --scale 0.04 --users 240 --data "$T/crash" >"$T/c.out" 2>&1 &
	pid=$!
	# once the databases exist (the topology comes first), a little later
	i=0
	while [ ! -f "$T/crash/sg1/db01.mdb" ] && [ $i -lt 600 ] && kill -0 "$pid" 2>/dev/null; do
		i=$((i + 1))
		sleep 0.05
	done
	sleep "$(awk -v m="$wait_ms" 'BEGIN {printf "%.3f", m / 1000}')"
	if kill -9 "$pid" 2>/dev/null; then
		wait "$pid" 2>/dev/null
		pid=
		if ! grep -q 'done:' "$T/c.out"; then
			killed=1
			break
		fi
	fi
	wait "$pid" 2>/dev/null
	pid=
done
if [ $killed -eq 1 ]; then
	timeout 60 "$MAILBENCH" check --data "$T/crash" >"$T/chk.out" 2>&1 ||
		{ cat "$T/chk.out"; fail "check of a killed init"; }
	timeout 120 "$MAILBENCH" init -s online --scale 0.04 --users 240 --data "$T/crash" \
		>"$T/r.out" 2>&1 || { cat "$T/r.out"; fail "resume"; }
	grep -q 'resuming' "$T/r.out" || fail "no resume message"
	grep -q 'done: 240 mailboxes' "$T/r.out" || fail "resume did not finish"
	timeout 60 "$MAILBENCH" check --data "$T/crash" >"$T/chk.out" 2>&1 ||
		{ cat "$T/chk.out"; fail "check after resume"; }
	tail -n 1 "$T/chk.out"
	timeout 120 "$MAILBENCH" init -s online --scale 0.04 --users 240 --data "$T/crash" |
		grep -q 'already initialised' || fail "not complete after resume"
else
	echo "note: init finished before every kill; resume not exercised this time"
fi
echo "ok"
