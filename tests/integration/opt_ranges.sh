#!/bin/sh
# opt_ranges.sh: every flag of every command through the edges of its
# range, from the tables themselves (`mailbench help --options` prints
# each command's flags with type, range and choices).  For a number: lo
# and hi are accepted, lo-1 (or lo itself when excluded), hi+1 and a word
# are refused; a list takes lo, hi, "lo,hi" (and auto where allowed) and
# refuses lo-1, hi+1, "lo,,hi"; a choice takes each choice and refuses
# "bogus".  A refusal must be exit 2 with the flag named on stderr, an
# acceptance exit 0; --check-args makes sure nothing starts (no data
# directory is created, no child is spawned).  Runs in seconds.
set -u
: "${MAILBENCH:?}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mb-ranges.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0 n=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$MAILBENCH" help --options >"$tmp/opts" || { echo "FAIL: help --options"; exit 1; }
[ "$(wc -l <"$tmp/opts")" -ge 50 ] || { echo "FAIL: too few options listed"; exit 1; }
D="$tmp/data"

# a valid value for each required flag (the command's own checks pass)
sample() {
	case $1 in
	scenario) echo online ;;
	target) echo 127.0.0.1:1 ;;
	topology) echo "$tmp/topology.json" ;;
	data) echo "$D" ;;
	*) echo x ;;
	esac
}

# the required flags of command $1 except flag $2, as arguments
required() {
	awk -F '\t' -v c="$1" -v f="$2" '$1 == c && $7 == 1 && $2 != f { print $2 }' "$tmp/opts" |
		while read -r r; do printf '%s\n%s\n' "--$r" "$(sample "$r")"; done
}

# try CMD FLAG WANT [VALUE]: WANT is ok or bad
try() {
	cmd=$1 flag=$2 want=$3
	shift 3
	n=$((n + 1))
	required "$cmd" "$flag" >"$tmp/req"
	set -- "$cmd" "--$flag" "$@"
	while IFS= read -r a; do set -- "$@" "$a"; done <"$tmp/req"
	"$MAILBENCH" "$@" --check-args >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$want" = ok ]; then
		[ $rc -eq 0 ] || fail "mailbench $*: exit $rc, want 0 ($(head -c 200 "$tmp/err"))"
	else
		[ $rc -eq 2 ] || fail "mailbench $*: exit $rc, want 2"
		grep -q -- "--$flag" "$tmp/err" || fail "mailbench $*: the message does not name --$flag: $(head -c 200 "$tmp/err")"
	fi
}

below() { awk -v v="$1" 'BEGIN { printf "%.15g\n", v - 1 }'; }
above() { awk -v v="$1" 'BEGIN { printf "%.15g\n", v + 1 }'; }

tab=$(printf '\t')
while IFS="$tab" read -r cmd flag kind lo hi open _req choices; do
	case $kind in
	int | num)
		if [ "$open" = 1 ]; then
			try "$cmd" "$flag" bad "$lo"
		else
			try "$cmd" "$flag" ok "$lo"
			try "$cmd" "$flag" bad "$(below "$lo")"
		fi
		try "$cmd" "$flag" ok "$hi"
		try "$cmd" "$flag" bad "$(above "$hi")"
		try "$cmd" "$flag" bad "x$lo"
		;;
	list)
		try "$cmd" "$flag" ok "$lo"
		try "$cmd" "$flag" ok "$hi"
		try "$cmd" "$flag" ok "$lo,$hi"
		try "$cmd" "$flag" bad "$(below "$lo")"
		try "$cmd" "$flag" bad "$(above "$hi")"
		try "$cmd" "$flag" bad "$lo,,$hi"
		case $choices in auto) try "$cmd" "$flag" ok auto ;; esac
		;;
	enum)
		echo "$choices" | tr ',' '\n' >"$tmp/choices"
		while read -r ch; do try "$cmd" "$flag" ok "$ch"; done <"$tmp/choices"
		try "$cmd" "$flag" bad bogus
		;;
	flag) try "$cmd" "$flag" ok ;;
	string) ;; # paths and addresses: the commands' own tests cover them
	esac
done <"$tmp/opts"

# the case that motivated one range per option
"$MAILBENCH" run --users 2000000 --data "$D" >/dev/null 2>"$tmp/err"
rc=$?
if [ $rc -ne 2 ] || ! grep -q -- "--users" "$tmp/err"; then
	fail "run --users 2000000: exit $rc: $(cat "$tmp/err")"
fi
[ ! -e "$D" ] || fail "refused arguments created $D"
left=$(pgrep -a -x mailbench 2>/dev/null | grep -cF "$tmp/")
[ "$left" -eq 0 ] || fail "$left process(es) left"
[ $fails -eq 0 ] || { echo "FAIL: $fails of $n cases"; exit 1; }
echo "opt_ranges: OK ($n cases, $(wc -l <"$tmp/opts") flags)"
