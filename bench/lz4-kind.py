#!/usr/bin/env python3
# bench/lz4-kind.py: the shared half of bench/office-lz4.sh and
# bench/bitmap-lz4.sh.  Compresses each real file 28 KB chunk by chunk with
# the lz4 command (level 1, LZ4_compress_default's: each ReadStream chunk is
# compressed on its own by the protocol), prints a line per file on stderr,
# then on stdout the files' mean ratio (arithmetic, or geometric with
# --geometric), the content kind's ratio that BUILD/tests/unit/test_content
# prints for 40 KB samples, and the kind's ratio to the files' mean.
#
# Usage: lz4-kind.py KIND BUILD_DIR [--geometric] FILE...
import math
import os
import re
import subprocess
import sys

CH = 28 * 1024


def chunked_ratio(fn):
    data = open(fn, "rb").read()
    raw = out = 0
    for i in range(0, len(data), CH):
        c = data[i:i + CH]
        z = subprocess.run(["lz4", "-1", "-c", "-q", "-BD", "--no-frame-crc"], input=c,
                           capture_output=True, check=True).stdout
        raw += len(c)
        out += min(max(len(z) - 15, 1), len(c))  # less the frame header; stored raw if larger
    print("%-32s %8d bytes  LZ4 %.2f:1 per 28 KB chunk" % (os.path.basename(fn), len(data),
                                                           raw / out), file=sys.stderr)
    return raw / out


def main():
    kind, build = sys.argv[1], sys.argv[2]
    files = sys.argv[3:]
    geo = bool(files) and files[0] == "--geometric"
    if geo:
        files = files[1:]
    rs = [chunked_ratio(f) for f in files]
    if geo:
        real = math.exp(sum(math.log(r) for r in rs) / len(rs))
    else:
        real = sum(rs) / len(rs)
    print("real files (%d), %s mean: %.3f:1" % (len(rs), "geometric" if geo else "arithmetic",
                                               real))
    test = os.path.join(build, "tests/unit/test_content")
    if not os.access(test, os.X_OK):
        subprocess.run(["make", "-C", build, "tests/unit/test_content"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not os.access(test, os.X_OK):
        print("%s kind: n/a (no %s)" % (kind, test))
        return 0
    out = subprocess.run([test], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True).stdout
    m = re.search(r"^%s\s+LZ4 ratio ([0-9.]+)" % re.escape(kind), out, re.M)
    if not m:
        print("%s kind: n/a (test_content printed no ratio)" % kind)
        return 0
    k = float(m.group(1))
    print("mailbench %s kind (40 KB samples): %.2f:1" % (kind, k))
    print("%s kind / real files: %.2fx" % (kind, k / real))
    return 0


if __name__ == "__main__":
    sys.exit(main())
