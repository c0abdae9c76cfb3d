#!/usr/bin/env python3
# bench/kind-ratio.py: the shared half of bench/office-ratio.sh and
# bench/bitmap-ratio.sh.  Compresses each real file 28 KB chunk by chunk
# (each ReadStream chunk is compressed on its own by the protocol) with
# BUILD/bench/mb-rpccodec --chunks, under the wire's LZ77+DIRECT2 and, for
# reference, LZ4; prints a line per file on stderr, then on stdout the
# files' mean ratio (arithmetic, or geometric with --geometric), the content
# kind's ratio that BUILD/tests/unit/test_content prints (43,254-byte
# samples, 28 KB chunks, the wire's codec), and the kind's ratio to the
# files' mean.
#
# Usage: kind-ratio.py KIND BUILD_DIR [--geometric] FILE...
import math
import os
import re
import subprocess
import sys

CH = 28 * 1024


def built(build, prog):
    path = os.path.join(build, prog)
    if not os.access(path, os.X_OK):
        subprocess.run(["make", "-C", build, prog], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return path if os.access(path, os.X_OK) else None


def mean(rs, geo):
    if geo:
        return math.exp(sum(math.log(r) for r in rs) / len(rs))
    return sum(rs) / len(rs)


def main():
    kind, build = sys.argv[1], sys.argv[2]
    files = sys.argv[3:]
    geo = bool(files) and files[0] == "--geometric"
    if geo:
        files = files[1:]
    codec = built(build, "bench/mb-rpccodec")
    if not codec:
        print("kind-ratio.py: no %s/bench/mb-rpccodec" % build, file=sys.stderr)
        return 3
    out = subprocess.run([codec, "--chunks", str(CH)] + files, stdout=subprocess.PIPE,
                         text=True, check=True).stdout
    lz77, lz4 = [], []
    for line in out.splitlines():
        f = line.split()  # FILE BYTES lz4 R lz77 R
        lz4.append(float(f[3]))
        lz77.append(float(f[5]))
        print("%-32s %8s bytes  LZ77+DIRECT2 %.2f:1  (LZ4 %.2f:1) per 28 KB chunk" % (
            os.path.basename(f[0]), f[1], lz77[-1], lz4[-1]), file=sys.stderr)
    real = mean(lz77, geo)
    print("real files (%d), %s mean: %.3f:1 (LZ4: %.3f:1)" % (
        len(lz77), "geometric" if geo else "arithmetic", real, mean(lz4, geo)))
    test = built(build, "tests/unit/test_content")
    if not test:
        print("%s kind: n/a (no tests/unit/test_content)" % kind)
        return 0
    out = subprocess.run([test], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True).stdout
    m = re.search(r"^%s\s+LZ77\+DIRECT2 ratio ([0-9.]+)" % re.escape(kind), out, re.M)
    if not m:
        print("%s kind: n/a (test_content printed no ratio)" % kind)
        return 0
    k = float(m.group(1))
    print("mailbench %s kind (43,254-byte samples): %.2f:1" % (kind, k))
    print("%s kind / real files: %.2fx" % (kind, k / real))
    return 0


if __name__ == "__main__":
    sys.exit(main())
