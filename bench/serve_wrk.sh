#!/usr/bin/env bash
# Load test of `gpuplan serve` on loopback with wrk (Debian package `wrk`): requests/s and latency
# percentiles for a filtered catalog read, a 70B LoRA plan and a workload page.
# Usage: bench/serve_wrk.sh [BUILD_DIR] [SECONDS] [CONNECTIONS]
# Targets (issue 10): ≥ 5,000 catalog reads/s, ≥ 500 plans/s, p99 < 50 ms on 2 cores. Say how loaded
# the machine was (uptime) next to any number you report.
set -euo pipefail
build=${1:-build}
seconds=${2:-10}
conns=${3:-32}
dir=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
XDG_DATA_HOME=$dir "$build/gpuplan" --db "$dir/offers.sqlite" serve --listen 127.0.0.1:0 --threads 8 > "$dir/out" &
pid=$!
for _ in $(seq 100); do [ -s "$dir/out" ] && break; sleep 0.2; done
port=$(head -1 "$dir/out" | sed -E 's#.*:([0-9]+)/.*#\1#')
base=http://127.0.0.1:$port
cat > "$dir/plan.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"model": "llama-3.1-70b", "task": "lora", "tokens": 5e8, "filter": "gpus>=8", "limit": 10}'
wrk.headers["Content-Type"] = "application/json"
LUA
uptime
echo "== GET /api/offers (filtered)"
wrk -t2 -c"$conns" -d"${seconds}s" --latency "$base/api/offers?q=gpu%3DH100%20gpus%3E%3D8&sort=price&limit=20" | grep -E "Requests/sec|99%|50%|Non-2xx"
echo "== POST /api/plan (70B LoRA, 5e8 tokens, gpus>=8)"
wrk -t2 -c"$conns" -d"${seconds}s" --latency -s "$dir/plan.lua" "$base/api/plan" | grep -E "Requests/sec|99%|50%|Non-2xx"
echo "== GET /en/training (workload page)"
wrk -t2 -c"$conns" -d"${seconds}s" --latency "$base/en/training" | grep -E "Requests/sec|99%|50%|Non-2xx"
uptime
