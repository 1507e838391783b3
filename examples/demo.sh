#!/usr/bin/env bash
# make demo: compile the example, rewrite it, run both.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/demo
mkdir -p "$out"
echo "== compiling examples/racy_counter.c"
gcc -O1 -g -pthread -o "$out/racy_counter" examples/racy_counter.c
echo "== rewriting: bin/hgrewrite --stats $out/racy_counter -o $out/racy_counter.hg"
bin/hgrewrite --stats "$out/racy_counter" -o "$out/racy_counter.hg"
echo "== running the original"
"$out/racy_counter"
echo "== running the rewritten program (HG_OPTIONS=stats=1)"
set +e
HG_OPTIONS=stats=1 "$out/racy_counter.hg"
status=$?
set -e
echo "== exit status: $status (66: hgrewrite reported races; the original exits 0)"
