#!/bin/sh
# docs_options.sh: the man page's SYNOPSIS and COMMANDS sections are the
# output of `mailbench help --man synopsis|commands`, i.e. generated from
# the command and option tables (core/opt.h), as README's counters are
# from the counters table (docs_counters.sh).  Fails (with the diff) when
# docs/mailbench.1 is stale.
set -u
: "${MAILBENCH:?}" "${MB_SRCDIR:?}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mb-docs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
page="$MB_SRCDIR/docs/mailbench.1"
for s in synopsis commands; do
	grep -q "^\.\\\\\" generated:$s:begin" "$page" || { echo "FAIL: no generated:$s markers in $page"; exit 1; }
done
sh "$MB_SRCDIR/docs/gen-man.sh" "$MAILBENCH" "$page" >"$tmp/page" || { echo "FAIL: gen-man.sh"; exit 1; }
if ! diff -u "$page" "$tmp/page"; then
	echo "FAIL: docs/mailbench.1 is stale: regenerate it with 'make update-man'"
	exit 1
fi
echo "docs_options: OK ($(grep -c '^\.TP' "$page") options)"
