#!/bin/sh
# storage-vs-fio.sh: the storage test's I/O mode against fio, in one run, on
# the same files.  mailbench storage-test --mode io runs at 4, 8 and 12
# threads (random page reads and writes at the scenario's read percentage
# and page size, O_DIRECT, plus one sequential log writer with fdatasync);
# then fio runs the equivalent job on the very same files (randrw at the same
# mix and block size, direct=1, ioengine=psync, numjobs=N, plus one
# sequential 4 KiB writer with fdatasync=1).  Prints, per thread count, the
# IOPS ratio (goal >= 0.95) and the database read latency ratio (goal <=
# 1.1), headline last.  mailbench goes first because fio's writes do not
# keep mailbench's page checksums; the files are removed at the end.
#
# usage: bench/storage-vs-fio.sh [DIR]      (DIR: where to put ~1 GB of files)
# environment: MAILBENCH (default ./mailbench), SIZE_GB (1), DURATION (10),
#              WARMUP (2), THREADS ("4 8 12")
set -eu

MB=${MAILBENCH:-./mailbench}
SIZE_GB=${SIZE_GB:-1}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-2}
THREADS=${THREADS:-"4 8 12"}
command -v fio >/dev/null || { echo "fio is not installed (apt-get install fio)"; exit 2; }
command -v jq >/dev/null || { echo "jq is not installed (apt-get install jq)"; exit 2; }
[ -x "$MB" ] || { echo "no mailbench at $MB (set MAILBENCH)"; exit 2; }

BASE=${1:-${TMPDIR:-/tmp}}
W=$(mktemp -d "$BASE/mb-vs-fio.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM

list=$(echo $THREADS | tr ' ' ',')
echo "mailbench storage-test --mode io: threads $list, ${SIZE_GB} GB, ${WARMUP} s warm-up + ${DURATION} s each"
nice -n 5 "$MB" storage-test --mode io --data "$W" --size "$SIZE_GB" --threads "$list" \
	--duration "$DURATION" --warmup "$WARMUP" --read-ms-max 1e9 --log-ms-max 1e9 \
	--json "$W/mb.json" >"$W/mb.out" || { cat "$W/mb.out"; exit 3; }

P=$(jq -r '.parameters.page_kb' "$W/mb.json")
READ=$(jq -r '.parameters.read_pct | floor' "$W/mb.json")
LOGBS=$(jq -r '.parameters.log_write_bytes' "$W/mb.json")
DB="$W/stress/io/db01.dat"
LOG="$W/stress/io/log.dat"
DBSIZE=$(stat -c %s "$DB")
LOGSIZE=$(stat -c %s "$LOG")
NDB=$(jq -r '.parameters.databases' "$W/mb.json")
# every database file, as fio's file list (it spreads I/O over them)
files=""
i=1
while [ "$i" -le "$NDB" ]; do
	f=$(printf '%s/stress/io/db%02d.dat' "$W" "$i")
	files="${files:+$files:}$f"
	i=$((i + 1))
done
echo "fio: randrw ${READ}% reads, bs ${P}k, direct=1, psync, on $NDB file(s) of $((DBSIZE >> 20)) MiB, + log writer bs $LOGBS fdatasync=1"

results=""
for n in $THREADS; do
	nice -n 5 fio --output-format=json --output="$W/fio$n.json" \
		--name=db --filename="$files" --size=$((DBSIZE * NDB)) --rw=randrw \
		--rwmixread="$READ" --bs="${P}k" --direct=1 --ioengine=psync --numjobs="$n" \
		--time_based --runtime="$DURATION" --ramp_time="$WARMUP" --group_reporting \
		--norandommap --randrepeat=0 \
		--new_group --name=log --filename="$LOG" --size="$LOGSIZE" --rw=write \
		--bs="$LOGBS" --direct=1 --ioengine=psync --fdatasync=1 --numjobs=1 \
		--time_based --runtime="$DURATION" --ramp_time="$WARMUP" >/dev/null
	fj="$W/fio$n.json"
	f_iops=$(jq '[.jobs[] | .read.iops + .write.iops] | add' "$fj")
	f_rd=$(jq '.jobs[] | select(.jobname == "db") | .read.lat_ns.mean / 1e6' "$fj")
	m_iops=$(jq ".runs[] | select(.threads == $n) | .iops" "$W/mb.json")
	m_rd=$(jq ".runs[] | select(.threads == $n) | .db_read_latency_ms.avg" "$W/mb.json")
	m_detail=$(jq -r ".runs[] | select(.threads == $n) | \"rd \(.db_read_iops|floor) wr \(.db_write_iops|floor) log \(.log_write_iops|floor)\"" "$W/mb.json")
	f_detail=$(jq -r '"rd \([.jobs[].read.iops]|add|floor) wr \([.jobs[] | select(.jobname=="db") | .write.iops]|add|floor) log \([.jobs[] | select(.jobname=="log") | .write.iops]|add|floor)"' "$fj")
	ratio=$(echo "$m_iops $f_iops" | awk '{printf "%.3f", $1 / $2}')
	lratio=$(echo "$m_rd $f_rd" | awk '{printf "%.3f", $1 / $2}')
	printf '%2s threads: mailbench %8.0f IOPS (%s), read %.3f ms | fio %8.0f IOPS (%s), read %.3f ms\n' \
		"$n" "$m_iops" "$m_detail" "$m_rd" "$f_iops" "$f_detail" "$f_rd"
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
