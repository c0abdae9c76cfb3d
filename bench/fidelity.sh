#!/bin/bash
# bench/fidelity.sh: how close a run comes to the published workload, per
# user.  Runs scenario 1 (online) and scenario 2 (cached) with `mailbench
# run`, compression on and off, plus an online run with twice the database
# cache, on one data directory per scenario (each run restores the pristine
# state, so the runs compare), then prints per user-equivalent (users x
# accel) the ratio to the published figure per user:
#   RPC operations/s, network Kbit/s with compression on (against the
#   Exchange 2003 column) and off (against the Exchange 2000 / Outlook 2000
#   column, the published uncompressed traffic), local delivery rate, log
#   writes/s, database disk transfers/s, network bytes per RPC operation;
# then the published findings as they come out of the runs (compression
# cuts network by 40-60%; twice the cache cuts disk transfers per
# user-equivalent; cached against online: more RPC operations, fewer disk
# transfers, less store CPU per user-equivalent); the storage work per RPC
# operation (disk transfers, reads, writes, log writes) and per local
# delivery beside the published server's; and last one line with the
# worst ratio.
#
# One command: bench/fidelity.sh [BUILD_DIR].  USERS, SCALE, ACCEL,
# DURATION, WARMUP override the scenario's run defaults (1,000 users, scale
# 0.04, accel 8, 300 s, 30 s warm-up); DATA the directory for the data and
# results (default a new one under $TMPDIR, removed at the end unless KEEP=1).
# Each run is a real store and load engine on loopback.  Not run by
# `make check` (minutes per run).
set -u
B=${1:-${MB_BUILDDIR:-.}}
MAILBENCH=${MAILBENCH:-$B/mailbench}
command -v jq >/dev/null 2>&1 || { echo "fidelity.sh: needs jq" >&2; exit 77; }
[ -x "$MAILBENCH" ] || { echo "fidelity.sh: no $MAILBENCH" >&2; exit 2; }
W=${DATA:-$(mktemp -d "${TMPDIR:-/tmp}/mb-fidelity.XXXXXX")}
mkdir -p "$W"
cleanup() { [ "${KEEP:-0}" = 1 ] || [ -n "${DATA:-}" ] || rm -rf "$W"; }
trap cleanup EXIT INT TERM
args=()
[ -n "${USERS:-}" ] && args+=(--users "$USERS")
[ -n "${SCALE:-}" ] && args+=(--scale "$SCALE")
[ -n "${ACCEL:-}" ] && args+=(--accel "$ACCEL")
[ -n "${DURATION:-}" ] && args+=(--duration "$DURATION")
[ -n "${WARMUP:-}" ] && args+=(--warmup "$WARMUP")

run() { # scenario, name, extra flags...
	local sc=$1 name=$2
	shift 2
	echo "fidelity: $sc $name ..." >&2
	"$MAILBENCH" run -s "$sc" "${args[@]}" --data "$W/$sc" --json "$W/$sc-$name.json" \
		--no-save "$@" >"$W/$sc-$name.out" 2>"$W/$sc-$name.err"
	local rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
		echo "fidelity: $sc $name failed (exit $rc):" >&2
		tail -5 "$W/$sc-$name.err" >&2
		exit 3
	fi
}
for sc in online cached; do
	run "$sc" on --compression on
	run "$sc" off --compression off
done
cache=$(jq '.parameters.cache_mb' "$W/online-on.json")
run online cache2 --compression on --cache-mb "$(echo "$cache" | awk '{ print $1 * 2 }')"

# published figures per user: the last column (Exchange 2003 with
# compression) and the first (Exchange 2000 / Outlook 2000, uncompressed);
# each scenario's file is read once
for sc in online cached; do
	"$MAILBENCH" scenario show "$sc" --json >"$W/$sc-scenario.json" ||
		{ echo "fidelity: cannot read scenario $sc" >&2; exit 3; }
