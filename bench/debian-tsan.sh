#!/usr/bin/env bash
# bench/debian-tsan.sh: hgrewrite against gcc's ThreadSanitizer on a real
# Debian program, zstd, built from the exact Debian source of the installed
# /usr/bin/zstd (apt-get source, the version dpkg reports).
#
# ThreadSanitizer needs the program recompiled; hgrewrite rewrites the
# installed binary as it is. The fair comparison is therefore the same
# program's source built with -fsanitize=thread: its time and peak memory
# stand against those of the rewritten /usr/bin/zstd. A plain -O2 -g build
# of that source is measured too, to show that the source build is
# comparable with the installed binary (so that TSan is not helped or
# hurt by a different build). Both builds should report no race; the
# last column counts the reports of each tool over all runs.
#
# Wall time and peak RSS from /usr/bin/time; each tool runs RUNS times
# (default 3), taken in turn (native, source, hgrewrite, TSan, native,
# ...), and each cell is the median time and the median peak memory.
# Complements make bench (bench/run.sh), whose Debian rows have no
# ThreadSanitizer column for want of a source build.
#
# Usage: bench/debian-tsan.sh            (RUNS=5 bench/debian-tsan.sh)
# Needs bin/hgrewrite (make), gcc with libtsan, dpkg-dev, and either a
# deb-src entry or root and network (it then adds
# /etc/apt/sources.list.d/hgrewrite-debsrc.sources). Without these it
# says what is missing and exits 0: the bench is optional.
# Work files (source, builds and their logs, inputs, stderr of each run)
# are in build/debian-tsan; a second run reuses the source and the builds
# (rm -rf build/debian-tsan to start over). The rewrite of /usr/bin/zstd
# is redone on every run, so that it uses the current bin/hgrewrite.
set -euo pipefail
cd "$(dirname "$0")/.."
work=build/debian-tsan
runs=${RUNS:-3}
prog=zstd

skip() { # why: the bench cannot run here; not an error
	echo "debian-tsan: skipped: $*"
	exit 0
}

if [ ! -x bin/hgrewrite ] || [ ! -f bin/libhgrt.so ]; then
	echo "debian-tsan: bin/hgrewrite or bin/libhgrt.so is missing: run make first" >&2
	exit 1
fi
mkdir -p "$work/runs"
[ -x /usr/bin/$prog ] || skip "/usr/bin/$prog is not installed (apt-get install $prog)"
echo 'int main(void){return 0;}' >"$work/t.c"
gcc -fsanitize=thread -o "$work/t" "$work/t.c" 2>/dev/null || skip "gcc cannot build with -fsanitize=thread (libtsan missing: apt-get install libtsan2)"

# The source package and version of the installed binary.
srcpkg=$(dpkg-query -W -f='${source:Package}' $prog)
srcver=$(dpkg-query -W -f='${source:Version}' $prog)
upver=$(dpkg-query -W -f='${source:Upstream-Version}' $prog)
src="$work/$srcpkg-$upver"

have_debsrc() { # a deb-src entry in apt's sources (one-line or deb822)
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		grep -Eqs '^[[:space:]]*(deb-src[[:space:]]|Types:.*deb-src)' "$f" && return 0
	done
	return 1
}

if [ ! -f "$src/programs/Makefile" ]; then
	command -v apt-get >/dev/null || skip "no apt-get: not a Debian system"
	command -v dpkg-source >/dev/null ||
		skip "apt-get source needs dpkg-source (apt-get install dpkg-dev)"
	if ! have_debsrc; then
		[ "$(id -u)" = 0 ] || skip "no deb-src entry in /etc/apt/sources.list*, and not root to add one"
		deb=/etc/apt/sources.list.d/debian.sources
		[ -f "$deb" ] || skip "no deb-src entry, and no $deb to copy one from"
		# Each stanza of debian.sources again, as deb-src: its URIs,
		# Suites, Components and Signed-By (with continuation lines).
		awk '
			/^[[:space:]]*$/ { if (n) print ""; n = 0; keep = 0; next }
			/^#/ { next }
			/^[[:space:]]/ { if (keep) print; next }
			{ keep = ($1 ~ /^(URIs|Suites|Components|Signed-By):$/)
			  if (keep) { if (!n) print "Types: deb-src"; n++; print } }
		' "$deb" >/etc/apt/sources.list.d/hgrewrite-debsrc.sources
		echo "debian-tsan: added /etc/apt/sources.list.d/hgrewrite-debsrc.sources (deb-src of $deb)" >&2
		apt-get update -qq >"$work/apt-update.log" 2>&1 || skip "apt-get update failed (no network?), see $work/apt-update.log"
	fi
	rm -rf "$src"
	# apt-get source unpacks with dpkg-source -x, which applies Debian's patches.
	if ! (cd "$work" && apt-get source -q "$srcpkg=$srcver") >"$work/apt-source.log" 2>&1; then
		# A deb-src entry whose package lists were never fetched
		[ "$(id -u)" = 0 ] || skip "apt-get source $srcpkg=$srcver failed (run apt-get update as root?), see $work/apt-source.log"
		apt-get update -qq >"$work/apt-update.log" 2>&1 || skip "apt-get update failed (no network?), see $work/apt-update.log"
		rm -rf "$src"
		(cd "$work" && apt-get source -q "$srcpkg=$srcver") >"$work/apt-source.log" 2>&1 ||
			skip "apt-get source $srcpkg=$srcver failed (no network, or that version is not on the mirror), see $work/apt-source.log"
	fi
	[ -f "$src/programs/Makefile" ] || { echo "debian-tsan: apt-get source did not unpack $src, see $work/apt-source.log" >&2; exit 1; }
