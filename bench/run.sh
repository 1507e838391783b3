#!/usr/bin/env bash
# make bench: our slowdown side by side with ThreadSanitizer and Valgrind's
# Helgrind and DRD on the same programs, in one run (docs/architecture.md).
# Wall time and peak RSS from /usr/bin/time; slowdown = tool / native.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/bench
mkdir -p "$out"
progs=${PROGS:-"stencil locks pipeline handoff bigblocks readmostly calls refcount threads_live threads_churn threads_detached"} # PROGS=... runs some
have_tsan=1
echo 'int main(void){return 0;}' > "$out/t.c"
gcc -fsanitize=thread -o "$out/t" "$out/t.c" 2>/dev/null || have_tsan=0
have_vg=${VALGRIND:-1} # VALGRIND=0 leaves Helgrind and DRD out (they take long on the thread programs)
command -v valgrind >/dev/null || have_vg=0

# Wall time to the millisecond (bash's clock around the run): the
# hundredths of /usr/bin/time's %e made the ratio of programs that run a
# tenth of a second coarse (0.09 s against 0.05 s is 1.8, or anything from
# 1.6 to 2.1); peak memory from /usr/bin/time.
measure() { # label, command... -> "seconds kb"
	local label=$1 t0 t1
	shift
	t0=${EPOCHREALTIME/,/.}
	/usr/bin/time -f "%M" -o "$out/time.txt" "$@" >/dev/null 2>"$out/$label.err" || true
	t1=${EPOCHREALTIME/,/.}
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') $(tail -1 "$out/time.txt")"
}

