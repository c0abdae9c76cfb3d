#!/bin/sh
# run_repeat.sh: comparable runs.  Two headless runs with the same --seed on
# one data directory start from the same pristine state (init saved it,
# each run restores it: same bytes and fingerprint in the JSON) and
# schedule the same actions (equal per-action counts); a third run with
# --reuse starts from the directory as the second left it (it grew).
# init links its files into the pristine copy: a run on the directory as
# init left it (--reuse) writes files of its own and the copy keeps its
# bytes.
# Exit 77 when jq or a child command is missing.  Bounded by timeout.
set -u
MAILBENCH=${MAILBENCH:-$(pwd)/mailbench}
command -v jq >/dev/null 2>&1 || { echo "SKIP: jq not installed"; exit 77; }
for c in init store load; do
	"$MAILBENCH" "$c" --help >/dev/null 2>&1 || { echo "SKIP: no 'mailbench $c'"; exit 77; }
done
T=$(mktemp -d "${TMPDIR:-/tmp}/mb-repeat.XXXXXX")
cleanup() {
	for p in $(pgrep -f "$T/" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
fail() {
	echo "FAIL: $*"
	for f in "$T"/*.err; do [ -f "$f" ] && { echo "---- $f"; tail -20 "$f"; }; done
	exit 1
}
run() { # name, extra flags...
	n=$1
	shift
	timeout 240 "$MAILBENCH" run -s online --users 6 --scale 0.01 --accel 150 \
		--duration 12 --warmup 4 --seed 42 --data "$T/d" --json "$T/$n.json" \
		--no-save "$@" >"$T/$n.out" 2>"$T/$n.err"
	rc=$?
	[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "$n: exit code $rc"
	jq -e '.failed == false' "$T/$n.json" >/dev/null || fail "$n: run failed"
}
pristine_sum() { (cd "$T/d/pristine" && find . -type f | sort | xargs md5sum | md5sum); }
timeout 240 "$MAILBENCH" init -s online --users 6 --scale 0.01 --data "$T/d" >"$T/init.out" \
	2>"$T/init.err" || fail "init: exit $?"
grep -q "files linked" "$T/init.out" || fail "init: no pristine copy: $(tail -n 1 "$T/init.out")"
[ "$(stat -c %h "$T/d/sg1/db01.mdb")" = 2 ] || fail "init did not link db01.mdb into the copy"
s0=$(pristine_sum)
run r0 --reuse
[ "$(stat -c %h "$T/d/sg1/db01.mdb")" = 1 ] || fail "the store wrote a file shared with the copy"
[ "$(pristine_sum)" = "$s0" ] || fail "a run changed the pristine copy"
run r1
run r2
run r3 --reuse
jq -e '.data.start == "restored" and .parameters.seed == 42' "$T/r1.json" >/dev/null ||
	fail "first run: $(jq -c .data "$T/r1.json")"
jq -e '.data.start == "restored"' "$T/r2.json" >/dev/null ||
	fail "second run: $(jq -c .data "$T/r2.json")"
jq -e '.data.start == "reused"' "$T/r3.json" >/dev/null ||
	fail "third run: $(jq -c .data "$T/r3.json")"
b1=$(jq '.data.bytes' "$T/r1.json")
b2=$(jq '.data.bytes' "$T/r2.json")
b3=$(jq '.data.bytes' "$T/r3.json")
[ "$b1" = "$b2" ] || fail "the data directory differed before the runs: $b1 vs $b2 bytes"
[ "$(jq -r .data.fingerprint "$T/r1.json")" = "$(jq -r .data.fingerprint "$T/r2.json")" ] ||
	fail "different data states before the two runs"
awk -v a="$b3" -v b="$b2" 'BEGIN { exit !(a > b) }' || fail "--reuse did not start from the grown directory ($b3 <= $b2)"
# the cache keeps the published cache-to-data ratio (896 MB for 8,000 x
# 25 MB) of the database files, above the cache's 2 MiB minimum
jq -e '(.data.db_bytes * 896 / (8000 * 25) / 1048576) as $want |
	([$want, 2] | max) as $c | ((.parameters.cache_mb - $c) | fabs) < 1e-6 * $c' \
	"$T/r2.json" >/dev/null || fail "cache $(jq .parameters.cache_mb "$T/r2.json") MiB is not the ratio's"
c1=$(jq -c '[.actions[] | .scheduled]' "$T/r1.json")
c2=$(jq -c '[.actions[] | .scheduled]' "$T/r2.json")
echo "scheduled per action: $c1 / $c2; data before both: $b1 bytes"
[ "$c1" = "$c2" ] || fail "same seed, different action counts: $c1 vs $c2"
[ "$(pristine_sum)" = "$s0" ] || fail "the runs changed the pristine copy"
jq -e '[.actions[] | .scheduled] | add > 10' "$T/r1.json" >/dev/null || fail "too few actions to compare"
echo PASS
