#!/bin/bash
# tests/integration/run_store_target.sh: `mailbench run --target
# mbstore:ADDR:PORT` against a store started separately, with
# DATA/accounts.json present (`init` writes it; `init --accounts-only`
# rewrites it as the lab would): the load must log on with the store's
# topology (DATA/topology.json holds the store's keys), not the accounts
# file, which is for the IMAP and lab targets.  A real store on a random
# loopback port; the run ends by itself (--duration).  Checks: exit 0 or
# 1 (the verdict), no logon failure, actions done.  About 20 s.
set -u
MAILBENCH=${MAILBENCH:-./mailbench}
command -v jq >/dev/null 2>&1 || { echo "SKIP: jq not installed"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/mb-storetgt.XXXXXX")
. "$(dirname "$0")/load_lib.sh"
trap load_cleanup EXIT
load_need
fail() {
	echo "FAIL: $*"
	echo "--- run"; tail -20 "$T/run.out"
	echo "--- store log"; tail -20 "$T/store.log"
	exit 1
}

"$MAILBENCH" init -s online --users 10 --scale 0.001 --data "$T/data" >"$T/init.out" 2>&1 ||
	{ cat "$T/init.out"; fail "init"; }
"$MAILBENCH" init -s online --users 10 --scale 0.001 --data "$T/data" --accounts-only \
	>"$T/acc.out" 2>&1 || { cat "$T/acc.out"; fail "init --accounts-only"; }
[ -s "$T/data/accounts.json" ] || fail "no DATA/accounts.json"
store_start "$T/data" || fail "the store did not start"
timeout 120 "$MAILBENCH" run -s online --target "mbstore:127.0.0.1:$STORE_PORT" \
	--data "$T/data" --users 10 --accel 20 --duration 8 --warmup 2 \
	--json "$T/run.json" >"$T/run.out" 2>&1
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "run exited $rc"
jq -e '.health.connections.logon_failures == 0' "$T/run.json" >/dev/null ||
	fail "logon failures: $(jq -c .health.connections "$T/run.json")"
done=$(jq '[.actions[].done] | add' "$T/run.json")
[ "${done:-0}" -gt 0 ] || fail "no action done"
jq -e --arg t "mbstore:127.0.0.1:$STORE_PORT" '.target.target == $t and .target.embedded == false' \
	"$T/run.json" >/dev/null || fail "target: $(jq -c .target "$T/run.json")"
echo "PASS: $done actions done, no logon failure"
