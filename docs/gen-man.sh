#!/bin/sh
# gen-man.sh MAILBENCH MANPAGE: print MANPAGE with its generated sections
# (between the `.\" generated:NAME:begin` and `.\" generated:NAME:end`
# lines) replaced by `MAILBENCH help --man NAME`, i.e. from the option and
# command tables.  `make update-man` writes the result back;
# tests/integration/docs_options.sh fails when it differs.
set -eu
mb=$1 page=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mb-man.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
"$mb" help --man synopsis >"$tmp/synopsis"
"$mb" help --man commands >"$tmp/commands"
awk -v dir="$tmp" '
	/^\.\\" generated:[a-z]+:begin/ {
		print
		name = $0
		sub(/^\.\\" generated:/, "", name)
		sub(/:begin.*/, "", name)
		while ((getline line < (dir "/" name)) > 0)
			print line
		skip = 1
		next
	}
	/^\.\\" generated:[a-z]+:end/ { skip = 0 }
	!skip { print }
' "$page"
