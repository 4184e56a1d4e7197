#!/usr/bin/env bash
# Issue 11 "linear import" benchmark of the real CLI path: `gpuplan import` of N generic-CSV rows
# into a copy of a store seeded with the bundled catalog. Prints wall and user seconds and the
# peak RSS of each of RUNS runs (each on a fresh copy of the seeded store); the last run is the
# one to quote (the first warms the page cache).
#   bench/import_rows.sh [GPUPLAN_BINARY] [ROWS]      # defaults: build/gpuplan 200000
#   RUNS=2 KEEP=1 bench/import_rows.sh build/gpuplan 200000
# Rows are the ones bench_catalog.cpp's generic_csv_rows() writes (BM_ImportGenericCsvRows*):
# row i is offer benchcloud/node-<i/4>/region-<i%13> (all distinct), 8 x H100 SXM, on-demand
# at 20 + (i%97)/10 USD/h, observed 2025-06-0<1+i%4>. Target (issue 11): well under 5 s.
set -euo pipefail
BIN=${1:-build/gpuplan}
ROWS=${2:-200000}
RUNS=${RUNS:-2}
DIR=$(mktemp -d /tmp/gpuplan-import-bench.XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$DIR"' EXIT
CSV="$DIR/rows$ROWS.csv"
awk -v n="$ROWS" 'BEGIN {
  print "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_hour,observed_at,source"
  for (i = 0; i < n; i++)
    printf "benchcloud,node-%d,region-%d,H100 SXM,8,on-demand,%.1f,2025-06-0%d,bench quote\n", int(i / 4), i % 13, 20 + (i % 97) / 10, 1 + i % 4
}' >"$CSV"
"$BIN" --db "$DIR/seed.sqlite" offers --limit 1 >/dev/null  # creates and seeds the store
for r in $(seq 1 "$RUNS"); do
  rm -f "$DIR"/run.sqlite*
  cp "$DIR/seed.sqlite" "$DIR/run.sqlite"
  /usr/bin/time -f "run $r: %e s wall, %U s user, %M KB max RSS" "$BIN" import "$CSV" --db "$DIR/run.sqlite" >/dev/null
done