# hgrewrite and ThreadSanitizer run RUNS times each (default 3), taken in
# turn, so that this machine's drift over a minute falls on both alike;
# each column is the median time and the median peak memory of its runs.
runs=${RUNS:-3}
median() { # numbers... -> their median (the lower middle of an even count)
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

printf '| program | native | hgrewrite | ThreadSanitizer | Helgrind | DRD | hgrewrite / ThreadSanitizer |\n|---|---|---|---|---|---|---|\n'
declare -A ratios
against=() # hgrewrite's time over ThreadSanitizer's, per program (issue 12's measure)
for p in $progs; do
	gcc -O2 -pthread -o "$out/$p" "bench/$p.c"
	bin/hgrewrite "$out/$p" -o "$out/$p.hg"
	# The native run is short: take the fastest of three, so that one
	# slow start does not shrink every ratio of the row.
	nt=999999
	for _ in 1 2 3; do
		read -r t m <<<"$(measure "$p-native" "$out/$p")"
		if awk -v a="$t" -v b="$nt" 'BEGIN { exit !(a < b) }'; then nt=$t nm=$m; fi
	done
	row="| $p | ${nt} s, ${nm} KB |"
	cell() { # label seconds kb
		local r
		r=$(awk -v a="$2" -v b="$nt" 'BEGIN { if (b <= 0) b = 0.01; printf "%.1f", a / b }')
		ratios[$1]="${ratios[$1]:-} $r"
		row="$row $2 s (${r}x), $3 KB |"
	}
	[ $have_tsan = 1 ] && gcc -O2 -pthread -fsanitize=thread -o "$out/$p.tsan" "bench/$p.c"
	hts=() hms=() tts=() tms=()
	for _ in $(seq "$runs"); do
		read -r t m <<<"$(measure "$p-hg" env HG_OPTIONS=exitcode=0 "$out/$p.hg")"
		hts+=("$t") hms+=("$m")
		if [ $have_tsan = 1 ]; then
			read -r t m <<<"$(measure "$p-tsan" env TSAN_OPTIONS=exitcode=0 "$out/$p.tsan")"
			tts+=("$t") tms+=("$m")
		fi
	done
	ht=$(median "${hts[@]}")
	cell hgrewrite "$ht" "$(median "${hms[@]}")"
	vs="n/a"
	if [ $have_tsan = 1 ]; then
		tt=$(median "${tts[@]}")
		cell tsan "$tt" "$(median "${tms[@]}")"
		vs=$(awk -v a="$ht" -v b="$tt" 'BEGIN { if (b <= 0) b = 0.01; printf "%.2f", a / b }')
		against+=("$vs")
	else
		row="$row n/a |"
	fi
	if [ $have_vg = 1 ]; then
		read -r t m <<<"$(measure "$p-helgrind" valgrind --tool=helgrind -q --max-threads=4096 "$out/$p")"
		cell helgrind "$t" "$m"
		read -r t m <<<"$(measure "$p-drd" valgrind --tool=drd -q --max-threads=4096 "$out/$p")"
		cell drd "$t" "$m"
	else
		row="$row n/a | n/a |"
	fi
	echo "$row $vs |"
done
echo
for tool in hgrewrite tsan helgrind drd; do
	[ -n "${ratios[$tool]:-}" ] || continue
	echo "${ratios[$tool]}" | awk -v t=$tool '{ s = 0; for (i = 1; i <= NF; i++) s += log($i); printf "geometric-mean slowdown %s: %.1fx\n", t, exp(s / NF) }'
done
if [ ${#against[@]} -gt 0 ]; then
	echo "${against[*]}" | awk '{ s = 0; m = 0; for (i = 1; i <= NF; i++) { s += log($i); if ($i > m) m = $i }
		printf "hgrewrite / ThreadSanitizer: geometric mean %.2f, largest %.2f\n", exp(s / NF), m }'
fi

# Installed Debian programs (no source, so no ThreadSanitizer build):
# hgrewrite's cost against the native program on the same input.
debian=${DEBIAN-"pigz zstd"} # DEBIAN= (empty) leaves them out
input="$out/input.bin"
if [ ! -f "$input" ]; then
	# 24 MB of text-like data: compressible, not trivially
	awk 'BEGIN { srand(7); for (i = 0; i < 400000; i++) printf "%08d %s %d\n", i, substr("alpha beta gamma delta epsilon zeta eta theta", 1 + int(rand() * 30), 20), int(rand() * 1e6) }' >"$input"
fi
# zopfli (pigz -11) on the first 64 KB: one block, so one thread that
# makes nothing but accesses to its own arrays, the cost of the check
# itself (docs/detector.md, "Lock hand-offs")
small="$out/input64k.bin"
head -c 65536 "$input" >"$small"
debian_row() { # label rewritten-binary native-binary args...
	local label=$1 hg=$2 native=$3 nt nm t m r
	shift 3
	read -r nt nm <<<"$(measure "$label-native" "$native" "$@")"
	read -r t m <<<"$(measure "$label-hg" env HG_OPTIONS=exitcode=0 "$hg" "$@")"
	r=$(awk -v a="$t" -v b="$nt" 'BEGIN { if (b <= 0) b = 0.01; printf "%.1f", a / b }')
	echo "| $label $* | ${nt} s, ${nm} KB | ${t} s (${r}x), ${m} KB |"
}
echo
printf '| Debian program | native | hgrewrite |\n|---|---|---|\n'
for p in $debian; do
	bin=$(command -v "$p" || true)
	if [ -z "$bin" ]; then
		echo "| $p | not installed (apt-get install $p) | |"
		continue
	fi
	bin/hgrewrite "$bin" -o "$out/$p.hg"
	case $p in
	pigz)
		debian_row pigz "$out/$p.hg" "$bin" -p 4 -c "$input"
		debian_row pigz "$out/$p.hg" "$bin" -p 4 -11 -c "$small"
		;;
	zstd) debian_row zstd "$out/$p.hg" "$bin" -T4 -c "$input" ;;
	*) debian_row "$p" "$out/$p.hg" "$bin" -c "$input" ;;
	esac
done

# Checks left out statically (issue 12): of the memory instructions that
# would be checked, those the rewriter proves need no check (reads of
# read-only data; repeats of a check made on every path to them: package
# elide), and those checked by an earlier access's batch call. Stack and
# thread-local accesses are never checked and are not counted as removed.
echo
printf '| program | memory instructions | checked | read-only | redundant | removed | batched |\n|---|---|---|---|---|---|---|\n'
static_row() { # label binary
	bin/hgrewrite --stats "$2" -o "$out/static.hg" 2>&1 | awk -v p="$1" -F: '
		/^memory instructions/ { mem = $2 + 0 }
		/^instrumented/ { chk = $2 + 0 }
		/^checked in a batch call/ { bat = $2 + 0 }
		/read of read-only data/ { ro = $2 + 0 }
		/^skipped, redundant/ { red = $NF + 0 }
		END { base = chk + ro + red; if (base == 0) base = 1
			printf "| %s | %d | %d | %d | %d | %.1f%% | %d |\n", p, mem, chk, ro, red, 100 * (ro + red) / base, bat }'
}
for p in $progs; do
	static_row "$p" "$out/$p"
done
for p in $debian sort gzip; do
	bin=$(command -v "$p" || true)
	[ -n "$bin" ] && static_row "Debian $p" "$bin"
done
