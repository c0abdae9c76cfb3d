#!/bin/sh
# docs_counters.sh: README.md's counters table is the output of
# `mailbench counters --markdown`, so the docs iterate the one counters
# table too. Fails (with the diff) when the README is stale.
set -u
: "${MAILBENCH:?}" "${MB_SRCDIR:?}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mb-docs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
sed -n '/<!-- counters:begin -->/,/<!-- counters:end -->/p' "$MB_SRCDIR/README.md" |
	sed '1d;$d' >"$tmp/readme"
"$MAILBENCH" counters --markdown >"$tmp/table" || { echo "FAIL: counters --markdown"; exit 1; }
[ -s "$tmp/table" ] || { echo "FAIL: empty counters table"; exit 1; }
if ! diff -u "$tmp/readme" "$tmp/table"; then
	echo "FAIL: README.md counters table is stale: regenerate it with 'mailbench counters --markdown'"
	exit 1
fi
echo "docs_counters: OK ($(wc -l <"$tmp/table") lines)"
