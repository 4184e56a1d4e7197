#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, GPUPLAN_FUZZ=ON with clang++) in build-fuzz/ and runs
# each one for SECONDS seconds (default 15) on a seed corpus made from the bundled data files
# and the docs' examples, with the grammar's dictionary (fuzz/*.dict) and the saved
# regressions (fuzz/regressions/<target>/). Exits non-zero on the first crash, leak, timeout or
# sanitizer report; the failing input is left in build-fuzz/findings/<target>/.
#   scripts/fuzz.sh                 # CI: make test-fuzz passes 10 s per target (6 targets)
#   SECONDS_PER_TARGET=600 JOBS=1 scripts/fuzz.sh   # longer (make fuzz)
#   TARGETS="fuzz_filter" scripts/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_FUZZ:-build-fuzz}
PER=${SECONDS_PER_TARGET:-15}
TARGETS=${TARGETS:-"fuzz_filter fuzz_import_csv fuzz_import_json fuzz_hf_config fuzz_safetensors fuzz_api_request"}
CXX_FUZZ=${CXX_FUZZ:-clang++}
CC_FUZZ=${CC_FUZZ:-clang}

if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$CXX_FUZZ" \
    -DCMAKE_C_COMPILER="$CC_FUZZ" -DGPUPLAN_FUZZ=ON -DGPUPLAN_BUILD_TESTS=OFF -DGPUPLAN_BUILD_BENCH=OFF \
    ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} >/dev/null
fi
# shellcheck disable=SC2086
cmake --build "$BUILD" -j "${JOBS:-$(nproc)}" --target $TARGETS

# Seeds: a format-selector byte (see each target) followed by the head of a bundled file.
seed() {  # seed TARGET NAME SELECTOR_BYTE_OR_EMPTY FILE [LINES]
  local dir="$BUILD/corpus/$1"
  mkdir -p "$dir"
  { if [ -n "$3" ]; then printf "\\x$3"; fi; head -n "${5:-40}" "$4"; } >"$dir/$2"
}
rm -rf "$BUILD/corpus"
mkdir -p "$BUILD/corpus/fuzz_filter"
n=0
for f in docs/filter-language.md README.md; do
  # every `gpuplan offers '...'` example and every back-quoted clause in the filter docs
  { grep -o "offers '[^']*'" "$f" || true; } | sed "s/^offers '//; s/'\$//" | while IFS= read -r q; do
    n=$((n + 1)); printf '%s' "$q" >"$BUILD/corpus/fuzz_filter/doc-$(printf '%s' "$q" | md5sum | cut -c1-12)"
  done
done
{ grep -o '`[^`]*`' docs/filter-language.md || true; } | tr -d '`' | while IFS= read -r q; do
  printf '%s' "$q" >"$BUILD/corpus/fuzz_filter/clause-$(printf '%s' "$q" | md5sum | cut -c1-12)"
