// End-to-end regressions of issue 11's bad-input defects found by new-user trial 7, each with the
// exact input the trial typed, through the real binary:
//  * TaskFieldsE2E: options of another task were accepted and ignored without a word
//    (`size --task lora --quant int4`, `plan --task lora --quant int4`, `size --task lora
//    --kv-dtype fp8`, `size --task serve --lora-rank 8`, `size --task lora --concurrency 8`): now
//    exit 2 naming the flag, the task, and the tasks that read it (field_not_for_task); options
//    the task does read are still accepted.
//  * InputMessagesE2E: `ask "... under $-5"` dropped the budget; `--tpot-ms -5` echoed "-0.005";
//    `--epochs 1e9` blamed --dataset-tokens; `models llama` blamed "--model" (not typed); a
//    --gpus-file without a required column said nothing expected.
//  * QuoteImportE2E: `billing_granularity_seconds: 0` was imported (the planner then assumed
//    per-second billing); `gpu_count` 8.5 said "a whole number >= 0" although 0 is refused.
// Every refusal is one line on stderr, exit 2, and nothing written (imports: the store unchanged).
// The quote rows are test values, not market data.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "binary_e2e.hpp"

namespace {

using gpuplan::e2e::BinaryE2E;
using gpuplan::e2e::RunResult;
using nlohmann::json;

class Input11E2E : public BinaryE2E<Input11E2E> {
 public:
  static constexpr const char* kName = "input11";
  /// One refusal: exit 2 and exactly one line, the one expected.
  static void expect_refused(const std::string& args, const std::string& line) {
    const RunResult r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.out, line + "\n") << args;
  }
};

using TaskFieldsE2E = Input11E2E;
using InputMessagesE2E = Input11E2E;
using QuoteImportE2E = Input11E2E;

TEST_F(TaskFieldsE2E, AServingOptionOnATrainingTaskIsRefusedByName) {
  expect_refused("size --model llama-3.1-8b --task lora --concurrency 8",
                 "gpuplan: error: --concurrency: --concurrency is a serving option; --task lora does not use it "
                 "(expected: drop it, or --task serve)");
  expect_refused("size --model llama-3.1-8b --task lora --kv-dtype fp8",
                 "gpuplan: error: --kv-dtype: --kv-dtype is a serving option; --task lora does not use it "
                 "(expected: drop it, or --task serve)");
  // --quant is the served weights; a 4-bit base model while training is QLoRA (docs/sizing.md).
  expect_refused("size --model llama-3.1-8b --task lora --quant int4",
                 "gpuplan: error: --quant: --quant is a serving option; --task lora does not use it "
                 "(expected: drop it, or --task serve (4-bit weights while training: --task qlora))");
  // plan also reads --quant for image generation (the diffusion weights' precision).
  expect_refused("plan --model llama-3.1-8b --task lora --tokens 1e8 --quant int4 --today 2026-11-30",
                 "gpuplan: error: --quant: --quant is an option of --task serve and images; --task lora does not use it "
                 "(expected: drop it, or --task serve or images (4-bit weights while training: --task qlora))");
}

TEST_F(TaskFieldsE2E, ATrainingOptionOnServingIsRefusedByName) {
  expect_refused("size --model llama-3.1-8b --task serve --lora-rank 8",
                 "gpuplan: error: --lora-rank: --lora-rank is a LoRA option (lora, qlora); --task serve does not use it "
                 "(expected: drop it, or --task lora or qlora)");
  expect_refused("size --model llama-3.1-8b --task full --lora-rank 8",
                 "gpuplan: error: --lora-rank: --lora-rank is a LoRA option (lora, qlora); --task full does not use it "
                 "(expected: drop it, or --task lora or qlora)");
  expect_refused("size --model llama-3.1-8b --task serve --seq 8192",
                 "gpuplan: error: --seq: --seq is a training option; --task serve does not use it "
                 "(expected: drop it, or --task pretrain, full, lora or qlora)");
  expect_refused("plan --model llama-3.1-8b --task serve --concurrency 8 --epochs 2 --today 2026-11-30",
                 "gpuplan: error: --epochs: --epochs is a training option; --task serve does not use it "
                 "(expected: drop it, or --task pretrain, full, lora or qlora)");
}

