#!/usr/bin/env bash
# Captures the answers of POST /api/plan for the mixed bodies of bench/plan_bodies.py (models,
# tasks, filters, tokens) and of a few `gpuplan plan` CLI runs (table, --json, --explain), so a
# change meant to be a pure speed-up can be shown to change no byte:
#   scripts/capture-plan-outputs.sh BUILD_A /tmp/a.txt; scripts/capture-plan-outputs.sh BUILD_B /tmp/b.txt
#   cmp /tmp/a.txt /tmp/b.txt
# Usage: scripts/capture-plan-outputs.sh BUILD_DIR OUT_FILE [COUNT]   (COUNT API bodies, default 280:
# two full cycles of the mix). The date is pinned (--today / "today") so the capture does not
# depend on the day it runs.
set -euo pipefail
build=$1
out=$2
count=${3:-280}
today=2026-12-01
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
"$root/bench/plan_bodies.py" "$count" | sed -E "s/^\{/{\"today\": \"$today\", /" > "$dir/bodies.txt"
XDG_DATA_HOME=$dir "$build/gpuplan" --db "$dir/offers.sqlite" serve --listen 127.0.0.1:0 > "$dir/out" 2> "$dir/err" &
pid=$!
for _ in $(seq 100); do [ -s "$dir/out" ] && break; sleep 0.2; done
port=$(head -1 "$dir/out" | sed -E 's#.*:([0-9]+)/.*#\1#')
"$root/bench/plan_send.py" "$port" "$dir/bodies.txt" 0 "$count" "$dir/api.txt"
{
  cat "$dir/api.txt"
  run() {
    echo "== gpuplan $*"
    XDG_DATA_HOME=$dir "$build/gpuplan" --db "$dir/offers.sqlite" "$@" --today "$today" 2>&1 || echo "exit $?"
  }
  run plan --model llama-3.1-70b --task lora --tokens 5e8 "gpus>=8"
  run plan --model llama-3.1-70b --task qlora --tokens 5e8 --json
  run plan --model llama-3.1-8b --task full --tokens 1e9 --pareto --all
  run plan --model qwen2.5-14b --task pretrain --tokens 1e12 --deadline 30d --explain 1
  run plan --model llama-3.1-70b --task serve --quant int4 --concurrency 100 --hours 720 --json
  run plan --model llama-3.1-70b --task serve --concurrency 64 --tpot-ms 50 --ttft-ms 1000
  run plan --model flux.1-schnell --task images --images 100000 --json
  run plan --model llama-3.1-405b --task full --tokens 1e9 "gpu~a10"
} > "$out"
echo "captured $(grep -c '^== ' "$out") answers into $out"
