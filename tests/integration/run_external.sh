#!/bin/sh
# run_external.sh: `mailbench run` against a mail server it did not start:
# the lab (`mailbench lab dovecot`) is started separately, then the run
# drives it as an external target (`--target imap://... --submit
# smtp://...`), provisioning over IMAP, a 20-user load and the ack check:
#  - with --server-pids naming the lab's Dovecot and Postfix masters
#    (lab.env): their process trees give the server counters;
#  - with --server-cgroup naming a cgroup v2 the lab's processes were moved
#    into (made here under the cgroup2 mount; when none can be made or
#    written, that part is skipped with a SKIP line).
# Each run: exit 0 or 1 (thresholds), the ack check ran and lost nothing,
# and the server counters (processor_pct, context_switches_per_s,
# store_virtual_mb; rpc_ops_per_s from the load engine) are measured,
# > 0 in the JSON's .counters.  Exit 77 without dovecot/postfix/jq or root.
# Bounded by timeouts.
set -u
. "$(dirname "$0")/lab_lib.sh"
lab_setup runext
CG=
cg_cleanup() {
	lab_cleanup
	[ -n "$CG" ] && [ -d "$CG" ] || return 0
	# what is left (nothing once the lab stopped) back to the parent
	while read -r p; do echo "$p" >"$CG/../cgroup.procs"; done <"$CG/cgroup.procs" 2>/dev/null
	rmdir "$CG" 2>/dev/null || echo "could not remove the cgroup $CG"
}
trap cg_cleanup EXIT INT TERM
fail() {
	echo "FAIL: $*"
	for f in "$T"/*.out "$T"/*.err "$T"/lab.out "$D"/lab/dovecot.log; do
		[ -f "$f" ] && { echo "---- $f"; tail -30 "$f"; }
	done
	exit 1
}

lab_start 20
IMAP=${MB_LAB_IMAP:?} SMTP=${MB_LAB_SMTP:?}

# run NAME SERVER-OPTIONS...: a 20 s run against the lab as an external target
run() {
	name=$1
	shift
	echo "== $name: $*"
	timeout 240 "$MAILBENCH" run -s online --target "$IMAP" --submit "$SMTP" --data "$D" \
		--users 20 --scale 0.1 --accel 100 --duration 20 --warmup 5 "$@" \
		--json "$T/$name.json" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	cat "$T/$name.out"
	[ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "$name: run exited $rc"
	kill -0 "$LAB_PID" 2>/dev/null || fail "$name: the lab is gone (the run must not stop it)"
	grep -q "not a server this run starts" "$T/$name.out" "$T/$name.err" &&
		fail "$name: the server counters were not measured"
	j=$T/$name.json
	[ "$(jq -r '.health.ack_check.ran' "$j")" = true ] || fail "$name: the ack check did not run"
	[ "$(jq -r '.health.ack_check.lost' "$j")" = 0 ] || fail "$name: acknowledged messages lost"
	[ "$(jq -r '.health.ack_check.checked > 0' "$j")" = true ] || fail "$name: nothing acknowledged"
	for k in processor_pct context_switches_per_s store_virtual_mb rpc_ops_per_s; do
		[ "$(jq -r ".counters.$k // 0 | . > 0" "$j")" = true ] ||
			fail "$name: server counter $k not measured ($(jq -c ".counters.$k" "$j"))"
	done
	echo "$name: $(jq -r '.health.ack_check.checked' "$j") acknowledged, 0 lost;" \
		"processor_pct $(jq -r '.counters.processor_pct' "$j")," \
		"store_virtual_mb $(jq -r '.counters.store_virtual_mb' "$j")"
}

run pids --server-pids "$MB_LAB_DOVECOT_PID,$MB_LAB_POSTFIX_PID"

# a cgroup v2 holding the lab: its process and every descendant (children
# forked later are born in it)
mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -z "$mnt" ]; then
	echo "SKIP: --server-cgroup: no cgroup v2 mounted"
elif ! mkdir "$mnt/mb-runext.$$" 2>/dev/null; then
	echo "SKIP: --server-cgroup: cannot make a cgroup under $mnt"
else
	CG=$mnt/mb-runext.$$
	# the lab's process tree, parents first
	tree=$LAB_PID
	add=$LAB_PID
	while [ -n "$add" ]; do
		next=
		for p in $add; do
			next="$next $(ps -o pid= --ppid "$p" 2>/dev/null | tr '\n' ' ')"
		done
		add=$(echo "$next" | xargs)
		tree="$tree $add"
	done
	moved=0
	for p in $tree; do
		echo "$p" 2>/dev/null >"$CG/cgroup.procs" && moved=$((moved + 1))
	done
	if ! grep -qx "$MB_LAB_DOVECOT_PID" "$CG/cgroup.procs"; then
		echo "SKIP: --server-cgroup: cannot move processes into $CG"
	else
		echo "moved $moved lab processes into $CG"
		run cgroup --server-cgroup "$CG"
	fi
fi
echo "PASS"