done
i=0
for f in $(find data/offers/skypilot-catalog -name '*.csv' | sort | head -8); do seed fuzz_import_csv "sky$i" 01 "$f"; i=$((i + 1)); done
seed fuzz_import_csv fsdl-cloud 02 data/offers/fsdl-cloud-gpus/cloud-gpus.csv
seed fuzz_import_csv fsdl-serverless 03 data/offers/fsdl-cloud-gpus/serverless-gpus.csv
seed fuzz_import_csv ewyluda 04 data/offers/ewyluda-gpu-price-index/index-history.csv
for f in tests/data/import/*.csv; do [ -f "$f" ] && seed fuzz_import_csv "gen-$(basename "$f")" 00 "$f" 200; done
seed fuzz_import_json tpu 02 data/offers/gpuhunt/tpu_pricing.json 120
for f in $(find data/offers/tardellirs-gpu-pricing -name '*.json' | sort | head -2); do seed fuzz_import_json "tard-$(basename "$f")" 01 "$f" 120; done
for f in tests/data/import/*.json; do [ -f "$f" ] && seed fuzz_import_json "gen-$(basename "$f")" 00 "$f" 200; done
for f in $(find data/models -name 'config.json' | sort); do
  seed fuzz_hf_config "$(basename "$(dirname "$f")")" "" "$f" 400
done
mkdir -p "$BUILD/corpus/fuzz_safetensors"
python3 - "$BUILD/corpus/fuzz_safetensors" <<'PY'
import json, struct, sys, os
d = sys.argv[1]
hdr = json.dumps({"__metadata__": {"format": "pt"},
                  "model.embed_tokens.weight": {"dtype": "BF16", "shape": [32, 16], "data_offsets": [0, 1024]},
                  "lm_head.weight": {"dtype": "F32", "shape": [16], "data_offsets": [1024, 1088]}}).encode()
open(os.path.join(d, "header"), "wb").write(b"\x00" + struct.pack("<Q", len(hdr)) + hdr)
idx = json.dumps({"metadata": {"total_size": 1088}, "weight_map": {"lm_head.weight": "model-00001-of-00002.safetensors",
                  "model.layers.0.self_attn.rotary_emb.inv_freq": "model-00002-of-00002.safetensors"}}).encode()
open(os.path.join(d, "index"), "wb").write(b"\x01" + idx)
PY
# API requests: byte 0 = 0 size body, 1 offers query, 2 plan body, 3 gpus query, 4 estimate body,
# 5 models query (fuzz/fuzz_api_request.cpp); bodies from the docs' and tests' examples.
mkdir -p "$BUILD/corpus/fuzz_api_request"
api_seed() { printf "\\x$1%s" "$2" >"$BUILD/corpus/fuzz_api_request/$3"; }
api_seed 00 '{"model": "llama-3.1-70b", "task": "qlora", "gpus": 1, "seq": 4096}' size-qlora
api_seed 00 '{"params": "7B", "task": "full", "gpus": 8, "zero": 3, "explain": true, "stack": "fsdp"}' size-params
api_seed 00 '{"model": "llama-3.1-8b", "task": "serve", "context": 8192, "concurrency": 16, "gpu": "h100"}' size-serve
api_seed 01 'filter=gpu=H100 gpus>=8&sort=price&limit=5&today=2026-11-30&group_by=gpu' offers
api_seed 02 '{"model": "llama-3.1-70b", "task": "lora", "tokens": 5e8, "filter": "gpus>=8", "deadline": "72h", "budget": 500}' plan
api_seed 03 'name=h100' gpus
api_seed 04 '{"model": "llama-3.1-70b", "task": "full", "tokens": 1e9, "gpu": "H100 SXM", "gpus": 64, "inter_node_gbit_per_s": 3200}' estimate
api_seed 05 'params=7e9&layers=32&hidden=4096&mlp=gated' models

fail=0
for t in $TARGETS; do
  corpus="$BUILD/corpus/$t"
  mkdir -p "$corpus" "$BUILD/findings/$t" "fuzz/regressions/$t"
  dict=""
  case $t in
    fuzz_filter) dict=fuzz/filter.dict ;;
    fuzz_import_csv) dict=fuzz/csv.dict ;;
    fuzz_import_json | fuzz_hf_config | fuzz_safetensors | fuzz_api_request) dict=fuzz/json.dict ;;
  esac
  log="$BUILD/findings/$t.log"
  echo "fuzz: $t for ${PER}s" >&2
  if ! "$BUILD/fuzz/$t" -max_total_time="$PER" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 ${dict:+-dict=$dict} -artifact_prefix="$BUILD/findings/$t/" \
      "$corpus" "fuzz/regressions/$t" >"$log" 2>&1; then
    echo "fuzz: $t FOUND A PROBLEM (input in $BUILD/findings/$t/):" >&2
    grep -E "ERROR|SUMMARY|internal error|unexpected exception|Test unit written" "$log" | head -20 >&2
    fail=1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$log" | sed "s/^/fuzz: $t /" >&2 || true
done
exit $fail