TEST_F(TaskFieldsE2E, OptionsTheTaskReadsAreStillAccepted) {
  // Each option with a task that reads it (the same flags as above): no refusal.
  for (const std::string args : {"size --model llama-3.1-8b --task serve --concurrency 8 --kv-dtype fp8 --quant int4",
                                 "size --model llama-3.1-8b --task qlora --lora-rank 8 --seq 8192",
                                 "size --model llama-3.1-8b --task lora --lora-rank 8 --gpus 2 --tp 2",
                                 "size --model llama-3.1-8b --task serve --gpus 2 --tp 2 --margin 0.2"}) {
    const RunResult r = run(args + " --json");
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.out.substr(0, 2000);
  }
  // A typed default counts as given: the refusal does not depend on the value.
  const RunResult d = run("size --model llama-3.1-8b --task lora --quant bf16");
  EXPECT_EQ(d.exit_code, 2) << d.out;
}

TEST_F(InputMessagesE2E, ANegativeBudgetAfterTheDollarSignIsRefused) {
  // en, fr and th: "$-5" was not read at all (the plan ran without a budget).
  for (const std::string sentence : {"fine-tune llama 3.1 8b on 1e8 tokens under $-5",
                                     "affiner llama 3.1 8b sur 1e8 jetons pour moins de $-5",
                                     "ปรับแต่ง llama 3.1 8b บน 1e8 โทเคน งบไม่เกิน $-5"}) {
    const RunResult r = run("ask '" + sentence + "'");
    EXPECT_EQ(r.exit_code, 2) << sentence << "\n" << r.out;
    EXPECT_NE(r.out.find("$-5"), std::string::npos) << sentence << "\n" << r.out;
    EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "one line: " << r.out;
  }
  const RunResult en = run("ask 'fine-tune llama 3.1 8b on 1e8 tokens under $-5'");
  EXPECT_EQ(en.out, "gpuplan: error: SENTENCE: budget “under $-5” must be more than zero (expected: the sentence with that "
                    "value changed)\n");
}

TEST_F(InputMessagesE2E, ALatencyIsEchoedInTheUnitTyped) {
  expect_refused("plan --model llama-3.1-8b --task serve --concurrency 8 --tpot-ms -5 --today 2026-11-30",
                 "gpuplan: error: --tpot-ms: -5 ms is not a positive time (expected: a number of milliseconds > 0, e.g. 200)");
  expect_refused("plan --model llama-3.1-8b --task serve --concurrency 8 --ttft-ms 0 --today 2026-11-30",
                 "gpuplan: error: --ttft-ms: 0 ms is not a positive time (expected: a number of milliseconds > 0, e.g. 200)");
}

TEST_F(InputMessagesE2E, TooManyEpochsBlameEpochsWithTheirRange) {
  // 1e8 dataset tokens: at most 1e16 / 1e8 = 1e8 epochs (the planner's token ceiling, 1e16).
  expect_refused("plan --model llama-3.1-8b --task lora --dataset-tokens 1e8 --epochs 1e9 --today 2026-11-30",
                 "gpuplan: error: --epochs: 1e+09 epochs × 100000000 dataset tokens = 100000000000000000 tokens is "
                 "implausibly large (expected: at most 1e+08 epochs of 100000000 tokens (10000000000000000 tokens in all))");
  // --epochs with --tokens was ignored (it multiplies --dataset-tokens only).
  expect_refused("plan --model llama-3.1-8b --task lora --tokens 1e8 --epochs 3 --today 2026-11-30",
                 "gpuplan: error: --epochs: both --tokens and --epochs given: --epochs multiplies --dataset-tokens, --tokens "
                 "is the total (expected: --tokens N alone, or --dataset-tokens N --epochs E)");
  // A dataset beyond the ceiling by itself is still the dataset's fault.
  const RunResult d = run("plan --model llama-3.1-8b --task lora --dataset-tokens 1e17 --today 2026-11-30");
  EXPECT_EQ(d.exit_code, 2) << d.out;
  EXPECT_NE(d.out.find("gpuplan: error: --dataset-tokens: "), std::string::npos) << d.out;
}

TEST_F(InputMessagesE2E, AModelNameTypedAsAWordIsNotCalledModel) {
  const RunResult r = run("models llama");
  EXPECT_EQ(r.exit_code, 3) << r.out;  // not found (util/error.hpp)
  EXPECT_EQ(r.out.rfind("gpuplan: error: name: unknown model preset 'llama'", 0), 0u) << r.out;
  EXPECT_EQ(r.out.find("--model"), std::string::npos) << r.out;
  // Typed as --model, it is --model's.
  const RunResult m = run("models --model llama");
  EXPECT_EQ(m.out.rfind("gpuplan: error: --model: unknown model preset 'llama'", 0), 0u) << m.out;
}

