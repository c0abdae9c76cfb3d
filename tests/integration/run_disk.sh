#!/bin/sh
# run_disk.sh: the store and a run on a small file system of their own (a
# tmpfs mounted here; exit 77 when mounting is impossible, e.g. not root).
#  - A nearly full disk: `mailbench run` on a tmpfs left with 8 MiB free
#    exits 1 and the first line of its report names MB_ELOWDISK (the
#    store's free-space reserve refused new content) while no storage group
#    entered the ERROR state; once there is room again `check` says clean.
#  - The reserve on a real file system: `mailbench store --min-free-mb 64`
#    on the tmpfs left with 64 + 48 MiB free; a client saves 1 MiB messages
#    until refused (MB_ELOWDISK) after at most 48 MiB and some more slack,
#    then a flag change passes, a submission is refused, the deletes pass,
#    and the store's stats count the refusals.
#  - A read-only data directory: the store exits 3 naming MB_EROFS, and
#    `check` exits 3 (a runtime failure, not damage).
#  - `--fault disk-full@8s+8s` on scenario 1 and scenario 2: the storage
#    groups that ran out of space are recovered in place; recovery time and
#    0 acknowledged writes lost, on screen and in the JSON.
# Bounded by timeout; unmounts and removes everything.
set -u
: "${MAILBENCH:?}"
command -v jq >/dev/null 2>&1 || { echo "SKIP: jq not installed"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/mb-disk.XXXXXX")
M="$T/mnt"
mkdir -p "$M"
cleanup() {
	for p in $(pgrep -f "$T/" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	umount "$M" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
fail() {
	echo "FAIL: $*"
	for f in "$T"/*.out "$T"/*.err; do [ -f "$f" ] && { echo "---- $f"; tail -30 "$f"; }; done
	df -k "$M" 2>/dev/null
	echo "FAIL: $*" # again, last: a log's tail shows it
	exit 1
}
# 1 GiB: a run's own growth (each group keeps up to 48 spare 1 MiB log
# segments for reuse, and its databases grow) must not fill the disk
# outside the fault; a 192 MiB one filled within 45 s on a fast machine.
# tmpfs takes memory only for what is written.
if ! mount -t tmpfs -o size=1g tmpfs "$M" 2>/dev/null; then
	echo "SKIP: cannot mount a tmpfs here"
	exit 77
fi

# 1. full disk: initialise (with its pristine copy), then leave 8 MiB free
# and run on the directory as it is (--reuse: no restore before the run)
timeout 300 "$MAILBENCH" init -s online --users 20 --scale 0.01 --data "$M/data" \
	>"$T/init.out" 2>"$T/init.err" || fail "init: exit $?"
# init links its files into the pristine copy; the first run's restore
# gives the directory files of its own (the space a store needs to write)
timeout 120 "$MAILBENCH" run -s online --users 2 --scale 0.01 --duration 2 --warmup 0 \
	--data "$M/data" --no-save >"$T/first.out" 2>"$T/first.err" || fail "first run: exit $?"
avail_kb=$(df -k --output=avail "$M" | tail -n 1 | tr -d ' ')
fill_kb=$((avail_kb - 8192))
[ "$fill_kb" -gt 0 ] || fail "no room to leave 8 MiB free ($avail_kb KiB available)"
fallocate -l "$((fill_kb * 1024))" "$M/filler" ||
	dd if=/dev/zero of="$M/filler" bs=1024 count="$fill_kb" 2>/dev/null || fail "filler"
timeout 300 "$MAILBENCH" run -s online --users 20 --scale 0.01 --accel 300 --duration 30 \
	--warmup 5 --reuse --data "$M/data" --json "$T/full.json" --no-save >"$T/full.out" 2>"$T/full.err"
rc=$?
[ "$rc" -eq 1 ] || fail "full disk: exit $rc, not 1"
head -n 1 "$T/full.out" | grep -q "^verdict: FAIL: .*MB_ELOWDISK" ||
	fail "MB_ELOWDISK not on the first line"
jq -e '.verdict == "fail" and (.reason | test("MB_ELOWDISK")) and
	.health.storage_group_errors == 0' "$T/full.json" >/dev/null ||
	fail "JSON: no fail verdict naming MB_ELOWDISK, or a storage group in ERROR"
echo "nearly full disk: $(head -n 1 "$T/full.out" | cut -c1-200)"
rm -f "$M/filler"
timeout 120 "$MAILBENCH" check --data "$M/data" --quiet >"$T/check.out" 2>&1 ||
	fail "check after the full disk: exit $?"
echo "check after the full disk: clean"

# 1b. the reserve against a client that fills the disk (this file system is
# the test's own: nothing else writes to it)
CLIENT="${MB_BUILDDIR:-.}/tests/integration/mb-client"
if [ -x "$CLIENT" ]; then
	avail_kb=$(df -k --output=avail "$M" | tail -n 1 | tr -d ' ')
	fill_kb=$((avail_kb - (64 + 48) * 1024))
	[ "$fill_kb" -gt 0 ] || fail "no room to leave 112 MiB free ($avail_kb KiB available)"
	fallocate -l "$((fill_kb * 1024))" "$M/filler" ||
		dd if=/dev/zero of="$M/filler" bs=1024 count="$fill_kb" 2>/dev/null || fail "filler"
	timeout 300 "$MAILBENCH" store --data "$M/data" --listen 127.0.0.1:0 --min-free-mb 64 \
		--cache-mb 32 >"$T/rs.out" 2>"$T/rs.err" &
	spid=$!
	for _ in $(seq 1 100); do
		grep -q "^listening on" "$T/rs.out" && break
		sleep 0.1
	done
	addr=$(sed -n 's/^listening on //p' "$T/rs.out")
	[ -n "$addr" ] || fail "store did not start"
	timeout 120 "$CLIENT" "$addr" "$M/data" fill user0003 400 >"$T/fill.out" 2>&1 ||
		fail "fill: exit $?"
	cat "$T/fill.out"
	grep -q "^refused (MB_ELOWDISK)" "$T/fill.out" || fail "the reserve did not refuse"
	filled=$(sed -n 's/^filled \([0-9]*\) MiB.*/\1/p' "$T/fill.out")
	# the engine's log segments and database growth come out of the 48 MiB
	# too; 100 ms between looks at the free space are the slack
	[ "$filled" -le $((48 + 32)) ] || fail "$filled MiB saved above a 48 MiB margin"
	grep -q "below the reserve of 64 MiB" "$T/rs.err" || fail "the store did not say so"
	grep -q "ERROR" "$T/rs.err" && fail "a storage group entered the ERROR state"
	kill -TERM "$spid"
	wait "$spid" || fail "store exit $?"
	rm -f "$M/filler"
	echo "reserve: $filled MiB saved with 48 MiB above a 64 MiB reserve, then refused;" \
		"flags and deletes went on"
fi

# 2. read-only data directory
mount -o remount,ro "$M" || fail "remount ro"
timeout 60 "$MAILBENCH" store --data "$M/data" >"$T/ro.out" 2>"$T/ro.err"
rc=$?
[ "$rc" -eq 3 ] || fail "store on a read-only directory: exit $rc, not 3"
grep -q "MB_EROFS" "$T/ro.err" || fail "store: EROFS not named"
timeout 60 "$MAILBENCH" check --data "$M/data" >"$T/rocheck.out" 2>"$T/rocheck.err"
rc=$?
[ "$rc" -eq 3 ] || fail "check on a read-only directory: exit $rc, not 3"
grep -q "read-only file system" "$T/rocheck.err" || fail "check: read-only not named"
mount -o remount,rw "$M" || fail "remount rw"
echo "read-only data directory: store and check exit 3 naming EROFS"

# 3. disk-full fault, both scenarios
rm -rf "$M/data"
for sc in online cached; do
	# (45 s: the groups' recovery in place, after the fill is removed at
	# 16 s, takes longer than the rest of a 30 s run on a loaded machine)
	timeout 300 "$MAILBENCH" run -s "$sc" --users 20 --scale 0.01 --accel 300 --duration 45 \
		--warmup 4 --fault disk-full@8s+8s --data "$M/$sc" --json "$T/$sc.json" --no-save \
		>"$T/$sc.out" 2>"$T/$sc.err"
	rc=$?
	[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "$sc disk-full: exit $rc"
	grep -q "^fault disk-full@8s+8s .* recovery [0-9.]* s" "$T/$sc.out" ||
		fail "$sc: no recovery on screen"
	jq -e '.health.faults[0].recovery_s >= 0 and .health.ack_check.ran and
		.health.ack_check.lost == 0' "$T/$sc.json" >/dev/null ||
		fail "$sc: recovery or ack check in JSON: $(jq -c .health "$T/$sc.json")"
	[ ! -e "$M/$sc/.mailbench-fault-fill" ] || fail "$sc: the fill file was left"
	echo "$sc: disk-full recovered in $(jq '.health.faults[0].recovery_s' "$T/$sc.json") s," \
		"$(jq '.health.ack_check.checked' "$T/$sc.json") acknowledged writes checked, 0 lost"
	rm -rf "${M:?}/$sc"
done
echo "run_disk: OK"
exit 0