done
pub() { # scenario, column index (0 first, -1 last), key
	jq -r --argjson c "$2" --arg k "$3" \
		'.published.columns[$c].values as $v | ($v[$k] / $v.users)' "$W/$1-scenario.json"
}
# a run's figure per user-equivalent
mine() { # json, key
	jq -r --arg k "$2" '.counters[$k] / (.parameters.users * .parameters.accel)' "$1"
}
bytes_per_op() { # users-normalised network Kbit/s and ops/s -> bytes per op
	awk -v k="$1" -v o="$2" 'BEGIN { if (o > 0) printf "%.6g", k * 1000 / 8 / o; else print "nan" }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
# a run's counter per another of its counters, and the published column's
per() { ratio "$(jq ".counters.$2" "$1")" "$(jq ".counters.$3" "$1")"; } # json, key, per key
pubper() { ratio "$(pub "$1" -1 "$2")" "$(pub "$1" -1 "$3")"; }            # scenario, key, per key
perop() { per "$1" "$2" rpc_ops_per_s; }                                    # json, key
# one line of a scenario's counters per counter dk, each beside the
# published figure unless its spec ends in ":-" (LABEL:KEY[:-] ...)
per_line() { # scenario, per key, specs...
	local sc=$1 dk=$2 out="" spec l k v
	shift 2
	for spec in "$@"; do
		IFS=: read -r l k _ <<<"$spec"
		v="$l $(per "$W/$sc-on.json" "$k" "$dk")"
		[ "${spec%:-}" = "$spec" ] && v="$v (published $(pubper "$sc" "$k" "$dk"))"
		out="$out${out:+; }$v"
	done
	echo "  $sc: $out"
}

rows=()
add() { # label, scenario, ratio
	rows+=("$1|$2|$3")
}
for sc in online cached; do
	on="$W/$sc-on.json"
	off="$W/$sc-off.json"
	add "RPC operations/s" "$sc" "$(ratio "$(mine "$on" rpc_ops_per_s)" "$(pub "$sc" -1 rpc_ops_per_s)")"
	add "network Kbit/s, compression on" "$sc" \
		"$(ratio "$(mine "$on" network_kbit_per_s)" "$(pub "$sc" -1 network_kbit_per_s)")"
	add "network Kbit/s, compression off" "$sc" \
		"$(ratio "$(mine "$off" network_kbit_per_s)" "$(pub "$sc" 0 network_kbit_per_s)")"
	add "local delivery rate" "$sc" \
		"$(ratio "$(mine "$on" local_delivery_rate)" "$(pub "$sc" -1 local_delivery_rate)")"
	add "log writes/s" "$sc" "$(ratio "$(mine "$on" log_writes_per_s)" "$(pub "$sc" -1 log_writes_per_s)")"
	add "database disk transfers/s" "$sc" \
		"$(ratio "$(mine "$on" db_transfers_per_s)" "$(pub "$sc" -1 db_transfers_per_s)")"
	bm=$(bytes_per_op "$(mine "$on" network_kbit_per_s)" "$(mine "$on" rpc_ops_per_s)")
	bp=$(bytes_per_op "$(pub "$sc" -1 network_kbit_per_s)" "$(pub "$sc" -1 rpc_ops_per_s)")
	add "network bytes per RPC operation" "$sc" "$(ratio "$bm" "$bp")"
done

echo
echo "per user-equivalent (users x accel) / published per user"
printf '%-34s %8s %8s\n' "row" "online" "cached"
for label in "RPC operations/s" "network Kbit/s, compression on" "network Kbit/s, compression off" \
	"local delivery rate" "log writes/s" "database disk transfers/s" \
	"network bytes per RPC operation"; do
	o=n/a c=n/a
	for r in "${rows[@]}"; do
		IFS='|' read -r l s v <<<"$r"
		[ "$l" = "$label" ] || continue
		[ "$s" = online ] && o=$v
		[ "$s" = cached ] && c=$v
	done
	printf '%-34s %7sx %7sx\n' "$label" "$o" "$c"
done

echo
echo "published findings, from the runs"
for sc in online cached; do
	cut=$(awk -v a="$(mine "$W/$sc-on.json" network_kbit_per_s)" \
		-v b="$(mine "$W/$sc-off.json" network_kbit_per_s)" \
		'BEGIN { if (b > 0) printf "%.0f", (1 - a / b) * 100; else print "n/a" }')
	echo "  $sc: compression on cuts network by $cut% (published: 40-60%)"
done
t1=$(mine "$W/online-on.json" db_transfers_per_s)
t2=$(mine "$W/online-cache2.json" db_transfers_per_s)
mib() { jq -r '.parameters.cache_mb * 100 | round / 100' "$1"; } # a run's cache, rounded
echo "  online: twice the cache ($(mib "$W/online-on.json") -> $(mib "$W/online-cache2.json") MiB):" \
	"disk transfers per UE x$(ratio "$t2" "$t1") (published: fewer)"
# per operation too: a saturated run does less work per UE
echo "          per RPC operation: transfers $(perop "$W/online-on.json" db_transfers_per_s) ->" \
	"$(perop "$W/online-cache2.json" db_transfers_per_s), reads $(perop "$W/online-on.json" db_reads_per_s)" \
	"-> $(perop "$W/online-cache2.json" db_reads_per_s);" \
	"cache hit $(jq '.counters.db_cache_hit_pct | round' "$W/online-on.json")% ->" \
	"$(jq '.counters.db_cache_hit_pct | round' "$W/online-cache2.json")%"
# a run whose load engine was saturated in 5% of its windows or more, or
# whose machine was busy over 95%, did less than its users asked for
for f in "$W"/*.json; do
	if jq -e '(.counters.load_saturated // 0) >= 0.05 or .counters.machine_cpu_pct > 95' "$f" \
		>/dev/null; then
		echo "  NOTE: $(basename "$f" .json): machine CPU" \
			"$(jq '.counters.machine_cpu_pct | round' "$f")%, load engine saturated in" \
			"$(jq '(.counters.load_saturated // 0) * 100 | round' "$f")% of windows: figures are misleading"
	fi
done
for k in rpc_ops_per_s db_transfers_per_s processor_pct; do
	echo "  cached / online, $k per UE: x$(ratio "$(mine "$W/cached-on.json" "$k")" \
		"$(mine "$W/online-on.json" "$k")")"
done
echo "  (published: cached mode has more RPC operations, fewer disk transfers, less store CPU)"

# the storage rows per RPC operation: how much storage work an operation
# does here against the published server (which gives no read/write split)
echo
echo "storage work per RPC operation (published: the table's column)"
for sc in online cached; do
	per_line "$sc" rpc_ops_per_s "disk transfers:db_transfers_per_s" "reads:db_reads_per_s:-" \
		"of them long values:db_reads_lv_per_s:-" "writes:db_writes_per_s:-" \
		"log writes:log_writes_per_s"
done

# and per local delivery (a message delivered into a database): the
# published server's log writes and transfers per delivery are about the
# same in both scenarios, its operations per delivery are not
# (docs/workload.md, "The storage work per local delivery")
echo
echo "storage work per local delivery (published: the table's column)"
for sc in online cached; do
	per_line "$sc" local_delivery_rate "RPC operations:rpc_ops_per_s" \
		"disk transfers:db_transfers_per_s" "log writes:log_writes_per_s"
done

worst=""
wv=0
for r in "${rows[@]}"; do
	IFS='|' read -r l s v <<<"$r"
	[ "$v" = n/a ] && continue
	d=$(awk -v x="$v" 'BEGIN { d = x > 1 ? x : (x > 0 ? 1 / x : 1e9); printf "%.4f", d }')
	if awk -v d="$d" -v w="$wv" 'BEGIN { exit !(d > w) }'; then
		wv=$d
		worst="$l ($s) ${v}x"
	fi
done
echo
echo "worst ratio: $worst"
