#!/usr/bin/env bash
# Instructions per distinct plan of `gpuplan serve` (issue 10), counted by valgrind's callgrind:
# a machine-independent measure of the work of POST /api/plan with the mixed bodies of
# bench/plan_bodies.py (models, tasks, filters, tokens), parse to response body, all threads.
# The server is started under callgrind, warmed with one full cycle of bodies from the end of
# the file (every offers query of the cycle cached, as in a running server), counters zeroed,
# then COUNT bodies from the start are sent one at a time and the instructions counted are
# divided by COUNT. 140 is one full cycle of the mix (every model meets every task and filter).
# Usage: [KEEP=FILE] bench/plan_instructions.sh [BUILD_DIR] [COUNT]   (slow: seconds of valgrind per plan)
# KEEP=FILE keeps the callgrind profile of the counted plans (callgrind_annotate FILE).
# WARM=0 skips the warm-up: the cost of a server's first plans.
set -euo pipefail
build=${1:-build}
count=${2:-140}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
"$here/plan_bodies.py" 1400 > "$dir/bodies.txt"
XDG_DATA_HOME=$dir valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" \
  "$build/gpuplan" --db "$dir/offers.sqlite" serve --listen 127.0.0.1:0 > "$dir/out" 2> "$dir/vg.log" &
pid=$!
for _ in $(seq 600); do [ -s "$dir/out" ] && break; sleep 0.5; done
port=$(head -1 "$dir/out" | sed -E 's#.*:([0-9]+)/.*#\1#')
# warm-up: the last cycle of the file (WARM=0: none; the counted plans then pay the cold costs:
# the offers snapshot of each filter and the search memo's first searches)
if [ "${WARM:-1}" != 0 ]; then "$here/plan_send.py" "$port" "$dir/bodies.txt" 1260 140; fi
callgrind_control -z "$pid" > /dev/null
"$here/plan_send.py" "$port" "$dir/bodies.txt" 0 "$count"
callgrind_control -d "$pid" > /dev/null
sleep 1
if [ -n "${KEEP:-}" ]; then cp "$(ls -t "$dir"/cg.out.* | head -1)" "$KEEP"; fi
ir=$(grep -h '^summary:' "$dir"/cg.out.* 2>/dev/null | awk '{print $2}' | tail -1)
[ -n "$ir" ] || ir=$(grep -h '^totals:' "$dir"/cg.out.* | awk '{print $2}' | tail -1)
echo "instructions: $ir for $count distinct plans (mixed bodies); per plan: $(awk -v i="$ir" -v n="$count" 'BEGIN{printf "%.2f M", i/n/1e6}')"
