#!/bin/sh
# log_dir.sh: the transaction logs in a directory of their own (another
# device in a lab), end to end.  `init --log-dir` puts each storage
# group's log under LOGS/sgN and none under DATA; a short `run` on that
# data directory (its pristine copy restored, the store started on it)
# writes its log there; `check` finds the logs from topology.json or from
# --log-dir and reports clean.  A malformed topology.json is bad input
# (exit 2, the file named): without --log-dir nothing is checked, with it
# the engine's check runs and says the content was not checked.  Bounded
# in time; cleans up after itself.
set -u
: "${MAILBENCH:?}"
T=$(mktemp -d "${TMPDIR:-/tmp}/mb-logdir.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
fail() {
	echo "FAIL: $*"
	for f in init.out run.out check.out; do
		[ -f "$T/$f" ] && { echo "--- $f"; tail -20 "$T/$f"; }
	done
	exit 1
}

timeout 120 "$MAILBENCH" init -s online --users 12 --scale 0.01 --data "$T/data" \
	--log-dir "$T/logs" >"$T/init.out" 2>&1 || fail "init --log-dir"
for g in 1 2 3; do
	[ -n "$(ls "$T/logs/sg$g" 2>/dev/null)" ] || fail "no log under logs/sg$g"
	[ ! -e "$T/data/sg$g/log" ] || fail "a log under data/sg$g as well"
done

# a short run: the logs it writes are the ones under LOGS
before=$(cat "$T"/logs/sg*/* | cksum)
timeout 300 "$MAILBENCH" run -s online --users 12 --scale 0.01 --accel 40 --duration 6 \
	--warmup 1 --seed 1 --data "$T/data" --log-dir "$T/logs" --no-save -q \
	--json "$T/run.json" >"$T/run.out" 2>&1
rc=$?
# 1 is a verdict against thresholds (a dozen users on a shared machine)
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "run --log-dir exited $rc"
lw=$(jq -r '.counters.log_writes_per_s' "$T/run.json")
awk -v v="$lw" 'BEGIN { exit !(v > 0) }' || fail "no log writes measured: $lw"
after=$(cat "$T"/logs/sg*/* | cksum)
[ "$before" != "$after" ] || fail "the run wrote nothing under logs/"
for g in 1 2 3; do
	[ ! -e "$T/data/sg$g/log" ] || fail "the run made a log under data/sg$g"
done

# check: the log directory from topology.json, then given
for a in "" "--log-dir $T/logs"; do
	# shellcheck disable=SC2086 # $a is empty or two words
	timeout 120 "$MAILBENCH" check --data "$T/data" $a >"$T/check.out" 2>&1
	rc=$?
	[ "$rc" -eq 0 ] || fail "check $a exited $rc"
	grep -q "3 storage group(s)" "$T/check.out" || fail "check $a: no summary"
	grep -q ": clean" "$T/check.out" || fail "check $a: not clean"
done

# a malformed topology.json: bad input, named, with or without --log-dir
cp "$T/data/topology.json" "$T/topology.json"
printf '{"users": ' >"$T/data/topology.json"
timeout 60 "$MAILBENCH" check --data "$T/data" >"$T/check.out" 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "check with a malformed topology.json exited $rc (want 2)"
grep -q "topology.json" "$T/check.out" || fail "the file is not named"
timeout 120 "$MAILBENCH" check --data "$T/data" --log-dir "$T/logs" >"$T/check.out" 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "check --log-dir with a malformed topology.json exited $rc (want 2)"
grep -q "topology.json.*(the content was not checked)" "$T/check.out" ||
	fail "the file is not named, or the unchecked content not said"
grep -q "3 storage group(s)" "$T/check.out" || fail "the engine's check did not run"
cp "$T/topology.json" "$T/data/topology.json"
echo "ok: logs under LOGS/sgN through init, run and check"
