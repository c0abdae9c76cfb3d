#!/bin/sh
# bench/office-ratio.sh: how well real office documents compress with the
# wire's LZ77+DIRECT2, as the protocol compresses them (each 28 KB
# ReadStream chunk on its own), against mailbench's "office" content kind
# (src/core/content.c).
# LibreOffice (headless) writes Word 97-2003 (.doc) files of 8, 40 and 63 KB
# of English prose (the licence texts in /usr/share/common-licenses) and an
# Excel 97-2003 (.xls) file of a 1,500-row sales table; each is compressed
# chunk by chunk by bench/mb-rpccodec (LZ4 beside it, for reference).
# Then tests/unit/test_content prints the office kind's ratio.  Prints a
# line per file, the mean, and last the ratio of the kind's figure to the
# real files' mean (bench/kind-ratio.py).
#
# One command: bench/office-ratio.sh [BUILD_DIR].  Needs soffice
# (libreoffice-writer-nogui, libreoffice-calc-nogui) and python3; exit 77
# without them.  Not run by make check.
set -u
B=${1:-${MB_BUILDDIR:-.}}
for c in soffice python3; do
	command -v "$c" >/dev/null 2>&1 || { echo "office-ratio.sh: needs $c" >&2; exit 77; }
done
W=$(mktemp -d "${TMPDIR:-/tmp}/mb-office.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
cat /usr/share/common-licenses/GPL-3 /usr/share/common-licenses/Apache-2.0 \
	/usr/share/common-licenses/MPL-2.0 >"$W/prose.txt" || exit 3
head -c 8000 "$W/prose.txt" >"$W/small.txt"
head -c 40000 "$W/prose.txt" >"$W/medium.txt"
cp "$W/prose.txt" "$W/large.txt"
python3 - "$W/sheet.csv" <<'EOF'
import random, sys
random.seed(1)
names = ["Smith", "Jones", "Brown", "Taylor", "Wilson", "Davies", "Evans", "Thomas"]
regions = ["North", "South", "East", "West", "Central"]
with open(sys.argv[1], "w") as f:
    f.write("Name,Region,Quarter,Units,Price,Revenue,Date\n")
    for i in range(1500):
        u = random.randint(1, 500)
        p = round(random.uniform(5, 200), 2)
        f.write("%s,%s,Q%d,%d,%.2f,%.2f,2003-%02d-%02d\n" % (
            random.choice(names), random.choice(regions), random.randint(1, 4), u, p,
            u * p, random.randint(1, 12), random.randint(1, 28)))
EOF
(cd "$W" && HOME="$W" timeout 300 soffice --headless --convert-to doc small.txt medium.txt \
	large.txt >/dev/null 2>&1 && HOME="$W" timeout 300 soffice --headless --convert-to xls \
	sheet.csv >/dev/null 2>&1) || { echo "office-ratio.sh: soffice failed" >&2; exit 3; }
python3 "$(dirname "$0")/kind-ratio.py" office "$B" "$W/small.doc" "$W/medium.doc" \
	"$W/large.doc" "$W/sheet.xls" || exit 3
