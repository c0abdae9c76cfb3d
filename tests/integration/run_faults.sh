#!/bin/sh
# run_faults.sh: honest exit codes and fault injection during a run, with
# real processes on a tiny data directory.
#  - `mailbench load` against a port where nothing listens: exit 3, naming
#    the target;
#  - `mailbench run --json` / `--csv` into a path that cannot be written:
#    exit 2 before anything starts;
#  - `mailbench check` on a data directory with a deleted database file:
#    exit 1, the file named;
#  - `mailbench run --fault kill-store@8s` on scenario 1 and scenario 2: the
#    store is killed, restarted and recovers; the report and the JSON carry
#    the fault timeline, the recovery time and the ack-log check with 0
#    acknowledged writes lost;
#  - `--fault io-error@8s:eio:db+4s`: database reads and writes fail; the
#    storage groups that meet it enter the ERROR state, are recovered in
#    place, and 0 acknowledged writes are lost.
#  - `--fault low-disk@6s+4s`: the store sees no free space; its reserve
#    refuses new content (actions fail with MB_ELOWDISK), no storage group
#    enters the ERROR state, the load recovers, 0 acknowledged writes lost.
# Exit 77 when jq is missing.  Bounded by timeout; leaves no process.
set -u
: "${MAILBENCH:?}"
command -v jq >/dev/null 2>&1 || { echo "SKIP: jq not installed"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/mb-faults.XXXXXX")
cleanup() {
	for p in $(pgrep -f "$T/" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
fail() {
	echo "FAIL: $*"
	for f in "$T"/*.out "$T"/*.err; do [ -f "$f" ] && { echo "---- $f"; tail -30 "$f"; }; done
	for f in "$T"/*.json; do [ -f "$f" ] && { echo "---- $f .health"; jq -c .health "$f"; }; done
	echo "FAIL: $*" # again, below the files
	exit 1
}

timeout 120 "$MAILBENCH" init -s online --users 20 --scale 0.01 --data "$T/data" \
	>"$T/init.out" 2>&1 || fail "init"

# a dead target: nothing measured is a runtime failure, not a summary
timeout 60 "$MAILBENCH" load -s online --target 127.0.0.1:1 \
	--topology "$T/data/topology.json" --users 3 --duration 2 >"$T/dead.out" 2>"$T/dead.err"
rc=$?
[ "$rc" -eq 3 ] || fail "load against a dead target: exit $rc, not 3"
grep -q "no user could log on to .*127.0.0.1:1" "$T/dead.err" || fail "the dead target not named"
echo "dead target: exit 3, named"

# outputs checked before the run
for o in "--json $T/no/such/dir/run.json" "--csv $T"; do
	# shellcheck disable=SC2086
	timeout 20 "$MAILBENCH" run -s online --users 2 --duration 5 --data "$T/data" $o \
		>"$T/out.out" 2>"$T/out.err"
	rc=$?
	[ "$rc" -eq 2 ] || fail "run $o: exit $rc, not 2"
	grep -q "cannot be written" "$T/out.err" || fail "run $o: no reason"
done
echo "unwritable outputs: exit 2 before the run"

# a deleted database file is a problem, not a clean directory
cp -a "$T/data" "$T/gone"
rm -f "$T/gone/sg1/db01.mdb"
timeout 60 "$MAILBENCH" check --data "$T/gone" --quiet >"$T/gone.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || fail "check with a deleted database: exit $rc, not 1"
grep -q "db01.mdb: missing" "$T/gone.out" || fail "the missing database not named"
rm -rf "$T/gone"
echo "deleted database: exit 1, named"

# kill -9 the store during a run, on both scenarios
for sc in online cached; do
	[ "$sc" = cached ] && { timeout 120 "$MAILBENCH" init -s cached --users 20 --scale 0.01 \
		--data "$T/$sc" >"$T/init2.out" 2>&1 || fail "init cached"; }
	d="$T/data"
	[ "$sc" = cached ] && d="$T/$sc"
	timeout 180 "$MAILBENCH" run -s "$sc" --users 20 --scale 0.01 --accel 300 --duration 22 \
		--warmup 4 --fault kill-store@8s --data "$d" --json "$T/$sc.json" --no-save \
		>"$T/$sc.out" 2>"$T/$sc.err"
	rc=$?
	[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "$sc kill-store: exit $rc"
	grep -q "^fault kill-store@8s .* recovery [0-9.]* s" "$T/$sc.out" ||
		fail "$sc: no recovery on screen"
	grep -q "acknowledged writes: [0-9]* checked, 0 lost" "$T/$sc.out" ||
		fail "$sc: ack check not shown or writes lost"
	jq -e '.health.faults | length == 1' "$T/$sc.json" >/dev/null || fail "$sc: no fault in JSON"
	jq -e '.health.faults[0].recovery_s >= 0 and .health.faults[0].spec == "kill-store@8s"' \
		"$T/$sc.json" >/dev/null || fail "$sc: no recovery time in JSON"
	jq -e '.health.ack_check.ran and .health.ack_check.lost == 0 and .health.ack_check.checked > 0' \
		"$T/$sc.json" >/dev/null || fail "$sc: ack check in JSON"
	jq -e '.health.faults[0].note | test("restarted")' "$T/$sc.json" >/dev/null ||
		fail "$sc: the store was not restarted"
	# every failed action has its cause (at most 6 causes listed, most first)
	jq -e '([.actions[].failed // 0] | add) as $f |
		(.health.failed_actions_by_cause | map(.n)) as $n |
		($n | length) <= 6 and ($n == ($n | sort | reverse)) and
		(if ($n | length) < 6 then ($n | add // 0) == $f else ($n | add) <= $f end) and
		all(.health.failed_actions_by_cause[]; (.cause | test("^(overrun|MB_E[A-Z]+)$")) and .n > 0)' \
		"$T/$sc.json" >/dev/null ||
		fail "$sc: failed actions and their causes disagree: $(jq -c '.health.failed_actions_by_cause' "$T/$sc.json")"
	if jq -e '.health.failed_actions_by_cause | length > 0' "$T/$sc.json" >/dev/null; then
		grep -q "^failed actions by cause: " "$T/$sc.out" || fail "$sc: causes not printed"
	fi
	echo "$sc: kill-store recovered in $(jq '.health.faults[0].recovery_s' "$T/$sc.json") s," \
		"$(jq '.health.ack_check.checked' "$T/$sc.json") acknowledged writes checked, 0 lost"
done
# database file I/O errors (every read and write of a database file fails
# with EIO for 4 s): each group that meets one enters the ERROR state, is
# noted with the fault, recovered in place once the cause is gone, and no
# acknowledged write is lost.  The run goes on 18 s after the cause is
# removed: recovery waits for every database worker to pause between
# requests, which takes longer on a loaded machine
timeout 180 "$MAILBENCH" run -s online --users 20 --scale 0.01 --accel 300 --duration 30 \
	--warmup 4 --fault io-error@8s:eio:db+4s --data "$T/data" --json "$T/dbio.json" --no-save \
	>"$T/dbio.out" 2>"$T/dbio.err"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "database io-error: exit $rc"
grep -q "^fault io-error@8s:eio:db+4s .* recovery [0-9.]* s" "$T/dbio.out" ||
	fail "database io-error: no recovery on screen"
grep -q "acknowledged writes: [0-9]* checked, 0 lost" "$T/dbio.out" ||
	fail "database io-error: ack check not shown or writes lost"
jq -e '.health.faults[0].note | test("database I/O fails \\(eio\\)")' "$T/dbio.json" >/dev/null ||
	fail "database io-error: not injected: $(jq -c '.health.faults' "$T/dbio.json")"
jq -e '.health.faults[0].note | test("sg[0-9]+ MB_EIO")' "$T/dbio.json" >/dev/null ||
	fail "database io-error: no storage group in the ERROR state: $(jq -c '.health.faults' "$T/dbio.json")"
jq -e '.health.faults[0].recovery_s >= 0' "$T/dbio.json" >/dev/null ||
	fail "database io-error: no recovery: $(jq -c '.health.faults' "$T/dbio.json")"
jq -e '.health.ack_check.ran and .health.ack_check.lost == 0 and .health.ack_check.checked > 0' \
	"$T/dbio.json" >/dev/null || fail "database io-error: ack check in JSON"
echo "database io-error: $(jq -r '.health.faults[0].note' "$T/dbio.json"); recovered in" \
	"$(jq '.health.faults[0].recovery_s' "$T/dbio.json") s, $(jq '.health.ack_check.checked' "$T/dbio.json")" \
	"acknowledged writes checked, 0 lost"
# below the free-space reserve: new content refused, the store stays in
# service
timeout 180 "$MAILBENCH" run -s online --users 20 --scale 0.01 --accel 300 --duration 20 \
	--warmup 4 --fault low-disk@6s+4s --data "$T/data" --json "$T/low.json" --no-save \
	>"$T/low.out" 2>"$T/low.err"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "low-disk: exit $rc"
grep -q "^fault low-disk@6s+4s .* recovery [0-9.]* s" "$T/low.out" ||
	fail "low-disk: no recovery on screen"
jq -e '.health.storage_group_errors == 0 and .health.faults[0].recovery_s >= 0 and
	.health.faults[0].failed_during > 0 and
	([.health.failed_actions_by_cause[] | select(.cause == "MB_ELOWDISK")] | length == 1) and
	.health.ack_check.ran and .health.ack_check.lost == 0' "$T/low.json" >/dev/null ||
	fail "low-disk: $(jq -c '.health' "$T/low.json")"
echo "low-disk: $(jq '.health.faults[0].failed_during' "$T/low.json") actions refused" \
	"(MB_ELOWDISK), no storage group in ERROR, recovered in" \
	"$(jq '.health.faults[0].recovery_s' "$T/low.json") s, 0 acknowledged writes lost"
pgrep -f "$T/" >/dev/null && fail "a process survived"
echo "run_faults: OK"
exit 0
