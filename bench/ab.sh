#!/usr/bin/env bash
# ab.sh: one rewritten program against two runtime libraries, runs
# interleaved (A B A B ...), so that the machine's drift over minutes falls
# on both alike. Prints each side's wall times in seconds, sorted.
#
#   bench/ab.sh LIB_A LIB_B RUNS PROGRAM.hg [ARGS...]
#
# e.g. after `make bench`, with the library before a change kept aside:
#   bench/ab.sh /tmp/old/libhgrt.so bin/libhgrt.so 7 build/bench/handoff.hg
set -euo pipefail
if [ $# -lt 4 ]; then
	sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
fi
liba=$1 libb=$2 runs=$3 prog=$4
shift 4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for side in A B; do
	mkdir "$dir/$side"
	cp "$prog" "$dir/$side/"
done
cp "$liba" "$dir/A/libhgrt.so"
cp "$libb" "$dir/B/libhgrt.so"
name=$(basename "$prog")
for _ in $(seq "$runs"); do
	for side in A B; do
		/usr/bin/time -f "$side %e" -o "$dir/time" env HG_OPTIONS="${HG_OPTIONS:-exitcode=0}" \
			"$dir/$side/$name" "$@" >/dev/null 2>&1 || true
		grep -E "^[AB] " "$dir/time" || true
	done
done | sort -k1,1 -k2,2n | awk '{ t[$1] = t[$1] " " $2 } END { print "A:" t["A"]; print "B:" t["B"] }'
