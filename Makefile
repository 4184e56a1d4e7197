# Quick start targets (README): `make demo` and `make test`. Both install what they need.
JOBS ?= $(shell nproc)
BUILD ?= build
BUILD_ASAN ?= build-sanitize
CMAKE_FLAGS ?=
# Release at -O2: the same code as RelWithDebInfo without debug info, which cost a third of the
# compile time (GCC 12, planner.cpp: 16.7 s with -g, 11.1 s without) and most of the binary's size.
# Profile with `make BUILD_TYPE=RelWithDebInfo BUILD=build-prof`.
BUILD_TYPE ?= Release
OPT_FLAGS ?= -O2 -DNDEBUG
# Ninja schedules object files across targets (no idle core while one library's last file compiles)
# and lld links in a fraction of GNU ld's time: fresh Release build on 2 cores 719 s (Unix Makefiles,
# GNU ld; fresh-clone CI of a700acf) against 657 s (Ninja + lld, same machine, 2026-12-07); the
# sanitizer build 516 s against 380 s; the whole fresh-clone `.ci/run` 1798 s against 1477 s. A build
# folder keeps the generator it was first configured with.
GENERATOR ?= Ninja
LINK_FLAGS ?= -fuse-ld=lld
gen_flag = $(if $(wildcard $(1)/CMakeCache.txt),,-G "$(GENERATOR)")

.PHONY: deps build demo test test-fast sanitize-build test-asan test-fuzz fuzz bench clean web-deps

deps:
	./scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake $(call gen_flag,$(BUILD)) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DCMAKE_CXX_FLAGS_RELEASE="$(OPT_FLAGS)" \
	  -DCMAKE_C_FLAGS_RELEASE="$(OPT_FLAGS)" -DCMAKE_EXE_LINKER_FLAGS="$(LINK_FLAGS)" -DGPUPLAN_WERROR=ON $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

## The main job on bundled data: plan a LoRA fine-tune of the bundled real Llama-3.1-70B config on the bundled real offer catalog.
demo: build
	./$(BUILD)/gpuplan plan --model llama-3.1-70b --task lora --tokens 5e8

## All tests: the normal build (unit + end-to-end), the unit tests under ASan+UBSan, and a
## short fixed-time libFuzzer run of every fuzz target (fuzz/README.md).
test: test-fast test-asan test-fuzz

# The PostgreSQL suites run on a throw-away server (scripts/with-test-postgres.sh sets GPUPLAN_TEST_PG_URL).
test-fast: build web-deps
	cd $(BUILD) && $(CURDIR)/scripts/with-test-postgres.sh ctest --output-on-failure -j $(JOBS)

## Browser-test dependencies (tests/web: playwright-core, pinned by package-lock.json; drives /usr/bin/chromium).
web-deps:
	cd tests/web && npm ci --no-audit --no-fund

## One clang build serves the sanitizer unit tests and the short fuzz run (CI time: the
## libraries are compiled once, Debug, with ASan+UBSan and libFuzzer's coverage hooks; line tables
## only, which is what sanitizer reports print).
sanitize-build: deps
	cmake $(call gen_flag,$(BUILD_ASAN)) -S . -B $(BUILD_ASAN) -DCMAKE_EXE_LINKER_FLAGS="$(LINK_FLAGS)" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
	  -DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only -DCMAKE_C_FLAGS_DEBUG=-gline-tables-only \
	  -DGPUPLAN_SANITIZE=ON -DGPUPLAN_FUZZ=ON -DGPUPLAN_FUZZ_COVERAGE=light -DGPUPLAN_BUILD_E2E=OFF -DGPUPLAN_BUILD_BENCH=OFF -DGPUPLAN_WERROR=ON $(CMAKE_FLAGS)
	cmake --build $(BUILD_ASAN) -j $(JOBS)

# The SQL/in-memory filter parity over the whole bundled catalog (FilterSqlParity.BundledCatalog*)
# runs in test-fast; under ASan it took 363 s and 303 s of CI's 462 s sanitizer run (2026-12-02),
# so the sanitizer run keeps the fixture parity cases and fuzz_filter covers the filter code.
test-asan: sanitize-build
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp UBSAN_OPTIONS=print_stacktrace=1 $(CURDIR)/scripts/with-test-postgres.sh ctest --output-on-failure -j $(JOBS) -LE 'e2e|slow' -E 'FilterSqlParity[.]BundledCatalog'

## libFuzzer targets (clang): FUZZ_CI_SECONDS (10) each in `make test`, from the sanitizer build;
## `make fuzz` runs each FUZZ_SECONDS (default 600) from an optimised build (build-fuzz).
FUZZ_SECONDS ?= 600
FUZZ_CI_SECONDS ?= 10
test-fuzz: sanitize-build
	BUILD_FUZZ=$(BUILD_ASAN) SECONDS_PER_TARGET=$(FUZZ_CI_SECONDS) JOBS=$(JOBS) ./scripts/fuzz.sh

fuzz: deps
	SECONDS_PER_TARGET=$(FUZZ_SECONDS) JOBS=$(JOBS) ./scripts/fuzz.sh

bench: build
	for b in $(BUILD)/bench/bench_*; do $$b; done

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) build-asan build-fuzz
