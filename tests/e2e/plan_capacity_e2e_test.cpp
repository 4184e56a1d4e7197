// End-to-end (issue 7 leftovers), through the built binary (GPUPLAN_BINARY):
//  - `plan`, `estimate` and `size` fit against the same per-GPU capacity: the memory the driver
//    reports (GpuSpec::fit_memory_bytes, data/gpus.csv `usable_memory_mib`), not the marketed
//    "80 GB" and not the offer's rounded figure;
//  - `estimate --json` with no fitting layout exits 1 and says why in the JSON.
#include <gtest/gtest.h>

#include "binary_e2e.hpp"

#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace gpuplan {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using e2e::RunResult;

class PlanCapacityE2E : public e2e::BinaryE2E<PlanCapacityE2E> {
 public:
  static constexpr const char* kName = "capacity";
};

// nvidia-smi on an H100 SXM 80GB reports 81,559 MiB total (data/gpus.csv usable_memory_mib,
// source cited in data/gpus.SOURCES.md): 81559 × 2^20 bytes = 85.52e9, not the marketed 80e9.
constexpr double kH100SxmUsableBytes = 81559.0 * 1048576.0;
constexpr const char* kH100 = "NVIDIA H100 SXM";

TEST_F(PlanCapacityE2E, PlanEstimateAndSizeUseTheSameUsableCapacity) {
  const std::string job = " --model llama-3.1-8b --task lora";
  // size: the capacity its fit table uses for the H100 SXM.
  json size = run_json("size" + job, 0);
  double size_cap = 0;
  for (const auto& f : size["fits"]) {
    if (f["gpu"] == kH100) size_cap = f["capacity_bytes"].get<double>();
  }
  ASSERT_GT(size_cap, 0) << size.dump().substr(0, 2000);
  EXPECT_DOUBLE_EQ(size_cap, kH100SxmUsableBytes);

  // plan: every H100 SXM plan on the bundled catalog fits against the same capacity.
  json plan = run_json("plan" + job + " --tokens 1e8 'gpu=H100' --limit 100000 --include-flagged --today 2026-11-30", 0);
  std::size_t h100_plans = 0;
  for (const auto& p : plan["plans"]) {
    if (p["gpu_name"] != kH100) continue;
    ++h100_plans;
    EXPECT_DOUBLE_EQ(p["gpu_memory_capacity_bytes"].get<double>(), kH100SxmUsableBytes) << p["offer_id"];
    EXPECT_LE(p["per_gpu_memory_bytes"].get<double>(), kH100SxmUsableBytes * (1.0 - p["margin"].get<double>()));
  }
  EXPECT_GT(h100_plans, 0u);

  // estimate: the same capacity for the same GPU.
  json est = run_json("estimate" + job + " --tokens 1e8 --gpu 'H100 SXM' --gpus 1", 0);
  ASSERT_TRUE(est["estimate"].is_object()) << est.dump().substr(0, 2000);
  EXPECT_DOUBLE_EQ(est["estimate"]["gpu_memory_capacity_bytes"].get<double>(), kH100SxmUsableBytes);
}

TEST_F(PlanCapacityE2E, EstimateWithoutAFittingLayoutExitsOneWithTheReason) {
  // Llama 3.1 405B full fine-tune: 405e9 params × (2 B weights + 2 B grads + 12 B AdamW/master)
  // = 6.5 TB of model state, over 8 GPUs with ZeRO-3 at best 810 GB each: far above one H100.
  const std::string args = "estimate --model llama-3.1-405b --task full --tokens 1e9 --gpu 'H100 SXM' --gpus 8";
  json j = run_json(args, 1);
  EXPECT_TRUE(j.contains("estimate") && j["estimate"].is_null()) << j.dump();
  ASSERT_TRUE(j.contains("no_fit") && j["no_fit"].is_string()) << j.dump();
  const std::string why = j["no_fit"].get<std::string>();
  EXPECT_NE(why.find("no layout fits"), std::string::npos) << why;
  EXPECT_NE(why.find(kH100), std::string::npos) << why;
  // The text form exits 1 as well.
  RunResult text = run(args);
  EXPECT_EQ(text.exit_code, 1) << text.out;
  EXPECT_NE(text.out.find("no layout fits"), std::string::npos) << text.out;
}

// Trial 50 #1: `plan --task serve` held 227 sequences of 1250 tokens of Llama 3.1 8B on one H100
// SXM where `size` held 361, and answered "No plan" for 300 users on one GPU. The planner took
// the memory per sequence from 1 and 2 sequences, where the prefill chunk's workspace still grows
// (1250 → 2048 tokens), and charged that growth to every sequence. Both now read one line.
TEST_F(PlanCapacityE2E, PlanAndSizeHoldTheSameSequencesAndTheyFit) {
  const std::string job = " --model llama-3.1-8b --task serve --context 1250";
  json size = run_json("size" + job + " --gpu 'H100 SXM'", 0);
  const std::int64_t n = size["limits"]["max_concurrency"].get<std::int64_t>();
  // The KV cache alone bounds it: 2 × 32 layers × 8 KV heads × 128 × 2 B × 1250 tokens
  // = 163,840,000 B per sequence, and 0.9 × 85.52e9 B less 15 GiB of weights leaves < 380 of them.
  EXPECT_GT(n, 300);
  EXPECT_LT(n, 380);
  // n sequences fit the 10% margin and n + 1 do not (size's own fit table at that concurrency).
  auto per_gpu_at = [&](std::int64_t c) {
    json s = run_json("size --model llama-3.1-8b --task serve --context 1250 --concurrency " + std::to_string(c), 0);
    for (const auto& f : s["fits"])
      if (f["gpu"] == kH100 && f["gpu_count"] == 1) return f["per_gpu_bytes"].get<double>();
    return 1e300;  // not in the fit table: does not fit one GPU
  };
  EXPECT_LE(per_gpu_at(n), 0.9 * kH100SxmUsableBytes);
  EXPECT_GT(per_gpu_at(n + 1), 0.9 * kH100SxmUsableBytes);

  // plan on one H100 SXM: the same count, and 300 users are served by that one GPU.
  json plan = run_json("plan --model llama-3.1-8b --task serve --prompt-tokens 1000 --output-tokens 250"
                       " --concurrency 300 --gpus 1 'gpu=H100' --limit 100000 --include-flagged --today 2026-11-30", 0);
  std::size_t h100_plans = 0;
  for (const auto& p : plan["plans"]) {
    if (p["gpu_name"] != kH100) continue;
    ++h100_plans;
    EXPECT_EQ(p["serving"]["max_concurrent_sequences"].get<std::int64_t>(), n) << p["offer_id"];
    EXPECT_EQ(p["serving"]["batch"].get<std::int64_t>(), 300) << p["offer_id"];
  }
  EXPECT_GT(h100_plans, 0u) << plan.dump().substr(0, 2000);
}

}  // namespace
}  // namespace gpuplan
