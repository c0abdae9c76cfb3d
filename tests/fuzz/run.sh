#!/bin/sh
# run.sh: build the frame-decoder fuzz harness with clang (libFuzzer +
# AddressSanitizer + UBSan) and run it for N seconds (default 60) on a copy
# of the seed corpus.  Exit 0 when no crash was found, 77 when clang or
# libFuzzer is unavailable, 1 on a crash (the reproducer is kept in OUT).
# Usage: tests/fuzz/run.sh [SECONDS] [OUTDIR]
set -eu
secs=${1:-60}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
if [ -n "${2:-}" ]; then out=$2; keep=1; else out=$(mktemp -d "${TMPDIR:-/tmp}/mb-fuzz.XXXXXX"); keep=0; fi
command -v clang >/dev/null 2>&1 || { echo "run.sh: clang not found: skipped"; exit 77; }
mkdir -p "$out/corpus"
cp "$here"/corpus/* "$out/corpus/" 2>/dev/null || true
# config.h is only needed for _GNU_SOURCE-style defines; the codec needs none
if ! clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined \
	-I"$src/src" -I"$src" \
	"$here/fuzz_frame.c" "$src/src/proto/proto.c" "$src/src/proto/buf.c" \
	"$src/src/core/error.c" -llz4 -o "$out/fuzz_frame" 2>"$out/build.log"; then
	cat "$out/build.log"
	echo "run.sh: could not build with -fsanitize=fuzzer: skipped"
	[ "$keep" = 1 ] || rm -rf "$out"
	exit 77
fi
cd "$out"
if ./fuzz_frame -max_total_time="$secs" -max_len=65536 -rss_limit_mb=1024 \
	-print_final_stats=1 corpus >fuzz.log 2>&1; then
	tail -n 12 fuzz.log
	echo "run.sh: no crash in ${secs}s"
	cd / && [ "$keep" = 1 ] || rm -rf "$out"
	exit 0
fi
tail -n 40 fuzz.log
echo "run.sh: CRASH: reproducer and log in $out"
exit 1
