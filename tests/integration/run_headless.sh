#!/bin/sh
# run_headless.sh: short headless runs (`mailbench run`) of scenario 1 and
# scenario 2 on a tiny data directory with a real store and load engine:
# the comparison table on stdout, the JSON summary (checked with jq
# against the counters table and docs/run-json.md), the CSV (one row per
# second per counter), the saved run, the exit code, and no process left;
# the legend under the table; a short run's warm-up (a third of it) and a
# warm-up as long as the run refused (exit 2); cached mode's measured
# window after every user's first download.
# Exit 77 when jq or a child command is missing.  Bounded by timeout.
set -u
MAILBENCH=${MAILBENCH:-$(pwd)/mailbench}
command -v jq >/dev/null 2>&1 || { echo "SKIP: jq not installed"; exit 77; }
for c in init store load; do
	if ! "$MAILBENCH" "$c" --help >/dev/null 2>&1; then
		echo "SKIP: 'mailbench $c' is not available in this build"
		exit 77
	fi
done
T=$(mktemp -d "${TMPDIR:-/tmp}/mb-run.XXXXXX")
cleanup() {
	for p in $(pgrep -f "$T/" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
fail() {
	echo "FAIL: $*"
	for f in "$T"/*.out "$T"/*.err; do [ -f "$f" ] && { echo "---- $f"; tail -40 "$f"; }; done
	exit 1
}

"$MAILBENCH" counters --json >"$T/counters.json" 2>/dev/null ||
	fail "mailbench counters --json"
ncounters=$(jq 'if type == "array" then length else (.counters | length) end' "$T/counters.json")

for sc in online cached; do
	echo "== $sc"
	timeout 240 "$MAILBENCH" run -s "$sc" --users 8 --scale 0.01 --accel 100 \
		--duration 20 --warmup 5 --data "$T/$sc" --json "$T/$sc.json" \
		--csv "$T/$sc.csv" >"$T/$sc.out" 2>"$T/$sc.err"
	rc=$?
	[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "$sc: exit code $rc"
	# the table: every published row, the run average column
	grep -q "run avg" "$T/$sc.out" || fail "$sc: no run avg column"
	# the legend under the table: published headings and this run in full
	grep -q "^(a) Windows 2000 SP3, Exchange 2000 SP3" "$T/$sc.out" ||
		fail "$sc: no legend line for (a)"
	grep -q "^run avg: .*$sc, compression on; SMT" "$T/$sc.out" ||
		fail "$sc: the legend does not name this run's client mode"
	for l in "users" "% processor time" "context switches/s" "local delivery rate" \
		"network usage (Kbit/s)" "database disk transfers/s" "log writes/s" \
		"disk bytes/s (MB)" "database cache size (MB)" "RPC operations/s" \
		"RPC requests" "client latency (ms)" "store virtual bytes (MB)"; do
		grep -q "^$l " "$T/$sc.out" || fail "$sc: no row '$l'"
	done
	grep -q "^verdict: \(pass\|fail\)" "$T/$sc.out" || fail "$sc: no verdict"
	grep -q "mailbench run: t=" "$T/$sc.err" || fail "$sc: no progress line"
	# JSON
	j="$T/$sc.json"
	jq -e '.schema == "mailbench-run/1"' "$j" >/dev/null || fail "$sc: schema"
	jq -e --arg s "$sc" '.scenario.name == $s' "$j" >/dev/null || fail "$sc: scenario name"
	jq -e --argjson n "$ncounters" '.counters | length == $n' "$j" >/dev/null ||
		fail "$sc: not every counters-table key"
	jq -e '.counters.users > 0 and .counters.rpc_ops_per_s > 0' "$j" >/dev/null ||
		fail "$sc: users or RPC operations not measured"
	jq -e '.counters.processor_pct >= 0 and .counters.store_virtual_mb > 0 and
		.counters.store_loop_cpu_pct > 0 and .counters.store_loop_cpu_pct <= 101 and
		.counters.machine_steal_pct >= 0' "$j" >/dev/null ||
		fail "$sc: store figures not measured"
	jq -e '.parameters.users == 8 and .parameters.accel == 100 and .parameters.measured_s > 0' \
		"$j" >/dev/null || fail "$sc: parameters"
	# cached mode measures after every user's first download (the replica
	# starts empty): the JSON says when that was, and the window began no
	# earlier; online has no first download
	if [ "$sc" = cached ]; then
		jq -e '.parameters.first_downloads.users == 8 and
			.parameters.first_downloads.all_done_s > 0 and
			.parameters.warmup_s >= .parameters.first_downloads.all_done_s and
			.parameters.warmup_s >= 5' "$j" >/dev/null ||
			fail "$sc: first downloads: $(jq -c .parameters "$j")"
		grep -q "^cached mode: every user's first download done" "$T/$sc.out" ||
			fail "$sc: no first-download line"
	else
		jq -e '.parameters.first_downloads == null and .parameters.warmup_s == 5' "$j" \
			>/dev/null || fail "$sc: online warm-up: $(jq -c .parameters "$j")"
	fi
	jq -e '.latency.rpc.count > 0 and .latency.rpc.p99_ms >= .latency.rpc.p50_ms' "$j" \
		>/dev/null || fail "$sc: RPC latency"
	jq -e '.actions | length == 11' "$j" >/dev/null || fail "$sc: actions"
	jq -e '[.actions[] | .done // 0] | add > 0' "$j" >/dev/null || fail "$sc: no action done"
	jq -e '.verdict == "pass" or .verdict == "fail"' "$j" >/dev/null || fail "$sc: verdict"
	jq -e '.failed == false' "$j" >/dev/null || fail "$sc: run marked failed: $(jq -r .failure "$j")"
	if [ "$rc" -eq 0 ]; then
		jq -e '.verdict == "pass"' "$j" >/dev/null || fail "$sc: exit 0 but verdict fail"
	fi
	# one LoadSim score: the same value in the counters, the latency block,
	# the thresholds and the printed table
	jq -e '.latency.score_ms != null and .latency.score_ms == .counters.loadsim_score_ms' \
		"$j" >/dev/null || fail "$sc: two different LoadSim scores in the JSON"
	score=$(jq -r '.latency.score_ms | round' "$j")
	grep -q "^LoadSim score (p95) *$score ms" "$T/$sc.out" ||
		fail "$sc: the table's score is not the JSON's ($score ms)"
	# the vs column per 1,000 user-equivalents (users x accel) against the
	# published column per 1,000 of its users
	jq -e '.comparison.normalisation == "per 1,000 user-equivalents" and
		.comparison.user_equivalents == 800' "$j" >/dev/null ||
		fail "$sc: comparison not per user-equivalent"
	col=$(jq -r '.comparison.column' "$j")
	"$MAILBENCH" scenario show "$sc" --json >"$T/$sc.scenario.json" ||
		fail "$sc: scenario show --json"
	ratio=$(jq -r --arg c "$col" --slurpfile cfg "$T/$sc.scenario.json" '
		(.counters.rpc_ops_per_s / 800 * 1000) /
		(($cfg[0].published.columns[] | select(.id == $c) | .values.rpc_ops_per_s) / 8000 * 1000)' \
		"$j" 2>/dev/null)
	[ -n "$ratio" ] || fail "$sc: no published RPC operations in column $col"
	jq -e --argjson r "$ratio" '(.comparison.rows.rpc_ops_per_s.ratio - $r) | fabs < 1e-6' \
		"$j" >/dev/null || fail "$sc: RPC ratio $(jq .comparison.rows.rpc_ops_per_s.ratio "$j") != $ratio"
	cell=$(printf '%.2fx' "$ratio")
	grep -Eq "^RPC operations/s .* $cell( |\$)" "$T/$sc.out" ||
		fail "$sc: vs column of RPC operations/s is not $cell"
	grep -q "^compared .*800 UE *per 1k UE" "$T/$sc.out" || fail "$sc: no normalisation header"
	jq -e '.comparison.rows.processor_pct.compared == "not_comparable" and
		(.comparison.rows.processor_pct.reason | length > 0)' "$j" >/dev/null ||
		fail "$sc: processor time should be not comparable, with a reason"
	# CSV: header, one row per second per measured counter, time ascending
	head -1 "$T/$sc.csv" | grep -qx 't_s,counter,value' || fail "$sc: CSV header"
	rows=$(grep -c ',rpc_ops_per_s,' "$T/$sc.csv")
	[ "$rows" -ge 10 ] || fail "$sc: only $rows RPC rows in the CSV"
	# (times count from the load's start: rows sampled while the store was
	# still starting are negative, so the first row sets the floor)
	awk -F, 'NR > 1 { if (NR > 2 && $1 + 0 < last) exit 1; last = $1 + 0 }' "$T/$sc.csv" ||
		fail "$sc: CSV time goes backwards"
	# the run is saved for the console's runs screen
	ls "$T/$sc"/runs/*.json >/dev/null 2>&1 || fail "$sc: run not saved"
	echo "   ok (exit $rc)"
done

# the scenario's compression threshold reaches the store (which tells the
# load engine at logon): with it above every payload, the online run above
# again (same seed, same restored data, same actions) sends its frames
# uncompressed, so more bytes
printf 'base = "online";\nrun = { compression_min_bytes = 16777216; };\n' >"$T/nocomp.cfg"
timeout 240 "$MAILBENCH" run -s "$T/nocomp.cfg" --users 8 --scale 0.01 --accel 100 \
	--duration 20 --warmup 5 --data "$T/online" --json "$T/nocomp.json" --no-save \
	>"$T/nocomp.out" 2>"$T/nocomp.err"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "nocomp: exit code $rc"
jq -e --slurpfile c "$T/online.json" '
	.parameters.compression == true and
	([.actions[] | .done // 0] | add) == ([$c[0].actions[] | .done // 0] | add) and
	.counters.network_kbit_per_s > 1.15 * $c[0].counters.network_kbit_per_s' \
	"$T/nocomp.json" >/dev/null ||
	fail "compression_min_bytes did not reach the store: $(jq -c '[.counters.network_kbit_per_s, ([.actions[] | .done // 0] | add)]' "$T/nocomp.json") against $(jq -c '[.counters.network_kbit_per_s, ([.actions[] | .done // 0] | add)]' "$T/online.json")"
echo "== compression_min_bytes reaches the store"

# a threshold the run cannot meet (DATA/thresholds.cfg, as the console
# writes it): verdict fail, exit 1; the data directory is reused (no init)
cat >"$T/online/thresholds.cfg" <<'CFG'
counters = { rpc_ops_per_s = { cmp = ">="; value = 1000000000.0; }; };
CFG
# (no --warmup: the scenario's 30 s is too long for 6 s, a third is used)
timeout 120 "$MAILBENCH" run -s online --users 4 --scale 0.01 --accel 100 --duration 6 \
	--data "$T/online" --json "$T/fail.json" --no-save >"$T/fail.out" 2>"$T/fail.err"
rc=$?
[ "$rc" -eq 1 ] || fail "an unmet threshold gave exit $rc, not 1"
jq -e '.verdict == "fail" and .thresholds.counters.rpc_ops_per_s.verdict == "fail"' \
	"$T/fail.json" >/dev/null || fail "the failed threshold is not in the JSON"
grep -q "initialising" "$T/fail.err" && fail "an initialised data directory was initialised again"
grep -q "warm-up 2 s" "$T/fail.err" || fail "a short run did not get a shorter warm-up"
jq -e '.parameters.warmup_s == 2 and .parameters.measured_s > 0' "$T/fail.json" >/dev/null ||
	fail "a short run measured nothing after its warm-up"
echo "== unmet threshold: exit 1"

# bad input: exit 2, nothing written
"$MAILBENCH" run -s online --users nope --json "$T/bad.json" >/dev/null 2>&1
[ $? -eq 2 ] || fail "bad --users is not exit 2"
[ ! -e "$T/bad.json" ] || fail "bad input wrote JSON"
# a warm-up as long as the run would leave nothing to average: exit 2
"$MAILBENCH" run -s online --duration 5 --warmup 5 --data "$T/online" \
	--json "$T/bad2.json" >/dev/null 2>"$T/warm.err"
[ $? -eq 2 ] || fail "--warmup as long as --duration is not exit 2"
grep -q -- "--warmup" "$T/warm.err" || fail "the warm-up error does not name --warmup"
[ ! -e "$T/bad2.json" ] || fail "a bad warm-up wrote JSON"
left=$(pgrep -a -x mailbench 2>/dev/null | grep -c -F "$T/")
[ "$left" -eq 0 ] || fail "$left process(es) left"
echo "PASS"
