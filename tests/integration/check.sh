#!/bin/sh
# check.sh: `mailbench check` end to end: a data directory with two storage
# groups (made by the engine's benchmark helper through the real engine) is
# clean (exit 0 and a summary); one flipped byte in a database page gives
# exit 1 naming the file and page; usage errors give exit 2.
set -u
: "${MAILBENCH:?}" "${MB_BUILDDIR:?}"
HELPER="$MB_BUILDDIR/bench/mb-dbbench"
[ -x "$HELPER" ] || { echo "skip: $HELPER not built"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/mbcheck.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }

timeout 60 "$HELPER" fill "$T/data/sg1" 6 4096 >/dev/null || fail "fill"
timeout 60 "$HELPER" commit "$T/data/sg2" 2 0.3 >/dev/null || fail "commit"

out=$(timeout 60 "$MAILBENCH" check --data "$T/data"); rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "clean data: exit $rc"
echo "$out" | grep -q "2 storage group(s), 3 database(s)" || fail "summary"
echo "$out" | grep -q "clean" || fail "not clean"

# flip one byte in page 5 (4 KB pages) of sg1/db01.mdb
off=$((5 * 4096 + 100))
b=$(od -An -tu1 -j $off -N1 "$T/data/sg1/db01.mdb" | tr -d ' ')
nb=$(( (b + 1) % 256 ))
# the format is the byte itself, as an octal escape
# shellcheck disable=SC2059
printf "$(printf '\\%03o' "$nb")" | dd of="$T/data/sg1/db01.mdb" bs=1 seek=$off conv=notrunc 2>/dev/null
out=$(timeout 60 "$MAILBENCH" check --data "$T/data"); rc=$?
echo "$out"
[ $rc -eq 1 ] || fail "corrupt data: exit $rc, want 1"
echo "$out" | grep -q "db01.mdb.*page 5" || fail "problem does not name file and page"

timeout 10 "$MAILBENCH" check >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "no --data: exit $rc, want 2"
timeout 10 "$MAILBENCH" check --data "$T/nope" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "missing dir: exit $rc, want 2"
timeout 10 "$MAILBENCH" check --bogus >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "bad option: exit $rc, want 2"
timeout 10 "$MAILBENCH" check --help | grep -q "usage: mailbench check" || fail "--help"
echo "ok"
