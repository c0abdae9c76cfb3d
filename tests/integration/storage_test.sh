#!/bin/sh
# $LOOSE is a list of flags, split on purpose; the jq programs name jq variables:
# shellcheck disable=SC2086,SC2016
# storage_test.sh: integration test of `mailbench storage-test`: bad flags
# (exit 2 naming the flag), a tiny sweep in both modes (JSON checked with
# jq), a forced threshold failure (exit 1), auto-tune, the checksum type in
# both modes (clean, then a corrupted page found with file and offset),
# soft recovery, and the stats stream.  Never asserts absolute times: the
# pass runs use limits no machine misses.  Files live in a mktemp directory
# (about 150 MB at most), removed on exit.
set -u

: "${MAILBENCH:?MAILBENCH must name the built program}"
command -v jq >/dev/null 2>&1 || { echo "jq not installed: skip"; exit 77; }
command -v timeout >/dev/null 2>&1 || { echo "timeout not installed: skip"; exit 77; }

T=$(mktemp -d "${TMPDIR:-/tmp}/mbstress.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
D="$T/data"
fails=0

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

st() {
	timeout 120 "$MAILBENCH" storage-test --data "$D" "$@"
}

# expect CODE DESCRIPTION -- command...: run, compare the exit code
expect() {
	want=$1
	what=$2
	shift 3
	"$@" >"$T/out" 2>"$T/err"
	got=$?
	if [ "$got" != "$want" ]; then
		fail "$what: exit $got, expected $want"
		sed 's/^/  stdout: /' "$T/out" | tail -20
		sed 's/^/  stderr: /' "$T/err" | tail -20
	fi
}

# jcheck FILE DESCRIPTION FILTER: the jq filter must print true
jcheck() {
	if [ "$(jq -e "$3" "$1" 2>/dev/null)" != "true" ]; then
		fail "$2: $3"
		jq -c . "$1" 2>/dev/null | head -c 2000
		echo
	fi
}

LOOSE="--read-ms-max 1e9 --log-ms-max 1e9"
RUNKEYS='.runs | all(has("threads") and has("iops") and has("db_read_iops") and has("db_write_iops") and has("log_write_iops") and has("pass") and (.db_read_latency_ms | has("avg") and has("p95") and has("p99") and has("max")) and (.log_write_latency_ms | has("avg") and has("p95") and has("p99") and has("max")))'

# ---- bad input: exit 2 and the flag named ----
expect 2 "--threads 0" -- st --threads 0
grep -q -- "--threads" "$T/err" || fail "--threads 0: message does not name the flag"
expect 2 "--mode bogus" -- st --mode bogus
grep -q -- "--mode" "$T/err" || fail "--mode bogus: message does not name the flag"
expect 2 "--size -1" -- st --size -1
grep -q -- "--size" "$T/err" || fail "--size -1: message does not name the flag"
expect 2 "--type bogus" -- st --type bogus
expect 2 "--duration x" -- st --duration x
expect 2 "unknown flag" -- st --no-such-flag
expect 2 "--threads 4,,8" -- st --threads 4,,8
expect 2 "--stats-fd closed" -- st --stats-fd 97 --size 0.01
expect 0 "--help" -- "$MAILBENCH" storage-test --help
grep -q -- "--threads" "$T/out" || fail "--help does not list --threads"
[ ! -e "$D/stress" ] || fail "bad flags created files"

# ---- I/O mode sweep ----
expect 0 "io sweep" -- st --mode io --size 0.05 --threads 1,2 --duration 2 --warmup 0.5 \
	$LOOSE --json "$T/io.json"
grep -q "threads" "$T/out" || fail "io sweep: no table on stdout"
J="$T/io.json"
jcheck "$J" "io runs" '.runs | length == 2'
jcheck "$J" "io threads" '[.runs[].threads] == [1,2]'
jcheck "$J" "io keys" "$RUNKEYS"
jcheck "$J" "io figures" '.runs | all(.iops > 0 and .db_read_iops > 0 and .db_write_iops > 0 and .log_write_iops > 0 and .errors == 0 and .pass == true)'
jcheck "$J" "io iops sum" '.runs | all(.iops as $t | ((.db_read_iops + .db_write_iops + .log_write_iops) - $t) as $d | $d < 0.001 * $t and $d > -0.001 * $t)'
jcheck "$J" "io latency order" '.runs | all(.db_read_latency_ms.avg > 0 and .db_read_latency_ms.p95 <= .db_read_latency_ms.p99 and .db_read_latency_ms.p99 <= .db_read_latency_ms.max * 1.01)'
jcheck "$J" "io read ratio" '.runs | all((.db_read_iops / (.db_read_iops + .db_write_iops)) as $r | $r > 0.45 and $r < 0.75)'
jcheck "$J" "io params" '.parameters.mode == "io" and .parameters.type == "performance" and .parameters.threads == [1,2] and .pass == true'
jcheck "$J" "io published rows" '.published.rows | length == 3 and .[0].threads == 4 and .[0].iops == 5580'
jcheck "$J" "io created" '.databases_reused == false'

# the same files are reused; a threshold no disk meets fails with exit 1
# (3 s: a 1 s run of the ASan build on a loaded machine once measured no
# I/O at all, a verdict of "no I/O was measured" rather than the threshold)
expect 1 "io threshold fail" -- st --mode io --size 0.05 --threads 1 --duration 3 --warmup 0 \
	--read-ms-max 0.000001 --json "$T/io2.json"
jcheck "$T/io2.json" "io reused" '.databases_reused == true'
jcheck "$T/io2.json" "io fail verdict" '.pass == false and .runs[0].pass == false and (.runs[0].fail_reason | test("read"))'

# auto-tune
expect 0 "io auto" -- st --mode io --size 0.05 --threads auto --duration 1 --warmup 0.3 \
	$LOOSE --json "$T/auto.json"
jcheck "$T/auto.json" "auto steps" '(.runs | length) >= 2 and .runs[0].threads == 1 and .runs[1].threads == 2'
jcheck "$T/auto.json" "auto best" '(.auto.best_threads | type) == "number" and (.auto.best_threads as $b | [.runs[].threads] | index($b) != null) and .auto.best_iops > 0'

# ---- checksum type, I/O mode: clean, then a corrupted page ----
expect 0 "io checksum" -- st --mode io --size 0.05 --type checksum --json "$T/ck.json"
jcheck "$T/ck.json" "io checksum" '.checksum.pages > 0 and .checksum.problems == 0 and .checksum.mb_per_s > 0 and .pass == true'
F="$D/stress/io/db01.dat"
printf 'CORRUPT!' | dd of="$F" bs=1 seek=$((7 * 32768 + 1000)) conv=notrunc 2>/dev/null
expect 1 "io checksum corrupt" -- st --mode io --size 0.05 --type checksum --json "$T/ck2.json"
grep -q "db01.dat" "$T/err" || fail "corrupt page: stderr does not name the file"
grep -q "offset $((7 * 32768))" "$T/err" || fail "corrupt page: stderr does not give the offset"
jcheck "$T/ck2.json" "corrupt json" ".pass == false and .checksum.problems == 1 and .error.offset == $((7 * 32768)) and (.error.file | endswith(\"db01.dat\"))"

# ---- transactions mode sweep ----
expect 0 "transactions sweep" -- st --size 0.05 --threads 1,2 --duration 2 --warmup 0.5 \
	$LOOSE --json "$T/tx.json"
J="$T/tx.json"
jcheck "$J" "tx runs" '(.runs | length == 2) and ([.runs[].threads] == [1,2])'
jcheck "$J" "tx keys" "$RUNKEYS"
jcheck "$J" "tx figures" '.runs | all(.iops > 0 and .log_write_iops > 0 and .transactions_per_s > 0 and .errors == 0 and .pass == true)'
jcheck "$J" "tx params" '.parameters.mode == "transactions" and .parameters.databases >= 2'
jcheck "$J" "tx window fields" '.runs | all(has("in_tuning_window") and has("tuning_note"))'

# ---- checksum type, transactions mode (the engine's check) ----
expect 0 "tx checksum" -- st --size 0.05 --type checksum --json "$T/tck.json"
jcheck "$T/tck.json" "tx checksum" '.checksum.pages > 0 and .checksum.problems == 0 and .pass == true'

# ---- soft recovery ----
expect 0 "soft recovery" -- st --size 0.05 --type soft-recovery --segments 2 --threads 2 \
	--json "$T/sr.json"
jcheck "$T/sr.json" "soft recovery" '.soft_recovery.segments >= 2 and .soft_recovery.replay_s > 0 and .soft_recovery.mb_per_s > 0 and .soft_recovery.records > 0'

# ---- the stats stream ----
expect 0 "stats stream" -- sh -c "timeout 60 \"$MAILBENCH\" storage-test --data \"$D\" --mode io --size 0.05 --threads 2 --duration 2 --warmup 0 $LOOSE --stats-fd 3 3>\"$T/stats\""
n=$(grep -c '"stress_iops"' "$T/stats" 2>/dev/null || echo 0)
[ "$n" -ge 1 ] || fail "stats stream: no stress_iops line"
head -n 1 "$T/stats" | jq -e '.src == "stress" and .x.threads == 2 and (.c.stress_iops | type) == "number"' >/dev/null ||
	fail "stats stream: first line malformed: $(head -c 400 "$T/stats")"

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed"
	exit 1
fi
echo "storage_test: all checks passed"
exit 0
