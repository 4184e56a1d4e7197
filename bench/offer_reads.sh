#!/usr/bin/env bash
# First-page reads (`gpuplan offers ... --limit 50`) on a large store, e.g. the one
# `KEEP=1 bench/import_rows.sh` leaves (200,000 imported H100 rows + the bundled catalog): what
# the latest_prices order indexes buy. Prints, per query, the best wall time of REPS runs in ms.
#   bench/offer_reads.sh GPUPLAN_BINARY STORE.sqlite      # REPS=5 by default
# The store is opened as given (a newer binary migrates it: pass a copy).
set -euo pipefail
BIN=$1
DB=$2
REPS=${REPS:-5}
"$BIN" --db "$DB" offers --limit 1 >/dev/null  # migrations, if any, before timing
run() {
  local best=""
  for _ in $(seq 1 "$REPS"); do
    local a b
    a=$(date +%s%N)
    "$BIN" --db "$DB" offers --today 2026-12-03 --limit 50 "$@" >/dev/null
    b=$(date +%s%N)
    local ms=$(( (b - a) / 1000000 ))
    if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
  done
  printf '%6d ms  offers %s\n' "$best" "$*"
}
for extra in "" "--include-flagged"; do
  run $extra gpu=H100 'gpus>=8'
  run $extra gpu=A100 --sort price
  run $extra provider=aws
  run $extra provider=aws or provider=gcp or provider=azure
  run $extra gpu=B200
  run $extra gpu=MI300X --sort price
  run $extra provider=lambda 'gpus>=8'
  run $extra 'price_per_gpu<=2'
done
