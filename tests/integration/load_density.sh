#!/bin/bash
# tests/integration/load_density.sh: the load engine's memory per
# simulated user is bounded, and a user count past the open-file limit is
# refused with the split named.  Against the null target (no I/O: the
# engine's own cost), 500 then 5,000 users on one loop at accel 1: the
# whole RSS over the users at 5,000 and the RSS growth per added user
# between the two counts are each at most 4 KiB (memory, not time: the
# machine's load does not move it).  Then `load` with an open-file limit
# of 256 and 300 users of a target with connections exits 2 naming the
# split (several load processes).  An ASan build's shadow memory is not
# the engine's: the bounds are skipped there.  About 30 s.
set -u
MAILBENCH=${MAILBENCH:-./mailbench}
T=$(mktemp -d "${TMPDIR:-/tmp}/mb-density.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
BOUND=4096

"$MAILBENCH" init -s online --users 5000 --accounts-only --data "$T/acc" >"$T/init.out" 2>&1 ||
	{ cat "$T/init.out"; fail "init --accounts-only"; }
[ -s "$T/acc/accounts.json" ] || fail "no accounts.json"
ls "$T/acc"/sg* >/dev/null 2>&1 && fail "--accounts-only created databases"

# null N: run N null-target users; sets rss (bytes), per (bytes per user), on
null_run() {
	local n=$1 out="$T/null.$1.out"
	timeout 120 "$MAILBENCH" load -s online --target null --topology "$T/acc/accounts.json" \
		--users "$n" --threads 1 --accel 1 --ramp 2 --duration 8 >"$out" 2>&1 ||
		{ cat "$out"; fail "load --target null --users $n exited $?"; }
	cat "$out"
	local l
	l=$(grep '^memory: RSS' "$out") || fail "no memory line for $n users"
	rss=$(sed -n 's/^memory: RSS \([0-9.]*\) MiB.*/\1/p' <<<"$l" | awk '{printf "%.0f", $1 * 1048576}')
	per=$(sed -n 's/.* \([0-9]*\) bytes per simulated user.*/\1/p' <<<"$l")
	on=$(sed -n 's/^users logged on at the end: \([0-9]*\) of.*/\1/p' "$out")
	[ "${on:-0}" -eq "$n" ] || fail "$n users: ${on:-0} logged on at the end"
	# every scheduled action is accounted for: scheduled = done + failed + cut
	# (rows: label, scheduled, done, failed, late, cut, p50, p95, p99)
	awk 'function int_(x) { return x ~ /^[0-9]+$/ } function num(x) { return x ~ /^([0-9.]+|n\/a)$/ }
		$1 ~ /^[a-z]/ && NF >= 9 && int_($(NF-7)) && int_($(NF-6)) && int_($(NF-5)) && int_($(NF-4)) &&
		int_($(NF-3)) && num($(NF-2)) && num($(NF-1)) && num($NF) {
		rows++; s = $(NF-7); d = $(NF-6); f = $(NF-5); c = $(NF-3)
		if (s != d + f + c) { print "unbalanced: " $0; bad = 1 } }
		END { if (!rows) { print "no action rows"; bad = 1 } exit bad }' "$out" ||
		fail "$n users: scheduled != done + failed + cut"
}

null_run 500
rss500=$rss
null_run 5000
rss5000=$rss
slope=$(awk -v a="$rss500" -v b="$rss5000" 'BEGIN{printf "%.0f", (b - a) / 4500}')
echo "per user at 5000: $per bytes (RSS / users); growth per added user 500 -> 5000: $slope bytes"
if ldd "$MAILBENCH" 2>/dev/null | grep -q libasan; then
	echo "ASan build: its shadow memory is not the engine's, bounds not checked"
else
	[ "$per" -le "$BOUND" ] || fail "RSS per user at 5000 users: $per bytes > $BOUND"
	[ "$slope" -le "$BOUND" ] || fail "RSS growth per added user: $slope bytes > $BOUND"
fi

# past the open-file limit: refused before anything starts, the split named
(ulimit -n 256 && exec "$MAILBENCH" load -s online --target mbstore:127.0.0.1:9 \
	--topology "$T/acc/accounts.json" --users 300 --duration 2) >"$T/fd.out" 2>&1
rc=$?
cat "$T/fd.out"
[ "$rc" -eq 2 ] || fail "300 users at an open-file limit of 256: exit $rc, not 2"
grep -q 'open-file limit 256.*load processes' "$T/fd.out" || fail "the refusal does not name the split"
echo "PASS"
