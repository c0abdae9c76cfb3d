#!/bin/sh
# report_html.sh: the stakeholder report in a real browser.  Two short
# headless runs of scenario 1 (compression off, then on) and a short
# capacity search on a tiny data directory; `mailbench report` of the
# three; headless Chromium opens the page (no network: the page is one
# file) and the test reads the DOM it produced: every chart drawn by uPlot
# with its points (the page's script sets data-charts and data-points
# once uPlot has drawn them), no script error (data-errors), the findings
# row on compression checked.  A screenshot at 1280 px and a PDF print are
# kept as artefacts in tests/artefacts/ of the build directory.
# Exit 77 when chromium or jq is missing.  Bounded by timeout.
set -u
MAILBENCH=${MAILBENCH:-$(pwd)/mailbench}
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || { echo "SKIP: chromium not installed"; exit 77; }
command -v jq >/dev/null 2>&1 || { echo "SKIP: jq not installed"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/mb-report.XXXXXX")
ART=${MB_BUILDDIR:-$(pwd)}/tests/artefacts
mkdir -p "$ART"
cleanup() {
	for p in $(pgrep -f "$T/" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
fail() {
	echo "FAIL: $*"
	for f in "$T"/*.err; do [ -f "$f" ] && { echo "---- $f"; tail -30 "$f"; }; done
	exit 1
}
chrome() {
	# as root Chromium needs --no-sandbox; its own profile under $T
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$T/chrome" --hide-scrollbars "$@" 2>>"$T/chrome.err"
}

for comp in off on; do
	timeout 240 "$MAILBENCH" run -s online --users 20 --scale 0.01 --accel 50 \
		--duration 14 --warmup 4 --compression "$comp" --data "$T/data" --no-save \
		-q --json "$T/$comp.json" >"$T/$comp.out" 2>"$T/$comp.err" ||
		fail "run with compression $comp (exit $?)"
	jq -e '.series.t | length > 5' "$T/$comp.json" >/dev/null ||
		fail "$comp.json has no time series"
	jq -e '.series.latency.p95_ms | map(select(. != null)) | length > 3' "$T/$comp.json" \
		>/dev/null || fail "$comp.json has no latency percentiles over time"
done
timeout 600 "$MAILBENCH" capacity -s online --scale 0.01 --data "$T/data" --from 400 \
	--to 3200 --max-users 20 --warmup 3 --measure 5 --bisect-measure 8 --max-steps 4 \
	--json "$T/cap.json" \
	>"$T/cap.out" 2>"$T/cap.err" || fail "capacity search (exit $?)"
# two steps at least, unless the first already found the load engine
# saturated (a loaded machine): then the search rightly stops there
jq -e '.schema == "mailbench-capacity/1" and .parameters.bisect_measure_s == 8 and
	all(.steps[]; .measure_s == (if .phase == "bisect" then 8 else 5 end)) and
	((.steps | length >= 2) or ((.steps | length) == 1 and .steps[0].saturated))' "$T/cap.json" \
	>/dev/null || fail "capacity JSON"

"$MAILBENCH" report "$T/off.json" "$T/on.json" "$T/cap.json" -o "$T/report.html" \
	2>"$T/report.err" || fail "mailbench report (exit $?)"
# one file: no external script, style sheet or image
if grep -Eiq '<script[^>]+src=|<link[^>]+href=|<img[^>]+src="?https?:' "$T/report.html"; then
	fail "the report loads something from outside the file"
fi
nplots=$(grep -o 'class="plot"' "$T/report.html" | wc -l)
[ "$nplots" -ge 8 ] || fail "expected at least 8 charts (6 counters, 2 capacity), got $nplots"

chrome --virtual-time-budget=15000 --window-size=1280,900 --dump-dom \
	"file://$T/report.html" >"$T/dom.html" || fail "chromium --dump-dom (exit $?)"
body=$(grep -o '<body[^>]*>' "$T/dom.html" | head -1)
echo "body: $body"
case "$body" in *data-errors=*) fail "script error in the page: $body" ;; esac
charts=$(echo "$body" | sed -n 's/.*data-charts="\([0-9]*\)".*/\1/p')
[ "${charts:-0}" -eq "$nplots" ] || fail "uPlot drew ${charts:-no} of $nplots charts"
# every chart has points, and uPlot's canvas is in it
if grep -o 'class="plot" data-points="[0-9]*"' "$T/dom.html" | grep -q 'data-points="0"'; then
	fail "a chart has no points"
fi
canv=$(grep -o '<canvas' "$T/dom.html" | wc -l)
[ "$canv" -ge "$nplots" ] || fail "expected $nplots canvases, got $canv"
row=$(grep '<tr><td>RPC compression halves network usage' "$T/dom.html" | head -1)
[ -n "$row" ] || fail "no compression finding"
echo "compression finding: $(echo "$row" | sed 's/<[^>]*>/ | /g')"
case "$row" in *"not checked"*) fail "the compression finding was not checked" ;; esac
grep -q 'id="capacity"' "$T/dom.html" || fail "no capacity section"

chrome --window-size=1280,6000 --screenshot="$ART/report.png" "file://$T/report.html" \
	>/dev/null || fail "chromium --screenshot"
[ -s "$ART/report.png" ] || fail "no screenshot"
chrome --print-to-pdf="$ART/report.pdf" --no-pdf-header-footer "file://$T/report.html" \
	>/dev/null || fail "chromium --print-to-pdf"
[ -s "$ART/report.pdf" ] || fail "no PDF print"
cp "$T/report.html" "$ART/report.html"

# bad input: a JSON file of no known kind names the file, exit 2
echo '{"x": 1}' >"$T/other.json"
"$MAILBENCH" report "$T/other.json" -o "$T/x.html" 2>"$T/bad.err"
rc=$?
[ "$rc" -eq 2 ] || fail "report of an unknown document: exit $rc, want 2"
grep -q "other.json" "$T/bad.err" || fail "the error does not name the file"

left=$(pgrep -f "$T/" | wc -l)
[ "$left" -eq 0 ] || fail "$left processes left behind"
echo "PASS: report of 2 runs and a capacity search: $charts charts, artefacts in $ART"
