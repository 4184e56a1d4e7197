#!/usr/bin/env bash
# Scale-out benchmark (issue 12, docs/deployment.md): N `gpuplan serve` processes on ONE
# PostgreSQL catalog against one process on SQLite, under wrk on loopback.
#   scripts/with-test-postgres.sh scripts/bench-serve-pg.sh [BUILD_DIR] [SECONDS] [CONNECTIONS] [THREADS]
# Needs GPUPLAN_TEST_PG_URL (set by with-test-postgres.sh). The load is split evenly over the
# servers by one wrk per server run at the same time (what a round-robin balancer does); the
# figures are the sum of requests/s and the worst p99. Print `uptime` with any number you quote:
# this machine is shared.
set -euo pipefail
build=${1:-build}
seconds=${2:-10}
conns=${3:-32}
threads=${4:-4}
: "${GPUPLAN_TEST_PG_URL:?run under scripts/with-test-postgres.sh}"
bin=$(realpath "$build/gpuplan")
dir=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT

pg_url="${GPUPLAN_TEST_PG_URL%/*}/gpuplan_bench_serve"
"$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)/psql" "$GPUPLAN_TEST_PG_URL" -qc "DROP DATABASE IF EXISTS gpuplan_bench_serve WITH (FORCE)" -c "CREATE DATABASE gpuplan_bench_serve" >/dev/null
# Seed both catalogs once (migrate + bundled seed) before the servers start.
XDG_DATA_HOME=$dir "$bin" --db "$pg_url" offers --limit 1 >/dev/null
XDG_DATA_HOME=$dir "$bin" --db "$dir/offers.sqlite" offers --limit 1 >/dev/null

cat > "$dir/plan.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"model": "llama-3.1-70b", "task": "lora", "tokens": 5e8, "filter": "gpus>=8", "limit": 10}'
wrk.headers["Content-Type"] = "application/json"
LUA

# Distinct bodies (tokens differ per request): defeats the server's response cache, so this
# row measures a real plan per request (the offers still come from the per-revision cache).
cat > "$dir/plan_uncached.lua" <<'LUA'
local n = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  n = n + 1
  local body = string.format('{"model": "llama-3.1-70b", "task": "lora", "tokens": %d, "filter": "gpus>=8", "limit": 10}', 500000000 + n)
  return wrk.format(nil, nil, nil, body)
end
LUA

start_servers() {  # $1 = db url, $2 = count; sets ports
  ports=()
  for i in $(seq "$2"); do
    XDG_DATA_HOME=$dir "$bin" --db "$1" serve --listen 127.0.0.1:0 --threads "$threads" >"$dir/out.$i" 2>&1 &
    pids+=($!)
  done
  for i in $(seq "$2"); do
    for _ in $(seq 150); do grep -q "serving on" "$dir/out.$i" 2>/dev/null && break; sleep 0.2; done
    ports+=("$(grep -m1 "serving on" "$dir/out.$i" | sed -E 's#.*:([0-9]+)/.*#\1#')")
  done
}
stop_servers() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; pids=(); }

load() {  # $1 = label, $2 = path, $3 = extra wrk args, rest = ports
  local label=$1 path=$2 extra=$3; shift 3
  local n=$# per=$(( (conns + $# - 1) / $# )) i=0 wrks=()
  for port in "$@"; do
    # shellcheck disable=SC2086
    wrk -t1 -c"$per" -d"${seconds}s" --latency $extra "http://127.0.0.1:$port$path" >"$dir/wrk.$i" 2>&1 &
    wrks+=($!)
    i=$((i + 1))
  done
  wait "${wrks[@]}" || true
  python3 - "$label" "$n" "$dir" <<'PY'
import re, sys, glob
label, n, d = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rps, p99, non2xx = 0.0, 0.0, 0
def ms(v, u): return float(v) * {"us": 1e-3, "ms": 1, "s": 1e3}[u]
for f in sorted(glob.glob(d + "/wrk.*"))[:n]:
    t = open(f).read()
    m = re.search(r"Requests/sec:\s+([\d.]+)", t); rps += float(m.group(1)) if m else 0
    m = re.search(r"99%\s+([\d.]+)(us|ms|s)", t); p99 = max(p99, ms(*m.groups()) if m else 0)
    m = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", t); non2xx += int(m.group(1)) if m else 0
print(f"  {label:<34} {rps:>9.1f} req/s   p99 {p99:>8.1f} ms   non-2xx {non2xx}")
PY
  rm -f "$dir"/wrk.*
}

run_case() {  # $1 = label, $2 = db url, $3 = servers
  echo "== $1: $3 server(s) × $threads threads, $conns connections, ${seconds}s ($(uptime | sed 's/.*load/load/'))"
  start_servers "$2" "$3"
  load "GET /api/offers (gpu=H100 gpus>=8)" "/api/offers?q=gpu%3DH100%20gpus%3E%3D8&sort=price&limit=20" "" "${ports[@]}"
  load "POST /api/plan (70B LoRA, cached)" "/api/plan" "-s $dir/plan.lua" "${ports[@]}"
  load "POST /api/plan (distinct bodies)" "/api/plan" "-s $dir/plan_uncached.lua" "${ports[@]}"
  stop_servers
}

run_case "SQLite" "$dir/offers.sqlite" 1
run_case "PostgreSQL" "$pg_url" 1
run_case "PostgreSQL" "$pg_url" 2
run_case "PostgreSQL" "$pg_url" 4
