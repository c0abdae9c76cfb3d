#!/bin/bash
# bench/mpi-scaling.sh: the Open MPI load engine on this machine: users
# per core for 1, 2 and 4 ranks, and what the once-a-second window
# exchange (MPI reductions of the counters and histogram buckets, the
# health gather, the ack lines) costs each rank, as a share of one core.
#
# One command: bench/mpi-scaling.sh [BUILD_DIR].  Initialises a data
# directory with USERS users (default 400), starts a real store on a random
# loopback port, then for K in RANKS (default "1 2 4") runs
#   mpirun -n K mailbench load --mpi --users USERS --accel ACCEL --duration DUR
# with the stats stream on rank 0's stdout, and reads each rank's CPU and
# exchange CPU from the stream ("x" "ranks": cpu_core_pct, window_cpu_ms),
# after the ramp-up.  Users per core = users / the ranks' CPU in cores, at
# the run's acceleration; x accel it is the users per core at accel 1 (the
# same action rate).  The peer is the published LoadSim 2003 density (1,000
# simulated users per client machine, at accel 1).  The verdict line says whether the exchange stayed under
# 1% of a core at 1 Hz.  Loopback only; not run by `make check`.
set -u
B=${1:-${MB_BUILDDIR:-.}}
MAILBENCH=${MAILBENCH:-$B/mailbench}
USERS=${USERS:-400}
ACCEL=${ACCEL:-10}
DUR=${DUR:-20}
RAMP=${RAMP:-5}
RANKS=${RANKS:-"1 2 4"}
command -v mpirun >/dev/null || { echo "mpi-scaling: no mpirun (apt-get install openmpi-bin)" >&2; exit 2; }
[ -x "$B/tests/unit/test_mpi" ] || { echo "mpi-scaling: $MAILBENCH was built without MPI" >&2; exit 2; }
export MAILBENCH_SCENARIOS=${MAILBENCH_SCENARIOS:-$(cd "$(dirname "$0")/.." && pwd)/scenarios}
T=$(mktemp -d "${TMPDIR:-/tmp}/mb-mpibench.XXXXXX")
STORE_PID=
LOAD_PID=
. "$(dirname "$0")/../tests/integration/load_lib.sh"
. "$(dirname "$0")/../tests/integration/mpi_lib.sh"
trap load_cleanup EXIT
mpi_need ""
ulimit -n "$(ulimit -Hn)" 2>/dev/null

"$MAILBENCH" init -s online --users "$USERS" --scale 0.001 --data "$T/data" >"$T/init.log" 2>&1 \
	|| { cat "$T/init.log"; exit 3; }
store_start "$T/data" || exit 3
echo "mpi-scaling: $USERS users, accel $ACCEL, $DUR s per rank count, loopback, this machine's $(nproc) CPUs"
printf '%-6s %6s %10s %12s %16s %12s %16s\n' ranks users "cpu cores" "users/core" "x accel/core" "vs LoadSim" "exchange % core"
worst=0
for k in $RANKS; do
	# shellcheck disable=SC2086
	mpirun $MPIRUN_ARGS -n "$k" "$MAILBENCH" load --mpi -s online \
		--target "127.0.0.1:$STORE_PORT" --topology "$T/data/topology.json" --users "$USERS" \
		--accel "$ACCEL" --duration "$DUR" --ramp "$RAMP" --threads 1 --stats-fd 1 \
		>"$T/stats.$k" 2>"$T/err.$k" || { tail "$T/err.$k"; exit 3; }
	line=$(python3 - "$T/stats.$k" "$RAMP" "$USERS" "$ACCEL" <<'PY'
import json, sys
path, ramp, users, accel = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
cores, exch, n = [], [], 0
t0 = None
for l in open(path):
    o = json.loads(l)
    if o.get("end") or "x" not in o:
        continue
    t0 = o["t"] if t0 is None else t0
    ranks = o["x"].get("ranks", [])
    if o["t"] - t0 < ramp + 1 or not ranks or any(r["cpu_core_pct"] < 0 for r in ranks):
        continue
    cores.append(sum(r["cpu_core_pct"] for r in ranks) / 100.0)
    exch.append(max(r["window_cpu_ms"] for r in ranks) / 10.0)  # ms per 1 s = % of a core /10
    n += 1
if not n:
    print("n/a n/a n/a n/a n/a"); sys.exit()
c = sum(cores) / n
e = sum(exch) / n
upc = users / c if c > 0 else float("inf")
print("%.3f %.0f %.0f %.1f %.3f" % (c, upc, upc * accel, upc * accel / 1000.0, e))
PY
)
	read -r cores upc eq ratio exch <<<"$line"
	printf '%-6s %6s %10s %12s %16s %11sx %15s%%\n' "$k" "$USERS" "$cores" "$upc" "$eq" "$ratio" "$exch"
	worst=$(python3 -c "print(max($worst, ${exch/n\/a/0}))")
done
store_stop
if python3 -c "import sys; sys.exit(0 if $worst < 1.0 else 1)"; then
	echo "mpi-scaling: the window exchange costs at most $worst% of a core per rank at 1 Hz (under 1%)"
else
	echo "mpi-scaling: the window exchange costs up to $worst% of a core per rank at 1 Hz (over 1%)"
fi