TEST_F(InputMessagesE2E, AGpusFileWithoutARequiredColumnSaysWhichAreNeeded) {
  const std::filesystem::path csv = dir_ / "gpus-no-bw.csv";
  // A one-GPU catalog without memory_bw_gbps (test values).
  std::ofstream(csv) << "name,vendor,memory_gb,interconnect_bw_gbps\nTest GPU,NVIDIA,80,900\n";
  expect_refused("--gpus-file '" + csv.string() + "' gpus",
                 "gpuplan: error: " + csv.string() +
                     ":1: missing column 'memory_bw_gbps' (expected: a header with the columns name, vendor, memory_gb, "
                     "memory_bw_gbps and interconnect_bw_gbps (the others optional; data/gpus.csv's header lists them all))");
}

constexpr const char* kQuoteHeader =
    "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_gpu_hour,observed_at,source,billing_granularity_seconds\n";

// trial53 #12: a billing minimum of 1e12 s (31,700 years) was imported and priced a 36-minute job at
// $5.8e9. A minimum is at most the longest term a quote can have (reserved-3y), as the granularity.
TEST_F(QuoteImportE2E, ABillingMinimumBeyondThreeYearsIsRefusedAtItsLine) {
  namespace fs = std::filesystem;
  const fs::path csv = dir_ / "minimum.csv";
  std::ofstream(csv) << "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_gpu_hour,observed_at,source,"
                        "billing_minimum_seconds\n"
                        "minimumcloud,h100-8x,us-west,H100 SXM,8,on-demand,2.10,2026-11-02,test fixture,1e12\n";
  expect_refused("import '" + csv.string() + "'",
                 "gpuplan: error: " + csv.string() +
                     ":2: billing_minimum_seconds 1e12 is out of range (expected: "
                     "billing_minimum_seconds from 0 to 94608000 seconds)");
}

TEST_F(QuoteImportE2E, ABillingGranularityOfZeroIsRefusedAtItsLine) {
  namespace fs = std::filesystem;
  const fs::path csv = dir_ / "granularity.csv";
  std::ofstream(csv) << kQuoteHeader << "granularitycloud,h100-8x,us-west,H100 SXM,8,on-demand,2.10,2026-11-02,test fixture,0\n";
  expect_refused("import '" + csv.string() + "'",
                 "gpuplan: error: " + csv.string() +
                     ":2: billing_granularity_seconds 0 is out of range (expected: "
                     "billing_granularity_seconds from 1 to 94608000 seconds)");
  const fs::path js = dir_ / "granularity.json";
  std::ofstream(js) << R"({"offers": [{"provider": "granularitycloud", "instance_type": "h100-8x", "gpu": "H100 SXM",
    "gpu_count": 8, "price_kind": "on-demand", "usd_per_hour": 16.8, "observed_at": "2026-11-02", "source": "test fixture",
    "billing_granularity_seconds": 0}]})";
  const RunResult j = run("import '" + js.string() + "'");
  EXPECT_EQ(j.exit_code, 2) << j.out;
  EXPECT_NE(j.out.find(js.string() + ": /offers/0/billing_granularity_seconds"), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("billing_granularity_seconds 0 is out of range (expected: billing_granularity_seconds from 1 to "
                       "94608000 seconds)"),
            std::string::npos)
      << j.out;
  // Nothing written; a granularity of one second is a billing unit.
  EXPECT_EQ(run("offers 'provider=granularitycloud' --json").out.find("h100-8x"), std::string::npos);
  std::ofstream(csv) << kQuoteHeader << "granularitycloud,h100-8x,us-west,H100 SXM,8,on-demand,2.10,2026-11-02,test fixture,1\n";
  const RunResult ok = run("import '" + csv.string() + "'");
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
}

TEST_F(QuoteImportE2E, AGpuCountStatesTheRangeItAccepts) {
  namespace fs = std::filesystem;
  const fs::path csv = dir_ / "count.csv";
  for (const std::string count : {"8.5", "0", "-1"}) {
    std::ofstream(csv) << kQuoteHeader << "countcloud,h100-8x,us-west,H100 SXM," << count << ",on-demand,2.10,2026-11-02,test fixture,\n";
    expect_refused("import '" + csv.string() + "'",
                   "gpuplan: error: " + csv.string() + ":2: column gpu_count: '" + count +
                       "' is not a GPU count (expected: a whole number from 1 to 1000000 such as 8 or 8.0)");
  }
  EXPECT_EQ(run("offers 'provider=countcloud' --json").out.find("h100-8x"), std::string::npos);
}

}  // namespace
