#!/bin/sh
# run.sh: build the fuzz harnesses with clang (libFuzzer + AddressSanitizer
# + UBSan) and run each for N seconds (default 60) on a copy of its seed
# corpus: fuzz_frame (the frame decoder and payload codecs, corpus/),
# fuzz_imap (the IMAP response parser, corpus-imap/), fuzz_smtp (the SMTP
# reply parser and its framing, corpus-smtp/) and fuzz_store (the store's
# operations, sent by a logged-on client to a real store built into the
# harness: the requests of corpus/).  Exit 0 when no crash was found, 77
# when clang or libFuzzer is unavailable (skipped), 1 on a crash (the
# reproducer is kept in OUT).  The harnesses' files go under OUT.
# Usage: tests/fuzz/run.sh [SECONDS] [OUTDIR] [HARNESS]
set -eu
secs=${1:-60}
only=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
if [ -n "${2:-}" ]; then out=$2; keep=1; else out=$(mktemp -d "${TMPDIR:-/tmp}/mb-fuzz.XXXXXX"); keep=0; fi
command -v clang >/dev/null 2>&1 || { echo "run.sh: clang not found: skipped"; exit 77; }
flags="-std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -I$src/src -I$src"
# libFuzzer present?  (a harness that then fails to build is a failure)
mkdir -p "$out"
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n);\nint LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' >"$out/probe.c"
# shellcheck disable=SC2086
if ! clang $flags "$out/probe.c" -o "$out/probe" >"$out/probe.log" 2>&1; then
	cat "$out/probe.log"
	echo "run.sh: clang cannot build with -fsanitize=fuzzer: skipped"
	[ "$keep" = 1 ] || rm -rf "$out"
	exit 77
fi

# build NAME CORPUS SOURCES... LIBS: 0 built, 1 not (CORPUS: files under
# tests/fuzz, a pattern)
build() {
	name=$1; corpus=$2; shift 2
	mkdir -p "$out/$name.corpus"
	# shellcheck disable=SC2086
	cp "$here"/$corpus "$out/$name.corpus/" 2>/dev/null || true
	# shellcheck disable=SC2086
	if ! clang $flags "$@" -o "$out/$name" 2>"$out/$name.build.log"; then
		cat "$out/$name.build.log"
		echo "run.sh: $name does not build"
		return 1
	fi
}

# fuzz NAME: 0 no crash, 1 crash
fuzz() {
	name=$1
	if (cd "$out" && TMPDIR="$out" MB_FUZZ_SEEDS="$name.corpus" "./$name" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 \
		-print_final_stats=1 "$name.corpus" >"$name.log" 2>&1); then
		tail -n 12 "$out/$name.log"
		echo "run.sh: $name: no crash in ${secs}s"
		return 0
	fi
	tail -n 40 "$out/$name.log"
	echo "run.sh: $name: CRASH: reproducer and log in $out"
	return 1
}

status=0
# The store's layers include config.h, which configure writes; what they
# need of it is the system extensions (AC_USE_SYSTEM_EXTENSIONS).
printf '#ifndef _GNU_SOURCE\n#define _GNU_SOURCE 1\n#endif\n' >"$out/config.h"

for h in fuzz_frame fuzz_imap fuzz_smtp fuzz_store; do
	[ -z "$only" ] || [ "$only" = "$h" ] || continue
	case $h in
	fuzz_frame)
		set -- "$here/fuzz_frame.c" "$src/src/proto/proto.c" "$src/src/proto/proto_req.c" \
			"$src/src/proto/proto_reply.c" "$src/src/proto/buf.c" \
			"$src/src/proto/lz77.c" "$src/src/core/error.c"
		corpus="corpus/*" ;;
	fuzz_imap)
		set -- "$here/fuzz_imap.c" "$src/src/load/imapparse.c" "$src/src/load/crlf.c"
		corpus="corpus-imap/*" ;;
	fuzz_smtp)
		set -- "$here/fuzz_smtp.c" "$src/src/load/smtpparse.c" "$src/src/load/crlf.c"
		corpus="corpus-smtp/*" ;;
	fuzz_store)
		libs=$(pkg-config --cflags --libs libuv libconfig liblz4 openssl zlib jansson libisal) || {
			status=1
			continue
		}
		# shellcheck disable=SC2086
		set -- -D_DEFAULT_SOURCE -D_XOPEN_SOURCE=600 -I"$out" -DMB_SRCDIR="\"$src\"" \
			-DMB_BUILDDIR="\"$out\"" -DMB_PKGDATADIR="\"$src\"" "$here/fuzz_store.c" \
			"$src"/src/core/*.c "$src"/src/db/*.c "$src"/src/proto/*.c "$src"/src/store/*.c \
			$libs -lm -lpthread
		corpus="corpus/req-*" ;;
	esac
	if build "$h" "$corpus" "$@"; then
		fuzz "$h" || status=1
	else
		status=1
	fi
done
if [ "$status" = 0 ]; then
	[ "$keep" = 1 ] || rm -rf "$out"
fi
exit "$status"
