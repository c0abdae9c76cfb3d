#!/bin/sh
# tests/integration/shellcheck.sh: every shell script of the tree (tests, benchmarks, docs
# helpers, .ci/run, .ci/format) passes shellcheck with the settings in .shellcheckrc;
# .ci/run runs this first.  Skips (77) without shellcheck.  Exit 1 lists
# every finding.
set -u
: "${MB_SRCDIR:?}"
command -v shellcheck >/dev/null 2>&1 || { echo "skip: no shellcheck"; exit 77; }
cd "$MB_SRCDIR" || exit 1
list=$(mktemp "${TMPDIR:-/tmp}/mb-shellcheck.XXXXXX")
trap 'rm -f "$list"' EXIT INT TERM
# scripts only, not what a build or a distcheck leaves in the tree
find . \( -name .git -o -name '_build' -o -name '_inst' -o -name 'build*' -o -name 'mailbench-*' \) -prune \
	-o -type f -name '*.sh' -print | LC_ALL=C sort >"$list"
for f in .ci/run .ci/format; do
	[ -f "$f" ] && echo "./$f" >>"$list"
done
n=$(wc -l <"$list")
[ "$n" -gt 0 ] || { echo "FAIL: no shell scripts found under $MB_SRCDIR"; exit 1; }
# shellcheck disable=SC2046 # the paths are the tree's own: no blanks
if ! shellcheck -x -f gcc $(cat "$list"); then
	echo "FAIL: shellcheck found the problems above (settings: .shellcheckrc)"
	exit 1
fi
echo "shellcheck: OK ($n scripts, $(shellcheck --version | sed -n 's/^version: //p'))"
