#!/bin/sh
# storage-vs-fio.sh: the storage test's I/O mode against fio, in one run, on
# the same files.  mailbench storage-test --mode io runs at 4, 8 and 12
# threads (random page reads and writes at the scenario's read percentage
# and page size, O_DIRECT, plus one sequential log writer with fdatasync);
# then fio runs the equivalent job on the very same files (randrw at the same
# mix and block size, direct=1, ioengine=psync, numjobs=N, plus one
# sequential 4 KiB writer with fdatasync=1).  Prints, per thread count, the
# IOPS ratio (goal >= 0.95) and the database read latency ratio (goal <=
# 1.1), headline last.  Each thread count runs ROUNDS pairs (mailbench
# then fio, fio then mailbench, ...) back to back; the ratio of each pair is
# taken and the median of the pairs is the figure (the machine and its disk
# are shared: single runs are noisy).  The files are removed at the end.
#
# usage: bench/storage-vs-fio.sh [DIR]      (DIR: where to put ~1 GB of files)
# environment: MAILBENCH (default ./mailbench), SIZE_GB (1), DURATION (10),
#              WARMUP (2), THREADS ("4 8 12"), ROUNDS (3), FIO_THREAD (set:
#              fio runs its jobs as threads of one process, as mailbench does)
set -eu

MB=${MAILBENCH:-./mailbench}
SIZE_GB=${SIZE_GB:-1}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-2}
THREADS=${THREADS:-"4 8 12"}
ROUNDS=${ROUNDS:-3}
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
	nice -n 5 "$MB" storage-test --mode io --data "$W" --size "$SIZE_GB" --threads "$1" \
		--duration "$DURATION" --warmup "$WARMUP" --read-ms-max 1e9 --log-ms-max 1e9 \
		--json "$2" >"$W/mb.out" 2>"$W/mb.err" || { cat "$W/mb.out" "$W/mb.err"; exit 3; }
}
run_fio() { # threads json
	nice -n 5 fio --output-format=json --output="$2" ${FIO_THREAD:+--thread} \
		--name=db --filename="$files" --size=$((DBSIZE * NDB)) --rw=randrw \
		--rwmixread="$READ" --bs="${P}k" --direct=1 --ioengine=psync --numjobs="$1" \
		--time_based --runtime="$DURATION" --ramp_time="$WARMUP" --group_reporting \
		--norandommap --randrepeat=0 \
		--new_group --name=log --filename="$LOG" --size="$LOGSIZE" --rw=write \
		--bs="$LOGBS" --direct=1 --ioengine=psync --fdatasync=1 --numjobs=1 \
		--time_based --runtime="$DURATION" --ramp_time="$WARMUP" >/dev/null
	rm -f "$W/stress/io/ready.json" # fio's writes broke the page checksums
}

echo "same files, ${SIZE_GB} GB; per thread count: $ROUNDS pairs (mailbench, fio), ${WARMUP} s warm-up + ${DURATION} s each"
# create the files (and learn the geometry) with a checksum pass
nice -n 5 "$MB" storage-test --mode io --data "$W" --size "$SIZE_GB" --type checksum \
	--json "$W/probe.json" >"$W/mb.out" 2>"$W/mb.err" || { cat "$W/mb.out" "$W/mb.err"; exit 3; }
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

median() { tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) printf "%.3f", a[(NR + 1) / 2]; else printf "%.3f", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

results=""
for n in $THREADS; do
	r=1
	ir_list=""
	lr_list=""
	detail=""
	while [ "$r" -le "$ROUNDS" ]; do
		# alternate the order so that a drift of the shared disk does not
		# always favour the same side of a pair
		if [ $((r % 2)) -eq 1 ]; then
			run_mb "$n" "$W/mb$n.$r.json"
			run_fio "$n" "$W/fio$n.$r.json"
		else
			run_fio "$n" "$W/fio$n.$r.json"
			run_mb "$n" "$W/mb$n.$r.json"
		fi
		mi=$(jq '.runs[0].iops' "$W/mb$n.$r.json")
		ml=$(jq '.runs[0].db_read_latency_ms.avg' "$W/mb$n.$r.json")
		fi_=$(jq '[.jobs[] | .read.iops + .write.iops] | add' "$W/fio$n.$r.json")
		fl=$(jq '.jobs[] | select(.jobname == "db") | .read.lat_ns.mean / 1e6' "$W/fio$n.$r.json")
		ir_list="$ir_list $(echo "$mi $fi_" | awk '{printf "%.3f", $1 / $2}')"
		lr_list="$lr_list $(echo "$ml $fl" | awk '{printf "%.3f", $1 / $2}')"
		detail="$detail$(printf '  round %d: mailbench %6.0f IOPS %.3f ms | fio %6.0f IOPS %.3f ms\n' "$r" "$mi" "$ml" "$fi_" "$fl")
"
		r=$((r + 1))
	done
	m_detail=$(jq -s -r '"rd \([.[].runs[0].db_read_iops] | add / length | floor) wr \([.[].runs[0].db_write_iops] | add / length | floor) log \([.[].runs[0].log_write_iops] | add / length | floor)"' "$W"/mb"$n".*.json)
	f_detail=$(jq -s -r '"rd \([.[] | .jobs[] | select(.jobname == "db") | .read.iops] | add / length | floor) wr \([.[] | .jobs[] | select(.jobname == "db") | .write.iops] | add / length | floor) log \([.[] | .jobs[] | select(.jobname == "log") | .write.iops] | add / length | floor)"' "$W"/fio"$n".*.json)
	ratio=$(echo "$ir_list" | median)
	lratio=$(echo "$lr_list" | median)
	printf '%2s threads: mean mailbench %s | fio %s\n%s' "$n" "$m_detail" "$f_detail" "$detail"
	printf '  pair ratios IOPS:%s  read latency:%s  -> medians x%s, x%s\n' "$ir_list" "$lr_list" "$ratio" "$lratio"
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