fi

build() { # variant make-arguments...: a copy of the source, built once
	local v=$1 d="$work/$prog-$1"
	shift
	if [ ! -d "$d" ]; then
		rm -rf "$d.tmp"
		cp -a "$src" "$d.tmp"
		mv "$d.tmp" "$d"
	fi
	[ -x "$d/programs/$prog" ] && return
	echo "debian-tsan: building $d (log: $work/build-$prog-$v.log)" >&2
	if ! make -j2 -C "$d/programs" $prog HAVE_THREAD=1 "$@" >"$work/build-$prog-$v.log" 2>&1; then
		tail -20 "$work/build-$prog-$v.log" >&2
		echo "debian-tsan: building $d failed, see $work/build-$prog-$v.log" >&2
		exit 1
	fi
}
build tsan CFLAGS="-O2 -g -fsanitize=thread" LDFLAGS="-fsanitize=thread"
build native CFLAGS="-O2 -g"

bin/hgrewrite /usr/bin/$prog -o "$work/$prog.hg" >"$work/rewrite.log" 2>&1 ||
	{ cat "$work/rewrite.log" >&2; exit 1; }

# Inputs: make bench's text-like data (bench/run.sh makes it the same way),
# and the first MB of a tar of /usr/share (text, images, compressed files).
input=build/bench/input.bin
if [ ! -f "$input" ]; then
	input="$work/input.bin"
	[ -f "$input" ] || awk 'BEGIN { srand(7); for (i = 0; i < 400000; i++) printf "%08d %s %d\n", i, substr("alpha beta gamma delta epsilon zeta eta theta", 1 + int(rand() * 30), 20), int(rand() * 1e6) }' >"$input"
fi
share="$work/share1m.tar"
if [ ! -f "$share" ]; then
	# head closes the pipe early: tar's SIGPIPE is expected
	{ tar --sort=name -cf - -C / usr/share 2>/dev/null || true; } | head -c 1048576 >"$share.tmp"
	mv "$share.tmp" "$share"
fi

tools=(native src hg tsan)
declare -A cmd=(
	[native]="/usr/bin/$prog"
	[src]="$work/$prog-native/programs/$prog"
	[hg]="env HG_OPTIONS=exitcode=0 $work/$prog.hg"
	[tsan]="env TSAN_OPTIONS=exitcode=0 $work/$prog-tsan/programs/$prog"
)
declare -A warning=([hg]="WARNING: hgrewrite: data race" [tsan]="WARNING: ThreadSanitizer")

median() { # numbers... -> their median (the lower middle of an even count)
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
ratio() { # a b [decimals] -> a / b
	awk -v a="$1" -v b="$2" -v d="${3:-1}" 'BEGIN { if (b <= 0) b = 0.01; printf "%." d "f", a / b }'
}

printf '| run | native /usr/bin | -O2 from source | hgrewrite | ThreadSanitizer | hgrewrite / ThreadSanitizer | races (hg/tsan) |\n|---|---|---|---|---|---|---|\n'
row() { # label args...
	local label=$1 r t rc e s k
	shift
	declare -A ts=() ms=() fail=() races=()
	for r in $(seq "$runs"); do
		for t in "${tools[@]}"; do
			e="$work/runs/$label.$t.$r.err"
			rc=0
			# shellcheck disable=SC2086 # cmd[] holds words
			/usr/bin/time -f "%e %M" -o "$work/time.txt" ${cmd[$t]} "$@" >/dev/null 2>"$e" || rc=$?
			read -r s k <<<"$(tail -1 "$work/time.txt")"
			ts[$t]="${ts[$t]:-} $s" ms[$t]="${ms[$t]:-} $k"
			[ $rc = 0 ] || fail[$t]=$((${fail[$t]:-0} + 1))
			if [ -n "${warning[$t]:-}" ]; then
				races[$t]=$((${races[$t]:-0} + $(grep -c "${warning[$t]}" "$e" || true)))
			fi
		done
	done
	local out="| $prog ${*:1:$#-1} ${label} |" nt ht tt
	# shellcheck disable=SC2086 # ts[], ms[] hold lists
	nt=$(median ${ts[native]})
	for t in "${tools[@]}"; do
		# shellcheck disable=SC2086
		s=$(median ${ts[$t]}) k=$(median ${ms[$t]})
		case $t in
		native) out="$out $s s, $k KB" ;;
		*) out="$out $s s ($(ratio "$s" "$nt")x), $k KB" ;;
		esac
		[ -z "${fail[$t]:-}" ] || out="$out (failed ${fail[$t]} of $runs)"
		out="$out |"
		case $t in hg) ht=$s ;; tsan) tt=$s ;; esac
	done
	echo "$out $(ratio "$ht" "$tt" 2) | ${races[hg]}/${races[tsan]} |"
}
row input.bin -T4 -c "$input"
row share1m.tar -19 -T4 -c "$share"
echo
echo "$srcpkg $srcver (/usr/bin/$prog) from apt-get source; RUNS=$runs, medians; stderr of each run in $work/runs"
