#!/usr/bin/env bash
# Runs already-built libFuzzer targets in parallel: WORKERS independent processes per target,
# each for SECONDS seconds with its own seed, all sharing the target's corpus folder (libFuzzer
# writes new units by content hash, so concurrent writers do not collide). Prints, per target,
# the sum of the workers' executed units (stat::number_of_executed_units) and any finding.
# Meant for a machine with many cores (the 16-core device machine: docs in fuzz/README.md);
# scripts/fuzz.sh builds the targets and seeds the corpora.
#   FUZZ_BIN=build-fuzz/fuzz CORPUS=build-fuzz/corpus OUTDIR=/tmp/fuzzrun SECONDS_PER_TARGET=400 \
#     WORKERS="fuzz_filter=3 fuzz_import_csv=4" scripts/fuzz_parallel.sh
# Exit status: 0 when no worker found a problem, 1 otherwise (inputs in $OUTDIR/findings/<target>/).
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${FUZZ_BIN:-build-fuzz/fuzz}
CORPUS=${CORPUS:-build-fuzz/corpus}
OUTDIR=${OUTDIR:-/tmp/fuzz-parallel}
PER=${SECONDS_PER_TARGET:-60}
WORKERS=${WORKERS:-"fuzz_filter=1 fuzz_import_csv=1 fuzz_import_json=1 fuzz_hf_config=1 fuzz_safetensors=1 fuzz_api_request=1"}
mkdir -p "$OUTDIR/logs" "$OUTDIR/findings"
pids=()
for spec in $WORKERS; do
  t=${spec%%=*}
  n=${spec#*=}
  dict=""
  case $t in
    fuzz_filter) dict=fuzz/filter.dict ;;
    fuzz_import_csv) dict=fuzz/csv.dict ;;
    *) dict=fuzz/json.dict ;;
  esac
  mkdir -p "$CORPUS/$t" "$OUTDIR/findings/$t" "fuzz/regressions/$t"
  for i in $(seq 1 "$n"); do
    "$BIN/$t" -max_total_time="$PER" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -seed=$((1000 * i + 17)) \
      -print_final_stats=1 -dict="$dict" -artifact_prefix="$OUTDIR/findings/$t/" \
      "$CORPUS/$t" "fuzz/regressions/$t" >"$OUTDIR/logs/$t.$i.log" 2>&1 &
    pids+=($!)
  done
done
fail=0
for p in "${pids[@]}"; do wait "$p" || fail=1; done
for spec in $WORKERS; do
  t=${spec%%=*}
  total=$(cat "$OUTDIR"/logs/"$t".*.log | awk '/^stat::number_of_executed_units:/ { s += $2 } END { print s + 0 }')
  found=$(find "$OUTDIR/findings/$t" -type f | wc -l)
  echo "fuzz: $t workers=${spec#*=} seconds=$PER executions=${total:-0} findings=$found"
done
exit $fail
