#!/usr/bin/env bash
# Load test of `gpuplan serve` on loopback with wrk (Debian package `wrk`): requests/s and latency
# percentiles for a filtered catalog read, a 70B LoRA plan and a workload page.
# Usage: [THREADS=N] [COMPUTE_THREADS=N] [ONLY=mixed] bench/serve_wrk.sh [BUILD_DIR] [SECONDS] [CONNECTIONS]
# ONLY=mixed runs only the mixed-body plan load (bench/plan_bodies.py: seven models, five tasks,
# four filters, every body distinct), the honest measure of distinct plans per second.
# Targets (issue 10): ≥ 5,000 catalog reads/s, ≥ 500 plans/s, p99 < 50 ms on 2 cores. Say how loaded
# the machine was (uptime) next to any number you report.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
seconds=${2:-10}
conns=${3:-32}
dir=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
XDG_DATA_HOME=$dir "$build/gpuplan" --db "$dir/offers.sqlite" serve --listen 127.0.0.1:0 ${THREADS:+--threads $THREADS} ${COMPUTE_THREADS:+--compute-threads $COMPUTE_THREADS} > "$dir/out" &
pid=$!
for _ in $(seq 100); do [ -s "$dir/out" ] && break; sleep 0.2; done
port=$(head -1 "$dir/out" | sed -E 's#.*:([0-9]+)/.*#\1#')
base=http://127.0.0.1:$port
cat > "$dir/plan.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"model": "llama-3.1-70b", "task": "lora", "tokens": 5e8, "filter": "gpus>=8", "limit": 10}'
wrk.headers["Content-Type"] = "application/json"
LUA
cat > "$dir/plan_distinct.lua" <<'LUA'
-- every request a different token count: no two bodies alike, so the response cache never hits
-- (the offers snapshot still does): the cost of planning itself.
counter = 0
request = function()
  counter = counter + 1
  local body = string.format('{"model": "llama-3.1-70b", "task": "lora", "tokens": %d, "filter": "gpus>=8", "limit": 10}',
                             500000000 + counter * 1000 + math.random(0, 999))
  return wrk.format("POST", "/api/plan", {["Content-Type"] = "application/json"}, body)
end
LUA
# One request per cached URL first: wrk corrects for coordinated omission, so the cold first
# answers (computed, not cached) would otherwise count as thousands of slow samples. The cold cost
# is printed separately.
offers_url="$base/api/offers?q=gpu%3DH100%20gpus%3E%3D8&sort=price&limit=20"
plan_body='{"model": "llama-3.1-70b", "task": "lora", "tokens": 5e8, "filter": "gpus>=8", "limit": 10}'
echo "cold (first request, seconds): offers $(curl -s -o /dev/null -w '%{time_total}' "$offers_url")" \
     "plan $(curl -s -o /dev/null -w '%{time_total}' -H 'Content-Type: application/json' -d "$plan_body" "$base/api/plan")" \
     "training page $(curl -s -o /dev/null -w '%{time_total}' "$base/en/training")"
"$here/plan_bodies.py" 200000 > "$dir/bodies.txt"
# Warm-up for the mixed load: one full cycle of the mix from the end of the file (bodies the load
# never sends), so every offers query of the mix is cached as in a running server.
if command -v python3 > /dev/null; then "$here/plan_send.py" "$port" "$dir/bodies.txt" 199860 140; fi
mixed() {
  echo "== POST /api/plan, mixed distinct bodies (7 models x 5 tasks x 4 filters, every body distinct)"
  wrk -t2 -c"$conns" -d"${seconds}s" --latency -s "$here/plan_mixed.lua" "$base/api/plan" -- "$dir/bodies.txt" 2 |
    grep -E "Requests/sec|99%|50%|Non-2xx|Socket errors"
}
uptime
if [ "${ONLY:-}" = mixed ]; then mixed; uptime; exit 0; fi
echo "== GET /api/offers (filtered)"
wrk -t2 -c"$conns" -d"${seconds}s" --latency "$offers_url" | grep -E "Requests/sec|99%|50%|Non-2xx"
echo "== POST /api/plan (70B LoRA, 5e8 tokens, gpus>=8)"
wrk -t2 -c"$conns" -d"${seconds}s" --latency -s "$dir/plan.lua" "$base/api/plan" | grep -E "Requests/sec|99%|50%|Non-2xx"
echo "== POST /api/plan, every body distinct (planning, no response cache)"
wrk -t2 -c"$conns" -d"${seconds}s" --latency -s "$dir/plan_distinct.lua" "$base/api/plan" | grep -E "Requests/sec|99%|50%|Non-2xx"
mixed
echo "== GET /en/training (workload page)"
wrk -t2 -c"$conns" -d"${seconds}s" --latency "$base/en/training" | grep -E "Requests/sec|99%|50%|Non-2xx"
uptime
