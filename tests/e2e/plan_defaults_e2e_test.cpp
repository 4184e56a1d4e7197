// End-to-end: `gpuplan size`, `plan` and `estimate` share one set of workload defaults and one
// vocabulary (sizing/workload_defaults.hpp, docs/planner.md "Defaults and vocabulary"). The same
// flags on one GPU with one layout give the same per-GPU memory from all three commands, with the
// defaults (no --task, no --seq) and with every accepted spelling of a precision / optimizer.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class PlanDefaultsE2E : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("gpuplan-e2e-defaults-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  static json run_json(const std::string& args) {
    const std::string cmd = "XDG_DATA_HOME='" + dir_.string() + "' '" + std::string(GPUPLAN_BINARY) + "' --db '" +
                            (dir_ / "offers.sqlite").string() + "' " + args + " --json 2>&1";
    std::string out;
    FILE* pipe = ::popen(cmd.c_str(), "r");
    if (!pipe) return json();
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
    const int status = ::pclose(pipe);
    EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0) << args << "\n" << out.substr(0, 2000);
    json j = json::parse(out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << args << "\n" << out.substr(0, 2000);
    return j;
  }
  static fs::path dir_;
};
fs::path PlanDefaultsE2E::dir_;

const std::string kOneGpuLayout = " --gpus 1 --tp 1 --pp 1 --zero 0 --micro-batch 1 --recompute none";

/// Per-GPU memory (bytes) of `size`, the first `plan` row and `estimate` for the same model,
/// workload flags and one-GPU layout. Each command gets its own workload flags (to test
/// different spellings); with equal meaning the three totals must be equal.
struct PerGpu {
  double size = 0, plan = 0, estimate = 0;
  json size_request;
  std::string plan_task;
};

PerGpu per_gpu(const std::string& model, const std::string& size_flags, const std::string& plan_flags,
               const std::string& estimate_flags) {
  PerGpu r;
  json s = PlanDefaultsE2E::run_json("size " + model + size_flags + kOneGpuLayout);
  json p = PlanDefaultsE2E::run_json("plan " + model + plan_flags + kOneGpuLayout +
                                     " --tokens 1e7 --limit 1 --today 2026-11-30 'gpu=H100 gpus=1'");
  json e = PlanDefaultsE2E::run_json("estimate " + model + estimate_flags + kOneGpuLayout +
                                     " --tokens 1e7 --gpu 'H100 SXM'");
  if (s.contains("per_gpu")) r.size = s["per_gpu"]["total_bytes"].get<double>(), r.size_request = s["request"];
  if (p.contains("plans") && !p["plans"].empty()) r.plan = p["plans"][0]["per_gpu_memory_bytes"].get<double>();
  if (p.contains("task")) r.plan_task = p["task"].get<std::string>();
  if (e.contains("estimate")) r.estimate = e["estimate"]["per_gpu_memory_bytes"].get<double>();
  return r;
}

bool same(double a, double b) { return a > 0 && std::abs(a - b) <= 1e-12 * std::max(a, b); }

std::string config(const std::string& dir) {
  return "--config '" + std::string(GPUPLAN_SOURCE_DIR) + "/data/models/" + dir + "/config.json'";
}

TEST_F(PlanDefaultsE2E, DefaultsAreTheSameForSizePlanAndEstimate) {
  // No --task, --seq, --precision, --optimizer, --lora-rank anywhere.
  const PerGpu m = per_gpu(config("meta-llama__Llama-3.2-1B-Instruct"), "", "", "");
  EXPECT_TRUE(same(m.size, m.plan)) << m.size << " vs " << m.plan;
  EXPECT_TRUE(same(m.size, m.estimate)) << m.size << " vs " << m.estimate;
  // The documented defaults (docs/planner.md): LoRA on 4096-token sequences, bf16 mixed, AdamW, rank 16.
  EXPECT_EQ(m.size_request["task"], "lora") << m.size_request;
  EXPECT_EQ(m.size_request["seq_len"], 4096) << m.size_request;
  EXPECT_EQ(m.size_request["lora_rank"], 16) << m.size_request;
  EXPECT_EQ(m.size_request["precision"], "bf16_mixed") << m.size_request;
  EXPECT_EQ(m.size_request["optimizer"], "adamw") << m.size_request;
  EXPECT_EQ(m.plan_task, "lora");
}

TEST_F(PlanDefaultsE2E, SameFlagsSameMemoryFullFineTune) {
  const std::string flags = " --task full --seq 2048 --precision bf16 --optimizer adamw";
  const PerGpu m = per_gpu(config("Qwen__Qwen3-0.6B"), flags, flags, flags);
  EXPECT_TRUE(same(m.size, m.plan)) << m.size << " vs " << m.plan;
  EXPECT_TRUE(same(m.size, m.estimate)) << m.size << " vs " << m.estimate;
}

TEST_F(PlanDefaultsE2E, EverySpellingAcceptedByEveryCommand) {
  // Long and short spellings of one precision / optimizer / task mean the same thing on every command.
  const PerGpu m = per_gpu(config("Qwen__Qwen3-0.6B"), " --task full_ft --precision fp16_mixed --optimizer adam_8bit",
                           " --task fft --precision fp16 --optimizer adamw_8bit",
                           " --task finetune --precision fp16 --optimizer adamw8bit");
  EXPECT_TRUE(same(m.size, m.plan)) << m.size << " vs " << m.plan;
  EXPECT_TRUE(same(m.size, m.estimate)) << m.size << " vs " << m.estimate;
  EXPECT_EQ(m.size_request["precision"], "fp16_mixed");
  EXPECT_EQ(m.size_request["optimizer"], "adamw_8bit");
}

}  // namespace
