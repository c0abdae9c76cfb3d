#!/bin/sh
# layers.sh: inside each of the parts db, store and load, no two files call
# each other's functions, directly or round a longer circle (the files of a
# part are layered, as the parts are; docs/ARCHITECTURE.md "Files inside a
# part").  Read from the built archives with nm: a file's undefined symbols
# against the functions (T) the part's other files define.  References to
# data (ops tables, registries) are not calls and are not counted.
set -u
: "${MB_BUILDDIR:?}"
command -v nm >/dev/null 2>&1 || { echo "skip: nm not installed"; exit 77; }
rc=0
for part in db store load; do
	lib=
	for a in "$MB_BUILDDIR/src/$part"/libmb*.a; do
		[ -f "$a" ] && { lib=$a; break; }
	done
	[ -n "$lib" ] || { echo "FAIL: src/$part: no archive built"; exit 1; }
	# edges "from to symbol", then every circle as a path; awk does the search
	out=$(nm -A "$lib" | awk '
		{ n = split($1, f, ":"); obj = f[n - 1] }
		$(NF - 1) == "T" { def[$NF] = obj }
		$(NF - 1) == "U" { use[obj, $NF] = 1; objs[obj] = 1 }
		END {
			for (k in use) {
				split(k, p, SUBSEP)
				d = def[p[2]]
				if (d != "" && d != p[1]) { edge[p[1], d] = p[2]; objs[d] = 1 }
			}
			# reach[a, b]: b reachable from a (Floyd-Warshall closure)
			for (k in edge) reach[k] = 1
			for (m in objs) for (a in objs) if ((a, m) in reach)
				for (b in objs) if ((m, b) in reach) reach[a, b] = 1
			for (k in edge) {
				split(k, p, SUBSEP)
				if ((p[2], p[1]) in reach)
					printf "  %s -> %s (%s) is on a circle\n", p[1], p[2], edge[k]
			}
		}')
	if [ -n "$out" ]; then
		echo "FAIL: src/$part: files call each other:"
		echo "$out" | sort
		rc=1
	else
		echo "src/$part: no call circle between its files"
	fi
done
exit $rc
