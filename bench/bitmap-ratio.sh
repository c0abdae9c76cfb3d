#!/bin/sh
# bench/bitmap-ratio.sh: how well small real bitmaps compress with the
# wire's LZ77+DIRECT2, as the protocol compresses them (each 28 KB
# ReadStream chunk on its own),
# against mailbench's "bitmap" content kind (src/core/content.c).
# The send mix's bitmap attachment (Upsbmobj.msg, 43 KB) is a Windows bitmap:
# uncompressed pixels (BMP, BI_RGB).  ImageMagick writes drawings, diagrams
# and icons of Debian packages (valgrind's and pip's documentation images,
# Adwaita icons, Node.js's documentation charts) as 120 x 120 24-bit BMPs
# (43,254 bytes, the attachment's size); each is compressed chunk by chunk
# by bench/mb-rpccodec (LZ4 beside it, for reference).  Photographs are
# left out on purpose: written as BMPs they barely compress (1.0:1), which
# is the "image" kind.  Then tests/unit/test_content prints the bitmap
# kind's ratio on samples of that size.  Prints a line per file, the geometric
# mean, and last the ratio of the kind's figure to the real files' mean.
#
# One command: bench/bitmap-ratio.sh [BUILD_DIR].  Needs convert
# (imagemagick) and python3, and at least three of the images (exit 77
# without them).  Not run by make check.
set -u
B=${1:-${MB_BUILDDIR:-.}}
for c in convert python3; do
	command -v "$c" >/dev/null 2>&1 || { echo "bitmap-ratio.sh: needs $c" >&2; exit 77; }
done
W=$(mktemp -d "${TMPDIR:-/tmp}/mb-bitmap.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
n=0
for f in /usr/share/doc/valgrind/html/images/dh-tree.png \
	/usr/share/doc/valgrind/html/images/kcachegrind_xtree.png \
	/usr/share/doc/python3-pip/html/topics/deps.png \
	/usr/share/doc/nodejs/contributing/doc_img/scatter-plot.png \
	/usr/share/icons/Adwaita/512x512/devices/drive-harddisk.png \
	/usr/share/icons/Adwaita/512x512/devices/input-keyboard.png \
	/usr/share/icons/Adwaita/512x512/mimetypes/x-office-document.png \
	/usr/share/icons/Adwaita/512x512/places/folder-pictures.png; do
	[ -r "$f" ] || continue
	n=$((n + 1))
	bmp="$W/$n-$(basename "$f" .png).bmp"
	convert "$f" -background white -alpha remove -alpha off -resize '120x120!' \
		-type TrueColor -compress None "BMP3:$bmp" ||
		{ echo "bitmap-ratio.sh: convert failed on $f" >&2; exit 3; }
	# a convert that is not ImageMagick's can exit 0 and write nothing
	[ "$(head -c 2 "$bmp" 2>/dev/null)" = BM ] ||
		{ echo "bitmap-ratio.sh: convert wrote no BMP for $f (is it ImageMagick's?)" >&2; exit 3; }
done
[ "$n" -ge 3 ] || { echo "bitmap-ratio.sh: fewer than 3 of the images here" >&2; exit 77; }
python3 "$(dirname "$0")/kind-ratio.py" bitmap "$B" --geometric "$W"/*.bmp || exit 3
