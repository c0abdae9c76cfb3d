#!/bin/sh
# storage-vs-fio.sh: the storage test's I/O mode against fio, in one run, on
# the same files.  mailbench storage-test --mode io runs at 4, 8 and 12
# threads (random page reads and writes at the scenario's read percentage
# and page size, O_DIRECT, plus one sequential log writer with fdatasync);
# then fio runs the equivalent job on the very same files (randrw at the same
# mix and block size, direct=1, ioengine=psync, numjobs=N, plus one
# sequential 4 KiB writer with fdatasync=1).  Prints, per thread count, the
# IOPS ratio (goal >= 0.95) and the database read latency ratio (goal <=
# 1.1), headline last.  Runs alternate (mailbench, fio) per thread count,
# ROUNDS times, and the means are compared (the machine is shared: single
# runs are noisy).  The files are removed at the end.
#
# usage: bench/storage-vs-fio.sh [DIR]      (DIR: where to put ~1 GB of files)
# environment: MAILBENCH (default ./mailbench), SIZE_GB (1), DURATION (10),
#              WARMUP (2), THREADS ("4 8 12"), ROUNDS (2)
set -eu

MB=${MAILBENCH:-./mailbench}
SIZE_GB=${SIZE_GB:-1}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-2}
THREADS=${THREADS:-"4 8 12"}
ROUNDS=${ROUNDS:-2}
command -v fio >/dev/null || { echo "fio is not installed (apt-get install fio)"; exit 2; }
command -v jq >/dev/null || { echo "jq is not installed (apt-get install jq)"; exit 2; }
[ -x "$MB" ] || { echo "no mailbench at $MB (set MAILBENCH)"; exit 2; }

BASE=${1:-${TMPDIR:-/tmp}}
W=$(mktemp -d "$BASE/mb-vs-fio.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM

# mailbench's pages carry checksums that fio's writes do not keep, so before
# each mailbench run the files are re-created (ready.json removed); each
# thread count runs mailbench then fio, ROUNDS times, and the means count.
run_mb() { # threads json
	rm -f "$W/stress/io/ready.json"
	nice -n 5 "$MB" storage-test --mode io --data "$W" --size "$SIZE_GB" --threads "$1" \
		--duration "$DURATION" --warmup "$WARMUP" --read-ms-max 1e9 --log-ms-max 1e9 \
		--json "$2" >"$W/mb.out" 2>"$W/mb.err" || { cat "$W/mb.out" "$W/mb.err"; exit 3; }
}
run_fio() { # threads json
	nice -n 5 fio --output-format=json --output="$2" \
		--name=db --filename="$files" --size=$((DBSIZE * NDB)) --rw=randrw \
		--rwmixread="$READ" --bs="${P}k" --direct=1 --ioengine=psync --numjobs="$1" \
		--time_based --runtime="$DURATION" --ramp_time="$WARMUP" --group_reporting \
		--norandommap --randrepeat=0 \
		--new_group --name=log --filename="$LOG" --size="$LOGSIZE" --rw=write \
		--bs="$LOGBS" --direct=1 --ioengine=psync --fdatasync=1 --numjobs=1 \
		--time_based --runtime="$DURATION" --ramp_time="$WARMUP" >/dev/null
}

first=$(echo $THREADS | cut -d' ' -f1)
echo "same files, ${SIZE_GB} GB; per thread count: (mailbench, fio) x $ROUNDS, ${WARMUP} s warm-up + ${DURATION} s each"
run_mb "$first" "$W/probe.json"
P=$(jq -r '.parameters.page_kb' "$W/probe.json")
READ=$(jq -r '.parameters.read_pct | floor' "$W/probe.json")
LOGBS=$(jq -r '.parameters.log_write_bytes' "$W/probe.json")
NDB=$(jq -r '.parameters.databases' "$W/probe.json")
DB="$W/stress/io/db01.dat"
LOG="$W/stress/io/log.dat"
DBSIZE=$(stat -c %s "$DB")
LOGSIZE=$(stat -c %s "$LOG")
files=""
i=1
while [ "$i" -le "$NDB" ]; do
	f=$(printf '%s/stress/io/db%02d.dat' "$W" "$i")
	files="${files:+$files:}$f"
	i=$((i + 1))
done
echo "mailbench: storage-test --mode io (page ${P} KiB, ${READ}% reads, log writes of $LOGBS bytes + fdatasync)"
echo "fio: randrw rwmixread=$READ bs=${P}k direct=1 ioengine=psync numjobs=N on $NDB file(s) of $((DBSIZE >> 20)) MiB + 1 writer bs=$LOGBS fdatasync=1"

results=""
for n in $THREADS; do
	r=1
	while [ "$r" -le "$ROUNDS" ]; do
		run_mb "$n" "$W/mb$n.$r.json"
		run_fio "$n" "$W/fio$n.$r.json"
		r=$((r + 1))
	done
	m_iops=$(jq -s '[.[].runs[0].iops] | add / length' "$W"/mb$n.*.json)
	m_rd=$(jq -s '[.[].runs[0].db_read_latency_ms.avg] | add / length' "$W"/mb$n.*.json)
	m_detail=$(jq -s -r '"rd \([.[].runs[0].db_read_iops] | add / length | floor) wr \([.[].runs[0].db_write_iops] | add / length | floor) log \([.[].runs[0].log_write_iops] | add / length | floor)"' "$W"/mb$n.*.json)
	f_iops=$(jq -s '[.[] | [.jobs[] | .read.iops + .write.iops] | add] | add / length' "$W"/fio$n.*.json)
	f_rd=$(jq -s '[.[] | .jobs[] | select(.jobname == "db") | .read.lat_ns.mean / 1e6] | add / length' "$W"/fio$n.*.json)
	f_detail=$(jq -s -r '"rd \([.[] | .jobs[] | select(.jobname == "db") | .read.iops] | add / length | floor) wr \([.[] | .jobs[] | select(.jobname == "db") | .write.iops] | add / length | floor) log \([.[] | .jobs[] | select(.jobname == "log") | .write.iops] | add / length | floor)"' "$W"/fio$n.*.json)
	each=$(for j in "$W"/mb$n.*.json; do jq -r '.runs[0].iops | floor' "$j"; done | tr '\n' ' ')
	feach=$(for j in "$W"/fio$n.*.json; do jq -r '[.jobs[] | .read.iops + .write.iops] | add | floor' "$j"; done | tr '\n' ' ')
	ratio=$(echo "$m_iops $f_iops" | awk '{printf "%.3f", $1 / $2}')
	lratio=$(echo "$m_rd $f_rd" | awk '{printf "%.3f", $1 / $2}')
	printf '%2s threads: mailbench %7.0f IOPS (%s; runs: %s), read %.3f ms | fio %7.0f IOPS (%s; runs: %s), read %.3f ms\n' \
		"$n" "$m_iops" "$m_detail" "$each" "$m_rd" "$f_iops" "$f_detail" "$feach" "$f_rd"
	results="$results $n:$ratio:$lratio"
done

echo
ok=1
line=""
for r in $results; do
	n=${r%%:*}
	rest=${r#*:}
	ir=${rest%%:*}
	lr=${rest#*:}
	awk -v a="$ir" -v b="$lr" 'BEGIN { exit !(a >= 0.95 && b <= 1.1) }' || ok=0
	line="$line  ${n} thr: IOPS x$ir, read latency x$lr;"
done
verdict=$([ "$ok" = 1 ] && echo "goal met" || echo "goal NOT met")
echo "storage-vs-fio (mailbench/fio; goal IOPS >= 0.95, read latency <= 1.1):$line $verdict"
